//! FQ-CoDel (RFC 8290), following Linux `sch_fq_codel` where the RFC leaves room.
//!
//! - Flows are classified exactly by [`Queued::flow_key`] (the simulator knows its flows, so the
//!   hash collisions of RFC 8290 §4.1.1 are not modelled). Keys are the engine's dense flow
//!   indices; sub-queues live in a `Vec` indexed by key and are reused, so steady state allocates
//!   nothing beyond `VecDeque` growth.
//! - Scheduling is deficit round robin with a byte `quantum` over two lists, new flows before old
//!   flows (RFC 8290 §4.2, §4.3).
//! - Each flow has its own CoDel state; parameters are shared (RFC 8290 §4.2).
//! - Overflow of the shared limit drops from the head of the flow with the largest backlog
//!   (RFC 8290 §4.1). Linux drops a batch (up to 64 packets or half that flow's bytes) to save
//!   CPU on real hardware; here one head packet is dropped per overflow, repeated only while the
//!   queue is still over its limit, so small simulated buffers are not halved by a single arrival.

use super::codel::{CoDelParams, CoDelSource, CoDelState};
use super::{Entry, Limits, Queued};
use polycc::units::{Duration, Time};
use std::collections::VecDeque;

/// Which scheduling list a flow is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Flow<T> {
    q: VecDeque<Entry<T>>,
    bytes: u64,
    /// DRR credit in bytes; may go negative by up to one packet (RFC 8290 §4.2).
    deficit: i64,
    codel: CoDelState,
    list: List,
}

impl<T> Flow<T> {
    fn new() -> Self {
        Flow {
            q: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            codel: CoDelState::default(),
            list: List::None,
        }
    }
}

/// One flow's FIFO seen by its CoDel instance. The MTU test uses the whole qdisc backlog, as
/// Linux does (`codel_dequeue` is given `sch->qstats.backlog`).
struct FlowSource<'a, T> {
    q: &'a mut VecDeque<Entry<T>>,
    flow_bytes: &'a mut u64,
    total_bytes: &'a mut u64,
    total_packets: &'a mut usize,
}

impl<T: Queued> CoDelSource<T> for FlowSource<'_, T> {
    fn pop(&mut self) -> Option<Entry<T>> {
        let e = self.q.pop_front()?;
        let b = e.item.wire_bytes();
        *self.flow_bytes -= b;
        *self.total_bytes -= b;
        *self.total_packets -= 1;
        Some(e)
    }
    fn backlog_bytes(&self) -> u64 {
        *self.total_bytes
    }
}

pub struct FqCoDel<T> {
    limits: Limits,
    params: CoDelParams,
    quantum: i64,
    flows: Vec<Flow<T>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    bytes: u64,
    packets: usize,
}

impl<T: Queued> FqCoDel<T> {
    pub fn new(limits: Limits, target: Duration, interval: Duration, quantum: u64) -> Self {
        FqCoDel {
            limits,
            params: CoDelParams { target, interval },
            // Scenario validation rejects 0; clamp so DRR always makes progress.
            quantum: quantum.clamp(1, i64::MAX as u64) as i64,
            flows: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            bytes: 0,
            packets: 0,
        }
    }

    fn over_limit(&self) -> bool {
        self.limits.bytes.is_some_and(|b| self.bytes > b)
            || self.limits.packets.is_some_and(|p| self.packets as u64 > p)
    }

    /// Appends `item` to its flow's queue. A flow that was on no list joins the tail of the
    /// new-flows list with a full quantum (RFC 8290 §4.1). If the shared limit is then exceeded,
    /// head packets of the fattest flow are dropped until it is not (see the module doc).
    pub fn enqueue(&mut self, now: Time, item: T, dropped: &mut impl FnMut(T)) {
        let key = item.flow_key();
        let idx = key as usize;
        if idx >= self.flows.len() {
            self.flows.resize_with(idx + 1, Flow::new);
        }
        let b = item.wire_bytes();
        let f = &mut self.flows[idx];
        f.q.push_back(Entry {
            item,
            enqueued: now,
        });
        f.bytes += b;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(key);
        }
        self.bytes += b;
        self.packets += 1;

        while self.over_limit() {
            if !self.drop_from_fattest(dropped) {
                break;
            }
        }
    }

    /// Drops the head packet of the flow with the most bytes queued (lowest key on ties, as
    /// Linux's scan keeps the first maximum). The flow stays on its list; dequeue unlinks it
    /// once it is found empty. Returns false when nothing is queued.
    fn drop_from_fattest(&mut self, dropped: &mut impl FnMut(T)) -> bool {
        let mut fattest: Option<usize> = None;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes > max || (fattest.is_none() && !f.q.is_empty()) {
                max = f.bytes;
                fattest = Some(i);
            }
        }
        let Some(i) = fattest else { return false };
        let f = &mut self.flows[i];
        let Some(e) = f.q.pop_front() else {
            return false;
        };
        let b = e.item.wire_bytes();
        f.bytes -= b;
        self.bytes -= b;
        self.packets -= 1;
        dropped(e.item);
        true
    }

    /// Next packet by DRR over new then old flows, through the chosen flow's CoDel
    /// (RFC 8290 §4.2; Linux `fq_codel_dequeue`).
    pub fn dequeue(&mut self, now: Time, dropped: &mut impl FnMut(T)) -> Option<(T, Duration)> {
        loop {
            let (key, from_new) = match self.new_flows.front() {
                Some(&k) => (k, true),
                None => (*self.old_flows.front()?, false),
            };
            let f = &mut self.flows[key as usize];
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };

            if f.deficit <= 0 {
                // Quantum used up: top up and go to the back of the old list.
                f.deficit += self.quantum;
                f.list = List::Old;
                list.pop_front();
                self.old_flows.push_back(key);
                continue;
            }

            let mut src = FlowSource {
                q: &mut f.q,
                flow_bytes: &mut f.bytes,
                total_bytes: &mut self.bytes,
                total_packets: &mut self.packets,
            };
            match f.codel.dequeue(&self.params, now, &mut src, dropped) {
                Some((item, sojourn)) => {
                    f.deficit -= item.wire_bytes() as i64;
                    return Some((item, sojourn));
                }
                None => {
                    // Empty flow. A new flow goes to the old list rather than being forgotten,
                    // so a flow that empties and refills at once cannot keep jumping the queue
                    // and starve the old flows (RFC 8290 §4.2).
                    list.pop_front();
                    if from_new && !self.old_flows.is_empty() {
                        f.list = List::Old;
                        self.old_flows.push_back(key);
                    } else {
                        f.list = List::None;
                    }
                }
            }
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn packets(&self) -> usize {
        self.packets
    }
    /// Bytes queued for one flow (telemetry and tests).
    pub fn flow_bytes(&self, key: u32) -> u64 {
        self.flows.get(key as usize).map_or(0, |f| f.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct P {
        flow: u32,
        id: u64,
        bytes: u64,
    }
    impl Queued for P {
        fn wire_bytes(&self) -> u64 {
            self.bytes
        }
        fn flow_key(&self) -> u32 {
            self.flow
        }
    }
    fn p(flow: u32, id: u64) -> P {
        P {
            flow,
            id,
            bytes: 1500,
        }
    }

    fn fq(limit_packets: u64, quantum: u64) -> FqCoDel<P> {
        FqCoDel::new(
            Limits {
                bytes: None,
                packets: Some(limit_packets),
            },
            Duration::from_millis(5),
            Duration::from_millis(100),
            quantum,
        )
    }

    fn order(q: &mut FqCoDel<P>, now: Time, n: usize) -> Vec<(u32, u64)> {
        (0..n)
            .map_while(|_| q.dequeue(now, &mut |_| panic!("no AQM drop expected")))
            .map(|(x, _)| (x.flow, x.id))
            .collect()
    }

    #[test]
    fn round_robin_by_quantum() {
        // Quantum of two packets: each flow sends two packets per turn.
        let mut q = fq(100, 3000);
        for i in 0..4 {
            q.enqueue(Time(0), p(0, i), &mut |_| ());
        }
        for i in 0..4 {
            q.enqueue(Time(0), p(1, i), &mut |_| ());
        }
        let got = order(&mut q, Time(0), 8);
        assert_eq!(
            got,
            vec![
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (0, 2),
                (0, 3),
                (1, 2),
                (1, 3)
            ]
        );
        assert_eq!((q.bytes(), q.packets()), (0, 0));
    }

    #[test]
    fn new_flow_jumps_ahead_of_old_flows() {
        let mut q = fq(100, 1500);
        for i in 0..5 {
            q.enqueue(Time(0), p(0, i), &mut |_| ());
        }
        // Flow 0 uses its first quantum and moves to the old list.
        assert_eq!(order(&mut q, Time(0), 1), vec![(0, 0)]);
        q.enqueue(Time(0), p(7, 0), &mut |_| ());
        assert_eq!(order(&mut q, Time(0), 2), vec![(7, 0), (0, 1)]);
    }

    #[test]
    fn emptied_new_flow_moves_to_old_list() {
        // Quantum of two packets, so flow 1 still has credit when it runs empty.
        let mut q = fq(100, 3000);
        for i in 0..5 {
            q.enqueue(Time(0), p(0, i), &mut |_| ());
        }
        assert_eq!(order(&mut q, Time(0), 2), vec![(0, 0), (0, 1)]);
        q.enqueue(Time(0), p(1, 0), &mut |_| ());
        // Flow 0 (no credit) moves to the old list; flow 1 is served and empties.
        assert_eq!(order(&mut q, Time(0), 1), vec![(1, 0)]);
        // Empty flow 1 at the head of the new list goes behind flow 0 on the old list.
        assert_eq!(order(&mut q, Time(0), 1), vec![(0, 2)]);
        // Its next packet waits for its old-list turn instead of jumping ahead as a new flow.
        q.enqueue(Time(0), p(1, 1), &mut |_| ());
        assert_eq!(order(&mut q, Time(0), 2), vec![(0, 3), (1, 1)]);
    }

    #[test]
    fn overflow_drops_head_of_fattest_flow() {
        let mut q = fq(4, 1500);
        for i in 0..3 {
            q.enqueue(Time(0), p(0, i), &mut |_| panic!());
        }
        q.enqueue(Time(0), p(1, 0), &mut |_| panic!());
        let mut drops = vec![];
        // The 5th packet belongs to the thin flow 1, but flow 0 holds the most bytes: its head
        // goes.
        q.enqueue(Time(0), p(1, 1), &mut |x| drops.push((x.flow, x.id)));
        assert_eq!(drops, vec![(0, 0)]);
        assert_eq!(
            (q.packets(), q.flow_bytes(0), q.flow_bytes(1)),
            (4, 3000, 3000)
        );
    }

    #[test]
    fn byte_limit_drops_until_it_fits() {
        let mut q = FqCoDel::new(
            Limits {
                bytes: Some(3000),
                packets: None,
            },
            Duration::from_millis(5),
            Duration::from_millis(100),
            1514,
        );
        for i in 0..4 {
            q.enqueue(
                Time(0),
                P {
                    flow: 0,
                    id: i,
                    bytes: 750,
                },
                &mut |_| panic!(),
            );
        }
        let mut drops = vec![];
        // 1500 more bytes than the limit allows: two 750-byte heads of flow 0 go.
        q.enqueue(Time(0), p(1, 0), &mut |x| drops.push((x.flow, x.id)));
        assert_eq!(drops, vec![(0, 0), (0, 1)]);
        assert_eq!(q.bytes(), 3000);
    }

    #[test]
    fn per_flow_codel_drops_only_the_standing_flow() {
        // Flow 0 keeps a standing queue; flow 1 sends one packet every 10 ms. Service: one packet
        // per ms. Only flow 0 suffers AQM drops.
        let mut q = fq(10_000, 1514);
        let mut drops = [0u32; 2];
        let mut id = 0;
        for i in 0..1000 {
            q.enqueue(Time(0), p(0, i), &mut |_| ());
        }
        for ms in 0..600u64 {
            let now = Time(ms * 1_000_000);
            if ms % 10 == 0 {
                q.enqueue(now, p(1, id), &mut |x| drops[x.flow as usize] += 1);
                id += 1;
            }
            q.dequeue(now, &mut |x| drops[x.flow as usize] += 1);
        }
        assert!(drops[0] > 0);
        assert_eq!(drops[1], 0);
    }
}
