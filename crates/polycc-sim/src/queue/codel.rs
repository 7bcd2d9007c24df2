//! CoDel (RFC 8289). PLACEHOLDER: behaves as drop-tail until the CoDel control law is written.

use super::droptail::DropTail;
use super::{Limits, Queued};
use polycc::units::{Duration, Time};

pub struct CoDel<T> {
    inner: DropTail<T>,
}

impl<T: Queued> CoDel<T> {
    pub fn new(limits: Limits, _target: Duration, _interval: Duration) -> Self {
        CoDel {
            inner: DropTail::new(limits),
        }
    }
    pub fn enqueue(&mut self, now: Time, item: T, dropped: &mut impl FnMut(T)) {
        self.inner.enqueue(now, item, dropped)
    }
    pub fn dequeue(&mut self, now: Time, _dropped: &mut impl FnMut(T)) -> Option<(T, Duration)> {
        self.inner.dequeue(now)
    }
    pub fn bytes(&self) -> u64 {
        self.inner.bytes()
    }
    pub fn packets(&self) -> usize {
        self.inner.packets()
    }
}
