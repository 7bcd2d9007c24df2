//! Memory against simulated time: a flow's state (the receiver's packet-number ranges and
//! arrival runs, the segment sets, the sender's ledger) must not grow with the age of the flow.
//! What does grow is the output: the time series hold one row per flow per 100 ms bin.
//!
//! Each run is measured in a process of its own (this test binary started again on one
//! case), by its peak resident set (`VmHWM`), and by the bytes its output tables hold; the
//! difference is what the engine needed. Run with
//! `cargo test --release -p polycc-sim --test memory -- --ignored --nocapture`
//! (50 CUBIC flows at 1 Gbit/s for 30 s and 600 s: about a minute of CPU; BENCHMARKS.md).

use polycc::Registry;
use polycc_sim::{Column, Origin, Table};
use std::path::PathBuf;
use std::process::Command;

const CHILD_ENV: &str = "POLYCC_MEMORY_CHILD_SECS";

fn scenario(secs: u64) -> String {
    format!(
        r#"
name = "memory-fifty-cubic-1g"
duration = "{secs}s"
seed = 1

[[links]]
id = "bottleneck"
rate = "1Gbps"
queue = {{ kind = "droptail", size = "1bdp" }}

[[flows]]
id = "cubic"
cca = "cubic"
rtt = "40ms"
count = 50
"#
    )
}

/// Resident bytes of a table's columns: the values (a vector's spare capacity is never
/// touched, so it is not resident): 8 bytes a number, 4 a string row's code, and each distinct
/// string once.
fn table_bytes(t: &Table) -> u64 {
    t.columns
        .iter()
        .map(|(_, c)| match c {
            Column::F64(v) => (v.len() * 8) as u64,
            Column::Str(v) => {
                (v.codes().len() * 4) as u64
                    + v.levels().iter().map(|s| 56 + s.len() as u64).sum::<u64>()
            }
        })
        .sum()
}

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The child: runs one case and prints its peak and table sizes.
#[test]
#[ignore = "started by peak_memory_does_not_grow_with_simulated_time"]
fn memory_child() {
    let Some(secs) = std::env::var(CHILD_ENV).ok().and_then(|s| s.parse().ok()) else {
        return;
    };
    let registry = Registry::standard();
    let origin = Origin {
        name: "memory.toml".into(),
        base_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    };
    let model = polycc_sim::load_toml(&scenario(secs), &origin, &registry)
        .unwrap_or_else(|e| panic!("{e}"));
    let out = polycc_sim::run(&model, &registry).unwrap_or_else(|e| panic!("{e}"));
    let tables = table_bytes(&out.flows) + table_bytes(&out.links) + table_bytes(&out.frames);
    println!(
        "MEMORY peak_kb={} tables_kb={} rows={}",
        peak_rss_kb(),
        tables / 1024,
        out.flows.rows
    );
}

/// (peak kB, table kB) of a run of `secs` simulated seconds, in a fresh process.
fn measure(secs: u64) -> (u64, u64) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args(["--ignored", "--exact", "memory_child", "--nocapture"])
        .env(CHILD_ENV, secs.to_string())
        .output()
        .expect("the test binary starts");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("MEMORY"))
        .unwrap_or_else(|| panic!("no measurement from the child:\n{text}"));
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} missing in {line}"))
    };
    println!("{secs:>4} s: {line}");
    (field("peak_kb="), field("tables_kb="))
}

#[test]
#[ignore = "about a minute of CPU: run with --ignored --nocapture (BENCHMARKS.md)"]
fn peak_memory_does_not_grow_with_simulated_time() {
    let (short_peak, short_tables) = measure(30);
    let (long_peak, long_tables) = measure(600);
    let short = short_peak.saturating_sub(short_tables);
    let long = long_peak.saturating_sub(long_tables);
    println!(
        "peak without the output tables: {short} kB (30 s) -> {long} kB (600 s), {:.2}x; \
         with them {short_peak} kB -> {long_peak} kB",
        long as f64 / short as f64
    );
    assert!(
        long as f64 <= 1.5 * short as f64,
        "the engine's memory grew with simulated time: {short} kB -> {long} kB"
    );
}
