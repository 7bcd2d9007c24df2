//! Which scenario flow a packet belongs to, and in which direction it travels.
//!
//! Flow `f`'s server listens on port [`BASE_PORT`]` + f` on its receiving side (the right
//! namespace for forward flows, the left one for `reverse = true` flows). The data sender is
//! always the client, so a packet sent *to* that port toward the server's side carries data,
//! and one sent *from* it is the reverse traffic (ACKs, replies). Everything else crosses the
//! network unclassified.

use crate::frame::{Header, UNCLASSIFIED};

/// Server port of flow 0.
pub const BASE_PORT: u16 = 20000;
/// Most flows the port plan allows: server ports stay below Linux's ephemeral range
/// (`net.ipv4.ip_local_port_range` starts at 32768), so a client's port is never a server's.
pub const MAX_FLOWS: usize = 12000;

/// Server port of flow `f`.
pub fn server_port(f: usize) -> u16 {
    BASE_PORT + f as u16
}

/// `(flow, is_data)` of a packet read from the left device (`from_left`) or the right one;
/// `reverse[f]` says whether flow `f`'s data travels right to left.
pub fn classify(h: Option<Header>, from_left: bool, reverse: &[bool]) -> (u32, bool) {
    let Some(h) = h else {
        return (UNCLASSIFIED, false);
    };
    let flow_of = |port: u16| {
        let f = usize::from(port.checked_sub(BASE_PORT)?);
        (f < reverse.len()).then_some(f)
    };
    // The server of a forward flow is on the right: data to it comes from the left.
    if let Some(f) = flow_of(h.dst_port).filter(|&f| from_left != reverse[f]) {
        return (f as u32, true);
    }
    if let Some(f) = flow_of(h.src_port).filter(|&f| from_left == reverse[f]) {
        return (f as u32, false);
    }
    (UNCLASSIFIED, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::PROTO_TCP;

    fn h(src_port: u16, dst_port: u16) -> Option<Header> {
        Some(Header {
            protocol: PROTO_TCP,
            src_port,
            dst_port,
            payload: 0,
        })
    }

    #[test]
    fn forward_and_reverse_flows_are_told_apart() {
        let reverse = [false, true];
        // Flow 0 (forward): client on the left sends to the server's port on the right.
        assert_eq!(classify(h(40000, 20000), true, &reverse), (0, true));
        assert_eq!(classify(h(20000, 40000), false, &reverse), (0, false));
        // Flow 1 (reverse): the server is on the left.
        assert_eq!(classify(h(40001, 20001), false, &reverse), (1, true));
        assert_eq!(classify(h(20001, 40001), true, &reverse), (1, false));
        // Ports of no flow, or a flow's port in the wrong direction.
        assert_eq!(classify(h(1, 20002), true, &reverse).0, UNCLASSIFIED);
        assert_eq!(classify(h(40000, 20000), false, &reverse).0, UNCLASSIFIED);
        assert_eq!(classify(None, true, &reverse).0, UNCLASSIFIED);
    }
}
