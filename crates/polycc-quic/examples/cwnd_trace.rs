//! The sender's congestion window over a short bulk transfer through the lossy loopback relay
//! ([`polycc_quic::relay`]), as s2n-quic itself reports it (its `RecoveryMetrics` event, one per
//! ACK processed, and its `PacketLost` event): the same instrument for s2n-quic's own CUBIC
//! (`s2n-cubic`) and for any polycc controller behind the adapter, so the two can be compared
//! on one path. Written to explain why s2n's CUBIC keeps a larger window than polycc's `cubic`
//! at 3 % loss (BENCHMARKS.md, issue 17).
//!
//! Run: `cargo run --release -p polycc-quic --example cwnd_trace [SECONDS [LOSS [CCA]]]`
//! (defaults 10 s, 0.03, `cubic`; a fourth argument `all` prints every report). Prints the
//! window every 500 ms, then a summary: goodput,
//! packets lost, window reductions seen (a report whose window is below the previous one's),
//! the window's mean and percentiles in datagrams, srtt and min RTT.

use polycc_quic::endpoints::{client_tls, self_signed_tls, SERVER_NAME};
use polycc_quic::relay::{Faults, Relay};
use polycc_quic::Polycc;
use s2n_quic::client::Connect;
use s2n_quic::provider::congestion_controller::{self, Cubic};
use s2n_quic::provider::event::{events, ConnectionInfo, ConnectionMeta, Subscriber};
use s2n_quic::{Client, Server};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One `RecoveryMetrics` report.
#[derive(Clone, Copy, Debug)]
struct Sample {
    at: f64,
    cwnd: u32,
    in_flight: u32,
    srtt: Duration,
    min_rtt: Duration,
}

#[derive(Default)]
struct Trace {
    samples: Vec<Sample>,
    lost: u64,
}

/// The sender's subscriber: records every report into the shared trace.
#[derive(Clone)]
struct Tracer {
    start: Instant,
    trace: Arc<Mutex<Trace>>,
}

impl Subscriber for Tracer {
    type ConnectionContext = ();

    fn create_connection_context(&mut self, _: &ConnectionMeta, _: &ConnectionInfo) {}

    fn on_recovery_metrics(&mut self, _: &mut (), _: &ConnectionMeta, e: &events::RecoveryMetrics) {
        let s = Sample {
            at: self.start.elapsed().as_secs_f64(),
            cwnd: e.congestion_window,
            in_flight: e.bytes_in_flight,
            srtt: e.smoothed_rtt,
            min_rtt: e.min_rtt,
        };
        self.trace
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .samples
            .push(s);
    }

    fn on_packet_lost(&mut self, _: &mut (), _: &ConnectionMeta, e: &events::PacketLost) {
        if !e.is_mtu_probe {
            self.trace.lock().unwrap_or_else(|p| p.into_inner()).lost += 1;
        }
    }
}

fn client<CC: congestion_controller::Provider>(
    cc: CC,
    pem: &str,
    tracer: Tracer,
) -> anyhow::Result<Client> {
    Client::builder()
        .with_tls(client_tls(pem)?)?
        .with_io("0.0.0.0:0")?
        .with_event(tracer)?
        .with_congestion_controller(cc)?
        .start()
        .map_err(|e| anyhow::anyhow!("client: {e}"))
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map_or(Ok(10.0), |s| s.parse())?;
    let loss: f64 = args.next().map_or(Ok(0.03), |s| s.parse())?;
    let cca = args.next().unwrap_or_else(|| "cubic".into());
    // `all`: every report, not one per 500 ms.
    let every = if args.next().as_deref() == Some("all") {
        0.0
    } else {
        0.5
    };
    anyhow::ensure!(
        seconds > 0.0 && seconds <= 600.0,
        "SECONDS in (0, 600], not {seconds}"
    );
    anyhow::ensure!((0.0..1.0).contains(&loss), "LOSS in [0, 1), not {loss}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let trace = Arc::new(Mutex::new(Trace::default()));
    let start = Instant::now();
    let tracer = Tracer {
        start,
        trace: trace.clone(),
    };
    let name = cca.clone();
    let (received, sent_for) = rt.block_on(async move {
        let (tls, pem) = self_signed_tls()?;
        let mut server = Server::builder()
            .with_tls(tls)?
            .with_io("127.0.0.1:0")?
            .start()
            .map_err(|e| anyhow::anyhow!("server: {e}"))?;
        let relay = Relay::start(
            server.local_addr()?,
            Faults {
                loss,
                ..Faults::default()
            },
            1,
        )?;
        let sink = tokio::spawn(async move {
            let mut n = 0u64;
            if let Some(mut conn) = server.accept().await {
                if let Ok(Some(mut s)) = conn.accept_receive_stream().await {
                    while let Ok(Some(chunk)) = s.receive().await {
                        n += chunk.len() as u64;
                    }
                }
            }
            n
        });
        let client = match name.as_str() {
            "s2n-cubic" => client(Cubic::default(), &pem, tracer)?,
            s => client(Polycc::parse(s)?, &pem, tracer)?,
        };
        let mut conn = client
            .connect(Connect::new(relay.addr()).with_server_name(SERVER_NAME))
            .await?;
        let mut stream = conn.open_send_stream().await?;
        let chunk = bytes::Bytes::from(vec![0u8; 64 * 1024]);
        let t0 = Instant::now();
        let until = t0 + Duration::from_secs_f64(seconds);
        while Instant::now() < until {
            stream.send(chunk.clone()).await?;
        }
        stream.finish()?;
        let _ = tokio::time::timeout(Duration::from_secs(30), stream.flush()).await;
        let sent_for = t0.elapsed().as_secs_f64();
        let received = tokio::time::timeout(Duration::from_secs(30), sink)
            .await
            .map_err(|_| anyhow::anyhow!("the receiver did not finish within 30 s"))??;
        drop(relay);
        anyhow::Ok((received, sent_for))
    })?;

    let t = trace.lock().unwrap_or_else(|p| p.into_inner());
    let mss = 1472.0;
    let mut next = 0.0;
    for s in &t.samples {
        if s.at >= next {
            println!(
                "t {:6.2} s  cwnd {:7} B ({:5.1} pkts)  in flight {:7}  srtt {:6.2} ms  min {:5.2} ms",
                s.at,
                s.cwnd,
                f64::from(s.cwnd) / mss,
                s.in_flight,
                s.srtt.as_secs_f64() * 1e3,
                s.min_rtt.as_secs_f64() * 1e3
            );
            next = s.at + every;
        }
    }
    // The steady part: the second half of the run.
    let half = t.samples.last().map_or(0.0, |s| s.at) / 2.0;
    let steady: Vec<&Sample> = t.samples.iter().filter(|s| s.at >= half).collect();
    let reductions = t
        .samples
        .windows(2)
        .filter(|w| w[1].cwnd < w[0].cwnd)
        .count();
    // Growth per report that grew the window, against the window before it.
    let grew: Vec<f64> = t
        .samples
        .windows(2)
        .filter(|w| w[0].at >= half && w[1].cwnd > w[0].cwnd)
        .map(|w| f64::from(w[1].cwnd - w[0].cwnd) / f64::from(w[0].cwnd))
        .collect();
    let mut w: Vec<f64> = steady.iter().map(|s| f64::from(s.cwnd) / mss).collect();
    w.sort_by(f64::total_cmp);
    let mean = w.iter().sum::<f64>() / w.len().max(1) as f64;
    let last = t.samples.last();
    println!(
        "{cca} loss {loss}: {:.1} Mbit/s ({} B in {:.1} s); lost {} packets; {} window reductions; \
         second half: {} growing reports, mean growth {:.3} of the window each; cwnd mean {:.1} pkts, p10 {:.1}, p50 {:.1}, p90 {:.1} ({} reports); end srtt {:.2} ms, min RTT {:.3} ms",
        received as f64 * 8.0 / sent_for / 1e6,
        received,
        sent_for,
        t.lost,
        reductions,
        grew.len(),
        grew.iter().sum::<f64>() / grew.len().max(1) as f64,
        mean,
        percentile(&w, 0.1),
        percentile(&w, 0.5),
        percentile(&w, 0.9),
        w.len(),
        last.map_or(f64::NAN, |s| s.srtt.as_secs_f64() * 1e3),
        last.map_or(f64::NAN, |s| s.min_rtt.as_secs_f64() * 1e3),
    );
    Ok(())
}
