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
//! The arming keeps the jump to a primary's departure: a queue the scavenger did not make
//! while its rate was low. A link whose capacity the scavenger alone measured at a lower value
//! never arms it (no standing queue without a competitor); a primary that leaves idle gaps
//! shorter than a window (BBR's PROBE_RTT) may fire it, and the scavenger yields again as the
//! queue returns.

use super::path_window::PathWindow;
use crate::units::{Bytes, Rate};

/// The scavenger's rate below this share of the largest it measured counts as yielded (a
/// scavenger beside a primary holds a few packets; Copa alone on the link stays above 0.8 of it
/// between its swings).
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
