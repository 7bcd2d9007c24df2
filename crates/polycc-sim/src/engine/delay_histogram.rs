//! A log-linear histogram of delays in microseconds, for the percentiles of summaries.
//!
//! The engine records two or three delays per packet (sojourn, queueing along the route, RTT), so
//! recording must cost a handful of instructions: a leading-zero count and one increment.
//! (`hdrhistogram` with three significant digits cost about 50 instructions per record here.)
//! Values below 256 µs are exact; above, each power of two is split into 128 buckets, a relative
//! resolution of 1/128 (0.8 %). Values are clamped to 2^32 - 1 µs (71 minutes).
//! The buckets are allocated up to the largest value seen, not all 3 328 (26 kB) up front: a
//! flow has two histograms, and a run with a thousand flows would zero 53 MB it mostly never
//! touches.

/// Values below this are counted exactly, one bucket per microsecond.
const LINEAR: u64 = 256;
/// Buckets per power of two above `LINEAR`.
const PER_OCTAVE: u64 = 128;
/// log2(PER_OCTAVE).
const PER_OCTAVE_BITS: u32 = 7;
/// Largest value recorded as itself.
const MAX_US: u64 = u32::MAX as u64;
/// Octaves above `LINEAR` up to `MAX_US`: 2^8 .. 2^32.
const OCTAVES: u64 = 32 - 8;
const BUCKETS: usize = (LINEAR + OCTAVES * PER_OCTAVE) as usize;

#[derive(Clone, Debug)]
pub struct DelayHistogram {
    /// Buckets up to the largest index recorded (those above count zero).
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl DelayHistogram {
    pub fn new() -> Self {
        DelayHistogram {
            counts: Vec::new(),
            total: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    fn index(us: u64) -> usize {
        if us < LINEAR {
            return us as usize;
        }
        // us >> shift lies in [PER_OCTAVE, 2·PER_OCTAVE).
        let shift = 63 - us.leading_zeros() - PER_OCTAVE_BITS;
        (LINEAR + (shift as u64 - 1) * PER_OCTAVE + ((us >> shift) - PER_OCTAVE)) as usize
    }

    /// The largest value that falls in bucket `i`.
    fn upper(i: usize) -> u64 {
        let i = i as u64;
        if i < LINEAR {
            return i;
        }
        let k = i - LINEAR;
        let shift = k / PER_OCTAVE + 1;
        let mantissa = k % PER_OCTAVE + PER_OCTAVE;
        ((mantissa + 1) << shift) - 1
    }

    /// Records a delay given in microseconds.
    pub fn record(&mut self, us: u64) {
        let us = us.min(MAX_US);
        let i = Self::index(us);
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.grow_to(i),
        }
        self.total += 1;
        self.min = self.min.min(us);
        self.max = self.max.max(us);
    }

    /// Records the first value in bucket `i`, above every bucket allocated so far.
    #[cold]
    #[inline(never)]
    fn grow_to(&mut self, i: usize) {
        debug_assert!(i < BUCKETS);
        self.counts.resize(i + 1, 0);
        self.counts[i] = 1;
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Smallest value recorded (exact).
    pub fn min(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.min
        }
    }

    /// The value below or at which a fraction `q` of the records lie (nearest rank), as the top
    /// of its bucket but never above the largest value recorded.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::upper(i).min(self.max).max(self.min);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        let mut prev_upper = None;
        for i in 0..BUCKETS {
            let up = DelayHistogram::upper(i);
            if let Some(p) = prev_upper {
                assert_eq!(
                    DelayHistogram::index(p + 1),
                    i,
                    "value {} belongs to bucket {i}",
                    p + 1
                );
            }
            assert_eq!(DelayHistogram::index(up), i);
            prev_upper = Some(up);
        }
        assert_eq!(prev_upper, Some(MAX_US));
    }

    #[test]
    fn resolution_is_within_one_128th() {
        for v in [300u64, 1_000, 12_345, 40_000, 999_999, 3_600_000_000] {
            let up = DelayHistogram::upper(DelayHistogram::index(v));
            assert!(
                up >= v && (up - v) as f64 <= v as f64 / 128.0,
                "{v} -> {up}"
            );
        }
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut h = DelayHistogram::new();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.value_at_quantile(0.5), 50);
        assert_eq!(h.value_at_quantile(0.95), 95);
        assert_eq!(h.value_at_quantile(1.0), 100);
        assert_eq!(h.min(), 1);
        let mut h = DelayHistogram::new();
        for _ in 0..99 {
            h.record(40_000);
        }
        h.record(80_000);
        let p95 = h.value_at_quantile(0.95);
        assert!((40_000..=40_000 + 40_000 / 128).contains(&p95), "{p95}");
        assert_eq!(h.value_at_quantile(1.0), 80_000);
        assert!(DelayHistogram::new().value_at_quantile(0.5) == 0);
    }
}
