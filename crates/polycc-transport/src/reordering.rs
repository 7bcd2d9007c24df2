//! How much reordering loss detection tolerates: RFC 9002 §6.1's fixed thresholds until a
//! spurious loss shows reordering, then RACK's (RFC 8985): losses by time only, with the RTT
//! plus a reordering window of min_rtt/4 that grows by that much per round trip with spurious
//! losses, up to srtt (§6.2 step 4). Linux does the same: with RACK on, the duplicate-ACK count
//! no longer declares losses (`tcp_time_to_recover`) once reordering was seen.
//!
//! With [`LossRules::rack_from_start`] (Linux's `tcp_recovery = 1`) RACK's time rule applies from
//! the start, as `tcp_rack_detect_loss` does: a packet is lost once the latest RTT plus the
//! reordering window (min_rtt/4, `tcp_rack_reo_wnd`) has passed since it was sent, and the packet
//! threshold of 3 (the kernel's `reordering`, whose reached count makes the window 0) still
//! declares losses until reordering is seen. Not modelled: the kernel's window of 0 during
//! recovery before any reordering.
//!
//! Why not a packet threshold raised to the reordering distance seen (Chromium QUIC, Linux's
//! `tp->reordering` without RACK): the distance of a delay jitter grows with the sending rate, so
//! every rate increase costs another spurious loss and window reduction. CUBIC on 20 Mbit/s,
//! 40 ms, 5 ms of reordering jitter: 5 spurious losses and 16.1 Mbit/s with that rule, 1 and
//! 17.9 Mbit/s with this one (FIFO: 19.2).

use crate::loss_rules::LossRules;
use polycc::estimators::rtt::{RttEstimator, GRANULARITY};
use polycc::units::Duration;

/// RFC 9002 §6.1.1 kPacketThreshold.
const PACKET_THRESHOLD: u64 = 3;
/// RFC 9002 §6.1.2 kTimeThreshold = 9/8.
const TIME_THRESHOLD_NUM: u64 = 9;
const TIME_THRESHOLD_DEN: u64 = 8;
/// RFC 8985 §6.2 step 4: reo_wnd = min_rtt / 4 × reo_wnd_mult, at most srtt.
const REO_WND_MIN_RTT_DIV: u64 = 4;
/// RFC 8985 §6.2 step 4: reo_wnd_persist, the loss recoveries after the last spurious round
/// before reo_wnd_mult falls back to 1.
const REO_WND_PERSIST: u32 = 16;

/// The reordering state of one path: RFC 9002's thresholds, or RACK's window once reordering
/// was seen.
#[derive(Clone, Debug)]
pub struct Reordering {
    /// RACK.reo_wnd_mult; 0 until reordering is seen (RFC 9002's time threshold alone), or from 1
    /// with RACK from the start.
    reo_wnd_mult: u64,
    /// A loss proved spurious: the packet threshold no longer applies (Linux `reord_seen`).
    seen: bool,
    /// RACK's time rule from the start ([`LossRules::rack_from_start`]).
    rack_from_start: bool,
    /// RACK.dsack_round: the multiplier grows at most once until the largest acknowledged
    /// packet number reaches this (one round trip).
    round_end: Option<u64>,
    persist: u32,
    /// Losses of packets below this belong to the loss episode already counted.
    episode_end: u64,
}

impl Default for Reordering {
    fn default() -> Self {
        Self::new()
    }
}

impl Reordering {
    /// A path with no reordering seen.
    pub fn new() -> Self {
        Reordering {
            reo_wnd_mult: 0,
            seen: false,
            rack_from_start: false,
            round_end: None,
            persist: 0,
            episode_end: 0,
        }
    }

    /// A path with no reordering seen, under `rules`.
    pub fn for_rules(rules: &LossRules) -> Self {
        Reordering {
            reo_wnd_mult: u64::from(rules.rack_from_start),
            rack_from_start: rules.rack_from_start,
            ..Reordering::new()
        }
    }

    /// RFC 9002's packet threshold, or none once reordering was seen (RACK).
    pub fn packet_threshold(&self) -> Option<u64> {
        (!self.seen).then_some(PACKET_THRESHOLD)
    }

    /// How long after its send time an unacknowledged packet below the largest acknowledged
    /// one is declared lost: 9/8 of max(srtt, latest RTT) (RFC 9002 §6.1.2), and once reordering
    /// was seen at least that RTT plus RACK's reordering window.
    pub fn loss_delay(&self, rtt: &RttEstimator) -> Duration {
        if self.rack_from_start {
            // RACK.rtt (the latest sample) plus the window, at most srtt.
            let wnd =
                Duration((rtt.min().0 / REO_WND_MIN_RTT_DIV).saturating_mul(self.reo_wnd_mult))
                    .min(rtt.smoothed());
            return (rtt.latest() + wnd).max(GRANULARITY);
        }
        let base = rtt.smoothed().max(rtt.latest());
        let mut d = Duration(base.0 * TIME_THRESHOLD_NUM / TIME_THRESHOLD_DEN);
        if self.reo_wnd_mult > 0 {
            let wnd =
                Duration((rtt.min().0 / REO_WND_MIN_RTT_DIV).saturating_mul(self.reo_wnd_mult))
                    .min(rtt.smoothed());
            d = d.max(base + wnd);
        }
        d.max(GRANULARITY)
    }

    /// A packet declared lost was acknowledged (a spurious loss, RACK's DSACK). `largest_acked`:
    /// the largest acknowledged before; `next_pn`: the next packet number to send.
    pub fn on_reordered(&mut self, largest_acked: u64, next_pn: u64) {
        if self.round_end.is_some_and(|r| largest_acked < r) {
            return;
        }
        self.reo_wnd_mult += 1;
        self.seen = true;
        self.round_end = Some(next_pn);
        self.persist = REO_WND_PERSIST;
    }

    /// Packets were declared lost, the largest being `largest_lost`: a loss episode begins
    /// unless an earlier one already covers it (RACK counts recoveries; an episode here is what
    /// one recovery repairs, the packets sent before the episode's first loss was declared).
    pub fn on_loss_event(&mut self, largest_lost: u64, next_pn: u64) {
        if !self.seen || largest_lost < self.episode_end {
            return;
        }
        self.episode_end = next_pn;
        self.persist = self.persist.saturating_sub(1);
        if self.persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::Time;

    fn rtt_of(ms: u64) -> RttEstimator {
        let mut r = RttEstimator::new();
        r.update(
            Time::ZERO + Duration::from_millis(ms),
            Duration::from_millis(ms),
            Duration::ZERO,
        );
        r
    }

    #[test]
    fn fixed_thresholds_until_reordering() {
        let r = Reordering::new();
        assert_eq!(r.packet_threshold(), Some(3));
        assert_eq!(r.loss_delay(&rtt_of(40)), Duration::from_millis(45));
    }

    #[test]
    fn reordering_widens_the_window_once_per_round() {
        let mut r = Reordering::new();
        let rtt = rtt_of(40);
        r.on_reordered(100, 150);
        assert_eq!(r.packet_threshold(), None);
        // min_rtt/4 = 10 ms on top of the RTT.
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(50));
        // Same round (largest acknowledged below 150): the window does not grow.
        r.on_reordered(120, 160);
        r.on_reordered(149, 160);
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(50));
        // Next round: 2 × 10 ms; the window stops at srtt.
        r.on_reordered(150, 200);
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(60));
        for k in 0..10 {
            r.on_reordered(200 + 100 * k, 300 + 100 * k);
        }
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(80));
    }

    #[test]
    fn rack_from_start_uses_the_latest_rtt_plus_a_quarter_min_rtt() {
        let mut r = Reordering::for_rules(&LossRules::linux());
        let mut rtt = rtt_of(40);
        // A queue: the latest sample is 60 ms, srtt somewhat above 40, min 40.
        rtt.update(
            Time::ZERO + Duration::from_millis(100),
            Duration::from_millis(60),
            Duration::ZERO,
        );
        // 60 + 40/4 ms, with the packet threshold still on until reordering is seen.
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(70));
        assert_eq!(r.packet_threshold(), Some(3));
        // Reordering (a DSACK round) doubles the window and ends the packet threshold.
        r.on_reordered(100, 150);
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(80));
        assert_eq!(r.packet_threshold(), None);
    }

    #[test]
    fn the_window_falls_back_after_sixteen_loss_episodes() {
        let mut r = Reordering::new();
        let rtt = rtt_of(40);
        r.on_reordered(10, 20);
        r.on_reordered(20, 30);
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(60));
        // Losses within one episode count once.
        for k in 0..15 {
            r.on_loss_event(100 * k + 30, 100 * k + 100);
            r.on_loss_event(100 * k + 40, 100 * k + 100);
        }
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(60));
        r.on_loss_event(2_000, 2_100);
        assert_eq!(r.loss_delay(&rtt), Duration::from_millis(50));
        assert_eq!(r.packet_threshold(), None);
    }
}
