//! What `auto` measures about the path, one record per measurement window.
//!
//! A window opens at an ACK and closes at the first ACK one smoothed RTT (the transport's, at
//! the window's start) later, as PolyCC's rule windows do. Each window records:
//! - the base RTT: the transport's min RTT, the path's propagation delay plus serialisation;
//! - the queue floor: the window's smallest RTT sample above the base RTT. A flow that drains
//!   its own queue (BBR's gain cycles and PROBE_RTT, CUBIC after a loss on a shallow buffer)
//!   sees floors near zero; a floor that never comes down means somebody else keeps the buffer
//!   full;
//! - the RTT spread: largest minus smallest sample in the window. Delay that comes and goes
//!   within one round trip while the floor stays low is ACK aggregation or link-layer jitter,
//!   not a queue;
//! - the loss rate, and which share of the lost bytes was declared while the latest RTT sample
//!   sat near the base RTT: loss without a queue is random loss, loss at a full queue is
//!   congestion;
//! - the largest delivery-rate sample that was not application-limited;
//! - the share of the acknowledged bytes that came in bunched ACKs: ACKs that arrived sooner
//!   after the previous one than the path could have delivered what they acknowledge, and how far
//!   apart the bunches came (the window's length over the ACKs that began one). A link
//!   that holds ACKs and releases them together (Wi-Fi block ACKs, a cellular scheduler) bunches
//!   them; a receiver that acknowledges every k-th packet or on a timer (QUIC's ACK frequency,
//!   delayed ACKs) sends fewer, larger ACKs, each after the k packets it covers crossed the
//!   bottleneck, so its ACKs are spread at least as the data was, however much RTT spread their
//!   hold adds (the oldest packet of a 10-packet or 25-ms ACK waited for the others).

use crate::estimators::rtt::without_ack_delay;
use crate::policies::poly::signals::MIN_WINDOW;
use crate::signals::{AckEvent, LossEvent};
use crate::units::{Bytes, Duration, Rate, Time};

/// A loss counts as taken at a low queue when the latest RTT sample is within this share of the
/// base RTT above it (or [`LOW_QUEUE_FLOOR`], whichever is larger): a queue of a quarter of the
/// BDP is what a BBR probe adds, so a congestive loss on a drop-tail buffer of at least that
/// depth comes above it.
pub const LOW_QUEUE_SHARE: f64 = 0.25;
/// The smallest queue delay taken as a queue: on short paths host and serialisation noise is a
/// millisecond or two.
pub const LOW_QUEUE_FLOOR: Duration = Duration::from_millis(2);
/// An ACK counts as bunched when it arrives within this share of the time the bottleneck takes
/// to deliver the bytes it newly acknowledges (at the largest delivery rate the flow measured)
/// after the previous ACK. A receiver's own ACKs cannot come faster than the data they cover
/// crossed the bottleneck (a share of 1 at full rate); ACKs a link held and released together
/// come within microseconds (0 in the simulator). A quarter leaves room for a delivery-rate
/// estimate up to four times below the path's rate.
pub const BUNCHED_SPACING: f64 = 0.25;

/// One closed window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathWindow {
    /// When it closed.
    pub at: Time,
    /// The transport's min RTT at the close.
    pub base: Duration,
    /// The window's smallest RTT sample, less the receiver's reported ACK delay, less the base
    /// RTT (`None` without a sample).
    pub queue_floor: Option<Duration>,
    /// The window's largest RTT sample less its smallest (`None` without a sample).
    pub spread: Option<Duration>,
    /// Bytes declared lost over bytes acknowledged plus lost (0 when neither).
    pub loss_rate: f64,
    /// Of the bytes declared lost, the share declared at a low queue (NaN without losses).
    pub low_queue_loss_share: f64,
    /// The largest delivery-rate sample that was not application-limited.
    pub bandwidth: Option<Rate>,
    /// Of the bytes acknowledged, the share acknowledged by bunched ACKs ([`BUNCHED_SPACING`];
    /// 0 when none was acknowledged).
    pub bunched_share: f64,
    /// The window's length over the number of ACKs that were not bunched, each of which began a
    /// bunch (or came alone): how long the path held ACKs between releases on average. A link
    /// that releases held ACKs every 10 ms shows 10 ms; one that delivers in millisecond slots
    /// (LTE's transmission intervals, a mahimahi trace) about a millisecond. `None` when no
    /// ACK began a bunch.
    pub bunch_interval: Option<Duration>,
}

impl PathWindow {
    /// Whether `queue` is a queue on this path, not noise ([`LOW_QUEUE_SHARE`]).
    pub fn is_queue(&self, queue: Duration) -> bool {
        queue > low_queue_limit(self.base)
    }
}

/// The queue delay below which a path counts as unqueued, for base RTT `base`.
pub fn low_queue_limit(base: Duration) -> Duration {
    base.mul_f64(LOW_QUEUE_SHARE).max(LOW_QUEUE_FLOOR)
}

/// The open window.
#[derive(Clone, Debug, Default)]
pub struct PathWindows {
    start: Option<(Time, Duration)>,
    min: Option<Duration>,
    max: Option<Duration>,
    /// The smallest sample less the receiver's reported ACK delay: the queue floor's.
    floor_min: Option<Duration>,
    acked: Bytes,
    lost: Bytes,
    lost_low_queue: Bytes,
    bandwidth: Option<Rate>,
    /// The latest RTT sample and the base RTT then, to place a loss.
    latest: Option<(Duration, Duration)>,
    /// Bytes acknowledged by bunched ACKs.
    bunched: Bytes,
    /// ACKs that were not bunched (each begins a bunch).
    bunches: u32,
    /// When the previous ACK arrived (kept across windows).
    last_ack: Option<Time>,
    /// The largest delivery rate the flow measured (kept across windows).
    top_rate: Option<Rate>,
}

impl PathWindows {
    /// Absorbs one ACK; returns the window it closes, if any.
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) -> Option<PathWindow> {
        self.acked = self.acked.saturating_add(ack.acked_bytes);
        if let Some(lo) = ack.min_rtt_sample {
            self.min = Some(self.min.map_or(lo, |m| m.min(lo)));
            // A receiver's ACK timer is no queue (RFC 9002 §5.3's adjustment, kept at or above
            // the base RTT); the spread keeps the samples as measured, holds and all.
            let held = without_ack_delay(lo, ack.rtt.min, ack.ack_delay);
            self.floor_min = Some(self.floor_min.map_or(held, |m| m.min(held)));
        }
        if let Some(hi) = ack.max_rtt_sample.or(ack.min_rtt_sample) {
            self.max = Some(self.max.map_or(hi, |m| m.max(hi)));
        }
        if ack.rtt.has_sample {
            self.latest = Some((ack.rtt.latest, ack.rtt.min));
        }
        let bunched = self.last_ack.zip(self.top_rate).is_some_and(|(prev, top)| {
            let delivery = top.time_to_send(ack.acked_bytes);
            now.saturating_since(prev) < delivery.mul_f64(BUNCHED_SPACING)
        });
        if bunched {
            self.bunched = self.bunched.saturating_add(ack.acked_bytes);
        } else {
            self.bunches = self.bunches.saturating_add(1);
        }
        self.last_ack = Some(now);
        if let Some(rs) = ack.rate_sample.filter(|rs| !rs.is_app_limited) {
            self.bandwidth = Some(
                self.bandwidth
                    .map_or(rs.delivery_rate, |b| b.max(rs.delivery_rate)),
            );
            self.top_rate = Some(
                self.top_rate
                    .map_or(rs.delivery_rate, |b| b.max(rs.delivery_rate)),
            );
        }
        let Some((start, len)) = self.start else {
            self.start = Some((now, ack.rtt.smoothed.max(MIN_WINDOW)));
            return None;
        };
        if now.saturating_since(start) < len {
            return None;
        }
        let w = self.close(now, now.saturating_since(start), ack.rtt.min);
        self.start = Some((now, ack.rtt.smoothed.max(MIN_WINDOW)));
        Some(w)
    }

    /// Counts a loss event's bytes, and whether the queue was low when it was declared.
    pub fn on_loss(&mut self, loss: &LossEvent) {
        self.lost = self.lost.saturating_add(loss.lost_bytes);
        if let Some((latest, base)) = self.latest {
            if latest - base <= low_queue_limit(base) {
                self.lost_low_queue = self.lost_low_queue.saturating_add(loss.lost_bytes);
            }
        }
    }

    fn close(&mut self, now: Time, length: Duration, base: Duration) -> PathWindow {
        let total = self.acked.saturating_add(self.lost);
        let w = PathWindow {
            at: now,
            base,
            queue_floor: self.floor_min.map(|m| m - base),
            spread: self.min.zip(self.max).map(|(lo, hi)| hi - lo),
            loss_rate: if total == 0 {
                0.0
            } else {
                self.lost as f64 / total as f64
            },
            low_queue_loss_share: if self.lost == 0 {
                f64::NAN
            } else {
                self.lost_low_queue as f64 / self.lost as f64
            },
            bandwidth: self.bandwidth,
            bunched_share: if self.acked == 0 {
                0.0
            } else {
                self.bunched as f64 / self.acked as f64
            },
            bunch_interval: (self.bunches > 0)
                .then(|| Duration::from_nanos(length.as_nanos() / u64::from(self.bunches))),
        };
        *self = PathWindows {
            latest: self.latest,
            last_ack: self.last_ack,
            top_rate: self.top_rate,
            ..PathWindows::default()
        };
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::rtt::RttSnapshot;
    use crate::signals::RateSample;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// An ACK of 1000 bytes carrying RTT samples `lo..=hi` ms on a path of base RTT `base` ms.
    fn ack(lo: u64, hi: u64, base: u64, mbps: u64) -> AckEvent {
        AckEvent {
            acked_bytes: 1000,
            min_rtt_sample: Some(ms(lo)),
            max_rtt_sample: Some(ms(hi)),
            rtt: RttSnapshot {
                latest: ms(hi),
                smoothed: ms(100),
                var: ms(5),
                min: ms(base),
                has_sample: true,
            },
            rate_sample: Some(RateSample {
                delivery_rate: Rate::from_mbps(mbps),
                ..RateSample::default()
            }),
            ..AckEvent::default()
        }
    }

    fn at(v: u64) -> Time {
        Time::ZERO + ms(v)
    }

    #[test]
    fn a_window_records_the_queue_floor_the_spread_and_where_losses_fell() {
        let mut p = PathWindows::default();
        assert_eq!(p.on_ack(at(0), &ack(130, 140, 100, 10)), None);
        // A loss declared while the latest sample was 140 ms on a 100 ms path: 40 ms of queue,
        // above the 25 ms low-queue limit, so congestive.
        p.on_loss(&LossEvent {
            lost_bytes: 1000,
            ..LossEvent::default()
        });
        assert_eq!(p.on_ack(at(50), &ack(120, 122, 100, 12)), None);
        // Now the latest is 122 ms: 22 ms of queue, below the limit: this loss counts as random.
        p.on_loss(&LossEvent {
            lost_bytes: 3000,
            ..LossEvent::default()
        });
        let w = p.on_ack(at(100), &ack(125, 180, 100, 11)).expect("closes");
        assert_eq!(w.queue_floor, Some(ms(20)));
        assert_eq!(w.spread, Some(ms(60)));
        // 4000 lost of 3000 acked + 4000 lost.
        assert!((w.loss_rate - 4.0 / 7.0).abs() < 1e-12, "{}", w.loss_rate);
        assert_eq!(w.low_queue_loss_share, 0.75);
        assert_eq!(w.bandwidth, Some(Rate::from_mbps(12)));
        assert!(w.is_queue(ms(26)) && !w.is_queue(ms(25)));
        // The next window starts empty.
        let w = p.on_ack(at(200), &ack(101, 101, 100, 9)).expect("closes");
        assert_eq!((w.loss_rate, w.queue_floor), (0.0, Some(ms(1))));
        assert!(w.low_queue_loss_share.is_nan());
    }

    #[test]
    fn on_short_paths_the_low_queue_limit_has_a_floor() {
        assert_eq!(low_queue_limit(ms(4)), LOW_QUEUE_FLOOR);
        assert_eq!(low_queue_limit(ms(40)), ms(10));
    }

    /// An ACK of `bytes` with an RTT sample of 30 ms on a 20 ms path and a 12-Mbit/s rate sample.
    fn ack_of(bytes: Bytes) -> AckEvent {
        AckEvent {
            acked_bytes: bytes,
            ..ack(30, 30, 20, 12)
        }
    }

    #[test]
    fn bunched_acks_are_told_from_a_receivers_decimated_acks() {
        // 12 Mbit/s: 1000 bytes cross the bottleneck in 0.67 ms, 10 000 in 6.7 ms.
        let mut p = PathWindows::default();
        p.on_ack(at(0), &ack_of(1000));
        // A receiver's ACK per 10 packets, one per 7 ms (at 7, 14, ... 91 ms), and one sent at
        // once after a gap 1 ms after the previous (its packet took 0.67 ms): none bunched.
        for i in 1..14 {
            p.on_ack(at(7 * i), &ack_of(10_000));
        }
        p.on_ack(at(92), &ack_of(1000));
        let w = p.on_ack(at(100), &ack_of(10_000)).expect("closes");
        assert_eq!(w.bunched_share, 0.0);
        // 16 ACKs, each alone, in 100 ms.
        assert_eq!(w.bunch_interval, Some(Duration::from_micros(6_250)));
        // A link that holds ACKs for 10 ms and releases them together: 14 ACKs a batch, all but
        // the first bunched.
        for batch in 0..10 {
            for _ in 0..14 {
                p.on_ack(at(105 + 10 * batch), &ack_of(1000));
            }
        }
        let w = p.on_ack(at(205), &ack_of(1000)).expect("closes");
        // 130 of the 141 ACKs since the close at 100 ms (the first of each batch and the
        // closing one came after a gap).
        assert!(
            (w.bunched_share - 130.0 / 141.0).abs() < 1e-9,
            "{}",
            w.bunched_share
        );
        // 11 bunches (the closing ACK came alone) in the 105 ms since: 9.5 ms apart.
        assert_eq!(
            w.bunch_interval,
            Some(Duration::from_nanos(105_000_000 / 11))
        );
    }
}
