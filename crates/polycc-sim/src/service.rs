//! The service process of a link direction: when a packet that starts transmission at `now`
//! finishes, for constant, scheduled (steps and ramps) and trace-driven capacity.
//!
//! All arithmetic is integer (nanoseconds, bit/s, bytes) so runs are exactly reproducible.
//!
//! - **Schedule**: capacity is integrated exactly. A step segment holds its rate; a ramp segment
//!   interpolates linearly, and its integral is the trapezoid area, computed in `i128` with
//!   an `f64` fallback only for magnitudes no realistic scenario reaches.
//! - **Trace** (mahimahi, see `../shared/traces/README.md`): delivery opportunities at integer
//!   millisecond timestamps, each worth `bytes_per_opportunity` bytes, looping with the trace
//!   period. Byte-granular: one opportunity can finish several small packets and a packet can span
//!   opportunities; a packet departs at the time of the opportunity that finishes it. Unused
//!   opportunities are lost, not banked.
//!
//!   Leftover rule: when an opportunity at time `t` finishes a packet with bytes to spare, those
//!   bytes can be used by the next packet only if its service starts at or before `t` (in
//!   practice exactly at `t`: the link went straight on to the next queued packet). A packet that
//!   starts later uses only opportunities at times `>= now`.

use crate::scenario::spec::Capacity;
use polycc::units::{Rate, Time};

/// A rate in bit/s integrated over nanoseconds gives bit·ns/s; one byte is this many of those.
const RATE_NS_PER_BYTE: u128 = 8 * 1_000_000_000;
const NANOS_PER_MS: u64 = 1_000_000;

pub struct Server {
    kind: Kind,
}

enum Kind {
    Constant(Rate),
    Schedule(Schedule),
    Trace(TraceServer),
}

impl Server {
    pub fn new(capacity: Capacity) -> Self {
        let kind = match capacity {
            Capacity::Constant(r) => Kind::Constant(r),
            Capacity::Schedule(points) => Kind::Schedule(Schedule::new(&points)),
            Capacity::Trace {
                opportunities_ms,
                period_ms,
                bytes_per_opportunity,
            } => Kind::Trace(TraceServer::new(
                opportunities_ms,
                period_ms,
                bytes_per_opportunity,
            )),
        };
        Server { kind }
    }

    /// Finish time of a packet of `bytes` whose transmission starts at `now` (the link is idle
    /// from `now`). `Time::MAX` when the capacity never allows it.
    ///
    /// Call once per packet, in order of service: for traces it consumes delivery opportunities.
    pub fn serve(&mut self, now: Time, bytes: u64) -> Time {
        match &mut self.kind {
            Kind::Constant(r) => now + r.time_to_send(bytes),
            Kind::Schedule(s) => s.serve(now, bytes),
            Kind::Trace(t) => t.serve(now, bytes),
        }
    }

    /// Bytes the capacity offers in [from, to) (rounded down), independent of what was served.
    pub fn offered_bytes(&self, from: Time, to: Time) -> u64 {
        if to <= from {
            return 0;
        }
        match &self.kind {
            Kind::Constant(r) => r.bytes_in(to - from),
            Kind::Schedule(s) => s.offered_bytes(from, to),
            Kind::Trace(t) => t.offered_bytes(from, to),
        }
    }

    /// Capacity at `t`. For a trace, the rate of the 1-ms slot containing `t` (opportunities in
    /// that millisecond); a trace's capacity is bursty at that scale, so for plots prefer
    /// `offered_bytes` over a bin.
    pub fn rate_at(&self, t: Time) -> Rate {
        match &self.kind {
            Kind::Constant(r) => *r,
            Kind::Schedule(s) => s.rate_at(t),
            Kind::Trace(tr) => tr.rate_at(t),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Schedule

/// One piece of the schedule: over [start, end) the rate goes linearly from `r0` to `r1` (equal
/// for a step). The last segment is open-ended and constant.
#[derive(Clone, Copy, Debug)]
struct Segment {
    start: u64,
    /// `u64::MAX` for the last, open-ended segment.
    end: u64,
    r0: u64,
    r1: u64,
}

impl Segment {
    fn is_constant(&self) -> bool {
        self.r0 == self.r1 || self.end == u64::MAX
    }

    /// Rate at `t` in [start, end], rounded down.
    fn rate_at(&self, t: u64) -> u64 {
        if self.is_constant() {
            return self.r0;
        }
        let d = (self.end - self.start) as i128;
        let dr = self.r1 as i128 - self.r0 as i128;
        let x = (t.clamp(self.start, self.end) - self.start) as i128;
        // |dr·x| < 2^64·2^64: fits i128.
        (self.r0 as i128 + (dr * x).div_euclid(d)) as u64
    }

    /// Capacity over [x, y] ⊆ [start, end] in bit·ns/s (= bits × 1e9), rounded down.
    fn integral(&self, x: u64, y: u64) -> u128 {
        debug_assert!(self.start <= x && x <= y && y <= self.end);
        if self.is_constant() {
            return self.r0 as u128 * (y - x) as u128;
        }
        // Trapezoid: (y - x) · (rate(x) + rate(y)) / 2, with rate(t)·D = r0·D + dr·(t - start).
        let d = (self.end - self.start) as i128;
        let dr = self.r1 as i128 - self.r0 as i128;
        let (a, b) = ((x - self.start) as i128, (y - self.start) as i128);
        let exact = (|| {
            let sum = (self.r0 as i128)
                .checked_mul(2 * d)?
                .checked_add(dr.checked_mul(a + b)?)?;
            let num = sum.checked_mul((y - x) as i128)?;
            Some((num / (2 * d)) as u128)
        })();
        exact.unwrap_or_else(|| {
            // Only for rates × durations far beyond any scenario (> ~1e37 bit·ns²/s); f64 keeps
            // it deterministic, if no longer exact to the bit.
            let rx = self.r0 as f64 + dr as f64 * a as f64 / d as f64;
            let ry = self.r0 as f64 + dr as f64 * b as f64 / d as f64;
            ((y - x) as f64 * (rx + ry) / 2.0).max(0.0) as u128
        })
    }

    /// Smallest `u` in [0, end - x] with `integral(x, x + u) >= need`; the caller guarantees
    /// `integral(x, end) >= need`.
    fn solve_ramp(&self, x: u64, need: u128) -> u64 {
        let span = self.end - x;
        // Initial guess from the quadratic 0.5·s·u² + r·u = need, in its cancellation-free form.
        let r = self.rate_at(x) as f64;
        let s = (self.r1 as f64 - self.r0 as f64) / (self.end - self.start) as f64;
        let disc = (r * r + 2.0 * s * need as f64).max(0.0);
        let denom = r + disc.sqrt();
        let guess = if denom > 0.0 {
            (2.0 * need as f64 / denom).ceil().min(span as f64) as u64
        } else {
            span
        };
        smallest_true(guess, span, |u| self.integral(x, x + u) >= need)
    }
}

/// Smallest `u` in [0, hi] for which the monotone `pred` holds, given `pred(hi)`. Searches
/// outward from `guess` with doubling steps, then bisects: a good guess costs a few evaluations.
fn smallest_true(guess: u64, hi: u64, pred: impl Fn(u64) -> bool) -> u64 {
    let g = guess.min(hi);
    let (mut lo, mut up); // pred(lo) false, pred(up) true
    let mut step = 1u64;
    if pred(g) {
        up = g;
        loop {
            if up == 0 {
                return 0;
            }
            let c = up.saturating_sub(step);
            if pred(c) {
                up = c;
                step = step.saturating_mul(2);
            } else {
                lo = c;
                break;
            }
        }
    } else {
        lo = g;
        loop {
            let c = lo.saturating_add(step).min(hi);
            if pred(c) {
                up = c;
                break;
            }
            lo = c;
            step = step.saturating_mul(2);
        }
    }
    while up - lo > 1 {
        let mid = lo + (up - lo) / 2;
        if pred(mid) {
            up = mid;
        } else {
            lo = mid;
        }
    }
    up
}

struct Schedule {
    segs: Vec<Segment>,
}

impl Schedule {
    /// Builds segments from `(at, rate, ramp)` points sorted by `at` (the scenario validates
    /// this and that the first point is at 0; before the first point its rate applies).
    fn new(points: &[(polycc::units::Duration, Rate, bool)]) -> Self {
        let mut segs = Vec::with_capacity(points.len());
        for (i, &(at, rate, _)) in points.iter().enumerate() {
            let start = if i == 0 { 0 } else { at.0 };
            let (end, r1) = match points.get(i + 1) {
                Some(&(next_at, next_rate, ramp)) => {
                    (next_at.0, if ramp { next_rate.0 } else { rate.0 })
                }
                None => (u64::MAX, rate.0),
            };
            if end > start {
                segs.push(Segment {
                    start,
                    end,
                    r0: rate.0,
                    r1,
                });
            }
        }
        if segs.is_empty() {
            segs.push(Segment {
                start: 0,
                end: u64::MAX,
                r0: 0,
                r1: 0,
            });
        }
        Schedule { segs }
    }

    /// Index of the segment containing `t`.
    fn seg_index(&self, t: u64) -> usize {
        self.segs
            .partition_point(|s| s.end <= t)
            .min(self.segs.len() - 1)
    }

    fn rate_at(&self, t: Time) -> Rate {
        Rate(self.segs[self.seg_index(t.0)].rate_at(t.0))
    }

    fn serve(&self, now: Time, bytes: u64) -> Time {
        if bytes == 0 {
            return now;
        }
        let mut need = bytes as u128 * RATE_NS_PER_BYTE;
        let mut x = now.0;
        for seg in &self.segs[self.seg_index(x)..] {
            if seg.end == u64::MAX {
                // Open-ended constant tail.
                if seg.r0 == 0 {
                    return Time::MAX;
                }
                let u = need.div_ceil(seg.r0 as u128);
                return Time(u64::try_from(x as u128 + u).unwrap_or(u64::MAX));
            }
            let cap = seg.integral(x, seg.end);
            if cap >= need {
                let u = if seg.is_constant() {
                    // cap >= need > 0 implies r0 > 0.
                    need.div_ceil(seg.r0 as u128) as u64
                } else {
                    seg.solve_ramp(x, need)
                };
                return Time(x + u);
            }
            need -= cap;
            x = seg.end;
        }
        Time::MAX
    }

    fn offered_bytes(&self, from: Time, to: Time) -> u64 {
        let mut total: u128 = 0;
        for seg in &self.segs[self.seg_index(from.0)..] {
            let x = from.0.max(seg.start);
            let y = to.0.min(seg.end);
            if x >= y {
                break;
            }
            total = total.saturating_add(seg.integral(x, y));
        }
        (total / RATE_NS_PER_BYTE).min(u64::MAX as u128) as u64
    }
}

// ------------------------------------------------------------------------------------------------
// Trace

/// mahimahi delivery opportunities. Opportunity number `g` (counted from the start, across
/// loops) is entry `g % n` of loop `g / n`, at `(g / n) · period + ts[g % n]` ms.
struct TraceServer {
    ts: Vec<u64>,
    period_ms: u64,
    bytes_per_opp: u64,
    /// The last opportunity used: its number, its time (ns) and the bytes it has left.
    last: Option<(u64, u64)>,
    leftover: u64,
}

impl TraceServer {
    fn new(ts: Vec<u64>, period_ms: u64, bytes_per_opp: u64) -> Self {
        // The loader guarantees sorted timestamps and period = last timestamp > 0. Guard anyway
        // so opportunity times never go backwards across a wrap and the period is never 0.
        let last = ts.last().copied().unwrap_or(0);
        TraceServer {
            period_ms: period_ms.max(last).max(1),
            ts,
            bytes_per_opp,
            last: None,
            leftover: 0,
        }
    }

    fn n(&self) -> u64 {
        self.ts.len() as u64
    }

    /// Time (ns) of opportunity `g`, saturating at `u64::MAX`.
    fn time_of(&self, g: u64) -> u64 {
        let n = self.n();
        (g / n)
            .checked_mul(self.period_ms)
            .and_then(|base| base.checked_add(self.ts[(g % n) as usize]))
            .and_then(|ms| ms.checked_mul(NANOS_PER_MS))
            .unwrap_or(u64::MAX)
    }

    /// Number of the first opportunity at or after `t_ns`, i.e. the count of opportunities
    /// strictly before it. O(log n).
    fn first_at_or_after(&self, t_ns: u64) -> u64 {
        let n = self.n();
        let m = t_ns.div_ceil(NANOS_PER_MS); // opportunities are on whole milliseconds
        let k0 = m / self.period_ms;
        // Loop k spans [k·P + ts[0], k·P + ts[n-1]] ⊆ [k·P, (k+1)·P], so the answer lies in loop
        // k0 - 1 (only its opportunities at exactly k0·P), k0 or, at the latest, k0 + 1.
        for k in k0.saturating_sub(1)..=k0 + 1 {
            let base = k * self.period_ms;
            let i = self.ts.partition_point(|&x| base + x < m) as u64;
            if i < n {
                return k.saturating_mul(n).saturating_add(i);
            }
        }
        u64::MAX // unreachable: loop k0 + 1 starts after m
    }

    fn serve(&mut self, now: Time, bytes: u64) -> Time {
        if bytes == 0 {
            return now;
        }
        if self.ts.is_empty() || self.bytes_per_opp == 0 {
            return Time::MAX;
        }
        let mut remaining = bytes;
        let next = match self.last {
            Some((g, t)) if now.0 <= t => {
                // Back-to-back: finish on the spare bytes of the last opportunity if they do.
                if self.leftover >= remaining {
                    self.leftover -= remaining;
                    return Time(t);
                }
                remaining -= self.leftover;
                g + 1
            }
            // Opportunities before `now` passed unused and are lost.
            Some((g, _)) => self.first_at_or_after(now.0).max(g + 1),
            None => self.first_at_or_after(now.0),
        };
        let opps = remaining.div_ceil(self.bytes_per_opp);
        let Some(fin) = next.checked_add(opps - 1) else {
            return Time::MAX;
        };
        let t = self.time_of(fin);
        self.last = Some((fin, t));
        self.leftover = opps * self.bytes_per_opp - remaining;
        Time(t)
    }

    fn offered_bytes(&self, from: Time, to: Time) -> u64 {
        if self.ts.is_empty() {
            return 0;
        }
        let opps = self.first_at_or_after(to.0) - self.first_at_or_after(from.0);
        opps.saturating_mul(self.bytes_per_opp)
    }

    fn rate_at(&self, t: Time) -> Rate {
        let ms = t.0 / NANOS_PER_MS;
        let slot_start = Time(ms * NANOS_PER_MS);
        let bytes = self.offered_bytes(
            slot_start,
            slot_start + polycc::units::Duration(NANOS_PER_MS),
        );
        Rate(bytes.saturating_mul(8 * 1000))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::Duration;

    #[test]
    fn smallest_true_finds_the_boundary_from_any_guess() {
        for guess in [0, 1, 17, 499, 500, 501, 999, 5000] {
            assert_eq!(smallest_true(guess, 1000, |u| u >= 500), 500);
        }
        assert_eq!(smallest_true(3, 1000, |_| true), 0);
        assert_eq!(smallest_true(3, 1000, |u| u >= 1000), 1000);
    }

    #[test]
    fn ramp_rate_and_integral_are_exact() {
        // 10 -> 20 Mbit/s over 10 s.
        let s = Segment {
            start: 0,
            end: 10_000_000_000,
            r0: 10_000_000,
            r1: 20_000_000,
        };
        assert_eq!(s.rate_at(5_000_000_000), 15_000_000);
        // 15 Mbit/s average over 10 s = 150 Mbit, in bit·ns/s.
        assert_eq!(s.integral(0, s.end), 150_000_000 * 1_000_000_000);
    }

    #[test]
    fn schedule_segments_from_points() {
        let s = Schedule::new(&[
            (Duration::ZERO, Rate::from_mbps(10), false),
            (Duration::from_secs(1), Rate::from_mbps(20), true),
            (Duration::from_secs(2), Rate::from_mbps(5), false),
        ]);
        let segs: Vec<_> = s.segs.iter().map(|g| (g.start, g.r0, g.r1)).collect();
        assert_eq!(
            segs,
            vec![
                (0, 10_000_000, 20_000_000),
                (1_000_000_000, 20_000_000, 20_000_000),
                (2_000_000_000, 5_000_000, 5_000_000)
            ]
        );
    }
}
