//! PCC Allegro's control algorithm (Dong et al., NSDI'15, §3.2): a starting state that doubles
//! the rate every MI, decision making with randomized controlled trials (RCTs), and rate
//! adjusting with accelerating steps.
//!
//! - Starting: the rate doubles every MI (MIs are pipelined: each one is planned before the
//!   previous results are in). When an MI's utility is below its predecessor's, the rate returns
//!   to the predecessor's rate and decision making begins.
//! - Decision making: four MIs in two pairs at r(1 + ε) and r(1 − ε), random order within each
//!   pair, then r until all four results are in. If the higher rate wins both pairs the rate
//!   becomes r(1 + ε) (the lower: r(1 − ε)) and rate adjusting begins; otherwise the rate stays
//!   and ε grows by ε_min up to ε_max. ε returns to ε_min after a conclusive decision.
//! - Rate adjusting: r_n = r_{n−1}·(1 + n·ε_min·dir) each MI from r_0, the decided rate. When
//!   U(r_n) < U(r_{n−1}) the rate reverts to r_{n−1} and decision making begins.
//!
//! Choices where the paper is silent: the first rate is the initial window per RTT (10·mss, as
//! TCP starts) instead of the paper's 2·mss/RTT, which with 10-packet MIs would spend seconds in
//! the first doublings; the floor is 2·mss per smoothed RTT (the paper's starting rate). The
//! PCC-Uspace variant (5 % fixed probes, 3 pairs) is not what is built here; the paper is.

use crate::algos::pcc::monitor::{interval_length, MiPlan, MiStats, MIN_PACKETS_PER_MI};
use crate::algos::pcc::rng::SplitMix64;
use crate::algos::pcc::sender::{PathView, RateControl};
use crate::algos::pcc::utility::{Utility, UtilityInput};
use crate::cc::Telemetry;
use crate::units::{Duration, Rate};

/// Allegro §3.2: ε_min, the first trial step and the increment of ε after an inconclusive
/// decision.
pub const EPS_MIN: f64 = 0.01;
/// Allegro §3.2: ε_max, the largest trial step.
pub const EPS_MAX: f64 = 0.05;
/// Allegro §3.1: an MI lasts a uniform-random [1.7, 2.2] RTTs (and at least 10 packets).
pub const MI_RTTS_LO: f64 = 1.7;
/// Allegro §3.1: the upper end of the MI length, in RTTs; see [`MI_RTTS_LO`].
pub const MI_RTTS_HI: f64 = 2.2;
/// The weight of the first start-up MI's utility in the comparison with the second, from the
/// NSDI'15 code (modong/pcc, `cc.h`, `onMonitorEnds`: the utility of monitor 0 is halved while
/// starting), which the paper does not describe. The first doubling then stands unless the doubled
/// rate's utility is below half the first's; at 50 % random loss an MI of a dozen packets measures
/// its loss to about ±14 %, and without the weight 4 of 20 start-ups stopped at the first
/// comparison (VALIDATION.md, the authors' code with the loss-resilient utility).
pub const FIRST_MI_WEIGHT: f64 = 0.5;
/// Allegro §3.2: two pairs of trials per decision.
const TRIALS: usize = 4;
/// Pipelining bound: while starting or adjusting, at most this many useful MIs may await their
/// results; further MIs hold the rate. Results normally come back within one or two MIs, so this
/// only stops a runaway when feedback stalls (a transport without per-packet detail, a path
/// that went silent).
const MAX_UNJUDGED: u64 = 3;
/// Upper bound on any rate (10 Tbit/s) so that doubling never overflows.
pub(crate) const MAX_RATE_BPS: f64 = 1e13;

/// Allegro's parameters (registry keys of the same names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AllegroConfig {
    /// ε_min ([`EPS_MIN`]).
    pub eps_min: f64,
    /// ε_max ([`EPS_MAX`]).
    pub eps_max: f64,
    /// An MI lasts U[mi_rtts_min, mi_rtts_max] smoothed RTTs (the paper's T_m; §4.2.2 varies it
    /// from 4.8 down to 1 RTT for Fig. 16).
    pub mi_rtts_min: f64,
    /// See `mi_rtts_min`.
    pub mi_rtts_max: f64,
    /// The first start-up MI's utility is multiplied by this before the second MI's is compared
    /// with it ([`FIRST_MI_WEIGHT`]; 1 is the paper's rule as written).
    pub first_mi_weight: f64,
    /// Seed of the trial orders and MI lengths.
    pub seed: u64,
}

impl Default for AllegroConfig {
    fn default() -> Self {
        AllegroConfig {
            eps_min: EPS_MIN,
            eps_max: EPS_MAX,
            mi_rtts_min: MI_RTTS_LO,
            mi_rtts_max: MI_RTTS_HI,
            first_mi_weight: FIRST_MI_WEIGHT,
            seed: 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    /// Doubling; `prev` is the last judged MI's (rate, utility).
    Starting { prev: Option<(Rate, f64)> },
    /// RCT: the sign of each trial and the utilities that have come back.
    Deciding {
        signs: [f64; TRIALS],
        results: [Option<f64>; TRIALS],
    },
    /// Rate adjusting in direction `dir`; `prev` is the last judged step's (rate, utility).
    Adjusting { dir: f64, prev: Option<(Rate, f64)> },
}

/// Allegro's rate control; see the module documentation.
#[derive(Debug)]
pub(crate) struct AllegroControl {
    cfg: AllegroConfig,
    utility: Box<dyn Utility>,
    rng: SplitMix64,
    state: State,
    /// The rate decisions are centred on (the last planned rate while starting or adjusting).
    rate: Rate,
    eps: f64,
    /// Experiment number; results of earlier experiments are ignored.
    epoch: u64,
    /// Trials (or steps) planned in this experiment.
    planned: u64,
    /// Rate of the last planned step (adjusting) or MI (starting).
    last_planned: Rate,
    /// Useful MIs of this experiment whose results came back.
    judged: u64,
    floor: Rate,
    prev_rtt_us: f64,
    last_utility: f64,
    /// A rate given from outside as the first (`with_fixed_start`): the first RTT sample does
    /// not rescale it.
    fixed_start: bool,
}

fn tag(epoch: u64, idx: u64) -> u64 {
    (epoch << 20) | (idx & 0xf_ffff)
}

fn clamp_rate(r: f64, floor: Rate) -> Rate {
    Rate::from_bps_f64(r.clamp(floor.as_bps().max(1) as f64, MAX_RATE_BPS))
}

impl AllegroControl {
    pub fn new(cfg: AllegroConfig, utility: Box<dyn Utility>, initial_rate: Rate) -> Self {
        AllegroControl {
            cfg,
            utility,
            rng: SplitMix64::new(cfg.seed),
            state: State::Starting { prev: None },
            rate: initial_rate.max(Rate(1)),
            eps: cfg.eps_min,
            epoch: 0,
            planned: 0,
            last_planned: initial_rate.max(Rate(1)),
            judged: 0,
            floor: Rate(1),
            prev_rtt_us: f64::NAN,
            last_utility: f64::NAN,
            fixed_start: false,
        }
    }

    /// Starts at `rate` with randomized trials around it, without the doubling start: the
    /// authors' incast sender (`cc_incast.h`, NSDI'15 code) begins so, at 143 Mbit/s.
    pub fn with_fixed_start(cfg: AllegroConfig, utility: Box<dyn Utility>, rate: Rate) -> Self {
        let mut c = Self::new(cfg, utility, rate);
        c.enter_deciding(rate);
        c.fixed_start = true;
        c
    }

    /// The current trial step ε.
    #[cfg(test)]
    pub fn epsilon(&self) -> f64 {
        self.eps
    }

    fn new_epoch(&mut self) {
        self.epoch += 1;
        self.planned = 0;
        self.judged = 0;
    }

    fn enter_deciding(&mut self, rate: Rate) {
        self.rate = clamp_rate(rate.as_bps() as f64, self.floor);
        self.new_epoch();
        let mut signs = [0.0; TRIALS];
        for pair in 0..TRIALS / 2 {
            let first = if self.rng.coin() { 1.0 } else { -1.0 };
            signs[2 * pair] = first;
            signs[2 * pair + 1] = -first;
        }
        self.state = State::Deciding {
            signs,
            results: [None; TRIALS],
        };
    }

    fn enter_adjusting(&mut self, rate: Rate, dir: f64) {
        self.rate = clamp_rate(rate.as_bps() as f64, self.floor);
        self.last_planned = self.rate;
        self.new_epoch();
        self.state = State::Adjusting { dir, prev: None };
    }

    /// The RCT verdict: +1 when the higher rate won both pairs, −1 when the lower did, 0 when
    /// inconclusive.
    pub fn rct_verdict(signs: &[f64; TRIALS], utilities: &[f64; TRIALS]) -> f64 {
        let mut up_wins = 0;
        let mut down_wins = 0;
        for pair in 0..TRIALS / 2 {
            let (a, b) = (2 * pair, 2 * pair + 1);
            let (u_up, u_down) = if signs[a] > 0.0 {
                (utilities[a], utilities[b])
            } else {
                (utilities[b], utilities[a])
            };
            if u_up > u_down {
                up_wins += 1;
            } else if u_down > u_up {
                down_wins += 1;
            }
        }
        if up_wins == TRIALS / 2 {
            1.0
        } else if down_wins == TRIALS / 2 {
            -1.0
        } else {
            0.0
        }
    }
}

impl RateControl for AllegroControl {
    fn next_plan(&mut self, path: &PathView) -> MiPlan {
        self.floor = Rate::from_bytes_over(2 * path.mss, path.srtt()).max(Rate(1));
        let pipelined = matches!(self.state, State::Starting { .. } | State::Adjusting { .. });
        if pipelined && self.planned >= self.judged + MAX_UNJUDGED {
            return MiPlan {
                rate: self.rate,
                useful: false,
                tag: tag(self.epoch, 0xf_ffff),
            };
        }
        let idx = self.planned;
        self.planned += 1;
        let t = tag(self.epoch, idx);
        match &self.state {
            State::Starting { .. } => {
                let r = if idx == 0 {
                    self.rate
                } else {
                    clamp_rate(self.last_planned.as_bps() as f64 * 2.0, self.floor)
                };
                self.last_planned = r;
                self.rate = r;
                MiPlan {
                    rate: r,
                    useful: true,
                    tag: t,
                }
            }
            State::Deciding { signs, .. } => {
                if (idx as usize) < TRIALS {
                    let r = self.rate.as_bps() as f64 * (1.0 + signs[idx as usize] * self.eps);
                    MiPlan {
                        rate: clamp_rate(r, self.floor),
                        useful: true,
                        tag: t,
                    }
                } else {
                    MiPlan {
                        rate: self.rate,
                        useful: false,
                        tag: t,
                    }
                }
            }
            State::Adjusting { dir, .. } => {
                let r = if idx == 0 {
                    self.rate
                } else {
                    let step = 1.0 + idx as f64 * self.cfg.eps_min * dir;
                    clamp_rate(self.last_planned.as_bps() as f64 * step, self.floor)
                };
                self.last_planned = r;
                self.rate = r;
                MiPlan {
                    rate: r,
                    useful: true,
                    tag: t,
                }
            }
        }
    }

    fn mi_length(&mut self, plan: &MiPlan, path: &PathView) -> Duration {
        let k = self.rng.uniform(self.cfg.mi_rtts_min, self.cfg.mi_rtts_max);
        interval_length(
            plan.rate,
            path.mss,
            MIN_PACKETS_PER_MI,
            path.srtt().mul_f64(k),
        )
    }

    fn on_mi(&mut self, s: &MiStats, _path: &PathView) -> bool {
        let input = UtilityInput::from_stats(s, self.prev_rtt_us);
        if s.mean_rtt_us.is_finite() {
            self.prev_rtt_us = s.mean_rtt_us;
        }
        if !s.useful || s.tag >> 20 != self.epoch {
            return false;
        }
        let idx = (s.tag & 0xf_ffff) as usize;
        self.judged += 1;
        if s.packets_sent == 0 {
            // Nothing was sent (the application was idle): the experiment learned nothing.
            let r = match self.state {
                State::Starting { prev: Some((r, _)) } => r,
                _ => self.rate,
            };
            self.enter_deciding(r);
            return true;
        }
        let u = self.utility.utility(&input);
        self.last_utility = u;
        match &mut self.state {
            State::Starting { prev } => {
                if let Some((r_prev, u_prev)) = *prev {
                    if u < u_prev {
                        self.enter_deciding(r_prev);
                        return true;
                    }
                }
                let u = if idx == 0 {
                    u * self.cfg.first_mi_weight
                } else {
                    u
                };
                *prev = Some((s.rate, u));
                false
            }
            State::Deciding { signs, results } => {
                if idx >= TRIALS {
                    return false;
                }
                results[idx] = Some(u);
                if results.iter().any(Option::is_none) {
                    return false;
                }
                let us = results.map(|x| x.unwrap_or(0.0));
                let dir = AllegroControl::rct_verdict(signs, &us);
                if dir == 0.0 {
                    self.eps = (self.eps + self.cfg.eps_min).min(self.cfg.eps_max);
                    let r = self.rate;
                    self.enter_deciding(r);
                } else {
                    let r = self.rate.as_bps() as f64 * (1.0 + dir * self.eps);
                    self.eps = self.cfg.eps_min;
                    self.enter_adjusting(Rate::from_bps_f64(r), dir);
                }
                true
            }
            State::Adjusting { prev, .. } => {
                if let Some((r_prev, u_prev)) = *prev {
                    if u < u_prev {
                        self.enter_deciding(r_prev);
                        return true;
                    }
                }
                *prev = Some((s.rate, u));
                false
            }
        }
    }

    fn base_rate(&self) -> Rate {
        self.rate
    }

    fn scale_rate(&mut self, factor: f64) {
        if self.fixed_start {
            return;
        }
        self.rate = clamp_rate(self.rate.as_bps() as f64 * factor, Rate(1));
        self.last_planned = self.rate;
        if matches!(self.state, State::Starting { .. }) {
            // The doubling starts over from the rescaled rate (trait documentation).
            self.new_epoch();
            self.state = State::Starting { prev: None };
        }
    }

    fn set_rate(&mut self, rate: Rate, _path: &PathView) {
        self.eps = self.cfg.eps_min;
        self.enter_deciding(rate);
    }

    fn state(&self) -> &'static str {
        match self.state {
            State::Starting { .. } => "starting",
            State::Deciding { .. } => "decision_making",
            State::Adjusting { .. } => "rate_adjusting",
        }
    }

    fn telemetry(&self, t: &mut Telemetry) {
        t.push("base_rate_mbps", self.rate.as_mbps_f64());
        t.push("epsilon", self.eps);
        t.push("utility", self.last_utility);
        t.push(
            "direction",
            match self.state {
                State::Adjusting { dir, .. } => dir,
                _ => 0.0,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::pcc::utility::UtilityInput;

    /// A utility scripted on the sending rate: −(x − peak)², or constant when `peak` is NaN.
    #[derive(Debug)]
    struct Peak(f64);
    impl Utility for Peak {
        fn name(&self) -> &str {
            "peak"
        }
        fn utility(&self, m: &UtilityInput) -> f64 {
            if self.0.is_nan() {
                1.0
            } else {
                -(m.send_rate_mbps - self.0).powi(2)
            }
        }
    }

    fn path() -> PathView {
        super::super::test_path()
    }

    fn result(p: &MiPlan) -> MiStats {
        MiStats {
            tag: p.tag,
            useful: p.useful,
            rate: p.rate,
            packets_sent: 10,
            send_rate_bps: p.rate.as_bps() as f64,
            ..MiStats::default()
        }
    }

    fn control(peak: f64, mbps: u64) -> AllegroControl {
        AllegroControl::new(
            AllegroConfig::default(),
            Box::new(Peak(peak)),
            Rate::from_mbps(mbps),
        )
    }

    #[test]
    fn rct_needs_both_pairs_to_agree() {
        let signs = [1.0, -1.0, -1.0, 1.0];
        // Pair 1: U+ = 5 > U− = 4; pair 2 (lower first): U− = 3 < U+ = 6 → up.
        assert_eq!(
            AllegroControl::rct_verdict(&signs, &[5.0, 4.0, 3.0, 6.0]),
            1.0
        );
        assert_eq!(
            AllegroControl::rct_verdict(&signs, &[4.0, 5.0, 6.0, 3.0]),
            -1.0
        );
        // Split: inconclusive; ties win nothing.
        assert_eq!(
            AllegroControl::rct_verdict(&signs, &[5.0, 4.0, 6.0, 3.0]),
            0.0
        );
        assert_eq!(
            AllegroControl::rct_verdict(&signs, &[5.0, 5.0, 3.0, 6.0]),
            0.0
        );
    }

    #[test]
    fn a_fixed_start_trials_around_its_rate_and_keeps_it_through_the_first_rtt_sample() {
        let mut c = AllegroControl::with_fixed_start(
            AllegroConfig::default(),
            Box::new(Peak(150.0)),
            Rate::from_mbps(143),
        );
        assert_eq!(c.state(), "decision_making");
        // The sender rescales a default start by 100 ms / RTT at the first sample; not this one.
        c.scale_rate(1000.0);
        let p = path();
        let rates: Vec<f64> = (0..TRIALS)
            .map(|_| c.next_plan(&p).rate.as_bps() as f64 / 1e6)
            .collect();
        // Four trials at 143 Mbit/s ± eps_min (1 %), two of each sign.
        for r in &rates {
            assert!(((r - 143.0).abs() - 1.43).abs() < 1e-3, "{rates:?}");
        }
        assert_eq!(rates.iter().filter(|&&r| r > 143.0).count(), 2, "{rates:?}");
        // A default start doubles instead.
        let mut d = control(150.0, 143);
        assert_eq!(d.state(), "starting");
        assert_eq!(d.next_plan(&p).rate.as_bps(), 143_000_000);
        assert_eq!(d.next_plan(&p).rate.as_bps(), 286_000_000);
    }

    /// Utility 10 at 10 Mbit/s, 7 at 20, 3 above: the second MI measures a worse utility than
    /// the first, but not half as good.
    #[derive(Debug)]
    struct Falling;
    impl Utility for Falling {
        fn name(&self) -> &str {
            "falling"
        }
        fn utility(&self, m: &UtilityInput) -> f64 {
            match m.send_rate_mbps.round() as u64 {
                10 => 10.0,
                20 => 7.0,
                _ => 3.0,
            }
        }
    }

    #[test]
    fn the_first_start_up_mi_counts_half_as_the_authors_code_weighs_it() {
        let p = path();
        let run = |weight: f64| {
            let cfg = AllegroConfig {
                first_mi_weight: weight,
                ..AllegroConfig::default()
            };
            let mut c = AllegroControl::new(cfg, Box::new(Falling), Rate::from_mbps(10));
            let plans: Vec<MiPlan> = (0..3).map(|_| c.next_plan(&p)).collect();
            for plan in &plans {
                if c.on_mi(&result(plan), &p) {
                    break;
                }
            }
            (c.state(), c.base_rate().as_bps() / 1_000_000)
        };
        // Weighted: 7 > 10 / 2, so the doubling to 20 stands; 3 < 7 (unweighted from the second
        // MI on) ends it there.
        assert_eq!(run(FIRST_MI_WEIGHT), ("decision_making", 20));
        // The paper's rule as written: 7 < 10 ends the start at the first rate.
        assert_eq!(run(1.0), ("decision_making", 10));
    }

    #[test]
    fn starting_doubles_then_returns_to_the_better_rate() {
        let mut c = control(35.0, 10);
        let p = path();
        let plans: Vec<MiPlan> = (0..3).map(|_| c.next_plan(&p)).collect();
        let rates: Vec<u64> = plans.iter().map(|x| x.rate.as_bps() / 1_000_000).collect();
        assert_eq!(rates, [10, 20, 40]);
        assert!(!c.on_mi(&result(&plans[0]), &p)); // u(10) = −625
        assert!(!c.on_mi(&result(&plans[1]), &p)); // u(20) = −225: up
                                                   // u(40) = −25 > −225: still up; the 80 Mbit/s MI then loses.
        assert!(!c.on_mi(&result(&plans[2]), &p));
        let p3 = c.next_plan(&p);
        assert_eq!(p3.rate, Rate::from_mbps(80));
        assert!(c.on_mi(&result(&p3), &p));
        assert_eq!(c.state(), "decision_making");
        assert_eq!(c.base_rate(), Rate::from_mbps(40));
    }

    /// Runs one RCT round at the controller's base rate and returns the four trial rates.
    fn rct_round(c: &mut AllegroControl) -> Vec<Rate> {
        let p = path();
        let plans: Vec<MiPlan> = (0..4).map(|_| c.next_plan(&p)).collect();
        let filler = c.next_plan(&p);
        assert!(!filler.useful);
        assert_eq!(filler.rate, c.base_rate());
        for x in &plans {
            c.on_mi(&result(x), &p);
        }
        plans.iter().map(|x| x.rate).collect()
    }

    #[test]
    fn epsilon_grows_on_inconclusive_trials_up_to_its_maximum() {
        let mut c = control(f64::NAN, 10);
        c.set_rate(Rate::from_mbps(100), &path());
        let mut eps = vec![];
        for _ in 0..6 {
            let rates = rct_round(&mut c);
            let mut r: Vec<u64> = rates.iter().map(|r| r.as_bps()).collect();
            r.sort();
            eps.push((r[3] as f64 / 1e8 - 1.0 + 1e-9) * 100.0);
        }
        let eps: Vec<u64> = eps.iter().map(|e| *e as u64).collect();
        assert_eq!(eps, [1, 2, 3, 4, 5, 5]);
        assert_eq!(c.base_rate(), Rate::from_mbps(100));
        assert!((c.epsilon() - 0.05).abs() < 1e-12);
    }

    #[test]
    fn rate_adjusting_accelerates_and_reverts_on_a_utility_drop() {
        let mut c = control(130.0, 10);
        let p = path();
        c.set_rate(Rate::from_mbps(100), &p);
        // The higher rate wins both pairs: r0 = 101 Mbit/s, then r_n = r_{n−1}(1 + n·0.01).
        let trial_rates = rct_round(&mut c);
        assert!(trial_rates.contains(&Rate::from_mbps(101)));
        assert_eq!(c.state(), "rate_adjusting");
        // Steps 0..5: 101, 102.01, 104.05, 107.17, 111.46, 117.03 Mbit/s; utility peaks at
        // 130, so every step rises (each result comes back before the next plan).
        let mut expect = 101e6;
        let mut plans = vec![];
        for n in 0..6 {
            let plan = c.next_plan(&p);
            if n > 0 {
                expect *= 1.0 + n as f64 * 0.01;
            }
            assert!(
                (plan.rate.as_bps() as f64 - expect).abs() <= 1.0,
                "step {n}"
            );
            assert!(!c.on_mi(&result(&plan), &p));
            plans.push(plan);
        }
        // Steps 6 and 7 are pipelined (124.05, 132.73 Mbit/s, both rise), step 8 (143.35,
        // u = −178 < −7.5) drops: back to step 7's rate and decision making.
        let more: Vec<MiPlan> = (0..3).map(|_| c.next_plan(&p)).collect();
        // A fourth MI without results only holds the rate.
        let hold = c.next_plan(&p);
        assert!(!hold.useful);
        assert_eq!(hold.rate, more[2].rate);
        assert!(!c.on_mi(&result(&more[0]), &p));
        assert!(!c.on_mi(&result(&more[1]), &p));
        assert!(c.on_mi(&result(&more[2]), &p));
        assert_eq!(c.state(), "decision_making");
        assert_eq!(c.base_rate(), more[1].rate);
        assert!((c.epsilon() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn mi_length_follows_the_configured_rtt_multiples() {
        // Default: U[1.7, 2.2] × 20 ms; Fig. 16's T_m = 1 RTT: exactly 20 ms (the 10-packet floor
        // is 0.8 ms at 100 Mbit/s with 1000-byte packets).
        let p = path();
        let lens = |lo: f64, hi: f64| -> (f64, f64) {
            let cfg = AllegroConfig {
                mi_rtts_min: lo,
                mi_rtts_max: hi,
                ..AllegroConfig::default()
            };
            let mut c = AllegroControl::new(cfg, Box::new(Peak(f64::NAN)), Rate::from_mbps(100));
            let ms: Vec<f64> = (0..200)
                .map(|_| {
                    let plan = c.next_plan(&p);
                    c.mi_length(&plan, &p).as_secs_f64() * 1e3
                })
                .collect();
            (
                ms.iter().cloned().fold(f64::MAX, f64::min),
                ms.iter().cloned().fold(0.0, f64::max),
            )
        };
        let (lo, hi) = lens(MI_RTTS_LO, MI_RTTS_HI);
        assert!(
            (34.0..35.0).contains(&lo) && hi > 43.0 && hi <= 44.0,
            "{lo} {hi}"
        );
        let (lo, hi) = lens(1.0, 1.0);
        assert!(
            (lo - 20.0).abs() < 1e-6 && (hi - 20.0).abs() < 1e-6,
            "{lo} {hi}"
        );
    }

    #[test]
    fn results_of_an_abandoned_experiment_are_ignored() {
        let mut c = control(130.0, 10);
        let p = path();
        c.set_rate(Rate::from_mbps(100), &p);
        let old = c.next_plan(&p);
        c.set_rate(Rate::from_mbps(50), &p);
        assert!(!c.on_mi(&result(&old), &p));
        assert_eq!(c.base_rate(), Rate::from_mbps(50));
    }
}
