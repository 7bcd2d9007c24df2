//! CUBIC as RFC 9438, with HyStart++ (RFC 9406) for the initial slow start.
//!
//! Linux's CUBIC (`net/ipv4/tcp_cubic.c`) is the same controller with these parameters set
//! otherwise (`stack = "linux"` sets them; see [`CubicConfig`]): `beta` = 717/1024,
//! `alpha_to_one = false` (the kernel's Reno-friendly estimate grows at α_cubic throughout),
//! `target_rtt = "min"` (the curve is read `delay_min` ahead, not srtt), `hystart_variant =
//! "linux"` (HyStart's ACK train and delay signals, `hystart.rs`, instead of HyStart++),
//! `min_growth_before_loss = 0.05` (until the first loss the window grows at least 5 % per RTT),
//! `growth = "linux"` (the window moves in whole segments through `bictcp_update`'s divisor,
//! `bictcp_update.rs`), and the recovery of `tcp_input.c`: `prr` (proportional rate reduction)
//! and `recovery_spans_retransmissions` (see `reno/`).
//!
//! The window is kept in bytes; the cubic curve and the Reno-friendly estimate are computed in
//! segments of the ACK's MSS, as the RFC defines them, and converted back. Growth smaller than a
//! byte is carried over (`reno::ByteCarry`) so that slow per-ACK increments are not lost to
//! rounding. Recovery, the window's bounds and calibration are the Reno family's (`reno/`).

use crate::algos::bictcp_update::{BictcpUpdate, Curve};
use crate::algos::hystart::LinuxHyStart;
use crate::algos::reno;
use crate::algos::reno::{
    reno_family_methods, reno_window_in, ByteCarry, RecoveryPeriod, RenoFamily, RenoWindow,
};
use crate::algos::round::RoundTracker;
use crate::cc::{CcContext, CongestionControl, Telemetry};
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, SentPacket};
use crate::units::{Bytes, Duration, Time};
use serde::{Deserialize, Serialize};

/// One-line description shown in the registry listing.
pub const SUMMARY: &str = "CUBIC (RFC 9438) with HyStart++ (RFC 9406)";

/// RFC 9438 §5: C = 0.4 segments/s³.
pub const C: f64 = 0.4;
/// RFC 9438 §4.6: β_cubic = 0.7, the fraction of the window kept on a congestion event.
pub const BETA: f64 = 0.7;
/// RFC 9438 §4.7 fast convergence is on by default.
pub const FAST_CONVERGENCE: bool = true;
/// RFC 9438 §4.3 Reno-friendly region is on by default (Linux: `tcp_friendliness = 1`). Off
/// reproduces CUBIC implementations without it, such as ns-3 3.37's `TcpCubic` (VALIDATION.md).
pub const RENO_FRIENDLY: bool = true;
/// RFC 9438 §4.2: the target may exceed cwnd by at most half a window per RTT.
const MAX_TARGET_GROWTH: f64 = 1.5;
/// tcp_cubic.c `beta` = 717/1024 (`BICTCP_BETA_SCALE`): Linux's β_cubic.
pub const LINUX_BETA: f64 = 717.0 / 1024.0;
/// tcp_cubic.c `bictcp_update`: while `last_max_cwnd == 0` (no loss yet, or since an RTO) the
/// per-ACK divisor `cnt` is at most 20, "increase cwnd 5% per RTT".
pub const LINUX_MIN_GROWTH_BEFORE_LOSS: f64 = 0.05;

/// RFC 9406 §4.3: lower bound of the RTT increase that ends slow start.
pub const HYSTART_MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// RFC 9406 §4.3: upper bound of that threshold.
pub const HYSTART_MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// RFC 9406 §4.3: the threshold is lastRoundMinRTT / MIN_RTT_DIVISOR, clamped by the two above.
pub const HYSTART_MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3: RTT samples a round needs before its minimum is trusted.
pub const HYSTART_N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: Conservative Slow Start grows at 1/4 of the slow-start rate.
pub const HYSTART_CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: rounds of CSS before congestion avoidance.
pub const HYSTART_CSS_ROUNDS: u32 = 5;
// RFC 9406 §4.3 also caps per-ACK slow-start growth at L·SMSS with L = 8 for unpaced senders and
// L = ∞ when paced. Every polycc transport paces (cc.rs: `pacing_rate() == None` means the transport
// paces at cwnd/srtt), so no cap is applied.

/// Registry and scenario name.
pub const NAME: &str = "cubic";

/// Registers CUBIC under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<CubicConfig>(), build);
}

/// Builds CUBIC from scenario parameters (the fields of [`CubicConfig`]), checking them against
/// [`CubicConfig::PARAMS`].
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let cfg: CubicConfig = params::parse(NAME, p)?;
    Ok(Box::new(Cubic::new(ctx, cfg)))
}

/// Tunables of [`Cubic`], validated by [`build`]; absent keys take the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// β_cubic: the fraction of the window kept on a congestion event (RFC 9438 §4.6).
    pub beta: f64,
    /// C, in segments/s³: how fast the curve leaves its plateau (RFC 9438 §4.2).
    pub c: f64,
    /// Whether a loss below the previous W_max sets W_max to (1 + β)/2 of the window, so that a
    /// flow losing ground yields bandwidth to newer flows sooner (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Whether HyStart++ (RFC 9406) may end the initial slow start before the first loss.
    pub hystart: bool,
    /// Whether the window may follow the Reno-friendly estimate W_est when it is above the curve.
    pub reno_friendly: bool,
    /// The slow-start exit `hystart` enables: HyStart++ (RFC 9406) or Linux's HyStart.
    pub hystart_variant: HyStartVariant,
    /// Whether W_est's growth rate switches from α_cubic to 1 once W_est reaches cwnd_prior
    /// (RFC 9438 §4.3); Linux's `tcp_friendliness` keeps α_cubic (about 0.53 segment per RTT).
    pub alpha_to_one: bool,
    /// The RTT ahead of t at which the cubic curve is read for the target (RFC 9438 §4.2).
    pub target_rtt: TargetRtt,
    /// Least growth per RTT, as a fraction of the window, in congestion avoidance before the
    /// first congestion event (and after persistent congestion): Linux's 5 % (`cnt` ≤ 20 while
    /// `last_max_cwnd == 0`), which matters after HyStart ends slow start on a flat curve.
    /// 0: none (RFC 9438).
    pub min_growth_before_loss: f64,
    /// Whether the loss of a retransmission sent during recovery belongs to the congestion
    /// event already answered (TCP's recovery period, see `reno::RecoveryPeriod`), rather
    /// than being a new one (RFC 9002).
    pub recovery_spans_retransmissions: bool,
    /// Whether the window follows proportional rate reduction in recovery (RFC 6937, Linux)
    /// instead of dropping to ssthresh at once (RFC 9002); see `reno::Prr`.
    pub prr: bool,
    /// How the window follows the curve and W_est in congestion avoidance: RFC 9438's
    /// per-ACK fractions, or Linux's whole-segment divisor (`bictcp_update.rs`).
    pub growth: Growth,
}

/// How CUBIC's window follows its targets in congestion avoidance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    /// RFC 9438 §4.3–4.5: towards W_cubic(t + RTT) by fractions of a byte per ACK, or to
    /// W_est when it is above the curve.
    #[default]
    Rfc9438,
    /// Linux `bictcp_update` + `tcp_cong_avoid_ai`: a divisor `cnt` in whole segments,
    /// refreshed only when the window changed or 1/32 s passed, with W_est counted up in whole
    /// segments only then.
    Linux,
}

/// Which slow-start exit CUBIC uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HyStartVariant {
    /// HyStart++ (RFC 9406): a delay rise starts Conservative Slow Start, which ends slow start
    /// after 5 rounds unless the delay falls back.
    #[default]
    Rfc9406,
    /// Linux's HyStart (`tcp_cubic.c`): an ACK train or a delay rise ends slow start at once.
    Linux,
}

/// The RTT by which the target looks ahead of t on the cubic curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetRtt {
    /// The smoothed RTT (RFC 9438 §4.2).
    #[default]
    Smoothed,
    /// The minimum RTT (Linux `bictcp_update`: `t += delay_min`), which keeps a deep queue from
    /// speeding up the curve.
    Min,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            beta: BETA,
            c: C,
            fast_convergence: FAST_CONVERGENCE,
            hystart: true,
            reno_friendly: RENO_FRIENDLY,
            hystart_variant: HyStartVariant::Rfc9406,
            alpha_to_one: true,
            target_rtt: TargetRtt::Smoothed,
            min_growth_before_loss: 0.0,
            recovery_spans_retransmissions: false,
            prr: false,
            growth: Growth::Rfc9438,
        }
    }
}

impl ParamTable for CubicConfig {
    // Ranges: beta keeps at least 5 % and gives up at least 5 % of the window (a reduction of
    // nothing or of everything is no congestion response); c spans four decades around 0.4.
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "beta",
            Kind::Number,
            "β_cubic: fraction of the window kept on a congestion event",
            "RFC 9438 §4.6",
        )
        .range(0.05, 0.95),
        ParamSpec::new(
            "c",
            Kind::Number,
            "C in segments/s³: how fast the curve leaves its plateau",
            "RFC 9438 §5",
        )
        .range(0.01, 100.0),
        ParamSpec::new(
            "fast_convergence",
            Kind::Bool,
            "a loss below the previous W_max sets W_max to (1 + β)/2 of the window",
            "RFC 9438 §4.7",
        ),
        ParamSpec::new(
            "hystart",
            Kind::Bool,
            "HyStart++ may end the initial slow start before the first loss",
            "RFC 9406",
        ),
        ParamSpec::new(
            "reno_friendly",
            Kind::Bool,
            "the window follows the Reno-friendly estimate when above the curve (false: the curve alone, as ns-3 3.37 TcpCubic)",
            "RFC 9438 §4.3; Linux tcp_friendliness = 1",
        ),
        ParamSpec::new(
            "hystart_variant",
            Kind::Choice(&["rfc9406", "linux"]),
            "the slow-start exit `hystart` enables: HyStart++, or Linux's HyStart (ACK train or delay rise)",
            "RFC 9406; Linux tcp_cubic.c hystart_update",
        ),
        ParamSpec::new(
            "alpha_to_one",
            Kind::Bool,
            "W_est grows at 1 segment per RTT once it reaches cwnd_prior (false: α_cubic throughout, as Linux)",
            "RFC 9438 §4.3; Linux tcp_cubic.c bictcp_update",
        ),
        ParamSpec::new(
            "target_rtt",
            Kind::Choice(&["smoothed", "min"]),
            "the RTT ahead of t at which the curve is read for the target",
            "RFC 9438 §4.2; Linux tcp_cubic.c bictcp_update (delay_min)",
        ),
        // Up to doubling per RTT, slow start's own pace.
        ParamSpec::new(
            "min_growth_before_loss",
            Kind::Number,
            "least growth per RTT, as a fraction of the window, before the first congestion event",
            "Linux tcp_cubic.c bictcp_update: cnt <= 20 while last_max_cwnd == 0",
        )
        .range(0.0, 1.0),
        super::reno::RECOVERY_SPANS_RETRANSMISSIONS,
        super::reno::PRR,
        ParamSpec::new(
            "growth",
            Kind::Choice(&["rfc9438", "linux"]),
            "how the window follows the curve and W_est in congestion avoidance: per-ACK fractions, or Linux's whole-segment divisor cnt",
            "RFC 9438 §4.3-4.5; Linux tcp_cubic.c bictcp_update, tcp_cong.c tcp_cong_avoid_ai",
        ),
    ];
}

/// HyStart++ state (RFC 9406 §4.2), alive only during the initial slow start.
#[derive(Clone, Debug, Default)]
struct HyStart {
    rounds: RoundTracker,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    /// `Some` while in Conservative Slow Start: cssBaselineMinRtt.
    css_baseline_min_rtt: Option<Duration>,
    /// Round ends seen since CSS began; the partial round of the transition counts.
    css_rounds: u32,
}

/// One congestion-avoidance stage (RFC 9438 §4.2): the curve's origin and shape.
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// t_epoch, moved forward by application-limited periods so that t excludes them.
    start: Time,
    /// K in seconds.
    k: f64,
    /// W_est in bytes (the Reno-friendly estimate, RFC 9438 §4.3).
    w_est: f64,
}

/// CUBIC for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// Its recovery period ends for good at the first ACK of a packet sent after it began.
    reno: RenoWindow,
    carry: ByteCarry,
    /// W_max in bytes: the window before the last reduction (after fast convergence).
    w_max: f64,
    /// cwnd_prior in bytes: the window when ssthresh was last set by a congestion event.
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// The first congestion-avoidance stage after a timeout uses K = 0 and W_max = cwnd
    /// (RFC 9438 §4.8).
    after_timeout: bool,
    /// Start of the application-limited period in progress, to be cut out of t.
    app_limited_since: Option<Time>,
    /// `Some` during the initial slow start when HyStart++ is enabled.
    hystart: Option<HyStart>,
    /// `Some` in slow start (initial, or after persistent congestion) when Linux's HyStart is.
    linux_hystart: Option<LinuxHyStart>,
    /// A congestion event set W_max since the start or the last persistent congestion (Linux
    /// `last_max_cwnd != 0`).
    congestion_seen: bool,
    /// `Some` with `growth = "linux"`: the kernel's per-ACK divisor state.
    bictcp: Option<BictcpUpdate>,
}

impl Cubic {
    /// CUBIC in slow start from the context's initial window, with HyStart++ or Linux's HyStart
    /// armed when `cfg.hystart` is set.
    pub fn new(ctx: &CcContext, cfg: CubicConfig) -> Self {
        let mut reno = RenoWindow::new(ctx);
        if cfg.recovery_spans_retransmissions {
            reno.recovery = RecoveryPeriod::spanning_retransmissions();
        }
        if cfg.prr {
            reno = reno.with_prr();
        }
        Cubic {
            cfg,
            reno,
            carry: ByteCarry::default(),
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            after_timeout: false,
            app_limited_since: None,
            hystart: (cfg.hystart && cfg.hystart_variant == HyStartVariant::Rfc9406)
                .then(HyStart::default),
            linux_hystart: Self::linux_hystart(&cfg),
            congestion_seen: false,
            bictcp: (cfg.growth == Growth::Linux).then(BictcpUpdate::default),
        }
    }

    fn linux_hystart(cfg: &CubicConfig) -> Option<LinuxHyStart> {
        (cfg.hystart && cfg.hystart_variant == HyStartVariant::Linux).then(LinuxHyStart::default)
    }

    /// α_cubic = 3(1 − β)/(1 + β) (RFC 9438 §4.3): makes the Reno-friendly estimate grow as fast
    /// on average as Reno does with β = 0.5.
    fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
    }

    /// Adds `bytes` (possibly fractional, never negative) to the window.
    fn grow(&mut self, bytes: f64) {
        self.carry.grow(&mut self.reno.cwnd, bytes);
    }

    /// Leaving slow start without a loss (RFC 9438 §4.10): the next stage starts on a flat curve
    /// at the current window.
    fn exit_slow_start(&mut self) {
        self.reno.ssthresh = self.reno.cwnd;
        self.w_max = self.reno.cwnd as f64;
        self.cwnd_prior = self.reno.cwnd as f64;
        self.epoch = None;
        self.hystart = None;
    }

    fn slow_start(&mut self, ack: &AckEvent) {
        let Some(hs) = self.hystart.as_mut() else {
            self.grow(ack.acked_bytes as f64);
            return;
        };
        if hs.rounds.on_ack(ack.largest_acked) {
            hs.last_round_min_rtt = hs.current_round_min_rtt.take();
            hs.rtt_sample_count = 0;
            if hs.css_baseline_min_rtt.is_some() {
                hs.css_rounds += 1;
                if hs.css_rounds >= HYSTART_CSS_ROUNDS {
                    self.exit_slow_start();
                    return;
                }
            }
        }
        let in_css = hs.css_baseline_min_rtt.is_some();
        if let Some(rtt) = ack.min_rtt_sample {
            hs.current_round_min_rtt = Some(hs.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            hs.rtt_sample_count += 1;
        }
        if hs.rtt_sample_count >= HYSTART_N_RTT_SAMPLE {
            if let (Some(cur), Some(last)) = (hs.current_round_min_rtt, hs.last_round_min_rtt) {
                match hs.css_baseline_min_rtt {
                    None => {
                        let thresh = Duration(last.0 / HYSTART_MIN_RTT_DIVISOR)
                            .clamp(HYSTART_MIN_RTT_THRESH, HYSTART_MAX_RTT_THRESH);
                        if cur >= last + thresh {
                            hs.css_baseline_min_rtt = Some(cur);
                            hs.css_rounds = 0;
                        }
                    }
                    // The delay fell back below where CSS began: the exit was spurious.
                    Some(base) if cur < base => hs.css_baseline_min_rtt = None,
                    Some(_) => {}
                }
            }
        }
        let divisor = if in_css {
            HYSTART_CSS_GROWTH_DIVISOR
        } else {
            1
        };
        self.grow(ack.acked_bytes as f64 / divisor as f64);
    }

    /// Linux's HyStart, when armed, on an ACK in slow start: whether slow start ends here.
    fn linux_hystart_exits(&mut self, now: Time, ack: &AckEvent) -> bool {
        let (cwnd, mss) = (self.reno.cwnd, self.reno.mss);
        self.linux_hystart
            .as_mut()
            .is_some_and(|hs| hs.on_ack(now, ack, cwnd, mss).is_some())
    }

    fn start_epoch(&mut self, now: Time, seg: f64) {
        let cwnd = self.reno.cwnd as f64;
        if self.after_timeout || self.w_max <= cwnd {
            self.after_timeout = false;
            self.w_max = cwnd;
        }
        let k = ((self.w_max - cwnd) / seg / self.cfg.c).cbrt();
        self.epoch = Some(Epoch {
            start: now,
            k,
            w_est: cwnd,
        });
    }

    /// W_cubic(t) in segments (RFC 9438 §4.2, Figure 1).
    fn w_cubic(&self, t: f64, k: f64, seg: f64) -> f64 {
        self.cfg.c * (t - k).powi(3) + self.w_max / seg
    }

    fn congestion_avoidance(&mut self, now: Time, ack: &AckEvent, seg: f64) {
        let new_epoch = self.epoch.is_none();
        if new_epoch {
            self.start_epoch(now, seg);
        }
        let Some(mut epoch) = self.epoch else {
            return;
        };
        if self.bictcp.is_some() {
            self.linux_growth(now, ack, seg, epoch, new_epoch);
            return;
        }
        let cwnd_seg = self.reno.cwnd as f64 / seg;
        let t = (now - epoch.start).as_secs_f64();
        let rtt = match self.cfg.target_rtt {
            TargetRtt::Smoothed => ack.rtt.smoothed,
            TargetRtt::Min => ack.rtt.min,
        }
        .as_secs_f64();
        // Linux's floor on growth before the first loss (zero unless configured).
        let floor = if self.congestion_seen {
            0.0
        } else {
            self.cfg.min_growth_before_loss * ack.acked_bytes as f64
        };

        // Reno-friendly region (RFC 9438 §4.3), in bytes: W_est += α·segments_acked/cwnd·seg.
        let alpha = if self.cfg.alpha_to_one && epoch.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha_cubic()
        };
        epoch.w_est += alpha * ack.acked_bytes as f64 / cwnd_seg;
        self.epoch = Some(epoch);

        if self.cfg.reno_friendly && self.w_cubic(t, epoch.k, seg) < epoch.w_est / seg {
            // Never shrink on an ACK: cwnd may already sit above W_est from the cubic region.
            let w_est = epoch.w_est.min(u64::MAX as f64) as Bytes;
            if w_est > self.reno.cwnd {
                self.reno.cwnd = w_est;
                self.carry.reset();
            }
            if floor > 0.0 {
                self.grow(floor);
            }
        } else {
            // Concave and convex regions (RFC 9438 §4.4, §4.5): aim at W_cubic one RTT ahead.
            let target = self
                .w_cubic(t + rtt, epoch.k, seg)
                .clamp(cwnd_seg, MAX_TARGET_GROWTH * cwnd_seg);
            let growth = (target - cwnd_seg) / cwnd_seg * ack.acked_bytes as f64;
            self.grow(if floor > 0.0 {
                growth.max(floor)
            } else {
                growth
            });
        }
    }
}

impl Cubic {
    /// `growth = "linux"`: whole segments as `bictcp_update` and `tcp_cong_avoid_ai` give them.
    fn linux_growth(&mut self, now: Time, ack: &AckEvent, seg: f64, epoch: Epoch, new: bool) {
        let cwnd = (self.reno.cwnd as f64 / seg) as u64;
        let curve = Curve {
            start: epoch.start,
            k: epoch.k,
            origin: self.w_max / seg,
            c: self.cfg.c,
            ahead: match self.cfg.target_rtt {
                TargetRtt::Smoothed => ack.rtt.smoothed,
                TargetRtt::Min => ack.rtt.min,
            },
        };
        let (beta, before_loss) = (self.cfg.beta, !self.congestion_seen);
        let Some(u) = self.bictcp.as_mut() else {
            return;
        };
        if new {
            u.start_epoch(cwnd);
        }
        let grow = u.on_ack(
            now,
            u64::from(ack.acked_packets),
            cwnd,
            &curve,
            beta,
            before_loss,
        );
        self.reno.cwnd = self
            .reno
            .cwnd
            .saturating_add(grow.saturating_mul(seg as Bytes));
    }
}

impl RenoFamily for Cubic {
    reno_window_in!(reno);

    fn reset_growth(&mut self) {
        self.carry.reset();
    }

    /// Multiplicative decrease (RFC 9438 §4.6) with fast convergence (§4.7).
    fn on_congestion_event(&mut self, _now: Time) {
        let cwnd = self.reno.cwnd as f64;
        self.w_max = if self.cfg.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.cfg.beta) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        // cwnd·β rather than flight_size·β is allowed because growth stops while app-limited.
        self.reno.reduce(self.cfg.beta);
        self.epoch = None;
        self.after_timeout = false;
        self.hystart = None;
        self.linux_hystart = None;
        self.congestion_seen = true;
    }

    /// Persistent congestion, QUIC's equivalent of an RTO (RFC 9438 §4.8, RFC 9002 §7.6.2). The
    /// threshold is already set with β (unless this epoch had reduced it already).
    fn on_persistent_congestion(&mut self, _now: Time) {
        self.epoch = None;
        self.after_timeout = true;
        self.hystart = None;
        self.app_limited_since = None;
        // Linux's RTO resets CUBIC (`bictcp_reset`, `bictcp_hystart_reset` on TCP_CA_Loss): W_max
        // forgotten and HyStart armed again for the slow start back to ssthresh.
        self.linux_hystart = Self::linux_hystart(&self.cfg);
        self.congestion_seen = false;
    }

    /// A written window restarts the curve from it; W_max is kept, so CUBIC still aims back at
    /// the last saturation point.
    fn on_cwnd_written(&mut self) {
        self.epoch = None;
    }

    /// HyStart++ is for the initial slow start only (RFC 9406 §4.3); a policy that sets the
    /// threshold has taken that decision over.
    fn on_ssthresh_written(&mut self) {
        self.hystart = None;
        self.linux_hystart = None;
    }
}

impl CongestionControl for Cubic {
    reno_family_methods!();

    fn name(&self) -> &str {
        "cubic"
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        self.reno.recovery.on_sent(sent);
        self.reno.prr_on_sent(sent.bytes);
        if let Some(hs) = self.hystart.as_mut() {
            hs.rounds.on_sent(sent.pn);
        }
        if let Some(hs) = self.linux_hystart.as_mut() {
            hs.on_sent(sent.pn);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if self.reno.recovery.covers(ack.largest_acked_sent_time) {
            // Acknowledges a packet from before the last reduction: no growth (PRR's window).
            self.reno.prr_on_ack(ack.acked_bytes, ack.in_flight);
            self.reno.apply_clamp();
            return;
        }
        if self.reno.recovery.end() {
            self.reno.prr_end();
        }
        if ack.app_limited {
            // No growth while application-limited (RFC 9002 §7.8), and the time does not count
            // towards t (RFC 9438 §4.2).
            self.app_limited_since.get_or_insert(now);
            return;
        }
        if let Some(since) = self.app_limited_since.take() {
            if let Some(e) = self.epoch.as_mut() {
                e.start += now - since;
            }
        }
        let seg = if ack.mss > 0 { ack.mss } else { self.reno.mss } as f64;
        if self.reno.in_slow_start() && self.linux_hystart_exits(now, ack) {
            // The kernel runs HyStart (`pkts_acked`) before `cong_avoid`: this ACK already grows
            // the window in congestion avoidance.
            self.exit_slow_start();
            self.linux_hystart = None;
        }
        if self.reno.in_slow_start() {
            self.slow_start(ack);
        } else {
            self.congestion_avoidance(now, ack, seg);
        }
        self.reno.apply_clamp();
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = self.reno.telemetry();
        let hs = self.hystart.as_ref();
        if t.state == "slow_start" && hs.is_some_and(|h| h.css_baseline_min_rtt.is_some()) {
            t.state = "css";
        }
        t.push("w_max_bytes", self.w_max);
        t.push("cwnd_prior_bytes", self.cwnd_prior);
        t.push("k_s", self.epoch.map_or(f64::NAN, |e| e.k));
        t.push("w_est_bytes", self.epoch.map_or(f64::NAN, |e| e.w_est));
        t.push(
            "hystart_last_round_min_rtt_ms",
            reno::millis_or_nan(hs.and_then(|h| h.last_round_min_rtt)),
        );
        t.push(
            "hystart_current_round_min_rtt_ms",
            reno::millis_or_nan(hs.and_then(|h| h.current_round_min_rtt)),
        );
        t.push(
            "hystart_css_rounds",
            hs.filter(|h| h.css_baseline_min_rtt.is_some())
                .map_or(f64::NAN, |h| h.css_rounds as f64),
        );
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{
        ack, assert_params, loss, persistent_congestion, start_in_ca, Flow,
    };
    use crate::cc::Calibration;
    use crate::cc::ClampChange;
    use crate::estimators::rtt::RttSnapshot;

    const MSS: Bytes = 1000;

    fn cubic(cfg: CubicConfig) -> Cubic {
        Cubic::new(&CcContext::new(MSS), cfg)
    }

    fn no_hystart() -> CubicConfig {
        CubicConfig {
            hystart: false,
            ..CubicConfig::default()
        }
    }

    /// A CUBIC already in congestion avoidance at `w` bytes, just after a loss at `w_max` bytes.
    fn after_loss_at(flow: &mut Flow, cfg: CubicConfig, w_max: Bytes) -> Cubic {
        let mut cc = cubic(cfg);
        cc.calibrate(
            flow.now,
            &Calibration {
                cwnd: Some(w_max),
                ..Calibration::default()
            },
        );
        flow.lose_fresh(&mut cc);
        cc
    }

    #[test]
    fn loss_keeps_beta_of_the_window() {
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = cubic(no_hystart());
        flow.run_rtts(&mut cc, 4); // slow start from 10 to about 160 packets
        let before = cc.cwnd();
        assert!(before >= 100 * MSS, "slow start reached {before}");
        flow.lose_oldest(&mut cc);
        let expected = (before as f64 * 0.7) as Bytes;
        assert!(
            cc.cwnd().abs_diff(expected) <= MSS,
            "{} vs {expected}",
            cc.cwnd()
        );
        assert_eq!(cc.ssthresh(), Some(cc.cwnd()));
        let t = cc.telemetry();
        assert_eq!(t.state, "recovery");
        assert_eq!(t.get("w_max_bytes"), Some(before as f64));
    }

    #[test]
    fn one_reduction_per_recovery_epoch() {
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = after_loss_at(&mut flow, no_hystart(), 100 * MSS);
        assert_eq!(cc.cwnd(), 70 * MSS);
        // Packets sent before the reduction and lost later do not reduce again.
        let sent_before = flow.now - Duration::from_millis(10);
        cc.on_loss(flow.now, &loss(0, sent_before, MSS, MSS));
        assert_eq!(cc.cwnd(), 70 * MSS);
        // ACKs of packets from before the epoch do not grow the window either.
        let a = ack(
            1,
            sent_before,
            MSS,
            MSS,
            Duration::from_millis(50),
            flow.rtt_snapshot(),
        );
        cc.on_ack(flow.now, &a);
        assert_eq!(cc.cwnd(), 70 * MSS);
        // Recovery ends with the ACK of a packet sent after it began; a loss from before the
        // reduction that is only declared now still belongs to the answered event.
        flow.run_rtts(&mut cc, 2);
        assert_eq!(cc.telemetry().state, "congestion_avoidance");
        let w = cc.cwnd();
        cc.on_loss(flow.now, &loss(0, sent_before, MSS, MSS));
        assert_eq!(cc.cwnd(), w);
        // A loss of a packet sent after recovery began is a new congestion event.
        flow.lose_fresh(&mut cc);
        assert_eq!(cc.cwnd(), (w as f64 * BETA) as Bytes);
    }

    #[test]
    fn window_follows_the_cubic_curve() {
        // W_max = 1000 segments so the Reno-friendly estimate (~0.53 segment per 100 ms RTT)
        // stays far below the curve and CUBIC's own growth is what is measured.
        let w_max_seg = 1000.0;
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = after_loss_at(&mut flow, no_hystart(), 1000 * MSS);
        assert_eq!(cc.cwnd(), 700 * MSS);
        // The epoch starts with the first ACK of a packet sent after the reduction.
        flow.run_rtts(&mut cc, 2);
        let k = cc.telemetry().get("k_s").expect("epoch started");
        let expected_k = (w_max_seg * (1.0 - BETA) / C).cbrt();
        assert!(
            (k - expected_k).abs() < 1e-9,
            "K = {k}, expected {expected_k}"
        );
        let epoch_start = cc.epoch.expect("epoch").start;

        flow.run_until(&mut cc, epoch_start + Duration::from_secs_f64(k));
        let at_k = cc.cwnd() as f64 / MSS as f64;
        assert!((at_k - w_max_seg).abs() / w_max_seg < 0.01, "W(K) = {at_k}");

        flow.run_until(&mut cc, epoch_start + Duration::from_secs_f64(2.0 * k));
        let at_2k = cc.cwnd() as f64 / MSS as f64;
        let expected = C * k.powi(3) + w_max_seg;
        assert!(
            (at_2k - expected).abs() / expected < 0.01,
            "W(2K) = {at_2k} vs {expected}"
        );

        // Halfway up the concave side: W(K/2) = W_max − C(K/2)³, checked on a fresh flow.
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = after_loss_at(&mut flow, no_hystart(), 1000 * MSS);
        flow.run_rtts(&mut cc, 2);
        let epoch_start = cc.epoch.expect("epoch").start;
        flow.run_until(&mut cc, epoch_start + Duration::from_secs_f64(k / 2.0));
        let half = cc.cwnd() as f64 / MSS as f64;
        let expected = w_max_seg - C * (k / 2.0).powi(3);
        assert!(
            (half - expected).abs() / expected < 0.01,
            "W(K/2) = {half} vs {expected}"
        );
    }

    #[test]
    fn reno_friendly_region_grows_by_alpha_cubic_per_rtt() {
        // A short RTT puts the Reno-friendly estimate above the curve: K = cbrt(75) ≈ 4.2 s is
        // 4200 RTTs of 1 ms, while W_est gains α ≈ 0.53 segment every RTT.
        let mut flow = Flow::new(MSS, Duration::from_millis(1));
        let mut cc = after_loss_at(&mut flow, no_hystart(), 100 * MSS);
        flow.run_rtts(&mut cc, 2);
        let start = cc.cwnd() as f64 / MSS as f64;
        flow.run_rtts(&mut cc, 40);
        let grown = cc.cwnd() as f64 / MSS as f64 - start;
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        // Over 40 RTTs: about 40·α ≈ 21.2 segments (the window grows, so slightly fewer ACKs
        // per segment of window at the end).
        assert!((grown - 40.0 * alpha).abs() < 1.5, "grew {grown} segments");
        // Once W_est passes cwnd_prior (100 segments), α becomes 1.
        flow.run_rtts(&mut cc, 40);
        assert!(cc.cwnd() >= 100 * MSS);
        let before = cc.cwnd() as f64 / MSS as f64;
        flow.run_rtts(&mut cc, 20);
        let grown = cc.cwnd() as f64 / MSS as f64 - before;
        assert!(
            (grown - 20.0).abs() < 1.5,
            "grew {grown} segments in 20 RTTs"
        );
    }

    #[test]
    fn without_reno_friendly_region_the_window_follows_the_curve_only() {
        // Same setting as above: 40 RTTs of 1 ms after a loss at 100 segments. The curve alone
        // barely moves in 40 ms (K ≈ 4.2 s: W_cubic(t) − β·W_max = C·(K³ − (K − t)³) ≈ 0.85
        // segment at t = 0.042 s), while the Reno-friendly region adds ~21 segments.
        let mut flow = Flow::new(MSS, Duration::from_millis(1));
        let cfg = CubicConfig {
            reno_friendly: false,
            ..no_hystart()
        };
        let mut cc = after_loss_at(&mut flow, cfg, 100 * MSS);
        let start = cc.cwnd() as f64 / MSS as f64;
        flow.run_rtts(&mut cc, 42);
        let grown = cc.cwnd() as f64 / MSS as f64 - start;
        let k: f64 = (100.0 * (1.0 - BETA) / C).cbrt();
        let t = 0.042;
        let curve = C * (k.powi(3) - (k - t).powi(3));
        assert!(
            (grown - curve).abs() < 0.5,
            "grew {grown} segments, curve {curve}"
        );
    }

    /// Linux's parameters (`stack = "linux"`), HyStart off so tests choose how slow start ends.
    fn linux_no_hystart() -> CubicConfig {
        CubicConfig {
            beta: LINUX_BETA,
            alpha_to_one: false,
            target_rtt: TargetRtt::Min,
            min_growth_before_loss: LINUX_MIN_GROWTH_BEFORE_LOSS,
            ..no_hystart()
        }
    }

    #[test]
    fn without_the_alpha_switch_the_reno_friendly_estimate_keeps_alpha_cubic() {
        // As `reno_friendly_region_grows_by_alpha_cubic_per_rtt`, past W_est = cwnd_prior: the
        // RFC's α = 1 would add 20 segments in 20 RTTs; Linux's α_cubic adds about 10.6.
        let mut flow = Flow::new(MSS, Duration::from_millis(1));
        let cfg = CubicConfig {
            alpha_to_one: false,
            ..no_hystart()
        };
        let mut cc = after_loss_at(&mut flow, cfg, 100 * MSS);
        flow.run_rtts(&mut cc, 82);
        assert!(cc.cwnd() >= 100 * MSS);
        let before = cc.cwnd() as f64 / MSS as f64;
        flow.run_rtts(&mut cc, 20);
        let grown = cc.cwnd() as f64 / MSS as f64 - before;
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        assert!(
            (grown - 20.0 * alpha).abs() < 1.0,
            "grew {grown} segments in 20 RTTs"
        );
    }

    /// The window one ACK adds 1 s into a CA epoch that started at 70 segments after a loss at
    /// 100, with an RTT estimate of srtt 300 ms over a min RTT of 40 ms (a deep queue).
    fn growth_one_second_in(target_rtt: TargetRtt) -> Bytes {
        let cfg = CubicConfig {
            target_rtt,
            ..no_hystart()
        };
        let mut cc = cubic(cfg);
        let t0 = Time::ZERO + Duration::from_secs(1);
        start_in_ca(&mut cc, t0, 100 * MSS);
        cc.on_loss(t0, &loss(0, t0, MSS, MSS));
        assert_eq!(cc.cwnd(), 70 * MSS);
        let rtt = RttSnapshot {
            smoothed: Duration::from_millis(300),
            min: Duration::from_millis(40),
            has_sample: true,
            ..RttSnapshot::default()
        };
        let sample = Duration::from_millis(300);
        // The first ACK of a packet sent after the loss starts the epoch.
        let t1 = t0 + Duration::from_millis(300);
        cc.on_ack(t1, &ack(1, t0 + Duration(1), MSS, MSS, sample, rtt));
        let w = cc.cwnd();
        let t2 = t1 + Duration::from_secs(1);
        cc.on_ack(t2, &ack(2, t1, MSS, MSS, sample, rtt));
        cc.cwnd() - w
    }

    #[test]
    fn the_target_reads_the_curve_srtt_or_min_rtt_ahead() {
        // K = cbrt(30 / 0.4) s; W(t) = 0.4 (t − K)³ + 100 segments; growth per ACK of one
        // segment is (W(t + rtt) − 70) / 70 segments.
        let k = (30.0f64 / C).cbrt();
        let expect = |rtt: f64| {
            let w = C * (1.0 + rtt - k).powi(3) + 100.0;
            (w - 70.0) / 70.0 * MSS as f64
        };
        let smoothed = growth_one_second_in(TargetRtt::Smoothed) as f64;
        let min = growth_one_second_in(TargetRtt::Min) as f64;
        assert!((smoothed - expect(0.3)).abs() <= 1.0, "{smoothed}");
        assert!((min - expect(0.04)).abs() <= 1.0, "{min}");
        assert!(smoothed > min + 30.0);
    }

    #[test]
    fn linux_grows_at_least_five_percent_per_rtt_until_the_first_loss() {
        // Congestion avoidance on a flat curve (W_max = cwnd = 100 segments, as after HyStart)
        // with 1-ms RTTs: in 10 RTTs the curve adds nothing and the Reno-friendly estimate one
        // segment per RTT (α = 1 at once: cwnd_prior is still 0) under RFC 9438. Linux's floor
        // compounds 5 % per RTT: 100 · 1.05¹⁰ ≈ 163.
        let run = |cfg: CubicConfig| {
            let mut flow = Flow::new(MSS, Duration::from_millis(1));
            let mut cc = cubic(cfg);
            start_in_ca(&mut cc, flow.now, 100 * MSS);
            flow.run_rtts(&mut cc, 10);
            (cc.cwnd() / MSS, flow, cc)
        };
        let (rfc, ..) = run(no_hystart());
        assert!((108..=111).contains(&rfc), "{rfc}");
        let (linux, mut flow, mut cc) = run(linux_no_hystart());
        assert!((158..=165).contains(&linux), "{linux}");
        // After a loss the floor is gone: over 20 RTTs the window grows by α_cubic per RTT
        // (about 10.6 segments), where 5 % per RTT would have been 1.05²⁰ ≈ 2.65 times.
        flow.lose_fresh(&mut cc);
        flow.run_rtts(&mut cc, 2);
        let w = cc.cwnd() / MSS;
        flow.run_rtts(&mut cc, 20);
        let grown = cc.cwnd() / MSS - w;
        assert!((8..=13).contains(&grown), "grew {grown} segments from {w}");
    }

    #[test]
    fn linux_hystart_ends_slow_start_at_once_on_a_delay_rise() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let cfg = CubicConfig {
            hystart: true,
            hystart_variant: HyStartVariant::Linux,
            ..linux_no_hystart()
        };
        let mut cc = cubic(cfg);
        // 10 → 20 → 40 packets at 100 ms; the Flow's ACKs arrive together, so no ACK train.
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        assert_eq!(cc.telemetry().state, "slow_start");
        // 12.5 ms more (threshold clamp(100/8, 4, 16) = 12.5 ms) is not above the threshold.
        flow.rtt = Duration::from_micros(112_500);
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        assert_eq!(cc.telemetry().state, "slow_start");
        // 113 ms: the round's 9th sample ends slow start, with no conservative phase.
        flow.rtt = Duration::from_millis(113);
        let w = cc.cwnd();
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        // The round at 112.5 ms doubled the window to 2w; the 9th ACK of the next ends slow start
        // after 8 ACKs' growth, and ssthresh is the window then.
        assert_eq!(cc.telemetry().state, "congestion_avoidance");
        assert_eq!(cc.ssthresh(), Some(2 * w + 8 * MSS));
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fast, expected_factor) in [(true, (1.0 + BETA) / 2.0), (false, 1.0)] {
            let cfg = CubicConfig {
                fast_convergence: fast,
                ..no_hystart()
            };
            let mut flow = Flow::new(MSS, Duration::from_millis(50));
            let mut cc = after_loss_at(&mut flow, cfg, 100 * MSS);
            assert_eq!(cc.telemetry().get("w_max_bytes"), Some(100_000.0));
            // A second loss below the old W_max: the flow is yielding to a newcomer.
            flow.run_rtts(&mut cc, 3);
            let w = cc.cwnd() as f64;
            assert!(w < 100_000.0);
            flow.lose_fresh(&mut cc);
            let w_max = cc.telemetry().get("w_max_bytes").expect("w_max");
            assert!(
                (w_max - w * expected_factor).abs() < 1.0,
                "fast={fast}: W_max {w_max} from cwnd {w}"
            );
            assert_eq!(cc.cwnd(), (w * BETA) as Bytes);
        }
    }

    #[test]
    fn app_limited_time_is_not_counted_in_t() {
        // Returns the growth of one ACK that arrives 3 s after the last one, with or without an
        // application-limited ACK in between.
        let growth_after_pause = |app_limited: bool| -> (Bytes, Time, Time) {
            let mut flow = Flow::new(MSS, Duration::from_millis(100));
            let mut cc = after_loss_at(&mut flow, no_hystart(), 1000 * MSS);
            flow.run_rtts(&mut cc, 2);
            let start = cc.epoch.expect("epoch").start;
            let snap = flow.rtt_snapshot();
            if app_limited {
                let mut idle = ack(u64::MAX - 1, flow.now, MSS, MSS, flow.rtt, snap);
                idle.app_limited = true;
                cc.on_ack(flow.now, &idle);
            }
            let w = cc.cwnd();
            let resume_at = flow.now + Duration::from_secs(3);
            cc.on_ack(
                resume_at,
                &ack(u64::MAX, resume_at, MSS, MSS, flow.rtt, snap),
            );
            (cc.cwnd() - w, start, cc.epoch.expect("epoch").start)
        };
        let (paused_growth, start, shifted) = growth_after_pause(true);
        assert_eq!(shifted, start + Duration::from_secs(3));
        // t ≈ 0.1 s: W(t + RTT) ≈ 719 segments for a window of ~700, a few dozen bytes per ACK.
        assert!(paused_growth < 100, "grew {paused_growth} bytes");
        // Counting the pause, t ≈ 3.1 s: W(t + RTT) ≈ 918 segments, hundreds of bytes per ACK.
        let (busy_growth, start, same) = growth_after_pause(false);
        assert_eq!(same, start);
        assert!(busy_growth > 200, "grew {busy_growth} bytes");
    }

    #[test]
    fn persistent_congestion_collapses_then_restarts_the_curve_flat() {
        let mut flow = Flow::new(MSS, Duration::from_millis(20));
        // W_max = 100 segments from an ordinary loss; recovery ends within two RTTs.
        let mut cc = after_loss_at(&mut flow, no_hystart(), 100 * MSS);
        flow.run_rtts(&mut cc, 2);
        assert_eq!(cc.telemetry().state, "congestion_avoidance");
        let w = cc.cwnd();
        cc.on_loss(flow.now, &persistent_congestion(0, flow.now, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
        let ssthresh = (w as f64 * BETA) as Bytes;
        assert_eq!(cc.ssthresh(), Some(ssthresh));
        assert_eq!(cc.telemetry().state, "slow_start");
        // Slow start back to ssthresh; then the first CA stage has K = 0 and W_max = cwnd
        // (RFC 9438 §4.8), not the W_max of 100 segments from before the timeout.
        while cc.telemetry().state != "congestion_avoidance" || cc.epoch.is_none() {
            assert!(flow.ack_next(&mut cc));
        }
        let t = cc.telemetry();
        assert_eq!(t.get("k_s"), Some(0.0));
        let w_max = t.get("w_max_bytes").expect("w_max");
        assert!(
            (w_max - ssthresh as f64).abs() <= MSS as f64,
            "W_max {w_max}, ssthresh {ssthresh}"
        );
    }

    /// Runs one round of `flow`: every packet in flight is acked.
    fn run_round(flow: &mut Flow, cc: &mut Cubic) {
        flow.run_rtts(cc, 1);
    }

    #[test]
    fn hystart_enters_css_on_rtt_rise_and_ca_after_five_rounds() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = cubic(CubicConfig::default());
        // Rounds 1 and 2 at 100 ms (ACKs at 100 and 200 ms).
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        assert_eq!(cc.telemetry().state, "slow_start");
        // Packets sent from 300 ms on take 112 ms. The threshold is clamp(100/8, 4, 16) = 12.5 ms
        // and 112 < 100 + 12.5: no exit in round 4 (ACKs at 412 ms).
        flow.rtt = Duration::from_millis(112);
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        assert_eq!(cc.telemetry().state, "slow_start");
        assert_eq!(
            cc.telemetry().get("hystart_current_round_min_rtt_ms"),
            Some(112.0)
        );
        // Packets sent from 524 ms on take 130 ms; 130 >= 112 + 112/8: CSS in round 6 (654 ms).
        flow.rtt = Duration::from_millis(130);
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        let t = cc.telemetry();
        assert_eq!(t.state, "css");
        assert_eq!(t.get("hystart_css_rounds"), Some(0.0));
        assert_eq!(cc.ssthresh(), Some(Bytes::MAX));
        // CSS grows by a quarter of the acked bytes.
        let w = cc.cwnd();
        assert!(flow.ack_next(&mut cc));
        assert_eq!(cc.cwnd() - w, MSS / HYSTART_CSS_GROWTH_DIVISOR);
        // The partial round 6 counts: rounds begin at 784, 914, 1044, 1174 ms and the fifth
        // boundary, at 1304 ms, ends CSS.
        let mut seen = vec![0.0];
        while cc.telemetry().state == "css" {
            let r = cc.telemetry().get("hystart_css_rounds").expect("css");
            if seen.last() != Some(&r) {
                seen.push(r);
            }
            assert!(flow.ack_next(&mut cc));
        }
        assert_eq!(seen, [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(flow.now, Time::ZERO + Duration::from_millis(1304));
        assert_eq!(cc.telemetry().state, "congestion_avoidance");
        // RFC 9406: ssthresh = cwnd; RFC 9438 §4.10: W_max = cwnd, K = 0.
        assert_eq!(cc.ssthresh(), Some(cc.cwnd()));
        assert_eq!(cc.telemetry().get("w_max_bytes"), Some(cc.cwnd() as f64));
    }

    #[test]
    fn hystart_returns_to_slow_start_when_the_rtt_falls_back() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = cubic(CubicConfig::default());
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        flow.rtt = Duration::from_millis(130);
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        assert_eq!(cc.telemetry().state, "css");
        flow.rtt = Duration::from_millis(100);
        run_round(&mut flow, &mut cc);
        run_round(&mut flow, &mut cc);
        assert_eq!(cc.telemetry().state, "slow_start");
    }

    #[test]
    fn hystart_ignores_rounds_with_too_few_samples() {
        let mut cc = cubic(CubicConfig::default());
        let snap = RttSnapshot::default();
        // Rounds of one packet each: never N_RTT_SAMPLE samples, so no exit however high the RTT.
        let mut now = Time::ZERO;
        for (pn, rtt_ms) in [(0u64, 10u64), (1, 10), (2, 200), (3, 400), (4, 800)] {
            cc.on_sent(
                now,
                &SentPacket {
                    pn,
                    bytes: MSS,
                    ..SentPacket::default()
                },
            );
            now += Duration::from_millis(rtt_ms);
            cc.on_ack(
                now,
                &ack(
                    pn,
                    now - Duration::from_millis(rtt_ms),
                    MSS,
                    MSS,
                    Duration::from_millis(rtt_ms),
                    snap,
                ),
            );
        }
        assert_eq!(cc.telemetry().state, "slow_start");
        assert_eq!(cc.cwnd(), 15 * MSS);
    }

    #[test]
    fn calibrate_sets_and_clamps_the_window() {
        let mut cc = cubic(CubicConfig::default());
        cc.calibrate(
            Time::ZERO,
            &Calibration {
                cwnd: Some(50 * MSS),
                ssthresh: Some(0),
                cwnd_clamp: Some(ClampChange::To(30 * MSS)),
                ..Calibration::default()
            },
        );
        assert_eq!(cc.cwnd(), 30 * MSS);
        assert_eq!(cc.ssthresh(), Some(2 * MSS));
        cc.calibrate(
            Time::ZERO,
            &Calibration {
                cwnd: Some(0),
                cwnd_clamp: Some(ClampChange::Remove),
                ..Calibration::default()
            },
        );
        assert_eq!(cc.cwnd(), 2 * MSS);
    }

    #[test]
    fn params_are_validated() {
        use serde_json::json;
        assert_params(
            json!({"name": "cubic", "beta": 0.8, "c": 0.5, "fast_convergence": false, "hystart": false}),
            &[
                json!({"name": "cubic", "min_growth_before_loss": 1.5}),
                json!({"name": "cubic", "hystart_variant": "hystart3"}),
                json!({"name": "cubic", "target_rtt": "max"}),
                json!({"name": "cubic", "beta": 1.5}),
                json!({"name": "cubic", "c": -1.0}),
                json!({"name": "cubic", "betta": 0.7}),
                json!({"name": "cubic", "hystart": 1}),
            ],
        );
    }
}
