//! The records the kernel side and user space exchange, in the layouts of
//! `src/bpf/polycc.bpf.c` (native byte order, no padding), read and written field by field.

/// Which socket: the number the kernel side gives a socket when it first meets the controller,
/// counting from 1 for the registration's life (ports are no key: a server's sockets share the
/// local port, and clients on two hosts may use the same one). [`FlowKey::ANY`] (0) holds the
/// decision for sockets without one of their own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlowKey(pub u64);

impl FlowKey {
    pub const ANY: FlowKey = FlowKey(0);
}

/// Who a socket is, as its reports say: by these an application names its sockets
/// ([`crate::Sockets`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SocketId {
    pub key: FlowKey,
    pub local_port: u16,
    pub remote_port: u16,
    /// The socket cookie (`SO_COOKIE`, [`crate::socket_cookie`]); 0 until someone asked the
    /// kernel for it (the kernel makes cookies on demand).
    pub cookie: u64,
}

/// What user space decided for a socket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Congestion window in packets; below 2 the kernel side ignores the decision.
    pub cwnd_packets: u32,
    /// Pacing rate in bytes per second; `None`: not paced (the kernel side then sets the
    /// socket's pacing rate as `tcp_update_pacing_rate` would, which only sizes TSO bursts).
    pub pacing_bytes_per_sec: Option<u64>,
    /// The controller is in slow start (the unpaced rate's ratio: 200 % against 120 %).
    pub slow_start: bool,
    /// [`Report::now_ns`] of the ACK this decision answers (0: none); the kernel side echoes
    /// it in [`Report::applied_ack_ns`] of every ACK it applies the decision at, which measures
    /// the control loop's latency.
    pub ack_ns: u64,
    /// Packets in flight at that ACK.
    pub in_flight_packets: u32,
    /// That ACK found the socket reducing its window (fast recovery, CWR, after a timeout).
    /// While the kernel reduces, the kernel side applies a decision made before the reduction
    /// at no more than one packet above what is in flight, and a later one at no more than
    /// `cwnd_packets - in_flight_packets` above it (the lag of one ACK, `polycc.bpf.c`).
    pub reducing: bool,
}

impl Decision {
    /// Bytes of `struct decision`.
    pub const SIZE: usize = 40;

    /// The C layout, with `decided_ns` (`CLOCK_MONOTONIC` when written, by which the kernel
    /// side judges a socket's own decision stale).
    pub fn to_bytes(self, decided_ns: u64) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..4].copy_from_slice(&self.cwnd_packets.to_ne_bytes());
        let flags = u32::from(self.slow_start) | u32::from(self.reducing) << 1;
        b[4..8].copy_from_slice(&flags.to_ne_bytes());
        b[8..16].copy_from_slice(&self.pacing_bytes_per_sec.unwrap_or(0).to_ne_bytes());
        b[16..24].copy_from_slice(&self.ack_ns.to_ne_bytes());
        b[24..32].copy_from_slice(&decided_ns.to_ne_bytes());
        b[32..36].copy_from_slice(&self.in_flight_packets.to_ne_bytes());
        b
    }
}

/// What a report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// An ACK that the kernel ran `cong_control` for.
    Ack,
    /// The socket let go of the controller (it closed or changed controller): no more reports
    /// come for it, and its decision is gone.
    Release,
}

/// One ACK's measurements (the kernel's `struct rate_sample` and the socket's state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// `CLOCK_MONOTONIC` time of the ACK, ns.
    pub now_ns: u64,
    pub key: FlowKey,
    /// Local port << 16 | remote port.
    pub ports: u32,
    /// [`SocketId::cookie`].
    pub cookie: u64,
    /// This ACK's RTT sample, µs (`None`: none, e.g. only retransmitted data acknowledged).
    pub rtt_us: Option<u32>,
    /// Packets newly delivered, cumulatively or selectively.
    pub acked_sacked: u32,
    /// Packets newly marked lost.
    pub losses: u32,
    /// Packets delivered over the rate sample's interval and that interval, µs (`None`: the
    /// sample is not valid).
    pub delivered: Option<(u32, u32)>,
    pub prior_in_flight: u32,
    pub snd_cwnd: u32,
    pub srtt_us: u32,
    pub mss: u32,
    /// Packets delivered over the connection's life.
    pub delivered_total: u32,
    /// The rate sample was taken while the application had too little data to fill the window.
    pub app_limited: bool,
    pub kind: ReportKind,
    /// Packets in flight after this ACK (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Packets marked lost over the connection's life.
    pub lost_total: u32,
    /// Packets delivered with an ECN-CE mark over the connection's life.
    pub delivered_ce: u32,
    /// Bytes cumulatively acknowledged over the connection's life.
    pub bytes_acked: u64,
    /// Bytes sent over the connection's life, retransmissions included.
    pub bytes_sent: u64,
    /// [`Decision::ack_ns`] of the decision applied at this ACK; 0 when none was (the safe
    /// fallback) or it answered no ACK.
    pub applied_ack_ns: u64,
    /// RTT variation, µs.
    pub rttvar_us: u32,
    /// The kernel's windowed minimum RTT, µs.
    pub min_rtt_us: u32,
    /// The kernel's congestion-avoidance state (`TCP_CA_Open` 0 .. `TCP_CA_Loss` 4).
    pub ca_state: u32,
    /// The socket paces itself (TCP's internal pacing at its pacing rate).
    pub paced: bool,
    /// When the most recently delivered packet was sent (`tp->rack.mstamp`, the kernel's TCP
    /// clock: `CLOCK_MONOTONIC`), ns; 0 before any delivery. RACK marks lost only packets sent
    /// before it, so it bounds the send times of this ACK's losses.
    pub rack_sent_ns: u64,
    /// Segments retransmitted over the connection's life (`tp->total_retrans`).
    pub retrans_total: u32,
    /// Retransmitted segments in flight (`tp->retrans_out`).
    pub retrans_out: u32,
}

/// `TCP_CA_Recovery` (`include/net/tcp.h`): fast recovery after losses marked by SACK / RACK,
/// until everything outstanding when it began is acknowledged.
pub const TCP_CA_RECOVERY: u32 = 3;

/// `TCP_CA_CWR`: the window is being reduced after an ECN mark or a local congestion signal.
pub const TCP_CA_CWR: u32 = 2;

/// `TCP_CA_Loss`: a retransmission timeout collapsed the window.
pub const TCP_CA_LOSS: u32 = 4;

impl Report {
    /// Who the socket is.
    pub fn socket(&self) -> SocketId {
        SocketId {
            key: self.key,
            local_port: (self.ports >> 16) as u16,
            remote_port: self.ports as u16,
            cookie: self.cookie,
        }
    }

    /// Bytes of `struct report`.
    pub const SIZE: usize = 144;

    /// A report from its bytes; `None` when they are not one.
    pub fn from_bytes(b: &[u8]) -> Option<Report> {
        if b.len() != Self::SIZE {
            return None;
        }
        let u32_at = |i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let i32_at = |i: usize| i32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut v = [0u8; 8];
            v.copy_from_slice(&b[i..i + 8]);
            u64::from_ne_bytes(v)
        };
        let (delivered, interval) = (i32_at(24), i32_at(28));
        Some(Report {
            now_ns: u64_at(0),
            key: FlowKey(u64_at(128)),
            ports: u32_at(8),
            cookie: u64_at(136),
            rtt_us: u32::try_from(i32_at(12)).ok(),
            acked_sacked: u32_at(16),
            losses: u32_at(20),
            delivered: (delivered >= 0 && interval > 0)
                .then_some((delivered as u32, interval as u32)),
            prior_in_flight: u32_at(32),
            snd_cwnd: u32_at(36),
            srtt_us: u32_at(40),
            mss: u32_at(44),
            delivered_total: u32_at(48),
            app_limited: u32_at(52) != 0,
            kind: match u32_at(56) {
                0 => ReportKind::Ack,
                1 => ReportKind::Release,
                _ => return None,
            },
            in_flight: u32_at(60),
            lost_total: u32_at(64),
            delivered_ce: u32_at(68),
            bytes_acked: u64_at(72),
            bytes_sent: u64_at(80),
            applied_ack_ns: u64_at(88),
            rttvar_us: u32_at(96),
            min_rtt_us: u32_at(100),
            ca_state: u32_at(104),
            paced: u32_at(108) != 0,
            rack_sent_ns: u64_at(112).saturating_mul(1000),
            retrans_total: u32_at(120),
            retrans_out: u32_at(124),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_read_at_the_c_layouts_offsets() {
        fn put_at(b: &mut [u8], at: usize, v: &[u8]) {
            b[at..at + v.len()].copy_from_slice(v);
        }
        let mut b = vec![0u8; Report::SIZE];
        let mut put = |at: usize, v: &[u8]| put_at(&mut b, at, v);
        put(0, &7_000_000u64.to_ne_bytes());
        put(8, &(40000u32 << 16 | 20000).to_ne_bytes());
        put(128, &3u64.to_ne_bytes());
        put(136, &77u64.to_ne_bytes());
        put(12, &41_250i32.to_ne_bytes());
        put(16, &2u32.to_ne_bytes());
        put(20, &1u32.to_ne_bytes());
        put(24, &30i32.to_ne_bytes());
        put(28, &(-1i32).to_ne_bytes());
        put(36, &20u32.to_ne_bytes());
        put(44, &1448u32.to_ne_bytes());
        put(52, &1u32.to_ne_bytes());
        put(60, &17u32.to_ne_bytes());
        put(80, &123_456u64.to_ne_bytes());
        put(112, &6_500u64.to_ne_bytes());
        put(88, &6_000_000u64.to_ne_bytes());
        put(104, &4u32.to_ne_bytes());
        put(120, &9u32.to_ne_bytes());
        put(124, &2u32.to_ne_bytes());
        let r = Report::from_bytes(&b).expect("a report's size");
        assert_eq!(r.now_ns, 7_000_000);
        assert_eq!(r.key, FlowKey(3));
        assert_eq!(
            r.socket(),
            SocketId {
                key: FlowKey(3),
                local_port: 40000,
                remote_port: 20000,
                cookie: 77
            }
        );
        assert_eq!(r.rtt_us, Some(41_250));
        assert_eq!((r.acked_sacked, r.losses), (2, 1));
        assert_eq!(r.delivered, None, "no interval: no rate sample");
        assert_eq!((r.snd_cwnd, r.mss), (20, 1448));
        assert!(r.app_limited);
        assert_eq!(r.kind, ReportKind::Ack);
        assert_eq!((r.in_flight, r.bytes_sent), (17, 123_456));
        assert_eq!((r.applied_ack_ns, r.ca_state), (6_000_000, TCP_CA_LOSS));
        assert_eq!(
            r.rack_sent_ns, 6_500_000,
            "µs on the wire, ns in the report"
        );
        assert_eq!((r.retrans_total, r.retrans_out), (9, 2));
        assert_eq!(Report::from_bytes(&b[..Report::SIZE - 1]), None);
        put_at(&mut b, 12, &(-1i32).to_ne_bytes());
        assert_eq!(Report::from_bytes(&b).map(|r| r.rtt_us), Some(None));
    }

    #[test]
    fn a_decision_is_written_in_the_c_layout() {
        let d = Decision {
            cwnd_packets: 20,
            pacing_bytes_per_sec: Some(1_250_000),
            slow_start: true,
            ack_ns: 9,
            in_flight_packets: 17,
            reducing: true,
        }
        .to_bytes(11);
        assert_eq!(&d[0..4], &20u32.to_ne_bytes());
        assert_eq!(&d[4..8], &3u32.to_ne_bytes());
        assert_eq!(&d[8..16], &1_250_000u64.to_ne_bytes());
        assert_eq!(&d[16..24], &9u64.to_ne_bytes());
        assert_eq!(&d[24..32], &11u64.to_ne_bytes());
        assert_eq!(&d[32..36], &17u32.to_ne_bytes());
    }
}
