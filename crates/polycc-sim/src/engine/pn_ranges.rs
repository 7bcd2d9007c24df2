//! The packet numbers a receiver holds, kept two ways: as sorted disjoint ranges (what a QUIC ACK
//! frame reports, RFC 9000 §19.3), and as an append-only log of arrival runs from which the
//! sender reads exactly what one ACK covered, however later arrivals reshape the ranges.
//!
//! A run is a stretch of packet numbers that arrived one after the other, each one above
//! everything before it; any other arrival (a gap, or a late packet filling a hole) starts a new
//! run. Only the last run grows, and only while it holds the largest packet number, so an ACK
//! sent when the log had runs `0..=i` and the largest was `L` covered exactly those runs with
//! run `i` cut at `L` (`covered_end`), whatever arrived after it was sent.
//!
//! Runs keep their index for life, but the log is pruned at its front: once the sender's ACK
//! cursor has passed a run, no ACK can hand it anything new (`release`), so memory follows the
//! runs of the last round trip, not the age of the flow. The sorted ranges below every kept run
//! go with them: the simulated network never duplicates a packet, so a packet number below
//! what is kept that arrives again can only be late (it fills a hole), never a duplicate.

/// Runs released in one batch: pruning shifts the kept runs down, so it waits for this many.
const RELEASE_BATCH: usize = 64;

/// How an arriving packet number relates to those already held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrived {
    /// One above the largest (or packet 0 first).
    InOrder,
    /// Above the largest, leaving a hole below it.
    Gap,
    /// Below the largest, filling (part of) a hole: reordering.
    Late,
    /// Already held (nothing changes).
    Duplicate,
}

#[derive(Clone, Debug, Default)]
pub struct PnRanges {
    /// Inclusive, sorted, disjoint and not adjacent (adjacent ranges are merged).
    ranges: Vec<(u64, u64)>,
    /// Inclusive arrival runs, in arrival order; `runs[0]` has index `base`.
    runs: Vec<(u64, u64)>,
    base: usize,
}

/// The arrival runs still held, addressed by their lifelong index.
#[derive(Clone, Copy, Debug)]
pub struct Runs<'a> {
    base: usize,
    runs: &'a [(u64, u64)],
}

impl<'a> Runs<'a> {
    /// Run `idx`, if still held.
    #[inline]
    pub fn get(&self, idx: usize) -> Option<(u64, u64)> {
        self.runs.get(idx.checked_sub(self.base)?).copied()
    }

    /// The last packet number of run `idx` that an ACK covering runs up to `idx` with largest
    /// `largest` acknowledged (the run may have grown since); None once the run is released.
    #[inline]
    pub fn covered_end(&self, idx: usize, largest: u64) -> Option<u64> {
        self.get(idx).map(|r| r.1.min(largest))
    }

    /// The runs from index `from` on (none if `from` was released).
    #[inline]
    pub fn from(&self, from: usize) -> &'a [(u64, u64)] {
        match from.checked_sub(self.base) {
            Some(k) => self.runs.get(k..).unwrap_or(&[]),
            None => &[],
        }
    }

    /// The runs held, oldest first.
    #[cfg(test)]
    pub fn held(&self) -> &'a [(u64, u64)] {
        self.runs
    }

    /// Index of the newest run (None before the first arrival).
    pub fn last_index(&self) -> Option<usize> {
        (self.base + self.runs.len())
            .checked_sub(1)
            .filter(|_| !self.runs.is_empty())
    }
}

impl PnRanges {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn largest(&self) -> Option<u64> {
        self.ranges.last().map(|r| r.1)
    }

    /// The ranges an ACK frame would report, lowest first (the sender reads runs instead).
    #[cfg(test)]
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// The arrival runs still held, oldest first.
    #[inline]
    pub fn runs(&self) -> Runs<'_> {
        Runs {
            base: self.base,
            runs: &self.runs,
        }
    }

    /// Runs and ranges held (for tests of boundedness).
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        (self.runs.len(), self.ranges.len())
    }

    /// The sender's ACK cursor is at run `cursor`: runs before it are consumed and no ACK can
    /// hand them on again. They are dropped in batches, with the sorted ranges that end below
    /// every packet number of the runs kept.
    #[inline]
    pub fn release(&mut self, cursor: usize) {
        if cursor.saturating_sub(self.base) >= RELEASE_BATCH {
            self.release_now(cursor);
        }
    }

    #[cold]
    #[inline(never)]
    fn release_now(&mut self, cursor: usize) {
        let n = (cursor - self.base).min(self.runs.len());
        self.runs.drain(..n);
        self.base += n;
        if let Some(floor) = self.runs.iter().map(|r| r.0).min() {
            // The top range ends at the largest, which some kept run holds: one stays.
            let drop = self.ranges.partition_point(|r| r.1 < floor);
            self.ranges.drain(..drop);
        }
    }

    #[inline]
    pub fn insert(&mut self, pn: u64) -> Arrived {
        // The common case, one above the largest with the last run on top, touches two ends.
        if let (Some(top), Some(run)) = (self.ranges.last_mut(), self.runs.last_mut()) {
            if pn == top.1 + 1 && run.1 == top.1 {
                top.1 = pn;
                run.1 = pn;
                return Arrived::InOrder;
            }
        }
        self.insert_other(pn)
    }

    #[cold]
    #[inline(never)]
    fn insert_other(&mut self, pn: u64) -> Arrived {
        let Some(top) = self.ranges.last_mut() else {
            self.ranges.push((pn, pn));
            self.runs.push((pn, pn));
            return if pn == 0 {
                Arrived::InOrder
            } else {
                Arrived::Gap
            };
        };
        if pn == top.1 + 1 {
            // In order, after a late packet: a new run.
            top.1 = pn;
            self.runs.push((pn, pn));
            return Arrived::InOrder;
        }
        if pn > top.1 {
            self.ranges.push((pn, pn));
            self.runs.push((pn, pn));
            return Arrived::Gap;
        }
        self.insert_below(pn)
    }

    /// A packet number at or below the largest: a duplicate, or a late packet that shrinks,
    /// splits or closes a hole. Late packets are usually recent, so the search and the insert
    /// touch the end of the vector.
    fn insert_below(&mut self, pn: u64) -> Arrived {
        // The first range ending at or above `pn` exists, as the last one ends above it.
        let i = self.ranges.partition_point(|r| r.1 < pn);
        if self.ranges[i].0 <= pn {
            return Arrived::Duplicate;
        }
        let joins_below = i > 0 && self.ranges[i - 1].1 + 1 == pn;
        let joins_above = pn + 1 == self.ranges[i].0;
        match (joins_below, joins_above) {
            (true, true) => {
                self.ranges[i - 1].1 = self.ranges[i].1;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].1 = pn,
            (false, true) => self.ranges[i].0 = pn,
            (false, false) => self.ranges.insert(i, (pn, pn)),
        }
        self.runs.push((pn, pn));
        Arrived::Late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(pns: &[u64]) -> (PnRanges, Vec<Arrived>) {
        let mut r = PnRanges::new();
        let kinds = pns.iter().map(|&p| r.insert(p)).collect();
        (r, kinds)
    }

    #[test]
    fn in_order_packets_make_one_range_and_one_run() {
        let (r, kinds) = fill(&[0, 1, 2, 3]);
        assert_eq!(r.ranges(), &[(0, 3)]);
        assert_eq!(r.runs().held(), &[(0, 3)]);
        assert!(kinds.iter().all(|&k| k == Arrived::InOrder));
    }

    #[test]
    fn late_packets_shrink_split_and_close_holes() {
        // Hole 2..=6 after 0, 1, then 7.
        let (mut r, kinds) = fill(&[0, 1, 7]);
        assert_eq!(kinds[2], Arrived::Gap);
        assert_eq!(r.ranges(), &[(0, 1), (7, 7)]);
        // Split the hole in the middle.
        assert_eq!(r.insert(4), Arrived::Late);
        assert_eq!(r.ranges(), &[(0, 1), (4, 4), (7, 7)]);
        // Shrink from below and from above.
        assert_eq!(r.insert(2), Arrived::Late);
        assert_eq!(r.insert(6), Arrived::Late);
        assert_eq!(r.ranges(), &[(0, 2), (4, 4), (6, 7)]);
        // Close both remaining holes: everything merges.
        assert_eq!(r.insert(3), Arrived::Late);
        assert_eq!(r.ranges(), &[(0, 4), (6, 7)]);
        assert_eq!(r.insert(5), Arrived::Late);
        assert_eq!(r.ranges(), &[(0, 7)]);
        assert_eq!(r.insert(5), Arrived::Duplicate);
        assert_eq!(r.insert(0), Arrived::Duplicate);
        // Runs keep arrival order; in-order growth after late packets starts a new run.
        assert_eq!(r.insert(8), Arrived::InOrder);
        assert_eq!(r.insert(9), Arrived::InOrder);
        assert_eq!(
            r.runs().held(),
            &[
                (0, 1),
                (7, 7),
                (4, 4),
                (2, 2),
                (6, 6),
                (3, 3),
                (5, 5),
                (8, 9)
            ]
        );
        assert_eq!(r.largest(), Some(9));
    }

    #[test]
    fn an_ack_covers_what_was_there_when_it_was_sent() {
        let mut r = PnRanges::new();
        for p in [0, 1, 2, 5, 6] {
            r.insert(p);
        }
        // An ACK now: last run index 1, largest 6.
        let (idx, largest) = (r.runs().last_index().unwrap_or(0), r.largest().unwrap_or(0));
        assert_eq!((idx, largest), (1, 6));
        // Later arrivals: the top run grows, a late packet fills a hole below it, and the
        // sorted ranges merge under the ACK's feet.
        for p in [7, 8, 3, 4] {
            r.insert(p);
        }
        assert_eq!(r.ranges(), &[(0, 8)]);
        let covered: Vec<u64> = (0..=idx)
            .flat_map(|i| {
                let end = r.runs().covered_end(i, largest).unwrap_or(0);
                let start = r.runs().get(i).map_or(0, |run| run.0);
                start..=end
            })
            .collect();
        assert_eq!(covered, vec![0, 1, 2, 5, 6]);
        // An ACK sent after the late packets covers them, in their own runs.
        let idx2 = r.runs().last_index().unwrap_or(0);
        assert_eq!(r.runs().get(idx2), Some((4, 4)));
        assert_eq!(r.runs().covered_end(idx2, 8), Some(4));
    }

    #[test]
    fn released_runs_keep_their_indices_and_memory_stays_bounded() {
        // Every fourth packet lost: each loss is a hole in the ranges and a new run.
        let mut r = PnRanges::new();
        let mut pn = 0;
        for k in 0..10_000usize {
            for _ in 0..3 {
                r.insert(pn);
                pn += 1;
            }
            pn += 1;
            // The sender consumed everything up to the run before the newest.
            let last = r.runs().last_index().unwrap_or(0);
            assert_eq!(last, k);
            r.release(last);
            let (runs, ranges) = r.held();
            assert!(runs <= RELEASE_BATCH + 1 && ranges <= RELEASE_BATCH + 1);
        }
        let last = r.runs().last_index().unwrap_or(0);
        assert_eq!(r.runs().get(last), Some((pn - 4, pn - 2)));
        assert_eq!(r.runs().get(0), None);
        assert_eq!(r.runs().covered_end(last, pn - 3), Some(pn - 3));
        // A late packet below everything kept fills a hole (the network never duplicates).
        assert_eq!(r.insert(3), Arrived::Late);
        assert_eq!(r.runs().get(last + 1), Some((3, 3)));
        assert_eq!(r.insert(pn - 4 - 1), Arrived::Late);
        assert_eq!(r.insert(pn - 3), Arrived::Duplicate);
    }
}
