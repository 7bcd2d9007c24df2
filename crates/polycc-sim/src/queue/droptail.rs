//! Drop-tail FIFO: an arriving packet that does not fit is dropped.

use super::{Entry, Limits, Queued};
use polycc::units::{Duration, Time};
use std::collections::VecDeque;

pub struct DropTail<T> {
    limits: Limits,
    q: VecDeque<Entry<T>>,
    bytes: u64,
}

impl<T: Queued> DropTail<T> {
    pub fn new(limits: Limits) -> Self {
        DropTail {
            limits,
            q: VecDeque::new(),
            bytes: 0,
        }
    }

    pub fn enqueue(&mut self, now: Time, item: T, dropped: &mut impl FnMut(T)) {
        let b = item.wire_bytes();
        if self.limits.would_overflow(self.bytes, self.q.len(), b) {
            dropped(item);
            return;
        }
        self.bytes += b;
        self.q.push_back(Entry {
            item,
            enqueued: now,
        });
    }

    pub fn dequeue(&mut self, now: Time) -> Option<(T, Duration)> {
        let e = self.q.pop_front()?;
        self.bytes -= e.item.wire_bytes();
        Some((e.item, now - e.enqueued))
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn packets(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct P(u64);
    impl Queued for P {
        fn wire_bytes(&self) -> u64 {
            self.0
        }
        fn flow_key(&self) -> u32 {
            0
        }
    }

    #[test]
    fn drops_what_does_not_fit() {
        let mut q = DropTail::new(Limits {
            bytes: Some(3000),
            packets: None,
        });
        let mut drops = 0;
        for _ in 0..3 {
            q.enqueue(Time(0), P(1500), &mut |_| drops += 1);
        }
        assert_eq!((q.packets(), drops), (2, 1));
        let (_, sojourn) = q.dequeue(Time(7)).unwrap();
        assert_eq!(sojourn, Duration(7));
        assert_eq!(q.bytes(), 1500);
    }

    #[test]
    fn packet_limit_counts_packets_not_bytes() {
        let mut q = DropTail::new(Limits {
            bytes: None,
            packets: Some(3),
        });
        let mut dropped = vec![];
        for size in [100, 9000, 40, 1500] {
            q.enqueue(Time(0), P(size), &mut |p| dropped.push(p.0));
        }
        assert_eq!(dropped, vec![1500]);
        assert_eq!((q.packets(), q.bytes()), (3, 9140));
    }

    #[test]
    fn serves_in_arrival_order_with_sojourn() {
        let mut q = DropTail::new(Limits {
            bytes: None,
            packets: None,
        });
        for (t, size) in [(0, 1), (5, 2), (9, 3)] {
            q.enqueue(Time(t), P(size), &mut |_| unreachable!());
        }
        let out: Vec<_> = std::iter::from_fn(|| q.dequeue(Time(20)))
            .map(|(p, s)| (p.0, s.0))
            .collect();
        assert_eq!(out, vec![(1, 20), (2, 15), (3, 11)]);
        assert_eq!(q.bytes(), 0);
    }
}
