//! Each `stack` counts the bytes its real stack counts (`HostModel::counts`): a polycc
//! controller's window, bytes in flight and rates are in the kernel's TCP payload on `"tcp"`
//! and `"linux"`, in UDP payload on `"quic"` (s2n-quic's unit) and in whole packets on
//! `"udp"` (polycc's own UDP sender), while the links carry whole packets on every stack.

mod common;
use common::{mean_goodput_mbps, run};
use polycc_sim::scenario::host::CountedBytes;
use polycc_sim::scenario::linux_stack;
use polycc_sim::RunOutput;

/// Janus wanting 8 Mbit/s alone on 20 Mbit/s, 60 ms: its window is clamped at
/// (1 + ε)·R·RTT in the stack's bytes, so what it carries on the wire scales with how many
/// of a packet's bytes the stack counts.
fn janus(stack: &str) -> String {
    format!(
        r#"
name = "counted-bytes"
duration = "12s"
bin = "100ms"

[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = {{ kind = "droptail", size = "200pkt" }}

[[flows]]
id = "janus"
cca = "janus"
stack = "{stack}"
rtt = "60ms"
intent = {{ class = "bandwidth_guarantee", target_rate = "8Mbps" }}
"#
    )
}

fn inflight_pairs(out: &RunOutput) -> Vec<(f64, f64)> {
    let counted = out.flows.f64s("inflight_bytes").expect("inflight_bytes");
    let wire = out
        .flows
        .f64s("cc_inflight_wire_bytes")
        .expect("cc_inflight_wire_bytes");
    counted
        .iter()
        .zip(wire)
        .filter(|(c, _)| c.is_finite() && **c > 0.0)
        .map(|(c, w)| (*c, w))
        .collect()
}

#[test]
fn each_stack_counts_what_its_real_stack_counts() {
    let model = |stack: &str| {
        common::load(&janus(stack)).expect("valid").flows[0]
            .host
            .counts
    };
    assert_eq!(model("quic"), CountedBytes::UdpPayload);
    assert_eq!(model("udp"), CountedBytes::Packet);
    assert_eq!(model("tcp"), CountedBytes::TcpPayload);
    assert_eq!(linux_stack::host("cubic").counts, CountedBytes::TcpPayload);
    assert_eq!(CountedBytes::TcpPayload.uncounted(52), 52);
    assert_eq!(CountedBytes::UdpPayload.uncounted(52), 28);
    // A header shorter than IP's and UDP's is all uncounted.
    assert_eq!(CountedBytes::UdpPayload.uncounted(20), 20);
}

#[test]
fn a_rate_clamped_in_counted_bytes_carries_more_on_the_wire_where_fewer_bytes_count() {
    let goodput = |stack: &str| {
        let out = run(&janus(stack));
        // Full packets in flight: 1472 counted bytes of each 1500 over QUIC, 1448 over TCP.
        let per_packet = match stack {
            "quic" => 1472.0,
            "tcp" => 1448.0,
            _ => 1500.0,
        };
        let pairs = inflight_pairs(&out);
        assert!(!pairs.is_empty(), "{stack}: no bytes in flight");
        for (c, w) in pairs {
            assert_eq!(c % per_packet, 0.0, "{stack}: {c} bytes in flight");
            assert_eq!(w, c / per_packet * 1500.0, "{stack}: {w} on the wire");
        }
        mean_goodput_mbps(&out, "janus", 6.0, 12.0)
    };
    let (udp, quic) = (goodput("udp"), goodput("quic"));
    // Conservative and window-limited on both: the same packets' worth of counted bytes, so
    // the goodput scales by what a packet counts (1500/1472 = 1.019).
    let ratio = quic / udp;
    assert!(
        (1.012..1.026).contains(&ratio),
        "quic {quic:.3} / udp {udp:.3} Mbit/s = {ratio:.4}"
    );
    assert!(udp >= 8.0, "udp {udp:.3} Mbit/s: below the target");
}
