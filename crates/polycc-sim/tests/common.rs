//! Shared helpers for the simulator's integration tests.
#![allow(dead_code)]

use polycc::Registry;
use polycc_sim::{Origin, RunOutput};
use std::path::PathBuf;

pub fn origin() -> Origin {
    Origin {
        name: "test.toml".into(),
        base_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    }
}

/// The smallest valid scenario: one CUBIC flow over one 10 Mbit/s link for 5 s. Validation
/// tests change one key of it.
pub const GOOD: &str = r#"
name = "ok"
duration = "5s"
[[links]]
id = "b"
rate = "10Mbps"
[[flows]]
id = "a"
cca = "cubic"
rtt = "30ms"
"#;

/// Validates a scenario without running it.
pub fn load(toml: &str) -> Result<polycc_sim::Model, String> {
    polycc_sim::load_toml(toml, &origin(), &Registry::standard()).map_err(|e| e.to_string())
}

/// The validation error of a scenario that must be refused.
pub fn error_of(toml: &str) -> String {
    match load(toml) {
        Ok(_) => panic!("scenario was accepted:\n{toml}"),
        Err(e) => e,
    }
}

pub fn assert_mentions(e: &str, parts: &[&str]) {
    for p in parts {
        assert!(e.contains(p), "error {e:?} should mention {p:?}");
    }
}

pub fn run(toml: &str) -> RunOutput {
    let registry = Registry::standard();
    let model = polycc_sim::load_toml(toml, &origin(), &registry).unwrap_or_else(|e| panic!("{e}"));
    polycc_sim::run(&model, &registry).unwrap_or_else(|e| panic!("{e}"))
}

/// The shared traces directory, if present (tests that need it skip otherwise).
pub fn traces_dir() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    p.is_dir().then_some(p)
}

/// Mean goodput (Mbit/s) of flow `id` over the time bins with `from <= t < to`.
pub fn mean_goodput_mbps(out: &RunOutput, id: &str, from: f64, to: f64) -> f64 {
    let t = out.flows.f64s("t_s").unwrap();
    let flow = out.flows.strs("flow").unwrap();
    let g = out.flows.f64s("goodput_mbps").unwrap();
    let xs: Vec<f64> = (0..t.len())
        .filter(|&i| flow[i] == id && t[i] >= from && t[i] < to)
        .map(|i| g[i])
        .collect();
    assert!(!xs.is_empty(), "no samples for {id} in [{from}, {to})");
    xs.iter().sum::<f64>() / xs.len() as f64
}
