//! `auto` as a whole: building, and the intents' specialists. The regimes themselves are tested
//! in `regime.rs`, and on simulated paths in `polycc-sim`'s `tests/auto.rs`.

use super::*;
use crate::estimators::rtt::RttSnapshot;
use crate::units::Duration;
use serde_json::json;

const MSS: Bytes = 1500;

fn auto(params: serde_json::Value) -> Result<Box<dyn CongestionControl>, CcError> {
    let p: Params = serde_json::from_value(params).expect("an object");
    build(&p, &CcContext::new(MSS), &Registry::standard())
}

#[test]
fn a_bad_member_is_refused_naming_its_role() {
    let err = auto(json!({ "competing": "nope" })).err().expect("refused");
    let text = err.to_string();
    assert!(
        text.contains("competing") && text.contains("nope"),
        "{text}"
    );
    let err = auto(json!({ "clean": "cubic", "pilot": "bbr" }))
        .err()
        .expect("refused");
    assert!(err.to_string().contains("pilot"), "{err}");
}

#[test]
fn a_flow_starts_on_the_clean_paths_controller() {
    let cc = auto(json!({})).expect("builds");
    let t = cc.telemetry();
    let get = |k: &str| t.entries().iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(get("member"), Some(Role::Clean.code()));
    assert_eq!(get("reason"), Some(Regime::Clean.code()));
    assert_eq!(get("switches"), Some(0.0));
    // Copa's start-up state and values come through.
    assert_eq!(t.state, "slow_start");
    assert!(t.entries().len() > 6, "{:?}", t.entries());
}

#[test]
fn the_running_controller_hears_the_handshake() {
    let mut cc = auto(json!({ "clean": "vegas" })).expect("builds");
    cc.on_handshake(Time::ZERO, Duration::from_millis(60));
    assert_eq!(cc.telemetry().get("base_rtt_ms"), Some(60.0));
}

#[test]
fn an_intent_hands_the_flow_to_its_specialist_with_the_window_and_bulk_hands_it_back() {
    let mut cc = auto(json!({})).expect("builds");
    let now = Time::ZERO + Duration::from_millis(500);
    // An ACK with an RTT sample, so the hand-over carries the transport's RTT.
    cc.on_ack(
        now,
        &AckEvent {
            acked_bytes: MSS,
            in_flight: 20 * MSS,
            rtt: RttSnapshot {
                latest: Duration::from_millis(40),
                smoothed: Duration::from_millis(40),
                var: Duration::from_millis(2),
                min: Duration::from_millis(40),
                has_sample: true,
            },
            ..AckEvent::default()
        },
    );
    cc.calibrate(
        now,
        &Calibration {
            cwnd: Some(30 * MSS),
            ..Calibration::default()
        },
    );
    cc.set_intent(now, &Intent::DelaySensitive);
    let member = |cc: &dyn CongestionControl| {
        cc.telemetry()
            .entries()
            .iter()
            .find(|(n, _)| *n == "member")
            .map(|(_, v)| *v)
    };
    assert_eq!(member(cc.as_ref()), Some(Role::DelaySensitive.code()));
    // Copa took the flow over from BBR v3's window (Linux keeps snd_cwnd on a change).
    assert_eq!(cc.cwnd(), 30 * MSS);
    assert_eq!(cc.handover_state().in_flight, 20 * MSS);
    cc.set_intent(now, &Intent::Bulk);
    assert_eq!(member(cc.as_ref()), Some(Role::Clean.code()));
    // A target rate goes to Janus, which receives the intent itself.
    cc.set_intent(
        now,
        &Intent::BandwidthGuarantee {
            target_rate: Rate::from_mbps(5),
            min_rate: Rate::ZERO,
        },
    );
    let t = cc.telemetry();
    assert_eq!(member(cc.as_ref()), Some(Role::BandwidthGuarantee.code()));
    let target = t
        .entries()
        .iter()
        .find(|(n, _)| *n == "target_rate_mbps")
        .map(|(_, v)| *v);
    assert_eq!(target, Some(5.0));
}

#[test]
fn a_frame_scheduler_in_any_role_makes_auto_need_media_frames() {
    assert!(!auto(json!({})).expect("builds").needs_media_frames());
    let with_pibes = auto(json!({ "delay_sensitive": "pibes" })).expect("builds");
    assert!(with_pibes.needs_media_frames());
}

#[test]
fn roles_that_share_a_controller_keep_its_instance() {
    let p: Params = serde_json::from_value(json!({})).expect("an object");
    let mut a = Auto::new(&p, &CcContext::new(MSS), &Registry::standard()).expect("builds");
    let now = Time::ZERO + Duration::from_millis(500);
    // Copa to CUBIC (a long path) is a switch; CUBIC to CUBIC (competing, then ACK aggregation)
    // keeps the running instance, with its epoch and window.
    a.switch_to(now, Role::LongPath);
    assert_eq!((a.role(), a.switches), (Role::LongPath, 1));
    a.calibrate(
        now,
        &Calibration {
            cwnd: Some(80 * MSS),
            ..Calibration::default()
        },
    );
    a.switch_to(now, Role::Competing);
    a.switch_to(now, Role::AckAggregation);
    assert_eq!((a.role(), a.switches), (Role::AckAggregation, 1));
    assert_eq!(a.cwnd(), 80 * MSS);
    assert_eq!(a.active.name(), "cubic");
}

#[test]
fn the_competing_member_starts_from_the_rate_measured_at_the_competitors_rtt() {
    let p: Params = serde_json::from_value(json!({})).expect("an object");
    let mut a = Auto::new(&p, &CcContext::new(MSS), &Registry::standard()).expect("builds");
    // The flow measured 10 Mbit/s at most; the competitor's queue now holds 100 ms on a 40 ms
    // path, and Copa, starved, runs 10 packets.
    let w = path_window::PathWindow {
        at: Time::ZERO + Duration::from_millis(3_000),
        base: Duration::from_millis(40),
        queue_floor: Some(Duration::from_millis(100)),
        spread: Some(Duration::from_millis(2)),
        loss_rate: 0.0,
        low_queue_loss_share: f64::NAN,
        bandwidth: Some(Rate::from_mbps(10)),
        bunched_share: 0.0,
        bunch_interval: None,
    };
    a.classifier.on_window(&w);
    a.last_window = Some(w);
    a.switch_to(w.at, Role::Competing);
    // CUBIC starts in slow start from 10 Mbit/s × 140 ms, as a joining flow does.
    assert_eq!(a.active.name(), "cubic");
    assert_eq!(a.cwnd(), 175_000);
    assert!(a.in_slow_start());
    // A window already above that share is kept.
    let mut b = Auto::new(&p, &CcContext::new(MSS), &Registry::standard()).expect("builds");
    b.classifier.on_window(&w);
    b.last_window = Some(w);
    b.calibrate(
        w.at,
        &Calibration {
            cwnd: Some(200 * MSS),
            ..Calibration::default()
        },
    );
    b.switch_to(w.at, Role::Competing);
    assert_eq!(b.cwnd(), 200 * MSS);
}
