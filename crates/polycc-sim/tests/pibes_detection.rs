//! PIBES's competing-flow flag with three and four CUBIC flows (the paper's Fig. 9 setting:
//! 5 Mbit/s, one-way delay 20 ms, a 50-packet drop-tail queue, a CUBIC flow joining every 5 s),
//! and the share it then keeps (§III-B: s_min = 0.5 while competing).

mod common;
use common::run;
use polycc_sim::RunOutput;

/// CUBIC flows join at 5, 10, 15 and 20 s.
const JOIN_EVERY_S: f64 = 5.0;
const CUBIC_FLOWS: u32 = 4;
const DURATION_S: f64 = 30.0;
/// The flag and the share are judged from this long after an arrival (its transient left out,
/// as the reproduction's 1f does).
const GRACE_S: f64 = 1.0;

/// The setting of REPRODUCTION.md's experiment 1 (scenarios/papers/pibes/estimation.toml): a
/// fixed burst of 6 at α = 0.1, CUBIC flows on `stack` ("quic": polycc's default stack, paced
/// at 1.2 cwnd/srtt; "linux": the Linux model, unpaced and ACK-clocked, delayed ACKs), with
/// receive timestamps given U[0, 1 ms] noise when `noise`. Every join is `shift_ms` after its
/// multiple of 5 s (5 s is a frame boundary at 30 fps).
fn four_cubic(shift_ms: f64, noise: bool, stack: &str) -> RunOutput {
    let (name, jitter) = if noise {
        (
            "pibes-detection".to_string(),
            r#"jitter = { max = "1ms", direction = "data" }"#,
        )
    } else {
        (format!("pibes-detection-{stack}"), "")
    };
    let mut s = format!(
        r#"
        name = "{name}"
        duration = "{DURATION_S}s"
        [[links]]
        id = "b"
        rate = "5Mbps"
        queue = {{ kind = "droptail", size = "50pkt" }}
        {jitter}
        [[flows]]
        id = "video"
        cca = {{ name = "pibes", burst = 6, alpha = 0.1 }}
        rtt = "40ms"
        traffic = {{ kind = "video", fps = 30, min_rate = "0.5Mbps", max_rate = "8Mbps" }}
        "#
    );
    for k in 1..=CUBIC_FLOWS {
        let start_ms = 1000.0 * JOIN_EVERY_S * f64::from(k) + shift_ms;
        s += &format!(
            "[[flows]]\nid = \"cubic{k}\"\ncca = \"cubic\"\nstack = \"{stack}\"\nrtt = \"40ms\"\nstart = \"{start_ms}ms\"\n"
        );
    }
    run(&s)
}

/// The span with `n` CUBIC flows present, from GRACE_S after the n-th joins.
fn phase(n: u32, shift_ms: f64) -> (f64, f64) {
    let join = |k: u32| JOIN_EVERY_S * f64::from(k) + shift_ms / 1e3;
    let end = if n < CUBIC_FLOWS {
        join(n + 1)
    } else {
        DURATION_S
    };
    (join(n) + GRACE_S, end)
}

/// Fraction of the video's settled frames produced in [t0, t1) that carried the flag.
fn flag_rate(out: &RunOutput, (t0, t1): (f64, f64)) -> f64 {
    let t = out.frames.f64s("generated_s").unwrap();
    let c = out.frames.f64s("competing").unwrap();
    let settled = out.frames.f64s("settled").unwrap();
    let flags: Vec<f64> = (0..t.len())
        .filter(|&i| settled[i] == 1.0 && t[i] >= t0 && t[i] < t1)
        .map(|i| c[i])
        .collect();
    assert!(!flags.is_empty(), "no frames in {t0}..{t1} s");
    flags.iter().sum::<f64>() / flags.len() as f64
}

/// Mean of the video flow's time-series `column` over the bins in [t0, t1).
fn video_mean(out: &RunOutput, column: &str, (t0, t1): (f64, f64)) -> f64 {
    let t = out.flows.f64s("t_s").unwrap();
    let flow = out.flows.strs("flow").unwrap();
    let v = out.flows.f64s(column).unwrap();
    let xs: Vec<f64> = (0..t.len())
        .filter(|&i| flow[i] == "video" && t[i] >= t0 && t[i] < t1)
        .map(|i| v[i])
        .collect();
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

#[test]
fn flag_holds_and_share_stays_near_s_min_with_three_and_four_cubic_flows() {
    // Joins on the frame grid (the newcomer's first window then lands inside a PIBES burst) and
    // 4 and 12 ms off it. While the receiver paired adjacent packets only, the flag was up in
    // 78 % (on the grid) and 88 % (12 ms off) of the frames with four flows, and the mean share
    // rose to about 0.6 (0.75-0.83 in other runs: REPRODUCTION.md, 1f).
    for shift_ms in [0.0, 4.0, 12.0] {
        let out = four_cubic(shift_ms, true, "quic");
        for n in [3, 4] {
            let span = phase(n, shift_ms);
            let flag = flag_rate(&out, span);
            let share = video_mean(&out, "cc_share", span);
            let util = video_mean(&out, "throughput_mbps", span) / 5.0;
            let at = format!("joins +{shift_ms} ms, {n} CUBIC flows ({span:?} s)");
            assert!(flag >= 0.9, "{at}: flag up in {flag:.3} of the frames");
            // s_min = 0.5; the share may rise by Δ+ between RTT increases, not towards s_max.
            assert!(share <= 0.6, "{at}: mean share {share:.3}");
            // The link share about s_min (the band of REPRODUCTION.md's 5d).
            assert!(
                (0.4..=0.65).contains(&util),
                "{at}: PIBES carries {util:.3} of the link"
            );
        }
    }
}

/// The share of the video's paced gaps in [t0, t1) that a competitor stretched (at least 1.5·d,
/// the receiver's cumulative `paced_stretched` over `paced_samples`) and their mean length in d.
fn stretched(out: &RunOutput, (t0, t1): (f64, f64)) -> (f64, f64) {
    let t = out.flows.f64s("t_s").unwrap();
    let flow = out.flows.strs("flow").unwrap();
    let cols = [
        "cc_paced_samples",
        "cc_paced_stretched",
        "cc_paced_stretch_sum",
    ]
    .map(|c| out.flows.f64s(c).unwrap_or_else(|| panic!("no column {c}")));
    let last_before = |at: f64| {
        (0..t.len())
            .rev()
            .find(|&i| flow[i] == "video" && t[i] < at && cols[0][i].is_finite())
            .map_or([0.0; 3], |i| cols.each_ref().map(|c| c[i]))
    };
    let (a, b) = (last_before(t0), last_before(t1));
    let (samples, hits, sum) = (b[0] - a[0], b[1] - a[1], b[2] - a[2]);
    (hits / samples, sum / hits)
}

#[test]
fn unpaced_cubic_stretches_few_paced_gaps_and_the_flag_fails() {
    // REPRODUCTION.md's 1f: the paper's rule reads a competitor only through the paced gaps it
    // stretches. Paced CUBIC spreads its packets and stretches about a third of them (measured:
    // 39 %, 35 %, 27 %, 29 % with 1-4 flows); the Linux model's CUBIC sends clumps on its ACK
    // clock, which repeats their place in the frame cycle, and stretches far fewer (9 %, 0.7 %,
    // 11 %, 8 %). Which few, and by how much, moves with the flows' phase: before each stack
    // counted its own bytes (`tests/counted_bytes.rs`) it was 7 %, 10 %, 9 %, 4 %. The flag is
    // then up in 69 %, 2 %, 72 %, 56 % of the frames (100 % beside paced CUBIC).
    let paced = four_cubic(0.0, false, "quic");
    let unpaced = four_cubic(0.0, false, "linux");
    for n in 1..=CUBIC_FLOWS {
        let span = phase(n, 0.0);
        let (p, u) = (stretched(&paced, span), stretched(&unpaced, span));
        let (fp, fu) = (flag_rate(&paced, span), flag_rate(&unpaced, span));
        let at = format!(
            "{n} CUBIC flows ({span:?} s): paced {p:?}, unpaced {u:?}, flag {fp:.3} / {fu:.3}"
        );
        assert!(p.0 >= 0.2, "{at}");
        assert!(u.0 <= 0.6 * p.0, "{at}");
        assert!(fp >= 0.9, "{at}");
        assert!(fu <= 0.8, "{at}");
    }
}
