//! The token-bucket policer queue kind: a CBR source above the token rate gets the token rate
//! through, nothing is queued beyond the burst, and bad keys are refused by name.

mod common;
use common::{assert_mentions, error_of, run, GOOD};

/// A 50 Mbit/s line policed to `rate`, crossed by one unresponsive source of `offered`.
fn policed(rate: &str, burst: &str, offered: &str) -> String {
    format!(
        r#"
name = "policed"
duration = "20s"
[[links]]
id = "b"
rate = "50Mbps"
queue = {{ kind = "policer", rate = "{rate}", burst = "{burst}" }}
[[flows]]
id = "cbr"
rtt = "20ms"
traffic = {{ kind = "cbr", rate = "{offered}" }}
"#
    )
}

#[test]
fn cbr_above_the_token_rate_gets_the_token_rate() {
    let out = run(&policed("10Mbps", "30KB", "20Mbps"));
    let f = &out.summary.flows[0];
    let l = &out.summary.links[0];
    // Wire throughput at the receiver equals the token rate within 1 %.
    assert!(
        (f.throughput_mbps - 10.0).abs() / 10.0 < 0.01,
        "throughput {:.3} Mbit/s",
        f.throughput_mbps
    );
    // About half of what is offered is dropped, by the policer (the link's queue drops).
    assert!(l.drops > 0);
    assert!((f.loss_rate - 0.5).abs() < 0.02, "loss {:.3}", f.loss_rate);
    // Nothing waits for tokens: the queue holds what arrives at once and drains at 50 Mbit/s.
    assert!(
        l.queue_delay_ms.p95 < 1.0,
        "p95 queue delay {} ms",
        l.queue_delay_ms.p95
    );
}

#[test]
fn cbr_below_the_token_rate_passes_untouched() {
    let out = run(&policed("10Mbps", "3000B", "8Mbps"));
    assert_eq!(out.summary.links[0].drops, 0);
    // What is still in flight at the end counts as not delivered: ~10 ms of 8 Mbit/s.
    assert!(out.summary.flows[0].loss_rate < 0.001);
}

#[test]
fn bad_policer_keys_are_named() {
    let with = |q: &str| {
        GOOD.replace(
            "rate = \"10Mbps\"",
            &format!("rate = \"10Mbps\"\nqueue = {q}"),
        )
    };
    assert_mentions(
        &error_of(&with(r#"{ kind = "policer", burst = "10pkt" }"#)),
        &["links[0].queue.rate", "policer"],
    );
    assert_mentions(
        &error_of(&with(r#"{ kind = "policer", rate = "5Mbps" }"#)),
        &["links[0].queue.burst"],
    );
    assert_mentions(
        &error_of(&with(
            r#"{ kind = "policer", rate = "0Mbps", burst = "10pkt" }"#,
        )),
        &["links[0].queue.rate", "positive"],
    );
    assert_mentions(
        &error_of(&with(
            r#"{ kind = "policer", rate = "5Mbps", burst = "100B" }"#,
        )),
        &["links[0].queue.burst", "one full packet"],
    );
    assert_mentions(
        &error_of(&with(r#"{ kind = "droptail", rate = "5Mbps" }"#)),
        &["links[0].queue.rate", "policer"],
    );
}
