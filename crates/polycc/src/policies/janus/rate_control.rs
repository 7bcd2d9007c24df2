//! Janus performance enhancement (Zhou et al., IEEE TMC 2018, §4.4): rate control through the
//! slow-start threshold and a window clamp, buffer clearing before each switch to the
//! conservative CCA, and the propagation-delay estimate both rely on.

use crate::cc::ClampChange;
use crate::units::{Bytes, Duration, Time};

/// §4.4, §7.2: extra share a satisfied flow may take, eps = 0.1: the conservative stage clamps
/// the window to (1 + eps)·R·RTT.
pub const EPSILON: f64 = 0.1;
/// §4.4, §7.2: packets a conservative CCA keeps queued on average, Q_avg = 4 (Vegas holds
/// alpha..beta = 2..4, the paper takes 4).
pub const Q_AVG_PACKETS: f64 = 4.0;
/// The paper takes RTT_min "at the start of a conservative stage" without saying over how long.
/// We take the smallest RTT sample over the stage's first two RTTs: the first drains what the
/// aggressive stage queued (buffer clearing), the second sees the conservative CCA's own queue.
/// Two RTTs is also the paper's settling time after slow start (§4.2).
pub const DP_MEASURE_RTTS: u64 = 2;
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

/// D_p, the round-trip propagation delay: the connection's smallest RTT until the first
/// conservative stage, then at the start of each conservative stage
/// D_p = RTT_min − Q_avg / P_avg (eq. 1), which follows a path whose delay changed.
#[derive(Clone, Copy, Debug, Default)]
pub struct PropagationDelay {
    q_avg_bytes: f64,
    dp: Option<Duration>,
    /// A measurement in progress: its end and the smallest sample so far.
    measuring: Option<(Time, Option<Duration>)>,
    /// The last estimate came from eq. 1 (not the lifetime minimum).
    pub from_equation: bool,
}

impl PropagationDelay {
    /// No estimate yet; eq. 1 will take Q_avg as `q_avg_packets` ([`Q_AVG_PACKETS`]) of
    /// `mss` bytes.
    pub fn new(q_avg_packets: f64, mss: Bytes) -> Self {
        PropagationDelay {
            q_avg_bytes: q_avg_packets * mss as f64,
            ..PropagationDelay::default()
        }
    }

    /// D_p, once an RTT sample has been seen.
    pub fn get(&self) -> Option<Duration> {
        self.dp
    }

    /// Starts measuring RTT_min for [`DP_MEASURE_RTTS`] RTTs from `now`.
    pub fn start_measuring(&mut self, now: Time, rtt: Duration) {
        self.measuring = Some((now + rtt * DP_MEASURE_RTTS, None));
    }

    /// An RTT sample at `now`; `p_avg_bps` is the current average throughput. Returns true
    /// when it completed a measurement and updated D_p.
    pub fn on_sample(&mut self, now: Time, sample: Duration, p_avg_bps: f64) -> bool {
        if !self.from_equation {
            // Until eq. 1 has run: the connection's minimum (base_rtt).
            self.dp = Some(self.dp.map_or(sample, |d| d.min(sample)));
        }
        let Some((until, min)) = self.measuring.as_mut() else {
            return false;
        };
        *min = Some(min.map_or(sample, |m| m.min(sample)));
        if now < *until {
            return false;
        }
        let rtt_min = min.unwrap_or(sample);
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
        d.on_sample(t(0), ms(45), 8e6);
        d.on_sample(t(10), ms(41), 8e6);
        d.on_sample(t(20), ms(50), 8e6);
        assert_eq!(d.get(), Some(ms(41)));
        // The path lengthens by 20 ms; a conservative stage starts at 1 s with RTT 70 ms and
        // measures for 2 RTTs (until 1.14 s). Samples 90, 66, 80 ms: RTT_min 66 ms, D_p 60 ms.
        d.start_measuring(t(1000), ms(70));
        assert!(!d.on_sample(t(1000), ms(90), 8e6));
        assert!(!d.on_sample(t(1100), ms(66), 8e6));
        assert_eq!(d.get(), Some(ms(41)), "unchanged while measuring");
        assert!(d.on_sample(t(1140), ms(80), 8e6));
        assert_eq!(d.get(), Some(ms(60)));
        // Later samples no longer lower it: only the next conservative stage does.
        d.on_sample(t(1200), ms(50), 8e6);
        assert_eq!(d.get(), Some(ms(60)));
    }
}
