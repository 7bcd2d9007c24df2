//! A controller whose window has no bound meets the default receive window: the run stays
//! bounded in time and memory instead of sending without limit into a full queue.

mod common;
use polycc::cc::{Calibration, CcContext, CongestionControl};
use polycc::registry::{CcError, Params};
use polycc::units::{Bytes, Time};
use polycc::{AckEvent, LossEvent, Registry};
use polycc_sim::engine::DEFAULT_RWND;

/// Doubles its window on every ACK and ignores loss.
struct Runaway(Bytes);

impl CongestionControl for Runaway {
    fn name(&self) -> &str {
        "runaway"
    }
    fn on_ack(&mut self, _: Time, _: &AckEvent) {
        self.0 = self.0.saturating_mul(2);
    }
    fn on_loss(&mut self, _: Time, _: &LossEvent) {}
    fn cwnd(&self) -> Bytes {
        self.0
    }
    fn calibrate(&mut self, _: Time, _: &Calibration) {}
}

fn build(_: &Params, _: &CcContext, _: &Registry) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(Runaway(15_000)))
}

#[test]
fn a_runaway_window_is_bounded_by_the_default_receive_window() {
    let mut registry = Registry::standard();
    registry.register("runaway", "test", build);
    let toml = r#"
        name = "runaway"
        duration = "2s"
        bin = "10ms"
        [[links]]
        id = "b"
        rate = "20Mbps"
        queue = { size = "1bdp" }
        [[flows]]
        id = "r"
        cca = "runaway"
        rtt = "40ms"
        pacing = false
    "#;
    let model = polycc_sim::load_toml(toml, &common::origin(), &registry).unwrap();
    let out = polycc_sim::run(&model, &registry).unwrap();
    let inflight = out.flows.f64s("inflight_bytes").unwrap();
    let peak = inflight.iter().copied().fold(0.0, f64::max);
    eprintln!("peak in flight {peak} bytes, cap {DEFAULT_RWND}");
    // The window reaches u64::MAX within a few dozen ACKs; the flight stops at the cap.
    assert!(peak <= DEFAULT_RWND as f64, "peak in flight {peak}");
    assert!(peak > DEFAULT_RWND as f64 / 2.0, "peak in flight {peak}");
    let g = common::mean_goodput_mbps(&out, "r", 0.5, 2.0);
    assert!(g > 15.0, "goodput {g}");
}
