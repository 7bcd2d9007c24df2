//! PIBES's share FSM (§III-B, Fig. 4): the proportion s_k of the estimated capacity the sender
//! targets, updated once per encoded frame from the competing-flow flag c and the trend of the
//! per-frame average RTT.

use std::cmp::Ordering;

/// §IV: FSM parameters used in all of the paper's experiments. s_max: the share when alone
/// (s_0, and the ceiling of the climb).
pub const S_MAX: f64 = 0.95;
/// §IV Δ: the share's climb per frame while alone.
pub const DELTA: f64 = 0.05;
/// §IV s_share: the share on detecting a competing flow, and the ceiling while competing.
pub const S_SHARE: f64 = 0.8;
/// §IV s_min: the floor while competing.
pub const S_MIN: f64 = 0.5;
/// §IV Δ+: the climb per frame while competing and the per-frame RTT falls.
pub const DELTA_PLUS: f64 = 0.01;
/// §IV Δ−: the drop per frame while competing and the per-frame RTT grows.
pub const DELTA_MINUS: f64 = 0.05;

/// The share FSM's parameters (§III-B, Fig. 4), all fractions of the estimated capacity; the
/// defaults are the paper's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareParams {
    /// s_max, as [`S_MAX`].
    pub s_max: f64,
    /// Δ, as [`DELTA`].
    pub delta: f64,
    /// s_share, as [`S_SHARE`].
    pub s_share: f64,
    /// s_min, as [`S_MIN`].
    pub s_min: f64,
    /// Δ+, as [`DELTA_PLUS`].
    pub delta_plus: f64,
    /// Δ−, as [`DELTA_MINUS`].
    pub delta_minus: f64,
}

impl Default for ShareParams {
    fn default() -> Self {
        ShareParams {
            s_max: S_MAX,
            delta: DELTA,
            s_share: S_SHARE,
            s_min: S_MIN,
            delta_plus: DELTA_PLUS,
            delta_minus: DELTA_MINUS,
        }
    }
}

/// The FSM's two modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// c = 0: climb by Δ per frame to s_max.
    Alone,
    /// c = 1: drop to s_share on entry, then −Δ− per frame while the RTT grows (down to s_min)
    /// and +Δ+ per frame while it falls (back up to s_share).
    Competing,
}

/// The share s_k and the FSM's mode.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShareFsm {
    pub params: ShareParams,
    s: f64,
    mode: Mode,
}

impl ShareFsm {
    /// s_0 = s_max (§III-B).
    pub fn new(params: ShareParams) -> Self {
        ShareFsm {
            params,
            s: params.s_max,
            mode: Mode::Alone,
        }
    }

    /// The current share s_k.
    pub fn share(&self) -> f64 {
        self.s
    }
    /// Whether the last step saw a competing flow.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// One frame: `competing` is c, `rtt_trend` the order of rtt_k against rtt_{k−1} when a
    /// new per-frame RTT is known (`None`: no new evidence, hold). Returns s_k.
    pub fn step(&mut self, competing: bool, rtt_trend: Option<Ordering>) -> f64 {
        let p = self.params;
        if competing {
            if self.mode == Mode::Alone {
                self.mode = Mode::Competing;
                self.s = self.s.min(p.s_share);
            } else {
                match rtt_trend {
                    Some(Ordering::Greater) => self.s = (self.s - p.delta_minus).max(p.s_min),
                    Some(Ordering::Less) if self.s < p.s_share => {
                        self.s = (self.s + p.delta_plus).min(p.s_share)
                    }
                    _ => {}
                }
            }
        } else {
            self.mode = Mode::Alone;
            self.s = (self.s + p.delta).min(p.s_max);
        }
        self.s
    }
}
