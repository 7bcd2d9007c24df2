//! A delay line: packets leave in FIFO order after a fixed delay, optionally with random extra
//! delay (jitter that never reorders) and ACK aggregation (release at multiples of an interval).

use super::packet::Packet;
use polycc::units::{Duration, Time};
use rand::Rng;
use std::collections::VecDeque;

pub struct Pipe {
    pub delay: Duration,
    pub jitter: Option<Duration>,
    pub aggregation: Option<Duration>,
    q: VecDeque<(Time, Packet)>,
    last_out: Time,
}

impl Pipe {
    pub fn new(delay: Duration, jitter: Option<Duration>, aggregation: Option<Duration>) -> Self {
        Pipe {
            delay,
            jitter,
            aggregation,
            q: VecDeque::new(),
            last_out: Time::ZERO,
        }
    }

    /// Adds a packet entering at `now`; returns its exit time when it became the head (so the
    /// caller schedules an event).
    pub fn push(&mut self, now: Time, p: Packet, rng: &mut impl Rng) -> Option<Time> {
        let mut out = now + self.delay;
        if let Some(j) = self.jitter {
            if j.0 > 0 {
                out += Duration(rng.gen_range(0..=j.0));
            }
        }
        if let Some(a) = self.aggregation {
            out = Time(out.0.div_ceil(a.0) * a.0);
        }
        // FIFO: never leave before the packet ahead.
        out = out.max(self.last_out);
        self.last_out = out;
        self.q.push_back((out, p));
        (self.q.len() == 1).then_some(out)
    }

    /// Removes the head if it is due.
    pub fn pop_due(&mut self, now: Time) -> Option<Packet> {
        match self.q.front() {
            Some((t, _)) if *t <= now => self.q.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    pub fn head_time(&self) -> Option<Time> {
        self.q.front().map(|(t, _)| *t)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.q.iter().map(|(_, p)| p)
    }
}
