//! A flow's controller for one of its connections, built the same way by the simulator and the
//! emulator: the flow's controller spec with a seed of its own for each connection, the host's
//! initial window, and the flow's current intent.

use crate::scenario::{FlowModel, Model};
use polycc::units::Time;
use polycc::{CcContext, CongestionControl, Intent, Registry};

/// The controller of connection `connection` (0 for the first; web flows without a persistent
/// connection open one per transfer) of flow `index`, made at `now`.
pub fn new_controller(
    model: &Model,
    registry: &Registry,
    fm: &FlowModel,
    index: usize,
    connection: u64,
    now: Time,
    intent: Option<&Intent>,
) -> Result<Box<dyn CongestionControl>, String> {
    let packet = model.counted_packet_bytes(fm);
    let mut ctx = CcContext {
        now,
        seed: connection_seed(model.scenario.seed, index, connection),
        ..CcContext::new(packet)
    };
    if let Some(n) = fm.host.initial_window_packets {
        ctx.initial_cwnd = n * packet;
    }
    let spec = fm.sim_cca.as_ref().map_err(Clone::clone)?;
    let mut cc = registry
        .build(spec, &ctx)
        .map_err(|e| format!("flow {}: {e}", fm.id))?;
    if let Some(i) = intent {
        cc.set_intent(now, i);
    }
    Ok(cc)
}

/// The connection number under which [`connection_seed`] seeds a flow's application (its
/// request or packet times), far from any real connection's.
const APPLICATION: u64 = u64::MAX;

/// The seed of flow `index`'s application stream.
pub fn application_seed(seed: u64, index: usize) -> u64 {
    connection_seed(seed, index, APPLICATION)
}

/// SplitMix64-style mixing of the run's seed, so neighbouring flows and connections get
/// unrelated seeds.
pub fn connection_seed(seed: u64, index: usize, connection: u64) -> u64 {
    let mut z =
        seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ connection.rotate_left(32);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
