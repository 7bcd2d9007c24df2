//! BBR's pacing rate: the bandwidth estimate times the pacing gain, less a margin, and before
//! the first RTT sample the initial window over 1 ms at the startup gain (Linux
//! `bbr_init_pacing_rate_from_rtt`, `bbr_set_pacing_rate`).

use crate::estimators::rtt::RttSnapshot;
use crate::units::{Bytes, Duration, Rate};

/// Linux `bbr_pacing_margin_percent`: pace about 1 % below the estimated bandwidth.
pub const PACING_MARGIN: f64 = 0.01;

/// The pacing rate for `bw` and `gain`, less the pacing margin; never zero.
#[inline]
pub(crate) fn pacing_for(bw: Rate, gain: f64) -> Rate {
    Rate(bw.mul_f64(gain * (1.0 - PACING_MARGIN)).as_bps().max(1))
}

/// Linux `bbr_init_pacing_rate_from_rtt`: the RTT assumed before the first sample (`USEC_PER_MSEC`).
const RTT_BEFORE_SAMPLES: Duration = Duration::from_millis(1);

/// The pacing rate and whether an RTT sample has set it yet.
#[derive(Clone, Debug)]
pub(crate) struct Pacing {
    rate: Rate,
    /// Linux `bbr->has_seen_rtt`.
    has_seen_rtt: bool,
}

impl Pacing {
    /// Linux `bbr_init`: the window over 1 ms at the startup gain.
    pub fn new(cwnd: Bytes, startup_gain: f64) -> Self {
        let mut p = Pacing {
            rate: Rate(1),
            has_seen_rtt: false,
        };
        p.init_from_rtt(cwnd, None, startup_gain);
        p
    }

    /// The rate as set (at least 1 bit/s).
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// An RTT sample (or a hand-over's estimate) has set the rate (Linux `bbr->has_seen_rtt`).
    pub fn has_seen_rtt(&self) -> bool {
        self.has_seen_rtt
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: startup gain · cwnd / srtt, with 1 ms before any RTT
    /// sample.
    pub fn init_from_rtt(&mut self, cwnd: Bytes, srtt: Option<Duration>, startup_gain: f64) {
        let rtt = srtt.unwrap_or(RTT_BEFORE_SAMPLES).max(Duration(1));
        self.has_seen_rtt = srtt.is_some();
        let bw = Rate::from_bytes_over(cwnd, rtt);
        self.rate = pacing_for(bw, startup_gain);
    }

    /// Linux `bbr_set_pacing_rate`, per ACK: the first RTT sample re-initialises the rate from
    /// `cwnd`; then the rate follows `bw` · `gain`, and before the pipe is full it never decreases.
    pub fn update(
        &mut self,
        rtt: &RttSnapshot,
        cwnd: Bytes,
        startup_gain: f64,
        bw: Rate,
        gain: f64,
        full_bw_reached: bool,
    ) {
        if !self.has_seen_rtt && rtt.has_sample {
            self.init_from_rtt(cwnd, Some(rtt.smoothed), startup_gain);
        }
        if bw == Rate::ZERO {
            return;
        }
        let rate = pacing_for(bw, gain);
        if full_bw_reached || rate > self.rate {
            self.rate = rate;
        }
    }

    /// Paces at `bw` · `gain` now (restart from idle).
    pub fn set(&mut self, bw: Rate, gain: f64) {
        self.rate = pacing_for(bw, gain);
    }

    /// A hand-over's bandwidth estimate (its predecessor measured RTTs): pace at it, gain 1.
    pub fn adopt(&mut self, bw: Rate) {
        self.set(bw, 1.0);
        self.has_seen_rtt = true;
    }

    /// A rate written from outside, as is (recomputed from the model on the next ACK).
    pub fn calibrate(&mut self, rate: Rate) {
        self.rate = Rate(rate.as_bps().max(1));
    }
}
