//! What a run will cost, estimated before it starts, against the limits it may take: memory
//! (time-series rows, packets in flight and queued, trace points, transfers, frames, per-flow
//! state) and simulator events (packets crossing each link, bins, transfers, frames). A scenario
//! above either limit is refused with the keys that make it big, so that a slip (`bin = "1us"`,
//! `count = 1000000`, `duration = "1000000000s"`) ends in a message, not in an out-of-memory
//! abort or a run of hours.
//!
//! The figures are upper bounds of the right order, not measurements: every packet a link could
//! carry is counted (a responsive flow at most its receive window per base RTT), and every
//! time-series cell costs what it takes through Rust, the Python lists and the data frame.
//!
//! Limits: the scenario's `limits` table, else the environment (`POLYCC_MAX_MEMORY`,
//! `POLYCC_MAX_EVENTS`), else half the machine's memory (`MemTotal` of `/proc/meminfo`; 8 GiB
//! where it cannot be read) and [`DEFAULT_MAX_EVENTS`].

use crate::engine::DEFAULT_RWND;
use crate::scenario::quantity::{parse_size, Size};
use crate::scenario::spec::{Capacity, Scenario, SynthTrace};
use crate::scenario::{Model, Origin, ScenarioError, Traffic};
use polycc::units::Duration;

/// Events a run may take by default: about ten minutes at the simulator's measured 3–8 M events
/// per second (BENCHMARKS.md); the largest shipped scenario takes well under 1 % of it.
pub const DEFAULT_MAX_EVENTS: f64 = 5e9;
/// Memory limit where the machine's cannot be read.
const FALLBACK_MEMORY: f64 = 8.0 * GIB;
/// Share of the machine's memory a run may take by default.
const MEMORY_SHARE: f64 = 0.5;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// One flow's time-series row: about 16 numeric cells (Rust `Option<f64>`, a Python float in a
/// list, a data-frame value: ~56 bytes each) and two strings, and its share of the plots' arrays.
/// Measured: a 5 s run of one flow and one link, `bin = "100us"` (50 000 rows each), takes
/// 1.1 kB per bin and link-and-flow row pair without plots and 3.2 kB with them.
const FLOW_ROW_BYTES: f64 = 2000.0;
/// One link direction's row: 7 numeric cells and a string, and its plots.
const LINK_ROW_BYTES: f64 = 1500.0;
/// A flow's fixed state: two delay histograms (26 KiB each), sender, receiver, controller.
const FLOW_FIXED_BYTES: f64 = 128.0 * 1024.0;
/// A packet held in flight or in a queue, with the sender's record of it.
const PACKET_BYTES: f64 = 256.0;
/// A trace delivery opportunity (the model's copy and the link server's).
pub(super) const TRACE_POINT_BYTES: f64 = 24.0;
/// A web transfer's record.
const TRANSFER_BYTES: f64 = 64.0;
/// A video frame's record and its row of the frames table.
const FRAME_BYTES: f64 = 1000.0;
/// Events per packet crossing a link (departure, arrival, the ACK's share): 2.3 measured on
/// BENCHMARKS.md (b).
const EVENTS_PER_PACKET: f64 = 3.0;
/// Events per web transfer (arrival, connection, completion) beyond its packets.
const EVENTS_PER_TRANSFER: f64 = 4.0;

/// The bounds a run is checked against, and where each came from (for the message).
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub memory: f64,
    pub memory_from: String,
    pub events: f64,
    pub events_from: String,
}

/// The limits of this scenario: its `limits` keys, else the environment, else the machine's.
pub(super) fn limits(sc: &Scenario, origin: &Origin) -> Result<Limits, ScenarioError> {
    let given = sc.limits.as_ref();
    let (memory, memory_from) = match given.and_then(|l| l.memory.as_ref()) {
        Some(q) => match q.value {
            Size::Bytes(b) if b > 0 => (b as f64, "`limits.memory`".to_string()),
            _ => {
                return Err(origin.err(
                    "limits.memory",
                    "give a positive size in bytes (e.g. \"16GiB\", \"8GB\")",
                ))
            }
        },
        None => match std::env::var("POLYCC_MAX_MEMORY") {
            Ok(v) => (
                env_memory(&v).map_err(|m| origin.err("", m))?,
                "POLYCC_MAX_MEMORY".to_string(),
            ),
            Err(_) => machine_memory(),
        },
    };
    let (events, events_from) = match given.and_then(|l| l.events) {
        Some(e) if e.is_finite() && e >= 1.0 => (e, "`limits.events`".to_string()),
        Some(e) => {
            return Err(origin.err(
                "limits.events",
                format!("{e} is not a number of events; give one of at least 1 (e.g. 1e10)"),
            ))
        }
        None => match std::env::var("POLYCC_MAX_EVENTS") {
            Ok(v) => match v.trim().parse::<f64>() {
                Ok(e) if e.is_finite() && e >= 1.0 => (e, "POLYCC_MAX_EVENTS".to_string()),
                _ => {
                    return Err(origin.err(
                        "",
                        format!("POLYCC_MAX_EVENTS={v:?} is not a number of events; give one of at least 1 (e.g. 1e10)"),
                    ))
                }
            },
            Err(_) => (DEFAULT_MAX_EVENTS, "the default".to_string()),
        },
    };
    Ok(Limits {
        memory,
        memory_from,
        events,
        events_from,
    })
}

/// `POLYCC_MAX_MEMORY`: a size ("16GiB") or a number of bytes.
fn env_memory(v: &str) -> Result<f64, String> {
    let bad = || {
        format!("POLYCC_MAX_MEMORY={v:?} is not a memory size; write bytes or a size such as \"16GiB\" or \"8GB\"")
    };
    let bytes = match v.trim().parse::<f64>() {
        Ok(b) => b,
        Err(_) => match parse_size(v) {
            Ok(Size::Bytes(b)) => b as f64,
            _ => return Err(bad()),
        },
    };
    if bytes.is_finite() && bytes >= 1.0 {
        Ok(bytes)
    } else {
        Err(bad())
    }
}

/// Half of `MemTotal`, or the fallback.
fn machine_memory() -> (f64, String) {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|r| r.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
    });
    match total_kib {
        Some(k) if k > 0.0 => (
            k * 1024.0 * MEMORY_SHARE,
            format!("half of this machine's {}", bytes(k * 1024.0)),
        ),
        _ => (
            FALLBACK_MEMORY,
            "the default where the machine's memory is unknown".to_string(),
        ),
    }
}

/// "6.0 GiB", "512 MiB", "128 KiB".
fn bytes(b: f64) -> String {
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.0} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.0} KiB", (b / 1024.0).ceil())
    }
}

/// "5.0e9" for large counts, the integer otherwise.
fn count(n: f64) -> String {
    if n >= 1e6 {
        format!("{n:.1e}")
    } else {
        format!("{n:.0}")
    }
}

/// One contribution to the cost: the key that sets it and what it is.
struct Term {
    key: String,
    what: String,
    amount: f64,
}

/// The most frequent advice: which keys to change.
const MEMORY_HINT: &str = "shorten `duration`, widen `bin` or run fewer flows, or raise the limit with `limits.memory = \"…GiB\"` (or POLYCC_MAX_MEMORY)";
const EVENTS_HINT: &str = "shorten `duration` or lower the rates, or raise the limit with `limits.events` (or POLYCC_MAX_EVENTS)";

/// The error for terms summing above `limit`, named by the largest term's key.
fn over(
    origin: &Origin,
    mut terms: Vec<Term>,
    limit: f64,
    from: &str,
    memory: bool,
) -> Result<(), ScenarioError> {
    let total: f64 = terms.iter().map(|t| t.amount).sum();
    if total <= limit {
        return Ok(());
    }
    terms.sort_by(|a, b| b.amount.total_cmp(&a.amount));
    let show = |x: f64| if memory { bytes(x) } else { count(x) };
    let parts: Vec<String> = terms
        .iter()
        .take(3)
        .filter(|t| t.amount >= total / 100.0)
        .map(|t| format!("{} ≈ {}", t.what, show(t.amount)))
        .collect();
    let (what, hint) = if memory {
        (" of memory", MEMORY_HINT)
    } else {
        (" simulator events", EVENTS_HINT)
    };
    Err(origin.err(
        terms[0].key.clone(),
        format!(
            "this run would take about {}{what}, more than the {} allowed ({from}): {}; {hint}",
            show(total),
            show(limit),
            parts.join("; "),
        ),
    ))
}

/// Refuses a scenario whose `[[flows]]` entries stand for more flows than the memory allows,
/// before they are expanded.
pub(super) fn check_flow_count(
    sc: &Scenario,
    origin: &Origin,
    limits: &Limits,
) -> Result<(), ScenarioError> {
    let terms = sc
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| Term {
            key: format!("flows[{i}].count"),
            what: format!(
                "flows[{i}]: {} flows × {}",
                f.count,
                bytes(FLOW_FIXED_BYTES)
            ),
            amount: f64::from(f.count) * FLOW_FIXED_BYTES,
        })
        .collect();
    over(origin, terms, limits.memory, &limits.memory_from, true)
}

/// Refuses a synthetic trace too large to generate, before it is generated.
pub(super) fn check_synth(
    origin: &Origin,
    at: &str,
    s: &SynthTrace,
    duration: Duration,
    limits: &Limits,
) -> Result<(), ScenarioError> {
    let secs = duration.as_secs_f64();
    let points =
        s.max.value.as_bytes_per_sec_f64() * secs / crate::trace::MAHIMAHI_OPPORTUNITY_BYTES as f64;
    over(
        origin,
        vec![Term {
            key: at.to_string(),
            what: format!(
                "a random walk up to {} over `duration` {}: {} delivery opportunities",
                s.max,
                duration,
                count(points)
            ),
            amount: points * TRACE_POINT_BYTES,
        }],
        limits.memory,
        &limits.memory_from,
        true,
    )?;
    // The walk is generated millisecond by millisecond.
    over(
        origin,
        vec![Term {
            key: at.to_string(),
            what: format!("generating a random walk over `duration` {duration}, per ms"),
            amount: secs * 1e3,
        }],
        limits.events,
        &limits.events_from,
        false,
    )
}

/// The largest trace file the memory limit allows: each line holds at least two bytes.
pub(super) fn max_trace_file_bytes(limits: &Limits) -> u64 {
    (limits.memory / (1.0 + TRACE_POINT_BYTES / 2.0)) as u64
}

/// The key a link's capacity is given by.
fn capacity_key(model: &Model, i: usize) -> String {
    let l = &model.scenario.links[i];
    let k = if l.schedule.is_some() {
        "schedule"
    } else if l.trace.is_some() {
        "trace"
    } else {
        "rate"
    };
    format!("links[{i}].{k}")
}

/// Highest capacity of a link direction, in bytes per second.
fn peak_bytes_per_sec(c: &Capacity) -> f64 {
    match c {
        Capacity::Schedule(points) => points
            .iter()
            .map(|p| p.1.as_bytes_per_sec_f64())
            .fold(0.0, f64::max),
        c => crate::scenario::nominal_rate(c).as_bytes_per_sec_f64(),
    }
}

/// Refuses a resolved scenario whose estimated memory or events exceed the limits.
pub(super) fn check_model(
    model: &Model,
    origin: &Origin,
    limits: &Limits,
) -> Result<(), ScenarioError> {
    let sc = &model.scenario;
    let secs = model.duration.as_secs_f64();
    let full_packet = model.packet_bytes() as f64;
    // The `[[flows]]` entry of each expanded flow, for key names.
    let entry: Vec<usize> = sc
        .flows
        .iter()
        .enumerate()
        .flat_map(|(i, f)| std::iter::repeat_n(i, f.count as usize))
        .collect();
    let dirs = model.links.len() + model.links.iter().filter(|l| l.reverse.is_some()).count();
    let bins = (model.duration.as_nanos() as f64 / model.bin.as_nanos() as f64).ceil();

    let mut memory = vec![
        Term {
            key: "bin".into(),
            what: format!(
                "time series of {} bins (`duration` {} / `bin` {}) × {} flows and {dirs} link directions",
                count(bins),
                model.duration,
                model.bin,
                model.flows.len()
            ),
            amount: bins * (model.flows.len() as f64 * FLOW_ROW_BYTES + dirs as f64 * LINK_ROW_BYTES),
        },
        Term {
            key: "flows".into(),
            what: format!("{} flows' state", model.flows.len()),
            amount: model.flows.len() as f64 * FLOW_FIXED_BYTES,
        },
    ];
    let mut events = vec![Term {
        key: "bin".into(),
        what: format!(
            "{} bins × {} flows and link directions",
            count(bins),
            model.flows.len() + dirs
        ),
        amount: bins * (model.flows.len() + dirs) as f64,
    }];

    // Rates each link direction may carry: responsive flows up to a receive window per base
    // RTT, unresponsive ones at their rate, all within the capacity for responsive traffic.
    let mut responsive = vec![0.0f64; 2 * model.links.len()];
    let mut unresponsive = vec![0.0f64; 2 * model.links.len()];
    // The smallest packet crossing each direction (video datagrams may be smaller than full).
    let mut packet = vec![full_packet; 2 * model.links.len()];
    let mut window_packets = 0.0;
    let mut max_rtt = vec![0.0f64; model.links.len()];
    for (j, f) in model.flows.iter().enumerate() {
        let i = entry.get(j).copied().unwrap_or(0);
        let delays: f64 = f
            .path
            .iter()
            .map(|&l| model.links[l].delay.as_secs_f64())
            .sum();
        let rtt = f.rtt.as_secs_f64() + 2.0 * delays;
        for &l in &f.path {
            max_rtt[l] = max_rtt[l].max(rtt);
        }
        let span = (secs - f.start.as_secs_f64().min(secs)).min(
            f.stop
                .map_or(secs, |s| s.as_secs_f64() - f.start.as_secs_f64()),
        );
        let rwnd = f.rwnd.unwrap_or(DEFAULT_RWND) as f64;
        let rate = match f.traffic {
            Traffic::Cbr { rate } | Traffic::Poisson { rate } => rate.as_bytes_per_sec_f64(),
            _ => rwnd / rtt.max(1e-9),
        };
        match f.traffic {
            Traffic::Cbr { .. } | Traffic::Poisson { .. } => {
                window_packets += rate * span / full_packet;
            }
            _ => window_packets += rwnd / full_packet,
        }
        for &l in &f.path {
            let d = 2 * l + usize::from(f.reverse);
            if let Traffic::Video(v) = f.traffic {
                packet[d] = packet[d].min(v.packet as f64);
            }
            let share = rate * span / secs.max(1e-9);
            if f.traffic.is_unresponsive() {
                unresponsive[d] += share;
            } else {
                responsive[d] += share;
            }
        }
        match f.traffic {
            Traffic::Web { interval, .. } => {
                let n = span / interval.as_secs_f64();
                let what = format!(
                    "flow {:?}: {} web transfers (one per {interval})",
                    f.id,
                    count(n)
                );
                transfer_terms(
                    &mut memory,
                    &mut events,
                    format!("flows[{i}].traffic.interval"),
                    what,
                    n,
                );
            }
            Traffic::Page(ref p) => {
                // A load a mean interval apart, each as many transfers as its page's levels.
                let levels = p.pages.iter().map(Vec::len).max().unwrap_or(1) as f64;
                let n = span / p.interval.as_secs_f64() * levels;
                let what = format!(
                    "flow {:?}: {} page-load transfers (a load per {})",
                    f.id,
                    count(n),
                    p.interval
                );
                transfer_terms(
                    &mut memory,
                    &mut events,
                    format!("flows[{i}].traffic.interval"),
                    what,
                    n,
                );
            }
            Traffic::Dash(ref d) => {
                // At most one chunk per chunk length of video once the buffer is full, and
                // faster only while it fills: bounded by the buffer's chunks on top.
                let n =
                    span / d.chunk.as_secs_f64() + d.buffer.as_secs_f64() / d.chunk.as_secs_f64();
                let what = format!(
                    "flow {:?}: {} DASH chunks (one per {})",
                    f.id,
                    count(n),
                    d.chunk
                );
                transfer_terms(
                    &mut memory,
                    &mut events,
                    format!("flows[{i}].traffic.chunk"),
                    what,
                    n,
                );
            }
            Traffic::OnOff { on, off, .. } => {
                // One event per period (the sending itself is counted as bulk's).
                let n = 2.0 * span / (on + off).as_secs_f64();
                events.push(Term {
                    key: format!("flows[{i}].traffic.on"),
                    what: format!("flow {:?}: {} on/off periods", f.id, count(n)),
                    amount: n,
                });
            }
            Traffic::Video(v) => {
                let n = span / v.interval.as_secs_f64();
                memory.push(Term {
                    key: format!("flows[{i}].traffic.fps"),
                    what: format!("flow {:?}: {} video frames", f.id, count(n)),
                    amount: n * FRAME_BYTES,
                });
            }
            _ => {}
        }
    }
    // Packets held at once: within every window and source, and within what the links hold.
    let mut held_by_links = 0.0;
    for (l, link) in model.links.iter().enumerate() {
        let key = capacity_key(model, l);
        for (d, dir) in [
            (2 * l, Some(&link.forward)),
            (2 * l + 1, link.reverse.as_ref()),
        ] {
            let cap = dir.map_or(f64::INFINITY, |x| peak_bytes_per_sec(&x.capacity));
            let rate = responsive[d].min(cap) + unresponsive[d];
            let packets = rate * secs / packet[d];
            let name = if d % 2 == 0 {
                link.id.clone()
            } else {
                format!("{}:reverse", link.id)
            };
            events.push(Term {
                key: key.clone(),
                what: format!(
                    "{} packets crossing link {name:?} over `duration` {}",
                    count(packets),
                    model.duration
                ),
                amount: packets * EVENTS_PER_PACKET,
            });
            if let Some(x) = dir {
                let queue = x
                    .queue_limit_packets
                    .map(|p| p as f64)
                    .or(x.queue_limit_bytes.map(|b| b as f64 / full_packet))
                    .unwrap_or(0.0);
                held_by_links += cap.min(1e18) * max_rtt[l] / full_packet + queue;
            } else {
                // An unlimited direction holds what crosses it for a round trip.
                held_by_links += (responsive[d] + unresponsive[d]) * max_rtt[l] / full_packet;
            }
            if let Some(Capacity::Trace {
                opportunities_ms, ..
            }) = dir.map(|x| &x.capacity)
            {
                memory.push(Term {
                    key: key.clone(),
                    what: format!(
                        "link {:?}: {} trace points",
                        link.id,
                        count(opportunities_ms.len() as f64)
                    ),
                    amount: opportunities_ms.len() as f64 * TRACE_POINT_BYTES,
                });
            }
        }
    }
    memory.push(Term {
        key: "flows".into(),
        what: "packets in flight and queued".into(),
        amount: window_packets.min(held_by_links) * PACKET_BYTES,
    });
    over(origin, memory, limits.memory, &limits.memory_from, true)?;
    over(origin, events, limits.events, &limits.events_from, false)
}

/// The memory and events of `n` transfers of a flow (web requests, DASH chunks).
fn transfer_terms(
    memory: &mut Vec<Term>,
    events: &mut Vec<Term>,
    key: String,
    what: String,
    n: f64,
) {
    memory.push(Term {
        key: key.clone(),
        what: what.clone(),
        amount: n * TRANSFER_BYTES,
    });
    events.push(Term {
        key,
        what,
        amount: n * EVENTS_PER_TRANSFER,
    });
}
