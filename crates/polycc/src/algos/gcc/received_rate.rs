//! The rate at which the receiver got this flow's packets, over the last 500 ms of arrivals
//! (draft-ietf-rmcat-gcc-02 §5.5: "R_hat ... measured over a T seconds window", 0.5 ≤ T ≤ 1 s).
//! GCC's decrease is relative to it, and its increase may not run far ahead of it.

use crate::units::{Bytes, Duration, Rate, Time};
use std::collections::VecDeque;

/// The draft's smallest window.
pub const WINDOW: Duration = Duration::from_millis(500);

#[derive(Clone, Debug, Default)]
pub struct ReceivedRate {
    arrivals: VecDeque<(Time, Bytes)>,
    bytes: Bytes,
    first: Option<Time>,
    newest: Option<Time>,
}

impl ReceivedRate {
    pub fn on_arrival(&mut self, arrival: Time, bytes: Bytes) {
        self.first.get_or_insert(arrival);
        let newest = self.newest.map_or(arrival, |n| n.max(arrival));
        self.newest = Some(newest);
        self.arrivals.push_back((arrival, bytes));
        self.bytes += bytes;
        while let Some(&(t, b)) = self.arrivals.front() {
            if newest.saturating_since(t) < WINDOW {
                break;
            }
            self.arrivals.pop_front();
            self.bytes -= b;
        }
    }

    /// Bytes of the last window over its length; `None` until a whole window has been seen.
    pub fn rate(&self) -> Option<Rate> {
        let (first, newest) = (self.first?, self.newest?);
        (newest.saturating_since(first) >= WINDOW)
            .then(|| Rate::from_bytes_over(self.bytes, WINDOW))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_last_half_second() {
        let mut r = ReceivedRate::default();
        // 1250 bytes every 1 ms = 10 Mbit/s for 400 ms: not a whole window yet.
        for i in 0..400 {
            r.on_arrival(Time::ZERO + Duration::from_millis(i), 1250);
        }
        assert_eq!(r.rate(), None);
        // Then 2500 bytes every 1 ms (20 Mbit/s) for 600 ms: the window holds only those.
        for i in 400..1000 {
            r.on_arrival(Time::ZERO + Duration::from_millis(i), 2500);
        }
        assert_eq!(r.rate(), Some(Rate::from_mbps(20)));
    }
}
