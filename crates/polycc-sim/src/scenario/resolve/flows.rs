//! Flows: each `[[flows]]` entry, checked key by key in file order, expanded into `count`
//! flows of the same settings.

use super::{intents, traffic};
use crate::scenario::external::{self, ExternalCommands};
use crate::scenario::host::{CountedBytes, HostModel};
use crate::scenario::quantity::Size;
use crate::scenario::spec::{AckPolicy, DelayedAck, FlowSpec, JitterDistribution, Scenario, Stack};
use crate::scenario::{
    bytes_of, linux_stack, FlowModel, Origin, ScenarioError, SendJitterModel, Traffic,
    MAX_SEND_JITTER,
};
use polycc::registry::Registry;
use polycc::units::Duration;
use polycc::{CcContext, CongestionControl};
use std::collections::HashMap;

/// What resolving a flow needs from the rest of the scenario.
struct Context<'a> {
    sc: &'a Scenario,
    origin: &'a Origin,
    registry: &'a Registry,
    link_index: &'a HashMap<String, usize>,
    full_packet: u64,
}

/// Every flow, and for each link the largest RTT of the flows crossing it (link delay both ways
/// included; zero where none does).
pub(super) fn resolve_flows(
    sc: &Scenario,
    origin: &Origin,
    registry: &Registry,
    link_index: &HashMap<String, usize>,
    full_packet: u64,
) -> Result<(Vec<FlowModel>, Vec<Duration>), ScenarioError> {
    let cx = Context {
        sc,
        origin,
        registry,
        link_index,
        full_packet,
    };
    let mut flows = Vec::new();
    let mut max_rtt_on_link = vec![Duration::ZERO; sc.links.len()];
    let mut ids = HashMap::new();
    for (i, f) in sc.flows.iter().enumerate() {
        let flow = resolve_flow(&cx, i, f)?;
        for &l in &flow.path {
            max_rtt_on_link[l] = max_rtt_on_link[l].max(f.rtt.value + sc.links[l].delay.value * 2);
        }
        for k in 0..f.count {
            let id = if f.count == 1 {
                f.id.clone()
            } else {
                format!("{}-{}", f.id, k + 1)
            };
            if ids.insert(id.clone(), i).is_some() {
                return Err(origin.err(
                    format!("flows[{i}].id"),
                    format!("duplicate flow id {id:?}"),
                ));
            }
            flows.push(FlowModel { id, ..flow.clone() });
        }
    }
    Ok((flows, max_rtt_on_link))
}

/// One `[[flows]]` entry under its own id. The controller is built once, so that an unknown
/// name or a bad parameter is reported here.
fn resolve_flow(cx: &Context, i: usize, f: &FlowSpec) -> Result<FlowModel, ScenarioError> {
    let origin = cx.origin;
    let at = |k: &str| format!("flows[{i}].{k}");
    super::check_name(origin, &at("id"), &f.id)?;
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
    let path = resolve_path(cx, i, f)?;
    let traffic = traffic::resolve_flow_traffic(origin, &at("traffic"), &f.traffic, cx.sc)?;
    let (ack_every, max_ack_delay) = resolve_ack(origin, i, &f.ack)?;
    let rwnd = resolve_rwnd(origin, &at("rwnd"), f, cx.full_packet)?;
    check_reverse_bounded(cx, &at("reverse"), f, &traffic, rwnd, &path)?;
    let (intent, intent_schedule) = intents::resolve_intents(origin, i, f, &traffic)?;
    let send_jitter =
        resolve_send_jitter(f, &traffic).map_err(|m| origin.err(at("send_jitter"), m))?;
    // Both run on the kernel's TCP: the Linux stack's host model around the controller.
    let linux = matches!(f.stack, Stack::Linux | Stack::Tcp);
    let sim_cca = match f.stack {
        Stack::Linux => {
            check_kernel_flow(origin, &at, f, &traffic)?;
            linux_stack::controller(f.cca.name())
        }
        Stack::Tcp => {
            check_kernel_tcp(origin, &at, f, &traffic)?;
            Ok(f.cca.clone())
        }
        Stack::Quic | Stack::Udp => Ok(f.cca.clone()),
        Stack::External => Err(format!(
            "an outside program (stack = \"external\") runs only in the emulated testbed \
             (--backend emu); the simulator cannot run flow {:?}'s commands",
            f.id
        )),
    };
    let external = resolve_external(origin, &at, f, &traffic)?;
    if let (Ok(cca), false) = (&sim_cca, traffic.is_unresponsive()) {
        let cc = cx
            .registry
            .build(cca, &CcContext::new(cx.full_packet))
            .map_err(|e| origin.err(at("cca"), e.to_string()))?;
        check_frames(cc.as_ref(), f, &traffic).map_err(|m| origin.err(at("cca"), m))?;
    }
    Ok(FlowModel {
        id: f.id.clone(),
        cca: f.cca.clone(),
        sim_cca,
        rtt: f.rtt.value,
        start: f.start.value,
        stop: f.stop.as_ref().map(|s| s.value),
        traffic,
        path,
        reverse: f.reverse,
        // The kernel's TCP carries no ACK delay and paces only when the controller asks.
        ack_every: if linux {
            linux_stack::SEGMENTS_PER_ACK
        } else {
            ack_every
        },
        max_ack_delay: if linux { Duration::ZERO } else { max_ack_delay },
        pacing: f.pacing && !linux,
        rwnd,
        intent,
        intent_schedule,
        send_jitter,
        stack: f.stack,
        host: if f.stack == Stack::Tcp {
            linux_stack::host(linux_stack::SHIM)
        } else if linux {
            linux_stack::host(f.cca.name())
        } else if f.stack == Stack::Udp {
            HostModel {
                counts: CountedBytes::Packet,
                ..HostModel::default()
            }
        } else {
            HostModel::default()
        },
        external,
    })
}

/// The commands of an outside program's flow (`stack = "external"`), checked; `sender` and
/// `receiver` are refused on any other stack, and what the emulator cannot hand to a program
/// (its traffic pattern, intents, windows) on this one.
fn resolve_external(
    origin: &Origin,
    at: &dyn Fn(&str) -> String,
    f: &FlowSpec,
    traffic: &Traffic,
) -> Result<Option<ExternalCommands>, ScenarioError> {
    if f.stack != Stack::External {
        for (key, set) in [
            ("sender", f.sender.is_some()),
            ("receiver", f.receiver.is_some()),
        ] {
            if set {
                return Err(origin.err(
                    at(key),
                    format!(
                        "a command for an outside program, only with stack = \"external\" \
                         (this flow's stack is {:?}); remove it",
                        f.stack.name()
                    ),
                ));
            }
        }
        return Ok(None);
    }
    let command = |key: &str, v: &Option<String>| -> Result<String, ScenarioError> {
        let v = v.as_ref().ok_or_else(|| {
            origin.err(
                at(key),
                format!(
                    "stack = \"external\" needs the command that starts the flow's {key}, \
                     e.g. {key} = \"{}\"",
                    if key == "sender" {
                        "iperf3 -c {receiver_ip} -p {port} -t {duration_s}"
                    } else {
                        "iperf3 -s -p {port}"
                    }
                ),
            )
        })?;
        external::check(v).map_err(|m| origin.err(at(key), m))?;
        Ok(v.clone())
    };
    let commands = ExternalCommands {
        sender: command("sender", &f.sender)?,
        receiver: command("receiver", &f.receiver)?,
    };
    if !matches!(traffic, Traffic::Bulk) {
        return Err(origin.err(
            at("traffic"),
            "an outside program sends what it sends: leave traffic at its default (bulk) with \
             stack = \"external\"",
        ));
    }
    let unsupported = [
        ("intent", f.intent.is_some()),
        ("intent_schedule", !f.intent_schedule.is_empty()),
        ("send_jitter", f.send_jitter.is_some()),
        ("rwnd", f.rwnd.is_some()),
        ("ack", f.ack != AckPolicy::default()),
        ("pacing", !f.pacing),
    ];
    if let Some((key, _)) = unsupported.iter().find(|(_, set)| *set) {
        return Err(origin.err(
            at(key),
            "does not apply to an outside program (stack = \"external\"): polycc cannot hand it \
             to the program; remove it",
        ));
    }
    Ok(Some(commands))
}

/// A flow on the kernel's TCP: `cca` names a kernel controller (which ones this host has is
/// the emulator's to check), and only what the kernel's TCP can honour is set.
fn check_kernel_flow(
    origin: &Origin,
    at: &dyn Fn(&str) -> String,
    f: &FlowSpec,
    traffic: &Traffic,
) -> Result<(), ScenarioError> {
    let name = f.cca.name();
    if !f.cca.params().is_empty() {
        return Err(origin.err(
            at("cca"),
            "a kernel controller (stack = \"linux\") takes no parameters",
        ));
    }
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(origin.err(
            at("cca"),
            format!("{name:?} is not a kernel controller name"),
        ));
    }
    check_kernel_tcp(origin, at, f, traffic)
}

/// What the kernel's TCP cannot honour, on either of its stacks (`"linux"`: the kernel's
/// controller, which takes no intents; `"tcp"`: a polycc controller through the shim, which
/// takes the flow's intents as the agent hands them on).
fn check_kernel_tcp(
    origin: &Origin,
    at: &dyn Fn(&str) -> String,
    f: &FlowSpec,
    traffic: &Traffic,
) -> Result<(), ScenarioError> {
    if traffic.has_frames() {
        return Err(origin.err(
            at("traffic.kind"),
            "a kernel TCP flow has no video encoder to drive; use stack = \"quic\" for video",
        ));
    }
    let unsupported = [
        ("intent", f.stack == Stack::Linux && f.intent.is_some()),
        (
            "intent_schedule",
            f.stack == Stack::Linux && !f.intent_schedule.is_empty(),
        ),
        ("send_jitter", f.send_jitter.is_some()),
        ("ack", f.ack != AckPolicy::default()),
        ("pacing", !f.pacing),
    ];
    if let Some((key, _)) = unsupported.iter().find(|(_, set)| *set) {
        return Err(origin.err(
            at(key),
            format!(
                "does not apply to the kernel's TCP (stack = {:?}); remove it",
                f.stack.name()
            ),
        ));
    }
    Ok(())
}

/// The links the flow's data crosses, by index (the first link when `path` is not given).
fn resolve_path(cx: &Context, i: usize, f: &FlowSpec) -> Result<Vec<usize>, ScenarioError> {
    match &f.path {
        None => Ok(vec![0]),
        Some(p) if p.is_empty() => Err(cx
            .origin
            .err(format!("flows[{i}].path"), "must name at least one link")),
        Some(p) => p
            .iter()
            .enumerate()
            .map(|(j, id)| {
                cx.link_index.get(id).copied().ok_or_else(|| {
                    let known: Vec<_> = cx.sc.links.iter().map(|l| l.id.as_str()).collect();
                    cx.origin.err(
                        format!("flows[{i}].path[{j}]"),
                        format!("unknown link {id:?}; known: {}", known.join(", ")),
                    )
                })
            })
            .collect(),
    }
}

/// `ack`: packets per ACK and the delayed-ACK timer.
fn resolve_ack(
    origin: &Origin,
    i: usize,
    ack: &AckPolicy,
) -> Result<(u32, Duration), ScenarioError> {
    match ack {
        AckPolicy::Named(n) if n == "every" => Ok((1, Duration::ZERO)),
        AckPolicy::Named(n) if n == "delayed" => {
            let d = DelayedAck::default();
            Ok((d.every, d.max_delay.value))
        }
        AckPolicy::Named(n) => Err(origin.err(
            format!("flows[{i}].ack"),
            format!("unknown ACK policy {n:?}; allowed: \"every\", \"delayed\" or {{ every = N, max_delay = \"25ms\" }}"),
        )),
        AckPolicy::Delayed(d) => {
            if d.every == 0 {
                return Err(origin.err(format!("flows[{i}].ack.every"), "must be at least 1"));
            }
            Ok((d.every, d.max_delay.value))
        }
    }
}

/// `rwnd` in bytes: at least two full packets, not in bdp.
fn resolve_rwnd(
    origin: &Origin,
    at: &str,
    f: &FlowSpec,
    full_packet: u64,
) -> Result<Option<u64>, ScenarioError> {
    match f.rwnd.as_ref().map(|r| r.value) {
        None => Ok(None),
        Some(Size::Bdp(_)) => {
            Err(origin.err(at, "give the receive window in pkt or bytes, not bdp"))
        }
        Some(s) => {
            let b = bytes_of(&s, full_packet, 0);
            if b < 2 * full_packet {
                return Err(origin.err(at, "must allow at least two full packets"));
            }
            Ok(Some(b))
        }
    }
}

/// A responsive flow whose data meets no capacity limit grows without bound (and the run with
/// it): reverse data crosses the links' reverse directions, unlimited unless given.
fn check_reverse_bounded(
    cx: &Context,
    at: &str,
    f: &FlowSpec,
    traffic: &Traffic,
    rwnd: Option<u64>,
    path: &[usize],
) -> Result<(), ScenarioError> {
    let links = &cx.sc.links;
    if f.reverse
        && !traffic.is_unresponsive()
        && rwnd.is_none()
        && path.iter().all(|&l| links[l].reverse_rate.is_none())
    {
        let ids: Vec<_> = path.iter().map(|&l| links[l].id.as_str()).collect();
        return Err(cx.origin.err(
            at,
            format!(
                "the data of this reverse flow would cross only unlimited reverse directions \
                 (no `reverse_rate` on {}); give one of them `reverse_rate`, or bound the \
                 flow with `rwnd`",
                ids.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A controller that needs the frames of a media source (PIBES) runs only on video traffic:
/// on any other it would hold its start rate without a word (1 Mbit/s on any path). Asked of
/// the controller, so a wrapped or pooled one is held to it too.
fn check_frames(cc: &dyn CongestionControl, f: &FlowSpec, traffic: &Traffic) -> Result<(), String> {
    if !cc.needs_media_frames() || traffic.has_frames() {
        return Ok(());
    }
    Err(format!(
        "flow {:?} runs {}, which needs the frames of a video source (it, or a controller it \
         runs, sets its rate frame by frame), but its traffic is {}; give the flow \
         traffic = {{ kind = \"video\" }}, or a controller that works on any traffic",
        f.id,
        f.cca.name(),
        traffic.kind()
    ))
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
