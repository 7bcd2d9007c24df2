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
    // BBR v3's start-up state and values come through.
    assert_eq!(t.state, "startup");
    assert!(t.entries().len() > 6, "{:?}", t.entries());
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
