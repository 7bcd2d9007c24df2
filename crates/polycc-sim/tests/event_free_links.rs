//! Event-free service of constant-rate drop-tail links must simulate the same network as the
//! general path (one event per departure): identical results where no two events share a
//! nanosecond, and the same behaviour within noise where ties reorder a few events.

mod common;
use polycc::Registry;
use polycc_sim::engine::Options;
use polycc_sim::RunOutput;

fn both(toml: &str) -> (RunOutput, RunOutput) {
    let registry = Registry::standard();
    let model = polycc_sim::load_toml(toml, &common::origin(), &registry).unwrap();
    let run = |event_free_links| {
        polycc_sim::run_with(&model, &registry, Options { event_free_links }).unwrap()
    };
    (run(true), run(false))
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

/// A 14.9 Mbit/s constant-rate source into a 10 Mbit/s link: a standing queue at its limit and
/// steady tail drops. The source's 805.37 µs spacing never meets the link's 1.2 ms service
/// times on the same nanosecond, so both paths must agree exactly, bin by bin.
#[test]
fn an_overloaded_link_gives_identical_counters_bin_by_bin() {
    let (fast, general) = both(
        r#"
name = "overload"
duration = "5s"
bin = "100ms"
[[links]]
id = "l"
rate = "10Mbps"
queue = { kind = "droptail", size = "100pkt" }
[[flows]]
id = "cbr"
rtt = "20ms"
traffic = { kind = "cbr", rate = "14.9Mbps" }
"#,
    );
    let (f, g) = (&fast.summary.links[0], &general.summary.links[0]);
    assert!(f.drops > 1000, "drops {}", f.drops);
    assert_eq!(f.drops, g.drops);
    assert_eq!(f.utilization, g.utilization);
    assert_eq!(f.queue_delay_ms.mean, g.queue_delay_ms.mean);
    assert_eq!(f.queue_delay_ms.p95, g.queue_delay_ms.p95);
    for col in [
        "throughput_mbps",
        "queue_bytes",
        "queue_packets",
        "queue_delay_ms",
        "drops",
    ] {
        assert_eq!(
            fast.links.f64s(col).unwrap(),
            general.links.f64s(col).unwrap(),
            "{col}"
        );
    }
    assert_eq!(
        fast.summary.flows[0].bytes_delivered,
        general.summary.flows[0].bytes_delivered
    );
    assert_eq!(
        fast.summary.flows[0].rtt_ms.p50,
        general.summary.flows[0].rtt_ms.p50
    );
    // One event fewer per packet that crosses the link.
    let carried = f.utilization * 5.0 * 10e6 / 8.0 / 1500.0;
    let saved = general.summary.events - fast.summary.events;
    assert!(
        saved as f64 > 0.95 * carried,
        "saved {saved} events for {carried} packets"
    );
}

/// Responsive flows over two links with a congested reverse direction (ACKs queue too) and a
/// flow in each direction: ties do occur, so compare within noise.
#[test]
fn a_parking_lot_with_a_congested_reverse_path_behaves_the_same() {
    let (fast, general) = both(
        r#"
name = "parking-lot"
duration = "8s"
seed = 3
[[links]]
id = "a"
rate = "40Mbps"
reverse_rate = "1Mbps"
delay = "5ms"
queue = { kind = "droptail", size = "1bdp" }
[[links]]
id = "b"
rate = "20Mbps"
reverse_rate = "10Mbps"
queue = { kind = "droptail", size = "60pkt" }
[[flows]]
id = "long"
cca = "cubic"
rtt = "30ms"
path = ["a", "b"]
[[flows]]
id = "short"
cca = "newreno"
rtt = "50ms"
path = ["a"]
[[flows]]
id = "back"
cca = "bbr"
rtt = "40ms"
path = ["b"]
reverse = true
"#,
    );
    let a = &fast.summary.accounting;
    assert_eq!(
        a.sent_bytes,
        a.delivered_bytes + a.dropped_bytes + a.in_network_bytes
    );
    for (f, g) in fast.summary.flows.iter().zip(&general.summary.flows) {
        println!(
            "{}: goodput {:.3} vs {:.3} Mbit/s",
            f.id, f.goodput_mbps, g.goodput_mbps
        );
        assert!(f.goodput_mbps > 0.5, "{} starved", f.id);
        assert!(
            rel(f.goodput_mbps, g.goodput_mbps) < 0.05,
            "{}: {} vs {}",
            f.id,
            f.goodput_mbps,
            g.goodput_mbps
        );
    }
    for (f, g) in fast.summary.links.iter().zip(&general.summary.links) {
        assert!(
            (f.utilization - g.utilization).abs() < 0.02,
            "{}: {} vs {}",
            f.id,
            f.utilization,
            g.utilization
        );
    }
    assert!(fast.summary.events < general.summary.events * 4 / 5);
}
