//! The ACK delay of the last RTT sample, recovered from s2n's estimator.
//!
//! s2n-quic hands a congestion controller its `RttEstimator` after each RTT sample, but not the
//! ACK frame's ACK Delay (RFC 9000 §19.3). Its estimator subtracts that delay, capped at
//! max_ack_delay, from the sample before averaging it into `smoothed_rtt` (RFC 9002 §5.3):
//! `smoothed' = smoothed/8·7 + adjusted/8`, each division rounding down on nanoseconds
//! (`weighted_average` in s2n-quic-core's `rtt_estimator.rs`). From the two smoothed values and
//! `latest_rtt` the subtracted delay follows to within 8 ns.

use polycc::units::Duration;

/// Rounding of the recovery: `adjusted/8` loses up to 7 ns.
const ROUNDING_NS: u64 = 8;

/// The ACK delay s2n subtracted from `latest` when it moved its smoothed RTT from `before` to
/// `after`; zero when it subtracted none (or the sample moved nothing).
pub fn ack_delay_taken(before: Duration, after: Duration, latest: Duration) -> Duration {
    let kept = before.as_nanos() / 8 * 7;
    let Some(eighth) = after.as_nanos().checked_sub(kept) else {
        return Duration::ZERO;
    };
    let adjusted = eighth * 8;
    let taken = latest.as_nanos().saturating_sub(adjusted);
    if taken < ROUNDING_NS {
        Duration::ZERO
    } else {
        Duration::from_nanos(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::from_std;
    use s2n_quic_core::packet::number::PacketNumberSpace;
    use s2n_quic_core::recovery::RttEstimator;
    use s2n_quic_core::time::{Clock, NoopClock};
    use std::time::Duration as StdDuration;

    /// Feeds s2n's own estimator `(sample, ack delay)` pairs and recovers each delay.
    #[test]
    fn recovers_the_delay_s2n_subtracted_from_each_sample() {
        let mut est = RttEstimator::new(StdDuration::from_millis(40));
        est.on_max_ack_delay(
            s2n_quic_core::transport::parameters::MaxAckDelay::new(
                s2n_quic_core::varint::VarInt::from_u32(25),
            )
            .expect("25 ms is a valid max_ack_delay"),
        );
        let now = NoopClock.get_time();
        let samples = [
            (40_000_000_u64, 0_u64), // the first sample sets the estimator: nothing taken
            (63_123_457, 21_004_001), // a receiver's timer held the ACK 21 ms
            (41_500_000, 0),         // an immediate ACK
            (70_000_000, 40_000_000), // above max_ack_delay: 25 ms taken
            (40_300_000, 5_000_000), // would fall below min_rtt: nothing taken
            (52_222_222, 3_333_333),
        ];
        let mut before = from_std(est.smoothed_rtt());
        let mut got = Vec::new();
        for (sample, delay) in samples {
            est.update_rtt(
                StdDuration::from_nanos(delay),
                StdDuration::from_nanos(sample),
                now,
                true,
                PacketNumberSpace::ApplicationData,
            );
            let after = from_std(est.smoothed_rtt());
            got.push(ack_delay_taken(before, after, from_std(est.latest_rtt())).as_nanos());
            before = after;
        }
        let want = [0, 21_004_001, 0, 25_000_000, 0, 3_333_333];
        for (g, w) in got.iter().zip(want) {
            assert!(g.abs_diff(w) < ROUNDING_NS, "{got:?} vs {want:?}");
        }
    }
}
