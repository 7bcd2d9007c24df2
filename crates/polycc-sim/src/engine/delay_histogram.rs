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
//!
//! A flow's histograms count values in batches of `PENDING` (`record`): a record appends to a
//! buffer of one cache line in the histogram itself, and every `PENDING`-th counts the batch
//! into the buckets (`settle` counts the rest before the summary reads them).
//! With many flows each packet otherwise touched two bucket lines, on two pages of their own, in
//! state that had long left the caches: at 1 000 flows those were 2 of the 73 first-level data
//! cache misses per delivered packet and 1.06 of the 1.7 misses of a simulated 2 048-entry TLB.
//! A flow's successive delays are close, so a batch falls into a few neighbouring buckets. A
//! link's histogram, one per link and in the caches anyway, counts each value at once
//! (`record_now`).

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

use std::borrow::Cow;
use std::collections::BTreeMap;

/// Values buffered before they are counted: with the count, one cache line.
const PENDING: usize = 15;

/// Values recorded but not counted yet, in one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Pending {
    values: [u32; PENDING],
    len: u32,
}

#[derive(Clone, Debug)]
pub struct DelayHistogram {
    /// Recorded values not yet in `counts`, `total`, `min` and `max`; readers count them in.
    pending: Pending,
    /// Buckets up to the largest index counted (those above count zero), in 32 bits: a batch's
    /// values spread over a few dozen buckets, and at a thousand flows each line of them is a
    /// cache miss; 32-bit counts put 16 buckets in a line instead of 8 (BENCHMARKS.md, issue 15).
    counts: Vec<u32>,
    /// What the buckets that wrapped around 2^32 hold beyond their 32 bits (rare: 2^32 values
    /// in one bucket of one flow). Boxed: a map inline would take the histogram from two cache
    /// lines to three.
    #[allow(clippy::box_collection)]
    carries: Option<Box<BTreeMap<usize, u64>>>,
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
            pending: Pending::default(),
            counts: Vec::new(),
            carries: None,
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

    /// Records a delay given in microseconds, counted with the next batch.
    #[inline]
    pub fn record(&mut self, us: u64) {
        let p = &mut self.pending;
        if let Some(slot) = p.values.get_mut(p.len as usize) {
            *slot = us.min(MAX_US) as u32;
            p.len += 1;
        }
        if p.len as usize == PENDING {
            self.flush();
        }
    }

    /// Records a delay given in microseconds, counted at once.
    #[inline]
    pub fn record_now(&mut self, us: u64) {
        self.count(us.min(MAX_US));
    }

    /// Counts the pending values, so that reading needs no copy.
    pub fn settle(&mut self) {
        if self.pending.len > 0 {
            self.flush();
        }
    }

    /// Counts the pending values.
    #[inline(never)]
    fn flush(&mut self) {
        let len = std::mem::replace(&mut self.pending.len, 0) as usize;
        for i in 0..len.min(PENDING) {
            let us = self.pending.values[i];
            self.count(us as u64);
        }
    }

    /// This histogram with its pending values counted (a copy when some are pending: `settle`
    /// first).
    fn settled(&self) -> Cow<'_, Self> {
        if self.pending.len == 0 {
            Cow::Borrowed(self)
        } else {
            let mut h = self.clone();
            h.flush();
            Cow::Owned(h)
        }
    }

    fn count(&mut self, us: u64) {
        let i = Self::index(us);
        match self.counts.get_mut(i) {
            Some(c) if *c < u32::MAX => *c += 1,
            Some(_) => self.carry(i),
            None => self.grow_to(i),
        }
        self.total += 1;
        self.min = self.min.min(us);
        self.max = self.max.max(us);
    }

    /// Counts one more value in bucket `i`, whose 32-bit count is full: it wraps to zero and
    /// the carry keeps the 2^32.
    #[cold]
    #[inline(never)]
    fn carry(&mut self, i: usize) {
        self.counts[i] = 0;
        *self.carries.get_or_insert_default().entry(i).or_default() += 1 << 32;
    }

    /// The count of bucket `i`, whose 32-bit part is `c`.
    #[inline]
    fn bucket(&self, i: usize, c: u32) -> u64 {
        let carry = self.carries.as_ref().and_then(|m| m.get(&i).copied());
        c as u64 + carry.unwrap_or(0)
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
        self.total == 0 && self.pending.len == 0
    }

    /// Smallest value recorded (exact).
    pub fn min(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.settled().min
        }
    }

    /// The value below or at which a fraction `q` of the records lie (nearest rank), as the top
    /// of its bucket but never above the largest value recorded.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.values_at_quantiles([q])[0]
    }

    /// `value_at_quantile` of each of `qs`, given in increasing order, in one pass over the
    /// buckets (a summary reads three percentiles of each of a thousand flows' histograms, and
    /// the buckets below the flow's delays, a thousand of them at 40 ms, are most of each pass).
    pub fn values_at_quantiles<const N: usize>(&self, qs: [f64; N]) -> [u64; N] {
        let mut out = [0; N];
        if self.is_empty() {
            return out;
        }
        let h = self.settled();
        let ranks = qs.map(|q| ((q.clamp(0.0, 1.0) * h.total as f64).ceil() as u64).max(1));
        debug_assert!(ranks.is_sorted(), "quantiles in increasing order");
        let mut next = 0;
        let mut seen = 0;
        for (i, &c) in h.counts.iter().enumerate() {
            seen += match &h.carries {
                None => c as u64,
                Some(_) => h.bucket(i, c),
            };
            while next < N && seen >= ranks[next] {
                out[next] = Self::upper(i).min(h.max).max(h.min);
                next += 1;
            }
            if next == N {
                return out;
            }
        }
        for v in &mut out[next..] {
            *v = h.max;
        }
        out
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
    fn pending_values_count_in_every_reading() {
        // Counts of 1 .. 3 batches and partial ones: the same readings as values counted at once.
        for n in [1u64, 14, 15, 16, 29, 30, 31, 100] {
            let mut h = DelayHistogram::new();
            let mut counted = DelayHistogram::new();
            for k in 0..n {
                let us = 40_000 + (k * 7_919) % 50_000;
                h.record(us);
                counted.record_now(us);
            }
            assert_eq!(h.pending.len as u64, n % PENDING as u64);
            assert!(!h.is_empty());
            assert_eq!(h.min(), counted.min, "{n}");
            for q in [0.0, 0.5, 0.95, 0.99, 1.0] {
                let expected = counted.value_at_quantile(q);
                assert_eq!(h.value_at_quantile(q), expected, "{n} values, q {q}");
            }
            let mut settled = h.clone();
            settled.settle();
            assert_eq!(settled.pending.len, 0);
            assert_eq!(settled.counts, counted.counts);
            assert_eq!(
                (settled.total, settled.min, settled.max),
                (counted.total, counted.min, counted.max)
            );
        }
        let mut h = DelayHistogram::new();
        h.record(u64::MAX); // clamped before it is buffered as a u32
        assert_eq!(h.value_at_quantile(1.0), MAX_US);
        assert_eq!(std::mem::size_of::<Pending>(), 64);
    }

    #[test]
    fn a_full_bucket_carries_into_64_bits() {
        let mut h = DelayHistogram::new();
        h.record_now(100);
        h.record_now(300);
        // As if 2^32 - 1 values of 100 µs had been counted.
        h.counts[100] = u32::MAX;
        h.total = u32::MAX as u64 + 1;
        h.record_now(100);
        h.record_now(100);
        assert_eq!(h.counts[100], 1);
        assert_eq!(h.bucket(100, h.counts[100]), (1 << 32) + 1);
        // 2^32 + 2 values in all: 100 µs up to the rank of the last of them, 300 µs above.
        assert_eq!(h.value_at_quantile(1.0 - 1.5 / h.total as f64), 100);
        assert_eq!(h.value_at_quantile(1.0), 300);
        assert_eq!(std::mem::size_of::<DelayHistogram>(), 128);
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

    /// One pass for several quantiles reads what one pass per quantile reads, also for equal
    /// quantiles, ranks past the last bucket and a carried bucket.
    #[test]
    fn several_quantiles_in_one_pass() {
        let mut h = DelayHistogram::new();
        for k in 0..1_000u64 {
            h.record(30_000 + (k * 7_919) % 60_000);
        }
        h.record(5);
        let qs = [0.0, 0.001, 0.5, 0.5, 0.95, 0.99, 0.999, 1.0];
        assert_eq!(
            h.values_at_quantiles(qs),
            qs.map(|q| h.value_at_quantile(q))
        );
        let [p50, p95, p99] = h.values_at_quantiles([0.5, 0.95, 0.99]);
        assert!(p50 < p95 && p95 < p99 && p99 <= 90_000, "{p50} {p95} {p99}");
        assert_eq!(
            DelayHistogram::new().values_at_quantiles([0.5, 0.99]),
            [0, 0]
        );
        h.counts[300] = u32::MAX;
        h.total += u32::MAX as u64;
        h.record_now(h.max);
        assert!(h.carries.is_none());
        h.counts[300] = u32::MAX;
        h.record_now(DelayHistogram::upper(300));
        assert!(h.carries.is_some());
        assert_eq!(
            h.values_at_quantiles(qs),
            qs.map(|q| h.value_at_quantile(q))
        );
    }
}
