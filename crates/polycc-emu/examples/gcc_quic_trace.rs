//! One bulk GCC flow over QUIC in the emulated testbed (the scenario of the test
//! `gcc_over_quic_runs_on_the_receiver_s_arrivals_with_a_short_queue`: 10 Mbit/s, 20 ms, a
//! 4-BDP drop-tail buffer) and GCC's telemetry over time, to find why its utilisation varies
//! from run to run (issue 17). As root:
//! `cargo run --release -p polycc-emu --example gcc_quic_trace [SECONDS [emu|sim [BIN_MS
//! [RATE_MBPS]]]]` (default 4 s in the emulator, 100 ms bins, a 10 Mbit/s link; `sim` runs the simulator instead). Prints one row
//! per bin of the flows table (target,
//! delay- and loss-based estimates, received rate and link-capacity estimate, the trendline's
//! modified trend and threshold, the probe, the rate control state, the link's queue delay), then the link's utilisation after 2 s.

use polycc_sim::{Column, RunOutput, Table};

fn scenario(secs: f64, bin_ms: f64, rate_mbps: f64) -> polycc_sim::Model {
    let text = format!(
        r#"
name = "gcc-quic-trace"
duration = "{secs}s"
bin = "{bin_ms}ms"
[[links]]
id = "bottleneck"
rate = "{rate_mbps}Mbps"
queue = {{ kind = "droptail", size = "4bdp" }}
[[flows]]
id = "f"
cca = "gcc"
rtt = "20ms"
stack = "quic"
"#
    );
    let origin = polycc_sim::Origin {
        name: "gcc-quic-trace".into(),
        base_dir: ".".into(),
    };
    polycc_sim::load_toml(&text, &origin, &polycc::Registry::standard()).expect("valid")
}

fn col(t: &Table, name: &str) -> Vec<f64> {
    match t.column(name) {
        Some(Column::F64(v)) => v.clone(),
        _ => Vec::new(),
    }
}

fn utilisation_after(out: &RunOutput, from_s: f64) -> f64 {
    let (t, tput, cap) = (
        col(&out.links, "t_s"),
        col(&out.links, "throughput_mbps"),
        col(&out.links, "capacity_mbps"),
    );
    let (mut sent, mut capacity) = (0.0, 0.0);
    for i in (0..t.len()).filter(|&i| t[i] >= from_s) {
        sent += tput[i];
        capacity += cap[i];
    }
    sent / capacity
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().map_or(Ok(4.0), |s| s.parse())?;
    let sim = args.next().as_deref() == Some("sim");
    let bin_ms: f64 = args.next().map_or(Ok(100.0), |s| s.parse())?;
    let rate_mbps: f64 = args.next().map_or(Ok(10.0), |s| s.parse())?;
    let model = scenario(secs, bin_ms, rate_mbps);
    let registry = polycc::Registry::standard();
    let out = if sim {
        polycc_sim::run(&model, &registry)?
    } else {
        polycc_emu::run(&model, &registry, &Default::default())?
    };
    let names = [
        "t_s",
        "throughput_mbps",
        "rtt_ms",
        "cc_target_mbps",
        "cc_delay_based_mbps",
        "cc_loss_based_mbps",
        "cc_received_mbps",
        "cc_link_capacity_mbps",
        "cc_modified_trend",
        "cc_threshold",
        "cc_probe_mbps",
    ];
    let cols: Vec<Vec<f64>> = names
        .iter()
        .map(|n| out.flows.f64s(n).unwrap_or_default())
        .collect();
    let state = out.flows.strs("cc_state").unwrap_or_default();
    let qd = out.links.f64s("queue_delay_ms").unwrap_or_default();
    println!("{} cc_state queue_delay_ms", names.join(" "));
    let rows = cols[0].len();
    for i in 0..rows {
        let vals: Vec<String> = cols
            .iter()
            .map(|c| c.get(i).map_or("-".into(), |v| format!("{v:.3}")))
            .collect();
        println!(
            "{} {} {:.2}",
            vals.join(" "),
            state.get(i).map_or("-", String::as_str),
            qd.get(i).copied().unwrap_or(f64::NAN)
        );
    }
    let names: Vec<&str> = out.flows.columns.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!("flow columns: {}", names.join(" "));
    println!("utilisation after 2 s {:.3}", utilisation_after(&out, 2.0));
    Ok(())
}
