//! PolyCC as a whole, driven by explicit event sequences. Most tests use a `probe` controller
//! whose window follows simple arithmetic and which counts what it sees, so every expected
//! number can be worked out by hand; the last ones run real CCAs of the pool.

use super::*;
use crate::algos::test_support::Flow;
use crate::cc::{Calibration, HandoverState, Telemetry};
use crate::estimators::rtt::RttSnapshot;
use crate::intent::Intent;
use crate::registry::check_range;
use crate::signals::{AckEvent, Arrival, Feedback, FrameInfo, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use fusion::FusionInput;
use serde_json::json;

const MSS: Bytes = 1000;

/// A controller with a window of `cwnd` bytes that grows by `gain`·acked bytes per ACK and
/// halves on a loss (a written window is kept, as CUBIC's); with `rate_mbps` it also reports a
/// pacing rate, which a calibration overrides until the next ACK recomputes it from the model
/// (as BBR's). It counts every event and calibration and remembers what it adopted.
struct Probe {
    cwnd: Bytes,
    gain: u64,
    model_rate: Option<Rate>,
    rate: Option<Rate>,
    feedback: bool,
    timer: Option<Time>,
    handshakes: u64,
    sent: u64,
    acks: u64,
    losses: u64,
    feedbacks: u64,
    timers: u64,
    frames: u64,
    calibrations: u64,
    adopted: Option<HandoverState>,
    /// A written window above this is cut to it (as BBR v3 caps a window at its inflight bounds).
    cap: Bytes,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeParams {
    #[serde(default = "ten")]
    cwnd_pkts: f64,
    #[serde(default)]
    gain: u64,
    rate_mbps: Option<f64>,
    #[serde(default)]
    feedback: bool,
    /// A timer due this many ms after creation.
    timer_ms: Option<u64>,
    /// Largest window a calibration may write, packets.
    cap_pkts: Option<u64>,
}

fn ten() -> f64 {
    10.0
}

fn build_probe(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let p: ProbeParams = crate::registry::parse_params("probe", p)?;
    check_range("probe", "cwnd_pkts", p.cwnd_pkts, 2.0, 1e6)?;
    Ok(Box::new(Probe {
        cwnd: (p.cwnd_pkts * ctx.mss as f64) as Bytes,
        gain: p.gain,
        model_rate: p.rate_mbps.map(|m| Rate::from_bps_f64(m * 1e6)),
        rate: p.rate_mbps.map(|m| Rate::from_bps_f64(m * 1e6)),
        feedback: p.feedback,
        timer: p.timer_ms.map(|ms| ctx.now + Duration::from_millis(ms)),
        handshakes: 0,
        sent: 0,
        acks: 0,
        losses: 0,
        feedbacks: 0,
        timers: 0,
        frames: 0,
        calibrations: 0,
        adopted: None,
        cap: p.cap_pkts.map_or(Bytes::MAX, |c| c * ctx.mss),
    }))
}

impl CongestionControl for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn on_handshake(&mut self, _: Time, _: Duration) {
        self.handshakes += 1;
    }
    fn on_sent(&mut self, _: Time, _: &SentPacket) {
        self.sent += 1;
    }
    fn on_frame(&mut self, _: Time, _: &FrameInfo) {
        self.frames += 1;
    }
    fn on_ack(&mut self, _: Time, ack: &AckEvent) {
        self.acks += 1;
        self.cwnd += self.gain * ack.acked_bytes;
        self.rate = self.model_rate;
    }
    fn on_loss(&mut self, _: Time, _: &LossEvent) {
        self.losses += 1;
        self.cwnd = (self.cwnd / 2).max(2 * MSS);
    }
    fn on_feedback(&mut self, _: Time, _: &Feedback<'_>) {
        self.feedbacks += 1;
    }
    fn wants_feedback(&self) -> bool {
        self.feedback
    }
    fn on_timer(&mut self, _: Time) {
        self.timers += 1;
        self.timer = None;
    }
    fn next_timer(&self) -> Option<Time> {
        self.timer
    }
    fn cwnd(&self) -> Bytes {
        self.cwnd
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.rate
    }
    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new("probing");
        for (k, v) in [
            ("handshakes", self.handshakes),
            ("sent", self.sent),
            ("acks", self.acks),
            ("losses", self.losses),
            ("feedbacks", self.feedbacks),
            ("timers", self.timers),
            ("frames", self.frames),
            ("calibrations", self.calibrations),
        ] {
            t.push(k, v as f64);
        }
        if let Some(a) = self.adopted {
            t.push("adopted_cwnd", a.cwnd as f64);
            t.push("adopted_in_flight", a.in_flight as f64);
            t.push("adopted_srtt_ms", a.rtt.smoothed.as_millis_f64());
        }
        t
    }
    fn calibrate(&mut self, _: Time, c: &Calibration) {
        self.calibrations += 1;
        if let Some(w) = c.cwnd {
            self.cwnd = w.min(self.cap);
        }
        if let (Some(r), Some(_)) = (c.pacing_rate, self.rate) {
            self.rate = Some(r);
        }
    }
    fn adopt(&mut self, _: Time, from: &HandoverState) {
        self.adopted = Some(*from);
        self.cwnd = from.cwnd;
    }
    fn handover_state(&self) -> HandoverState {
        HandoverState {
            cwnd: self.cwnd,
            pacing_rate: self.rate,
            ..HandoverState::default()
        }
    }
}

fn registry() -> Registry {
    let mut r = Registry::standard();
    r.register("probe", "test probe", build_probe);
    r
}

fn poly(params: serde_json::Value) -> Poly {
    let serde_json::Value::Object(p) = params else {
        panic!("params must be an object");
    };
    build_poly(NAME, &p, &CcContext::new(MSS), &registry(), None).expect("valid poly")
}

fn build_err(params: serde_json::Value) -> String {
    let serde_json::Value::Object(p) = params else {
        panic!("params must be an object");
    };
    match build(&p, &CcContext::new(MSS), &registry()) {
        Ok(_) => panic!("{p:?} should be rejected"),
        Err(e) => e.to_string(),
    }
}

fn member_count(p: &Poly, i: usize, key: &str) -> f64 {
    p.members()[i]
        .cc
        .telemetry()
        .get(key)
        .unwrap_or_else(|| panic!("probe telemetry has {key}"))
}

fn rtt(srtt_ms: u64, var_ms: u64) -> RttSnapshot {
    RttSnapshot {
        latest: Duration::from_millis(srtt_ms),
        smoothed: Duration::from_millis(srtt_ms),
        var: Duration::from_millis(var_ms),
        min: Duration::from_millis(srtt_ms),
        has_sample: true,
    }
}

fn ack_of(bytes: Bytes, snapshot: RttSnapshot, in_flight: Bytes) -> AckEvent {
    AckEvent {
        acked_bytes: bytes,
        acked_packets: 1,
        rtt: snapshot,
        in_flight,
        mss: MSS,
        ..AckEvent::default()
    }
}

fn at_ms(ms: u64) -> Time {
    Time::ZERO + Duration::from_millis(ms)
}

#[test]
fn every_member_sees_every_event() {
    let mut p = poly(json!({
        "pilot": "probe",
        "copilots": [{"name": "probe", "feedback": true}, {"name": "probe", "timer_ms": 30}],
    }));
    assert_eq!(p.next_timer(), Some(at_ms(30)));
    p.on_handshake(Time::ZERO, Duration::from_millis(10));
    for pn in 0..5 {
        p.on_sent(
            Time::ZERO,
            &SentPacket {
                pn,
                bytes: MSS,
                in_flight: (pn + 1) * MSS,
                ..SentPacket::default()
            },
        );
    }
    for k in 0..3 {
        p.on_ack(at_ms(10 + k), &ack_of(MSS, rtt(10, 1), (4 - k) * MSS));
    }
    p.on_loss(
        at_ms(20),
        &LossEvent {
            lost_bytes: MSS,
            lost_packets: 1,
            in_flight: MSS,
            mss: MSS,
            ..LossEvent::default()
        },
    );
    assert!(p.wants_feedback(), "one member asks for feedback");
    let arrival = Arrival {
        pn: 0,
        bytes: MSS,
        sent_time: Time::ZERO,
        arrival_time: at_ms(5),
    };
    p.on_feedback(
        at_ms(21),
        &Feedback {
            arrivals: &[arrival],
        },
    );
    p.on_timer(at_ms(30));
    assert_eq!(p.next_timer(), None);
    p.on_frame(at_ms(31), &FrameInfo::default());
    for i in 0..3 {
        assert_eq!(member_count(&p, i, "handshakes"), 1.0, "member {i}");
        assert_eq!(member_count(&p, i, "sent"), 5.0, "member {i}");
        assert_eq!(member_count(&p, i, "acks"), 3.0, "member {i}");
        assert_eq!(member_count(&p, i, "losses"), 1.0, "member {i}");
        assert_eq!(member_count(&p, i, "frames"), 1.0, "member {i}");
    }
    // Feedback and timers go to the members that asked for them.
    assert_eq!(
        (0..3)
            .map(|i| member_count(&p, i, "feedbacks"))
            .collect::<Vec<_>>(),
        [0.0, 1.0, 0.0]
    );
    assert_eq!(
        (0..3)
            .map(|i| member_count(&p, i, "timers"))
            .collect::<Vec<_>>(),
        [0.0, 0.0, 1.0]
    );
}

#[test]
fn max_window_is_written_back_through_calibrate_and_drives_the_sender() {
    // Pilot: 10 packets, static. Copilot: 30 packets, +1 byte per byte acked (slow-start-like).
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 10},
        "copilots": [{"name": "probe", "cwnd_pkts": 30, "gain": 1}],
        "fuse": "max",
    }));
    // At construction: max(10 000, 30 000) written into the pilot only.
    assert_eq!(p.cwnd(), 30_000);
    assert_eq!(p.fused(), 30_000.0);
    assert_eq!(member_count(&p, 0, "calibrations"), 1.0);
    assert_eq!(member_count(&p, 1, "calibrations"), 0.0);
    // One ACK of 1000 B: pilot (static) 30 000, copilot 31 000 → 31 000 written to the pilot.
    p.on_ack(at_ms(100), &ack_of(MSS, rtt(100, 1), 0));
    assert_eq!(p.cwnd(), 31_000);
    assert_eq!(p.members()[0].own_cwnd, 30_000);
    assert_eq!(p.members()[1].own_cwnd, 31_000);
    assert_eq!(member_count(&p, 0, "calibrations"), 2.0);
    assert_eq!(member_count(&p, 1, "calibrations"), 0.0);
    // A loss halves both to 15 500: equal, so nobody is written (at the next send, which
    // carries the loss's fusion when no ACK follows it).
    p.on_loss(
        at_ms(101),
        &LossEvent {
            lost_bytes: MSS,
            mss: MSS,
            ..LossEvent::default()
        },
    );
    assert_eq!(p.cwnd(), 15_500);
    p.on_sent(
        at_ms(101),
        &SentPacket {
            pn: 100,
            bytes: MSS,
            ..SentPacket::default()
        },
    );
    assert_eq!(p.cwnd(), 15_500);
    assert_eq!(member_count(&p, 0, "calibrations"), 2.0);
    assert_eq!(member_count(&p, 1, "calibrations"), 0.0);
    // Window fusion keeps the pilot's pacing (none for the probe).
    assert_eq!(p.pacing_rate(), None);
    let t = p.telemetry();
    assert_eq!(t.get("fused_cwnd_bytes"), Some(15_500.0));
    assert_eq!(t.get("m1_cwnd_bytes"), Some(15_500.0));
    // Own rates: cwnd / srtt = 15 500 B / 100 ms = 1.24 Mbit/s.
    assert!((t.get("m1_rate_mbps").unwrap() - 1.24).abs() < 1e-9);
}

#[test]
fn min_window_reaches_every_member_or_only_the_pilot() {
    for (write_back, copilot_written) in [("all", true), ("pilot", false)] {
        let p = poly(json!({
            "pilot": {"name": "probe", "cwnd_pkts": 40},
            "copilots": [{"name": "probe", "cwnd_pkts": 25}, {"name": "probe", "cwnd_pkts": 60}],
            "fuse": "min",
            "write_back": write_back,
        }));
        assert_eq!(p.cwnd(), 25_000, "{write_back}");
        assert_eq!(p.members()[0].cc.cwnd(), 25_000);
        assert_eq!(p.members()[1].cc.cwnd(), 25_000);
        let third = p.members()[2].cc.cwnd();
        assert_eq!(third == 25_000, copilot_written, "{write_back}: {third}");
    }
}

#[test]
fn rate_fusion_converts_a_window_only_member_by_srtt_and_paces_at_the_fused_rate() {
    // Pilot paces at 8 Mbit/s; the copilot has only a window of 50 000 B, which over a 100 ms
    // srtt is 4 Mbit/s.
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 200, "rate_mbps": 8.0},
        "copilots": [{"name": "probe", "cwnd_pkts": 50}],
        "fuse": "min",
        "on": "rate",
    }));
    p.on_ack(at_ms(100), &ack_of(MSS, rtt(100, 1), 0));
    assert_eq!(p.pacing_rate(), Some(Rate::from_mbps(4)));
    assert_eq!(p.members()[0].cc.pacing_rate(), Some(Rate::from_mbps(4)));
    // The window-only copilot had the fused rate already: not written.
    assert_eq!(member_count(&p, 1, "calibrations"), 0.0);
    assert_eq!(p.fused(), 4e6);
    assert_eq!(p.telemetry().get("fused_rate_mbps"), Some(4.0));

    // max: 8 Mbit/s, written to the copilot as the window 8 Mbit/s · 100 ms = 100 000 B.
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 200, "rate_mbps": 8.0},
        "copilots": [{"name": "probe", "cwnd_pkts": 50}],
        "fuse": "max",
        "on": "rate",
    }));
    p.on_ack(at_ms(100), &ack_of(MSS, rtt(100, 1), 0));
    assert_eq!(p.pacing_rate(), Some(Rate::from_mbps(8)));
    assert_eq!(p.members()[1].cc.cwnd(), 100_000);
    // The sender's window stays the pilot's.
    assert_eq!(p.cwnd(), 200_000);
}

#[test]
fn closest_and_weighted_mean_fuse_by_their_formulas() {
    // |40k − 52k| = 12k, |25k − 52k| = 27k, |60k − 52k| = 8k → 60 000.
    let p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 40},
        "copilots": [{"name": "probe", "cwnd_pkts": 25}, {"name": "probe", "cwnd_pkts": 60}],
        "fuse": "closest",
        "target": 52000,
    }));
    assert_eq!(p.cwnd(), 60_000);
    // Derived target (BDP) before any bandwidth sample: the pilot's own value.
    let p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 40},
        "copilots": [{"name": "probe", "cwnd_pkts": 25}],
        "fuse": "closest",
    }));
    assert_eq!(p.cwnd(), 40_000);
    // (2·40k + 1·25k + 1·60k) / 4 = 41 250.
    let p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 40},
        "copilots": [{"name": "probe", "cwnd_pkts": 25}, {"name": "probe", "cwnd_pkts": 60}],
        "fuse": "mean",
        "weights": [2.0, 1.0, 1.0],
    }));
    assert_eq!(p.cwnd(), 41_250);
}

#[test]
fn closest_to_the_intent_target_rate() {
    // Target 5 Mbit/s; members pace at 8 and 4.5 Mbit/s and 2 Mbit/s → 4.5 Mbit/s.
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 100, "rate_mbps": 8.0},
        "copilots": [
            {"name": "probe", "cwnd_pkts": 100, "rate_mbps": 4.5},
            {"name": "probe", "cwnd_pkts": 100, "rate_mbps": 2.0},
        ],
        "fuse": "closest",
        "on": "rate",
        "target": "intent",
        "write_back": "pilot",
    }));
    assert_eq!(p.pacing_rate(), Some(Rate::from_mbps(8)), "no intent yet");
    p.set_intent(
        Time::ZERO,
        &Intent::BandwidthGuarantee {
            target_rate: Rate::from_mbps(5),
            min_rate: Rate::ZERO,
        },
    );
    assert_eq!(p.pacing_rate(), Some(Rate::from_bps(4_500_000)));
}

#[test]
fn a_rule_changes_the_pilot_with_the_shared_hand_over() {
    // Pilot: a static probe at 40 packets; copilot NewReno, not written to (`write_back =
    // "pilot"`), so the hand-over is what moves NewReno's window.
    let mut p = build_poly(
        NAME,
        json!({
            "pilot": {"name": "probe", "cwnd_pkts": 40},
            "copilots": [{"name": "newreno"}],
            "fuse": "max",
            "write_back": "pilot",
            "rules": [{"when": "rtt_var_ms", "above": 20.0, "pilot": "newreno"}],
            "min_dwell_rtts": 2,
        })
        .as_object()
        .expect("object"),
        &CcContext::new(MSS),
        &registry(),
        None,
    )
    .expect("valid");
    assert_eq!(p.cwnd(), 40_000);
    // First ACK opens the 100 ms window; rttvar 30 ms > 20 ms.
    p.on_ack(at_ms(0), &ack_of(MSS, rtt(100, 30), 7 * MSS));
    assert_eq!(p.pilot(), 0);
    // NewReno in slow start grew by the 1000 B acked to 11 000 B; the pilot keeps 40 000.
    assert_eq!(p.members()[1].own_cwnd, 11_000);
    p.on_ack(at_ms(100), &ack_of(MSS, rtt(100, 30), 6 * MSS));
    // The window closed with rttvar 30 ms: NewReno takes over with the pilot's window (not its
    // own 12 000 B), so the sender's window does not jump.
    assert_eq!(p.pilot(), 1);
    assert_eq!(p.pilot_switches(), 1);
    assert_eq!(p.cwnd(), 40_000);
    let t = p.telemetry();
    assert_eq!(t.get("pilot"), Some(1.0));
    assert_eq!(t.state, "slow_start", "state is the pilot's: {}", t.state);
    // Variance gone: back to the configured pilot after the two-window dwell, again handing
    // over the running window, with the transport's RTT state and bytes in flight.
    p.on_ack(at_ms(200), &ack_of(MSS, rtt(100, 2), 5 * MSS));
    assert_eq!(p.pilot(), 1, "dwell");
    p.on_ack(at_ms(300), &ack_of(MSS, rtt(100, 2), 4 * MSS));
    assert_eq!(p.pilot(), 0);
    // NewReno grew 40 000 → 42 000 in slow start over the two ACKs it drove; the probe takes
    // that window over.
    assert_eq!(p.members()[1].cc.cwnd(), 42_000);
    assert_eq!(p.cwnd(), 42_000);
    assert_eq!(
        member_count(&p, 0, "acks"),
        4.0,
        "the probe saw every ACK while copilot"
    );
}

#[test]
fn hand_over_carries_rtt_and_in_flight() {
    let mut p = build_poly(
        NAME,
        json!({
            "pilot": {"name": "newreno"},
            "copilots": [{"name": "probe", "cwnd_pkts": 5}],
            "fuse": "max",
            "write_back": "pilot",
            "rules": [{"when": "loss_rate", "above": 0.1, "pilot": "probe"}],
            "min_dwell_rtts": 1,
        })
        .as_object()
        .expect("object"),
        &CcContext::new(MSS),
        &registry(),
        None,
    )
    .expect("valid");
    p.on_ack(at_ms(0), &ack_of(MSS, rtt(50, 1), 9 * MSS));
    // 1000 B lost of 3000 B acked or lost in this window: loss rate 0.33 > 0.1.
    p.on_loss(
        at_ms(10),
        &LossEvent {
            lost_bytes: MSS,
            in_flight: 8 * MSS,
            mss: MSS,
            ..LossEvent::default()
        },
    );
    let reno_after_loss = p.members()[0].cc.cwnd();
    p.on_ack(at_ms(50), &ack_of(MSS, rtt(50, 1), 7 * MSS));
    assert_eq!(p.pilot(), 1);
    // The probe took over NewReno's window after its loss response, and the transport's RTT
    // state and bytes in flight, which the hand-over fills in.
    assert_eq!(member_count(&p, 1, "adopted_cwnd"), reno_after_loss as f64);
    assert_eq!(member_count(&p, 1, "adopted_in_flight"), (7 * MSS) as f64);
    assert_eq!(member_count(&p, 1, "adopted_srtt_ms"), 50.0);
    assert_eq!(p.cwnd(), reno_after_loss);
    let s = p.handover_state();
    assert_eq!(s.in_flight, 7 * MSS);
    assert_eq!(s.rtt.smoothed, Duration::from_millis(50));
}

#[test]
fn the_declared_copilot_limit_is_the_pool_size() {
    let copilots = PolyParams::PARAMS
        .iter()
        .find(|s| s.name == "copilots")
        .unwrap();
    let limit = format!("at most {} ({MAX_MEMBERS} members in all)", MAX_MEMBERS - 1);
    assert!(copilots.description.contains(&limit), "{copilots:?}");
    let r = Registry::standard();
    let build = |n: usize| {
        let spec: CcSpec =
            serde_json::from_value(json!({"name": "poly", "copilots": vec!["cubic"; n]})).unwrap();
        r.build(&spec, &CcContext::new(1500))
    };
    assert!(build(MAX_MEMBERS - 1).is_ok());
    assert!(build(MAX_MEMBERS).is_err());
}

#[test]
fn parameters_are_validated_with_clear_errors() {
    let cases = [
        (
            json!({"fuse": "avg"}),
            "fuse = \"avg\" is not one of max, min, closest, mean",
        ),
        (
            json!({"on": "bytes"}),
            "on = \"bytes\" is not one of cwnd, rate",
        ),
        (
            json!({"write_back": "some"}),
            "write_back = \"some\" is not one of all, pilot",
        ),
        (
            json!({"pilot": "bbr9"}),
            "pilot: unknown congestion control \"bbr9\"",
        ),
        (
            json!({"copilots": ["cubic", "nope"]}),
            "copilots[1]: unknown congestion control",
        ),
        (
            json!({"copilots": [{"name": "cubic", "beta": 7.0}]}),
            "copilots[0]: bad parameters for \"cubic\"",
        ),
        (
            json!({"weights": [1.0, 1.0]}),
            "weights apply to fuse = \"mean\"",
        ),
        (
            json!({"fuse": "mean", "weights": [1.0]}),
            "weights has 1 values; the pool has 2 members",
        ),
        (
            json!({"fuse": "mean", "weights": [0.0, 0.0]}),
            "not all zero",
        ),
        (json!({"target": 5}), "target applies to fuse = \"closest\""),
        (json!({"fuse": "closest", "target": -1}), "must be positive"),
        (
            json!({"fuse": "closest", "target": "median"}),
            "is not \"bdp\", \"intent\" or a number",
        ),
        (json!({"copilots": vec!["cubic"; 8]}), "at most 8"),
        (json!({"min_dwell_rtts": 0}), "min_dwell_rtts = 0"),
        (
            json!({"rules": [{"when": "rtt_var_ms", "above": 1, "pilot": "vegas"}]}),
            "rules[0].pilot = \"vegas\" is not in the pool (bbr, cubic)",
        ),
        (json!({"pilots": "bbr"}), "unknown field `pilots`"),
        (
            json!({"copilots": ["pcc-vivace"]}),
            "copilots[0]: pcc-vivace cannot share a pool",
        ),
        (
            json!({"pilot": {"name": "proteus-s", "d": 0.001}}),
            "pilot: proteus-s cannot share a pool",
        ),
    ];
    for (params, want) in cases {
        let e = build_err(params.clone());
        assert!(e.contains(want), "{params}: {e}");
        assert!(e.contains("\"poly\""), "{e}");
    }
}

#[test]
fn defaults_are_the_papers_bbr_pilot_cubic_copilot_max_cwnd() {
    let p = poly(json!({}));
    let names: Vec<&str> = p.members().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["bbr", "cubic"]);
    assert_eq!(p.quantity(), Quantity::Cwnd);
    // Both start at the RFC 9002 initial window of 10 datagrams.
    assert_eq!(p.cwnd(), 10 * MSS);
    // The scenario syntax of the issue, through the registry.
    let spec: CcSpec = serde_json::from_value(json!({
        "name": "poly", "pilot": "bbr", "copilots": ["cubic"], "fuse": "max", "on": "cwnd"
    }))
    .expect("spec");
    let cc = Registry::standard()
        .build(&spec, &CcContext::new(MSS))
        .expect("builds");
    assert_eq!(cc.name(), "poly");
    // A single member and a nested pool both build.
    let one = poly(json!({"pilot": "cubic", "copilots": []}));
    assert_eq!(one.members().len(), 1);
    let nested = poly(
        json!({"pilot": "bbr", "copilots": [{"name": "poly", "pilot": "vegas", "copilots": ["cubic"]}]}),
    );
    assert_eq!(nested.members()[1].name, "poly");
}

/// The median of the members' values: a user-defined fusion.
struct Median(Vec<f64>);

impl Fusion for Median {
    fn name(&self) -> &str {
        "median"
    }
    fn fuse(&mut self, input: &FusionInput<'_>) -> f64 {
        self.0.clear();
        self.0.extend_from_slice(input.values);
        self.0.sort_by(f64::total_cmp);
        self.0[self.0.len() / 2]
    }
}

fn build_median(
    p: &Params,
    ctx: &CcContext,
    r: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(build_with_fusion(
        "poly-median",
        p,
        ctx,
        r,
        Box::new(Median(Vec::new())),
    )?))
}

#[test]
fn a_user_defined_fusion_is_registered_under_its_own_name() {
    let mut r = registry();
    r.register("poly-median", "PolyCC with median fusion", build_median);
    let spec: CcSpec = serde_json::from_value(json!({
        "name": "poly-median",
        "pilot": {"name": "probe", "cwnd_pkts": 40},
        "copilots": [{"name": "probe", "cwnd_pkts": 25}, {"name": "probe", "cwnd_pkts": 60}],
    }))
    .expect("spec");
    let cc = r.build(&spec, &CcContext::new(MSS)).expect("builds");
    // median(40k, 25k, 60k) = 40k.
    assert_eq!(cc.cwnd(), 40_000);
    let bad: CcSpec =
        serde_json::from_value(json!({"name": "poly-median", "fuse": "max"})).expect("spec");
    let e = r
        .build(&bad, &CcContext::new(MSS))
        .err()
        .expect("rejected")
        .to_string();
    assert!(
        e.contains("\"poly-median\"") && e.contains("fuse is not taken") && e.contains("median"),
        "{e}"
    );
}

/// A user fusion that returns garbage falls back to the pilot's value.
struct Broken;

impl Fusion for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn fuse(&mut self, _: &FusionInput<'_>) -> f64 {
        f64::NAN
    }
}

#[test]
fn a_non_finite_fusion_result_falls_back_to_the_pilot() {
    let p = build_with_fusion(
        "poly-broken",
        json!({"pilot": {"name": "probe", "cwnd_pkts": 40}, "copilots": [{"name": "probe", "cwnd_pkts": 60}]})
            .as_object()
            .expect("object"),
        &CcContext::new(MSS),
        &registry(),
        Box::new(Broken),
    )
    .expect("builds");
    assert_eq!(p.cwnd(), 40_000);
}

#[test]
fn bbr_pilot_with_cubic_copilot_sends_the_larger_window_on_a_real_flow() {
    let mut p = poly(json!({"pilot": "bbr", "copilots": ["cubic"], "fuse": "max", "on": "cwnd"}));
    let mut flow = Flow::new(MSS, Duration::from_millis(100));
    // Ten round trips: with no bottleneck the windows double per RTT in start-up, so ten keeps
    // the flow at about 10 000 packets.
    for _ in 0..10 {
        flow.run_rtts(&mut p, 1);
        let (bbr, cubic) = (p.members()[0].own_cwnd, p.members()[1].own_cwnd);
        // The sender's window is the max of what each wanted at the last fusion (BBR's cap
        // within BBR's own calibrate aside, none here).
        assert_eq!(p.cwnd(), bbr.max(cubic), "bbr {bbr} cubic {cubic}");
        // Pacing stays BBR's.
        assert_eq!(p.pacing_rate(), p.members()[0].cc.pacing_rate());
    }
    // The flow has no bottleneck, so both keep growing; the window is at least CUBIC's.
    assert!(p.cwnd() >= p.members()[1].own_cwnd);
    let t = p.telemetry();
    assert_eq!(t.get("pilot"), Some(0.0));
    assert!(t.entries().len() <= Telemetry::CAPACITY);
}

#[test]
fn telemetry_of_a_full_pool_fits() {
    let p = poly(
        json!({"pilot": "bbr", "copilots": ["cubic", "vegas", "copa", "newreno", "bbr3", "westwood", "htcp"]}),
    );
    let t = p.telemetry();
    assert_eq!(t.entries().len(), 3 + 2 * 8);
    assert_eq!(t.get("m7_cwnd_bytes"), Some(10_000.0));
    // Before any RTT sample rates use RFC 9002's 333 ms: 10 000 B / 333 ms ≈ 0.240 Mbit/s.
    assert!((t.get("m6_rate_mbps").unwrap() - 0.240_240).abs() < 1e-3);
}

#[test]
fn outside_calibration_and_adoption_reach_the_whole_pool() {
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 40},
        "copilots": [{"name": "probe", "cwnd_pkts": 60}],
        "fuse": "min",
        "write_back": "pilot",
    }));
    p.calibrate(
        Time::ZERO,
        &Calibration {
            cwnd: Some(30_000),
            ..Calibration::default()
        },
    );
    assert_eq!(p.members()[1].cc.cwnd(), 30_000);
    assert_eq!(p.cwnd(), 30_000);
    p.adopt(
        Time::ZERO,
        &HandoverState {
            cwnd: 70_000,
            rtt: rtt(80, 4),
            in_flight: 9 * MSS,
            ..HandoverState::default()
        },
    );
    assert_eq!(p.cwnd(), 70_000);
    let s = p.handover_state();
    assert_eq!(
        (s.in_flight, s.rtt.smoothed),
        (9 * MSS, Duration::from_millis(80))
    );
}

#[test]
fn a_member_that_declined_a_window_is_not_written_the_same_window_again() {
    // The pilot (10 packets) caps written windows at 20 packets; the copilot has 30.
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 10, "cap_pkts": 20},
        "copilots": [{"name": "probe", "cwnd_pkts": 30}],
    }));
    // Construction: 30 000 written, the pilot settles at 20 000.
    assert_eq!(p.cwnd(), 20_000);
    assert_eq!(member_count(&p, 0, "calibrations"), 1.0);
    // Nothing moved: three ACKs fuse 30 000 again, and the pilot is not written again.
    for k in 0..3 {
        p.on_ack(at_ms(100 + k), &ack_of(MSS, rtt(100, 1), 0));
    }
    assert_eq!(member_count(&p, 0, "calibrations"), 1.0);
    assert_eq!(p.fused(), 30_000.0);
    // A loss halves both, the pilot to 10 000 and the copilot to 15 000: a new fused value,
    // which the sender sees at once and the pilot is written with the ACK that follows the
    // loss (one fusion per feedback).
    p.on_loss(
        at_ms(110),
        &LossEvent {
            lost_bytes: MSS,
            mss: MSS,
            ..LossEvent::default()
        },
    );
    assert_eq!(p.cwnd(), 15_000);
    assert_eq!(member_count(&p, 0, "calibrations"), 1.0);
    p.on_ack(at_ms(110), &ack_of(MSS, rtt(100, 1), 0));
    assert_eq!(member_count(&p, 0, "calibrations"), 2.0);
    assert_eq!(p.cwnd(), 15_000);
    assert_eq!(p.fused(), 15_000.0);
}

#[test]
fn fusing_once_per_rtt_writes_back_only_when_a_window_closes() {
    // Pilot static at 10 packets; the copilot grows by one packet per ACK. ACKs every 10 ms,
    // srtt 100 ms: a measurement window opens at the first ACK and closes 100 ms later.
    let build = |every: &str| {
        poly(json!({
            "pilot": {"name": "probe", "cwnd_pkts": 10},
            "copilots": [{"name": "probe", "cwnd_pkts": 10, "gain": 1}],
            "fuse_every": every,
        }))
    };
    let mut per_rtt = build("rtt");
    let mut per_ack = build("ack");
    assert_eq!(per_rtt.every(), fusion::Every::Rtt);
    let mut pilot_windows = Vec::new();
    for k in 0..=10 {
        for p in [&mut per_rtt, &mut per_ack] {
            p.on_ack(at_ms(10 * k), &ack_of(MSS, rtt(100, 1), 0));
        }
        pilot_windows.push(per_rtt.cwnd());
        // Per ACK, the pilot follows the copilot at once: 10 000 + 1000 per ACK.
        assert_eq!(per_ack.cwnd(), 10_000 + 1000 * (k + 1));
    }
    // Per RTT: the pilot keeps 10 000 until the window that opened at 0 ms closes at 100 ms,
    // when the copilot has grown by eleven packets.
    assert_eq!(pilot_windows[..10], [10_000; 10]);
    assert_eq!(pilot_windows[10], 21_000);
    // One calibration of the pilot per RTT against one per ACK.
    assert_eq!(member_count(&per_rtt, 0, "calibrations"), 1.0);
    assert_eq!(member_count(&per_ack, 0, "calibrations"), 11.0);
    // A loss does not re-fuse under per-RTT fusion.
    per_rtt.on_loss(
        at_ms(105),
        &LossEvent {
            lost_bytes: MSS,
            mss: MSS,
            ..LossEvent::default()
        },
    );
    assert_eq!(member_count(&per_rtt, 0, "calibrations"), 1.0);
    assert!(build_err(json!({"fuse_every": "frame"}))
        .contains("fuse_every = \"frame\" is not one of ack, rtt"));
}

#[test]
fn the_window_read_after_an_event_is_the_pilots_own() {
    // The pilot (10 packets, static) caps written windows at 20 packets; the copilot grows by
    // one packet per ACK from 30. The fused window is the copilot's, but the sender reads the
    // window the pilot settled at after the write-back, before and after the sends that follow.
    let mut p = poly(json!({
        "pilot": {"name": "probe", "cwnd_pkts": 10, "cap_pkts": 20},
        "copilots": [{"name": "probe", "cwnd_pkts": 30, "gain": 1}],
    }));
    for k in 0..5 {
        p.on_ack(at_ms(100 + k), &ack_of(MSS, rtt(100, 1), 0));
        assert_eq!(p.fused(), (31_000 + 1000 * k) as f64);
        assert_eq!(p.cwnd(), 20_000);
        p.on_sent(
            at_ms(100 + k),
            &SentPacket {
                pn: k,
                bytes: MSS,
                in_flight: MSS,
                ..SentPacket::default()
            },
        );
        assert_eq!(p.cwnd(), 20_000);
    }
    assert_eq!(member_count(&p, 0, "calibrations"), 6.0);

    // A real pool on a flow, with the write-back to all members and to the pilot only.
    for write_back in ["all", "pilot"] {
        let mut p = poly(json!({
            "pilot": "bbr", "copilots": ["cubic", "vegas"], "fuse": "max", "on": "cwnd",
            "write_back": write_back,
        }));
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        for _ in 0..8 {
            flow.run_rtts(&mut p, 1);
            assert_eq!(
                p.cwnd(),
                p.members()[0].cc.cwnd(),
                "write_back {write_back}"
            );
            assert_eq!(p.pacing_rate(), p.members()[0].cc.pacing_rate());
        }
    }
}

#[test]
fn a_pcc_controller_runs_as_a_pool_of_one() {
    let serde_json::Value::Object(p) = json!({"pilot": "pcc-vivace", "copilots": []}) else {
        unreachable!()
    };
    let poly = build(&p, &CcContext::new(MSS), &registry()).expect("a pool of one PCC pilot");
    assert_eq!(poly.name(), "poly");
}
