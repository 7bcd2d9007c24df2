//! A real IP packet crossing the emulated network, and what the emulator reads from its header.

use polycc::units::Time;
use polycc_sim::queue::Queued;

/// Flow index of packets that belong to no scenario flow (pings, ARP-less chatter, probes):
/// they cross the links but no flow's access delay.
pub const UNCLASSIFIED: u32 = u32::MAX;

/// An IP packet in the emulated network.
#[derive(Debug)]
pub struct Frame {
    /// The whole IP packet, as read from a TUN device.
    pub bytes: Vec<u8>,
    /// Scenario flow index, or [`UNCLASSIFIED`].
    pub flow: u32,
    /// Travelling in the flow's data direction (client to server), as opposed to its ACKs
    /// and replies.
    pub data: bool,
    /// Read from the left device (so it leaves by the right one).
    pub from_left: bool,
    /// Index of the route it follows ([`crate::network::Network`]'s route table).
    pub route: u32,
    /// Position on that route.
    pub hop: u16,
    /// When the emulator read it.
    pub entered: Time,
    /// Time spent waiting in queues so far.
    pub queue_ns: u64,
    /// Transport payload bytes (0 when unclassified): an outside program's goodput is what the
    /// emulator delivers of them.
    pub payload: u32,
}

impl Queued for Frame {
    fn wire_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn flow_key(&self) -> u32 {
        self.flow
    }
}

/// Transport protocol numbers (IANA).
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// The fields of an IPv4 packet the emulator classifies by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// Transport payload bytes (after the IP and TCP/UDP headers).
    pub payload: u32,
}

/// Reads an IPv4 TCP or UDP header; `None` for anything else (IPv6, ICMP, fragments, a packet
/// too short for what its header claims), which the emulator forwards unclassified.
pub fn parse(p: &[u8]) -> Option<Header> {
    let first = *p.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(first & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([*p.get(2)?, *p.get(3)?]));
    let frag = u16::from_be_bytes([*p.get(6)?, *p.get(7)?]) & 0x1fff;
    if ihl < 20 || total > p.len() || frag != 0 {
        return None;
    }
    let protocol = p[9];
    let l4 = p.get(ihl..total)?;
    let port = |o: usize| Some(u16::from_be_bytes([*l4.get(o)?, *l4.get(o + 1)?]));
    let header_len = match protocol {
        PROTO_TCP => usize::from(*l4.get(12)? >> 4) * 4,
        PROTO_UDP => 8,
        _ => return None,
    };
    Some(Header {
        protocol,
        src_port: port(0)?,
        dst_port: port(2)?,
        payload: l4.len().checked_sub(header_len)? as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal IPv4 + TCP packet with `payload` bytes after a 20-byte TCP header.
    pub fn tcp_packet(sport: u16, dport: u16, payload: usize) -> Vec<u8> {
        let total = 20 + 20 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = PROTO_TCP;
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p[32] = 5 << 4;
        p
    }

    #[test]
    fn reads_ports_and_payload_of_tcp() {
        let h = parse(&tcp_packet(40000, 5001, 1448)).unwrap();
        assert_eq!(
            (h.protocol, h.src_port, h.dst_port, h.payload),
            (6, 40000, 5001, 1448)
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&[0x60; 60]), None, "IPv6");
        let mut short = tcp_packet(1, 2, 100);
        short.truncate(50);
        assert_eq!(parse(&short), None, "truncated");
        let mut frag = tcp_packet(1, 2, 0);
        frag[7] = 1;
        assert_eq!(parse(&frag), None, "fragment");
        let mut icmp = tcp_packet(1, 2, 0);
        icmp[9] = 1;
        assert_eq!(parse(&icmp), None, "ICMP");
    }
}
