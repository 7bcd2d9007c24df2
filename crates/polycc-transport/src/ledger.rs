//! The sent-packet ledger: one record per packet number from the oldest packet still in flight
//! to the newest sent, and the packets declared lost recently enough that a late ACK of one is
//! recognised as a spurious loss.
//!
//! Packet numbers are dense in the ledger (a `VecDeque` indexed by `pn − base`), so finding a
//! packet is one subtraction. A number the sender skipped (QUIC endpoints may skip some to detect
//! optimistic ACKs, RFC 9000 §21.4) keeps a record that an ACK may not cover.

use polycc::estimators::delivery_rate::PacketDeliveryState;
use polycc::units::{Bytes, Time};
use std::collections::{BTreeMap, VecDeque};

/// Where a sent packet stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Counted in bytes in flight, neither acknowledged nor declared lost.
    InFlight = 0,
    Acked = 1,
    Lost = 2,
    /// Sent, but not ack-eliciting: never in flight, never declared lost, acknowledging it
    /// changes nothing (RFC 9002 §2: only ack-eliciting packets are in flight).
    Untracked = 3,
    /// Never sent: acknowledging it is a protocol violation.
    Skipped = 4,
}

/// The largest packet a record holds: its size shares a word with the state and the
/// application-limited flag (28 bits; a datagram, even a GSO or TSO batch, is far smaller).
pub(crate) const MAX_BYTES: u64 = (1 << BYTES_BITS) - 1;
const BYTES_BITS: u32 = 28;
const STATE_SHIFT: u32 = BYTES_BITS;
const STATE_MASK: u32 = 0b111 << STATE_SHIFT;
const APP_LIMITED: u32 = 1 << 31;

/// `Record::delivered_age` of a record whose delivery-rate state is in `Ledger::spilled`.
const SPILLED: u32 = u32::MAX;
/// `Record::delivered_age` of a record whose delivery-rate state is the default one with its
/// send time (packets that take no part in rate samples: never sent, or not ack-eliciting).
const NO_SAMPLE: u32 = u32::MAX - 1;

/// One packet number's record, 32 bytes with an 8-byte payload: two records to a cache line.
/// A record is written at the send and read at the ACK a round trip later, when with many flows
/// its line has left the caches, and a 48-byte record straddled two lines one time in two
/// (BENCHMARKS.md, issue 15). The delivery-rate state is kept relative to the send time and to
/// the ledger's `delivered_base`, in 32 bits each; a state that does not fit (an idle period
/// over 4 s, over 4 GiB delivered while one packet stayed in flight) is kept whole in
/// `Ledger::spilled`, so every value reads back exactly.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record<P> {
    pub payload: P,
    pub sent_time: Time,
    /// `delivered - Ledger::delivered_base`.
    delivered_off: u32,
    /// `sent_time - delivered_time` in ns, or [`SPILLED`] or [`NO_SAMPLE`].
    delivered_age: u32,
    /// `sent_time - first_sent_time` in ns.
    first_sent_age: u32,
    /// The size in bytes (low [`BYTES_BITS`] bits), the state and the application-limited flag.
    packed: u32,
}

impl<P> Record<P> {
    #[inline]
    pub fn bytes(&self) -> u32 {
        self.packed & MAX_BYTES as u32
    }

    #[inline]
    pub fn state(&self) -> State {
        match (self.packed & STATE_MASK) >> STATE_SHIFT {
            0 => State::InFlight,
            1 => State::Acked,
            2 => State::Lost,
            3 => State::Untracked,
            _ => State::Skipped,
        }
    }

    #[inline]
    pub fn set_state(&mut self, s: State) {
        self.packed = (self.packed & !STATE_MASK) | (s as u32) << STATE_SHIFT;
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
    /// What records' `delivered_off` count from.
    delivered_base: Bytes,
    /// The delivery-rate state of records it does not fit in (rare), by packet number.
    spilled: BTreeMap<u64, PacketDeliveryState>,
}

impl<P: Copy> Ledger<P> {
    pub fn new() -> Self {
        Ledger {
            records: VecDeque::new(),
            base: 0,
            lost: VecDeque::new(),
            skipped: Vec::new(),
            delivered_base: 0,
            spilled: BTreeMap::new(),
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

    /// Records the next packet number (`end()`): `bytes` at most [`MAX_BYTES`].
    #[inline]
    pub fn push(&mut self, payload: P, bytes: u32, state: State, d: PacketDeliveryState) {
        debug_assert!(bytes as u64 <= MAX_BYTES);
        let mut r = Record {
            payload,
            sent_time: d.sent_time,
            delivered_off: 0,
            delivered_age: NO_SAMPLE,
            first_sent_age: 0,
            packed: bytes
                | (state as u32) << STATE_SHIFT
                | if d.is_app_limited { APP_LIMITED } else { 0 },
        };
        let no_sample = PacketDeliveryState {
            sent_time: d.sent_time,
            ..PacketDeliveryState::default()
        };
        if d != no_sample {
            match self.compact(&d) {
                Some((off, age, first)) => {
                    r.delivered_off = off;
                    r.delivered_age = age;
                    r.first_sent_age = first;
                }
                None => {
                    r.delivered_age = SPILLED;
                    self.spilled.insert(self.end(), d);
                }
            }
        }
        self.records.push_back(r);
    }

    /// `d` relative to its send time and `delivered_base`, if that fits in 32 bits each.
    #[inline]
    fn compact(&mut self, d: &PacketDeliveryState) -> Option<(u32, u32, u32)> {
        let age = |t: Time| {
            d.sent_time
                .0
                .checked_sub(t.0)
                .and_then(|a| u32::try_from(a).ok())
                .filter(|&a| a < NO_SAMPLE)
        };
        let (age, first) = (age(d.delivered_time)?, age(d.first_sent_time)?);
        let off = match d.delivered.checked_sub(self.delivered_base) {
            Some(off) if off <= u32::MAX as u64 => off as u32,
            _ => self.rebase(d.delivered)?,
        };
        Some((off, age, first))
    }

    /// Moves `delivered_base` up to the lowest value the records hold (their offsets shift
    /// down with it), and returns the offset of `delivered` if it then fits.
    #[cold]
    #[inline(never)]
    fn rebase(&mut self, delivered: Bytes) -> Option<u32> {
        let compact = |r: &Record<P>| r.delivered_age < NO_SAMPLE;
        let lowest = self
            .records
            .iter()
            .filter(|r| compact(r))
            .map(|r| r.delivered_off)
            .min();
        match lowest {
            None => self.delivered_base = delivered,
            Some(low) if delivered >= self.delivered_base => {
                for r in self.records.iter_mut().filter(|r| compact(r)) {
                    r.delivered_off -= low;
                }
                self.delivered_base += low as u64;
            }
            Some(_) => return None,
        }
        u32::try_from(delivered - self.delivered_base).ok()
    }

    /// The delivery-rate state kept from the send of packet `pn`, whose record is `r`.
    #[inline]
    pub fn delivery(&self, pn: u64, r: &Record<P>) -> PacketDeliveryState {
        match r.delivered_age {
            NO_SAMPLE => PacketDeliveryState {
                sent_time: r.sent_time,
                ..PacketDeliveryState::default()
            },
            SPILLED => self.spilled[&pn],
            age => PacketDeliveryState {
                sent_time: r.sent_time,
                delivered: self.delivered_base + r.delivered_off as u64,
                delivered_time: Time(r.sent_time.0 - age as u64),
                first_sent_time: Time(r.sent_time.0 - r.first_sent_age as u64),
                is_app_limited: r.packed & APP_LIMITED != 0,
            },
        }
    }

    /// Records `pn` as never sent.
    pub fn skip(&mut self, pn: u64, delivery: PacketDeliveryState, payload: P) {
        self.skipped.push(pn);
        self.push(payload, 0, State::Skipped, delivery);
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
        self.records[i].set_state(s);
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
            .filter(|(_, r)| r.state() == State::InFlight)
            .map(move |(i, r)| (base + i as u64, r))
    }

    /// Drops the records at the front that are no longer in flight.
    pub fn retire(&mut self) {
        while let Some(r) = self
            .records
            .front()
            .filter(|r| r.state() != State::InFlight)
        {
            if r.delivered_age == SPILLED {
                self.spilled.remove(&self.base);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn state(sent: u64, delivered: u64, dt: u64, first: u64, app: bool) -> PacketDeliveryState {
        PacketDeliveryState {
            sent_time: Time(sent),
            delivered,
            delivered_time: Time(dt),
            first_sent_time: Time(first),
            is_app_limited: app,
        }
    }

    /// Every record's delivery state as read back.
    fn read_back(l: &Ledger<u64>) -> Vec<PacketDeliveryState> {
        (0..l.len())
            .map(|i| l.delivery(l.base() + i as u64, &l.at(i)))
            .collect()
    }

    #[test]
    fn a_record_takes_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Record<u64>>(), 32);
    }

    #[test]
    fn fields_read_back_as_written() {
        let mut l = Ledger::new();
        let d = state(10 * S, 123_456, 10 * S - 7, 9 * S, true);
        l.push(7u64, MAX_BYTES as u32, State::InFlight, d);
        let r = l.at(0);
        assert_eq!(
            (r.payload, r.bytes(), r.state()),
            (7, MAX_BYTES as u32, State::InFlight)
        );
        assert_eq!(read_back(&l), vec![d]);
        l.set_state(0, State::Lost);
        assert_eq!(l.at(0).state(), State::Lost);
        assert_eq!(l.at(0).bytes(), MAX_BYTES as u32);
        assert_eq!(read_back(&l), vec![d]);
    }

    #[test]
    fn states_too_far_apart_are_kept_whole_and_dropped_with_their_record() {
        let mut l = Ledger::new();
        let no_sample = state(20 * S, 0, 0, 0, false);
        // An idle period of 10 s: the last ACK lies further back than 32 bits of nanoseconds.
        let idle = state(20 * S, 5_000, 10 * S, 10 * S, false);
        // The send time before the state's times (a caller's clock going back): kept whole too.
        let back = state(20 * S, 5_000, 21 * S, 20 * S, false);
        l.push(1, 1200, State::Untracked, no_sample);
        l.push(2, 1200, State::InFlight, idle);
        l.push(3, 1200, State::InFlight, back);
        assert_eq!(read_back(&l), vec![no_sample, idle, back]);
        assert_eq!(l.spilled.len(), 2);
        l.set_state(1, State::Acked);
        l.set_state(2, State::Acked);
        l.retire();
        assert_eq!((l.base(), l.len()), (3, 0));
        assert!(l.spilled.is_empty());
    }

    #[test]
    fn delivered_counts_beyond_32_bits_of_the_base_move_the_base() {
        let mut l = Ledger::new();
        let mut want = Vec::new();
        // 5 GiB above the base: it moves up to the oldest record's value (3 GiB).
        for (k, delivered) in [3u64 << 30, 5 << 30, 6 << 30].into_iter().enumerate() {
            let d = state(S + k as u64, delivered, S, S, false);
            l.push(k as u64, 1200, State::InFlight, d);
            want.push(d);
        }
        assert_eq!(read_back(&l), want);
        assert!(l.spilled.is_empty());
        // More than 4 GiB above the oldest record still in flight: that one is kept whole.
        let d = state(2 * S, 8 << 30, S, S, false);
        l.push(3, 1200, State::InFlight, d);
        want.push(d);
        assert_eq!(read_back(&l), want);
        assert_eq!(l.spilled.len(), 1);
    }
}
