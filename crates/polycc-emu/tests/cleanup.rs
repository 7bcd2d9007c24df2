//! Nothing a run makes outlives it: namespaces go when a run ends, and a run killed outright
//! (SIGKILL, no chance to clean up) has its namespaces removed by the next one.

mod common;

use common::{emulator_available, namespaces_of};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LONG_RUN: &str = r#"
name = "long"
duration = "60s"
[[links]]
id = "l"
rate = "10Mbps"
[[flows]]
id = "f"
cca = "cubic"
stack = "linux"
rtt = "20ms"
"#;

#[test]
fn a_killed_run_leaves_nothing_behind_once_the_next_run_starts() {
    let Some(_one) =
        emulator_available("a_killed_run_leaves_nothing_behind_once_the_next_run_starts")
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("polycc-emu-cleanup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.toml");
    std::fs::write(&file, LONG_RUN).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_polycc-emu-run"))
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    while namespaces_of(pid).len() < 2 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let made = namespaces_of(pid);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(made.len(), 2, "the run made its two namespaces: {made:?}");
    assert_eq!(namespaces_of(pid), made, "a killed run cannot clean up");
    let removed = polycc_emu::netns::remove_stale();
    for ns in &made {
        assert!(removed.contains(ns), "{ns} removed: {removed:?}");
    }
    assert!(namespaces_of(pid).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_finished_or_failed_run_removes_its_namespaces() {
    let Some(_one) = emulator_available("a_finished_or_failed_run_removes_its_namespaces") else {
        return;
    };
    let me = std::process::id();
    let short = LONG_RUN.replace("60s", "300ms");
    let out = polycc_emu::run(&common::model(&short), &Default::default()).unwrap();
    assert_eq!(out.summary.flows.len(), 1);
    // Cancelled at once: an error, and still nothing left.
    let cancelled = || true;
    let options = polycc_emu::Options {
        cancelled: &cancelled,
    };
    assert!(polycc_emu::run(&common::model(&short), &options).is_err());
    assert!(namespaces_of(me).is_empty(), "{:?}", namespaces_of(me));
}
