//! The `polycc-quic` server and client: one verified transfer per connection over s2n-quic,
//! the client sending ([`crate::transfer`] has the protocol), or real-time video as datagrams
//! ([`crate::video_endpoints`]); the server sends arrival reports when asked
//! ([`ServerOptions::timing_reports`], [`crate::timing`]) and a client whose controller takes
//! them reads them. Bounded waits everywhere.
//!
//! The server generates a self-signed certificate for `localhost` at start and writes it (PEM)
//! where the client reads it; both run on loopback or inside network namespaces.
//!
//! # Timeouts and failures
//!
//! Every wait is bounded, and a failure is an error naming its cause, never a hang or a panic
//! (tests: `tests/loopback.rs`; the binary's exit codes are in `main.rs`):
//!
//! - **handshake**: [`ClientOptions::connect_timeout`] (`--connect-timeout`, 5 s): "no
//!   handshake with ADDR within ...".
//! - **a silent peer** (killed, cut off): [`ServerOptions::idle_timeout`] and
//!   [`ClientOptions::idle_timeout`] (`--idle-timeout`, 5 s) are s2n-quic's max idle timeout.
//!   The connection's is the smaller of the two ends' (RFC 9000 §10.1), raised to three probe
//!   timeouts on a slow path; when it expires the endpoint's pending read or write fails with
//!   "... closed because the connection's idle timer expired". The client keeps its connection
//!   alive (PINGs), so a peer that is alive but has nothing to send is not closed.
//! - **the whole transfer**: [`ClientOptions::timeout`] (`--timeout`; the duration + 30 s for
//!   bulk, 120 s for sized): "the transfer did not finish within ...".
//! - **the server** waits at most its idle timeout for a connection's stream and for the
//!   client to read the verdict. A failed transfer (peer gone, checksum mismatch) is a
//!   `"verified": false` line with its `"error"`; the server keeps accepting connections and
//!   exits 1 at the end if any transfer failed.
//! - **garbage datagrams** (random, truncated, replayed, corrupted; from a stranger or
//!   spoofing the peer) are dropped by s2n-quic (no connection ID it knows, or the packet fails
//!   its AEAD check) and do not disturb the connections.
//! - **results**: the client prints its report as one JSON line only once the receiver has
//!   verified the transfer; on failure stdout stays empty and the error goes to stderr. The
//!   certificate file is written atomically (a temporary file, then a rename), so a client
//!   never reads half of one.
//! - **memory**: per connection, the adapter keeps the packets in flight (its ledger, bounded
//!   by the packet threshold below the newest acknowledged one) and the controller's state; the
//!   server drops a connection's controller handle when the connection ends. One connection's
//!   RSS over 120 s of a 3 % loss path stays flat (BENCHMARKS.md, `examples/memory_under_loss.rs`).

use crate::adapter::AdapterStats;
use crate::endpoint::{Handles, Polycc};
use crate::handle::ControllerHandle;
use crate::media_datagrams::{MediaChannel, MediaDatagrams};
use crate::timing::{read_reports, send_reports, FeedbackError, TimingEvents};
use crate::transfer::{pattern, segment_header, trailer, Checksum, Receiver, Verdict};
use crate::video_endpoints::{receive_video, send_video, VideoOptions, VideoReceived, VideoSent};
use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use s2n_quic::client::Connect;
use s2n_quic::provider::congestion_controller::{self, Cubic};
use s2n_quic::provider::limits::Limits;
use s2n_quic::provider::tls::rustls;
use s2n_quic::stream::BidirectionalStream;
use s2n_quic::{Client, Server};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::time::timeout;

/// Data bytes per segment: large enough that the 8-byte header is 0.01 % of the stream.
pub const SEGMENT: usize = 64 * 1024;

/// The application error code a server closes a connection with when the client sends what
/// the server does not receive (a transfer to a video server).
const WRONG_MODE: u32 = 1;

/// Longest wait for a closed connection to finish closing before the client exits.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The name the server's certificate is issued for and the client asks for (SNI).
pub const SERVER_NAME: &str = "localhost";

/// Which controller an endpoint runs.
#[derive(Clone, Debug)]
pub enum Cca {
    /// A polycc controller through the adapter.
    Polycc(Polycc),
    /// s2n-quic's own CUBIC, for comparison.
    BuiltinCubic,
}

impl Cca {
    fn name(&self) -> String {
        match self {
            Cca::Polycc(p) => p.spec().name().to_string(),
            Cca::BuiltinCubic => "s2n-cubic".to_string(),
        }
    }

    fn handles(&self) -> Option<Handles> {
        match self {
            Cca::Polycc(p) => Some(p.handles()),
            Cca::BuiltinCubic => None,
        }
    }
}

/// Where the server writes its certificate by default, and the client reads it: one file per
/// server port under the temporary directory.
pub fn default_cert_path(port: u16) -> PathBuf {
    std::env::temp_dir().join(format!("polycc-quic-{port}.pem"))
}

/// How a server runs.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Address to listen on (port 0: any free port; the chosen one is printed).
    pub listen: SocketAddr,
    /// Its controller.
    pub cca: Cca,
    /// Where to write the certificate (default [`default_cert_path`]).
    pub cert_out: Option<PathBuf>,
    /// Stop after this many transfers (verified or failed); `None`: serve until `run_for`.
    pub transfers: Option<u64>,
    /// Stop after this long; `None`: no limit.
    pub run_for: Option<Duration>,
    /// A connection silent this long is closed (s2n-quic's max idle timeout).
    pub idle_timeout: Duration,
    /// Send the client arrival reports (receiver timing, [`crate::timing`]) on every
    /// connection, for the controllers that take them (LEDBAT, GCC, PIBES).
    pub timing_reports: bool,
    /// Receive video frames as datagrams ([`crate::video_endpoints`]) instead of transfers;
    /// one connection at a time.
    pub video: bool,
}

/// How a client runs.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The server.
    pub connect: SocketAddr,
    /// Its controller.
    pub cca: Cca,
    /// The server's certificate (default [`default_cert_path`] of the server's port).
    pub ca: Option<PathBuf>,
    /// `Some(n)`: send n bytes; `None`: bulk for `duration`.
    pub bytes: Option<u64>,
    /// How long a bulk transfer sends.
    pub duration: Duration,
    /// Longest wait for the handshake.
    pub connect_timeout: Duration,
    /// Longest run from the start to the receiver's verdict.
    pub timeout: Duration,
    /// A connection silent this long is closed.
    pub idle_timeout: Duration,
    /// Send video frames as datagrams for `duration` instead of a transfer.
    pub video: Option<VideoOptions>,
    /// Print the controller's telemetry as a JSON line this often while the run lasts.
    pub telemetry_every: Option<Duration>,
}

fn limits(idle: Duration) -> Result<Limits> {
    Limits::new()
        .with_max_idle_timeout(idle)
        .map_err(|e| anyhow!("idle timeout {idle:?}: {e}"))
}

fn start_server<CC: congestion_controller::Provider>(
    cc: CC,
    tls: rustls::Server,
    media: &MediaChannel,
    o: &ServerOptions,
) -> Result<Server> {
    Server::builder()
        .with_tls(tls)?
        .with_io(o.listen)?
        .with_limits(limits(o.idle_timeout)?)?
        .with_event(if o.timing_reports {
            TimingEvents::receiver()
        } else {
            TimingEvents::sender()
        })?
        .with_datagram(MediaDatagrams::new(media.clone()))?
        .with_congestion_controller(cc)?
        .start()
        .map_err(|e| anyhow!("cannot start the server on {}: {e}", o.listen))
}

fn start_client<CC: congestion_controller::Provider>(
    cc: CC,
    tls: rustls::Client,
    media: &MediaChannel,
    o: &ClientOptions,
) -> Result<Client> {
    let local: SocketAddr = if o.connect.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    Client::builder()
        .with_tls(tls)?
        .with_io(local)?
        .with_limits(limits(o.idle_timeout)?)?
        // The sender's half of receiver timing: pairs the controller's packets with their QUIC
        // numbers (it only files what the adapter recorded).
        .with_event(TimingEvents::sender())?
        .with_datagram(MediaDatagrams::new(media.clone()))?
        .with_congestion_controller(cc)?
        .start()
        .map_err(|e| anyhow!("cannot start the client: {e}"))
}

/// A server's TLS with a certificate for [`SERVER_NAME`] generated now and signed by itself,
/// and that certificate (PEM), which its clients trust ([`client_tls`]).
pub fn self_signed_tls() -> Result<(rustls::Server, String)> {
    let cert = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()])
        .context("generating the self-signed certificate")?;
    let cert_pem = cert.cert.pem();
    let tls = rustls::Server::builder()
        .with_certificate(cert_pem.as_str(), cert.key_pair.serialize_pem().as_str())
        .map_err(|e| anyhow!("TLS certificate: {e}"))?
        .build()
        .map_err(|e| anyhow!("TLS configuration: {e}"))?;
    Ok((tls, cert_pem))
}

/// A client's TLS trusting the server certificate `pem`.
pub fn client_tls(pem: &str) -> Result<rustls::Client> {
    rustls::Client::builder()
        .with_certificate(pem)
        .map_err(|e| anyhow!("the server's certificate: {e}"))?
        .build()
        .map_err(|e| anyhow!("TLS configuration: {e}"))
}

/// User and system CPU seconds of this process so far (getrusage).
pub fn cpu_seconds() -> (f64, f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
            (s(u.user_time()), s(u.system_time()))
        }
        Err(_) => (f64::NAN, f64::NAN),
    }
}

fn stats_json(s: &AdapterStats) -> Value {
    json!({
        "sent_packets": s.sent_packets,
        "acks": s.acks,
        "lost_packets": s.lost_packets,
        "loss_events": s.loss_events,
        "ce_marks": s.ce_marks,
        "cwnd_bytes": s.cwnd,
        "mss_bytes": s.mss,
        "srtt_us": s.rtt.smoothed.0 / 1000,
        "min_rtt_us": s.rtt.min.0 / 1000,
        "pacing_rate_mbps": s.pacing_rate.map(|r| r.as_mbps_f64()),
        "delivery_rate_mbps": s.delivery_rate.map(|r| r.as_mbps_f64()),
        "feedback_reports": s.feedback_reports,
        "feedback_arrivals": s.feedback_arrivals,
        "feedback_unmatched": s.feedback_unmatched,
    })
}

fn controller_json(handle: Option<ControllerHandle>) -> Value {
    let Some(h) = handle else {
        return Value::Null;
    };
    let snap = h.snapshot();
    let t = snap.telemetry;
    let values: serde_json::Map<String, Value> = t
        .entries()
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    json!({ "name": h.name(), "state": t.state, "telemetry": values, "stats": stats_json(&snap.stats),
            "snapshot_seq": snap.seq, "snapshot_at_s": snap.at.as_secs_f64() })
}

/// Runs a server until it has served `transfers` or `run_for` is over. Prints one JSON line per
/// transfer; returns how many failed.
pub async fn run_server(o: ServerOptions) -> Result<u64> {
    let (tls, cert_pem) = self_signed_tls()?;
    let handles = o.cca.handles();
    let media = MediaChannel::default();
    let mut server = match &o.cca {
        Cca::Polycc(p) => start_server(p.clone(), tls, &media, &o)?,
        Cca::BuiltinCubic => start_server(Cubic::default(), tls, &media, &o)?,
    };
    let addr = server.local_addr()?;
    let cert_path = o
        .cert_out
        .clone()
        .unwrap_or_else(|| default_cert_path(addr.port()));
    write_atomically(&cert_path, cert_pem.as_bytes())?;
    println!(
        "{}",
        json!({"event": "listening", "addr": addr.to_string(), "cert": cert_path, "cca": o.cca.name(),
               "timing_reports": o.timing_reports, "video": o.video})
    );
    let deadline = o.run_for.map(|d| Instant::now() + d);
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<bool>();
    let (mut accepted, mut finished, mut failed) = (0u64, 0u64, 0u64);
    let serving = Serving {
        timing_reports: o.timing_reports,
        video: o.video,
        media: media.clone(),
        idle: o.idle_timeout,
    };
    loop {
        if o.transfers.is_some_and(|n| finished >= n) {
            break;
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            break;
        }
        let wait = left.unwrap_or(Duration::from_secs(3600));
        tokio::select! {
            // A video server serves one connection at a time: its datagram channel is the
            // endpoint's.
            conn = server.accept(), if o.transfers.is_none_or(|n| accepted < n)
                && !(o.video && accepted > finished) => {
                let Some(conn) = conn else { bail!("the server's endpoint closed") };
                accepted += 1;
                let tx = done_tx.clone();
                let handles = handles.clone();
                let serving = serving.clone();
                tokio::spawn(async move {
                    let ok = serve(conn, handles, serving).await;
                    let _ = tx.send(ok);
                });
            }
            Some(ok) = done_rx.recv() => {
                finished += 1;
                failed += u64::from(!ok);
            }
            _ = tokio::time::sleep(wait) => {}
        }
    }
    Ok(failed)
}

fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("pem.tmp");
    std::fs::write(&tmp, data).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// What each connection of a server does besides its transfer.
#[derive(Clone, Debug)]
struct Serving {
    /// Send arrival reports.
    timing_reports: bool,
    /// Receive video instead of a transfer.
    video: bool,
    /// The endpoint's datagrams.
    media: MediaChannel,
    /// The idle timeout, which bounds the waits.
    idle: Duration,
}

/// One connection: receive one transfer, verify it, answer (or receive its video). Prints the
/// outcome; true if verified.
async fn serve(mut conn: s2n_quic::Connection, handles: Option<Handles>, s: Serving) -> bool {
    let peer = conn
        .remote_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let start = Instant::now();
    let handle = conn.handle();
    let reports = async {
        if s.timing_reports {
            send_reports(handle).await;
        }
        std::future::pending::<()>().await
    };
    let (ok, mut line) = if s.video {
        let received = tokio::select! {
            r = receive_video(&s.media, start) => r,
            // A transfer's stream: the client is not sending video. Closing tells it at once.
            Ok(Some(_)) = conn.accept_bidirectional_stream() => {
                conn.close(WRONG_MODE.into());
                Err("the client opened a stream for a transfer; this server receives video \
                     (--video): run the client with --video, or the server without"
                    .to_string())
            }
            _ = reports => unreachable!("pending"),
        };
        video_outcome(received, &peer, start)
    } else {
        let outcome = tokio::select! {
            r = receive_transfer(&mut conn, s.idle) => r,
            _ = reports => unreachable!("pending"),
        };
        let outcome = outcome.map_err(|e| {
            if s.media.counters().received > 0 {
                e.context("the client sent video datagrams: run the server with --video")
            } else {
                e
            }
        });
        transfer_outcome(outcome, &peer, start)
    };
    // This connection's controller (not the newest of another one served meanwhile), taken out
    // of the list so that a server running for long does not keep every connection's.
    let mine = conn
        .remote_addr()
        .ok()
        .and_then(|a| handles.and_then(|h| h.remove_peer(a)));
    line["controller"] = controller_json(mine);
    println!("{line}");
    ok
}

/// Receives one transfer on the connection's first stream, verifies it, answers.
async fn receive_transfer(conn: &mut s2n_quic::Connection, idle: Duration) -> Result<Verdict> {
    let mut stream = timeout(idle, conn.accept_bidirectional_stream())
        .await
        .map_err(|_| anyhow!("no stream within {idle:?}"))??
        .ok_or_else(|| anyhow!("the connection closed before opening a stream"))?;
    let mut rx = Receiver::new();
    while let Some(chunk) = stream.receive().await? {
        rx.push(&chunk)?;
    }
    let verdict = rx.finish()?;
    stream
        .send(Bytes::copy_from_slice(&verdict.encode()))
        .await?;
    stream.finish()?;
    // Wait for the client to read the verdict and close the connection (it may have closed
    // already). Not the stream's end: that was read above, so a receive would return at once
    // and the connection, dropped, would close before a lost verdict is resent (the client
    // then waited out its idle timeout on a verified transfer, at 30 % loss).
    let _ = timeout(idle, conn.accept_bidirectional_stream()).await;
    drop(stream);
    Ok(verdict)
}

fn transfer_outcome(outcome: Result<Verdict>, peer: &str, start: Instant) -> (bool, Value) {
    let secs = start.elapsed().as_secs_f64();
    match outcome {
        Ok(v) => (
            v.ok,
            json!({"event": "transfer", "peer": peer, "verified": v.ok, "bytes": v.bytes,
                   "seconds": secs, "goodput_mbps": v.bytes as f64 * 8e-6 / secs}),
        ),
        Err(e) => (
            false,
            json!({"event": "transfer", "peer": peer, "verified": false,
                   "error": format!("{e:#}"), "seconds": secs}),
        ),
    }
}

/// Prints a line per frame and returns the connection's summary: verified when every frame
/// recovered was checked byte for byte and no datagram was foreign.
fn video_outcome(
    received: Result<VideoReceived, String>,
    peer: &str,
    start: Instant,
) -> (bool, Value) {
    let secs = start.elapsed().as_secs_f64();
    let r = match received {
        Ok(r) => r,
        Err(e) => {
            return (
                false,
                json!({"event": "video", "peer": peer, "verified": false, "error": e,
                       "seconds": secs}),
            )
        }
    };
    for f in &r.frames {
        println!(
            "{}",
            json!({"event": "frame", "peer": peer, "frame": f.frame, "shards": f.shards,
                   "data_shards": f.data_shards, "received": f.received, "bytes": f.bytes,
                   "decodable": f.decodable_s.is_some(),
                   "first_arrival_s": f.first_arrival_s, "decodable_s": f.decodable_s})
        );
    }
    let bytes: u64 = r
        .frames
        .iter()
        .filter(|f| f.decodable_s.is_some())
        .map(|f| f.bytes)
        .sum();
    (
        true,
        json!({"event": "video", "peer": peer, "verified": true, "frames": r.frames.len(),
               "decodable": r.decodable(), "datagrams": r.datagrams,
               "decodable_bytes": bytes, "seconds": secs,
               "decodable_mbps": bytes as f64 * 8e-6 / secs}),
    )
}

/// What a client run measured.
#[derive(Clone, Debug)]
pub struct ClientReport {
    /// Data bytes sent and verified by the receiver.
    pub bytes: u64,
    /// From the stream's first byte to the verdict.
    pub seconds: f64,
    /// CPU seconds (user, system) the client process used over the run.
    pub cpu: (f64, f64),
    /// The whole report as printed.
    pub json: Value,
}

/// Connects, sends, and waits for the receiver's verdict; a failed verification is an error.
pub async fn run_client(o: ClientOptions) -> Result<ClientReport> {
    let ca =
        o.ca.clone()
            .unwrap_or_else(|| default_cert_path(o.connect.port()));
    let pem = std::fs::read_to_string(&ca)
        .with_context(|| format!("reading the server's certificate {}", ca.display()))?;
    let tls = client_tls(&pem).with_context(|| format!("the certificate in {}", ca.display()))?;
    let handles = o.cca.handles();
    let media = MediaChannel::default();
    let mut client = match &o.cca {
        Cca::Polycc(p) => start_client(p.clone(), tls, &media, &o)?,
        Cca::BuiltinCubic => start_client(Cubic::default(), tls, &media, &o)?,
    };
    let cpu0 = cpu_seconds();
    let connect = Connect::new(o.connect).with_server_name(SERVER_NAME);
    let conn = timeout(o.connect_timeout, client.connect(connect))
        .await
        .map_err(|_| {
            anyhow!(
                "no handshake with {} within {:?}",
                o.connect,
                o.connect_timeout
            )
        })?
        .with_context(|| format!("connecting to {}", o.connect))?;
    let controller = handles.as_ref().and_then(|h| h.latest());
    let (mut conn, streams) = conn.split();
    conn.keep_alive(true)?;
    // The receiver's arrival reports, for a controller that takes them.
    let reader = controller
        .as_ref()
        .filter(|h| h.wants_feedback())
        .map(|h| tokio::spawn(read_reports(streams.split().1, h.clone())));
    let start = Instant::now();
    let run = async {
        let report = match &o.video {
            Some(v) => {
                let sent = timeout(
                    o.timeout,
                    send_video(&conn, &media, controller.as_ref(), v, o.duration),
                )
                .await
                .map_err(|_| anyhow!("the video did not finish within {:?}", o.timeout))?
                .map_err(|e| anyhow!(e))?;
                video_json(&sent, start.elapsed().as_secs_f64())
            }
            None => {
                let stream = conn.open_bidirectional_stream().await?;
                let verdict = timeout(o.timeout, transfer(stream, &o))
                    .await
                    .map_err(|_| anyhow!("the transfer did not finish within {:?}", o.timeout))?
                    .map_err(|e| {
                        if closed_for_wrong_mode(&e) {
                            e.context(
                                "the server receives video (--video): run the client with \
                                 --video, or the server without",
                            )
                        } else {
                            e
                        }
                    })?;
                let seconds = start.elapsed().as_secs_f64();
                let (sent, sum) = verdict;
                if !sum.ok || sum.bytes != sent.len() || sum.checksum != sent.value() {
                    bail!(
                    "the receiver did not verify the transfer: sent {} bytes (checksum {:016x}), it read {} (checksum {:016x})",
                    sent.len(), sent.value(), sum.bytes, sum.checksum
                );
                }
                json!({"event": "done", "verified": true, "bytes": sent.len(), "seconds": seconds,
                   "goodput_mbps": sent.len() as f64 * 8e-6 / seconds})
            }
        };
        anyhow::Ok(report)
    };
    let mut json = match o.telemetry_every {
        None => run.await?,
        Some(every) => tokio::select! {
            r = run => r?,
            _ = print_telemetry(controller.as_ref(), every, start) => unreachable!("endless"),
        },
    };
    let seconds = json["seconds"].as_f64().unwrap_or(f64::NAN);
    let bytes = json["bytes"].as_u64().unwrap_or(0);
    let cpu1 = cpu_seconds();
    let cpu = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
    conn.close(0u32.into());
    // Until the close has left (a video receiver's records end with the connection), bounded:
    // the closing period is three probe timeouts (RFC 9000 §10.2).
    let _ = timeout(CLOSE_WAIT, client.wait_idle()).await;
    feedback_verdict(reader, controller.as_ref()).await?;
    let gb = bytes as f64 / 1e9;
    json["cca"] = json!(o.cca.name());
    json["cpu_user_s"] = json!(cpu.0);
    json["cpu_sys_s"] = json!(cpu.1);
    json["cpu_s_per_gb"] = json!(if gb > 0.0 {
        (cpu.0 + cpu.1) / gb
    } else {
        f64::NAN
    });
    json["controller"] = controller_json(controller);
    Ok(ClientReport {
        bytes,
        seconds,
        cpu,
        json,
    })
}

/// Prints the controller's telemetry as a JSON line every `every`, from `start`; never
/// returns. Nothing without a polycc controller.
async fn print_telemetry(controller: Option<&ControllerHandle>, every: Duration, start: Instant) {
    let Some(h) = controller else {
        return std::future::pending().await;
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let mut line = controller_json(Some(h.clone()));
        line["event"] = json!("telemetry");
        line["t_s"] = json!(start.elapsed().as_secs_f64());
        println!("{line}");
    }
}

/// Whether `e` is the server's close of a connection that sent what it does not receive.
fn closed_for_wrong_mode(e: &anyhow::Error) -> bool {
    use s2n_quic::connection::Error as Closed;
    e.chain().any(|c| {
        let closed = match c.downcast_ref::<s2n_quic::stream::Error>() {
            Some(s2n_quic::stream::Error::ConnectionError { error, .. }) => Some(*error),
            _ => c.downcast_ref::<Closed>().copied(),
        };
        matches!(closed, Some(Closed::Application { error, .. }) if u64::from(error) == u64::from(WRONG_MODE))
    })
}

/// The client's report of a video run.
fn video_json(v: &VideoSent, seconds: f64) -> Value {
    let c = v.counters;
    json!({"event": "done", "mode": "video", "verified": true, "frames": v.frames,
           "frames_sent": v.frames_sent, "packets": v.packets, "repair_packets": v.repair_packets,
           "bytes": v.bytes, "seconds": seconds, "mean_send_wait_ms": v.mean_send_wait_ms,
           "datagrams_sent": c.sent, "datagrams_expired": c.expired,
           "datagrams_overflowed": c.overflowed, "padding_sent": c.padding})
}

/// The arrival reports' reader, once the connection is closed: an error if the peer sent
/// malformed reports; a warning when the controller takes receiver timing and none came (the
/// server runs without `--timing-reports`).
async fn feedback_verdict(
    reader: Option<tokio::task::JoinHandle<Result<u64, FeedbackError>>>,
    controller: Option<&ControllerHandle>,
) -> Result<()> {
    let Some(reader) = reader else {
        return Ok(());
    };
    // The closed connection ends the reader at once; a bound all the same.
    let arrivals = match timeout(Duration::from_secs(1), reader).await {
        Ok(Ok(r)) => r?,
        _ => 0,
    };
    if arrivals == 0 {
        let name = controller.map_or("the controller", |h| h.name());
        eprintln!(
            "polycc-quic: {name} takes receiver timing, but the server sent no arrival reports \
             (start it with --timing-reports)"
        );
    }
    Ok(())
}

/// Sends the data (sized or until the duration is over), the trailer, and reads the verdict.
async fn transfer(
    mut stream: BidirectionalStream,
    o: &ClientOptions,
) -> Result<(Checksum, Verdict)> {
    let data = Bytes::from(pattern(SEGMENT, 0x5EED));
    let mut sum = Checksum::new();
    let end = Instant::now() + o.duration;
    loop {
        let n = match o.bytes {
            Some(total) => (total - sum.len()).min(SEGMENT as u64) as usize,
            None if Instant::now() >= end => 0,
            None => SEGMENT,
        };
        if n == 0 {
            break;
        }
        let chunk = data.slice(..n);
        sum.update(&chunk);
        stream
            .send(Bytes::copy_from_slice(&segment_header(n as u64)))
            .await
            .context("sending")?;
        stream.send(chunk).await.context("sending")?;
    }
    stream
        .send(Bytes::copy_from_slice(&trailer(&sum)))
        .await
        .context("sending")?;
    stream.finish().context("finishing the stream")?;
    let mut answer = Vec::with_capacity(Verdict::LEN);
    while let Some(chunk) = stream.receive().await.context("reading the verdict")? {
        answer.extend_from_slice(&chunk);
        if answer.len() >= Verdict::LEN {
            break;
        }
    }
    let v = Verdict::decode(&answer).ok_or_else(|| {
        anyhow!(
            "the receiver answered {} bytes, not a verdict",
            answer.len()
        )
    })?;
    Ok((sum, v))
}
