//! Explicit event sequences with the numbers of the paper's constants.

use super::burst::{burst_size, FrameQueue};
use super::receiver::PibesReceiver;
use super::share::{Mode, ShareFsm, ShareParams};
use super::*;
use crate::signals::Arrival;

const P: Bytes = 1200;

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x / 1e3)
}
fn at(x_ms: f64) -> Time {
    Time::ZERO + ms(x_ms)
}
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn burst_size_rule() {
    // Eq. (1) with n_min = 3, n_max = 6.
    let expect = [
        (1, 3),
        (2, 3),
        (5, 3),
        (6, 3),
        (7, 4),
        (10, 5),
        (11, 6),
        (12, 6),
        (40, 6),
    ];
    for (n_f, n_b) in expect {
        assert_eq!(burst_size(n_f, N_MIN, N_MAX), n_b, "n_f = {n_f}");
    }
}

#[test]
fn frame_queue_positions_span_frames() {
    let mut q = FrameQueue::default();
    q.push(0, 4, N_MIN, N_MAX);
    q.push(1, 2, N_MIN, N_MAX);
    let slots: Vec<_> = std::iter::from_fn(|| q.on_sent()).collect();
    let got: Vec<_> = slots
        .iter()
        .map(|s| (s.frame, s.pos, s.in_burst()))
        .collect();
    assert_eq!(
        got,
        [
            (0, 0, true),
            (0, 1, true),
            (0, 2, true),
            (0, 3, false),
            (1, 0, true),
            (1, 1, true)
        ]
    );
    assert_eq!(q.queued_frames(), 0);
}

fn slot(frame: u64, pos: u32, n_f: u32) -> Slot {
    Slot {
        frame,
        pos,
        n_f,
        n_b: burst_size(n_f, N_MIN, N_MAX),
    }
}

#[test]
fn receiver_ewma_alpha_tenth() {
    let mut r = PibesReceiver::new(ALPHA, BETA);
    // Frame of 12 packets: burst of 6, burst gaps 1, 2, 1, 1, 1 ms.
    let mut t = 0.0;
    r.on_arrival(slot(0, 0, 12), at(t));
    for (pos, gap) in [(1, 1.0), (2, 2.0)] {
        t += gap;
        r.on_arrival(slot(0, pos, 12), at(t));
    }
    // d_0 = 1 ms; d_1 = 0.1·2 + 0.9·1 = 1.1 ms.
    let d = r.report().d.unwrap().as_millis_f64();
    assert!(close(d, 1.1, 1e-6), "d = {d}");
    assert_eq!(r.report().d_tilde, None);
    assert!(!r.report().competing);
    // Position 3 lost at the queue: it took no service time, so position 4 arrives 1 ms after
    // 2, and the pair 2 -> 4 is a burst sample: d = 0.1·1 + 0.9·1.1 = 1.09 ms.
    t += 1.0;
    r.on_arrival(slot(0, 4, 12), at(t));
    assert_eq!(r.burst_samples, 3);
    // Position 5 lost too; the pair burst(4) -> paced(6) is neither; paced 6 -> 7 feeds d~.
    t += 1.0;
    r.on_arrival(slot(0, 6, 12), at(t));
    t += 1.2;
    r.on_arrival(slot(0, 7, 12), at(t));
    let rep = r.report();
    assert!(close(rep.d.unwrap().as_millis_f64(), 1.09, 1e-6), "{rep:?}");
    assert!(
        close(rep.d_tilde.unwrap().as_millis_f64(), 1.2, 1e-6),
        "{rep:?}"
    );
    // 1.2 > 1.1 × 1.09 = 1.199: competing.
    assert!(rep.competing);
    // A new frame: its first packet pairs with nothing of the previous one.
    r.on_arrival(slot(1, 0, 12), at(t + 0.5));
    assert_eq!((r.burst_samples, r.paced_samples), (3, 1));
}

/// Frames of 16 packets (burst 6, then 10 paced, all sent 1 ms apart: the link rate) through
/// a full drop-tail queue: the burst arrives 1 ms apart, and every paced packet for which
/// `displaced(pos)` holds is dropped, its slot taken by a competitor's packet; a packet
/// admitted waits as long as any other, so each received one arrives at its send time plus a
/// constant. Returns the receiver after `frames` frames.
fn full_queue(frames: u64, displaced: impl Fn(u32) -> bool) -> PibesReceiver {
    let mut r = PibesReceiver::new(ALPHA, BETA);
    for frame in 0..frames {
        let start = 33.3 * frame as f64;
        for pos in (0..16).filter(|&p| p < 6 || !displaced(p)) {
            r.on_arrival(slot(frame, pos, 16), at(start + f64::from(pos)));
        }
    }
    r
}

#[test]
fn a_competitor_displacing_paced_packets_at_a_full_queue_is_detected() {
    // Every other paced packet's slot goes to a competitor: the paced packets received arrive
    // 2 ms apart, twice the burst's 1 ms. Paired only when adjacent, no paced sample was left
    // and c stayed 0 whatever the competitor took.
    let r = full_queue(20, |pos| pos % 2 == 1);
    let rep = r.report();
    assert!(close(rep.d.unwrap().as_millis_f64(), 1.0, 1e-6), "{rep:?}");
    assert!(
        close(rep.d_tilde.unwrap().as_millis_f64(), 2.0, 1e-6),
        "{rep:?}"
    );
    assert!(rep.competing);
    // One slot in five (positions 7, 12) taken: d~ = 1.25 ms on average, still above 1.1·d.
    let rep = full_queue(20, |pos| pos == 7 || pos == 12).report();
    assert!(rep.competing, "{rep:?}");
    // No competitor: nothing displaced, d~ = d.
    let rep = full_queue(20, |_| false).report();
    assert!(!rep.competing, "{rep:?}");
}

#[test]
fn random_wire_loss_alone_is_not_a_competitor() {
    // Alone, one burst packet (position 3) and one paced packet (position 10) of every frame
    // lost after the queue, where each had taken its 1 ms: both gaps around a loss are 2 ms, so
    // d and d~ grow alike and c stays 0.
    let mut r = PibesReceiver::new(ALPHA, BETA);
    for frame in 0..20u64 {
        let start = 33.3 * frame as f64;
        for pos in (0..16).filter(|&p| p != 3 && p != 10) {
            r.on_arrival(slot(frame, pos, 16), at(start + f64::from(pos)));
        }
        assert!(!r.report().competing, "frame {frame}: {:?}", r.report());
    }
}

/// Frames of 16 packets (burst of 6 at 1 ms, then 9 paced gaps of 1 ms) where the paced gaps
/// before the positions in `stretched` are `gap_ms` long: a competitor's packets between them.
fn stretched_frames(frames: u64, stretched: &[(u32, f64)]) -> PibesReceiver {
    let mut r = PibesReceiver::new(ALPHA, BETA);
    for frame in 0..frames {
        let mut t = 33.3 * frame as f64;
        for pos in 0..16 {
            t += stretched
                .iter()
                .find(|(p, _)| *p == pos)
                .map_or(if pos == 0 { 0.0 } else { 1.0 }, |(_, g)| *g);
            r.on_arrival(slot(frame, pos, 16), at(t));
        }
    }
    r
}

#[test]
fn stretched_paced_gaps_tell_single_packets_from_clumps() {
    // The same competitor load per frame (two extra slots in its 9 paced gaps), one packet at a
    // time in two gaps or as one clump of two: d~ averages the same, but the counts differ.
    let single = stretched_frames(20, &[(8, 2.0), (12, 2.0)]);
    let clump = stretched_frames(20, &[(8, 3.0)]);
    assert_eq!((single.paced_samples, clump.paced_samples), (180, 180));
    assert_eq!((single.paced_stretched, clump.paced_stretched), (40, 20));
    assert!(close(single.paced_stretch_sum / 40.0, 2.0, 1e-9));
    assert!(close(clump.paced_stretch_sum / 20.0, 3.0, 1e-9));
    // A gap 1.4·d long (timing noise, not a packet) is not counted; 1.5·d is.
    let noise = stretched_frames(1, &[(8, 1.4), (12, 1.5)]);
    assert_eq!(noise.paced_stretched, 1);
}

#[test]
fn detection_threshold_is_ten_percent() {
    for (paced_gap, expect) in [(1.0, false), (1.09, false), (1.11, true), (1.5, true)] {
        let mut r = PibesReceiver::new(ALPHA, BETA);
        // Burst pairs at 1 ms, then paced pairs at `paced_gap`.
        let mut t = 0.0;
        for pos in 0..6 {
            r.on_arrival(slot(0, pos, 12), at(t));
            t += 1.0;
        }
        for pos in 6..12 {
            r.on_arrival(slot(0, pos, 12), at(t));
            t += paced_gap;
        }
        assert_eq!(r.report().competing, expect, "paced gap {paced_gap} ms");
    }
}

#[test]
fn share_fsm_transitions() {
    let mut f = ShareFsm::new(ShareParams::default());
    assert!(close(f.share(), 0.95, 1e-12));
    // No competition: stays at s_max.
    assert!(close(f.step(false, Some(Ordering::Greater)), 0.95, 1e-12));
    // Competing flow detected: s_share at once, whatever the RTT did.
    assert!(close(f.step(true, Some(Ordering::Less)), 0.8, 1e-12));
    assert_eq!(f.mode(), Mode::Competing);
    // RTT grows: −0.05 per frame down to s_min = 0.5 (six steps).
    let down: Vec<f64> = (0..7)
        .map(|_| f.step(true, Some(Ordering::Greater)))
        .collect();
    for (got, want) in down.iter().zip([0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.5]) {
        assert!(close(*got, want, 1e-9), "{down:?}");
    }
    // No new RTT, or an equal one: hold.
    assert!(close(f.step(true, None), 0.5, 1e-9));
    assert!(close(f.step(true, Some(Ordering::Equal)), 0.5, 1e-9));
    // RTT falls: +0.01 per frame up to s_share.
    assert!(close(f.step(true, Some(Ordering::Less)), 0.51, 1e-9));
    for _ in 0..40 {
        f.step(true, Some(Ordering::Less));
    }
    assert!(close(f.share(), 0.8, 1e-9));
    // Competition ends: +0.05 per frame back to s_max (from 0.5: 9 frames to reach 0.95).
    let mut g = ShareFsm::new(ShareParams::default());
    g.step(true, None);
    for _ in 0..10 {
        g.step(true, Some(Ordering::Greater));
    }
    assert!(close(g.share(), 0.5, 1e-9));
    let up: Vec<f64> = (0..10).map(|_| g.step(false, None)).collect();
    assert!(close(up[0], 0.55, 1e-9) && close(up[8], 0.95, 1e-9) && close(up[9], 0.95, 1e-9));
    assert_eq!(g.mode(), Mode::Alone);
}

#[test]
fn s_min_from_the_number_of_pibes_flows() {
    let mut p = Params::new();
    p.insert("flows_sharing".into(), 2.into());
    let ctx = CcContext::new(P);
    let reg = Registry::standard();
    let cc = build(&p, &ctx, &reg).unwrap();
    assert_eq!(cc.name(), "pibes");
    p.insert("s_min".into(), serde_json::json!(0.3));
    assert!(
        build(&p, &ctx, &reg).is_err(),
        "s_min and flows_sharing together"
    );
    let mut bad = Params::new();
    bad.insert("alpha".into(), serde_json::json!(0.0));
    assert!(build(&bad, &ctx, &reg).is_err());
}

#[test]
fn fixed_burst_size_from_parameters() {
    let ctx = CcContext::new(P);
    let reg = Registry::standard();
    let build_with = |pairs: &[(&str, serde_json::Value)]| {
        let mut p = Params::new();
        for (k, v) in pairs {
            p.insert((*k).into(), v.clone());
        }
        build(&p, &ctx, &reg)
    };
    // burst = 8 with alpha = 0.3: a 20-packet frame (eq. 1 would give 6) starts with 8
    // back-to-back packets, the gap after the 8th is the first paced one.
    let mut cc = build_with(&[("burst", 8.into()), ("alpha", serde_json::json!(0.3))]).unwrap();
    cc.on_frame(
        Time::ZERO,
        &FrameInfo {
            index: 0,
            packets: 20,
            bytes: 20 * P,
        },
    );
    let mut paced = Vec::new();
    for pn in 0..20 {
        paced.push(cc.pacing_rate().unwrap() < BURST_RATE);
        cc.on_sent(
            Time::ZERO,
            &SentPacket {
                pn,
                bytes: P,
                ..SentPacket::default()
            },
        );
    }
    // Gap after packet i is paced for i in 7..=18 (the next packet is past the burst).
    let expect: Vec<bool> = (0..20).map(|i| (7..19).contains(&i)).collect();
    assert_eq!(paced, expect);
    // Bad values are errors naming the parameter.
    for (pairs, needle) in [
        (vec![("burst", 1.into())], "burst = 1 is outside [2, 1000]"),
        (vec![("burst", 0.into())], "burst"),
        (vec![("burst", 6.into()), ("n_min", 3.into())], "not both"),
        (vec![("burst", 6.into()), ("n_max", 9.into())], "not both"),
        (vec![("n_min", 5.into()), ("n_max", 4.into())], "n_max = 4"),
        (vec![("alpha", serde_json::json!(1.5))], "alpha = 1.5"),
        (vec![("alpha", serde_json::json!(-0.1))], "alpha"),
        (vec![("burst", serde_json::json!("six"))], "expected u32"),
    ] {
        let msg = match build_with(&pairs) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{pairs:?} accepted"),
        };
        assert!(msg.contains(needle), "{pairs:?}: {msg}");
    }
}

fn pibes() -> Pibes {
    let mut cc = Pibes::new(&CcContext::new(P), PibesConfig::default());
    cc.set_intent(
        Time::ZERO,
        &Intent::RealtimeVideo {
            min_rate: Rate::from_mbps(1),
            max_rate: Rate::from_mbps(20),
        },
    );
    cc
}

/// Sends `n` frame packets from `pn`, returning (pn, send time) and the pacing gap after each.
fn send(cc: &mut Pibes, pn: &mut u64, n: u32, t: &mut Time) -> Vec<(u64, Time, Duration)> {
    let mut out = Vec::new();
    for _ in 0..n {
        let rate = cc.pacing_rate().unwrap();
        let gap = rate.time_to_send(P);
        cc.on_sent(
            *t,
            &SentPacket {
                pn: *pn,
                bytes: P,
                ..SentPacket::default()
            },
        );
        out.push((*pn, *t, gap));
        *pn += 1;
        *t += gap;
    }
    out
}

#[test]
fn burst_then_paced_then_rate_from_estimate() {
    let mut cc = pibes();
    assert_eq!(
        cc.media_control().map(|m| m.target_bitrate),
        Some(START_RATE)
    );
    let (mut pn, mut t) = (0, Time::ZERO);
    cc.on_frame(
        t,
        &FrameInfo {
            index: 0,
            packets: 10,
            bytes: 10 * P,
        },
    );
    let sent = send(&mut cc, &mut pn, 10, &mut t);
    // n_b = 5: the gaps after packets 0..=3 are burst gaps (≈ 1 µs at 10 Gbit/s), after 4..=8
    // paced at the target (no estimate yet: 1 Mbit/s → 9.6 ms), after the last a burst gap.
    let gaps: Vec<f64> = sent.iter().map(|s| s.2.as_millis_f64()).collect();
    for (i, g) in gaps.iter().enumerate() {
        let paced = (4..9).contains(&i);
        assert_eq!(*g > 1.0, paced, "gap after packet {i}: {g} ms ({gaps:?})");
    }
    assert!(close(gaps[5], 9.6, 1e-6));
    // The receiver saw the burst at 1 ms spacing (a 9.6 Mbit/s bottleneck), the paced packets
    // at 1.5 ms: d = 1 ms, d~ = 1.5 ms > 1.1 ms: competing.
    let mut arrivals = Vec::new();
    let mut a = at(20.0);
    for (i, (p, s, _)) in sent.iter().enumerate() {
        arrivals.push(Arrival {
            pn: *p,
            bytes: P,
            sent_time: *s,
            arrival_time: a,
        });
        a += if i < 5 { ms(1.0) } else { ms(1.5) };
    }
    cc.on_feedback(
        t,
        &Feedback {
            arrivals: &arrivals,
        },
    );
    let b = cc.bandwidth_estimate().unwrap();
    assert!(close(b.as_mbps_f64(), 9.6, 1e-6), "B = {b}");
    assert!(cc.report().competing);
    // Next frame: the FSM enters competition (s = 0.8): R = 0.8 × 9.6 = 7.68 Mbit/s.
    cc.on_frame(
        t,
        &FrameInfo {
            index: 1,
            packets: 30,
            bytes: 30 * P,
        },
    );
    let r = cc
        .media_control()
        .map(|m| m.target_bitrate)
        .unwrap()
        .as_mbps_f64();
    assert!(close(r, 7.68, 1e-3), "R = {r}");
    // Paced gaps of this frame are d = 1 ms.
    let sent = send(&mut cc, &mut pn, 30, &mut t);
    assert!(close(sent[10].2.as_millis_f64(), 1.0, 1e-6));
    assert!(sent[2].2 < Duration::from_micros(2));
}

#[test]
fn frame_rtt_trend_drives_the_share_down() {
    let mut cc = pibes();
    let mut pn = 0;
    // Force competition: report with d = 1 ms, d~ = 2 ms via one frame of feedback.
    let mut t = Time::ZERO;
    let mut rtt = 40.0;
    let mut shares = Vec::new();
    for frame in 0..8u64 {
        cc.on_frame(
            t,
            &FrameInfo {
                index: frame,
                packets: 12,
                bytes: 12 * P,
            },
        );
        shares.push(cc.share());
        let sent = send(&mut cc, &mut pn, 12, &mut t);
        let mut arrivals = Vec::new();
        let mut a = t;
        for (i, (p, s, _)) in sent.iter().enumerate() {
            arrivals.push(Arrival {
                pn: *p,
                bytes: P,
                sent_time: *s,
                arrival_time: a,
            });
            a += if i < 6 { ms(1.0) } else { ms(2.0) };
            cc.on_packet_acked(
                a,
                &PacketOutcome {
                    pn: *p,
                    bytes: P,
                    sent_time: *s,
                    rtt: Some(ms(rtt)),
                },
            );
        }
        cc.on_feedback(
            a,
            &Feedback {
                arrivals: &arrivals,
            },
        );
        rtt += 5.0; // every frame's RTT is higher than the last
        t += ms(33.3);
    }
    // Frame 0 and 1: no detection yet / s_max; detection from frame 1's step: 0.8; frame RTTs
    // complete one frame late, so decreases start once two frames have completed.
    assert!(close(shares[0], 0.95, 1e-9), "{shares:?}");
    assert!(close(shares[1], 0.8, 1e-9), "{shares:?}");
    assert!(close(shares[2], 0.8, 1e-9), "{shares:?}");
    assert!(close(shares[3], 0.75, 1e-9), "{shares:?}");
    assert!(close(shares[7], 0.55, 1e-9), "{shares:?}");
}

#[test]
fn janus_hands_frames_to_its_active_pibes() {
    // Janus with PIBES as its conservative CCA (its first stage without a target): the frame
    // must reach PIBES, whose first packet then leaves at the burst rate, not the paced one.
    let reg = Registry::standard();
    let mut p = Params::new();
    p.insert("conservative".into(), "pibes".into());
    let spec = crate::registry::CcSpec::Table {
        name: "janus".into(),
        params: p,
    };
    let mut cc = reg.build(&spec, &CcContext::new(P)).unwrap();
    let before = cc.pacing_rate();
    cc.on_frame(
        Time::ZERO,
        &FrameInfo {
            index: 0,
            packets: 10,
            bytes: 10 * P,
        },
    );
    assert_ne!(before, Some(BURST_RATE));
    assert_eq!(cc.pacing_rate(), Some(BURST_RATE));
}
