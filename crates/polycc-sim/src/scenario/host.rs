//! What a flow's end hosts do where TCP/IP stacks differ, beyond the controller: chosen by the
//! flow's `stack` (the default is polycc's own, RFC 9002-like sender; [`super::linux_stack`]
//! gives the Linux stack's) and read by the engine's sender and receiver.

use polycc_transport::{LossRules, Pacer};

/// The end hosts' behaviour of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostModel {
    /// The initial window in packets; `None`: the controller's own (RFC 9002 §7.2:
    /// min(10 packets, max(14 720 B, 2 packets))).
    pub initial_window_packets: Option<u64>,
    /// How the receiver acknowledges.
    pub acks: ReceiverAcks,
    /// The sender's loss detection and timeouts.
    pub loss_rules: LossRules,
    /// How paced packets leave.
    pub pacer: Pacer,
    /// Whether each connection opens with TCP's handshake, its data one round trip later
    /// (`engine::handshake`); without, data leaves from the connection's first instant.
    pub handshake: bool,
    /// Bytes an on/off source's socket still sends after the application turns off: what it
    /// had written but not yet sent (0: the sender stops with the application).
    pub unsent_at_pause: u64,
    /// Which of a packet's bytes the sender counts: the unit of the controller's window, bytes
    /// in flight and acknowledged, and of its rates.
    pub counts: CountedBytes,
}

/// IPv4's and UDP's headers (RFC 791: 20 bytes without options; RFC 768: 8).
pub const IPV4_UDP_HEADER_BYTES: u64 = 20 + 8;

/// Which bytes of a data packet a stack's sender counts, as the real stack behind each
/// `stack` does; the links carry the whole packet (`mss + header_bytes`) whatever the count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CountedBytes {
    /// The whole IP packet: polycc's own sender over UDP (its datagrams' `max_datagram` is the
    /// MTU, `polycc-emu`'s UDP client).
    Packet,
    /// The UDP payload: QUIC counts its datagrams without UDP or IP overhead (RFC 9002
    /// Appendix B.1, `max_datagram_size`; s2n-quic's is 1472 bytes on a 1500-byte MTU).
    #[default]
    UdpPayload,
    /// TCP's payload: the kernel counts segments of `mss_cache` bytes (`snd_cwnd`,
    /// `tcpi_bytes_acked`), so a polycc controller through the shim sees 1448-byte packets.
    TcpPayload,
}

impl CountedBytes {
    /// The bytes of a packet with `header` bytes of headers that the sender does not count.
    pub fn uncounted(self, header: u64) -> u64 {
        match self {
            CountedBytes::Packet => 0,
            CountedBytes::UdpPayload => IPV4_UDP_HEADER_BYTES.min(header),
            CountedBytes::TcpPayload => header,
        }
    }
}

/// How a flow's receiver acknowledges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReceiverAcks {
    /// The flow's `ack` policy: every `ack_every` packets, at once on a gap, else after
    /// `max_ack_delay` (RFC 9000 §13.2).
    #[default]
    Policy,
    /// Linux's delayed ACKs: quick ACKs at the start, every second full segment, at once out of
    /// order, else after `ato` (40–200 ms); see `engine::delayed_ack`.
    Linux,
}
