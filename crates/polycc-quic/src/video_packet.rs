//! The header of one video datagram: which frame and shard it carries, so that the receiver
//! can gather a frame's shards and recover it ([`crate::fec`]).
//!
//! ```text
//! tag u8 = 0x56 | frame u32 | shard u16 | data_shards u16 | shards u16 | first_seg u64 | pad u8
//! ```
//!
//! Big-endian, 20 bytes; the shard's bytes follow. A padding datagram (sent when the controller
//! asks for padding and there is no media: WebRTC's probes) is the tag 0x50 and any bytes. `first_seg` is the frame's first segment in
//! the source's numbering (`polycc_sim::engine::video::VideoSource`), so shard i is segment
//! `first_seg + i`.

use thiserror::Error;

/// Bytes of the header.
pub const HEADER: usize = 20;
const TAG: u8 = 0x56;
const PADDING_TAG: u8 = 0x50;

/// A padding datagram of `len` bytes (at least 1).
pub fn padding(len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len.max(1)];
    b[0] = PADDING_TAG;
    b
}

/// Whether datagram `b` is padding.
pub fn is_padding(b: &[u8]) -> bool {
    b.first() == Some(&PADDING_TAG)
}

/// One datagram's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VideoHeader {
    /// The frame's index in its flow.
    pub frame: u32,
    /// This shard's index: data shards 0..k, repair shards k..n.
    pub shard: u16,
    /// k: shards that recover the frame.
    pub data_shards: u16,
    /// n: data and repair shards.
    pub shards: u16,
    /// The frame's first segment.
    pub first_seg: u64,
}

/// Why a datagram is not a video datagram.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VideoPacketError {
    /// Shorter than the header, or nothing after it.
    #[error("video datagram of {0} bytes: shorter than its {HEADER}-byte header and a shard")]
    Short(usize),
    /// Not the tag.
    #[error("video datagram tag {0:#04x}, not {TAG:#04x}")]
    Tag(u8),
    /// Counts that contradict each other.
    #[error(
        "video datagram of frame {frame}: shard {shard} of {shards} with {data_shards} data shards"
    )]
    Counts {
        /// The frame.
        frame: u32,
        /// The shard index.
        shard: u16,
        /// k.
        data_shards: u16,
        /// n.
        shards: u16,
    },
}

impl VideoHeader {
    /// The datagram: this header and `shard`.
    pub fn encode(&self, shard: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER + shard.len());
        b.push(TAG);
        b.extend_from_slice(&self.frame.to_be_bytes());
        b.extend_from_slice(&self.shard.to_be_bytes());
        b.extend_from_slice(&self.data_shards.to_be_bytes());
        b.extend_from_slice(&self.shards.to_be_bytes());
        b.extend_from_slice(&self.first_seg.to_be_bytes());
        b.push(0);
        b.extend_from_slice(shard);
        b
    }

    /// The header and shard of datagram `b`.
    pub fn decode(b: &[u8]) -> Result<(VideoHeader, &[u8]), VideoPacketError> {
        if b.len() <= HEADER {
            return Err(VideoPacketError::Short(b.len()));
        }
        if b[0] != TAG {
            return Err(VideoPacketError::Tag(b[0]));
        }
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let mut seg = [0u8; 8];
        seg.copy_from_slice(&b[11..19]);
        let h = VideoHeader {
            frame: u32::from_be_bytes([b[1], b[2], b[3], b[4]]),
            shard: u16_at(5),
            data_shards: u16_at(7),
            shards: u16_at(9),
            first_seg: u64::from_be_bytes(seg),
        };
        if h.data_shards == 0 || h.data_shards > h.shards || h.shard >= h.shards {
            return Err(VideoPacketError::Counts {
                frame: h.frame,
                shard: h.shard,
                data_shards: h.data_shards,
                shards: h.shards,
            });
        }
        Ok((h, &b[HEADER..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_bad_ones_are_errors() {
        let h = VideoHeader {
            frame: 70_000,
            shard: 9,
            data_shards: 8,
            shards: 10,
            first_seg: 1 << 40,
        };
        let b = h.encode(&[1, 2, 3, 4]);
        assert_eq!(b.len(), HEADER + 4);
        assert_eq!(VideoHeader::decode(&b), Ok((h, &[1u8, 2, 3, 4][..])));
        assert_eq!(
            VideoHeader::decode(&b[..HEADER]),
            Err(VideoPacketError::Short(HEADER))
        );
        let mut wrong = b.clone();
        wrong[0] = 0;
        assert_eq!(VideoHeader::decode(&wrong), Err(VideoPacketError::Tag(0)));
        for (k, n, i) in [(0, 10, 0), (11, 10, 0), (8, 10, 10)] {
            let bad = VideoHeader {
                data_shards: k,
                shards: n,
                shard: i,
                ..h
            }
            .encode(&[0; 2]);
            assert!(matches!(
                VideoHeader::decode(&bad),
                Err(VideoPacketError::Counts { .. })
            ));
        }
        assert!(is_padding(&padding(1100)) && !is_padding(&b) && !is_padding(&[]));
        assert_eq!(padding(0).len(), 1);
    }
}
