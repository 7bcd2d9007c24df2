//! GCC's loss-based controller (WebRTC `send_side_bandwidth_estimation.cc`, the classic path;
//! draft-ietf-rmcat-gcc-02 §6): from the loss fraction of each report of at least 20 packets,
//! grow 8 % per second below 2 % loss, hold up to 10 %, and cut by half the loss fraction above.

use crate::units::{Duration, Rate, Time};
use std::collections::VecDeque;

/// WebRTC `kLimitNumPackets`: a loss fraction needs at least 20 packets.
pub const MIN_PACKETS: u64 = 20;
/// WebRTC `kDefaultLowLossThreshold` / `kDefaultHighLossThreshold`.
pub const LOW_LOSS: f64 = 0.02;
pub const HIGH_LOSS: f64 = 0.10;
/// Below LOW_LOSS: 1.08 × the smallest rate of the last second + 1 kbit/s (8 % per second).
pub const INCREASE: f64 = 1.08;
pub const INCREASE_EXTRA_BPS: f64 = 1_000.0;
pub const INCREASE_WINDOW: Duration = Duration::from_secs(1);
/// Above HIGH_LOSS: at most one decrease per 300 ms + RTT (WebRTC `kBweDecreaseInterval`).
pub const DECREASE_INTERVAL: Duration = Duration::from_millis(300);
/// The first 2 s without loss follow the delay-based estimate (WebRTC `kStartPhase`).
pub const START_PHASE: Duration = Duration::from_secs(2);

#[derive(Clone, Debug)]
pub struct LossBased {
    rate_bps: f64,
    start: Option<Time>,
    seen_loss: bool,
    acked: u64,
    lost: u64,
    last_fraction: f64,
    last_decrease: Option<Time>,
    /// (time, rate) of the last second, for the increase's minimum.
    history: VecDeque<(Time, f64)>,
}

impl LossBased {
    pub fn new(start: Rate) -> Self {
        LossBased {
            rate_bps: start.as_bps() as f64,
            start: None,
            seen_loss: false,
            acked: 0,
            lost: 0,
            last_fraction: 0.0,
            last_decrease: None,
            history: VecDeque::new(),
        }
    }

    pub fn rate(&self) -> Rate {
        Rate::from_bps_f64(self.rate_bps)
    }
    pub fn loss_fraction(&self) -> f64 {
        self.last_fraction
    }
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate_bps = rate.as_bps() as f64;
    }

    pub fn on_acked(&mut self, packets: u64) {
        self.acked += packets;
    }
    pub fn on_lost(&mut self, packets: u64) {
        self.lost += packets;
        self.seen_loss |= packets > 0;
    }

    /// Updates with the delay-based rate in force; returns the loss-based rate.
    pub fn update(&mut self, now: Time, rtt: Duration, delay_based: Rate) -> Rate {
        let start = *self.start.get_or_insert(now);
        if !self.seen_loss && now.saturating_since(start) < START_PHASE {
            // Start-up: no loss information yet, trust the delay-based estimate.
            self.rate_bps = delay_based.as_bps() as f64;
            self.remember(now);
            return self.rate();
        }
        // The history holds the rates in force over the last second, this one included, so
        // the increase below compounds at most once per second.
        self.remember(now);
        let expected = self.acked + self.lost;
        if expected >= MIN_PACKETS {
            let fraction = self.lost as f64 / expected as f64;
            self.last_fraction = fraction;
            self.acked = 0;
            self.lost = 0;
            if fraction <= LOW_LOSS {
                let floor = self
                    .history
                    .iter()
                    .map(|&(_, r)| r)
                    .fold(f64::MAX, f64::min);
                self.rate_bps = self.rate_bps.max(INCREASE * floor + INCREASE_EXTRA_BPS);
            } else if fraction > HIGH_LOSS
                && self
                    .last_decrease
                    .is_none_or(|t| now.saturating_since(t) >= DECREASE_INTERVAL + rtt)
            {
                self.rate_bps *= 1.0 - 0.5 * fraction;
                self.last_decrease = Some(now);
            }
        }
        self.rate()
    }

    fn remember(&mut self, now: Time) {
        self.history.push_back((now, self.rate_bps));
        while self
            .history
            .front()
            .is_some_and(|&(t, _)| now.saturating_since(t) > INCREASE_WINDOW)
        {
            self.history.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }
    const RTT: Duration = Duration::from_millis(50);

    #[test]
    fn follows_the_delay_based_rate_until_loss_or_two_seconds() {
        let mut l = LossBased::new(Rate::from_bps(300_000));
        assert_eq!(l.update(at(0), RTT, Rate::from_mbps(1)).as_bps(), 1_000_000);
        assert_eq!(
            l.update(at(1500), RTT, Rate::from_mbps(2)).as_bps(),
            2_000_000
        );
        // After 2 s it keeps its own rate.
        assert_eq!(
            l.update(at(2500), RTT, Rate::from_mbps(5)).as_bps(),
            2_000_000
        );
    }

    #[test]
    fn low_loss_grows_eight_percent_per_second_from_the_last_seconds_minimum() {
        let mut l = LossBased::new(Rate::from_mbps(1));
        l.on_lost(1); // leave start-up at once
        l.on_acked(99);
        let r0 = l.update(at(0), RTT, Rate::from_mbps(1)).as_bps() as f64;
        assert!((r0 - 1_081_000.0).abs() < 1.0, "{r0}"); // 1 % loss: 1.08·1 M + 1 k
                                                         // Reports every 100 ms: the minimum of the last second stays 1 M until 1 s has passed.
        for i in 1..=10 {
            l.on_acked(100);
            l.update(at(100 * i), RTT, Rate::from_mbps(1));
        }
        assert!((l.rate().as_bps() as f64 - 1_081_000.0).abs() < 1.0);
        l.on_acked(100);
        l.update(at(1100), RTT, Rate::from_mbps(1));
        assert!((l.rate().as_bps() as f64 - (1.08 * 1_081_000.0 + 1_000.0)).abs() < 1.0);
    }

    #[test]
    fn high_loss_cuts_by_half_the_fraction_at_most_once_per_350_ms() {
        let mut l = LossBased::new(Rate::from_mbps(2));
        l.on_lost(20);
        l.on_acked(80);
        assert_eq!(l.update(at(0), RTT, Rate::from_mbps(2)).as_bps(), 1_800_000); // 20 %: ×0.9
        l.on_lost(20);
        l.on_acked(80);
        assert_eq!(
            l.update(at(200), RTT, Rate::from_mbps(2)).as_bps(),
            1_800_000
        );
        l.on_lost(5);
        l.on_acked(95);
        assert_eq!(
            l.update(at(400), RTT, Rate::from_mbps(2)).as_bps(),
            1_800_000
        ); // 5 %: hold
        assert!((l.loss_fraction() - 0.05).abs() < 1e-12);
    }
}
