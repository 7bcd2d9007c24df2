//! An emulated run's results in the simulator's shapes (`Summary`, the flows and links tables),
//! so that the results directory, plots and report are the same for both backends.
//!
//! Where a number comes from differs, and the columns say so in the README's emulator section:
//! goodput is what the receiving application read; throughput and queueing delay are what the
//! emulator saw of the flow's packets; RTT, window, in-flight bytes and pacing rate are the
//! sender's `TCP_INFO`, sampled every 10 ms (the RTT is the kernel's smoothed RTT). An outside
//! program's flow (`stack = "external"`) reports nothing: its goodput is the payload the
//! emulator delivered, its loss what the emulator dropped, its controller columns null.

use crate::app::asks_for_transfers;
use crate::error::EmuError;
use crate::flow_state::{lock, FlowShared, Sample};
use crate::testbed::Finished;
use polycc::units::{Duration, Time};
use polycc_sim::engine::{mean_p95, percentiles, Accounting};
use polycc_sim::output::{jain_index, FlowSummary, LinkSummary};
use polycc_sim::scenario::spec::Stack;
use polycc_sim::scenario::Traffic;
use polycc_sim::{Column, Model, RunOutput, StrColumn, Summary, Table};
use std::sync::atomic::Ordering;

/// Bits per byte, and bit/s per Mbit/s.
const BITS: f64 = 8.0;
const MEGA: f64 = 1e6;

/// One flow's bins of sender-side samples.
#[derive(Default)]
pub struct FlowSeries {
    bin_last: Option<Sample>,
    rows: Vec<FlowRow>,
}

struct FlowRow {
    goodput_bytes: u64,
    rtt_ms: Option<f64>,
    sample: Option<Sample>,
}

impl FlowSeries {
    /// The sender's state now (None while it is not running).
    pub fn sample(&mut self, sample: Option<Sample>) {
        self.bin_last = sample;
    }

    /// Ends a bin in which the receiver read `goodput_bytes` and the sender's RTT samples
    /// averaged `rtt_ms`.
    pub fn close_bin(&mut self, goodput_bytes: u64, rtt_ms: Option<f64>) {
        self.rows.push(FlowRow {
            goodput_bytes,
            rtt_ms,
            sample: self.bin_last.take(),
        });
    }
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        bytes as f64 * BITS / d.as_secs_f64() / MEGA
    }
}

/// Numeric columns filled row by row, NaN for "no value"; a column first seen late is
/// back-filled.
struct Columns {
    names: Vec<String>,
    values: Vec<Vec<f64>>,
    rows: usize,
}

impl Columns {
    fn new(names: &[&str]) -> Self {
        Columns {
            names: names.iter().map(|n| n.to_string()).collect(),
            values: vec![Vec::new(); names.len()],
            rows: 0,
        }
    }

    fn set(&mut self, name: &str, v: Option<f64>) {
        let k = match self.names.iter().position(|n| n == name) {
            Some(k) => k,
            None => {
                self.names.push(name.to_string());
                self.values.push(vec![f64::NAN; self.rows]);
                self.names.len() - 1
            }
        };
        let col = &mut self.values[k];
        col.resize(self.rows, f64::NAN);
        col.push(v.unwrap_or(f64::NAN));
    }

    fn end_row(&mut self) {
        self.rows += 1;
        for col in &mut self.values {
            col.resize(self.rows, f64::NAN);
        }
    }

    fn row(&mut self, values: &[Option<f64>]) {
        let names = self.names.clone();
        for (n, v) in names.iter().zip(values) {
            self.set(n, *v);
        }
        self.end_row();
    }

    /// The table: the first numeric column (time), then `strings`, then the other numbers.
    fn into_table(self, strings: Vec<(&str, StrColumn)>) -> Table {
        let rows = self.rows;
        let mut columns: Vec<(String, Column)> = Vec::new();
        let mut num = self.names.into_iter().zip(self.values);
        if let Some((n, v)) = num.next() {
            columns.push((n, Column::F64(v)));
        }
        for (n, c) in strings {
            columns.push((n.to_string(), Column::Str(c)));
        }
        columns.extend(num.map(|(n, v)| (n, Column::F64(v))));
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

    /// Appends `v`, or a null row for None.
    fn push_opt(&mut self, v: Option<&str>) {
        match v {
            Some(v) => self.push(v),
            None => self.col.push_null(),
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
    finished: &Finished,
    flows: &[FlowShared],
    series: Vec<FlowSeries>,
    end: Time,
    wall_s: f64,
) -> Result<RunOutput, EmuError> {
    let (net, shared) = (&finished.net, &finished.shared);
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
    ]);
    let (mut ids, mut states) = (Codes::new(), Codes::new());
    for (f, (fm, s)) in model.flows.iter().zip(&series).enumerate() {
        for b in 0..bins {
            let row = s.rows.get(b);
            let sample = row.and_then(|r| r.sample.as_ref());
            let wire = shared.flow_wire.get(f).and_then(|w| w.get(b)).copied();
            // An outside program reports nothing: its goodput is the payload the emulator
            // delivered to its receiver's side.
            let goodput = if fm.stack == Stack::External {
                shared.flow_payload.get(f).and_then(|w| w.get(b)).copied()
            } else {
                row.map(|r| r.goodput_bytes)
            };
            ids.push(&fm.id);
            // A bin without a sample of the sender (before it starts, after its socket is
            // gone at the end) has no controller state: null, as the simulator writes it.
            states.push_opt(sample.map(|s| s.state));
            fcols.set("t_s", Some(b as f64 * bin_s));
            fcols.set("goodput_mbps", Some(mbps(goodput.unwrap_or(0), model.bin)));
            fcols.set("throughput_mbps", Some(mbps(wire.unwrap_or(0), model.bin)));
            fcols.set("rtt_ms", row.and_then(|r| r.rtt_ms));
            fcols.set("cwnd_bytes", sample.and_then(|s| s.cwnd_bytes));
            fcols.set("inflight_bytes", sample.and_then(|s| s.inflight_bytes));
            fcols.set("pacing_rate_mbps", sample.and_then(|s| s.pacing_rate_mbps));
            for (k, v) in sample.map_or(&[][..], |s| &s.extras[..]) {
                fcols.set(&format!("cc_{k}"), Some(*v));
            }
            fcols.end_row();
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
        .enumerate()
        .map(|(f, (fm, shared))| {
            // What arrived within the run: its bins (bytes still in flight at the end, or
            // the wire bytes of the clean-up, are not the run's).
            let received = if fm.stack == Stack::External {
                finished
                    .shared
                    .flow_payload
                    .get(f)
                    .map_or(0, |w| w.iter().take(bins).sum())
            } else {
                series[f].rows.iter().map(|r| r.goodput_bytes).sum()
            };
            let wire = finished
                .shared
                .flow_wire
                .get(f)
                .map_or(0, |w| w.iter().take(bins).sum());
            flow_summary(fm, shared, &net.flow_totals()[f], received, wire, end)
        })
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
    let counters = net.flow_totals();
    let sent: u64 = counters.iter().map(|c| c.data_bytes).sum();
    let delivered: u64 = counters.iter().map(|c| c.delivered_wire).sum();
    let dropped: u64 = counters.iter().map(|c| c.data_bytes_dropped).sum();
    let summary = Summary {
        name: model.scenario.name.clone(),
        seed: model.scenario.seed,
        duration_s: run_time.as_secs_f64(),
        wall_s,
        events: net.delivered,
        delivered_packets: counters.iter().map(|c| c.delivered_packets).sum(),
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
        frames: frames_table(model, flows, end),
        transfers: transfers_table(model, flows, end),
    })
}

/// The per-transfer table of the sized and web flows, as the simulator writes it. The emulator
/// sees when the application asks and when the receiving application has all of a transfer, not
/// when the sender begins it or its connection is up: `started_s` and `connected_s` are null.
/// Requests the application made as the run ended, at or after `end`, are left out: the
/// simulator's runs cover [0, end).
fn transfers_table(model: &Model, flows: &[FlowShared], end: Time) -> Table {
    use polycc_sim::engine::transfers::{transfers_table_of, TransferRow};
    let logs: Vec<_> = flows.iter().map(|f| lock(&f.transfers).clone()).collect();
    transfers_table_of(model.flows.iter().zip(&logs).filter_map(|(fm, log)| {
        if !asks_for_transfers(&fm.traffic) {
            return None;
        }
        let rows = log
            .requested
            .iter()
            .enumerate()
            .filter(move |&(_, &requested)| requested < end)
            .map(move |(i, &requested)| TransferRow {
                // Each transfer's size from where it ends in the flow's bytes.
                bytes: log.ends[i] - i.checked_sub(1).map_or(0, |j| log.ends[j]),
                requested,
                started: None,
                connected: None,
                completed: log.completed.get(i).copied(),
            });
        Some((fm.id.as_str(), rows))
    }))
}

/// The per-frame table of the video flows, as the simulator writes it.
fn frames_table(model: &Model, flows: &[FlowShared], end: Time) -> Table {
    let sources: Vec<_> = flows.iter().map(|f| lock(&f.video)).collect();
    polycc_sim::engine::frames_table_of(
        model
            .flows
            .iter()
            .zip(&sources)
            .filter_map(|(fm, v)| Some((fm.id.as_str(), v.as_ref()?))),
        end,
    )
}

fn flow_summary(
    fm: &polycc_sim::scenario::FlowModel,
    f: &FlowShared,
    net: &crate::network::FlowCounters,
    received: u64,
    wire: u64,
    end: Time,
) -> FlowSummary {
    // Active from the scenario's start, as in the simulator: a kernel flow's handshake is
    // part of its time.
    let start = Time::ZERO + fm.start;
    let ran = lock(&f.started).is_some();
    let transfers = lock(&f.transfers).clone();
    let fct = transfers.completion_times_s();
    let fct_dist = fm
        .traffic
        .reports_completion_times()
        .then(|| polycc_sim::output::Percentiles::of_samples(&fct))
        .flatten();
    // A sized flow ends when its transfer is in, as in the simulator.
    let ended = match fm.traffic {
        Traffic::Sized { .. } => transfers.completed.first().copied(),
        _ => None,
    }
    .or(*lock(&f.ended))
    .unwrap_or(end)
    .min(end);
    let active = if ran {
        ended.max(start) - start
    } else {
        Duration::ZERO
    };
    let mut c = lock(&f.counters).clone();
    let external = fm.stack == Stack::External;
    if external {
        // What the emulator saw: data packets into the network and those it dropped (the
        // program's own retransmissions among them; it cannot tell which).
        c.packets_sent = net.data_packets;
        c.lost_packets = net.data_dropped;
    }
    let unresponsive = fm.traffic.is_unresponsive();
    let video = lock(&f.video)
        .as_ref()
        .map(|v| polycc_sim::engine::video_summary(v, end));
    if unresponsive {
        // It learns of no loss: what did not arrive was lost.
        let arrived = f.packets_received.load(Ordering::Relaxed);
        c.lost_packets = c.packets_sent.saturating_sub(arrived);
    }
    let rtt = lock(&f.rtt);
    FlowSummary {
        id: fm.id.clone(),
        cca: if unresponsive {
            "none".into()
        } else if external {
            "external".into()
        } else {
            fm.cca.name().to_string()
        },
        goodput_mbps: mbps(received, active),
        throughput_mbps: mbps(wire, active),
        loss_rate: if c.packets_sent == 0 {
            0.0
        } else {
            c.lost_packets as f64 / c.packets_sent as f64
        },
        retransmits: c.retransmits,
        spurious_losses: c.spurious_losses,
        probe_timeouts: c.probe_timeouts,
        persistent_congestions: c.persistent_congestions,
        packets_sent: c.packets_sent,
        acks_sent: if external {
            net.reverse_packets
        } else {
            f.acks_sent.load(Ordering::Relaxed)
        },
        bytes_delivered: received,
        rtt_ms: percentiles(&rtt.hist, rtt.sum_ns, rtt.count),
        queue_delay_ms: mean_p95(&net.queue_delay, net.queue_ns_sum, net.queue_count),
        fct_s: fct_dist.as_ref().map(|p| p.mean),
        fct_dist_s: fct_dist,
        transfers_completed: fct.len() as u64,
        active_s: active.as_secs_f64(),
        target_rate_mbps: None,
        satisfaction: None,
        frame_delay_ms: video.as_ref().map(|v| v.delay_ms.clone()),
        frames_sent: video.as_ref().map(|v| v.sent),
        frames_lost: video.as_ref().map(|v| v.lost),
        competing_detected_fraction: video.as_ref().and_then(|v| v.competing),
        streaming: lock(&f.streaming).clone(),
        browsing: None,
    }
}
