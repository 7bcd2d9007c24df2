//! PolyCC's pilot–copilot filter (§2 "Pilot-Copilot Filter"): which member of the pool drives
//! the flow. The pool itself is static (the scenario's `pilot` and `copilots`, all of which run
//! all the time); the pilot among them is either fixed or chosen by rules on measured signals.
//!
//! Rules, written in a scenario as
//! `rules = [{ when = "rtt_var_ms", above = 20.0, pilot = "cubic" }, ...]`, are evaluated in
//! order at the close of every measurement window ([`super::signals`]); the first that holds
//! names the pilot, and when none holds the configured pilot (the pool's first member) drives.
//! A new pilot keeps the flow for at least `min_dwell_rtts` windows before another change, so a
//! signal hovering at a threshold does not flap the pilot every RTT.

use super::signals::WindowSignals;
use crate::intent::Intent;
use serde::{Deserialize, Serialize};

/// Intent classes a rule may test (`Intent::class`).
pub const INTENT_CLASSES: [&str; 5] = [
    "bandwidth_guarantee",
    "delay_sensitive",
    "bulk",
    "scavenger",
    "realtime_video",
];
/// Signals a rule may test.
pub const SIGNALS: [&str; 4] = ["rtt_var_ms", "loss_rate", "bw_change", "intent"];
/// Default `min_dwell_rtts`: four windows, half a BBR gain cycle, so that a pilot sees at least
/// one full probing decision before the rules can take the flow away again.
pub const DEFAULT_MIN_DWELL_RTTS: u32 = 4;

/// A rule as written in a scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    /// The signal tested: one of [`SIGNALS`].
    pub when: String,
    /// The rule holds while the signal is strictly above this; exclusive with `below`.
    pub above: Option<f64>,
    /// The rule holds while the signal is strictly below this; exclusive with `above`.
    pub below: Option<f64>,
    /// For `when = "intent"` only: the class the intent must have, one of [`INTENT_CLASSES`].
    pub is: Option<String>,
    /// Registry name of the member to make the pilot; it must name exactly one member.
    pub pilot: String,
}

/// A measured signal a rule compares with a threshold, read from [`WindowSignals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// `rtt_var_ms`: the transport's rttvar at the window's close, ms.
    RttVarMs,
    /// `loss_rate`: the fraction of the window's bytes declared lost.
    LossRate,
    /// `bw_change`: the window's bandwidth relative to the previous windows' largest, minus 1.
    BwChange,
}

/// What a rule tests.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// The signal is strictly above the threshold (never while it is NaN).
    Above(Signal, f64),
    /// The signal is strictly below the threshold (never while it is NaN).
    Below(Signal, f64),
    /// The flow's intent is of this class, one of [`INTENT_CLASSES`].
    IntentIs(&'static str),
}

/// A validated rule: when `condition` holds at a window's close, member `pilot` drives the flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// What must hold.
    pub condition: Condition,
    /// Index of the member it makes the pilot.
    pub pilot: usize,
}

impl Rule {
    /// Validates one scenario rule against the pool's member names; the message names the rule
    /// (1-based) and the field.
    pub fn parse(i: usize, p: &RuleParams, members: &[String]) -> Result<Rule, String> {
        let at = format!("rules[{i}]");
        let signal = match p.when.as_str() {
            "rtt_var_ms" => Some(Signal::RttVarMs),
            "loss_rate" => Some(Signal::LossRate),
            "bw_change" => Some(Signal::BwChange),
            "intent" => None,
            other => {
                return Err(format!(
                    "{at}.when = {other:?} is not one of {}",
                    SIGNALS.join(", ")
                ))
            }
        };
        let condition = match (signal, p.above, p.below, &p.is) {
            (Some(s), Some(v), None, None) if v.is_finite() => Condition::Above(s, v),
            (Some(s), None, Some(v), None) if v.is_finite() => Condition::Below(s, v),
            (Some(_), _, _, None) => {
                return Err(format!(
                    "{at}: {} needs exactly one finite threshold, `above` or `below`",
                    p.when
                ))
            }
            (Some(_), _, _, Some(_)) => {
                return Err(format!(
                    "{at}: `is` tests the intent; {} takes `above` or `below`",
                    p.when
                ))
            }
            (None, None, None, Some(class)) => {
                let c = INTENT_CLASSES
                    .iter()
                    .find(|c| **c == class.as_str())
                    .ok_or_else(|| {
                        format!(
                            "{at}.is = {class:?} is not one of {}",
                            INTENT_CLASSES.join(", ")
                        )
                    })?;
                Condition::IntentIs(c)
            }
            (None, ..) => return Err(format!("{at}: intent takes `is = \"<class>\"` only")),
        };
        let mut found = members.iter().enumerate().filter(|(_, m)| **m == p.pilot);
        let pilot = match (found.next(), found.next()) {
            (Some((k, _)), None) => k,
            (None, _) => {
                return Err(format!(
                    "{at}.pilot = {:?} is not in the pool ({})",
                    p.pilot,
                    members.join(", ")
                ))
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{at}.pilot = {:?} names more than one member of the pool",
                    p.pilot
                ))
            }
        };
        Ok(Rule { condition, pilot })
    }

    /// Whether the rule holds; a NaN signal (not measured yet) never does.
    pub fn holds(&self, s: &WindowSignals, intent: Option<&Intent>) -> bool {
        let value = |sig: Signal| match sig {
            Signal::RttVarMs => s.rtt_var_ms,
            Signal::LossRate => s.loss_rate,
            Signal::BwChange => s.bw_change,
        };
        match self.condition {
            Condition::Above(sig, v) => value(sig) > v,
            Condition::Below(sig, v) => value(sig) < v,
            Condition::IntentIs(c) => intent.is_some_and(|i| i.class() == c),
        }
    }
}

/// The filter's state.
#[derive(Clone, Debug)]
pub struct Filter {
    rules: Vec<Rule>,
    min_dwell: u32,
    /// Windows since the last change of pilot (saturating).
    dwell: u32,
}

impl Filter {
    /// A filter over `rules`, first match wins; a new pilot keeps the flow for at least
    /// `min_dwell` measurement windows (scenario `min_dwell_rtts`). No rules: the pilot is fixed.
    pub fn new(rules: Vec<Rule>, min_dwell: u32) -> Self {
        Filter {
            rules,
            min_dwell,
            // The configured pilot may be replaced from the first window on.
            dwell: min_dwell,
        }
    }

    /// Whether the pilot is fixed (no rules), so the agent keeps no measurement windows for it.
    pub(crate) fn is_static(&self) -> bool {
        self.rules.is_empty()
    }

    /// The pilot after a window closed with `s`, if it differs from `current`.
    pub fn decide(
        &mut self,
        current: usize,
        s: &WindowSignals,
        intent: Option<&Intent>,
    ) -> Option<usize> {
        self.dwell = self.dwell.saturating_add(1);
        if self.rules.is_empty() || self.dwell < self.min_dwell {
            return None;
        }
        let wanted = self
            .rules
            .iter()
            .find(|r| r.holds(s, intent))
            .map_or(0, |r| r.pilot);
        if wanted == current {
            return None;
        }
        self.dwell = 0;
        Some(wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Vec<String> {
        ["bbr", "cubic", "vegas"].map(String::from).to_vec()
    }

    fn rule(
        when: &str,
        above: Option<f64>,
        below: Option<f64>,
        is: Option<&str>,
        pilot: &str,
    ) -> RuleParams {
        RuleParams {
            when: when.into(),
            above,
            below,
            is: is.map(String::from),
            pilot: pilot.into(),
        }
    }

    fn signals(rtt_var_ms: f64, loss_rate: f64, bw_change: f64) -> WindowSignals {
        WindowSignals {
            rtt_var_ms,
            loss_rate,
            bw_change,
            bw_bps: f64::NAN,
        }
    }

    #[test]
    fn rules_are_validated_with_the_field_at_fault() {
        let p = pool();
        let e = Rule::parse(0, &rule("jitter", Some(1.0), None, None, "cubic"), &p).unwrap_err();
        assert!(
            e.contains("rules[0].when = \"jitter\"") && e.contains("rtt_var_ms"),
            "{e}"
        );
        let e = Rule::parse(
            1,
            &rule("loss_rate", Some(0.1), Some(0.2), None, "cubic"),
            &p,
        )
        .unwrap_err();
        assert!(e.contains("rules[1]") && e.contains("exactly one"), "{e}");
        let e = Rule::parse(
            0,
            &rule("loss_rate", Some(f64::NAN), None, None, "cubic"),
            &p,
        )
        .unwrap_err();
        assert!(e.contains("finite"), "{e}");
        let e =
            Rule::parse(0, &rule("intent", None, None, Some("gaming"), "vegas"), &p).unwrap_err();
        assert!(
            e.contains("rules[0].is = \"gaming\"") && e.contains("delay_sensitive"),
            "{e}"
        );
        let e = Rule::parse(0, &rule("intent", Some(1.0), None, None, "vegas"), &p).unwrap_err();
        assert!(e.contains("is = "), "{e}");
        let e =
            Rule::parse(0, &rule("rtt_var_ms", Some(20.0), None, None, "copa"), &p).unwrap_err();
        assert!(
            e.contains("rules[0].pilot = \"copa\" is not in the pool (bbr, cubic, vegas)"),
            "{e}"
        );
        let twice = ["cubic", "cubic"].map(String::from).to_vec();
        let e = Rule::parse(
            0,
            &rule("loss_rate", Some(0.1), None, None, "cubic"),
            &twice,
        )
        .unwrap_err();
        assert!(e.contains("more than one"), "{e}");
        let r = Rule::parse(0, &rule("rtt_var_ms", Some(20.0), None, None, "cubic"), &p).unwrap();
        assert_eq!(
            r,
            Rule {
                condition: Condition::Above(Signal::RttVarMs, 20.0),
                pilot: 1
            }
        );
    }

    #[test]
    fn the_first_rule_that_holds_names_the_pilot_after_the_dwell_time() {
        let p = pool();
        let rules = vec![
            Rule::parse(
                0,
                &rule("intent", None, None, Some("delay_sensitive"), "vegas"),
                &p,
            )
            .unwrap(),
            Rule::parse(1, &rule("rtt_var_ms", Some(20.0), None, None, "cubic"), &p).unwrap(),
        ];
        let mut f = Filter::new(rules, 3);
        // rttvar 25 ms > 20 ms: CUBIC from the first window.
        assert_eq!(f.decide(0, &signals(25.0, 0.0, 0.0), None), Some(1));
        // Variance gone, but CUBIC keeps the flow for 3 windows.
        assert_eq!(f.decide(1, &signals(5.0, 0.0, 0.0), None), None);
        assert_eq!(f.decide(1, &signals(5.0, 0.0, 0.0), None), None);
        assert_eq!(f.decide(1, &signals(5.0, 0.0, 0.0), None), Some(0));
        // An intent rule comes first in the list, so it wins over the variance rule.
        let ds = Intent::DelaySensitive;
        for _ in 0..2 {
            assert_eq!(f.decide(0, &signals(25.0, 0.0, 0.0), Some(&ds)), None);
        }
        assert_eq!(f.decide(0, &signals(25.0, 0.0, 0.0), Some(&ds)), Some(2));
        // A signal not measured yet (NaN) does not hold.
        let r = Rule::parse(0, &rule("bw_change", None, Some(-0.3), None, "cubic"), &p).unwrap();
        assert!(!r.holds(&signals(0.0, 0.0, f64::NAN), None));
        assert!(r.holds(&signals(0.0, 0.0, -0.5), None));
    }
}
