//! The `auto` policy on simulated paths: which controller it picks on each kind of path, when,
//! and what that buys against the single controllers.

mod common;

use common::{mean_goodput_mbps, run, traces_dir};
use polycc_sim::RunOutput;

/// A one-link scenario: `flows` is the `[[flows]]` part, `link` extra link keys.
fn scenario(secs: u32, rate: &str, queue: &str, link: &str, flows: &str) -> String {
    format!(
        r#"
name = "auto"
duration = "{secs}s"
[[links]]
id = "l"
rate = "{rate}"
queue = {{ kind = "droptail", size = "{queue}" }}
{link}
{flows}
"#
    )
}

fn flow(id: &str, cca: &str, start: &str) -> String {
    format!("[[flows]]\nid = \"{id}\"\ncca = \"{cca}\"\nrtt = \"40ms\"\nstart = \"{start}\"\n")
}

/// The (time, value) pairs of column `col` for flow `id`, NaN rows left out.
fn series(out: &RunOutput, id: &str, col: &str) -> Vec<(f64, f64)> {
    let t = out.flows.f64s("t_s").expect("t_s");
    let flow = out.flows.strs("flow").expect("flow");
    let v = out
        .flows
        .f64s(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    (0..t.len())
        .filter(|&i| flow[i] == id && v[i].is_finite())
        .map(|i| (t[i], v[i]))
        .collect()
}

/// When flow `id` first ran role `member` (README: 0 clean, 1 random loss, 2 competing,
/// 3 ACK aggregation, 4 aggressive competitor, 8 long path), and how many switches it made in
/// all.
fn first_as(out: &RunOutput, id: &str, member: f64) -> (Option<f64>, f64) {
    let m = series(out, id, "cc_member");
    let switches = series(out, id, "cc_switches").last().map_or(0.0, |s| s.1);
    (
        m.iter().find(|(_, v)| *v == member).map(|(t, _)| *t),
        switches,
    )
}

#[test]
fn on_a_clean_path_auto_keeps_copa_and_its_short_queue() {
    let out = run(&scenario(
        20,
        "20Mbps",
        "2bdp",
        "",
        &flow("a", "auto", "0s"),
    ));
    let (_, switches) = first_as(&out, "a", 0.0);
    assert_eq!(switches, 0.0);
    let g = mean_goodput_mbps(&out, "a", 3.0, 20.0);
    let rtt = out.summary.flows[0].rtt_ms.mean;
    eprintln!("clean: goodput {g:.2} Mbit/s, mean RTT {rtt:.1} ms");
    assert!(g > 17.0, "{g}");
    assert!(rtt < 55.0, "{rtt}");
}

#[test]
fn under_random_loss_auto_turns_to_bbr_v1_and_beats_bbr3() {
    let lossy = |cca: &str| {
        run(&scenario(
            30,
            "20Mbps",
            "1bdp",
            "loss = 0.03",
            &flow("a", cca, "0s"),
        ))
    };
    let out = lossy("auto");
    let (when, switches) = first_as(&out, "a", 1.0);
    let when = when.expect("turned to the random-loss member");
    let g = mean_goodput_mbps(&out, "a", 10.0, 30.0);
    let g3 = mean_goodput_mbps(&lossy("bbr3"), "a", 10.0, 30.0);
    eprintln!("3 % loss: auto on bbr v1 from {when:.1} s ({switches} switches), goodput {g:.2} against bbr3 {g3:.2} Mbit/s");
    assert!(when < 5.0, "{when}");
    assert!(g > 1.5 * g3 && g > 14.0, "{g} vs {g3}");
}

#[test]
fn against_cubic_on_a_deep_buffer_auto_turns_to_cubic_and_takes_its_fair_share() {
    let flows = |cca: &str| format!("{}{}", flow("a", cca, "0s"), flow("c", "cubic", "0s"));
    let compete = |cca: &str, rate: f64| {
        let out = run(&scenario(
            60,
            &format!("{rate}Mbps"),
            "4bdp",
            "",
            &flows(cca),
        ));
        let share = mean_goodput_mbps(&out, "a", 20.0, 60.0) / rate;
        (out, share)
    };
    // Two loss-based flows on a deep drop-tail buffer part unevenly for tens of seconds after
    // an uneven start, by how their losses fall: the share is judged over three rates.
    let rates = [15.0, 20.0, 25.0];
    let mut shares = Vec::new();
    for rate in rates {
        let (out, share) = compete("auto", rate);
        let (when, _) = first_as(&out, "a", 2.0);
        let when = when.expect("turned to the competing member");
        let (_, share3) = compete("bbr3", rate);
        eprintln!("vs cubic, 4 BDP, {rate} Mbit/s: auto on cubic from {when:.1} s, share {share:.2} against bbr3's {share3:.2}");
        assert!(when < 15.0, "{rate}: {when}");
        shares.push(share);
    }
    let share = shares.iter().sum::<f64>() / shares.len() as f64;
    // Fair is 0.5: auto takes no more than 20 % above it from CUBIC (issue 21's bound) and
    // yields at most a tenth of it (0.48 since the competing member joins in slow start; 0.40
    // when it started in congestion avoidance at its share: auto/mod.rs `competing_start`).
    assert!((0.45..=0.6).contains(&share), "{share}: {shares:?}");
}

#[test]
fn under_ack_aggregation_auto_turns_to_cubic_where_bbr_v1_starves() {
    let agg = |cca: &str| {
        run(&scenario(
            30,
            "20Mbps",
            "1bdp",
            "ack_aggregation = { interval = \"60ms\" }",
            &flow("a", cca, "0s"),
        ))
    };
    let out = agg("auto");
    let (when, _) = first_as(&out, "a", 3.0);
    let when = when.expect("turned to the aggregation member");
    let g = mean_goodput_mbps(&out, "a", 10.0, 30.0);
    let g1 = mean_goodput_mbps(&agg("bbr"), "a", 10.0, 30.0);
    eprintln!(
        "ACKs every 60 ms: auto on cubic from {when:.1} s, goodput {g:.2} against bbr v1 {g1:.2}"
    );
    assert!(when < 5.0, "{when}");
    assert!(g >= g1, "{g} vs {g1}");
}

#[test]
fn against_bbr_v1_on_a_shallow_buffer_auto_turns_to_bbr_v1_and_keeps_far_more_than_bbr3() {
    let flows = |cca: &str| format!("{}{}", flow("a", cca, "0s"), flow("b", "bbr", "0s"));
    let compete = |cca: &str| run(&scenario(40, "20Mbps", "0.5bdp", "", &flows(cca)));
    let share = |out: &RunOutput| {
        let (a, b) = (
            mean_goodput_mbps(out, "a", 10.0, 40.0),
            mean_goodput_mbps(out, "b", 10.0, 40.0),
        );
        a / (a + b)
    };
    let out = compete("auto");
    let (when, _) = first_as(&out, "a", 4.0);
    let when = when.expect("turned to the aggressive-competitor member");
    let (s, s3) = (share(&out), share(&compete("bbr3")));
    eprintln!(
        "vs bbr v1, 0.5 BDP: auto on bbr v1 from {when:.1} s, share {s:.2} against bbr3's {s3:.2}"
    );
    assert!(when < 10.0, "{when}");
    // BBR v1 overruns BBR v3 here (its 2·BDP window keeps the shallow queue losing 3-4 %).
    assert!(s3 < 0.2 && s > 2.0 * s3 && s <= 0.6, "{s} vs {s3}");
}

/// Flow `id`'s summary.
fn summary_of<'a>(out: &'a RunOutput, id: &str) -> &'a polycc_sim::output::FlowSummary {
    out.summary.flows.iter().find(|f| f.id == id).expect("flow")
}

/// p95 RTT (ms) of flow `id` over the whole run.
fn p95_rtt_ms(out: &RunOutput, id: &str) -> f64 {
    summary_of(out, id).rtt_ms.p95
}

#[test]
fn on_a_deep_buffer_auto_keeps_a_shorter_queue_than_bbr3_at_the_same_goodput() {
    let deep = |cca: &str| run(&scenario(20, "20Mbps", "10bdp", "", &flow("a", cca, "0s")));
    let (out, out3) = (deep("auto"), deep("bbr3"));
    let (g, g3) = (
        mean_goodput_mbps(&out, "a", 2.0, 20.0),
        mean_goodput_mbps(&out3, "a", 2.0, 20.0),
    );
    let (d, d3) = (p95_rtt_ms(&out, "a"), p95_rtt_ms(&out3, "a"));
    eprintln!("10 BDP: auto {g:.2} Mbit/s at p95 {d:.1} ms, bbr3 {g3:.2} at {d3:.1}");
    assert_eq!(first_as(&out, "a", 0.0).1, 0.0, "no switch");
    assert!(g > 18.0, "{g}");
    assert!(d < 0.8 * d3, "{d} vs {d3}");
}

#[test]
fn after_a_capacity_drop_auto_drains_the_queue_bbr3_leaves() {
    let drop = |cca: &str| {
        run(&format!(
            r#"
name = "auto"
duration = "24s"
[[links]]
id = "l"
schedule = [{{ at = "0s", rate = "50Mbps" }}, {{ at = "8s", rate = "10Mbps" }}, {{ at = "16s", rate = "50Mbps" }}]
queue = {{ kind = "droptail", size = "500KB" }}
{}"#,
            flow("a", cca, "0s")
        ))
    };
    let (out, out3) = (drop("auto"), drop("bbr3"));
    let (d, d3) = (p95_rtt_ms(&out, "a"), p95_rtt_ms(&out3, "a"));
    let g = mean_goodput_mbps(&out, "a", 0.0, 24.0);
    eprintln!("50 -> 10 -> 50 Mbit/s: auto p95 {d:.1} ms at {g:.1} Mbit/s, bbr3 p95 {d3:.1} ms");
    assert_eq!(
        first_as(&out, "a", 2.0).0,
        None,
        "the drop is no competitor"
    );
    assert!(g > 30.0, "{g}");
    assert!(d < 0.3 * d3, "{d} vs {d3}");
}

#[test]
fn on_a_long_path_auto_runs_cubic_from_the_first_round_trip() {
    let long = |cca: &str, rate: &str| {
        run(&format!(
            "{}rtt = \"600ms\"\n",
            scenario(30, rate, "1bdp", "", "[[flows]]\nid = \"a\"\n")
        )
        .replace("id = \"a\"\n", &format!("id = \"a\"\ncca = \"{cca}\"\n")))
    };
    // Over several rates: Copa's start on a 600-ms path lands it anywhere from 70 % to all of
    // CUBIC's goodput, by rate, so one rate alone says little about it.
    let (mut total, mut total_copa) = (0.0, 0.0);
    for rate in ["10Mbps", "15Mbps", "20Mbps", "30Mbps"] {
        let out = long("auto", rate);
        let (when, switches) = first_as(&out, "a", 8.0);
        let when = when.expect("turned to the long-path member");
        let g = mean_goodput_mbps(&out, "a", 0.0, 30.0);
        let gc = mean_goodput_mbps(&long("copa", rate), "a", 0.0, 30.0);
        let gcu = mean_goodput_mbps(&long("cubic", rate), "a", 0.0, 30.0);
        eprintln!("600 ms, {rate}: auto on cubic from {when:.1} s ({switches} switches), {g:.2} Mbit/s against copa {gc:.2}, cubic {gcu:.2}");
        assert!(when < 1.5, "{rate}: {when}");
        assert_eq!(switches, 1.0, "{rate}");
        // The competing test stays off: CUBIC's own queue stands there throughout.
        assert_eq!(first_as(&out, "a", 2.0).0, None, "{rate}");
        assert!(g > 0.95 * gcu, "{rate}: {g} vs cubic {gcu}");
        total += g;
        total_copa += gc;
    }
    assert!(total > 1.1 * total_copa, "{total} vs copa {total_copa}");
}

#[test]
fn under_wifi_ack_batches_auto_turns_to_cubic_and_does_not_flap() {
    let wifi = |cca: &str| {
        run(&format!(
            "{}rtt = \"20ms\"\n",
            scenario(
                20,
                "50Mbps",
                "1bdp",
                "ack_aggregation = { interval = \"10ms\" }",
                &format!("[[flows]]\nid = \"a\"\ncca = \"{cca}\"\n")
            )
        ))
    };
    let out = wifi("auto");
    let (when, switches) = first_as(&out, "a", 3.0);
    let when = when.expect("turned to the aggregation member");
    let g = mean_goodput_mbps(&out, "a", 2.0, 20.0);
    let gc = mean_goodput_mbps(&wifi("copa"), "a", 2.0, 20.0);
    eprintln!("ACKs every 10 ms: auto on cubic from {when:.1} s ({switches} switches), {g:.2} Mbit/s against copa {gc:.2}");
    assert!(when < 5.0, "{when}");
    // One switch there, perhaps one back once the 10-s hold is over: no flapping.
    assert!(switches <= 3.0, "{switches}");
    assert!(g > 44.0 && g > 1.1 * gc, "{g} vs {gc}");
}

#[test]
fn against_two_cubic_flows_in_a_deep_buffer_auto_takes_its_fair_share_and_no_more() {
    let flows = |cca: &str| {
        format!(
            "{}{}",
            flow("a", cca, "0s"),
            "[[flows]]\nid = \"c\"\ncca = \"cubic\"\nrtt = \"40ms\"\ncount = 2\n"
        )
    };
    let compete = |cca: &str| run(&scenario(30, "50Mbps", "4bdp", "", &flows(cca)));
    let out = compete("auto");
    let (when, switches) = first_as(&out, "a", 2.0);
    let when = when.expect("turned to the competing member");
    let fair = 50.0 / 3.0;
    let share = mean_goodput_mbps(&out, "a", 5.0, 30.0) / fair;
    let copa = mean_goodput_mbps(&compete("copa"), "a", 5.0, 30.0) / fair;
    eprintln!("vs 2 cubic, 4 BDP: auto on cubic from {when:.1} s ({switches} switches), {share:.2} of its fair share (copa {copa:.2})");
    // The CUBIC flows keep raising the standing floor from the shared start-up on: Competing
    // after regime.rs's RISING_STANDING_HOLD (1.5 s), not its STANDING_HOLD (3 s; 3.3 s before).
    assert!(when < 2.5, "{when}");
    // CUBIC's share above the rate of the shared start-up is not the link alone: it stays until
    // it looks again after twice the 10-s hold (before ALONE_RISE it went back to Copa once the
    // hold was over, and starved again).
    let left = series(&out, "a", "cc_member")
        .into_iter()
        .find(|(t, m)| *t > when && *m != 2.0)
        .map(|(t, _)| t);
    assert!(left.is_none_or(|t| t >= when + 19.9), "{left:?}");
    // Within a tenth of the fair share, and no more than 20 % above it (issue 21's bound): the
    // competing member joins in slow start and reaches the others' window before the queue
    // overflows (1.01; 0.74 when it started in congestion avoidance at its share, and the
    // overflow cut every flow by the same factor).
    assert!(
        (0.9..=1.2).contains(&share) && share > 1.5 * copa,
        "{share} vs {copa}"
    );
}

/// A 20-Mbit/s, 20-ms, 1-BDP path (`link` extra link keys) whose receiver acknowledges every
/// 10th packet or after 25 ms, as s2n-quic's does (the real-QUIC test that had the tuned version
/// reverted: `polycc-emu/tests/quic.rs`, `auto_over_quic_turns_to_bbr_v1_on_a_lossy_link`).
fn decimated(cca: &str, link: &str) -> RunOutput {
    run(&format!(
        "{}ack = {{ every = 10, max_delay = \"25ms\" }}\n",
        scenario(
            30,
            "20Mbps",
            "1bdp",
            link,
            &flow("a", cca, "0s").replace("40ms", "20ms")
        )
    ))
}

#[test]
fn at_100_mbits_over_noisy_decimated_acks_the_clean_member_keeps_the_link_full() {
    // s2n-quic's receiver (an ACK per 10 packets or 25 ms) and up to 1 ms of noise on the ACK
    // path, 100 Mbit/s, 5 ms, 1 BDP: Copa's 2 packets of queue last 0.24 ms, which the noise
    // hides, and the paper's rule holds 73 Mbit/s. With the clean member's 1-ms queue floor
    // (CLEAN_MIN_QUEUE_MS) the flow holds a millisecond of queue and the rate.
    let path = |cca: &str| {
        let flows = format!("[[flows]]\nid = \"a\"\ncca = {cca}\nrtt = \"5ms\"\n");
        let link = r#"jitter = { max = "1ms", direction = "ack" }"#;
        run(&format!(
            "{}ack = {{ every = 10, max_delay = \"25ms\" }}\n",
            scenario(10, "100Mbps", "1bdp", link, &flows)
        ))
    };
    let (out, paper) = (
        path(r#""auto""#),
        path(r#"{ name = "auto", clean = "copa" }"#),
    );
    let (g, g_paper) = (
        mean_goodput_mbps(&out, "a", 2.0, 10.0),
        mean_goodput_mbps(&paper, "a", 2.0, 10.0),
    );
    let (d, d_paper) = (p95_rtt_ms(&out, "a"), p95_rtt_ms(&paper, "a"));
    eprintln!("100 Mbit/s, noisy decimated ACKs: auto {g:.1} Mbit/s (p95 {d:.2} ms), paper's Copa {g_paper:.1} ({d_paper:.2})");
    assert_eq!(first_as(&out, "a", 0.0).1, 0.0, "Copa throughout");
    assert!(g > 90.0, "{g}");
    assert!(g_paper < 0.85 * g, "{g_paper} vs {g}");
    // A millisecond of queue more at most, and a little noise: p95 within 5 ms over the 5.
    assert!(d < 10.0, "{d}");
}

#[test]
fn an_ack_per_ten_packets_under_random_loss_is_no_aggregation_and_turns_to_bbr_v1() {
    let out = decimated("auto", "loss = 0.03");
    let (aggregated, switches) = first_as(&out, "a", 3.0);
    let (lossy, _) = first_as(&out, "a", 1.0);
    let g = mean_goodput_mbps(&out, "a", 10.0, 30.0);
    let g3 = mean_goodput_mbps(&decimated("bbr3", "loss = 0.03"), "a", 10.0, 30.0);
    eprintln!("3 % loss, an ACK per 10 packets: aggregation from {aggregated:?} s, random-loss member from {lossy:?} s ({switches} switches), goodput {g:.2} against bbr3 {g3:.2} Mbit/s");
    assert_eq!(aggregated, None, "decimated ACKs taken for aggregation");
    assert!(lossy.is_some_and(|t| t < 5.0), "{lossy:?}");
    // The first version of `auto` (before the tuning; 0f4d5dd) held 9.48 Mbit/s here, flapping
    // between aggregation and random loss; the tuned one, held on CUBIC, 1.99.
    assert!(g >= 9.5 && g > 1.5 * g3, "{g} vs {g3}");
}

#[test]
fn an_ack_per_ten_packets_on_a_clean_path_is_no_aggregation() {
    let out = decimated("auto", "");
    let (aggregated, switches) = first_as(&out, "a", 3.0);
    let g = mean_goodput_mbps(&out, "a", 10.0, 30.0);
    eprintln!("clean, an ACK per 10 packets: aggregation from {aggregated:?} s ({switches} switches), goodput {g:.2} Mbit/s");
    assert_eq!(aggregated, None, "decimated ACKs taken for aggregation");
    assert_eq!(switches, 0.0);
    assert!(g > 16.0, "{g}");
}

/// A 4-Mbit/s, 40-ms path with a drop-tail buffer of 5 packets (a fifth of the BDP), its
/// receiver acknowledging every 10th packet or after 25 ms as s2n-quic's does, run for 30 s.
fn tiny_buffer(cca: &str) -> RunOutput {
    run(&format!(
        "{}ack = {{ every = 10, max_delay = \"25ms\" }}\n",
        scenario(30, "4Mbps", "5pkt", "", &flow("a", cca, "0s"))
    ))
}

/// How often flow `id`'s `cc_member` changes.
fn member_changes(out: &RunOutput, id: &str) -> usize {
    let m = series(out, id, "cc_member");
    m.windows(2).filter(|p| p[0].1 != p[1].1).count()
}

#[test]
fn on_a_tiny_buffer_auto_does_not_flap_between_copa_and_bbr_v1() {
    // Copa overflows the 5-packet buffer (its delay target reads the ACKs' 25-ms hold as a
    // queue), losing 30-50 % of the bytes at a full queue: the aggressive-competitor test
    // hands the flow to BBR v1, which loses nothing there, so the flow went back to Copa, which
    // lost as much again: 19 switches in 30 s before the re-entry hold (seed 1).
    let out = tiny_buffer("auto");
    let changes = member_changes(&out, "a");
    let switches = series(&out, "a", "cc_switches").last().map_or(0.0, |s| s.1);
    let g = mean_goodput_mbps(&out, "a", 5.0, 30.0);
    let best = ["copa", "bbr"]
        .map(|c| mean_goodput_mbps(&tiny_buffer(c), "a", 5.0, 30.0))
        .into_iter()
        .fold(0.0, f64::max);
    eprintln!("4 Mbit/s, 5 packets: {changes} member changes ({switches} switches), goodput {g:.2} Mbit/s against the better of copa and bbr v1 {best:.2}");
    // The first stay in a loss regime ends when the loss does (nothing says yet that the clean
    // member made it); the first quick return is held 10 s, the second 20 s: enter, leave,
    // enter, leave, enter is all 30 s allow (regime.rs, LOSS_REENTRY_HOLD).
    assert!(changes <= 5, "{changes}");
    // Issue 21's aim: within 10 % of the best single member.
    assert!(g >= 0.9 * best, "{g} vs {best}");
}

/// The suite's generated 3G trace (`scenarios/suite/cellular-3g.toml`: 1.8 Mbit/s on average,
/// with outages, 80 ms, 100-packet buffer) for 20 s, `auto` alone on it. Nothing in it is random
/// (the suite's 5 seeds give the same run).
fn cellular_3g() -> RunOutput {
    run(r#"
name = "auto-3g"
duration = "20s"
[[links]]
id = "l"
trace = "../../scenarios/suite/traces/3g-slow.down"
queue = { kind = "droptail", size = "100pkt" }
[[flows]]
id = "a"
cca = "auto"
rtt = "80ms"
"#)
}

#[test]
fn on_a_3g_trace_a_capacity_drop_is_no_competitor() {
    // Alone on the trace: an outage and the lower capacity after it raise Copa's standing floor
    // from 27 to 412 ms (6.0-6.6 s), which Copa then drains (265 ms at 7.2 s). The rising-floor
    // test (regime.rs, RISING_STANDING_HOLD) took that for a competitor filling the buffer and
    // handed the flow to CUBIC at 7.6 s; a floor that falls back from its highest is now the
    // flow's own.
    let out = cellular_3g();
    let (competing, switches) = first_as(&out, "a", 2.0);
    let g = mean_goodput_mbps(&out, "a", 0.0, 20.0);
    eprintln!(
        "3G trace: competing member from {competing:?} s ({switches} switches), {g:.2} Mbit/s"
    );
    assert_eq!(competing, None, "no competitor on the path");
    assert_eq!(switches, 0.0);
}

#[test]
fn on_a_public_lte_trace_slotted_delivery_and_outages_are_no_ack_aggregation() {
    // mahimahi's TMobile LTE trace delivers in millisecond slots (0.5-0.9 of the bytes in
    // bunched ACKs, bunches a median 3.7 ms apart) with delivery gaps of 30-300 ms that spread a
    // window's samples by 25-323 ms on a 50 ms path. The aggregation test took that for a link holding ACKs and handed the
    // flow to CUBIC at 10.8 s (p95 RTT 229 ms against Copa's 105); a spread many times the
    // interval between bunches is a queue building and draining, not held ACKs.
    let Some(dir) = traces_dir() else {
        eprintln!("SKIP: ../shared/traces not found; this test needs TMobile-LTE-short.down");
        return;
    };
    let lte = |cca: &str| {
        run(&format!(
            r#"
name = "auto-tmobile"
duration = "20s"
[[links]]
id = "l"
trace = "{}"
queue = {{ kind = "droptail", size = "200pkt" }}
[[flows]]
id = "a"
cca = "{cca}"
rtt = "50ms"
"#,
            dir.join("TMobile-LTE-short.down").display()
        ))
    };
    let (out, copa) = (lte("auto"), lte("copa"));
    let (aggregation, switches) = first_as(&out, "a", 3.0);
    let (d, d_copa) = (p95_rtt_ms(&out, "a"), p95_rtt_ms(&copa, "a"));
    eprintln!(
        "TMobile LTE: aggregation member from {aggregation:?} s ({switches} switches), p95 {d:.1} ms, Copa {d_copa:.1}"
    );
    assert_eq!(aggregation, None, "no ACK aggregation on the trace");
    assert!(d < 1.1 * d_copa, "{d} vs {d_copa}");
}

/// A 20-Mbit/s, 1-BDP path of base RTT `rtt` with random loss `loss`, 40 s, flow `a` on `cca`.
fn long_lossy(cca: &str, rtt: &str, loss: f64) -> RunOutput {
    run(&scenario(
        40,
        "20Mbps",
        "1bdp",
        &format!("loss = {loss}"),
        &flow("a", cca, "0s").replace("40ms", rtt),
    ))
}

#[test]
fn on_a_long_path_random_loss_below_one_percent_turns_to_bbr_v1() {
    // 300 ms at 20 Mbit/s is 500 packets: a loss-based window (CUBIC, the long-path member)
    // fills it only below (1.22 / 500)² = 6·10⁻⁶ (Mathis), so 0.2 % random loss, below the
    // random-loss regime's 1 %, keeps CUBIC at a fraction of the link.
    let out = long_lossy("auto", "300ms", 0.002);
    let (when, switches) = first_as(&out, "a", 1.0);
    let g = mean_goodput_mbps(&out, "a", 0.0, 40.0);
    let [gc, gb] =
        ["cubic", "bbr"].map(|c| mean_goodput_mbps(&long_lossy(c, "300ms", 0.002), "a", 0.0, 40.0));
    eprintln!("300 ms, 0.2 % loss: auto on bbr v1 from {when:?} s ({switches} switches), {g:.2} Mbit/s against cubic {gc:.2}, bbr v1 {gb:.2}");
    // On a long path the random-loss test needs 8 round trips of history (regime.rs,
    // LONG_PATH_LOSS_WINDOWS), not 16: from 3.3 s (5.6 s with 16).
    assert!(when.is_some_and(|t| t < 4.5), "{when:?}");
    // Clean to long path at the first round trip, then to random loss, and no further: BBR v1
    // overflows the 1-BDP buffer by itself, which is no competitor (4 switches before) and does
    // not end the regime (regime.rs, RandomLoss in own_queue, random_loss_stays).
    assert_eq!(switches, 2.0);
    // Issue 21's aim: within 10 % of the best single member. Before: 10.12 Mbit/s.
    assert!(g > 2.0 * gc && g > 0.9 * gb, "{g} vs {gc}, {gb}");
}

/// A scavenger `cca` (intent `scavenger`; none: the primary alone) beside a `primary` flow on
/// 20 Mbit/s, 40 ms, a 2-BDP buffer; `traffic` is the primary's (empty: bulk), `receiver` flow
/// keys both flows take (empty: an ACK per packet). The suite's `suite-scavenger` is the on/off
/// case.
fn beside_primary(cca: Option<&str>, primary: &str, traffic: &str, receiver: &str) -> RunOutput {
    let scavenger = cca.map_or(String::new(), |c| {
        flow("s", c, "0s") + "intent = { class = \"scavenger\" }\n" + receiver + "\n"
    });
    let primary = flow("p", primary, "0s") + traffic + "\n" + receiver + "\n";
    run(&scenario(20, "20Mbps", "2bdp", "", &(scavenger + &primary)))
}

const ON_OFF: &str = r#"traffic = { kind = "on_off", on = "2s", off = "2s", periods = "fixed" }"#;

#[test]
fn a_scavenger_intent_fills_the_gaps_a_primary_leaves_and_yields_when_it_returns() {
    let alone = summary_of(&beside_primary(None, "cubic", ON_OFF, ""), "p").goodput_mbps;
    let ledbat = beside_primary(Some("ledbat++"), "cubic", ON_OFF, "");
    let auto = beside_primary(Some("auto"), "cubic", ON_OFF, "");
    let (s_auto, s_ledbat) = (
        summary_of(&auto, "s").goodput_mbps,
        summary_of(&ledbat, "s").goodput_mbps,
    );
    let (p_auto, p_ledbat) = (
        summary_of(&auto, "p").goodput_mbps,
        summary_of(&ledbat, "p").goodput_mbps,
    );
    eprintln!(
        "on/off primary alone {alone:.2}; beside LEDBAT++ {p_ledbat:.2} (scavenger {s_ledbat:.2}); \
         beside auto {p_auto:.2} (scavenger {s_auto:.2})"
    );
    // The scavenger role (README: cc_member 7) from the first ACK to the end.
    let members = series(&auto, "s", "cc_member");
    assert!(!members.is_empty() && members.iter().all(|&(_, m)| m == 7.0));
    // Half the run is idle: LEDBAT++ climbs into each gap by at most a packet a round trip;
    // the scavenger resumes at the BDP it measured once the primary's queue is gone (9.26
    // Mbit/s of the gaps' 9.65; 6.87 when Copa climbed back by its velocity and swung for the
    // whole gap: auto/refill.rs).
    assert!(s_auto > 3.0 * s_ledbat, "{s_auto} vs LEDBAT++ {s_ledbat}");
    assert!(s_auto > 8.5, "{s_auto}");
    // ... while the primary keeps what Proteus asks of a scavenger's primary (Fig. 10: 90 %).
    assert!(p_auto > 0.9 * alone, "{p_auto} of {alone}");
    // Beside bulk CUBIC and bulk BBR v1 it stays out of the way.
    for primary in ["cubic", "bbr"] {
        let out = beside_primary(Some("auto"), primary, "", "");
        let s = summary_of(&out, "s").goodput_mbps;
        eprintln!("beside bulk {primary}: scavenger {s:.2} Mbit/s");
        assert!(s < 2.0, "{primary}: {s}");
    }
}

#[test]
fn behind_receivers_that_hold_acks_a_scavenger_still_fills_the_gaps() {
    // s2n-quic's receiver: an ACK per 10 packets or after 25 ms. In the gaps the scavenger's
    // window is below 10 packets for a while, so each ACK waits for the timer.
    let held = r#"ack = { every = 10, max_delay = "25ms" }"#;
    let alone = summary_of(&beside_primary(None, "cubic", ON_OFF, held), "p").goodput_mbps;
    let out = beside_primary(Some("auto"), "cubic", ON_OFF, held);
    let (s, p) = (
        summary_of(&out, "s").goodput_mbps,
        summary_of(&out, "p").goodput_mbps,
    );
    let delays = series(&out, "s", "cc_ack_delay_ms");
    let largest = delays.iter().map(|&(_, d)| d).fold(0.0, f64::max);
    eprintln!("held ACKs: scavenger {s:.2}, primary {p:.2} of {alone:.2}; largest ACK delay taken {largest:.1} ms");
    // The receiver's reported hold is taken off the samples (RFC 9002 §5.3), up to its 25 ms.
    assert!(largest > 5.0 && largest <= 25.0, "{largest}");
    // Taken as a queue, the hold held the scavenger to 1/(δ·hold): 2.14 Mbit/s.
    assert!(s > 6.0, "{s}");
    assert!(p > 0.9 * alone, "{p} of {alone}");
}
