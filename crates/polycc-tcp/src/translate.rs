//! One socket's controller, fed from the shim's reports: each [`Report`] becomes polycc's
//! events in the order the [`CongestionControl`] contract fixes, and the controller's window
//! and pacing rate become the socket's next [`Decision`].
//!
//! The kernel hands over aggregates per ACK, not packets; the translator keeps a ledger of
//! synthetic packets to give the controller the per-packet facts it asks for. Which facts are
//! exact and which are approximate:
//!
//! - **exact** (the kernel's own values): per ACK the packets newly delivered
//!   (`rate_sample.acked_sacked`), the RTT sample, the smoothed / variation / windowed-minimum
//!   RTT, the delivery-rate sample (`delivered` over `interval_us`, its app-limited mark), bytes
//!   in flight before and after the ACK, packets delivered over the connection's life. The RTT
//!   sample is `rate_sample.rtt_us`, the RTT of the latest packet the ACK newly delivers (the
//!   kernel's `ca_rtt_us`), given as both [`AckEvent::min_rtt_sample`] and `max_rtt_sample`:
//!   the kernel's own estimator takes the earliest packet's (`seq_rtt_us`), which the report
//!   lacks, so its result, `mdev_us`, comes as [`AckEvent::kernel_mdev`] (BBR-S reads it).
//! - **losses**: packets newly marked lost are the growth of `tp->lost`, which counts marks by
//!   SACK / RACK on an ACK and by a retransmission timeout (which `rate_sample.losses` misses).
//!   A timeout (the socket in `TCP_CA_Loss`) is reported as persistent congestion; losses come
//!   with the next ACK after they were marked, not at the timer.
//! - **approximate: sends**. The kernel does not report each send; the bytes sent since the
//!   previous report (`tp->bytes_sent`, retransmissions included) become packets of one MSS,
//!   their send times spread evenly between the two reports, and given to
//!   [`CongestionControl::on_sent`] before the ACK's events; the first of them are marked
//!   retransmissions, as many as `tp->total_retrans` grew. PCC's monitor intervals therefore
//!   see the right number of packets and bytes per interval, with send times off by at most
//!   the time between two ACKs.
//! - **approximate: which losses were retransmissions** (see `Translator::losses`): while the
//!   kernel stays in one recovery episode, losses up to the retransmissions in flight.
//! - **approximate: packet numbers and per-packet outcomes** ([`AckEvent::largest_acked`],
//!   [`LossEvent::largest_lost_pn`], [`CongestionControl::on_packet_acked`] / `lost`): the
//!   ledger attributes losses and then deliveries to its oldest packets, which is TCP's order
//!   for cumulative ACKs and the common case for SACK (holes before SACKed data). Controllers
//!   that count rounds or end recovery by packet number (HyStart's and BBR's rounds, the Reno
//!   family's one reduction per window) read these numbers: exact while packets are delivered
//!   in order, off by the reordered packets when SACK delivers out of order, and by a packet
//!   per partial segment (a send of less than an MSS, counted with the next).
//! - **send times of the events** (the largest lost and acknowledged packets', by which
//!   controllers tell a new congestion event from one they reacted to, and the end of their
//!   recovery): the kernel's. With SACK the ledger's entries drift late (deliveries around a
//!   hole consume the hole's entry), so the losses marked over a recovery's round trip would
//!   read as sent after the reduction, each a new event: a CUBIC through the shim cut its
//!   window three times after one slow-start overshoot (597 → 418 → 293 → 205 KB at
//!   20 Mbit/s, 80 ms) where the kernel's cuts once. Each report carries `tp->rack.mstamp`,
//!   when the most recently delivered packet was sent: that is the ACK's largest acknowledged
//!   send time, and since RACK marks lost only packets sent before it, it bounds the losses'.
//!   The per-packet outcomes keep the ledger's times.
//! - **not available**: receiver timestamps ([`CongestionControl::on_feedback`]; LEDBAT, GCC
//!   and PIBES run on RTTs as over QUIC) and ECN-CE marks, which polycc's events do not carry:
//!   they are counted in the telemetry (`cc_ce_marks`).
//! - **timers**: a due [`CongestionControl::next_timer`] fires at the next report or at the
//!   agent's next poll (every 10 ms), whichever comes first.

use crate::report::{Decision, Report, TCP_CA_CWR, TCP_CA_LOSS, TCP_CA_RECOVERY};
use polycc::estimators::rtt::RttSnapshot;
use polycc::{
    AckEvent, Bytes, CongestionControl, Duration, LossEvent, PacketOutcome, Rate, RateSample,
    SentPacket, Telemetry, Time,
};
use std::collections::VecDeque;

/// More synthetic packets than the kernel has in flight by this many means the ledger drifted
/// (a segment of less than an MSS counted as one, a report lost to a full ring); it is
/// trimmed from the front.
const LEDGER_SLACK_PACKETS: usize = 64;

/// One synthetic packet of the ledger.
#[derive(Clone, Copy, Debug)]
struct Pkt {
    pn: u64,
    bytes: Bytes,
    sent: Time,
}

/// One loss event's packets: how many, and the largest's number and send time where known.
struct Lost {
    packets: u32,
    pn: Option<u64>,
    sent: Option<Time>,
}

/// What the translator last saw of the socket (the counters are cumulative in the kernel).
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    at: Option<Time>,
    bytes_sent: u64,
    lost_total: u32,
    retrans_total: u32,
    retrans_out: u32,
    delivered_ce: u32,
    in_flight: Bytes,
    ca_state: u32,
    rtt: RttSnapshot,
}

/// One socket's controller and the state that turns reports into its events.
pub struct Translator {
    cc: Box<dyn CongestionControl>,
    detail: bool,
    mss: Bytes,
    next_pn: u64,
    carry: Bytes,
    ledger: VecDeque<Pkt>,
    /// The latest synthetic retransmission's packet number.
    last_retx_pn: Option<u64>,
    seen: Seen,
    ce_marks: u64,
}

/// The kernel's `mdev_us` (4× the mean deviation) from the report's `rttvar_us`, which the
/// shim writes as `mdev_us >> 2` (as `tcp_info`'s `tcpi_rttvar`): within 3 µs. `None` before
/// the socket's first RTT sample.
fn kernel_mdev(r: &Report) -> Option<Duration> {
    (r.srtt_us > 0).then(|| Duration::from_micros(4 * u64::from(r.rttvar_us)))
}

/// The kernel is recovering from losses (fast recovery or after a timeout).
fn recovering(ca_state: u32) -> bool {
    ca_state == TCP_CA_RECOVERY || ca_state == TCP_CA_LOSS
}

impl Translator {
    /// Feeds `cc` for a socket whose segments are `mss` bytes (until its reports say
    /// otherwise).
    pub fn new(cc: Box<dyn CongestionControl>, mss: Bytes) -> Translator {
        Translator {
            detail: cc.wants_packet_detail(),
            cc,
            mss: mss.max(1),
            next_pn: 0,
            carry: 0,
            ledger: VecDeque::new(),
            last_retx_pn: None,
            seen: Seen::default(),
            ce_marks: 0,
        }
    }

    /// The controller, read-only.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The controller, to hand it an intent.
    pub fn controller_mut(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    /// The controller's telemetry, with the shim's own counters.
    pub fn telemetry(&self) -> Telemetry {
        let mut t = self.cc.telemetry();
        t.push("ce_marks", self.ce_marks as f64);
        t
    }

    /// Bytes in flight as of the last report.
    pub fn in_flight(&self) -> Bytes {
        self.seen.in_flight
    }

    /// The segment size windows are counted in.
    pub fn mss(&self) -> Bytes {
        self.mss
    }

    /// Fires the controller's timer if it is due.
    pub fn poll_timer(&mut self, now: Time) {
        if self.cc.next_timer().is_some_and(|t| t <= now) {
            self.cc.on_timer(now);
        }
    }

    /// The window and pacing rate to write for the socket now, answering the ACK at
    /// `ack_ns`.
    pub fn decision(&self, ack_ns: u64) -> Decision {
        let packets = self.cc.cwnd().div_ceil(self.mss).max(2);
        Decision {
            cwnd_packets: u32::try_from(packets).unwrap_or(u32::MAX),
            pacing_bytes_per_sec: self
                .cc
                .pacing_rate()
                .map(|r| (r.as_bytes_per_sec_f64().round() as u64).max(1)),
            slow_start: self.cc.in_slow_start(),
            ack_ns,
            in_flight_packets: u32::try_from(self.seen.in_flight / self.mss).unwrap_or(u32::MAX),
            reducing: recovering(self.seen.ca_state) || self.seen.ca_state == TCP_CA_CWR,
        }
    }

    /// One ACK's report: the sends since the previous one, then this ACK's losses and
    /// delivery, as the controller's events.
    pub fn on_report(&mut self, r: &Report) {
        if r.mss > 0 {
            self.mss = Bytes::from(r.mss);
        }
        let now = Time(r.now_ns).max(self.seen.at.unwrap_or(Time::ZERO));
        let rtt = self.rtt(r);
        self.poll_timer(now);
        self.sends(r, now);
        let lost = r.lost_total.wrapping_sub(self.seen.lost_total);
        self.ce_marks += u64::from(r.delivered_ce.wrapping_sub(self.seen.delivered_ce));
        let entered_loss = r.ca_state == TCP_CA_LOSS && self.seen.ca_state != TCP_CA_LOSS;
        let mss = self.mss;
        let prior_in_flight = Bytes::from(r.prior_in_flight) * mss;
        // The most recently delivered packet's send time, on the agent's clock.
        let rack = (r.rack_sent_ns > 0).then(|| Time(r.rack_sent_ns).min(now));
        if lost > 0 {
            self.losses(r, now, lost, entered_loss, prior_in_flight, rack);
        }
        if r.acked_sacked > 0 {
            self.ack(r, now, rtt, prior_in_flight, rack);
        }
        self.trim(r.in_flight);
        self.seen = Seen {
            at: Some(now),
            bytes_sent: r.bytes_sent,
            lost_total: r.lost_total,
            retrans_total: r.retrans_total,
            retrans_out: r.retrans_out,
            delivered_ce: r.delivered_ce,
            in_flight: Bytes::from(r.in_flight) * mss,
            ca_state: r.ca_state,
            rtt,
        };
    }

    fn rtt(&self, r: &Report) -> RttSnapshot {
        let us = |v: u32| Duration::from_micros(u64::from(v));
        if r.srtt_us == 0 {
            return self.seen.rtt;
        }
        RttSnapshot {
            latest: r.rtt_us.map_or(self.seen.rtt.latest, us),
            smoothed: us(r.srtt_us),
            var: us(r.rttvar_us),
            min: us(if r.min_rtt_us > 0 && r.min_rtt_us != u32::MAX {
                r.min_rtt_us
            } else {
                r.srtt_us
            }),
            has_sample: true,
        }
    }

    /// The bytes sent since the previous report, as packets of one MSS sent evenly between
    /// the two reports.
    fn sends(&mut self, r: &Report, now: Time) {
        let sent = r.bytes_sent.saturating_sub(self.seen.bytes_sent) + self.carry;
        let n = sent / self.mss;
        self.carry = sent % self.mss;
        let from = self.seen.at.unwrap_or(now);
        let span = now.saturating_since(from).0;
        let mut in_flight = self.seen.in_flight;
        // Retransmissions go first: Linux sends them before new data at an ACK
        // (`tcp_xmit_recovery`).
        let retx = u64::from(r.retrans_total.wrapping_sub(self.seen.retrans_total));
        for k in 1..=n {
            let at = Time(from.0 + span * k / n);
            let pn = self.next_pn;
            let is_retransmission = k <= retx;
            self.next_pn += 1;
            in_flight += self.mss;
            if is_retransmission {
                self.last_retx_pn = Some(pn);
            }
            self.ledger.push_back(Pkt {
                pn,
                bytes: self.mss,
                sent: at,
            });
            self.cc.on_sent(
                at,
                &SentPacket {
                    pn,
                    bytes: self.mss,
                    in_flight,
                    is_retransmission,
                    app_limited: r.app_limited,
                },
            );
        }
    }

    /// This report's losses, as up to two [`LossEvent`]s: first those read as retransmissions
    /// lost again, then the others.
    ///
    /// The kernel's counters cannot tell a lost retransmission from new data lost (a
    /// retransmission lost and another delivered reads as new data lost, in every counter), and
    /// this kernel refuses the fentry programs that could watch `tcp_mark_skb_lost`. So while
    /// the kernel stays in one recovery episode, losses up to the retransmissions that were in
    /// flight are read as lost retransmissions: TCP's recovery (which the kernel's own
    /// controllers follow) answers neither with a new reduction before the episode ends, and a
    /// controller whose recovery spans its retransmissions then does the same. The events'
    /// send times stay bounded by `rack` (the kernel's send time of the latest delivery), so
    /// for RFC 9002's rule, where a retransmission's loss is a new event, nothing changes.
    fn losses(
        &mut self,
        r: &Report,
        now: Time,
        lost: u32,
        entered_loss: bool,
        prior: Bytes,
        rack: Option<Time>,
    ) {
        let same_episode = recovering(self.seen.ca_state) && recovering(r.ca_state);
        let retx_in_flight = self
            .seen
            .retrans_out
            .saturating_add(r.retrans_total.wrapping_sub(self.seen.retrans_total));
        let lost_retx = if same_episode {
            lost.min(retx_in_flight)
        } else {
            0
        };
        let lost_new = lost - lost_retx;
        let bound = |p: Pkt| p.sent.min(rack.unwrap_or(now));
        let mut in_flight = prior;
        if lost_retx > 0 {
            let taken = self.take_lost(lost_retx, now);
            // The event names the latest retransmission the controller saw sent: controllers
            // whose recovery spans retransmissions tell this loss from a new event by it. The
            // ledger keeps attributing losses to its oldest packets, whose numbers count the
            // rounds of controllers such as BBR.
            let pn = self.last_retx_pn.or(taken.map(|p| p.pn));
            in_flight = in_flight.saturating_sub(Bytes::from(lost_retx) * self.mss);
            let persistent = entered_loss && lost_new == 0;
            let lost = Lost {
                packets: lost_retx,
                pn,
                sent: taken.map(bound),
            };
            self.loss_event(r, now, lost, persistent, in_flight);
        }
        if lost_new > 0 {
            let taken = self.take_lost(lost_new, now);
            in_flight = in_flight.saturating_sub(Bytes::from(lost_new) * self.mss);
            let lost = Lost {
                packets: lost_new,
                pn: taken.map(|p| p.pn),
                sent: taken.map(bound),
            };
            self.loss_event(r, now, lost, entered_loss, in_flight);
        }
    }

    /// Takes `n` lost packets from the ledger, its oldest, reporting each to a controller that
    /// wants packet detail. Returns the latest taken.
    fn take_lost(&mut self, n: u32, now: Time) -> Option<Pkt> {
        let mut latest = None;
        for _ in 0..n {
            let Some(p) = self.ledger.pop_front() else {
                break;
            };
            if self.detail {
                self.cc.on_packet_lost(
                    now,
                    &PacketOutcome {
                        pn: p.pn,
                        bytes: p.bytes,
                        sent_time: p.sent,
                        rtt: None,
                    },
                );
            }
            latest = Some(p);
        }
        latest
    }

    fn loss_event(
        &mut self,
        r: &Report,
        now: Time,
        lost: Lost,
        persistent_congestion: bool,
        in_flight: Bytes,
    ) {
        self.cc.on_loss(
            now,
            &LossEvent {
                lost_bytes: Bytes::from(lost.packets) * self.mss,
                lost_packets: lost.packets,
                largest_lost_pn: lost.pn.unwrap_or(self.next_pn.saturating_sub(1)),
                largest_lost_sent_time: lost.sent.unwrap_or(now),
                persistent_congestion,
                in_flight,
                mss: Bytes::from(r.mss).max(1),
            },
        );
    }

    /// `rack`: the kernel's send time of the most recently delivered packet.
    fn ack(
        &mut self,
        r: &Report,
        now: Time,
        rtt: RttSnapshot,
        prior_in_flight: Bytes,
        rack: Option<Time>,
    ) {
        let mss = self.mss;
        let mut largest = None;
        for _ in 0..r.acked_sacked {
            let Some(p) = self.ledger.pop_front() else {
                break;
            };
            if self.detail {
                self.cc.on_packet_acked(
                    now,
                    &PacketOutcome {
                        pn: p.pn,
                        bytes: p.bytes,
                        sent_time: p.sent,
                        rtt: Some(now.saturating_since(p.sent)),
                    },
                );
            }
            largest = Some(p);
        }
        let sample = r.rtt_us.map(|us| Duration::from_micros(u64::from(us)));
        let delivered_total = Bytes::from(r.delivered_total) * mss;
        let rate_sample = r.delivered.map(|(packets, interval_us)| {
            let delivered = Bytes::from(packets) * mss;
            let interval = Duration::from_micros(u64::from(interval_us));
            RateSample {
                delivered,
                interval,
                delivery_rate: Rate::from_bytes_over(delivered, interval),
                prior_delivered: delivered_total.saturating_sub(delivered),
                is_app_limited: r.app_limited,
                rtt: sample.unwrap_or(rtt.smoothed),
            }
        });
        self.cc.on_ack(
            now,
            &AckEvent {
                acked_bytes: Bytes::from(r.acked_sacked) * mss,
                acked_packets: r.acked_sacked,
                largest_acked: largest.map_or(self.next_pn.saturating_sub(1), |p| p.pn),
                largest_acked_sent_time: rack.unwrap_or(largest.map_or(now, |p| p.sent)),
                min_rtt_sample: sample,
                max_rtt_sample: sample,
                kernel_mdev: kernel_mdev(r),
                // TCP carries no ACK delay; the kernel's delayed ACK stays in the sample.
                ack_delay: Duration::ZERO,
                rtt,
                prior_in_flight,
                in_flight: Bytes::from(r.in_flight) * mss,
                delivered: delivered_total,
                rate_sample,
                app_limited: r.app_limited,
                mss,
            },
        );
    }

    /// Drops the ledger's oldest packets beyond what the kernel has in flight (plus slack).
    fn trim(&mut self, kernel_in_flight: u32) {
        let keep = kernel_in_flight as usize + LEDGER_SLACK_PACKETS;
        while self.ledger.len() > keep {
            self.ledger.pop_front();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::{FlowKey, ReportKind};
    use polycc::{CcContext, CcSpec, Registry};

    const MSS: u32 = 1448;

    pub(crate) fn report(now_ms: u64) -> Report {
        Report {
            now_ns: now_ms * 1_000_000,
            key: FlowKey(1),
            ports: 1,
            cookie: 0,
            rtt_us: Some(40_000),
            acked_sacked: 0,
            losses: 0,
            delivered: None,
            prior_in_flight: 0,
            snd_cwnd: 10,
            srtt_us: 40_000,
            mss: MSS,
            delivered_total: 0,
            app_limited: false,
            kind: ReportKind::Ack,
            in_flight: 0,
            lost_total: 0,
            delivered_ce: 0,
            bytes_acked: 0,
            bytes_sent: 0,
            applied_ack_ns: 0,
            rttvar_us: 5_000,
            min_rtt_us: 40_000,
            ca_state: 0,
            paced: false,
            rack_sent_ns: 0,
            retrans_total: 0,
            retrans_out: 0,
        }
    }

    fn translator(name: &str) -> Translator {
        with_spec(&CcSpec::named(name))
    }

    fn with_spec(spec: &CcSpec) -> Translator {
        let cc = Registry::standard()
            .build(spec, &CcContext::new(Bytes::from(MSS)))
            .expect("standard controller");
        Translator::new(cc, Bytes::from(MSS))
    }

    #[test]
    fn acks_in_slow_start_grow_cubics_window_by_the_bytes_delivered() {
        let mut t = translator("cubic");
        assert_eq!(t.decision(0).cwnd_packets, 10, "RFC 6928 initial window");
        // Ten packets sent, all acknowledged one RTT later: slow start doubles the window.
        let mut r = report(40);
        r.bytes_sent = 10 * u64::from(MSS);
        r.acked_sacked = 10;
        r.prior_in_flight = 10;
        r.delivered_total = 10;
        r.delivered = Some((10, 40_000));
        t.on_report(&r);
        assert_eq!(t.decision(r.now_ns).cwnd_packets, 20);
        assert_eq!(t.decision(r.now_ns).ack_ns, r.now_ns);
        assert!(t.ledger.is_empty(), "all ten attributed");
    }

    /// CUBIC fed twenty packets sent and ten acknowledged at 40 ms, and its window then.
    fn twenty_out_ten_acked() -> (Translator, Bytes) {
        let mut t = translator("cubic");
        let mut r = report(40);
        r.bytes_sent = 20 * u64::from(MSS);
        r.acked_sacked = 10;
        r.prior_in_flight = 20;
        r.in_flight = 10;
        t.on_report(&r);
        let cwnd = t.controller().cwnd();
        (t, cwnd)
    }

    #[test]
    fn a_loss_marked_by_the_kernel_reduces_cubics_window_by_its_beta() {
        let (mut t, before) = twenty_out_ten_acked();
        let mut r = report(41);
        r.bytes_sent = 20 * u64::from(MSS);
        r.lost_total = 1;
        r.acked_sacked = 1;
        r.prior_in_flight = 10;
        r.in_flight = 8;
        t.on_report(&r);
        let after = t.controller().cwnd();
        // CUBIC's beta 0.7 (RFC 9438 §4.6) on the window before the loss.
        assert!(
            (after as f64 / before as f64 - 0.7).abs() < 0.05,
            "{before} -> {after}"
        );
        assert_eq!(t.ledger.len(), 8, "one lost and one acked of ten");
    }

    /// [`twenty_out_ten_acked`]; then, at 41 ms, one marked lost; then ten more sent and, at
    /// 90 ms, eleven more marked lost (the ledger's oldest: nine sent before the first loss, two
    /// after) and three acknowledged. Each report gives `rack_ms` as the send time of the most
    /// recently delivered packet (0: not given). The controller's window after each loss
    /// report.
    fn two_loss_reports(rack_ms: u64) -> (Bytes, Bytes, Bytes, Translator) {
        let (mut t, before) = twenty_out_ten_acked();
        let mut r = report(41);
        r.bytes_sent = 20 * u64::from(MSS);
        r.lost_total = 1;
        r.prior_in_flight = 10;
        r.in_flight = 9;
        r.ca_state = TCP_CA_RECOVERY;
        r.rack_sent_ns = rack_ms * 1_000_000;
        t.on_report(&r);
        let first = t.controller().cwnd();
        let mut r = report(90);
        r.bytes_sent = 30 * u64::from(MSS);
        r.lost_total = 12;
        r.acked_sacked = 3;
        r.prior_in_flight = 19;
        r.in_flight = 5;
        r.ca_state = TCP_CA_RECOVERY;
        r.rack_sent_ns = rack_ms * 1_000_000;
        t.on_report(&r);
        (before, first, t.controller().cwnd(), t)
    }

    #[test]
    fn losses_of_packets_sent_before_the_reduction_do_not_reduce_again() {
        // The SACKed packets were sent at 30 ms, before the first loss was found at 41 ms:
        // every packet RACK marked lost since was sent before that.
        let (before, first, second, mut t) = two_loss_reports(30);
        assert!(
            (first as f64 / before as f64 - 0.7).abs() < 0.05,
            "{before} -> {first}"
        );
        assert_eq!(second, first, "no new congestion event");
        // Deliveries of packets sent after the reduction end the recovery; a loss bounded by
        // such a send time is a new event.
        let mut r = report(130);
        r.bytes_sent = 40 * u64::from(MSS);
        r.lost_total = 12;
        r.acked_sacked = 5;
        r.prior_in_flight = 15;
        r.in_flight = 10;
        r.rack_sent_ns = 80_000_000;
        t.on_report(&r);
        let calm = t.controller().cwnd();
        let mut r = report(131);
        r.bytes_sent = 40 * u64::from(MSS);
        r.lost_total = 13;
        r.prior_in_flight = 10;
        r.in_flight = 9;
        r.ca_state = TCP_CA_RECOVERY;
        r.rack_sent_ns = 85_000_000;
        t.on_report(&r);
        let third = t.controller().cwnd();
        assert!(
            (third as f64 / calm as f64 - 0.7).abs() < 0.05,
            "{calm} -> {third}"
        );
    }

    #[test]
    fn without_the_kernels_send_times_the_ledgers_later_entries_would_reduce_again() {
        // The same reports without RACK's time: the second loss report pops ledger entries
        // sent after the first, a second reduction.
        let (_, first, second, _) = two_loss_reports(0);
        assert!(
            (second as f64 / first as f64 - 0.7).abs() < 0.05,
            "{first} -> {second}"
        );
    }

    /// `t` fed twenty packets and ten acknowledged at 40 ms, a loss found at 41 ms (the kernel
    /// enters recovery), three retransmissions sent and the rest acknowledged by 50 ms; then,
    /// at 95 ms, with the kernel still in recovery, one more loss (the kernel's latest delivery
    /// was sent at 48 ms, after the retransmissions). `counted`: the reports carry the kernel's
    /// retransmission counters. Its slow-start threshold after the first reduction and after
    /// the second loss.
    fn a_lost_retransmission(mut t: Translator, counted: bool) -> (f64, f64, Translator) {
        let mut r = report(40);
        r.bytes_sent = 20 * u64::from(MSS);
        r.acked_sacked = 10;
        r.prior_in_flight = 20;
        r.in_flight = 10;
        t.on_report(&r);
        let mut r = report(41);
        r.bytes_sent = 20 * u64::from(MSS);
        r.lost_total = 1;
        r.prior_in_flight = 10;
        r.in_flight = 9;
        r.ca_state = TCP_CA_RECOVERY;
        r.rack_sent_ns = 30_000_000;
        t.on_report(&r);
        let first = ssthresh(&t);
        let mut r = report(50);
        r.bytes_sent = 23 * u64::from(MSS);
        r.retrans_total = if counted { 3 } else { 0 };
        r.retrans_out = r.retrans_total;
        r.lost_total = 1;
        r.acked_sacked = 9;
        r.prior_in_flight = 12;
        r.in_flight = 3;
        r.ca_state = TCP_CA_RECOVERY;
        r.rack_sent_ns = 38_000_000;
        t.on_report(&r);
        let mut r = report(95);
        r.bytes_sent = 23 * u64::from(MSS);
        r.retrans_total = if counted { 3 } else { 0 };
        r.retrans_out = r.retrans_total.saturating_sub(1);
        r.lost_total = 2;
        r.acked_sacked = 1;
        r.prior_in_flight = 3;
        r.in_flight = 1;
        r.ca_state = TCP_CA_RECOVERY;
        r.rack_sent_ns = 48_000_000;
        t.on_report(&r);
        (first, ssthresh(&t), t)
    }

    fn ssthresh(t: &Translator) -> f64 {
        let telemetry = t.telemetry();
        let entry = telemetry.entries().iter().find(|e| e.0 == "ssthresh_bytes");
        entry.expect("a Reno-family window").1
    }

    #[test]
    fn a_loss_in_the_kernels_recovery_with_retransmissions_in_flight_is_no_new_event_for_tcp() {
        // Linux's CUBIC model: the recovery period spans its retransmissions.
        let linux = polycc_sim::scenario::linux_stack::controller("cubic").expect("modelled");
        let (first, second, t) = a_lost_retransmission(with_spec(&linux), true);
        assert_eq!(t.last_retx_pn, Some(22), "pn 20 to 22 are retransmissions");
        assert_eq!(
            second, first,
            "the loss of a retransmission is not a new event"
        );
        // Without the kernel's counters the same loss, of a packet sent after the reduction,
        // reduces again.
        let (first, second, _) = a_lost_retransmission(with_spec(&linux), false);
        assert!(second < 0.9 * first, "{first} -> {second}");
        // polycc's default CUBIC follows RFC 9002: a retransmission is a packet sent after the
        // reduction, and its loss a new event.
        let (first, second, _) = a_lost_retransmission(translator("cubic"), true);
        assert!(second < 0.9 * first, "{first} -> {second}");
    }

    #[test]
    fn sends_between_reports_are_spread_over_the_gap() {
        let mut t = translator("cubic");
        t.on_report(&report(10));
        let mut r = report(20);
        r.bytes_sent = 4 * u64::from(MSS) + 100;
        t.on_report(&r);
        let times: Vec<u64> = t.ledger.iter().map(|p| p.sent.0 / 1_000_000).collect();
        assert_eq!(times, vec![12, 15, 17, 20]);
        assert_eq!(t.carry, 100, "a partial segment waits for the next report");
    }

    #[test]
    fn a_rate_based_controller_gets_a_pacing_rate_in_bytes_per_second() {
        let mut t = translator("bbr");
        let mut delivered = 0;
        for k in 1..=50u64 {
            let mut r = report(40 + 10 * k);
            r.bytes_sent = (k + 10) * 5 * u64::from(MSS);
            r.acked_sacked = 5;
            delivered += 5;
            r.delivered_total = delivered;
            // 5 packets per 10 ms: 5.79 Mbit/s.
            r.delivered = Some((20, 40_000));
            r.prior_in_flight = 20;
            r.in_flight = 15;
            t.on_report(&r);
        }
        let d = t.decision(0);
        let rate = d.pacing_bytes_per_sec.expect("BBR paces");
        let sample = 20.0 * f64::from(MSS) / 0.04;
        assert!(
            rate as f64 > 0.9 * sample && (rate as f64) < 3.0 * sample,
            "{rate} B/s against a delivery rate of {sample} B/s"
        );
    }

    /// BBR-S fed `reports` ACKs of 5 packets every 10 ms at a steady 40 ms RTT sample, with
    /// the kernel's `rttvar_us` (its `mdev_us` / 4) as given: its telemetry's deviation (ms)
    /// and forced PROBE_RTTs.
    fn bbr_s_on_kernel_deviation(rttvar_us: u32, reports: u64) -> (f64, f64) {
        let mut t = translator("bbr-s");
        for k in 1..=reports {
            let mut r = report(40 + 10 * k);
            r.bytes_sent = (k + 10) * 5 * u64::from(MSS);
            r.acked_sacked = 5;
            r.delivered_total = 5 * u32::try_from(k).expect("few reports");
            r.delivered = Some((20, 40_000));
            r.prior_in_flight = 20;
            r.in_flight = 15;
            r.rttvar_us = rttvar_us;
            t.on_report(&r);
        }
        let tm = t.telemetry();
        (
            tm.get("rtt_mdev_ms").expect("BBR-S reports its deviation"),
            tm.get("forced_probe_rtts")
                .expect("BBR-S counts its phases"),
        )
    }

    #[test]
    fn bbr_s_reads_the_kernels_own_rtt_deviation() {
        // The RTT samples stay at 40 ms: an estimator over them would start at 2 × 40 ms
        // (one forced phase at the first ACK) and decay towards zero. The kernel's mdev_us
        // says 4 ms, then 25 ms (rttvar_us 1 ms, 6.25 ms): BBR-S takes the kernel's.
        assert_eq!(bbr_s_on_kernel_deviation(1_000, 50), (4.0, 0.0));
        let (mdev, forced) = bbr_s_on_kernel_deviation(6_250, 50);
        assert_eq!(mdev, 25.0);
        assert!(
            forced >= 1.0,
            "above the 20 ms threshold: {forced} forced phases"
        );
    }
}
