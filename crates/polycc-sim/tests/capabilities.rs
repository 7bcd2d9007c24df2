//! Behaviour follows what a controller says it does, never its name or a telemetry key: a
//! controller registered under another name, or wrapped in one of the user's own, behaves as it
//! does bare. The media source reads `media_control()` (not the telemetry key `competing`),
//! PolyCC keeps a controller out of a pool by `accepts_calibration()` (not by the PCC family's
//! registry names), and scenario validation keeps a controller that needs video frames off other
//! traffic by `needs_media_frames()` (not by PIBES's name).

mod common;
use common::origin;
use polycc::cc::{Calibration, HandoverState, MediaControl, Telemetry};
use polycc::registry::{CcError, Params};
use polycc::signals::{AckEvent, Feedback, FrameInfo, LossEvent, PacketOutcome, SentPacket};
use polycc::units::{Bytes, Rate, Time};
use polycc::{CcContext, CcSpec, CongestionControl, Intent, Registry};
use polycc_sim::RunOutput;
use serde_json::json;

/// A user's controller around another: forwards every call, under a name of its own and with
/// telemetry of its own (none of the wrapped controller's keys).
struct Wrapped(Box<dyn CongestionControl>);

impl CongestionControl for Wrapped {
    fn name(&self) -> &str {
        "wrapped"
    }
    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        self.0.on_sent(now, sent)
    }
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.0.on_ack(now, ack)
    }
    fn on_ack_cwnd(&mut self, now: Time, ack: &AckEvent) -> Bytes {
        self.0.on_ack_cwnd(now, ack)
    }
    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        self.0.on_loss(now, loss)
    }
    fn on_feedback(&mut self, now: Time, feedback: &Feedback<'_>) {
        self.0.on_feedback(now, feedback)
    }
    fn wants_feedback(&self) -> bool {
        self.0.wants_feedback()
    }
    fn on_packet_acked(&mut self, now: Time, packet: &PacketOutcome) {
        self.0.on_packet_acked(now, packet)
    }
    fn on_packet_lost(&mut self, now: Time, packet: &PacketOutcome) {
        self.0.on_packet_lost(now, packet)
    }
    fn wants_packet_detail(&self) -> bool {
        self.0.wants_packet_detail()
    }
    fn on_frame(&mut self, now: Time, frame: &FrameInfo) {
        self.0.on_frame(now, frame)
    }
    fn on_timer(&mut self, now: Time) {
        self.0.on_timer(now)
    }
    fn next_timer(&self) -> Option<Time> {
        self.0.next_timer()
    }
    fn cwnd(&self) -> Bytes {
        self.0.cwnd()
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.0.pacing_rate()
    }
    fn wants_padding(&self) -> bool {
        self.0.wants_padding()
    }
    fn ssthresh(&self) -> Option<Bytes> {
        self.0.ssthresh()
    }
    fn in_slow_start(&self) -> bool {
        self.0.in_slow_start()
    }
    fn telemetry(&self) -> Telemetry {
        Telemetry::new("wrapped")
    }
    fn set_intent(&mut self, now: Time, intent: &Intent) {
        self.0.set_intent(now, intent)
    }
    fn calibrate(&mut self, now: Time, c: &Calibration) {
        self.0.calibrate(now, c)
    }
    fn calibrate_cwnd(&mut self, now: Time, cwnd: Bytes) -> Bytes {
        self.0.calibrate_cwnd(now, cwnd)
    }
    fn handover_state(&self) -> HandoverState {
        self.0.handover_state()
    }
    fn adopt(&mut self, now: Time, from: &HandoverState) {
        self.0.adopt(now, from)
    }
    fn media_control(&self) -> Option<MediaControl> {
        self.0.media_control()
    }
    fn accepts_calibration(&self) -> bool {
        self.0.accepts_calibration()
    }
    fn needs_media_frames(&self) -> bool {
        self.0.needs_media_frames()
    }
}

fn wrap(
    inner: &str,
    p: &Params,
    ctx: &CcContext,
    r: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let spec = CcSpec::Table {
        name: inner.to_string(),
        params: p.clone(),
    };
    Ok(Box::new(Wrapped(r.build(&spec, ctx)?)))
}
fn wrapped_pibes(
    p: &Params,
    ctx: &CcContext,
    r: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    wrap("pibes", p, ctx, r)
}
fn wrapped_vivace(
    p: &Params,
    ctx: &CcContext,
    r: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    wrap("pcc-vivace", p, ctx, r)
}
fn wrapped_cubic(
    p: &Params,
    ctx: &CcContext,
    r: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    wrap("cubic", p, ctx, r)
}
/// Proteus-S under another registry name, unwrapped.
fn renamed_proteus(
    p: &Params,
    ctx: &CcContext,
    r: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let spec = CcSpec::Table {
        name: "proteus-s".to_string(),
        params: p.clone(),
    };
    r.build(&spec, ctx)
}

fn registry() -> Registry {
    let mut r = Registry::standard();
    r.register("wrapped-pibes", "PIBES, wrapped", wrapped_pibes);
    r.register("wrapped-vivace", "PCC Vivace, wrapped", wrapped_vivace);
    r.register("wrapped-cubic", "CUBIC, wrapped", wrapped_cubic);
    r.register("scavenger", "Proteus-S, renamed", renamed_proteus);
    r
}

fn build(spec: serde_json::Value) -> Result<Box<dyn CongestionControl>, CcError> {
    let spec: CcSpec = serde_json::from_value(spec).expect("spec");
    registry().build(&spec, &CcContext::new(1500))
}

#[test]
fn a_pool_refuses_a_renamed_or_wrapped_pcc_controller_and_says_why() {
    let cases = [
        (
            json!({"name": "poly", "pilot": "cubic", "copilots": ["wrapped-vivace"]}),
            "copilots[0]: wrapped-vivace cannot share a pool (yet): it learns from its own sending",
        ),
        (
            json!({"name": "poly", "pilot": "scavenger", "copilots": ["cubic"]}),
            "pilot: scavenger cannot share a pool (yet): it learns from its own sending",
        ),
        // A policy answers for the controllers it writes into: Janus with a PCC stage.
        (
            json!({"name": "poly", "pilot": "cubic",
                   "copilots": ["vegas", {"name": "janus", "aggressive": "scavenger"}]}),
            "copilots[1]: janus cannot share a pool (yet)",
        ),
    ];
    for (spec, want) in cases {
        let e = build(spec.clone()).err().expect("refused").to_string();
        assert!(e.starts_with("bad parameters for \"poly\": "), "{e}");
        assert!(e.contains(want), "{spec}: {e}");
        assert!(e.contains("restarts its search"), "{e}");
    }
    // The capability, not the name: the wrapped controllers answer as the bare ones.
    for (name, accepts) in [
        ("wrapped-vivace", false),
        ("pcc-vivace", false),
        ("scavenger", false),
        ("wrapped-cubic", true),
        ("cubic", true),
        ("janus", true),
    ] {
        let cc = build(json!(name)).expect("builds");
        assert_eq!(cc.accepts_calibration(), accepts, "{name}");
    }
    // A wrapped CUBIC joins a pool; a wrapped PCC controller may pilot alone, and the agent
    // then answers for it.
    let pool = build(json!({"name": "poly", "pilot": "wrapped-cubic", "copilots": ["cubic"]}))
        .expect("a wrapped CUBIC shares a pool");
    assert!(pool.accepts_calibration());
    let alone = build(json!({"name": "poly", "pilot": "wrapped-vivace", "copilots": []}))
        .expect("a PCC pilot runs alone");
    assert!(!alone.accepts_calibration());
}

#[test]
fn policies_answer_the_media_control_of_the_controller_in_charge() {
    // PIBES starts at its 1 Mbit/s start rate with no competing flow seen.
    let pibes = Some(MediaControl {
        target_bitrate: Rate::from_bps(1_000_000),
        competing: Some(false),
    });
    for spec in [
        json!("pibes"),
        json!("wrapped-pibes"),
        json!({"name": "poly", "pilot": "wrapped-pibes", "copilots": []}),
        // Janus starts in its conservative stage.
        json!({"name": "janus", "conservative": "pibes"}),
    ] {
        assert_eq!(
            build(spec.clone()).unwrap().media_control(),
            pibes,
            "{spec}"
        );
    }
    let gcc = build(json!({"name": "poly", "pilot": "gcc", "copilots": []})).unwrap();
    assert_eq!(gcc.media_control().unwrap().competing, None);
    for spec in [json!("cubic"), json!("poly"), json!("janus")] {
        assert_eq!(build(spec.clone()).unwrap().media_control(), None, "{spec}");
    }
}

#[test]
fn a_wrapped_pibes_needs_video_frames_as_pibes_does() {
    for (spec, needs) in [
        (json!("pibes"), true),
        (json!("wrapped-pibes"), true),
        (
            json!({"name": "poly", "pilot": "cubic", "copilots": ["wrapped-pibes"]}),
            true,
        ),
        (
            json!({"name": "janus", "conservative": "wrapped-pibes"}),
            true,
        ),
        (json!("gcc"), false),
        (json!("wrapped-cubic"), false),
        (json!("poly"), false),
        (json!("janus"), false),
    ] {
        assert_eq!(
            build(spec.clone()).unwrap().needs_media_frames(),
            needs,
            "{spec}"
        );
    }
    // Scenario validation asks the capability, not the name.
    let toml = r#"
        name = "wrapped-on-bulk"
        [[links]]
        id = "b"
        rate = "4Mbps"
        [[flows]]
        id = "v"
        cca = "wrapped-pibes"
        rtt = "40ms"
    "#;
    let e = match polycc_sim::load_toml(toml, &origin(), &registry()) {
        Ok(_) => panic!("a wrapped PIBES on bulk traffic was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("flows[0].cca: flow \"v\" runs wrapped-pibes, which needs the frames"),
        "{e}"
    );
}

/// A video flow against a CUBIC flow that joins at 5 s, on the paper's 4 Mbit/s bottleneck.
fn video_against_cubic(cca: &str) -> RunOutput {
    let toml = format!(
        r#"
        name = "video-vs-cubic"
        duration = "15s"
        seed = 1
        [[links]]
        id = "b"
        rate = "4Mbps"
        queue = {{ size = "50pkt" }}
        [[flows]]
        id = "v"
        cca = {cca}
        rtt = "40ms"
        traffic = {{ kind = "video" }}
        [[flows]]
        id = "tcp"
        cca = "cubic"
        rtt = "40ms"
        start = "5s"
        "#
    );
    let r = registry();
    let model = polycc_sim::load_toml(&toml, &origin(), &r).unwrap_or_else(|e| panic!("{e}"));
    polycc_sim::run(&model, &r).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_wrapped_pibes_drives_its_encoder_and_reports_competition_as_pibes_does() {
    let bare = video_against_cubic("\"pibes\"");
    let detected = bare.summary.flows[0]
        .competing_detected_fraction
        .expect("PIBES reports the flag");
    // CUBIC shares the path for the last 10 of the 15 s, and the flag is up for most of that
    // (0.63 of all frames at seed 1).
    assert!((0.5..=0.7).contains(&detected), "{detected}");
    for cca in [
        "\"wrapped-pibes\"",
        "{ name = \"poly\", pilot = \"wrapped-pibes\", copilots = [] }",
    ] {
        let out = video_against_cubic(cca);
        assert_eq!(
            out.summary.flows[0].competing_detected_fraction,
            Some(detected),
            "{cca}"
        );
        // Every frame: its size, target, flag and fate.
        assert_eq!(
            format!("{:?}", out.frames),
            format!("{:?}", bare.frames),
            "{cca}"
        );
    }
}
