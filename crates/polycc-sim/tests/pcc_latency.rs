//! PCC Allegro's latency utility (Allegro NSDI'15 §4.4.1, `utility = "allegro-latency"`) alone on a
//! FIFO bottleneck with a deep buffer: the utility must not fill the buffer it is meant to keep
//! short. The Janus reproduction runs it as "PCC-rtt" (Janus Fig. 13).

mod common;
use common::run;

/// Allegro §4.4.1: with the latency utility "PCC's self-inflicted latency never exceed[ed] the
/// latency threshold of CoDel", whose target standing queue is 5 ms (CoDel's default).
const CODEL_TARGET_MS: f64 = 5.0;
/// The start-up (doubling past the link rate, then draining what that queued) is over by then:
/// the doubling overshoots to twice the link rate for one MI and the decided rate drains the
/// queue within a few seconds (both rates in this test's run: queue empty from 6 s).
const STEADY_FROM_S: f64 = 15.0;

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
    let t = out.links.f64s("t_s").unwrap();
    let q = out.links.f64s("queue_delay_ms").unwrap();
    let steady: Vec<f64> = (0..t.len())
        .filter(|&i| t[i] >= STEADY_FROM_S && q[i].is_finite())
        .map(|i| q[i])
        .collect();
    let steady_mean = steady.iter().sum::<f64>() / steady.len() as f64;
    let steady_max = steady.iter().cloned().fold(0.0, f64::max);
    eprintln!(
        "pcc-rtt alone: goodput {:.2} Mbit/s, queueing delay mean {:.1} ms (from {STEADY_FROM_S} s: \
         mean {steady_mean:.1} ms, max {steady_max:.1} ms), loss {:.4}",
        f.goodput_mbps, f.queue_delay_ms.mean, f.loss_rate
    );
    // Each MI's RTT factor from the RTT change over that MI (utility.rs, AllegroLatency): from
    // 15 s a mean queue of 1.0 ms (max 9.3 ms), 9.7 ms over the whole run, 14.13 Mbit/s. With
    // the change between consecutive MIs' mean RTTs, half of the trials were inconclusive while
    // the queue grew: from 15 s 14.2 ms (max 114.2 ms), 26.3 ms over the run, 14.10 Mbit/s.
    assert!(
        steady_mean < CODEL_TARGET_MS,
        "mean queue from {STEADY_FROM_S} s: {steady_mean} ms"
    );
    assert!(f.goodput_mbps > 13.5, "goodput {}", f.goodput_mbps);
}
