//! Builds controllers from a name plus optional parameters, as written in a scenario:
//! `"cubic"` or `{ name = "cubic", beta = 0.7 }`.

use crate::cc::{CcContext, CongestionControl};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Parameters of one controller: a JSON object whose keys each algorithm validates.
pub type Params = serde_json::Map<String, serde_json::Value>;

/// A controller named with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CcSpec {
    /// A bare name, `"cubic"`: the algorithm with its default parameters.
    Name(String),
    /// A table, `{ name = "cubic", beta = 0.7 }`: the name plus parameters for its builder.
    Table {
        /// Registry name of the algorithm.
        name: String,
        /// Every other key of the table, checked by the algorithm's builder.
        #[serde(flatten)]
        params: Params,
    },
}

impl CcSpec {
    /// The algorithm `name` with its default parameters.
    pub fn named(name: &str) -> Self {
        CcSpec::Name(name.to_string())
    }

    /// Registry name of the algorithm.
    pub fn name(&self) -> &str {
        match self {
            CcSpec::Name(n) | CcSpec::Table { name: n, .. } => n,
        }
    }

    /// The parameters given with the name (empty for a bare name).
    pub fn params(&self) -> Params {
        match self {
            CcSpec::Name(_) => Params::new(),
            CcSpec::Table { params, .. } => params.clone(),
        }
    }
}

impl fmt::Display for CcSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a controller could not be built. The message names the algorithm and, for parameters,
/// the key; a policy that fails to build a member reports under its own name with the member's
/// role and error in the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CcError {
    /// No algorithm is registered under `name`.
    #[error("unknown congestion control {name:?}; known: {known}")]
    UnknownName {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated, for the message.
        known: String,
    },
    /// The algorithm rejected its parameters.
    #[error("bad parameters for {name:?}: {message}")]
    BadParams {
        /// The algorithm (or policy) whose parameters were rejected.
        name: String,
        /// Which key is wrong and why: an unknown key with the allowed ones, a type error or a
        /// value out of range.
        message: String,
    },
}

/// One parameter a controller accepts, as its builder reports it (see [`Registry::parameters`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// The key, as written in the `cca` table.
    pub name: String,
    /// What the builder expects when given a number it cannot take ("a boolean", "a string",
    /// "u32"..., or [`NOT_A_NUMBER`] when its error does not say); `None` when it takes a number.
    pub expects: Option<String>,
    /// The closed range a number must lie in, when the builder checks one with [`check_range`].
    pub range: Option<(f64, f64)>,
}

/// A key no controller has, to make a builder list the keys it knows.
const PROBE_KEY: &str = "\u{1}polycc-probe";
/// [`ParamInfo::expects`] of a parameter that refuses numbers without saying what it takes.
pub const NOT_A_NUMBER: &str = "not a number";
/// Numbers beyond any parameter's range, to make a builder state the range it checks.
const PROBE_VALUES: [f64; 2] = [1e300, -1e300];

/// Builds a controller from its parameters. It gets the registry so that policies can build the
/// controllers they own.
pub type Builder =
    fn(&Params, &CcContext, &Registry) -> Result<Box<dyn CongestionControl>, CcError>;

#[derive(Clone)]
struct Entry {
    builder: Builder,
    summary: &'static str,
}

/// Name → constructor table. [`Registry::standard`] holds every algorithm of this crate; users add
/// their own with [`Registry::register`].
///
/// Besides the constructors a registry carries [extensions](Registry::set_extension): at most
/// one value of each type, opaque to the registry, defined and read by the module whose builders
/// need it. PolyCC keeps its user-defined fusion functions there (`fuse = "<name>"`), so the
/// registry knows no policy.
#[derive(Clone, Default)]
pub struct Registry {
    entries: BTreeMap<String, Entry>,
    /// One value per type; a clone of the registry shares them until it sets its own.
    extensions: BTreeMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Registry {
    /// A registry with no controllers, for a transport that offers only its own.
    pub fn empty() -> Self {
        Registry::default()
    }

    /// Every controller and policy shipped with polycc.
    pub fn standard() -> Self {
        let mut r = Registry::empty();
        crate::algos::register_all(&mut r);
        crate::policies::register_all(&mut r);
        r
    }

    /// Adds or replaces `name`.
    pub fn register(&mut self, name: &str, summary: &'static str, builder: Builder) {
        self.entries
            .insert(name.to_string(), Entry { builder, summary });
    }

    /// Registered names, in sorted order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// The one-line description `name` was registered with.
    pub fn summary(&self, name: &str) -> Option<&'static str> {
        self.entries.get(name).map(|e| e.summary)
    }

    /// The parameters `name`'s builder accepts, in the order it lists them, with the type or
    /// range it checks where its error messages state them; `None` for an unknown name.
    ///
    /// Found by asking the builder, so it needs nothing from the algorithms beyond what every
    /// builder already does: parameters parsed with [`parse_params`] from a
    /// `deny_unknown_fields` struct (an unknown key lists the known ones) and ranges checked with
    /// [`check_range`] (an out-of-range number names its range). Defaults are not known here.
    pub fn parameters(&self, name: &str) -> Option<Vec<ParamInfo>> {
        let entry = self.entries.get(name)?;
        let ctx = CcContext::new(1500);
        let error = |key: &str, value: serde_json::Value| {
            let mut params = Params::new();
            params.insert(key.to_string(), value);
            (entry.builder)(&params, &ctx, self)
                .err()
                .map(|e| e.to_string())
        };
        let listed = error(PROBE_KEY, serde_json::Value::Null).unwrap_or_default();
        let names = listed
            .split_once("expected ")
            .map(|(_, rest)| backticked(rest))
            .unwrap_or_default();
        let info = names
            .into_iter()
            .map(|key| {
                let mut info = ParamInfo {
                    name: key.clone(),
                    expects: None,
                    range: None,
                };
                let mut takes_number = false;
                for v in PROBE_VALUES {
                    let Some(msg) = error(&key, serde_json::json!(v)) else {
                        takes_number = true;
                        continue;
                    };
                    if let Some((_, rest)) = msg.split_once("invalid type: ") {
                        info.expects = rest.split_once("expected ").map(|(_, e)| e.to_string());
                        break;
                    }
                    if info.range.is_none() {
                        info.range = stated_range(&msg);
                    }
                    takes_number |= info.range.is_some();
                }
                if info.expects.is_none() && !takes_number {
                    // Refused for another reason (a name or a table, an untagged enum).
                    info.expects = Some(NOT_A_NUMBER.to_string());
                }
                info
            })
            .collect();
        Some(info)
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Stores `value` as this registry's extension of type `T`, replacing the one it had. The
    /// module that defines `T` gives it meaning (its builders read it with
    /// [`Registry::extension`]) and offers the functions that fill it.
    pub fn set_extension<T: Any + Send + Sync>(&mut self, value: T) {
        self.extensions.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The extension of type `T`, if one was set.
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions
            .get(&TypeId::of::<T>())
            .and_then(|v| v.as_ref().downcast_ref::<T>())
    }

    /// Builds the controller `spec` names, with its parameters, for a flow described by `ctx`.
    /// An unknown name is an error that lists the registered ones.
    pub fn build(
        &self,
        spec: &CcSpec,
        ctx: &CcContext,
    ) -> Result<Box<dyn CongestionControl>, CcError> {
        let entry = self
            .entries
            .get(spec.name())
            .ok_or_else(|| CcError::UnknownName {
                name: spec.name().to_string(),
                known: self.names().join(", "),
            })?;
        (entry.builder)(&spec.params(), ctx, self)
    }
}

/// The `a`, `b` of "expected one of `a`, `b`" (serde's list of the known fields).
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// `(lo, hi)` of a [`check_range`] message "`key = v is outside [lo, hi]`".
fn stated_range(message: &str) -> Option<(f64, f64)> {
    let (_, rest) = message.split_once(" is outside [")?;
    let (lo, rest) = rest.split_once(", ")?;
    let (hi, _) = rest.split_once(']')?;
    Some((lo.parse().ok()?, hi.parse().ok()?))
}

/// Deserialises an algorithm's parameter struct (declare it `#[serde(deny_unknown_fields)]` so a
/// typo names the allowed keys). A value of the wrong type is reported with its key.
pub fn parse_params<T: DeserializeOwned>(name: &str, params: &Params) -> Result<T, CcError> {
    let value = serde_json::Value::Object(params.clone());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        CcError::BadParams {
            name: name.to_string(),
            message: if path == "." {
                inner.to_string()
            } else {
                format!("{path}: {inner}")
            },
        }
    })
}

/// Rejects a value outside `[lo, hi]` with a message naming the parameter.
pub fn check_range(name: &str, key: &str, v: f64, lo: f64, hi: f64) -> Result<(), CcError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(())
    } else {
        Err(CcError::BadParams {
            name: name.to_string(),
            message: format!("{key} = {v} is outside [{lo}, {hi}]"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(spec: serde_json::Value) -> String {
        let spec: CcSpec = serde_json::from_value(spec).unwrap();
        match Registry::standard().build(&spec, &CcContext::new(1500)) {
            Ok(_) => panic!("{spec:?} was accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parameters_are_found_with_their_types_and_ranges() {
        let r = Registry::standard();
        assert_eq!(r.parameters("no-such-cca"), None);
        let cubic = r.parameters("cubic").unwrap();
        let names: Vec<&str> = cubic.iter().map(|p| p.name.as_str()).collect();
        assert!(
            names.contains(&"beta") && names.contains(&"hystart"),
            "{names:?}"
        );
        let beta = cubic.iter().find(|p| p.name == "beta").unwrap();
        assert_eq!(beta.expects, None);
        assert!(beta.range.is_some(), "{beta:?}");
        let hystart = cubic.iter().find(|p| p.name == "hystart").unwrap();
        assert_eq!(hystart.expects.as_deref(), Some("a boolean"));
        for name in r.names() {
            assert!(r.parameters(name).is_some(), "{name}");
        }
        let poly = r.parameters("poly").unwrap();
        let pilot = poly.iter().find(|p| p.name == "pilot").unwrap();
        assert_eq!(pilot.expects.as_deref(), Some(NOT_A_NUMBER));
    }

    #[test]
    fn a_parameter_of_the_wrong_type_is_named() {
        let e = error_of(serde_json::json!({"name": "cubic", "beta": "high"}));
        assert!(
            e.contains("\"cubic\"") && e.contains("beta: invalid type"),
            "{e}"
        );
        let e = error_of(serde_json::json!({"name": "pibes", "burst": "six"}));
        assert!(e.contains("burst: invalid type"), "{e}");
        // Unknown keys still list the allowed ones.
        let e = error_of(serde_json::json!({"name": "cubic", "betta": 0.7}));
        assert!(
            e.contains("unknown field `betta`") && e.contains("beta"),
            "{e}"
        );
    }
}
