//! Declared parameter schemas. Every controller lists the keys of its `cca` table once, beside
//! the serde struct that parses them ([`ParamTable::PARAMS`]): name, type, range or allowed
//! values, a one-line description and the source of its default.
//!
//! The declaration is used three ways, so that it cannot drift from the code:
//! - validation: [`parse`] checks every declared range and choice after serde has parsed the
//!   table, so a builder states its bounds nowhere else;
//! - defaults: a parameter's default is its struct's serde default, read by parsing an empty
//!   table ([`Schema::defaults`]); it is written once, in the struct;
//! - display: [`crate::Registry::parameters`] hands the declaration with those defaults to
//!   `polycc ccas NAME`.
//!
//! `crates/polycc/tests/param_schemas.rs` checks every registered controller's declaration
//! against its struct: the declared names are exactly the struct's keys, each default has the
//! declared type, and each declared range is enforced at its bounds.

use crate::registry::{parse_params, CcError, Params};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;

/// What a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A number (any JSON number; TOML integers are numbers too).
    Number,
    /// A non-negative integer.
    Integer,
    /// `true` or `false`.
    Bool,
    /// A name, checked by the controller (a utility, a fusion function).
    Text,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A controller of the registry: a name, or a table with `name` and its parameters.
    Cca,
    /// A list of controllers, each as [`Kind::Cca`].
    CcaList,
    /// A list of numbers.
    NumberList,
    /// Anything else, described in words.
    Described(&'static str),
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Number => f.write_str("number"),
            Kind::Integer => f.write_str("integer"),
            Kind::Bool => f.write_str("boolean"),
            Kind::Text => f.write_str("string"),
            Kind::Choice(values) => write!(f, "one of {}", values.join(", ")),
            Kind::Cca => f.write_str("CCA spec (a name or a table)"),
            Kind::CcaList => f.write_str("list of CCA specs"),
            Kind::NumberList => f.write_str("list of numbers"),
            Kind::Described(what) => f.write_str(what),
        }
    }
}

/// One end of a parameter's closed range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// A fixed number.
    At(f64),
    /// The value of another parameter of the same table (`max_rate_kbps ≥ min_rate_kbps`).
    Param(&'static str),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::At(v) => write!(f, "{v}"),
            Bound::Param(p) => f.write_str(p),
        }
    }
}

/// One parameter of a controller's `cca` table, as declared beside its struct.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The key, as written in the `cca` table.
    pub name: &'static str,
    /// What it takes.
    pub kind: Kind,
    /// The closed range a number must lie in, when there is one.
    pub range: Option<(Bound, Bound)>,
    /// What leaving the key out means, for a parameter without a value of its own by default
    /// (its default is `null`): "derived from the flow's seed", "equal weights".
    pub absent: Option<&'static str>,
    /// One line: what the parameter does.
    pub description: &'static str,
    /// Where its default comes from (RFC or paper section, implementation).
    pub source: &'static str,
}

impl ParamSpec {
    /// A parameter of `kind` without a range.
    pub const fn new(
        name: &'static str,
        kind: Kind,
        description: &'static str,
        source: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind,
            range: None,
            absent: None,
            description,
            source,
        }
    }

    /// The same parameter, limited to `[lo, hi]`.
    pub const fn range(self, lo: f64, hi: f64) -> Self {
        self.bounds(Bound::At(lo), Bound::At(hi))
    }

    /// The same parameter, limited to `[lo, hi]` where an end may be another parameter.
    pub const fn bounds(self, lo: Bound, hi: Bound) -> Self {
        ParamSpec {
            range: Some((lo, hi)),
            ..self
        }
    }

    /// The same parameter, whose absence (a `null` default) means `meaning`.
    pub const fn when_absent(self, meaning: &'static str) -> Self {
        ParamSpec {
            absent: Some(meaning),
            ..self
        }
    }

    /// `[lo, hi]` as written in a message, when the parameter has a range.
    pub fn range_text(&self) -> Option<String> {
        self.range.map(|(lo, hi)| format!("[{lo}, {hi}]"))
    }

    /// Checks `value`, this parameter's (or one derived for it), against the declared range or
    /// choices; bounds naming another parameter are read from `table`. `null` (an absent
    /// optional parameter) passes.
    fn check(&self, cca: &str, table: &Map<String, Value>, value: &Value) -> Result<(), CcError> {
        let bad = |message: String| CcError::BadParams {
            name: cca.to_string(),
            message,
        };
        if let (Kind::Choice(values), Value::String(s)) = (self.kind, value) {
            if !values.contains(&s.as_str()) {
                return Err(bad(format!(
                    "{} = {s:?} is not one of {}",
                    self.name,
                    values.join(", ")
                )));
            }
        }
        let (Some((lo_bound, hi_bound)), Some(v)) = (self.range, value.as_f64()) else {
            return Ok(());
        };
        // A bound naming an absent optional parameter does not bind.
        let resolve = |b: Bound| match b {
            Bound::At(x) => Some(x),
            Bound::Param(p) => table.get(p).and_then(Value::as_f64),
        };
        let lo = resolve(lo_bound).unwrap_or(f64::NEG_INFINITY);
        let hi = resolve(hi_bound).unwrap_or(f64::INFINITY);
        if v.is_finite() && v >= lo && v <= hi {
            return Ok(());
        }
        let name = self.name;
        Err(bad(match (lo_bound, hi_bound) {
            (Bound::At(_), Bound::At(_)) => format!("{name} = {v} is outside [{lo}, {hi}]"),
            // Say which parameter moved the range, so that the fix is clear.
            _ => format!("{name} = {v} is outside [{lo_bound}, {hi_bound}] = [{lo}, {hi}]"),
        }))
    }
}

/// A controller's parameter struct with its declared schema.
///
/// Declare the struct `#[serde(deny_unknown_fields)]` with a serde default for every field, so
/// that an empty table parses to the defaults; `Serialize` gives back the same keys.
pub trait ParamTable: DeserializeOwned + Serialize {
    /// Every key of the table, in the order ranges are checked: a parameter whose range names
    /// another comes after it.
    const PARAMS: &'static [ParamSpec];
}

/// Parses `p` into `T` (a typo names the allowed keys, a wrong type names its key), then checks
/// every declared range and choice. Cross-parameter rules a range cannot state stay with the
/// builder.
pub fn parse<T: ParamTable>(cca: &str, p: &Params) -> Result<T, CcError> {
    // Choices first, on the raw value: a field typed as an enum would otherwise be refused by
    // serde in its own words, without the declared list.
    for spec in T::PARAMS
        .iter()
        .filter(|s| matches!(s.kind, Kind::Choice(_)))
    {
        if let Some(v @ Value::String(_)) = p.get(spec.name) {
            spec.check(cca, p, v)?;
        }
    }
    let parsed: T = parse_params(cca, p)?;
    let table = as_table(&parsed);
    for spec in T::PARAMS {
        spec.check(cca, &table, table.get(spec.name).unwrap_or(&Value::Null))?;
    }
    Ok(parsed)
}

/// Checks `value`, derived by the builder for parameter `key` of `parsed` (PIBES's s_min from
/// `flows_sharing`), against `key`'s declared range.
pub fn check_derived<T: ParamTable>(
    cca: &str,
    parsed: &T,
    key: &str,
    value: f64,
) -> Result<(), CcError> {
    let spec = T::PARAMS.iter().find(|s| s.name == key);
    debug_assert!(spec.is_some(), "{key} is not declared for {cca}");
    match spec {
        Some(spec) => spec.check(cca, &as_table(parsed), &Value::from(value)),
        None => Ok(()),
    }
}

/// The struct's keys and values (every field: the structs skip none when serialised).
fn as_table<T: Serialize>(parsed: &T) -> Map<String, Value> {
    match serde_json::to_value(parsed) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// A registered controller's declaration with a way to its defaults, independent of the type.
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    params: &'static [ParamSpec],
    defaults: fn() -> Map<String, Value>,
}

impl Schema {
    /// The schema of `T`.
    pub fn of<T: ParamTable>() -> Self {
        Schema {
            params: T::PARAMS,
            defaults: defaults_of::<T>,
        }
    }

    /// The declared parameters.
    pub fn params(&self) -> &'static [ParamSpec] {
        self.params
    }

    /// Every key of the struct with the value an empty table gives it (`null` for an optional
    /// parameter); empty if an empty table does not parse.
    pub fn defaults(&self) -> Map<String, Value> {
        (self.defaults)()
    }

    /// The declared parameters with their defaults, in declaration order.
    pub fn describe(&self) -> Vec<ParamInfo> {
        let defaults = self.defaults();
        self.params
            .iter()
            .map(|spec| ParamInfo {
                spec: *spec,
                default: defaults.get(spec.name).cloned().unwrap_or(Value::Null),
            })
            .collect()
    }
}

fn defaults_of<T: ParamTable>() -> Map<String, Value> {
    parse_params::<T>("", &Params::new())
        .map(|t| as_table(&t))
        .unwrap_or_default()
}

/// One declared parameter with its default, as [`crate::Registry::parameters`] reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// The declaration.
    pub spec: ParamSpec,
    /// The value an absent key takes; `null` when absence has a meaning of its own
    /// ([`ParamSpec::absent`]).
    pub default: Value,
}

impl ParamInfo {
    /// The default as written in a scenario (`0.7`, `true`, `"bbr"`), or what absence means.
    pub fn default_text(&self) -> String {
        match (&self.default, self.spec.absent) {
            (Value::Null, Some(meaning)) => meaning.to_string(),
            (Value::Null, None) => "none".to_string(),
            (v, _) => v.to_string(),
        }
    }
}
