//! `stack = "linux"` in the simulator: the kernel's TCP as polycc models it.
//!
//! `stack = "tcp"` (the kernel's TCP steered by a polycc controller through the eBPF shim)
//! runs on the same hosts ([`host`] of [`SHIM`]) with the flow's own polycc controller in place
//! of a kernel controller's model.
//!
//! A flow on the Linux stack names a kernel controller in `cca` (what `TCP_CONGESTION` takes).
//! The simulator runs the polycc controller that is its model, with the parameters that make it
//! behave as the kernel's does; those parameters belong to the controller (no copy of it lives
//! here), this table only chooses them:
//!
//! | kernel | polycc | parameters (the kernel's behaviour they select) |
//! |---|---|---|
//! | `cubic` | `cubic` | β = 717/1024; α_cubic kept (no switch to 1); the curve read min RTT ahead; HyStart's ACK train and delay signals (`tcp_cubic.c`) instead of HyStart++; ≥ 5 % growth per RTT before the first loss; growth in whole segments through `bictcp_update`'s divisor `cnt` (`growth = "linux"`, `algos/bictcp_update.rs`); recovery as TCP's (below) |
//! | `bbr` | `bbr` (v1) | `extra_acked`: the ACK-aggregation allowance (`tcp_bbr.c` since 4.19) |
//! | `reno` | `newreno` | recovery as TCP's (below); otherwise none: `tcp_reno_cong_avoid` is one MSS per window of acknowledged packets, halving on loss |
//!
//! Recovery as `tcp_input.c` runs it for both Reno-family models (parameters of the Reno
//! family's window, `algos/reno/`):
//! - `prr`: proportional rate reduction (`tcp_cwnd_reduction`): in recovery the window is the
//!   data in flight plus what PRR lets out for what was delivered, and ssthresh when recovery
//!   ends. Without it the window drops to ssthresh at once and every packet acknowledged or
//!   declared lost is replaced at once: after a slow-start overshoot that refills at twice the
//!   bottleneck's rate and halves the window a second time (traced on reno 2× 50 Mbit/s, 80 ms,
//!   0.25 BDP: 16.8 against the kernel's 20.5 Mbit/s per flow);
//! - `recovery_spans_retransmissions`: Linux stays in recovery until the data outstanding when
//!   it began is acknowledged, so a lost retransmission is no new congestion event (RFC 9002's
//!   rule makes it one: a retransmission is a new packet).
//!
//! A kernel controller missing from the table is refused by the simulator with the list of
//! those modelled (the emulator, which runs the kernel itself, takes any the host offers).
//!
//! The hosts around the controller ([`host`]) behave as the kernel's TCP does where it matters
//! to the numbers, each behaviour an option of the sender or receiver model:
//! - initial window of [`TCP_INIT_CWND`] packets (RFC 9002's is 14 720 bytes);
//! - bytes counted as TCP's payload (`mss`, the kernel's `mss_cache`), not whole packets;
//! - the receiver's delayed ACKs (`engine::delayed_ack`), with one ACK per segment while a
//!   segment opens its receive window further, which the window's autotuning decides
//!   (`engine::receive_window`: `tcp_grow_window`, DRS), and SACK compression after three
//!   duplicate ACKs (`tcp_sack_compress`);
//! - no pacing unless the controller sets a rate (no `fq` qdisc: the kernel paces BBR itself,
//!   CUBIC and Reno send what the window allows at once);
//! - paced packets in TSO bursts of `tcp_tso_autosize` (`Pacer::LinuxTso`);
//! - RACK from the start, the tail-loss probe (the RTO restarts from it, as
//!   `tcp_send_loss_probe` re-arms it) and the 200-ms minimum RTO ([`LossRules::linux`]);
//! - the window restarted after an idle period longer than the RTO (`tcp_cwnd_restart`), but
//!   for BBR;
//! - no ACK delay in RTT samples (TCP has no ACK-delay field: `max_ack_delay` is 0);
//! - the handshake: each new connection's data starts when its SYN-ACK arrives, one round trip
//!   through the path's queues after its start, and that round trip is the first RTT sample
//!   (BBR's initial pacing rate and min RTT come from it, `engine::handshake`).
//!
//! Not modelled: F-RTO and undo on spurious retransmissions, TSQ and the host's queues, the
//! receive window as a limit on the sender (DRS keeps it above what the
//! congestion window fills) and the window updates a slow reader's reads send.

use super::host::{CountedBytes, HostModel, ReceiverAcks};
use polycc::algos::cubic::{LINUX_BETA, LINUX_MIN_GROWTH_BEFORE_LOSS};
use polycc::registry::{CcSpec, Params};
use polycc_transport::{LossRules, Pacer};
use serde_json::json;

/// A Linux receiver acknowledges every second full segment; recorded in the flow model's
/// `ack_every` for what reads it (the receiver follows its own rules, `engine::delayed_ack`).
pub use crate::engine::delayed_ack::SEGMENTS_PER_ACK;
pub use polycc_transport::TCP_INIT_CWND;

/// The kernel name of polycc's eBPF shim (`polycc-tcp`), which `stack = "tcp"` flows run on.
pub const SHIM: &str = "polycc";

/// What an on/off source's socket keeps written but not yet sent (`TCP_NOTSENT_LOWAT`): the
/// testbed sets it on such sockets, so that an off period starts on the wire about when it
/// starts in the application (the kernel's autotuned send buffer would otherwise hold
/// megabytes, sent on through the off period); the model sends this much after the
/// application turns off, as the kernel drains it. 16 KiB is the value commonly used for
/// HTTP/2 prioritisation.
pub const ON_OFF_NOTSENT_LOWAT: u64 = 16 * 1024;

/// Kernel controllers with their own `cong_control`, which the kernel exempts from the restart
/// after idle (`tcp_slow_start_after_idle_check`): BBR, and the shim, which applies user
/// space's window from its `cong_control`.
const OWN_CONG_CONTROL: [&str; 2] = ["bbr", SHIM];

/// The end hosts of a flow on the Linux stack running kernel controller `cca`.
pub fn host(cca: &str) -> HostModel {
    let mut loss_rules = LossRules::linux();
    if OWN_CONG_CONTROL.contains(&cca) {
        loss_rules.idle_restart = None;
    }
    HostModel {
        initial_window_packets: Some(TCP_INIT_CWND),
        acks: ReceiverAcks::Linux,
        loss_rules,
        pacer: Pacer::LinuxTso,
        handshake: true,
        unsent_at_pause: ON_OFF_NOTSENT_LOWAT,
        counts: CountedBytes::TcpPayload,
    }
}

/// One kernel controller and its polycc model.
pub struct KernelController {
    /// The kernel's name (`/proc/sys/net/ipv4/tcp_available_congestion_control`).
    pub kernel: &'static str,
    /// The polycc controller that models it.
    pub polycc: &'static str,
    /// The parameters that make the polycc controller behave as the kernel's.
    params: fn() -> Params,
}

impl KernelController {
    /// The polycc controller with the kernel's parameters.
    pub fn spec(&self) -> CcSpec {
        let params = (self.params)();
        if params.is_empty() {
            CcSpec::named(self.polycc)
        } else {
            CcSpec::Table {
                name: self.polycc.to_string(),
                params,
            }
        }
    }
}

fn object(v: serde_json::Value) -> Params {
    match v {
        serde_json::Value::Object(m) => m,
        _ => Params::new(),
    }
}

fn cubic_params() -> Params {
    object(json!({
        "beta": LINUX_BETA,
        "alpha_to_one": false,
        "target_rtt": "min",
        "hystart_variant": "linux",
        "min_growth_before_loss": LINUX_MIN_GROWTH_BEFORE_LOSS,
        "recovery_spans_retransmissions": true,
        "prr": true,
        "growth": "linux",
    }))
}

fn reno_params() -> Params {
    object(json!({ "recovery_spans_retransmissions": true, "prr": true }))
}

fn bbr_params() -> Params {
    object(json!({ "extra_acked": true }))
}

/// The kernel controllers the simulator models.
pub const KERNEL_CONTROLLERS: [KernelController; 3] = [
    KernelController {
        kernel: "cubic",
        polycc: "cubic",
        params: cubic_params,
    },
    KernelController {
        kernel: "bbr",
        polycc: "bbr",
        params: bbr_params,
    },
    KernelController {
        kernel: "reno",
        polycc: "newreno",
        params: reno_params,
    },
];

/// The polycc model of kernel controller `kernel`, or why there is none (naming those there are).
pub fn controller(kernel: &str) -> Result<CcSpec, String> {
    KERNEL_CONTROLLERS
        .iter()
        .find(|k| k.kernel == kernel)
        .map(KernelController::spec)
        .ok_or_else(|| {
            let known: Vec<_> = KERNEL_CONTROLLERS
                .iter()
                .map(|k| format!("{} (as polycc {})", k.kernel, k.polycc))
                .collect();
            format!(
                "the simulator has no model of the kernel controller {kernel:?}; it models {} \
                 (the emulator, --backend emu, runs any controller the kernel offers)",
                known.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::{CcContext, Registry};

    #[test]
    fn every_model_builds_with_its_parameters() {
        let r = Registry::standard();
        for k in &KERNEL_CONTROLLERS {
            let spec = controller(k.kernel).expect("modelled");
            assert_eq!(spec.name(), k.polycc);
            r.build(&spec, &CcContext::new(1500))
                .unwrap_or_else(|e| panic!("{}: {e}", k.kernel));
        }
        assert_eq!(controller("cubic").expect("cubic").params().len(), 8);
        assert_eq!(controller("reno").expect("reno").params().len(), 2);
    }

    #[test]
    fn an_unmodelled_kernel_controller_is_refused_naming_the_models() {
        let e = controller("vegas").unwrap_err();
        for want in [
            "\"vegas\"",
            "cubic",
            "bbr",
            "reno (as polycc newreno)",
            "--backend emu",
        ] {
            assert!(e.contains(want), "{e}");
        }
    }
}
