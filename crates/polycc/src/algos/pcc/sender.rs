//! The rate-based sender shared by the PCC controllers: it feeds packets to the monitor-interval
//! engine, hands completed MIs to a `RateControl` and turns its rate into the
//! [`CongestionControl`] outputs.
//!
//! PCC is rate-based: `pacing_rate()` is the current MI's sending rate. While the host paces,
//! the window only keeps the transport from stalling: `cwnd = 2·rate·max(srtt, latest RTT) +
//! 4·mss` (two RTTs of data, so that RTT growth within a round never makes the window the
//! limit), never below 2·mss.
//!
//! A host that does not pace sends whatever that window allows, twice the MI's rate: the
//! bottleneck queue then stays full whatever the rate, and the MIs measure the window's
//! transients instead of their rates (the higher trial of a pair meets a full, flat queue and
//! some loss; the lower one's smaller window pauses the sender, the queue drains and refills
//! within the MI, a rising RTT that the latency term penalises far more), so the gradient
//! points up and the rate runs away. When a completed MI of at least
//! [`MIN_PACKETS_PER_MI`] packets went out faster than [`UNPACED_SEND_RATIO`]× its rate, the
//! host is taken not to pace (for the rest of the flow) and the window becomes one RTT of data
//! at the MI rate, `rate·max(srtt, latest RTT)`: window-limited sending then averages the MI's
//! rate, as pacing would.
//!
//! Each completed MI also passes the application-limited guard (`app_limited.rs`): after an MI
//! in which the sender had less data than its rate, the controller's rate may not rise, is capped
//! at twice the MI's delivered rate, and falls below an initial window per RTT only on loss (the
//! controller restarts its search at the bound).
//!
//! Per-packet outcomes (`on_packet_acked` / `on_packet_lost`) attribute packets to MIs. A
//! transport that never sends them still works: the largest acknowledged (lost) packet of each
//! event is attributed, and the event's other packets are taken to be the pending ones just
//! below it (see `MonitorQueue::on_acked_aggregate`).

use crate::algos::pcc::app_limited::{not_validated, rate_floor, rate_limit, sustained, validated};
use crate::algos::pcc::monitor::{
    MiPlan, MiStats, MonitorConfig, MonitorQueue, MIN_PACKETS_PER_MI,
};
use crate::cc::MIN_WINDOW_PACKETS;
use crate::cc::{Calibration, CcContext, CongestionControl, HandoverState, Telemetry};
use crate::estimators::rtt::RttSnapshot;
use crate::intent::Intent;
use crate::signals::{AckEvent, LossEvent, PacketOutcome, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use std::fmt;

/// PCC-Uspace master (dossier §7.2): before the first RTT sample the rate is the initial window
/// per this time; the first sample rescales it by this time / RTT when the RTT is shorter.
pub const INITIAL_RATE_RTT: Duration = Duration::from_millis(100);
/// Window = this many RTTs of data at the MI rate, plus [`CWND_HEADROOM_PACKETS`].
const CWND_RTTS: f64 = 2.0;
const CWND_HEADROOM_PACKETS: u64 = 4;
/// An MI that went out this many times faster than its rate shows a host that does not pace.
/// A pacing host sends an MI of N >= 10 packets at no more than N/(N − 1) ≈ 1.1× its rate
/// (the measured sending time is at least the MI less one packet time); an unpaced one behind
/// the two-RTT window sends up to 2× (module documentation).
pub const UNPACED_SEND_RATIO: f64 = 1.5;
/// The golden ratio's fractional part in 32-bit fixed point (0.618 033 988 7 × 2^32):
/// consecutive multiples, modulo 2^32, spread evenly over [0, 1).
const WEYL_STEP_Q32: u32 = 0x9E37_79B9;

/// What a rate controller knows of the path when it plans or judges an MI.
#[derive(Clone, Copy, Debug)]
pub struct PathView {
    /// The time of the event that asks.
    pub now: Time,
    /// The transport's maximum datagram size, bytes.
    pub mss: Bytes,
    /// RTT estimator state (RFC 9002 defaults before the first sample).
    pub rtt: RttSnapshot,
}

impl PathView {
    /// The smoothed RTT, or [`INITIAL_RATE_RTT`] before the first sample.
    pub fn srtt(&self) -> Duration {
        if self.rtt.has_sample {
            self.rtt.smoothed
        } else {
            INITIAL_RATE_RTT
        }
    }
    /// The minimum RTT, or [`INITIAL_RATE_RTT`] before the first sample.
    pub fn min_rtt(&self) -> Duration {
        if self.rtt.has_sample {
            self.rtt.min
        } else {
            INITIAL_RATE_RTT
        }
    }
}

/// A PCC rate-control algorithm: plans MIs and learns from their results.
pub(crate) trait RateControl: Send + fmt::Debug {
    /// The next MI's rate, whether its result is wanted, and its tag.
    fn next_plan(&mut self, path: &PathView) -> MiPlan;
    /// How long an MI with this plan lasts.
    fn mi_length(&mut self, plan: &MiPlan, path: &PathView) -> Duration;
    /// A completed MI (useful or not, oldest first). Returns true when the rate changed so that
    /// the current MI must be re-aligned (closed now, a new one planned).
    fn on_mi(&mut self, stats: &MiStats, path: &PathView) -> bool;
    /// The rate the controller is centred on.
    fn base_rate(&self) -> Rate;
    /// The first RTT sample's rescaling of the initial rate: multiplies the rate and, while
    /// starting, discards the MI planned before the sample (its result is not judged) so that
    /// the next MI measures the rescaled rate. PCC-Uspace master measures nothing before the
    /// first RTT sample (`CreateUsefulInterval` is false until then).
    fn scale_rate(&mut self, factor: f64);
    /// Sets the rate from outside (a policy's calibration or a hand-over) and restarts the
    /// search around it, leaving any start-up phase.
    fn set_rate(&mut self, rate: Rate, path: &PathView);
    /// The controller's phase, the telemetry state name.
    fn state(&self) -> &'static str;
    /// Up to 8 values of the controller's own.
    fn telemetry(&self, t: &mut Telemetry);
    /// The application's intent changed; the default ignores it.
    fn set_intent(&mut self, _intent: &Intent) {}
}

/// A [`CongestionControl`] made of a monitor-interval queue and a [`RateControl`].
#[derive(Debug)]
pub(crate) struct PccSender<C: RateControl> {
    name: &'static str,
    mss: Bytes,
    initial_cwnd: Bytes,
    ctl: C,
    mq: MonitorQueue,
    rtt: RttSnapshot,
    /// Rate of the MI that is sending.
    rate: Rate,
    clamp: Option<Bytes>,
    last: Option<MiStats>,
    /// The transport delivers per-packet outcomes (seen at least one).
    detail: bool,
    /// The host honours the pacing rate (until an MI shows otherwise).
    host_paces: bool,
    packets_sent: u64,
    /// Bytes in flight after the latest event (the transport's count).
    in_flight: Bytes,
    /// When the latest validated MI was judged, or the sender first saw an event
    /// (`app_limited.rs`).
    validated_at: Option<Time>,
}

impl<C: RateControl> PccSender<C> {
    pub fn new(name: &'static str, ctx: &CcContext, ctl: C, monitor: MonitorConfig) -> Self {
        let rate = ctl.base_rate();
        PccSender {
            name,
            mss: ctx.mss.max(1),
            initial_cwnd: ctx.initial_cwnd,
            ctl,
            mq: MonitorQueue::new(monitor),
            rtt: RttSnapshot::default(),
            rate,
            clamp: None,
            last: None,
            detail: false,
            host_paces: true,
            packets_sent: 0,
            in_flight: 0,
            validated_at: None,
        }
    }

    /// The initial rate: the initial window per [`INITIAL_RATE_RTT`].
    pub fn initial_rate(ctx: &CcContext) -> Rate {
        Rate::from_bytes_over(
            ctx.initial_cwnd.max(MIN_WINDOW_PACKETS * ctx.mss),
            INITIAL_RATE_RTT,
        )
    }

    fn path(&self, now: Time) -> PathView {
        PathView {
            now,
            mss: self.mss,
            rtt: self.rtt,
        }
    }

    fn start_mi(&mut self, now: Time, realign: bool) {
        let path = self.path(now);
        let plan = self.ctl.next_plan(&path);
        let len = self.ctl.mi_length(&plan, &path);
        if realign {
            self.mq.realign(now, plan, len);
        } else {
            self.mq.begin(now, plan, len);
        }
        self.rate = plan.rate.max(Rate(1));
        self.mq.mark_limits(false, self.window_full());
    }

    /// No room in the window for another packet (app_limited.rs: such an MI is not
    /// application-limited).
    fn window_full(&self) -> bool {
        self.in_flight.saturating_add(self.mss) > self.cwnd()
    }

    /// What the window is made of: `cwnd()` ≈ rate · `rtt` · `rtts` + `headroom` (module
    /// documentation). Shared by the window and its inverse, [`Self::rate_for_window`].
    fn window_basis(&self) -> (Duration, f64, Bytes) {
        let headroom = if self.host_paces {
            CWND_HEADROOM_PACKETS * self.mss
        } else {
            0
        };
        if !self.rtt.has_sample {
            (INITIAL_RATE_RTT, CWND_RTTS, headroom)
        } else if self.host_paces {
            (self.rtt.smoothed.max(self.rtt.latest), CWND_RTTS, headroom)
        } else {
            (self.rtt.min, 1.0, headroom)
        }
    }

    /// The rate whose window (`cwnd()`) is `w`: a window written from outside (a PolyCC
    /// fusion, a calibration) must map back to the rate that gives it, or a pool that writes
    /// back the largest window would multiply the rate by the window's RTT factor at every
    /// fusion (with `cwnd / srtt` it doubled per fusion and ran away).
    fn rate_for_window(&self, w: Bytes) -> Rate {
        let (rtt, rtts, headroom) = self.window_basis();
        let data = w
            .max(MIN_WINDOW_PACKETS * self.mss)
            .saturating_sub(headroom)
            .max(self.mss);
        Rate::from_bps_f64(Rate::from_bytes_over(data, rtt).as_bps() as f64 / rtts)
    }

    /// Hands completed MIs to the controller and opens the next MI when due.
    fn process(&mut self, now: Time) {
        // Opening an MI can complete an empty predecessor; a few passes settle it.
        for _ in 0..4 {
            let mut realign = false;
            let mut any = false;
            while let Some(s) = self.mq.pop_completed() {
                any = true;
                if s.packets_sent >= MIN_PACKETS_PER_MI
                    && s.send_rate_bps > UNPACED_SEND_RATIO * s.rate.as_bps() as f64
                {
                    self.host_paces = false;
                }
                let path = self.path(now);
                let before = self.ctl.base_rate();
                realign |= self.ctl.on_mi(&s, &path);
                if not_validated(&s, self.mss) {
                    // app_limited.rs: an application-limited MI never raises the rate, lowers it
                    // below an initial window per RTT only on loss, and to what the flow used
                    // only once nothing has been validated for RFC 7661's NVP.
                    let floor = self.restart_rate(&path);
                    let long = sustained(*self.validated_at.get_or_insert(now), now);
                    let (low, high) = (
                        rate_floor(&s, before, floor),
                        rate_limit(&s, before, floor, long),
                    );
                    let rate = self.ctl.base_rate();
                    if rate > high || rate < low {
                        self.ctl.set_rate(rate.clamp(low, high), &path);
                        realign = true;
                    }
                } else if validated(&s, self.mss) {
                    self.validated_at = Some(now);
                }
                self.last = Some(s);
            }
            let due = self.mq.poll_end(now);
            if realign || due {
                self.start_mi(now, realign && !due);
            } else if !any {
                return;
            }
        }
    }

    /// An initial window per smoothed RTT: the least rate an application-limited sender is
    /// taken down to without loss, and where an idle one restarts (`app_limited.rs`).
    fn restart_rate(&self, path: &PathView) -> Rate {
        Rate::from_bytes_over(
            self.initial_cwnd.max(MIN_WINDOW_PACKETS * self.mss),
            path.srtt(),
        )
    }

    fn restart_at(&mut self, now: Time, rate: Rate) {
        let path = self.path(now);
        self.ctl.set_rate(rate.max(Rate(1)), &path);
        self.mq.clear();
        self.start_mi(now, false);
    }
}

impl<C: RateControl> CongestionControl for PccSender<C> {
    fn name(&self) -> &str {
        self.name
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        let validated_at = *self.validated_at.get_or_insert(now);
        if self.in_flight == 0 && sustained(validated_at, now) {
            // app_limited.rs: idle for longer than the non-validated period, the sender
            // restarts from an initial window per RTT, as RFC 7661 reduces its window then.
            let restart = self.restart_rate(&self.path(now)).min(self.ctl.base_rate());
            self.validated_at = Some(now);
            self.restart_at(now, restart);
        }
        self.process(now);
        self.packets_sent += 1;
        self.mq.on_sent(now, sent.pn, sent.bytes);
        self.in_flight = sent.in_flight;
        self.mq.mark_limits(sent.app_limited, self.window_full());
    }

    fn wants_packet_detail(&self) -> bool {
        true
    }

    fn set_intent(&mut self, _now: Time, intent: &Intent) {
        self.ctl.set_intent(intent);
    }

    fn on_packet_acked(&mut self, now: Time, p: &PacketOutcome) {
        self.detail = true;
        self.mq.on_acked(now, p);
    }

    fn on_packet_lost(&mut self, _now: Time, p: &PacketOutcome) {
        self.detail = true;
        self.mq.on_lost(p);
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.in_flight = ack.in_flight;
        if !self.detail && ack.acked_packets > 0 {
            // A transport without per-packet outcomes: the largest acknowledged packet, with
            // the ACK's other packets taken to be the pending ones just below it.
            let sent_time = ack.largest_acked_sent_time;
            self.mq.on_acked_aggregate(
                now,
                &PacketOutcome {
                    pn: ack.largest_acked,
                    bytes: ack.acked_bytes / ack.acked_packets as Bytes,
                    sent_time,
                    rtt: Some(now.saturating_since(sent_time)),
                },
                ack.acked_packets.into(),
            );
        }
        let mut rescaled = false;
        if ack.rtt.has_sample {
            if !self.rtt.has_sample && ack.rtt.smoothed < INITIAL_RATE_RTT {
                // Master's rescaling of the initial rate to the measured RTT.
                let f = INITIAL_RATE_RTT.as_secs_f64() / ack.rtt.smoothed.as_secs_f64().max(1e-6);
                self.ctl.scale_rate(f.min(1e4));
                rescaled = true;
            }
            self.rtt = ack.rtt;
        }
        if rescaled && self.mq.current_plan().is_some() {
            // The sending MI was planned at the unscaled rate for up to 2.2 × INITIAL_RATE_RTT
            // (220 ms, five 40 ms RTTs). Master starts its first measured MI, at the rescaled
            // rate, with the first packet after the first RTT sample (`CreateNewInterval`);
            // here the MI is re-aligned (Allegro §3.1: a rate change closes the current MI).
            self.start_mi(now, true);
        }
        self.process(now);
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        self.in_flight = loss.in_flight;
        if !self.detail && loss.lost_packets > 0 {
            self.mq.on_lost_aggregate(
                &PacketOutcome {
                    pn: loss.largest_lost_pn,
                    bytes: loss.lost_bytes / loss.lost_packets as Bytes,
                    sent_time: loss.largest_lost_sent_time,
                    rtt: None,
                },
                loss.lost_packets.into(),
            );
        }
        self.process(now);
    }

    fn on_timer(&mut self, now: Time) {
        self.process(now);
    }

    fn next_timer(&self) -> Option<Time> {
        self.mq.deadline()
    }

    fn cwnd(&self) -> Bytes {
        let min = MIN_WINDOW_PACKETS * self.mss;
        let (rtt, rtts, headroom) = self.window_basis();
        let w = if self.host_paces || !self.rtt.has_sample {
            self.rate.bytes_in(rtt) as f64 * rtts
        } else {
            // One min-RTT of data: the rate's bandwidth-delay product (module documentation),
            // whole packets: the fraction of one adds a packet after that fraction of sends
            // (a Weyl sequence over the packets sent), so that a window of a few packets
            // still tells r(1 + ε) from r(1 − ε) on average.
            // Integer arithmetic throughout: this runs several times per ACK, and floor /
            // fract are library calls on the baseline x86-64 target.
            let bdp = self.rate.bytes_in(rtt);
            let (whole, rem) = (bdp / self.mss, bdp % self.mss);
            let dither = u64::from((self.packets_sent as u32).wrapping_mul(WEYL_STEP_Q32));
            // dither / 2^32 < rem / mss, without division (u128: any mss fits).
            let extra =
                u64::from(u128::from(dither) * u128::from(self.mss) < u128::from(rem) << 32);
            ((whole + extra) * self.mss) as f64
        };
        let mut w = (w.min(u64::MAX as f64 / 2.0) as Bytes).saturating_add(headroom);
        if !self.rtt.has_sample {
            w = w.max(self.initial_cwnd);
        }
        if let Some(c) = self.clamp {
            w = w.min(c);
        }
        w.max(min)
    }

    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.rate.max(Rate(1)))
    }

    /// A written rate or window starts a new search (module documentation of
    /// [`crate::algos::pcc`]): calibrated on every ACK, PCC never backs off.
    fn accepts_calibration(&self) -> bool {
        false
    }

    fn in_slow_start(&self) -> bool {
        self.ctl.state() == "starting"
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(self.ctl.state());
        t.push("rate_mbps", self.rate.as_mbps_f64());
        self.ctl.telemetry(&mut t);
        let l = self.last.unwrap_or_default();
        let nan_if_none = |v: f64| if self.last.is_some() { v } else { f64::NAN };
        t.push("mi_send_mbps", nan_if_none(l.send_rate_mbps()));
        t.push("mi_loss", nan_if_none(l.loss_rate));
        t.push("mi_rtt_ms", nan_if_none(l.mean_rtt_us / 1e3));
        t.push("mi_rtt_gradient", nan_if_none(l.rtt_gradient));
        t.push("mi_rtt_dev_us", nan_if_none(l.rtt_dev_us));
        t
    }

    fn calibrate(&mut self, now: Time, c: &Calibration) {
        if let Some(clamp) = c.cwnd_clamp {
            self.clamp = clamp.bound();
        }
        let rate = c
            .pacing_rate
            .filter(|r| r.as_bps() > 0)
            .or_else(|| c.cwnd.map(|w| self.rate_for_window(w)));
        if let Some(r) = rate {
            self.restart_at(now, r);
        }
    }

    fn handover_state(&self) -> HandoverState {
        HandoverState {
            cwnd: self.cwnd(),
            ssthresh: None,
            pacing_rate: Some(self.rate.max(Rate(1))),
            bandwidth_estimate: self
                .last
                .filter(|l| l.throughput_bps > 0.0)
                .map(|l| Rate::from_bps_f64(l.throughput_bps)),
            rtt: self.rtt,
            in_flight: 0,
        }
    }

    fn adopt(&mut self, now: Time, from: &HandoverState) {
        if from.rtt.has_sample {
            self.rtt = from.rtt;
        }
        if let Some(c) = from.pacing_rate.or(from.bandwidth_estimate) {
            if c.as_bps() > 0 {
                self.restart_at(now, c);
                return;
            }
        }
        let srtt = self.path(now).srtt();
        let w = from.cwnd.max(MIN_WINDOW_PACKETS * self.mss);
        self.restart_at(now, Rate::from_bytes_over(w, srtt));
    }
}
