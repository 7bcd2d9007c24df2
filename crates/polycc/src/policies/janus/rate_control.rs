//! Janus performance enhancement (Zhou et al., IEEE TMC 2018, §4.4): rate control through the
//! slow-start threshold and a window clamp, buffer clearing before each switch to the
//! conservative CCA, and the propagation-delay estimate both rely on.

use crate::cc::ClampChange;
use crate::estimators::windowed_filter::WindowedFilter;
use crate::units::{Bytes, Duration, Time};

/// §4.4, §7.2: extra share a satisfied flow may take, eps = 0.1: the conservative stage clamps
/// the window to (1 + eps)·R·RTT.
pub const EPSILON: f64 = 0.1;
/// §4.4, §7.2: packets a conservative CCA keeps queued on average, Q_avg = 4 (Vegas holds
/// alpha..beta = 2..4, the paper takes 4).
pub const Q_AVG_PACKETS: f64 = 4.0;
/// The paper takes RTT_min "at the start of a conservative stage", after buffer clearing has
/// cut the window (§4.4), without saying over how long. Packets sent before the cut sit behind
/// the aggressive stage's queue, so only samples of packets sent after it count, and the
/// measurement runs for this many RTTs from the first of them: the cleared window's first
/// flight, which finds the queue the cut drained and only the conservative CCA's own packets.
pub const DP_MEASURE_RTTS: u32 = 1;
/// How long an RTT sample bounds D_p from above: a propagation delay is never longer than an
/// RTT measured on the same path, so eq. 1 is capped by the smallest sample of this window.
/// Janus takes the lifetime minimum (base_rtt) as D_p until eq. 1 runs; a window rather than the
/// whole lifetime lets D_p follow a path that lengthens (§8.4, Figs. 17–18) once the old path's
/// samples have aged out. 10 s is BBR's MinRTT filter length (Cardwell et al., ACM Queue 2016;
/// draft-cardwell-iccrg-bbr-congestion-control MinRTTFilterLen), the span a deployed CCA trusts
/// an RTT minimum for.
pub const DP_GUARD_WINDOW: Duration = Duration::from_secs(10);
/// Floor of the estimate as a fraction of RTT_min: when Q_avg / P_avg exceeds half the RTT the
/// throughput is too low for the correction to be meaningful (the paper gives no floor).
pub const DP_FLOOR_FRACTION: f64 = 0.5;

fn bytes_for(rate_bps: f64, d: Duration) -> Bytes {
    (rate_bps.max(0.0) / 8.0 * d.as_secs_f64()).round() as Bytes
}

/// Aggressive stage: snd_ssthresh = R·D_p, the window the target rate needs, so slow start
/// carries the flow straight there.
pub fn aggressive_ssthresh(target_bps: f64, dp: Duration, min: Bytes) -> Bytes {
    bytes_for(target_bps, dp).max(min)
}

/// Buffer clearing: before a switch to the conservative CCA the window is cut to P_avg·D_p, the
/// flow's share without its queue (never raised by it). Janus hands it over as the threshold
/// too, so the conservative CCA starts in congestion avoidance there.
pub fn clearing_cwnd(cwnd: Bytes, p_avg_bps: f64, dp: Duration, min: Bytes) -> Bytes {
    cwnd.min(bytes_for(p_avg_bps, dp)).max(min)
}

/// Conservative stage rate control of a flow with target R: clamp the window at
/// (1 + eps)·R·RTT once P_avg > (1 + eps)·R; release it once P_avg < R.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clamp {
    /// The extra share eps ([`EPSILON`]).
    pub epsilon: f64,
    /// The clamp in force.
    pub value: Option<Bytes>,
}

impl Clamp {
    /// No clamp in force yet.
    pub fn new(epsilon: f64) -> Self {
        Clamp {
            epsilon,
            value: None,
        }
    }

    /// After a measurement window of the conservative stage: the clamp change to write into the
    /// CCA, `None` for no change. While set, it follows the RTT.
    pub fn update(
        &mut self,
        p_avg_bps: f64,
        target_bps: f64,
        rtt: Duration,
        min: Bytes,
    ) -> Option<ClampChange> {
        let limit = (1.0 + self.epsilon) * target_bps;
        let want = if self.value.is_some() {
            (p_avg_bps >= target_bps).then(|| bytes_for(limit, rtt).max(min))
        } else {
            (p_avg_bps > limit).then(|| bytes_for(limit, rtt).max(min))
        };
        if want == self.value {
            return None;
        }
        self.value = want;
        Some(ClampChange::to_bound(want))
    }

    /// The clamp belongs to the conservative stage: forget it on leaving.
    pub fn clear(&mut self) {
        self.value = None;
    }
}

/// A measurement of RTT_min for eq. 1 in progress.
#[derive(Clone, Copy, Debug)]
struct Measurement {
    /// When buffer clearing cut the window: samples of packets sent earlier do not count.
    cleared_at: Time,
    /// End of the measurement, set by the first sample that counts.
    until: Option<Time>,
    /// The smallest sample that counted so far.
    min: Option<Duration>,
}

/// D_p, the round-trip propagation delay: the connection's smallest RTT until the first
/// conservative stage, then at the start of each conservative stage
/// D_p = RTT_min − Q_avg / P_avg (eq. 1), which follows a path whose delay changed. RTT_min is
/// taken from packets sent after buffer clearing, and D_p ([`Self::get`]) never exceeds the
/// smallest RTT of the last [`DP_GUARD_WINDOW`]: a measurement that still saw a standing queue
/// (ours, when the clearing left one, or another flow's) would otherwise clear to a window that
/// keeps it. [`Self::unbounded`] is eq. 1's value without that bound.
#[derive(Clone, Debug)]
pub struct PropagationDelay {
    q_avg_bytes: f64,
    /// Eq. 1's last result, or the lifetime minimum before eq. 1 has run.
    dp: Option<Duration>,
    /// Smallest RTT sample over [`DP_GUARD_WINDOW`], the guard's bound.
    recent_min: WindowedFilter<Duration>,
    measuring: Option<Measurement>,
    /// The last estimate came from eq. 1 (not the lifetime minimum).
    pub from_equation: bool,
}

impl PropagationDelay {
    /// No estimate yet; eq. 1 will take Q_avg as `q_avg_packets` ([`Q_AVG_PACKETS`]) of
    /// `mss` bytes.
    pub fn new(q_avg_packets: f64, mss: Bytes) -> Self {
        PropagationDelay {
            q_avg_bytes: q_avg_packets * mss as f64,
            dp: None,
            recent_min: WindowedFilter::new_min(DP_GUARD_WINDOW.as_nanos()),
            measuring: None,
            from_equation: false,
        }
    }

    /// Eq. 1's last result (the lifetime minimum before it has run), without the bound.
    pub fn unbounded(&self) -> Option<Duration> {
        self.dp
    }

    /// D_p, once an RTT sample has been seen: the estimate, capped by the recent minimum RTT.
    pub fn get(&self) -> Option<Duration> {
        let dp = self.dp?;
        Some(self.recent_min.get().map_or(dp, |m| dp.min(m)))
    }

    /// Buffer clearing cut the window at `now`: measure RTT_min over the first
    /// [`DP_MEASURE_RTTS`] RTTs of packets sent from then on.
    pub fn start_measuring(&mut self, now: Time) {
        self.measuring = Some(Measurement {
            cleared_at: now,
            until: None,
            min: None,
        });
    }

    /// An RTT sample at `now` of a packet sent at `sent`; `p_avg_bps` is the current average
    /// throughput. Returns true when it completed a measurement and updated D_p.
    pub fn on_sample(&mut self, now: Time, sample: Duration, sent: Time, p_avg_bps: f64) -> bool {
        self.recent_min.update(now, sample);
        if !self.from_equation {
            // Until eq. 1 has run: the connection's minimum (base_rtt).
            self.dp = Some(self.dp.map_or(sample, |d| d.min(sample)));
        }
        let Some(m) = self.measuring.as_mut() else {
            return false;
        };
        if sent < m.cleared_at {
            // Queued behind what the aggressive stage left: not yet the cleared window.
            return false;
        }
        let until = *m
            .until
            .get_or_insert(now + sample * u64::from(DP_MEASURE_RTTS));
        let rtt_min = m.min.map_or(sample, |v| v.min(sample));
        m.min = Some(rtt_min);
        if now < until {
            return false;
        }
        self.measuring = None;
        self.dp = Some(Self::estimate(rtt_min, self.q_avg_bytes, p_avg_bps));
        self.from_equation = true;
        true
    }

    /// Eq. 1 with the floor [`DP_FLOOR_FRACTION`]·RTT_min.
    pub fn estimate(rtt_min: Duration, q_avg_bytes: f64, p_avg_bps: f64) -> Duration {
        let floor = rtt_min.mul_f64(DP_FLOOR_FRACTION);
        if p_avg_bps <= 0.0 {
            return floor;
        }
        let queueing = Duration::from_secs_f64(q_avg_bytes * 8.0 / p_avg_bps);
        (rtt_min - queueing).max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1500;
    const MIN: Bytes = 2 * MSS;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn ssthresh_is_the_target_window_over_the_propagation_delay() {
        // 8 Mbit/s over 60 ms = 60 000 bytes = 40 packets.
        assert_eq!(aggressive_ssthresh(8e6, ms(60), MIN), 60_000);
        assert_eq!(aggressive_ssthresh(0.0, ms(60), MIN), MIN);
    }

    #[test]
    fn buffer_clearing_cuts_to_the_average_rate_times_dp() {
        // P_avg 10 Mbit/s, D_p 40 ms: 50 000 bytes, below a 90 000-byte window.
        assert_eq!(clearing_cwnd(90_000, 10e6, ms(40), MIN), 50_000);
        // Never raises the window.
        assert_eq!(clearing_cwnd(30_000, 10e6, ms(40), MIN), 30_000);
        assert_eq!(clearing_cwnd(90_000, 0.0, ms(40), MIN), MIN);
    }

    #[test]
    fn clamp_engages_above_one_plus_eps_and_releases_below_r() {
        let mut c = Clamp::new(EPSILON);
        let r = 10e6;
        // 10.9 Mbit/s is inside (R, 1.1 R]: nothing to do.
        assert_eq!(c.update(10.9e6, r, ms(100), MIN), None);
        // 11.2 > 11: clamp at 1.1·10 Mbit/s·100 ms = 137 500 bytes.
        assert_eq!(
            c.update(11.2e6, r, ms(100), MIN),
            Some(ClampChange::To(137_500))
        );
        // Held while P_avg ≥ R; follows the RTT.
        assert_eq!(c.update(10.0e6, r, ms(100), MIN), None);
        assert_eq!(
            c.update(10.5e6, r, ms(120), MIN),
            Some(ClampChange::To(165_000))
        );
        // Released once P_avg < R.
        assert_eq!(c.update(9.99e6, r, ms(120), MIN), Some(ClampChange::Remove));
        assert_eq!(c.value, None);
        assert_eq!(c.update(9.0e6, r, ms(120), MIN), None);
    }

    #[test]
    fn dp_is_rtt_min_minus_the_conservative_queue() {
        // Eq. 1: 4 packets of 1500 bytes at 8 Mbit/s take 6 ms: 66 ms − 6 ms = 60 ms.
        let q = Q_AVG_PACKETS * MSS as f64;
        assert_eq!(PropagationDelay::estimate(ms(66), q, 8e6), ms(60));
        // At 0.1 Mbit/s the correction (480 ms) would exceed the RTT: floored at half of it.
        assert_eq!(PropagationDelay::estimate(ms(66), q, 0.1e6), ms(33));
    }

    #[test]
    fn dp_follows_the_lifetime_minimum_then_each_measurement() {
        let t = |v: u64| Time::ZERO + ms(v);
        let mut d = PropagationDelay::new(Q_AVG_PACKETS, MSS);
        assert_eq!(d.get(), None);
        d.on_sample(t(0), ms(45), t(0), 8e6);
        d.on_sample(t(10), ms(41), t(0), 8e6);
        d.on_sample(t(20), ms(50), t(0), 8e6);
        assert_eq!(d.get(), Some(ms(41)));
        // 12 s later the path has lengthened by 20 ms (the 41 ms sample has aged out of the
        // guard's window). Buffer clearing at 12 s: packets sent before it still report the
        // aggressive stage's queue (90 ms) and do not count; the first sent after it (66 ms)
        // opens a one-RTT measurement, which the 80 ms sample at 12.2 s closes.
        d.on_sample(t(11_900), ms(75), t(11_820), 8e6);
        d.start_measuring(t(12_000));
        assert!(!d.on_sample(t(12_050), ms(90), t(11_960), 8e6));
        assert!(!d.on_sample(t(12_100), ms(66), t(12_034), 8e6));
        assert_eq!(d.get(), Some(ms(41)), "unchanged while measuring");
        assert!(d.on_sample(t(12_200), ms(80), t(12_120), 8e6));
        // Eq. 1: 66 ms − 6 ms.
        assert_eq!(d.get(), Some(ms(60)));
        // Later samples no longer lower it: only the next conservative stage does.
        d.on_sample(t(12_300), ms(70), t(12_230), 8e6);
        assert_eq!(d.get(), Some(ms(60)));
    }

    #[test]
    fn dp_never_exceeds_a_recent_rtt_sample() {
        let t = |v: u64| Time::ZERO + ms(v);
        let mut d = PropagationDelay::new(Q_AVG_PACKETS, MSS);
        d.on_sample(t(0), ms(51), t(0), 8e6);
        // A measurement that sees only a standing queue (another flow's, or one the clearing
        // left): eq. 1 reads 193 ms − 6 ms, but a 51 ms sample 1 s ago bounds the path.
        d.start_measuring(t(1000));
        d.on_sample(t(1200), ms(193), t(1010), 8e6);
        assert!(d.on_sample(t(1400), ms(199), t(1210), 8e6));
        assert_eq!(d.get(), Some(ms(51)));
        // Eq. 1's own value stays available (the aggressive stage's threshold takes it).
        assert_eq!(d.unbounded(), Some(ms(187)));
        // Once the 51 ms sample has aged out of the window, the bound is the recent minimum.
        d.on_sample(t(10_500), ms(190), t(10_300), 8e6);
        d.on_sample(t(11_500), ms(195), t(11_300), 8e6);
        assert_eq!(d.get(), Some(ms(187)));
    }
}
