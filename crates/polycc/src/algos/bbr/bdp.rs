//! The bandwidth-delay product BBR's windows are built from (Linux `bbr_bdp`).

use crate::units::{Bytes, Duration, Rate};

/// `ceil(bw · min_rtt · gain)` in bytes, rounded up to whole packets (Linux `bbr_bdp` rounds up in
/// packets "to avoid a negative feedback loop"). Without an RTT sample: the initial window.
#[inline]
pub fn bdp(bw: Rate, min_rtt: Option<Duration>, gain: f64, mss: Bytes, init_cwnd: Bytes) -> Bytes {
    let Some(rtt) = min_rtt else {
        return init_cwnd;
    };
    let bytes = bw.as_bytes_per_sec_f64() * rtt.as_secs_f64() * gain;
    let packets = (bytes / mss.max(1) as f64).ceil();
    // Saturate far below u64::MAX so that later additions cannot overflow.
    (packets.min((u64::MAX >> 8) as f64 / mss.max(1) as f64) as u64) * mss.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdp_rounds_up_to_packets() {
        // 12 Mbit/s · 10 ms = 15 000 B = 10 packets of 1500 B; ×2.885 = 28.85 → 29 packets.
        let bw = Rate::from_mbps(12);
        let rtt = Some(Duration::from_millis(10));
        assert_eq!(bdp(bw, rtt, 1.0, 1500, 0), 15_000);
        assert_eq!(bdp(bw, rtt, 2.885, 1500, 0), 29 * 1500);
        assert_eq!(bdp(bw, None, 2.0, 1500, 14_720), 14_720);
    }
}
