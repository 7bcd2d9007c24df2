//! BBR v1 (`bbr`) and v3 (`bbr3`) end to end: the published behaviours, with numbers.

mod common;
use common::run;
use polycc_sim::RunOutput;

/// One flow over a 50 Mbit/s bottleneck with `buffer` (e.g. "1bdp") of drop-tail queue.
fn single_flow(cca: &str, duration: &str, buffer: &str, link_extra: &str, rtt: &str) -> RunOutput {
    run(&format!(
        r#"
        name = "bbr"
        duration = "{duration}"
        [[links]]
        id = "b"
        rate = "50Mbps"
        queue = {{ size = "{buffer}" }}
        {link_extra}
        [[flows]]
        id = "a"
        cca = "{cca}"
        rtt = "{rtt}"
        "#
    ))
}

/// Start times (s) of the runs of `state` in the flow's `cc_state` series, and their lengths (s).
fn episodes(out: &RunOutput, state: &str) -> Vec<(f64, f64)> {
    let t = out.flows.f64s("t_s").expect("t_s");
    let st = out.flows.strs("cc_state").expect("cc_state");
    let bin = t.get(1).map_or(0.1, |b| b - t[0]);
    let mut v: Vec<(f64, f64)> = Vec::new();
    let mut inside = false;
    for (i, s) in st.iter().enumerate() {
        if s == state {
            if inside {
                v.last_mut().expect("open episode").1 += bin;
            } else {
                v.push((t[i], bin));
            }
        }
        inside = s == state;
    }
    v
}

#[test]
fn bbr_fills_the_pipe_with_a_short_queue() {
    // 50 Mbit/s, 40 ms, one BDP of buffer: BBR paces at the bottleneck rate, so after STARTUP
    // the queue is what the 5/4 probing phase (v1) or UP (v3) adds, drained right after.
    for cca in ["bbr", "bbr3"] {
        let out = single_flow(cca, "30s", "1bdp", "", "40ms");
        let l = &out.summary.links[0];
        let f = &out.summary.flows[0];
        eprintln!(
            "{cca}: utilisation {:.3}, queue delay mean {:.2} ms p95 {:.2} ms, loss {:.4}",
            l.utilization, l.queue_delay_ms.mean, l.queue_delay_ms.p95, f.loss_rate
        );
        assert!(l.utilization > 0.93, "{cca}: utilisation {}", l.utilization);
        // Well below the 40 ms a full buffer would add (CUBIC fills it).
        assert!(
            l.queue_delay_ms.mean < 8.0,
            "{cca}: mean queueing delay {} ms",
            l.queue_delay_ms.mean
        );
        // Loss only from STARTUP overshooting the 1-BDP buffer.
        assert!(f.loss_rate < 0.005, "{cca}: loss {}", f.loss_rate);
    }
}

#[test]
fn probe_rtt_comes_every_10s_for_v1_and_5s_for_v3() {
    for (cca, interval) in [("bbr", 10.0), ("bbr3", 5.0)] {
        let out = single_flow(cca, "42s", "1bdp", "", "40ms");
        let ep = episodes(&out, "probe_rtt");
        eprintln!("{cca}: probe_rtt episodes (start s, length s) {ep:?}");
        assert!(ep.len() >= (40.0 / interval) as usize - 1, "{cca}: {ep:?}");
        for w in ep.windows(2) {
            let gap = w[1].0 - w[0].0;
            // The next PROBE_RTT is due one interval after the previous one ended (200 ms plus
            // a round at the minimum), give or take a telemetry bin.
            assert!(
                gap > interval && gap < interval + 0.6,
                "{cca}: PROBE_RTT {gap:.2} s after the previous one: {ep:?}"
            );
        }
        for (start, len) in &ep {
            // At least 200 ms, plus up to two rounds to drain and to see one round at the cap.
            assert!(
                (0.2..=0.45).contains(len),
                "{cca}: PROBE_RTT at {start} lasted {len} s"
            );
        }
    }
}

#[test]
fn random_loss_bbr_v1_ignores_it_cubic_collapses_v3_backs_off() {
    let loss = |cca: &str, p: f64| {
        let out = single_flow(cca, "30s", "1bdp", &format!("loss = {p}"), "40ms");
        let u = out.summary.links[0].utilization;
        eprintln!("{cca} at {p} random loss: utilisation {u:.3}");
        (u, out)
    };
    // 1 %: BBR v1 does not treat random loss as congestion.
    let (v1, _) = loss("bbr", 0.01);
    let (cubic, _) = loss("cubic", 0.01);
    // Mathis et al.: 1.22·MSS/(RTT·√p) = 1.22·1448 B·8/(40 ms·0.1) ≈ 3.5 Mbit/s, 7 % of the link.
    assert!(v1 > 0.85, "bbr at 1 % loss: {v1}");
    assert!(cubic < 0.25, "cubic at 1 % loss: {cubic}");
    // 3 %: above v3's 2 % loss threshold each bandwidth probe caps inflight_hi and each lossy
    // round cuts inflight_lo / bw_lo by beta, so v3 sends clearly less than v1, which still
    // ignores the loss.
    let (v1, _) = loss("bbr", 0.03);
    let (v3, out3) = loss("bbr3", 0.03);
    assert!(v1 > 0.75, "bbr at 3 % loss: {v1}");
    assert!(v3 < 0.8 * v1, "bbr3 {v3} vs bbr {v1} at 3 % loss");
    let hi = out3
        .flows
        .f64s("cc_inflight_hi_bytes")
        .expect("inflight_hi");
    assert!(
        hi.iter().any(|x| x.is_finite()),
        "bbr3 never set inflight_hi under 3 % loss"
    );
}

#[test]
fn ack_aggregation_limits_v1_but_not_v3() {
    // ACKs released every 20 ms on a 10 ms path: keeping the link busy needs up to
    // rate·(RTT + 20 ms) = 3 BDP in flight. BBR v1's cwnd is 2·BDP (plus a few packets), so it is
    // cwnd-limited; its delivery-rate samples then measure cwnd/RTT, which sets a lower BtlBw and
    // cwnd again (an equilibrium below capacity, lower still after PROBE_RTT has let the filter
    // restart). v3 adds the measured extra_acked to cwnd. The 4-BDP buffer keeps loss out of it.
    let agg = r#"ack_aggregation = { interval = "20ms" }"#;
    let run_one = |cca: &str| {
        let out = single_flow(cca, "20s", "4bdp", agg, "10ms");
        let u = out.summary.links[0].utilization;
        eprintln!("{cca} with 20 ms ACK aggregation on a 10 ms path: utilisation {u:.3}");
        u
    };
    let v1 = run_one("bbr");
    let v3 = run_one("bbr3");
    assert!(v1 < 0.8, "bbr should be cwnd-limited: {v1}");
    assert!(v3 > 0.9, "bbr3 should cover the aggregation: {v3}");
}
