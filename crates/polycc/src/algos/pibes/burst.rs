//! PIBES's two-part frame schedule (§III-A, Fig. 2): the first n_b packets of each frame leave
//! back to back, the rest are paced. This file keeps the rule for n_b and the position in its
//! frame of the next packet to leave.

use std::collections::VecDeque;

/// §IV-A: the estimate converges from a burst of 3 packets (n_min) and is stable from 6
/// (n_max), which also keeps bursts short enough not to overflow router buffers.
pub const N_MIN: u32 = 3;
/// n_max: the largest burst; see [`N_MIN`].
pub const N_MAX: u32 = 6;

/// Eq. (1): n_b = max(n_min, min(ceil(n_f / 2), n_max)). A frame of fewer than n_min packets
/// is sent whole as its burst (§IV-A: "bandwidth estimation will be skipped").
pub fn burst_size(n_f: u32, n_min: u32, n_max: u32) -> u32 {
    n_min.max(n_f.div_ceil(2).min(n_max))
}

/// Where a packet sits in its frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Index of the frame in its flow.
    pub frame: u64,
    /// Position in the frame, from 0.
    pub pos: u32,
    /// Packets in the frame (n_f).
    pub n_f: u32,
    /// The burst size used for the frame (n_b, eq. 1).
    pub n_b: u32,
}

impl Slot {
    /// The packet belongs to the frame's initial burst.
    pub fn in_burst(&self) -> bool {
        self.pos < self.n_b
    }
    /// The gap after this packet is a paced one: the next packet is of the same frame and
    /// past the burst. After the burst's last packet the first paced one follows at d too.
    pub fn paced_gap_after(&self) -> bool {
        self.pos + 1 >= self.n_b && self.pos + 1 < self.n_f
    }
}

/// The frames queued at the sender, in order, and how many packets of the first have left.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameQueue {
    frames: VecDeque<(u64, u32, u32)>,
    sent_in_head: u32,
}

impl FrameQueue {
    /// Queues frame `frame` of `n_f` packets, its burst sized by eq. (1) within
    /// `[n_min, n_max]`; an empty frame is ignored.
    pub fn push(&mut self, frame: u64, n_f: u32, n_min: u32, n_max: u32) {
        if n_f > 0 {
            self.frames
                .push_back((frame, n_f, burst_size(n_f, n_min, n_max)));
        }
    }

    /// The slot of the next new packet to leave, if a frame is queued.
    pub fn next(&self) -> Option<Slot> {
        self.frames.front().map(|&(frame, n_f, n_b)| Slot {
            frame,
            pos: self.sent_in_head,
            n_f,
            n_b,
        })
    }

    /// A new (not retransmitted) packet left: returns its slot.
    pub fn on_sent(&mut self) -> Option<Slot> {
        let slot = self.next()?;
        self.sent_in_head += 1;
        if self.sent_in_head >= slot.n_f {
            self.frames.pop_front();
            self.sent_in_head = 0;
        }
        Some(slot)
    }

    /// Frames with packets still to leave.
    #[cfg(test)]
    pub fn queued_frames(&self) -> usize {
        self.frames.len()
    }
}
