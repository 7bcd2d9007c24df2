//! GCC's delay-based AIMD rate controller (WebRTC `aimd_rate_control.cc`, draft-ietf-rmcat-gcc-02
//! §5.5): Hold / Increase / Decrease driven by the overuse detector; multiplicative increase far
//! from the link capacity, additive near it, and a decrease to 0.85 × the acknowledged rate.

use super::link_capacity::{LinkCapacity, ALPHA_OVERUSE};
use super::trendline::Usage;
use crate::units::{Duration, Rate, Time};

/// WebRTC `kDefaultBackoffFactor`: decrease to 85 % of the acknowledged rate.
pub const BETA: f64 = 0.85;
/// Multiplicative increase of 8 % per second (WebRTC `MultiplicativeRateIncrease`: 1.08^Δt).
pub const INCREASE_PER_SECOND: f64 = 1.08;
/// ... and at least 1 kbit/s per update.
pub const MIN_MULTIPLICATIVE_STEP_BPS: f64 = 1_000.0;
/// Additive increase: one average packet per response time 2·(RTT + 100 ms), at least 4 kbit/s
/// per second; the packet is a 30 fps frame split into 1200-byte packets (WebRTC
/// `GetNearMaxIncreaseRateBpsPerSecond`).
pub const MIN_ADDITIVE_BPS_PER_S: f64 = 4_000.0;
pub const FRAME_RATE: f64 = 30.0;
pub const PACKET_BITS: f64 = 1200.0 * 8.0;
/// Response time = 2 · (RTT + 100 ms) (WebRTC `kDefaultRtt` is 200 ms before a sample).
pub const RESPONSE_EXTRA: Duration = Duration::from_millis(100);
pub const DEFAULT_RTT: Duration = Duration::from_millis(200);
/// An increase may not take the rate above 1.5 × the acknowledged rate + 10 kbit/s.
pub const MAX_OVER_ACKED: f64 = 1.5;
pub const MAX_OVER_ACKED_EXTRA_BPS: f64 = 10_000.0;
/// Decreases at most once per RTT clamped to [10, 200] ms, unless the acknowledged rate fell
/// below half the link-capacity estimate.
pub const MIN_DECREASE_GAP: Duration = Duration::from_millis(10);
pub const MAX_DECREASE_GAP: Duration = Duration::from_millis(200);
/// Before any acknowledged-rate sample, overuse halves the rate every 200 ms
/// (WebRTC `delay_based_bwe.cc`).
pub const BLIND_DECREASE_GAP: Duration = Duration::from_millis(200);
/// Updates further apart than this count as this long (no jump after an idle period).
pub const MAX_UPDATE_DT: Duration = Duration::from_secs(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateState {
    Hold,
    Increase,
    Decrease,
}

#[derive(Clone, Debug)]
pub struct Aimd {
    rate_bps: f64,
    min_bps: f64,
    max_bps: f64,
    state: RateState,
    link: LinkCapacity,
    last_update: Option<Time>,
    last_decrease: Option<Time>,
    rtt: Option<Duration>,
}

impl Aimd {
    pub fn new(start: Rate, min: Rate, max: Rate) -> Self {
        let (min_bps, max_bps) = (min.as_bps() as f64, max.as_bps() as f64);
        Aimd {
            rate_bps: (start.as_bps() as f64).clamp(min_bps, max_bps),
            min_bps,
            max_bps,
            state: RateState::Hold,
            link: LinkCapacity::default(),
            last_update: None,
            last_decrease: None,
            rtt: None,
        }
    }

    pub fn rate(&self) -> Rate {
        Rate::from_bps_f64(self.rate_bps)
    }
    pub fn state(&self) -> RateState {
        self.state
    }
    pub fn link_capacity_kbps(&self) -> Option<f64> {
        self.link.estimate_kbps()
    }

    pub fn set_rtt(&mut self, rtt: Duration) {
        self.rtt = Some(rtt);
    }

    pub fn set_bounds(&mut self, min: Rate, max: Rate) {
        self.min_bps = min.as_bps() as f64;
        self.max_bps = (max.as_bps() as f64).max(self.min_bps);
        self.rate_bps = self.rate_bps.clamp(self.min_bps, self.max_bps);
    }

    /// Sets the rate (a hand-over from another controller, or a calibration).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate_bps = (rate.as_bps() as f64).clamp(self.min_bps, self.max_bps);
    }

    /// One detector verdict with the acknowledged rate measured at the same time.
    pub fn update(&mut self, now: Time, usage: Usage, acked: Option<Rate>) -> Rate {
        self.state = match (usage, self.state) {
            (Usage::Normal, RateState::Hold) => RateState::Increase,
            (Usage::Normal, s) => s,
            (Usage::Overusing, _) => RateState::Decrease,
            (Usage::Underusing, _) => RateState::Hold,
        };
        let dt = self.last_update.map_or(Duration::ZERO, |t| {
            now.saturating_since(t).min(MAX_UPDATE_DT)
        });
        self.last_update = Some(now);
        let acked_bps = acked.map(|a| a.as_bps() as f64);
        match self.state {
            RateState::Hold => {}
            RateState::Increase => self.increase(dt, acked_bps),
            RateState::Decrease => {
                self.decrease(now, acked_bps);
                self.state = RateState::Hold;
            }
        }
        self.rate_bps = self.rate_bps.clamp(self.min_bps, self.max_bps);
        self.rate()
    }

    fn increase(&mut self, dt: Duration, acked_bps: Option<f64>) {
        if let (Some(up), Some(a)) = (self.link.upper_kbps(), acked_bps) {
            if a / 1e3 > up {
                self.link.reset(); // the capacity moved up: probe multiplicatively again
            }
        }
        let dt_s = dt.as_secs_f64();
        let step = if self.link.estimate_kbps().is_some() {
            self.additive_bps_per_s() * dt_s
        } else {
            (self.rate_bps * (INCREASE_PER_SECOND.powf(dt_s.min(1.0)) - 1.0))
                .max(MIN_MULTIPLICATIVE_STEP_BPS)
        };
        let mut new = self.rate_bps + step;
        if let Some(a) = acked_bps {
            let cap = MAX_OVER_ACKED * a + MAX_OVER_ACKED_EXTRA_BPS;
            new = new.min(cap.max(self.rate_bps));
        }
        self.rate_bps = new;
    }

    /// One average packet per response time, in bit/s per second.
    fn additive_bps_per_s(&self) -> f64 {
        let rtt = self.rtt.unwrap_or(DEFAULT_RTT);
        let response_s = 2.0 * (rtt + RESPONSE_EXTRA).as_secs_f64();
        let bits_per_frame = self.rate_bps / FRAME_RATE;
        let packets_per_frame = (bits_per_frame / PACKET_BITS).ceil().max(1.0);
        let avg_packet_bits = bits_per_frame / packets_per_frame;
        (avg_packet_bits / response_s).max(MIN_ADDITIVE_BPS_PER_S)
    }

    fn decrease(&mut self, now: Time, acked_bps: Option<f64>) {
        let Some(a) = acked_bps else {
            if self
                .last_decrease
                .is_none_or(|t| now.saturating_since(t) >= BLIND_DECREASE_GAP)
            {
                self.rate_bps /= 2.0;
                self.last_decrease = Some(now);
            }
            return;
        };
        let gap = self
            .rtt
            .unwrap_or(DEFAULT_RTT)
            .clamp(MIN_DECREASE_GAP, MAX_DECREASE_GAP);
        let collapsed = self.link.estimate_kbps().is_some_and(|e| a / 1e3 < 0.5 * e);
        if !collapsed
            && self
                .last_decrease
                .is_some_and(|t| now.saturating_since(t) < gap)
        {
            return;
        }
        let mut new = BETA * a;
        if new > self.rate_bps {
            // Acked above the rate (a burst drained): fall back on the capacity estimate.
            new = self
                .link
                .estimate_kbps()
                .map_or(self.rate_bps, |e| (BETA * e * 1e3).min(self.rate_bps));
        }
        self.rate_bps = self.rate_bps.min(new);
        if self.link.lower_kbps().is_some_and(|lo| a / 1e3 < lo) {
            self.link.reset();
        }
        self.link.update(a / 1e3, ALPHA_OVERUSE);
        self.last_decrease = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }
    const MIN: Rate = Rate::from_bps(10_000);
    const MAX: Rate = Rate::from_mbps(100);

    #[test]
    fn multiplicative_increase_is_eight_percent_per_second() {
        let mut a = Aimd::new(Rate::from_bps(1_000_000), MIN, MAX);
        a.update(at(0), Usage::Normal, None); // Hold -> Increase, Δt = 0: +1 kbit/s minimum
        assert_eq!(a.rate().as_bps(), 1_001_000);
        for i in 1..=10 {
            a.update(at(100 * i), Usage::Normal, None);
        }
        // 1.001 Mbit/s · 1.08^1 after one second of 100 ms steps.
        let want = 1_001_000.0 * 1.08;
        assert!(
            (a.rate().as_bps() as f64 - want).abs() < 50.0,
            "{}",
            a.rate().as_bps()
        );
    }

    #[test]
    fn overuse_decreases_to_085_of_acked_and_learns_the_capacity() {
        let mut a = Aimd::new(Rate::from_mbps(5), MIN, MAX);
        a.set_rtt(Duration::from_millis(50));
        let r = a.update(at(0), Usage::Overusing, Some(Rate::from_mbps(4)));
        assert_eq!(r.as_bps(), 3_400_000);
        assert_eq!(a.state(), RateState::Hold);
        assert_eq!(a.link_capacity_kbps(), Some(4000.0));
        // A second overuse within one RTT (50 ms) is ignored.
        let r = a.update(at(30), Usage::Overusing, Some(Rate::from_bps(3_000_000)));
        assert_eq!(r.as_bps(), 3_400_000);
        // Near the capacity the increase is additive: at 3.4 Mbit/s a 30 fps frame is 113 kbit,
        // 12 packets of 9.4 kbit, and the rate grows by one such packet per response time
        // 2·(50 + 100) ms, i.e. 31.5 kbit/s per second.
        a.update(at(100), Usage::Normal, None); // Hold -> Increase (Δt 70 ms)
        let before = a.rate().as_bps() as f64;
        a.update(at(1100), Usage::Normal, None);
        let bits_per_frame = before / 30.0;
        let per_packet = bits_per_frame / (bits_per_frame / 9600.0).ceil();
        let want = before + per_packet / 0.3;
        assert!(
            (a.rate().as_bps() as f64 - want).abs() < 2.0,
            "{} vs {want}",
            a.rate().as_bps()
        );
    }

    #[test]
    fn increase_is_capped_by_the_acknowledged_rate() {
        let mut a = Aimd::new(Rate::from_mbps(2), MIN, MAX);
        a.update(at(0), Usage::Normal, Some(Rate::from_mbps(1)));
        // 1.5 · 1 Mbit/s + 10 kbit/s is below the current 2 Mbit/s: no increase, no decrease.
        assert_eq!(a.rate().as_bps(), 2_000_000);
        let mut a = Aimd::new(Rate::from_mbps(1), MIN, MAX);
        a.update(at(0), Usage::Normal, None);
        a.update(at(1000), Usage::Normal, Some(Rate::from_bps(700_000)));
        assert_eq!(a.rate().as_bps(), 1_060_000);
    }

    #[test]
    fn blind_overuse_halves_every_200_ms_and_bounds_hold() {
        let mut a = Aimd::new(Rate::from_mbps(8), MIN, MAX);
        a.update(at(0), Usage::Overusing, None);
        assert_eq!(a.rate().as_bps(), 4_000_000);
        a.update(at(100), Usage::Overusing, None);
        assert_eq!(a.rate().as_bps(), 4_000_000);
        a.update(at(200), Usage::Overusing, None);
        assert_eq!(a.rate().as_bps(), 2_000_000);
        a.set_bounds(Rate::from_mbps(3), MAX);
        assert_eq!(a.rate().as_bps(), 3_000_000);
    }
}
