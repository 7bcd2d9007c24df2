//! PCC Vivace's rate control (Dong et al., NSDI'18) as PCC-Uspace master implements it
//! (`pcc_vivace_sender.cpp`, dossier §7.2); Proteus (`proteus.rs`) runs the same control with its
//! own utilities, noise tolerance and decision rules.
//!
//! - Starting: one useful MI at a time; the rate doubles while utility rises. On the first drop
//!   the rate halves (back to the last MI whose utility rose) and probing begins.
//! - Probing: 2·pairs MIs at r(1 ± 0.05), random order within each pair, then r until all are
//!   judged. A primary decides when the increase wins a strict majority of pairs or the decrease
//!   wins all; a scavenger when the decrease wins a strict majority or the increase wins all.
//!   The direction is up when increases outnumber decreases. Otherwise probing repeats.
//! - Decision made: the rate first steps to r(1 ± 0.05), then moves by Δr = θ0·γ·m, where γ is
//!   the utility gradient per Mbit/s (2^20 bit/s): in probing the mean over the pairs that agree
//!   with the decision, afterwards between the last two judged MIs; m = ⌊(rounds + 1)/2⌋^1.2 is
//!   the confidence amplifier (integer division, as master's `size_t`). |Δr| is bounded by
//!   r·(ω0 + k·δ); k grows by one when the bound clips Δr and shrinks by one (to 0) when not,
//!   and is 0 again on entering probing. |Δr| is at least 500 kbit/s and the rate at least
//!   500 kbit/s; reaching that floor restarts the starting phase. The phase continues while each
//!   judged MI's utility change agrees with the direction; otherwise the last Δr is undone and
//!   probing begins.
//! - MIs last one min RTT (and at least the time to send 10 packets, Allegro §3.1), and an MI
//!   whose live ACKs are unreliable is extended once (see `monitor.rs`).
//!
//! Where the paper and master differ we take master: negative RTT gradients are clamped to 0 in
//! the utility, there is no low-pass gradient filter outside the starting phase (where changes
//! below 1 ms over the MI are zeroed), the probing step is 5 % and θ0 = 1.

use crate::algos::pcc::allegro::MAX_RATE_BPS;
use crate::algos::pcc::monitor::{interval_length, MiPlan, MiStats, MIN_PACKETS_PER_MI};
use crate::algos::pcc::proteus::NoiseTolerance;
use crate::algos::pcc::rng::SplitMix64;
use crate::algos::pcc::sender::{PathView, RateControl};
use crate::algos::pcc::utility::{Utility, UtilityInput};
use crate::cc::Telemetry;
use crate::intent::Intent;
use crate::units::{Duration, Rate};

/// dossier §7.2 `kProbingStepSize`.
pub const PROBING_STEP: f64 = 0.05;
/// dossier §7.2: probing pairs of a primary.
pub const PRIMARY_PAIRS: usize = 3;
/// dossier §7.2: probing pairs of a scavenger (Proteus-S, and Proteus-H above its threshold).
pub const SCAVENGER_PAIRS: usize = 2;
/// dossier §7.2 `kUtilityGradientToRateChangeFactor` θ0 (Mbit/s per unit gradient).
pub const THETA0: f64 = 1.0;
/// dossier §7.2 `kRateChangeAmplifyExponent`.
pub const AMPLIFY_EXPONENT: f64 = 1.2;
/// dossier §7.2 `kInitialMaxStepSize` ω0: the bound on |Δr| as a fraction of the rate.
pub const OMEGA0: f64 = 0.05;
/// dossier §7.2 `kIncrementalStepSize` δ: what each boundary step k adds to ω0.
pub const OMEGA_STEP: f64 = 0.05;
/// dossier §7.2 `kMinRateChange`, bit/s: the smallest |Δr|.
pub const MIN_RATE_CHANGE_BPS: f64 = 500_000.0;
/// dossier §7.2 `kMinSendingRate`, bit/s: the rate floor, where the starting phase restarts.
pub const MIN_RATE_BPS: f64 = 500_000.0;
/// dossier §7.2: the unit of rate in the gradient, `kMegabit` = 2^20 bit/s.
pub const MEGABIT: f64 = 1_048_576.0;
/// dossier §7.2: in the starting phase RTT changes below this over the MI are noise (µs).
pub const STARTING_GRADIENT_FLOOR_US: f64 = 1000.0;
/// One MI per min RTT (dossier §7.2).
pub const MI_RTTS: f64 = 1.0;

/// Which decision rule probing uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Decide on a majority of increases or unanimous decreases.
    Primary,
    /// Decide on a majority of decreases or unanimous increases.
    Scavenger,
}

/// The Vivace family's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct VivaceConfig {
    /// The probing step ε of r(1 ± ε) ([`PROBING_STEP`]).
    pub probing_step: f64,
    /// Seed of the probing orders.
    pub seed: u64,
    /// Always a scavenger (Proteus-S); otherwise primary, or hybrid when the utility has a
    /// threshold.
    pub scavenger: bool,
}

impl Default for VivaceConfig {
    fn default() -> Self {
        VivaceConfig {
            probing_step: PROBING_STEP,
            seed: 1,
            scavenger: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    /// `prev`: the last judged MI's (rate, utility); `waiting`: a useful MI is out.
    Starting {
        prev: Option<(Rate, f64)>,
        waiting: bool,
    },
    /// Trial signs and the (rate Mbit/s in 2^20 units, utility) that came back.
    Probing {
        signs: Vec<f64>,
        results: Vec<Option<(f64, f64)>>,
    },
    /// `prev`: the last judged (rate in 2^20 units, utility); `last_delta_bps` the last Δr.
    Decided {
        dir: f64,
        prev: (f64, f64),
        waiting: bool,
        last_delta_bps: f64,
    },
}

/// Vivace's (and Proteus') rate control; see the module documentation.
#[derive(Debug)]
pub(crate) struct VivaceControl {
    cfg: VivaceConfig,
    utility: Box<dyn Utility>,
    noise: Option<NoiseTolerance>,
    rng: SplitMix64,
    state: State,
    rate: Rate,
    epoch: u64,
    planned: u64,
    role: Role,
    /// Boundary steps k of ω = ω0 + k·δ.
    k: u32,
    /// Consecutive decisions in one direction (master's `rounds_`).
    rounds: u64,
    prev_rtt_us: f64,
    last_utility: f64,
    last_gamma: f64,
    /// The RTT deviation (µs) the last judged MI's utility saw, after the noise filter.
    last_dev_used_us: f64,
}

/// One probing pair: (rate, utility) at the higher and at the lower rate.
type Pair = ((f64, f64), (f64, f64));

fn tag(epoch: u64, idx: u64) -> u64 {
    (epoch << 20) | (idx & 0xf_ffff)
}

fn clamp_rate(r: f64) -> Rate {
    Rate::from_bps_f64(r.clamp(MIN_RATE_BPS, MAX_RATE_BPS))
}

/// The confidence amplifier m for `rounds` (integer division as master).
pub fn amplifier(rounds: u64) -> f64 {
    (rounds.div_ceil(2) as f64).powf(AMPLIFY_EXPONENT)
}

/// Bounds Δr (bit/s) at rate `rate_bps` with boundary step `k`, returning the bounded change
/// and the next k (dynamic change boundary), then applies the 500 kbit/s minimum change.
pub fn bound_change(delta_bps: f64, rate_bps: f64, k: u32) -> (f64, u32) {
    let max = rate_bps * (OMEGA0 + k as f64 * OMEGA_STEP);
    let (mut d, k) = if delta_bps.abs() > max {
        (max.copysign(delta_bps), k + 1)
    } else {
        (delta_bps, k.saturating_sub(1))
    };
    if d.abs() < MIN_RATE_CHANGE_BPS {
        d = MIN_RATE_CHANGE_BPS.copysign(if d == 0.0 { 1.0 } else { d });
    }
    (d, k)
}

/// The probing verdict for per-pair utilities (u at the higher rate, u at the lower rate):
/// +1, −1 or 0 (no decision) under `role`'s rule.
pub(crate) fn probing_verdict(pairs: &[(f64, f64)], role: Role) -> f64 {
    let n = pairs.len();
    let up = pairs.iter().filter(|(hi, lo)| hi > lo).count();
    let down = pairs.iter().filter(|(hi, lo)| lo > hi).count();
    let decided = match role {
        Role::Primary => 2 * up > n || down == n,
        Role::Scavenger => 2 * down > n || up == n,
    };
    if !decided {
        0.0
    } else if up > down {
        1.0
    } else {
        -1.0
    }
}

impl VivaceControl {
    pub fn new(
        cfg: VivaceConfig,
        utility: Box<dyn Utility>,
        noise: Option<NoiseTolerance>,
        initial_rate: Rate,
    ) -> Self {
        VivaceControl {
            cfg,
            utility,
            noise,
            rng: SplitMix64::new(cfg.seed),
            state: State::Starting {
                prev: None,
                waiting: false,
            },
            rate: clamp_rate(initial_rate.as_bps() as f64),
            epoch: 0,
            planned: 0,
            role: if cfg.scavenger {
                Role::Scavenger
            } else {
                Role::Primary
            },
            k: 0,
            rounds: 0,
            prev_rtt_us: f64::NAN,
            last_utility: f64::NAN,
            last_gamma: f64::NAN,
            last_dev_used_us: f64::NAN,
        }
    }

    /// The decision rule in force.
    #[cfg(test)]
    pub fn role(&self) -> Role {
        self.role
    }

    /// The boundary step k of ω = ω0 + k·δ.
    #[cfg(test)]
    pub fn boundary_k(&self) -> u32 {
        self.k
    }

    fn new_epoch(&mut self) {
        self.epoch += 1;
        self.planned = 0;
    }

    fn enter_starting(&mut self) {
        self.new_epoch();
        self.k = 0;
        self.rounds = 0;
        self.state = State::Starting {
            prev: None,
            waiting: false,
        };
    }

    fn enter_probing(&mut self, rate_bps: f64) {
        self.rate = clamp_rate(rate_bps);
        self.new_epoch();
        self.k = 0;
        self.rounds = 0;
        // Proteus-H (dossier §7.3): scavenger rules when the probe's upper rate exceeds the
        // threshold. Master compares the rate in units of 2^20 bit/s (`kMegabit`) with the
        // threshold, so the rules switch at 1.048576× the threshold in decimal Mbit/s (the
        // utility itself switches at the threshold in decimal Mbit/s).
        self.role = if self.cfg.scavenger {
            Role::Scavenger
        } else if let Some(t) = self.utility.scavenger_above_mbps() {
            let upper = self.rate.as_bps() as f64 * (1.0 + self.cfg.probing_step) / MEGABIT;
            if upper > t {
                Role::Scavenger
            } else {
                Role::Primary
            }
        } else {
            Role::Primary
        };
        let pairs = match self.role {
            Role::Primary => PRIMARY_PAIRS,
            Role::Scavenger => SCAVENGER_PAIRS,
        };
        let mut signs = Vec::with_capacity(2 * pairs);
        for _ in 0..pairs {
            let first = if self.rng.coin() { 1.0 } else { -1.0 };
            signs.push(first);
            signs.push(-first);
        }
        self.state = State::Probing {
            results: vec![None; signs.len()],
            signs,
        };
    }

    /// Applies Δr = θ0·γ·m at the current rate; returns the bounded change in bit/s.
    fn step(&mut self, gamma: f64) -> f64 {
        self.last_gamma = gamma;
        let m = amplifier(self.rounds);
        let raw = THETA0 * gamma * m * MEGABIT;
        let (d, k) = bound_change(raw, self.rate.as_bps() as f64, self.k);
        self.k = k;
        d
    }

    /// The utility input of an MI after the noise filter (Proteus) or the starting-phase
    /// gradient floor (Vivace).
    fn input(&mut self, s: &MiStats) -> UtilityInput {
        let mut input = UtilityInput::from_stats(s, self.prev_rtt_us);
        if let Some(n) = self.noise.as_mut() {
            let (g, dev) = n.filter(s);
            input.rtt_gradient = g;
            input.rtt_dev_us = dev;
        }
        if matches!(self.state, State::Starting { .. }) {
            let floor = STARTING_GRADIENT_FLOOR_US / (s.duration.0 as f64 / 1e3).max(1.0);
            if input.rtt_gradient.abs() < floor {
                input.rtt_gradient = 0.0;
            }
        }
        input
    }
}

impl RateControl for VivaceControl {
    fn next_plan(&mut self, _path: &PathView) -> MiPlan {
        let idx = self.planned;
        let t = tag(self.epoch, idx);
        let hold = MiPlan {
            rate: self.rate,
            useful: false,
            tag: t,
        };
        match &mut self.state {
            State::Starting { waiting, .. } | State::Decided { waiting, .. } => {
                if *waiting {
                    return hold;
                }
                *waiting = true;
                self.planned += 1;
                MiPlan {
                    rate: self.rate,
                    useful: true,
                    tag: t,
                }
            }
            State::Probing { signs, .. } => {
                let Some(&sign) = signs.get(idx as usize) else {
                    return hold;
                };
                self.planned += 1;
                let r = self.rate.as_bps() as f64 * (1.0 + sign * self.cfg.probing_step);
                MiPlan {
                    rate: clamp_rate(r),
                    useful: true,
                    tag: t,
                }
            }
        }
    }

    fn mi_length(&mut self, plan: &MiPlan, path: &PathView) -> Duration {
        interval_length(
            plan.rate,
            path.mss,
            MIN_PACKETS_PER_MI,
            path.min_rtt().mul_f64(MI_RTTS),
        )
    }

    fn on_mi(&mut self, s: &MiStats, _path: &PathView) -> bool {
        let input = self.input(s);
        if s.mean_rtt_us.is_finite() {
            self.prev_rtt_us = s.mean_rtt_us;
        }
        if !s.useful || s.tag >> 20 != self.epoch {
            return false;
        }
        let idx = (s.tag & 0xf_ffff) as usize;
        let rate_bps = s.rate.as_bps() as f64;
        if s.packets_sent == 0 {
            // Nothing was sent: the experiment learned nothing; probe again here.
            self.enter_probing(self.rate.as_bps() as f64);
            return true;
        }
        let u = self.utility.utility(&input);
        self.last_utility = u;
        self.last_dev_used_us = input.rtt_dev_us;
        match &mut self.state {
            State::Starting { prev, waiting } => {
                *waiting = false;
                match *prev {
                    Some((_, u_prev)) if u <= u_prev => {
                        self.enter_probing(rate_bps / 2.0);
                    }
                    _ => {
                        *prev = Some((s.rate, u));
                        self.rate = clamp_rate(rate_bps * 2.0);
                    }
                }
                true
            }
            State::Probing { signs, results } => {
                if idx >= results.len() {
                    return false;
                }
                results[idx] = Some((rate_bps / MEGABIT, u));
                if results.iter().any(Option::is_none) {
                    return false;
                }
                // Per pair: (rate, utility) of the higher and of the lower trial.
                let mut pairs = Vec::with_capacity(results.len() / 2);
                for p in 0..results.len() / 2 {
                    let (a, b) = (
                        results[2 * p].unwrap_or_default(),
                        results[2 * p + 1].unwrap_or_default(),
                    );
                    pairs.push(if signs[2 * p] > 0.0 { (a, b) } else { (b, a) });
                }
                let verdicts: Vec<(f64, f64)> = pairs.iter().map(|(h, l)| (h.1, l.1)).collect();
                let dir = probing_verdict(&verdicts, self.role);
                if dir == 0.0 {
                    self.enter_probing(self.rate.as_bps() as f64);
                    return true;
                }
                // γ: mean over the agreeing pairs; the winning side's mean (rate, utility) is
                // the reference for the first consistency check.
                let agree: Vec<&Pair> = pairs
                    .iter()
                    .filter(|(h, l)| (h.1 - l.1) * dir > 0.0)
                    .collect();
                let n = agree.len().max(1) as f64;
                let gamma = agree
                    .iter()
                    .map(|(h, l)| (h.1 - l.1) / (h.0 - l.0).max(1e-9))
                    .sum::<f64>()
                    / n;
                let win = |(h, l): &&Pair| if dir > 0.0 { *h } else { *l };
                let prev = (
                    agree.iter().map(|p| win(p).0).sum::<f64>() / n,
                    agree.iter().map(|p| win(p).1).sum::<f64>() / n,
                );
                self.rate =
                    clamp_rate(self.rate.as_bps() as f64 * (1.0 + dir * self.cfg.probing_step));
                self.rounds = 1;
                let d = self.step(gamma);
                self.rate = clamp_rate(self.rate.as_bps() as f64 + d);
                self.new_epoch();
                self.state = State::Decided {
                    dir,
                    prev,
                    waiting: false,
                    last_delta_bps: d,
                };
                true
            }
            State::Decided {
                dir,
                prev,
                waiting,
                last_delta_bps,
            } => {
                *waiting = false;
                let (dir, prev, last) = (*dir, *prev, *last_delta_bps);
                let r = rate_bps / MEGABIT;
                let gamma = if (r - prev.0).abs() > 1e-12 {
                    (u - prev.1) / (r - prev.0)
                } else {
                    0.0
                };
                if gamma * dir <= 0.0 {
                    let undo = rate_bps - last;
                    self.enter_probing(undo);
                    return true;
                }
                self.rounds += 1;
                self.rate = clamp_rate(rate_bps);
                let d = self.step(gamma);
                let next = rate_bps + d;
                if next <= MIN_RATE_BPS {
                    self.rate = clamp_rate(MIN_RATE_BPS);
                    self.enter_starting();
                    return true;
                }
                self.rate = clamp_rate(next);
                if let State::Decided {
                    prev,
                    last_delta_bps,
                    ..
                } = &mut self.state
                {
                    *prev = (r, u);
                    *last_delta_bps = d;
                }
                true
            }
        }
    }

    fn base_rate(&self) -> Rate {
        self.rate
    }

    fn scale_rate(&mut self, factor: f64) {
        self.rate = clamp_rate(self.rate.as_bps() as f64 * factor);
        if matches!(self.state, State::Starting { .. }) {
            // The doubling starts over from the rescaled rate (trait documentation).
            self.enter_starting();
        }
    }

    fn set_rate(&mut self, rate: Rate, _path: &PathView) {
        self.enter_probing(rate.as_bps() as f64);
    }

    fn state(&self) -> &'static str {
        match self.state {
            State::Starting { .. } => "starting",
            State::Probing { .. } => "probing",
            State::Decided { .. } => "decision_made",
        }
    }

    fn telemetry(&self, t: &mut Telemetry) {
        t.push("utility", self.last_utility);
        t.push("rtt_dev_used_us", self.last_dev_used_us);
        if let Some(n) = self.noise.as_ref() {
            // 1 when the last completed MI's RTT gradient exceeded its regression error: the
            // noise filter's first test let both latency penalties through.
            let open = !n.last_verdict().gate_tolerable;
            t.push("noise_gate_open", f64::from(u8::from(open)));
        }
        t.push("gradient", self.last_gamma);
        t.push("boundary_k", self.k as f64);
        t.push("rounds", self.rounds as f64);
        t.push(
            "scavenger",
            if self.role == Role::Scavenger {
                1.0
            } else {
                0.0
            },
        );
        t.push(
            "direction",
            match self.state {
                State::Decided { dir, .. } => dir,
                _ => 0.0,
            },
        );
    }

    /// Proteus-H (dossier §7.3): an application that states the rate it needs (a target rate)
    /// moves the threshold above which the flow yields as a scavenger, as PCC-Uspace's
    /// `UDT_UPARAM` socket option does at any time.
    fn set_intent(&mut self, intent: &Intent) {
        if let Some(t) = intent.target_rate() {
            self.utility.set_scavenger_above_mbps(t.as_mbps_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Utility = sending rate in Mbit/s (always rising), or a scripted peak.
    #[derive(Debug)]
    struct Linear(f64);
    impl Utility for Linear {
        fn name(&self) -> &str {
            "linear"
        }
        fn utility(&self, m: &UtilityInput) -> f64 {
            if self.0.is_nan() {
                m.send_rate_mbps
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
            duration: Duration::from_millis(20),
            ..MiStats::default()
        }
    }

    fn control(u: f64, scavenger: bool) -> VivaceControl {
        VivaceControl::new(
            VivaceConfig {
                scavenger,
                ..VivaceConfig::default()
            },
            Box::new(Linear(u)),
            None,
            Rate::from_mbps(10),
        )
    }

    #[test]
    fn amplifier_and_boundary() {
        let m: Vec<f64> = (1..=6).map(amplifier).collect();
        let two = 2f64.powf(1.2);
        let three = 3f64.powf(1.2);
        for (a, b) in m.iter().zip([1.0, 1.0, two, two, three, three]) {
            assert!((a - b).abs() < 1e-12, "{m:?}");
        }
        // At 100 Mbit/s the bound is 5 % + k·5 %.
        assert_eq!(bound_change(10e6, 100e6, 0), (5e6, 1));
        assert_eq!(bound_change(10e6, 100e6, 1), (10e6, 0));
        let (d, k) = bound_change(-30e6, 100e6, 2);
        assert!((d + 15e6).abs() < 1e-6 && k == 3);
        // Below 500 kbit/s the change is raised to it, keeping its sign.
        assert_eq!(bound_change(-0.1e6, 100e6, 0), (-0.5e6, 0));
        assert_eq!(bound_change(0.2e6, 100e6, 3), (0.5e6, 2));
    }

    #[test]
    fn decision_rules_of_primary_and_scavenger() {
        use Role::*;
        // (u at the higher rate, u at the lower rate) per pair.
        let up2 = [(2.0, 1.0), (2.0, 1.0), (1.0, 2.0)];
        let down2 = [(1.0, 2.0), (1.0, 2.0), (2.0, 1.0)];
        let down3 = [(1.0, 2.0), (1.0, 2.0), (1.0, 2.0)];
        assert_eq!(probing_verdict(&up2, Primary), 1.0); // majority up suffices
        assert_eq!(probing_verdict(&down2, Primary), 0.0); // down needs all three
        assert_eq!(probing_verdict(&down3, Primary), -1.0);
        let split = [(2.0, 1.0), (1.0, 2.0)];
        assert_eq!(probing_verdict(&split, Scavenger), 0.0);
        assert_eq!(probing_verdict(&[(1.0, 2.0), (1.0, 2.0)], Scavenger), -1.0);
        assert_eq!(probing_verdict(&[(2.0, 1.0), (2.0, 1.0)], Scavenger), 1.0);
    }

    /// Runs probing to its decision; returns the trial rates.
    fn probe(c: &mut VivaceControl) -> Vec<Rate> {
        let p = path();
        assert_eq!(c.state(), "probing");
        let n = match c.role() {
            Role::Primary => 2 * PRIMARY_PAIRS,
            Role::Scavenger => 2 * SCAVENGER_PAIRS,
        };
        let plans: Vec<MiPlan> = (0..n).map(|_| c.next_plan(&p)).collect();
        assert!(!c.next_plan(&p).useful);
        for x in &plans {
            c.on_mi(&result(x), &p);
        }
        plans.iter().map(|x| x.rate).collect()
    }

    #[test]
    fn starting_doubles_one_interval_at_a_time_then_halves() {
        let mut c = control(50.0, false);
        let p = path();
        let mut rates = vec![];
        while c.state() == "starting" {
            let plan = c.next_plan(&p);
            assert!(plan.useful);
            // While its result is out, further MIs only hold the rate.
            assert!(!c.next_plan(&p).useful);
            rates.push(plan.rate.as_bps() / 1_000_000);
            assert!(c.on_mi(&result(&plan), &p));
        }
        // 10, 20, 40 rise; 80 (u = −900 < −100) drops: probing at 40.
        assert_eq!(rates, [10, 20, 40, 80]);
        assert_eq!(c.base_rate(), Rate::from_mbps(40));
        assert_eq!(c.state(), "probing");
    }

    #[test]
    fn decision_step_is_theta_gamma_m_bounded() {
        let mut c = control(f64::NAN, false);
        let p = path();
        c.set_rate(Rate::from_mbps(40), &p);
        let trials = probe(&mut c);
        assert!(trials.contains(&Rate::from_mbps(42)) && trials.contains(&Rate::from_mbps(38)));
        assert_eq!(c.state(), "decision_made");
        // u = x (10^6 units), r in 2^20 units: γ = 2^20/10^6 per "Mbit", Δr = γ·2^20 bit/s
        // = 1.0995 Mbit/s (within 5 % of 42), from r(1 + 0.05) = 42 Mbit/s.
        let gamma = MEGABIT / 1e6;
        let expect = 42e6 + gamma * MEGABIT;
        assert!((c.base_rate().as_bps() as f64 - expect).abs() <= 1.0);
        assert_eq!(c.boundary_k(), 0);
        // Consistent results keep going. Round 2: m = 1, Δ = 1.0995 Mbit/s, unclipped (k 0).
        // Round 3: m = 2^1.2, Δ = 2.5262 Mbit/s > 5 % of 44.2 Mbit/s: clipped to 5 %, k = 1.
        // Round 4: m = 2^1.2 again, bound now 10 %: unclipped, k back to 0.
        let raw = |round| gamma * amplifier(round) * MEGABIT;
        let mut r = c.base_rate().as_bps() as f64;
        let expected: [(f64, u32); 3] = [(raw(2), 0), (0.0, 1), (raw(4), 0)];
        for (i, (step, k)) in expected.into_iter().enumerate() {
            let plan = c.next_plan(&p);
            assert!(plan.useful);
            assert!(c.on_mi(&result(&plan), &p));
            let step = if i == 1 { r * OMEGA0 } else { step };
            let now = c.base_rate().as_bps() as f64;
            assert!(
                (now - r - step).abs() <= 2.0,
                "round {}: {now} vs {r} + {step}",
                i + 2
            );
            assert_eq!(c.boundary_k(), k, "round {}", i + 2);
            r = now;
        }
    }

    #[test]
    fn an_inconsistent_result_undoes_the_last_step_and_probes() {
        let mut c = control(40.0, false);
        let p = path();
        c.set_rate(Rate::from_mbps(30), &p);
        probe(&mut c); // up: utility peaks at 40
        assert_eq!(c.state(), "decision_made");
        let mut last = c.base_rate();
        for _ in 0..40 {
            let plan = c.next_plan(&p);
            last = plan.rate;
            c.on_mi(&result(&plan), &p);
            if c.state() != "decision_made" {
                break;
            }
        }
        assert_eq!(c.state(), "probing");
        // Undone: the rate is back below the MI that overshot, and k is reset.
        assert!(c.base_rate() < last);
        assert_eq!(c.boundary_k(), 0);
        assert!(
            (c.base_rate().as_mbps_f64() - 40.0).abs() < 4.0,
            "{}",
            c.base_rate()
        );
    }

    #[test]
    fn floor_returns_to_starting() {
        let mut c = control(0.0, false);
        let p = path();
        c.set_rate(Rate::from_bps(700_000), &p);
        for _ in 0..50 {
            if c.state() == "probing" {
                probe(&mut c);
            } else {
                let plan = c.next_plan(&p);
                c.on_mi(&result(&plan), &p);
            }
            if c.state() == "starting" {
                break;
            }
        }
        assert_eq!(c.state(), "starting");
        assert_eq!(c.base_rate(), Rate::from_bps(500_000));
    }

    /// A hybrid's utility stub: the rising `Linear` utility with a scavenger threshold.
    #[derive(Debug)]
    struct Hybrid(f64);
    impl Utility for Hybrid {
        fn name(&self) -> &str {
            "hybrid-stub"
        }
        fn utility(&self, m: &UtilityInput) -> f64 {
            m.send_rate_mbps
        }
        fn scavenger_above_mbps(&self) -> Option<f64> {
            Some(self.0)
        }
    }

    #[test]
    fn a_hybrid_probes_as_a_scavenger_above_its_threshold_in_master_units() {
        // Threshold 5: master switches to the scavenger's two pairs once 1.05·r / 2^20 > 5,
        // i.e. above r = 4.993 Mbit/s (decimal). At 4.9 Mbit/s (5.145 decimal after the step,
        // 4.907 in master's units) it probes as a primary, with three pairs; at 5.0 Mbit/s as a
        // scavenger.
        for (mbps_x10, pairs) in [(49, PRIMARY_PAIRS), (50, SCAVENGER_PAIRS)] {
            let mut c = VivaceControl::new(
                VivaceConfig::default(),
                Box::new(Hybrid(5.0)),
                None,
                Rate::from_mbps(10),
            );
            c.set_rate(Rate::from_bps(mbps_x10 * 100_000), &path());
            assert_eq!(
                probe(&mut c).len(),
                2 * pairs,
                "at {} Mbit/s",
                mbps_x10 as f64 / 10.0
            );
        }
    }

    #[test]
    fn scavenger_probes_with_two_pairs() {
        let mut c = control(f64::NAN, true);
        c.set_rate(Rate::from_mbps(40), &path());
        assert_eq!(probe(&mut c).len(), 4);
        assert_eq!(c.state(), "decision_made");
    }
}
