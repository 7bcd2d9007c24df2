//! Closed-loop checks of the whole controller behind one FIFO bottleneck.

use super::*;
use crate::algos::test_support::PacedPath;

const MSS: Bytes = 1200;

fn gcc(start_kbps: f64) -> Gcc {
    Gcc::new(
        &CcContext::new(MSS),
        Rate::from_bps_f64(start_kbps * 1e3),
        MIN_RATE,
        MAX_RATE,
        1.0,
    )
}

fn secs(s: f64) -> Time {
    Time::ZERO + Duration::from_secs_f64(s)
}

/// Mean target rate and mean queueing delay over `[from, to)`, sampled every 10 ms.
fn run_and_measure(cc: &mut Gcc, path: &mut PacedPath, from: f64, to: f64) -> (f64, f64) {
    path.run_until(cc, secs(from));
    let (mut rate, mut delay, mut n) = (0.0, 0.0, 0.0);
    let mut t = from;
    while t < to {
        t += 0.01;
        path.run_until(cc, secs(t));
        rate += cc
            .media_control()
            .map(|m| m.target_bitrate)
            .unwrap()
            .as_bps() as f64;
        delay += path.queue_delay().as_millis_f64();
        n += 1.0;
    }
    (rate / n, delay / n)
}

#[test]
fn tracks_a_bottleneck_with_little_queue() {
    // 2 Mbit/s, 40 ms, start at 1 Mbit/s: the 8 %/s probing reaches the capacity, overuse backs
    // off to 0.85 × the received rate, and the queue stays short.
    let cap = Rate::from_mbps(2);
    let mut path = PacedPath::new(MSS, cap, Duration::from_millis(40));
    path.buffer = Duration::from_millis(500);
    let mut cc = gcc(1000.0);
    let (rate, delay) = run_and_measure(&mut cc, &mut path, 30.0, 60.0);
    let util = rate / cap.as_bps() as f64;
    assert!(
        (0.7..=1.05).contains(&util),
        "mean target {rate} bit/s = {util:.2} of capacity"
    );
    assert!(delay < 60.0, "mean queueing delay {delay:.1} ms");
    assert!(
        cc.aimd.link_capacity_kbps().is_some(),
        "never detected overuse"
    );
}

#[test]
fn overuse_cuts_the_rate_below_the_received_rate() {
    // Start far above a 1 Mbit/s bottleneck: the queue grows, overuse is detected and the rate
    // falls to about 0.85 × the received rate within a second or two.
    let cap = Rate::from_mbps(1);
    let mut path = PacedPath::new(MSS, cap, Duration::from_millis(40));
    path.buffer = Duration::from_secs(2);
    let mut cc = gcc(3000.0);
    path.run_until(&mut cc, secs(0.6)); // a whole received-rate window
    let mut cut_at = None;
    let mut t = 0.6;
    while t < 5.0 {
        t += 0.01;
        path.run_until(&mut cc, secs(t));
        if cc
            .media_control()
            .map(|m| m.target_bitrate)
            .unwrap()
            .as_bps()
            <= 1_000_000
        {
            cut_at = Some(t);
            break;
        }
    }
    let t = cut_at.expect("the rate never came down to the capacity");
    assert!(t < 2.5, "cut only at {t:.2} s");
    let r = cc
        .media_control()
        .map(|m| m.target_bitrate)
        .unwrap()
        .as_bps() as f64;
    assert!(
        (700_000.0..=1_000_000.0).contains(&r),
        "rate after the cut {r}"
    );
}

#[test]
fn heavy_random_loss_lowers_the_loss_based_rate() {
    // 20 % random loss on an uncongested path: the loss-based side cuts by 10 % per 300 ms + RTT
    // and ends far below the delay-based side.
    let mut path = PacedPath::new(MSS, Rate::from_mbps(50), Duration::from_millis(20));
    path.loss_every = 5;
    let mut cc = gcc(2000.0);
    path.run_until(&mut cc, secs(10.0));
    let loss = cc.loss.rate().as_bps() as f64;
    assert!(
        loss < 0.2 * cc.aimd.rate().as_bps() as f64,
        "loss-based {loss}"
    );
    assert!((cc.loss.loss_fraction() - 0.2).abs() < 0.03);
    assert_eq!(
        cc.media_control().map(|m| m.target_bitrate),
        Some(cc.loss.rate().max(MIN_RATE))
    );
}

#[test]
fn intent_bounds_the_rate_and_handover_carries_it() {
    let mut cc = gcc(300.0);
    cc.set_intent(
        Time::ZERO,
        &Intent::RealtimeVideo {
            min_rate: Rate::from_mbps(1),
            max_rate: Rate::from_mbps(3),
        },
    );
    assert_eq!(
        cc.media_control().map(|m| m.target_bitrate),
        Some(Rate::from_mbps(1))
    );
    cc.adopt(
        Time::ZERO,
        &HandoverState {
            pacing_rate: Some(Rate::from_mbps(8)),
            ..HandoverState::default()
        },
    );
    assert_eq!(
        cc.media_control().map(|m| m.target_bitrate),
        Some(Rate::from_mbps(3))
    );
    assert_eq!(cc.pacing_rate(), Some(Rate::from_mbps(3)));
    // Window: two round trips of 3 Mbit/s at the 100 ms floor = 75 000 bytes.
    assert_eq!(cc.cwnd(), 75_000);
}

#[test]
fn bad_parameters_are_rejected_by_name() {
    let reg = Registry::standard();
    let mut p = Params::new();
    p.insert("min_rate_kbps".into(), 500.0.into());
    p.insert("start_rate_kbps".into(), 100.0.into());
    let err = build(&p, &CcContext::new(MSS), &reg)
        .err()
        .expect("start below min");
    assert!(err.to_string().contains("start_rate_kbps"), "{err}");
    let mut p = Params::new();
    p.insert("speed".into(), 1.0.into());
    assert!(build(&p, &CcContext::new(MSS), &reg).is_err());
}
