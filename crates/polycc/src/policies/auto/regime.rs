//! `auto`'s path classifier: which regime the path is in, from the windows of
//! [`super::path_window`], with the evidence each regime needs and the hysteresis that keeps a
//! flow from flapping between controllers.
//!
//! Regimes, strongest evidence first:
//! - **Aggressive competitor**: over the last [`LOSS_WINDOWS`] windows at least
//!   [`AGGRESSOR_LOSS_RATE`] of the bytes were lost, mostly at a queue. Copa, which `auto` runs
//!   on a clean path, holds a queue of a few packets and loses next to nothing by itself; BBR v3
//!   bounds its own loss below 2 % per round (draft-ietf-ccwg-bbr `BBRLossThresh`), and a
//!   loss-based competitor backs off before that much is lost; a sender
//!   that keeps a shallow buffer overflowing does not respond to loss (BBR v1 with its 2·BDP
//!   window). Only a controller that ignores loss as well holds its share against it. The
//!   losses must come in at least a quarter of the windows (a slow-start overshoot loses as
//!   much in a round or two) and the rate must have held for [`AGGRESSOR_CONFIRM_WINDOWS`]
//!   windows; the regime then holds while the loss stays above half that rate.
//! - **Competing**: the queue floor has stayed up for [`STANDING_HOLD`]. A flow run by a
//!   controller that drains its own queue (Copa at least every 5 RTTs in its default mode; BBR
//!   in its gain cycles) cannot keep a floor that long by itself: another sender keeps the
//!   buffer full, as loss-based controllers do (Copa's competitive-mode test, NSDI'18 §2.2,
//!   reasons the same way over 5 RTTs; here longer, to outlast the drain after a capacity
//!   drop). Sooner, after [`RISING_STANDING_HOLD`], when the standing floor keeps rising and
//!   never falls back below where it began nor far from its highest: a queue the flow does not
//!   drain (a capacity drop raises the floor too, but the flow then drains it). Not while a
//!   loss-based member runs a long path or ACK aggregation: it keeps a queue of its own, and
//!   holds its share against buffer-fillers anyway.
//! - **Random loss**: over the last [`LOSS_WINDOWS`] windows the loss rate is at least
//!   [`RANDOM_LOSS_RATE`] and most lost bytes were declared at a low queue; on a long path over
//!   [`LONG_PATH_LOSS_WINDOWS`] windows, from the lower rate at which a loss-based window no
//!   longer fills the path (Mathis, [`MATHIS_C`]). It holds while the rate stays there, wherever
//!   the loss is taken (its member, BBR v1, overflows a shallow buffer by itself), and the
//!   standing-queue test is off while it runs (BBR v1's own queue). It ends an
//!   aggregation hold and bars the aggregation test: BBR v1 keeps its rate under random loss
//!   where CUBIC, the aggregation member, gets a few packets per round trip (Mathis), and a
//!   receiver that acknowledges every k-th packet spreads RTT samples as aggregation does.
//! - **Ack aggregation**: in at least half of the last [`AGGREGATION_WINDOWS`] windows the RTT
//!   spread within one round trip exceeds [`AGGREGATION_SPREAD_SHARE`] of the base RTT (and
//!   [`AGGREGATION_SPREAD_FLOOR`]) while the floor stays low (below the low-queue limit, or
//!   below twice it and below the spread) and at least [`AGGREGATION_BUNCHED_SHARE`] of the
//!   bytes came in bunched ACKs ([`super::path_window::BUNCHED_SPACING`]), bunches no further
//!   apart than the spread allows ([`AGGREGATION_SPREAD_PER_INTERVAL`]): delay that comes and
//!   goes without a queue, on ACKs a link held and released together, which starves BBR v1's
//!   bandwidth samples (PolyCC §3.1) and keeps Copa in its competitive mode. A receiver that
//!   acknowledges every 10th packet or after 25 ms (s2n-quic) spreads the samples as much, the
//!   oldest packet of each ACK having waited for the others, but its ACKs come spread as the
//!   data crossed the bottleneck. Held for [`AGGREGATION_HOLD`], then while one window of the
//!   last eight shows the spread on bunched ACKs.
//! - **Long path**: none of these, on a base RTT of at least [`LONG_PATH_RTT`]; entered and left
//!   without dwell (the base RTT only falls).
//! - **Clean**: none of these.
//!
//! Leaving Competing: the competitor may have left, but the loss-based controller that now runs
//! keeps a standing queue of its own, so the floor no longer tells. After [`COMPETING_HOLD`] the
//! flow leaves when its delivery rate has been at least [`ALONE_SHARE`] of the largest it ever
//! measured for [`ALONE_WINDOWS`] windows, once it has risen by [`ALONE_RISE`] over its share in
//! Competing (it has the link to itself), and after twice the hold it leaves anyway to look
//! again. Coming back within [`REENTRY_MEMORY`] doubles the hold (up to
//! [`MAX_COMPETING_HOLD`]), so a competitor that stays costs a look less and less often.
//!
//! Leaving a loss regime: when the loss stops under the loss-insensitive member. A return within
//! [`REENTRY_MEMORY`] says the clean member made the loss itself, and holds the loss regime for
//! [`LOSS_REENTRY_HOLD`], doubling on each further quick return.

use super::path_window::PathWindow;
use crate::units::{Bytes, Duration, Rate, Time};
use std::collections::VecDeque;

/// How long the queue floor must stand to tell a competitor. Copa, which runs a clean path,
/// empties its own queue at least once every 5 RTTs in its default mode (NSDI'18 §2.2, its own
/// buffer-filler test); on the suite's tuning half (SUITE.md) its floor stood at most 1.5 s
/// (ACK aggregation noise) and 1.4 s (after the capacity drop) without a competitor, short of
/// twice that. (The 1-Mbit/s path, where one queued packet is 12 ms, keeps it up throughout:
/// CUBIC, which Competing runs, loses nothing there.) The first version held 6 s, BBR v3's
/// PROBE_RTT interval plus a gain cycle, while the flow starved behind the competitor's queue.
pub const STANDING_HOLD: Duration = Duration::from_millis(3_000);
/// How long a standing floor that keeps rising must stand to tell a competitor sooner than
/// [`STANDING_HOLD`]. A floor that rises by more than the low-queue limit while it stands, and
/// never comes back below where it began, is a queue somebody keeps filling: Copa's own queue
/// stays near its target (a few packets) and it drains what a capacity drop leaves, so its floor
/// falls within a second or two. On the suite's tuning half (SUITE.md) a standing floor without
/// a competitor lasted at most 1.3 s (after the capacity drop; the LTE trace 0.7 s), while two
/// CUBIC flows in a 4-BDP buffer raised it from 84 to 117 ms between 1 and 3 s. A floor that
/// falls back from its highest by more than the low-queue limit is being drained by the flow
/// and its rise is measured again from there: on a slow link whose capacity falls (the suite's
/// 3G trace, an outage and then half the rate) Copa's window of a few packets is hundreds of
/// milliseconds of queue, raising the floor from 27 to 412 ms, which Copa then brings down
/// (265 ms 0.6 s later), never below where it began; the competitor's queue falls only when the
/// competitor backs off, and rises again at once.
pub const RISING_STANDING_HOLD: Duration = Duration::from_millis(1_500);
/// Windows of history for the aggregation test.
pub const AGGREGATION_WINDOWS: usize = 8;
/// The RTT spread within a window, over the base RTT, taken as aggregation.
pub const AGGREGATION_SPREAD_SHARE: f64 = 0.5;
/// The least spread taken as aggregation, whatever the base RTT (Wi-Fi block ACKs hold ACKs for
/// a few milliseconds; below that, host noise).
pub const AGGREGATION_SPREAD_FLOOR: Duration = Duration::from_millis(10);
/// Share of a window's acknowledged bytes that must come in bunched ACKs for its spread to count
/// as aggregation. Held ACKs released together bunch nearly all (all but the first of each
/// batch: 0.97 of the bytes on the tuning half's Wi-Fi path, ACKs released every 10 ms at
/// 50 Mbit/s); a receiver's decimated or per-packet ACKs on a constant-rate link none, the
/// generated LTE and 3G traces 0.09 and 0 on average (SUITE.md). Half lies between.
pub const AGGREGATION_BUNCHED_SHARE: f64 = 0.5;
/// The largest RTT spread, over the mean interval between bunches of ACKs
/// ([`super::path_window::PathWindow::bunch_interval`]), that aggregation explains. A link that
/// holds ACKs for an interval and releases them together delays a packet's ACK by at most that
/// interval, so its spread is about one interval (the tuning half's Wi-Fi path: 10.2-10.9 ms of
/// spread on bunches 10 ms apart). A link that delivers in slots bunches its ACKs a millisecond or
/// two apart, and the spread it shows comes from capacity dips and outages, a queue that builds
/// and drains, which Copa serves (the public TMobile LTE trace: 25-323 ms of spread on bunches a
/// median 3.7 ms apart, which sent the flow to CUBIC, 229 ms p95 RTT against Copa's 105;
/// SUITE.md).
/// Twice leaves room for the flow's own queue moving within the window.
pub const AGGREGATION_SPREAD_PER_INTERVAL: f64 = 2.0;
/// Least time in AckAggregation: the link layer's aggregation outlasts a flow's probes, while
/// the running CUBIC's own queue soon hides the evidence (a floor above the low-queue limit, a
/// spread at the aggregation interval). Without it the flow went back to Copa within a second,
/// over and over, on the tuning half's Wi-Fi path (SUITE.md); as [`COMPETING_HOLD`].
pub const AGGREGATION_HOLD: Duration = COMPETING_HOLD;
/// Windows of history for the loss test (16 round trips: two BBR gain cycles).
pub const LOSS_WINDOWS: usize = 16;
/// BBR v3 keeps its full rate up to its 2 % loss threshold (draft-ietf-ccwg-bbr `BBRLossThresh`)
/// and backs off above; at 1 % random loss CUBIC already gets a fraction of the link (Mathis:
/// 1.22 / sqrt(p) packets per RTT). From here BBR v1, which does not respond to loss, serves a
/// lossy link better.
pub const RANDOM_LOSS_RATE: f64 = 0.01;
/// Windows of history the random-loss test needs on a long path: the dwell every regime keeps.
/// The full history is two BBR gain cycles, for a BBR member's probe losses; a long path runs
/// CUBIC, and 16 round trips of 600 ms are 9.6 s during which random loss holds it at a tenth of
/// the link (the suite's lossy satellite: CUBIC from 0.6 s, BBR v1 from 10.5 s).
pub const LONG_PATH_LOSS_WINDOWS: usize = MIN_DWELL_WINDOWS as usize;
/// Mathis et al. (CCR 1997): a loss-based controller's window averages `MATHIS_C / sqrt(p)`
/// packets at loss rate `p` (periodic losses, an ACK per packet).
pub const MATHIS_C: f64 = 1.22;
/// Share of lost bytes declared at a low queue for the loss to count as random.
pub const RANDOM_LOSS_SHARE: f64 = 0.5;
/// Congestive loss rate that only a loss-insensitive competitor causes: BBR v3's own bound
/// (draft-ietf-ccwg-bbr `BBRLossThresh`, 2 %). Against CUBIC on 0.5–4 BDP buffers BBR v3 sees
/// 0.2–0.3 %, against BBR v1 on 0.5–1 BDP 2.8–4.6 % (20 Mbit/s, 40 ms, `tests/auto.rs`).
pub const AGGRESSOR_LOSS_RATE: f64 = 0.02;
/// Consecutive windows the loss history must show [`AGGRESSOR_LOSS_RATE`] for (half again the
/// history's length, so that one episode inside the history cannot).
pub const AGGRESSOR_CONFIRM_WINDOWS: u32 = (LOSS_WINDOWS + LOSS_WINDOWS / 2) as u32;
/// Least time in Competing before the flow may leave it.
pub const COMPETING_HOLD: Duration = Duration::from_millis(10_000);
/// The longest the hold grows to.
pub const MAX_COMPETING_HOLD: Duration = Duration::from_millis(80_000);
/// A return to Competing within this long after leaving doubles the hold.
pub const REENTRY_MEMORY: Duration = Duration::from_millis(30_000);
/// Delivery rate, over the largest the flow ever measured, that says it has the link alone.
pub const ALONE_SHARE: f64 = 0.8;
/// Delivery rate, over the largest the flow measured in Competing before its last
/// [`ALONE_WINDOWS`] windows, that says the competitor has left: it frees its share at once (one
/// of two equal flows leaving doubles the other's rate, one of five raises each of the others' by
/// a quarter), where CUBIC gains on its competitors over many seconds. Without it, a flow whose
/// largest rate came from a start-up shared with its competitors (two CUBIC flows in a 4-BDP
/// buffer: 10 Mbit/s of 50) met [`ALONE_SHARE`] as soon as CUBIC held its share (13.7 Mbit/s)
/// and went back to Copa, starving again, after the hold (SUITE.md).
pub const ALONE_RISE: f64 = 1.25;
/// How long after entering Competing a rise of the rate says nothing of the competitor: the
/// competing member takes over from the starved clean member and ramps up (CUBIC from 6 to
/// 13 Mbit/s within half a second against two CUBIC flows in a 4-BDP buffer).
pub const TAKEOVER_SPAN: Duration = STANDING_HOLD;
/// Consecutive windows at [`ALONE_SHARE`] needed to leave Competing early.
pub const ALONE_WINDOWS: u32 = 8;
/// Windows a regime is kept at least, so that one window's evidence does not switch the flow
/// back and forth (a BBR gain cycle).
pub const MIN_DWELL_WINDOWS: u32 = 8;
/// Least time in a loss regime ([`Regime::RandomLoss`], [`Regime::AggressiveCompetitor`]) the
/// first time the flow comes back to one within [`REENTRY_MEMORY`] of leaving it for a regime
/// without loss; each further quick return doubles it, up to [`MAX_COMPETING_HOLD`]. A loss
/// regime is left when its loss-insensitive member (BBR v1) stops losing; if the loss comes back
/// as soon as the clean path's member runs, it was that member's own (Copa overflowing a buffer
/// of a few packets that its delay target does not see, as with ACKs decimated every 25 ms at
/// 4 Mbit/s: 19 switches in 30 s, `tests/auto.rs`), and the member that does not make it should
/// keep the flow. As [`COMPETING_HOLD`], the same look-again-less-often rule.
pub const LOSS_REENTRY_HOLD: Duration = COMPETING_HOLD;

/// The base RTT from which a path without competitor, aggregation or random loss counts as
/// long. Tuned on the suite's tuning half (SUITE.md): its paths are at most 50 ms or at least
/// 300 ms, and Copa, which runs the shorter clean paths best there, holds 30.6 of 50 Mbit/s at
/// 300 ms and 14.2 of 20 at 600 ms (its standing queue swings between 0 and 200 ms), where
/// CUBIC holds 45.0 and 16.8. 150 ms lies between, above the RTTs within a continent.
pub const LONG_PATH_RTT: Duration = Duration::from_millis(150);

/// The path's regime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// No competitor, no aggregation, no random loss, a base RTT below [`LONG_PATH_RTT`].
    Clean,
    /// As [`Regime::Clean`] on a path of base RTT at least [`LONG_PATH_RTT`].
    LongPath,
    /// Loss that comes without a queue.
    RandomLoss,
    /// A standing queue the flow does not make: competing buffer-filling traffic.
    Competing,
    /// Delay that varies within a round trip without a queue.
    AckAggregation,
    /// Heavy loss at a full queue: a competitor that does not respond to loss.
    AggressiveCompetitor,
}

impl Regime {
    /// The regime's name (`cc_state` suffix, README).
    pub fn name(self) -> &'static str {
        match self {
            Regime::Clean => "clean",
            Regime::LongPath => "long_path",
            Regime::RandomLoss => "random_loss",
            Regime::Competing => "competing",
            Regime::AckAggregation => "ack_aggregation",
            Regime::AggressiveCompetitor => "aggressive_competitor",
        }
    }

    /// Whether the regime is entered on loss (its member, BBR v1 by default, ignores loss).
    pub fn is_loss(self) -> bool {
        matches!(self, Regime::RandomLoss | Regime::AggressiveCompetitor)
    }

    /// The regime's code in telemetry (`cc_reason`).
    pub fn code(self) -> f64 {
        match self {
            Regime::Clean => 0.0,
            Regime::RandomLoss => 1.0,
            Regime::Competing => 2.0,
            Regime::AckAggregation => 3.0,
            Regime::AggressiveCompetitor => 4.0,
            Regime::LongPath => 8.0,
        }
    }
}

/// The classifier's state over a flow's windows.
#[derive(Clone, Debug)]
pub struct Classifier {
    regime: Regime,
    windows_in_regime: u32,
    entered: Time,
    recent: VecDeque<PathWindow>,
    standing_since: Option<Time>,
    /// The queue floor when its rise began to be measured (when it began to stand, or where a
    /// drain left it), and the lowest and highest since.
    standing_floor: Option<(Duration, Duration, Duration)>,
    /// Whether the standing floor has risen by more than the low-queue limit above where it
    /// began without ever falling below it.
    standing_rose: bool,
    largest_bandwidth: Option<Rate>,
    alone_windows: u32,
    /// The largest delivery rate measured in Competing before the last [`ALONE_WINDOWS`]
    /// windows, and those windows' rates.
    sharing_rate: Option<Rate>,
    sharing_recent: VecDeque<Option<Rate>>,
    /// Consecutive windows at [`ALONE_RISE`] over the share.
    rise_windows: u32,
    /// Whether the rate rose so since the flow entered Competing, and has not fallen below
    /// [`ALONE_SHARE`] since.
    competitor_left: bool,
    hold: Duration,
    left_competing: Option<Time>,
    /// Consecutive windows at which the loss history showed [`AGGRESSOR_LOSS_RATE`].
    heavy_windows: u32,
    /// Whether the latest window's base RTT is at least [`LONG_PATH_RTT`].
    long_path: bool,
    /// How long the current stay in a loss regime is held ([`LOSS_REENTRY_HOLD`]; zero after
    /// an entry that was not a quick return).
    loss_hold: Duration,
    /// When the flow last left a loss regime for one without loss.
    left_loss: Option<Time>,
    /// The flow's packet size, for the BDP in packets.
    mss: Bytes,
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier {
            regime: Regime::Clean,
            windows_in_regime: 0,
            entered: Time::ZERO,
            recent: VecDeque::with_capacity(LOSS_WINDOWS),
            standing_since: None,
            standing_floor: None,
            standing_rose: false,
            largest_bandwidth: None,
            alone_windows: 0,
            sharing_rate: None,
            sharing_recent: VecDeque::with_capacity(ALONE_WINDOWS as usize + 1),
            rise_windows: 0,
            competitor_left: false,
            hold: COMPETING_HOLD,
            left_competing: None,
            heavy_windows: 0,
            long_path: false,
            loss_hold: Duration::ZERO,
            left_loss: None,
            mss: DEFAULT_MSS,
        }
    }
}

/// The packet size a [`Classifier::default`] assumes (Ethernet's 1500-byte MTU).
pub const DEFAULT_MSS: Bytes = 1_500;

impl Classifier {
    /// A classifier for a flow of packets of `mss` bytes.
    pub fn with_mss(mss: Bytes) -> Classifier {
        Classifier {
            mss: mss.max(1),
            ..Classifier::default()
        }
    }

    /// The regime now.
    pub fn regime(&self) -> Regime {
        self.regime
    }

    /// The largest delivery rate the flow has measured.
    pub fn largest_bandwidth(&self) -> Option<Rate> {
        self.largest_bandwidth
    }

    /// How long the queue floor has stood, if it stands.
    pub fn standing_for(&self, now: Time) -> Option<Duration> {
        self.standing_since.map(|t| now.saturating_since(t))
    }

    /// Absorbs a closed window; returns the new regime when it changes.
    pub fn on_window(&mut self, w: &PathWindow) -> Option<Regime> {
        if self.recent.len() == LOSS_WINDOWS {
            self.recent.pop_front();
        }
        self.recent.push_back(*w);
        self.windows_in_regime = self.windows_in_regime.saturating_add(1);
        self.long_path = w.base >= LONG_PATH_RTT;
        if let Some(q) = w.queue_floor {
            if w.is_queue(q) {
                self.standing_since.get_or_insert(w.at);
                let (mut first, mut low, mut peak) = *self.standing_floor.get_or_insert((q, q, q));
                if w.is_queue(peak - q) {
                    // Fallen back from its highest by more than a queue: the flow drains it
                    // (Copa's window shrinking after a capacity drop), so the rise so far was
                    // the path's slower drain, not another sender's bytes. The rise is measured
                    // again from here.
                    (first, low, peak) = (q, q, q);
                }
                low = low.min(q);
                peak = peak.max(q);
                self.standing_floor = Some((first, low, peak));
                self.standing_rose = low >= first && w.is_queue(q - first);
            } else {
                self.standing_since = None;
                self.standing_floor = None;
                self.standing_rose = false;
            }
        }
        // Alone: at least ALONE_SHARE of the largest rate measured, once the rate has risen by
        // ALONE_RISE over the share for ALONE_WINDOWS windows running (the competitor left).
        let (share_ok, rose) = match (w.bandwidth, self.largest_bandwidth) {
            (Some(b), Some(top)) => (
                b.as_bps() as f64 >= ALONE_SHARE * top.as_bps() as f64,
                w.at.saturating_since(self.entered) >= TAKEOVER_SPAN
                    && self
                        .sharing_rate
                        .is_some_and(|s| b.as_bps() as f64 >= ALONE_RISE * s.as_bps() as f64),
            ),
            _ => (false, false),
        };
        self.rise_windows = if rose { self.rise_windows + 1 } else { 0 };
        if self.rise_windows >= ALONE_WINDOWS {
            self.competitor_left = true;
        }
        if !share_ok {
            self.competitor_left = false;
        }
        let alone = share_ok && self.competitor_left;
        if self.regime == Regime::Competing {
            self.sharing_recent.push_back(w.bandwidth);
            if self.sharing_recent.len() > ALONE_WINDOWS as usize {
                if let Some(b) = self.sharing_recent.pop_front().flatten() {
                    self.sharing_rate = Some(self.sharing_rate.map_or(b, |s| s.max(b)));
                }
            }
        }
        self.alone_windows = if alone { self.alone_windows + 1 } else { 0 };
        if let Some(b) = w.bandwidth {
            self.largest_bandwidth = Some(self.largest_bandwidth.map_or(b, |top| top.max(b)));
        }
        let (loss, _) = self.loss();
        self.heavy_windows = if self.recent.len() == LOSS_WINDOWS && loss >= AGGRESSOR_LOSS_RATE {
            self.heavy_windows.saturating_add(1)
        } else {
            0
        };
        let next = self.candidate(w.at);
        // The base RTT (a running minimum) only falls, so the choice between a clean and a long
        // path changes once at most and needs no dwell: a long path gets its member from the
        // first window on.
        let by_length = matches!(
            (self.regime, next),
            (Regime::Clean, Regime::LongPath) | (Regime::LongPath, Regime::Clean)
        );
        if next == self.regime || (self.windows_in_regime < MIN_DWELL_WINDOWS && !by_length) {
            return None;
        }
        self.enter(next, w.at);
        Some(next)
    }

    fn candidate(&self, now: Time) -> Regime {
        let next = self.evidence(now);
        // A quick return to a loss regime holds it: the flow does not go back to a member that
        // made the loss itself until the hold is over (moves between the loss regimes, and to
        // Competing, stay open).
        let held = self.regime.is_loss() && now.saturating_since(self.entered) < self.loss_hold;
        if held && !next.is_loss() && next != Regime::Competing {
            return self.regime;
        }
        next
    }

    /// The regime the latest windows show, before the loss regimes' re-entry hold.
    fn evidence(&self, now: Time) -> Regime {
        let (loss, low_queue) = self.loss();
        let full = self.recent.len() == LOSS_WINDOWS;
        let congestive = low_queue < RANDOM_LOSS_SHARE;
        // Persistent: losses in a quarter of the windows at least, not one burst (a
        // competitor's slow-start overshoot loses as much in a round or two).
        let lossy_windows = self.recent.iter().filter(|w| w.loss_rate > 0.0).count();
        let persistent = 4 * lossy_windows >= LOSS_WINDOWS;
        let aggressor_stays = loss >= AGGRESSOR_LOSS_RATE / 2.0;
        if self.regime == Regime::AggressiveCompetitor && full && congestive && aggressor_stays {
            return Regime::AggressiveCompetitor;
        }
        if full && congestive && persistent && loss >= AGGRESSOR_LOSS_RATE {
            // Confirmed only once the rate has held for longer than the history: a single
            // episode (a competitor's slow start overshooting) leaves it within
            // [`LOSS_WINDOWS`] windows of ending.
            if self.heavy_windows >= AGGRESSOR_CONFIRM_WINDOWS {
                return Regime::AggressiveCompetitor;
            }
        }
        if self.regime == Regime::Competing {
            let held = now.saturating_since(self.entered);
            let leave =
                (held >= self.hold && self.alone_windows >= ALONE_WINDOWS) || held >= self.hold * 2;
            if !leave {
                return Regime::Competing;
            }
            return self.without_competition(now);
        }
        // A loss-based member keeps a standing queue of its own, so the floor tells nothing
        // while one runs a long path or ACK aggregation; and it holds its share against
        // buffer-fillers anyway.
        let standing = self.standing_for(now).unwrap_or(Duration::ZERO);
        let rising = self.standing_rose && standing >= RISING_STANDING_HOLD;
        if !self.own_queue() && (standing >= STANDING_HOLD || rising) {
            return Regime::Competing;
        }
        self.without_competition(now)
    }

    fn without_competition(&self, now: Time) -> Regime {
        // Random loss first: it ends an aggregation hold, and while the loss seen so far looks
        // random (the history not yet full) the spread is not taken for aggregation.
        if self.randomly_lossy() || self.random_loss_stays() {
            return Regime::RandomLoss;
        }
        let aggregating = self.regime == Regime::AckAggregation
            && now.saturating_since(self.entered) < AGGREGATION_HOLD;
        if aggregating || (!self.random_loss_seen() && self.aggregated()) {
            Regime::AckAggregation
        } else if self.long_path {
            Regime::LongPath
        } else {
            Regime::Clean
        }
    }

    fn aggregated(&self) -> bool {
        let last: Vec<&PathWindow> = self.recent.iter().rev().take(AGGREGATION_WINDOWS).collect();
        if last.len() < AGGREGATION_WINDOWS {
            return false;
        }
        // Once CUBIC runs, its own queue raises the floor: the spread on bunched ACKs alone
        // keeps the regime, as long as one window in the history still shows it.
        let holding = self.regime == Regime::AckAggregation;
        let spread_out = last
            .iter()
            .filter(|w| {
                let limit = w
                    .base
                    .mul_f64(AGGREGATION_SPREAD_SHARE)
                    .max(AGGREGATION_SPREAD_FLOOR);
                w.bunched_share >= AGGREGATION_BUNCHED_SHARE
                    && w.spread.is_some_and(|s| {
                        s > limit
                            && w.bunch_interval
                                .is_some_and(|i| s <= i.mul_f64(AGGREGATION_SPREAD_PER_INTERVAL))
                            && (holding
                                || w.queue_floor
                                    .is_some_and(|q| !w.is_queue(q.mul_f64(0.5)) && q < s))
                    })
            })
            .count();
        if holding {
            spread_out > 0
        } else {
            2 * spread_out >= AGGREGATION_WINDOWS
        }
    }

    /// The mean loss rate over the recent windows, and the mean share of it taken at a low
    /// queue (0 without losses).
    fn loss(&self) -> (f64, f64) {
        if self.recent.is_empty() {
            return (0.0, 0.0);
        }
        let loss = self.recent.iter().map(|w| w.loss_rate).sum::<f64>() / self.recent.len() as f64;
        let shares: Vec<f64> = self
            .recent
            .iter()
            .map(|w| w.low_queue_loss_share)
            .filter(|s| s.is_finite())
            .collect();
        let low_queue = if shares.is_empty() {
            0.0
        } else {
            shares.iter().sum::<f64>() / shares.len() as f64
        };
        (loss, low_queue)
    }

    /// Whether the windows so far (the history perhaps not yet full) lose at least
    /// [`Classifier::random_loss_rate`], mostly at a low queue.
    fn random_loss_seen(&self) -> bool {
        let (loss, low_queue) = self.loss();
        loss >= self.random_loss_rate() && low_queue >= RANDOM_LOSS_SHARE
    }

    /// The random loss rate from which the random-loss member serves the path better:
    /// [`RANDOM_LOSS_RATE`], or on a long path the rate at which a loss-based window (the
    /// long-path member, CUBIC) no longer fills the path, if lower: (`MATHIS_C` / BDP in
    /// packets)², the BDP being the largest delivery rate measured times the base RTT. A clean
    /// path's member (Copa) does not respond to random loss below 1 %; CUBIC on a 600-ms path at
    /// 10 Mbit/s (500 packets) holds its rate only below 6·10⁻⁶, and at 0.5 % it got 0.9 of the
    /// 10 Mbit/s (the suite's lossy satellite).
    fn random_loss_rate(&self) -> f64 {
        let Some((base, rate)) = self
            .recent
            .back()
            .filter(|_| self.long_path)
            .zip(self.largest_bandwidth)
            .map(|(w, r)| (w.base, r))
        else {
            return RANDOM_LOSS_RATE;
        };
        let bdp_packets = rate.bytes_in(base) as f64 / self.mss as f64;
        if bdp_packets < 1.0 {
            return RANDOM_LOSS_RATE;
        }
        RANDOM_LOSS_RATE.min((MATHIS_C / bdp_packets).powi(2))
    }

    /// Whether the random-loss regime holds: the loss rate over a full history stays at
    /// [`Classifier::random_loss_rate`], wherever it was taken. Its member, BBR v1, overflows a
    /// buffer of a BDP or less by itself (its window is twice the BDP; in start-up more): on the
    /// 300-ms test path at 0.2 % random loss it lost 10-35 % of a window at the full queue now and
    /// then, so that most lost bytes no longer came at a low queue and the flow went back to
    /// CUBIC, which the random loss starves (`tests/auto.rs`). A loss-blind competitor shows as
    /// persistent loss above [`AGGRESSOR_LOSS_RATE`] at a full queue, which is tested first.
    fn random_loss_stays(&self) -> bool {
        self.regime == Regime::RandomLoss
            && self.recent.len() == LOSS_WINDOWS
            && self.loss().0 >= self.random_loss_rate()
    }

    /// [`Classifier::random_loss_seen`] over a full history, or on a long path over
    /// [`LONG_PATH_LOSS_WINDOWS`].
    fn randomly_lossy(&self) -> bool {
        let needed = if self.long_path {
            LONG_PATH_LOSS_WINDOWS
        } else {
            LOSS_WINDOWS
        };
        self.recent.len() >= needed && self.random_loss_seen()
    }

    /// Whether the regime's member keeps a standing queue of its own: CUBIC by default, and
    /// BBR v1 under random loss, whose window of twice the BDP keeps up to a BDP queued where
    /// the buffer holds it (on a 300-ms path at 0.2 % loss its start-up filled the 1-BDP buffer
    /// and the floor stood at 300 ms: the rising-floor test took it for a competitor and handed
    /// the flow to CUBIC, which random loss starves; `tests/auto.rs`). A competitor that fills
    /// the buffer shows there as loss at a full queue, which ends the random-loss regime.
    fn own_queue(&self) -> bool {
        matches!(
            self.regime,
            Regime::Competing | Regime::LongPath | Regime::AckAggregation | Regime::RandomLoss
        )
    }

    fn enter(&mut self, next: Regime, now: Time) {
        if next.is_loss() && !self.regime.is_loss() {
            let quick = self
                .left_loss
                .is_some_and(|t| now.saturating_since(t) < REENTRY_MEMORY);
            self.loss_hold = if !quick {
                Duration::ZERO
            } else if self.loss_hold == Duration::ZERO {
                LOSS_REENTRY_HOLD
            } else {
                (self.loss_hold * 2).min(MAX_COMPETING_HOLD)
            };
        } else if self.regime.is_loss() && !next.is_loss() {
            self.left_loss = Some(now);
        }
        if next == Regime::Competing {
            if self
                .left_competing
                .is_some_and(|t| now.saturating_since(t) < REENTRY_MEMORY)
            {
                self.hold = (self.hold * 2).min(MAX_COMPETING_HOLD);
            }
        } else if self.regime == Regime::Competing {
            self.left_competing = Some(now);
        }
        if self.own_queue() {
            // The loss-based controller's own queue is not evidence of a competitor.
            self.standing_since = None;
            self.standing_floor = None;
            self.standing_rose = false;
        }
        self.regime = next;
        self.entered = now;
        self.windows_in_regime = 0;
        self.alone_windows = 0;
        self.sharing_rate = None;
        self.sharing_recent.clear();
        self.rise_windows = 0;
        self.competitor_left = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_millis(40);

    /// A window closing at `t_ms` with queue floor `floor_ms`, spread `spread_ms`, loss rate
    /// `loss` (all of it at a low queue when `random`) and bandwidth `mbps`.
    fn window(
        t_ms: u64,
        floor_ms: u64,
        spread_ms: u64,
        loss: f64,
        random: bool,
        mbps: u64,
    ) -> PathWindow {
        PathWindow {
            at: Time::ZERO + Duration::from_millis(t_ms),
            base: BASE,
            queue_floor: Some(Duration::from_millis(floor_ms)),
            spread: Some(Duration::from_millis(spread_ms)),
            loss_rate: loss,
            low_queue_loss_share: if loss > 0.0 {
                if random {
                    1.0
                } else {
                    0.0
                }
            } else {
                f64::NAN
            },
            bandwidth: Some(Rate::from_mbps(mbps)),
            // Bunched ACKs throughout, bunches as far apart as the spread: the spread decides
            // (tests of decimated ACKs set 0, of slotted delivery a short interval).
            bunched_share: 1.0,
            bunch_interval: Some(Duration::from_millis(spread_ms)),
        }
    }

    /// Feeds windows 40 ms apart from `t0_ms` for `secs`, built by `f(t_ms)`; returns the
    /// changes with their times.
    fn feed(
        c: &mut Classifier,
        t0_ms: u64,
        secs: u64,
        f: impl Fn(u64) -> PathWindow,
    ) -> Vec<(u64, Regime)> {
        let mut out = vec![];
        for k in 0..secs * 25 {
            let t = t0_ms + 40 * k;
            if let Some(r) = c.on_window(&f(t)) {
                out.push((t, r));
            }
        }
        out
    }

    #[test]
    fn a_clean_path_stays_clean_through_its_own_probes() {
        let mut c = Classifier::default();
        // A BBR-like flow: a queue of 12 ms in one window of eight, then drained.
        let changes = feed(&mut c, 0, 30, |t| {
            window(t, if (t / 40) % 8 == 0 { 12 } else { 1 }, 5, 0.0, false, 20)
        });
        assert_eq!(changes, vec![]);
        assert_eq!(c.regime(), Regime::Clean);
    }

    #[test]
    fn a_queue_that_never_drains_for_three_seconds_is_a_competitor() {
        let mut c = Classifier::default();
        feed(&mut c, 0, 2, |t| window(t, 1, 5, 0.0, false, 20));
        // From 2 s a competitor keeps 30 ms queued (above the 10 ms limit on a 40 ms path).
        let changes = feed(&mut c, 2_000, 10, |t| window(t, 30, 5, 0.0, false, 10));
        assert_eq!(changes.len(), 1, "{changes:?}");
        let (t, r) = changes[0];
        assert_eq!(r, Regime::Competing);
        assert!((5_000..5_200).contains(&t), "entered at {t} ms");
    }

    #[test]
    fn a_standing_floor_that_keeps_rising_is_a_competitor_sooner() {
        // From 1 s two CUBIC flows fill a deep buffer: the floor rises 2 ms a window (40 ms)
        // from 20 ms, never coming back down.
        let mut c = Classifier::default();
        feed(&mut c, 0, 1, |t| window(t, 1, 5, 0.0, false, 10));
        let changes = feed(&mut c, 1_000, 3, |t| {
            window(t, 20 + (t - 1_000) / 20, 5, 0.0, false, 1)
        });
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].1, Regime::Competing);
        assert!((2_500..2_700).contains(&changes[0].0), "{changes:?}");
        // A floor that rises as fast after a capacity drop but falls back below where it began
        // within the second (the flow drains it) is not, nor one that stands without rising.
        let mut c = Classifier::default();
        feed(&mut c, 0, 1, |t| window(t, 1, 5, 0.0, false, 10));
        let drop = feed(&mut c, 1_000, 3, |t| {
            let since = t - 1_000;
            let floor = if since < 600 { 20 + since / 10 } else { 18 };
            window(t, floor, 5, 0.0, false, 2)
        });
        assert_eq!(drop, vec![]);
        // Nor one that a capacity drop raises from 20 to 400 ms within 0.6 s and the flow then
        // drains, 10 ms a window, to 40 ms, never below where it began (the suite's 3G trace:
        // 27 → 412 → 265 ms, taken for a competitor at 7.6 s before the drain counted).
        let mut c = Classifier::default();
        feed(&mut c, 0, 1, |t| window(t, 1, 5, 0.0, false, 10));
        let drained = feed(&mut c, 1_000, 2, |t| {
            let since = t - 1_000;
            let floor = if since < 600 {
                20 + since * 380 / 600
            } else {
                400u64.saturating_sub((since - 600) / 4).max(40)
            };
            window(t, floor, 5, 0.0, false, 2)
        });
        assert_eq!(drained, vec![]);
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 2, |t| window(
                t,
                20 + (t / 40) % 3,
                5,
                0.0,
                false,
                10
            )),
            vec![]
        );
    }

    #[test]
    fn a_share_above_the_rate_measured_in_a_shared_start_up_is_not_the_link_alone() {
        let mut c = Classifier::default();
        // A start-up shared with the competitors measures 10 Mbit/s; CUBIC then holds 14.
        feed(&mut c, 0, 1, |t| window(t, 1, 5, 0.0, false, 10));
        let changes = feed(&mut c, 1_000, 19, |t| {
            window(t, 30, 5, 0.0, false, if t < 5_000 { 1 } else { 14 })
        });
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].1, Regime::Competing);
        // The competitor leaves: 28 Mbit/s, twice the share, ends the regime after the hold.
        let entered = changes[0].0;
        let left = feed(&mut c, 20_000, 1, |t| window(t, 30, 5, 0.0, false, 28));
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(left[0].1, Regime::Clean);
        assert!(
            left[0].0 < entered + 2 * COMPETING_HOLD.as_millis_f64() as u64,
            "{left:?}"
        );
    }

    #[test]
    fn competing_ends_once_the_flow_has_the_link_alone_and_a_quick_return_doubles_the_hold() {
        let mut c = Classifier::default();
        feed(&mut c, 0, 2, |t| window(t, 1, 5, 0.0, false, 20));
        let entered = feed(&mut c, 2_000, 4, |t| window(t, 30, 5, 0.0, false, 10));
        assert_eq!(entered.len(), 1, "{entered:?}");
        let (entered, r) = entered[0];
        assert_eq!(r, Regime::Competing);
        // The competitor leaves at 9 s: the flow's own (loss-based) queue stays, but it now
        // delivers the full 20 Mbit/s. It leaves once the 10-s hold is over.
        let changes = feed(&mut c, 6_000, 11, |t| {
            window(t, 30, 5, 0.0, false, if t < 9_000 { 10 } else { 20 })
        });
        assert_eq!(changes.len(), 1, "{changes:?}");
        let (t, r) = changes[0];
        assert_eq!(r, Regime::Clean);
        assert!(
            t >= entered + 10_000 && t < entered + 10_500,
            "left at {t} ms"
        );
        // A competitor comes back at once: Competing again after three seconds, with a 20-s
        // hold.
        let back = feed(&mut c, 17_000, 42, |t| window(t, 30, 5, 0.0, false, 10));
        assert_eq!(back.len(), 2, "{back:?}");
        assert_eq!(back[0].1, Regime::Competing);
        // Still sharing, it looks again only after twice the hold, 40 s later.
        assert_eq!(back[1].1, Regime::Clean);
        assert!(back[1].0 - back[0].0 >= 40_000, "{back:?}");
    }

    #[test]
    fn loss_without_a_queue_is_random_and_loss_at_a_full_queue_is_not() {
        let mut c = Classifier::default();
        let changes = feed(&mut c, 0, 5, |t| window(t, 1, 5, 0.02, true, 20));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::RandomLoss));
        let mut c = Classifier::default();
        // 1.5 % at a full queue: congestion, below what only a loss-blind competitor causes.
        let changes = feed(&mut c, 0, 5, |t| window(t, 1, 5, 0.015, false, 20));
        assert_eq!(changes, vec![]);
        // Below 1 % the flow stays with the clean path's controller.
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 5, |t| window(t, 1, 5, 0.005, true, 20)),
            vec![]
        );
    }

    #[test]
    fn heavy_loss_at_a_full_queue_is_an_aggressive_competitor_until_it_falls_below_half() {
        let mut c = Classifier::default();
        // 3 % lost at a full queue (the floor at 12 ms, short of six seconds standing).
        let changes = feed(&mut c, 0, 3, |t| window(t, 12, 5, 0.03, false, 6));
        assert_eq!(
            changes.first().map(|c| c.1),
            Some(Regime::AggressiveCompetitor)
        );
        // 1.5 % keeps it; 0.5 % ends it.
        assert_eq!(
            feed(&mut c, 3_000, 3, |t| window(t, 12, 5, 0.015, false, 9)),
            vec![]
        );
        let changes = feed(&mut c, 6_000, 3, |t| window(t, 1, 5, 0.005, false, 18));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::Clean));
        // One burst of 40 % in a window (a competitor's slow-start overshoot) is not persistent.
        let mut c = Classifier::default();
        let burst = feed(&mut c, 0, 3, |t| {
            window(t, 12, 5, if t == 400 { 0.4 } else { 0.0 }, false, 10)
        });
        assert_eq!(burst, vec![]);
        // Against a loss-based competitor (0.3 % at the queue, the floor between its drains)
        // nothing of the kind.
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 5, |t| window(t, 1, 5, 0.003, false, 10)),
            vec![]
        );
    }

    #[test]
    fn a_quick_return_to_a_loss_regime_is_held_and_each_further_one_twice_as_long() {
        let mut c = Classifier::default();
        // The clean member loses 3 % at a full queue; the loss-insensitive member, once it
        // runs, nothing.
        let lossy = |t| window(t, 12, 5, 0.03, false, 4);
        let quiet = |t| window(t, 1, 5, 0.0, false, 4);
        let mut changes = vec![];
        let mut t = 0;
        while t < 60_000 {
            let lose = !c.regime().is_loss();
            let w = if lose { lossy(t) } else { quiet(t) };
            if let Some(r) = c.on_window(&w) {
                changes.push((t, r));
            }
            t += 40;
        }
        let entries: Vec<u64> = changes
            .iter()
            .filter(|c| c.1 == Regime::AggressiveCompetitor)
            .map(|c| c.0)
            .collect();
        let exits: Vec<u64> = changes
            .iter()
            .filter(|c| c.1 == Regime::Clean)
            .map(|c| c.0)
            .collect();
        // The first stay ends with the loss (the history of 16 windows); the first return is
        // held 10 s, the second 20 s. Before the hold: a return every 1.8 s.
        assert!(exits[0] - entries[0] < 1_000, "{changes:?}");
        assert!(exits[1] - entries[1] >= 10_000, "{changes:?}");
        assert!(exits[1] - entries[1] < 11_000, "{changes:?}");
        assert!(exits[2] - entries[2] >= 20_000, "{changes:?}");
        // The third return (at 36 s) is held 40 s, past the end.
        assert_eq!(changes.len(), 7, "{changes:?}");
        // A return after the memory (30 s) is not held.
        let mut c = Classifier::default();
        let mut back = vec![];
        for (t0, secs, lose) in [(0, 3, true), (3_000, 35, false), (38_000, 3, true)] {
            back.extend(feed(&mut c, t0, secs, |t| {
                if lose {
                    lossy(t)
                } else {
                    quiet(t)
                }
            }));
        }
        assert_eq!(c.loss_hold, Duration::ZERO, "{back:?} {:?}", c.loss_hold);
    }

    #[test]
    fn a_long_path_gets_its_member_at_once_and_its_own_queue_is_no_competitor() {
        let mut c = Classifier::default();
        // 600 ms of base RTT; CUBIC keeps 200 ms queued for 20 s.
        let changes = feed(&mut c, 0, 20, |t| PathWindow {
            base: Duration::from_millis(600),
            ..window(t, 200, 5, 0.0, false, 20)
        });
        assert_eq!(changes, vec![(0, Regime::LongPath)]);
        // Random loss still goes to its member.
        let changes = feed(&mut c, 20_000, 2, |t| PathWindow {
            base: Duration::from_millis(600),
            ..window(t, 1, 5, 0.03, true, 20)
        });
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::RandomLoss));
        // At 50 ms the path is clean.
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 2, |t| PathWindow {
                base: Duration::from_millis(50),
                ..window(t, 1, 5, 0.0, false, 20)
            }),
            vec![]
        );
    }

    #[test]
    fn on_a_long_path_random_loss_counts_from_where_a_loss_based_window_no_longer_fills_it() {
        // 600 ms at 10 Mbit/s: 500 packets of 1500 bytes, (1.22 / 500)² = 6·10⁻⁶.
        let long = |t, loss, random| PathWindow {
            base: Duration::from_millis(600),
            ..window(t, 1, 5, loss, random, 10)
        };
        let mut c = Classifier::default();
        let changes = feed(&mut c, 0, 2, |t| long(t, 0.0, false));
        assert_eq!(changes, vec![(0, Regime::LongPath)]);
        let changes = feed(&mut c, 2_000, 2, |t| long(t, 0.005, true));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::RandomLoss));
        // BBR v1 then overflows the buffer by itself: its loss at a full queue keeps the regime
        // while the rate stays at the threshold, and ends it when the loss stops.
        assert_eq!(feed(&mut c, 4_000, 2, |t| long(t, 0.005, false)), vec![]);
        let changes = feed(&mut c, 6_000, 2, |t| long(t, 0.0, false));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::LongPath));
        // On a 40-ms path the same 0.5 % stays below the 1 % threshold (Copa, the clean path's
        // member, does not respond to it).
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 4, |t| window(t, 1, 5, 0.005, true, 10)),
            vec![]
        );
    }

    #[test]
    fn aggregation_under_a_standing_floor_below_the_spread_counts_and_is_held() {
        let mut c = Classifier::default();
        // A 20 ms path whose ACKs come in 10-ms batches, Copa holding 7 ms queued (above the
        // 5 ms low-queue limit, below twice it) while the spread is 12 ms.
        let base = Duration::from_millis(20);
        let changes = feed(&mut c, 0, 1, |t| PathWindow {
            base,
            ..window(t, 7, 12, 0.0, false, 48)
        });
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::AckAggregation));
        let (entered, _) = changes[0];
        // CUBIC's own queue (15 ms) and a spread at the interval (9 ms) hide it; the regime holds
        // for 10 s, then ends.
        let changes = feed(&mut c, 1_000, 12, |t| PathWindow {
            base,
            ..window(t, 15, 9, 0.0, false, 48)
        });
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_ne!(changes[0].1, Regime::AckAggregation);
        assert!(changes[0].0 >= entered + 10_000, "{changes:?}");
        // A floor of 12 ms on that path (above twice the limit) is a queue, not aggregation.
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 1, |t| PathWindow {
                base,
                ..window(t, 12, 14, 0.0, false, 48)
            }),
            vec![]
        );
    }

    #[test]
    fn delay_that_comes_and_goes_within_a_round_trip_is_ack_aggregation() {
        let mut c = Classifier::default();
        // ±35 ms of spread on a 40 ms path, the floor at the base RTT.
        let changes = feed(&mut c, 0, 5, |t| window(t, 1, 70, 0.0, false, 20));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::AckAggregation));
        // 15 ms of spread on a 40 ms path is below half the base RTT: not aggregation.
        let mut c = Classifier::default();
        assert_eq!(
            feed(&mut c, 0, 5, |t| window(t, 1, 15, 0.0, false, 20)),
            vec![]
        );
    }

    #[test]
    fn random_loss_takes_precedence_over_the_aggregation_spread() {
        // 3 % lost at a low queue while the spread (70 ms on a 40 ms path, on bunched ACKs)
        // looks like aggregation: BBR v1, not CUBIC.
        let mut c = Classifier::default();
        let changes = feed(&mut c, 0, 5, |t| window(t, 1, 70, 0.03, true, 20));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::RandomLoss));
        assert!(
            changes.iter().all(|c| c.1 != Regime::AckAggregation),
            "{changes:?}"
        );
        // Random loss that starts inside an aggregation hold ends it within the loss history
        // (16 windows), not after the 10-s hold.
        let mut c = Classifier::default();
        let entered = feed(&mut c, 0, 1, |t| window(t, 1, 70, 0.0, false, 20));
        assert_eq!(entered.first().map(|c| c.1), Some(Regime::AckAggregation));
        let changes = feed(&mut c, 1_000, 2, |t| window(t, 1, 70, 0.03, true, 20));
        assert_eq!(changes.first().map(|c| c.1), Some(Regime::RandomLoss));
        assert!(changes[0].0 <= 1_000 + 16 * 40, "{changes:?}");
    }

    #[test]
    fn spread_on_evenly_spaced_acks_is_no_aggregation() {
        // An ACK per 10 packets or 25 ms: the samples spread as much as under aggregation (the
        // oldest packet of each ACK waited for the others), the ACKs do not come bunched.
        let mut c = Classifier::default();
        let decimated = |t| PathWindow {
            bunched_share: 0.0,
            ..window(t, 1, 70, 0.0, false, 20)
        };
        assert_eq!(feed(&mut c, 0, 5, decimated), vec![]);
        // A few bunched ACKs (a quarter of the bytes: two ACKs read in one batch) do not
        // either.
        let mut c = Classifier::default();
        let some = |t| PathWindow {
            bunched_share: 0.25,
            ..window(t, 1, 70, 0.0, false, 20)
        };
        assert_eq!(feed(&mut c, 0, 5, some), vec![]);
        // Once in the regime, the spread keeps it only on bunched ACKs: decimated ones after the
        // hold end it.
        let mut c = Classifier::default();
        let entered = feed(&mut c, 0, 1, |t| window(t, 1, 70, 0.0, false, 20));
        assert_eq!(entered.first().map(|c| c.1), Some(Regime::AckAggregation));
        let changes = feed(&mut c, 1_000, 12, decimated);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].1, Regime::Clean);
        assert!(changes[0].0 < entered[0].0 + 10_500, "{changes:?}");
    }

    #[test]
    fn spread_on_acks_bunched_in_millisecond_slots_is_no_aggregation() {
        // A cellular link delivers in slots: ACKs bunched (0.7 of the bytes) 1.5 ms apart, and
        // capacity dips spread the samples by 70 ms on a 40 ms path. The spread is a queue
        // building and draining, far more than the link's hold.
        let slotted = |t| PathWindow {
            bunched_share: 0.7,
            bunch_interval: Some(Duration::from_micros(1_500)),
            ..window(t, 1, 70, 0.0, false, 20)
        };
        let mut c = Classifier::default();
        assert_eq!(feed(&mut c, 0, 5, slotted), vec![]);
        // The same spread on bunches 35 ms apart (twice the interval: the most aggregation
        // explains) is aggregation; 34 ms apart is not.
        for (interval_ms, aggregation) in [(35, true), (34, false)] {
            let mut c = Classifier::default();
            let changes = feed(&mut c, 0, 5, |t| PathWindow {
                bunch_interval: Some(Duration::from_millis(interval_ms)),
                ..window(t, 1, 70, 0.0, false, 20)
            });
            assert_eq!(
                changes.first().map(|c| c.1) == Some(Regime::AckAggregation),
                aggregation,
                "{interval_ms} ms: {changes:?}"
            );
        }
    }
}
