//! Scenario files: parsing (TOML or JSON), validation with errors that name the file and the key,
//! and resolution into the model the engine runs.

pub mod dash;
pub mod external;
pub mod host;
pub mod linux_stack;
pub mod page;
pub mod quantity;
mod resolve;
pub mod spec;

pub use resolve::resolve;

use polycc::registry::Registry;
use polycc::units::{Duration, Rate};
use quantity::Size;
use spec::*;
use std::fmt;
use std::path::{Path, PathBuf};

/// A bad scenario: which file, which key, what is wrong and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub origin: String,
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}: {}", self.origin, self.message)
        } else {
            write!(f, "{}: {}: {}", self.origin, self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Where a scenario came from: a name for messages and a directory for relative trace paths.
#[derive(Clone, Debug)]
pub struct Origin {
    pub name: String,
    pub base_dir: PathBuf,
}

impl Origin {
    pub fn file(path: &Path) -> Self {
        Origin {
            name: path.display().to_string(),
            base_dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }
    fn err(&self, path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            origin: self.name.clone(),
            path: path.into(),
            message: message.into(),
        }
    }
}

pub fn parse_toml(text: &str, origin: &Origin) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let mut msg = inner.message().to_string();
        if let Some(span) = inner.span() {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            msg = format!("{msg} (line {line})");
        }
        origin.err(path, untagged_hint(msg))
    })
}

pub fn parse_json(text: &str, origin: &Origin) -> Result<Scenario, ScenarioError> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        origin.err(
            e.path().to_string(),
            untagged_hint(e.into_inner().to_string()),
        )
    })
}

// serde's message for an untagged enum says nothing useful; say what the forms are.
fn untagged_hint(msg: String) -> String {
    if msg.contains("data did not match any variant of untagged enum") {
        let what = if msg.contains("CcSpec") {
            "expected a CCA name (\"cubic\") or a table with `name` (e.g. { name = \"cubic\", beta = 0.7 })"
        } else if msg.contains("TrafficSpec") {
            "expected \"bulk\" or a table with kind = bulk | sized | web | on_off | cbr | poisson | video | dash | page and its keys (sized: size; web: size, interval, arrivals, connection; on_off: on, off, periods; cbr/poisson: rate; video: fps, min_rate, max_rate, packet, fec, retransmit, frame_noise; dash: bitrates, chunk, buffer, startup, abr, length; page: pages, interval, arrivals, connection)"
        } else if msg.contains("AckPolicy") {
            "expected \"every\", \"delayed\" or { every = 2, max_delay = \"25ms\" }"
        } else if msg.contains("TraceSpec") {
            "expected a trace file path or { synth = \"random_walk\", start, min, max, step, interval }"
        } else {
            "value has none of the allowed forms"
        };
        return what.to_string();
    }
    msg
}

/// One direction of a link, ready to simulate.
#[derive(Clone, Debug)]
pub struct LinkDirModel {
    pub capacity: Capacity,
    pub queue: QueueSpec,
    /// Queue capacity in bytes (packet counts converted with the full packet size) and packets.
    pub queue_limit_bytes: Option<u64>,
    pub queue_limit_packets: Option<u64>,
    pub loss: f64,
    pub jitter: Option<Duration>,
    pub ack_aggregation: Option<Duration>,
    /// A policer's token rate and bucket depth in bytes (`queue.kind = "policer"`).
    pub policer: Option<(Rate, u64)>,
}

#[derive(Clone, Debug)]
pub struct LinkModel {
    pub id: String,
    pub delay: Duration,
    pub forward: LinkDirModel,
    /// `None`: an uncongested, lossless reverse direction.
    pub reverse: Option<LinkDirModel>,
    /// Loss probability of packets crossing the reverse direction (ACKs and reverse data).
    pub reverse_loss: f64,
    pub reverse_jitter: Option<Duration>,
    /// The jitter may reorder packets (`jitter.reorder`), in whichever direction it applies.
    pub jitter_reorder: bool,
    /// Changes of loss and delay over time (schedule points that set them), in time order.
    pub conditions: Vec<ConditionChange>,
}

/// The link's random loss (both directions) and propagation delay from `at` on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConditionChange {
    pub at: Duration,
    pub loss: f64,
    pub ack_loss: f64,
    pub delay: Duration,
}

/// A flow's host send-time noise (`flows[].send_jitter`): how the delay between the sender's
/// release of a packet and its departure is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SendJitterModel {
    /// U[0, max].
    Uniform { max: Duration },
    /// Exponential with this mean (unbounded: an occasional long stall, as a descheduled
    /// sender thread sees).
    Exponential { mean: Duration },
}

/// Largest `send_jitter` accepted: host timing noise is micro- to milliseconds; a second is
/// more likely a unit slip ("1s" for "1ms") than noise.
pub const MAX_SEND_JITTER: Duration = Duration::from_millis(1000);

#[derive(Clone, Debug, PartialEq)]
pub enum Traffic {
    Bulk,
    Sized {
        bytes: u64,
    },
    Web {
        bytes: u64,
        interval: Duration,
        poisson: bool,
        /// One connection (congestion controller, RTT estimator) serves every request, one
        /// after another, as HTTP/1.1 keep-alive without pipelining; otherwise each request
        /// opens a new one.
        persistent: bool,
    },
    /// Bulk in on periods, silent in off periods, starting on (`spec::TrafficTable::OnOff`).
    OnOff {
        on: Duration,
        off: Duration,
        exponential: bool,
    },
    Cbr {
        rate: Rate,
    },
    Poisson {
        rate: Rate,
    },
    Video(VideoModel),
    /// Adaptive video streaming (`spec::TrafficTable::Dash`).
    Dash(Box<dash::DashModel>),
    /// Page loads (`spec::TrafficTable::Page`).
    Page(Box<page::PageModel>),
}

/// A validated real-time video source (see `spec::TrafficTable::Video`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VideoModel {
    /// Frame interval T.
    pub interval: Duration,
    pub min_rate: Rate,
    pub max_rate: Rate,
    /// Bytes of a datagram on the wire (P).
    pub packet: u64,
    /// Repair packets per data packet.
    pub fec: f64,
    pub retransmit: bool,
    pub frame_noise: f64,
}

impl Traffic {
    /// Bytes of each transfer of a sized or web flow (None for other sources).
    pub fn transfer_bytes(&self) -> Option<u64> {
        match self {
            Traffic::Sized { bytes } | Traffic::Web { bytes, .. } => Some(*bytes),
            _ => None,
        }
    }

    /// Whether a flow's summary reports its transfers' completion times (`fct_s`): sized and web
    /// transfers; a DASH player's chunks and a browser's levels have figures of their own.
    pub fn reports_completion_times(&self) -> bool {
        matches!(self, Traffic::Sized { .. } | Traffic::Web { .. })
    }

    /// Unresponsive sources bypass congestion control.
    pub fn is_unresponsive(&self) -> bool {
        matches!(self, Traffic::Cbr { .. } | Traffic::Poisson { .. })
    }

    /// Whether the source hands the controller frames (`CongestionControl::on_frame`).
    pub fn has_frames(&self) -> bool {
        matches!(self, Traffic::Video(_))
    }

    /// The `kind` a scenario gives this source, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Traffic::Bulk => "bulk",
            Traffic::Sized { .. } => "sized",
            Traffic::Web { .. } => "web",
            Traffic::OnOff { .. } => "on_off",
            Traffic::Cbr { .. } => "cbr",
            Traffic::Poisson { .. } => "poisson",
            Traffic::Video(_) => "video",
            Traffic::Dash(_) => "dash",
            Traffic::Page(_) => "page",
        }
    }
}

#[derive(Clone, Debug)]
pub struct FlowModel {
    pub id: String,
    /// The controller as the scenario names it (on the Linux stack, a kernel controller).
    pub cca: polycc::CcSpec,
    /// The polycc controller the simulator runs: `cca` on the quic stack; on the Linux stack its
    /// model ([`linux_stack::controller`]), or why the simulator has none.
    pub sim_cca: Result<polycc::CcSpec, String>,
    pub rtt: Duration,
    pub start: Duration,
    pub stop: Option<Duration>,
    pub traffic: Traffic,
    /// Indices into `Model::links`, in traversal order of the data.
    pub path: Vec<usize>,
    pub reverse: bool,
    pub ack_every: u32,
    pub max_ack_delay: Duration,
    pub pacing: bool,
    /// Receive-window cap on bytes in flight.
    pub rwnd: Option<u64>,
    /// The application's intent at start.
    pub intent: Option<polycc::Intent>,
    /// Later intents `(from, intent)`, in increasing time after `start`.
    pub intent_schedule: Vec<(Duration, polycc::Intent)>,
    /// Host send-time noise; `None` when `send_jitter` is zero.
    pub send_jitter: Option<SendJitterModel>,
    pub stack: spec::Stack,
    /// What the end hosts do where stacks differ (from `stack`).
    pub host: host::HostModel,
    /// `stack = "external"`: the outside program's commands.
    pub external: Option<external::ExternalCommands>,
}

impl FlowModel {
    /// Whether the scenario gives the flow no intent, at its start or later: an application
    /// that states its own (a DASH player's chunk bitrate) then sets it.
    pub fn states_no_intent(&self) -> bool {
        self.intent.is_none() && self.intent_schedule.is_empty()
    }
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Model {
    pub scenario: Scenario,
    pub duration: Duration,
    pub bin: Duration,
    pub links: Vec<LinkModel>,
    pub flows: Vec<FlowModel>,
}

impl Model {
    pub fn packet_bytes(&self) -> u64 {
        self.scenario.mss + self.scenario.header_bytes
    }

    /// A full data packet of flow `f` on the wire (a video flow's datagrams are its own size).
    pub fn wire_packet_bytes(&self, f: &FlowModel) -> u64 {
        match &f.traffic {
            Traffic::Video(v) => v.packet,
            _ => self.packet_bytes(),
        }
    }

    /// A full data packet of flow `f` as its stack counts it (`HostModel::counts`): the
    /// controller's maximum datagram size.
    pub fn counted_packet_bytes(&self, f: &FlowModel) -> u64 {
        self.wire_packet_bytes(f) - f.host.counts.uncounted(self.scenario.header_bytes)
    }

    /// The base delay from flow `f`'s receiver back to its sender: the return half of its `rtt`
    /// and its links' delays (what an ACK, a DASH player's request or a browser's takes).
    pub fn return_delay(&self, f: &FlowModel) -> Duration {
        let links = f
            .path
            .iter()
            .map(|&l| self.links[l].delay)
            .fold(Duration::ZERO, |a, b| a + b);
        f.rtt - Duration(f.rtt.0 / 2) + links
    }
}

fn check_prob(origin: &Origin, path: &str, p: f64) -> Result<(), ScenarioError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(origin.err(
            path,
            format!("{p} is not a probability; allowed: 0.0 to 1.0"),
        ))
    }
}

fn bytes_of(size: &Size, full_packet: u64, bdp_bytes: u64) -> u64 {
    match *size {
        Size::Bytes(b) => b,
        Size::Packets(n) => n.saturating_mul(full_packet),
        Size::Bdp(k) => (k * bdp_bytes as f64).round() as u64,
    }
}

/// The capacity a BDP-sized buffer refers to: the constant rate, the schedule's first rate, or a
/// trace's mean rate.
pub fn nominal_rate(c: &Capacity) -> Rate {
    match c {
        Capacity::Constant(r) => *r,
        Capacity::Schedule(points) => points[0].1,
        Capacity::Trace {
            opportunities_ms,
            period_ms,
            bytes_per_opportunity,
        } => Rate::from_bytes_over(
            opportunities_ms.len() as u64 * bytes_per_opportunity,
            Duration::from_millis((*period_ms).max(1)),
        ),
    }
}

/// Parses and validates a scenario file.
pub fn load_file(path: &Path, registry: &Registry) -> Result<Model, ScenarioError> {
    let origin = Origin::file(path);
    // Reading a FIFO or a device would block or never end: only a regular file is read.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(origin.err(
            "",
            "cannot read the scenario: not a regular file (a FIFO, socket or device); give a TOML file",
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| origin.err("", format!("cannot read the scenario: {e}")))?;
    let sc = parse_toml(&text, &origin)?;
    resolve(sc, &origin, registry)
}
