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

/// One flow alone on a link that is 10 Mbit/s throughout (§3.2's rate after the halving), 100 ms
/// base RTT, 250 KB drop-tail buffer, 10 ms bins.
fn fixed_10mbps(cca: &str) -> RunOutput {
    run(&format!(
        r#"
        name = "bbr-fixed-rate"
        duration = "20s"
        bin = "10ms"
        [[links]]
        id = "b"
        rate = "10Mbps"
        queue = {{ kind = "droptail", size = "250KB" }}
        [[flows]]
        id = "a"
        cca = {cca}
        rtt = "100ms"
        "#
    ))
}

/// Per bin from `from_s` on: (cc_state, bandwidth estimate in Mbit/s from column `bw`, mean
/// queueing delay of the bottleneck in ms or NaN when no packet left it).
fn bins(out: &RunOutput, bw: &str, from_s: f64) -> Vec<(String, f64, f64)> {
    let t = out.flows.f64s("t_s").expect("t_s");
    let st = out.flows.strs("cc_state").expect("cc_state");
    let est = out.flows.f64s(bw).expect("bandwidth estimate");
    let link = out.links.strs("link").expect("link");
    let q = out.links.f64s("queue_delay_ms").expect("queue_delay_ms");
    let q: Vec<f64> = (0..link.len())
        .filter(|&i| link[i] == "b")
        .map(|i| q[i])
        .collect();
    assert_eq!(q.len(), t.len(), "one flow: one link row per flow row");
    (0..t.len())
        .filter(|&i| t[i] >= from_s)
        .map(|i| (st[i].clone(), est[i], q[i]))
        .collect()
}

fn mean_queue_ms(bins: &[(String, f64, f64)], state: &str) -> f64 {
    let q: Vec<f64> = bins
        .iter()
        .filter(|b| b.0 == state && b.2.is_finite())
        .map(|b| b.2)
        .collect();
    assert!(!q.is_empty(), "no {state} bins");
    q.iter().sum::<f64>() / q.len() as f64
}

/// Link rate of [`fixed_10mbps`], bytes per second, and its packet (MSS + header, 1500 B).
const FIXED_RATE_BPS: f64 = 10e6 / 8.0;
const PACKET: f64 = 1500.0;
/// Min RTT on that path: 100 ms plus one packet's serialisation (1.2 ms).
const FIXED_MIN_RTT_S: f64 = 0.100 + PACKET / FIXED_RATE_BPS;
/// Linux `bbr_pacing_margin_percent`: BBR paces 1 % below its estimate.
const PACING_MARGIN: f64 = 0.01;

/// The standing queue (ms) BBR v1 keeps at the end of its 3/4 phase: the phase ends as soon as
/// in flight <= `bbr_inflight(bw, 1)`, which is the BDP rounded up to packets plus Linux's
/// quantization budget of 3 TSO bursts (`tso_segs` packets each), rounded up to an even count.
fn v1_budget_queue_ms(tso_segs: f64) -> f64 {
    let bdp = FIXED_RATE_BPS * FIXED_MIN_RTT_S / PACKET;
    let target = ((bdp.ceil() + 3.0 * tso_segs) / 2.0).ceil() * 2.0;
    (target - bdp) * PACKET / FIXED_RATE_BPS * 1e3
}

#[test]
fn bbr_v1_on_a_fixed_rate_link_keeps_the_gain_cycle_queue_plus_the_quantization_budget() {
    // BtlBw is a max of delivery-rate samples; on a constant-rate link none may exceed the rate.
    // Mean queueing delay over PROBE_BW is bounded by two terms:
    // - the gain cycle: the 5/4 phase adds a quarter of min RTT of queue over one phase and the
    //   3/4 phase removes it over the next: a triangle of height R/4 and base 2R in a cycle of
    //   8R, so R/32 on average (3.2 ms here);
    // - the floor where the 3/4 phase stops (Linux `bbr_is_next_cycle_phase`), BDP plus the
    //   quantization budget: 3 bursts of 2 segments at 10 Mbit/s (`bbr_min_tso_segs`), 9.2 ms
    //   here with the rounding, drained only by the 1 % pacing margin in the six 1.0 phases.
    // The margin removes at most 1 % of min RTT per 1.0 phase, 6.1 ms over the six, which
    // bounds the mean from below. ns-3's one-segment send quantum (`send_quantum_packets = 1`)
    // lowers the floor to 4.4 ms, and the mean queue with it.
    let gain_cycle_ms = FIXED_MIN_RTT_S * 1e3 / 32.0;
    let margin_drain_ms = 6.0 * PACING_MARGIN * FIXED_MIN_RTT_S * 1e3;
    let mut means = Vec::new();
    for (cca, tso_segs) in [
        ("\"bbr\"", 2.0),
        ("{ name = \"bbr\", send_quantum_packets = 1 }", 1.0),
    ] {
        let out = fixed_10mbps(cca);
        let max_bw = largest_estimate(&out, "cc_btl_bw_mbps");
        assert!(
            max_bw <= 10.0 * 1.005,
            "{cca}: BtlBw {max_bw} Mbit/s on a 10 Mbit/s link"
        );
        let steady = bins(&out, "cc_btl_bw_mbps", 5.0);
        let mean = mean_queue_ms(&steady, "probe_bw");
        let floor = v1_budget_queue_ms(tso_segs);
        eprintln!(
            "{cca}: max BtlBw {max_bw:.3} Mbit/s, mean queue over PROBE_BW {mean:.2} ms \
             (gain cycle {gain_cycle_ms:.2} ms + budget floor {floor:.2} ms)"
        );
        assert!(
            mean <= gain_cycle_ms + floor,
            "{cca}: mean queue {mean:.2} ms above {gain_cycle_ms:.2} + {floor:.2} ms"
        );
        assert!(
            mean >= gain_cycle_ms + floor - margin_drain_ms,
            "{cca}: mean queue {mean:.2} ms below {gain_cycle_ms:.2} + {floor:.2} - \
             {margin_drain_ms:.2} ms"
        );
        means.push(mean);
    }
    assert!(
        means[1] < means[0] - 1.0,
        "a smaller quantization budget should shorten the queue: {means:?} ms"
    );
}

/// The largest bandwidth estimate (`column`, Mbit/s) the controller reported over the run.
fn largest_estimate(out: &RunOutput, column: &str) -> f64 {
    bins(out, column, 0.0)
        .iter()
        .map(|x| x.1)
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
}

#[test]
fn bbr_v3_on_a_fixed_rate_link_cruises_without_a_queue() {
    // v3 leaves PROBE_DOWN at the same BDP-plus-budget floor and CRUISE paces 1 % below the
    // estimate, so the queue left by a probe drains during CRUISE; its probes (UP until the
    // bandwidth plateaus for 3 rounds, then DOWN at 0.9) come every 2-3 s and carry its queue.
    let out = fixed_10mbps("\"bbr3\"");
    let max_bw = largest_estimate(&out, "cc_max_bw_mbps");
    assert!(
        max_bw <= 10.0 * 1.005,
        "bbr3: max_bw {max_bw} Mbit/s on a 10 Mbit/s link"
    );
    let steady = bins(&out, "cc_max_bw_mbps", 5.0);
    let cruise = mean_queue_ms(&steady, "probe_bw_cruise");
    let up = mean_queue_ms(&steady, "probe_bw_up");
    eprintln!(
        "bbr3: max_bw {max_bw:.3} Mbit/s, mean queue in CRUISE {cruise:.2} ms, in UP {up:.2} ms"
    );
    assert!(
        cruise < 0.5 * v1_budget_queue_ms(2.0),
        "bbr3 cruise queue {cruise:.2} ms"
    );
}
