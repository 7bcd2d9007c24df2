//! The sent-packet ledger: one record per packet number from the oldest packet still in flight
//! to the newest sent, and the packets declared lost recently enough that a late ACK of one is
//! recognised as a spurious loss.
//!
//! Packet numbers are dense in the ledger (a `VecDeque` indexed by `pn − base`), so finding a
//! packet is one subtraction. A number the sender skipped (QUIC endpoints may skip some to detect
//! optimistic ACKs, RFC 9000 §21.4) keeps a record that an ACK may not cover.

use polycc::estimators::delivery_rate::PacketDeliveryState;
use polycc::units::{Bytes, Time};
use std::collections::VecDeque;

/// Where a sent packet stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Counted in bytes in flight, neither acknowledged nor declared lost.
    InFlight,
    Acked,
    Lost,
    /// Sent, but not ack-eliciting: never in flight, never declared lost, acknowledging it
    /// changes nothing (RFC 9002 §2: only ack-eliciting packets are in flight).
    Untracked,
    /// Never sent: acknowledging it is a protocol violation.
    Skipped,
}

/// One packet number's record. The delivery-rate state is kept field by field, its flag beside
/// `state`, so that a record takes 48 bytes instead of 56: a record is written at the send and
/// read at the ACK a round trip later, when with many flows its line has left the caches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record<P> {
    pub payload: P,
    pub bytes: u32,
    pub state: State,
    app_limited: bool,
    pub sent_time: Time,
    delivered: Bytes,
    delivered_time: Time,
    first_sent_time: Time,
}

impl<P> Record<P> {
    pub fn new(payload: P, bytes: u32, state: State, d: PacketDeliveryState) -> Self {
        Record {
            payload,
            bytes,
            state,
            app_limited: d.is_app_limited,
            sent_time: d.sent_time,
            delivered: d.delivered,
            delivered_time: d.delivered_time,
            first_sent_time: d.first_sent_time,
        }
    }

    /// The delivery-rate state kept from the send.
    #[inline]
    pub fn delivery(&self) -> PacketDeliveryState {
        PacketDeliveryState {
            sent_time: self.sent_time,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited,
        }
    }
}

/// A packet declared lost, remembered so that a late ACK of it is recognised as spurious.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LostRecord<P> {
    pub pn: u64,
    pub payload: P,
    /// When the record is dropped.
    pub expires: Time,
}

#[derive(Clone, Debug)]
pub(crate) struct Ledger<P> {
    records: VecDeque<Record<P>>,
    /// Packet number of `records[0]`.
    base: u64,
    /// Packets declared lost and not yet forgotten, in increasing packet number.
    lost: VecDeque<LostRecord<P>>,
    /// Skipped packet numbers below `base + records.len()`, increasing (rare: kept apart so
    /// that an ACK can be checked against them before it changes anything).
    skipped: Vec<u64>,
}

impl<P: Copy> Ledger<P> {
    pub fn new() -> Self {
        Ledger {
            records: VecDeque::new(),
            base: 0,
            lost: VecDeque::new(),
            skipped: Vec::new(),
        }
    }

    /// The packet number the next record gets.
    #[inline]
    pub fn end(&self) -> u64 {
        self.base + self.records.len() as u64
    }

    #[inline]
    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn push(&mut self, r: Record<P>) {
        self.records.push_back(r);
    }

    /// Records `pn` as never sent.
    pub fn skip(&mut self, pn: u64, delivery: PacketDeliveryState, payload: P) {
        self.skipped.push(pn);
        self.records
            .push_back(Record::new(payload, 0, State::Skipped, delivery));
    }

    /// The first skipped packet number in `[start, end]`, if any.
    pub fn skipped_in(&self, start: u64, end: u64) -> Option<u64> {
        let i = self.skipped.partition_point(|&p| p < start);
        self.skipped.get(i).copied().filter(|&p| p <= end)
    }

    #[inline]
    pub fn get_mut(&mut self, pn: u64) -> Option<&mut Record<P>> {
        let idx = pn.checked_sub(self.base)? as usize;
        self.records.get_mut(idx)
    }

    /// The record at offset `i` from the base (`i < len`).
    #[inline]
    pub fn at(&self, i: usize) -> Record<P> {
        self.records[i]
    }

    #[inline]
    pub fn set_state(&mut self, i: usize, s: State) {
        self.records[i].state = s;
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Records still in flight, oldest first.
    pub fn in_flight(&self) -> impl Iterator<Item = (u64, &Record<P>)> + '_ {
        let base = self.base;
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| r.state == State::InFlight)
            .map(move |(i, r)| (base + i as u64, r))
    }

    /// Drops the records at the front that are no longer in flight.
    pub fn retire(&mut self) {
        while self
            .records
            .front()
            .is_some_and(|r| r.state != State::InFlight)
        {
            self.records.pop_front();
            self.base += 1;
        }
        let base = self.base;
        if self.skipped.first().is_some_and(|&p| p < base) {
            self.skipped.retain(|&p| p >= base);
        }
    }

    pub fn remember_lost(&mut self, r: LostRecord<P>) {
        self.lost.push_back(r);
    }

    /// Drops lost-packet records that expired before `now` (they expire in declaration order,
    /// PTO changes aside).
    pub fn forget_lost(&mut self, now: Time) {
        while self.lost.front().is_some_and(|r| r.expires < now) {
            self.lost.pop_front();
        }
    }

    /// Takes the first remembered lost record with a packet number in `[start, end]`.
    pub fn take_lost_in(&mut self, start: u64, end: u64) -> Option<LostRecord<P>> {
        let i = self.lost.partition_point(|r| r.pn < start);
        if self.lost.get(i).is_some_and(|r| r.pn <= end) {
            self.lost.remove(i)
        } else {
            None
        }
    }
}
