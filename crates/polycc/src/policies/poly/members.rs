//! The CCA pool of one flow (§2 "Congestion Controller Agent"): every member sees every event and
//! keeps its own state; this file reads each member's value in the fused quantity and writes the
//! fused value back.
//!
//! Conversions between a window and a rate use the transport's smoothed RTT (RFC 9002 §5.3;
//! 333 ms before the first sample, §6.2.2), as the paper's "pacing rate ∝ cwnd / RTT":
//! - a member that gives a window only (no pacing rate: CUBIC, Vegas, NewReno…) has the rate
//!   cwnd / srtt, and a fused rate r is written to it as the window r·srtt;
//! - every controller of this crate gives a window (the trait requires one); a rate-based one
//!   derives it from its rate (PCC: rate·srtt·2), so window fusion reads that window, and a
//!   fused window written to it becomes its rate through its own `calibrate` (PCC: cwnd / srtt).

use crate::cc::{Calibration, CongestionControl};
use crate::signals::AckEvent;
use crate::units::{Bytes, Duration, Rate, Time};

/// What the fusion function combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Congestion windows, bytes.
    Cwnd,
    /// Pacing rates, bit/s.
    Rate,
}

impl Quantity {
    /// The scenario spelling (`on = "cwnd"` / `"rate"`), as Python fusions receive it.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Cwnd => "cwnd",
            Quantity::Rate => "rate",
        }
    }
}

/// One CCA of the pool.
pub struct Member {
    /// Registry name, for rules and errors.
    pub name: String,
    /// The member's controller; it sees every event of the flow and keeps its own state.
    pub cc: Box<dyn CongestionControl>,
    /// The member's own window as of the last fusion, before the write-back (the telemetry shows
    /// what each member wanted, not the value it was given). Read at every window fusion, and at
    /// a rate fusion for a member without a pacing rate (its rate is derived from it).
    pub own_cwnd: Bytes,
    /// The member's own rate as of the last rate fusion, before the write-back.
    pub own_rate: Rate,
    /// Whether `own_rate` is the member's pacing rate (else its window over srtt).
    paced: bool,
    /// The last value written (bytes or bit/s, in the member's currency) and the member's own
    /// value right after that write. A member whose calibration does not take a value as given
    /// (BBR v3 caps a written window at its inflight bounds) would otherwise be written the same
    /// value on every event and settle where it was.
    last_write: Option<(u64, u64)>,
}

impl Member {
    /// A member running `cc` under its registry name `name`. A member without a pacing rate
    /// has its initial rate derived with `srtt` (the agent passes RFC 9002's initial 333 ms).
    pub fn new(name: String, cc: Box<dyn CongestionControl>, srtt: Duration) -> Self {
        let own_cwnd = cc.cwnd();
        let own_rate = rate_of(cc.as_ref(), srtt);
        let paced = cc.pacing_rate().is_some();
        Member {
            name,
            cc,
            own_cwnd,
            own_rate,
            paced,
            last_write: None,
        }
    }

    /// Records and returns the member's own window, bytes. Only the fused quantity is read per
    /// event: the other one is derived when the telemetry is sampled ([`Member::rate_now`]).
    pub fn read_cwnd(&mut self) -> Bytes {
        self.own_cwnd = self.cc.cwnd();
        self.own_cwnd
    }

    /// The member takes an ACK; records and returns its window after it.
    #[inline]
    pub fn ack_and_read_cwnd(&mut self, now: Time, ack: &AckEvent) -> Bytes {
        self.own_cwnd = self.cc.on_ack_cwnd(now, ack);
        self.own_cwnd
    }

    /// Records and returns the member's own rate, bit/s: its pacing rate, else its window over
    /// `srtt`.
    pub fn read_rate(&mut self, srtt: Duration) -> f64 {
        match self.cc.pacing_rate() {
            Some(r) => {
                if !self.paced {
                    // `last_write` was a window.
                    self.last_write = None;
                    self.paced = true;
                }
                self.own_rate = r;
            }
            None => {
                if self.paced {
                    self.last_write = None;
                    self.paced = false;
                }
                self.own_cwnd = self.cc.cwnd();
                self.own_rate = Rate::from_bytes_over(self.own_cwnd, srtt.max(Duration(1)));
            }
        }
        self.own_rate.as_bps() as f64
    }

    /// The member's rate for telemetry under window fusion, where rates are not read per event:
    /// its pacing rate now, else its own window (before the write-back) over `srtt`.
    pub fn rate_now(&self, srtt: Duration) -> Rate {
        self.cc
            .pacing_rate()
            .unwrap_or_else(|| Rate::from_bytes_over(self.own_cwnd, srtt.max(Duration(1))))
    }

    /// Writes a fused window. A member that already has it is left alone, so that its internal
    /// state (CUBIC's epoch, PCC's monitor intervals) is not restarted by a no-op; so is a member
    /// that was written the same window at the last write and still has the window it settled
    /// at then (it declined the value, and writing it again would be declined the same way: had
    /// its bounds moved since, its own window would have moved with them).
    /// Returns the member's window after the write, which its `cwnd()` gives until its next
    /// event.
    #[inline]
    pub fn write_cwnd(&mut self, now: Time, cwnd: Bytes) -> Bytes {
        if self.own_cwnd == cwnd || self.last_write == Some((cwnd, self.own_cwnd)) {
            return self.own_cwnd;
        }
        self.calibrate_cwnd(now, cwnd)
    }

    /// The write of [`Member::write_cwnd`], out of line: most fusions write nothing, and the
    /// caller's loop stays small.
    #[inline(never)]
    fn calibrate_cwnd(&mut self, now: Time, cwnd: Bytes) -> Bytes {
        let after = self.cc.calibrate_cwnd(now, cwnd);
        self.last_write = Some((cwnd, after));
        after
    }

    /// Writes a fused rate in the member's own currency (see the module comment): its pacing
    /// rate, or for a window-only member the window rate·srtt (at least `floor`). A member that
    /// already has the value is left alone. `srtt` is `None` before the flow's first RTT sample:
    /// a rate is then not converted into a window, since RFC 9002's 333 ms default would give a
    /// window several times the path's.
    /// As [`Member::write_cwnd`], a member that declined the same value at the last write is
    /// not written again.
    pub fn write_rate(&mut self, now: Time, rate: Rate, floor: Bytes, srtt: Option<Duration>) {
        if self.paced {
            let (own, value) = (self.own_rate.as_bps(), rate.as_bps());
            if own == value || self.last_write == Some((value, own)) {
                return;
            }
            let c = Calibration {
                pacing_rate: Some(rate),
                ..Calibration::default()
            };
            self.cc.calibrate(now, &c);
            let after = self.cc.pacing_rate().map_or(0, |r| r.as_bps());
            self.last_write = Some((value, after));
        } else {
            let Some(srtt) = srtt else {
                return;
            };
            let w = window_for(rate, srtt, floor);
            if self.own_cwnd == w {
                return;
            }
            self.write_cwnd(now, w);
        }
    }
}

/// A member's rate: its pacing rate, else cwnd / srtt.
pub fn rate_of(cc: &dyn CongestionControl, srtt: Duration) -> Rate {
    cc.pacing_rate()
        .unwrap_or_else(|| Rate::from_bytes_over(cc.cwnd(), srtt.max(Duration(1))))
}

/// The window r·srtt, at least `floor`.
pub fn window_for(rate: Rate, srtt: Duration, floor: Bytes) -> Bytes {
    rate.bytes_in(srtt).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcContext;
    use crate::registry::{CcSpec, Registry};

    const MSS: Bytes = 1000;

    fn member(name: &str) -> Member {
        let cc = Registry::standard()
            .build(&CcSpec::named(name), &CcContext::new(MSS))
            .expect("standard CCA builds");
        Member::new(name.to_string(), cc, Duration::from_millis(100))
    }

    #[test]
    fn a_window_only_member_has_the_rate_cwnd_over_srtt() {
        let mut m = member("cubic");
        // 10 000 B initial window over 100 ms = 800 kbit/s.
        assert_eq!(m.read_rate(Duration::from_millis(100)), 800_000.0);
        assert_eq!(m.read_cwnd(), 10_000);
        // Over 50 ms it is twice that, also as read for telemetry.
        assert_eq!(m.read_rate(Duration::from_millis(50)), 1_600_000.0);
        assert_eq!(
            m.rate_now(Duration::from_millis(50)),
            Rate::from_bps(1_600_000)
        );
    }

    #[test]
    fn a_fused_rate_reaches_a_window_only_member_as_rate_times_srtt() {
        let mut m = member("cubic");
        m.read_rate(Duration::from_millis(100));
        m.write_rate(
            Time::ZERO,
            Rate::from_mbps(8),
            2 * MSS,
            Some(Duration::from_millis(100)),
        );
        // 8 Mbit/s · 100 ms = 100 000 B.
        assert_eq!(m.cc.cwnd(), 100_000);
        // Before the first RTT sample there is no srtt to convert with.
        let mut m = member("cubic");
        m.read_rate(Duration::from_millis(100));
        m.write_rate(Time::ZERO, Rate::from_mbps(8), 2 * MSS, None);
        assert_eq!(m.cc.cwnd(), 10 * MSS);
    }

    #[test]
    fn a_fused_window_is_written_only_where_it_differs() {
        let mut m = member("cubic");
        m.read_cwnd();
        m.write_cwnd(Time::ZERO, 10 * MSS);
        assert_eq!(m.cc.cwnd(), 10 * MSS);
        m.write_cwnd(Time::ZERO, 37 * MSS);
        assert_eq!(m.cc.cwnd(), 37 * MSS);
    }
}
