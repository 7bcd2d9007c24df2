//! An emulated run's results in the simulator's shapes (`Summary`, the flows and links tables),
//! so that the results directory, plots and report are the same for both backends.
//!
//! Where a number comes from differs, and the columns say so in the README's emulator section:
//! goodput is what the receiving application read; throughput and queueing delay are what the
//! emulator saw of the flow's packets; RTT, window, in-flight bytes and pacing rate are the
//! sender's `TCP_INFO`, sampled every 10 ms (the RTT is the kernel's smoothed RTT).

use crate::error::EmuError;
use crate::linux_tcp::TcpFlow;
use crate::network::Network;
use crate::run_loop::Shared;
use crate::tcp_info::TcpInfo;
use polycc::units::{Duration, Time};
use polycc_sim::engine::delay_histogram::DelayHistogram;
use polycc_sim::engine::{mean_p95, percentiles, Accounting};
use polycc_sim::output::{jain_index, FlowSummary, LinkSummary};
use polycc_sim::{Column, Model, RunOutput, StrColumn, Summary, Table};
use std::sync::atomic::Ordering;

/// Bits per byte, and bit/s per Mbit/s.
const BITS: f64 = 8.0;
const MEGA: f64 = 1e6;

/// One flow's bins of sender-side samples.
#[derive(Default)]
pub struct FlowSeries {
    bin_rtt_us: u64,
    bin_rtt_n: u64,
    bin_last: Option<TcpInfo>,
    rows: Vec<FlowRow>,
    rtt: DelayHistogram,
    rtt_ns_sum: u128,
    rtt_count: u64,
}

struct FlowRow {
    goodput_bytes: u64,
    rtt_ms: Option<f64>,
    info: Option<TcpInfo>,
}

impl FlowSeries {
    /// A sample of the sender's `TCP_INFO` (None while the connection is not open).
    pub fn sample(&mut self, info: Option<TcpInfo>) {
        if let Some(i) = &info {
            if i.rtt_us > 0 {
                self.bin_rtt_us += i.rtt_us as u64;
                self.bin_rtt_n += 1;
                self.rtt.record(i.rtt_us as u64);
                self.rtt_ns_sum += i.rtt_us as u128 * 1000;
                self.rtt_count += 1;
            }
        }
        self.bin_last = info;
    }

    /// Ends a bin in which the receiver read `goodput_bytes`.
    pub fn close_bin(&mut self, goodput_bytes: u64) {
        self.rows.push(FlowRow {
            goodput_bytes,
            rtt_ms: (self.bin_rtt_n > 0)
                .then(|| self.bin_rtt_us as f64 / self.bin_rtt_n as f64 / 1000.0),
            info: self.bin_last.take(),
        });
        self.bin_rtt_us = 0;
        self.bin_rtt_n = 0;
    }
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        bytes as f64 * BITS / d.as_secs_f64() / MEGA
    }
}

/// Numeric columns filled row by row, NaN for "no value".
struct Columns {
    names: Vec<&'static str>,
    values: Vec<Vec<f64>>,
}

impl Columns {
    fn new(names: &[&'static str]) -> Self {
        Columns {
            names: names.to_vec(),
            values: vec![Vec::new(); names.len()],
        }
    }

    fn row(&mut self, values: &[Option<f64>]) {
        for (col, v) in self.values.iter_mut().zip(values) {
            col.push(v.unwrap_or(f64::NAN));
        }
    }

    fn into_table(self, strings: Vec<(&str, StrColumn)>) -> Table {
        let rows = self.values.first().map_or(0, Vec::len);
        let mut columns: Vec<(String, Column)> = Vec::new();
        let mut num = self.names.into_iter().zip(self.values);
        if let Some((n, v)) = num.next() {
            columns.push((n.to_string(), Column::F64(v)));
        }
        for (n, c) in strings {
            columns.push((n.to_string(), Column::Str(c)));
        }
        columns.extend(num.map(|(n, v)| (n.to_string(), Column::F64(v))));
        Table { rows, columns }
    }
}

/// A string column over a small set of values.
struct Codes {
    col: StrColumn,
    seen: Vec<String>,
}

impl Codes {
    fn new() -> Self {
        Codes {
            col: StrColumn::default(),
            seen: Vec::new(),
        }
    }

    fn push(&mut self, v: &str) {
        let code = match self.seen.iter().position(|s| s == v) {
            Some(c) => c as u32,
            None => {
                self.seen.push(v.to_string());
                self.col.add_level(v)
            }
        };
        self.col.push_code(code);
    }
}

/// Assembles the run's output.
pub fn build(
    model: &Model,
    net: &Network,
    flows: &[TcpFlow],
    series: Vec<FlowSeries>,
    shared: Shared,
    end: Time,
    wall_s: f64,
) -> Result<RunOutput, EmuError> {
    let bins = (model.duration.0 / model.bin.0) as usize;
    let bin_s = model.bin.as_secs_f64();
    let mut fcols = Columns::new(&[
        "t_s",
        "goodput_mbps",
        "throughput_mbps",
        "rtt_ms",
        "cwnd_bytes",
        "inflight_bytes",
        "pacing_rate_mbps",
        "cc_min_rtt_ms",
        "cc_delivery_rate_mbps",
        "cc_ssthresh_bytes",
        "cc_retransmits",
    ]);
    let (mut ids, mut states) = (Codes::new(), Codes::new());
    for (f, (fm, s)) in model.flows.iter().zip(&series).enumerate() {
        for b in 0..bins {
            let row = s.rows.get(b);
            let info = row.and_then(|r| r.info.as_ref());
            let wire = shared.flow_wire.get(f).and_then(|w| w.get(b)).copied();
            ids.push(&fm.id);
            states.push(info.map_or("", TcpInfo::state_name));
            fcols.row(&[
                Some(b as f64 * bin_s),
                Some(mbps(row.map_or(0, |r| r.goodput_bytes), model.bin)),
                Some(mbps(wire.unwrap_or(0), model.bin)),
                row.and_then(|r| r.rtt_ms),
                info.map(|i| i.cwnd_bytes() as f64),
                info.map(|i| i.inflight_bytes() as f64),
                info.map(|i| i.pacing_rate as f64 * BITS / MEGA),
                info.map(|i| i.min_rtt_us as f64 / 1000.0),
                info.map(|i| i.delivery_rate as f64 * BITS / MEGA),
                // The kernel reports "no threshold yet" as a huge number.
                info.filter(|i| i.snd_ssthresh < i32::MAX as u32 / 2)
                    .map(|i| i.snd_ssthresh as f64 * i.snd_mss as f64),
                info.map(|i| i.total_retrans as f64),
            ]);
        }
    }
    let flows_table = fcols.into_table(vec![("flow", ids.col), ("cc_state", states.col)]);

    let mut lcols = Columns::new(&[
        "t_s",
        "capacity_mbps",
        "throughput_mbps",
        "queue_bytes",
        "queue_packets",
        "queue_delay_ms",
        "drops",
    ]);
    let mut names = Codes::new();
    for (t_s, rows) in shared.link_rows.iter().take(bins) {
        for r in rows {
            names.push(&r.name);
            lcols.row(&[
                Some(*t_s),
                Some(mbps(r.capacity_bytes, model.bin)),
                Some(mbps(r.bin.tx_bytes, model.bin)),
                Some(r.bin.queue_area as f64 / model.bin.0 as f64),
                Some(r.queue_packets as f64),
                (r.bin.sojourn_count > 0)
                    .then(|| r.bin.sojourn_ns_sum as f64 / r.bin.sojourn_count as f64 / 1e6),
                Some(r.bin.drops as f64),
            ]);
        }
    }
    let links_table = lcols.into_table(vec![("link", names.col)]);

    let run_time = end - Time::ZERO;
    let flow_summaries: Vec<FlowSummary> = model
        .flows
        .iter()
        .zip(flows)
        .zip(&series)
        .enumerate()
        .map(|(f, ((fm, tf), s))| flow_summary(fm, tf, s, &net.flows[f], end))
        .collect();
    let ran: Vec<f64> = flow_summaries
        .iter()
        .filter(|f| f.active_s > 0.0)
        .map(|f| f.goodput_mbps)
        .collect();
    let links = net
        .link_totals(end)
        .into_iter()
        .map(|(id, t)| LinkSummary {
            id,
            capacity_mbps: mbps(t.offered_bytes, run_time),
            utilization: if t.offered_bytes == 0 {
                0.0
            } else {
                t.tx_bytes as f64 / t.offered_bytes as f64
            },
            drops: t.drops,
            random_losses: t.random_losses,
            queue_delay_ms: mean_p95(&t.sojourn, t.sojourn_ns_sum, t.sojourn_count),
        })
        .collect();
    let sent: u64 = net.flows.iter().map(|c| c.data_bytes).sum();
    let delivered: u64 = net.flows.iter().map(|c| c.delivered_wire).sum();
    let dropped: u64 = net.flows.iter().map(|c| c.data_bytes_dropped).sum();
    let summary = Summary {
        name: model.scenario.name.clone(),
        seed: model.scenario.seed,
        duration_s: run_time.as_secs_f64(),
        wall_s,
        events: net.delivered,
        delivered_packets: net.flows.iter().map(|c| c.delivered_packets).sum(),
        flows: flow_summaries,
        links,
        jain_index: jain_index(&ran),
        accounting: Accounting {
            sent_bytes: sent,
            delivered_bytes: delivered,
            dropped_bytes: dropped,
            in_network_bytes: sent.saturating_sub(delivered + dropped),
        },
    };
    let resolved_toml = toml::to_string(&model.scenario)
        .map_err(|e| EmuError::Internal(format!("cannot serialise the resolved scenario: {e}")))?;
    Ok(RunOutput {
        resolved_toml,
        summary,
        flows: flows_table,
        links: links_table,
        frames: Table::default(),
    })
}

fn flow_summary(
    fm: &polycc_sim::scenario::FlowModel,
    tf: &TcpFlow,
    s: &FlowSeries,
    net: &crate::network::FlowCounters,
    end: Time,
) -> FlowSummary {
    let started = *tf.started.lock().expect("threads joined");
    let ended = tf.ended.lock().expect("threads joined").unwrap_or(end);
    let completed = *tf.completed.lock().expect("threads joined");
    let active = started.map_or(Duration::ZERO, |t| ended.max(t) - t);
    let info = tf
        .last_info
        .lock()
        .expect("threads joined")
        .clone()
        .unwrap_or_default();
    let received = tf.received.load(Ordering::Relaxed);
    let start = Time::ZERO + fm.start;
    FlowSummary {
        id: fm.id.clone(),
        cca: fm.cca.name().to_string(),
        goodput_mbps: mbps(received, active),
        throughput_mbps: mbps(net.delivered_wire, active),
        loss_rate: if info.segs_out == 0 {
            0.0
        } else {
            info.total_retrans as f64 / info.segs_out as f64
        },
        retransmits: info.total_retrans as u64,
        spurious_losses: info.dsack_dups as u64,
        probe_timeouts: info.total_rto as u64,
        persistent_congestions: 0,
        packets_sent: info.segs_out as u64,
        acks_sent: tf.acks_sent.load(Ordering::Relaxed),
        bytes_delivered: received,
        rtt_ms: percentiles(&s.rtt, s.rtt_ns_sum, s.rtt_count),
        queue_delay_ms: mean_p95(&net.queue_delay, net.queue_ns_sum, net.queue_count),
        fct_s: completed.map(|t| (t - start).as_secs_f64()),
        transfers_completed: u64::from(completed.is_some()),
        active_s: active.as_secs_f64(),
        target_rate_mbps: None,
        satisfaction: None,
        frame_delay_ms: None,
        frames_sent: None,
        frames_lost: None,
        competing_detected_fraction: None,
    }
}
