//! Inputs that could take the machine down, or that were accepted and then simulated wrongly,
//! are refused at validation with the key at fault and what is allowed (issue 15).

mod common;
use common::{assert_mentions, error_of, load, GOOD};
use polycc::Registry;

/// GOOD with `key = value` set at the top level (before the tables).
fn top(line: &str) -> String {
    format!("{line}\n{GOOD}")
}

/// GOOD with `line` added to the flow.
fn flow(line: &str) -> String {
    GOOD.replace("rtt = \"30ms\"", &format!("rtt = \"30ms\"\n{line}"))
}

/// GOOD with `line` added to the link.
fn link(line: &str) -> String {
    GOOD.replace("rate = \"10Mbps\"", &format!("rate = \"10Mbps\"\n{line}"))
}

#[test]
fn tiny_bins_are_refused_for_their_memory() {
    let e = error_of(&GOOD.replace("duration = \"5s\"", "duration = \"5s\"\nbin = \"1ns\""));
    assert_mentions(
        &e,
        &["test.toml: bin:", "memory", "5.0e9 bins", "limits.memory"],
    );
    // "1us" over 5 s is 5 M rows: refused under a 2 GiB limit, named by the key.
    let e = error_of(
        &top("limits = { memory = \"2GiB\" }")
            .replace("duration = \"5s\"", "duration = \"5s\"\nbin = \"1us\""),
    );
    assert_mentions(&e, &["bin:", "2.0 GiB allowed (`limits.memory`)"]);
    // The limit is the scenario's to raise.
    load(
        &top("limits = { memory = \"64GiB\" }")
            .replace("duration = \"5s\"", "duration = \"5s\"\nbin = \"1us\""),
    )
    .unwrap();
}

#[test]
fn web_traffic_every_nanosecond_is_refused() {
    let e = error_of(&flow(
        "traffic = { kind = \"web\", size = \"10KB\", interval = \"1ns\" }",
    ));
    assert_mentions(&e, &["flows[0].traffic.interval", "web transfers"]);
}

#[test]
fn a_million_flows_are_refused_before_they_are_built() {
    let e = error_of(&flow("count = 1000000"));
    assert_mentions(&e, &["flows[0].count", "1000000 flows", "memory"]);
}

#[test]
fn a_long_random_walk_is_refused_before_it_is_drawn() {
    let walk = GOOD.replace(
        "rate = \"10Mbps\"",
        "trace = { synth = \"random_walk\", start = \"10Mbps\", min = \"1Mbps\", max = \"20Mbps\", step = \"2Mbps\", interval = \"200ms\" }",
    );
    let e = error_of(&walk.replace(
        "duration = \"5s\"",
        "duration = \"1000000s\"\nbin = \"1000s\"",
    ));
    assert_mentions(
        &e,
        &["links[0].trace", "random walk", "delivery opportunities"],
    );
    load(&walk).unwrap();
}

#[test]
fn long_runs_are_refused_for_their_events() {
    let e = error_of(&GOOD.replace(
        "duration = \"5s\"",
        "duration = \"1000000000s\"\nbin = \"1000000s\"",
    ));
    assert_mentions(&e, &["links[0].rate", "simulator events", "limits.events"]);
    // A lower limit of events refuses a short run too; the message says where it came from.
    let e = error_of(&top("limits = { events = 1000 }"));
    assert_mentions(&e, &["links[0].rate", "1000 allowed (`limits.events`)"]);
    let e = error_of(&top("limits = { events = 0 }"));
    assert_mentions(&e, &["limits.events", "at least 1"]);
    let e = error_of(&top("limits = { memory = \"10pkt\" }"));
    assert_mentions(&e, &["limits.memory", "bytes"]);
}

#[test]
fn the_shipped_scale_fits_the_default_limits() {
    // BENCHMARKS.md (b): ten flows at 1 Gbit/s for 30 s.
    load(
        r#"
        name = "bench"
        duration = "30s"
        [[links]]
        id = "bottleneck"
        rate = "1Gbps"
        queue = { kind = "droptail", size = "1bdp" }
        [[flows]]
        id = "cubic"
        cca = "cubic"
        rtt = "40ms"
        count = 10
    "#,
    )
    .unwrap();
}

#[test]
fn durations_that_overflow_are_refused() {
    let e = error_of(&GOOD.replace("\"5s\"", "\"20000000000s\""));
    assert_mentions(&e, &["duration", "too large", "146 years"]);
    let e = error_of(&flow("start = \"100000000000min\""));
    assert_mentions(&e, &["flows[0].start", "too large"]);
    let e = error_of(&GOOD.replace("\"10Mbps\"", "\"100000000000Gbps\""));
    assert_mentions(&e, &["links[0].rate", "too large"]);
    let e = error_of(&link("queue = { size = \"100000000000000000000pkt\" }"));
    assert_mentions(&e, &["links[0].queue.size", "too large"]);
}

#[cfg(unix)]
#[test]
fn a_fifo_as_trace_is_refused_without_blocking() {
    let dir = std::env::temp_dir().join(format!("polycc-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("trace.fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        println!("skipped: mkfifo unavailable");
        return;
    }
    let with_trace = |p: &std::path::Path| {
        GOOD.replace("rate = \"10Mbps\"", &format!("trace = \"{}\"", p.display()))
    };
    let e = error_of(&with_trace(&fifo));
    assert_mentions(&e, &["links[0].trace", "not a regular file"]);
    let e = error_of(&with_trace(&dir));
    assert_mentions(&e, &["links[0].trace", "directory"]);
    // A FIFO given as the scenario file itself.
    let e = polycc_sim::scenario::load_file(&fifo, &Registry::standard())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert_mentions(&e, &["trace.fifo", "not a regular file"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bytes_per_second_are_refused_with_the_bits_to_write() {
    let e = error_of(&GOOD.replace("\"10Mbps\"", "\"50MBps\""));
    assert_mentions(
        &e,
        &[
            "links[0].rate",
            "bits per second",
            "\"400Mbps\"",
            "\"50Mbps\"",
        ],
    );
    let e = error_of(&GOOD.replace("\"10Mbps\"", "\"1.5KBps\""));
    assert_mentions(&e, &["\"12Kbps\""]);
    // The prefix stays case-insensitive.
    for ok in ["10mbps", "10MbPS", "10Gbps", "10kbps", "10bps"] {
        load(&GOOD.replace("\"10Mbps\"", &format!("\"{ok}\""))).unwrap();
    }
}

#[test]
fn total_loss_is_refused_unless_an_outage_ends() {
    let e = error_of(&link("loss = 1.0"));
    assert_mentions(&e, &["links[0].loss", "below 1.0", "outage"]);
    let e = error_of(&link("ack_loss = 1.0"));
    assert_mentions(&e, &["links[0].ack_loss", "below 1.0"]);
    let sched = |pts: &str| GOOD.replace("rate = \"10Mbps\"", &format!("schedule = [{pts}]"));
    let e = error_of(&sched(
        "{ at = \"0s\", rate = \"10Mbps\" }, { at = \"2s\", rate = \"10Mbps\", loss = 1.0 }",
    ));
    assert_mentions(&e, &["links[0].schedule[1].loss", "below 1.0"]);
    load(&sched("{ at = \"0s\", rate = \"10Mbps\" }, { at = \"2s\", rate = \"10Mbps\", loss = 1.0 }, { at = \"3s\", rate = \"10Mbps\", loss = 0.0 }")).unwrap();
}

#[test]
fn queues_hold_at_least_one_full_packet_in_bytes_or_packets() {
    for size in ["1B", "1499B", "0pkt", "0B", "0.0001bdp"] {
        let e = error_of(&link(&format!("queue = {{ size = \"{size}\" }}")));
        assert_mentions(
            &e,
            &["links[0].queue.size", "one full packet", "1pkt", "1500B"],
        );
    }
    for size in ["1500B", "1pkt"] {
        load(&link(&format!("queue = {{ size = \"{size}\" }}"))).unwrap();
    }
    let e = error_of(&link(
        "reverse_rate = \"1Mbps\"\nreverse_queue = { size = \"100B\" }",
    ));
    assert_mentions(&e, &["links[0].reverse_queue.size", "one full packet"]);
}

#[test]
fn header_and_ack_sizes_are_bounded() {
    let e = error_of(&top("header_bytes = 1000000000000"));
    assert_mentions(&e, &["header_bytes", "below mss (1448)", "0 ..= 1447"]);
    let e = error_of(&top("ack_bytes = 0"));
    assert_mentions(&e, &["ack_bytes", "1 ..= 1500"]);
    let e = error_of(&top("ack_bytes = 100000"));
    assert_mentions(&e, &["ack_bytes"]);
    load(&top("header_bytes = 0\nack_bytes = 1448")).unwrap();
}

#[test]
fn names_and_ids_that_are_not_safe_file_names_are_refused() {
    for (bad, why) in [
        ("../../escaped", "path separator"),
        ("/tmp/abs", "path separator"),
        ("a\\\\b", "path separator"),
        ("..", "\"..\""),
        (".hidden", "start with"),
        ("a\\u0000b", "control characters"),
        ("line\\nbreak", "control characters"),
        ("", "empty"),
        ("   ", "empty"),
    ] {
        let e = error_of(&GOOD.replace("name = \"ok\"", &format!("name = \"{bad}\"")));
        assert_mentions(&e, &["test.toml: name:", why, "letters, digits"]);
        let e = error_of(&GOOD.replace("id = \"a\"", &format!("id = \"{bad}\"")));
        assert_mentions(&e, &["flows[0].id", why]);
        let e = error_of(&GOOD.replace("id = \"b\"", &format!("id = \"{bad}\"")));
        assert_mentions(&e, &["links[0].id", why]);
    }
    let e = error_of(&GOOD.replace("id = \"a\"", "id = \"x/y\""));
    assert_mentions(&e, &["flows[0].id", "\"x/y\""]);
    for ok in ["bench-b ten cubic (1g)", "pcc_v2.1", "Flux:α"] {
        load(&GOOD.replace("name = \"ok\"", &format!("name = \"{ok}\""))).unwrap();
        load(&GOOD.replace("id = \"a\"", &format!("id = \"{ok}\""))).unwrap();
    }
}
/// Jain's index is over the flows that ran: a flow starting at or after the end has no share.
#[test]
fn a_flow_that_never_starts_is_not_in_jains_index() {
    let out = common::run(
        r#"
        name = "late"
        duration = "3s"
        [[links]]
        id = "b"
        rate = "10Mbps"
        [[flows]]
        id = "a"
        cca = "cubic"
        rtt = "30ms"
        [[flows]]
        id = "late"
        cca = "cubic"
        rtt = "30ms"
        start = "10s"
    "#,
    );
    assert_eq!(out.summary.flows[1].active_s, 0.0);
    assert!(out.summary.flows[0].goodput_mbps > 5.0);
    assert!(
        (out.summary.jain_index - 1.0).abs() < 1e-12,
        "jain {}",
        out.summary.jain_index
    );
}
