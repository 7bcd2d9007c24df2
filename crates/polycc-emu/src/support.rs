//! What the emulator can run: every scenario key is either emulated or refused here, by name,
//! before anything is created.

use crate::classify::MAX_FLOWS;
use crate::error::EmuError;
use crate::tunnel::MTU;
use polycc_sim::scenario::spec::{Stack, DEFAULT_ACK_BYTES};
use polycc_sim::scenario::Traffic;
use polycc_sim::Model;

/// Refuses a scenario the emulator cannot run as written. `kernel_ccas` are the kernel
/// controllers this host offers.
pub fn check(model: &Model, kernel_ccas: &[String]) -> Result<(), EmuError> {
    let origin = &model.scenario.name;
    let refuse = |path: String, message: String| EmuError::Unsupported {
        origin: origin.clone(),
        path,
        message,
    };
    if model.flows.len() > MAX_FLOWS {
        return Err(refuse(
            "flows".into(),
            format!(
                "{} flows; the emulator runs at most {MAX_FLOWS}",
                model.flows.len()
            ),
        ));
    }
    if model.packet_bytes() != u64::from(MTU) {
        return Err(refuse(
            "mss".into(),
            format!(
                "mss + header_bytes = {} bytes; the emulator's devices carry {MTU}-byte \
                 packets, so leave both at their defaults",
                model.packet_bytes()
            ),
        ));
    }
    if model.scenario.ack_bytes != DEFAULT_ACK_BYTES {
        return Err(refuse(
            "ack_bytes".into(),
            "the stacks' own ACKs cross the emulator at their real sizes; leave it at its default"
                .into(),
        ));
    }
    for f in &model.flows {
        let at = |k: &str| format!("flows ({}).{k}", f.id);
        if matches!(f.traffic, Traffic::Video(_)) && f.stack != Stack::Quic {
            return Err(refuse(
                at("traffic.kind"),
                "video (frames as datagrams, FEC, frame delay) runs over stack = \"quic\" in \
                 the emulator; use it, or --backend sim"
                    .into(),
            ));
        }
        if matches!(f.traffic, Traffic::Dash(_))
            && !matches!(f.stack, Stack::Linux | Stack::Tcp | Stack::Quic)
        {
            return Err(refuse(
                at("traffic.kind"),
                "dash (a video player fetching chunks) runs over the kernel's TCP or real QUIC \
                 in the emulator (stack = \"linux\", \"tcp\" or \"quic\"); use one, or \
                 --backend sim"
                    .into(),
            ));
        }
        if matches!(f.traffic, Traffic::Page(_)) {
            return Err(refuse(
                at("traffic.kind"),
                "page (a browser loading pages level by level) is modelled in the simulator \
                 only; use --backend sim"
                    .into(),
            ));
        }
        if f.send_jitter.is_some() {
            return Err(refuse(
                at("send_jitter"),
                "models host noise in the simulator; a real host brings its own".into(),
            ));
        }
        if f.traffic.is_unresponsive() {
            // A CBR or Poisson source runs over UDP without a controller on either stack.
            continue;
        }
        if f.stack == Stack::Tcp {
            if !polycc_tcp::BUILT {
                return Err(refuse(
                    at("stack"),
                    format!(
                        "\"tcp\" runs the flow's controller on kernel TCP through polycc's eBPF \
                         shim, which this build lacks: {}",
                        polycc_tcp::ShimError::NotBuilt
                    ),
                ));
            }
            if f.rwnd.is_some() {
                return Err(refuse(
                    at("rwnd"),
                    "the kernel's TCP sizes its own receive window; remove it".into(),
                ));
            }
        }
        if f.stack == Stack::Quic && f.rwnd.is_some() {
            return Err(refuse(
                at("rwnd"),
                "s2n-quic's flow control sizes its own windows; remove it, or use \
                 stack = \"udp\" (polycc's own sender)"
                    .into(),
            ));
        }
        if f.stack == Stack::Linux {
            let name = f.cca.name();
            if !kernel_ccas.iter().any(|k| k == name) {
                return Err(refuse(
                    at("cca"),
                    format!(
                        "the kernel has no {name:?}; it offers {}",
                        kernel_ccas.join(", ")
                    ),
                ));
            }
            if f.rwnd.is_some() {
                return Err(refuse(
                    at("rwnd"),
                    "the kernel's TCP sizes its own receive window; remove it".into(),
                ));
            }
        }
    }
    Ok(())
}
