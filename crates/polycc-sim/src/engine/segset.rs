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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
