//! A set of segment indices that is dense at the bottom: everything below `cum` is in the set,
//! and members above it are kept in a bit ring. Insert and lookup are O(1) amortised.

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct SegSet {
    /// Every index below `cum` is present.
    cum: u64,
    /// Bit i of word w stands for index cum_base + 64·w + i, where cum_base = cum rounded down to
    /// a multiple of 64.
    words: VecDeque<u64>,
    base: u64,
}

impl SegSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything below this index is present.
    pub fn cumulative(&self) -> u64 {
        self.cum
    }

    /// Members above `cumulative()` exist: there is a hole below them.
    pub fn has_hole(&self) -> bool {
        !self.words.is_empty()
    }

    pub fn contains(&self, i: u64) -> bool {
        if i < self.cum {
            return true;
        }
        let off = i - self.base;
        let w = (off / 64) as usize;
        w < self.words.len() && self.words[w] & (1 << (off % 64)) != 0
    }

    /// Inserts `i`; true when it was not present.
    pub fn insert(&mut self, i: u64) -> bool {
        if self.words.is_empty() {
            // No members above `cum`: the in-order case needs no bit ring at all.
            if i == self.cum {
                self.cum += 1;
                return true;
            }
            self.base = self.cum & !63;
        }
        if self.contains(i) {
            return false;
        }
        let off = i - self.base;
        let w = (off / 64) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (off % 64);
        self.advance();
        true
    }

    fn advance(&mut self) {
        loop {
            let off = self.cum - self.base;
            let w = (off / 64) as usize;
            let Some(&word) = self.words.get(w) else {
                return;
            };
            let bit = off % 64;
            let ones = (!(word >> bit)).trailing_zeros() as u64; // run of present bits from cum
            let ones = ones.min(64 - bit);
            self.cum += ones;
            if bit + ones < 64 {
                break;
            }
            // The front word is full from cum's position on: drop fully-covered words.
        }
        while self.cum - self.base >= 64 && !self.words.is_empty() {
            self.words.pop_front();
            self.base += 64;
        }
        // Nothing left above `cum`: drop the ring so in-order inserts take the fast path.
        if self.words.len() == 1 && self.words[0] >> (self.cum - self.base) == 0 {
            self.words.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_then_holes_after_a_long_run() {
        let mut s = SegSet::new();
        for i in 0..1000 {
            assert!(s.insert(i));
        }
        assert!(!s.insert(999) && !s.insert(3));
        assert!(s.insert(1001));
        assert_eq!(s.cumulative(), 1000);
        assert!(s.contains(1001) && !s.contains(1000) && !s.contains(1002));
        assert!(s.insert(1000));
        assert_eq!(s.cumulative(), 1002);
        assert!(s.insert(1002));
        assert_eq!(s.cumulative(), 1003);
    }

    #[test]
    fn tracks_holes_and_cumulative() {
        let mut s = SegSet::new();
        assert!(s.insert(0));
        assert!(s.insert(2));
        assert_eq!(s.cumulative(), 1);
        assert!(!s.insert(2));
        assert!(s.insert(1));
        assert_eq!(s.cumulative(), 3);
        for i in 3..200 {
            if i != 130 {
                s.insert(i);
            }
        }
        assert_eq!(s.cumulative(), 130);
        assert!(s.contains(131) && !s.contains(130));
        s.insert(130);
        assert_eq!(s.cumulative(), 200);
    }
}
