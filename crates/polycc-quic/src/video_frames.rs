//! A video frame as QUIC datagrams: the simulator's frame (`polycc_sim::engine::video`: k data
//! and m repair packets of P bytes on the wire) cut into shards, the m repair shards real
//! Reed-Solomon coding of the k data shards ([`crate::fec`]), each shard one DATAGRAM frame with
//! its [`crate::video_packet`] header; and the receiver's [`FrameAssembler`], which gathers each
//! frame's shards and, once any k have arrived, recovers the frame and checks every byte of it
//! against what both ends compute ([`data_shard`]). The `polycc-quic` binary's video mode and
//! the emulated testbed's video flows both send and receive frames with this module.

use crate::fec;
use crate::handle::ControllerHandle;
use crate::media_datagrams::{MediaChannel, MediaSender};
use crate::video_packet::{is_padding, VideoHeader, HEADER};
use polycc_sim::engine::video::FrameRecord;
use std::collections::BTreeMap;

/// How long a frame's datagrams may wait to leave: after this the frame is late however it
/// ends (ITU-T G.114 puts 400 ms one way as the limit of interactive use), and dropping what
/// cannot make it keeps the queue from growing when the target overshoots the path.
pub const MEDIA_DEADLINE: std::time::Duration = std::time::Duration::from_millis(400);

/// Bytes of a QUIC packet around one DATAGRAM frame's payload: IPv4 (20) and UDP (8) headers,
/// the short header's first byte, s2n-quic's 16-byte connection id and a packet number of up
/// to 4 bytes (RFC 9000 §17.3), the AEAD tag (16, RFC 9001 §5.3) and the DATAGRAM frame's type
/// and 2-byte length (RFC 9221 §4).
pub const QUIC_OVERHEAD: u64 = 20 + 8 + 1 + 16 + 4 + 16 + 1 + 2;

/// Most frames the receiver gathers at once; older unfinished ones are given up.
const MAX_OPEN_FRAMES: usize = 256;

/// Bytes of each shard for datagrams of `packet` bytes on the wire: what is left after QUIC's
/// overhead and the video header, made even (the code works on 16-bit symbols).
pub fn shard_len(packet: u64) -> usize {
    let left = packet.saturating_sub(QUIC_OVERHEAD + HEADER as u64) as usize;
    (left & !1).max(2)
}

/// Data shard `i` of frame `frame`: bytes both ends compute, so that the receiver can check
/// every byte it recovers.
pub fn data_shard(frame: u32, i: usize, len: usize) -> Vec<u8> {
    let seed = frame.wrapping_mul(2_654_435_761) ^ (i as u32).wrapping_mul(40_503);
    (0..len)
        .map(|j| (seed.wrapping_add(j as u32).wrapping_mul(97) >> 7) as u8)
        .collect()
}

/// The datagrams of one frame: its k data shards then its m repair shards, each with its
/// header.
pub fn frame_datagrams(
    frame: u32,
    first_seg: u64,
    k: u32,
    n: u32,
    len: usize,
) -> Result<Vec<Vec<u8>>, String> {
    let (Ok(k16), Ok(n16)) = (u16::try_from(k), u16::try_from(n)) else {
        return Err(format!(
            "frame {frame}: {n} packets, more than a video datagram numbers"
        ));
    };
    let data: Vec<Vec<u8>> = (0..k as usize).map(|i| data_shard(frame, i, len)).collect();
    let repair =
        fec::encode(u64::from(frame), &data, (n - k) as usize).map_err(|e| e.to_string())?;
    Ok(data
        .iter()
        .chain(&repair)
        .enumerate()
        .map(|(i, shard)| {
            VideoHeader {
                frame,
                shard: i as u16,
                data_shards: k16,
                shards: n16,
                first_seg,
            }
            .encode(shard)
        })
        .collect())
}

/// Sends frame `index` (`frame` as the source encoded it) as datagrams of `len`-byte shards:
/// the controller hears of the frame first (a frame scheduler, PIBES, paces its first packet
/// as such), then its datagrams are queued on `media` to leave within [`MEDIA_DEADLINE`], and
/// s2n is told there is something to send.
pub fn queue_frame(
    conn: &s2n_quic::connection::Handle,
    media: &MediaChannel,
    controller: Option<&ControllerHandle>,
    index: u32,
    frame: &FrameRecord,
    len: usize,
) -> Result<(), String> {
    if let Some(h) = controller {
        h.post_frame(&polycc::FrameInfo {
            index: u64::from(index),
            packets: frame.packets,
            bytes: frame.bytes,
        });
    }
    let deadline = std::time::Instant::now() + MEDIA_DEADLINE;
    let datagrams = frame_datagrams(
        index,
        frame.first_seg,
        frame.data_packets,
        frame.packets,
        len,
    )?;
    for (i, d) in datagrams.into_iter().enumerate() {
        media.queue(frame.first_seg + i as u64, d.into(), deadline);
    }
    // A query that finds the sender wakes the connection.
    let _ = conn.datagram_mut(|_: &mut MediaSender| ());
    Ok(())
}

/// Gives `controller` padding datagrams of a `len`-byte shard's size to send when no media
/// waits and it asks for padding (GCC's probes).
pub fn pad_for(media: &MediaChannel, controller: &ControllerHandle, len: usize) {
    media.pad_with(
        controller.clone(),
        crate::video_packet::padding(len + HEADER).into(),
    );
}

/// One frame's shards so far.
#[derive(Debug)]
struct Partial {
    header: VideoHeader,
    shards: Vec<(usize, Vec<u8>)>,
    recovered: bool,
}

/// A shard the receiver had not seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewShard {
    /// Its segment in the source's numbering.
    pub seg: u64,
    /// Its header.
    pub header: VideoHeader,
    /// It was the k-th of its frame: the frame is recovered and checked now.
    pub recovered: bool,
}

/// The receiver's frames being gathered.
#[derive(Debug, Default)]
pub struct FrameAssembler {
    open: BTreeMap<u32, Partial>,
    /// Frames recovered and checked.
    pub recovered: u64,
}

impl FrameAssembler {
    /// Takes one datagram; returns the segment it carries when it is new (a shard not seen
    /// before), `None` for a duplicate or a frame given up. An error for a datagram that is
    /// not one of this flow's, or a frame that recovers to other bytes than were sent.
    pub fn on_datagram(&mut self, datagram: &[u8]) -> Result<Option<u64>, String> {
        Ok(self.on_shard(datagram)?.map(|s| s.seg))
    }

    /// As [`FrameAssembler::on_datagram`], with the shard's header and whether it recovered
    /// its frame.
    pub fn on_shard(&mut self, datagram: &[u8]) -> Result<Option<NewShard>, String> {
        if is_padding(datagram) {
            return Ok(None);
        }
        let (h, shard) = VideoHeader::decode(datagram).map_err(|e| e.to_string())?;
        if !self.open.contains_key(&h.frame) {
            if self.open.len() == MAX_OPEN_FRAMES {
                let oldest = *self.open.keys().next().expect("full");
                if oldest > h.frame {
                    return Ok(None); // older than every frame kept: given up
                }
                self.open.remove(&oldest);
            }
            self.open.insert(
                h.frame,
                Partial {
                    header: h,
                    shards: Vec::new(),
                    recovered: false,
                },
            );
        }
        let p = self.open.get_mut(&h.frame).expect("just inserted");
        let same = VideoHeader {
            shard: h.shard,
            ..p.header
        };
        if same != h {
            return Err(format!(
                "video frame {}: shard {} says {} of {} shards from segment {}, an earlier one \
                 {} of {} from {}",
                h.frame,
                h.shard,
                h.data_shards,
                h.shards,
                h.first_seg,
                p.header.data_shards,
                p.header.shards,
                p.header.first_seg
            ));
        }
        let i = usize::from(h.shard);
        if p.shards.iter().any(|(j, _)| *j == i) {
            return Ok(None);
        }
        let seg = h.first_seg + i as u64;
        let shard_of = |recovered| NewShard {
            seg,
            header: h,
            recovered,
        };
        if p.recovered {
            p.shards.push((i, Vec::new()));
            return Ok(Some(shard_of(false)));
        }
        p.shards.push((i, shard.to_vec()));
        let k = usize::from(h.data_shards);
        if p.shards.len() >= k {
            let given: Vec<(usize, &[u8])> =
                p.shards.iter().map(|(j, b)| (*j, b.as_slice())).collect();
            let m = usize::from(h.shards) - k;
            let data = fec::recover(u64::from(h.frame), k, m, &given).map_err(|e| e.to_string())?;
            for (j, d) in data.iter().enumerate() {
                if *d != data_shard(h.frame, j, d.len()) {
                    return Err(format!(
                        "video frame {}: data shard {j} recovered from shards {:?} differs from \
                         what was sent",
                        h.frame,
                        p.shards.iter().map(|(j, _)| *j).collect::<Vec<_>>()
                    ));
                }
            }
            p.recovered = true;
            self.recovered += 1;
            // Only the count matters from now on.
            for (_, b) in &mut p.shards {
                *b = Vec::new();
            }
            return Ok(Some(shard_of(true)));
        }
        Ok(Some(shard_of(false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_recovers_from_any_k_of_its_datagrams_and_is_checked() {
        let len = shard_len(1200);
        assert_eq!(len, 1200 - 68 - 20);
        let dgs = frame_datagrams(5, 100, 8, 10, len).expect("coded");
        assert_eq!(dgs.len(), 10);
        assert!(dgs.iter().all(|d| d.len() == HEADER + len));
        // Shards 0 and 4 lost: the 8th distinct one recovers the frame.
        let mut a = FrameAssembler::default();
        let order = [9, 1, 2, 3, 5, 6, 7, 8];
        for (n, &i) in order.iter().enumerate() {
            let got = a.on_shard(&dgs[i]).expect("valid").expect("new");
            assert_eq!(
                (got.seg, got.header.frame, got.recovered),
                (100 + i as u64, 5, n == 7)
            );
            assert_eq!(a.recovered, u64::from(n == 7), "after {} shards", n + 1);
        }
        assert_eq!(a.on_datagram(&dgs[3]), Ok(None), "a duplicate");
        assert_eq!(a.on_datagram(&dgs[0]), Ok(Some(100)), "late, still counted");
        // A corrupted shard is found when the frame recovers.
        let mut b = FrameAssembler::default();
        let mut bad = dgs[2].clone();
        bad[HEADER + 7] ^= 1;
        for d in [&dgs[0], &dgs[1], &bad, &dgs[3], &dgs[4], &dgs[5], &dgs[6]] {
            assert!(b.on_datagram(d).is_ok());
        }
        let e = b.on_datagram(&dgs[7]).expect_err("corrupt");
        assert!(e.contains("data shard 2"), "{e}");
        // A datagram contradicting its frame's earlier ones.
        let mut c = FrameAssembler::default();
        c.on_datagram(&dgs[0]).expect("first");
        let other = frame_datagrams(5, 200, 8, 10, len).expect("coded");
        assert!(c.on_datagram(&other[1]).is_err());
        assert!(c.on_datagram(&[1, 2, 3]).is_err());
        assert_eq!(c.on_datagram(&crate::video_packet::padding(900)), Ok(None));
    }
}
