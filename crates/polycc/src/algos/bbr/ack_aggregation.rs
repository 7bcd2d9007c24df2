//! The ACK-aggregation allowance (`extra_acked`: BBR v3, and v1 with its `extra_acked` parameter,
//! as Linux has had it since 4.19).

use crate::units::{Bytes, Rate, Time};

/// ACK-aggregation estimator (Linux `bbr_update_ack_aggregation`): the data acked beyond
/// what the bandwidth estimate explains since an epoch began, max-filtered over two windows of
/// `win_rounds` round trips; it lets cwnd cover the silences between aggregated ACKs.
#[derive(Clone, Debug)]
pub struct AckAggregation {
    epoch_start: Time,
    epoch_acked: Bytes,
    win_rounds: u32,
    idx: usize,
    extra: [Bytes; 2],
}

/// Linux `bbr_ack_epoch_acked_reset_thresh` (2^20 packets), in bytes of a 1500-byte packet.
const ACK_EPOCH_RESET_BYTES: Bytes = (1 << 20) * 1500;

impl AckAggregation {
    /// No excess seen yet; the first epoch starts at `now`.
    pub fn new(now: Time) -> Self {
        AckAggregation {
            epoch_start: now,
            epoch_acked: 0,
            win_rounds: 0,
            idx: 0,
            extra: [0; 2],
        }
    }

    /// Largest recent excess in bytes.
    #[inline]
    pub fn extra_acked(&self) -> Bytes {
        self.extra[0].max(self.extra[1])
    }

    /// Restarting from idle starts a new epoch (Linux `CA_EVENT_TX_START`).
    pub fn restart(&mut self, now: Time) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    /// Linux `bbr_update_ack_aggregation`, per ACK of `acked` bytes: every `window_rounds` rounds
    /// the older slot is cleared and takes over; the bytes acked this epoch beyond what `bw`
    /// explains (at most `cwnd`) raise the current slot. An epoch restarts once the ACKs have
    /// fallen back to `bw` (no aggregation left) or after 2^20 packets.
    #[inline]
    pub fn update(
        &mut self,
        now: Time,
        acked: Bytes,
        bw: Rate,
        cwnd: Bytes,
        round_start: bool,
        window_rounds: u32,
    ) {
        if round_start {
            self.win_rounds = (self.win_rounds + 1).min(0x1f);
            if self.win_rounds >= window_rounds {
                self.win_rounds = 0;
                self.idx ^= 1;
                self.extra[self.idx] = 0;
            }
        }
        let mut expected = bw.bytes_in(now - self.epoch_start);
        if self.epoch_acked <= expected
            || self.epoch_acked.saturating_add(acked) >= ACK_EPOCH_RESET_BYTES
        {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked = self.epoch_acked.saturating_add(acked);
        let extra = (self.epoch_acked - expected.min(self.epoch_acked)).min(cwnd);
        if extra > self.extra[self.idx] {
            self.extra[self.idx] = extra;
        }
    }
}
