//! s2n-quic's `CongestionController` implemented by the adapter ([`Core`]).
//!
//! s2n-quic owns its controller in the connection's task; the application reaches it through a
//! [`crate::ControllerHandle`] (a mailbox, `crate::handle`), so s2n's calls take no lock. Some
//! of s2n's queries take `&self` but must first close an open loss pass (`Core::settle`), hence
//! the `RefCell`: s2n calls one method at a time and `Core` never calls back into s2n, so a
//! borrow is never taken twice.

use crate::adapter::{Core, PacketInfo};
use polycc::Bytes;
use s2n_quic::provider::congestion_controller::{
    CongestionController, Publisher, RandomGenerator, RttEstimator, Timestamp,
};
use std::cell::RefCell;
use std::sync::Arc;

/// Builds a fresh [`Core`] for the same spec and path.
pub type Rebuild = Arc<dyn Fn() -> Core + Send + Sync>;

/// The controller s2n-quic drives.
///
/// s2n-quic requires `Clone` of its controllers; see the `Clone` impl for why a clone takes
/// the state.
pub struct PolyccController {
    core: RefCell<Core>,
    rebuild: Rebuild,
}

impl std::fmt::Debug for PolyccController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolyccController")
            .field("core", &self.core)
            .finish_non_exhaustive()
    }
}

impl Clone for PolyccController {
    /// s2n-quic 1.91 clones every connection's first path once, when it builds the path manager
    /// (`SmallVec::from_elem(initial_path, 1)`), and drops the original: the clone must carry
    /// on with the state and the application's handle. So the clone takes the core, and the
    /// original keeps a fresh one with no handle, as a new path would have (RFC 9000 §9.4).
    fn clone(&self) -> Self {
        let fresh = (self.rebuild)();
        let core = std::mem::replace(&mut *self.core.borrow_mut(), fresh);
        PolyccController {
            core: RefCell::new(core),
            rebuild: self.rebuild.clone(),
        }
    }
}

impl Drop for PolyccController {
    fn drop(&mut self) {
        // The handles keep the final state after the connection is gone.
        self.core.get_mut().publish();
    }
}

/// A window as s2n-quic's `u32`, saturating.
fn to_u32(b: Bytes) -> u32 {
    u32::try_from(b).unwrap_or(u32::MAX)
}

impl PolyccController {
    /// s2n's controller around `core`; `rebuild` makes the core of a clone.
    pub fn new(core: Core, rebuild: Rebuild) -> Self {
        PolyccController {
            core: RefCell::new(core),
            rebuild,
        }
    }

    #[inline]
    fn core(&self) -> std::cell::RefMut<'_, Core> {
        self.core.borrow_mut()
    }
}

impl CongestionController for PolyccController {
    type PacketInfo = PacketInfo;

    fn congestion_window(&self) -> u32 {
        to_u32(self.core().cwnd())
    }

    fn bytes_in_flight(&self) -> u32 {
        to_u32(self.core().in_flight())
    }

    fn is_congestion_limited(&self) -> bool {
        self.core().is_congestion_limited()
    }

    fn requires_fast_retransmission(&self) -> bool {
        // polycc controllers decide windows only; the probe after a loss is s2n's (PTO).
        false
    }

    fn on_packet_sent<Pub: Publisher>(
        &mut self,
        time_sent: Timestamp,
        sent_bytes: usize,
        app_limited: Option<bool>,
        rtt_estimator: &RttEstimator,
        _publisher: &mut Pub,
    ) -> PacketInfo {
        self.core()
            .on_sent(time_sent, sent_bytes, app_limited, rtt_estimator)
    }

    fn on_rtt_update<Pub: Publisher>(
        &mut self,
        _time_sent: Timestamp,
        now: Timestamp,
        rtt_estimator: &RttEstimator,
        _publisher: &mut Pub,
    ) {
        self.core().on_rtt_update(now, rtt_estimator);
    }

    fn on_ack<Pub: Publisher>(
        &mut self,
        _newest_acked_time_sent: Timestamp,
        bytes_acknowledged: usize,
        newest_acked_packet_info: PacketInfo,
        rtt_estimator: &RttEstimator,
        _random_generator: &mut dyn RandomGenerator,
        ack_receive_time: Timestamp,
        _publisher: &mut Pub,
    ) {
        self.core().on_ack(
            ack_receive_time,
            bytes_acknowledged,
            newest_acked_packet_info,
            rtt_estimator,
        );
    }

    fn on_packet_lost<Pub: Publisher>(
        &mut self,
        lost_bytes: u32,
        packet_info: PacketInfo,
        persistent_congestion: bool,
        _new_loss_burst: bool,
        _random_generator: &mut dyn RandomGenerator,
        timestamp: Timestamp,
        _publisher: &mut Pub,
    ) {
        self.core()
            .on_lost(timestamp, lost_bytes, packet_info, persistent_congestion);
    }

    fn on_explicit_congestion<Pub: Publisher>(
        &mut self,
        ce_count: u64,
        _event_time: Timestamp,
        _publisher: &mut Pub,
    ) {
        self.core().on_explicit_congestion(ce_count);
    }

    fn on_mtu_update<Pub: Publisher>(&mut self, max_data_size: u16, _publisher: &mut Pub) {
        self.core().on_mtu_update(max_data_size);
    }

    fn on_packet_discarded<Pub: Publisher>(&mut self, bytes_sent: usize, _publisher: &mut Pub) {
        self.core().on_discarded(bytes_sent);
    }

    fn earliest_departure_time(&self) -> Option<Timestamp> {
        self.core().earliest_departure_time()
    }
}
