//! A packet in the network: a data segment, an ACK, or a handshake's SYN / SYN-ACK. Small and `Copy`, so queues and delay
//! lines move it by value without allocation.

use crate::queue::Queued;
use polycc::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
    /// A connection's SYN (`engine::handshake`): `pn` counts its retransmissions.
    Syn,
    /// The answer to a SYN; `sent` echoes the SYN's send time (as TCP's timestamp option does).
    SynAck,
}

impl Kind {
    /// Whether the packet travels the data route (sender to receiver).
    pub fn forward(self) -> bool {
        matches!(self, Kind::Data | Kind::Syn)
    }
}

/// 56 bytes, so a packet with its due time fills one cache line in a delay line.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// Position along the route of its direction.
    pub hop: u16,
    pub wire_bytes: u32,
    /// ACK: receiver's ACK delay (ns, saturating at ~4.3 s) for the largest packet.
    pub ack_delay_ns: u32,
    /// Data: packet number. ACK: largest packet number acknowledged.
    pub pn: u64,
    /// Data: application segment index. ACK: index of the receiver's last ACK range covered.
    pub seg: u64,
    /// Data: send time. ACK: time the receiver sent it.
    pub sent: Time,
    /// Queueing delay accumulated along the route, ns.
    pub queue_ns: u64,
    /// ACK: receiver arrival-log position covered (for feedback).
    pub log_pos: u64,
}

impl Queued for Packet {
    fn wire_bytes(&self) -> u64 {
        self.wire_bytes as u64
    }
    fn flow_key(&self) -> u32 {
        self.flow
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_stays_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 56);
    }
}
