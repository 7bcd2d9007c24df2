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
    let out = polycc_emu::run(
        &common::model(&short),
        &polycc::Registry::standard(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(out.summary.flows.len(), 1);
    // Cancelled at once: an error, and still nothing left.
    let cancelled = || true;
    let options = polycc_emu::Options {
        cancelled: &cancelled,
        log_dir: None,
    };
    assert!(polycc_emu::run(
        &common::model(&short),
        &polycc::Registry::standard(),
        &options
    )
    .is_err());
    assert!(namespaces_of(me).is_empty(), "{:?}", namespaces_of(me));
}

#[test]
fn without_root_a_run_says_what_it_needs_and_makes_nothing() {
    let Some(_one) = emulator_available("without_root_a_run_says_what_it_needs_and_makes_nothing")
    else {
        return;
    };
    let Ok(runuser) = which("runuser") else {
        panic!("runuser (util-linux) is needed to drop root for this test");
    };
    // A copy in a world-readable place: the build tree may sit where nobody cannot enter.
    let dir = std::env::temp_dir().join(format!("polycc-emu-nonroot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (file, bin) = (dir.join("s.toml"), dir.join("polycc-emu-run"));
    std::fs::write(&file, LONG_RUN.replace("60s", "1s")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_polycc-emu-run"), &bin).unwrap();
    for p in [&dir, &bin, &file] {
        let mode = if p == &file { 0o644 } else { 0o755 };
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    }
    let out = Command::new(runuser)
        .args(["-u", "nobody", "--"])
        .arg(&bin)
        .arg(&file)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs root"), "{stderr}");
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(name))
        .find(|p| p.exists())
        .ok_or(())
}
