//! The rate a probe cluster measured (WebRTC `probe_bitrate_estimator.cc`): once feedback covers
//! 80 % of a cluster's packets and bytes, the send rate (bytes but the last sent over the send
//! interval) and the receive rate (bytes but the first received over the receive interval) give
//! min(send, receive); a receive rate under 90 % of the send rate means the probe saturated the
//! link, and the result is 95 % of the receive rate.

use super::probe_controller::Cluster;
use crate::units::{Bytes, Duration, Rate, Time};
use std::collections::{HashMap, VecDeque};

/// WebRTC `kMinReceivedProbesRatio` and `kMinReceivedBytesRatio`.
pub const MIN_RECEIVED_RATIO: f64 = 0.8;
/// WebRTC `kMaxValidRatio`: a receive rate above twice the send rate is a measurement error.
pub const MAX_VALID_RATIO: f64 = 2.0;
/// WebRTC `kMinRatioForUnsaturatedLink` and `kTargetUtilizationFraction`.
pub const UNSATURATED_RATIO: f64 = 0.9;
pub const TARGET_UTILIZATION: f64 = 0.95;
/// WebRTC `kMaxProbeInterval`: send or receive intervals longer than this are not a probe.
pub const MAX_INTERVAL: Duration = Duration::from_secs(1);
/// Clusters whose results are still awaited (WebRTC keeps one second of clusters).
const MAX_CLUSTERS: usize = 8;

#[derive(Clone, Debug, Default)]
struct Received {
    /// The cluster as sent, once it is complete.
    sent: Option<Cluster>,
    first_send: Option<Time>,
    last_send: Option<(Time, Bytes)>,
    first_arrival: Option<(Time, Bytes)>,
    last_arrival: Option<Time>,
    bytes: Bytes,
    packets: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ProbeEstimator {
    /// Packet number → cluster id of the packets sent in a cluster.
    tagged: HashMap<u64, u32>,
    clusters: VecDeque<(u32, Received)>,
}

impl ProbeEstimator {
    fn entry(&mut self, id: u32) -> &mut Received {
        if let Some(i) = self.clusters.iter().position(|(c, _)| *c == id) {
            return &mut self.clusters[i].1;
        }
        if self.clusters.len() >= MAX_CLUSTERS {
            if let Some((old, _)) = self.clusters.pop_front() {
                self.tagged.retain(|_, c| *c != old);
            }
        }
        self.clusters.push_back((id, Received::default()));
        &mut self.clusters.back_mut().expect("just pushed").1
    }

    /// Packet `pn` left as part of cluster `id`; `done` is the cluster when it completed.
    pub fn on_sent(&mut self, pn: u64, id: u32, done: Option<Cluster>) {
        self.tagged.insert(pn, id);
        if let Some(c) = done {
            self.entry(id).sent = Some(c);
        }
    }

    /// Feedback for packet `pn`; returns the cluster's rate when it can be measured.
    pub fn on_arrival(&mut self, pn: u64, sent: Time, arrival: Time, bytes: Bytes) -> Option<Rate> {
        let id = self.tagged.remove(&pn)?;
        let r = self.entry(id);
        r.bytes += bytes;
        r.packets += 1;
        r.first_send = Some(r.first_send.map_or(sent, |t| t.min(sent)));
        if r.last_send.is_none_or(|(t, _)| sent >= t) {
            r.last_send = Some((sent, bytes));
        }
        if r.first_arrival.is_none_or(|(t, _)| arrival < t) {
            r.first_arrival = Some((arrival, bytes));
        }
        r.last_arrival = Some(r.last_arrival.map_or(arrival, |t| t.max(arrival)));
        estimate(r)
    }
}

fn estimate(r: &Received) -> Option<Rate> {
    let sent = r.sent?;
    if (r.packets as f64) < MIN_RECEIVED_RATIO * sent.packets as f64
        || (r.bytes as f64) < MIN_RECEIVED_RATIO * sent.bytes as f64
    {
        return None;
    }
    let (last_send, last_bytes) = r.last_send?;
    let (first_arrival, first_bytes) = r.first_arrival?;
    let send_interval = last_send.saturating_since(r.first_send?);
    let recv_interval = r.last_arrival?.saturating_since(first_arrival);
    let valid = |d: Duration| d > Duration::ZERO && d <= MAX_INTERVAL;
    if !valid(send_interval) || !valid(recv_interval) {
        return None;
    }
    let send_bps = (r.bytes - last_bytes) as f64 * 8.0 / send_interval.as_secs_f64();
    let recv_bps = (r.bytes - first_bytes) as f64 * 8.0 / recv_interval.as_secs_f64();
    if recv_bps > MAX_VALID_RATIO * send_bps {
        return None;
    }
    let bps = if recv_bps < UNSATURATED_RATIO * send_bps {
        TARGET_UTILIZATION * recv_bps
    } else {
        send_bps.min(recv_bps)
    };
    Some(Rate::from_bps_f64(bps))
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Bytes = 1200;

    fn ms(x: f64) -> Time {
        Time::ZERO + Duration::from_nanos((x * 1e6) as u64)
    }

    /// A 5-packet cluster sent `send_gap_ms` apart and received `recv_gap_ms` apart; feedback
    /// for `received` of them. Returns the last estimate.
    fn probe(send_gap_ms: f64, recv_gap_ms: f64, received: u64) -> Option<Rate> {
        let mut e = ProbeEstimator::default();
        let cluster = Cluster {
            id: 0,
            rate: Rate::from_bps(1_000_000),
            bytes: 5 * P,
            packets: 5,
        };
        for pn in 0..5 {
            e.on_sent(pn, 0, (pn == 4).then_some(cluster));
        }
        let mut last = None;
        for pn in 0..received {
            let sent = ms(pn as f64 * send_gap_ms);
            last = e.on_arrival(pn, sent, ms(40.0 + pn as f64 * recv_gap_ms), P);
        }
        last
    }

    fn mbps(r: Option<Rate>) -> f64 {
        r.expect("an estimate").as_mbps_f64()
    }

    #[test]
    fn an_unsaturated_probe_measures_its_send_rate() {
        // Sent at 9.6 ms a packet (1 Mbit/s), received as sent: 4·1200·8 bits / 38.4 ms.
        assert!((mbps(probe(9.6, 9.6, 5)) - 1.0).abs() < 1e-6);
        // Received slightly faster (within 2×): still the send rate.
        assert!((mbps(probe(9.6, 8.0, 5)) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_saturating_probe_takes_95_percent_of_its_receive_rate() {
        // Sent at 1 Mbit/s, spread to 19.2 ms a packet by a 0.5 Mbit/s link.
        assert!((mbps(probe(9.6, 19.2, 5)) - 0.95 * 0.5).abs() < 1e-6);
    }

    #[test]
    fn too_little_feedback_or_an_implausible_receive_rate_gives_nothing() {
        // 3 of 5 packets is under 80 %; 4 of 5 is enough.
        assert!(probe(9.6, 9.6, 3).is_none());
        assert!(probe(9.6, 9.6, 4).is_some());
        // Received more than twice as fast as sent.
        assert!(probe(9.6, 4.0, 5).is_none());
        // Untagged packets are not probes.
        let mut e = ProbeEstimator::default();
        assert!(e.on_arrival(7, ms(0.0), ms(40.0), P).is_none());
    }
}
