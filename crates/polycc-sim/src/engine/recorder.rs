//! Measurement: per-flow and per-link counters, time-series bins, and the run summary.

use super::delay_histogram::DelayHistogram;
use super::link::LinkDir;
use super::video::VideoSource;
use super::Flow;
use crate::output::{
    jain_index, Column, FlowSummary, LinkSummary, MeanP95, Percentiles, StrColumn, Summary, Table,
};
use crate::scenario::Model;
use polycc::units::{Duration, Time};
use serde::Serialize;
use std::collections::HashMap;

/// Byte accounting of data packets over the whole run: every byte sent is delivered, dropped,
/// or still in the network at the end.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Accounting {
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
    pub dropped_bytes: u64,
    pub in_network_bytes: u64,
}

/// Laid out in the order written (`repr(C)`): what a data packet's arrival updates fills the
/// first cache line, what its ACK updates the next; the histograms' buffers are lines of their
/// own (`DelayHistogram`).
#[repr(C)]
pub struct FlowStats {
    pub rx_wire_bytes: u64,
    pub bin_rx_wire: u64,
    pub queue_ns_sum: u128,
    pub arrivals: u64,
    pub rx_unique_payload: u64,
    pub bin_rx_payload: u64,
    pub acks_sent: u64,
    pub packets_sent: u64,
    pub rtt_count: u64,
    pub rtt_sum_ns: u128,
    pub bin_rtt_sum_ns: u128,
    pub bin_rtt_count: u64,
    pub queue_hist: DelayHistogram,
    pub dropped_in_network: u64,
    /// What the transport reported (reliable flows only).
    pub retransmits: u64,
    pub lost_packets: u64,
    /// Packets acknowledged after they were declared lost (counted in `lost_packets` too).
    pub spurious_losses: u64,
    /// Probe timeouts that fired (RFC 9002 §6.2; TCP's tail-loss probe and RTO in one timer).
    pub probe_timeouts: u64,
    /// Persistent-congestion declarations (RFC 9002 §7.6; the window collapses, as on an RTO).
    pub persistent_congestions: u64,
    /// RTT samples: the transport's for reliable flows, a probe's view for unresponsive ones.
    pub rtt_hist: DelayHistogram,
}

impl FlowStats {
    pub fn new() -> Self {
        FlowStats {
            rx_wire_bytes: 0,
            rx_unique_payload: 0,
            bin_rx_wire: 0,
            bin_rx_payload: 0,
            queue_hist: DelayHistogram::new(),
            queue_ns_sum: 0,
            arrivals: 0,
            packets_sent: 0,
            acks_sent: 0,
            dropped_in_network: 0,
            retransmits: 0,
            lost_packets: 0,
            spurious_losses: 0,
            probe_timeouts: 0,
            persistent_congestions: 0,
            rtt_hist: DelayHistogram::new(),
            rtt_sum_ns: 0,
            rtt_count: 0,
            bin_rtt_sum_ns: 0,
            bin_rtt_count: 0,
        }
    }

    pub fn on_arrival(&mut self, wire: u64, queue_ns: u64) {
        self.rx_wire_bytes += wire;
        self.bin_rx_wire += wire;
        self.arrivals += 1;
        self.queue_ns_sum += queue_ns as u128;
        self.queue_hist.record((queue_ns / 1000).max(1));
    }

    pub fn on_unique(&mut self, payload: u64) {
        self.rx_unique_payload += payload;
        self.bin_rx_payload += payload;
    }

    pub fn record_rtt(&mut self, d: Duration) {
        self.rtt_hist.record((d.0 / 1000).max(1));
        self.rtt_sum_ns += d.0 as u128;
        self.rtt_count += 1;
        self.bin_rtt_sum_ns += d.0 as u128;
        self.bin_rtt_count += 1;
    }

    /// The mean RTT of the samples since the last call, in ms.
    pub fn take_bin_rtt(&mut self) -> Option<f64> {
        let r = (self.bin_rtt_count > 0)
            .then(|| self.bin_rtt_sum_ns as f64 / self.bin_rtt_count as f64 / 1e6);
        self.bin_rtt_sum_ns = 0;
        self.bin_rtt_count = 0;
        r
    }
}

/// A recorded value as stored in a `Column::F64`: NaN for null, which no recorded value is.
#[inline]
fn null_as_nan(v: Option<f64>) -> f64 {
    debug_assert!(v.is_none_or(|x| !x.is_nan()), "a recorded value is NaN");
    v.unwrap_or(f64::NAN)
}

/// Columns built row by row; columns first seen late are back-filled with nulls.
///
/// Rows set their columns in the same order almost always, so the column after the last one set
/// is tried first, and column names are static strings: a value whose name is the very string
/// (address and length) that created the column takes it without comparing characters, so a
/// value costs no string comparison, no map lookup and no allocation (a run with a thousand flows
/// records tens of thousands of rows per simulated second). A string column keeps the codes of
/// the static strings it has seen (a controller's state names) in a short list searched by
/// address, and the caller can keep the codes of other values (`str_code`).
#[derive(Default)]
struct TableBuilder {
    rows: usize,
    /// Rows a column is given room for when it starts (`Recorder::new`), so that it need not
    /// grow by copying.
    room: usize,
    /// Numeric columns in first-seen order, NaN for null (`Column::F64`).
    num: Vec<NumColumn>,
    index: HashMap<String, usize>,
    /// The column tried first by the next `set`.
    cursor: usize,
    /// Values set in the row being built: when every column has one, `end_row` has none to
    /// fill with null.
    set_in_row: usize,
    /// String columns (`StrColumn`).
    strs: Vec<StrBuilder>,
}

struct NumColumn {
    name: String,
    /// The (prefix, name) strings that created the column.
    key: (&'static str, &'static str),
    values: Vec<f64>,
}

struct StrBuilder {
    name: String,
    column: StrColumn,
    /// The codes of the values seen.
    codes: HashMap<String, u32>,
    /// The codes of the static strings seen, found by address.
    statics: Vec<(&'static str, u32)>,
}

/// The same string in memory: equal address and length (so equal text).
#[inline]
fn same(a: &'static str, b: &'static str) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

impl TableBuilder {
    fn with_str_columns(names: &[&str], room: usize) -> Self {
        TableBuilder {
            room,
            strs: names
                .iter()
                .map(|n| StrBuilder {
                    name: n.to_string(),
                    column: StrColumn::default(),
                    codes: HashMap::new(),
                    statics: Vec::new(),
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The column named `prefix` + `name`, created (back-filled) when first seen.
    #[inline]
    fn column(&mut self, prefix: &'static str, name: &'static str) -> usize {
        if let Some(c) = self.num.get(self.cursor) {
            if same(c.key.0, prefix) && same(c.key.1, name) {
                return self.cursor;
            }
        }
        self.find(prefix, name)
    }

    /// `column` when the strings are not those that created the column tried first.
    #[cold]
    #[inline(never)]
    fn find(&mut self, prefix: &'static str, name: &'static str) -> usize {
        if let Some(c) = self.num.get(self.cursor) {
            let n = &c.name;
            if n.len() == prefix.len() + name.len() && n.starts_with(prefix) && n.ends_with(name) {
                return self.cursor;
            }
        }
        self.lookup(prefix, name)
    }

    fn lookup(&mut self, prefix: &'static str, name: &'static str) -> usize {
        let full = format!("{prefix}{name}");
        if let Some(&i) = self.index.get(&full) {
            return i;
        }
        let i = self.num.len();
        self.index.insert(full.clone(), i);
        let mut values = Vec::with_capacity(self.room.max(self.rows + 1));
        values.resize(self.rows, f64::NAN);
        self.num.push(NumColumn {
            name: full,
            key: (prefix, name),
            values,
        });
        i
    }

    #[inline]
    fn set(&mut self, name: &'static str, v: Option<f64>) {
        self.set_prefixed("", name, v);
    }

    /// Appends `v` to the column. Every column holds `rows` values when a row starts (`lookup`
    /// fills a new one, `end_row` those the last row did not set), so the value goes last.
    #[inline]
    fn set_prefixed(&mut self, prefix: &'static str, name: &'static str, v: Option<f64>) {
        let i = self.column(prefix, name);
        self.cursor = i + 1;
        self.set_in_row += 1;
        let col = &mut self.num[i].values;
        debug_assert_eq!(col.len(), self.rows, "a column set twice in a row");
        col.push(null_as_nan(v));
    }

    /// The code of `v` in string column `idx`, added as a level when new.
    fn str_code(&mut self, idx: usize, v: &str) -> u32 {
        let b = &mut self.strs[idx];
        match b.codes.get(v) {
            Some(&c) => c,
            None => {
                let c = b.column.add_level(v);
                b.codes.insert(v.to_string(), c);
                c
            }
        }
    }

    /// Sets string column `idx` to the value of code `code` (from `str_code`).
    fn set_str_code(&mut self, idx: usize, code: u32) {
        self.strs[idx].column.push_code(code);
    }

    /// Sets string column `idx`; None is null.
    fn set_str(&mut self, idx: usize, v: Option<&str>) {
        match v {
            Some(v) => {
                let c = self.str_code(idx, v);
                self.set_str_code(idx, c);
            }
            None => self.strs[idx].column.push_null(),
        }
    }

    /// Sets string column `idx` to a static string (found by address once seen); None is null.
    fn set_static_str(&mut self, idx: usize, v: Option<&'static str>) {
        let Some(v) = v else {
            self.strs[idx].column.push_null();
            return;
        };
        let known = self.strs[idx]
            .statics
            .iter()
            .find(|(s, _)| same(s, v))
            .map(|&(_, c)| c);
        let c = match known {
            Some(c) => c,
            None => {
                let c = self.str_code(idx, v);
                self.strs[idx].statics.push((v, c));
                c
            }
        };
        self.set_str_code(idx, c);
    }

    fn end_row(&mut self) {
        self.rows += 1;
        self.cursor = 0;
        if std::mem::take(&mut self.set_in_row) == self.num.len() {
            return;
        }
        for c in self.num.iter_mut() {
            if c.values.len() < self.rows {
                c.values.resize(self.rows, f64::NAN);
            }
        }
    }

    fn pending_rows(&self) -> usize {
        self.rows
    }

    /// The rows recorded since the last call, as a table; the columns seen so far are kept
    /// (a later row sets them in the same order), the rows are not. Column order: t_s, then
    /// the string keys, then the numbers in first-seen order, so that the chunks of a run
    /// joined with `Table::append` are the table one call at the end gives.
    fn take(&mut self) -> Table {
        let mut columns = Vec::new();
        let mut numbers = Vec::new();
        for c in self.num.iter_mut() {
            let v = std::mem::replace(&mut c.values, Vec::with_capacity(self.room));
            if c.name == "t_s" {
                columns.push((c.name.clone(), Column::F64(v)));
            } else {
                numbers.push((c.name.clone(), Column::F64(v)));
            }
        }
        for b in self.strs.iter_mut() {
            columns.push((b.name.clone(), Column::Str(b.column.take_rows())));
        }
        columns.extend(numbers);
        Table {
            rows: std::mem::take(&mut self.rows),
            columns,
        }
    }
}

/// Rows a time-series table makes room for up front: 1 MiB per column (a thousand flows' 100 ms
/// bins for 13 simulated seconds). Columns grow by doubling past it, copying what they hold.
const ROOM_ROWS: usize = 1 << 17;

pub struct Recorder {
    last: Time,
    /// Some flow of the scenario has a target rate: record `target_rate_mbps` and
    /// `satisfaction` per bin.
    targets: bool,
    flows: TableBuilder,
    /// Per flow, the code of its id in the flow table's `flow` column (found on the first row).
    flow_ids: Vec<u32>,
    links: TableBuilder,
    /// Random (not queue) losses per link direction.
    pub random_losses: Vec<u64>,
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        bytes as f64 * 8.0 / d.as_secs_f64() / 1e6
    }
}

fn ms_of_us(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Min, mean and percentiles (ms) of delays recorded in µs in `h`, with their exact sum (ns).
pub fn percentiles(h: &DelayHistogram, sum_ns: u128, count: u64) -> Percentiles {
    if count == 0 || h.is_empty() {
        return Percentiles::default();
    }
    let [p50, p95, p99] = h.values_at_quantiles([0.50, 0.95, 0.99]);
    Percentiles {
        min: ms_of_us(h.min()),
        mean: sum_ns as f64 / count as f64 / 1e6,
        p50: ms_of_us(p50),
        p95: ms_of_us(p95),
        p99: ms_of_us(p99),
    }
}

/// Mean and 95th percentile (ms) of delays recorded in µs in `h`, with their exact sum (ns).
pub fn mean_p95(h: &DelayHistogram, sum_ns: u128, count: u64) -> MeanP95 {
    if count == 0 || h.is_empty() {
        return MeanP95::default();
    }
    // Sub-microsecond delays are recorded as 1 µs (histogram floor); report them as zero.
    let p95 = h.value_at_quantile(0.95);
    MeanP95 {
        mean: sum_ns as f64 / count as f64 / 1e6,
        p95: if p95 <= 1 { 0.0 } else { ms_of_us(p95) },
    }
}

/// A video flow's frame statistics over its settled frames (the summary's `frame_delay_ms`,
/// `frames_sent`, `frames_lost`, `competing_detected_fraction`).
pub struct VideoStats {
    pub delay_ms: Percentiles,
    pub sent: u64,
    pub lost: u64,
    pub competing: Option<f64>,
}

/// Exact percentiles (nearest rank) of a flow's frame delays; frames are few.
pub fn video_summary(v: &VideoSource, end: Time) -> VideoStats {
    let mut delays: Vec<f64> = Vec::new();
    let (mut sent, mut lost, mut flagged, mut flag_known) = (0u64, 0u64, 0u64, 0u64);
    for f in v.settled(end) {
        sent += 1;
        match f.delay() {
            Some(d) => delays.push(d * 1e3),
            None => lost += 1,
        }
        if let Some(c) = f.competing {
            flag_known += 1;
            flagged += u64::from(c);
        }
    }
    delays.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let i = ((p * delays.len() as f64).ceil() as usize).clamp(1, delays.len()) - 1;
        delays[i]
    };
    let delay_ms = if delays.is_empty() {
        Percentiles::default()
    } else {
        Percentiles {
            min: delays[0],
            mean: delays.iter().sum::<f64>() / delays.len() as f64,
            p50: q(0.50),
            p95: q(0.95),
            p99: q(0.99),
        }
    };
    VideoStats {
        delay_ms,
        sent,
        lost,
        competing: (flag_known > 0).then(|| flagged as f64 / flag_known as f64),
    }
}

/// The per-frame table of every video flow.
pub(super) fn frames_table(flows: &[Flow], end: Time) -> Table {
    frames_table_of(
        flows
            .iter()
            .filter_map(|fl| Some((fl.model.id.as_str(), fl.video.as_deref()?))),
        end,
    )
}

/// The per-frame table of video sources given with their flows' ids (the simulator's and the
/// emulator's).
pub fn frames_table_of<'a>(
    sources: impl IntoIterator<Item = (&'a str, &'a VideoSource)>,
    end: Time,
) -> Table {
    let names = [
        "frame",
        "generated_s",
        "first_sent_s",
        "decodable_s",
        "complete_s",
        "delay_ms",
        "packets",
        "data_packets",
        "bytes",
        "target_mbps",
        "competing",
        "decoded",
        "settled",
    ];
    let mut ids = Vec::new();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let cut = end.as_secs_f64() - super::video::SETTLE_GRACE_S;
    for (id, v) in sources {
        for (k, f) in v.frames.iter().enumerate() {
            ids.push(id.to_string());
            let secs = |t: Option<Time>| t.map(|t| t.as_secs_f64());
            let row = [
                Some(k as f64),
                Some(f.generated.as_secs_f64()),
                secs(f.first_sent),
                secs(f.decodable),
                secs(f.complete),
                f.delay().map(|d| d * 1e3),
                Some(f64::from(f.packets)),
                Some(f64::from(f.data_packets)),
                Some(f.bytes as f64),
                Some(f.target.as_mbps_f64()),
                f.competing.map(|c| f64::from(u8::from(c))),
                Some(f64::from(u8::from(f.decodable.is_some()))),
                Some(f64::from(u8::from(f.generated.as_secs_f64() < cut))),
            ];
            for (c, v) in cols.iter_mut().zip(row) {
                c.push(null_as_nan(v));
            }
        }
    }
    let rows = ids.len();
    let mut columns = vec![(
        "flow".to_string(),
        Column::Str(ids.into_iter().map(Some).collect()),
    )];
    for (n, c) in names.iter().zip(cols) {
        columns.push((n.to_string(), Column::F64(c)));
    }
    Table { rows, columns }
}

/// Time-weighted mean of the target rates in force over `[from, to)`, counting only the time
/// during which some target was in force; `None` when none was.
fn mean_target_mbps(
    log: &[(Time, Option<polycc::units::Rate>)],
    from: Time,
    to: Time,
) -> Option<f64> {
    let mut weighted = 0.0;
    let mut covered = 0.0;
    for (k, (t, target)) in log.iter().enumerate() {
        let seg_end = log.get(k + 1).map_or(to, |n| n.0).min(to);
        let seg_start = (*t).max(from);
        if let (Some(r), true) = (target, seg_end > seg_start) {
            let w = (seg_end - seg_start).as_secs_f64();
            weighted += r.as_mbps_f64() * w;
            covered += w;
        }
    }
    if covered > 0.0 {
        Some(weighted / covered)
    } else {
        // A flow that never ran (or ran for no time) but was given a target still reports it.
        log.iter().find_map(|(_, t)| t.map(|r| r.as_mbps_f64()))
    }
}

/// The target rate in force at `t`, if any.
fn target_at(log: &[(Time, Option<polycc::units::Rate>)], t: Time) -> Option<f64> {
    log.iter()
        .rev()
        .find(|(from, _)| *from <= t)
        .or(log.first())
        .and_then(|(_, r)| r.map(|r| r.as_mbps_f64()))
}

impl Recorder {
    pub fn new(model: &Model) -> Self {
        let targets = model.flows.iter().any(|f| {
            f.intent
                .iter()
                .chain(f.intent_schedule.iter().map(|(_, i)| i))
                .any(|i| i.target_rate().is_some())
        });
        // One row per flow (link direction) per bin, and one for a last partial bin; at most
        // `ROOM_ROWS` up front, so that a long run drained in chunks holds no more.
        let bins = (model.duration.0.div_ceil(model.bin.0.max(1)) as usize + 1)
            .min(ROOM_ROWS / model.flows.len().max(1));
        Recorder {
            targets,
            last: Time::ZERO,
            flows: TableBuilder::with_str_columns(&["flow", "cc_state"], bins * model.flows.len()),
            flow_ids: Vec::new(),
            links: TableBuilder::with_str_columns(&["link"], bins * 2 * model.links.len()),
            random_losses: vec![0; model.links.len() * 2],
        }
    }

    pub fn last_sample(&self) -> Time {
        self.last
    }

    pub(super) fn sample(
        &mut self,
        now: Time,
        flows: &mut [Flow],
        links: &mut [Option<LinkDir>],
        model: &Model,
    ) {
        let start = self.last;
        let dur = now - start;
        if dur.is_zero() {
            return;
        }
        self.last = now;
        let t_s = start.as_secs_f64();
        if self.flow_ids.len() < flows.len() {
            let tb = &mut self.flows;
            self.flow_ids = flows.iter().map(|f| tb.str_code(0, &f.model.id)).collect();
        }
        for (fl, &id) in flows.iter_mut().zip(&self.flow_ids) {
            let tb = &mut self.flows;
            tb.set("t_s", Some(t_s));
            tb.set_str_code(0, id);
            tb.set("goodput_mbps", Some(mbps(fl.stats.bin_rx_payload, dur)));
            tb.set("throughput_mbps", Some(mbps(fl.stats.bin_rx_wire, dur)));
            // A connection waiting for its SYN-ACK has no sender state yet (as the kernel's
            // TCP_INFO has none before `connect` returns).
            let active = fl.started.is_some()
                && fl.ended.is_none_or(|e| e > start)
                && fl.handshake.is_none();
            if self.targets {
                let target = target_at(&fl.target_log, start).filter(|_| active);
                let goodput = mbps(fl.stats.bin_rx_payload, dur);
                tb.set("target_rate_mbps", target);
                tb.set(
                    "satisfaction",
                    target.filter(|t| *t > 0.0).map(|t| goodput / t),
                );
            }
            fl.stats.bin_rx_payload = 0;
            fl.stats.bin_rx_wire = 0;
            tb.set("rtt_ms", fl.stats.take_bin_rtt());
            match fl.sender.as_mut() {
                Some(s) => {
                    tb.set("cwnd_bytes", active.then_some(s.cwnd() as f64));
                    tb.set("inflight_bytes", Some(s.in_flight() as f64));
                    let wire = s.in_flight_on_the_wire() as f64;
                    tb.set_prefixed("cc_", "inflight_wire_bytes", Some(wire));
                    tb.set(
                        "pacing_rate_mbps",
                        if active {
                            s.pacing_rate().map(|r| r.as_mbps_f64())
                        } else {
                            None
                        },
                    );
                    let tel = s.cc().telemetry();
                    tb.set_static_str(1, active.then_some(tel.state));
                    for (k, v) in tel.entries() {
                        let v = if active && v.is_finite() {
                            Some(*v)
                        } else {
                            None
                        };
                        tb.set_prefixed("cc_", k, v);
                    }
                }
                None => {
                    tb.set("cwnd_bytes", None);
                    tb.set("inflight_bytes", None);
                    tb.set("pacing_rate_mbps", None);
                    tb.set_str(1, None);
                }
            }
            tb.end_row();
        }
        for (i, l) in model.links.iter().enumerate() {
            for (dir, name) in [
                (2 * i, l.id.clone()),
                (2 * i + 1, format!("{}:reverse", l.id)),
            ] {
                let Some(ld) = links[dir].as_mut() else {
                    continue;
                };
                let bin = ld.take_bin(now);
                let tb = &mut self.links;
                tb.set("t_s", Some(t_s));
                tb.set_str(0, Some(&name));
                tb.set(
                    "capacity_mbps",
                    Some(mbps(ld.server.offered_bytes(start, now), dur)),
                );
                tb.set("throughput_mbps", Some(mbps(bin.tx_bytes, dur)));
                tb.set("queue_bytes", Some(bin.queue_area as f64 / dur.0 as f64));
                tb.set("queue_packets", Some(ld.queued_packets() as f64));
                tb.set(
                    "queue_delay_ms",
                    (bin.sojourn_count > 0)
                        .then(|| bin.sojourn_ns_sum as f64 / bin.sojourn_count as f64 / 1e6),
                );
                tb.set("drops", Some(bin.drops as f64));
                tb.end_row();
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn summary(
        &self,
        model: &Model,
        flows: &[Flow],
        links: &[Option<LinkDir>],
        events: u64,
        wall_s: f64,
        acct: &Accounting,
        end: Time,
    ) -> Summary {
        let mut fs = Vec::new();
        let mut delivered_packets = 0;
        for fl in flows {
            delivered_packets += fl.stats.arrivals;
            let start = fl.started.unwrap_or(end);
            let stop = fl.ended.unwrap_or(end).min(end);
            let active = stop - start;
            let st = &fl.stats;
            let rtt = percentiles(&st.rtt_hist, st.rtt_sum_ns, st.rtt_count);
            let sent = st.packets_sent;
            // An unresponsive source learns of no loss: what did not arrive was lost.
            let (lost, cca) = match &fl.sender {
                Some(_) => (st.lost_packets, fl.model.cca.name().to_string()),
                None => (sent.saturating_sub(st.arrivals), "none".to_string()),
            };
            let done: Vec<f64> = fl
                .app
                .transfers
                .iter()
                .filter_map(|t| t.completed.map(|c| (c - t.requested).as_secs_f64()))
                .collect();
            let fct_dist_s = fl
                .app
                .traffic
                .reports_completion_times()
                .then(|| Percentiles::of_samples(&done))
                .flatten();
            let fct_s = fct_dist_s.as_ref().map(|p| p.mean);
            let video = fl.video.as_ref().map(|v| video_summary(v, end));
            let target_rate_mbps = mean_target_mbps(&fl.target_log, start, start + active);
            let goodput_mbps = mbps(fl.stats.rx_unique_payload, active);
            fs.push(FlowSummary {
                id: fl.model.id.clone(),
                cca,
                goodput_mbps,
                throughput_mbps: mbps(fl.stats.rx_wire_bytes, active),
                loss_rate: if sent == 0 {
                    0.0
                } else {
                    lost as f64 / sent as f64
                },
                retransmits: st.retransmits,
                spurious_losses: st.spurious_losses,
                probe_timeouts: st.probe_timeouts,
                persistent_congestions: st.persistent_congestions,
                packets_sent: sent,
                acks_sent: fl.stats.acks_sent,
                bytes_delivered: fl.stats.rx_unique_payload,
                rtt_ms: rtt,
                queue_delay_ms: mean_p95(
                    &fl.stats.queue_hist,
                    fl.stats.queue_ns_sum,
                    fl.stats.arrivals,
                ),
                fct_s,
                fct_dist_s,
                transfers_completed: done.len() as u64,
                active_s: active.as_secs_f64(),
                target_rate_mbps,
                satisfaction: target_rate_mbps
                    .filter(|t| *t > 0.0)
                    .map(|t| goodput_mbps / t),
                frame_delay_ms: video.as_ref().map(|v| v.delay_ms.clone()),
                frames_sent: video.as_ref().map(|v| v.sent),
                frames_lost: video.as_ref().map(|v| v.lost),
                competing_detected_fraction: video.as_ref().and_then(|v| v.competing),
                streaming: fl.app.player.as_ref().map(|p| p.stats(end).into()),
                browsing: fl.app.loader.as_ref().map(|l| l.summary()),
            });
        }
        let mut ls = Vec::new();
        let run = end - Time::ZERO;
        for (i, l) in model.links.iter().enumerate() {
            for (dir, name) in [
                (2 * i, l.id.clone()),
                (2 * i + 1, format!("{}:reverse", l.id)),
            ] {
                let Some(ld) = links[dir].as_ref() else {
                    continue;
                };
                let offered = ld.server.offered_bytes(Time::ZERO, end);
                ls.push(LinkSummary {
                    id: name,
                    capacity_mbps: mbps(offered, run),
                    utilization: if offered == 0 {
                        0.0
                    } else {
                        ld.tx_bytes as f64 / offered as f64
                    },
                    drops: ld.drops,
                    random_losses: self.random_losses[dir],
                    queue_delay_ms: mean_p95(&ld.sojourn_hist, ld.sojourn_ns_sum, ld.sojourn_count),
                });
            }
        }
        // Fairness among the flows that ran: one that never started (its start at or after the
        // end) has no share to be fair about.
        let goodputs: Vec<f64> = fs
            .iter()
            .filter(|f| f.active_s > 0.0)
            .map(|f| f.goodput_mbps)
            .collect();
        Summary {
            name: model.scenario.name.clone(),
            seed: model.scenario.seed,
            duration_s: model.duration.as_secs_f64(),
            wall_s,
            events,
            delivered_packets,
            jain_index: jain_index(&goodputs),
            flows: fs,
            links: ls,
            accounting: *acct,
        }
    }

    /// Flow and link rows recorded and not yet taken.
    pub fn pending_rows(&self) -> (usize, usize) {
        (self.flows.pending_rows(), self.links.pending_rows())
    }

    /// The flow and link rows recorded since the last call (whole bins: a sample records every
    /// flow and link at once).
    pub fn take_tables(&mut self) -> (Table, Table) {
        (self.flows.take(), self.links.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows: (t, state, value of column "a", value of column "b" if set).
    fn record(tb: &mut TableBuilder, t: f64, state: Option<&str>, a: f64, b: Option<f64>) {
        tb.set("t_s", Some(t));
        tb.set_str(0, state);
        tb.set("a", Some(a));
        if let Some(b) = b {
            tb.set("b", Some(b));
        }
        tb.end_row();
    }

    #[test]
    fn chunks_joined_are_the_table_of_one_take() {
        let rows = [
            (0.0, None, 1.0, None),
            (0.1, Some("x"), 2.0, None),
            (0.2, Some("y"), 3.0, Some(30.0)), // b first seen in the second chunk
            (0.3, None, 4.0, None),
            (0.4, Some("x"), 5.0, Some(50.0)),
        ];
        let mut whole = TableBuilder::with_str_columns(&["state"], 0);
        let mut parts = TableBuilder::with_str_columns(&["state"], 2);
        let mut joined = Table::default();
        for (k, &(t, s, a, b)) in rows.iter().enumerate() {
            record(&mut whole, t, s, a, b);
            record(&mut parts, t, s, a, b);
            if k == 1 || k == 3 {
                joined.append(&parts.take());
            }
        }
        joined.append(&parts.take());
        let whole = whole.take();
        let names: Vec<&str> = joined.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["t_s", "state", "a", "b"]);
        assert_eq!(joined.rows, 5);
        let b = joined.f64s("b").expect("b");
        assert!(b[0].is_nan() && b[1].is_nan() && b[3].is_nan());
        assert_eq!((b[2], b[4]), (30.0, 50.0));
        let Some(Column::Str(state)) = joined.column("state") else {
            panic!("no state column")
        };
        let state: Vec<Option<&str>> = state.iter().collect();
        assert_eq!(state, [None, Some("x"), Some("y"), None, Some("x")]);
        for (name, _) in &whole.columns {
            match (whole.column(name), joined.column(name)) {
                (Some(Column::F64(x)), Some(Column::F64(y))) => {
                    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(x), bits(y), "{name}");
                }
                (Some(Column::Str(x)), Some(Column::Str(y))) => {
                    assert!(x.iter().eq(y.iter()), "{name}")
                }
                _ => panic!("{name} differs in type"),
            }
        }
    }
}
