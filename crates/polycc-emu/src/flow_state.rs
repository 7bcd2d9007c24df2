//! What a flow's endpoint threads share with the run's sampler, whatever stack carries the
//! flow: goodput as the receiving application reads it, the sender's state as a [`Sample`],
//! RTT samples, the flow's times and its end-of-run counters.

use crate::tcp_info::{BbrInfo, TcpInfo};
use polycc::units::Time;
use polycc_sim::engine::delay_histogram::DelayHistogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The sender's state at one moment, in the flows table's terms.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// `cc_state`: the controller's state (the kernel's congestion-avoidance state for TCP).
    pub state: &'static str,
    pub cwnd_bytes: Option<f64>,
    pub inflight_bytes: Option<f64>,
    pub pacing_rate_mbps: Option<f64>,
    /// `cc_<name>` columns.
    pub extras: Vec<(&'static str, f64)>,
}

impl Sample {
    /// The kernel's view of a TCP sender; with `bbr` (the kernel's BBR's `TCP_CC_INFO`), its
    /// mode as `cc_state` and its model in the columns polycc's `bbr` reports
    /// (`cc_btl_bw_mbps`, `cc_min_rtt_ms` from BBR's own filter, `cc_pacing_gain`,
    /// `cc_cwnd_gain`), so that the two compare column by column.
    pub fn from_tcp(i: &TcpInfo, bbr: Option<&BbrInfo>) -> Sample {
        let min_rtt_us = bbr.map_or(i.min_rtt_us, |b| b.min_rtt_us);
        let mut extras = vec![
            ("min_rtt_ms", min_rtt_us as f64 / 1000.0),
            ("delivery_rate_mbps", i.delivery_rate as f64 * 8.0 / 1e6),
            ("retransmits", i.total_retrans as f64),
            ("inflight_wire_bytes", i.inflight_wire_bytes() as f64),
        ];
        // The kernel reports "no threshold yet" as a huge number.
        if i.snd_ssthresh < i32::MAX as u32 / 2 {
            extras.push(("ssthresh_bytes", i.snd_ssthresh as f64 * i.snd_mss as f64));
        }
        if let Some(b) = bbr {
            extras.push(("btl_bw_mbps", b.bw as f64 * 8.0 / 1e6));
            extras.push(("pacing_gain", b.pacing_gain));
            extras.push(("cwnd_gain", b.cwnd_gain));
            // polycc's bbr numbers its recovery states Open 0, Recovery 1, Loss 2; the kernel's
            // Disorder and CWR leave BBR's window alone, as Open does.
            let ca_state = match i.state_name() {
                "recovery" => 1.0,
                "loss" => 2.0,
                _ => 0.0,
            };
            extras.push(("ca_state", ca_state));
        }
        Sample {
            state: bbr.map_or_else(|| i.state_name(), |b| b.mode(i.snd_cwnd)),
            cwnd_bytes: Some(i.cwnd_bytes() as f64),
            inflight_bytes: Some(i.inflight_bytes() as f64),
            pacing_rate_mbps: Some(i.pacing_rate as f64 * 8.0 / 1e6),
            extras,
        }
    }
}

/// RTT samples in µs: per bin (sum, count) and over the run (histogram, exact sum).
#[derive(Default)]
pub struct RttStats {
    pub bin_sum_us: u64,
    pub bin_count: u64,
    pub hist: DelayHistogram,
    pub sum_ns: u128,
    pub count: u64,
}

impl RttStats {
    pub fn record(&mut self, us: u64) {
        self.bin_sum_us += us;
        self.bin_count += 1;
        self.hist.record(us.max(1));
        self.sum_ns += us as u128 * 1000;
        self.count += 1;
    }

    /// The bin's mean (ms), and a fresh bin.
    pub fn take_bin(&mut self) -> Option<f64> {
        let mean =
            (self.bin_count > 0).then(|| self.bin_sum_us as f64 / self.bin_count as f64 / 1e3);
        self.bin_sum_us = 0;
        self.bin_count = 0;
        mean
    }
}

/// A sender's counters at the end of its run, as `summary.json` names them.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub packets_sent: u64,
    pub retransmits: u64,
    pub lost_packets: u64,
    pub spurious_losses: u64,
    pub probe_timeouts: u64,
    pub persistent_congestions: u64,
}

impl Counters {
    /// Adds a finished connection's counters (web flows open one per transfer).
    pub fn add(&mut self, c: &Counters) {
        self.packets_sent += c.packets_sent;
        self.retransmits += c.retransmits;
        self.lost_packets += c.lost_packets;
        self.spurious_losses += c.spurious_losses;
        self.probe_timeouts += c.probe_timeouts;
        self.persistent_congestions += c.persistent_congestions;
    }
}

/// When each transfer of a sized, web or DASH flow was requested (on the sending host, as in
/// the simulator) and when the receiving application had all of it, in order.
#[derive(Clone, Debug, Default)]
pub struct TransferLog {
    pub requested: Vec<Time>,
    pub completed: Vec<Time>,
    /// Where each transfer requested ends in the flow's bytes, counted from the first
    /// transfer's first byte (transfers of different sizes: a DASH player's chunks).
    pub ends: Vec<u64>,
}

impl TransferLog {
    /// Completion times less request times, in seconds, of the transfers completed.
    pub fn completion_times_s(&self) -> Vec<f64> {
        self.completed
            .iter()
            .zip(&self.requested)
            .map(|(c, r)| (*c - *r).as_secs_f64())
            .collect()
    }
}

#[derive(Default)]
pub struct FlowShared {
    /// Payload bytes the receiving application has (unique, in order or not).
    pub received: AtomicU64,
    /// Data packets that arrived (unresponsive sources: the rest were lost).
    pub packets_received: AtomicU64,
    /// ACKs (or ACK segments) the receiver sent.
    pub acks_sent: AtomicU64,
    pub sample: Mutex<Option<Sample>>,
    pub rtt: Mutex<RttStats>,
    pub started: Mutex<Option<Time>>,
    /// When the sender stopped (stop time, end of run, or a sized flow's completion).
    pub ended: Mutex<Option<Time>>,
    pub transfers: Mutex<TransferLog>,
    pub counters: Mutex<Counters>,
    /// The first thing that went wrong, if anything.
    pub error: Mutex<Option<String>>,
    /// A QUIC bulk flow's receiver: data bytes read so far and their checksum, which the
    /// sender checks against what it wrote when the receiver's verdict cannot come in time;
    /// published once the sender is done (`ended`) or the run is over, then as the tail
    /// arrives, not on every chunk of the run.
    pub read_so_far: Mutex<(u64, u64)>,
    /// A video flow's source: the simulator's encoder and per-frame records, written by the
    /// sender (frames made, first sent) and the receiver (shards arrived, decodable, complete).
    pub video: Mutex<Option<polycc_sim::engine::video::VideoSource>>,
    /// A DASH flow's player at the end of the run.
    pub streaming: Mutex<Option<polycc_sim::output::StreamingSummary>>,
}

/// Locks a mutex whose holders never panic while holding it (a poisoned one still holds valid
/// data: every critical section is a plain store).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FlowShared {
    pub fn fail(&self, what: String) {
        lock(&self.error).get_or_insert(what);
    }

    pub fn add_received(&self, bytes: u64) -> u64 {
        self.received.fetch_add(bytes, Ordering::Relaxed) + bytes
    }

    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    pub fn set_started(&self, t: Time) {
        *lock(&self.started) = Some(t);
    }

    pub fn set_ended(&self, t: Time) {
        lock(&self.ended).get_or_insert(t);
    }

    /// The application asked for a transfer of `bytes` at `t`.
    pub fn request(&self, t: Time, bytes: u64) {
        let mut log = lock(&self.transfers);
        log.requested.push(t);
        let end = log.ends.last().copied().unwrap_or(0) + bytes;
        log.ends.push(end);
    }

    /// The receiving application has the first `received` bytes of the flow's transfers:
    /// records, at `now`, each transfer this completes; returns how many it did.
    pub fn complete_bytes(&self, received: u64, now: Time) -> u64 {
        let mut log = lock(&self.transfers);
        let before = log.completed.len();
        let full = log.ends.partition_point(|end| *end <= received);
        for _ in before..full {
            log.completed.push(now);
        }
        full.saturating_sub(before) as u64
    }

    /// When the receiving application last had a transfer in full.
    pub fn last_completed(&self) -> Option<Time> {
        lock(&self.transfers).completed.last().copied()
    }

    /// The receiving application has `received` units (bytes or segments) of the flow's
    /// transfers of `per_transfer` units each, all of them from the first on: records, at `now`,
    /// each transfer this completes; returns how many it did.
    pub fn complete_through(&self, received: u64, per_transfer: u64, now: Time) -> u64 {
        let mut log = lock(&self.transfers);
        let before = log.completed.len() as u64;
        let full = received / per_transfer.max(1);
        for _ in before..full {
            log.completed.push(now);
        }
        full.saturating_sub(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_of_different_sizes_complete_when_their_last_byte_is_in() {
        let f = FlowShared::default();
        let at = |ms: u64| Time(ms * 1_000_000);
        f.request(at(0), 100);
        f.request(at(5), 300);
        assert_eq!(f.complete_bytes(99, at(10)), 0);
        assert_eq!(f.complete_bytes(100, at(11)), 1);
        assert_eq!(f.last_completed(), Some(at(11)));
        assert_eq!(f.complete_bytes(399, at(12)), 0);
        // More than was asked for completes nothing beyond the transfers requested.
        assert_eq!(f.complete_bytes(1_000, at(13)), 1);
        assert_eq!(f.complete_bytes(1_000, at(14)), 0);
        let log = lock(&f.transfers);
        assert_eq!(log.ends, vec![100, 400]);
        let fct = log.completion_times_s();
        assert!(
            (fct[0] - 0.011).abs() < 1e-12 && (fct[1] - 0.008).abs() < 1e-12,
            "{fct:?}"
        );
    }
}
