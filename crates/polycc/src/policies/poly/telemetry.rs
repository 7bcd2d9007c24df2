//! What PolyCC exposes for recording: the current pilot, the fused value, and each member's own
//! window and rate (before the write-back, i.e. what that member wanted). Only the fused
//! quantity is read from the members per event; the other one is derived here, when the
//! telemetry is sampled: under window fusion a member's rate is its pacing rate now, else its
//! own window over srtt; under rate fusion its window is its window now. The simulator records
//! them as `cc_<name>` time series; member i is the pool's i-th (the configured pilot is m0, the
//! copilots follow in scenario order). The state string is the pilot's own state (BBR's
//! `probe_bw`, CUBIC's `congestion_avoidance`…).

use super::members::{Member, Quantity};
use crate::cc::Telemetry;
use crate::units::Duration;

/// Largest pool: two series per member plus three of the agent must fit in
/// [`Telemetry::CAPACITY`].
pub const MAX_MEMBERS: usize = 8;

const CWND_NAMES: [&str; MAX_MEMBERS] = [
    "m0_cwnd_bytes",
    "m1_cwnd_bytes",
    "m2_cwnd_bytes",
    "m3_cwnd_bytes",
    "m4_cwnd_bytes",
    "m5_cwnd_bytes",
    "m6_cwnd_bytes",
    "m7_cwnd_bytes",
];
const RATE_NAMES: [&str; MAX_MEMBERS] = [
    "m0_rate_mbps",
    "m1_rate_mbps",
    "m2_rate_mbps",
    "m3_rate_mbps",
    "m4_rate_mbps",
    "m5_rate_mbps",
    "m6_rate_mbps",
    "m7_rate_mbps",
];

const _: () = assert!(3 + 2 * MAX_MEMBERS <= Telemetry::CAPACITY);

/// Builds the telemetry record. `fused` is in the unit of `q` (bytes or bit/s); `srtt` converts
/// a window-only member's window into its rate.
pub fn record(
    members: &[Member],
    pilot: usize,
    q: Quantity,
    fused: f64,
    switches: u64,
    srtt: Duration,
) -> Telemetry {
    let mut t = Telemetry::new(members[pilot].cc.telemetry().state);
    t.push("pilot", pilot as f64);
    match q {
        Quantity::Cwnd => t.push("fused_cwnd_bytes", fused),
        Quantity::Rate => t.push("fused_rate_mbps", fused / 1e6),
    }
    t.push("pilot_switches", switches as f64);
    for (i, m) in members.iter().enumerate().take(MAX_MEMBERS) {
        let (cwnd, rate) = match q {
            Quantity::Cwnd => (m.own_cwnd, m.rate_now(srtt)),
            Quantity::Rate => (m.cc.cwnd(), m.own_rate),
        };
        t.push(CWND_NAMES[i], cwnd as f64);
        t.push(RATE_NAMES[i], rate.as_mbps_f64());
    }
    t
}
