//! A delay line: packets leave after a fixed delay, optionally with random extra delay (jitter)
//! and ACK aggregation (release at multiples of an interval). Packets leave in FIFO order unless
//! the jitter may reorder (`reorder`, as netem's jitter does): then each leaves at its own time,
//! and a packet can overtake those ahead of it. Generic over what it carries: the simulator's
//! packets and the emulator's real ones.

use polycc::units::{Duration, Time};
use rand::Rng;
use std::collections::VecDeque;

pub struct Pipe<T> {
    pub delay: Duration,
    pub jitter: Option<Duration>,
    pub aggregation: Option<Duration>,
    /// Whether a packet may leave before one that entered earlier (jitter only).
    pub reorder: bool,
    /// Packets by exit time (ties in entry order).
    q: VecDeque<(Time, T)>,
    last_out: Time,
    /// The time of the one pending exit event the caller was asked to schedule.
    event: Option<Time>,
}

impl<T> Pipe<T> {
    pub fn new(
        delay: Duration,
        jitter: Option<Duration>,
        aggregation: Option<Duration>,
        reorder: bool,
    ) -> Self {
        Pipe {
            delay,
            jitter,
            aggregation,
            reorder,
            q: VecDeque::new(),
            last_out: Time::ZERO,
            event: None,
        }
    }

    /// Adds a packet entering at `now`; returns its exit time when it leaves before every
    /// packet already inside, so the caller schedules an exit event for it.
    #[inline]
    pub fn push(&mut self, now: Time, p: T, rng: &mut impl Rng) -> Option<Time> {
        let mut out = now + self.delay;
        if let Some(j) = self.jitter {
            if j.0 > 0 {
                out += Duration(rng.gen_range(0..=j.0));
            }
        }
        if let Some(a) = self.aggregation {
            out = Time(out.0.div_ceil(a.0) * a.0);
        }
        if self.reorder {
            // After every packet leaving at or before `out`: the search runs from the back,
            // where a new packet usually belongs.
            let at = self.q.len() - self.q.iter().rev().take_while(|(t, _)| *t > out).count();
            self.q.insert(at, (out, p));
        } else {
            // FIFO: never leave before the packet ahead.
            out = out.max(self.last_out);
            self.last_out = out;
            self.q.push_back((out, p));
        }
        if self.event.is_some_and(|t| t <= out) {
            return None;
        }
        self.event = Some(out);
        Some(out)
    }

    /// Whether the exit event at `now` is the one pending (a reordering line can leave an
    /// earlier-scheduled, later event behind, which is then stale); marks it taken.
    pub fn take_event(&mut self, now: Time) -> bool {
        if self.event != Some(now) {
            return false;
        }
        self.event = None;
        true
    }

    /// The time of the next exit, after the due packets left: the caller schedules it.
    pub fn schedule_next(&mut self) -> Option<Time> {
        self.event = self.head_time();
        self.event
    }

    /// Removes the head if it is due.
    pub fn pop_due(&mut self, now: Time) -> Option<T> {
        match self.q.front() {
            Some((t, _)) if *t <= now => self.q.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    pub fn head_time(&self) -> Option<Time> {
        self.q.front().map(|(t, _)| *t)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.q.iter().map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::packet::{Kind, Packet};
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn packet(pn: u64) -> Packet {
        Packet {
            flow: 0,
            kind: Kind::Data,
            hop: 0,
            wire_bytes: 1500,
            ack_delay_ns: 0,
            pn,
            seg: pn,
            sent: Time::ZERO,
            queue_ns: 0,
            log_pos: 0,
        }
    }

    /// Pushes packets 0..n one per ms through a 10 ms line with up to 30 ms of jitter and drains
    /// it as the engine does; returns the packet numbers in exit order and the events taken.
    fn drain(reorder: bool) -> (Vec<u64>, usize) {
        let mut pipe = Pipe::new(
            Duration::from_millis(10),
            Some(Duration::from_millis(30)),
            None,
            reorder,
        );
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut events: Vec<Time> = Vec::new();
        for pn in 0..50 {
            let now = Time(pn * 1_000_000);
            if let Some(t) = pipe.push(now, packet(pn), &mut rng) {
                events.push(t);
            }
        }
        let (mut order, mut taken) = (Vec::new(), 0);
        while !events.is_empty() {
            events.sort();
            let now = events.remove(0);
            if !pipe.take_event(now) {
                continue;
            }
            taken += 1;
            while let Some(p) = pipe.pop_due(now) {
                order.push(p.pn);
            }
            if let Some(t) = pipe.schedule_next() {
                events.push(t);
            }
        }
        (order, taken)
    }

    #[test]
    fn jitter_keeps_fifo_order_unless_it_may_reorder() {
        let (fifo, _) = drain(false);
        assert_eq!(fifo, (0..50).collect::<Vec<_>>());
        let (reordered, taken) = drain(true);
        // Every packet leaves once, some before packets that entered earlier.
        let mut sorted = reordered.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert!(
            reordered.windows(2).filter(|w| w[1] < w[0]).count() > 5,
            "{reordered:?}"
        );
        // Superseded exit events are skipped: at most one event is taken per exit time.
        assert!(taken <= 50, "{taken} events taken for 50 packets");
    }
}
