//! Janus metrics collection (Zhou et al., IEEE TMC 2018, §4.2): throughput sampled over windows
//! of one RTT and smoothed by an EWMA, and an RTT that is the smoothed RTT passed through a min
//! filter over the same window.

use crate::signals::AckEvent;
use crate::units::{Bytes, Duration, Time};

/// §4.2: EWMA weight of a new throughput sample, xi = 1/8 (as Westwood+'s bandwidth filter).
pub const XI: f64 = 1.0 / 8.0;

/// One closed sampling window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Sample throughput P_smp: bytes acknowledged in the window over its length, bit/s.
    pub p_smp_bps: f64,
    /// P_avg after this sample, bit/s.
    pub p_avg_bps: f64,
    /// Smallest smoothed RTT seen during the window.
    pub rtt: Duration,
    /// RFC 9002 rttvar at the window's end: Janus' sigma(RTT) (Algorithm 1, line 9).
    pub rtt_var: Duration,
}

/// Throughput and RTT measurement, fed every ACK.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Start time, delivered bytes at start, and length of the window in progress.
    window: Option<(Time, Bytes, Duration)>,
    window_min_srtt: Option<Duration>,
    p_avg_bps: f64,
    last: Option<Window>,
}

impl Metrics {
    /// Absorbs one ACK; returns the window it closed, if any. A window lasts one smoothed RTT
    /// as measured when it opened.
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) -> Option<Window> {
        if !ack.rtt.has_sample {
            return None;
        }
        let srtt = ack.rtt.smoothed.max(Duration(1));
        self.window_min_srtt = Some(self.window_min_srtt.map_or(srtt, |m| m.min(srtt)));
        let Some((start, delivered_at_start, len)) = self.window else {
            self.window = Some((now, ack.delivered, srtt));
            return None;
        };
        let elapsed = now.saturating_since(start);
        if elapsed < len || elapsed.is_zero() {
            return None;
        }
        let bytes = ack.delivered.saturating_sub(delivered_at_start);
        let p_smp_bps = bytes as f64 * 8.0 / elapsed.as_secs_f64();
        self.p_avg_bps = XI * p_smp_bps + (1.0 - XI) * self.p_avg_bps;
        let w = Window {
            p_smp_bps,
            p_avg_bps: self.p_avg_bps,
            rtt: self.window_min_srtt.unwrap_or(srtt),
            rtt_var: ack.rtt.var,
        };
        self.last = Some(w);
        self.window = Some((now, ack.delivered, srtt));
        self.window_min_srtt = None;
        Some(w)
    }

    /// §4.3 (2): on entering the first conservative stage, P_avg restarts from the current
    /// sample throughput instead of the slowly rising average.
    pub fn reset_average(&mut self, p_bps: f64) {
        self.p_avg_bps = p_bps;
        if let Some(w) = self.last.as_mut() {
            w.p_avg_bps = p_bps;
        }
    }

    /// P_avg, the EWMA of the sample throughputs, bit/s (0 before the first window).
    pub fn p_avg_bps(&self) -> f64 {
        self.p_avg_bps
    }

    /// The last closed window.
    pub fn last(&self) -> Option<Window> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::rtt::RttSnapshot;

    fn ack_at(delivered: Bytes, srtt_ms: u64) -> AckEvent {
        AckEvent {
            delivered,
            rtt: RttSnapshot {
                smoothed: Duration::from_millis(srtt_ms),
                var: Duration::from_millis(2),
                has_sample: true,
                ..RttSnapshot::default()
            },
            ..AckEvent::default()
        }
    }

    #[test]
    fn one_window_per_rtt_with_ewma_of_one_eighth() {
        let mut m = Metrics::default();
        let ms = |t: u64| Time::ZERO + Duration::from_millis(t);
        // The first ACK opens a 100 ms window.
        assert_eq!(m.on_ack(ms(0), &ack_at(0, 100)), None);
        // 50 ms in: still open, but its srtt (90 ms) is the window's minimum so far.
        assert_eq!(m.on_ack(ms(50), &ack_at(50_000, 90)), None);
        // 100 ms: 125 000 bytes in 0.1 s = 10 Mbit/s; P_avg = 10/8 = 1.25 Mbit/s.
        let w = m
            .on_ack(ms(100), &ack_at(125_000, 110))
            .expect("window closes");
        assert!((w.p_smp_bps - 10e6).abs() < 1e-6);
        assert!((w.p_avg_bps - 1.25e6).abs() < 1e-6);
        assert_eq!(w.rtt, Duration::from_millis(90));
        assert_eq!(w.rtt_var, Duration::from_millis(2));
        // The next window is 110 ms long (the srtt when it opened): 5 Mbit/s over it.
        assert_eq!(m.on_ack(ms(200), &ack_at(187_500, 110)), None);
        let w = m
            .on_ack(ms(210), &ack_at(193_750, 110))
            .expect("closes at 110 ms");
        assert!((w.p_smp_bps - 5e6).abs() < 1e-6);
        assert!((w.p_avg_bps - (5e6 / 8.0 + 1.25e6 * 7.0 / 8.0)).abs() < 1e-6);
        m.reset_average(5e6);
        assert_eq!(m.p_avg_bps(), 5e6);
        assert_eq!(m.last().unwrap().p_avg_bps, 5e6);
    }

    #[test]
    fn acks_before_an_rtt_sample_are_ignored() {
        let mut m = Metrics::default();
        let ev = AckEvent::default(); // has_sample false
        assert_eq!(m.on_ack(Time::ZERO, &ev), None);
        assert!(m.window.is_none());
    }
}
