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
    pub cc: Box<dyn CongestionControl>,
    /// The member's own window and rate as of the last fusion, before the write-back (the
    /// telemetry shows what each member wanted, not the value it was given).
    pub own_cwnd: Bytes,
    pub own_rate: Rate,
}

impl Member {
    pub fn new(name: String, cc: Box<dyn CongestionControl>, srtt: Duration) -> Self {
        let own_cwnd = cc.cwnd();
        let own_rate = rate_of(cc.as_ref(), srtt);
        Member {
            name,
            cc,
            own_cwnd,
            own_rate,
        }
    }

    /// Records the member's own values and returns the one in `q`'s unit.
    pub fn read(&mut self, q: Quantity, srtt: Duration) -> f64 {
        self.own_cwnd = self.cc.cwnd();
        self.own_rate = rate_of(self.cc.as_ref(), srtt);
        match q {
            Quantity::Cwnd => self.own_cwnd as f64,
            Quantity::Rate => self.own_rate.as_bps() as f64,
        }
    }

    /// Writes the fused value into the member, in its own currency (see the module comment).
    /// A member that already has the value is left alone, so that its internal state (CUBIC's
    /// epoch, PCC's monitor intervals) is not restarted by a no-op. `srtt` is `None` before the
    /// flow's first RTT sample: a rate is then not converted into a window, since RFC 9002's
    /// 333 ms default would give a window several times the path's.
    pub fn write_back(&mut self, now: Time, q: Quantity, fused: Fused, srtt: Option<Duration>) {
        let c = match q {
            Quantity::Cwnd => {
                if self.own_cwnd == fused.cwnd {
                    return;
                }
                Calibration {
                    cwnd: Some(fused.cwnd),
                    ..Calibration::default()
                }
            }
            Quantity::Rate => match self.cc.pacing_rate() {
                Some(r) if r == fused.rate => return,
                Some(_) => Calibration {
                    pacing_rate: Some(fused.rate),
                    ..Calibration::default()
                },
                None => {
                    let Some(srtt) = srtt else {
                        return;
                    };
                    let w = window_for(fused.rate, srtt, fused.cwnd);
                    if self.own_cwnd == w {
                        return;
                    }
                    Calibration {
                        cwnd: Some(w),
                        ..Calibration::default()
                    }
                }
            },
        };
        self.cc.calibrate(now, &c);
    }
}

/// The fused value in both units: for window fusion `rate` is cwnd / srtt, for rate fusion
/// `cwnd` is only the floor (the minimum window) used when converting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused {
    pub cwnd: Bytes,
    pub rate: Rate,
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
        assert_eq!(
            m.read(Quantity::Rate, Duration::from_millis(100)),
            800_000.0
        );
        assert_eq!(m.read(Quantity::Cwnd, Duration::from_millis(100)), 10_000.0);
        // Over 50 ms it is twice that.
        assert_eq!(
            m.read(Quantity::Rate, Duration::from_millis(50)),
            1_600_000.0
        );
    }

    #[test]
    fn a_fused_rate_reaches_a_window_only_member_as_rate_times_srtt() {
        let mut m = member("cubic");
        m.read(Quantity::Rate, Duration::from_millis(100));
        let fused = Fused {
            cwnd: 2 * MSS,
            rate: Rate::from_mbps(8),
        };
        m.write_back(
            Time::ZERO,
            Quantity::Rate,
            fused,
            Some(Duration::from_millis(100)),
        );
        // 8 Mbit/s · 100 ms = 100 000 B.
        assert_eq!(m.cc.cwnd(), 100_000);
        // Before the first RTT sample there is no srtt to convert with.
        let mut m = member("cubic");
        m.write_back(Time::ZERO, Quantity::Rate, fused, None);
        assert_eq!(m.cc.cwnd(), 10 * MSS);
    }

    #[test]
    fn a_fused_window_is_written_only_where_it_differs() {
        let mut m = member("cubic");
        m.read(Quantity::Cwnd, Duration::from_millis(100));
        let same = Fused {
            cwnd: 10 * MSS,
            rate: Rate::from_mbps(1),
        };
        m.write_back(Time::ZERO, Quantity::Cwnd, same, None);
        assert_eq!(m.cc.cwnd(), 10 * MSS);
        let bigger = Fused {
            cwnd: 37 * MSS,
            ..same
        };
        m.write_back(Time::ZERO, Quantity::Cwnd, bigger, None);
        assert_eq!(m.cc.cwnd(), 37 * MSS);
    }
}
