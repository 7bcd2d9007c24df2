//! `stack = "quic"` flows over real QUIC: s2n-quic with the flow's polycc controller
//! (through `polycc-quic`), the client sending in the sender's namespace, the server receiving
//! in the receiver's, each on its thread with a current-thread tokio runtime.
//!
//! Each transfer is one bidirectional stream in polycc-quic's transfer protocol
//! (`polycc_quic::transfer`: length-prefixed segments, a trailer with the byte count and a
//! checksum, the receiver's verdict back): bulk flows and on/off sources (written in their on
//! periods only) send one stream until they stop and are verified then; sized and web flows send one stream per transfer, on one connection
//! (`persistent`) or a connection each, and the verdict is the sender's cue that the transfer
//! is in. The receiver counts data bytes (goodput) as they arrive and records a transfer's
//! completion when its trailer arrives.
//!
//! A controller that takes receiver timing (LEDBAT, GCC) gets it as over polycc's UDP
//! transport: the server reports every packet's arrival on a unidirectional stream and the
//! client posts the reports to the controller's handle (`polycc_quic::timing`); a malformed
//! report fails the run.
//!
//! The controller is built as the simulator builds it (`new_controller`, seeded per
//! connection) and handed to s2n by [`polycc_quic::Polycc::from_factory`]; later intents reach
//! it through its [`polycc_quic::ControllerHandle`]. Its published snapshot (every 10 ms of
//! connection time) is the flow's [`Sample`] and its RTT samples.
//!
//! Every wait is bounded: a run with QUIC flows ends within its duration, [`VERIFY_GRACE`]
//! and its set-up. A flow fails the run, naming itself and the cause, when its handshake does
//! not complete within the client's connect timeout (5 s), or when a transfer fails its
//! checksum; a handshake or a sized or web transfer cut off by the run's end is not an error,
//! only not completed. A bulk flow whose verdict does not come within [`VERIFY_GRACE`] of the
//! end (a very lossy link may not drain what was written ahead) is checked on what its
//! receiver read: the sender recomputes the checksum of that many bytes of what it wrote.
//!
//! What s2n-quic decides itself, as the kernel does for `stack = "linux"`: the ACK policy (the
//! flow's `ack` does not apply), flow control (`rwnd` is refused), retransmission of frames
//! (a lost packet's data is sent again in new packets, so `retransmits` counts lost packets).

pub mod client;
pub mod server;
pub mod video;

use crate::clock::Clock;
use crate::flow_state::Sample;
use polycc::units::Time;
use polycc_quic::s2n_quic::provider::io::tokio::{Builder as IoBuilder, Provider as Io};
use polycc_quic::s2n_quic::provider::limits::Limits;
use polycc_quic::Snapshot;
// The bytes each datagram carries on the wire beyond its UDP payload (the testbed is IPv4).
use polycc_sim::scenario::host::IPV4_UDP_HEADER_BYTES;

/// The datagram size (IP packet, bytes) s2n-quic starts paths at: the emulator's devices carry
/// [`crate::tunnel::MTU`]-byte packets, so the path needs no discovery from RFC 9000's 1200.
const INITIAL_MTU: u16 = crate::tunnel::MTU;

/// How long a connection may stay silent before s2n closes it: longer than any emulated run's
/// pause (web think times), short enough that a lost peer ends the endpoint soon after the run.
const IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// After the run's end, how long a bulk flow's sender waits for the receiver's verdict on what
/// it sent (its buffers and the link's queue drain first), and the receiver serves it.
pub const VERIFY_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A current-thread runtime for one endpoint thread.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    // s2n wakes for paced packets on the runtime's timer; the default 50 µs slack would be
    // added to each wake-up (as for polycc's UDP sender).
    let _ = nix::sys::prctl::set_timerslack(1);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// s2n's socket provider for `builder`, with paths starting at the devices' MTU.
fn io(builder: IoBuilder) -> Result<Io, String> {
    builder
        .with_initial_mtu(INITIAL_MTU)
        .and_then(|b| b.with_max_mtu(INITIAL_MTU))
        .and_then(|b| b.build())
        .map_err(|e| format!("QUIC socket: {e}"))
}

fn limits() -> Result<Limits, String> {
    Limits::new()
        .with_max_idle_timeout(IDLE_TIMEOUT)
        .map_err(|e| format!("QUIC limits: {e}"))
}

/// Sleeps until emulated time `t`.
async fn sleep_until(clock: &Clock, t: Time) {
    tokio::time::sleep_until(tokio::time::Instant::from_std(clock.instant(t))).await;
}

/// A controller's published state in the flows table's terms: the controller's own telemetry
/// (`cc_state`, `cc_*`) and, where the controller does not report them under these names,
/// s2n's RTT estimates and the adapter's counters.
pub fn sample_of(s: &Snapshot) -> Sample {
    let st = &s.stats;
    let mut extras: Vec<(&'static str, f64)> = s
        .telemetry
        .entries()
        .iter()
        .filter(|(_, v)| v.is_finite())
        .copied()
        .collect();
    let ms = |d: polycc::units::Duration| d.0 as f64 / 1e6;
    let mut add = |name: &'static str, v: f64| {
        if !extras.iter().any(|(n, _)| *n == name) {
            extras.push((name, v));
        }
    };
    if st.rtt.has_sample {
        add("srtt_ms", ms(st.rtt.smoothed));
        add("min_rtt_ms", ms(st.rtt.min));
    }
    if let Some(r) = st.delivery_rate {
        add("delivery_rate_mbps", r.as_mbps_f64());
    }
    if st.feedback_reports + st.feedback_unmatched > 0 {
        // Receiver timing over QUIC (`polycc_quic::timing`): arrivals given to the controller.
        add("feedback_arrivals", st.feedback_arrivals as f64);
        add("feedback_unmatched", st.feedback_unmatched as f64);
    }
    // The simulator counts packets on the wire; s2n counts UDP payloads. The wire figure lets
    // the two be compared (e.g. bytes in flight against a BDP).
    add(
        "inflight_wire_bytes",
        (st.in_flight + st.in_flight_packets * IPV4_UDP_HEADER_BYTES) as f64,
    );
    add("acked_bytes", st.acked_bytes as f64);
    add("lost_packets", st.lost_packets as f64);
    Sample {
        state: s.telemetry.state,
        cwnd_bytes: Some(st.cwnd as f64),
        inflight_bytes: Some(st.in_flight as f64),
        pacing_rate_mbps: st.pacing_rate.map(|r| r.as_mbps_f64()),
        extras,
    }
}
