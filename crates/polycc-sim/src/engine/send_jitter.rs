//! Send-time noise of a host: each packet the sender releases (by its window and pacing) leaves
//! the host a random time later, in order.
//!
//! Why: the simulator's senders pace exactly. Flows paced at constant rates then meet a full
//! drop-tail queue in fixed phases (Floyd & Jacobson, "On traffic phase effects in
//! packet-switched gateways", 1992), so one flow can take nearly every freed slot while another
//! loses far more than its share. Real hosts do not pace exactly: timer slack, interrupt and
//! softirq latency, and qdisc batching delay each packet by up to a millisecond or so. Jitter on a
//! link acts after that link's queue and does not reach the phase at the bottleneck's entry;
//! this does, and only for the flows that ask for it.
//!
//! The controller is told of a packet when the sender releases it (as a kernel stack counts a
//! packet sent when it hands it to the qdisc), so its pacing schedule and rate are unchanged; the
//! delay shows in its RTT samples as host delay does.

pub use crate::scenario::SendJitterModel;
use polycc::units::{Duration, Time};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// A packet released by the sender and held by the host until `at`.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    pub at: Time,
    pub pn: u64,
    pub seg: u64,
    pub wire: u64,
}

/// A flow's own jitter seed: the scenario seed mixed with the flow's index (SplitMix64's
/// finaliser), unrelated to the seeds of the scenario's other random sources.
pub fn flow_seed(scenario_seed: u64, flow: usize) -> u64 {
    let mut z = scenario_seed ^ (flow as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The host's FIFO of released packets and its random source.
pub struct SendJitter {
    model: SendJitterModel,
    rng: Pcg64Mcg,
    held: VecDeque<Held>,
    last_out: Time,
}

impl SendJitter {
    /// `seed` should differ per flow (the scenario seed mixed with the flow's index), so that
    /// flows draw unrelated delays and the run stays reproducible.
    pub fn new(model: SendJitterModel, seed: u64) -> Self {
        SendJitter {
            model,
            rng: Pcg64Mcg::seed_from_u64(seed),
            held: VecDeque::new(),
            last_out: Time::ZERO,
        }
    }

    fn draw(&mut self) -> Duration {
        match self.model {
            SendJitterModel::Uniform { max } => Duration(self.rng.gen_range(0..=max.0)),
            SendJitterModel::Exponential { mean } => {
                // Inverse transform; 1 − U lies in (0, 1], so the logarithm is finite.
                let u: f64 = self.rng.gen();
                Duration((-(1.0 - u).ln() * mean.0 as f64).round() as u64)
            }
        }
    }

    /// Holds a packet the sender released at `now`; it leaves after a random delay, never before
    /// the packet released ahead of it.
    pub fn hold(&mut self, now: Time, pn: u64, seg: u64, wire: u64) {
        let at = (now + self.draw()).max(self.last_out);
        self.last_out = at;
        self.held.push_back(Held { at, pn, seg, wire });
    }

    /// The oldest held packet, when it is due at `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<Held> {
        match self.held.front() {
            Some(h) if h.at <= now => self.held.pop_front(),
            _ => None,
        }
    }

    /// When the oldest held packet leaves.
    pub fn next_out(&self) -> Option<Time> {
        self.held.front().map(|h| h.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delays(model: SendJitterModel, n: u64, gap: Duration) -> Vec<f64> {
        let mut j = SendJitter::new(model, 7);
        let mut out = Vec::new();
        for k in 0..n {
            let now = Time(k * gap.0);
            j.hold(now, k, k, 1500);
            while let Some(h) = j.pop_due(Time(u64::MAX)) {
                assert_eq!(h.pn, out.len() as u64, "FIFO order");
                out.push((h.at - Time(h.pn * gap.0)).as_secs_f64() * 1e3);
            }
        }
        out
    }

    #[test]
    fn uniform_delays_are_bounded_with_the_expected_mean() {
        // Sparse packets (10 ms apart) never wait for one another: the delay is the draw.
        let d = delays(
            SendJitterModel::Uniform {
                max: Duration::from_millis(1),
            },
            20_000,
            Duration::from_millis(10),
        );
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert!(d.iter().all(|&x| (0.0..=1.0).contains(&x)));
        assert!((mean - 0.5).abs() < 0.01, "mean {mean} ms");
    }

    #[test]
    fn exponential_delays_have_the_given_mean() {
        let d = delays(
            SendJitterModel::Exponential {
                mean: Duration::from_millis(1),
            },
            20_000,
            Duration::from_millis(100),
        );
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        // Standard error of the mean: 1 ms / sqrt(20000) = 0.007 ms.
        assert!((mean - 1.0).abs() < 0.03, "mean {mean} ms");
        let above_3 = d.iter().filter(|&&x| x > 3.0).count() as f64 / d.len() as f64;
        assert!((above_3 - (-3.0f64).exp()).abs() < 0.01, "tail {above_3}");
    }

    #[test]
    fn dense_packets_keep_their_order_and_rate() {
        // 100 packets per ms with up to 1 ms of delay: order kept, none leaves early, and the
        // last leaves within the bound, so the long-run rate is unchanged.
        let gap = Duration(10_000);
        let d = delays(
            SendJitterModel::Uniform {
                max: Duration::from_millis(1),
            },
            10_000,
            gap,
        );
        assert!(d.iter().all(|&x| (0.0..=1.0 + 1e-9).contains(&x)));
    }
}
