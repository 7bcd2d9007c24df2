//! The `auto` policy on simulated paths: which controller it picks on each kind of path, when,
//! and what that buys against the single controllers.

mod common;

use common::{mean_goodput_mbps, run};
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
/// 3 ACK aggregation), and how many switches it made in all.
fn first_as(out: &RunOutput, id: &str, member: f64) -> (Option<f64>, f64) {
    let m = series(out, id, "cc_member");
    let switches = series(out, id, "cc_switches").last().map_or(0.0, |s| s.1);
    (
        m.iter().find(|(_, v)| *v == member).map(|(t, _)| *t),
        switches,
    )
}

#[test]
fn on_a_clean_path_auto_keeps_bbr3_and_its_short_queue() {
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
    let compete = |cca: &str| run(&scenario(60, "20Mbps", "4bdp", "", &flows(cca)));
    let out = compete("auto");
    let (when, _) = first_as(&out, "a", 2.0);
    let when = when.expect("turned to the competing member");
    let share = mean_goodput_mbps(&out, "a", 20.0, 60.0) / 20.0;
    let alone = compete("bbr3");
    let share3 = mean_goodput_mbps(&alone, "a", 20.0, 60.0) / 20.0;
    eprintln!("vs cubic, 4 BDP: auto on cubic from {when:.1} s, share {share:.2} against bbr3's {share3:.2}");
    assert!(when < 15.0, "{when}");
    // Fair is 0.5: auto neither takes more than 20 % above it from CUBIC (issue 21's bound) nor
    // yields more than that.
    assert!((0.4..=0.6).contains(&share), "{share}");
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
