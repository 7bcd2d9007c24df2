//! The sending end of a polycc UDP flow: `polycc-transport`'s sender with the flow's
//! controller, on a real socket and the wall clock. Segments work as in the simulator's sender:
//! new data in order, a lost segment queued to be sent again unless it was acknowledged since,
//! and on a probe timeout with nothing new to send, the oldest segment in flight again.

use super::wire::{self, Data, Datagram, DATA_HEADER, IP_UDP_HEADERS, NO_SEGMENT};
use crate::app::{on_period, Schedule};
use crate::clock::Clock;
use crate::flow_state::{lock, Counters, FlowShared, Sample};
use polycc::units::{Duration, Time};
use polycc::{CongestionControl, Intent};
use polycc_transport::{AckInfo, Config, Outgoing, PacketEvent, SendPermit, Timeout};
use std::collections::{HashSet, VecDeque};
use std::io::ErrorKind;
use std::net::{SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};

/// Every data packet is one MTU on the wire, as the simulator's are (mss + header).
pub const WIRE_BYTES: u64 = crate::tunnel::MTU as u64;
/// Application bytes a data packet carries.
pub const SEGMENT_BYTES: u64 = WIRE_BYTES - IP_UDP_HEADERS - DATA_HEADER as u64;
/// Longest sleep between looks at the socket and the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(5);
/// How often the sender publishes its state for the sampler.
const PUBLISH: Duration = Duration::from_millis(5);

/// Builds the controller of a flow's `n`th connection (web flows without a persistent connection
/// start a fresh one, with what it has learnt of the path forgotten, for every transfer).
pub type NewController<'a> =
    dyn Fn(u64, Time, Option<&Intent>) -> Result<Box<dyn CongestionControl>, String> + Sync + 'a;

pub struct ClientConfig<'a> {
    pub cc: Box<dyn CongestionControl>,
    pub new_cc: &'a NewController<'a>,
    pub server: SocketAddrV4,
    pub start: Time,
    pub stop_at: Time,
    /// When the application asks for transfers (sized and web flows), or turns on and off.
    pub schedule: Schedule,
    /// An on/off source: the schedule's events turn it on and off (it starts on).
    pub on_off: bool,
    /// Sized and web flows: bytes of each transfer.
    pub transfer_bytes: Option<u64>,
    /// A web flow that opens a connection per transfer.
    pub per_transfer: bool,
    pub max_ack_delay: Duration,
    pub pacing: bool,
    pub rwnd: u64,
    /// Later intents `(from, intent)`, in time order.
    pub intents: Vec<(Time, Intent)>,
    pub initial_intent: Option<Intent>,
}

/// The application's segments: what to send next and what to send again.
struct Segments {
    next: u64,
    /// End of the transfers started so far (None: bulk, without end).
    end: Option<u64>,
    /// An on/off source in an off period: no new segments.
    paused: bool,
    /// Every segment below this one is acknowledged; `acked` holds those above it.
    acked_below: u64,
    acked: HashSet<u64>,
    retx: VecDeque<u64>,
}

impl Segments {
    fn new(transfers: bool) -> Segments {
        Segments {
            next: 0,
            end: transfers.then_some(0),
            paused: false,
            acked_below: 0,
            acked: HashSet::new(),
            retx: VecDeque::new(),
        }
    }

    fn on_event(&mut self, ev: PacketEvent<u64>, counters: &mut Counters) {
        match ev {
            PacketEvent::Acked { payload, .. } => self.mark_acked(payload),
            PacketEvent::SpuriousLoss { payload, .. } => {
                counters.spurious_losses += 1;
                self.mark_acked(payload);
            }
            PacketEvent::Lost { payload, .. } => {
                counters.lost_packets += 1;
                if payload != NO_SEGMENT && !self.is_acked(payload) {
                    self.retx.push_back(payload);
                }
            }
        }
    }

    fn mark_acked(&mut self, s: u64) {
        if s == NO_SEGMENT || s < self.acked_below {
            return;
        }
        self.acked.insert(s);
        while self.acked.remove(&self.acked_below) {
            self.acked_below += 1;
        }
    }

    fn is_acked(&self, s: u64) -> bool {
        s < self.acked_below || self.acked.contains(&s)
    }

    /// Every segment of the transfers started so far is acknowledged.
    fn transfers_done(&self) -> bool {
        self.end.is_some_and(|e| self.acked_below >= e)
    }

    /// The segment to send next and whether it is a retransmission.
    fn pick(&mut self) -> Option<(u64, bool)> {
        while let Some(s) = self.retx.pop_front() {
            if !self.is_acked(s) {
                return Some((s, true));
            }
        }
        if self.paused || self.end.is_some_and(|e| self.next >= e) {
            return None;
        }
        self.next += 1;
        Some((self.next - 1, false))
    }
}

/// Runs the client (on a thread in the sending namespace) from `start` to `stop_at`.
pub fn run_client(
    c: ClientConfig,
    sock: &UdpSocket,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    let ClientConfig {
        mut cc,
        new_cc,
        server,
        start,
        stop_at,
        mut schedule,
        on_off,
        transfer_bytes,
        per_transfer,
        max_ack_delay,
        pacing,
        rwnd,
        mut intents,
        initial_intent,
    } = c;
    if !crate::linux_tcp::sleep_until(clock, start, stop) {
        return;
    }
    // Pacing needs wake-ups on time; the default 50 µs slack would be added to each.
    let _ = nix::sys::prctl::set_timerslack(1);
    if let Err(e) = sock
        .connect(server)
        .and_then(|_| sock.set_nonblocking(true))
    {
        return flow.fail(format!("UDP socket to {server}: {e}"));
    }
    let now = clock.now();
    let mut intent = initial_intent;
    if let Some(i) = &intent {
        cc.set_intent(now, i);
    }
    intents.reverse(); // popped from the back in time order
    flow.set_started(now);
    let config = Config {
        max_datagram: WIRE_BYTES,
        max_ack_delay,
        pacing_fallback: pacing,
        rwnd,
    };
    let mut tx = polycc_transport::Sender::<u64>::new(cc, config);
    let transfer_segments = transfer_bytes.map(segments_of);
    let mut segs = Segments::new(transfer_segments.is_some());
    let mut queued = 0u64;
    let mut started = 0u64;
    let mut periods = 0u64;
    let mut counters = Counters::default();
    let mut buf = vec![0u8; 2048];
    let mut packet = vec![0u8; (WIRE_BYTES - IP_UDP_HEADERS) as usize];
    let mut next_publish = now;
    loop {
        let now = clock.now();
        if now >= stop_at || stop.load(Ordering::Relaxed) {
            break;
        }
        while intents.last().is_some_and(|(t, _)| *t <= now) {
            let (_, i) = intents.pop().expect("just looked");
            tx.controller_mut().set_intent(now, &i);
            intent = Some(i);
        }
        while let Some(t) = schedule.pop_due(now) {
            if on_off {
                periods += 1;
                segs.paused = !on_period(periods);
            } else {
                flow.request(t, transfer_bytes.unwrap_or(0));
                queued += 1;
            }
        }
        if let (Some(n), true) = (transfer_segments, queued > 0 && segs.transfers_done()) {
            if per_transfer && started > 0 {
                match new_cc(started, now, intent.as_ref()) {
                    Ok(cc) => tx.new_path(cc),
                    Err(e) => return flow.fail(e),
                }
            }
            segs.end = segs.end.map(|e| e + n);
            queued -= 1;
            started += 1;
        }
        // A sized flow's one transfer is acknowledged: the application is done.
        if started > 0 && queued == 0 && schedule.next().is_none() && segs.transfers_done() {
            break;
        }
        // ACKs first: they open the window and may declare losses.
        loop {
            let n = match sock.recv(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // The server's port not yet open (ICMP unreachable): try again later.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => break,
                Err(e) => return flow.fail(format!("receive: {e}")),
            };
            let Ok(Datagram::Ack(ack)) = wire::decode(&buf[..n]) else {
                continue;
            };
            let info = AckInfo {
                largest: ack.largest,
                ack_delay: Duration::from_micros(ack.ack_delay_us as u64),
                ecn: None,
                arrivals: &ack.arrivals,
            };
            let now = clock.now();
            if let Ok(out) = tx.on_ack_received(now, &ack.ranges, info, &mut |ev| {
                segs.on_event(ev, &mut counters)
            }) {
                if let Some(rtt) = out.rtt_sample {
                    lock(&flow.rtt).record(rtt.0 / 1000);
                }
                if out.persistent_congestion {
                    counters.persistent_congestions += 1;
                }
            }
        }
        let now = clock.now();
        if tx.next_timeout().is_some_and(|t| t <= now) {
            if let Some(t) = tx.on_timeout(now, &mut |ev| segs.on_event(ev, &mut counters)) {
                match t {
                    Timeout::Losses(l) => {
                        if l.persistent_congestion {
                            counters.persistent_congestions += 1;
                        }
                    }
                    Timeout::Probe { .. } => {
                        counters.probe_timeouts += 1;
                        if segs.retx.is_empty() && segs.end.is_some_and(|e| segs.next >= e) {
                            if let Some(s) = tx.in_flight_payloads().find(|&s| s != NO_SEGMENT) {
                                segs.retx.push_back(s);
                            }
                        }
                    }
                }
            }
        }
        // Send what the window and pacing allow.
        let mut wake = (now + MAX_SLEEP).min(schedule.next().unwrap_or(Time(u64::MAX)));
        loop {
            let now = clock.now();
            match tx.poll_send(now, WIRE_BYTES) {
                SendPermit::Now => {}
                SendPermit::At(t) => {
                    wake = wake.min(t);
                    break;
                }
                SendPermit::Blocked => break,
            }
            let Some((segment, retransmission)) = segs.pick() else {
                tx.on_app_limited();
                break;
            };
            let pn = tx.next_pn();
            Data {
                pn,
                segment,
                sent: now,
            }
            .write(&mut packet);
            let payload = payload_of(segment, transfer_bytes);
            let datagram = &packet[..DATA_HEADER + payload as usize];
            match sock.send(datagram) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                    ) =>
                {
                    // Not sent: the segment waits for the next turn.
                    segs.retx.push_front(segment);
                    break;
                }
                Err(e) => return flow.fail(format!("send: {e}")),
            }
            let sent = Outgoing {
                pn,
                bytes: datagram.len() as u64 + IP_UDP_HEADERS,
                ack_eliciting: true,
                retransmission,
                payload: segment,
            };
            if let Err(e) = tx.on_packet_sent(now, sent) {
                return flow.fail(format!("transport refused packet {pn}: {e}"));
            }
            counters.packets_sent += 1;
            counters.retransmits += u64::from(retransmission);
        }
        let now = clock.now();
        if now >= next_publish {
            *lock(&flow.sample) = Some(sample(&tx));
            next_publish = now + PUBLISH;
        }
        if let Some(t) = tx.next_timeout() {
            wake = wake.min(t);
        }
        wait_readable(sock, Duration(wake.0.saturating_sub(clock.now().0)));
    }
    *lock(&flow.sample) = None;
    *lock(&flow.counters) = counters;
    flow.set_ended(clock.now().min(stop_at));
}

/// Segments of a transfer of `bytes`.
pub fn segments_of(bytes: u64) -> u64 {
    bytes.div_ceil(SEGMENT_BYTES).max(1)
}

/// Application bytes segment `s` carries: a full segment, but for the last of a transfer, what
/// is left of it (as in the simulator, whose last segment is as short as the transfer asks).
fn payload_of(s: u64, transfer_bytes: Option<u64>) -> u64 {
    match transfer_bytes {
        Some(b) if s != NO_SEGMENT && (s + 1).is_multiple_of(segments_of(b)) => {
            b - (segments_of(b) - 1) * SEGMENT_BYTES
        }
        _ => SEGMENT_BYTES,
    }
}

/// The sender's state in the flows table's terms.
fn sample(tx: &polycc_transport::Sender<u64>) -> Sample {
    let cc = tx.controller();
    let tel = cc.telemetry();
    Sample {
        state: tel.state,
        cwnd_bytes: Some(cc.cwnd() as f64),
        inflight_bytes: Some(tx.in_flight() as f64),
        pacing_rate_mbps: tx.pacing_rate().map(|r| r.as_mbps_f64()),
        extras: tel
            .entries()
            .iter()
            .filter(|(_, v)| v.is_finite())
            .copied()
            .collect(),
    }
}

/// Sleeps until the socket has a datagram or `timeout` passes (nanosecond resolution: pacing
/// at 100 Mbit/s spaces packets 120 µs apart).
fn wait_readable(sock: &UdpSocket, timeout: Duration) {
    use nix::poll::{ppoll, PollFd, PollFlags};
    use std::os::fd::AsFd;
    if timeout.is_zero() {
        return;
    }
    let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLIN)];
    let ts = nix::sys::time::TimeSpec::from_duration(std::time::Duration::from_nanos(timeout.0));
    let _ = ppoll(&mut fds, Some(ts), None);
}
