//! WebRTC GCC end to end: it fills a bottleneck alone with a short queue, and (its known
//! weakness, the "WebRTC" row of PIBES's Table 1) gives way to a CUBIC flow that fills the buffer.

mod common;
use common::{mean_goodput_mbps, run};

#[test]
fn gcc_alone_fills_the_link_with_a_short_queue() {
    // 2 Mbit/s, 40 ms, a 250 ms buffer; GCC starts at 1 Mbit/s.
    let out = run(r#"
        name = "gcc-alone"
        duration = "60s"
        [[links]]
        id = "b"
        rate = "2Mbps"
        queue = { size = "42pkt" }
        [[flows]]
        id = "g"
        cca = { name = "gcc", start_rate_kbps = 1000 }
        rtt = "40ms"
    "#);
    let late = mean_goodput_mbps(&out, "g", 20.0, 60.0);
    assert!(late > 0.85 * 2.0, "goodput after 20 s {late:.3} Mbit/s");
    let q = &out.summary.links[0].queue_delay_ms;
    // A loss-based flow would hold this buffer near full (up to 250 ms).
    assert!(q.mean < 10.0 && q.p95 < 40.0, "queueing delay {q:?}");
}

#[test]
fn gcc_gives_way_to_cubic() {
    // 4 Mbit/s, 40 ms, 1 BDP; CUBIC joins at 20 s. GCC's delay-based side sees the standing
    // queue CUBIC builds as overuse and backs off; its share drops well below half.
    let out = run(r#"
        name = "gcc-vs-cubic"
        duration = "60s"
        [[links]]
        id = "b"
        rate = "4Mbps"
        queue = { size = "1bdp" }
        [[flows]]
        id = "g"
        cca = { name = "gcc", start_rate_kbps = 2000 }
        rtt = "40ms"
        [[flows]]
        id = "c"
        cca = "cubic"
        rtt = "40ms"
        start = "20s"
    "#);
    let before = mean_goodput_mbps(&out, "g", 10.0, 20.0);
    let g = mean_goodput_mbps(&out, "g", 30.0, 60.0);
    let c = mean_goodput_mbps(&out, "c", 30.0, 60.0);
    assert!(before > 3.0, "GCC alone {before:.2} Mbit/s");
    let share = g / (g + c);
    assert!(
        share < 0.4,
        "GCC share with CUBIC {share:.2} ({g:.2} vs {c:.2} Mbit/s)"
    );
    assert!(g + c > 0.9 * 4.0, "link under-used: {:.2}", g + c);
}
