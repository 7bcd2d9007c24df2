//! Fidelity and latency of polycc controllers on kernel TCP through the shim (BENCHMARKS.md):
//! on emulated links of 20 and 50 Mbit/s × 20 and 80 ms with a one-BDP buffer, one flow for
//! `SECS` seconds each of the kernel's own `cubic` and `bbr`, and of polycc's `cubic` (its
//! defaults, and the Linux model's parameters, `scenario::linux_stack`) and `bbr` through the
//! agent; goodput, mean RTT, the control loop's latency (ACK → decision written, ACK → first
//! ACK the kernel applied it at) and the agent's CPU time per Gbit delivered.
//!
//! `sudo nice -n 10 cargo run --release -p polycc-tcp --features bpf --example shim_bench`
//! (optional arguments: seconds per run, default 10; then the links to run as
//! `RATExRTT`, e.g. `20x80`, default all four).

use polycc::{CcSpec, Registry};
use polycc_sim::scenario::linux_stack;
use polycc_tcp::{Agent, AgentThread};

fn model(rate: u32, rtt: u32, cca: &str, secs: u32) -> polycc_sim::Model {
    let text = format!(
        r#"
name = "bench"
duration = "{secs}s"
[[links]]
id = "b"
rate = "{rate}Mbps"
queue = {{ kind = "droptail", size = "1bdp" }}
[[flows]]
id = "f"
cca = "{cca}"
stack = "linux"
rtt = "{rtt}ms"
"#
    );
    let origin = polycc_sim::Origin {
        name: "bench.toml".into(),
        base_dir: ".".into(),
    };
    polycc_sim::load_toml(&text, &origin, &Registry::standard()).expect("bench scenario")
}

fn percentile(v: &mut [u64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i] as f64 / 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: u32 = args.first().and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut links: Vec<(u32, u32)> = args
        .iter()
        .skip(1)
        .map(|a| {
            a.split_once('x')
                .and_then(|(r, t)| Some((r.parse().ok()?, t.parse().ok()?)))
                .unwrap_or_else(|| {
                    eprintln!(
                        "shim_bench: link {a:?}: expected RATExRTT in Mbit/s and ms, e.g. 20x80"
                    );
                    std::process::exit(2)
                })
        })
        .collect();
    if links.is_empty() {
        links = vec![(20, 20), (20, 80), (50, 20), (50, 80)];
    }
    let registry = Registry::standard();
    println!(
        "| link | controller | goodput Mbit/s | mean RTT ms | ACK→written µs p50/p99 | \
         ACK→applied µs p50/p99 | agent CPU s per Gbit |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (rate, rtt) in links {
        let shim: [(&str, CcSpec); 3] = [
            ("polycc cubic", CcSpec::named("cubic")),
            (
                "polycc cubic (Linux model)",
                linux_stack::controller("cubic").expect("modelled"),
            ),
            ("polycc bbr", CcSpec::named("bbr")),
        ];
        for kernel in ["cubic", "bbr"] {
            let out = polycc_emu::run(
                &model(rate, rtt, kernel, secs),
                &registry,
                &Default::default(),
            )
            .expect("kernel run");
            let f = &out.summary.flows[0];
            println!(
                "| {rate} Mbit/s {rtt} ms | kernel {kernel} | {:.2} | {:.1} | | | |",
                f.goodput_mbps, f.rtt_ms.mean
            );
        }
        for (name, spec) in shim {
            let agent =
                AgentThread::spawn(Agent::for_spec(&spec).expect("spec")).expect("registered");
            let out = polycc_emu::run(
                &model(rate, rtt, polycc_tcp::CONTROLLER, secs),
                &registry,
                &Default::default(),
            )
            .expect("shim run");
            let mut s = agent.stop().expect("agent");
            let f = &out.summary.flows[0];
            let gbit = f.bytes_delivered as f64 * 8.0 / 1e9;
            println!(
                "| {rate} Mbit/s {rtt} ms | {name} | {:.2} | {:.1} | {:.0} / {:.0} | {:.0} / {:.0} \
                 | {:.3} |",
                f.goodput_mbps,
                f.rtt_ms.mean,
                percentile(&mut s.decide_latency_ns, 0.5),
                percentile(&mut s.decide_latency_ns, 0.99),
                percentile(&mut s.apply_latency_ns, 0.5),
                percentile(&mut s.apply_latency_ns, 0.99),
                s.cpu_ns as f64 / 1e9 / gbit.max(1e-9),
            );
            eprintln!(
                "  {name}: {} reports, {} decisions, {} built, cpu {:.3} s",
                s.reports,
                s.decisions_written,
                s.controllers_built,
                s.cpu_ns as f64 / 1e9
            );
        }
    }
}
