//! PIBES's share FSM (§III-B, Fig. 4): the proportion s_k of the estimated capacity the sender
//! targets, updated once per encoded frame from the competing-flow flag c and the trend of the
//! per-frame average RTT.

use std::cmp::Ordering;

/// §IV: FSM parameters used in all of the paper's experiments.
pub const S_MAX: f64 = 0.95;
pub const DELTA: f64 = 0.05;
pub const S_SHARE: f64 = 0.8;
pub const S_MIN: f64 = 0.5;
pub const DELTA_PLUS: f64 = 0.01;
pub const DELTA_MINUS: f64 = 0.05;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareParams {
    pub s_max: f64,
    pub delta: f64,
    pub s_share: f64,
    pub s_min: f64,
    pub delta_plus: f64,
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
pub enum Mode {
    /// c = 0: climb by Δ per frame to s_max.
    Alone,
    /// c = 1: drop to s_share on entry, then −Δ− per frame while the RTT grows (down to s_min)
    /// and +Δ+ per frame while it falls (back up to s_share).
    Competing,
}

#[derive(Clone, Copy, Debug)]
pub struct ShareFsm {
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

    pub fn share(&self) -> f64 {
        self.s
    }
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
