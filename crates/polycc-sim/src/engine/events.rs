//! The event queue: events ordered by (time, insertion sequence), so simultaneous events run in
//! the order they were scheduled and every run is reproducible. Two binary heaps hold them: the
//! flows' far timers in one, every other event in the other (`EventQueue`).

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

impl Ev {
    /// A flow's loss-detection, controller, delayed-ACK or SYN timer: one or more per flow,
    /// mostly due far ahead (a probe timeout is some round trips away) and mostly moved later
    /// before it fires. They wait in a heap of their own, so that the events due soon (delay
    /// lines, links, pacing: nearly all events) sift through a heap of a few entries instead of
    /// one a thousand flows' timers deep.
    #[inline]
    fn is_far(self) -> bool {
        matches!(
            self,
            Ev::LossTimer(_) | Ev::CcTimer(_) | Ev::AckTimer(_) | Ev::SynTimer(_)
        )
    }
}

/// Which heap holds the event `pop` returned last and has not yet removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Consumed {
    #[default]
    Neither,
    Near,
    Far,
}

/// Two heaps, one for the flows' far timers (`Ev::is_far`) and one for every other event; `pop`
/// takes the earlier of their tops. Keys are unique (the sequence), so the events come out in
/// the order of one heap holding them all.
pub struct EventQueue {
    near: BinaryHeap<Item>,
    far: BinaryHeap<Item>,
    seq: u64,
    /// The top `pop` returned is the event being dispatched and is already consumed. It is
    /// removed lazily: the handler's first push into its heap overwrites it and sifts down
    /// once, instead of a pop and a push (most handlers schedule exactly one follow-up event: a
    /// delay line's next head, a link's next transmission).
    consumed: Consumed,
    /// The key of `far`'s top (`u128::MAX` when empty): `pop` compares one integer with it.
    far_next: u128,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            near: BinaryHeap::new(),
            far: BinaryHeap::new(),
            seq: 0,
            consumed: Consumed::Neither,
            far_next: u128::MAX,
        }
    }
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        let item = Item {
            key: (t.0 as u128) << 64 | self.seq as u128,
            ev,
        };
        // A consumed top stays until a push into its own heap overwrites it or `pop` removes it.
        if ev.is_far() {
            if self.consumed == Consumed::Far {
                self.consumed = Consumed::Neither;
                if let Some(mut top) = self.far.peek_mut() {
                    *top = item;
                }
            } else {
                self.far.push(item);
            }
            self.far_next = Self::top_key(&self.far);
            return;
        }
        if self.consumed == Consumed::Near {
            self.consumed = Consumed::Neither;
            if let Some(mut top) = self.near.peek_mut() {
                *top = item;
                return;
            }
        }
        self.near.push(item);
    }

    fn top_key(heap: &BinaryHeap<Item>) -> u128 {
        heap.peek().map_or(u128::MAX, |i| i.key)
    }

    fn remove_consumed(&mut self) {
        match std::mem::take(&mut self.consumed) {
            Consumed::Neither => {}
            Consumed::Near => {
                self.near.pop();
            }
            Consumed::Far => {
                self.far.pop();
                self.far_next = Self::top_key(&self.far);
            }
        }
    }

    pub fn pop(&mut self) -> Option<(Time, Ev)> {
        self.remove_consumed();
        let (top, from) = match self.near.peek() {
            Some(n) if n.key < self.far_next => (n, Consumed::Near),
            _ => (self.far.peek()?, Consumed::Far),
        };
        self.consumed = from;
        Some((top.time(), top.ev))
    }

    /// Puts back the event `pop` just returned, undispatched: the next `pop` returns it again.
    /// (It is still its heap's top, as `pop` removes lazily.)
    pub fn unpop(&mut self) {
        debug_assert!(self.consumed != Consumed::Neither, "unpop without a pop");
        self.consumed = Consumed::Neither;
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

    /// The far timers' heap and the other events' heap give one order: by time, then by the
    /// order pushed, whichever heap an event waits in, also when a handler pushes into the other
    /// heap than the one its event came from.
    #[test]
    fn both_heaps_give_one_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), Ev::LossTimer(1));
        q.push(Time(5), Ev::Pipe(0));
        q.push(Time(3), Ev::AckTimer(2));
        q.push(Time(7), Ev::SenderWake(3));
        assert_eq!(q.pop(), Some((Time(3), Ev::AckTimer(2))));
        // A near push while the far top is consumed; then a far push overwrites it.
        q.push(Time(5), Ev::LinkDone(4));
        q.push(Time(6), Ev::CcTimer(5));
        assert_eq!(q.pop(), Some((Time(5), Ev::LossTimer(1))));
        q.unpop();
        assert_eq!(q.pop(), Some((Time(5), Ev::LossTimer(1))));
        assert_eq!(q.pop(), Some((Time(5), Ev::Pipe(0))));
        // A far push while the near top is consumed leaves it consumed.
        q.push(Time(5), Ev::SynTimer(6));
        assert_eq!(q.pop(), Some((Time(5), Ev::LinkDone(4))));
        assert_eq!(q.pop(), Some((Time(5), Ev::SynTimer(6))));
        assert_eq!(q.pop(), Some((Time(6), Ev::CcTimer(5))));
        assert_eq!(q.pop(), Some((Time(7), Ev::SenderWake(3))));
        assert_eq!(q.pop(), None);
        q.push(Time(9), Ev::LossTimer(7));
        assert_eq!(q.pop(), Some((Time(9), Ev::LossTimer(7))));
        assert_eq!(q.pop(), None);
    }

    /// Against one reference heap: random pushes of both kinds, pops and unpops, with the
    /// handler's pushes between pops as the engine does them.
    #[test]
    fn same_order_as_one_heap() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for _ in 0..20_000 {
            for _ in 0..rng.gen_range(0..3) {
                let t = now + rng.gen_range(0..50);
                let id = rng.gen_range(0..100);
                let ev = if rng.gen_bool(0.4) {
                    Ev::LossTimer(id)
                } else {
                    Ev::Pipe(id)
                };
                q.push(Time(t), ev);
                seq += 1;
                reference.push(Item {
                    key: (t as u128) << 64 | seq as u128,
                    ev,
                });
            }
            let got = q.pop();
            if got.is_some() && rng.gen_bool(0.05) {
                q.unpop();
                assert_eq!(q.pop(), got);
            }
            let want = reference.pop().map(|i| (i.time(), i.ev));
            assert_eq!(got, want);
            if let Some((t, _)) = got {
                now = t.0;
            }
        }
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
