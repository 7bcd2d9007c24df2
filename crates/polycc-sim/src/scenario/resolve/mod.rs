//! Resolution of a parsed scenario into the engine's [`Model`]: every check that needs more
//! than one key, in file order, each error naming the key at fault.
//!
//! One section per file: [`flows`] (paths, ACK policy, receive window, reverse data, the
//! controller), [`intents`], [`traffic`] (the sources), [`links`] (delays, loss and delay
//! schedules, jitter, reverse directions), [`capacity`] (constant, stepped or ramped, traces) and
//! [`queues`] (one direction's queue). Flows are resolved before links: a buffer given in bdp
//! needs the RTTs of the flows crossing its link.

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
    let full_packet = sc.mss + sc.header_bytes;
    let link_index = index_links(&sc, origin)?;
    let (flows, max_rtt_on_link) =
        flows::resolve_flows(&sc, origin, registry, &link_index, full_packet)?;
    let links = links::resolve_links(&sc, origin, &max_rtt_on_link, full_packet)?;
    Ok(Model {
        duration: sc.duration.value,
        bin: sc.bin.value,
        links,
        flows,
        scenario: sc,
    })
}

/// The run's own keys: name, duration, bin, mss, and that links and flows are given.
fn check_globals(sc: &Scenario, origin: &Origin) -> Result<(), ScenarioError> {
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
    Ok(())
}

/// Link ids to their index; a duplicate id is an error.
fn index_links(sc: &Scenario, origin: &Origin) -> Result<HashMap<String, usize>, ScenarioError> {
    let mut link_index = HashMap::new();
    for (i, l) in sc.links.iter().enumerate() {
        if link_index.insert(l.id.clone(), i).is_some() {
            return Err(origin.err(
                format!("links[{i}].id"),
                format!("duplicate link id {:?}", l.id),
            ));
        }
    }
    Ok(link_index)
}
