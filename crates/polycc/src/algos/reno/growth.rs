//! Congestion-avoidance growth smaller than one step, carried from ACK to ACK. The family uses two
//! kinds, and they are not interchangeable: whole-MSS steps (Reno's rule) and byte fractions
//! (increase rules computed in floating point).

use super::RenoWindow;
use crate::units::Bytes;

/// Linux `tcp_cong_avoid_ai` with `w` = cwnd: acked bytes are counted (`snd_cwnd_cnt`) and each
/// window's worth adds one MSS, so the window grows by one MSS per RTT.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AiCredit(Bytes);

impl AiCredit {
    pub(crate) fn on_ack(&mut self, w: &mut RenoWindow, acked: Bytes) {
        self.0 = self.0.saturating_add(acked);
        if self.0 >= w.cwnd {
            self.0 -= w.cwnd;
            w.cwnd = w.cwnd.saturating_add(w.mss);
        }
    }

    pub(crate) fn reset(&mut self) {
        self.0 = 0;
    }
}

/// Growth below one byte, in [0, 1), so that slow per-ACK increments are not lost to rounding.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ByteCarry(f64);

impl ByteCarry {
    /// Adds `bytes` (possibly fractional; negative counts as zero) to the window.
    pub(crate) fn grow(&mut self, cwnd: &mut Bytes, bytes: f64) {
        let total = self.0 + bytes.max(0.0);
        // Truncation is floor for a non-negative value, without a libm call on every ACK; the
        // conversion saturates, and below 2^53 it and its inverse are exact.
        let whole = total as Bytes;
        *cwnd = cwnd.saturating_add(whole);
        self.0 = total - whole as f64;
    }

    /// Linux `tcp_reno_cong_avoid` with an increase of `alpha` segments per RTT: slow start
    /// below ssthresh, else `alpha / cwnd` segments per segment acknowledged (as
    /// `tcp_cong_avoid_ai(tp, cwnd / alpha, acked)`); then the window's bounds.
    pub(crate) fn cong_avoid(&mut self, w: &mut RenoWindow, alpha: f64, acked: Bytes) {
        if w.in_slow_start() {
            w.slow_start(acked);
        } else {
            let cwnd_seg = w.cwnd as f64 / w.mss as f64;
            self.grow(&mut w.cwnd, alpha * acked as f64 / cwnd_seg);
        }
        w.apply_clamp();
    }

    pub(crate) fn reset(&mut self) {
        self.0 = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcContext;

    #[test]
    fn ai_credit_adds_one_mss_per_window_of_acked_bytes() {
        let mut w = RenoWindow::new(&CcContext::new(1000));
        let mut credit = AiCredit::default();
        for _ in 0..9 {
            credit.on_ack(&mut w, 1000);
        }
        assert_eq!(w.cwnd, 10_000);
        credit.on_ack(&mut w, 1000);
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn byte_carry_keeps_the_fraction_as_floor_would() {
        // The controllers that moved onto ByteCarry used `floor`; truncation must agree.
        let mut cwnd: Bytes = 0;
        let mut carry = ByteCarry::default();
        let mut floor_cwnd = 0.0f64;
        let mut floor_frac = 0.0f64;
        for bytes in [0.3, 0.9, 1.25, 1e6 + 0.7, 0.0, -5.0, 123.456] {
            carry.grow(&mut cwnd, bytes);
            let total: f64 = floor_frac + f64::max(bytes, 0.0);
            floor_cwnd += total.floor();
            floor_frac = total - total.floor();
            assert_eq!(cwnd as f64, floor_cwnd);
            assert_eq!(carry.0, floor_frac);
        }
    }
}
