//! Janus on kernel TCP through the agent, its intent set by the scenario: a flow wanting
//! 8 Mbit/s on 10 Mbit/s is conservative once its target is met, turns aggressive while
//! unresponsive cross traffic holds it below its target, and conservative again after (a short
//! version of the simulator's Fig. 6 test, `polycc-sim/tests/janus.rs`).

use polycc_tcp::CONTROLLER;

#[test]
fn janus_on_kernel_tcp_switches_stage_through_a_burst_of_cross_traffic() {
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
        eprintln!("SKIPPED janus on kernel TCP: {e}");
        return;
    }
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
    let origin = polycc_sim::Origin {
        name: "janus-tcp.toml".into(),
        base_dir: ".".into(),
    };
    let registry = polycc::Registry::standard();
    let m = polycc_sim::load_toml(text, &origin, &registry).expect("scenario");
    let out = polycc_emu::run(&m, &registry, &Default::default()).expect("emulated run");
    let t = out.flows.f64s("t_s").expect("t_s");
    let flows = out.flows.strs("flow").expect("flow");
    let stage = out.flows.f64s("cc_stage").expect("Janus' stage column");
    let good = out.flows.f64s("goodput_mbps").expect("goodput");
    let pick = |col: &[f64], from: f64, to: f64| -> Vec<f64> {
        (0..t.len())
            .filter(|&k| flows[k] == "janus" && t[k] >= from && t[k] < to && col[k].is_finite())
            .map(|k| col[k])
            .collect()
    };
    let before = pick(&stage, 1.5, 2.5);
    let burst = pick(&stage, 2.5, 4.5);
    let after = pick(&stage, 5.0, 6.0);
    let late_goodput = pick(&good, 5.0, 6.0);
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
