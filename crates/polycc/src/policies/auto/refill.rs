//! A scavenger's return to an idle link: once it has yielded to a primary (its rate low under a
//! standing queue it does not make) and the queue is gone while its rate is still low, the
//! primary has left, and the scavenger resumes at the largest rate it measured times the base
//! RTT (the path's BDP as it last had it) instead of climbing from the few packets it yielded
//! to.
//!
//! Why: the scavenger member, default-mode Copa, climbs back by its velocity, which doubles
//! every round trip after three; it reaches the link rate within a few round trips but
//! overshoots it by the round trips its queue signal lags, and the velocity it builds on the
//! way down then takes the window below the BDP. Beside a primary that is on 2 s and off 2 s
//! (the suite's `suite-scavenger`, 20 Mbit/s, 40 ms) that swing lasted the whole off period:
//! the scavenger averaged 14 of the idle 20 Mbit/s. Resuming at the BDP with the velocity at 1
//! leaves Copa its 1/δ packets to find.
//!
//! The arming keeps the jump to a primary's departure: a queue the scavenger's own window above
//! the BDP does not explain, while its rate was low. What else can arm it, and costs one jump
//! each: a capacity fall on a link the scavenger has alone (its queue while it drains, the BDP
//! it measured being the old one), and a primary that empties the queue for a window (BBR's
//! PROBE_RTT); the scavenger vacates as soon as the queue stands again.

use super::path_window::PathWindow;
use crate::units::{Bytes, Rate};

/// The scavenger's rate below this share of the largest it measured counts as yielded: beside
/// a primary it holds a few packets (0.2-0.3 of 19 Mbit/s on `suite-scavenger`), on its own
/// Copa holds the link rate once settled.
pub const YIELDED_SHARE: f64 = 0.5;

/// Where the scavenger stands with respect to a primary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    /// Neither yielded nor resumed yet.
    #[default]
    Open,
    /// Yielded under a standing queue: resumes when the queue is gone.
    Yielded,
    /// Resumed at the BDP: vacates when a queue stands again.
    Resumed,
    /// Vacated the link for a returning primary: yielded once the primary's queue shows (the
    /// window after the vacate may still find the queue the scavenger left drained, and
    /// resuming on it would take the link back from a primary in its first round trips).
    Vacated,
}

/// The scavenger's yield-and-resume state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Refill {
    phase: Phase,
}

impl Refill {
    /// The window to move to after `w`, if any: the BDP when the primary has just left (the
    /// scavenger yielded under a standing queue, the queue is gone and its rate is still low),
    /// `min_window` when a queue stands again after that. `largest` is the largest delivery rate
    /// the flow measured, `cwnd` its window now.
    pub fn on_window(
        &mut self,
        w: &PathWindow,
        largest: Option<Rate>,
        cwnd: Bytes,
        min_window: Bytes,
    ) -> Option<Bytes> {
        let (Some(top), Some(rate), Some(floor)) = (largest, w.bandwidth, w.queue_floor) else {
            return None;
        };
        // The queue the scavenger's own window above the BDP explains (Copa's climb after it
        // resumed) is not a primary's.
        let bdp = top.bytes_in(w.base);
        let own = top.time_to_send(cwnd.saturating_sub(bdp));
        let queued = w.is_queue(floor - own);
        let low = (rate.as_bps() as f64) < YIELDED_SHARE * top.as_bps() as f64;
        match self.phase {
            Phase::Resumed if queued => {
                self.phase = Phase::Vacated;
                (cwnd > min_window).then_some(min_window)
            }
            Phase::Vacated if queued => {
                self.phase = Phase::Yielded;
                None
            }
            Phase::Open if queued && low => {
                self.phase = Phase::Yielded;
                None
            }
            Phase::Yielded if !queued && low => {
                self.phase = Phase::Resumed;
                (bdp > cwnd).then_some(bdp)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Duration, Time};

    const MIN: Bytes = 2 * 1500;
    /// 20 Mbit/s over 40 ms: 100 000 bytes.
    const BDP: Bytes = 100_000;

    fn top() -> Option<Rate> {
        Some(Rate::from_mbps(20))
    }

    /// A window at `mbps` with a queue floor of `floor_ms` on a 40-ms path.
    fn window(mbps: u64, floor_ms: u64) -> PathWindow {
        PathWindow {
            at: Time::ZERO,
            base: Duration::from_millis(40),
            queue_floor: Some(Duration::from_millis(floor_ms)),
            spread: Some(Duration::from_millis(1)),
            loss_rate: 0.0,
            low_queue_loss_share: f64::NAN,
            bandwidth: Some(Rate::from_mbps(mbps)),
            bunched_share: 0.0,
            bunch_interval: None,
        }
    }

    #[test]
    fn resumes_at_the_bdp_when_the_primary_leaves_and_vacates_when_it_returns() {
        let mut r = Refill::default();
        // Alone from the start, no queue: nothing to do.
        assert_eq!(r.on_window(&window(19, 0), top(), BDP, MIN), None);
        // A primary's queue while the scavenger is low: yielded, nothing moves yet.
        assert_eq!(r.on_window(&window(1, 60), top(), 4_000, MIN), None);
        assert_eq!(r.on_window(&window(1, 60), top(), 4_000, MIN), None);
        // The queue gone, the rate still low: the primary left; resume at 20 Mbit/s × 40 ms.
        assert_eq!(r.on_window(&window(1, 0), top(), 4_000, MIN), Some(BDP));
        // Copa's climb 20 KB above the BDP explains 8 of 15 ms of queue: 7 ms is no primary.
        assert_eq!(r.on_window(&window(19, 15), top(), BDP + 20_000, MIN), None);
        // A queue beyond that: the primary is back; vacate.
        assert_eq!(r.on_window(&window(10, 30), top(), BDP, MIN), Some(MIN));
        // The window after the vacate finds the queue drained: not yet a departure.
        assert_eq!(r.on_window(&window(1, 0), top(), MIN, MIN), None);
        // The primary's queue shows, then goes: resume again.
        assert_eq!(r.on_window(&window(1, 50), top(), MIN, MIN), None);
        assert_eq!(r.on_window(&window(1, 1), top(), MIN, MIN), Some(BDP));
    }

    #[test]
    fn a_queue_under_a_high_rate_does_not_arm_and_nothing_fires_without_a_rate() {
        let mut r = Refill::default();
        // The scavenger's own queue at the link rate (a capacity step it drains at speed).
        assert_eq!(r.on_window(&window(15, 40), top(), BDP, MIN), None);
        assert_eq!(r.on_window(&window(1, 0), top(), 4_000, MIN), None);
        // Without a largest rate the BDP is unknown.
        let mut r = Refill::default();
        assert_eq!(r.on_window(&window(1, 60), None, 4_000, MIN), None);
        assert_eq!(r.on_window(&window(1, 0), None, 4_000, MIN), None);
    }
}
