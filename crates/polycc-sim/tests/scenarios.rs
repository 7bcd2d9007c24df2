//! End-to-end behaviour of whole scenarios: delay-based control, trace-driven links, determinism.

mod common;
use common::{run, traces_dir};

#[test]
fn vegas_keeps_between_alpha_and_beta_packets_queued() {
    let out = run(r#"
        name = "vegas"
        duration = "30s"
        [[links]]
        id = "b"
        rate = "20Mbps"
        queue = { size = "2bdp" }
        [[flows]]
        id = "v"
        cca = "vegas"
        rtt = "40ms"
    "#);
    let t = out.links.f64s("t_s").unwrap();
    let q = out.links.f64s("queue_bytes").unwrap();
    let steady: Vec<f64> = t
        .iter()
        .zip(&q)
        .filter(|(t, _)| **t >= 5.0)
        .map(|(_, q)| *q / 1500.0)
        .collect();
    let mean = steady.iter().sum::<f64>() / steady.len() as f64;
    assert!((2.0..=4.0).contains(&mean), "mean queue {mean:.2} packets");
    assert!(
        out.summary.links[0].utilization > 0.9,
        "utilisation {}",
        out.summary.links[0].utilization
    );
}

#[test]
fn trace_link_delivers_the_trace_capacity() {
    let Some(dir) = traces_dir() else {
        eprintln!(
            "SKIP: ../shared/traces not found; the trace-link test needs Verizon-LTE-short.down"
        );
        return;
    };
    let path = dir.join("Verizon-LTE-short.down");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count() as f64;
    let period_s: f64 = text
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap()
        .trim()
        .parse::<f64>()
        .unwrap()
        / 1e3;
    let expected_mbps = lines * 1500.0 * 8.0 / period_s / 1e6;
    let out = run(&format!(
        r#"
        name = "verizon"
        duration = "{period_s}s"
        [[links]]
        id = "cell"
        trace = "{}"
        queue = {{ size = "500pkt" }}
        [[flows]]
        id = "c"
        cca = "cubic"
        rtt = "40ms"
        "#,
        path.display()
    ));
    let l = &out.summary.links[0];
    assert!(
        (l.capacity_mbps / expected_mbps - 1.0).abs() < 0.01,
        "capacity {} vs {expected_mbps}",
        l.capacity_mbps
    );
    assert!(l.utilization > 0.80, "utilisation {}", l.utilization);
}

const RANDOM_SCENARIO: &str = r#"
    name = "det"
    duration = "10s"
    seed = SEED
    [[links]]
    id = "b"
    rate = "30Mbps"
    loss = 0.005
    jitter = { max = "3ms" }
    [[flows]]
    id = "a"
    cca = "cubic"
    rtt = "30ms"
    [[flows]]
    id = "w"
    cca = "newreno"
    rtt = "50ms"
    traffic = { kind = "web", size = "100KB", interval = "500ms" }
"#;

fn summary_json(seed: u64) -> serde_json::Value {
    let out = run(&RANDOM_SCENARIO.replace("SEED", &seed.to_string()));
    let mut v = serde_json::to_value(&out.summary).unwrap();
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

#[test]
fn same_seed_same_summary_other_seed_differs() {
    let a = summary_json(1);
    assert_eq!(a, summary_json(1));
    assert_ne!(a, summary_json(2));
}

#[test]
fn web_flows_complete_transfers_and_report_fct() {
    let out = run(&RANDOM_SCENARIO.replace("SEED", "5"));
    let w = &out.summary.flows[1];
    assert!(w.transfers_completed >= 10, "{w:?}");
    // 100 KB over a 50 ms path takes several RTTs of slow start: more than 2 RTTs, well under 2 s.
    let fct = w.fct_s.unwrap();
    assert!(fct > 0.1 && fct < 2.0, "fct {fct}");
    // The transfers' distribution: its mean is `fct_s`, ordered percentiles, every transfer at
    // least two RTTs (handshake-free slow start of 100 KB from 10 packets).
    let d = w
        .fct_dist_s
        .as_ref()
        .expect("web flows report the distribution");
    assert_eq!(d.mean, fct);
    assert!(
        0.1 < d.min && d.min <= d.p50 && d.p50 <= d.p95 && d.p95 <= d.p99,
        "{d:?}"
    );
    assert!(
        out.summary.flows[0].fct_dist_s.is_none(),
        "a bulk flow has none"
    );
}

#[test]
fn transfers_table_holds_each_request_and_agrees_with_the_summary() {
    let out = run(&RANDOM_SCENARIO.replace("SEED", "5"));
    let t = &out.transfers;
    let flows = t.strs("flow").unwrap();
    // Only the web flow has transfers; the bulk flow has no rows.
    assert!(t.rows >= 15 && flows.iter().all(|f| f == "w"), "{t:?}");
    let (req, start, done, fct) = (
        t.f64s("requested_s").unwrap(),
        t.f64s("started_s").unwrap(),
        t.f64s("completed_s").unwrap(),
        t.f64s("fct_s").unwrap(),
    );
    assert!(t.f64s("bytes").unwrap().iter().all(|&b| b == 100e3));
    assert!(req.windows(2).all(|w| w[0] <= w[1]), "requests in order");
    for i in 0..t.rows {
        if done[i].is_nan() {
            assert!(fct[i].is_nan());
            continue;
        }
        // The default stack makes no handshake: the connection is there when the transfer starts.
        assert!(req[i] <= start[i] && start[i] < done[i], "row {i}");
        assert_eq!(t.f64s("connected_s").unwrap()[i], start[i], "row {i}");
        assert!((fct[i] - (done[i] - req[i])).abs() < 1e-9, "row {i}");
    }
    // The completed rows are the summary's transfers: the same count and the same mean.
    let completed: Vec<f64> = fct.iter().copied().filter(|x| !x.is_nan()).collect();
    let w = &out.summary.flows[1];
    assert_eq!(completed.len() as u64, w.transfers_completed);
    let mean = completed.iter().sum::<f64>() / completed.len() as f64;
    assert!(
        (mean - w.fct_s.unwrap()).abs() < 1e-9,
        "{mean} vs {:?}",
        w.fct_s
    );
}

#[test]
fn sized_flow_reports_its_completion_time() {
    let out = run(r#"
        name = "sized"
        duration = "10s"
        [[links]]
        id = "b"
        rate = "100Mbps"
        [[flows]]
        id = "s"
        cca = "newreno"
        rtt = "20ms"
        traffic = { kind = "sized", size = "1MB" }
    "#);
    let f = &out.summary.flows[0];
    assert_eq!(f.bytes_delivered, 1_000_000);
    // Slow start from 10 packets: 1 MB needs about 7 rounds of 20 ms.
    let fct = f.fct_s.unwrap();
    assert!(fct > 0.10 && fct < 0.25, "fct {fct}");
}
