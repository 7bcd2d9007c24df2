//! The measured signals PolyCC's rule-based filter decides on, one set per measurement window.
//!
//! A window starts at an ACK and closes at the first ACK at least one smoothed RTT (the
//! transport's, at the window's start) later. Per window:
//! - `rtt_var_ms`: the transport's RFC 9002 rttvar at the window's close, in ms;
//! - `loss_rate`: bytes declared lost / (bytes acknowledged + bytes declared lost) in the window;
//! - `bw_change`: the window's bandwidth sample (its largest delivery-rate sample that was not
//!   application-limited) over the largest of the previous [`BW_HISTORY`] windows' samples,
//!   minus 1: −0.5 when the bottleneck halves, +1 when it doubles; NaN without samples;
//! - the bandwidth estimate used to derive a BDP target: the largest sample of the last
//!   [`BW_FILTER_WINDOWS`] windows, as BBR's max filter (Cardwell et al., ACM Queue 2016).

use crate::signals::{AckEvent, LossEvent};
use crate::units::{Bytes, Duration, Rate, Time};

/// Windows of history `bw_change` compares against. Eight RTTs cover one BBR gain cycle, so a
/// probing phase (1.25× for one RTT) is not taken for the new bandwidth.
pub const BW_HISTORY: usize = 8;
/// BBR's bandwidth max-filter length, in round trips (Cardwell et al. 2016, "BtlBwFilterLen").
pub const BW_FILTER_WINDOWS: usize = 10;
/// Shortest window, so that a sub-millisecond srtt does not close a window per ACK.
pub const MIN_WINDOW: Duration = Duration::from_millis(1);

/// The signals of one closed window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowSignals {
    /// The transport's rttvar (RFC 9002 §5.3) at the window's close, ms; NaN before the first
    /// RTT sample.
    pub rtt_var_ms: f64,
    /// Bytes declared lost over bytes acknowledged plus declared lost in the window, in [0, 1]
    /// (0 when neither).
    pub loss_rate: f64,
    /// The window's bandwidth sample over the largest of the previous [`BW_HISTORY`] windows',
    /// minus 1; NaN when either is missing.
    pub bw_change: f64,
    /// The window's bandwidth sample, bit/s (NaN without one).
    pub bw_bps: f64,
}

/// The open measurement window and the bandwidth samples of the closed ones: what the agent
/// measures for the rules, a BDP target and per-RTT fusion.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signals {
    start: Option<(Time, Duration)>,
    acked: Bytes,
    lost: Bytes,
    window_bw: Option<Rate>,
    /// Bandwidth samples of the last closed windows, newest last (at most BW_FILTER_WINDOWS).
    history: Vec<Option<Rate>>,
    /// Largest sample in `history`, recomputed when a window closes (so that reading the
    /// bandwidth estimate per ACK does not walk the history).
    history_max: Option<Rate>,
}

impl Signals {
    /// Absorbs one ACK; returns the signals of the window it closes, if any.
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) -> Option<WindowSignals> {
        self.acked = self.acked.saturating_add(ack.acked_bytes);
        if let Some(rs) = ack.rate_sample.filter(|rs| !rs.is_app_limited) {
            self.window_bw = Some(
                self.window_bw
                    .map_or(rs.delivery_rate, |b| b.max(rs.delivery_rate)),
            );
        }
        let Some((start, len)) = self.start else {
            self.start = Some((now, ack.rtt.smoothed.max(MIN_WINDOW)));
            return None;
        };
        if now.saturating_since(start) < len {
            return None;
        }
        let w = self.close(ack);
        self.start = Some((now, ack.rtt.smoothed.max(MIN_WINDOW)));
        Some(w)
    }

    /// Counts a loss event's bytes towards the open window's loss rate.
    pub fn on_loss(&mut self, loss: &LossEvent) {
        self.lost = self.lost.saturating_add(loss.lost_bytes);
    }

    fn close(&mut self, ack: &AckEvent) -> WindowSignals {
        let total = self.acked.saturating_add(self.lost);
        let loss_rate = if total == 0 {
            0.0
        } else {
            self.lost as f64 / total as f64
        };
        let bw = self.window_bw.take();
        let before = self
            .history
            .iter()
            .rev()
            .take(BW_HISTORY)
            .flatten()
            .max()
            .copied();
        let bw_change = match (bw, before) {
            (Some(now), Some(b)) if b.as_bps() > 0 => now.as_bps() as f64 / b.as_bps() as f64 - 1.0,
            _ => f64::NAN,
        };
        if self.history.len() == BW_FILTER_WINDOWS {
            self.history.remove(0);
        }
        self.history.push(bw);
        self.history_max = self.history.iter().flatten().max().copied();
        self.acked = 0;
        self.lost = 0;
        WindowSignals {
            rtt_var_ms: if ack.rtt.has_sample {
                ack.rtt.var.as_millis_f64()
            } else {
                f64::NAN
            },
            loss_rate,
            bw_change,
            bw_bps: bw.map_or(f64::NAN, |b| b.as_bps() as f64),
        }
    }

    /// Largest bandwidth sample of the last [`BW_FILTER_WINDOWS`] windows and the open one.
    pub fn bandwidth(&self) -> Option<Rate> {
        self.history_max.max(self.window_bw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::rtt::RttSnapshot;
    use crate::signals::RateSample;

    fn ack(bytes: Bytes, rate_mbps: Option<u64>, var_ms: u64) -> AckEvent {
        AckEvent {
            acked_bytes: bytes,
            rtt: RttSnapshot {
                latest: Duration::from_millis(100),
                smoothed: Duration::from_millis(100),
                var: Duration::from_millis(var_ms),
                min: Duration::from_millis(100),
                has_sample: true,
            },
            rate_sample: rate_mbps.map(|m| RateSample {
                delivery_rate: Rate::from_mbps(m),
                ..RateSample::default()
            }),
            ..AckEvent::default()
        }
    }

    #[test]
    fn a_window_is_one_srtt_and_reports_loss_rate_rtt_var_and_bandwidth_change() {
        let mut s = Signals::default();
        let ms = |m: u64| Time::ZERO + Duration::from_millis(m);
        assert_eq!(s.on_ack(ms(0), &ack(1000, Some(20), 5)), None);
        // 50 ms in: the 100 ms window is still open.
        assert_eq!(s.on_ack(ms(50), &ack(2000, Some(18), 5)), None);
        s.on_loss(&LossEvent {
            lost_bytes: 1000,
            ..LossEvent::default()
        });
        let w = s
            .on_ack(ms(100), &ack(1000, None, 7))
            .expect("window closes");
        // 1000 lost of 1000 + 2000 + 1000 acked + 1000 lost.
        assert_eq!(w.loss_rate, 0.2);
        assert_eq!(w.rtt_var_ms, 7.0);
        assert!(w.bw_change.is_nan(), "no earlier window to compare with");
        assert_eq!(w.bw_bps, 20e6);
        // Next window: the bottleneck halved to 10 Mbit/s.
        s.on_ack(ms(150), &ack(1000, Some(10), 7));
        let w = s
            .on_ack(ms(200), &ack(1000, Some(9), 7))
            .expect("window closes");
        assert_eq!(w.loss_rate, 0.0);
        assert_eq!(w.bw_change, -0.5);
        // The filter still remembers 20 Mbit/s.
        assert_eq!(s.bandwidth(), Some(Rate::from_mbps(20)));
    }

    #[test]
    fn the_bandwidth_filter_forgets_after_ten_windows() {
        let mut s = Signals::default();
        let mut t = Time::ZERO;
        s.on_ack(t, &ack(1000, Some(20), 1));
        for _ in 0..=BW_FILTER_WINDOWS {
            t += Duration::from_millis(100);
            s.on_ack(t, &ack(1000, Some(10), 1));
        }
        // The first window (20 Mbit/s sample) has left the ten-window filter.
        assert_eq!(s.bandwidth(), Some(Rate::from_mbps(10)));
    }
}
