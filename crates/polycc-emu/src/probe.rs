//! Measurement probes through a [`Testbed`]: ICMP echo round trips and a paced UDP stream,
//! for checking the emulator against analytic values (its tests) and for stating its timing
//! error (`examples/emu_timing.rs`, BENCHMARKS.md). Probe packets match no scenario flow, so
//! they cross every link in order with no access delay.

use crate::error::EmuError;
use crate::netns::Netns;
use crate::testbed::Testbed;
use crate::tunnel::{LEFT_ADDR, RIGHT_ADDR};
use nix::sys::socket::{self, sockopt, AddressFamily, SockFlag, SockProtocol, SockType};
use std::net::{SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

/// The UDP port the stream goes to: below every flow's server port.
pub const PROBE_PORT: u16 = 9000;
/// UDP payload of a 1500-byte IP packet.
pub const FULL_PAYLOAD: usize = 1472;
/// IPv4 and UDP (or ICMP echo) headers.
pub const IP_UDP_HEADERS: usize = 28;
/// Receive buffer of the stream's receiver: a second of arrivals at 100 Mbit/s, so that a
/// receiving thread held up by the host's load does not drop what the link delivered.
const RECEIVE_BUFFER: usize = 16 << 20;

fn in_ns<T: Send>(
    ns: &Netns,
    what: &str,
    f: impl FnOnce() -> std::io::Result<T> + Send,
) -> Result<T, EmuError> {
    ns.run_in(|| f().map_err(|e| EmuError::system(what, e)))
}

/// Round-trip times (ms) of `count` ICMP echoes of `payload` bytes from the left namespace to
/// the right one, `gap` apart. Linux "ping sockets": the kernel fills in the identifier and
/// checksum, and the peer's kernel answers, so no thread of ours is on the reply's path.
/// Lost echoes are left out.
pub fn ping(
    bed: &Testbed,
    count: u16,
    payload: usize,
    gap: Duration,
) -> Result<Vec<f64>, EmuError> {
    let sock = in_ns(&bed.left, "ICMP echo socket", || {
        // A new namespace lets no group open ping sockets ("1 0"); allow root's.
        std::fs::write("/proc/sys/net/ipv4/ping_group_range", "0 0")?;
        let fd = socket::socket(
            AddressFamily::Inet,
            SockType::Datagram,
            SockFlag::SOCK_CLOEXEC,
            SockProtocol::Icmp,
        )?;
        Ok(UdpSocket::from(fd))
    })?;
    sock.set_read_timeout(Some(Duration::from_secs(1)))
        .map_err(|e| EmuError::system("ICMP echo socket", e))?;
    let mut rtts = Vec::new();
    let mut buf = [0u8; 2048];
    for seq in 0..count {
        // Echo request: type 8, code 0; checksum and identifier are the kernel's.
        let mut req = vec![8u8, 0, 0, 0, 0, 0];
        req.extend_from_slice(&seq.to_be_bytes());
        req.resize(8 + payload, 0xa5);
        let t0 = Instant::now();
        sock.send_to(&req, SocketAddrV4::new(RIGHT_ADDR, 0))
            .map_err(|e| EmuError::system("ICMP echo", e))?;
        if let Ok((n, _)) = sock.recv_from(&mut buf) {
            let rtt = t0.elapsed().as_secs_f64() * 1e3;
            if n >= 8 && buf[0] == 0 && buf[6..8] == seq.to_be_bytes() {
                rtts.push(rtt);
            }
        }
        std::thread::sleep(gap);
    }
    Ok(rtts)
}

/// What a paced stream of full-size datagrams measured at its receiver.
pub struct Stream {
    /// Arrival time of each datagram received (s since the first was sent).
    pub arrivals: Vec<f64>,
    /// Its one-way delay (ms): sender and receiver share this process's clock.
    pub delays_ms: Vec<f64>,
    pub sent: u64,
}

impl Stream {
    /// Indices of the datagrams that arrived in [from_s, to_s).
    pub fn between(&self, from_s: f64, to_s: f64) -> Vec<usize> {
        (0..self.arrivals.len())
            .filter(|&i| self.arrivals[i] >= from_s && self.arrivals[i] < to_s)
            .collect()
    }

    /// IP-level rate (bit/s) of the arrivals in [from_s, to_s), first to last.
    pub fn rate_between(&self, from_s: f64, to_s: f64) -> f64 {
        let w = self.between(from_s, to_s);
        let (Some(&a), Some(&b)) = (w.first(), w.last()) else {
            return 0.0;
        };
        let bits = ((b - a) * (FULL_PAYLOAD + IP_UDP_HEADERS) * 8) as f64;
        bits / (self.arrivals[b] - self.arrivals[a])
    }
}

/// Sends full-size UDP datagrams left to right at `offered` bit/s for `secs`, and records their
/// arrivals.
pub fn stream(bed: &Testbed, offered: f64, secs: f64) -> Result<Stream, EmuError> {
    let at = SocketAddrV4::new(RIGHT_ADDR, PROBE_PORT);
    let server = in_ns(&bed.right, "probe receiver", || {
        let s = UdpSocket::bind(at)?;
        s.set_read_timeout(Some(Duration::from_millis(500)))?;
        socket::setsockopt(&s, sockopt::RcvBufForce, &RECEIVE_BUFFER)?;
        Ok(s)
    })?;
    let client = in_ns(&bed.left, "probe sender", || {
        UdpSocket::bind(SocketAddrV4::new(LEFT_ADDR, 0))
    })?;
    let t0 = Instant::now();
    let gap = (FULL_PAYLOAD + IP_UDP_HEADERS) as f64 * 8.0 / offered;
    let sent = (secs / gap) as u64;
    let (arrivals, delays_ms) = std::thread::scope(|s| {
        s.spawn(|| {
            let mut pkt = [0u8; FULL_PAYLOAD];
            for k in 0..sent {
                let due = t0 + Duration::from_secs_f64(k as f64 * gap);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                let stamp = t0.elapsed().as_nanos() as u64;
                pkt[..8].copy_from_slice(&stamp.to_ne_bytes());
                let _ = client.send_to(&pkt, at);
            }
        });
        let (mut arrivals, mut delays) = (Vec::new(), Vec::new());
        let mut buf = [0u8; 2048];
        while let Ok((n, _)) = server.recv_from(&mut buf) {
            if n != FULL_PAYLOAD {
                continue;
            }
            let now = t0.elapsed();
            let stamp = u64::from_ne_bytes(buf[..8].try_into().expect("8 bytes"));
            arrivals.push(now.as_secs_f64());
            delays.push(now.as_nanos().saturating_sub(stamp as u128) as f64 / 1e6);
        }
        (arrivals, delays)
    });
    Ok(Stream {
        arrivals,
        delays_ms,
        sent,
    })
}
