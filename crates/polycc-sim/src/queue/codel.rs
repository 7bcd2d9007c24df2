//! CoDel, Controlled Delay AQM (RFC 8289).
//!
//! The control law lives in [`CoDelState`], which works on any FIFO through [`CoDelSource`], so
//! FQ-CoDel runs one instance per flow over the same code. [`CoDel`] is the single-queue
//! discipline: tail drop on the byte/packet limit at enqueue, CoDel drops at dequeue.
//!
//! Where RFC 8289's pseudocode (§5) and Linux `sch_codel` differ, the choice is noted inline.

use super::{Entry, Limits, Queued};
use polycc::units::{Duration, Time};
use std::collections::VecDeque;

/// CoDel never drops while at most one MTU of bytes remains queued after the dequeue (RFC 8289
/// §4.2 and the `maxpacket` test in §5.3): a single packet cannot be a standing queue, and dropping
/// it would only idle the link. 1514 is Linux's `psched_mtu()` for Ethernet (1500 + 14-byte
/// header). A packet larger than that raises the threshold to its own size.
pub const CODEL_MTU_BYTES: u64 = 1514;

/// Re-entering the dropping state within this many intervals of the last scheduled drop reuses
/// the previous cycle's drop count (RFC 8289 §5.6, "the Linux version").
pub const CODEL_REENTRY_INTERVALS: u64 = 16;

/// CoDel's two parameters (RFC 8289 §4.3, §4.4; defaults 5 ms / 100 ms come from the scenario).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelParams {
    /// Acceptable standing queue delay.
    pub target: Duration,
    /// Window over which the minimum sojourn must stay above `target` before dropping; on the
    /// order of a worst-case RTT.
    pub interval: Duration,
}

impl CoDelParams {
    /// Time of the next drop: `t + interval / sqrt(count)` (RFC 8289 §4.5, control law).
    ///
    /// f64 `sqrt` is correctly rounded by IEEE 754, so this is deterministic across platforms.
    /// Linux approximates 1/sqrt with Newton steps; the difference is well below a nanosecond per
    /// microsecond of spacing.
    fn control_law(&self, t: Time, count: u32) -> Time {
        let spacing = self.interval.0 as f64 / f64::from(count.max(1)).sqrt();
        t + Duration(spacing.round() as u64)
    }
}

/// The FIFO a CoDel instance drains: pops the head and reports the bytes still queued.
pub trait CoDelSource<T> {
    /// Removes the head entry, updating the byte accounting.
    fn pop(&mut self) -> Option<Entry<T>>;
    /// Bytes queued after the last `pop`, the quantity compared with the MTU threshold.
    fn backlog_bytes(&self) -> u64;
}

/// The per-queue variables of RFC 8289 §5.2.
#[derive(Clone, Debug, Default)]
pub struct CoDelState {
    /// When the sojourn time first went (and stayed) above target, plus one interval; `None`
    /// while below target. (The RFC uses 0 as "unset"; time 0 is a valid simulated instant.)
    first_above_time: Option<Time>,
    /// Time of the next drop while in the dropping state.
    drop_next: Time,
    /// Drops since entering the dropping state; sets the drop rate through the control law.
    count: u32,
    /// `count` when the dropping state was last entered, for the re-entry rule.
    lastcount: u32,
    dropping: bool,
}

impl CoDelState {
    /// True while in the dropping state.
    pub fn is_dropping(&self) -> bool {
        self.dropping
    }

    /// Current drop count (telemetry and tests).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Pops the head of `src` and decides whether it may be dropped (RFC 8289 §5.3 `dodequeue`).
    fn pop_and_judge<T: Queued>(
        &mut self,
        p: &CoDelParams,
        now: Time,
        src: &mut impl CoDelSource<T>,
    ) -> Option<(Entry<T>, bool)> {
        let Some(e) = src.pop() else {
            self.first_above_time = None;
            return None;
        };
        let sojourn = now - e.enqueued;
        let mtu = CODEL_MTU_BYTES.max(e.item.wire_bytes());
        if sojourn < p.target || src.backlog_bytes() <= mtu {
            // Below target, or too little queued to matter: the "above target" episode ends.
            self.first_above_time = None;
            return Some((e, false));
        }
        match self.first_above_time {
            None => {
                // Sojourn must stay above target for a whole interval before acting (§4.3).
                self.first_above_time = Some(now + p.interval);
                Some((e, false))
            }
            Some(t) => Some((e, now >= t)),
        }
    }

    /// Dequeues the next packet to transmit with its sojourn time, dropping into `dropped` as the
    /// control law demands (RFC 8289 §5.5). An empty source leaves the dropping state.
    pub fn dequeue<T: Queued>(
        &mut self,
        p: &CoDelParams,
        now: Time,
        src: &mut impl CoDelSource<T>,
        dropped: &mut impl FnMut(T),
    ) -> Option<(T, Duration)> {
        let Some((mut head, ok_to_drop)) = self.pop_and_judge(p, now, src) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn fell below target (or the queue is nearly empty): stop dropping.
                self.dropping = false;
            }
            // A large backlog can make several drops due at once, hence the loop.
            while self.dropping && now >= self.drop_next {
                dropped(head.item);
                self.count = self.count.saturating_add(1);
                match self.pop_and_judge(p, now, src) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((e, ok)) => {
                        head = e;
                        if ok {
                            self.drop_next = p.control_law(self.drop_next, self.count);
                        } else {
                            self.dropping = false;
                        }
                    }
                }
            }
        } else if ok_to_drop {
            // Sojourn has been above target for an interval: drop once and enter dropping state.
            dropped(head.item);
            let next = self.pop_and_judge(p, now, src);
            self.enter_dropping(p, now);
            // As in the RFC, the state is entered even if the drop emptied the queue; the next
            // dequeue of an empty queue leaves it again.
            head = next?.0;
        }
        let sojourn = now - head.enqueued;
        Some((head.item, sojourn))
    }

    /// Enters the dropping state after the first drop of an episode, applying the count re-use
    /// rule: if the previous episode ended recently, its drop rate is a good starting point, so
    /// `count` resumes at the number of drops that episode made (RFC 8289 §5.6).
    fn enter_dropping(&mut self, p: &CoDelParams, now: Time) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        // `now - drop_next` saturates at zero when drop_next is still ahead, which counts as
        // "recent", matching Linux's signed time comparison.
        let recent = (now - self.drop_next).0 < CODEL_REENTRY_INTERVALS * p.interval.0;
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.drop_next = p.control_law(now, self.count);
        self.lastcount = self.count;
    }
}

/// A plain FIFO with byte accounting, the source a single-queue CoDel drains.
struct Fifo<'a, T> {
    q: &'a mut VecDeque<Entry<T>>,
    bytes: &'a mut u64,
}

impl<T: Queued> CoDelSource<T> for Fifo<'_, T> {
    fn pop(&mut self) -> Option<Entry<T>> {
        let e = self.q.pop_front()?;
        *self.bytes -= e.item.wire_bytes();
        Some(e)
    }
    fn backlog_bytes(&self) -> u64 {
        *self.bytes
    }
}

/// Single-queue CoDel: tail drop at the limits on enqueue, CoDel drops on dequeue.
pub struct CoDel<T> {
    limits: Limits,
    params: CoDelParams,
    state: CoDelState,
    q: VecDeque<Entry<T>>,
    bytes: u64,
}

impl<T: Queued> CoDel<T> {
    pub fn new(limits: Limits, target: Duration, interval: Duration) -> Self {
        CoDel {
            limits,
            params: CoDelParams { target, interval },
            state: CoDelState::default(),
            q: VecDeque::new(),
            bytes: 0,
        }
    }

    /// Appends `item`, or hands it to `dropped` when it does not fit (RFC 8289 §5.4: CoDel keeps
    /// the buffer's own limit as a backstop).
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

    pub fn dequeue(&mut self, now: Time, dropped: &mut impl FnMut(T)) -> Option<(T, Duration)> {
        let mut src = Fifo {
            q: &mut self.q,
            bytes: &mut self.bytes,
        };
        self.state.dequeue(&self.params, now, &mut src, dropped)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn packets(&self) -> usize {
        self.q.len()
    }
    /// The control-law state (telemetry and tests).
    pub fn state(&self) -> &CoDelState {
        &self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct P(u64, u32);
    impl Queued for P {
        fn wire_bytes(&self) -> u64 {
            1500
        }
        fn flow_key(&self) -> u32 {
            self.1
        }
    }

    const MS: u64 = 1_000_000;

    fn codel() -> CoDel<P> {
        CoDel::new(
            Limits {
                bytes: None,
                packets: Some(10_000),
            },
            Duration::from_millis(5),
            Duration::from_millis(100),
        )
    }

    #[test]
    fn tail_drops_at_the_packet_limit() {
        let mut q = CoDel::new(
            Limits {
                bytes: None,
                packets: Some(2),
            },
            Duration::from_millis(5),
            Duration::from_millis(100),
        );
        let mut drops = vec![];
        for i in 0..3 {
            q.enqueue(Time(0), P(i, 0), &mut |p| drops.push(p.0));
        }
        assert_eq!((q.packets(), q.bytes(), drops), (2, 3000, vec![2]));
    }

    /// A standing queue: 2000 packets enqueued at t = 0, one dequeue per ms. Sojourn exceeds the
    /// 5 ms target from the 6th dequeue on, so `first_above_time` = 5 ms + 100 ms and the first
    /// drop happens at the first dequeue at or after 105 ms; later drops follow
    /// `drop_next += 100 ms / sqrt(count)`.
    #[test]
    fn drop_times_follow_the_control_law() {
        let mut q = codel();
        for i in 0..2000 {
            q.enqueue(Time(0), P(i, 0), &mut |_| panic!("no tail drop"));
        }
        let mut drop_times = vec![];
        for ms in 0..400u64 {
            let now = Time(ms * MS);
            let mut n = 0;
            q.dequeue(now, &mut |_| n += 1).unwrap();
            drop_times.extend(std::iter::repeat_n(ms, n));
        }
        // Expected schedule: 105, then +100/sqrt(1)=205 (count becomes 2 after that drop), then
        // 205 + 100/sqrt(2) = 275.71 -> dequeue at 276, then 275.71 + 100/sqrt(3) = 333.45 -> 334,
        // then 333.45 + 50 = 383.45 -> 384.
        assert_eq!(drop_times, vec![105, 205, 276, 334, 384]);
        assert!(q.state().is_dropping());
        assert_eq!(q.state().count(), 5);
    }

    #[test]
    fn no_drop_while_sojourn_below_target() {
        let mut q = codel();
        // Bursts of 4 packets every 10 ms, served 1 per ms: sojourn peaks at 3 ms < 5 ms.
        let mut drops = 0;
        let mut id = 0;
        for ms in 0..10_000u64 {
            let now = Time(ms * MS);
            if ms % 10 == 0 {
                for _ in 0..4 {
                    q.enqueue(now, P(id, 0), &mut |_| drops += 1);
                    id += 1;
                }
            }
            if let Some((_, s)) = q.dequeue(now, &mut |_| drops += 1) {
                assert!(s <= Duration::from_millis(3));
            }
        }
        assert_eq!(drops, 0);
    }

    #[test]
    fn no_drop_with_only_one_mtu_queued() {
        // One packet sits for a second: its sojourn is far above target, but after dequeueing it
        // nothing is left, so CoDel never drops it.
        let mut q = codel();
        let mut drops = 0;
        for s in 0..5u64 {
            q.enqueue(Time(s * 1000 * MS), P(s, 0), &mut |_| drops += 1);
            q.dequeue(Time(s * 1000 * MS + 999 * MS), &mut |_| drops += 1)
                .unwrap();
        }
        assert_eq!(drops, 0);
    }

    /// Leaving the dropping state and re-entering within 16 intervals resumes `count` at the
    /// number of drops the previous episode made.
    #[test]
    fn reentry_reuses_the_previous_drop_count() {
        let mut q = codel();
        for i in 0..2000 {
            q.enqueue(Time(0), P(i, 0), &mut |_| ());
        }
        for ms in 0..400u64 {
            q.dequeue(Time(ms * MS), &mut |_| ()).unwrap();
        }
        // 5 drops made in this episode (see above).
        assert_eq!(q.state().count(), 5);
        // Drain until too little is queued to drop: that leaves the dropping state.
        while q.dequeue(Time(400 * MS), &mut |_| ()).is_some() {}
        assert!(!q.state().is_dropping());
        // New standing queue at 500 ms; dropping re-entered around 605 ms, which is within
        // 16 intervals of the last drop_next (~428 ms).
        for i in 0..2000 {
            q.enqueue(Time(500 * MS), P(i, 0), &mut |_| ());
        }
        let mut first_drop = None;
        for ms in 500..700u64 {
            let mut n = 0;
            q.dequeue(Time(ms * MS), &mut |_| n += 1);
            if n > 0 && first_drop.is_none() {
                first_drop = Some(ms);
                // delta = count - lastcount = 5 - 1 = 4 > 1, so count restarts at 4.
                assert_eq!(q.state().count(), 4);
            }
        }
        assert_eq!(first_drop, Some(605));
    }

    #[test]
    fn empty_queue_leaves_dropping_state() {
        let mut q = codel();
        for i in 0..300 {
            q.enqueue(Time(0), P(i, 0), &mut |_| ());
        }
        for ms in 0..120u64 {
            q.dequeue(Time(ms * MS), &mut |_| ());
        }
        assert!(q.state().is_dropping());
        while q.dequeue(Time(120 * MS), &mut |_| ()).is_some() {}
        assert!(q.dequeue(Time(121 * MS), &mut |_| ()).is_none());
        assert!(!q.state().is_dropping());
        assert_eq!((q.packets(), q.bytes()), (0, 0));
    }
}
