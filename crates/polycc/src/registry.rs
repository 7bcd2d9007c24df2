//! Builds controllers from a name plus optional parameters, as written in a scenario:
//! `"cubic"` or `{ name = "cubic", beta = 0.7 }`.

use crate::cc::{CcContext, CongestionControl};
use crate::params::{ParamInfo, Schema};
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

/// Builds a controller from its parameters. It gets the registry so that policies can build the
/// controllers they own.
pub type Builder =
    fn(&Params, &CcContext, &Registry) -> Result<Box<dyn CongestionControl>, CcError>;

#[derive(Clone)]
struct Entry {
    builder: Builder,
    summary: &'static str,
    /// The declared parameters; `None` for a controller registered without them.
    schema: Option<Schema>,
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

    /// Adds or replaces `name`, without a declaration of its parameters (a user's wrapper
    /// around another controller): [`Registry::parameters`] knows none.
    pub fn register(&mut self, name: &str, summary: &'static str, builder: Builder) {
        self.entries.insert(
            name.to_string(),
            Entry {
                builder,
                summary,
                schema: None,
            },
        );
    }

    /// Adds or replaces `name` with the declared parameters of its table, `Schema::of::<T>()`
    /// for the [`ParamTable`](crate::params::ParamTable) its builder parses.
    pub fn register_with_params(
        &mut self,
        name: &str,
        summary: &'static str,
        schema: Schema,
        builder: Builder,
    ) {
        self.entries.insert(
            name.to_string(),
            Entry {
                builder,
                summary,
                schema: Some(schema),
            },
        );
    }

    /// Registered names, in sorted order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// The one-line description `name` was registered with.
    pub fn summary(&self, name: &str) -> Option<&'static str> {
        self.entries.get(name).map(|e| e.summary)
    }

    /// The declared schema of `name`; `None` for an unknown name or one registered without
    /// a declaration ([`Registry::register`]).
    pub fn schema(&self, name: &str) -> Option<Schema> {
        self.entries.get(name).and_then(|e| e.schema)
    }

    /// The declared parameters of `name` with their defaults, in declaration order; `None` as
    /// for [`Registry::schema`].
    pub fn parameters(&self, name: &str) -> Option<Vec<ParamInfo>> {
        self.schema(name).map(|s| s.describe())
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
    fn parameters_are_declared_with_their_types_ranges_and_defaults() {
        use crate::params::{Bound, Kind};
        let r = Registry::standard();
        assert_eq!(r.parameters("no-such-cca"), None);
        let cubic = r.parameters("cubic").unwrap();
        let names: Vec<&str> = cubic.iter().map(|p| p.spec.name).collect();
        assert_eq!(
            names,
            [
                "beta",
                "c",
                "fast_convergence",
                "hystart",
                "reno_friendly",
                "hystart_variant",
                "alpha_to_one",
                "target_rtt",
                "min_growth_before_loss",
                "recovery_spans_retransmissions",
                "prr",
                "growth"
            ]
        );
        let beta = &cubic[0];
        assert_eq!(beta.spec.kind, Kind::Number);
        assert_eq!(beta.spec.range, Some((Bound::At(0.05), Bound::At(0.95))));
        assert_eq!(beta.default, serde_json::json!(0.7));
        assert_eq!(cubic[3].spec.kind, Kind::Bool);
        assert_eq!(cubic[3].default_text(), "true");
        let poly = r.parameters("poly").unwrap();
        let pilot = poly.iter().find(|p| p.spec.name == "pilot").unwrap();
        assert_eq!(
            (pilot.spec.kind, pilot.default_text()),
            (Kind::Cca, "\"bbr\"".into())
        );
        // A user's controller registered without a declaration has none.
        let mut r = r;
        r.register("mine", "a user's", |_, ctx, r| {
            r.build(&CcSpec::named("cubic"), ctx)
        });
        assert!(r.contains("mine") && r.parameters("mine").is_none());
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
