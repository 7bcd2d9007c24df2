//! Scenario files: parsing (TOML or JSON), validation with errors that name the file and the key,
//! and resolution into the model the engine runs.

pub mod quantity;
pub mod spec;

use crate::trace;
use polycc::registry::Registry;
use polycc::units::{Duration, Rate};
use polycc::CcContext;
use quantity::Size;
use spec::*;
use std::collections::HashMap;
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
            "expected \"bulk\" or a table with kind = bulk | sized | web | cbr | poisson | video and its keys (sized: size; web: size, interval, arrivals, connection; cbr/poisson: rate; video: fps, min_rate, max_rate, packet, fec, retransmit, frame_noise)"
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
    Cbr {
        rate: Rate,
    },
    Poisson {
        rate: Rate,
    },
    Video(VideoModel),
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
    /// Unresponsive sources bypass congestion control.
    pub fn is_unresponsive(&self) -> bool {
        matches!(self, Traffic::Cbr { .. } | Traffic::Poisson { .. })
    }
}

#[derive(Clone, Debug)]
pub struct FlowModel {
    pub id: String,
    pub cca: polycc::CcSpec,
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
        Size::Packets(n) => n * full_packet,
        Size::Bdp(k) => (k * bdp_bytes as f64).round() as u64,
    }
}

/// Validates a parsed scenario and builds the engine's model. Controllers are built once here so
/// that an unknown name or bad parameter is reported before anything runs.
pub fn resolve(sc: Scenario, origin: &Origin, registry: &Registry) -> Result<Model, ScenarioError> {
    if sc.name.trim().is_empty() {
        return Err(origin.err("name", "must not be empty"));
    }
    let duration = sc.duration.value;
    if duration.is_zero() {
        return Err(origin.err("duration", "must be positive"));
    }
    let bin = sc.bin.value;
    if bin.is_zero() || bin > duration {
        return Err(origin.err("bin", "must be positive and at most the duration"));
    }
    if sc.mss < 100 || sc.mss > 65_000 {
        return Err(origin.err("mss", format!("{} is outside 100 ..= 65000 bytes", sc.mss)));
    }
    if sc.links.is_empty() {
        return Err(origin.err("links", "at least one [[links]] entry is needed"));
    }
    if sc.flows.is_empty() {
        return Err(origin.err("flows", "at least one [[flows]] entry is needed"));
    }
    let full_packet = sc.mss + sc.header_bytes;

    let mut link_index = HashMap::new();
    for (i, l) in sc.links.iter().enumerate() {
        if link_index.insert(l.id.clone(), i).is_some() {
            return Err(origin.err(
                format!("links[{i}].id"),
                format!("duplicate link id {:?}", l.id),
            ));
        }
    }

    // Flows first: a buffer in bdp needs the RTTs of the flows crossing the link.
    let mut flows = Vec::new();
    let mut max_rtt_on_link = vec![Duration::ZERO; sc.links.len()];
    let mut ids = HashMap::new();
    for (i, f) in sc.flows.iter().enumerate() {
        let at = |k: &str| format!("flows[{i}].{k}");
        if f.rtt.value.is_zero() {
            return Err(origin.err(at("rtt"), "must be positive"));
        }
        if f.count == 0 {
            return Err(origin.err(at("count"), "must be at least 1"));
        }
        if let Some(stop) = &f.stop {
            if stop.value <= f.start.value {
                return Err(origin.err(at("stop"), "must be after start"));
            }
        }
        let path = match &f.path {
            None => vec![0],
            Some(p) if p.is_empty() => {
                return Err(origin.err(at("path"), "must name at least one link"))
            }
            Some(p) => p
                .iter()
                .enumerate()
                .map(|(j, id)| {
                    link_index.get(id).copied().ok_or_else(|| {
                        let known: Vec<_> = sc.links.iter().map(|l| l.id.as_str()).collect();
                        origin.err(
                            format!("flows[{i}].path[{j}]"),
                            format!("unknown link {id:?}; known: {}", known.join(", ")),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        for &l in &path {
            max_rtt_on_link[l] = max_rtt_on_link[l].max(f.rtt.value + sc.links[l].delay.value * 2);
        }
        let traffic = resolve_traffic(&f.traffic, full_packet, sc.mss)
            .map_err(|m| origin.err(at("traffic"), m))?;
        if let Traffic::Video(v) = &traffic {
            if v.packet <= sc.header_bytes {
                return Err(origin.err(
                    at("traffic.packet"),
                    format!(
                        "{} bytes leave no payload after the {}-byte header",
                        v.packet, sc.header_bytes
                    ),
                ));
            }
        }
        let (ack_every, max_ack_delay) = match &f.ack {
            AckPolicy::Named(n) if n == "every" => (1, Duration::ZERO),
            AckPolicy::Named(n) if n == "delayed" => {
                let d = DelayedAck::default();
                (d.every, d.max_delay.value)
            }
            AckPolicy::Named(n) => {
                return Err(origin.err(at("ack"), format!("unknown ACK policy {n:?}; allowed: \"every\", \"delayed\" or {{ every = N, max_delay = \"25ms\" }}")))
            }
            AckPolicy::Delayed(d) => {
                if d.every == 0 {
                    return Err(origin.err(at("ack.every"), "must be at least 1"));
                }
                (d.every, d.max_delay.value)
            }
        };
        let rwnd = match f.rwnd.as_ref().map(|r| r.value) {
            None => None,
            Some(Size::Bdp(_)) => {
                return Err(origin.err(
                    at("rwnd"),
                    "give the receive window in pkt or bytes, not bdp",
                ))
            }
            Some(s) => {
                let b = bytes_of(&s, full_packet, 0);
                if b < 2 * full_packet {
                    return Err(origin.err(at("rwnd"), "must allow at least two full packets"));
                }
                Some(b)
            }
        };
        // A responsive flow whose data meets no capacity limit grows without bound (and the run
        // with it): reverse data crosses the links' reverse directions, unlimited unless given.
        if f.reverse
            && !traffic.is_unresponsive()
            && rwnd.is_none()
            && path.iter().all(|&l| sc.links[l].reverse_rate.is_none())
        {
            let ids: Vec<_> = path.iter().map(|&l| sc.links[l].id.as_str()).collect();
            return Err(origin.err(
                at("reverse"),
                format!(
                    "the data of this reverse flow would cross only unlimited reverse directions \
                     (no `reverse_rate` on {}); give one of them `reverse_rate`, or bound the \
                     flow with `rwnd`",
                    ids.join(", ")
                ),
            ));
        }
        let intent = match (&f.intent, &traffic) {
            (None, Traffic::Video(v)) => Some(polycc::Intent::RealtimeVideo {
                min_rate: v.min_rate,
                max_rate: v.max_rate,
            }),
            (None, _) => None,
            (Some(spec), _) => Some(resolve_intent(origin, &at("intent"), spec)?),
        };
        let mut intent_schedule = Vec::new();
        for (j, ch) in f.intent_schedule.iter().enumerate() {
            let here = format!("flows[{i}].intent_schedule[{j}]");
            let t = ch.at.value;
            if t <= f.start.value || f.stop.as_ref().is_some_and(|s| t >= s.value) {
                return Err(origin.err(
                    format!("{here}.at"),
                    "must be after the flow's start and before its stop",
                ));
            }
            if intent_schedule.last().is_some_and(|(p, _)| t <= *p) {
                return Err(origin.err(
                    format!("{here}.at"),
                    "changes must be in increasing time order",
                ));
            }
            let intent = resolve_intent(origin, &format!("{here}.intent"), &ch.intent)?;
            intent_schedule.push((t, intent));
        }
        let send_jitter =
            resolve_send_jitter(f, &traffic).map_err(|m| origin.err(at("send_jitter"), m))?;
        if !traffic.is_unresponsive() {
            registry
                .build(&f.cca, &CcContext::new(full_packet))
                .map_err(|e| origin.err(at("cca"), e.to_string()))?;
        }
        for k in 0..f.count {
            let id = if f.count == 1 {
                f.id.clone()
            } else {
                format!("{}-{}", f.id, k + 1)
            };
            if ids.insert(id.clone(), i).is_some() {
                return Err(origin.err(at("id"), format!("duplicate flow id {id:?}")));
            }
            flows.push(FlowModel {
                id,
                cca: f.cca.clone(),
                rtt: f.rtt.value,
                start: f.start.value,
                stop: f.stop.as_ref().map(|s| s.value),
                traffic: traffic.clone(),
                path: path.clone(),
                reverse: f.reverse,
                ack_every,
                max_ack_delay,
                pacing: f.pacing,
                rwnd,
                intent,
                intent_schedule: intent_schedule.clone(),
                send_jitter,
            });
        }
    }

    let mut links = Vec::new();
    for (i, l) in sc.links.iter().enumerate() {
        let at = |k: &str| format!("links[{i}].{k}");
        let given = [l.rate.is_some(), l.schedule.is_some(), l.trace.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if given != 1 {
            return Err(origin.err(
                format!("links[{i}]"),
                "give exactly one of `rate`, `schedule`, `trace`",
            ));
        }
        let capacity = if let Some(r) = &l.rate {
            if r.value.as_bps() == 0 {
                return Err(origin.err(at("rate"), "must be positive"));
            }
            Capacity::Constant(r.value)
        } else if let Some(points) = &l.schedule {
            if points.is_empty() {
                return Err(origin.err(at("schedule"), "needs at least one { at, rate } point"));
            }
            let mut prev = None;
            let mut out = Vec::new();
            for (j, p) in points.iter().enumerate() {
                if prev.is_some_and(|t| p.at.value <= t) {
                    return Err(origin.err(
                        format!("links[{i}].schedule[{j}].at"),
                        "points must be in increasing time order",
                    ));
                }
                if j == 0 && p.ramp {
                    return Err(origin.err(
                        format!("links[{i}].schedule[{j}].ramp"),
                        "the first point cannot ramp",
                    ));
                }
                prev = Some(p.at.value);
                out.push((p.at.value, p.rate.value, p.ramp));
            }
            if !out[0].0.is_zero() {
                return Err(origin.err(
                    format!("links[{i}].schedule[0].at"),
                    "the first point must be at \"0s\"",
                ));
            }
            if out.iter().all(|p| p.1.as_bps() == 0) {
                return Err(origin.err(at("schedule"), "capacity is zero throughout"));
            }
            Capacity::Schedule(out)
        } else {
            match l.trace.as_ref().expect("one of three") {
                TraceSpec::File(p) => {
                    let path = origin.base_dir.join(p);
                    let (opps, period) =
                        trace::load_mahimahi(&path).map_err(|m| origin.err(at("trace"), m))?;
                    Capacity::Trace {
                        opportunities_ms: opps,
                        period_ms: period,
                        bytes_per_opportunity: trace::MAHIMAHI_OPPORTUNITY_BYTES,
                    }
                }
                TraceSpec::Synth(s) => {
                    let (opps, period) = trace::synthesize(
                        s,
                        sc.seed ^ (i as u64).wrapping_mul(0x9E37_79B9),
                        duration,
                    )
                    .map_err(|m| origin.err(at("trace"), m))?;
                    Capacity::Trace {
                        opportunities_ms: opps,
                        period_ms: period,
                        bytes_per_opportunity: trace::MAHIMAHI_OPPORTUNITY_BYTES,
                    }
                }
            }
        };
        check_prob(origin, &at("loss"), l.loss)?;
        check_prob(origin, &at("ack_loss"), l.ack_loss)?;
        let mut conditions = Vec::new();
        let (mut loss, mut ack_loss, mut delay) = (l.loss, l.ack_loss, l.delay.value);
        for (j, p) in l.schedule.iter().flatten().enumerate() {
            if p.loss.is_none() && p.ack_loss.is_none() && p.delay.is_none() {
                continue;
            }
            if let Some(x) = p.loss {
                check_prob(origin, &format!("links[{i}].schedule[{j}].loss"), x)?;
                loss = x;
            }
            if let Some(x) = p.ack_loss {
                check_prob(origin, &format!("links[{i}].schedule[{j}].ack_loss"), x)?;
                ack_loss = x;
            }
            if let Some(x) = &p.delay {
                delay = x.value;
            }
            conditions.push(ConditionChange {
                at: p.at.value,
                loss,
                ack_loss,
                delay,
            });
        }
        let nominal_rate = nominal_rate(&capacity);
        let forward = dir_model(
            origin,
            &at("queue"),
            capacity,
            &l.queue,
            nominal_rate,
            max_rtt_on_link[i],
            full_packet,
        )?;
        let jitter = l.jitter.as_ref();
        let fwd_jitter = jitter
            .filter(|j| j.direction != Direction::Ack)
            .map(|j| j.max.value);
        let rev_jitter = jitter
            .filter(|j| j.direction != Direction::Data)
            .map(|j| j.max.value);
        let reverse = match &l.reverse_rate {
            None => None,
            Some(r) if r.value.as_bps() == 0 => {
                return Err(origin.err(at("reverse_rate"), "must be positive"))
            }
            Some(r) => Some(dir_model(
                origin,
                &at("reverse_queue"),
                Capacity::Constant(r.value),
                &l.reverse_queue,
                r.value,
                max_rtt_on_link[i],
                full_packet,
            )?),
        };
        // A change at time zero is the link's starting condition.
        let start = match conditions.first() {
            Some(c) if c.at.is_zero() => conditions.remove(0),
            _ => ConditionChange {
                at: Duration::ZERO,
                loss: l.loss,
                ack_loss: l.ack_loss,
                delay: l.delay.value,
            },
        };
        links.push(LinkModel {
            id: l.id.clone(),
            delay: start.delay,
            forward: LinkDirModel {
                loss: start.loss,
                jitter: fwd_jitter,
                ack_aggregation: None,
                ..forward
            },
            conditions,
            reverse: reverse.map(|r| LinkDirModel {
                loss: start.ack_loss,
                jitter: rev_jitter,
                ..r
            }),
            reverse_loss: start.ack_loss,
            reverse_jitter: rev_jitter,
            jitter_reorder: jitter.is_some_and(|j| j.reorder),
        });
        // ACK aggregation happens where ACKs leave the reverse path, recorded on the link.
        if let Some(a) = &l.ack_aggregation {
            if a.interval.value.is_zero() {
                return Err(origin.err(at("ack_aggregation.interval"), "must be positive"));
            }
            links[i].forward.ack_aggregation = Some(a.interval.value);
        }
    }

    Ok(Model {
        duration,
        bin,
        links,
        flows,
        scenario: sc,
    })
}

/// The send-time noise of a flow, or why its `send_jitter` is not allowed.
fn resolve_send_jitter(f: &FlowSpec, traffic: &Traffic) -> Result<Option<SendJitterModel>, String> {
    let Some(q) = &f.send_jitter else {
        if f.send_jitter_dist.is_some() {
            return Err("send_jitter_dist is given without send_jitter".into());
        }
        return Ok(None);
    };
    let d = q.value;
    if d > MAX_SEND_JITTER {
        return Err(format!(
            "{q} exceeds the {MAX_SEND_JITTER} allowed (host timing noise is micro- to milliseconds)"
        ));
    }
    if d.is_zero() {
        return Ok(None);
    }
    if traffic.is_unresponsive() {
        return Err(
            "unresponsive traffic (cbr, poisson) has no sender to delay; remove send_jitter".into(),
        );
    }
    Ok(Some(match f.send_jitter_dist.unwrap_or_default() {
        JitterDistribution::Uniform => SendJitterModel::Uniform { max: d },
        JitterDistribution::Exponential => SendJitterModel::Exponential { mean: d },
    }))
}

/// Converts and validates an intent; errors name `at.<field>`.
fn resolve_intent(
    origin: &Origin,
    at: &str,
    spec: &IntentSpec,
) -> Result<polycc::Intent, ScenarioError> {
    let intent = spec
        .to_intent()
        .map_err(|(field, message)| origin.err(format!("{at}.{field}"), message))?;
    intent
        .validate()
        .map_err(|e| origin.err(format!("{at}.{}", e.field), e.message))?;
    Ok(intent)
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

fn dir_model(
    origin: &Origin,
    at: &str,
    capacity: Capacity,
    q: &QueueSpec,
    rate: Rate,
    max_rtt: Duration,
    full_packet: u64,
) -> Result<LinkDirModel, ScenarioError> {
    let bdp_rtt = q.bdp_rtt.as_ref().map(|d| d.value).unwrap_or(max_rtt);
    let bdp = rate.bytes_in(bdp_rtt);
    if matches!(q.size.value, Size::Bdp(_)) && bdp_rtt.is_zero() {
        return Err(origin.err(
            format!("{at}.size"),
            "a size in bdp needs an RTT: no flow crosses this link, so set bdp_rtt or give the size in pkt or bytes",
        ));
    }
    let (limit_bytes, limit_packets) = match q.size.value {
        Size::Packets(n) => (None, Some(n)),
        ref s => (Some(bytes_of(s, full_packet, bdp)), None),
    };
    if limit_bytes == Some(0) || limit_packets == Some(0) {
        return Err(origin.err(
            format!("{at}.size"),
            "a queue must hold at least one packet",
        ));
    }
    if q.kind == QueueKind::FqCodel && q.quantum == 0 {
        return Err(origin.err(format!("{at}.quantum"), "must be positive"));
    }
    if q.kind != QueueKind::Droptail && (q.target.value.is_zero() || q.interval.value.is_zero()) {
        return Err(origin.err(
            format!("{at}.target"),
            "CoDel target and interval must be positive",
        ));
    }
    Ok(LinkDirModel {
        capacity,
        queue: q.clone(),
        queue_limit_bytes: limit_bytes,
        queue_limit_packets: limit_packets,
        loss: 0.0,
        jitter: None,
        ack_aggregation: None,
    })
}

/// Web traffic's `connection` values.
const WEB_PER_REQUEST: &str = "per_request";
const WEB_PERSISTENT: &str = "persistent";

fn resolve_traffic(t: &TrafficSpec, full_packet: u64, mss: u64) -> Result<Traffic, String> {
    let size_bytes = |s: &quantity::SizeQ| -> Result<u64, String> {
        match s.value {
            Size::Bytes(0) | Size::Packets(0) => Err("size must be positive".into()),
            Size::Bytes(b) => Ok(b),
            Size::Packets(n) => Ok(n * mss),
            Size::Bdp(_) => Err("a transfer size cannot be given in bdp".into()),
        }
    };
    let _ = full_packet;
    Ok(match t {
        TrafficSpec::Named(n) if n == "bulk" => Traffic::Bulk,
        TrafficSpec::Named(n) => {
            return Err(format!("unknown traffic {n:?}; allowed: \"bulk\" or a table with kind = bulk | sized | web | cbr | poisson | video"))
        }
        TrafficSpec::Table(TrafficTable::Bulk) => Traffic::Bulk,
        TrafficSpec::Table(TrafficTable::Sized { size }) => Traffic::Sized { bytes: size_bytes(size)? },
        TrafficSpec::Table(TrafficTable::Web { size, interval, arrivals, connection }) => {
            if interval.value.is_zero() {
                return Err("web interval must be positive".into());
            }
            let persistent = match connection.as_deref() {
                None | Some(WEB_PER_REQUEST) => false,
                Some(WEB_PERSISTENT) => true,
                Some(c) => {
                    return Err(format!(
                        "connection = {c:?} is not allowed; use \"{WEB_PER_REQUEST}\" (a new connection per request, the default) or \"{WEB_PERSISTENT}\" (one connection for all requests)"
                    ))
                }
            };
            Traffic::Web {
                bytes: size_bytes(size)?,
                interval: interval.value,
                poisson: *arrivals == Arrivals::Poisson,
                persistent,
            }
        }
        TrafficSpec::Table(TrafficTable::Cbr { rate }) | TrafficSpec::Table(TrafficTable::Poisson { rate })
            if rate.value.as_bps() == 0 =>
        {
            return Err("rate must be positive".into())
        }
        TrafficSpec::Table(TrafficTable::Cbr { rate }) => Traffic::Cbr { rate: rate.value },
        TrafficSpec::Table(TrafficTable::Poisson { rate }) => Traffic::Poisson { rate: rate.value },
        TrafficSpec::Table(TrafficTable::Video { fps, min_rate, max_rate, packet, fec, retransmit, frame_noise }) => {
            if !(fps.is_finite() && (1.0..=1000.0).contains(fps)) {
                return Err(format!("fps = {fps} is outside 1 ..= 1000"));
            }
            if max_rate.value.as_bps() == 0 {
                return Err("max_rate must be positive".into());
            }
            if min_rate.value > max_rate.value {
                return Err(format!("min_rate {} must not exceed max_rate {}", min_rate.value, max_rate.value));
            }
            let packet = match packet.value {
                Size::Bytes(b) => b,
                Size::Packets(_) | Size::Bdp(_) => return Err("packet is a datagram size: give it in bytes (\"1200B\")".into()),
            };
            if !(64..=65_000).contains(&packet) {
                return Err(format!("packet = {packet} bytes is outside 64 ..= 65000"));
            }
            if !(fec.is_finite() && (0.0..=4.0).contains(fec)) {
                return Err(format!("fec = {fec} is outside 0.0 ..= 4.0 (repair packets per data packet)"));
            }
            if !(frame_noise.is_finite() && (0.0..=0.5).contains(frame_noise)) {
                return Err(format!("frame_noise = {frame_noise} is outside 0.0 ..= 0.5"));
            }
            Traffic::Video(VideoModel {
                interval: Duration::from_secs_f64(1.0 / fps),
                min_rate: min_rate.value,
                max_rate: max_rate.value,
                packet,
                fec: *fec,
                retransmit: *retransmit,
                frame_noise: *frame_noise,
            })
        }
    })
}

/// Parses and validates a scenario file.
pub fn load_file(path: &Path, registry: &Registry) -> Result<Model, ScenarioError> {
    let origin = Origin::file(path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| origin.err("", format!("cannot read the scenario: {e}")))?;
    let sc = parse_toml(&text, &origin)?;
    resolve(sc, &origin, registry)
}
