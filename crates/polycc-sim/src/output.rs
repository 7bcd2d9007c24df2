//! What a run produces: the summary (serialised to `summary.json`) and long-format time series
//! (one row per flow per bin, one row per link per bin) as named columns.

use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

impl Percentiles {
    /// The nearest-rank percentiles of `samples` (`p` of n samples: the ⌈p·n⌉-th smallest);
    /// `None` without samples. For exact values such as transfer times, where a histogram's
    /// buckets would round them.
    pub fn of_samples(samples: &[f64]) -> Option<Percentiles> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Percentiles {
            min: v[0],
            // Summed in the order given, as the mean was before percentiles came with it.
            mean: samples.iter().sum::<f64>() / samples.len() as f64,
            p50: rank(0.50),
            p95: rank(0.95),
            p99: rank(0.99),
        })
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MeanP95 {
    pub mean: f64,
    pub p95: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub id: String,
    pub cca: String,
    /// Unique application bytes delivered, over the flow's active time, Mbit/s.
    pub goodput_mbps: f64,
    /// Wire bytes arriving at the receiver (retransmissions and headers included), Mbit/s.
    pub throughput_mbps: f64,
    /// Packets declared lost / packets sent.
    pub loss_rate: f64,
    pub retransmits: u64,
    /// Packets acknowledged after they were declared lost (included in `loss_rate`): reordering,
    /// or a delay beyond the time threshold.
    pub spurious_losses: u64,
    /// Probe timeouts that fired: the sender heard no ACK for a PTO (srtt + 4·rttvar + max ACK
    /// delay, doubled on each consecutive one).
    pub probe_timeouts: u64,
    /// Times the sender declared persistent congestion (lost packets spanning 3 PTOs) and
    /// collapsed its window, QUIC's counterpart of a TCP retransmission timeout.
    pub persistent_congestions: u64,
    pub packets_sent: u64,
    /// ACKs the receiver sent.
    pub acks_sent: u64,
    pub bytes_delivered: u64,
    pub rtt_ms: Percentiles,
    /// Queueing delay of this flow's data packets, summed over the links of its path.
    pub queue_delay_ms: MeanP95,
    /// Flow completion time (sized flows; web flows: mean over completed transfers).
    pub fct_s: Option<f64>,
    /// Sized and web flows: the completed transfers' completion times, request to last byte,
    /// as percentiles (web flows' median and tail, Allegro Fig. 15's measure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_dist_s: Option<Percentiles>,
    /// Transfers completed (sized and web flows).
    pub transfers_completed: u64,
    /// Seconds the flow was active (start to stop, completion or the end of the run).
    pub active_s: f64,
    /// Flows whose intent states a target rate: that target, averaged over the active time
    /// during which one was in force (intents can change during a flow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_rate_mbps: Option<f64>,
    /// `goodput_mbps / target_rate_mbps` (Janus §8.1's satisfaction degree; 1 is ideal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub satisfaction: Option<f64>,
    /// Video flows: frame delay (first packet sent to frame decodable) over decoded frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_delay_ms: Option<Percentiles>,
    /// Video flows: frames produced (settled ones: all but the last second's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_sent: Option<u64>,
    /// Video flows: settled frames never decodable (fewer than k of their packets arrived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_lost: Option<u64>,
    /// Video flows whose controller reports a competing-flow flag (PIBES): the fraction of
    /// frames produced while it was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub competing_detected_fraction: Option<f64>,
    /// DASH flows: the player's figures (flattened into the flow's keys).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingSummary>,
    /// Page-load flows: the browser's figures (flattened into the flow's keys).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub browsing: Option<PageSummary>,
}

/// What a page-load flow's browser saw (`traffic = { kind = "page" }`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PageSummary {
    /// Loads completed.
    pub page_loads: u64,
    /// Of those, loads that waited for the one before them to end.
    pub page_loads_delayed: u64,
    /// Page load time of the completed loads: from the load's start to the last byte of its
    /// last level, s.
    pub page_load_s: Option<Percentiles>,
    /// Page response time: from the load's start to the last byte of its document, s.
    pub page_response_s: Option<Percentiles>,
}

/// What a DASH flow's player saw (`traffic = { kind = "dash" }`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StreamingSummary {
    /// From the first chunk request to the start of playback, s (null: never started).
    pub startup_s: Option<f64>,
    /// Stalls after playback started (rebuffering events).
    pub rebuffers: u64,
    /// Time stalled after playback started, s.
    pub rebuffer_s: f64,
    /// Stalled time over stalled plus played time.
    pub rebuffer_ratio: f64,
    /// Video played, s.
    pub played_s: f64,
    /// Chunks received in full.
    pub chunks: u64,
    /// Mean bitrate of those chunks, Mbit/s.
    pub chunk_bitrate_mbps: Option<f64>,
    /// Chunks at another bitrate than the chunk before.
    pub bitrate_switches: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub id: String,
    /// Mean capacity over the run, Mbit/s.
    pub capacity_mbps: f64,
    /// Bytes sent / bytes the capacity allowed.
    pub utilization: f64,
    /// Packets dropped by the queue (tail drops and AQM drops).
    pub drops: u64,
    /// Packets lost to the configured random loss.
    pub random_losses: u64,
    pub queue_delay_ms: MeanP95,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    /// Wall-clock seconds of the run (the one field that differs between identical runs).
    pub wall_s: f64,
    /// Simulator events processed.
    pub events: u64,
    /// Data packets delivered to receivers.
    pub delivered_packets: u64,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Jain's fairness index over the flows' goodputs.
    pub jain_index: f64,
    /// Data bytes sent, delivered, dropped and still in the network at the end.
    pub accounting: crate::engine::Accounting,
}

/// One column of a long-format table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Numbers, NaN standing for null (no value): the simulator records only finite numbers,
    /// and a plain `f64` is half the size of an `Option<f64>` (time series grow with the
    /// simulated time: 50 flows for 600 s are 300 000 rows).
    F64(Vec<f64>),
    /// Strings, dictionary-encoded: a flow's id repeats on each of its rows, so each row holds
    /// a 4-byte code into the distinct values instead of a `String` of its own.
    Str(StrColumn),
}

/// A string column: row `i` is `levels[codes[i]]`, or null where its code is `StrColumn::NULL`
/// (an inactive flow has no controller state).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StrColumn {
    levels: Vec<String>,
    codes: Vec<u32>,
}

impl StrColumn {
    /// The code of a null row.
    pub const NULL: u32 = u32::MAX;

    /// Row `i`'s value; None past the end or for a null row.
    pub fn get(&self, i: usize) -> Option<&str> {
        let c = *self.codes.get(i)?;
        self.levels.get(c as usize).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The rows' values in order, None for null.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&str>> + '_ {
        self.codes
            .iter()
            .map(|&c| self.levels.get(c as usize).map(String::as_str))
    }

    /// Appends a row holding the value of code `code` (from `level`).
    pub fn push_code(&mut self, code: u32) {
        debug_assert!((code as usize) < self.levels.len());
        self.codes.push(code);
    }

    /// Appends a null row.
    pub fn push_null(&mut self) {
        self.codes.push(Self::NULL);
    }

    /// The code of `v`, added as a new distinct value. The caller keeps the codes of the
    /// values it has added (the column does not search its levels).
    pub fn add_level(&mut self, v: &str) -> u32 {
        self.levels.push(v.to_string());
        let code = u32::try_from(self.levels.len() - 1).expect("fewer than 2^32 distinct values");
        assert_ne!(code, Self::NULL, "fewer than 2^32 - 1 distinct values");
        code
    }

    /// The distinct values (codes index them).
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// The rows' codes into `levels` (`StrColumn::NULL` for null).
    pub fn codes(&self) -> &[u32] {
        &self.codes
    }

    /// The rows so far, as a column of their own with the same levels; this column keeps its
    /// levels (and so its codes' meaning) and no rows.
    pub fn take_rows(&mut self) -> StrColumn {
        StrColumn {
            levels: self.levels.clone(),
            codes: std::mem::take(&mut self.codes),
        }
    }

    /// Appends `other`'s rows, adding the levels this column lacks.
    pub fn append(&mut self, other: &StrColumn) {
        let mut index: std::collections::HashMap<&str, u32> = Default::default();
        for (c, v) in self.levels.iter().enumerate() {
            index.entry(v.as_str()).or_insert(c as u32);
        }
        let mut added = Vec::new();
        let map: Vec<u32> = other
            .levels
            .iter()
            .map(|v| match index.get(v.as_str()) {
                Some(&c) => c,
                None => {
                    let c = (self.levels.len() + added.len()) as u32;
                    added.push(v.clone());
                    c
                }
            })
            .collect();
        self.levels.extend(added);
        self.codes.extend(
            other
                .codes
                .iter()
                .map(|&c| map.get(c as usize).copied().unwrap_or(Self::NULL)),
        );
    }
}

impl<S: AsRef<str>> FromIterator<Option<S>> for StrColumn {
    fn from_iter<I: IntoIterator<Item = Option<S>>>(iter: I) -> Self {
        let mut col = StrColumn::default();
        let mut index: std::collections::HashMap<String, u32> = Default::default();
        for v in iter {
            let Some(v) = v else {
                col.push_null();
                continue;
            };
            let v = v.as_ref();
            let code = match index.get(v) {
                Some(&c) => c,
                None => {
                    let c = col.add_level(v);
                    index.insert(v.to_string(), c);
                    c
                }
            };
            col.push_code(code);
        }
        col
    }
}

/// A long-format table: equal-length named columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub rows: usize,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// A numeric column as plain values (nulls as NaN), for tests and analysis.
    pub fn f64s(&self, name: &str) -> Option<Vec<f64>> {
        match self.column(name)? {
            Column::F64(v) => Some(v.clone()),
            Column::Str(_) => None,
        }
    }

    /// A string column's values, one `String` per row, null read as "" (for tests and
    /// analysis that compare values; `column` tells null from "").
    pub fn strs(&self, name: &str) -> Option<Vec<String>> {
        match self.column(name)? {
            Column::Str(v) => Some(v.iter().map(|s| s.unwrap_or("").to_string()).collect()),
            Column::F64(_) => None,
        }
    }

    /// Appends the rows of `chunk`, a later part of the same table (`Simulator::drain`): a
    /// column it lacks is null in its rows, and a column first seen in it is null in the rows
    /// before. The columns keep their order, new ones last, as a single drain would give.
    pub fn append(&mut self, chunk: &Table) {
        for (name, col) in &chunk.columns {
            if self.column(name).is_none() {
                let empty = match col {
                    Column::F64(_) => Column::F64(vec![f64::NAN; self.rows]),
                    Column::Str(_) => Column::Str((0..self.rows).map(|_| None::<&str>).collect()),
                };
                self.columns.push((name.clone(), empty));
            }
        }
        for (name, col) in &mut self.columns {
            match (col, chunk.column(name)) {
                (Column::F64(v), Some(Column::F64(w))) => v.extend_from_slice(w),
                (Column::Str(v), Some(Column::Str(w))) => v.append(w),
                (Column::F64(v), _) => v.resize(self.rows + chunk.rows, f64::NAN),
                (Column::Str(v), _) => {
                    for _ in 0..chunk.rows {
                        v.push_null();
                    }
                }
            }
        }
        self.rows += chunk.rows;
    }
}

/// Everything a run returns.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The scenario with every default filled in, as TOML.
    pub resolved_toml: String,
    pub summary: Summary,
    /// Columns: t_s, flow, goodput_mbps, throughput_mbps, rtt_ms, cwnd_bytes, inflight_bytes,
    /// pacing_rate_mbps, cc_state (null while the flow is inactive), and `cc_<name>` for each
    /// telemetry value.
    pub flows: Table,
    /// Columns: t_s, link, capacity_mbps, queue_bytes, queue_delay_ms, drops.
    pub links: Table,
    /// One row per frame of each video flow (empty without video flows). Columns: flow, frame,
    /// generated_s, first_sent_s, decodable_s, complete_s, delay_ms, packets, data_packets,
    /// bytes, target_mbps, competing, decoded, settled.
    pub frames: Table,
    /// One row per transfer of each sized or web flow (empty without them), in request order.
    /// Columns: flow, transfer, bytes, requested_s, started_s, completed_s, fct_s
    /// (`engine::transfers`).
    pub transfers: Table,
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for a single flow or all-zero input.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn jain() {
        assert_eq!(super::jain_index(&[5.0, 5.0]), 1.0);
        assert!((super::jain_index(&[10.0, 0.0]) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn percentiles_of_samples_are_nearest_rank() {
        assert_eq!(super::Percentiles::of_samples(&[]), None);
        // 20 samples 1..=20, unsorted: p50 is the 10th, p95 the 19th, p99 the 20th.
        let v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        let p = super::Percentiles::of_samples(&v).expect("samples");
        assert_eq!((p.min, p.p50, p.p95, p.p99), (1.0, 10.0, 19.0, 20.0));
        assert!((p.mean - 10.5).abs() < 1e-12);
        let one = super::Percentiles::of_samples(&[0.25]).expect("one");
        assert_eq!((one.p50, one.p95, one.p99), (0.25, 0.25, 0.25));
    }
}
