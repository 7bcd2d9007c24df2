//! A real-time video source (PIBES §III–IV): one frame per frame interval T, sized by an encoder
//! model from the controller's target bitrate, cut into datagrams of P bytes, with per-frame
//! records of when it was produced, first sent, decodable and complete.
//!
//! Encoder: F_c,k = ceil((R_k·T + c_k) / P)·P (PIBES eq. 6, FEC included) with R_k the target
//! of the controller's `media_control()` clamped to [min_rate, max_rate] and c_k ∈ (−P, 0] the
//! bytes the previous frames were rounded up by. The carry is ours: an encoder's rate control keeps
//! its long-run rate at R_k, whereas eq. 6's ceil alone adds up to a packet per frame (7 % of
//! 4 Mbit/s with 1200-byte packets at 30 fps), which would push a source targeting 95 % of the
//! capacity past it. Then F_k = F_c,k·(1 + e_k) with
//! e_k ~ N(0, σ) from the run's seeded RNG (eq. 7). The frame is sent as n_f = round(F_k / P)
//! (at least 1) datagrams of P bytes: whole packets, rounded to the nearest so that the sent
//! rate is unbiased (rounding up would add half a packet per frame, 4 % at 3 Mbit/s, and push a
//! source targeting 95 % of the capacity past it).
//!
//! FEC is modelled, not implemented: a systematic MDS erasure code (Reed-Solomon-like) makes a
//! frame of k data and m repair packets decodable as soon as any k of its k + m packets arrive,
//! and only those counts matter in a simulator, so no coding is done. m is the share
//! fec / (1 + fec) of the frame's packets, rounded (a frame of 11 packets at 10 % FEC has 1
//! repair packet; one of 4 has none).
//!
//! The emulated testbed's QUIC flows use this source as it is (its encoder, segment numbering
//! and records), with real Reed-Solomon coding of the same k and m (`polycc_quic::fec`).

use crate::scenario::VideoModel;
use polycc::units::{Rate, Time};
use rand::Rng;

/// Frames produced in the last second of a run whose fate is still open are left out of the
/// frame statistics (they are neither delivered nor lost yet).
pub const SETTLE_GRACE_S: f64 = 1.0;

#[derive(Clone, Copy, Debug)]
pub struct FrameRecord {
    pub generated: Time,
    pub first_seg: u64,
    /// n_f: packets (data and repair).
    pub packets: u32,
    /// k: packets needed to decode.
    pub data_packets: u32,
    pub bytes: u64,
    /// The target rate the encoder sized the frame from.
    pub target: Rate,
    /// The controller's competing-flow flag (`media_control().competing`) when the frame was
    /// produced.
    pub competing: Option<bool>,
    pub first_sent: Option<Time>,
    received: u32,
    pub decodable: Option<Time>,
    pub complete: Option<Time>,
}

impl FrameRecord {
    /// Frame delay: first packet sent to frame decodable.
    pub fn delay(&self) -> Option<f64> {
        Some((self.decodable? - self.first_sent?).as_secs_f64())
    }
}

pub struct VideoSource {
    pub model: VideoModel,
    pub frames: Vec<FrameRecord>,
    next_seg: u64,
    /// Bytes by which earlier target frame sizes were rounded up (≤ 0).
    carry: f64,
}

/// A standard normal draw (Box–Muller), from the run's RNG.
fn std_normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl VideoSource {
    pub fn new(model: VideoModel) -> Self {
        VideoSource {
            model,
            frames: Vec::new(),
            next_seg: 0,
            carry: 0.0,
        }
    }

    /// Encodes the next frame at `now` for a target rate; returns it. Its segments follow the
    /// previous frame's.
    pub fn encode(
        &mut self,
        now: Time,
        target: Option<Rate>,
        competing: Option<bool>,
        rng: &mut impl Rng,
    ) -> FrameRecord {
        let m = &self.model;
        let rate = target.unwrap_or(m.min_rate).clamp(m.min_rate, m.max_rate);
        let p = m.packet as f64;
        let t = m.interval.as_secs_f64();
        let budget = rate.as_bytes_per_sec_f64() * t + self.carry;
        let target_bytes = (budget / p).ceil().max(1.0) * p;
        self.carry = (budget - target_bytes).max(-p);
        let noise = if m.frame_noise > 0.0 {
            m.frame_noise * std_normal(rng)
        } else {
            0.0
        };
        let bytes = (target_bytes * (1.0 + noise)).max(1.0);
        let packets = ((bytes / p).round() as u32).max(1);
        let repair = ((f64::from(packets) * m.fec / (1.0 + m.fec)).round() as u32).min(packets - 1);
        let rec = FrameRecord {
            generated: now,
            first_seg: self.next_seg,
            packets,
            data_packets: packets - repair,
            bytes: u64::from(packets) * m.packet,
            target: rate,
            competing,
            first_sent: None,
            received: 0,
            decodable: None,
            complete: None,
        };
        self.next_seg += u64::from(packets);
        self.frames.push(rec);
        rec
    }

    /// End of the segments produced so far.
    pub fn end_seg(&self) -> u64 {
        self.next_seg
    }

    fn frame_of(&self, seg: u64) -> Option<usize> {
        let i = self.frames.partition_point(|f| f.first_seg <= seg);
        let i = i.checked_sub(1)?;
        (seg < self.frames[i].first_seg + u64::from(self.frames[i].packets)).then_some(i)
    }

    /// A packet carrying `seg` left the sender.
    pub fn on_sent(&mut self, seg: u64, now: Time) {
        if let Some(i) = self.frame_of(seg) {
            self.frames[i].first_sent.get_or_insert(now);
        }
    }

    /// A new segment reached the receiver.
    pub fn on_arrival(&mut self, seg: u64, now: Time) {
        let Some(i) = self.frame_of(seg) else { return };
        let f = &mut self.frames[i];
        f.received += 1;
        if f.received >= f.data_packets && f.decodable.is_none() {
            f.decodable = Some(now);
        }
        if f.received >= f.packets {
            f.complete = Some(now);
        }
    }

    /// Retransmission as a last resort: a lost segment is worth resending only while the
    /// sender cannot know its frame decodable, i.e. fewer than k of the frame's packets are
    /// acknowledged.
    pub fn needs_retransmit(&self, seg: u64, acked: impl Fn(u64) -> bool) -> bool {
        let Some(i) = self.frame_of(seg) else {
            return false;
        };
        let f = &self.frames[i];
        let end = f.first_seg + u64::from(f.packets);
        let got = (f.first_seg..end).filter(|&s| acked(s)).count() as u32;
        got < f.data_packets
    }

    /// Frames whose outcome is settled at `end` (produced before the grace window).
    pub fn settled(&self, end: Time) -> impl Iterator<Item = &FrameRecord> {
        let cut = end.as_secs_f64() - SETTLE_GRACE_S;
        self.frames
            .iter()
            .filter(move |f| f.generated.as_secs_f64() < cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::Duration;
    use rand::SeedableRng;

    fn model(fec: f64, noise: f64) -> VideoModel {
        VideoModel {
            interval: Duration::from_secs_f64(1.0 / 30.0),
            min_rate: Rate::from_bps(500_000),
            max_rate: Rate::from_mbps(8),
            packet: 1200,
            fec,
            retransmit: false,
            frame_noise: noise,
        }
    }

    #[test]
    fn frame_size_from_target_and_fec_counts() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut v = VideoSource::new(model(0.1, 0.0));
        // 3 Mbit/s at 30 fps: 12 500 bytes → ceil(10.42) = 11 packets, 1 of them repair.
        let f = v.encode(Time::ZERO, Some(Rate::from_mbps(3)), None, &mut rng);
        assert_eq!((f.packets, f.data_packets, f.bytes), (11, 10, 13_200));
        // Carry −700 bytes. Below min_rate: clamped to 0.5 Mbit/s → 2 083 − 700 bytes → 2
        // packets, no repair.
        let g = v.encode(Time::ZERO, Some(Rate::from_bps(1000)), None, &mut rng);
        assert_eq!((g.first_seg, g.packets, g.data_packets), (11, 2, 2));
        assert_eq!(v.end_seg(), 13);
        // Long run: 4 Mbit/s is 13.9 packets per frame, not the 14 of a plain ceil.
        let n: u32 = (0..300)
            .map(|_| {
                v.encode(Time::ZERO, Some(Rate::from_mbps(4)), None, &mut rng)
                    .packets
            })
            .sum();
        let mbps = f64::from(n) * 1200.0 * 8.0 * 30.0 / 300.0 / 1e6;
        assert!((mbps - 4.0).abs() < 0.02, "{mbps} Mbit/s");
    }

    #[test]
    fn decodable_after_any_k_of_n() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut v = VideoSource::new(model(0.1, 0.0));
        v.encode(Time::ZERO, Some(Rate::from_mbps(3)), None, &mut rng); // 11 packets, k = 10
        v.on_sent(0, Time::ZERO);
        // Segment 3 is lost: the other 10 decode the frame; it is never complete.
        for s in (0..11).filter(|&s| s != 3) {
            v.on_arrival(s, Time::ZERO + Duration::from_millis(10 + s));
        }
        let f = v.frames[0];
        assert_eq!(f.decodable, Some(Time::ZERO + Duration::from_millis(20)));
        assert_eq!(f.complete, None);
        assert!((f.delay().unwrap() - 0.020).abs() < 1e-12);
        assert!(!v.needs_retransmit(3, |s| s != 3));
        assert!(v.needs_retransmit(3, |s| s > 4));
    }

    #[test]
    fn encoder_error_has_the_configured_spread() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut v = VideoSource::new(model(0.0, 0.025));
        // 8 Mbit/s at 30 fps: 33 333 bytes = 27.8 packets of 1200 on average (the carry keeps
        // the rate); 2.5 % of that is 0.7 packet.
        let n: Vec<f64> = (0..4000)
            .map(|_| {
                f64::from(
                    v.encode(Time::ZERO, Some(Rate::from_mbps(8)), None, &mut rng)
                        .packets,
                )
            })
            .collect();
        let mean = n.iter().sum::<f64>() / n.len() as f64;
        // Rounding to the nearest whole packet keeps the mean.
        let expect = 8e6 / 8.0 / 30.0 / 1200.0;
        assert!(
            (mean - expect).abs() < 0.1,
            "mean packets {mean} vs {expect:.2}"
        );
        assert!(n.iter().any(|&x| x > 28.0) && n.iter().any(|&x| x <= 28.0));
    }
}
