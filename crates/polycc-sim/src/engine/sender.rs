//! A simulated flow's sending end: the application's segments (what to send next, what to
//! resend, which are delivered), host send-time noise and the engine's timers, around the
//! sans-IO transport sender of `polycc-transport`, which keeps the packet ledger, loss
//! detection, RTT and delivery-rate estimation and pacing, and drives the controller. Packet
//! payloads are segment indices ([`NO_SEGMENT`] for padding).

use super::pn_ranges::Runs;
use super::recorder::FlowStats;
use super::segset::SegSet;
use super::send_jitter::SendJitter;
use crate::scenario::host::HostModel;
use polycc::signals::Arrival;
use polycc::units::{Bytes, Duration, Rate, Time};
use polycc::CongestionControl;
use polycc_transport::{AckInfo, Config, Outgoing, PacketEvent, SendPermit, Timeout};
use std::collections::VecDeque;
use std::ops::RangeInclusive;

/// Marks a packet that carries no application segment.
pub const NO_SEGMENT: u64 = u64::MAX;
/// Receive window of a flow that gives none: every real receiver advertises a finite one, and
/// without it a controller that runs away (a window or rate growing without bound) would take
/// the run's time and memory with it. 64 MiB is far above the largest BDP plus buffer of the
/// shipped scenarios (the satellite path: 4.2 MB + 1 MB) and above Linux's default
/// `tcp_rmem` maximum (6 MiB), so it bounds nothing a sane controller does.
pub const DEFAULT_RWND: u64 = 64 << 20;

/// The application data the sender currently has: segments [first, end), the last of which
/// carries `last_payload` bytes; `end == u64::MAX` for an endless (bulk) source.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    pub first: u64,
    pub end: u64,
    pub last_payload: u64,
}

/// What `poll_send` found.
pub enum Poll {
    /// Send a packet carrying this segment with this packet number.
    Send { pn: u64, seg: u64, wire: u64 },
    /// Pacing: try again at this time.
    Wait(Time),
    /// The window is full.
    Blocked,
    /// Nothing to send.
    Idle,
}

pub struct Sender {
    transport: polycc_transport::Sender<u64>,
    /// Payload bytes of a full segment; a packet is `mss + header` bytes on the wire.
    mss: u64,
    header: u64,
    /// Bytes of each packet the stack does not count (`HostModel::counts`): the controller's
    /// bytes (window, in flight, acknowledged) are the packet's less these.
    uncounted: u64,
    // Cursor into the receiver's arrival runs (`PnRanges`): runs before `ack_range` are fully
    // processed, and in `ack_range` packet numbers below `ack_next_pn` are.
    ack_range: usize,
    ack_next_pn: u64,
    /// The new ranges of an ACK covering more than one run (kept to reuse its allocation).
    ack_ranges: Vec<RangeInclusive<u64>>,
    /// Receiver timestamps up to this log position were handed to the controller.
    log_consumed: u64,
    transfer: Option<Transfer>,
    next_seg: u64,
    retx: VecDeque<u64>,
    acked_segs: SegSet,
    /// The application stopped: no new segments (retransmissions still go).
    stopped: bool,
    /// An on/off source is off: no new segments from this one on until it is on again.
    paused_from: Option<u64>,
    /// Lost segments are resent (false for real-time media without retransmission).
    retransmit: bool,
    /// Host send-time noise: released packets wait here before they leave (None: they leave at
    /// once). Boxed: most flows have none, and every packet reads whether this one has.
    jitter: Option<Box<SendJitter>>,
}

/// The segment bookkeeping a packet's fate changes: a delivered segment is never resent, a lost
/// one is queued for retransmission unless delivered.
struct Segments<'a> {
    acked: &'a mut SegSet,
    retx: &'a mut VecDeque<u64>,
    retransmit: bool,
    stats: &'a mut FlowStats,
}

impl Segments<'_> {
    fn on_event(&mut self, ev: PacketEvent<u64>) {
        match ev {
            PacketEvent::Acked { payload: seg, .. } => {
                if seg != NO_SEGMENT {
                    self.acked.insert(seg);
                }
            }
            PacketEvent::SpuriousLoss { payload: seg, .. } => {
                self.stats.spurious_losses += 1;
                if seg != NO_SEGMENT {
                    self.acked.insert(seg);
                }
            }
            PacketEvent::Lost { payload: seg, .. } => {
                self.stats.lost_packets += 1;
                if self.retransmit && seg != NO_SEGMENT && !self.acked.contains(seg) {
                    self.retx.push_back(seg);
                }
            }
        }
    }
}

impl Sender {
    pub fn new(
        cc: Box<dyn CongestionControl>,
        mss: u64,
        header: u64,
        uncounted: u64,
        max_ack_delay: Duration,
        pacing_fallback: bool,
        rwnd: Option<u64>,
    ) -> Self {
        let config = Config {
            max_datagram: mss + header - uncounted,
            max_ack_delay,
            pacing_fallback,
            rwnd: rwnd.unwrap_or(DEFAULT_RWND),
        };
        Sender {
            transport: polycc_transport::Sender::new(cc, config),
            mss,
            header,
            uncounted,
            ack_range: 0,
            ack_next_pn: 0,
            ack_ranges: Vec::new(),
            log_consumed: 0,
            transfer: None,
            next_seg: 0,
            retx: VecDeque::new(),
            acked_segs: SegSet::new(),
            stopped: false,
            paused_from: None,
            retransmit: true,
            jitter: None,
        }
    }

    /// The controller.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.transport.controller()
    }

    pub fn cc_mut(&mut self) -> &mut dyn CongestionControl {
        self.transport.controller_mut()
    }

    pub fn in_flight(&self) -> Bytes {
        self.transport.in_flight()
    }

    /// Bytes in flight counted as whole packets of the full size on the wire: the unit the
    /// links carry, and what the emulator reports for the real stacks (`inflight_wire_bytes`),
    /// whichever bytes this stack counts.
    pub fn in_flight_on_the_wire(&self) -> Bytes {
        let wire = self.mss + self.header;
        self.in_flight() * wire / (wire - self.uncounted).max(1)
    }

    pub fn cwnd(&self) -> Bytes {
        self.cc().cwnd()
    }

    /// The pacing rate in force (the controller's, else the transport's fallback).
    pub fn pacing_rate(&self) -> Option<Rate> {
        self.transport.pacing_rate()
    }

    /// Follows the host model's loss rules and pacer (`HostModel`).
    pub fn set_host(&mut self, host: &HostModel) {
        self.transport.set_loss_rules(host.loss_rules);
        self.transport.set_pacer(host.pacer);
    }

    /// Lost segments are not resent (real-time media without retransmission).
    pub fn no_retransmission(&mut self) {
        self.retransmit = false;
    }

    /// The application stops: no new segments leave from now on.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// An on/off source turns off (`true`: no new segments after `unsent` more, what its
    /// socket had written but not sent; what is lost is still resent) or on again.
    pub fn set_paused(&mut self, paused: bool, unsent: u64) {
        self.paused_from = paused.then(|| self.next_seg + unsent.div_ceil(self.mss));
    }

    /// The receiver-log position up to which arrivals were handed to the controller.
    pub fn log_consumed(&self) -> u64 {
        self.log_consumed
    }

    /// Arrivals up to log position `pos` were handed to the controller; returns the position.
    pub fn consume_log(&mut self, pos: u64) -> u64 {
        self.log_consumed = self.log_consumed.max(pos);
        self.log_consumed
    }

    /// Delays every packet this sender releases by the host's send-time noise.
    pub fn set_send_jitter(&mut self, jitter: SendJitter) {
        self.jitter = Some(Box::new(jitter));
    }

    /// Starts a new transfer, on a fresh connection state (controller, path estimates) when a
    /// controller is given.
    pub fn start_transfer(&mut self, t: Transfer, cc: Option<Box<dyn CongestionControl>>) {
        if let Some(cc) = cc {
            self.transport.new_path(cc);
        }
        self.next_seg = self.next_seg.max(t.first);
        self.transfer = Some(t);
    }

    /// The connection's handshake completed after `rtt` (`engine::handshake`).
    pub fn on_handshake(&mut self, now: Time, rtt: Duration) {
        self.transport.on_handshake(now, rtt);
    }

    /// A streaming source (video) appended data: the endless transfer now ends at `end`.
    pub fn extend_transfer(&mut self, end: u64) {
        match self.transfer.as_mut() {
            Some(t) => t.end = t.end.max(end),
            None => {
                self.transfer = Some(Transfer {
                    first: 0,
                    end,
                    last_payload: self.mss,
                })
            }
        }
    }

    /// Keeps only the queued retransmissions `keep` accepts.
    pub fn retain_retx(&mut self, mut keep: impl FnMut(u64, &SegSet) -> bool) {
        let acked = &self.acked_segs;
        self.retx.retain(|&s| keep(s, acked));
    }

    pub fn has_retx(&self) -> bool {
        !self.retx.is_empty()
    }

    pub fn transfer(&self) -> Option<Transfer> {
        self.transfer
    }

    /// All segments of the current transfer are acknowledged.
    pub fn transfer_done(&self) -> bool {
        self.transfer
            .is_some_and(|t| t.end != u64::MAX && self.acked_segs.cumulative() >= t.end)
    }

    fn payload_of(&self, seg: u64) -> u64 {
        match self.transfer {
            Some(t) if seg + 1 == t.end => t.last_payload,
            _ => self.mss,
        }
    }

    fn next_segment(&mut self) -> Option<(u64, bool)> {
        while let Some(&s) = self.retx.front() {
            if self.acked_segs.contains(s) {
                self.retx.pop_front();
            } else {
                return Some((s, true));
            }
        }
        let t = self.transfer?;
        let paused = self.paused_from.is_some_and(|p| self.next_seg >= p);
        (!self.stopped && !paused && self.next_seg < t.end).then_some((self.next_seg, false))
    }

    /// Decides whether a packet can leave now; on `Send`, the packet is recorded as sent. With
    /// send-time noise, packets are released to the host's queue on the sender's schedule and
    /// `Send` returns them as they come due.
    pub fn poll_send(&mut self, now: Time, stats: &mut FlowStats) -> Poll {
        if self.jitter.is_none() {
            return self.release(now, stats);
        }
        let sender = loop {
            match self.release(now, stats) {
                Poll::Send { pn, seg, wire } => {
                    if let Some(j) = self.jitter.as_mut() {
                        j.hold(now, pn, seg, wire);
                    }
                }
                other => break other,
            }
        };
        let Some(j) = self.jitter.as_mut() else {
            return sender;
        };
        if let Some(h) = j.pop_due(now) {
            return Poll::Send {
                pn: h.pn,
                seg: h.seg,
                wire: h.wire,
            };
        }
        match (j.next_out(), sender) {
            (None, p) => p,
            (Some(out), Poll::Wait(t)) => Poll::Wait(out.min(t)),
            (Some(out), _) => Poll::Wait(out),
        }
    }

    /// The sender's own decision (window, pacing) on the next packet at `now`.
    fn release(&mut self, now: Time, stats: &mut FlowStats) -> Poll {
        let (seg, retransmission) = match self.next_segment() {
            Some(next) => next,
            // The controller probes: padding fills what the application leaves.
            None if self.cc().wants_padding() => (NO_SEGMENT, false),
            None => {
                self.transport.on_app_limited();
                return Poll::Idle;
            }
        };
        let wire = if seg == NO_SEGMENT {
            self.mss
        } else {
            self.payload_of(seg)
        } + self.header;
        let counted = wire - self.uncounted;
        match self.transport.poll_send(now, counted) {
            SendPermit::Now => {}
            SendPermit::At(t) => return Poll::Wait(t),
            SendPermit::Blocked => return Poll::Blocked,
        }
        if retransmission {
            self.retx.pop_front();
            stats.retransmits += 1;
        } else if seg != NO_SEGMENT {
            self.next_seg += 1;
        }
        let pn = self.transport.next_pn();
        let sent = Outgoing {
            pn,
            bytes: counted,
            ack_eliciting: true,
            retransmission,
            payload: seg,
        };
        self.transport
            .on_packet_sent(now, sent)
            .expect("the simulator numbers its packets in order and sends no packet over 256 MiB");
        stats.packets_sent += 1;
        Poll::Send { pn, seg, wire }
    }

    /// Processes an ACK covering the receiver's arrival runs up to `range_idx`, the last cut at
    /// `largest` (`PnRanges`): only what earlier ACKs did not cover is handed to the transport.
    /// Arrivals in `log` (receiver timestamps) go to the controller when it asks for feedback.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub fn on_ack(
        &mut self,
        now: Time,
        runs: Runs<'_>,
        range_idx: usize,
        largest: u64,
        ack_delay: Duration,
        log: &[Arrival],
        stats: &mut FlowStats,
    ) {
        let start_range = self.ack_range;
        // A released run is behind the cursor: such an ACK has nothing new either.
        let Some(last_end) = runs.covered_end(range_idx, largest) else {
            return;
        };
        if range_idx < start_range || (range_idx == start_range && last_end < self.ack_next_pn) {
            return; // nothing beyond what earlier ACKs covered
        }
        // Most ACKs cover one run: its range stays on the stack, not in a vector that has long
        // left the caches by the flow's next ACK when there are many flows.
        let one;
        let ranges: &[RangeInclusive<u64>] = match runs.get(range_idx) {
            Some((s, _)) if range_idx == start_range && s.max(self.ack_next_pn) <= last_end => {
                one = s.max(self.ack_next_pn)..=last_end;
                std::slice::from_ref(&one)
            }
            _ => {
                self.collect_ranges(runs, range_idx, last_end);
                &self.ack_ranges
            }
        };
        self.ack_range = range_idx;
        self.ack_next_pn = last_end + 1;
        let info = AckInfo {
            largest,
            ack_delay,
            ecn: None,
            arrivals: log,
        };
        let mut segs = Segments {
            acked: &mut self.acked_segs,
            retx: &mut self.retx,
            retransmit: self.retransmit,
            stats,
        };
        let out = self
            .transport
            .on_ack_received(now, ranges, info, &mut |ev| segs.on_event(ev))
            .expect("a simulated receiver acknowledges only packets that were sent");
        if let Some(rtt) = out.rtt_sample {
            segs.stats.record_rtt(rtt);
        }
        if out.persistent_congestion {
            segs.stats.persistent_congestions += 1;
        }
    }

    /// The new ranges of an ACK covering the runs from the cursor's to `range_idx`, the last cut
    /// at `last_end`, into `ack_ranges`.
    #[cold]
    #[inline(never)]
    fn collect_ranges(&mut self, runs: Runs<'_>, range_idx: usize, last_end: u64) {
        let start_range = self.ack_range;
        self.ack_ranges.clear();
        // The cursor's run is never released (`PnRanges::release`), so `from` holds it.
        for (idx, &(s, e)) in runs
            .from(start_range)
            .iter()
            .enumerate()
            .take(range_idx - start_range + 1)
            .map(|(k, r)| (start_range + k, r))
        {
            let e = if idx == range_idx { last_end } else { e };
            let s = if idx == start_range {
                s.max(self.ack_next_pn)
            } else {
                s
            };
            if s <= e {
                self.ack_ranges.push(s..=e);
            }
        }
    }

    /// The ACK cursor's run: the receiver's runs before it are consumed (`PnRanges::release`).
    pub fn ack_cursor(&self) -> usize {
        self.ack_range
    }

    /// When the loss-detection timer should fire next (RFC 9002 §6.2.1), if at all.
    pub fn loss_deadline(&self) -> Option<Time> {
        self.transport.loss_deadline()
    }

    /// The loss-detection timer fired: time-threshold losses, or a probe timeout, whose probes
    /// carry new data if there is some, else the oldest unacknowledged segment again.
    pub fn on_loss_timer(&mut self, now: Time, stats: &mut FlowStats) {
        let mut segs = Segments {
            acked: &mut self.acked_segs,
            retx: &mut self.retx,
            retransmit: self.retransmit,
            stats,
        };
        match self
            .transport
            .on_loss_timeout(now, &mut |ev| segs.on_event(ev))
        {
            Timeout::Losses(l) => {
                if l.persistent_congestion {
                    segs.stats.persistent_congestions += 1;
                }
            }
            Timeout::Probe { .. } => {
                segs.stats.probe_timeouts += 1;
                if self.retransmit && self.next_segment().is_none() {
                    let oldest = self
                        .transport
                        .in_flight_payloads()
                        .find(|&seg| seg != NO_SEGMENT);
                    if let Some(seg) = oldest {
                        self.retx.push_back(seg);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::pn_ranges::PnRanges;
    use super::*;
    use polycc::{CcContext, CcSpec, Registry};

    const WIRE: u64 = 1500;

    fn sender() -> Sender {
        let cc = Registry::standard()
            .build(&CcSpec::named("newreno"), &CcContext::new(WIRE))
            .expect("newreno is registered");
        let mut s = Sender::new(cc, WIRE - 52, 52, 0, Duration::from_millis(25), false, None);
        let t = Transfer {
            first: 0,
            end: u64::MAX,
            last_payload: WIRE - 52,
        };
        s.start_transfer(t, None);
        s
    }

    fn send(s: &mut Sender, st: &mut FlowStats, now: Time, n: usize) -> Vec<(u64, u64)> {
        (0..n)
            .map(|_| match s.poll_send(now, st) {
                Poll::Send { pn, seg, .. } => (pn, seg),
                _ => panic!("the initial window holds {n} packets"),
            })
            .collect()
    }

    #[test]
    fn an_ack_covers_its_snapshot_and_a_late_packet_is_a_spurious_loss() {
        let mut s = sender();
        let mut st = FlowStats::new();
        // Not at 0: `now - loss_delay` saturates there, and every packet sent at 0 is late.
        let t0 = Time::ZERO + Duration::from_millis(1000);
        assert_eq!(
            send(&mut s, &mut st, t0, 8),
            (0..8).map(|p| (p, p)).collect::<Vec<_>>()
        );
        let mut rx = PnRanges::new();
        for p in [0, 1, 2, 5, 6] {
            rx.insert(p);
        }
        let (idx, largest) = (rx.runs().last_index().unwrap_or(0), 6);
        // Before ACK A reaches the sender, 7 extends the top run and the late 3 and 4 merge
        // the ranges into one: A must still cover 0-2 and 5-6 only.
        for p in [7, 3, 4] {
            rx.insert(p);
        }
        assert_eq!(rx.ranges(), &[(0, 7)]);
        let t1 = t0 + Duration::from_millis(40);
        s.on_ack(t1, rx.runs(), idx, largest, Duration::ZERO, &[], &mut st);
        // 3 is 3 below the largest acknowledged: declared lost; 4 and 7 stay in flight.
        assert_eq!((st.lost_packets, s.in_flight()), (1, 2 * WIRE));
        assert!(s.has_retx());
        // ACK B covers 7 and the late 3 and 4.
        let idx = rx.runs().last_index().unwrap_or(0);
        s.on_ack(t1, rx.runs(), idx, 7, Duration::ZERO, &[], &mut st);
        assert_eq!(
            (st.spurious_losses, st.lost_packets, s.in_flight()),
            (1, 1, 0)
        );
        // Its segment counts as delivered: the queued retransmission is dropped.
        assert!(s.acked_segs.contains(3));
        assert_eq!(send(&mut s, &mut st, t1, 1), vec![(8, 8)]);
        assert_eq!(st.retransmits, 0);
        // A stale copy of ACK A changes nothing.
        s.on_ack(t1, rx.runs(), 1, 6, Duration::ZERO, &[], &mut st);
        assert_eq!((st.spurious_losses, s.in_flight()), (1, WIRE));
    }
}
