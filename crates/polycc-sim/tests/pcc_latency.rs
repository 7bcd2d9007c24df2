//! PCC Allegro's latency utility (Allegro NSDI'15 §4.4.1, `utility = "allegro-latency"`) alone on a
//! FIFO bottleneck with a deep buffer: the utility must not fill the buffer it is meant to keep
//! short. The Janus reproduction runs it as "PCC-rtt" (Janus Fig. 13).

mod common;
use common::run;

#[test]
fn latency_utility_keeps_a_deep_fifo_mostly_empty() {
    // Janus Fig. 13's link without the web flows: 15 Mbit/s, RTT 60 ms, 200 packets (160 ms).
    let out = run(r#"
        name = "pcc-rtt-alone"
        duration = "60s"
        [[links]]
        id = "b"
        rate = "15Mbps"
        queue = { kind = "droptail", size = "200pkt" }
        [[flows]]
        id = "a"
        cca = { name = "pcc-allegro", utility = "allegro-latency" }
        rtt = "60ms"
    "#);
    let f = &out.summary.flows[0];
    eprintln!(
        "pcc-rtt alone: goodput {:.2} Mbit/s, queueing delay mean {:.1} ms, loss {:.4}",
        f.goodput_mbps, f.queue_delay_ms.mean, f.loss_rate
    );
    // With the authors' Sigmoid_10 RTT factor: 35.2 ms mean at 14.14 Mbit/s, 1.2 % loss. The
    // paper's bare ratio RTT_(n−1)/RTT_n kept 86.5 ms (over half the buffer) at 14.03 Mbit/s
    // and 1.8 % loss.
    assert!(
        f.queue_delay_ms.mean < 50.0,
        "mean queue {} ms",
        f.queue_delay_ms.mean
    );
    assert!(f.goodput_mbps > 13.5, "goodput {}", f.goodput_mbps);
}
