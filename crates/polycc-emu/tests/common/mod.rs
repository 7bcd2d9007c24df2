//! What the emulator's tests share: whether they can run here, and scenario loading and
//! building ([`scenario`]).

#![allow(dead_code)]

pub mod scenario;

use polycc_sim::{Model, Origin};
use std::sync::{Mutex, MutexGuard};

/// Emulated runs are real time: two at once would share the CPU and skew each other's timing.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Held for the length of a test that emulates.
pub fn exclusive() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Set in CI (which has root, namespaces and TUN) so that a test that cannot run fails
/// instead of skipping.
const REQUIRE: &str = "POLYCC_REQUIRE_EMU";

/// Whether the emulator can run here; prints why not (and fails under `POLYCC_REQUIRE_EMU=1`).
pub fn emulator_available(test: &str) -> Option<MutexGuard<'static, ()>> {
    match polycc_emu::netns::check_privileges() {
        Ok(()) => Some(exclusive()),
        Err(e) => {
            assert!(
                std::env::var(REQUIRE).as_deref() != Ok("1"),
                "{test}: {e} (and {REQUIRE}=1 demands it)"
            );
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

pub fn model(toml: &str) -> Model {
    let origin = Origin {
        name: "test.toml".into(),
        base_dir: ".".into(),
    };
    polycc_sim::load_toml(toml, &origin, &polycc::Registry::standard())
        .unwrap_or_else(|e| panic!("test scenario: {e}"))
}

/// Names of the namespaces that exist now and were made by process `pid`.
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("{}{pid}-", polycc_emu::netns::PREFIX);
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}
