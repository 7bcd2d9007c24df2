//! Delivery-rate estimation as draft-cheng-iccrg-delivery-rate-estimation and Linux `tcp_rate.c`.
//!
//! The transport calls [`DeliveryRateEstimator::on_sent`] for every packet and keeps the returned
//! [`PacketDeliveryState`] with the packet; when an ACK arrives it calls
//! [`DeliveryRateEstimator::on_packet_acked`] for each newly acknowledged packet and then
//! [`DeliveryRateEstimator::finish_ack`] once, which yields at most one sample per ACK taken
//! from the most recently sent packet acknowledged.

use crate::signals::RateSample;
use crate::units::{Bytes, Duration, Rate, Time};

/// What the estimator needs remembered about one packet until it is acknowledged or lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketDeliveryState {
    /// When the packet was sent.
    pub sent_time: Time,
    /// Total bytes delivered when the packet was sent (`P.delivered`).
    pub delivered: Bytes,
    /// When `delivered` was last updated, as of this send (`P.delivered_time`).
    pub delivered_time: Time,
    /// Send time of the packet that opened the current send interval (`P.first_sent_time`).
    pub first_sent_time: Time,
    /// The sender was application-limited when this packet left (`P.is_app_limited`).
    pub is_app_limited: bool,
}

/// A connection's delivery-rate state (the draft's `C.delivered`, `C.delivered_time`,
/// `C.first_sent_time`, `C.app_limited`): one per flow, owned by the transport.
#[derive(Clone, Debug, Default)]
pub struct DeliveryRateEstimator {
    delivered: Bytes,
    delivered_time: Time,
    first_sent_time: Time,
    /// Non-zero while app-limited: the `delivered` value at which the limited phase ends.
    app_limited_until: Bytes,
    // The sample being built for the current ACK.
    pending: Option<PendingSample>,
}

#[derive(Clone, Copy, Debug)]
struct PendingSample {
    prior_delivered: Bytes,
    prior_time: Time,
    send_elapsed: Duration,
    ack_elapsed: Duration,
    is_app_limited: bool,
    rtt: Duration,
}

impl DeliveryRateEstimator {
    /// A fresh estimator: nothing delivered, not application-limited.
    pub fn new() -> Self {
        Self::default()
    }

    /// Total bytes delivered so far.
    pub fn delivered(&self) -> Bytes {
        self.delivered
    }

    /// Whether the bytes marked by [`Self::on_app_limited`] are still undelivered, so that
    /// packets sent now are tagged application-limited.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited_until != 0
    }

    /// Records a send; `in_flight_before` is the bytes in flight just before this packet.
    pub fn on_sent(&mut self, now: Time, in_flight_before: Bytes) -> PacketDeliveryState {
        if in_flight_before == 0 {
            // Restarting from idle: the next interval starts now, not at the last delivery.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketDeliveryState {
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited_until != 0,
        }
    }

    /// The sender had nothing to send although the window allowed it: samples taken until the
    /// data now in flight is delivered are marked application-limited.
    pub fn on_app_limited(&mut self, in_flight: Bytes) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// Records one newly acknowledged packet of `bytes`, with the state kept from its send.
    /// Of the packets one ACK covers, the most recently sent one is kept for the sample, as the
    /// draft's `UpdateRateSample` does.
    pub fn on_packet_acked(&mut self, now: Time, p: &PacketDeliveryState, bytes: Bytes) {
        self.delivered += bytes;
        self.delivered_time = now;
        let newer = match &self.pending {
            None => true,
            Some(s) => p.delivered >= s.prior_delivered,
        };
        if newer {
            self.pending = Some(PendingSample {
                prior_delivered: p.delivered,
                prior_time: p.delivered_time,
                send_elapsed: p.sent_time - p.first_sent_time,
                ack_elapsed: now - p.delivered_time,
                is_app_limited: p.is_app_limited,
                rtt: now - p.sent_time,
            });
            self.first_sent_time = p.sent_time;
        }
    }

    /// Closes the current ACK. Samples whose interval is shorter than `min_rtt` are discarded as
    /// Linux does: they come from ACK compression and would overestimate the rate.
    pub fn finish_ack(&mut self, min_rtt: Duration) -> Option<RateSample> {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let s = self.pending.take()?;
        let _ = s.prior_time;
        let interval = s.send_elapsed.max(s.ack_elapsed);
        // A packet sent before the estimator was reset (a new connection or path while packets
        // of the old one were in flight) counts from the old count: no sample spans the reset.
        let delivered = self.delivered.checked_sub(s.prior_delivered)?;
        if interval.is_zero() || interval < min_rtt {
            return None;
        }
        Some(RateSample {
            delivered,
            interval,
            delivery_rate: Rate::from_bytes_over(delivered, interval),
            prior_delivered: s.prior_delivered,
            is_app_limited: s.is_app_limited,
            rtt: s.rtt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_stream_measures_the_bottleneck_rate() {
        // 1000-byte packets every 1 ms (8 Mbit/s), each acked 50 ms later.
        let mut e = DeliveryRateEstimator::new();
        let mut states = Vec::new();
        let mut last = None;
        for i in 0..200u64 {
            let now = Time(i * 1_000_000);
            let in_flight = states.len().min(50) as u64 * 1000;
            states.push(e.on_sent(now, in_flight));
            if i >= 50 {
                let p = states[(i - 50) as usize];
                e.on_packet_acked(now, &p, 1000);
                last = e.finish_ack(Duration::from_millis(50)).or(last);
            }
        }
        let s = last.expect("samples");
        let mbps = s.delivery_rate.as_mbps_f64();
        assert!((mbps - 8.0).abs() < 0.2, "rate {mbps}");
        assert!(!s.is_app_limited);
    }

    #[test]
    fn app_limited_flag_clears_after_the_marked_bytes_are_delivered() {
        let mut e = DeliveryRateEstimator::new();
        let p0 = e.on_sent(Time(0), 0);
        e.on_app_limited(1000);
        let p1 = e.on_sent(Time(1_000_000), 1000);
        assert!(p1.is_app_limited);
        e.on_packet_acked(Time(50_000_000), &p0, 1000);
        let _ = e.finish_ack(Duration::ZERO);
        assert!(e.is_app_limited());
        e.on_packet_acked(Time(51_000_000), &p1, 1000);
        let s = e.finish_ack(Duration::ZERO).unwrap();
        assert!(s.is_app_limited);
        assert!(!e.is_app_limited());
    }

    #[test]
    fn a_packet_sent_before_a_reset_gives_no_sample() {
        // A new connection's estimator starts from zero while a packet of the old one, sent
        // after 20 000 bytes had been delivered, is still in flight.
        let mut old = DeliveryRateEstimator::new();
        old.delivered = 20_000;
        let stale = old.on_sent(Time(0), 1000);
        let mut e = DeliveryRateEstimator::new();
        let fresh = e.on_sent(Time(1_000_000), 0);
        e.on_packet_acked(Time(40_000_000), &stale, 1000);
        assert_eq!(e.finish_ack(Duration::ZERO), None);
        // The new connection's own packets give samples as before.
        e.on_packet_acked(Time(41_000_000), &fresh, 1000);
        let s = e.finish_ack(Duration::ZERO).expect("a sample");
        assert_eq!(s.delivered, 2000);
    }
}
