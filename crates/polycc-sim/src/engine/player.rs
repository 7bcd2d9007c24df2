//! The DASH player at a `dash` flow's receiver: its buffer of video, playback and stalls, and
//! when it asks for the next chunk at which bitrate. Chunks come one at a time: the next is
//! asked for once the last has arrived and fits in the buffer (and after the ABR rule's own
//! delay, `engine::bola_rule`); its bitrate is decided then. Playback starts once `startup` of
//! video is buffered; an empty buffer stalls it (a rebuffering event) until `startup` is
//! buffered again.

use crate::engine::bola::Bola;
use crate::engine::bola_rule::BolaRule;
use crate::output::StreamingSummary;
use crate::scenario::dash::{Abr, DashModel};
use polycc::units::{Duration, Time};
use polycc::Intent;

/// What the player saw, for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayerStats {
    /// From the first request to the start of playback.
    pub startup_s: Option<f64>,
    /// Stalls after playback started.
    pub rebuffers: u64,
    pub rebuffer_s: f64,
    /// Video played.
    pub played_s: f64,
    pub chunks: u64,
    /// Mean bitrate of the chunks received, Mbit/s.
    pub mean_bitrate_mbps: Option<f64>,
    /// Chunks whose level differs from the one before.
    pub switches: u64,
}

impl PlayerStats {
    /// Stalled time over stalled plus played time (0 before playback starts).
    pub fn rebuffer_ratio(&self) -> f64 {
        let total = self.rebuffer_s + self.played_s;
        if total > 0.0 {
            self.rebuffer_s / total
        } else {
            0.0
        }
    }
}

impl From<PlayerStats> for StreamingSummary {
    fn from(s: PlayerStats) -> Self {
        StreamingSummary {
            startup_s: s.startup_s,
            rebuffers: s.rebuffers,
            rebuffer_s: s.rebuffer_s,
            rebuffer_ratio: s.rebuffer_ratio(),
            played_s: s.played_s,
            chunks: s.chunks,
            chunk_bitrate_mbps: s.mean_bitrate_mbps,
            bitrate_switches: s.switches,
        }
    }
}

/// How the player picks a level (`Abr`).
#[derive(Clone)]
enum Chooser {
    Fixed(usize),
    Basic(Bola),
    Rule(Box<BolaRule>),
}

#[derive(Clone)]
pub struct Player {
    model: DashModel,
    chooser: Chooser,
    /// Level of the next chunk, decided when the last one arrived (or at the start).
    next_level: usize,
    /// When the chunk on its way was asked for.
    asked_at: Time,
    /// Seconds of video buffered at `at`.
    buffered: f64,
    at: Time,
    playing: bool,
    first_request: Option<Time>,
    /// Set only while playing stops on an empty buffer, so only after playback started.
    stalled_since: Option<Time>,
    /// Level of the chunk on its way, and of the last one received.
    pending: Option<usize>,
    last_level: Option<usize>,
    requested: u64,
    bitrate_sum_mbps: f64,
    stats: PlayerStats,
}

impl Player {
    pub fn new(model: DashModel) -> Player {
        let chooser = match model.abr {
            Abr::Lowest => Chooser::Fixed(0),
            Abr::Highest => Chooser::Fixed(model.bitrates.len() - 1),
            Abr::Bola | Abr::BolaBasic => {
                match Bola::new(&model.bitrates, model.buffer.as_secs_f64()) {
                    // One bitrate: nothing to choose.
                    None => Chooser::Fixed(0),
                    Some(b) if model.abr == Abr::BolaBasic => Chooser::Basic(b),
                    Some(b) => Chooser::Rule(Box::new(BolaRule::new(b, model.chunk.as_secs_f64()))),
                }
            }
        };
        Player {
            model,
            chooser,
            next_level: 0,
            asked_at: Time::ZERO,
            buffered: 0.0,
            at: Time::ZERO,
            playing: false,
            first_request: None,
            stalled_since: None,
            pending: None,
            last_level: None,
            requested: 0,
            bitrate_sum_mbps: 0.0,
            stats: PlayerStats::default(),
        }
    }

    /// Plays the buffer down to `now`, stalling where it runs out.
    fn advance(&mut self, now: Time) {
        if now <= self.at {
            return;
        }
        let elapsed = (now - self.at).as_secs_f64();
        if self.playing {
            if self.buffered <= elapsed {
                self.stats.played_s += self.buffered;
                // Running out after the last chunk is the video's end, not a stall.
                let ended = self.model.chunks.is_some_and(|n| self.stats.chunks >= n);
                if !ended {
                    self.stalled_since = Some(self.at + Duration::from_secs_f64(self.buffered));
                    self.stats.rebuffers += 1;
                    if let Chooser::Rule(r) = &mut self.chooser {
                        r.on_stall();
                    }
                }
                self.buffered = 0.0;
                self.playing = false;
            } else {
                self.stats.played_s += elapsed;
                self.buffered -= elapsed;
            }
        }
        self.at = now;
    }

    /// The level of the next chunk with `buffer_s` buffered after `idle_s` of waiting since the
    /// last chunk arrived, and the ABR rule's delay before asking for it, s.
    fn choose(&mut self, buffer_s: f64, idle_s: f64) -> (usize, f64) {
        match &mut self.chooser {
            Chooser::Fixed(level) => (*level, 0.0),
            Chooser::Basic(b) => (b.level(buffer_s), 0.0),
            Chooser::Rule(r) => r.decide(buffer_s, idle_s),
        }
    }

    /// The player starts at `now`: whether it will ask for a chunk (a video of no chunks left).
    pub fn first(&mut self, now: Time) -> Option<Duration> {
        self.at = now;
        self.next_level = self.choose(0.0, 0.0).0;
        self.more().then_some(Duration::ZERO)
    }

    fn more(&self) -> bool {
        self.model.chunks.is_none_or(|n| self.requested < n)
    }

    /// The player asks for the next chunk at `now`, at the level decided for it; returns the
    /// chunk's bytes and the player's intent for its flow while the chunk comes: a bandwidth
    /// guarantee at the chunk's bitrate, never below the ladder's lowest (what the flow's
    /// controller takes when the scenario states no intent of its own).
    pub fn request(&mut self, now: Time) -> (u64, Intent) {
        self.advance(now);
        let level = self.next_level;
        self.asked_at = now;
        self.first_request.get_or_insert(now);
        self.pending = Some(level);
        self.requested += 1;
        let intent = Intent::BandwidthGuarantee {
            target_rate: self.model.bitrates[level],
            min_rate: self.model.bitrates[0],
        };
        (self.model.chunk_bytes(level), intent)
    }

    /// The chunk on its way arrived in full at `now`: returns how long the player waits before
    /// it asks for the next (`None`: the video has no chunk left).
    pub fn on_chunk(&mut self, now: Time) -> Option<Duration> {
        self.advance(now);
        let level = self.pending.take()?;
        if let Chooser::Rule(r) = &mut self.chooser {
            let bits = 8.0 * self.model.chunk_bytes(level) as f64;
            r.on_download(bits, (now - self.asked_at).as_secs_f64());
        }
        self.buffered += self.model.chunk.as_secs_f64();
        self.stats.chunks += 1;
        self.bitrate_sum_mbps += self.model.bitrates[level].as_mbps_f64();
        if self.last_level.is_some_and(|l| l != level) {
            self.stats.switches += 1;
        }
        self.last_level = Some(level);
        if !self.playing && self.buffered >= self.model.startup.as_secs_f64() - 1e-9 {
            match self.stalled_since.take() {
                Some(since) => self.stats.rebuffer_s += (now - since).as_secs_f64(),
                None => {
                    self.stats.startup_s = self.first_request.map(|t| (now - t).as_secs_f64());
                }
            }
            self.playing = true;
        }
        // Ask once the next chunk fits; while stalled or before the start nothing drains.
        let overflow =
            self.buffered + self.model.chunk.as_secs_f64() - self.model.buffer.as_secs_f64();
        let room = if self.playing && overflow > 0.0 {
            overflow
        } else {
            0.0
        };
        if !self.more() {
            return None;
        }
        // Decided when the player would ask, the buffer then played down by the wait (it
        // cannot run out meanwhile: it waits only with a chunk's room short of a full buffer).
        let buffer_then = if self.playing {
            self.buffered - room
        } else {
            self.buffered
        };
        let (level, delay) = self.choose(buffer_then, room);
        self.next_level = level;
        Some(Duration::from_secs_f64(room + delay))
    }

    /// The player's figures at the end of the run (`end`): playback up to it, and a stall in
    /// progress counted up to it.
    pub fn stats(&self, end: Time) -> PlayerStats {
        let mut p = self.clone();
        p.advance(end);
        let mut s = p.stats;
        if let Some(since) = p.stalled_since {
            s.rebuffer_s += (end.max(since) - since).as_secs_f64();
        }
        if s.chunks > 0 {
            s.mean_bitrate_mbps = Some(self.bitrate_sum_mbps / s.chunks as f64);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::Rate;

    fn model(chunks: Option<u64>) -> DashModel {
        DashModel {
            bitrates: vec![Rate::from_mbps(4)],
            chunk: Duration::from_secs(4),
            buffer: Duration::from_secs(12),
            startup: Duration::from_secs(4),
            abr: Abr::Highest,
            chunks,
        }
    }

    fn at(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    #[test]
    fn a_late_chunk_stalls_playback_from_the_empty_buffer_to_its_arrival() {
        let mut p = Player::new(model(None));
        assert_eq!(p.first(at(0.0)), Some(Duration::ZERO));
        assert_eq!(
            p.request(at(0.0)),
            (
                2_000_000,
                Intent::BandwidthGuarantee {
                    target_rate: Rate::from_mbps(4),
                    min_rate: Rate::from_mbps(4)
                }
            )
        );
        // In at 1 s: playback starts; the 12 s buffer has room, so the next is asked at once.
        assert_eq!(p.on_chunk(at(1.0)), Some(Duration::ZERO));
        p.request(at(1.0));
        // The buffer runs dry at 5 s; the chunk comes at 7 s: one stall of 2 s.
        assert_eq!(p.on_chunk(at(7.0)), Some(Duration::ZERO));
        let s = p.stats(at(7.0));
        assert_eq!((s.startup_s, s.rebuffers), (Some(1.0), 1));
        assert!(
            (s.rebuffer_s - 2.0).abs() < 1e-6 && (s.played_s - 4.0).abs() < 1e-6,
            "{s:?}"
        );
        // A stall still going at the end counts up to it.
        p.request(at(7.0));
        let s = p.stats(at(13.0));
        assert_eq!(s.rebuffers, 2);
        assert!((s.rebuffer_s - 4.0).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn a_full_buffer_makes_the_player_wait_for_room_and_the_end_is_no_stall() {
        let mut p = Player::new(model(Some(3)));
        p.first(at(0.0));
        p.request(at(0.0));
        p.on_chunk(at(1.0));
        p.request(at(1.0));
        p.on_chunk(at(2.0));
        p.request(at(2.0));
        // All 3 chunks asked for: no next request; the 12 s of video play out without a stall.
        assert_eq!(p.on_chunk(at(3.0)), None);
        let s = p.stats(at(30.0));
        assert_eq!((s.chunks, s.rebuffers), (3, 0), "{s:?}");
        assert!((s.played_s - 12.0).abs() < 1e-6, "{s:?}");
        // With room for two chunks, a third waits until one has played out.
        let mut p = Player::new(DashModel {
            buffer: Duration::from_secs(8),
            ..model(None)
        });
        p.first(at(0.0));
        p.request(at(0.0));
        p.on_chunk(at(1.0));
        p.request(at(1.0));
        let wait = p.on_chunk(at(2.0)).unwrap();
        assert!((wait.as_secs_f64() - 3.0).abs() < 1e-6, "{wait}");
    }
}
