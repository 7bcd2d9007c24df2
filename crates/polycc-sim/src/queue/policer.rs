//! Token-bucket policer: tokens accrue at `rate` up to `burst` bytes; an arriving packet that
//! finds at least its own size in the bucket takes those tokens and passes, any other is dropped.
//! Nothing waits for tokens (that would be a shaper). Packets that pass still wait their turn for
//! the link's serialisation in a FIFO bounded by the queue's `size`: a policer sits in front of a
//! line whose rate is the link's, as a provider's ingress policer in front of its access line.

use super::droptail::DropTail;
use super::{Limits, Queued};
use polycc::units::{Duration, Rate, Time};

/// Bucket level and costs in bit·nanoseconds per second (bits × 10^9): `rate` in bit/s times
/// elapsed nanoseconds adds exactly that many, so the bucket is exact in integers.
const SCALE: u128 = 8 * 1_000_000_000;

pub struct Policer<T> {
    rate_bps: u128,
    depth: u128,
    level: u128,
    last: Time,
    fifo: DropTail<T>,
}

impl<T: Queued> Policer<T> {
    /// A policer of `rate` with a bucket of `burst` bytes, full at the start; `limits` bound the
    /// FIFO of packets that passed and wait for the line.
    pub fn new(limits: Limits, rate: Rate, burst: u64) -> Self {
        let depth = burst as u128 * SCALE;
        Policer {
            rate_bps: rate.as_bps() as u128,
            depth,
            level: depth,
            last: Time::ZERO,
            fifo: DropTail::new(limits),
        }
    }

    pub fn enqueue(&mut self, now: Time, item: T, dropped: &mut impl FnMut(T)) {
        let elapsed = now.0.saturating_sub(self.last.0) as u128;
        self.last = self.last.max(now);
        self.level = (self.level + self.rate_bps * elapsed).min(self.depth);
        let cost = item.wire_bytes() as u128 * SCALE;
        if cost > self.level {
            dropped(item);
            return;
        }
        self.level -= cost;
        self.fifo.enqueue(now, item, dropped);
    }

    pub fn dequeue(&mut self, now: Time) -> Option<(T, Duration)> {
        self.fifo.dequeue(now)
    }

    pub fn bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    pub fn packets(&self) -> usize {
        self.fifo.packets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct P(u64);
    impl Queued for P {
        fn wire_bytes(&self) -> u64 {
            self.0
        }
        fn flow_key(&self) -> u32 {
            0
        }
    }

    const UNBOUNDED: Limits = Limits {
        bytes: None,
        packets: None,
    };

    /// Offers 1500-byte packets every `gap` for `n` packets; returns how many passed.
    fn offer(p: &mut Policer<P>, gap: Duration, n: u64) -> u64 {
        let mut dropped = 0;
        for i in 0..n {
            p.enqueue(Time(i * gap.0), P(1500), &mut |_| dropped += 1);
            while p.dequeue(Time(i * gap.0)).is_some() {}
        }
        n - dropped
    }

    #[test]
    fn long_run_throughput_is_the_token_rate() {
        // 100 Mbit/s offered to a 10 Mbit/s policer for 100 s: 10 Mbit/s × 100 s / 1500 B
        // = 83 333 packets pass, plus the initial bucket of 10 packets.
        let mut p = Policer::new(UNBOUNDED, Rate::from_mbps(10), 15_000);
        let gap = Rate::from_mbps(100).time_to_send(1500);
        let passed = offer(&mut p, gap, 833_334);
        let rate_mbps = passed as f64 * 1500.0 * 8.0 / 100.0 / 1e6;
        assert!(
            (rate_mbps - 10.0).abs() / 10.0 < 0.01,
            "{passed} passed: {rate_mbps:.3} Mbit/s"
        );
        assert_eq!(passed, 83_333 + 10);
    }

    #[test]
    fn a_burst_of_burst_bytes_passes_at_line_rate_then_nothing_more() {
        // A full bucket of 20 packets: 20 back-to-back packets pass, the 21st (sent 1.2 µs
        // later at 10 Gbit/s, when 1.5 bytes of tokens have come back) is dropped.
        let mut p = Policer::new(UNBOUNDED, Rate::from_mbps(10), 20 * 1500);
        let gap = Rate::from_mbps(10_000).time_to_send(1500);
        assert_eq!(offer(&mut p, gap, 21), 20);
    }

    #[test]
    fn conforming_traffic_passes_without_loss_or_queueing() {
        // 8 Mbit/s offered to a 10 Mbit/s policer with a one-packet bucket: all pass.
        let mut p = Policer::new(UNBOUNDED, Rate::from_mbps(10), 1500);
        let gap = Rate::from_mbps(8).time_to_send(1500);
        assert_eq!(offer(&mut p, gap, 10_000), 10_000);
        assert_eq!(p.packets(), 0);
    }

    #[test]
    fn an_idle_bucket_refills_only_to_its_depth() {
        let mut p = Policer::new(UNBOUNDED, Rate::from_mbps(10), 3000);
        let mut dropped = 0;
        // Idle for 10 s (12.5 MB of tokens at 10 Mbit/s), then 3 packets at once: 2 pass.
        for _ in 0..3 {
            p.enqueue(Time(10_000_000_000), P(1500), &mut |_| dropped += 1);
        }
        assert_eq!((p.packets(), dropped), (2, 1));
    }
}
