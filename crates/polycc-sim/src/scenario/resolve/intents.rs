//! A flow's intents: the one at its start (a video source's by default) and its schedule.

use crate::scenario::spec::{FlowSpec, IntentSpec};
use crate::scenario::{Origin, ScenarioError, Traffic};
use polycc::units::Duration;
use polycc::Intent;

/// Later intents `(from, intent)`, in increasing time after the flow's start.
type Schedule = Vec<(Duration, Intent)>;

/// The intent at the flow's start and its schedule of changes.
pub(super) fn resolve_intents(
    origin: &Origin,
    i: usize,
    f: &FlowSpec,
    traffic: &Traffic,
) -> Result<(Option<Intent>, Schedule), ScenarioError> {
    let intent = match (&f.intent, traffic) {
        (None, Traffic::Video(v)) => Some(Intent::RealtimeVideo {
            min_rate: v.min_rate,
            max_rate: v.max_rate,
        }),
        (None, _) => None,
        (Some(spec), _) => Some(resolve_intent(origin, &format!("flows[{i}].intent"), spec)?),
    };
    let mut schedule: Schedule = Vec::new();
    for (j, ch) in f.intent_schedule.iter().enumerate() {
        let here = format!("flows[{i}].intent_schedule[{j}]");
        let t = ch.at.value;
        if t <= f.start.value || f.stop.as_ref().is_some_and(|s| t >= s.value) {
            return Err(origin.err(
                format!("{here}.at"),
                format!(
                    "{} is not after the flow's start ({}) and before its stop; the intent the \
                     flow starts with is its `intent` key",
                    ch.at, f.start
                ),
            ));
        }
        if schedule.last().is_some_and(|(p, _)| t <= *p) {
            return Err(origin.err(
                format!("{here}.at"),
                "changes must be in increasing time order",
            ));
        }
        let intent = resolve_intent(origin, &format!("{here}.intent"), &ch.intent)?;
        schedule.push((t, intent));
    }
    Ok((intent, schedule))
}

/// Converts and validates an intent; errors name `at.<field>`.
fn resolve_intent(origin: &Origin, at: &str, spec: &IntentSpec) -> Result<Intent, ScenarioError> {
    let intent = spec
        .to_intent()
        .map_err(|(field, message)| origin.err(format!("{at}.{field}"), message))?;
    intent
        .validate()
        .map_err(|e| origin.err(format!("{at}.{}", e.field), e.message))?;
    Ok(intent)
}
