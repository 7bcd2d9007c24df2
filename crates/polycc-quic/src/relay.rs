//! A UDP relay on loopback between one QUIC client and a server that drops, duplicates,
//! truncates and corrupts datagrams and adds random ones, at seeded random: the faulty path of
//! the robustness tests and the memory benchmark, without namespaces or privileges.
//!
//! The client sends to [`Relay::addr`]; the relay forwards to the server from a socket of its
//! own and back to the last client address it heard from. Each direction runs on its thread
//! with its own generator (xorshift64*, Vigna 2016), so a seed gives the same fault pattern for
//! the same traffic. Injected datagrams come from the addresses the endpoints expect (the
//! client sees the relay's, the server the relay's other socket), as an attacker on the path
//! would send them.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a relay thread blocked in `recv` looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// The largest datagram relayed: UDP's payload limit over IPv4.
const MAX_DATAGRAM: usize = 65_507;

/// Per forwarded datagram, the probability of each fault. All zero: a plain relay.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    /// Not forwarded.
    pub loss: f64,
    /// Forwarded, then sent again (a replay of a genuine packet).
    pub duplicate: f64,
    /// A copy cut to a random shorter length sent as well.
    pub truncate: f64,
    /// A copy with random bytes flipped sent as well (AEAD must reject it).
    pub corrupt: f64,
    /// A datagram of random bytes and length (1..1400) sent as well.
    pub random: f64,
}

/// What a relay did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Genuine datagrams forwarded, both ways.
    pub forwarded: u64,
    /// Genuine datagrams dropped, both ways.
    pub dropped: u64,
    /// Extra datagrams (duplicates, truncated, corrupted, random) sent to the server.
    pub injected_to_server: u64,
    /// Extra datagrams sent to the client.
    pub injected_to_client: u64,
}

/// [`Counts`] as the relay's threads update them.
#[derive(Debug, Default)]
struct Counters {
    forwarded: AtomicU64,
    dropped: AtomicU64,
    injected: [AtomicU64; 2],
}

/// Index into [`Counters::injected`].
const TO_SERVER: usize = 0;
const TO_CLIENT: usize = 1;

/// A running relay; stopped when dropped.
pub struct Relay {
    addr: SocketAddr,
    counts: Arc<Counters>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// A seeded xorshift64* generator.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Any nonzero state; the multiplier spreads seeds that differ in one bit.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }

    /// Uniform in [lo, hi), hi > lo.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
}

impl Relay {
    /// Starts a relay on 127.0.0.1 to `server`, applying `faults` in both directions.
    pub fn start(server: SocketAddr, faults: Faults, seed: u64) -> io::Result<Relay> {
        let front = UdpSocket::bind("127.0.0.1:0")?;
        let back = UdpSocket::bind("127.0.0.1:0")?;
        back.connect(server)?;
        for s in [&front, &back] {
            s.set_read_timeout(Some(POLL))?;
        }
        let addr = front.local_addr()?;
        let counts = Arc::new(Counters::default());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let (front2, back2) = (front.try_clone()?, back.try_clone()?);
        let up = {
            let (counts, stop, client) = (counts.clone(), stop.clone(), client.clone());
            let mut rng = Rng::new(seed);
            std::thread::Builder::new()
                .name("relay-up".into())
                .spawn(move || {
                    let mut buf = vec![0u8; MAX_DATAGRAM];
                    while !stop.load(Ordering::Relaxed) {
                        let Ok((n, from)) = front.recv_from(&mut buf) else {
                            continue;
                        };
                        *client.lock().unwrap_or_else(|e| e.into_inner()) = Some(from);
                        forward(&buf[..n], &faults, &mut rng, &counts, TO_SERVER, |d| {
                            back.send(d)
                        });
                    }
                })?
        };
        let down = {
            let (counts, stop) = (counts.clone(), stop.clone());
            let mut rng = Rng::new(seed ^ 0xD0A7);
            std::thread::Builder::new()
                .name("relay-down".into())
                .spawn(move || {
                    let mut buf = vec![0u8; MAX_DATAGRAM];
                    while !stop.load(Ordering::Relaxed) {
                        // Datagrams from the server before any client are dropped: nowhere to go.
                        let Ok(n) = back2.recv(&mut buf) else {
                            continue;
                        };
                        let to = *client.lock().unwrap_or_else(|e| e.into_inner());
                        if let Some(to) = to {
                            forward(&buf[..n], &faults, &mut rng, &counts, TO_CLIENT, |d| {
                                front2.send_to(d, to)
                            });
                        }
                    }
                })?
        };
        Ok(Relay {
            addr,
            counts,
            stop,
            threads: vec![up, down],
        })
    }

    /// The address a client connects to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What it did so far.
    pub fn counts(&self) -> Counts {
        let c = &self.counts;
        Counts {
            forwarded: c.forwarded.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            injected_to_server: c.injected[TO_SERVER].load(Ordering::Relaxed),
            injected_to_client: c.injected[TO_CLIENT].load(Ordering::Relaxed),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Forwards one genuine datagram through `send` with the faults drawn for it. Send errors are
/// ignored, as a network drops what it cannot deliver (an endpoint that has gone away).
fn forward(
    d: &[u8],
    f: &Faults,
    rng: &mut Rng,
    counts: &Counters,
    to: usize,
    send: impl Fn(&[u8]) -> io::Result<usize>,
) {
    let inject = |extra: &[u8]| {
        let _ = send(extra);
        counts.injected[to].fetch_add(1, Ordering::Relaxed);
    };
    if rng.chance(f.loss) {
        counts.dropped.fetch_add(1, Ordering::Relaxed);
    } else {
        let _ = send(d);
        counts.forwarded.fetch_add(1, Ordering::Relaxed);
    }
    if rng.chance(f.duplicate) {
        inject(d);
    }
    if rng.chance(f.truncate) && d.len() > 1 {
        inject(&d[..rng.range(1, d.len())]);
    }
    if rng.chance(f.corrupt) && !d.is_empty() {
        let mut c = d.to_vec();
        for _ in 0..rng.range(1, 9) {
            let i = rng.range(0, c.len());
            c[i] ^= (rng.next() as u8) | 1;
        }
        inject(&c);
    }
    if rng.chance(f.random) {
        let len = rng.range(1, 1400);
        let r: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        inject(&r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `n` numbered datagrams from a client through a relay to a server socket; returns
    /// what the server received and the relay's counts (forwarded, dropped, injected).
    fn through(faults: Faults, n: u32) -> (Vec<Vec<u8>>, u64, u64, u64) {
        let server = UdpSocket::bind("127.0.0.1:0").expect("a socket");
        server
            .set_read_timeout(Some(Duration::from_millis(300)))
            .expect("timeout");
        let relay = Relay::start(server.local_addr().expect("addr"), faults, 7).expect("relay");
        // The server reads on its thread while the client sends, and the client pauses every
        // few datagrams: no socket buffer overflows (a loss the relay did not make).
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = [0u8; 2048];
            while let Ok(k) = server.recv(&mut buf) {
                got.push(buf[..k].to_vec());
            }
            got
        });
        let client = UdpSocket::bind("127.0.0.1:0").expect("a socket");
        for i in 0..n {
            client
                .send_to(
                    &[i.to_be_bytes().as_slice(), &[0xAB; 100]].concat(),
                    relay.addr(),
                )
                .expect("sent");
            if i % 10 == 9 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let got = reader.join().expect("the reader");
        let c = relay.counts();
        assert_eq!(c.injected_to_client, 0, "the server sent nothing back");
        (got, c.forwarded, c.dropped, c.injected_to_server)
    }

    #[test]
    fn a_plain_relay_forwards_everything_unchanged() {
        let (got, fwd, dropped, injected) = through(Faults::default(), 50);
        assert_eq!((fwd, dropped, injected), (50, 0, 0));
        assert_eq!(got.len(), 50);
        assert!(got.iter().all(|d| d.len() == 104 && d[4..] == [0xAB; 100]));
    }

    #[test]
    fn loss_drops_about_its_fraction_and_injections_are_counted() {
        let faults = Faults {
            loss: 0.3,
            duplicate: 0.1,
            ..Faults::default()
        };
        let (got, fwd, dropped, injected) = through(faults, 400);
        assert_eq!(fwd + dropped, 400);
        // Binomial(400, 0.3): mean 120, sd 9.2; 4 sd either side.
        assert!((83..=157).contains(&dropped), "{dropped}");
        assert!(injected > 10 && injected < 80, "{injected}");
        assert_eq!(got.len() as u64, fwd + injected);
    }
}
