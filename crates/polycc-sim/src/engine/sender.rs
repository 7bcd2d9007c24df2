//! The sending end of a reliable flow: packet numbers, the ACK and loss-detection logic of
//! RFC 9002 §6 (packet threshold 3, time threshold 9/8 RTT, probe timeout), retransmission of
//! lost segments in new packets, pacing, delivery-rate samples, and the controller it drives.
//! Packets acknowledged after being declared lost are spurious losses: they show reordering,
//! and loss detection then follows RACK's time rule instead (`reordering`).

use super::delay_histogram::DelayHistogram;
use super::events::Timer;
use super::pn_ranges::PnRanges;
use super::reordering::Reordering;
use super::segset::SegSet;
use super::send_jitter::SendJitter;
use polycc::estimators::delivery_rate::{DeliveryRateEstimator, PacketDeliveryState};
use polycc::estimators::rtt::{RttEstimator, GRANULARITY};
use polycc::signals::{AckEvent, Arrival, Feedback, LossEvent, PacketOutcome, SentPacket};
use polycc::units::{Bytes, Duration, Rate, Time};
use polycc::CongestionControl;
use std::collections::VecDeque;

/// RFC 9002 §7.6.1 kPersistentCongestionThreshold.
const PERSISTENT_CONGESTION_THRESHOLD: u64 = 3;
/// RFC 9002 §6.2.4: probe packets sent when the PTO fires.
const PTO_PROBES: u32 = 2;
/// Linux `tcp_update_pacing_rate`: pacing at 200 % of cwnd/srtt in slow start and 120 % after
/// (sysctl tcp_pacing_ss_ratio / tcp_pacing_ca_ratio), when the controller sets no rate.
const PACING_SS_RATIO: f64 = 2.0;
const PACING_CA_RATIO: f64 = 1.2;
/// Marks a packet that carries no application segment.
pub const NO_SEGMENT: u64 = u64::MAX;
/// Receive window of a flow that gives none: every real receiver advertises a finite one, and
/// without it a controller that runs away (a window or rate growing without bound) would take
/// the run's time and memory with it. 64 MiB is far above the largest BDP plus buffer of the
/// shipped scenarios (the satellite path: 4.2 MB + 1 MB) and above Linux's default
/// `tcp_rmem` maximum (6 MiB), so it bounds nothing a sane controller does.
pub const DEFAULT_RWND: u64 = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    Acked,
    Lost,
}

/// A packet declared lost, remembered so that a late ACK of it is recognised as spurious.
#[derive(Clone, Copy, Debug)]
struct LostRecord {
    pn: u64,
    seg: u64,
    /// When the record is dropped: `LOST_RECORD_PTOS` PTOs after the loss was declared.
    expires: Time,
}

/// Lost packets are remembered for this many PTOs after being declared lost (ours): a PTO bounds
/// the RTT with its variation, so an ACK of a packet still in the network arrives well within.
const LOST_RECORD_PTOS: u64 = 3;

#[derive(Clone, Copy, Debug)]
struct SentMeta {
    seg: u64,
    bytes: u32,
    state: State,
    delivery: PacketDeliveryState,
}

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
    pub cc: Box<dyn CongestionControl>,
    pub rtt: RttEstimator,
    rate_est: DeliveryRateEstimator,
    /// Payload bytes of a full segment; controllers count in whole packets on the wire
    /// (`mss + header`), the unit of `in_flight`, as QUIC's max_datagram_size does.
    mss: u64,
    header: u64,
    max_ack_delay: Duration,
    pacing_fallback: bool,
    rwnd: u64,
    sent: VecDeque<SentMeta>,
    base_pn: u64,
    next_pn: u64,
    largest_acked: Option<u64>,
    pub in_flight: u64,
    // Cursor into the receiver's arrival runs (`PnRanges`): runs before `ack_range` are fully
    // processed, and in `ack_range` packet numbers below `ack_next_pn` are.
    ack_range: usize,
    ack_next_pn: u64,
    pub log_consumed: u64,
    transfer: Option<Transfer>,
    next_seg: u64,
    retx: VecDeque<u64>,
    /// Packets declared lost in the last `LOST_RECORD_PTOS` PTOs, by packet number.
    lost: VecDeque<LostRecord>,
    reordering: Reordering,
    pub acked_segs: SegSet,
    pub stopped: bool,
    next_send: Time,
    pub wake: Timer,
    pub loss_timer: Timer,
    loss_time: Option<Time>,
    pto_count: u32,
    probes: u32,
    last_ack_eliciting: Time,
    first_rtt_sample: Option<Time>,
    app_limited: bool,
    /// Lost segments are resent (false for real-time media without retransmission).
    pub retransmit: bool,
    pub cc_timer: Timer,
    /// Host send-time noise: released packets wait here before they leave (None: they leave at
    /// once).
    jitter: Option<SendJitter>,
    // Counters.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub lost_packets: u64,
    /// Packets acknowledged after they were declared lost (counted in `lost_packets` too).
    pub spurious_losses: u64,
    /// Probe timeouts that fired (RFC 9002 §6.2; TCP's tail-loss probe and RTO in one timer).
    pub probe_timeouts: u64,
    /// Persistent-congestion declarations (RFC 9002 §7.6; the window collapses, as on an RTO).
    pub persistent_congestions: u64,
    pub rtt_hist: DelayHistogram,
    pub rtt_sum_ns: u128,
    pub rtt_count: u64,
    pub bin_rtt_sum_ns: u128,
    pub bin_rtt_count: u64,
}

impl Sender {
    pub fn new(
        cc: Box<dyn CongestionControl>,
        mss: u64,
        header: u64,
        max_ack_delay: Duration,
        pacing_fallback: bool,
        rwnd: Option<u64>,
    ) -> Self {
        Sender {
            cc,
            rtt: RttEstimator::new(),
            rate_est: DeliveryRateEstimator::new(),
            mss,
            header,
            max_ack_delay,
            pacing_fallback,
            rwnd: rwnd.unwrap_or(DEFAULT_RWND),
            sent: VecDeque::new(),
            base_pn: 0,
            next_pn: 0,
            largest_acked: None,
            in_flight: 0,
            ack_range: 0,
            ack_next_pn: 0,
            log_consumed: 0,
            transfer: None,
            next_seg: 0,
            retx: VecDeque::new(),
            lost: VecDeque::new(),
            reordering: Reordering::new(),
            acked_segs: SegSet::new(),
            stopped: false,
            next_send: Time::ZERO,
            wake: Timer::default(),
            loss_timer: Timer::default(),
            loss_time: None,
            pto_count: 0,
            probes: 0,
            last_ack_eliciting: Time::ZERO,
            first_rtt_sample: None,
            app_limited: false,
            retransmit: true,
            cc_timer: Timer::default(),
            jitter: None,
            packets_sent: 0,
            bytes_sent: 0,
            retransmits: 0,
            lost_packets: 0,
            spurious_losses: 0,
            probe_timeouts: 0,
            persistent_congestions: 0,
            rtt_hist: DelayHistogram::new(),
            rtt_sum_ns: 0,
            rtt_count: 0,
            bin_rtt_sum_ns: 0,
            bin_rtt_count: 0,
        }
    }

    /// Delays every packet this sender releases by the host's send-time noise.
    pub fn set_send_jitter(&mut self, jitter: SendJitter) {
        self.jitter = Some(jitter);
    }

    /// Starts a new transfer on a fresh connection state (controller, RTT estimator).
    pub fn start_transfer(&mut self, t: Transfer, cc: Option<Box<dyn CongestionControl>>) {
        if let Some(cc) = cc {
            self.cc = cc;
            self.rtt = RttEstimator::new();
            self.rate_est = DeliveryRateEstimator::new();
            self.reordering = Reordering::new();
            self.first_rtt_sample = None;
        }
        self.next_seg = self.next_seg.max(t.first);
        self.transfer = Some(t);
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

    /// The pacing rate in force: the controller's, else cwnd/srtt scaled as Linux does.
    pub fn pacing_rate(&self) -> Option<Rate> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        if !self.pacing_fallback || !self.rtt.has_sample() {
            return None;
        }
        let ratio = if self.cc.in_slow_start() {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        Some(Rate::from_bytes_over(self.cc.cwnd(), self.rtt.smoothed()).mul_f64(ratio))
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
        (!self.stopped && self.next_seg < t.end).then_some((self.next_seg, false))
    }

    /// Decides whether a packet can leave now; on `Send`, the packet is recorded as sent. With
    /// send-time noise, packets are released to the host's queue on the sender's schedule and
    /// `Send` returns them as they come due.
    pub fn poll_send(&mut self, now: Time) -> Poll {
        if self.jitter.is_none() {
            return self.release(now);
        }
        let sender = loop {
            match self.release(now) {
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
    fn release(&mut self, now: Time) -> Poll {
        let (seg, retransmission) = match self.next_segment() {
            Some(next) => next,
            // The controller probes: padding fills what the application leaves.
            None if self.cc.wants_padding() => (NO_SEGMENT, false),
            None => {
                if !self.app_limited {
                    self.app_limited = true;
                    self.rate_est.on_app_limited(self.in_flight);
                }
                return Poll::Idle;
            }
        };
        let wire = if seg == NO_SEGMENT {
            self.mss
        } else {
            self.payload_of(seg)
        } + self.header;
        if self.probes == 0 && self.in_flight + wire > self.cc.cwnd().min(self.rwnd) {
            return Poll::Blocked;
        }
        if now < self.next_send {
            return Poll::Wait(self.next_send);
        }
        if retransmission {
            self.retx.pop_front();
            self.retransmits += 1;
        } else if seg != NO_SEGMENT {
            self.next_seg += 1;
        }
        self.app_limited = false;
        self.probes = self.probes.saturating_sub(1);
        let pn = self.next_pn;
        self.next_pn += 1;
        let delivery = self.rate_est.on_sent(now, self.in_flight);
        self.sent.push_back(SentMeta {
            seg,
            bytes: wire as u32,
            state: State::InFlight,
            delivery,
        });
        self.in_flight += wire;
        self.packets_sent += 1;
        self.bytes_sent += wire;
        self.last_ack_eliciting = now;
        if let Some(rate) = self.pacing_rate() {
            self.next_send = self.next_send.max(now) + rate.time_to_send(wire);
        }
        self.cc.on_sent(
            now,
            &SentPacket {
                pn,
                bytes: wire,
                in_flight: self.in_flight,
                is_retransmission: retransmission,
                app_limited: delivery.is_app_limited,
            },
        );
        Poll::Send { pn, seg, wire }
    }

    fn meta(&mut self, pn: u64) -> Option<&mut SentMeta> {
        let idx = pn.checked_sub(self.base_pn)? as usize;
        self.sent.get_mut(idx)
    }

    /// Processes an ACK covering the receiver's arrival runs up to `range_idx`, the last cut at
    /// `largest` (`PnRanges`). Arrivals in `log` (receiver timestamps) go to the controller when
    /// it asks for feedback.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: Time,
        runs: &[(u64, u64)],
        range_idx: usize,
        largest: u64,
        ack_delay: Duration,
        log: &[Arrival],
    ) {
        let prior_in_flight = self.in_flight;
        let mut acked_bytes = 0;
        let mut acked_packets = 0u32;
        let mut min_rtt_sample: Option<Duration> = None;
        let mut max_rtt_sample: Option<Duration> = None;
        let mut largest_newly: Option<(u64, Time)> = None;
        let detail = self.cc.wants_packet_detail();
        let start_range = self.ack_range;
        let Some(last_end) = PnRanges::covered_end(runs, range_idx, largest) else {
            return;
        };
        if range_idx < start_range || (range_idx == start_range && last_end < self.ack_next_pn) {
            return; // nothing beyond what earlier ACKs covered
        }
        for (idx, &(s, e)) in runs
            .iter()
            .enumerate()
            .take(range_idx + 1)
            .skip(start_range)
        {
            let e = if idx == range_idx { last_end } else { e };
            let s = if idx == start_range {
                s.max(self.ack_next_pn)
            } else {
                s
            };
            if s > e {
                continue;
            }
            for pn in s..=e {
                let Some(m) = self.meta(pn) else {
                    self.acked_after_loss(pn);
                    continue;
                };
                if m.state != State::InFlight {
                    if m.state == State::Lost {
                        self.acked_after_loss(pn);
                    }
                    continue;
                }
                m.state = State::Acked;
                let (bytes, seg, d) = (m.bytes as u64, m.seg, m.delivery);
                self.in_flight -= bytes;
                self.rate_est.on_packet_acked(now, &d, bytes);
                acked_bytes += bytes;
                acked_packets += 1;
                let sample = now - d.sent_time;
                min_rtt_sample = Some(min_rtt_sample.map_or(sample, |m| m.min(sample)));
                max_rtt_sample = Some(max_rtt_sample.map_or(sample, |m| m.max(sample)));
                if detail {
                    let o = PacketOutcome {
                        pn,
                        bytes,
                        sent_time: d.sent_time,
                        rtt: Some(sample),
                    };
                    self.cc.on_packet_acked(now, &o);
                }
                if seg != NO_SEGMENT {
                    self.acked_segs.insert(seg);
                }
                if pn == largest {
                    largest_newly = Some((pn, d.sent_time));
                }
            }
        }
        self.ack_range = range_idx;
        self.ack_next_pn = last_end + 1;
        if acked_packets == 0 {
            return;
        }
        self.largest_acked = Some(self.largest_acked.map_or(largest, |l| l.max(largest)));
        let mut largest_sent_time = Time::ZERO;
        if let Some((_, sent)) = largest_newly {
            let sample = now - sent;
            self.rtt
                .update(now, sample, ack_delay.min(self.max_ack_delay));
            self.first_rtt_sample.get_or_insert(now);
            let us = (sample.0 / 1000).max(1);
            self.rtt_hist.record(us);
            self.rtt_sum_ns += sample.0 as u128;
            self.rtt_count += 1;
            self.bin_rtt_sum_ns += sample.0 as u128;
            self.bin_rtt_count += 1;
            largest_sent_time = sent;
        }
        let rate_sample = self.rate_est.finish_ack(self.rtt.min());
        if !log.is_empty() && self.cc.wants_feedback() {
            self.cc.on_feedback(now, &Feedback { arrivals: log });
        }
        let mut ev = AckEvent {
            acked_bytes,
            acked_packets,
            largest_acked: largest,
            largest_acked_sent_time: largest_sent_time,
            min_rtt_sample,
            max_rtt_sample,
            rtt: self.rtt.snapshot(),
            prior_in_flight,
            in_flight: self.in_flight,
            delivered: self.rate_est.delivered(),
            rate_sample,
            app_limited: self.app_limited,
            mss: self.mss + self.header,
        };
        // RFC 9002 Appendix A.7: losses are detected and reported before the ACKed packets, so a
        // loss from before the recovery start is judged while that recovery is still in force.
        self.detect_lost(now);
        ev.in_flight = self.in_flight;
        self.cc.on_ack(now, &ev);
        self.pto_count = 0;
        self.retire();
    }

    /// Packet `pn`, declared lost, is acknowledged: a spurious loss. Its segment counts as
    /// delivered, so a retransmission still queued is dropped (`next_segment`); its bytes
    /// already left `in_flight` and it is not a delivery-rate sample; the controller is not told
    /// (no undo).
    #[cold]
    #[inline(never)]
    fn acked_after_loss(&mut self, pn: u64) {
        let Ok(i) = self.lost.binary_search_by_key(&pn, |r| r.pn) else {
            return; // forgotten (older than `LOST_RECORD_PTOS`)
        };
        let Some(r) = self.lost.remove(i) else { return };
        self.spurious_losses += 1;
        if let Some(m) = self.meta(pn) {
            m.state = State::Acked; // not lost after all (persistent congestion looks at this)
        }
        if r.seg != NO_SEGMENT {
            self.acked_segs.insert(r.seg);
        }
        // A loss is declared only below the largest acknowledged packet, so a spurious one
        // always means reordering: on the data path, or of ACKs beyond the time threshold.
        let done = self.largest_acked.unwrap_or(0);
        self.reordering.on_reordered(done, self.next_pn);
    }

    /// RFC 9002 §6.1: declares packets lost by packet or time threshold (RACK's time rule once
    /// reordering was seen, `reordering`) and tells the controller.
    pub fn detect_lost(&mut self, now: Time) {
        self.loss_time = None;
        let Some(largest) = self.largest_acked else {
            return;
        };
        self.forget_lost(now);
        let loss_delay = self.reordering.loss_delay(&self.rtt);
        let packet_threshold = self.reordering.packet_threshold();
        // Nothing is old enough before `loss_delay` has passed (`Time` subtraction saturates at
        // 0, which would make every packet sent at 0 lost).
        let lost_before = (now.0 >= loss_delay.0).then(|| now - loss_delay);
        let mut ev = LossEvent {
            mss: self.mss + self.header,
            ..LossEvent::default()
        };
        // Persistent congestion (RFC 9002 §7.6): a run of lost packets with no ACKed packet in
        // between, spanning more than the threshold duration.
        let pc_duration =
            (self.rtt.smoothed() + (self.rtt.var() * 4).max(GRANULARITY) + self.max_ack_delay)
                * PERSISTENT_CONGESTION_THRESHOLD;
        let detail = self.cc.wants_packet_detail();
        let mut run_start: Option<Time> = None;
        let mut persistent = false;
        let end = largest
            .saturating_sub(self.base_pn)
            .min(self.sent.len() as u64) as usize;
        for i in 0..end {
            let pn = self.base_pn + i as u64;
            let m = self.sent[i];
            match m.state {
                State::Acked => run_start = None,
                State::Lost => {}
                State::InFlight => {
                    let sent = m.delivery.sent_time;
                    if packet_threshold.is_some_and(|k| largest - pn >= k)
                        || lost_before.is_some_and(|b| sent <= b)
                    {
                        self.sent[i].state = State::Lost;
                        self.in_flight -= m.bytes as u64;
                        self.lost_packets += 1;
                        self.lost.push_back(LostRecord {
                            pn,
                            seg: m.seg,
                            expires: now + self.rtt.pto(self.max_ack_delay) * LOST_RECORD_PTOS,
                        });
                        if self.retransmit
                            && m.seg != NO_SEGMENT
                            && !self.acked_segs.contains(m.seg)
                        {
                            self.retx.push_back(m.seg);
                        }
                        if detail {
                            let o = PacketOutcome {
                                pn,
                                bytes: m.bytes as u64,
                                sent_time: sent,
                                rtt: None,
                            };
                            self.cc.on_packet_lost(now, &o);
                        }
                        ev.lost_bytes += m.bytes as u64;
                        ev.lost_packets += 1;
                        ev.largest_lost_pn = pn;
                        ev.largest_lost_sent_time = sent;
                        let start = *run_start.get_or_insert(sent);
                        if self.first_rtt_sample.is_some_and(|f| f < start)
                            && sent - start > pc_duration
                        {
                            persistent = true;
                        }
                    } else {
                        let t = sent + loss_delay;
                        self.loss_time = Some(self.loss_time.map_or(t, |l| l.min(t)));
                        run_start = None;
                    }
                }
            }
        }
        if ev.lost_packets > 0 {
            self.reordering
                .on_loss_event(ev.largest_lost_pn, self.next_pn);
            ev.persistent_congestion = persistent;
            ev.in_flight = self.in_flight;
            if persistent {
                self.persistent_congestions += 1;
                self.rtt.reset_min();
            }
            self.cc.on_loss(now, &ev);
        }
    }

    /// Drops expired lost-packet records (they expire in declaration order, the PTO aside).
    fn forget_lost(&mut self, now: Time) {
        while self.lost.front().is_some_and(|r| r.expires < now) {
            self.lost.pop_front();
        }
    }

    fn retire(&mut self) {
        while self
            .sent
            .front()
            .is_some_and(|m| m.state != State::InFlight)
        {
            self.sent.pop_front();
            self.base_pn += 1;
        }
    }

    /// When the loss-detection timer should fire next (RFC 9002 §6.2.1), if at all.
    pub fn loss_deadline(&self) -> Option<Time> {
        if let Some(t) = self.loss_time {
            return Some(t);
        }
        if self.in_flight == 0 {
            return None;
        }
        let pto = self.rtt.pto(self.max_ack_delay) * (1u64 << self.pto_count.min(16));
        Some(self.last_ack_eliciting + pto)
    }

    /// The loss-detection timer fired: time-threshold losses, or a probe timeout.
    pub fn on_loss_timer(&mut self, now: Time) {
        if self.loss_time.is_some_and(|t| t <= now) {
            self.detect_lost(now);
            self.retire();
            return;
        }
        // PTO: send probes that bypass the window. Prefer new data; otherwise resend the oldest
        // unacknowledged segment.
        self.pto_count += 1;
        self.probe_timeouts += 1;
        self.probes = PTO_PROBES;
        if self.retransmit && self.next_segment().is_none() {
            if let Some(m) = self
                .sent
                .iter()
                .find(|m| m.state == State::InFlight && m.seg != NO_SEGMENT)
            {
                self.retx.push_back(m.seg);
            }
        }
    }

    pub fn take_bin_rtt(&mut self) -> Option<f64> {
        let r = (self.bin_rtt_count > 0)
            .then(|| self.bin_rtt_sum_ns as f64 / self.bin_rtt_count as f64 / 1e6);
        self.bin_rtt_sum_ns = 0;
        self.bin_rtt_count = 0;
        r
    }

    pub fn cwnd(&self) -> Bytes {
        self.cc.cwnd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::{CcContext, CcSpec, Registry};

    const WIRE: u64 = 1500;

    fn sender() -> Sender {
        let cc = Registry::standard()
            .build(&CcSpec::named("newreno"), &CcContext::new(WIRE))
            .expect("newreno is registered");
        let mut s = Sender::new(cc, WIRE - 52, 52, Duration::from_millis(25), false, None);
        let t = Transfer {
            first: 0,
            end: u64::MAX,
            last_payload: WIRE - 52,
        };
        s.start_transfer(t, None);
        s
    }

    fn send(s: &mut Sender, now: Time, n: usize) -> Vec<(u64, u64)> {
        (0..n)
            .map(|_| match s.poll_send(now) {
                Poll::Send { pn, seg, .. } => (pn, seg),
                _ => panic!("the initial window holds {n} packets"),
            })
            .collect()
    }

    #[test]
    fn an_ack_covers_its_snapshot_and_a_late_packet_is_a_spurious_loss() {
        let mut s = sender();
        // Not at 0: `now - loss_delay` saturates there, and every packet sent at 0 is late.
        let t0 = Time::ZERO + Duration::from_millis(1000);
        assert_eq!(
            send(&mut s, t0, 8),
            (0..8).map(|p| (p, p)).collect::<Vec<_>>()
        );
        let mut rx = PnRanges::new();
        for p in [0, 1, 2, 5, 6] {
            rx.insert(p);
        }
        let (idx, largest) = (rx.runs().len() - 1, 6);
        // Before ACK A reaches the sender, 7 extends the top run and the late 3 and 4 merge
        // the ranges into one: A must still cover 0-2 and 5-6 only.
        for p in [7, 3, 4] {
            rx.insert(p);
        }
        assert_eq!(rx.ranges(), &[(0, 7)]);
        let t1 = t0 + Duration::from_millis(40);
        s.on_ack(t1, rx.runs(), idx, largest, Duration::ZERO, &[]);
        // 3 is 3 below the largest acknowledged: declared lost; 4 and 7 stay in flight.
        assert_eq!((s.lost_packets, s.in_flight), (1, 2 * WIRE));
        assert!(s.has_retx());
        // ACK B covers 7 and the late 3 and 4.
        let idx = rx.runs().len() - 1;
        s.on_ack(t1, rx.runs(), idx, 7, Duration::ZERO, &[]);
        assert_eq!((s.spurious_losses, s.lost_packets, s.in_flight), (1, 1, 0));
        // Reordering seen: losses by time only from now on.
        assert_eq!(s.reordering.packet_threshold(), None);
        // Its segment counts as delivered: the queued retransmission is dropped.
        assert!(s.acked_segs.contains(3));
        assert_eq!(send(&mut s, t1, 1), vec![(8, 8)]);
        assert_eq!(s.retransmits, 0);
        // A stale copy of ACK A changes nothing.
        s.on_ack(t1, rx.runs(), 1, 6, Duration::ZERO, &[]);
        assert_eq!((s.spurious_losses, s.in_flight), (1, WIRE));
    }

    /// Keeps the RTT samples of every ACK it is given.
    type Seen = std::sync::Arc<std::sync::Mutex<Vec<(Option<Duration>, Option<Duration>)>>>;
    struct Samples(Seen);

    impl CongestionControl for Samples {
        fn name(&self) -> &str {
            "samples"
        }
        fn on_ack(&mut self, _: Time, a: &AckEvent) {
            let mut seen = self.0.lock().expect("not poisoned");
            seen.push((a.min_rtt_sample, a.max_rtt_sample));
        }
        fn on_loss(&mut self, _: Time, _: &LossEvent) {}
        fn calibrate(&mut self, _: Time, _: &polycc::cc::Calibration) {}
        fn cwnd(&self) -> Bytes {
            10 * WIRE
        }
    }

    #[test]
    fn an_ack_reports_the_rtts_of_its_latest_and_earliest_sent_packets() {
        let seen = Seen::default();
        let mut s = Sender::new(
            Box::new(Samples(Seen::clone(&seen))),
            WIRE - 52,
            52,
            Duration::from_millis(25),
            false,
            None,
        );
        let t = Transfer {
            first: 0,
            end: u64::MAX,
            last_payload: WIRE - 52,
        };
        s.start_transfer(t, None);
        // Four packets 1 ms apart, then one (stretch) ACK for them all at 50 ms: the latest sent
        // gives the smallest RTT (47 ms), the earliest the largest (50 ms, Linux's `seq_rtt_us`).
        let t0 = Time::ZERO + Duration::from_millis(1000);
        for i in 0..4 {
            send(&mut s, t0 + Duration::from_millis(i), 1);
        }
        let mut rx = PnRanges::new();
        for p in 0..4 {
            rx.insert(p);
        }
        s.on_ack(
            t0 + Duration::from_millis(50),
            rx.runs(),
            0,
            3,
            Duration::ZERO,
            &[],
        );
        let ms = |x: u64| Some(Duration::from_millis(x));
        assert_eq!(*seen.lock().unwrap(), vec![(ms(47), ms(50))]);
        // An ACK for one packet: both are its RTT.
        send(&mut s, t0 + Duration::from_millis(60), 1);
        rx.insert(4);
        s.on_ack(
            t0 + Duration::from_millis(90),
            rx.runs(),
            0,
            4,
            Duration::ZERO,
            &[],
        );
        assert_eq!(seen.lock().unwrap()[1], (ms(30), ms(30)));
    }
}
