//! Every registered controller's declared parameters (`ParamTable::PARAMS`) against what its
//! builder does: the declared names are exactly the keys its table accepts, each default has the
//! declared type (or a stated meaning when absent), every declared key is accepted with its
//! default and refuses a value of another type, and every declared range and choice is enforced
//! at its bounds.

use polycc::params::{Bound, Kind, ParamInfo};
use polycc::{CcContext, CcSpec, Params, Registry};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The builder's verdict on `name` with `params`: `Err` carries the message.
fn build(r: &Registry, name: &str, params: Params) -> Result<(), String> {
    let spec = CcSpec::Table {
        name: name.to_string(),
        params,
    };
    r.build(&spec, &CcContext::new(1500))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn one(key: &str, value: Value) -> Params {
    let mut p = Params::new();
    p.insert(key.to_string(), value);
    p
}

/// Whether `message` is about parameter `key`: its detail (after `bad parameters for "x": `)
/// starts with the key, as in `beta = 1.5 is outside ...`, `hystart: invalid type ...`,
/// `copilots[0]: ...` or `target applies to ...`.
fn names(message: &str, key: &str) -> bool {
    message
        .split_once("\": ")
        .and_then(|(_, detail)| detail.strip_prefix(key))
        .is_some_and(|rest| rest.starts_with([' ', ':', '[']))
}

/// `v` as the JSON a scenario would write for a parameter of `kind`.
fn number(kind: Kind, v: f64) -> Value {
    match kind {
        Kind::Integer if v >= 0.0 => json!(v as u64),
        Kind::Integer => json!(v as i64),
        _ => json!(v),
    }
}

/// A step just past a bound: one for integers, a relative hair for numbers.
fn step(kind: Kind, at: f64) -> f64 {
    match kind {
        Kind::Integer => 1.0,
        _ => (at.abs() * 1e-6).max(1e-9),
    }
}

fn resolve(bound: Bound, defaults: &serde_json::Map<String, Value>) -> Option<f64> {
    match bound {
        Bound::At(v) => Some(v),
        Bound::Param(p) => defaults.get(p).and_then(Value::as_f64),
    }
}

fn default_has_its_kind(r: &Registry, info: &ParamInfo) -> bool {
    let d = &info.default;
    match info.spec.kind {
        Kind::Number => d.is_number(),
        Kind::Integer => d.is_u64(),
        Kind::Bool => d.is_boolean(),
        Kind::Text => d.is_string(),
        Kind::Choice(values) => d.as_str().is_some_and(|s| values.contains(&s)),
        Kind::Cca => {
            serde_json::from_value::<CcSpec>(d.clone()).is_ok_and(|s| r.contains(s.name()))
        }
        Kind::CcaList => serde_json::from_value::<Vec<CcSpec>>(d.clone())
            .is_ok_and(|l| l.iter().all(|s| r.contains(s.name()))),
        Kind::NumberList => d.as_array().is_some_and(|a| a.iter().all(Value::is_number)),
        Kind::Described(_) => true,
    }
}

#[test]
fn every_registered_controller_declares_exactly_the_keys_its_table_takes() {
    let r = Registry::standard();
    for name in r.names() {
        let schema = r
            .schema(name)
            .unwrap_or_else(|| panic!("{name} declares no parameters"));
        let declared: Vec<&str> = schema.params().iter().map(|s| s.name).collect();
        let unique: BTreeSet<&str> = declared.iter().copied().collect();
        assert_eq!(unique.len(), declared.len(), "{name}: {declared:?}");
        let defaults = schema.defaults();
        let keys: BTreeSet<&str> = defaults.keys().map(String::as_str).collect();
        assert_eq!(keys, unique, "{name}: declared vs the struct's keys");
        build(&r, name, Params::new()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let e = build(&r, name, one("no_such_key", json!(1))).expect_err(name);
        assert!(e.contains("unknown field `no_such_key`"), "{name}: {e}");
        for info in schema.describe() {
            let spec = &info.spec;
            let key = spec.name;
            let at = format!("{name}.{key}");
            assert!(
                !spec.description.is_empty() && !spec.source.is_empty(),
                "{at}"
            );
            // A default of its own, or a stated meaning of its absence: never both, never none.
            assert_eq!(
                info.default.is_null(),
                spec.absent.is_some(),
                "{at}: default {} with absent {:?}",
                info.default,
                spec.absent
            );
            if !info.default.is_null() {
                assert!(default_has_its_kind(&r, &info), "{at}: {}", info.default);
            }
            // The key is accepted with its default written out.
            build(&r, name, one(key, info.default.clone())).unwrap_or_else(|e| panic!("{at}: {e}"));
            // A value of no parameter's type is refused, naming the key.
            let e = build(&r, name, one(key, json!({"not": "a value"}))).expect_err(&at);
            assert!(names(&e, key), "{at}: {e}");
        }
    }
}

#[test]
fn every_declared_range_and_choice_is_enforced_at_its_bounds() {
    let r = Registry::standard();
    let mut checked = 0;
    for name in r.names() {
        let schema = r.schema(name).expect("declared");
        let defaults = schema.defaults();
        for spec in schema.params() {
            let key = spec.name;
            let at = format!("{name}.{key}");
            if let Kind::Choice(values) = spec.kind {
                for v in values {
                    let verdict = build(&r, name, one(key, json!(v)));
                    assert!(
                        verdict.as_ref().map_or_else(|e| !names(e, key), |_| true),
                        "{at} = {v}: {verdict:?}"
                    );
                }
                let e = build(&r, name, one(key, json!("no-such-choice"))).expect_err(&at);
                assert!(
                    e.contains(&format!(
                        "{key} = \"no-such-choice\" is not one of {}",
                        values.join(", ")
                    )),
                    "{at}: {e}"
                );
                checked += 1;
            }
            let Some((lo, hi)) = spec.range else {
                continue;
            };
            let text = spec.range_text().expect("a range");
            for (bound, outward) in [(lo, -1.0), (hi, 1.0)] {
                let Some(v) = resolve(bound, &defaults) else {
                    continue;
                };
                // At the bound the key's own check passes; another key's may not (a range
                // bound by this one's value).
                let inside = build(&r, name, one(key, number(spec.kind, v)));
                assert!(
                    inside.as_ref().map_or_else(|e| !names(e, key), |_| true),
                    "{at} = {v} (bound of {text}): {inside:?}"
                );
                let past = v + outward * step(spec.kind, v);
                let e = build(&r, name, one(key, number(spec.kind, past)))
                    .expect_err(&format!("{at} = {past} accepted, outside {text}"));
                assert!(names(&e, key), "{at} = {past}: {e}");
                checked += 1;
            }
        }
    }
    // cubic alone has two ranged keys; the pool has dozens.
    assert!(checked > 60, "{checked} bounds checked");
}

#[test]
fn a_range_bound_by_another_parameter_names_it() {
    let r = Registry::standard();
    let mut p = one("alpha", json!(5));
    p.insert("beta".into(), json!(4));
    let e = build(&r, "vegas", p).expect_err("alpha above beta");
    assert!(
        e.contains("beta = 4 is outside [alpha, 1000] = [5, 1000]"),
        "{e}"
    );
    // A fixed range reads as before.
    let e = build(&r, "cubic", one("beta", json!(1.5))).expect_err("beta 1.5");
    assert!(e.ends_with("beta = 1.5 is outside [0.05, 0.95]"), "{e}");
}
