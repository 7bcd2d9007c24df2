//! Application intents in scenarios: validation with key paths, delivery to the controller at
//! start and at scheduled changes, and satisfaction in the summary and time series.

mod common;
use polycc::cc::{Calibration, CcContext, CongestionControl, Telemetry};
use polycc::registry::{CcError, Params};
use polycc::units::{Bytes, Time};
use polycc::{AckEvent, Intent, LossEvent, Registry};

fn error_of(toml: &str) -> String {
    match polycc_sim::load_toml(toml, &common::origin(), &Registry::standard()) {
        Ok(_) => panic!("scenario was accepted:\n{toml}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(e: &str, parts: &[&str]) {
    for p in parts {
        assert!(e.contains(p), "error {e:?} should mention {p:?}");
    }
}

const BASE: &str = r#"
name = "intents"
duration = "4s"
[[links]]
id = "b"
rate = "10Mbps"
[[flows]]
id = "a"
cca = "cubic"
rtt = "20ms"
"#;

#[test]
fn bad_intents_name_the_key_and_the_allowed_values() {
    let e = error_of(&format!(
        "{BASE}intent = {{ class = \"video\", target_rate = \"1Mbps\" }}\n"
    ));
    assert_mentions(&e, &["flows[0].intent", "bandwidth_guarantee", "bulk"]);
    let e = error_of(&format!(
        "{BASE}intent = {{ class = \"bandwidth_guarantee\", target_rate = \"1Mbps\", min_rate = \"2Mbps\" }}\n"
    ));
    assert_mentions(&e, &["flows[0].intent.min_rate", "must not exceed"]);
    let e = error_of(&format!(
        "{BASE}intent = {{ class = \"bandwidth_guarantee\", target_rate = \"0Mbps\" }}\n"
    ));
    assert_mentions(&e, &["flows[0].intent.target_rate", "positive"]);
    let e = error_of(&format!(
        "{BASE}intent = {{ class = \"bandwidth_guarantee\", target_rate = \"1Mbit\" }}\n"
    ));
    assert_mentions(&e, &["flows[0].intent.target_rate", "Mbps"]);
    let e = error_of(&format!(
        "{BASE}intent = {{ class = \"bulk\", target_rate = \"1Mbps\" }}\n"
    ));
    assert_mentions(&e, &["flows[0].intent.target_rate", "takes no rates"]);
    let e = error_of(&format!(
        "{BASE}intent = {{ class = \"realtime_video\", min_rate = \"1Mbps\" }}\n"
    ));
    assert_mentions(&e, &["flows[0].intent.max_rate", "needs max_rate"]);
    let e = error_of(&format!(
        "{BASE}intent_schedule = [{{ at = \"0s\", intent = {{ class = \"bulk\" }} }}]\n"
    ));
    assert_mentions(
        &e,
        &[
            "flows[0].intent_schedule[0].at",
            "after the flow's start",
            "`intent` key",
        ],
    );
    let e = error_of(&format!(
        "{BASE}intent_schedule = [{{ at = \"2s\", intent = {{ class = \"bulk\" }} }}, {{ at = \"1s\", intent = {{ class = \"bulk\" }} }}]\n"
    ));
    assert_mentions(&e, &["flows[0].intent_schedule[1].at", "increasing"]);
    let e = error_of(&format!(
        "{BASE}intent_schedule = [{{ at = \"1s\", intent = {{ class = \"realtime_video\", min_rate = \"3Mbps\", max_rate = \"1Mbps\" }} }}]\n"
    ));
    assert_mentions(&e, &["flows[0].intent_schedule[0].intent.min_rate"]);
}

#[test]
fn satisfaction_is_goodput_over_the_time_weighted_target() {
    // 8 Mbit/s wanted for 2 s, then 4 Mbit/s: the mean target over the 4 s is 6 Mbit/s.
    let out = common::run(&format!(
        "{BASE}intent = {{ class = \"bandwidth_guarantee\", target_rate = \"8Mbps\" }}\n\
         intent_schedule = [{{ at = \"2s\", intent = {{ class = \"bandwidth_guarantee\", target_rate = \"4Mbps\" }} }}]\n\
         [[flows]]\nid = \"plain\"\nrtt = \"20ms\"\n"
    ));
    let a = &out.summary.flows[0];
    let target = a.target_rate_mbps.expect("flow a has a target");
    assert!((target - 6.0).abs() < 1e-9, "target {target}");
    let sat = a.satisfaction.expect("satisfaction");
    assert!((sat - a.goodput_mbps / 6.0).abs() < 1e-12);
    // A flow without an intent reports neither.
    assert_eq!(out.summary.flows[1].target_rate_mbps, None);
    let json = serde_json::to_value(&out.summary).unwrap();
    assert!(json["flows"][1].get("satisfaction").is_none());
    // Per-bin target and satisfaction follow the schedule.
    let flows = out.flows.strs("flow").unwrap().to_vec();
    let t = out.flows.f64s("t_s").unwrap();
    let target_col = out.flows.f64s("target_rate_mbps").unwrap();
    let good = out.flows.f64s("goodput_mbps").unwrap();
    let sat_col = out.flows.f64s("satisfaction").unwrap();
    for k in 0..t.len() {
        if flows[k] != "a" {
            assert!(target_col[k].is_nan());
            continue;
        }
        let want = if t[k] < 2.0 { 8.0 } else { 4.0 };
        assert_eq!(target_col[k], want, "bin at {}", t[k]);
        assert!((sat_col[k] - good[k] / want).abs() < 1e-12);
    }
}

/// Records the intents it is told about, as telemetry.
struct IntentProbe {
    cwnd: Bytes,
    target_mbps: f64,
    changes: u32,
}

impl CongestionControl for IntentProbe {
    fn name(&self) -> &str {
        "intent-probe"
    }
    fn on_ack(&mut self, _: Time, _: &AckEvent) {}
    fn on_loss(&mut self, _: Time, _: &LossEvent) {}
    fn cwnd(&self) -> Bytes {
        self.cwnd
    }
    fn calibrate(&mut self, _: Time, _: &Calibration) {}
    fn set_intent(&mut self, _: Time, intent: &Intent) {
        self.target_mbps = intent.target_rate().map_or(0.0, |r| r.as_mbps_f64());
        self.changes += 1;
    }
    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new("probe");
        t.push("target_mbps", self.target_mbps);
        t.push("changes", self.changes as f64);
        t
    }
}

fn build_probe(
    _: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(IntentProbe {
        cwnd: 10 * ctx.mss,
        target_mbps: -1.0,
        changes: 0,
    }))
}

#[test]
fn the_controller_is_told_the_intent_at_start_and_at_each_change() {
    let mut registry = Registry::standard();
    registry.register("intent-probe", "test", build_probe);
    let text = format!(
        "{}intent = {{ class = \"bandwidth_guarantee\", target_rate = \"3Mbps\" }}\n\
         intent_schedule = [{{ at = \"1.05s\", intent = {{ class = \"bulk\" }} }}, \
         {{ at = \"2.05s\", intent = {{ class = \"bandwidth_guarantee\", target_rate = \"5Mbps\", min_rate = \"1Mbps\" }} }}]\n",
        BASE.replace("cca = \"cubic\"", "cca = \"intent-probe\"")
    );
    let model = polycc_sim::load_toml(&text, &common::origin(), &registry).unwrap();
    let out = polycc_sim::run(&model, &registry).unwrap();
    let t = out.flows.f64s("t_s").unwrap();
    let target = out.flows.f64s("cc_target_mbps").unwrap();
    let changes = out.flows.f64s("cc_changes").unwrap();
    // Sampled at the end of each 100 ms bin.
    for k in 0..t.len() {
        let end = t[k] + 0.1;
        let (want_target, want_changes) = if end < 1.05 {
            (3.0, 1.0)
        } else if end < 2.05 {
            (0.0, 2.0)
        } else {
            (5.0, 3.0)
        };
        assert_eq!(
            (target[k], changes[k]),
            (want_target, want_changes),
            "bin {}",
            t[k]
        );
    }
}

/// Proteus-H against Proteus-P on 20 Mbit/s: with a target rate stated (4 Mbit/s) the hybrid
/// yields above it; without one it runs as Proteus-P.
fn hybrid_share(intent: &str) -> (f64, f64) {
    let out = common::run(&format!(
        r#"
        name = "hybrid"
        duration = "60s"
        [[links]]
        id = "b"
        rate = "20Mbps"
        queue = {{ kind = "droptail", size = "1bdp" }}
        [[flows]]
        id = "h"
        cca = "proteus-h"
        rtt = "40ms"
        {intent}
        [[flows]]
        id = "p"
        cca = "proteus-p"
        rtt = "40ms"
        "#
    ));
    (
        common::mean_goodput_mbps(&out, "h", 30.0, 60.0),
        common::mean_goodput_mbps(&out, "p", 30.0, 60.0),
    )
}

#[test]
fn proteus_h_yields_above_the_target_rate_its_application_states() {
    let (h, p) =
        hybrid_share(r#"intent = { class = "bandwidth_guarantee", target_rate = "4Mbps" }"#);
    assert!(
        (3.5..6.0).contains(&h) && p > 12.0,
        "hybrid {h}, primary {p}"
    );
    // Without a stated rate (and no threshold_mbps) the hybrid is Proteus-P: an even split.
    let (h, p) = hybrid_share("");
    assert!(h > 8.0 && p > 7.0, "hybrid {h}, primary {p}");
}
