//! s2n-quic's `CongestionController` implemented by the adapter ([`Core`]), and the handle the
//! application keeps to the same controller.
//!
//! s2n-quic owns its controller inside the connection's task; the application runs elsewhere
//! and may set an intent or read telemetry at any time. Both sides share the [`Core`] behind a
//! mutex: s2n-quic's calls take it uncontended (one lock per call, tens of nanoseconds; the
//! per-ACK cost is in BENCHMARKS.md), and the application's rare calls wait at most for one
//! event. A panic inside a controller poisons the mutex; every lock here takes the state as it
//! is rather than propagating the poison, so neither side panics in turn.

use crate::adapter::{AdapterStats, Core, PacketInfo};
use polycc::{Bytes, Intent, Telemetry};
use s2n_quic::provider::congestion_controller::{
    CongestionController, Publisher, RandomGenerator, RttEstimator, Timestamp,
};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// The controller s2n-quic drives: a shared reference to one connection's [`Core`].
///
/// s2n-quic requires `Clone` of its controllers (it clones a whole path in its own tests and
/// nowhere else in 1.91); a clone shares the state, so both would drive one controller.
#[derive(Clone, Debug)]
pub struct PolyccController {
    core: Arc<Mutex<Core>>,
}

/// The application's side of one connection's controller. Cloneable and thread-safe.
#[derive(Clone, Debug)]
pub struct ControllerHandle {
    core: Arc<Mutex<Core>>,
    peer: SocketAddr,
}

fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    core.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A window as s2n-quic's `u32`, saturating.
fn to_u32(b: Bytes) -> u32 {
    u32::try_from(b).unwrap_or(u32::MAX)
}

impl PolyccController {
    /// s2n's controller and the application's handle around `core`; `peer` names the path.
    pub fn new(core: Core, peer: SocketAddr) -> (Self, ControllerHandle) {
        let core = Arc::new(Mutex::new(core));
        (
            PolyccController { core: core.clone() },
            ControllerHandle { core, peer },
        )
    }

    fn core(&self) -> MutexGuard<'_, Core> {
        lock(&self.core)
    }
}

impl ControllerHandle {
    /// The peer's address as s2n-quic reported it when the path was created.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The controller's registry name.
    pub fn name(&self) -> String {
        lock(&self.core).name().to_string()
    }

    /// Hands the application's intent to the controller now (stamped with the time of the
    /// connection's latest event). Controllers that serve no intent ignore it.
    pub fn set_intent(&self, intent: &Intent) {
        lock(&self.core).set_intent(intent);
    }

    /// The controller's telemetry now.
    pub fn telemetry(&self) -> Telemetry {
        lock(&self.core).telemetry()
    }

    /// The adapter's counters and the window, pacing rate and RTT now.
    pub fn stats(&self) -> AdapterStats {
        lock(&self.core).stats()
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
