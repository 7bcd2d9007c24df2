//! The application-limited guard shared by every PCC controller.
//!
//! A sender with less data than rate × MI sends the same bytes whatever its rate: both trials
//! of a probing pair measure the same sending rate, throughput and RTT, so the utilities say
//! nothing about the rate, and whatever the controller then decides (noise, a starting phase
//! that doubles while utility does not fall, a decision phase that keeps moving) can raise the
//! rate without bound. When the application later has data, the flow sends at that rate.
//!
//! Rule, after congestion-window validation for a rate sender (RFC 7661 §4.3, a window is
//! not validated and must not grow while less than half of it is used; RFC 9002 §7.8; Linux
//! `tcp_is_cwnd_limited`): an MI is *not validated* when it sent less than
//! [`VALIDATED_FILL`] of its rate (its sending rate, over the time its packets took, see
//! `monitor.rs`) while the sender's own window never filled, or when the transport flagged
//! one of its packets as sent while application-limited. After a non-validated MI the
//! controller's rate may not rise above the rate it had before that MI. Once no MI has been
//! validated for the non-validated period ([`sustained`], RFC 7661 §4.3's NVP of five minutes:
//! a rate-limited or idle sender keeps its window that long, then reduces it), the rate is
//! also capped at [`DELIVERED_GAIN`]× the MI's delivered rate (RFC 7661's factor of two: a
//! validated window is at most twice what the flow used), never below the rate of an initial
//! window per smoothed RTT (RFC 9002 §7.2's initial window, Linux's restart window), so that an
//! idle application does not drive the rate to nothing. Capping sooner, at every gap, sent a
//! chunked video download back to an initial window per RTT at each chunk, and PCC's rate
//! search takes many MIs to climb back (Proteus Figs. 12–13: a 4K player got 27 Mbit/s of
//! 70–120; REPRODUCTION.md's PCC section 13). An idle sender judges no MI, so one that sends
//! again after more than the NVP without a validated MI restarts from that initial-window
//! rate (`PccSender::on_sent`). Nor
//! may such an MI take the rate below that initial-window rate unless it lost packets
//! (`rate_floor`). The controller restarts its search at the bound (`RateControl::set_rate`).
//! A sender with enough data fills every MI (a paced one sends its rate to within one packet
//! per MI, an unpaced one more): the guard never acts on it.

use crate::algos::pcc::monitor::{MiStats, MIN_PACKETS_PER_MI};
use crate::units::{Bytes, Duration, Rate, Time};

/// RFC 7661 §4.3: a window less than half used is not validated.
pub const VALIDATED_FILL: f64 = 0.5;
/// RFC 7661 §4.3: the rate stays within twice what the flow actually used.
pub const DELIVERED_GAIN: f64 = 2.0;
/// RFC 7661 §4.3: the non-validated period (NVP), how long a sender that has not validated
/// its window may keep it.
pub const NON_VALIDATED_PERIOD: Duration = Duration::from_secs(300);

/// Whether the sender, with no validated MI since `since`, has outlasted the
/// [`NON_VALIDATED_PERIOD`] by `now`.
pub fn sustained(since: Time, now: Time) -> bool {
    now >= since + NON_VALIDATED_PERIOD
}

/// True when the MI shows the sender was application-limited (module documentation). Only an
/// MI that lasted at least the time to send [`MIN_PACKETS_PER_MI`] packets of `mss` at its rate
/// can show it by its fill: one that a rate change closed sooner (re-alignment, possibly before
/// its first packet) says nothing about the application, nor does one whose sender's own window
/// was full at some moment (before the first RTT sample the window is two initial-RTTs' worth,
/// far less than a satellite path's 800 ms of data).
pub fn not_validated(s: &MiStats, mss: Bytes) -> bool {
    let long_enough = s.duration >= s.rate.time_to_send(MIN_PACKETS_PER_MI * mss);
    let under_filled = s.send_rate_bps < VALIDATED_FILL * s.rate.as_bps() as f64;
    s.app_limited_flag || (long_enough && !s.window_limited && under_filled)
}

/// True when the MI shows the rate in use: at least [`MIN_PACKETS_PER_MI`] packets, and
/// not [`not_validated`]. An MI with fewer (an idle one, one a re-alignment closed early)
/// says nothing either way.
pub fn validated(s: &MiStats, mss: Bytes) -> bool {
    s.packets_sent >= MIN_PACKETS_PER_MI && !not_validated(s, mss)
}

/// The highest rate the controller may have after judging non-validated MI `s`: no more than
/// `before` (its rate before the MI) and, once the limitation is `sustained`, nor
/// [`DELIVERED_GAIN`]× the MI's delivered rate, that cap never below `floor`.
pub fn rate_limit(s: &MiStats, before: Rate, floor: Rate, sustained: bool) -> Rate {
    if !sustained {
        return before;
    }
    let cap = Rate::from_bps_f64(DELIVERED_GAIN * s.throughput_bps).max(floor);
    before.min(cap)
}

/// The lowest rate the controller may have after judging non-validated MI `s`: without loss in
/// the MI, `floor` (or `before`, if already lower); with loss, none. An MI with idle time says
/// as little about a lower rate as about a higher one (both trials of a pair send the same
/// bytes), and a guard that let such verdicts lower the rate but never raise it would ratchet
/// the rate of a request/response connection down to the controller's minimum. TCP keeps its
/// window through application-limited periods and restarts from the initial window after idle
/// (RFC 5681 §4.1, RFC 7661 §4.3); loss lowers both.
pub fn rate_floor(s: &MiStats, before: Rate, floor: Rate) -> Rate {
    if s.packets_lost > 0 {
        Rate(0)
    } else {
        before.min(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1000;

    fn mi(rate_mbps: u64, send_mbps: f64, delivered_mbps: f64) -> MiStats {
        MiStats {
            rate: Rate::from_mbps(rate_mbps),
            duration: crate::units::Duration::from_millis(40),
            send_rate_bps: send_mbps * 1e6,
            throughput_bps: delivered_mbps * 1e6,
            ..MiStats::default()
        }
    }

    #[test]
    fn an_mi_is_validated_when_it_sent_at_least_half_its_rate() {
        assert!(!not_validated(&mi(10, 9.9, 9.9), MSS));
        assert!(!not_validated(&mi(10, 5.0, 4.0), MSS));
        assert!(not_validated(&mi(10, 4.9, 4.9), MSS));
        let flagged = MiStats {
            app_limited_flag: true,
            ..mi(10, 9.9, 9.9)
        };
        assert!(not_validated(&flagged, MSS));
        // Closed after 7 ms, less than 10 packets' time at 10 Mbit/s (8 ms): no evidence.
        let cut = MiStats {
            duration: crate::units::Duration::from_millis(7),
            ..mi(10, 0.0, 0.0)
        };
        assert!(!not_validated(&cut, MSS));
        // Held back by its own window (before the first RTT sample, say), not by the
        // application.
        let window = MiStats {
            window_limited: true,
            ..mi(10, 1.0, 1.0)
        };
        assert!(!not_validated(&window, MSS));
    }

    #[test]
    fn the_limit_never_raises_and_caps_at_twice_the_delivered_rate() {
        let floor = Rate::from_mbps(1);
        // 2 Mbit/s delivered at a 20 Mbit/s rate: capped at 4.
        let s = mi(20, 2.0, 2.0);
        assert_eq!(
            rate_limit(&s, Rate::from_mbps(20), floor, true),
            Rate::from_mbps(4)
        );
        // Within the non-validated period only the rate before the MI bounds it.
        assert_eq!(
            rate_limit(&s, Rate::from_mbps(20), floor, false),
            Rate::from_mbps(20)
        );
        // Below the cap the rate before the MI is the limit.
        assert_eq!(
            rate_limit(&s, Rate::from_mbps(3), floor, true),
            Rate::from_mbps(3)
        );
        // Nothing delivered: the floor.
        assert_eq!(
            rate_limit(&mi(20, 0.0, 0.0), Rate::from_mbps(20), floor, true),
            floor
        );
    }

    #[test]
    fn a_limitation_is_sustained_after_the_non_validated_period() {
        let t0 = Time::ZERO + Duration::from_secs(5);
        assert!(!sustained(t0, t0 + Duration::from_secs(299)));
        assert!(sustained(t0, t0 + Duration::from_secs(300)));
    }

    #[test]
    fn only_loss_takes_the_rate_below_the_floor() {
        let floor = Rate::from_mbps(3);
        let s = mi(4, 1.0, 1.0);
        assert_eq!(rate_floor(&s, Rate::from_mbps(4), floor), floor);
        // Already below the floor: it may stay there, not fall further.
        assert_eq!(
            rate_floor(&s, Rate::from_mbps(2), floor),
            Rate::from_mbps(2)
        );
        let lossy = MiStats {
            packets_lost: 1,
            ..s
        };
        assert_eq!(rate_floor(&lossy, Rate::from_mbps(4), floor), Rate(0));
        // The bounds never cross: the limit is at least min(before, floor) too.
        for before in [1, 3, 4, 20] {
            let b = Rate::from_mbps(before);
            for sus in [false, true] {
                assert!(rate_floor(&s, b, floor) <= rate_limit(&s, b, floor, sus));
            }
        }
    }
}
