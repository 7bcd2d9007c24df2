//! Loss detection (RFC 9002 §6.1, with RACK's time rule once reordering was seen), persistent
//! congestion (§7.6) and the loss-detection timer with its probe timeout (§6.2); or, with
//! [`Timeouts::Tcp`], Linux TCP's tail-loss probe and retransmission timeout.

use crate::ack::PacketEvent;
use crate::ledger::{LostRecord, State};
use crate::loss_rules::{Timeouts, TCP_RTO_MAX, TCP_TIMEOUT_MIN};
use crate::sender::Sender;
use polycc::estimators::rtt::GRANULARITY;
use polycc::signals::{LossEvent, PacketOutcome};
use polycc::units::{Duration, Time};

/// RFC 9002 §7.6.1 kPersistentCongestionThreshold.
pub const PERSISTENT_CONGESTION_THRESHOLD: u64 = 3;
/// RFC 9002 §6.2.4: probe packets allowed beyond the window when the PTO fires.
pub const PTO_PROBES: u32 = 2;
/// Lost packets are remembered for this many PTOs after being declared lost (ours): a PTO bounds
/// the RTT with its variation, so an ACK of a packet still in the network arrives well within.
pub const LOST_RECORD_PTOS: u64 = 3;
/// The PTO backs off by at most 2^16 (ours: a bound so that the shift cannot overflow).
const MAX_PTO_BACKOFF_SHIFT: u32 = 16;
/// Linux `tcp_send_loss_probe`: one probe per tail.
const TLP_PROBES: u32 = 1;

/// What one loss-detection pass found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossOutcome {
    /// Packets declared lost.
    pub lost_packets: u32,
    /// They amount to persistent congestion (the controller was told in its [`LossEvent`]).
    pub persistent_congestion: bool,
}

/// What [`Sender::on_loss_timeout`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timeout {
    /// Packets became lost by the time threshold.
    Losses(LossOutcome),
    /// A probe timeout: the sender may send this many packets beyond the window; send new data
    /// if there is some, else resend the oldest packet in flight
    /// ([`Sender::in_flight_payloads`]).
    Probe {
        /// Probe packets allowed.
        probes: u32,
    },
}

impl<P: Copy> Sender<P> {
    /// RFC 9002 §6.1: declares packets lost by packet or time threshold and tells the sink, then
    /// the controller ([`polycc::CongestionControl::on_packet_lost`] per packet when it asks for
    /// detail, one [`polycc::CongestionControl::on_loss`] for the pass).
    pub(crate) fn detect_lost(
        &mut self,
        now: Time,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) -> LossOutcome {
        self.loss_time = None;
        let Some(largest) = self.largest_acked else {
            return LossOutcome::default();
        };
        self.ledger.forget_lost(now);
        let loss_delay = self.reordering.loss_delay(&self.rtt);
        let packet_threshold = self.reordering.packet_threshold();
        // Nothing is old enough before `loss_delay` has passed (`Time` subtraction saturates at
        // 0, which would make every packet sent at 0 lost).
        let lost_before = (now.0 >= loss_delay.0).then(|| now - loss_delay);
        let mut ev = LossEvent {
            mss: self.config.max_datagram,
            ..LossEvent::default()
        };
        // Persistent congestion (RFC 9002 §7.6): a run of lost packets with no ACKed packet in
        // between, spanning more than the threshold duration, all sent after the first RTT
        // sample.
        let pc_duration = (self.rtt.smoothed()
            + (self.rtt.var() * 4).max(GRANULARITY)
            + self.config.max_ack_delay)
            * PERSISTENT_CONGESTION_THRESHOLD;
        let mut run_start: Option<Time> = None;
        let mut persistent = false;
        // Linux TCP has no persistent-congestion rule: its RTO collapses the window instead.
        let pc_rule = self.rules.timeouts == Timeouts::Pto;
        let base = self.ledger.base();
        let end = largest.saturating_sub(base).min(self.ledger.len() as u64) as usize;
        for i in 0..end {
            let pn = base + i as u64;
            let m = self.ledger.at(i);
            match m.state() {
                State::Acked => run_start = None,
                State::Lost | State::Untracked | State::Skipped => {}
                State::InFlight => {
                    let sent = m.sent_time;
                    if !(packet_threshold.is_some_and(|k| largest - pn >= k)
                        || lost_before.is_some_and(|b| sent <= b))
                    {
                        let t = sent + loss_delay;
                        self.loss_time = Some(self.loss_time.map_or(t, |l| l.min(t)));
                        run_start = None;
                        continue;
                    }
                    self.declare_lost(now, i, &mut ev, sink);
                    let start = *run_start.get_or_insert(sent);
                    if pc_rule
                        && self.first_rtt_sample.is_some_and(|f| f < start)
                        && sent - start > pc_duration
                    {
                        persistent = true;
                    }
                }
            }
        }
        self.finish_loss_pass(now, ev, persistent)
    }

    /// Declares the in-flight packet at ledger offset `i` lost: the sink, the controller's
    /// per-packet detail and the pass's [`LossEvent`] hear of it.
    fn declare_lost(
        &mut self,
        now: Time,
        i: usize,
        ev: &mut LossEvent,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) {
        let pn = self.ledger.base() + i as u64;
        let m = self.ledger.at(i);
        let sent = m.sent_time;
        let expires = now + self.rtt.pto(self.config.max_ack_delay) * LOST_RECORD_PTOS;
        self.ledger.set_state(i, State::Lost);
        self.in_flight -= m.bytes() as u64;
        self.ledger.remember_lost(LostRecord {
            pn,
            payload: m.payload,
            expires,
        });
        sink(PacketEvent::Lost {
            pn,
            payload: m.payload,
        });
        if self.cc.wants_packet_detail() {
            let o = PacketOutcome {
                pn,
                bytes: m.bytes() as u64,
                sent_time: sent,
                rtt: None,
            };
            self.cc.on_packet_lost(now, &o);
        }
        ev.lost_bytes += m.bytes() as u64;
        ev.lost_packets += 1;
        ev.largest_lost_pn = pn;
        ev.largest_lost_sent_time = sent;
    }

    /// Ends a loss-detection pass: the reordering state and the controller hear of its losses
    /// (one [`LossEvent`]), if there were any.
    fn finish_loss_pass(&mut self, now: Time, mut ev: LossEvent, persistent: bool) -> LossOutcome {
        if ev.lost_packets == 0 {
            return LossOutcome::default();
        }
        self.reordering
            .on_loss_event(ev.largest_lost_pn, self.ledger.end());
        ev.persistent_congestion = persistent;
        ev.in_flight = self.in_flight;
        // RFC 9002 §5.2 lets min_rtt be re-established; Linux's RTO keeps its min RTT filter.
        if persistent && self.rules.timeouts == Timeouts::Pto {
            self.rtt.reset_min();
        }
        self.cc.on_loss(now, &ev);
        LossOutcome {
            lost_packets: ev.lost_packets,
            persistent_congestion: persistent,
        }
    }

    /// Linux's retransmission timeout (`tcp_enter_loss`): every packet in flight is declared
    /// lost, as persistent congestion, so that the window collapses and slow start resends.
    fn retransmission_timeout(
        &mut self,
        now: Time,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) -> LossOutcome {
        self.loss_time = None;
        self.ledger.forget_lost(now);
        let mut ev = LossEvent {
            mss: self.config.max_datagram,
            ..LossEvent::default()
        };
        for i in 0..self.ledger.len() {
            if self.ledger.at(i).state() == State::InFlight {
                self.declare_lost(now, i, &mut ev, sink);
            }
        }
        self.finish_loss_pass(now, ev, true)
    }

    /// Linux `tcp_set_rto`: srtt + max(4·rttvar, `min_rto`), backed off `backoff` times, at most
    /// [`TCP_RTO_MAX`].
    pub(crate) fn tcp_rto(&self, min_rto: Duration, backoff: u32) -> Duration {
        let rto = self.rtt.smoothed() + (self.rtt.var() * 4).max(min_rto);
        let shift = backoff.min(MAX_PTO_BACKOFF_SHIFT);
        (rto * (1u64 << shift)).min(TCP_RTO_MAX)
    }

    /// The TCP timer's deadline: the tail-loss probe (`tcp_schedule_loss_probe`: 2·srtt plus
    /// 2 ms, or plus `min_rto` for a lone packet, from the last send or ACK, never after the
    /// RTO), or once it was sent, the RTO counted from the probe or a later ACK of data.
    fn tcp_deadline(&self, min_rto: Duration) -> Time {
        if self.pto_count == 0 {
            let lone = self.in_flight <= self.config.max_datagram;
            let extra = if lone { min_rto } else { TCP_TIMEOUT_MIN };
            let tlp = self.rtt.smoothed() * 2 + extra;
            let tlp_at = self.last_ack_eliciting.max(self.rto_base) + tlp;
            return tlp_at.min(self.rto_base + self.tcp_rto(min_rto, 0));
        }
        self.rto_base + self.tcp_rto(min_rto, self.pto_count - 1)
    }

    /// When the loss-detection timer should fire next (RFC 9002 §6.2.1), if at all: the time
    /// threshold of the earliest packet not yet lost, else the PTO after the last ack-eliciting
    /// packet while some are in flight.
    pub fn loss_deadline(&self) -> Option<Time> {
        if let Some(t) = self.loss_time {
            return Some(t);
        }
        if self.in_flight == 0 {
            return None;
        }
        if let Timeouts::Tcp { min_rto } = self.rules.timeouts {
            return Some(self.tcp_deadline(min_rto));
        }
        let backoff = 1u64 << self.pto_count.min(MAX_PTO_BACKOFF_SHIFT);
        let pto = self.rtt.pto(self.config.max_ack_delay) * backoff;
        Some(self.last_ack_eliciting + pto)
    }

    /// The loss-detection timer fired (at or after [`Self::loss_deadline`]): packets lost by
    /// time, or a probe timeout.
    pub fn on_loss_timeout(&mut self, now: Time, sink: &mut impl FnMut(PacketEvent<P>)) -> Timeout {
        if self.loss_time.is_some_and(|t| t <= now) {
            let lost = self.detect_lost(now, sink);
            self.ledger.retire();
            return Timeout::Losses(lost);
        }
        if let Timeouts::Tcp { .. } = self.rules.timeouts {
            let first = self.pto_count == 0;
            self.pto_count += 1;
            if first {
                // `tcp_send_loss_probe` re-arms the RTO from the probe ("restart timer from
                // now"), not from the last ACK.
                self.rto_base = now;
                self.probes = TLP_PROBES;
                return Timeout::Probe { probes: TLP_PROBES };
            }
            self.rto_base = now;
            let lost = self.retransmission_timeout(now, sink);
            self.ledger.retire();
            return Timeout::Losses(lost);
        }
        self.pto_count += 1;
        self.probes = PTO_PROBES;
        Timeout::Probe { probes: PTO_PROBES }
    }

    /// The earliest of the loss-detection timer and the controller's own timer
    /// ([`polycc::CongestionControl::next_timer`]): for transports with one timer per
    /// connection. Call [`Self::on_timeout`] when it passes.
    pub fn next_timeout(&self) -> Option<Time> {
        match (self.loss_deadline(), self.cc.next_timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs what is due at `now`: the loss-detection timer ([`Self::on_loss_timeout`]), then the
    /// controller's timer. Returns the loss timer's outcome when it was due.
    pub fn on_timeout(
        &mut self,
        now: Time,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) -> Option<Timeout> {
        let loss = self
            .loss_deadline()
            .is_some_and(|t| t <= now)
            .then(|| self.on_loss_timeout(now, sink));
        if self.cc.next_timer().is_some_and(|t| t <= now) {
            self.cc.on_timer(now);
        }
        loss
    }
}
