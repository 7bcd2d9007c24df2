//! The `polycc-quic` binary's video mode: real-time video over QUIC datagrams, as the emulated
//! testbed's video flows send it. The client runs the simulator's video source
//! (`polycc_sim::engine::video::VideoSource`: a frame every 1/fps sized from the controller's
//! `media_control()` target clamped to [min, max], cut into k data and m repair packets) and
//! sends each frame with [`crate::video_frames::queue_frame`]; the server gathers the shards
//! with [`crate::video_frames::FrameAssembler`] (every recovered frame checked byte for byte)
//! and records per frame its shards, arrivals and when it became decodable.
//!
//! The client stops producing frames at the end of its duration, waits for its queue to drain
//! (at most [`MEDIA_DEADLINE`]: what has not left by then never will) and closes the
//! connection; the server's records end when the connection does.

use crate::handle::ControllerHandle;
use crate::media_datagrams::{MediaChannel, MediaCounters};
use crate::video_frames::{
    pad_for, queue_frame, shard_len, FrameAssembler, MEDIA_DEADLINE, QUIC_OVERHEAD,
};
use crate::video_packet::HEADER;
use polycc::{Rate, Time};
use polycc_sim::engine::video::VideoSource;
use polycc_sim::scenario::VideoModel;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// RFC 9000 §14.1: every QUIC path carries UDP payloads of 1200 bytes; a video datagram of at
/// most this many bytes on the wire (its IPv4 and UDP headers included, as the source's P)
/// fits any path without discovery.
pub const MAX_PACKET: u64 = 1200;

/// The smallest datagram that carries a header and a 2-byte shard.
pub const MIN_PACKET: u64 = QUIC_OVERHEAD + HEADER as u64 + 2;

/// Highest frame rate accepted: one frame a millisecond.
pub const MAX_FPS: f64 = 1000.0;

/// How often the sender looks at its queue while it drains.
const DRAIN_POLL: Duration = Duration::from_millis(5);

/// A video source's settings (the scenario's `kind = "video"` fields).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VideoOptions {
    /// Frames a second.
    pub fps: f64,
    /// The encoder's range; the controller's target is clamped to it (equal ends: a fixed
    /// bitrate).
    pub min_rate: Rate,
    /// See `min_rate`.
    pub max_rate: Rate,
    /// Bytes of a datagram on the wire (P).
    pub packet: u64,
    /// Repair packets per data packet (0: no FEC).
    pub fec: f64,
    /// Standard deviation of the encoder's relative frame-size error.
    pub frame_noise: f64,
    /// Seed of the encoder's noise.
    pub seed: u64,
}

impl VideoOptions {
    /// The source's model, or what is out of range.
    pub fn model(&self) -> Result<VideoModel, String> {
        if !(self.fps > 0.0 && self.fps <= MAX_FPS) {
            return Err(format!("--fps must be in (0, {MAX_FPS}], not {}", self.fps));
        }
        if self.min_rate == Rate::ZERO || self.min_rate > self.max_rate {
            return Err(format!(
                "the video bitrate range {} .. {} Mbit/s must be positive and increasing",
                self.min_rate.as_mbps_f64(),
                self.max_rate.as_mbps_f64()
            ));
        }
        if !(MIN_PACKET..=MAX_PACKET).contains(&self.packet) {
            return Err(format!(
                "--packet must be {MIN_PACKET}..={MAX_PACKET} bytes, not {}",
                self.packet
            ));
        }
        if !(0.0..=1.0).contains(&self.fec) {
            return Err(format!("--fec must be in [0, 1], not {}", self.fec));
        }
        if !(0.0..=0.5).contains(&self.frame_noise) {
            return Err(format!(
                "--frame-noise must be in [0, 0.5], not {}",
                self.frame_noise
            ));
        }
        Ok(VideoModel {
            interval: polycc::Duration::from_secs_f64(1.0 / self.fps),
            min_rate: self.min_rate,
            max_rate: self.max_rate,
            packet: self.packet,
            fec: self.fec,
            retransmit: false,
            frame_noise: self.frame_noise,
        })
    }
}

/// What a video sender did.
#[derive(Clone, Debug, Default)]
pub struct VideoSent {
    /// Frames produced.
    pub frames: u64,
    /// Of them, frames whose first datagram left.
    pub frames_sent: u64,
    /// Datagrams of all frames (data and repair).
    pub packets: u64,
    /// Of them, repair datagrams.
    pub repair_packets: u64,
    /// Bytes of all frames on the wire (packets × P).
    pub bytes: u64,
    /// Mean time from a frame's production to its first datagram's departure, ms.
    pub mean_send_wait_ms: f64,
    /// The datagram channel's counters (sent, expired at the deadline, overflowed, padding).
    pub counters: MediaCounters,
}

/// Sends frames on `conn` for `duration`, then waits for the queue to drain; `controller` is
/// the connection's polycc controller (its media target, frames and padding), if any.
pub async fn send_video(
    conn: &s2n_quic::connection::Handle,
    media: &MediaChannel,
    controller: Option<&ControllerHandle>,
    o: &VideoOptions,
    duration: Duration,
) -> Result<VideoSent, String> {
    let model = o.model()?;
    let len = shard_len(model.packet);
    if let Some(h) = controller {
        pad_for(media, h, len);
    }
    let mut source = VideoSource::new(model);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(o.seed);
    let start = Instant::now();
    let since_start = |at: Instant| {
        Time(u64::try_from(at.saturating_duration_since(start).as_nanos()).unwrap_or(u64::MAX))
    };
    let (mut sent, mut arrived) = (Vec::new(), Vec::new());
    let mut record_departures = |source: &mut VideoSource| {
        media.drain(&mut sent, &mut arrived);
        arrived.clear();
        for (seg, at) in sent.drain(..) {
            source.on_sent(seg, since_start(at));
        }
    };
    let interval = Duration::from_secs_f64(1.0 / o.fps);
    let mut next = start;
    while next < start + duration {
        tokio::time::sleep_until(next.into()).await;
        record_departures(&mut source);
        if let Some(e) = media.error() {
            return Err(format!("the video connection ended: {e}"));
        }
        let target = controller.and_then(|h| h.snapshot().media);
        let frame = source.encode(
            since_start(Instant::now()),
            target.map(|m| m.target_bitrate),
            target.and_then(|m| m.competing),
            &mut rng,
        );
        let index = u32::try_from(source.frames.len() - 1)
            .map_err(|_| "more than 2^32 video frames".to_string())?;
        queue_frame(conn, media, controller, index, &frame, len)?;
        next += interval;
    }
    let drained_by = Instant::now() + MEDIA_DEADLINE;
    while media.queued() > 0 && Instant::now() < drained_by {
        tokio::time::sleep(DRAIN_POLL).await;
    }
    record_departures(&mut source);
    let waits: Vec<f64> = source
        .frames
        .iter()
        .filter_map(|f| Some((f.first_sent? - f.generated).as_secs_f64() * 1e3))
        .collect();
    let packets: u64 = source.frames.iter().map(|f| u64::from(f.packets)).sum();
    let data: u64 = source
        .frames
        .iter()
        .map(|f| u64::from(f.data_packets))
        .sum();
    Ok(VideoSent {
        frames: source.frames.len() as u64,
        frames_sent: waits.len() as u64,
        packets,
        repair_packets: packets - data,
        bytes: source.frames.iter().map(|f| f.bytes).sum(),
        mean_send_wait_ms: if waits.is_empty() {
            f64::NAN
        } else {
            waits.iter().sum::<f64>() / waits.len() as f64
        },
        counters: media.counters(),
    })
}

/// What the receiver saw of one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameResult {
    /// Its index (from 0).
    pub frame: u32,
    /// n: its datagrams (0: none arrived, so unknown).
    pub shards: u16,
    /// k: the datagrams that recover it.
    pub data_shards: u16,
    /// Distinct datagrams of it that arrived.
    pub received: u16,
    /// Its bytes on the wire: n datagrams of the size that arrived, with QUIC's usual
    /// overhead (the source's P when P leaves an even shard).
    pub bytes: u64,
    /// Its first datagram's arrival, seconds from the connection's start at the receiver.
    pub first_arrival_s: Option<f64>,
    /// When its k-th datagram arrived and it was recovered and checked, seconds likewise.
    pub decodable_s: Option<f64>,
}

/// What a video receiver saw: every frame up to the last one any datagram of arrived.
#[derive(Clone, Debug, Default)]
pub struct VideoReceived {
    /// By frame index, with the frames none of whose datagrams arrived.
    pub frames: Vec<FrameResult>,
    /// Datagrams received (padding and duplicates included).
    pub datagrams: u64,
}

impl VideoReceived {
    /// Frames recovered.
    pub fn decodable(&self) -> u64 {
        self.frames
            .iter()
            .filter(|f| f.decodable_s.is_some())
            .count() as u64
    }
}

/// Receives the frames of one connection on `media` until the connection ends; times are from
/// `start`. An error for a datagram that is not a video datagram of one flow, or a frame that
/// recovers to other bytes than were sent.
pub async fn receive_video(media: &MediaChannel, start: Instant) -> Result<VideoReceived, String> {
    let mut assembler = FrameAssembler::default();
    let mut frames: BTreeMap<u32, FrameResult> = BTreeMap::new();
    let (mut sent, mut arrived) = (Vec::new(), Vec::new());
    let mut datagrams = 0;
    loop {
        media.arrival().await;
        media.drain(&mut sent, &mut arrived);
        sent.clear();
        if arrived.is_empty() && media.error().is_some() {
            break;
        }
        for (d, at) in arrived.drain(..) {
            datagrams += 1;
            let Some(new) = assembler.on_shard(&d)? else {
                continue;
            };
            let s = at.saturating_duration_since(start).as_secs_f64();
            let h = new.header;
            let f = frames.entry(h.frame).or_insert(FrameResult {
                frame: h.frame,
                shards: h.shards,
                data_shards: h.data_shards,
                received: 0,
                bytes: u64::from(h.shards) * (d.len() as u64 + QUIC_OVERHEAD),
                first_arrival_s: Some(s),
                decodable_s: None,
            });
            f.received = f.received.saturating_add(1);
            if new.recovered {
                f.decodable_s = Some(s);
            }
        }
    }
    let last = frames.keys().next_back().map_or(0, |&i| u64::from(i) + 1);
    let all = (0..last)
        .map(|i| {
            let i = i as u32;
            frames.get(&i).copied().unwrap_or(FrameResult {
                frame: i,
                shards: 0,
                data_shards: 0,
                received: 0,
                bytes: 0,
                first_arrival_s: None,
                decodable_s: None,
            })
        })
        .collect();
    Ok(VideoReceived {
        frames: all,
        datagrams,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> VideoOptions {
        VideoOptions {
            fps: 30.0,
            min_rate: Rate::from_mbps(1),
            max_rate: Rate::from_mbps(1),
            packet: 1200,
            fec: 0.1,
            frame_noise: 0.0,
            seed: 1,
        }
    }

    #[test]
    fn out_of_range_video_options_are_named() {
        assert!(options().model().is_ok());
        let bad = |o: VideoOptions, word: &str| {
            let e = o.model().expect_err("out of range");
            assert!(e.contains(word), "{e}");
        };
        bad(
            VideoOptions {
                fps: 0.0,
                ..options()
            },
            "--fps",
        );
        bad(
            VideoOptions {
                fps: f64::NAN,
                ..options()
            },
            "--fps",
        );
        bad(
            VideoOptions {
                min_rate: Rate::from_mbps(2),
                ..options()
            },
            "bitrate range",
        );
        bad(
            VideoOptions {
                packet: 1201,
                ..options()
            },
            "--packet",
        );
        bad(
            VideoOptions {
                packet: MIN_PACKET - 1,
                ..options()
            },
            "--packet",
        );
        bad(
            VideoOptions {
                fec: -0.1,
                ..options()
            },
            "--fec",
        );
        bad(
            VideoOptions {
                frame_noise: 0.6,
                ..options()
            },
            "--frame-noise",
        );
    }
}
