//! The simulator's model of the Linux stack (`stack = "linux"`) against the real kernel: the
//! same scenario runs in the simulator and on the kernel's TCP in the emulator, and the two
//! agree on goodput (within 10 %) and mean RTT (within 15 %). About 25 s of real time.

mod common;

use common::{emulator_available, model};
use polycc_sim::{Column, RunOutput};

/// A 20 Mbit/s, 40 ms path with `queue` and `loss`, one flow of kernel controller `cca`.
fn scenario(cca: &str, secs: u32, queue: &str, loss: f64) -> String {
    format!(
        r#"
name = "{cca}-vs-kernel"
duration = "{secs}s"
[[links]]
id = "bottleneck"
rate = "20Mbps"
loss = {loss}
queue = {{ kind = "droptail", size = "{queue}" }}
[[flows]]
id = "f"
cca = "{cca}"
stack = "linux"
rtt = "40ms"
"#
    )
}

struct Both {
    sim: RunOutput,
    emu: RunOutput,
}

fn run_both(toml: &str) -> Both {
    let m = model(toml);
    let registry = polycc::Registry::standard();
    let sim = polycc_sim::run(&m, &registry).expect("simulated");
    let emu = polycc_emu::run(&m, &registry, &Default::default()).expect("emulated");
    Both { sim, emu }
}

impl Both {
    /// (sim, kernel) goodput in Mbit/s and mean RTT in ms, printed for the record.
    fn numbers(&self, row: &str) -> ((f64, f64), (f64, f64)) {
        let (s, e) = (&self.sim.summary.flows[0], &self.emu.summary.flows[0]);
        eprintln!(
            "{row}: goodput sim {:.2} kernel {:.2} Mbit/s; mean RTT sim {:.1} kernel {:.1} ms; \
             retransmits sim {} kernel {}",
            s.goodput_mbps,
            e.goodput_mbps,
            s.rtt_ms.mean,
            e.rtt_ms.mean,
            s.retransmits,
            e.retransmits
        );
        (
            (s.goodput_mbps, e.goodput_mbps),
            (s.rtt_ms.mean, e.rtt_ms.mean),
        )
    }

    fn assert_agree(&self, row: &str) {
        let ((gs, ge), (rs, re)) = self.numbers(row);
        assert!((gs - ge).abs() <= 0.10 * ge, "{row}: goodput {gs} vs {ge}");
        assert!((rs - re).abs() <= 0.15 * re, "{row}: RTT {rs} vs {re}");
    }
}

/// The window, in packets, when slow start ended (the first ssthresh recorded).
fn slow_start_exit(out: &RunOutput, packet_bytes: f64) -> f64 {
    let Some(Column::F64(v)) = out.flows.column("cc_ssthresh_bytes") else {
        panic!("no ssthresh column");
    };
    v.iter().find(|x| x.is_finite()).expect("slow start ended") / packet_bytes
}

#[test]
fn the_linux_stack_model_agrees_with_the_kernel() {
    let Some(_one) = emulator_available("the_linux_stack_model_agrees_with_the_kernel") else {
        return;
    };
    // Loss-free, one BDP of buffer: the window-based CUBIC and the paced BBR v1.
    run_both(&scenario("cubic", 5, "1bdp", 0.0)).assert_agree("cubic 1 BDP");
    run_both(&scenario("bbr", 5, "1bdp", 0.0)).assert_agree("bbr 1 BDP");
    // 0.5 % random loss: the Reno-friendly region, loss recovery and timeouts decide.
    run_both(&scenario("cubic", 8, "1bdp", 0.005)).assert_agree("cubic 0.5 % loss");
    // A deep buffer: where Linux's HyStart ends slow start (the kernel reports ssthresh in
    // segments of 1448 bytes; the simulator in packets of 1500 on the wire).
    let b = run_both(&scenario("cubic", 3, "400pkt", 0.0));
    let (sim, kernel) = (
        slow_start_exit(&b.sim, 1500.0),
        slow_start_exit(&b.emu, 1448.0),
    );
    eprintln!("cubic 400 packets: slow start ends at sim {sim:.0} kernel {kernel:.0} packets");
    // The kernel's HyStart reads ACK trains and delays on real timing, so its exit spreads
    // over runs here (76, 116 and 169 packets seen; the model's is 76). What both must share is
    // that HyStart, not a loss, ends slow start: the path holds one BDP (67 packets) plus 400
    // in the queue, and a loss exit leaves ssthresh at 0.7 of a window past that (over 320).
    // HyStart++, the default stack's, goes on to about 410.
    // Linux's HyStart acts only once the window reaches `hystart_low_window` (16 segments).
    const HYSTART_RANGE: std::ops::Range<f64> = 16.0..250.0;
    for (who, exit) in [("sim", sim), ("kernel", kernel)] {
        assert!(
            HYSTART_RANGE.contains(&exit),
            "{who}: slow start ended at {exit:.0} packets, outside HyStart's range \
             (sim {sim:.0}, kernel {kernel:.0})"
        );
    }
}
