//! The emulated link against analytic values: round-trip time, rate, random loss and the
//! queueing delay of a full drop-tail buffer, measured with probes between the namespaces
//! (`polycc_emu::probe`: they cross every link with no access delay).

mod common;

use common::{emulator_available, model};
use polycc_emu::probe::{self, FULL_PAYLOAD, IP_UDP_HEADERS};
use polycc_emu::testbed::Testbed;
use std::time::Duration;

fn scenario(rate: &str, delay: &str, queue: &str, loss: f64) -> String {
    format!(
        r#"
name = "probe"
duration = "30s"
[[links]]
id = "l"
rate = "{rate}"
delay = "{delay}"
loss = {loss}
queue = {{ kind = "droptail", size = "{queue}" }}
[[flows]]
id = "unused"
cca = "cubic"
stack = "linux"
rtt = "1ms"
"#
    )
}

#[test]
fn ping_round_trip_time_is_the_configured_delay() {
    let Some(_one) = emulator_available("ping_round_trip_time_is_the_configured_delay") else {
        return;
    };
    let bed = Testbed::start(&model(&scenario("100Mbps", "20ms", "100pkt", 0.0))).unwrap();
    const PROBES: u16 = 100;
    const PAYLOAD: usize = 56; // ping's default
    let mut rtts = probe::ping(&bed, PROBES, PAYLOAD, Duration::from_millis(5)).unwrap();
    bed.finish().unwrap();
    assert_eq!(rtts.len(), PROBES as usize, "every echo came back");
    rtts.sort_by(f64::total_cmp);
    // 2 × 20 ms of propagation plus two serialisations of an 84-byte packet at 100 Mbit/s.
    let expected = 40.0 + 2.0 * ((IP_UDP_HEADERS + PAYLOAD) * 8) as f64 / 100e6 * 1e3;
    let median = rtts[rtts.len() / 2];
    let p90 = rtts[rtts.len() * 9 / 10];
    let mean = rtts.iter().sum::<f64>() / rtts.len() as f64;
    eprintln!(
        "ping RTT: expected {expected:.3} ms, min {:.3}, median {median:.3}, p90 {p90:.3}, \
         mean {mean:.3}, max {:.3}",
        rtts[0],
        rtts[rtts.len() - 1]
    );
    assert!(
        rtts[0] >= expected - 0.01,
        "faster than light: {:.3}",
        rtts[0]
    );
    // The emulator's error is in the median; the tail is the host (the pinging thread or the
    // kernel's softirq held up by other work), milliseconds at p99 on a busy 2-core machine
    // (BENCHMARKS.md), so it gets a looser bound.
    assert!((median - expected).abs() < 0.3, "median {median:.3} ms");
    assert!(p90 - expected < 1.0, "p90 {p90:.3} ms");
}

#[test]
fn rate_and_full_buffer_delay_are_the_configured_ones() {
    let Some(_one) = emulator_available("rate_and_full_buffer_delay_are_the_configured_ones")
    else {
        return;
    };
    for (rate, bps) in [("20Mbps", 20e6f64), ("100Mbps", 100e6)] {
        // 50 ms of buffer: the sending thread, a normal one on a busy host, may stall for a
        // few milliseconds without the link running dry.
        let buffer = (0.05 * bps / (1500.0 * 8.0)).round();
        let queue = format!("{buffer}pkt");
        let bed = Testbed::start(&model(&scenario(rate, "5ms", &queue, 0.0))).unwrap();
        let st = probe::stream(&bed, 2.0 * bps, 3.0).unwrap();
        let fin = bed.finish().unwrap();
        assert_eq!(fin.write_failures, 0);
        // Steady state: from 1 s to 2.5 s, the link always has a packet to send.
        let measured = st.rate_between(1.0, 2.5);
        // An admitted packet finds at most `buffer - 1` waiting and one in service (half done
        // on average) ahead of it; then its own serialisation and 5 ms of propagation.
        let expected_delay = 5.0 + (buffer + 0.5) * 1500.0 * 8.0 / bps * 1e3;
        let mut d: Vec<f64> = st
            .between(1.0, 2.5)
            .iter()
            .map(|&i| st.delays_ms[i])
            .collect();
        d.sort_by(f64::total_cmp);
        let median_delay = d[d.len() / 2];
        eprintln!(
            "{rate}: {:.3} Mbit/s measured; one-way delay median {median_delay:.2} ms \
             (expected {expected_delay:.2}); emulator CPU {:.2} s",
            measured / 1e6,
            fin.cpu_s
        );
        assert!(
            (measured / bps - 1.0).abs() < 0.01,
            "{rate}: {:.3} Mbit/s",
            measured / 1e6
        );
        assert!(
            (median_delay - expected_delay).abs() < 0.5,
            "{rate}: median one-way delay {median_delay:.2} ms, expected {expected_delay:.2}"
        );
    }
}

#[test]
fn random_loss_drops_the_configured_fraction() {
    let Some(_one) = emulator_available("random_loss_drops_the_configured_fraction") else {
        return;
    };
    let loss = 0.2;
    let bed = Testbed::start(&model(&scenario("50Mbps", "1ms", "1000pkt", loss))).unwrap();
    // 2 000 datagrams at 10 Mbit/s: well under the rate, so only the random loss drops any.
    let secs = 2000.0 * ((FULL_PAYLOAD + IP_UDP_HEADERS) * 8) as f64 / 10e6;
    let st = probe::stream(&bed, 10e6, secs).unwrap();
    let finished = bed.finish().unwrap();
    let got = st.arrivals.len() as f64 / st.sent as f64;
    // 3 standard deviations of a binomial proportion over 2 000 trials.
    let tolerance = 3.0 * (loss * (1.0 - loss) / st.sent as f64).sqrt();
    eprintln!(
        "delivered {got:.4} of {} datagrams (expected {:.2} ± {tolerance:.4})",
        st.sent,
        1.0 - loss
    );
    assert!((got - (1.0 - loss)).abs() < tolerance, "delivered {got:.4}");
    assert_eq!(finished.write_failures, 0);
}
