//! The emulated link against analytic values: round-trip time, rate, random loss and the
//! queueing delay of a full drop-tail buffer, measured with UDP probes between the namespaces
//! (unclassified traffic crosses every link with no access delay).

mod common;

use common::{emulator_available, model};
use polycc_emu::testbed::Testbed;
use polycc_emu::tunnel::{LEFT_ADDR, RIGHT_ADDR};
use std::net::{SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

/// A port no scenario flow uses.
const PROBE_PORT: u16 = 9000;
/// UDP payload that makes a 1500-byte IP packet.
const FULL_PAYLOAD: usize = 1472;
const IP_UDP_HEADERS: usize = 28;

fn scenario(rate: &str, delay: &str, queue: &str, loss: f64) -> String {
    format!(
        r#"
name = "probe"
duration = "30s"
[[links]]
id = "l"
rate = "{rate}"
delay = "{delay}"
loss = {loss}
queue = {{ kind = "droptail", size = "{queue}" }}
[[flows]]
id = "unused"
cca = "cubic"
stack = "linux"
rtt = "1ms"
"#
    )
}

fn bind(ns: &polycc_emu::netns::Netns, addr: SocketAddrV4) -> UdpSocket {
    ns.run_in(|| Ok(UdpSocket::bind(addr).expect("bind")))
        .expect("in namespace")
}

/// An ICMP echo socket (Linux "ping socket": the kernel fills in the identifier and checksum,
/// and the peer's kernel answers, so no thread of ours is in the reply's path).
fn ping_socket(ns: &polycc_emu::netns::Netns) -> UdpSocket {
    use nix::sys::socket::{socket, AddressFamily, SockFlag, SockProtocol, SockType};
    ns.run_in(|| {
        // A new namespace lets no group open ping sockets ("1 0"); allow root's.
        std::fs::write("/proc/sys/net/ipv4/ping_group_range", "0 0").expect("sysctl");
        let fd = socket(
            AddressFamily::Inet,
            SockType::Datagram,
            SockFlag::SOCK_CLOEXEC,
            SockProtocol::Icmp,
        )
        .expect("ping socket (net.ipv4.ping_group_range must include root)");
        Ok(UdpSocket::from(fd))
    })
    .expect("in namespace")
}

#[test]
fn ping_round_trip_time_is_the_configured_delay() {
    let Some(_one) = emulator_available("ping_round_trip_time_is_the_configured_delay") else {
        return;
    };
    let bed = Testbed::start(&model(&scenario("100Mbps", "20ms", "100pkt", 0.0))).unwrap();
    let ping = ping_socket(&bed.left);
    ping.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    const PROBES: usize = 100;
    const PAYLOAD: usize = 56; // ping's default
    let mut rtts: Vec<f64> = (0..PROBES as u16)
        .filter_map(|seq| {
            // Echo request: type 8, code 0, checksum and identifier filled by the kernel.
            let mut req = vec![8u8, 0, 0, 0, 0, 0];
            req.extend_from_slice(&seq.to_be_bytes());
            req.resize(8 + PAYLOAD, 0xa5);
            let t0 = Instant::now();
            ping.send_to(&req, SocketAddrV4::new(RIGHT_ADDR, 0))
                .unwrap();
            let mut buf = [0u8; 256];
            let (n, _) = ping.recv_from(&mut buf).ok()?;
            let rtt = t0.elapsed().as_secs_f64() * 1e3;
            std::thread::sleep(Duration::from_millis(5));
            (n >= 8 && buf[0] == 0 && buf[6..8] == seq.to_be_bytes()).then_some(rtt)
        })
        .collect();
    bed.finish().unwrap();
    assert_eq!(rtts.len(), PROBES, "every echo came back");
    rtts.sort_by(f64::total_cmp);
    // 2 × 20 ms of propagation plus two serialisations of an 84-byte packet at 100 Mbit/s.
    let expected = 40.0 + 2.0 * ((20 + 8 + PAYLOAD) * 8) as f64 / 100e6 * 1e3;
    let median = rtts[PROBES / 2];
    let mean = rtts.iter().sum::<f64>() / PROBES as f64;
    eprintln!(
        "ping RTT: expected {expected:.3} ms, min {:.3}, median {median:.3}, mean {mean:.3}, \
         max {:.3}",
        rtts[0],
        rtts[PROBES - 1]
    );
    assert!(
        rtts[0] >= expected - 0.01,
        "faster than light: {:.3}",
        rtts[0]
    );
    assert!((median - expected).abs() < 0.3, "median {median:.3} ms");
    assert!((mean - expected).abs() < 0.3, "mean {mean:.3} ms");
}

/// Sends full-size datagrams at `offered` bit/s for `secs`; returns the arrival time of each
/// received one (seconds since the first send) and the one-way delays (ms).
fn blast(bed: &Testbed, offered: f64, secs: f64) -> (Vec<f64>, Vec<f64>) {
    let server = bind(&bed.right, SocketAddrV4::new(RIGHT_ADDR, PROBE_PORT));
    server
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    // Room for a second of arrivals, so that a receiving thread held up by the host's load
    // does not drop datagrams the link delivered.
    nix::sys::socket::setsockopt(&server, nix::sys::socket::sockopt::RcvBufForce, &(16 << 20))
        .unwrap();
    let client = bind(&bed.left, SocketAddrV4::new(LEFT_ADDR, 0));
    let t0 = Instant::now();
    let gap = (FULL_PAYLOAD + IP_UDP_HEADERS) as f64 * 8.0 / offered;
    let count = (secs / gap) as u64;
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut pkt = [0u8; FULL_PAYLOAD];
            for k in 0..count {
                let due = t0 + Duration::from_secs_f64(k as f64 * gap);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                let sent = t0.elapsed().as_nanos() as u64;
                pkt[..8].copy_from_slice(&sent.to_ne_bytes());
                let _ = client.send_to(&pkt, SocketAddrV4::new(RIGHT_ADDR, PROBE_PORT));
            }
        });
        let mut arrivals = Vec::new();
        let mut delays = Vec::new();
        let mut buf = [0u8; 2048];
        while let Ok((n, _)) = server.recv_from(&mut buf) {
            if n != FULL_PAYLOAD {
                continue;
            }
            let now = t0.elapsed();
            let sent = u64::from_ne_bytes(buf[..8].try_into().unwrap());
            arrivals.push(now.as_secs_f64());
            delays.push((now.as_nanos() as u64 - sent) as f64 / 1e6);
        }
        (arrivals, delays)
    })
}

#[test]
fn rate_and_full_buffer_delay_are_the_configured_ones() {
    let Some(_one) = emulator_available("rate_and_full_buffer_delay_are_the_configured_ones")
    else {
        return;
    };
    for (rate, mbps) in [("20Mbps", 20e6f64), ("100Mbps", 100e6)] {
        // 50 ms of buffer: the sending thread, a normal one on a busy host, may stall for a
        // few milliseconds without the link running dry.
        let buffer = (0.05 * mbps / (1500.0 * 8.0)).round();
        let queue = format!("{buffer}pkt");
        let bed = Testbed::start(&model(&scenario(rate, "5ms", &queue, 0.0))).unwrap();
        let (arrivals, delays) = blast(&bed, 2.0 * mbps, 3.0);
        let fin = bed.finish().unwrap();
        assert_eq!(fin.write_failures, 0);
        eprintln!("{rate}: the emulator's thread used {:.2} CPU s", fin.cpu_s);
        // Steady state: from 1 s to 2.5 s, the link always has a packet to send.
        let window: Vec<usize> = (0..arrivals.len())
            .filter(|&i| arrivals[i] >= 1.0 && arrivals[i] < 2.5)
            .collect();
        let (a, b) = (window[0], *window.last().unwrap());
        let bits = ((b - a) * (FULL_PAYLOAD + IP_UDP_HEADERS) * 8) as f64;
        let measured = bits / (arrivals[b] - arrivals[a]);
        // An admitted packet finds at most `buffer - 1` waiting and one in service (half done
        // on average) ahead of it; then its own serialisation and 5 ms of propagation.
        let expected_delay = 5.0 + (buffer + 0.5) * 1500.0 * 8.0 / mbps * 1e3;
        let mut d: Vec<f64> = window.iter().map(|&i| delays[i]).collect();
        d.sort_by(f64::total_cmp);
        let median_delay = d[d.len() / 2];
        eprintln!(
            "{rate}: {:.3} Mbit/s measured; one-way delay median {median_delay:.2} ms \
             (expected {expected_delay:.2})",
            measured / 1e6
        );
        assert!(
            (measured / mbps - 1.0).abs() < 0.01,
            "{rate}: {:.3} Mbit/s",
            measured / 1e6
        );
        assert!(
            (median_delay - expected_delay).abs() < 0.5,
            "{rate}: median one-way delay {median_delay:.2} ms, expected {expected_delay:.2}"
        );
    }
}

#[test]
fn random_loss_drops_the_configured_fraction() {
    let Some(_one) = emulator_available("random_loss_drops_the_configured_fraction") else {
        return;
    };
    let loss = 0.2;
    let bed = Testbed::start(&model(&scenario("50Mbps", "1ms", "1000pkt", loss))).unwrap();
    // 2 000 datagrams at 10 Mbit/s: well under the rate, so only the random loss drops any.
    let (arrivals, _) = blast(&bed, 10e6, 2.0 * 1500.0 * 8.0 * 1000.0 / 10e6);
    let finished = bed.finish().unwrap();
    let sent = 2000.0;
    let got = arrivals.len() as f64 / sent;
    // 3 standard deviations of a binomial proportion over 2 000 trials.
    let tolerance = 3.0 * (loss * (1.0 - loss) / sent).sqrt();
    eprintln!(
        "delivered {got:.4} of datagrams (expected {:.2} ± {tolerance:.4})",
        1.0 - loss
    );
    assert!((got - (1.0 - loss)).abs() < tolerance, "delivered {got:.4}");
    assert_eq!(finished.write_failures, 0);
}
