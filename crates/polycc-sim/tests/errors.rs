//! Bad scenarios are rejected before anything runs, with the key path and what is allowed.

mod common;
use common::{assert_mentions, error_of, load, GOOD};
use polycc::Registry;

#[test]
fn the_reference_scenario_is_valid() {
    load(GOOD).unwrap();
}

#[test]
fn unknown_cca_lists_the_known_names() {
    let e = error_of(&GOOD.replace("\"cubic\"", "\"cubik\""));
    assert_mentions(
        &e,
        &["test.toml", "flows[0].cca", "cubik", "newreno", "vegas"],
    );
}

#[test]
fn bad_cca_parameter_names_the_allowed_ones() {
    let e = error_of(&GOOD.replace("cca = \"cubic\"", "cca = { name = \"cubic\", betta = 0.7 }"));
    assert_mentions(&e, &["flows[0].cca", "betta", "beta"]);
}

#[test]
fn bad_unit_says_which_units_exist() {
    let e = error_of(&GOOD.replace("\"10Mbps\"", "\"10Mbit\""));
    assert_mentions(&e, &["links[0].rate", "Mbps"]);
}

#[test]
fn negative_rate_is_rejected() {
    let e = error_of(&GOOD.replace("\"10Mbps\"", "\"-10Mbps\""));
    assert_mentions(&e, &["links[0].rate", "negative"]);
}

#[test]
fn unknown_key_names_the_expected_keys() {
    let e = error_of(&GOOD.replace("rtt = \"30ms\"", "rtt = \"30ms\"\nrttt = \"1ms\""));
    assert_mentions(&e, &["flows[0]", "rttt", "rtt"]);
}

#[test]
fn missing_trace_names_the_file() {
    let e = error_of(&GOOD.replace("rate = \"10Mbps\"", "trace = \"no/such.trace\""));
    assert_mentions(&e, &["links[0].trace", "no/such.trace"]);
}

#[test]
fn malformed_trace_names_the_line() {
    let dir = std::env::temp_dir().join(format!("polycc-bad-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.trace");
    std::fs::write(&path, "1\n2\nroot:secret\n").unwrap();
    let e = error_of(&GOOD.replace(
        "rate = \"10Mbps\"",
        &format!("trace = \"{}\"", path.display()),
    ));
    assert_mentions(&e, &["links[0].trace", "line 3", "millisecond timestamp"]);
    // The line's content is not echoed: the file may be one the user should not read.
    assert!(!e.contains("secret"), "{e}");
}

#[test]
fn unknown_link_in_a_path_and_bad_probability() {
    let e = error_of(&GOOD.replace("rtt = \"30ms\"", "rtt = \"30ms\"\npath = [\"x\"]"));
    assert_mentions(&e, &["flows[0].path[0]", "\"x\"", "known: b"]);
    let e = error_of(&GOOD.replace("rate = \"10Mbps\"", "rate = \"10Mbps\"\nloss = 1.5"));
    assert_mentions(&e, &["links[0].loss", "0.0 to 1.0"]);
}

#[test]
fn wrong_type_and_syntax_errors_carry_the_location() {
    let e = error_of(&GOOD.replace("duration = \"5s\"", "duration = 5"));
    assert_mentions(&e, &["duration", "string"]);
    let e = error_of("name = \"x\"\n[[links]\n");
    assert_mentions(&e, &["test.toml", "line"]);
}

#[test]
fn bad_traffic_kind_lists_the_kinds() {
    let e = error_of(&GOOD.replace(
        "rtt = \"30ms\"",
        "rtt = \"30ms\"\ntraffic = { kind = \"burst\" }",
    ));
    assert_mentions(&e, &["flows[0].traffic", "sized", "web", "cbr"]);
}

#[test]
fn bad_web_connection_names_the_allowed_values() {
    let e = error_of(&GOOD.replace(
        "rtt = \"30ms\"",
        "rtt = \"30ms\"\ntraffic = { kind = \"web\", size = \"25KB\", interval = \"100ms\", connection = \"keepalive\" }",
    ));
    assert_mentions(
        &e,
        &["flows[0].traffic", "keepalive", "per_request", "persistent"],
    );
}

/// Reverse data over links without `reverse_rate` meets no capacity limit: rejected, not run
/// until memory runs out.
#[test]
fn reverse_flow_without_a_reverse_capacity_is_rejected() {
    let reverse = GOOD.replace("rtt = \"30ms\"", "rtt = \"30ms\"\nreverse = true");
    let e = error_of(&reverse);
    assert_mentions(&e, &["flows[0].reverse", "reverse_rate", "on b", "rwnd"]);
    let registry = Registry::standard();
    let ok = |t: &str| polycc_sim::load_toml(t, &common::origin(), &registry).is_ok();
    assert!(ok(
        &reverse.replace("reverse = true", "reverse = true\nrwnd = \"100pkt\"")
    ));
    assert!(ok(&reverse.replace(
        "rate = \"10Mbps\"",
        "rate = \"10Mbps\"\nreverse_rate = \"5Mbps\""
    )));
    assert!(ok(&reverse.replace(
        "cca = \"cubic\"",
        "traffic = { kind = \"cbr\", rate = \"1Mbps\" }"
    )));
}

#[test]
fn send_jitter_is_validated() {
    let with = |extra: &str| GOOD.replace("rtt = \"30ms\"", &format!("rtt = \"30ms\"\n{extra}"));
    polycc_sim::load_toml(
        &with("send_jitter = \"1ms\"\nsend_jitter_dist = \"exponential\""),
        &common::origin(),
        &Registry::standard(),
    )
    .unwrap();
    let e = error_of(&with("send_jitter = \"2s\""));
    assert_mentions(&e, &["flows[0].send_jitter", "2s", "1s"]);
    let e = error_of(&with("send_jitter = \"1xs\""));
    assert_mentions(&e, &["flows[0].send_jitter", "ms"]);
    let e = error_of(&with(
        "send_jitter = \"1ms\"\nsend_jitter_dist = \"normal\"",
    ));
    assert_mentions(&e, &["flows[0].send_jitter_dist", "uniform", "exponential"]);
    let e = error_of(&with("send_jitter_dist = \"uniform\""));
    assert_mentions(&e, &["flows[0].send_jitter", "without send_jitter"]);
    let e = error_of(&with(
        "send_jitter = \"1ms\"\ntraffic = { kind = \"cbr\", rate = \"1Mbps\" }",
    ));
    assert_mentions(&e, &["flows[0].send_jitter", "unresponsive"]);
}

#[test]
fn a_controller_that_needs_video_frames_is_refused_on_other_traffic() {
    let with = |cca: &str, traffic: &str| {
        GOOD.replace("id = \"a\"", "id = \"cam\"").replace(
            "cca = \"cubic\"",
            &format!("cca = {cca}\ntraffic = {traffic}"),
        )
    };
    for traffic in [
        "\"bulk\"",
        "{ kind = \"sized\", size = \"1MB\" }",
        "{ kind = \"web\", size = \"20KB\", interval = \"200ms\" }",
    ] {
        let kind = traffic
            .split('"')
            .nth(1)
            .expect("the kind is the first quoted word");
        let e = error_of(&with("\"pibes\"", traffic));
        assert_mentions(
            &e,
            &[
                "test.toml: flows[0].cca: ",
                "flow \"cam\" runs pibes, which needs the frames of a video source",
                &format!("but its traffic is {kind};"),
                "kind = \"video\"",
            ],
        );
    }
    // The default traffic is bulk.
    let e = error_of(&GOOD.replace("\"cubic\"", "\"pibes\""));
    assert_mentions(&e, &["flow \"a\" runs pibes", "traffic is bulk"]);
    // A policy answers for what it runs: a PolyCC member, either Janus stage.
    for cca in [
        "{ name = \"poly\", pilot = \"cubic\", copilots = [\"pibes\"] }",
        "{ name = \"janus\", aggressive = \"pibes\" }",
    ] {
        let e = error_of(&with(cca, "\"bulk\""));
        assert_mentions(&e, &["runs ", "needs the frames of a video source"]);
    }
    // With video, or without a controller at all (unresponsive CBR), PIBES is fine.
    load(&with("\"pibes\"", "{ kind = \"video\" }")).unwrap();
    load(&with("\"pibes\"", "{ kind = \"cbr\", rate = \"1Mbps\" }")).unwrap();
    // GCC is a rate controller: it needs no frames and fills a bulk flow's path (tests/gcc.rs).
    for traffic in ["\"bulk\"", "{ kind = \"video\" }"] {
        load(&with("\"gcc\"", traffic)).unwrap();
    }
    // Every shipped controller but PIBES runs on bulk traffic.
    let registry = Registry::standard();
    let refused: Vec<&str> = registry
        .names()
        .into_iter()
        .filter(|n| load(&GOOD.replace("\"cubic\"", &format!("\"{n}\""))).is_err())
        .collect();
    assert_eq!(refused, ["pibes"]);
}
