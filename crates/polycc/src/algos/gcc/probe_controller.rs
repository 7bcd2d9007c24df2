//! GCC's initial bandwidth probing (WebRTC `probe_controller.cc`, `bitrate_prober.cc`): when a
//! call starts, two probe clusters at 3× and 6× the start bitrate are sent at their probe rate
//! (media if there is any, padding otherwise); while a result comes back above 70 % of the
//! highest rate probed, a further cluster probes at twice that result, up to the maximum rate.
//! Each cluster lasts at least 15 ms and 5 packets. The results come from
//! [`super::probe_estimator`].

use crate::units::{Bytes, Duration, Rate, Time};
use std::collections::VecDeque;

/// WebRTC `first_exponential_probe_scale` / `second_exponential_probe_scale`.
pub const FIRST_SCALE: f64 = 3.0;
pub const SECOND_SCALE: f64 = 6.0;
/// WebRTC `further_exponential_probe_scale` and `further_probe_threshold`: probe again at twice
/// a result that reached 70 % of the highest rate probed.
pub const FURTHER_SCALE: f64 = 2.0;
pub const FURTHER_THRESHOLD: f64 = 0.7;
/// WebRTC `kMaxWaitingTimeForProbingResult`: without a result this long after a cluster was
/// sent, probing ends.
pub const MAX_WAIT: Duration = Duration::from_secs(1);
/// WebRTC `min_probe_packets_sent` and `min_probe_duration`.
pub const MIN_PACKETS: u32 = 5;
pub const MIN_DURATION: Duration = Duration::from_millis(15);

/// A cluster being sent or sent: its id, rate and what left for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cluster {
    pub id: u32,
    pub rate: Rate,
    pub bytes: Bytes,
    pub packets: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ProbeController {
    started: bool,
    /// Clusters still to send, the head one in progress.
    pending: VecDeque<Cluster>,
    next_id: u32,
    /// The highest rate probed; a result above FURTHER_THRESHOLD of it probes again.
    highest_probed: Option<Rate>,
    max: Option<Rate>,
    /// When the last cluster finished sending, while a result may still ask for more.
    waiting_since: Option<Time>,
}

impl ProbeController {
    /// The call starts at `start`: queue the two initial clusters (capped at `max`).
    pub fn start(&mut self, start: Rate, max: Rate) {
        if self.started {
            return;
        }
        self.started = true;
        self.max = Some(max);
        for scale in [FIRST_SCALE, SECOND_SCALE] {
            self.push(start.mul_f64(scale).min(max));
        }
    }

    fn push(&mut self, rate: Rate) {
        self.pending.push_back(Cluster {
            id: self.next_id,
            rate,
            bytes: 0,
            packets: 0,
        });
        self.next_id += 1;
        self.highest_probed = Some(self.highest_probed.map_or(rate, |h| h.max(rate)));
    }

    /// The cluster being sent, if any: the sender paces at its rate and pads.
    pub fn active(&self) -> Option<&Cluster> {
        self.pending.front()
    }

    /// A packet of `bytes` left while a cluster was active: returns that cluster's id, and the
    /// finished cluster when this packet completed it.
    pub fn on_sent(&mut self, now: Time, bytes: Bytes) -> Option<(u32, Option<Cluster>)> {
        let c = self.pending.front_mut()?;
        c.bytes += bytes;
        c.packets += 1;
        let id = c.id;
        let min_bytes = c.rate.bytes_in(MIN_DURATION);
        if c.packets < MIN_PACKETS || c.bytes < min_bytes {
            return Some((id, None));
        }
        let done = self.pending.pop_front();
        if self.pending.is_empty() {
            self.waiting_since = Some(now);
        }
        Some((id, done))
    }

    /// A new estimate (after a probe result): probe further while it keeps up with the probes.
    pub fn on_estimate(&mut self, now: Time, estimate: Rate) {
        let Some(since) = self.waiting_since else {
            return;
        };
        if now.saturating_since(since) > MAX_WAIT {
            self.waiting_since = None;
            return;
        }
        let (Some(highest), Some(max)) = (self.highest_probed, self.max) else {
            return;
        };
        if highest >= max || estimate.as_bps() as f64 <= FURTHER_THRESHOLD * highest.as_bps() as f64
        {
            return;
        }
        self.waiting_since = None;
        self.push(estimate.mul_f64(FURTHER_SCALE).min(max));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kbps(k: u64) -> Rate {
        Rate::from_bps(k * 1000)
    }

    /// Sends 1200-byte packets until the active cluster is done; returns it.
    fn send_cluster(p: &mut ProbeController, now: Time) -> Cluster {
        loop {
            let (_, done) = p.on_sent(now, 1200).expect("a cluster is active");
            if let Some(c) = done {
                return c;
            }
        }
    }

    #[test]
    fn starts_with_three_and_six_times_the_start_rate_then_probes_further() {
        let mut p = ProbeController::default();
        assert!(p.active().is_none());
        p.start(kbps(300), kbps(8000));
        let t = Time::ZERO;
        let first = send_cluster(&mut p, t);
        assert_eq!((first.rate, first.packets), (kbps(900), 5));
        // 6 × 300 kbit/s for 15 ms is 3 375 bytes: the 5-packet minimum rules.
        let second = send_cluster(&mut p, t);
        assert_eq!((second.rate, second.packets, second.id), (kbps(1800), 5, 1));
        assert!(p.active().is_none());
        // 1.2 Mbit/s is below 70 % of 1.8 Mbit/s: no further probe.
        p.on_estimate(t, kbps(1200));
        assert!(p.active().is_none());
        // 1.7 Mbit/s is above it: probe at 3.4 Mbit/s.
        p.on_estimate(t, kbps(1700));
        assert_eq!(p.active().map(|c| c.rate), Some(kbps(3400)));
        let third = send_cluster(&mut p, t + Duration::from_millis(50));
        assert_eq!(third.rate, kbps(3400));
        // A result more than a second later is too late to ask for more.
        p.on_estimate(t + Duration::from_millis(1100), kbps(3300));
        assert!(p.active().is_none());
    }

    #[test]
    fn clusters_last_at_least_fifteen_ms_and_stop_at_the_maximum() {
        let mut p = ProbeController::default();
        // 3 × 2 Mbit/s = 6 Mbit/s for 15 ms is 11 250 bytes: 10 packets of 1200 bytes.
        p.start(kbps(2000), kbps(8000));
        let first = send_cluster(&mut p, Time::ZERO);
        assert_eq!((first.rate, first.packets), (kbps(6000), 10));
        // The second is capped at the maximum, so nothing probes further.
        let second = send_cluster(&mut p, Time::ZERO);
        assert_eq!(second.rate, kbps(8000));
        p.on_estimate(Time::ZERO, kbps(7900));
        assert!(p.active().is_none());
    }
}
