//! Event builders and a small ACK-clocked flow for the CCA unit tests.
//!
//! The flow has no bottleneck: every packet is acknowledged exactly `rtt` after it was sent (the
//! `rtt` in force when it was sent), one ACK per packet, and the sender refills the window after
//! every ACK. Tests change `rtt` between rounds to model a growing or draining queue.

use crate::cc::{Calibration, CcContext, ClampChange, CongestionControl};
use crate::estimators::rtt::{RttEstimator, RttSnapshot};
use crate::registry::{CcError, CcSpec, Registry};
use crate::signals::{AckEvent, Arrival, Feedback, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Time};
use std::collections::BTreeMap;

/// An ACK for the single packet `pn` of `bytes`, sent at `sent_time`, with RTT sample `sample`.
pub(crate) fn ack(
    pn: u64,
    sent_time: Time,
    bytes: Bytes,
    mss: Bytes,
    sample: Duration,
    rtt: RttSnapshot,
) -> AckEvent {
    AckEvent {
        acked_bytes: bytes,
        acked_packets: 1,
        largest_acked: pn,
        largest_acked_sent_time: sent_time,
        min_rtt_sample: Some(sample),
        max_rtt_sample: Some(sample),
        rtt,
        mss,
        ..AckEvent::default()
    }
}

/// The loss of the single packet `pn` of `bytes`, sent at `sent_time`.
pub(crate) fn loss(pn: u64, sent_time: Time, bytes: Bytes, mss: Bytes) -> LossEvent {
    LossEvent {
        lost_bytes: bytes,
        lost_packets: 1,
        largest_lost_pn: pn,
        largest_lost_sent_time: sent_time,
        persistent_congestion: false,
        in_flight: 0,
        mss,
    }
}

/// Like [`loss`], declared as RFC 9002 §7.6 persistent congestion.
pub(crate) fn persistent_congestion(pn: u64, sent_time: Time, mss: Bytes) -> LossEvent {
    LossEvent {
        persistent_congestion: true,
        ..loss(pn, sent_time, mss, mss)
    }
}

/// Writes window and threshold `cwnd`, as a policy would: the controller starts congestion
/// avoidance there.
pub(crate) fn start_in_ca(cc: &mut dyn CongestionControl, now: Time, cwnd: Bytes) {
    cc.calibrate(
        now,
        &Calibration {
            cwnd: Some(cwnd),
            ssthresh: Some(cwnd),
            ..Calibration::default()
        },
    );
}

/// Bounds the window at `clamp` bytes (`None` lifts the bound).
pub(crate) fn clamp_window(cc: &mut dyn CongestionControl, now: Time, clamp: Option<Bytes>) {
    cc.calibrate(
        now,
        &Calibration {
            cwnd_clamp: Some(ClampChange::to_bound(clamp)),
            ..Calibration::default()
        },
    );
}

/// The registry builds the scenario spec `good` and rejects each of `bad` as bad parameters.
pub(crate) fn assert_params(good: serde_json::Value, bad: &[serde_json::Value]) {
    let reg = Registry::standard();
    let ctx = CcContext::new(1000);
    let spec =
        |v: &serde_json::Value| -> CcSpec { serde_json::from_value(v.clone()).expect("spec") };
    if let Err(e) = reg.build(&spec(&good), &ctx) {
        panic!("{good}: {e}");
    }
    for b in bad {
        assert!(
            matches!(reg.build(&spec(b), &ctx), Err(CcError::BadParams { .. })),
            "{b}"
        );
    }
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    pn: u64,
    sent: Time,
}

/// A sender with a fixed path delay that keeps the window full.
pub(crate) struct Flow {
    pub now: Time,
    /// Round-trip time of packets sent from now on.
    pub rtt: Duration,
    pub mss: Bytes,
    next_pn: u64,
    /// Packets in flight by (ACK arrival time, pn).
    in_flight: BTreeMap<(Time, u64), InFlight>,
    in_flight_bytes: Bytes,
    delivered: Bytes,
    rtt_est: RttEstimator,
    /// When set, each ACK is preceded by receiver feedback for the acked packet (to controllers
    /// that want it), stamped on a receiver clock this many nanoseconds ahead of the sender's.
    /// The return path takes half the smallest RTT seen, so RTT above that minimum counts as
    /// forward (queueing) delay.
    pub feedback_clock_offset: Option<u64>,
}

impl Flow {
    pub(crate) fn new(mss: Bytes, rtt: Duration) -> Self {
        Flow {
            now: Time::ZERO,
            rtt,
            mss,
            next_pn: 0,
            in_flight: BTreeMap::new(),
            in_flight_bytes: 0,
            delivered: 0,
            rtt_est: RttEstimator::new(),
            feedback_clock_offset: None,
        }
    }

    /// Sends full-sized packets while the window has room for one.
    pub(crate) fn fill(&mut self, cc: &mut dyn CongestionControl) {
        while self.in_flight_bytes + self.mss <= cc.cwnd() {
            let pn = self.next_pn;
            self.next_pn += 1;
            self.in_flight_bytes += self.mss;
            self.in_flight
                .insert((self.now + self.rtt, pn), InFlight { pn, sent: self.now });
            cc.on_sent(
                self.now,
                &SentPacket {
                    pn,
                    bytes: self.mss,
                    in_flight: self.in_flight_bytes,
                    ..SentPacket::default()
                },
            );
        }
    }

    /// Delivers the next ACK and refills the window; false when nothing is in flight.
    pub(crate) fn ack_next(&mut self, cc: &mut dyn CongestionControl) -> bool {
        let Some(((at, _), p)) = self.in_flight.pop_first() else {
            return false;
        };
        self.now = self.now.max(at);
        let sample = self.now - p.sent;
        self.rtt_est.update(self.now, sample, Duration::ZERO);
        let prior_in_flight = self.in_flight_bytes;
        self.in_flight_bytes -= self.mss;
        self.delivered += self.mss;
        let mut ev = ack(
            p.pn,
            p.sent,
            self.mss,
            self.mss,
            sample,
            self.rtt_est.snapshot(),
        );
        ev.prior_in_flight = prior_in_flight;
        ev.in_flight = self.in_flight_bytes;
        ev.delivered = self.delivered;
        if let Some(offset) = self.feedback_clock_offset.filter(|_| cc.wants_feedback()) {
            let arrival = Arrival {
                pn: p.pn,
                bytes: self.mss,
                sent_time: p.sent,
                arrival_time: Time(
                    (p.sent + (sample - Duration(self.rtt_est.min().0 / 2)))
                        .0
                        .wrapping_add(offset),
                ),
            };
            cc.on_feedback(
                self.now,
                &Feedback {
                    arrivals: &[arrival],
                },
            );
        }
        cc.on_ack(self.now, &ev);
        self.fill(cc);
        true
    }

    /// Runs the flow until `t` (ACKs due at `t` included), then sets the clock to `t`.
    pub(crate) fn run_until(&mut self, cc: &mut dyn CongestionControl, t: Time) {
        self.fill(cc);
        while self
            .in_flight
            .first_key_value()
            .is_some_and(|(k, _)| k.0 <= t)
        {
            self.ack_next(cc);
        }
        self.now = self.now.max(t);
    }

    /// Runs `n` round trips of the current `rtt`.
    pub(crate) fn run_rtts(&mut self, cc: &mut dyn CongestionControl, n: u64) {
        let t = self.now + self.rtt * n;
        self.run_until(cc, t);
    }

    /// Declares the oldest packet in flight lost now. Returns false when nothing is in flight.
    pub(crate) fn lose_oldest(&mut self, cc: &mut dyn CongestionControl) -> bool {
        let Some((_, p)) = self.in_flight.pop_first() else {
            return false;
        };
        self.in_flight_bytes -= self.mss;
        let mut ev = loss(p.pn, p.sent, self.mss, self.mss);
        ev.in_flight = self.in_flight_bytes;
        cc.on_loss(self.now, &ev);
        true
    }

    /// Loses a packet sent now, after any recovery epoch that is running, so that the loss
    /// counts as a new congestion event.
    pub(crate) fn lose_fresh(&mut self, cc: &mut dyn CongestionControl) {
        let pn = self.next_pn;
        self.next_pn += 1;
        cc.on_sent(
            self.now,
            &SentPacket {
                pn,
                bytes: self.mss,
                in_flight: self.in_flight_bytes + self.mss,
                ..SentPacket::default()
            },
        );
        let mut ev = loss(pn, self.now, self.mss, self.mss);
        ev.in_flight = self.in_flight_bytes;
        cc.on_loss(self.now, &ev);
    }

    pub(crate) fn rtt_snapshot(&self) -> RttSnapshot {
        self.rtt_est.snapshot()
    }
}

/// A paced sender behind one FIFO bottleneck, for rate-based controllers (PCC): packets leave at
/// the controller's pacing rate (as fast as the window allows when it gives none), queue at a
/// bottleneck of `capacity`, and are acknowledged `base_rtt` after they leave it, with per-packet
/// outcomes (and receiver timestamps) to controllers that want them. A packet is lost when the queue already holds more
/// than `buffer` of delay, or when it is every `loss_every`-th packet (a deterministic stand-in
/// for random loss); the loss is declared when its ACK would have arrived.
pub(crate) struct PacedPath {
    pub now: Time,
    pub base_rtt: Duration,
    pub capacity: crate::units::Rate,
    pub buffer: Duration,
    /// 0: no random loss.
    pub loss_every: u64,
    pub mss: Bytes,
    /// Send at the controller's pacing rate (true) or, like a host that does not pace, as fast
    /// as the window allows.
    pub paced: bool,
    /// Report per-packet outcomes to controllers that want them (false: only the aggregate
    /// `on_ack` / `on_loss`, as from a transport that gives no detail).
    pub detail: bool,
    /// An application that produces data at this rate (from the time it is set with
    /// [`PacedPath::limit_app`]); `None`: always data to send.
    app: Option<(crate::units::Rate, Time, Bytes)>,
    next_pn: u64,
    next_send: Time,
    queue_free_at: Time,
    /// (due time, pn) → (send time, lost).
    pending: BTreeMap<(Time, u64), (Time, bool)>,
    in_flight_bytes: Bytes,
    delivered: Bytes,
    lost_packets: u64,
    rtt_est: RttEstimator,
}

impl PacedPath {
    pub(crate) fn new(mss: Bytes, capacity: crate::units::Rate, base_rtt: Duration) -> Self {
        PacedPath {
            now: Time::ZERO,
            base_rtt,
            capacity,
            buffer: base_rtt,
            loss_every: 0,
            mss,
            paced: true,
            detail: true,
            app: None,
            next_pn: 0,
            next_send: Time::ZERO,
            queue_free_at: Time::ZERO,
            pending: BTreeMap::new(),
            in_flight_bytes: 0,
            delivered: 0,
            lost_packets: 0,
            rtt_est: RttEstimator::new(),
        }
    }

    /// From now on the application produces `rate` of data (`None`: bulk, always data).
    pub(crate) fn limit_app(&mut self, rate: Option<crate::units::Rate>) {
        self.app = rate.map(|r| (r, self.now, 0));
    }

    /// When the application will have produced the next packet's data.
    fn app_ready(&self) -> Time {
        self.app.map_or(Time::ZERO, |(rate, since, sent)| {
            since + rate.time_to_send(sent + self.mss)
        })
    }

    /// Queueing delay a packet arriving now would see.
    pub(crate) fn queue_delay(&self) -> Duration {
        self.queue_free_at.saturating_since(self.now)
    }

    fn send(&mut self, cc: &mut dyn CongestionControl) {
        let pn = self.next_pn;
        self.next_pn += 1;
        let queued = self.queue_delay();
        let random_loss = self.loss_every > 0 && (pn + 1) % self.loss_every == 0;
        let (due, lost) = if queued > self.buffer || random_loss {
            (self.now + queued + self.base_rtt, true)
        } else {
            let depart = self.now.max(self.queue_free_at) + self.capacity.time_to_send(self.mss);
            self.queue_free_at = depart;
            (depart + self.base_rtt, false)
        };
        self.pending.insert((due, pn), (self.now, lost));
        self.in_flight_bytes += self.mss;
        if let Some((_, _, sent)) = self.app.as_mut() {
            *sent += self.mss;
        }
        cc.on_sent(
            self.now,
            &SentPacket {
                pn,
                bytes: self.mss,
                in_flight: self.in_flight_bytes,
                ..SentPacket::default()
            },
        );
        self.next_send = match cc.pacing_rate() {
            Some(r) if r.as_bps() > 0 && self.paced => self.now + r.time_to_send(self.mss),
            _ => self.now,
        };
    }

    fn resolve(&mut self, cc: &mut dyn CongestionControl, pn: u64, sent: Time, lost: bool) {
        self.in_flight_bytes -= self.mss;
        let outcome = crate::signals::PacketOutcome {
            pn,
            bytes: self.mss,
            sent_time: sent,
            rtt: (!lost).then(|| self.now - sent),
        };
        let detail = self.detail && cc.wants_packet_detail();
        if lost {
            self.lost_packets += 1;
            if detail {
                cc.on_packet_lost(self.now, &outcome);
            }
            let mut ev = loss(pn, sent, self.mss, self.mss);
            ev.in_flight = self.in_flight_bytes;
            cc.on_loss(self.now, &ev);
            return;
        }
        let sample = self.now - sent;
        self.rtt_est.update(self.now, sample, Duration::ZERO);
        self.delivered += self.mss;
        if cc.wants_feedback() {
            // The receiver got it half a base RTT before its ACK arrives.
            let arrival = Arrival {
                pn,
                bytes: self.mss,
                sent_time: sent,
                arrival_time: self.now - Duration(self.base_rtt.0 / 2),
            };
            cc.on_feedback(
                self.now,
                &Feedback {
                    arrivals: std::slice::from_ref(&arrival),
                },
            );
        }
        if detail {
            cc.on_packet_acked(self.now, &outcome);
        }
        let mut ev = ack(
            pn,
            sent,
            self.mss,
            self.mss,
            sample,
            self.rtt_est.snapshot(),
        );
        ev.prior_in_flight = self.in_flight_bytes + self.mss;
        ev.in_flight = self.in_flight_bytes;
        ev.delivered = self.delivered;
        cc.on_ack(self.now, &ev);
    }

    /// Runs sends, ACKs, losses and the controller's timers in time order until `t`.
    pub(crate) fn run_until(&mut self, cc: &mut dyn CongestionControl, t: Time) {
        loop {
            let can_send = self.in_flight_bytes + self.mss <= cc.cwnd();
            let send_at = can_send.then_some(self.next_send.max(self.now).max(self.app_ready()));
            let due = self.pending.first_key_value().map(|(k, _)| k.0);
            let timer = cc.next_timer().map(|x| x.max(self.now));
            let next = [send_at, due, timer].into_iter().flatten().min();
            let Some(next) = next.filter(|n| *n <= t) else {
                break;
            };
            self.now = next;
            if due == Some(next) {
                let ((_, pn), (sent, lost)) = self.pending.pop_first().expect("due");
                self.resolve(cc, pn, sent, lost);
            } else if timer == Some(next) && send_at != Some(next) {
                cc.on_timer(self.now);
            } else {
                self.send(cc);
            }
        }
        self.now = self.now.max(t);
    }
}

impl PacedPath {
    /// Bytes acknowledged so far.
    pub(crate) fn delivered(&self) -> Bytes {
        self.delivered
    }

    /// Packets sent and packets declared lost so far.
    pub(crate) fn packets(&self) -> (u64, u64) {
        (self.next_pn, self.lost_packets)
    }
}
