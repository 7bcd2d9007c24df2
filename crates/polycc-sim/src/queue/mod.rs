//! Queue disciplines of a link direction: drop-tail (packets or bytes), CoDel (RFC 8289) and
//! FQ-CoDel (RFC 8290), and a token-bucket policer. The engine is generic over what it queues through [`Queued`].

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod policer;

use crate::scenario::spec::QueueKind;
use crate::scenario::LinkDirModel;
use polycc::units::{Duration, Rate, Time};

/// What a queue needs to know about an item.
pub trait Queued {
    /// Size on the wire.
    fn wire_bytes(&self) -> u64;
    /// Flow the item belongs to (FQ-CoDel's flow key; the simulator's flows are known exactly,
    /// so no hash collisions are modelled).
    fn flow_key(&self) -> u32;
}

/// Capacity limits shared by all disciplines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub bytes: Option<u64>,
    pub packets: Option<u64>,
}

impl Limits {
    /// True when adding an item of `add` bytes to a queue holding `bytes` / `packets` would
    /// exceed a limit.
    pub fn would_overflow(&self, bytes: u64, packets: usize, add: u64) -> bool {
        self.bytes.is_some_and(|b| bytes + add > b)
            || self.packets.is_some_and(|p| packets as u64 + 1 > p)
    }
}

/// An item with its enqueue time.
#[derive(Clone, Debug)]
pub struct Entry<T> {
    pub item: T,
    pub enqueued: Time,
}

pub enum Queue<T> {
    DropTail(droptail::DropTail<T>),
    CoDel(codel::CoDel<T>),
    FqCoDel(fq_codel::FqCoDel<T>),
    Policer(policer::Policer<T>),
}

impl<T: Queued> Queue<T> {
    pub fn new(m: &LinkDirModel) -> Self {
        let limits = Limits {
            bytes: m.queue_limit_bytes,
            packets: m.queue_limit_packets,
        };
        match m.queue.kind {
            QueueKind::Droptail => Queue::DropTail(droptail::DropTail::new(limits)),
            QueueKind::Codel => Queue::CoDel(codel::CoDel::new(
                limits,
                m.queue.target.value,
                m.queue.interval.value,
            )),
            QueueKind::FqCodel => Queue::FqCoDel(fq_codel::FqCoDel::new(
                limits,
                m.queue.target.value,
                m.queue.interval.value,
                m.queue.quantum,
            )),
            QueueKind::Policer => {
                // Resolution sets both for a policer (`resolve::queues`).
                let (rate, burst) = m.policer.unwrap_or((Rate::ZERO, 0));
                Queue::Policer(policer::Policer::new(limits, rate, burst))
            }
        }
    }

    /// Adds an item. Anything the discipline drops to make room (the item itself for drop-tail,
    /// the head of the fattest flow for FQ-CoDel) is handed to `dropped`.
    pub fn enqueue(&mut self, now: Time, item: T, dropped: &mut impl FnMut(T)) {
        match self {
            Queue::DropTail(q) => q.enqueue(now, item, dropped),
            Queue::CoDel(q) => q.enqueue(now, item, dropped),
            Queue::FqCoDel(q) => q.enqueue(now, item, dropped),
            Queue::Policer(q) => q.enqueue(now, item, dropped),
        }
    }

    /// Takes the next item to transmit with its sojourn time. AQM drops made on the way are handed
    /// to `dropped`.
    pub fn dequeue(&mut self, now: Time, dropped: &mut impl FnMut(T)) -> Option<(T, Duration)> {
        match self {
            Queue::DropTail(q) => q.dequeue(now),
            Queue::CoDel(q) => q.dequeue(now, dropped),
            Queue::FqCoDel(q) => q.dequeue(now, dropped),
            Queue::Policer(q) => q.dequeue(now),
        }
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        match self {
            Queue::DropTail(q) => q.bytes(),
            Queue::CoDel(q) => q.bytes(),
            Queue::FqCoDel(q) => q.bytes(),
            Queue::Policer(q) => q.bytes(),
        }
    }

    pub fn packets(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.packets(),
            Queue::CoDel(q) => q.packets(),
            Queue::FqCoDel(q) => q.packets(),
            Queue::Policer(q) => q.packets(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.packets() == 0
    }
}
