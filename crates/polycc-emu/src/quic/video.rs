//! Real-time video over QUIC (`kind = "video"`, `stack = "quic"`): the simulator's video source
//! (`polycc_sim::engine::video`: its encoder sizes each frame from the controller's
//! `media_control()` target and cuts it into k data and m repair packets of P bytes) sends
//! every frame interval, each packet one QUIC DATAGRAM frame (`polycc_quic::media_datagrams`)
//! that leaves by [`MEDIA_DEADLINE`] or not at all. The m repair shards are real Reed-Solomon
//! coding of the k data shards (`polycc_quic::fec`); the receiver gathers each frame's shards
//! and, once any k have arrived, recovers the frame and checks every byte of it (a frame that
//! does not recover to what was sent fails the run). The source's records are the simulator's:
//! generated, first sent (its first datagram's departure from s2n-quic), decodable (its k-th
//! shard's arrival), complete, and so are the frames table and the summary's frame fields.
//!
//! Deviations from the simulator: a datagram is P bytes on the wire only approximately (QUIC's
//! header and connection ids are sized by s2n, [`QUIC_OVERHEAD`] is their usual size); packets
//! are never retransmitted (`retransmit` has no effect: QUIC does not resend DATAGRAM frames);
//! the encoder's noise comes from a generator of the flow's own, seeded from the scenario's
//! seed, where the simulator draws from the run's one generator; and the controller's target
//! is read from its latest published snapshot (at most 10 ms of connection time old).

use crate::clock::Clock;
use polycc::units::Time;
pub use polycc_quic::video_frames::{
    data_shard, frame_datagrams, shard_len, FrameAssembler, MEDIA_DEADLINE, QUIC_OVERHEAD,
};
use std::time::Instant;

/// The emulator's time of `at`, an instant in the past or now.
pub fn time_of(clock: &Clock, at: Instant) -> Time {
    let now = clock.now();
    let ago = Instant::now().saturating_duration_since(at);
    Time(
        now.0
            .saturating_sub(u64::try_from(ago.as_nanos()).unwrap_or(u64::MAX)),
    )
}
