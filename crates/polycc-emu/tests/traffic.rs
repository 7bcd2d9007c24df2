//! The emulator's traffic beyond bulk: web transfers on the kernel's TCP and on polycc's UDP
//! transport, persistent and one connection per transfer, and unresponsive CBR and Poisson
//! sources; each against the simulator running the same scenario file (same request times:
//! the application's random stream is the flow's own in both).

mod common;

use common::scenario::{Flow, Scenario};
use common::{emulator_available, model};
use polycc_sim::output::FlowSummary;

/// Path round trip of every flow.
const RTT_S: f64 = 0.040;

/// A 20 Mbit/s bottleneck with a one-BDP drop-tail buffer.
fn bottleneck_20(name: &str, duration: &str) -> Scenario {
    Scenario::new(name, duration).droptail_link("bottleneck", "20Mbps", "1bdp")
}

fn run_both(s: &Scenario) -> (Vec<FlowSummary>, Vec<FlowSummary>) {
    let m = s.model();
    let registry = polycc::Registry::standard();
    let emu = polycc_emu::run(&m, &registry, &Default::default()).expect("emulated");
    let sim = polycc_sim::run(&m, &registry).expect("simulated");
    for (e, s) in emu.summary.flows.iter().zip(&sim.summary.flows) {
        eprintln!(
            "{}: transfers {} / {}, FCT {:?} / {:?} s, goodput {:.3} / {:.3} Mbit/s, loss {:.4} / \
             {:.4}, RTT {:.1} / {:.1} ms (emulated / simulated)",
            e.id,
            e.transfers_completed,
            s.transfers_completed,
            e.fct_s,
            s.fct_s,
            e.goodput_mbps,
            s.goodput_mbps,
            e.loss_rate,
            s.loss_rate,
            e.rtt_ms.mean,
            s.rtt_ms.mean
        );
    }
    (emu.summary.flows, sim.summary.flows)
}

#[test]
fn web_transfers_take_as_long_as_in_the_simulator_handshakes_included() {
    let Some(_one) = emulator_available("web_transfers") else {
        return;
    };
    // Three web flows, one 200 kB transfer a second each, started a third of a second apart
    // so that their transfers (0.1-0.25 s) do not overlap: each has the link to itself.
    let web = |connection: &str| {
        format!(
            r#"{{ kind = "web", size = "200KB", interval = "1s", arrivals = "periodic", connection = "{connection}" }}"#
        )
    };
    let (emu, sim) = run_both(
        &bottleneck_20("web", "4s")
            .flow(
                Flow::new("kernel-persistent", "cubic", "40ms")
                    .stack("linux")
                    .traffic(&web("persistent")),
            )
            .flow(
                Flow::new("kernel-per-request", "cubic", "40ms")
                    .stack("linux")
                    .start("330ms")
                    .traffic(&web("per_request")),
            )
            .flow(
                Flow::new("polycc-per-request", "cubic", "40ms")
                    .stack("udp")
                    .start("660ms")
                    .traffic(&web("per_request")),
            ),
    );
    for (e, s) in emu.iter().zip(&sim) {
        assert_eq!(e.transfers_completed, 4, "{}", e.id);
        assert_eq!(s.transfers_completed, 4, "{}", s.id);
        // Four transfers of 200 kB: every byte counted once, none more.
        assert_eq!(e.bytes_delivered, 800_000, "{}", e.id);
        assert_eq!(s.bytes_delivered, 800_000, "{}", s.id);
    }
    let fct = |f: &FlowSummary| f.fct_s.expect("transfers completed");
    // The kernel's connections open with a handshake, and so do the Linux model's
    // (`engine::handshake`): a persistent connection's delays its first transfer by a round
    // trip, a quarter of one on average over four; every new connection per request pays one.
    // Between transfers the kernel restarts its window after a second of silence (more than
    // an RTO), and so does the model.
    for (e, s) in emu.iter().zip(&sim).take(2) {
        let (fe, fs) = (fct(e), fct(s));
        assert!((fe - fs).abs() < 0.08 * fs, "{}: {fe} / {fs}", e.id);
    }
    let (persistent, per_request) = (fct(&sim[0]), fct(&sim[1]));
    assert!(
        per_request - persistent > 0.5 * RTT_S && per_request - persistent < RTT_S,
        "persistent {persistent}, per request {per_request}"
    );
    // polycc's transport has no handshake in either backend.
    let (e, s) = (fct(&emu[2]), fct(&sim[2]));
    assert!((e - s).abs() < 0.1 * s, "polycc per request {e} / {s}");
}

#[test]
fn on_off_sources_send_in_their_on_periods_as_in_the_simulator() {
    let Some(_one) = emulator_available("on_off_sources") else {
        return;
    };
    // Each alone on its link half the time: the kernel's CUBIC on for 0-0.5 s, 1-1.5 s, ...,
    // polycc's in between.
    let on_off = r#"{ kind = "on_off", on = "500ms", off = "500ms", periods = "fixed" }"#;
    let (emu, sim) = run_both(
        &bottleneck_20("on-off", "4s")
            .flow(
                Flow::new("kernel", "cubic", "40ms")
                    .stack("linux")
                    .traffic(on_off),
            )
            .flow(
                Flow::new("polycc", "cubic", "40ms")
                    .stack("udp")
                    .start("500ms")
                    .traffic(on_off),
            ),
    );
    for (e, s) in emu.iter().zip(&sim) {
        // Half the time at most of 20 Mbit/s, less each period's restart.
        assert!(
            e.goodput_mbps > 4.0 && e.goodput_mbps < 11.0,
            "{}: {}",
            e.id,
            e.goodput_mbps
        );
        // The kernel's flow spreads from run to run (7.35-8.23 Mbit/s over six idle runs, and
        // 8.56 in a CI run of 2026-11-27, against the model's 7.08): whether its window is
        // halved once or twice after an off period of about two RTOs depends on when its last
        // packet left. The band covers that spread.
        assert!(
            (e.goodput_mbps - s.goodput_mbps).abs() < 0.25 * s.goodput_mbps,
            "{}: {} / {}",
            e.id,
            e.goodput_mbps,
            s.goodput_mbps
        );
    }
}

#[test]
fn unresponsive_sources_keep_their_rate_and_see_the_path_delay() {
    let Some(_one) = emulator_available("unresponsive_sources") else {
        return;
    };
    let (emu, sim) = run_both(
        &bottleneck_20("unresponsive", "3s")
            .seed(5)
            .flow(Flow::new("cbr", "cubic", "40ms").traffic(r#"{ kind = "cbr", rate = "6Mbps" }"#))
            .flow(
                Flow::new("poisson", "cubic", "40ms")
                    .stack("linux")
                    .traffic(r#"{ kind = "poisson", rate = "3Mbps" }"#),
            ),
    );
    for (e, s, rate_mbps) in [(&emu[0], &sim[0], 6.0), (&emu[1], &sim[1], 3.0)] {
        assert_eq!(e.cca, "none");
        // 1500-byte packets, and no loss on a link loaded to 45 %.
        let packets: f64 = rate_mbps * 1e6 / 8.0 / 1500.0 * 3.0;
        let spread = if e.id == "cbr" {
            2.0
        } else {
            3.0 * packets.sqrt()
        };
        assert!(
            (e.packets_sent as f64 - packets).abs() <= spread + 1.0,
            "{}: {} packets sent, {packets} expected",
            e.id,
            e.packets_sent
        );
        // Nothing is dropped; what counts as lost is what was still on the way at the end
        // (20 ms of packets), in both backends.
        let in_flight = rate_mbps * 1e6 / 8.0 / 1500.0 * 0.020 + 2.0;
        assert!(
            e.loss_rate <= in_flight / e.packets_sent as f64,
            "{}: {}",
            e.id,
            e.loss_rate
        );
        // Goodput is the packets' payload; both backends' payloads are within a few bytes.
        let payload_share = e.bytes_delivered as f64 / (e.packets_sent as f64 * 1500.0);
        assert!(
            payload_share > 0.95 && payload_share < 0.97,
            "{}",
            payload_share
        );
        assert!(
            (e.goodput_mbps - s.goodput_mbps).abs() < 0.03 * s.goodput_mbps + 3.0 * 0.012,
            "{}: {} / {}",
            e.id,
            e.goodput_mbps,
            s.goodput_mbps
        );
        // The RTT a probe would see: the path's 40 ms and a little queueing behind the other
        // source's bursts.
        assert!(
            e.rtt_ms.min >= 40.0 && e.rtt_ms.mean < 42.0,
            "{}: {:?}",
            e.id,
            e.rtt_ms
        );
    }
}

/// The emulator's refusal of a one-link scenario whose only flow, `a`, has the TOML `flow`.
/// Needs no privileges: a scenario is refused before anything is made.
fn refusal(flow: &str) -> String {
    let m = model(&format!(
        r#"
name = "refused"
[[links]]
id = "l"
rate = "10Mbps"
[[flows]]
id = "a"
rtt = "40ms"
{flow}
"#
    ));
    polycc_emu::run(&m, &polycc::Registry::standard(), &Default::default())
        .expect_err("refused")
        .to_string()
}

#[test]
fn video_off_quic_is_refused_naming_the_key() {
    // Video frames travel as QUIC datagrams: on polycc's UDP sender they are not emulated.
    let text = refusal("traffic = { kind = \"video\" }\ncca = \"gcc\"\nstack = \"udp\"");
    assert!(text.contains("flows (a).traffic.kind"), "{text}");
    assert!(text.contains("--backend sim"), "{text}");
}

#[test]
fn traffic_the_testbed_cannot_carry_is_refused_in_one_clean_sentence() {
    for (flow, says) in [
        (
            r#"traffic = { kind = "page", pages = [["100KB"]], interval = "1s" }"#,
            "modelled in the simulator only",
        ),
        // A DASH player runs over the kernel's TCP and real QUIC, not polycc's UDP sender.
        (
            "traffic = { kind = \"dash\", bitrates = [\"1Mbps\"] }\nstack = \"udp\"",
            "runs over the kernel's TCP or real QUIC in the emulator (stack = \"linux\", \"tcp\" or \"quic\")",
        ),
    ] {
        let text = refusal(flow);
        assert!(text.contains("flows (a).traffic.kind"), "{text}");
        assert!(text.contains(says), "{text}");
        assert!(text.contains("--backend sim"), "{text}");
        // A line break in the message's source must not leave a run of spaces in it.
        assert!(!text.contains("  "), "{text}");
    }
}

#[test]
fn a_dash_player_over_kernel_tcp_fetches_and_plays_as_in_the_simulator() {
    let Some(_one) = emulator_available("dash_over_kernel_tcp") else {
        return;
    };
    // dash.js's BOLA rule over kernel CUBIC on 20 Mbit/s: the player starts at the ladder's
    // lowest and climbs to its top, which the link carries; from 8 s of buffer on it asks for
    // a 1-s chunk each second of playback, so it fetches the same chunks in both.
    let dash = r#"{ kind = "dash", bitrates = ["1Mbps", "2.5Mbps", "5Mbps", "8Mbps"], chunk = "1s", buffer = "8s" }"#;
    let (emu, sim) = run_both(
        &bottleneck_20("dash", "10s").flow(
            Flow::new("player", "cubic", "40ms")
                .stack("linux")
                .traffic(dash),
        ),
    );
    let e = emu[0].streaming.as_ref().expect("emulated player");
    let s = sim[0].streaming.as_ref().expect("simulated player");
    eprintln!("emulated {e:?}\nsimulated {s:?}");
    assert!(
        e.chunks.abs_diff(s.chunks) <= 1 && s.chunks >= 12,
        "chunks {} / {}",
        e.chunks,
        s.chunks
    );
    assert_eq!(
        (e.rebuffers, s.rebuffers),
        (0, 0),
        "no stall on a link twice the top"
    );
    let (eb, sb) = (
        e.chunk_bitrate_mbps.expect("emulated bitrate"),
        s.chunk_bitrate_mbps.expect("simulated bitrate"),
    );
    assert!(
        sb > 4.0 && (eb - sb).abs() <= 0.2 * sb,
        "mean bitrate {eb} / {sb} Mbit/s"
    );
    // Playback starts once the first chunk (the lowest level, 125 kB) is in: a handshake and
    // slow start's first rounds on a 40 ms path, alike within a round trip.
    let (es, ss) = (e.startup_s.expect("started"), s.startup_s.expect("started"));
    assert!(ss < 0.3 && (es - ss).abs() < RTT_S, "startup {es} / {ss} s");
    // Each chunk is a transfer from its request to its last byte (the last may be in at the
    // receiver and its cue not yet back at the end).
    assert!(emu[0].transfers_completed.abs_diff(e.chunks) <= 1);
}
