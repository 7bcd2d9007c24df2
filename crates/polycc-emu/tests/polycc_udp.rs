//! polycc's own sender over UDP in the emulator (`stack = "udp"`) against the simulator on
//! the same scenario: the same controller code, a real network path.

mod common;

use common::emulator_available;
use common::scenario::{Flow, Scenario};
use polycc::Registry;

/// One bulk flow of `cca` over polycc's UDP sender on a 20 Mbit/s, 40 ms path with a one-BDP
/// drop-tail buffer, for 4 s.
fn one_flow(cca: &str) -> Scenario {
    Scenario::new(&format!("one-{cca}"), "4s")
        .droptail_link("bottleneck", "20Mbps", "1bdp")
        .flow(Flow::new("f", cca, "40ms").stack("udp"))
}

#[test]
fn polycc_controllers_over_udp_agree_with_the_simulator() {
    let Some(_one) = emulator_available("polycc_controllers_over_udp_agree_with_the_simulator")
    else {
        return;
    };
    let registry = Registry::standard();
    for cca in ["cubic", "bbr", "vegas"] {
        let m = one_flow(cca).model();
        let emu = polycc_emu::run(&m, &registry, &Default::default()).unwrap();
        let sim = polycc_sim::run(&m, &registry).unwrap();
        let (e, s) = (&emu.summary.flows[0], &sim.summary.flows[0]);
        eprintln!(
            "{cca}: goodput emu {:.2} sim {:.2} Mbit/s; RTT mean emu {:.1} sim {:.1} ms; \
             p50 emu {:.1} sim {:.1}; min emu {:.2} sim {:.2}",
            e.goodput_mbps,
            s.goodput_mbps,
            e.rtt_ms.mean,
            s.rtt_ms.mean,
            e.rtt_ms.p50,
            s.rtt_ms.p50,
            e.rtt_ms.min,
            s.rtt_ms.min
        );
        assert!(
            (e.goodput_mbps / s.goodput_mbps - 1.0).abs() < 0.10,
            "{cca}: goodput emu {} sim {}",
            e.goodput_mbps,
            s.goodput_mbps
        );
        assert!(
            (e.rtt_ms.mean / s.rtt_ms.mean - 1.0).abs() < 0.15,
            "{cca}: RTT emu {} sim {}",
            e.rtt_ms.mean,
            s.rtt_ms.mean
        );
        // The path's base RTT, plus at most a millisecond of host and emulator time.
        assert!(
            e.rtt_ms.min >= 40.0 && e.rtt_ms.min < 41.5,
            "{cca}: {:?}",
            e.rtt_ms
        );
    }
}

#[test]
fn a_sized_flow_completes_and_reports_its_completion_time() {
    let Some(_one) = emulator_available("a_sized_flow_completes_and_reports_its_completion_time")
    else {
        return;
    };
    let m = Scenario::new("sized", "3s")
        .droptail_link("l", "50Mbps", "1bdp")
        .flow(
            Flow::new("s", "cubic", "20ms")
                .stack("udp")
                .traffic(r#"{ kind = "sized", size = "1MB" }"#),
        )
        .model();
    let out = polycc_emu::run(&m, &Registry::standard(), &Default::default()).unwrap();
    let f = &out.summary.flows[0];
    assert_eq!(f.transfers_completed, 1);
    assert!(f.bytes_delivered >= 1_000_000, "{}", f.bytes_delivered);
    // Slow start from 10 packets takes several round trips for 1 MB: at least 4 RTTs, and far
    // less than the run.
    let fct = f.fct_s.unwrap();
    assert!(fct > 0.08 && fct < 1.0, "FCT {fct}");
}
