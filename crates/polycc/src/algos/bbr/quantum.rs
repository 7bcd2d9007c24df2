//! The send quantum: how many segments one burst carries (Linux's TSO goal), which sets the
//! quantization budget BBR adds to its in-flight targets. Each version keeps its own budget.

use crate::units::{Bytes, Duration, Rate};

/// Linux `bbr_min_tso_rate`: below 1.2 Mbit/s the TSO goal is one segment, else two.
const MIN_TSO_RATE: Rate = Rate::from_bps(1_200_000);
/// Linux `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (64 KiB less about 320 header bytes): the
/// largest burst the TSO budget allows.
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// Linux TSO goal cap (`0x7F` segments).
pub const TSO_MAX_SEGS: u64 = 0x7f;
/// Linux `sk_pacing_shift` default 10: the TSO burst is about 1 ms (1/1024 s) of the pacing rate.
const PACING_SHIFT: u32 = 10;

/// Linux v1 `bbr_tso_segs_goal`: segments per burst, about 1 ms of the pacing rate, at least 1
/// (below 1.2 Mbit/s) or 2, at most 127 or 64 KiB.
#[inline]
pub(crate) fn tso_goal_v1(pacing_rate: Rate, mss: Bytes) -> u64 {
    let bytes = ((pacing_rate.as_bps() / 8) >> PACING_SHIFT).min(GSO_MAX_BYTES);
    let min_segs = if pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
    (bytes / mss.max(1)).max(min_segs).min(TSO_MAX_SEGS)
}

/// google/bbr v3 `bbr_tso_segs_generic`: as v1 plus a min-RTT based allowance of 64 KiB halved
/// for every 512 µs of min RTT (`bbr_tso_rtt_shift` = 9), at least `tcp_min_tso_segs` = 2.
#[inline]
pub(crate) fn tso_goal_v3(pacing_rate: Rate, min_rtt: Option<Duration>, mss: Bytes) -> u64 {
    let mut bytes = (pacing_rate.as_bps() / 8) >> PACING_SHIFT;
    if let Some(rtt) = min_rtt {
        let r = (rtt.as_nanos() / 1000) >> 9;
        if r < 32 {
            bytes += 65_536 >> r;
        }
    }
    (bytes.min(GSO_MAX_BYTES) / mss.max(1)).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tso_goal_is_a_millisecond_of_pacing() {
        // 50 Mbit/s: 6.25 MB/s >> 10 = 6103 B = 4 packets of 1500 B.
        assert_eq!(tso_goal_v1(Rate::from_mbps(50), 1500), 4);
        assert_eq!(tso_goal_v1(Rate::from_bps(1_000_000), 1500), 1);
        assert_eq!(tso_goal_v1(Rate::from_mbps(10), 1500), 2);
        // 40 ms min RTT: no RTT allowance; 100 µs: 64 KiB allowance, capped.
        assert_eq!(
            tso_goal_v3(Rate::from_mbps(50), Some(Duration::from_millis(40)), 1500),
            4
        );
        assert_eq!(
            tso_goal_v3(Rate::from_mbps(50), Some(Duration::from_micros(100)), 1500),
            GSO_MAX_BYTES / 1500
        );
    }
}
