//! User-defined fusion functions by name, carried in a [`Registry`] for the `poly` builder
//! (`fuse = "<name>"`).
//!
//! The registry knows no policy: it stores [`UserFusions`] as an opaque
//! [extension](Registry::set_extension), and this module is the only one that reads or fills it.
//! The Python bindings register their callables here as `py:<name>`.

use super::fusion::Fusion;
use super::{BUILTIN_FUSIONS, NAME};
use crate::registry::{CcError, Registry};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Makes a fresh instance of a user-defined fusion function for each agent built.
pub type FusionFactory = Arc<dyn Fn() -> Box<dyn Fusion> + Send + Sync>;

/// The registry extension: user-defined fusions by name.
#[derive(Clone, Default)]
pub struct UserFusions(BTreeMap<String, FusionFactory>);

/// Adds or replaces the fusion function `name` in `registry` (a scenario chooses it with
/// `fuse = "<name>"`). Built-in names (`max`, `min`, `closest`, `mean`) cannot be replaced:
/// registering one is an error naming it.
pub fn register_fusion(
    registry: &mut Registry,
    name: &str,
    factory: FusionFactory,
) -> Result<(), CcError> {
    if BUILTIN_FUSIONS.contains(&name) || name.is_empty() {
        return Err(CcError::BadParams {
            name: NAME.to_string(),
            message: format!(
                "fusion name {name:?} is empty or built in ({})",
                BUILTIN_FUSIONS.join(", ")
            ),
        });
    }
    let mut fusions = registry
        .extension::<UserFusions>()
        .cloned()
        .unwrap_or_default();
    fusions.0.insert(name.to_string(), factory);
    registry.set_extension(fusions);
    Ok(())
}

/// A new instance of the fusion registered as `name`.
pub fn registered(registry: &Registry, name: &str) -> Option<Box<dyn Fusion>> {
    registry
        .extension::<UserFusions>()
        .and_then(|f| f.0.get(name))
        .map(|f| f())
}

/// Names of the registered (user-defined) fusions, sorted.
pub fn registered_names(registry: &Registry) -> Vec<&str> {
    registry
        .extension::<UserFusions>()
        .map(|f| f.0.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::poly::fusion::FusionInput;

    struct Half;
    impl Fusion for Half {
        fn name(&self) -> &str {
            "half"
        }
        fn fuse(&mut self, input: &FusionInput<'_>) -> f64 {
            input.values[input.pilot] / 2.0
        }
    }

    #[test]
    fn a_registered_fusion_is_found_by_name_and_built_ins_cannot_be_replaced() {
        let mut r = Registry::standard();
        assert!(registered_names(&r).is_empty());
        assert!(registered(&r, "half").is_none());
        register_fusion(&mut r, "half", Arc::new(|| Box::new(Half))).expect("registers");
        register_fusion(&mut r, "also-half", Arc::new(|| Box::new(Half))).expect("registers");
        assert_eq!(registered_names(&r), ["also-half", "half"]);
        let mut f = registered(&r, "half").expect("registered");
        let x = f.fuse(&FusionInput {
            quantity: crate::policies::poly::members::Quantity::Cwnd,
            values: &[30_000.0, 10_000.0],
            pilot: 0,
            target: None,
        });
        assert_eq!(x, 15_000.0);
        // A clone made before a registration does not see it.
        let before = r.clone();
        register_fusion(&mut r, "third", Arc::new(|| Box::new(Half))).expect("registers");
        assert_eq!(registered_names(&before).len(), 2);
        assert_eq!(registered_names(&r).len(), 3);
        let e = register_fusion(&mut r, "max", Arc::new(|| Box::new(Half))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad parameters for \"poly\": fusion name \"max\" is empty or built in \
             (max, min, closest, mean)"
        );
    }
}
