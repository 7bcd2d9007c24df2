//! Page-load flows (`traffic = { kind = "page" }`): a browser asks for a page's levels one after
//! another; its load time is the levels' transfers plus a request's round trip each, and grows
//! with the queue that other flows leave at the bottleneck.

mod common;
use common::{assert_mentions, error_of, run};
use polycc_sim::output::PageSummary;

/// A 15 KB document, 400 KB of what it references, 200 KB of what those load: one page load
/// every 2 s on 15 Mbit/s, 50 ms, a 4-BDP buffer, for 30 s, beside `background` (a CCA, or
/// nothing).
fn scenario(traffic: &str, background: Option<&str>) -> String {
    let mut s = format!(
        r#"
        name = "page"
        duration = "30s"
        [[links]]
        id = "b"
        rate = "15Mbps"
        queue = {{ size = "4bdp" }}
        [[flows]]
        id = "web"
        cca = "cubic"
        rtt = "50ms"
        traffic = {traffic}
        "#
    );
    if let Some(cca) = background {
        s += &format!("[[flows]]\nid = \"bg\"\ncca = \"{cca}\"\nrtt = \"50ms\"\n");
    }
    s
}

const PAGE: &str = r#"{ kind = "page", pages = [["15KB", "400KB", "200KB"]], interval = "2s", arrivals = "periodic" }"#;

fn browsing(toml: &str) -> PageSummary {
    run(toml).summary.flows[0]
        .browsing
        .clone()
        .expect("a page flow has a browser summary")
}

#[test]
fn a_page_alone_loads_in_its_transfers_plus_a_round_trip_per_level() {
    let s = browsing(&scenario(PAGE, None));
    let (plt, prt) = (s.page_load_s.unwrap(), s.page_response_s.unwrap());
    eprintln!(
        "alone: {} loads, PLT p50 {:.3} s, PRT p50 {:.3} s",
        s.page_loads, plt.p50, prt.p50
    );
    assert_eq!((s.page_loads, s.page_loads_delayed), (15, 0));
    // Each of the three levels is asked for a round trip (50 ms) before it comes, and the
    // 615 KB take 0.33 s at 15 Mbit/s; the document's 11 packets are two initial windows.
    assert!(plt.min >= 0.15 + 0.328, "PLT {plt:?}");
    assert!(plt.p50 < 0.8, "PLT {plt:?}");
    assert!(prt.min >= 0.1 && prt.p50 < 0.15, "PRT {prt:?}");
    // Over Linux's stack a new connection begins with the handshake's round trip; one
    // connection for every load pays it once.
    let linux = |traffic: &str| {
        let toml =
            scenario(traffic, None).replace("rtt = \"50ms\"", "rtt = \"50ms\"\nstack = \"linux\"");
        browsing(&toml).page_response_s.unwrap().p50
    };
    let per_load = linux(PAGE);
    let persistent =
        linux(&PAGE.replace("\"periodic\"", "\"periodic\", connection = \"persistent\""));
    eprintln!("linux PRT p50: {per_load:.3} s per load, {persistent:.3} s persistent");
    assert!(per_load - persistent > 0.045, "{per_load} vs {persistent}");
}

#[test]
fn a_bulk_cubic_flow_in_a_deep_buffer_slows_page_loads_far_more_than_vegas() {
    // Janus Fig. 14's mechanism: the bulk flow's standing queue lengthens every round trip a
    // page load waits for.
    let alone = browsing(&scenario(PAGE, None)).page_load_s.unwrap().mean;
    let cubic = browsing(&scenario(PAGE, Some("cubic")))
        .page_load_s
        .unwrap()
        .mean;
    let vegas = browsing(&scenario(PAGE, Some("vegas")))
        .page_load_s
        .unwrap()
        .mean;
    eprintln!("mean PLT: alone {alone:.3} s, beside CUBIC {cubic:.3}, beside Vegas {vegas:.3}");
    assert!(cubic > 2.5 * alone, "cubic {cubic} alone {alone}");
    assert!(vegas < 2.0 * alone, "vegas {vegas} alone {alone}");
}

#[test]
fn poisson_loads_come_at_the_mean_interval_and_pick_among_the_pages() {
    let page = r#"{ kind = "page", pages = [["10KB"], ["10KB", "1MB"]], interval = "1s" }"#;
    let toml = scenario(page, None).replace("\"30s\"", "\"100s\"");
    let s = browsing(&toml);
    let plt = s.page_load_s.unwrap();
    eprintln!(
        "{} loads, PLT min {:.3} p50 {:.3} p95 {:.3}",
        s.page_loads, plt.min, plt.p50, plt.p95
    );
    assert!((70..=130).contains(&s.page_loads), "{} loads", s.page_loads);
    // Both pages were loaded: the one-level page (7 packets) in a round trip, the other in
    // over 0.5 s (1 MB at 15 Mbit/s).
    assert!(plt.min < 0.2 && plt.p95 > 0.6, "PLT {plt:?}");
}

#[test]
fn bad_page_settings_are_refused_naming_the_key() {
    for (traffic, words) in [
        (
            r#"{ kind = "page", pages = [], interval = "1s" }"#,
            &["flows[0].traffic", "pages must list"][..],
        ),
        (
            r#"{ kind = "page", pages = [[]], interval = "1s" }"#,
            &["pages[0]", "levels"],
        ),
        (
            r#"{ kind = "page", pages = [["10KB", "0KB"]], interval = "1s" }"#,
            &["pages[0][1]", "positive"],
        ),
        (
            r#"{ kind = "page", pages = [["1bdp"]], interval = "1s" }"#,
            &["pages[0][0]", "bdp"],
        ),
        (
            r#"{ kind = "page", pages = [["10KB"]], interval = "0s" }"#,
            &["interval must be positive"],
        ),
        (
            r#"{ kind = "page", pages = [["10KB"]], interval = "1s", connection = "keep" }"#,
            &["connection", "persistent"],
        ),
        (r#"{ kind = "page", pages = [["10KB"]] }"#, &["interval"]),
    ] {
        let e = error_of(&scenario(traffic, None));
        assert_mentions(&e, words);
    }
}
