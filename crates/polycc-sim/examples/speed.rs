//! Simulator speed: runs scenario files and prints delivered packets per wall-second.
//! `cargo run --release -p polycc-sim --example speed -- scenarios/bench/*.toml`

use std::path::Path;

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: speed SCENARIO.toml...");
        std::process::exit(2);
    }
    println!(
        "{:<28} {:>10} {:>14} {:>10} {:>16} {:>12}",
        "scenario", "wall_s", "delivered_pkts", "events", "pkts_per_wall_s", "utilization"
    );
    for f in files {
        match polycc_sim::run_file(Path::new(&f)) {
            Ok(out) => {
                let s = &out.summary;
                println!(
                    "{:<28} {:>10.3} {:>14} {:>10} {:>16.0} {:>12.4}",
                    s.name,
                    s.wall_s,
                    s.delivered_packets,
                    s.events,
                    s.delivered_packets as f64 / s.wall_s,
                    s.links.first().map_or(0.0, |l| l.utilization)
                );
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
    }
}
