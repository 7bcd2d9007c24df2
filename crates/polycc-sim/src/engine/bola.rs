//! BOLA's choice of a chunk's bitrate from the buffer level (Spiteri, Urgaonkar and Sitaraman,
//! "BOLA: Near-Optimal Bitrate Adaptation for Online Videos", INFOCOM'16), set up as dash.js's
//! BOLA rule sets it up: utilities υ_m = ln(bitrate_m), and V·p and γ·p chosen so that the
//! lowest bitrate is preferred up to a minimum buffer level and the highest from the buffer
//! target on. The level maximising (V·p·(υ_m + γ·p) − Q) / bitrate_m is chosen, Q the buffer
//! level in seconds.

use polycc::units::Rate;

/// dash.js `MINIMUM_BUFFER_S`: below this buffer level BOLA picks the lowest bitrate.
pub const MINIMUM_BUFFER_S: f64 = 10.0;
/// Ours: with a buffer target below three times the minimum, the minimum becomes a third of
/// the target, so that the ladder spreads over the buffer (dash.js assumes a 30 s target).
const TARGET_OVER_MINIMUM: f64 = 3.0;

#[derive(Clone, Debug, PartialEq)]
pub struct Bola {
    bitrates: Vec<f64>,
    utilities: Vec<f64>,
    vp: f64,
    gp: f64,
}

impl Bola {
    /// BOLA over `bitrates` (lowest first) for a player whose buffer target is `target_s`;
    /// `None` with a single bitrate (nothing to choose).
    pub fn new(bitrates: &[Rate], target_s: f64) -> Option<Bola> {
        if bitrates.len() < 2 {
            return None;
        }
        let b: Vec<f64> = bitrates.iter().map(|r| r.as_bps() as f64).collect();
        let u: Vec<f64> = b.iter().map(|x| x.ln()).collect();
        let minimum = MINIMUM_BUFFER_S.min(target_s / TARGET_OVER_MINIMUM);
        let (u0, umax) = (u[0], u[u.len() - 1]);
        // V·p·(υ_0 + γp − 1) = minimum and V·p·(υ_max + γp − 1) = target.
        let gp = 1.0 - u0 + (umax - u0) / (target_s / minimum - 1.0);
        let vp = minimum / (u0 + gp - 1.0);
        Some(Bola {
            bitrates: b,
            utilities: u,
            vp,
            gp,
        })
    }

    /// Number of ladder levels.
    pub fn levels(&self) -> usize {
        self.bitrates.len()
    }

    /// Bitrate of ladder level `m`, bit/s.
    pub fn bitrate(&self, m: usize) -> f64 {
        self.bitrates[m]
    }

    /// The buffer level at which level `m`'s score reaches zero, V·p·(υ_m + γ·p): above it
    /// BOLA would rather wait than fetch at `m`.
    pub fn buffer_for(&self, m: usize) -> f64 {
        self.vp * (self.utilities[m] + self.gp)
    }

    /// The least buffer level at which level `q` scores at least as well as every lower level.
    pub fn least_buffer_for(&self, q: usize) -> f64 {
        let (bq, uq) = (self.bitrates[q], self.utilities[q]);
        (0..q)
            .map(|i| {
                let (bi, ui) = (self.bitrates[i], self.utilities[i]);
                self.vp * (self.gp + (bq * ui - bi * uq) / (bq - bi))
            })
            .fold(0.0, f64::max)
    }

    /// The highest level whose bitrate is at most `bps` (the lowest if none is).
    pub fn level_for_throughput(&self, bps: f64) -> usize {
        self.bitrates.iter().rposition(|&b| b <= bps).unwrap_or(0)
    }

    /// The ladder level for a buffer of `buffer_s` seconds of video.
    pub fn level(&self, buffer_s: f64) -> usize {
        let mut best = (0, f64::NEG_INFINITY);
        for (m, (&u, &b)) in self.utilities.iter().zip(&self.bitrates).enumerate() {
            let score = (self.vp * (u + self.gp) - buffer_s) / b;
            if score >= best.1 {
                best = (m, score);
            }
        }
        best.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder() -> Vec<Rate> {
        [1.0, 2.5, 5.0, 8.0, 16.0, 40.0]
            .iter()
            .map(|m| Rate::from_bps_f64(m * 1e6))
            .collect()
    }

    #[test]
    fn the_level_climbs_with_the_buffer_from_lowest_to_highest() {
        let bola = Bola::new(&ladder(), 30.0).unwrap();
        assert_eq!(bola.level(0.0), 0);
        assert_eq!(
            bola.level(MINIMUM_BUFFER_S - 0.5),
            0,
            "lowest below the minimum"
        );
        assert_eq!(bola.level(30.0), 5, "highest at the target");
        let levels: Vec<usize> = (0..=30).map(|q| bola.level(q as f64)).collect();
        assert!(levels.windows(2).all(|w| w[1] >= w[0]), "{levels:?}");
        assert!(levels.iter().any(|&l| l > 0 && l < 5), "{levels:?}");
    }

    #[test]
    fn a_short_buffer_spreads_the_ladder_over_it() {
        let bola = Bola::new(&ladder(), 12.0).unwrap();
        assert_eq!(bola.level(3.5), 0);
        assert_eq!(bola.level(12.0), 5);
    }

    #[test]
    fn the_least_buffer_for_a_level_is_where_it_starts_to_win() {
        let bola = Bola::new(&ladder(), 30.0).unwrap();
        for q in 1..6 {
            let b = bola.least_buffer_for(q);
            assert!(bola.level(b + 1e-6) >= q, "level {q} from {b}");
            assert!(bola.level(b - 1e-3) < q, "below {b} a lower level wins");
        }
        assert_eq!(bola.level_for_throughput(9e6), 3);
        assert_eq!(bola.level_for_throughput(0.5e6), 0);
    }

    #[test]
    fn one_bitrate_leaves_nothing_to_choose() {
        assert!(Bola::new(&ladder()[..1], 30.0).is_none());
    }
}
