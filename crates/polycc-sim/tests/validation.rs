//! Validation of the simulator against analytic results. Each test can fail: the tolerances are
//! those the literature uses for these models.

mod common;
use common::run;

#[test]
fn newreno_fills_a_one_bdp_buffer_link() {
    let out = run(r#"
        name = "newreno-1bdp"
        duration = "30s"
        [[links]]
        id = "b"
        rate = "100Mbps"
        queue = { size = "1bdp" }
        [[flows]]
        id = "a"
        cca = "newreno"
        rtt = "30ms"
    "#);
    let u = out.summary.links[0].utilization;
    assert!(u >= 0.95, "utilisation {u}");
}

/// Mathis et al. (1997): Reno's throughput under random loss p is MSS/RTT · sqrt(3/(2p)) with an
/// ACK for every packet.
fn mathis_mbps(mss: f64, rtt_s: f64, p: f64) -> f64 {
    mss * 8.0 / rtt_s * (1.5 / p).sqrt() / 1e6
}

fn newreno_under_loss(p: f64) -> (f64, f64) {
    let out = run(&format!(
        r#"
        name = "mathis"
        duration = "120s"
        seed = 7
        [[links]]
        id = "b"
        rate = "100Mbps"
        queue = {{ size = "4bdp" }}
        loss = {p}
        [[flows]]
        id = "a"
        cca = "newreno"
        rtt = "30ms"
        "#
    ));
    (
        out.summary.flows[0].goodput_mbps,
        mathis_mbps(1448.0, 0.030, p),
    )
}

#[test]
fn newreno_follows_the_mathis_model_at_0_1_percent_loss() {
    let (got, model) = newreno_under_loss(0.001);
    assert!(
        (got / model - 1.0).abs() <= 0.30,
        "goodput {got:.2} Mbit/s vs Mathis {model:.2}"
    );
}

#[test]
fn newreno_follows_the_mathis_model_at_1_percent_loss() {
    let (got, model) = newreno_under_loss(0.01);
    assert!(
        (got / model - 1.0).abs() <= 0.30,
        "goodput {got:.2} Mbit/s vs Mathis {model:.2}"
    );
}

#[test]
fn cbr_below_capacity_sees_no_queue() {
    let out = run(r#"
        name = "cbr"
        duration = "20s"
        [[links]]
        id = "b"
        rate = "12Mbps"
        [[flows]]
        id = "cbr"
        rtt = "20ms"
        traffic = { kind = "cbr", rate = "10Mbps" }
    "#);
    let l = &out.summary.links[0];
    assert!(
        l.queue_delay_ms.mean < 0.01,
        "mean queueing delay {} ms",
        l.queue_delay_ms.mean
    );
    assert_eq!(l.drops, 0);
    let g = out.summary.flows[0].throughput_mbps;
    assert!((g - 10.0).abs() < 0.05, "CBR throughput {g}");
}

#[test]
fn poisson_arrivals_match_the_md1_mean_wait() {
    // M/D/1: mean wait in queue W = rho / (2 mu (1 - rho)), service time 1/mu = 1500 B at 12 Mbit/s.
    let out = run(r#"
        name = "md1"
        duration = "200s"
        seed = 3
        [[links]]
        id = "b"
        rate = "12Mbps"
        queue = { size = "100000pkt" }
        [[flows]]
        id = "p"
        rtt = "20ms"
        traffic = { kind = "poisson", rate = "9Mbps" }
    "#);
    let service_s = 1500.0 * 8.0 / 12e6;
    let rho = 9.0 / 12.0;
    let expected_ms = rho * service_s / (2.0 * (1.0 - rho)) * 1e3;
    let got = out.summary.links[0].queue_delay_ms.mean;
    assert!(
        (got / expected_ms - 1.0).abs() <= 0.10,
        "mean wait {got:.3} ms vs M/D/1 {expected_ms:.3} ms"
    );
}

#[test]
fn every_byte_is_delivered_dropped_or_in_flight() {
    let out = run(r#"
        name = "conservation"
        duration = "15s"
        [[links]]
        id = "b"
        rate = "50Mbps"
        queue = { size = "0.5bdp" }
        loss = 0.01
        jitter = { max = "5ms", direction = "both" }
        [[flows]]
        id = "a"
        cca = "newreno"
        rtt = "40ms"
        count = 3
        [[flows]]
        id = "c"
        rtt = "25ms"
        traffic = { kind = "cbr", rate = "5Mbps" }
    "#);
    let a = &out.summary.accounting;
    assert!(a.sent_bytes > 10_000_000);
    assert!(a.dropped_bytes > 0 && a.in_network_bytes > 0);
    assert_eq!(
        a.sent_bytes,
        a.delivered_bytes + a.dropped_bytes + a.in_network_bytes,
        "{a:?}"
    );
}

#[test]
fn two_newreno_flows_share_fairly() {
    let out = run(r#"
        name = "fair"
        duration = "60s"
        [[links]]
        id = "b"
        rate = "50Mbps"
        queue = { size = "1bdp" }
        [[flows]]
        id = "a"
        cca = "newreno"
        rtt = "30ms"
        [[flows]]
        id = "b"
        cca = "newreno"
        rtt = "30ms"
        start = "2s"
    "#);
    let j = out.summary.jain_index;
    assert!(
        j >= 0.95,
        "Jain's index {j}: {:?}",
        out.summary
            .flows
            .iter()
            .map(|f| f.goodput_mbps)
            .collect::<Vec<_>>()
    );
}
