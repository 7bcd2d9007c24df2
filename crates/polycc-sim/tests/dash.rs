//! DASH flows (`traffic = { kind = "dash" }`): the player's buffer, stalls and bitrate choice
//! against what the link can carry.

mod common;
use common::{assert_mentions, error_of, run};
use polycc_sim::output::StreamingSummary;

fn scenario(link: &str, duration: &str, traffic: &str) -> String {
    format!(
        r#"
        name = "dash"
        duration = "{duration}"
        [[links]]
        id = "b"
        rate = "{link}"
        queue = {{ kind = "droptail", size = "1bdp" }}
        [[flows]]
        id = "v"
        cca = "cubic"
        rtt = "40ms"
        traffic = {traffic}
        "#
    )
}

fn streaming(toml: &str) -> (StreamingSummary, polycc_sim::RunOutput) {
    let out = run(toml);
    let s = out.summary.flows[0]
        .streaming
        .clone()
        .expect("a dash flow has a player summary");
    (s, out)
}

#[test]
fn a_bitrate_the_link_carries_plays_without_a_stall() {
    let (s, out) = streaming(&scenario(
        "20Mbps",
        "60s",
        r#"{ kind = "dash", bitrates = ["4Mbps"], chunk = "4s", buffer = "20s" }"#,
    ));
    assert_eq!(s.rebuffers, 0, "{s:?}");
    assert_eq!(s.rebuffer_ratio, 0.0);
    // The first chunk (2 MB) takes the request's 20 ms, CUBIC's slow start and 0.8 s at the
    // link's rate: about 1.2 s.
    let startup = s.startup_s.unwrap();
    assert!((0.9..2.0).contains(&startup), "{startup}");
    // Once the 20 s buffer is full the player asks for a chunk per 4 s of playback: 5 chunks
    // of buffer plus one per 4 s after the start, less the one on its way.
    assert!((18..=21).contains(&s.chunks), "{s:?}");
    assert_eq!(s.chunk_bitrate_mbps, Some(4.0));
    assert_eq!(s.bitrate_switches, 0);
    // Each chunk is a transfer of 4 s × 4 Mbit/s.
    let t = &out.transfers;
    assert!(t.f64s("bytes").unwrap().iter().all(|&b| b == 2e6));
    let done = t
        .f64s("completed_s")
        .unwrap()
        .iter()
        .filter(|x| !x.is_nan())
        .count();
    assert_eq!(done as u64, s.chunks);
    // Without an intent of the scenario's the player states the chunk's bitrate as its target.
    let target = out.summary.flows[0].target_rate_mbps.unwrap();
    assert!((target - 4.0).abs() < 0.05, "{target}");
    // Steady state: the flow carries the video's rate, not the link's.
    let g = common::mean_goodput_mbps(&out, "v", 30.0, 60.0);
    assert!((3.6..4.6).contains(&g), "{g}");
}

#[test]
fn a_bitrate_above_the_link_stalls_for_the_missing_share() {
    let (s, _) = streaming(&scenario(
        "5Mbps",
        "60s",
        r#"{ kind = "dash", bitrates = ["8Mbps"], abr = "highest" }"#,
    ));
    // The link delivers under 5/8 of the video's rate: the player stalls at every chunk, and
    // at least 3/8 of the time once playing.
    assert!(s.rebuffers >= 5, "{s:?}");
    assert!((0.375..0.55).contains(&s.rebuffer_ratio), "{s:?}");
}

#[test]
fn bola_settles_below_what_the_link_carries_and_does_not_stall() {
    let (s, _) = streaming(&scenario(
        "10Mbps",
        "120s",
        r#"{ kind = "dash", bitrates = ["1Mbps", "2.5Mbps", "5Mbps", "8Mbps", "16Mbps"] }"#,
    ));
    let mean = s.chunk_bitrate_mbps.unwrap();
    // Starts at the lowest level (an empty buffer) and climbs as the buffer fills; the 16 Mbit/s
    // level would drain the buffer, so it is taken seldom.
    assert!((4.0..10.0).contains(&mean), "{s:?}");
    assert!(s.bitrate_switches >= 2, "{s:?}");
    assert!(s.rebuffer_ratio < 0.02, "{s:?}");
}

#[test]
fn the_dash_js_rule_reaches_the_top_of_a_ladder_that_plain_bola_never_does() {
    // 100 Mbit/s for one player of a 0.25-15 Mbit/s ladder: its buffer waits a chunk below the
    // 30 s target, where BOLA's buffer rule alone picks 5 Mbit/s; dash.js's rule counts that
    // waiting as a placeholder buffer, climbs to 15 Mbit/s and stays.
    let ladder = r#"["0.25Mbps", "0.5Mbps", "0.75Mbps", "1Mbps", "1.25Mbps", "1.9Mbps", "3.1Mbps", "5Mbps", "10Mbps", "15Mbps"]"#;
    let mean = |abr: &str| {
        let (s, _) = streaming(&scenario(
            "100Mbps",
            "120s",
            &format!(r#"{{ kind = "dash", bitrates = {ladder}, abr = "{abr}" }}"#),
        ));
        eprintln!("{abr}: {s:?}");
        assert_eq!(s.rebuffers, 0, "{abr}: {s:?}");
        s.chunk_bitrate_mbps.unwrap()
    };
    let (rule, basic) = (mean("bola"), mean("bola-basic"));
    assert!(rule > 12.0, "dash.js rule {rule}");
    assert!(basic < 6.0, "BOLA alone {basic}");
}

#[test]
fn a_video_of_given_length_ends_without_a_stall() {
    let (s, _) = streaming(&scenario(
        "20Mbps",
        "40s",
        r#"{ kind = "dash", bitrates = ["4Mbps"], chunk = "4s", length = "18s" }"#,
    ));
    // 18 s of video is five chunks (the last one partly played); playing out the end is no stall.
    assert_eq!(s.chunks, 5);
    assert_eq!(s.rebuffers, 0, "{s:?}");
    assert!((19.5..20.5).contains(&s.played_s), "{s:?}");
}

#[test]
fn bad_dash_settings_are_refused_naming_the_key() {
    for (traffic, words) in [
        (
            r#"{ kind = "dash", bitrates = [] }"#,
            &["flows[0].traffic", "bitrates"][..],
        ),
        (
            r#"{ kind = "dash", bitrates = ["4Mbps", "2Mbps"] }"#,
            &["from the lowest up"],
        ),
        (
            r#"{ kind = "dash", bitrates = ["4Mbps"], chunk = "4ms" }"#,
            &["chunk", "seconds of video"],
        ),
        (
            r#"{ kind = "dash", bitrates = ["4Mbps"], buffer = "2s" }"#,
            &["buffer", "less than one chunk"],
        ),
        (
            r#"{ kind = "dash", bitrates = ["4Mbps"], abr = "mpc" }"#,
            &["abr", "bola"],
        ),
        (
            r#"{ kind = "dash", bitrates = ["4Mbps"], startup = "60s" }"#,
            &["startup", "at most the buffer"],
        ),
        (
            r#"{ kind = "dash", bitrates = ["4Mbps"], bitrate = "2Mbps" }"#,
            &["bitrate"],
        ),
    ] {
        let e = error_of(&scenario("10Mbps", "10s", traffic));
        assert_mentions(&e, words);
    }
}
