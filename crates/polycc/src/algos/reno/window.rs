//! The window a Reno-family controller moves, with its threshold, bounds and recovery period.

use super::{Prr, RecoveryPeriod};
use crate::cc::{CcContext, Telemetry, MIN_WINDOW_PACKETS};
use crate::units::{Bytes, Duration};

/// RFC 9002 §7.3.2 kLossReductionFactor; Linux `tcp_reno_ssthresh` halves the same way.
pub(crate) const RENO_BETA: f64 = 0.5;

/// A duration for telemetry, in milliseconds; NaN (recorded as empty) when there is none.
pub(crate) fn millis_or_nan(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_millis_f64())
}

/// Window, threshold and bounds in bytes, and the recovery period that gates their changes.
#[derive(Clone, Debug)]
pub(crate) struct RenoWindow {
    /// The unit of the window arithmetic; at least 1.
    pub(crate) mss: Bytes,
    pub(crate) cwnd: Bytes,
    /// `Bytes::MAX` until the first congestion event (or a policy) sets it.
    pub(crate) ssthresh: Bytes,
    pub(crate) recovery: RecoveryPeriod,
    /// A policy's bound (`Calibration::cwnd_clamp`).
    pub(crate) clamp: Option<Bytes>,
    /// The controller's own bound, as Linux's `snd_cwnd_clamp`; `Bytes::MAX` unless it has one.
    max_cwnd: Bytes,
    /// `Some` when the window follows proportional rate reduction in recovery (`prr.rs`):
    /// the accounting of the reduction in progress (or of the last one).
    prr: Option<Prr>,
}

impl RenoWindow {
    /// The context's initial window, never below the minimum one.
    pub(crate) fn new(ctx: &CcContext) -> Self {
        let mss = ctx.mss.max(1);
        RenoWindow {
            mss,
            cwnd: ctx.initial_cwnd.max(MIN_WINDOW_PACKETS * mss),
            ssthresh: Bytes::MAX,
            recovery: RecoveryPeriod::default(),
            clamp: None,
            max_cwnd: Bytes::MAX,
            prr: None,
        }
    }

    /// The window follows proportional rate reduction in recovery (Linux), instead of dropping
    /// to ssthresh at once (RFC 9002).
    pub(crate) fn with_prr(self) -> Self {
        RenoWindow {
            prr: Some(Prr::default()),
            ..self
        }
    }

    /// A reduction began from `prior_cwnd` with `pipe` bytes in flight; with PRR the window is
    /// now `pipe` plus the fast retransmit, otherwise it stays (at ssthresh).
    pub(crate) fn prr_begin(&mut self, prior_cwnd: Bytes, pipe: Bytes) {
        if self.prr.is_some() {
            let (prr, cwnd) = Prr::begin(prior_cwnd, pipe, self.mss);
            self.prr = Some(prr);
            self.cwnd = cwnd;
        }
    }

    /// A packet left during recovery.
    pub(crate) fn prr_on_sent(&mut self, bytes: Bytes) {
        if let Some(p) = self.prr.as_mut().filter(|_| self.recovery.is_active()) {
            p.on_sent(bytes);
        }
    }

    /// A loss that belongs to the reduction in progress.
    pub(crate) fn prr_on_loss(&mut self) {
        if let Some(p) = self.prr.as_mut() {
            p.on_loss();
        }
    }

    /// An ACK during recovery delivered `delivered` bytes and left `pipe` in flight.
    pub(crate) fn prr_on_ack(&mut self, delivered: Bytes, pipe: Bytes) {
        let (ssthresh, mss) = (self.ssthresh, self.mss);
        if let Some(w) = self
            .prr
            .as_mut()
            .and_then(|p| p.on_ack(delivered, pipe, ssthresh, mss))
        {
            self.cwnd = w.max(self.min_window());
        }
    }

    /// Recovery is over: with PRR the window is set to ssthresh (`tcp_end_cwnd_reduction`).
    pub(crate) fn prr_end(&mut self) {
        if self.prr.is_some() {
            self.cwnd = self.ssthresh;
        }
    }

    /// Bounds the window at `max_cwnd` bytes, whatever a policy writes.
    pub(crate) fn with_max_cwnd(self, max_cwnd: Bytes) -> Self {
        RenoWindow { max_cwnd, ..self }
    }

    /// RFC 9002 §7.2 kMinimumWindow.
    pub(crate) fn min_window(&self) -> Bytes {
        MIN_WINDOW_PACKETS * self.mss
    }

    pub(crate) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Applies the controller's and the policy's bounds, then the minimum window (which wins).
    pub(crate) fn apply_clamp(&mut self) {
        self.cwnd = self.cwnd.min(self.max_cwnd);
        if let Some(c) = self.clamp {
            self.cwnd = self.cwnd.min(c.max(self.min_window()));
        }
        self.cwnd = self.cwnd.max(self.min_window());
    }

    /// Linux `tcp_slow_start`: one byte per byte acknowledged, not past ssthresh.
    pub(crate) fn slow_start(&mut self, acked: Bytes) {
        self.cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
    }

    /// RFC 9002 §7.3.1: one byte per byte acknowledged; the ACK that crosses ssthresh keeps all
    /// of its growth.
    pub(crate) fn slow_start_uncapped(&mut self, acked: Bytes) {
        self.cwnd = self.cwnd.saturating_add(acked);
    }

    /// Multiplicative decrease keeping `beta` of the window: ssthresh = cwnd·beta (at least the
    /// minimum window), and the window drops to it.
    pub(crate) fn reduce(&mut self, beta: f64) {
        self.ssthresh = ((self.cwnd as f64 * beta) as Bytes).max(self.min_window());
        self.cwnd = self.ssthresh;
    }

    /// Persistent congestion (RFC 9002 §7.6.2): the minimum window, out of recovery; slow start
    /// then climbs back to the threshold.
    pub(crate) fn collapse(&mut self) {
        self.cwnd = self.min_window();
        self.recovery.reset();
    }

    /// The state name and `ssthresh_bytes` (NaN while unset); controllers push their own values
    /// after these.
    pub(crate) fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(if self.recovery.is_active() {
            "recovery"
        } else if self.in_slow_start() {
            "slow_start"
        } else {
            "congestion_avoidance"
        });
        let ssthresh = if self.ssthresh == Bytes::MAX {
            f64::NAN
        } else {
            self.ssthresh as f64
        };
        t.push("ssthresh_bytes", ssthresh);
        t
    }
}
