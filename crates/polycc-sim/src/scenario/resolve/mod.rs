//! Resolution of a parsed scenario into the engine's [`Model`]: every check that needs more
//! than one key, in file order, each error naming the key at fault.
//!
//! One section per file: [`flows`] (paths, ACK policy, receive window, reverse data, the
//! controller), [`intents`], [`traffic`] (the sources), [`links`] (delays, loss and delay
//! schedules, jitter, reverse directions), [`capacity`] (constant, stepped or ramped, traces) and
//! [`queues`] (one direction's queue). Flows are resolved before links: a buffer given in bdp
//! needs the RTTs of the flows crossing its link.

mod budget;
mod capacity;
mod flows;
mod intents;
mod links;
mod queues;
mod traffic;

use super::spec::Scenario;
use super::{Model, Origin, ScenarioError};
use polycc::registry::Registry;
use std::collections::HashMap;

/// Validates a parsed scenario and builds the engine's model. Controllers are built once here so
/// that an unknown name or bad parameter is reported before anything runs.
pub fn resolve(sc: Scenario, origin: &Origin, registry: &Registry) -> Result<Model, ScenarioError> {
    check_globals(&sc, origin)?;
    let limits = budget::limits(&sc, origin)?;
    let full_packet = sc.mss + sc.header_bytes;
    let link_index = index_links(&sc, origin)?;
    budget::check_flow_count(&sc, origin, &limits)?;
    let (flows, max_rtt_on_link) =
        flows::resolve_flows(&sc, origin, registry, &link_index, full_packet)?;
    let links = links::resolve_links(&sc, origin, &max_rtt_on_link, full_packet, &limits)?;
    let model = Model {
        duration: sc.duration.value,
        bin: sc.bin.value,
        links,
        flows,
        scenario: sc,
    };
    budget::check_model(&model, origin, &limits)?;
    Ok(model)
}

/// The run's own keys: name, duration, bin, mss, and that links and flows are given.
fn check_globals(sc: &Scenario, origin: &Origin) -> Result<(), ScenarioError> {
    check_name(origin, "name", &sc.name)?;
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
    if sc.header_bytes >= sc.mss {
        return Err(origin.err(
            "header_bytes",
            format!(
                "{} is not below mss ({}); allowed: 0 ..= {}",
                sc.header_bytes,
                sc.mss,
                sc.mss - 1
            ),
        ));
    }
    let full_packet = sc.mss + sc.header_bytes;
    if sc.ack_bytes == 0 || sc.ack_bytes > full_packet {
        return Err(origin.err(
            "ack_bytes",
            format!(
                "{} is outside 1 ..= {full_packet} (at most a full packet, mss + header_bytes)",
                sc.ack_bytes
            ),
        ));
    }
    if sc.links.is_empty() {
        return Err(origin.err("links", "at least one [[links]] entry is needed"));
    }
    if sc.flows.is_empty() {
        return Err(origin.err("flows", "at least one [[flows]] entry is needed"));
    }
    Ok(())
}

/// Link ids to their index; a duplicate id is an error.
fn index_links(sc: &Scenario, origin: &Origin) -> Result<HashMap<String, usize>, ScenarioError> {
    let mut link_index = HashMap::new();
    for (i, l) in sc.links.iter().enumerate() {
        check_name(origin, &format!("links[{i}].id"), &l.id)?;
        if link_index.insert(l.id.clone(), i).is_some() {
            return Err(origin.err(
                format!("links[{i}].id"),
                format!("duplicate link id {:?}", l.id),
            ));
        }
    }
    Ok(link_index)
}

/// Longest name or id: it becomes a file or directory name (255 bytes on most file systems),
/// with room for suffixes.
const MAX_NAME_BYTES: usize = 200;

/// A scenario name or an id, which become file names (the results directory, plot files): no
/// path separators, no `..`, no leading dot, no control characters, not empty.
pub(super) fn check_name(origin: &Origin, key: &str, name: &str) -> Result<(), ScenarioError> {
    let why = if name.trim().is_empty() {
        Some("must not be empty")
    } else if name.contains(['/', '\\']) {
        Some("must not contain a path separator (/ or \\)")
    } else if name.chars().any(char::is_control) {
        Some("must not contain control characters (NUL, newline, tab, ...)")
    } else if name.starts_with('.') || name.contains("..") {
        Some("must not start with \".\" or contain \"..\"")
    } else if name.len() > MAX_NAME_BYTES {
        Some("is longer than 200 bytes")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(origin.err(
            key,
            format!(
                "{name:?} {why}; it names files and directories, so use letters, digits, spaces and punctuation other than / and \\ (e.g. \"bottleneck-1\")"
            ),
        )),
    }
}
