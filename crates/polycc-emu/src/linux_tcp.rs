//! Endpoints of a flow carried by the kernel's TCP (`stack = "linux"`): a client in the flow's
//! sending namespace that writes the flow's traffic with the kernel controller the scenario
//! names, and a server on the other side that reads it and counts goodput as it arrives.
//!
//! Each runs on its own thread, joined to its namespace; they share a [`FlowShared`] with the
//! run's sampler, which reads the client's `TCP_INFO` every few milliseconds.

use crate::clock::Clock;
use crate::error::EmuError;
use crate::flow_state::{lock, Counters, FlowShared};
use crate::tcp_info::TcpInfo;
use nix::sys::socket::{self, sockopt, AddressFamily, SockFlag, SockType, SockaddrIn};
use polycc::units::{Duration, Time};
use polycc_sim::scenario::Traffic;
use std::ffi::OsString;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How often blocking socket calls return to look at the stop flag.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);
/// Bytes handed to the kernel per write (what iperf3 uses for TCP).
const WRITE_CHUNK: usize = 128 * 1024;

/// The client's socket, for the sampler's `TCP_INFO` reads while it is open.
pub type SocketSlot = Mutex<Option<TcpStream>>;

/// The client side of one flow.
pub struct Client<'a> {
    pub cca: &'a str,
    pub traffic: &'a Traffic,
    pub server: SocketAddrV4,
    pub start: Time,
    /// When it must stop sending (its `stop`, or the end of the run).
    pub stop_at: Time,
}

/// Runs the client (on a thread already in the sending namespace): waits for the start time,
/// connects, writes its traffic until it is done or `stop_at`, then closes.
pub fn run_client(
    c: &Client,
    flow: &FlowShared,
    socket: &SocketSlot,
    clock: &Clock,
    stop: &AtomicBool,
) {
    if !sleep_until(clock, c.start, stop) {
        return;
    }
    let stream = match connect(c.server, c.cca) {
        Ok(s) => s,
        Err(e) => return flow.fail(format!("connect to {}: {e}", c.server)),
    };
    flow.set_started(clock.now());
    if let Err(e) = stream.set_write_timeout(Some(POLL)) {
        return flow.fail(format!("socket timeout: {e}"));
    }
    *lock(socket) = stream.try_clone().ok();
    let mut stream = stream;
    let total = match c.traffic {
        Traffic::Sized { bytes } => Some(*bytes),
        _ => None,
    };
    let chunk = vec![0x5au8; WRITE_CHUNK];
    let mut written = 0u64;
    while clock.now() < c.stop_at && !stop.load(Ordering::Relaxed) {
        let want = total.map_or(WRITE_CHUNK as u64, |t| {
            (t - written).min(WRITE_CHUNK as u64)
        });
        if want == 0 {
            break;
        }
        match stream.write(&chunk[..want as usize]) {
            Ok(n) => written += n as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // The run ending closes the server's side, which can reset a write under way.
            Err(_) if stop.load(Ordering::Relaxed) || clock.now() >= c.stop_at => break,
            Err(e) => {
                flow.fail(format!("write: {e}"));
                break;
            }
        }
    }
    if total.is_some() {
        // Keep the connection (and its TCP_INFO) until the server has it all.
        let _ = stream.shutdown(Shutdown::Write);
        while !flow.is_completed() && clock.now() < c.stop_at && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(POLL / 4);
        }
    }
    let end = clock.now().min(c.stop_at.max(c.start));
    if let Ok(i) = TcpInfo::read(&stream) {
        *lock(&flow.counters) = Counters {
            packets_sent: i.segs_out as u64,
            retransmits: i.total_retrans as u64,
            lost_packets: i.total_retrans as u64,
            spurious_losses: i.dsack_dups as u64,
            probe_timeouts: i.total_rto as u64,
            persistent_congestions: 0,
        };
    }
    *lock(socket) = None;
    flow.set_ended(end);
    // Reset rather than linger: the run is over for this flow, whatever is still queued.
    let _ = socket::setsockopt(
        &stream,
        sockopt::Linger,
        &libc::linger {
            l_onoff: 1,
            l_linger: 0,
        },
    );
}

/// A TCP socket using the kernel controller `cca`, connected to `server`. The controller is set
/// before the handshake, so the connection never runs under the host's default.
fn connect(server: SocketAddrV4, cca: &str) -> Result<TcpStream, String> {
    let fd = socket::socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| format!("socket: {e}"))?;
    socket::setsockopt(&fd, sockopt::TcpCongestion, &OsString::from(cca))
        .map_err(|e| format!("TCP_CONGESTION {cca:?}: {e}"))?;
    socket::connect(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrIn::from(server),
    )
    .map_err(|e| e.to_string())?;
    Ok(TcpStream::from(fd))
}

/// Runs the server (on a thread already in the receiving namespace): accepts the flow's one
/// connection and reads until the client closes or the run stops.
pub fn run_server(
    listener: &TcpListener,
    sized: Option<u64>,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    if let Err(e) = listener.set_nonblocking(true) {
        return flow.fail(format!("listener: {e}"));
    }
    let mut stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(POLL / 4);
            }
            Err(e) => return flow.fail(format!("accept: {e}")),
        }
    };
    if stream.set_nonblocking(false).is_err() || stream.set_read_timeout(Some(POLL)).is_err() {
        return flow.fail("server socket options".into());
    }
    let mut buf = vec![0u8; WRITE_CHUNK];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let total = flow.add_received(n as u64);
                if sized.is_some_and(|s| total >= s) {
                    flow.set_completed(clock.now());
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => {
                flow.fail(format!("read: {e}"));
                break;
            }
        }
    }
    if let Ok(info) = TcpInfo::read(&stream) {
        flow.acks_sent
            .store(info.segs_out as u64, Ordering::Relaxed);
    }
}

/// Sleeps until `t`, waking to look at `stop`; false when stopped first.
pub(crate) fn sleep_until(clock: &Clock, t: Time, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = clock.now();
        if now >= t {
            return true;
        }
        clock.sleep_until(now + Duration((t - now).0.min(POLL.as_nanos() as u64)));
    }
}

/// The kernel controllers this host offers (`tcp_available_congestion_control`).
pub fn available_controllers() -> Result<Vec<String>, EmuError> {
    let path = "/proc/sys/net/ipv4/tcp_available_congestion_control";
    let text = std::fs::read_to_string(path).map_err(|e| EmuError::system(path, e))?;
    Ok(text.split_whitespace().map(str::to_string).collect())
}
