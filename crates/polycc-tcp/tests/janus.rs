//! Janus on kernel TCP through the agent, its intent set by the scenario: a flow wanting
//! 8 Mbit/s on 10 Mbit/s is conservative once its target is met, turns aggressive while
//! unresponsive cross traffic holds it below its target, and conservative again after (a short
//! version of the simulator's Fig. 6 test, `polycc-sim/tests/janus.rs`); and a schedule of
//! intents reaches it at its times, in the simulator and the testbed.

use polycc_tcp::CONTROLLER;
use std::sync::{Mutex, MutexGuard};

/// One registration of `polycc` at a time (the kernel knows one controller by a name), and one
/// real-time run at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Whether the shim can run here, held for the test's run (failing under
/// `POLYCC_REQUIRE_EMU=1` when it cannot).
fn shim_runs(test: &str) -> Option<MutexGuard<'static, ()>> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let why = if !polycc_tcp::BUILT {
        Some(polycc_tcp::ShimError::NotBuilt.to_string())
    } else {
        polycc_emu::netns::check_privileges()
            .err()
            .map(|e| e.to_string())
    };
    if let Some(e) = why {
        assert!(
            std::env::var("POLYCC_REQUIRE_EMU").as_deref() != Ok("1"),
            "POLYCC_REQUIRE_EMU=1 but: {e}"
        );
        eprintln!("SKIPPED {test}: {e}");
        return None;
    }
    Some(one)
}

fn load(text: &str, registry: &polycc::Registry) -> polycc_sim::Model {
    let origin = polycc_sim::Origin {
        name: "janus-tcp.toml".into(),
        base_dir: ".".into(),
    };
    polycc_sim::load_toml(text, &origin, registry).expect("scenario")
}

/// One flow's column over `[from, to)`, finite values only.
fn pick(out: &polycc_sim::RunOutput, flow: &str, name: &str, from: f64, to: f64) -> Vec<f64> {
    let t = out.flows.f64s("t_s").expect("t_s");
    let flows = out.flows.strs("flow").expect("flow");
    let col = out.flows.f64s(name).expect(name);
    (0..t.len())
        .filter(|&k| flows[k] == flow && t[k] >= from && t[k] < to && col[k].is_finite())
        .map(|k| col[k])
        .collect()
}

#[test]
fn janus_on_kernel_tcp_switches_stage_through_a_burst_of_cross_traffic() {
    let Some(_one) =
        shim_runs("janus_on_kernel_tcp_switches_stage_through_a_burst_of_cross_traffic")
    else {
        return;
    };
    let text = r#"
name = "janus-tcp"
duration = "6s"
bin = "50ms"
[[links]]
id = "bottleneck"
rate = "10Mbps"
queue = { kind = "droptail", size = "200pkt" }
[[flows]]
id = "janus"
cca = "janus"
stack = "tcp"
rtt = "60ms"
intent = { class = "bandwidth_guarantee", target_rate = "8Mbps" }
[[flows]]
id = "burst"
rtt = "60ms"
start = "2.5s"
stop = "4s"
traffic = { kind = "poisson", rate = "6Mbps" }
"#;
    let registry = polycc::Registry::standard();
    let out = polycc_emu::run(&load(text, &registry), &registry, &Default::default())
        .expect("emulated run");
    let before = pick(&out, "janus", "cc_stage", 1.5, 2.5);
    let burst = pick(&out, "janus", "cc_stage", 2.5, 4.5);
    let after = pick(&out, "janus", "cc_stage", 5.0, 6.0);
    let late_goodput = pick(&out, "janus", "goodput_mbps", 5.0, 6.0);
    let late = late_goodput.iter().sum::<f64>() / late_goodput.len().max(1) as f64;
    eprintln!("stage before {before:?}\nburst {burst:?}\nafter {after:?}\ngoodput after {late:.2}");
    // Janus' stages: 0 conservative, 1 aggressive.
    assert!(
        !before.is_empty() && before.iter().all(|s| *s == 0.0),
        "{before:?}"
    );
    assert!(
        burst.contains(&1.0),
        "aggressive during the burst: {burst:?}"
    );
    assert!(
        !after.is_empty() && after.iter().all(|s| *s == 0.0),
        "{after:?}"
    );
    assert!(late > 7.0, "goodput {late} against the 8 Mbit/s target");
    let registered = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    assert!(!registered.split_whitespace().any(|c| c == CONTROLLER));
}

#[test]
fn an_intent_schedule_reaches_janus_on_kernel_tcp_in_the_simulator_and_the_testbed() {
    let Some(_one) = shim_runs(
        "an_intent_schedule_reaches_janus_on_kernel_tcp_in_the_simulator_and_the_testbed",
    ) else {
        return;
    };
    let text = r#"
name = "janus-tcp-schedule"
duration = "3s"
bin = "50ms"
[[links]]
id = "bottleneck"
rate = "10Mbps"
queue = { kind = "droptail", size = "100pkt" }
[[flows]]
id = "janus"
cca = "janus"
stack = "tcp"
rtt = "40ms"
intent = { class = "bandwidth_guarantee", target_rate = "3Mbps" }
intent_schedule = [{ at = "1.5s", intent = { class = "bandwidth_guarantee", target_rate = "6Mbps" } }]
"#;
    let registry = polycc::Registry::standard();
    let model = load(text, &registry);
    let sim = polycc_sim::run(&model, &registry).expect("simulated run");
    let emu = polycc_emu::run(&model, &registry, &Default::default()).expect("emulated run");
    for (name, out) in [("simulator", &sim), ("testbed", &emu)] {
        // Rows are stamped with their bin's start and hold the value at its end.
        let before = pick(out, "janus", "cc_target_rate_mbps", 0.5, 1.4);
        let after = pick(out, "janus", "cc_target_rate_mbps", 1.5, 3.0);
        eprintln!("{name}: target before {before:?}\nafter {after:?}");
        // Alone on the link, the flow's target is what it asked for: 3, then 6 Mbit/s, which
        // Janus' adaptive target may lower while the flow falls short of it (§4.4), never to
        // the old 3.
        assert!(
            !before.is_empty() && before.iter().all(|r| (r - 3.0).abs() < 0.01),
            "{name}: {before:?}"
        );
        assert!(
            after.iter().any(|r| (r - 6.0).abs() < 0.01) && after.iter().all(|r| *r > 4.0),
            "{name}: {after:?}"
        );
    }
}

#[test]
fn a_dash_players_chunk_bitrate_is_janus_target_on_kernel_tcp_as_in_the_simulator() {
    let Some(_one) =
        shim_runs("a_dash_players_chunk_bitrate_is_janus_target_on_kernel_tcp_as_in_the_simulator")
    else {
        return;
    };
    // The scenario states no intent: the player's is its chunk's bitrate (the ladder's one
    // level here, 4 Mbit/s), set when it asks for the first chunk, as the simulator sets it;
    // Janus's target is then that rate.
    let text = r#"
name = "janus-tcp-dash"
duration = "4s"
bin = "50ms"
[[links]]
id = "bottleneck"
rate = "10Mbps"
queue = { kind = "droptail", size = "100pkt" }
[[flows]]
id = "player"
cca = "janus"
stack = "tcp"
rtt = "40ms"
traffic = { kind = "dash", bitrates = ["4Mbps"], chunk = "1s", buffer = "4s" }
"#;
    let registry = polycc::Registry::standard();
    let model = load(text, &registry);
    let sim = polycc_sim::run(&model, &registry).expect("simulated run");
    let emu = polycc_emu::run(&model, &registry, &Default::default()).expect("emulated run");
    let mut chunks = Vec::new();
    for (name, out) in [("simulator", &sim), ("testbed", &emu)] {
        let target = pick(out, "player", "cc_target_rate_mbps", 0.5, 4.0);
        let s = out.summary.flows[0].streaming.clone().expect("a player");
        eprintln!("{name}: target {target:?}\n{s:?}");
        assert!(
            !target.is_empty() && target.iter().all(|r| (r - 4.0).abs() < 0.01),
            "{name}: {target:?}"
        );
        chunks.push(s.chunks);
    }
    // Janus's rate control holds the flow near its 4 Mbit/s target, so a 1-s chunk takes
    // about a second: three or four in 4 s, alike in both.
    assert!(
        chunks[0] >= 3 && chunks[0].abs_diff(chunks[1]) <= 1,
        "chunks (simulator, testbed) {chunks:?}"
    );
}
