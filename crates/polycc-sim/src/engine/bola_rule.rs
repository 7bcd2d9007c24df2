//! The BOLA rule of the DASH reference player (dash.js, `BolaRule`; Spiteri, Sitaraman and
//! Sparacio, "From Theory to Practice: Improving Bitrate Adaptation in the DASH Reference
//! Player", MMSys'18): BOLA's buffer-based choice (`engine::bola`) with
//! - a start-up phase that picks from the measured throughput until two chunks are buffered,
//!   then sets a placeholder buffer under which BOLA keeps that level;
//! - a placeholder buffer: the time the player spends idle between a chunk's arrival and the
//!   next decision (its buffer full) counts as buffer, so that a player whose buffer cannot
//!   grow past its target still climbs to the ladder's top; emptied by a stall;
//! - BOLA-O: a step up is capped at the level the measured throughput carries (never below
//!   the last level), against oscillation;
//! - a safety check against a stall: no bitrate above half the throughput times the buffer
//!   over the chunk length;
//! - a delay before the request when the buffer (placeholder first) is above what the chosen
//!   level wants, except at the top level.
//!
//! The throughput is the harmonic mean of the last three chunks' (bits over request to last
//! byte, the round trip included, as dash.js measures it).

use crate::engine::bola::Bola;
use std::collections::VecDeque;

/// dash.js `MediaPlayerModel` default `bandwidthSafetyFactor`: the start-up phase picks a
/// level at most this share of the throughput.
pub const BANDWIDTH_SAFETY_FACTOR: f64 = 0.9;
/// dash.js `REBUFFER_SAFETY_FACTOR`: start-up ends once the buffer holds a chunk over this,
/// and no level's bitrate may exceed this share of throughput × buffer / chunk.
pub const REBUFFER_SAFETY_FACTOR: f64 = 0.5;
/// dash.js `AVERAGE_THROUGHPUT_SAMPLE_AMOUNT_VOD`: chunks in the throughput estimate.
pub const THROUGHPUT_SAMPLES: usize = 3;
/// dash.js: a buffer at or below this (s) at a decision is a stall; it empties the placeholder.
const EMPTY_BUFFER_S: f64 = 0.1;

#[derive(Clone, Debug)]
pub struct BolaRule {
    bola: Bola,
    chunk_s: f64,
    steady: bool,
    placeholder_s: f64,
    last_level: usize,
    /// (bits, seconds) of the latest chunks.
    samples: VecDeque<(f64, f64)>,
}

impl BolaRule {
    pub fn new(bola: Bola, chunk_s: f64) -> BolaRule {
        BolaRule {
            bola,
            chunk_s,
            steady: false,
            placeholder_s: 0.0,
            last_level: 0,
            samples: VecDeque::with_capacity(THROUGHPUT_SAMPLES),
        }
    }

    /// A chunk of `bits` took `seconds` from its request to its last byte.
    pub fn on_download(&mut self, bits: f64, seconds: f64) {
        if bits <= 0.0 || seconds <= 0.0 {
            return;
        }
        if self.samples.len() == THROUGHPUT_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back((bits, seconds));
    }

    /// Playback stalled: the placeholder no longer stands for buffer.
    pub fn on_stall(&mut self) {
        if self.steady {
            self.placeholder_s = 0.0;
        }
    }

    /// Harmonic mean of the recent chunks' throughputs, bit/s (0 without a sample).
    fn throughput(&self) -> f64 {
        let inverse: f64 = self.samples.iter().map(|(b, s)| s / b).sum();
        if inverse > 0.0 {
            self.samples.len() as f64 / inverse
        } else {
            0.0
        }
    }

    /// The level of the next chunk, decided with `buffer_s` of video buffered after `idle_s`
    /// spent waiting since the last chunk arrived, and how long to wait before asking for it.
    pub fn decide(&mut self, buffer_s: f64, idle_s: f64) -> (usize, f64) {
        let throughput = self.throughput();
        if buffer_s <= EMPTY_BUFFER_S {
            self.placeholder_s = 0.0;
        }
        self.placeholder_s += idle_s.max(0.0);
        let effective = buffer_s + self.placeholder_s;
        let mut level = self.bola.level(effective);
        if !self.steady {
            let q = if throughput > 0.0 {
                self.bola
                    .level_for_throughput(throughput * BANDWIDTH_SAFETY_FACTOR)
            } else {
                0
            };
            if buffer_s > self.chunk_s / REBUFFER_SAFETY_FACTOR {
                self.steady = true;
                let want = self.bola.least_buffer_for(q);
                if want > buffer_s {
                    self.placeholder_s = want - buffer_s;
                }
            }
            self.last_level = q;
            return (q, 0.0);
        }
        // BOLA-O: step up only as far as the throughput carries, never below the last level.
        if level > self.last_level {
            let carried = self.bola.level_for_throughput(throughput);
            if level > carried {
                level = carried.max(self.last_level);
            }
        }
        if throughput > 0.0 {
            let safe = REBUFFER_SAFETY_FACTOR * throughput * buffer_s / self.chunk_s;
            while level > 0 && self.bola.bitrate(level) > safe {
                level -= 1;
            }
        }
        // Above the buffer the level wants: spend the placeholder first, then wait.
        let mut delay = effective - self.bola.buffer_for(level);
        if delay > 0.0 {
            let spent = delay.min(self.placeholder_s);
            self.placeholder_s -= spent;
            delay -= spent;
        }
        if level == self.bola.levels() - 1 {
            delay = 0.0;
        }
        self.last_level = level;
        (level, delay.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::Rate;

    fn rule() -> BolaRule {
        let ladder: Vec<Rate> = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0]
            .iter()
            .map(|m| Rate::from_bps_f64(m * 1e6))
            .collect();
        BolaRule::new(Bola::new(&ladder, 30.0).unwrap(), 4.0)
    }

    #[test]
    fn start_up_follows_the_throughput_then_the_placeholder_keeps_the_level() {
        let mut r = rule();
        // No sample yet: the lowest.
        assert_eq!(r.decide(0.0, 0.0), (0, 0.0));
        // 9 Mbit/s measured: 0.9 × 9 = 8.1 carries level 5 (8 Mbit/s), still starting.
        r.on_download(9e6, 1.0);
        assert_eq!(r.decide(4.0, 0.0).0, 5);
        // Past two chunks of buffer the rule turns steady with a placeholder under which BOLA
        // keeps level 5.
        assert_eq!(r.decide(8.5, 0.0).0, 5);
        assert!(r.steady && r.placeholder_s > 0.0);
        assert_eq!(r.decide(9.0, 0.0).0, 5);
    }

    #[test]
    fn idle_time_lets_a_full_buffer_reach_the_top_and_a_stall_empties_it() {
        let mut r = rule();
        for _ in 0..3 {
            r.on_download(100e6, 1.0);
        }
        r.decide(0.0, 0.0);
        r.decide(9.0, 0.0);
        // The buffer waits a chunk below its 30 s target: the plain rule would stop below the
        // top; each wait adds to the placeholder until the top level is chosen.
        let plain = r.bola.level(26.0);
        assert!(plain < 6, "plain BOLA at 26 s: {plain}");
        let mut level = 0;
        for _ in 0..20 {
            level = r.decide(26.0, 4.0).0;
        }
        assert_eq!(level, 6);
        r.on_stall();
        assert_eq!(r.placeholder_s, 0.0);
    }

    #[test]
    fn a_step_up_is_capped_by_the_throughput_and_a_low_buffer_by_safety() {
        let mut r = rule();
        for _ in 0..3 {
            r.on_download(3e6, 1.0);
        }
        r.decide(0.0, 0.0);
        r.decide(9.0, 0.0);
        // A large placeholder would pick the top; 3 Mbit/s carries level 3 (2 Mbit/s).
        r.placeholder_s = 30.0;
        assert_eq!(r.decide(20.0, 0.0).0, 3);
        // 2 s of real buffer: no more than 0.5 × 3 × 2 / 4 = 0.75 Mbit/s, whatever the
        // placeholder.
        r.placeholder_s = 30.0;
        assert_eq!(r.decide(2.0, 0.0).0, 1);
    }
}
