//! The sending end of a QUIC flow: an s2n-quic client whose connections each run a controller
//! built as the simulator builds it, sending the flow's transfers in polycc-quic's protocol and
//! checking the receiver's verdict on each; the controller's snapshots become the flow's
//! samples, and the scenario's intents reach it at their times.

use super::{io, limits, sleep_until, VERIFY_GRACE};
use crate::app::{on_period, Schedule};
use crate::clock::Clock;
use crate::flow_state::{lock, Counters, FlowShared};
use crate::udp::client::NewController;
use bytes::Bytes;
use polycc::units::Time;
use polycc::{CongestionControl, Intent};
use polycc_quic::endpoints::{client_tls, SEGMENT, SERVER_NAME};
use polycc_quic::media_datagrams::{MediaChannel, MediaDatagrams};
use polycc_quic::s2n_quic::client::Connect;
use polycc_quic::s2n_quic::connection::Handle as Connection;
use polycc_quic::s2n_quic::provider::io::tokio::Builder as IoBuilder;
use polycc_quic::s2n_quic::stream::BidirectionalStream;
use polycc_quic::s2n_quic::Client;
use polycc_quic::timing::{read_reports, FeedbackError};
use polycc_quic::transfer::{
    pattern, repeated_checksum, segment_header, trailer, Checksum, Verdict,
};
use polycc_quic::{ControllerHandle, Handles, Polycc, TimingEvents};
use polycc_sim::scenario::VideoModel;
use rand::SeedableRng;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// How often the client publishes its controller's state, posts due intents and looks at the
/// stop flag (the sampler reads every 10 ms).
const TICK: std::time::Duration = std::time::Duration::from_millis(5);
/// Longest wait for a handshake.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// A bulk sender keeps at most this much more than twice the window written ahead of what the
/// receiver has read (`TCP_NOTSENT_LOWAT`'s role for the kernel's TCP; s2n-quic has no call
/// for its unsent bytes): enough to keep the window full, little to drain when the run ends.
const WRITE_AHEAD: u64 = 4 * SEGMENT as u64;
/// An on/off source keeps at most this much more than the window written ahead of what the
/// receiver has read, in writes of this size: an off period then starts on the wire about when
/// it starts in the application (the kernel's TCP flows use `TCP_NOTSENT_LOWAT` = 16 KiB).
const ON_OFF_AHEAD: u64 = 16 * 1024;

pub struct QuicClient<'a> {
    pub new_cc: &'a NewController<'a>,
    /// The controller's name (for its handle).
    pub cca: &'a str,
    pub server: SocketAddrV4,
    pub local: Ipv4Addr,
    /// The server's certificate, trusted.
    pub cert_pem: String,
    pub start: Time,
    pub stop_at: Time,
    /// Sized, web and DASH flows: transfers, sized by the schedule (bulk otherwise).
    pub transfers: bool,
    /// A DASH flow whose scenario states no intent: the player's (each chunk's bitrate) is the
    /// controller's, as in the simulator.
    pub player_intents: bool,
    /// A web flow that opens a connection per transfer.
    pub per_transfer: bool,
    /// A sized flow: one transfer, then done.
    pub sized: bool,
    /// An on/off source: the schedule's events turn it on and off (it starts on).
    pub on_off: bool,
    /// Later intents `(from, intent)`, in time order.
    pub intents: Vec<(Time, Intent)>,
    pub initial_intent: Option<Intent>,
    /// A video source (`super::video`), and the seed of its encoder's noise.
    pub video: Option<(VideoModel, u64)>,
}

/// The client's state, shared by its application and its ticker on one thread.
struct State<'a> {
    c: QuicClient<'a>,
    flow: &'a FlowShared,
    clock: &'a Clock,
    stop: &'a AtomicBool,
    /// The controller the next connection's path takes (`Polycc::from_factory`).
    ready: Arc<Mutex<Option<Box<dyn CongestionControl>>>>,
    handles: Handles,
    current: RefCell<Option<ControllerHandle>>,
    intent: Cell<Option<Intent>>,
    connections: Cell<u64>,
    /// Each connection's reader of the receiver's arrival reports (controllers that take them).
    readers: RefCell<Vec<tokio::task::JoinHandle<Result<u64, FeedbackError>>>>,
    /// The video source's datagrams (unused by other sources).
    media: MediaChannel,
}

/// Runs the client (on a thread in the sending namespace) from `start` to `stop_at`;
/// `schedule` says when the application asks for transfers (sized and web flows).
pub fn run_client(
    c: QuicClient,
    schedule: Schedule,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    if !crate::linux_tcp::sleep_until(clock, c.start, stop) {
        return;
    }
    let rt = match super::runtime() {
        Ok(rt) => rt,
        Err(e) => return flow.fail(e),
    };
    let ready: Arc<Mutex<Option<Box<dyn CongestionControl>>>> = Arc::default();
    let take = ready.clone();
    let provider = Polycc::from_factory(c.cca, Arc::new(move |_, _| lock(&take).take()));
    let st = State {
        intent: Cell::new(c.initial_intent),
        c,
        flow,
        clock,
        stop,
        ready,
        handles: provider.handles(),
        current: RefCell::new(None),
        connections: Cell::new(0),
        readers: RefCell::new(Vec::new()),
        media: MediaChannel::default(),
    };
    flow.set_started(clock.now());
    let result = rt.block_on(async {
        let client = start(&st, provider)?;
        let r = tokio::select! {
            r = application(&client, &st, schedule) => r,
            _ = ticker(&st) => Ok(()),
        };
        r.and(feedback_verdict(&st).await)
    });
    // The endpoint and its connections end with the runtime; each controller publishes its
    // final state as it goes.
    drop(rt);
    *lock(&flow.sample) = None;
    let mut counters = Counters::default();
    for h in st.handles.all() {
        let s = h.stats();
        counters.add(&Counters {
            packets_sent: s.sent_packets,
            retransmits: s.lost_packets,
            lost_packets: s.lost_packets,
            ..Counters::default()
        });
    }
    *lock(&flow.counters) = counters;
    flow.set_ended(clock.now().min(st.c.stop_at));
    if let Err(e) = result {
        flow.fail(e);
    }
}

fn start(st: &State, provider: Polycc) -> Result<Client, String> {
    let failed = |e: &dyn std::fmt::Display| format!("QUIC client: {e}");
    let tls = client_tls(&st.c.cert_pem).map_err(|e| failed(&e))?;
    let io = IoBuilder::default()
        .with_receive_address(SocketAddr::V4(SocketAddrV4::new(st.c.local, 0)))
        .map_err(|e| format!("QUIC client socket: {e}"))
        .and_then(io)?;
    Client::builder()
        .with_tls(tls)
        .map_err(|e| failed(&e))?
        .with_io(io)
        .map_err(|e| failed(&e))?
        .with_limits(limits()?)
        .map_err(|e| failed(&e))?
        .with_congestion_controller(provider)
        .map_err(|e| failed(&e))?
        .with_event(TimingEvents::sender())
        .map_err(|e| failed(&e))?
        .with_datagram(MediaDatagrams::new(st.media.clone()))
        .map_err(|e| failed(&e))?
        .start()
        .map_err(|e| failed(&e))
}

/// Publishes the current controller's state and RTT samples, and posts due intents, every
/// [`TICK`]; never returns.
async fn ticker(st: &State<'_>) {
    let mut intents = st.c.intents.iter().peekable();
    let mut last_seq = 0;
    let mut tick = tokio::time::interval(TICK);
    loop {
        tick.tick().await;
        let now = st.clock.now();
        let current = st.current.borrow().clone();
        while let Some((_, i)) = intents.next_if(|(t, _)| *t <= now) {
            st.intent.set(Some(*i));
            if let Some(h) = &current {
                h.set_intent(i);
            }
        }
        let Some(h) = current else { continue };
        let snap = h.snapshot();
        if snap.seq == last_seq {
            continue;
        }
        last_seq = snap.seq;
        let rtt = snap.stats.rtt;
        if rtt.has_sample {
            lock(&st.flow.rtt).record(rtt.latest.0 / 1000);
        }
        *lock(&st.flow.sample) = Some(super::sample_of(&snap));
    }
}

/// Resolves once the run is over for the application: `stop_at`, or the run stopped.
async fn over(st: &State<'_>) {
    let at = sleep_until(st.clock, st.c.stop_at);
    tokio::pin!(at);
    loop {
        tokio::select! {
            _ = &mut at => return,
            _ = tokio::time::sleep(TICK) => {
                if st.stop.load(Ordering::Relaxed) {
                    return;
                }
            }
        }
    }
}

async fn application(client: &Client, st: &State<'_>, schedule: Schedule) -> Result<(), String> {
    if let Some((model, seed)) = st.c.video {
        return video(client, st, model, seed).await;
    }
    if st.c.transfers {
        transfers(client, st, schedule).await
    } else {
        bulk(client, st, schedule).await
    }
}

/// A new connection, its path's controller built first (connection `n` of the flow).
async fn connect(client: &Client, st: &State<'_>) -> Result<Connection, String> {
    let n = st.connections.get();
    st.connections.set(n + 1);
    let intent = st.intent.get();
    let cc = (st.c.new_cc)(n, Time::ZERO, intent.as_ref())?;
    *lock(&st.ready) = Some(cc);
    let to = SocketAddr::V4(st.c.server);
    let connect = Connect::new(to).with_server_name(SERVER_NAME);
    let conn = tokio::time::timeout(CONNECT_TIMEOUT, client.connect(connect))
        .await
        .map_err(|_| format!("no QUIC handshake with {to} within {CONNECT_TIMEOUT:?}"))?
        .map_err(|e| format!("QUIC connection to {to}: {e}"))?;
    if lock(&st.ready).take().is_some() {
        return Err("s2n-quic did not take the connection's controller".into());
    }
    *st.current.borrow_mut() = st.handles.latest();
    let (conn, streams) = conn.split();
    if let Some(h) = st.current.borrow().as_ref().filter(|h| h.wants_feedback()) {
        let (_, reports) = streams.split();
        st.readers
            .borrow_mut()
            .push(tokio::spawn(read_reports(reports, h.clone())));
    }
    // An intent posted between the build and now.
    if let (Some(i), Some(h)) = (st.intent.get(), st.current.borrow().as_ref()) {
        if Some(i) != intent {
            h.set_intent(&i);
        }
    }
    Ok(conn)
}

/// A video source: a frame every frame interval until the run is over, each frame's datagrams
/// queued to leave within [`super::video::MEDIA_DEADLINE`] (`super::video`).
async fn video(
    client: &Client,
    st: &State<'_>,
    model: VideoModel,
    seed: u64,
) -> Result<(), String> {
    use super::video::{shard_len, time_of};
    let conn = connect(client, st).await?;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let len = shard_len(model.packet);
    // GCC's probes: padding of a media packet's size when no media waits.
    if let Some(h) = st.current.borrow().as_ref() {
        polycc_quic::video_frames::pad_for(&st.media, h, len);
    }
    let (mut sent, mut arrived) = (Vec::new(), Vec::new());
    // Departures so far become the frames' first-sent times.
    let record_departures = |sent: &mut Vec<(u64, std::time::Instant)>, arrived: &mut Vec<_>| {
        st.media.drain(sent, arrived);
        arrived.clear();
        if let Some(v) = lock(&st.flow.video).as_mut() {
            for (seg, at) in sent.drain(..) {
                v.on_sent(seg, time_of(st.clock, at));
            }
        }
    };
    let ended = over(st);
    tokio::pin!(ended);
    let mut next = st.clock.now();
    loop {
        tokio::select! {
            _ = &mut ended => break,
            _ = sleep_until(st.clock, next) => {}
        }
        record_departures(&mut sent, &mut arrived);
        let now = st.clock.now();
        let media = st
            .current
            .borrow()
            .as_ref()
            .and_then(|h| h.snapshot().media);
        let made = lock(&st.flow.video).as_mut().map(|v| {
            let f = v.encode(
                now,
                media.map(|m| m.target_bitrate),
                media.and_then(|m| m.competing),
                &mut rng,
            );
            (v.frames.len() - 1, f)
        });
        let Some((index, frame)) = made else {
            return Err("the video flow has no source".into());
        };
        let index = u32::try_from(index).map_err(|_| "more than 2^32 video frames".to_string())?;
        polycc_quic::video_frames::queue_frame(
            &conn,
            &st.media,
            st.current.borrow().as_ref(),
            index,
            &frame,
            len,
        )?;
        next += model.interval;
        if let Some(e) = st.media.error() {
            return Err(format!("the video connection ended: {e}"));
        }
    }
    record_departures(&mut sent, &mut arrived);
    st.flow.set_ended(st.clock.now().min(st.c.stop_at));
    conn.close(0u32.into());
    Ok(())
}

/// The readers of arrival reports: an error if one found a malformed report; those still
/// reading (their connection is open until the runtime ends) are stopped.
async fn feedback_verdict(st: &State<'_>) -> Result<(), String> {
    let readers = std::mem::take(&mut *st.readers.borrow_mut());
    for reader in readers {
        if !reader.is_finished() {
            reader.abort();
            continue;
        }
        if let Ok(Err(e)) = reader.await {
            return Err(e.to_string());
        }
    }
    Ok(())
}

/// A bulk flow (or an on/off source, written in its on periods only): one stream written until
/// the run is over, then its trailer, and the receiver's verdict awaited for at most
/// [`VERIFY_GRACE`].
async fn bulk(client: &Client, st: &State<'_>, mut schedule: Schedule) -> Result<(), String> {
    let (chunk, ahead_max): (usize, fn(u64) -> u64) = if st.c.on_off {
        (ON_OFF_AHEAD as usize, |w| w + ON_OFF_AHEAD)
    } else {
        (SEGMENT, |w| 2 * w + WRITE_AHEAD)
    };
    let data = Bytes::from(pattern(chunk, 0x5EED));
    let mut periods = 0u64;
    let run = async {
        let ended = over(st);
        tokio::pin!(ended);
        // A handshake still going when the run is over (a very lossy link) ends the flow with
        // nothing sent and nothing to verify, as a sized flow's does: the server stops
        // accepting then, so waiting on would only fail after the connect timeout.
        let mut conn = tokio::select! {
            c = connect(client, st) => c?,
            _ = &mut ended => {
                st.flow.set_ended(st.clock.now().min(st.c.stop_at));
                return Ok(());
            }
        };
        let mut stream = open(&mut conn).await?;
        let mut sum = Checksum::new();
        loop {
            while schedule.pop_due(st.clock.now()).is_some() {
                periods += 1;
            }
            if st.c.on_off && !on_period(periods) {
                let next = schedule.next().unwrap_or(Time(u64::MAX)).min(st.c.stop_at);
                tokio::select! {
                    _ = &mut ended => break,
                    _ = sleep_until(st.clock, next) => continue,
                }
            }
            let ahead = sum.len().saturating_sub(st.flow.received());
            if ahead > ahead_max(h_cwnd(st)) {
                tokio::select! {
                    _ = &mut ended => break,
                    _ = tokio::time::sleep(std::time::Duration::from_millis(1)) => continue,
                }
            }
            // A send is not cancelled midway (the checksum must know what went).
            send(&mut stream, &segment_header(chunk as u64)).await?;
            stream
                .send(data.clone())
                .await
                .map_err(|e| format!("QUIC send: {e}"))?;
            sum.update(&data);
            if st.clock.now() >= st.c.stop_at || st.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        st.flow.set_ended(st.clock.now().min(st.c.stop_at));
        let grace = tokio::time::timeout(VERIFY_GRACE, finish(&mut stream, &sum));
        // A link that cannot drain what was written ahead within the grace (a very lossy one)
        // leaves the verdict out: what the receiver did read is checked instead.
        let verified = match grace.await {
            Ok(v) => v,
            Err(_) => check_prefix(&data, &sum, *lock(&st.flow.read_so_far)),
        };
        conn.close(0u32.into());
        verified
    };
    run.await
}

/// Checks the receiver's `(bytes, checksum)` of a bulk stream that repeated `data` against
/// what the sender wrote (`sum`).
fn check_prefix(data: &[u8], sum: &Checksum, (read, checksum): (u64, u64)) -> Result<(), String> {
    if read > sum.len() {
        return Err(format!(
            "the receiver read {read} bytes of a transfer of {}",
            sum.len()
        ));
    }
    if repeated_checksum(data, read) != checksum {
        return Err(format!(
            "the {read} bytes the receiver read (of {} sent) fail the checksum",
            sum.len()
        ));
    }
    Ok(())
}

/// The current controller's window as last published (0 before any).
fn h_cwnd(st: &State) -> u64 {
    st.current.borrow().as_ref().map_or(0, |h| h.stats().cwnd)
}

/// A sized, web or DASH flow: each requested transfer on its stream, in turn, on one
/// connection or a connection each.
async fn transfers(client: &Client, st: &State<'_>, mut schedule: Schedule) -> Result<(), String> {
    let data = Bytes::from(pattern(SEGMENT, 0x5EED));
    // Sizes of the transfers requested and not begun.
    let mut queued = VecDeque::new();
    let mut conn: Option<Connection> = None;
    let ended = over(st);
    tokio::pin!(ended);
    loop {
        while let Some(t) = schedule.pop_due(st.clock.now()) {
            let (bytes, intent) = schedule.transfer(t);
            st.flow.request(t, bytes);
            queued.push_back(bytes);
            if let Some(i) = intent.filter(|i| st.c.player_intents && st.intent.get() != Some(*i)) {
                // For this connection now, and for those it opens later.
                st.intent.set(Some(i));
                if let Some(h) = st.current.borrow().as_ref() {
                    h.set_intent(&i);
                }
            }
        }
        let Some(bytes) = queued.pop_front() else {
            let next = schedule.next().unwrap_or(Time(u64::MAX)).min(st.c.stop_at);
            tokio::select! {
                _ = &mut ended => break,
                _ = sleep_until(st.clock, next) => continue,
            }
        };
        let one = async {
            if conn.is_none() {
                conn = Some(connect(client, st).await?);
            }
            let c = conn.as_mut().expect("just opened");
            let mut stream = open(c).await?;
            let sum = write(&mut stream, &data, bytes).await?;
            finish(&mut stream, &sum).await
        };
        tokio::select! {
            r = one => r?,
            _ = &mut ended => break,
        }
        // The verdict came after the receiver recorded the transfer in full.
        if let Some(at) = st.flow.last_completed() {
            schedule.completed(at);
        }
        if st.c.per_transfer {
            if let Some(c) = conn.take() {
                c.close(0u32.into());
            }
        }
        if st.c.sized {
            break;
        }
    }
    st.flow.set_ended(st.clock.now().min(st.c.stop_at));
    *lock(&st.flow.streaming) = schedule.streaming(st.c.stop_at);
    if let Some(c) = conn {
        c.close(0u32.into());
    }
    Ok(())
}

async fn open(conn: &mut Connection) -> Result<BidirectionalStream, String> {
    conn.open_bidirectional_stream()
        .await
        .map_err(|e| format!("QUIC stream: {e}"))
}

async fn send(stream: &mut BidirectionalStream, b: &[u8]) -> Result<(), String> {
    stream
        .send(Bytes::copy_from_slice(b))
        .await
        .map_err(|e| format!("QUIC send: {e}"))
}

/// Writes a transfer of `bytes` data bytes; returns their checksum.
async fn write(
    stream: &mut BidirectionalStream,
    data: &Bytes,
    bytes: u64,
) -> Result<Checksum, String> {
    let mut sum = Checksum::new();
    while sum.len() < bytes {
        let n = (bytes - sum.len()).min(SEGMENT as u64) as usize;
        let chunk = data.slice(..n);
        send(stream, &segment_header(n as u64)).await?;
        sum.update(&chunk);
        stream
            .send(chunk)
            .await
            .map_err(|e| format!("QUIC send: {e}"))?;
    }
    Ok(sum)
}

/// Ends a transfer: its trailer, the end of the stream, and the receiver's verdict, which must
/// agree with what was sent.
async fn finish(stream: &mut BidirectionalStream, sum: &Checksum) -> Result<(), String> {
    send(stream, &trailer(sum)).await?;
    stream
        .finish()
        .map_err(|e| format!("QUIC stream end: {e}"))?;
    let mut answer = Vec::with_capacity(Verdict::LEN);
    while answer.len() < Verdict::LEN {
        match stream.receive().await {
            Ok(Some(chunk)) => answer.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(e) => return Err(format!("QUIC verdict: {e}")),
        }
    }
    match Verdict::decode(&answer) {
        Some(v) if v.ok && v.bytes == sum.len() && v.checksum == sum.value() => Ok(()),
        Some(v) => Err(format!(
            "the receiver did not verify the transfer: sent {} bytes (checksum {:016x}), it \
             read {} (checksum {:016x})",
            sum.len(),
            sum.value(),
            v.bytes,
            v.checksum
        )),
        None => Err(format!(
            "the receiver answered {} bytes, not a verdict",
            answer.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receivers_prefix_passes_when_it_is_what_was_written_and_only_then() {
        let data = pattern(1200, 0x5EED);
        let mut sent = Checksum::new();
        for _ in 0..4 {
            sent.update(&data);
        }
        let read = repeated_checksum(&data, 3000);
        assert_eq!(check_prefix(&data, &sent, (3000, read)), Ok(()));
        assert_eq!(
            check_prefix(&data, &sent, (0, Checksum::new().value())),
            Ok(())
        );
        let wrong = check_prefix(&data, &sent, (3000, read ^ 1)).expect_err("a mismatch");
        assert!(
            wrong.contains("3000 bytes") && wrong.contains("checksum"),
            "{wrong}"
        );
        let more = check_prefix(&data, &sent, (5000, read)).expect_err("more than was sent");
        assert!(more.contains("5000 bytes of a transfer of 4800"), "{more}");
    }
}
