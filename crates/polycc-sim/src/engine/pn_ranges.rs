//! The packet numbers a receiver holds, kept two ways: as sorted disjoint ranges (what a QUIC ACK
//! frame reports, RFC 9000 §19.3), and as an append-only log of arrival runs from which the
//! sender reads exactly what one ACK covered, however later arrivals reshape the ranges.
//!
//! A run is a stretch of packet numbers that arrived one after the other, each one above
//! everything before it; any other arrival (a gap, or a late packet filling a hole) starts a new
//! run. Only the last run grows, and only while it holds the largest packet number, so an ACK
//! sent when the log had runs `0..=i` and the largest was `L` covered exactly those runs with
//! run `i` cut at `L` (`covered_end`), whatever arrived after it was sent.

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
    /// Inclusive arrival runs, in arrival order.
    runs: Vec<(u64, u64)>,
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

    /// The arrival runs, oldest first.
    pub fn runs(&self) -> &[(u64, u64)] {
        &self.runs
    }

    /// The last packet number of run `idx` that an ACK covering runs up to `idx` with largest
    /// `largest` acknowledged (the run may have grown since).
    pub fn covered_end(runs: &[(u64, u64)], idx: usize, largest: u64) -> Option<u64> {
        runs.get(idx).map(|r| r.1.min(largest))
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
        assert_eq!(r.runs(), &[(0, 3)]);
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
            r.runs(),
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
        let (idx, largest) = (r.runs().len() - 1, r.largest().unwrap_or(0));
        assert_eq!((idx, largest), (1, 6));
        // Later arrivals: the top run grows, a late packet fills a hole below it, and the
        // sorted ranges merge under the ACK's feet.
        for p in [7, 8, 3, 4] {
            r.insert(p);
        }
        assert_eq!(r.ranges(), &[(0, 8)]);
        let covered: Vec<u64> = (0..=idx)
            .flat_map(|i| {
                let end = PnRanges::covered_end(r.runs(), i, largest).unwrap_or(0);
                let start = r.runs()[i].0;
                start..=end
            })
            .collect();
        assert_eq!(covered, vec![0, 1, 2, 5, 6]);
        // An ACK sent after the late packets covers them, in their own runs.
        let idx2 = r.runs().len() - 1;
        assert_eq!(r.runs()[idx2], (4, 4));
        assert_eq!(PnRanges::covered_end(r.runs(), idx2, 8), Some(4));
    }
}
