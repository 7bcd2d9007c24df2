//! TCP Westwood+ as Linux `net/ipv4/tcp_westwood.c` (Grieco & Mascolo, "Performance evaluation
//! and comparison of Westwood+, New Reno, and Vegas TCP congestion control", CCR 2004).
//!
//! Growth is Reno's. The sender estimates the bandwidth it gets end to end from the bytes ACKed
//! over intervals of one RTT (at least 50 ms) — the "+" of Westwood+: one sample per RTT rather
//! than per ACK, which ACK compression cannot inflate — and low-pass filters the samples twice
//! with gain 1/8. On a congestion event the threshold becomes the pipe that estimate fills,
//! `ssthresh = max(BWE·RTT_min, 2·MSS)`, instead of half the window, so random (non-congestion)
//! losses cost little.
//!
//! Differences from Linux, all deliberate:
//! - Linux halves the window on entering recovery (`tcp_reno_ssthresh`, with PRR) and writes
//!   `cwnd = ssthresh = BWE·RTT_min` when recovery completes (`CA_EVENT_COMPLETE_CWR`). Here the
//!   Westwood+ threshold is applied at the congestion event itself, as the paper's algorithm
//!   states it: `ssthresh = BWE·RTT_min; if cwnd > ssthresh { cwnd = ssthresh }`. A loss
//!   therefore never raises the window; when the estimate exceeds it, slow start climbs back to
//!   the estimated pipe.
//! - The first sampling interval starts at the first ACK. Linux starts it when the connection
//!   is set up, so its first sample includes the round trip before any ACK and reads about half
//!   the rate, which the two filter stages then take tens of RTTs to forget.
//! - Before the first bandwidth sample exists (a loss within the first RTT or so) Linux would use
//!   `BWE = 0`, i.e. a 2-packet window; here Reno's halving is used until there is an estimate.
//! - Byte counting uses the transport's newly-acknowledged bytes; Linux's duplicate-ACK and
//!   delayed-ACK accounting (`westwood_acked_count`) is not needed with SACK/QUIC-style ACKs.
//! - Values are kept in floating point (bytes per second) rather than bytes per jiffy.

use crate::algos::reno;
use crate::algos::reno::{
    reno_family_methods, reno_window_in, AiCredit, RenoFamily, RenoWindow, RENO_BETA,
};
use crate::cc::{CcContext, CongestionControl, HandoverState, Telemetry};
use crate::estimators::rtt::RttSnapshot;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::AckEvent;
use crate::units::{Bytes, Duration, Rate, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "westwood";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "Westwood+ (Linux tcp_westwood.c): Reno growth, ssthresh = bandwidth estimate × min RTT on loss";

/// tcp_westwood.c TCP_WESTWOOD_RTT_MIN (HZ/20): a bandwidth sample spans at least 50 ms, so that
/// short RTTs do not produce noisy per-RTT samples.
pub const MIN_SAMPLE_INTERVAL: Duration = Duration::from_millis(50);
/// tcp_westwood.c westwood_do_filter: `new = (7·old + sample) / 8`, applied twice (`bw_ns_est`,
/// then `bw_est`).
pub const FILTER_GAIN: f64 = 1.0 / 8.0;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct WestwoodParams {
    /// Shortest bandwidth-sampling interval, in milliseconds.
    #[serde(default = "default_min_interval_ms")]
    min_interval_ms: f64,
}

fn default_min_interval_ms() -> f64 {
    MIN_SAMPLE_INTERVAL.as_millis_f64()
}

impl ParamTable for WestwoodParams {
    // Zero samples once per RTT; 10 s only catches typos.
    const PARAMS: &'static [ParamSpec] = &[ParamSpec::new(
        "min_interval_ms",
        Kind::Number,
        "shortest bandwidth-sampling interval (an interval lasts one RTT but no less), ms",
        "Linux tcp_westwood.c TCP_WESTWOOD_RTT_MIN (HZ/20)",
    )
    .range(0.0, 10_000.0)];
}

/// Builds Westwood+ from scenario parameters (`min_interval_ms`), checking it against the
/// declared schema.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: WestwoodParams = params::parse(NAME, p)?;
    Ok(Box::new(Westwood::new(
        ctx,
        WestwoodConfig {
            min_sample_interval: Duration::from_secs_f64(params.min_interval_ms / 1e3),
        },
    )))
}

/// Registers this module's controllers.
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<WestwoodParams>(), build);
}

/// Tunables of [`Westwood`], validated by [`build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WestwoodConfig {
    /// Shortest bandwidth-sampling interval; an interval lasts one RTT but no less than this
    /// ([`MIN_SAMPLE_INTERVAL`], Linux's TCP_WESTWOOD_RTT_MIN).
    pub min_sample_interval: Duration,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig {
            min_sample_interval: MIN_SAMPLE_INTERVAL,
        }
    }
}

/// Westwood+ for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Westwood {
    cfg: WestwoodConfig,
    reno: RenoWindow,
    /// Reno's congestion-avoidance growth: one MSS per window of acked bytes.
    ca_credit: AiCredit,
    /// `rtt_win_sx`: start of the bandwidth-sampling interval in progress; `None` until the
    /// first ACK.
    win_start: Option<Time>,
    /// `bk`: bytes acknowledged since `win_start`.
    win_acked: Bytes,
    /// `rtt`: the latest RTT sample, the length of a sampling interval.
    latest_rtt: Option<Duration>,
    /// `rtt_min`; `None` until the first sample and again after persistent congestion
    /// (`reset_rtt_min` on CA_EVENT_LOSS).
    rtt_min: Option<Duration>,
    /// `bw_ns_est` and `bw_est` in bytes per second; zero while empty.
    bw_ns_est: f64,
    bw_est: f64,
    /// The transport's RTT state at the last ACK, for hand-over.
    rtt: RttSnapshot,
}

impl Westwood {
    /// Westwood+ in slow start from the context's initial window, with no bandwidth estimate
    /// (a loss halves the window until the first sample).
    pub fn new(ctx: &CcContext, cfg: WestwoodConfig) -> Self {
        Westwood {
            cfg,
            reno: RenoWindow::new(ctx),
            ca_credit: AiCredit::default(),
            win_start: None,
            win_acked: 0,
            latest_rtt: None,
            rtt_min: None,
            bw_ns_est: 0.0,
            bw_est: 0.0,
            rtt: RttSnapshot::default(),
        }
    }

    /// The filtered bandwidth estimate, once there is one.
    pub fn bandwidth_estimate(&self) -> Option<Rate> {
        (self.bw_est > 0.0).then(|| Rate::from_bps_f64(self.bw_est * 8.0))
    }

    /// westwood_filter: the first sample fills both stages; later ones pass through both.
    fn filter(&mut self, sample: f64) {
        if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est += FILTER_GAIN * (sample - self.bw_ns_est);
            self.bw_est += FILTER_GAIN * (self.bw_ns_est - self.bw_est);
        }
    }

    /// westwood_update_window: close the sampling interval once it is longer than the latest
    /// RTT and the 50 ms floor.
    fn update_window(&mut self, now: Time) {
        let (Some(rtt), Some(start)) = (self.latest_rtt, self.win_start) else {
            return;
        };
        let delta = now - start;
        if delta > rtt.max(self.cfg.min_sample_interval) {
            self.filter(self.win_acked as f64 / delta.as_secs_f64());
            self.win_acked = 0;
            self.win_start = Some(now);
        }
    }

    /// tcp_westwood_bw_rttmin: the pipe the estimate fills, in bytes; `None` without an estimate.
    fn bw_rttmin(&self) -> Option<Bytes> {
        let rtt_min = self.rtt_min?;
        if self.bw_est <= 0.0 {
            return None;
        }
        let bytes = (self.bw_est * rtt_min.as_secs_f64()).min(u64::MAX as f64) as Bytes;
        Some(bytes.max(self.reno.min_window()))
    }

    /// Reno's halving while there is no bandwidth estimate yet.
    fn loss_threshold(&self) -> Bytes {
        self.bw_rttmin()
            .unwrap_or(((self.reno.cwnd as f64 * RENO_BETA) as Bytes).max(self.reno.min_window()))
    }
}

impl RenoFamily for Westwood {
    reno_window_in!(reno);

    fn reset_growth(&mut self) {
        self.ca_credit.reset();
    }

    /// The paper's rule: the threshold from the estimate, and the window never raised by it.
    fn on_congestion_event(&mut self, _now: Time) {
        self.reno.ssthresh = self.loss_threshold();
        self.reno.cwnd = self.reno.cwnd.min(self.reno.ssthresh);
    }

    /// The paper's timeout rule (Linux CA_EVENT_LOSS): threshold from the estimate (before the
    /// window collapses), and RTT_min re-learnt from the next sample.
    fn on_persistent_congestion(&mut self, _now: Time) {
        self.reno.ssthresh = self.loss_threshold();
        self.rtt_min = None;
    }

    fn handover_rtt(&self) -> RttSnapshot {
        self.rtt
    }

    fn handover_bandwidth(&self) -> Option<Rate> {
        self.bandwidth_estimate()
    }

    fn on_adopt(&mut self, now: Time, from: &HandoverState) {
        if from.rtt.has_sample {
            self.rtt = from.rtt;
            self.latest_rtt = Some(from.rtt.latest.max(Duration(1)));
            self.rtt_min = Some(from.rtt.min.max(Duration(1)));
        }
        // A predecessor's bandwidth estimate seeds both filter stages, as a first sample would.
        if let Some(bw) = from.bandwidth_estimate.filter(|b| b.as_bps() > 0) {
            self.bw_ns_est = bw.as_bytes_per_sec_f64();
            self.bw_est = self.bw_ns_est;
        }
        self.win_start = Some(now);
        self.win_acked = 0;
    }
}

impl CongestionControl for Westwood {
    reno_family_methods!();

    fn name(&self) -> &str {
        NAME
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.rtt = ack.rtt;
        if let Some(s) = ack.min_rtt_sample {
            let s = s.max(Duration(1));
            self.latest_rtt = Some(s);
            self.rtt_min = Some(self.rtt_min.map_or(s, |m| m.min(s)));
        }
        // The estimate counts every ACK, in recovery too (tcp_westwood_ack runs in all states).
        // The first ACK only opens the first interval: its bytes left before the interval did.
        if self.win_start.is_none() {
            self.win_start = Some(now);
        } else {
            self.update_window(now);
            self.win_acked = self.win_acked.saturating_add(ack.acked_bytes);
        }

        if self.reno.recovery.follow(ack) || ack.app_limited {
            return;
        }
        // tcp_reno_cong_avoid.
        if self.reno.in_slow_start() {
            self.reno.slow_start(ack.acked_bytes);
        } else {
            self.ca_credit.on_ack(&mut self.reno, ack.acked_bytes);
        }
        self.reno.apply_clamp();
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = self.reno.telemetry();
        t.push("bw_est_mbps", self.bw_est * 8.0 / 1e6);
        t.push("bw_ns_est_mbps", self.bw_ns_est * 8.0 / 1e6);
        t.push("rtt_min_ms", reno::millis_or_nan(self.rtt_min));
        t.push(
            "bw_rttmin_bytes",
            self.bw_rttmin().map_or(f64::NAN, |b| b as f64),
        );
        t.push("sample_acked_bytes", self.win_acked as f64);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{
        ack, assert_params, clamp_window, loss, persistent_congestion, start_in_ca, Flow,
    };

    const MSS: Bytes = 1000;

    fn westwood() -> Westwood {
        Westwood::new(&CcContext::new(MSS), WestwoodConfig::default())
    }

    /// One ACK of `bytes` at `now` with RTT sample `rtt`.
    fn ack_at(cc: &mut Westwood, now: Time, pn: u64, bytes: Bytes, rtt: Duration) {
        let sent = now - rtt;
        cc.on_ack(now, &ack(pn, sent, bytes, MSS, rtt, RttSnapshot::default()));
    }

    #[test]
    fn filter_takes_one_sample_per_rtt_and_smooths_twice() {
        let mut cc = westwood();
        let rtt = Duration::from_millis(100);
        let ms = |m: u64| Time::ZERO + Duration::from_millis(m);
        // The first ACK opens the first interval; ten more (10 kB) arrive by 200 ms, and the
        // ACK at 201 ms closes it (the interval must be longer than the 100 ms RTT).
        ack_at(&mut cc, ms(100), 0, MSS, rtt);
        for i in 1..=10 {
            ack_at(&mut cc, ms(100 + 10 * i), i, MSS, rtt);
        }
        assert_eq!(cc.bandwidth_estimate(), None);
        ack_at(&mut cc, ms(201), 11, MSS, rtt);
        // The first sample fills both stages: 10 000 B / 0.101 s.
        let first = 10_000.0 / 0.101;
        assert!((cc.bw_est - first).abs() < 1e-6 && cc.bw_ns_est == cc.bw_est);
        // The closing ACK's 1 kB belongs to the next interval; with one more it holds 2 kB
        // when the ACK at 302 ms closes it.
        ack_at(&mut cc, ms(250), 12, MSS, rtt);
        ack_at(&mut cc, ms(302), 13, MSS, rtt);
        let sample = 2_000.0 / 0.101;
        let ns = first + (sample - first) / 8.0;
        let est = first + (ns - first) / 8.0;
        assert!((cc.bw_ns_est - ns).abs() < 1e-6, "{} vs {ns}", cc.bw_ns_est);
        assert!((cc.bw_est - est).abs() < 1e-6, "{} vs {est}", cc.bw_est);
    }

    #[test]
    fn short_rtts_sample_over_at_least_50_ms() {
        let mut cc = westwood();
        let rtt = Duration::from_millis(10);
        // Opened at 1 ms; 50 ACKs by 51 ms are not yet more than 50 ms.
        for i in 0..=50 {
            ack_at(
                &mut cc,
                Time::ZERO + Duration::from_millis(i + 1),
                i,
                MSS,
                rtt,
            );
        }
        assert_eq!(cc.bandwidth_estimate(), None);
        ack_at(
            &mut cc,
            Time::ZERO + Duration::from_millis(52),
            51,
            MSS,
            rtt,
        );
        let expected = 50_000.0 / 0.051;
        assert!((cc.bw_est - expected).abs() < 1e-6);
    }

    /// A Westwood+ whose window is held at `pkts` packets by a clamp, on `flow`.
    fn clamped(flow: &Flow, pkts: u64) -> Westwood {
        let mut cc = westwood();
        start_in_ca(&mut cc, flow.now, pkts * MSS);
        clamp_window(&mut cc, flow.now, Some(pkts * MSS));
        cc
    }

    #[test]
    fn loss_sets_ssthresh_to_estimate_times_min_rtt() {
        // No queue: the estimate converges to cwnd/RTT, so BWE·RTT_min is the window itself and
        // a loss costs (almost) nothing.
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = clamped(&flow, 50);
        flow.run_rtts(&mut cc, 60);
        assert!((cc.bw_est * 8.0 / 1e6 - 4.0).abs() < 0.01, "{}", cc.bw_est);
        let pipe = cc.bw_rttmin().expect("estimate");
        assert!((49_900..=50_100).contains(&pipe), "pipe {pipe}");
        flow.lose_fresh(&mut cc);
        assert_eq!(cc.ssthresh(), Some(pipe));
        assert_eq!(cc.cwnd(), pipe);

        // 60 packets over a path whose RTT has grown from 100 to 150 ms: 20 packets are queued,
        // the estimate reads 60 packets per 150 ms (to 0.25 % once the filters have settled), and
        // the loss leaves the 40 that fill the path without the queue.
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = clamped(&flow, 60);
        flow.run_rtts(&mut cc, 2);
        flow.rtt = Duration::from_millis(150);
        flow.run_rtts(&mut cc, 150);
        flow.lose_fresh(&mut cc);
        let cwnd = cc.cwnd();
        assert!((39_900..=40_100).contains(&cwnd), "cwnd {cwnd}");
        assert_eq!(cc.ssthresh(), Some(cwnd));
    }

    #[test]
    fn one_reduction_per_epoch_and_reno_halving_without_an_estimate() {
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = westwood();
        flow.fill(&mut cc);
        // A loss before the first sample: Reno's halving.
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), 5 * MSS);
        assert_eq!(cc.ssthresh(), Some(5 * MSS));
        assert_eq!(cc.telemetry().state, "recovery");
        // More losses of packets sent before the reduction: nothing more.
        assert!(flow.lose_oldest(&mut cc));
        cc.on_loss(flow.now, &loss(0, Time::ZERO, MSS, MSS));
        assert_eq!(cc.cwnd(), 5 * MSS);
    }

    #[test]
    fn persistent_congestion_collapses_and_relearns_min_rtt() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = westwood();
        flow.run_rtts(&mut cc, 5);
        let pipe = cc.bw_rttmin().expect("estimate");
        cc.on_loss(flow.now, &persistent_congestion(1_000, flow.now, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
        assert_eq!(cc.ssthresh(), Some(pipe));
        assert_eq!(cc.rtt_min, None);
        ack_at(&mut cc, flow.now, 1_001, MSS, Duration::from_millis(300));
        assert_eq!(cc.rtt_min, Some(Duration::from_millis(300)));
    }

    #[test]
    fn random_losses_cost_westwood_far_less_than_reno() {
        // Closed loop without a bottleneck, one packet lost every 4 RTTs. Reno halves each time
        // and settles near 8 packets; Westwood+ sets the window to what it was delivering, so
        // it keeps growing.
        fn run(cc: &mut dyn CongestionControl) -> Bytes {
            let mut flow = Flow::new(MSS, Duration::from_millis(100));
            flow.run_rtts(cc, 3);
            for _ in 0..50 {
                flow.lose_fresh(cc);
                flow.run_rtts(cc, 4);
            }
            cc.cwnd()
        }
        let reno = run(&mut crate::algos::newreno::NewReno::new(
            &CcContext::new(MSS),
            0.5,
        ));
        let ww = run(&mut westwood());
        assert!(reno <= 10 * MSS, "reno {reno}");
        assert!(ww >= 3 * reno, "westwood {ww} vs reno {reno}");
    }

    #[test]
    fn adopt_seeds_the_estimate_and_min_rtt() {
        let mut cc = westwood();
        let rtt = RttSnapshot {
            latest: Duration::from_millis(60),
            smoothed: Duration::from_millis(60),
            var: Duration::from_millis(5),
            min: Duration::from_millis(50),
            has_sample: true,
        };
        cc.adopt(
            Time::ZERO,
            &HandoverState {
                cwnd: 80 * MSS,
                ssthresh: Some(70 * MSS),
                bandwidth_estimate: Some(Rate::from_mbps(8)),
                rtt,
                ..HandoverState::default()
            },
        );
        assert_eq!(cc.cwnd(), 80 * MSS);
        // 1 MB/s × 50 ms.
        assert_eq!(cc.bw_rttmin(), Some(50_000));
        let h = cc.handover_state();
        assert_eq!(h.bandwidth_estimate, Some(Rate::from_mbps(8)));
        assert_eq!(h.rtt, rtt);
    }

    #[test]
    fn params_are_validated() {
        use serde_json::json;
        assert_params(
            json!({"name": NAME, "min_interval_ms": 20}),
            &[
                json!({"name": NAME, "min_interval_ms": -1}),
                json!({"name": NAME, "beta": 0.5}),
            ],
        );
    }
}
