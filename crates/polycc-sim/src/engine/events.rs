//! The event queue: a binary heap ordered by (time, insertion sequence), so simultaneous events
//! run in the order they were scheduled and every run is reproducible.

use polycc::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an event; the u32 is the index of the entity it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A link direction finished transmitting its packet.
    LinkDone(u32),
    /// The head of a delay line is due.
    Pipe(u32),
    /// A sender may send (pacing).
    SenderWake(u32),
    /// A receiver's delayed-ACK timer.
    AckTimer(u32),
    /// A sender's loss-detection / probe timer.
    LossTimer(u32),
    /// A controller's own timer.
    CcTimer(u32),
    /// A flow starts.
    Start(u32),
    /// A flow's SYN may have timed out (`engine::handshake`).
    SynTimer(u32),
    /// A flow stops sending new data.
    Stop(u32),
    /// The application of a flow acts (new web transfer, CBR / Poisson packet).
    App(u32),
    /// Time-series bin boundary.
    Sample,
    /// A link's next loss / delay change (schedule points that set them) takes effect.
    LinkChange(u32),
    /// A flow's application changes its intent: index into the simulator's intent changes.
    IntentChange(u32),
}

/// A scheduled event. `key` is the time in its high 64 bits and the insertion sequence in its
/// low 64, so the heap orders by (time, sequence) with one integer comparison.
#[derive(Clone, Copy, Debug)]
struct Item {
    key: u128,
    ev: Ev,
}

impl Item {
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Item>,
    seq: u64,
    /// The heap's top is the event being dispatched and is already consumed. It is removed
    /// lazily: the handler's first push overwrites it and sifts down once, instead of a pop
    /// and a push (most handlers schedule exactly one follow-up event: a delay line's next
    /// head, a link's next transmission).
    top_consumed: bool,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        let item = Item {
            key: (t.0 as u128) << 64 | self.seq as u128,
            ev,
        };
        if self.top_consumed {
            self.top_consumed = false;
            if let Some(mut top) = self.heap.peek_mut() {
                *top = item;
                return;
            }
        }
        self.heap.push(item);
    }

    pub fn pop(&mut self) -> Option<(Time, Ev)> {
        if self.top_consumed {
            self.heap.pop();
        }
        let top = self.heap.peek();
        self.top_consumed = top.is_some();
        top.map(|i| (i.time(), i.ev))
    }

    /// Puts back the event `pop` just returned, undispatched: the next `pop` returns it again.
    /// (It is still the heap's top, as `pop` removes lazily.)
    pub fn unpop(&mut self) {
        debug_assert!(self.top_consumed, "unpop without a pop");
        self.top_consumed = false;
    }
}

/// A re-armable timer that avoids a heap push per re-arm: a pending event earlier than the
/// deadline re-schedules itself when it fires; stale events are recognised and ignored.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: Option<Time>,
    scheduled: Option<Time>,
}

impl Timer {
    pub fn arm(&mut self, t: Time, q: &mut EventQueue, ev: Ev) {
        self.deadline = Some(t);
        if self.scheduled.is_none_or(|s| t < s) {
            q.push(t, ev);
            self.scheduled = Some(t);
        }
    }

    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Called when `ev` fires at `now`; true when the deadline is due (and consumes it).
    pub fn fire(&mut self, now: Time, q: &mut EventQueue, ev: Ev) -> bool {
        if self.scheduled != Some(now) {
            return false;
        }
        self.scheduled = None;
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                true
            }
            Some(d) => {
                q.push(d, ev);
                self.scheduled = Some(d);
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_among_equal_times() {
        let mut q = EventQueue::default();
        q.push(Time(5), Ev::Sample);
        q.push(Time(1), Ev::App(1));
        q.push(Time(5), Ev::App(2));
        assert_eq!(q.pop(), Some((Time(1), Ev::App(1))));
        assert_eq!(q.pop(), Some((Time(5), Ev::Sample)));
        assert_eq!(q.pop(), Some((Time(5), Ev::App(2))));
    }

    #[test]
    fn timer_rearm_later_reuses_the_pending_event() {
        let mut q = EventQueue::default();
        let mut t = Timer::default();
        t.arm(Time(10), &mut q, Ev::LossTimer(0));
        t.arm(Time(20), &mut q, Ev::LossTimer(0)); // no second push
        let (now, ev) = q.pop().unwrap();
        assert!(!t.fire(now, &mut q, ev)); // early: re-pushed at 20
        let (now, ev) = q.pop().unwrap();
        assert_eq!(now, Time(20));
        assert!(t.fire(now, &mut q, ev));
        assert!(q.pop().is_none());
    }

    #[test]
    fn timer_rearm_earlier_makes_the_old_event_stale() {
        let mut q = EventQueue::default();
        let mut t = Timer::default();
        t.arm(Time(20), &mut q, Ev::LossTimer(0));
        t.arm(Time(10), &mut q, Ev::LossTimer(0));
        let (now, ev) = q.pop().unwrap();
        assert!(t.fire(now, &mut q, ev));
        let (now, ev) = q.pop().unwrap();
        assert!(!t.fire(now, &mut q, ev));
    }
}
