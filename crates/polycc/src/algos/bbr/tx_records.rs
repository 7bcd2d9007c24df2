//! Per-packet send records (BBR v3's loss-rate judgements).

use crate::units::Bytes;

/// What BBR v3 remembers about a packet until it is acknowledged or lost (Linux `scb->tx`):
/// bytes in flight just after it was sent, total bytes lost by then, and the app-limited flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRecord {
    /// The packet's number.
    pub pn: u64,
    /// Bytes in flight just after it was sent (Linux `tx.in_flight`).
    pub in_flight: Bytes,
    /// Bytes declared lost over the flow's life when it was sent (Linux `tx.lost`): the loss
    /// since then is the difference at its ACK.
    pub lost: Bytes,
    /// It was sent application-limited, or while PROBE_RTT marked samples so (Linux
    /// `tx.is_app_limited`).
    pub app_limited: bool,
}

const EMPTY: TxRecord = TxRecord {
    pn: u64::MAX,
    in_flight: 0,
    lost: 0,
    app_limited: false,
};
/// Slots kept at least / at most (the table grows with the window; 2^16 slots cover windows of
/// 32 768 packets).
const TX_MIN_SLOTS: usize = 64;
const TX_MAX_SLOTS: usize = 1 << 16;

/// Send records addressed by packet number modulo a power-of-two table that grows to twice the
/// packets in flight, so lookups are O(1) and steady state allocates nothing. A record overwritten
/// by a later packet is simply not found.
#[derive(Clone, Debug, Default)]
pub struct TxRecords {
    slots: Vec<TxRecord>,
}

impl TxRecords {
    /// Records a sent packet, first growing the table to twice the packets in flight (of
    /// `mss` bytes) when it is smaller.
    pub fn insert(&mut self, rec: TxRecord, mss: Bytes) {
        let want = ((rec.in_flight / mss.max(1)).saturating_mul(2) as usize)
            .clamp(TX_MIN_SLOTS, TX_MAX_SLOTS)
            .next_power_of_two();
        if want > self.slots.len() {
            let old = std::mem::replace(&mut self.slots, vec![EMPTY; want]);
            for r in old.into_iter().filter(|r| r.pn != u64::MAX) {
                self.put(r);
            }
        }
        self.put(rec);
    }

    fn put(&mut self, rec: TxRecord) {
        let n = self.slots.len();
        self.slots[(rec.pn as usize) & (n - 1)] = rec;
    }

    /// The packet's record, unless a later packet has taken its slot.
    #[inline]
    pub fn get(&self, pn: u64) -> Option<TxRecord> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let r = self.slots[(pn as usize) & (n - 1)];
        (r.pn == pn).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_records_grow_and_forget_overwritten_packets() {
        let mut t = TxRecords::default();
        for pn in 0..100 {
            t.insert(
                TxRecord {
                    pn,
                    in_flight: (pn + 1) * 1000,
                    lost: 0,
                    app_limited: false,
                },
                1000,
            );
        }
        // 100 packets in flight: 256 slots, every record still there.
        assert_eq!(t.get(0).map(|r| r.in_flight), Some(1000));
        assert_eq!(t.get(99).map(|r| r.in_flight), Some(100_000));
        assert_eq!(t.get(100), None);
    }
}
