//! The emulator's timing error and CPU cost, for BENCHMARKS.md (as root):
//! `cargo run --release -p polycc-emu --example emu_timing`
//!
//! Per link rate: ICMP echo RTT over a 2 × 20 ms path against the configured RTT; a UDP stream
//! at twice the rate (the link saturated): the rate delivered; and a stream at 95 % of the
//! rate: the emulator thread's CPU time per second.

use polycc_emu::probe::{self, IP_UDP_HEADERS};
use polycc_emu::testbed::Testbed;
use std::time::Duration;

fn scenario(rate: &str) -> polycc_sim::Model {
    let text = format!(
        r#"
name = "timing"
[[links]]
id = "l"
rate = "{rate}"
delay = "20ms"
queue = {{ kind = "droptail", size = "2bdp" }}
[[flows]]
id = "unused"
cca = "cubic"
stack = "linux"
rtt = "1ms"
"#
    );
    let origin = polycc_sim::Origin {
        name: "timing".into(),
        base_dir: ".".into(),
    };
    polycc_sim::load_toml(&text, &origin, &polycc::Registry::standard()).expect("valid")
}

fn main() -> Result<(), polycc_emu::EmuError> {
    println!("| rate | ping RTT − configured: median / mean / p99 (ms) | rate delivered (saturated) | emulator CPU at 95 % load |");
    println!("|---|---|---|---|");
    for (rate, bps) in [("10Mbps", 10e6), ("50Mbps", 50e6), ("100Mbps", 100e6)] {
        let bed = Testbed::start(&scenario(rate))?;
        let mut rtts = probe::ping(&bed, 200, 56, Duration::from_millis(5))?;
        bed.finish()?;
        rtts.sort_by(f64::total_cmp);
        let configured = 40.0 + 2.0 * ((IP_UDP_HEADERS + 56) * 8) as f64 / bps * 1e3;
        let q = |p: f64| rtts[((rtts.len() - 1) as f64 * p) as usize] - configured;
        let mean = rtts.iter().sum::<f64>() / rtts.len() as f64 - configured;

        let bed = Testbed::start(&scenario(rate))?;
        let saturated = probe::stream(&bed, 2.0 * bps, 4.0)?;
        bed.finish()?;

        let bed = Testbed::start(&scenario(rate))?;
        let secs = 5.0;
        probe::stream(&bed, 0.95 * bps, secs)?;
        let cpu = bed.finish()?.cpu_s;
        println!(
            "| {rate} | {:+.3} / {mean:+.3} / {:+.3} | {:.3} Mbit/s ({:+.2} %) | {:.0} % of a core |",
            q(0.5),
            q(0.99),
            saturated.rate_between(1.0, 3.5) / 1e6,
            (saturated.rate_between(1.0, 3.5) / bps - 1.0) * 100.0,
            cpu / (secs + 0.5) * 100.0
        );
    }
    Ok(())
}
