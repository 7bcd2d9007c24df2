//! The scenario file schema. Every struct denies unknown keys so a typo is reported with the
//! allowed names; defaults are filled here so the resolved scenario shows every value used.

use super::quantity::{DurationQ, RateQ, SizeQ};
use polycc::registry::CcSpec;
use polycc::units::{Duration, Rate};
use serde::{Deserialize, Serialize};

fn d(text: &str) -> DurationQ {
    DurationQ::parse(text).expect("valid default")
}

/// Default maximum segment size (payload bytes per packet), as ns-3 and Linux over Ethernet.
pub const DEFAULT_MSS: u64 = 1448;
/// Default per-packet header bytes, so a full packet is 1500 bytes on the wire.
pub const DEFAULT_HEADER_BYTES: u64 = 52;
/// Default size of an ACK packet on the wire.
pub const DEFAULT_ACK_BYTES: u64 = 64;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_duration")]
    pub duration: DurationQ,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Width of the time-series bins.
    #[serde(default = "default_bin")]
    pub bin: DurationQ,
    /// Payload bytes per full packet.
    #[serde(default = "default_mss")]
    pub mss: u64,
    /// Header bytes added to every data packet on the wire.
    #[serde(default = "default_header")]
    pub header_bytes: u64,
    /// Size of an ACK on the wire.
    #[serde(default = "default_ack_bytes")]
    pub ack_bytes: u64,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    /// How much memory and work the run may take (estimated before it starts); defaults from
    /// `POLYCC_MAX_MEMORY` / `POLYCC_MAX_EVENTS` or the machine's memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsSpec>,
    /// What `polycc suite` reads from a scenario of the suite (its metric and half); the
    /// simulator carries it along unread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<toml::Table>,
}

/// `limits`: raise (or lower) the bounds a run is checked against before it starts.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Most memory the run may need, e.g. "16GiB".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<SizeQ>,
    /// Most simulator events the run may take, e.g. 1e10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<f64>,
}

fn default_duration() -> DurationQ {
    d("60s")
}
fn default_seed() -> u64 {
    1
}
fn default_bin() -> DurationQ {
    d("100ms")
}
fn default_mss() -> u64 {
    DEFAULT_MSS
}
fn default_header() -> u64 {
    DEFAULT_HEADER_BYTES
}
fn default_ack_bytes() -> u64 {
    DEFAULT_ACK_BYTES
}

/// One bottleneck link; data flows along `flows[].path` in the forward direction, ACKs return on
/// the reverse direction.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub id: String,
    /// Constant capacity. Exactly one of `rate`, `schedule`, `trace` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateQ>,
    /// Capacity over time: steps, or linear ramps when a point has `ramp = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<SchedulePoint>>,
    /// Trace-driven capacity: a mahimahi file, or a synthesised trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    #[serde(default)]
    pub queue: QueueSpec,
    /// Random loss probability for data packets entering the link.
    #[serde(default)]
    pub loss: f64,
    /// Random loss probability for ACKs crossing the link's reverse direction.
    #[serde(default)]
    pub ack_loss: f64,
    /// One-way propagation delay of the link itself, added to each flow's base RTT in both
    /// directions.
    #[serde(default = "zero_duration")]
    pub delay: DurationQ,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_aggregation: Option<AckAggregationSpec>,
    /// Capacity of the reverse direction (ACKs and reverse flows). Unlimited when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_rate: Option<RateQ>,
    /// Queue of the reverse direction; only used when `reverse_rate` is set.
    #[serde(default)]
    pub reverse_queue: QueueSpec,
}

fn zero_duration() -> DurationQ {
    DurationQ::from_value(Duration::ZERO)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulePoint {
    pub at: DurationQ,
    pub rate: RateQ,
    /// Ramp linearly from the previous point's rate to this one (reached at `at`).
    #[serde(default)]
    pub ramp: bool,
    /// From `at` on, the link's random loss of data packets becomes this (held until a later
    /// point sets it again; before the first point that sets it, the link's `loss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// From `at` on, the loss of packets crossing the reverse direction (as `ack_loss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_loss: Option<f64>,
    /// From `at` on, the link's one-way propagation delay (as `delay`). A packet keeps the delay
    /// in force when it entered the delay line, and FIFO order is kept, so a decrease lets the
    /// packets already on their way arrive first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DurationQ>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TraceSpec {
    /// Path of a mahimahi trace, relative to the scenario file.
    File(String),
    Synth(SynthTrace),
}

/// A trace generated from the seed: a bounded random walk of the capacity.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthTrace {
    /// Only "random_walk".
    pub synth: String,
    pub start: RateQ,
    pub min: RateQ,
    pub max: RateQ,
    /// Largest change per step.
    pub step: RateQ,
    pub interval: DurationQ,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    Droptail,
    Codel,
    FqCodel,
    /// Token bucket of `rate` and `burst`: packets finding too few tokens are dropped.
    Policer,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    #[serde(default = "default_queue_kind")]
    pub kind: QueueKind,
    /// Capacity: packets, bytes, or multiples of the BDP (link rate × `bdp_rtt`).
    #[serde(default = "default_queue_size")]
    pub size: SizeQ,
    /// RTT used for a size in bdp; default: the largest base RTT of the flows on the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bdp_rtt: Option<DurationQ>,
    /// CoDel target sojourn time (RFC 8289 §4.4: 5 ms).
    #[serde(default = "default_codel_target")]
    pub target: DurationQ,
    /// CoDel interval (RFC 8289 §4.3: 100 ms).
    #[serde(default = "default_codel_interval")]
    pub interval: DurationQ,
    /// FQ-CoDel byte quantum per round (RFC 8290 §4: 1514 bytes).
    #[serde(default = "default_quantum")]
    pub quantum: u64,
    /// Policer token rate (required with kind = "policer", refused with any other kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateQ>,
    /// Policer bucket depth (required with kind = "policer", refused with any other kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<SizeQ>,
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec {
            kind: default_queue_kind(),
            size: default_queue_size(),
            bdp_rtt: None,
            target: default_codel_target(),
            interval: default_codel_interval(),
            quantum: default_quantum(),
            rate: None,
            burst: None,
        }
    }
}

fn default_queue_kind() -> QueueKind {
    QueueKind::Droptail
}
fn default_queue_size() -> SizeQ {
    SizeQ::packets(1000)
}
fn default_codel_target() -> DurationQ {
    d("5ms")
}
fn default_codel_interval() -> DurationQ {
    d("100ms")
}
fn default_quantum() -> u64 {
    1514
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Data,
    Ack,
    Both,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    /// Each packet gets an extra delay drawn from U[0, max]; FIFO order is kept unless
    /// `reorder` is set.
    pub max: DurationQ,
    #[serde(default = "default_jitter_direction")]
    pub direction: Direction,
    /// Each packet leaves at its own entry time + delay + jitter, so a later one can overtake
    /// it, as with netem's delay jitter (Linux `tc netem delay D J`). Default false: the extra
    /// delay never reorders (a packet waits for the one ahead).
    #[serde(default)]
    pub reorder: bool,
}

fn default_jitter_direction() -> Direction {
    Direction::Data
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckAggregationSpec {
    /// ACKs are held and released together at every multiple of this interval.
    pub interval: DurationQ,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub id: String,
    #[serde(default = "default_cca")]
    pub cca: CcSpec,
    /// Base (propagation) RTT of this flow, excluding the links' own `delay`.
    pub rtt: DurationQ,
    #[serde(default = "zero_duration")]
    pub start: DurationQ,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<DurationQ>,
    #[serde(default)]
    pub traffic: TrafficSpec,
    /// Links crossed in order; default: the first link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
    /// Data travels the links' reverse direction (reverse cross traffic). A responsive one
    /// needs a `reverse_rate` on its path or an `rwnd`, else nothing bounds it.
    #[serde(default)]
    pub reverse: bool,
    #[serde(default)]
    pub ack: AckPolicy,
    /// Pace packets (at the CCA's rate, or cwnd/srtt scaled as Linux does when it gives none).
    #[serde(default = "default_true")]
    pub pacing: bool,
    /// Receive window: the most data in flight the receiver allows, whatever the controller's
    /// window (Linux's and ns-3's senders are bounded by it too). 64 MiB when absent
    /// (`engine::DEFAULT_RWND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwnd: Option<SizeQ>,
    /// Number of identical flows this entry stands for; ids get "-1", "-2", ... suffixes.
    #[serde(default = "default_count")]
    pub count: u32,
    /// The application's intent, handed to the controller at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentSpec>,
    /// Changes of intent during the flow, at absolute scenario times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intent_schedule: Vec<IntentChangeSpec>,
    /// Host send-time noise: every packet the sender releases (by window and pacing) leaves
    /// after a random delay, in order: U[0, send_jitter], or exponential with mean
    /// `send_jitter` (see `send_jitter_dist`). Absent or zero: packets leave at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_jitter: Option<DurationQ>,
    /// `uniform` (default) or `exponential`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_jitter_dist: Option<JitterDistribution>,
    /// The transport that carries the flow (see [`Stack`]).
    #[serde(default, skip_serializing_if = "Stack::is_default")]
    pub stack: Stack,
    /// `stack = "external"`: the command that starts the flow's data sender, run with `sh -c`
    /// in the sending namespace at the flow's `start`. A template: `{receiver_ip}`,
    /// `{sender_ip}`, `{port}` (the receiver's port, which the emulator classifies the flow's
    /// packets by), `{duration_s}` (seconds from `start` to the flow's stop or the run's end)
    /// and `{flow}` (its id) are replaced; `{{` and `}}` stand for literal braces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// `stack = "external"`: the command that starts the flow's receiver (listening on
    /// `{port}` at `{receiver_ip}`), run with `sh -c` in the receiving namespace when the run
    /// starts; the same placeholders as `sender`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
}

/// What carries a flow's packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stack {
    /// The flow's polycc controller over QUIC. In the simulator, polycc's own sender
    /// (`polycc-transport`: QUIC's loss recovery, RFC 9002, and ACK ranges); in the emulator,
    /// real QUIC (s2n-quic through `polycc-quic`).
    #[default]
    Quic,
    /// polycc's own transport model over UDP: the simulator's sender (`polycc-transport`) on a
    /// real link. In the simulator the same model as [`Stack::Quic`]; in the emulator polycc's
    /// sender over UDP datagrams.
    Udp,
    /// The Linux kernel's TCP with one of the kernel's own controllers (`cca` is a kernel
    /// name: `cubic`, `bbr`, `reno`, ...). Runs with `--backend emu`.
    Linux,
    /// The Linux kernel's TCP steered by the flow's polycc controller (`cca` is any polycc
    /// spec) through the eBPF shim (`polycc-tcp`): in the emulator real kernel TCP sockets with
    /// `TCP_CONGESTION = "polycc"` and the agent running the controller; in the simulator the
    /// Linux stack's sender and receiver model (as `stack = "linux"`) around the polycc
    /// controller.
    Tcp,
    /// An outside program, such as another implementation of a controller: the flow's
    /// `receiver` and `sender` commands, started by the emulator in the two namespaces and
    /// killed (their whole process group) at the flow's stop. Its throughput, goodput, loss and
    /// queueing delay are what the emulator sees of its packets on the link; it has no
    /// controller columns. Emulator only (`--backend emu`): the simulator cannot run a program.
    External,
}

impl Stack {
    pub fn is_default(&self) -> bool {
        *self == Stack::default()
    }

    pub fn name(self) -> &'static str {
        match self {
            Stack::Quic => "quic",
            Stack::Udp => "udp",
            Stack::Linux => "linux",
            Stack::Tcp => "tcp",
            Stack::External => "external",
        }
    }
}

/// How `send_jitter` delays are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JitterDistribution {
    /// U[0, send_jitter].
    #[default]
    Uniform,
    /// Exponential with mean send_jitter.
    Exponential,
}

/// An application intent as written in a scenario:
/// `{ class = "bandwidth_guarantee", target_rate = "10Mbps", min_rate = "2Mbps" }`. A flat table
/// (rather than a tagged enum) so that a bad rate is reported at its own key path; which keys a
/// class takes is checked by [`IntentSpec::to_intent`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IntentSpec {
    pub class: IntentClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<RateQ>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<RateQ>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<RateQ>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IntentClass {
    BandwidthGuarantee,
    DelaySensitive,
    Bulk,
    Scavenger,
    RealtimeVideo,
}

impl IntentSpec {
    /// The core intent (its rates not yet validated), or the key at fault and why.
    pub fn to_intent(&self) -> Result<polycc::Intent, (&'static str, String)> {
        use polycc::Intent;
        let given = [
            ("target_rate", self.target_rate.is_some()),
            ("min_rate", self.min_rate.is_some()),
            ("max_rate", self.max_rate.is_some()),
        ];
        let (allowed, required): (&[&str], &[&str]) = match self.class {
            IntentClass::BandwidthGuarantee => (&["target_rate", "min_rate"], &["target_rate"]),
            IntentClass::RealtimeVideo => (&["min_rate", "max_rate"], &["min_rate", "max_rate"]),
            _ => (&[], &[]),
        };
        let class = serde_json::to_value(self.class)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        for (key, present) in given {
            if present && !allowed.contains(&key) {
                let takes = if allowed.is_empty() {
                    "no rates".to_string()
                } else {
                    allowed.join(", ")
                };
                return Err((key, format!("class {class:?} takes {takes}")));
            }
            if !present && required.contains(&key) {
                return Err((key, format!("class {class:?} needs {key}")));
            }
        }
        let rate = |r: &Option<RateQ>| r.as_ref().map_or(Rate::ZERO, |q| q.value);
        Ok(match self.class {
            IntentClass::BandwidthGuarantee => Intent::BandwidthGuarantee {
                target_rate: rate(&self.target_rate),
                min_rate: rate(&self.min_rate),
            },
            IntentClass::DelaySensitive => Intent::DelaySensitive,
            IntentClass::Bulk => Intent::Bulk,
            IntentClass::Scavenger => Intent::Scavenger,
            IntentClass::RealtimeVideo => Intent::RealtimeVideo {
                min_rate: rate(&self.min_rate),
                max_rate: rate(&self.max_rate),
            },
        })
    }
}

/// One entry of `intent_schedule`: from `at` on, the flow's intent is `intent`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IntentChangeSpec {
    pub at: DurationQ,
    pub intent: IntentSpec,
}

fn default_cca() -> CcSpec {
    CcSpec::named("cubic")
}
fn default_true() -> bool {
    true
}
fn default_count() -> u32 {
    1
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum TrafficSpec {
    /// "bulk": always has data to send.
    Named(String),
    Table(TrafficTable),
}

impl Default for TrafficSpec {
    fn default() -> Self {
        TrafficSpec::Named("bulk".into())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TrafficTable {
    Bulk,
    /// One transfer of `size`; the flow completion time is reported.
    Sized {
        size: SizeQ,
    },
    /// Repeated transfers of `size` (web-like), one every `interval` on average, each on a new
    /// connection or all on one (`connection`: "per_request" or "persistent").
    Web {
        size: SizeQ,
        interval: DurationQ,
        #[serde(default = "default_arrivals")]
        arrivals: Arrivals,
        /// Checked when the scenario is resolved, so that a bad value is named in the error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
    },
    /// A bulk source that alternates between sending (`on`) and silence (`off`), starting
    /// on: period lengths drawn exponentially around their means (`periods = "exponential"`,
    /// the on/off sources of Remy and ns-3's `OnOffApplication` with exponential variables) or
    /// fixed (`"fixed"`). In an on period the application always has data; in an off period it
    /// has none, and what is in flight completes.
    OnOff {
        on: DurationQ,
        off: DurationQ,
        #[serde(default = "default_periods")]
        periods: Periods,
    },
    /// Unresponsive constant bit rate (no congestion control, no retransmission).
    Cbr {
        rate: RateQ,
    },
    /// Unresponsive Poisson packet arrivals of full-size packets at mean `rate`.
    Poisson {
        rate: RateQ,
    },
    /// Real-time video: a frame every 1/`fps`, sized from the controller's target bitrate within
    /// [`min_rate`, `max_rate`] with the encoder's random error, cut into datagrams of `packet`
    /// bytes on the wire, `fec` of them repair packets (an erasure code), and lost packets
    /// retransmitted only when `retransmit` (PIBES §III-B: as a last resort).
    Video {
        #[serde(default = "default_fps")]
        fps: f64,
        #[serde(default = "default_video_min")]
        min_rate: RateQ,
        #[serde(default = "default_video_max")]
        max_rate: RateQ,
        #[serde(default = "default_video_packet")]
        packet: SizeQ,
        #[serde(default = "default_fec")]
        fec: f64,
        #[serde(default)]
        retransmit: bool,
        /// Standard deviation of the encoder's relative frame-size error e_k.
        #[serde(default = "default_frame_noise")]
        frame_noise: f64,
    },
    /// Adaptive video streaming (DASH): a player at the receiver fetches `chunk`-long pieces of
    /// video one after another over one connection, each at a bitrate of the ladder `bitrates`
    /// picked by `abr` ("bola", or "highest"/"lowest" for a fixed bitrate), keeps at most
    /// `buffer` of video ahead of playback, starts (and resumes after a stall) once `startup`
    /// is buffered, and plays `length` of video (default: until the flow ends).
    Dash {
        bitrates: Vec<RateQ>,
        #[serde(default = "default_dash_chunk")]
        chunk: DurationQ,
        #[serde(default = "default_dash_buffer")]
        buffer: DurationQ,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        startup: Option<DurationQ>,
        /// Checked when the scenario is resolved, so that a bad value is named in the error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        abr: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        length: Option<DurationQ>,
    },
    /// Web page loads: a browser at the receiver loads one of `pages` (picked at random) every
    /// `interval` (`arrivals` as for web traffic), one load at a time. A page is a list of
    /// levels (sizes): the document, then the objects it references, then theirs; each level
    /// is asked for once the one before has arrived, and comes as one transfer (HTTP/2's
    /// multiplexed objects). Each load opens a new connection unless `connection =
    /// "persistent"`.
    Page {
        pages: Vec<Vec<SizeQ>>,
        interval: DurationQ,
        #[serde(default = "default_arrivals")]
        arrivals: Arrivals,
        /// Checked when the scenario is resolved, so that a bad value is named in the error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
    },
}

/// PIBES §IV defaults: 30 frames/s, the encoder's range 0.5 – 8 Mbit/s, 1200-byte datagrams
/// (the usual RTP/WebRTC payload bound), 10 % FEC (§III-B "a modest amount of FEC (e.g. 10%)"),
/// frame-size error e_k ~ N(0, 0.025) (eq. 7; read as the standard deviation: "may deviate
/// slightly from the target").
pub const DEFAULT_FPS: f64 = 30.0;
pub const DEFAULT_VIDEO_MIN_BPS: u64 = 500_000;
pub const DEFAULT_VIDEO_MAX_BPS: u64 = 8_000_000;
pub const DEFAULT_VIDEO_PACKET: u64 = 1200;
pub const DEFAULT_FEC: f64 = 0.1;
pub const DEFAULT_FRAME_NOISE: f64 = 0.025;

fn default_fps() -> f64 {
    DEFAULT_FPS
}
fn default_video_min() -> RateQ {
    RateQ::from_value(Rate::from_bps(DEFAULT_VIDEO_MIN_BPS))
}
fn default_video_max() -> RateQ {
    RateQ::from_value(Rate::from_bps(DEFAULT_VIDEO_MAX_BPS))
}
fn default_video_packet() -> SizeQ {
    SizeQ::bytes(DEFAULT_VIDEO_PACKET)
}
fn default_fec() -> f64 {
    DEFAULT_FEC
}
fn default_frame_noise() -> f64 {
    DEFAULT_FRAME_NOISE
}

/// A DASH chunk (segment) of 4 s (ours, a common segment length; Proteus §6.3's videos have
/// 3 s chunks).
pub const DEFAULT_DASH_CHUNK_MS: u64 = 4000;
/// dash.js's buffer target (`BUFFER_TARGET_S`, 30 s), which its BOLA rule is tuned to.
pub const DEFAULT_DASH_BUFFER_MS: u64 = 30_000;

fn default_dash_chunk() -> DurationQ {
    DurationQ::from_value(Duration::from_millis(DEFAULT_DASH_CHUNK_MS))
}
fn default_dash_buffer() -> DurationQ {
    DurationQ::from_value(Duration::from_millis(DEFAULT_DASH_BUFFER_MS))
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    Poisson,
    Periodic,
}

fn default_arrivals() -> Arrivals {
    Arrivals::Poisson
}

/// How an on/off source draws its period lengths.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Periods {
    Exponential,
    Fixed,
}

fn default_periods() -> Periods {
    Periods::Exponential
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum AckPolicy {
    /// "every" (an ACK per packet) or "delayed" (defaults below).
    Named(String),
    Delayed(DelayedAck),
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy::Named("every".into())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DelayedAck {
    /// ACK every this many packets (RFC 9000 §13.2.2 and RFC 5681: 2).
    #[serde(default = "default_ack_every")]
    pub every: u32,
    /// Longest an ACK is held (RFC 9000 §18.2 max_ack_delay default: 25 ms).
    #[serde(default = "default_max_ack_delay")]
    pub max_delay: DurationQ,
}

fn default_ack_every() -> u32 {
    2
}
fn default_max_ack_delay() -> DurationQ {
    d("25ms")
}

impl Default for DelayedAck {
    fn default() -> Self {
        DelayedAck {
            every: default_ack_every(),
            max_delay: default_max_ack_delay(),
        }
    }
}

/// Link capacity after validation.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    Constant(Rate),
    Schedule(Vec<(Duration, Rate, bool)>),
    /// Delivery opportunities in ms offsets; the trace loops with period `period_ms`.
    Trace {
        opportunities_ms: Vec<u64>,
        period_ms: u64,
        bytes_per_opportunity: u64,
    },
}
