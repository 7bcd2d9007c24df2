//! Endpoints of a flow carried by the kernel's TCP (`stack = "linux"`, and `"tcp"`, whose
//! sockets use the shim's controller `polycc`): a client in the flow's sending namespace that
//! writes the flow's traffic with the kernel controller the scenario names, and a server on the other side that reads it and counts goodput as it arrives.
//!
//! Each runs on its own thread, joined to its namespace; they share a [`FlowShared`] with the
//! run's sampler, which reads the client's `TCP_INFO` every few milliseconds.

use crate::app::{asks_for_transfers, connection_per_transfer, on_period, Schedule};
use crate::clock::Clock;
use crate::error::EmuError;
use crate::flow_state::{lock, Counters, FlowShared};
use crate::tcp_info::TcpInfo;
use nix::sys::socket::{self, sockopt, AddressFamily, SockFlag, SockType, SockaddrIn};
use polycc::units::{Duration, Time};
use polycc::Intent;
use polycc_sim::scenario::linux_stack::ON_OFF_NOTSENT_LOWAT;
use polycc_sim::scenario::Traffic;
use polycc_tcp::{AgentThread, Sockets};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How often blocking socket calls return to look at the stop flag.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);
/// Bytes handed to the kernel per write (what iperf3 uses for TCP).
const WRITE_CHUNK: usize = 128 * 1024;

/// The client's socket, for the sampler's `TCP_INFO` reads while it is open.
pub type SocketSlot = Mutex<Option<TcpStream>>;

/// The byte a server writes back when a transfer is in full: the client's cue, as a
/// response's last byte is a browser's, that it may start the next one.
const TRANSFER_DONE: u8 = 0xd0;

/// The client side of one flow.
pub struct Client<'a> {
    pub cca: &'a str,
    pub traffic: &'a Traffic,
    pub server: SocketAddrV4,
    pub start: Time,
    /// When it must stop sending (its `stop`, or the end of the run).
    pub stop_at: Time,
    /// When the application asks for transfers (sized, web and DASH flows).
    pub schedule: Schedule,
    /// Where a DASH player's intents go (each chunk's bitrate, as in the simulator): the shim's
    /// agent and the flow's server port, for a `stack = "tcp"` flow whose scenario states no
    /// intent.
    pub player_intents: Option<(&'a AgentThread, u16)>,
}

/// Runs the client (on a thread already in the sending namespace) from its start time until its
/// traffic is done or `stop_at`.
///
/// Bulk writes without end. Sized and web flows write one transfer at a time, as the simulator
/// serves them: a transfer requested while another is under way waits until the server
/// has signalled that one complete; a web flow without a persistent connection opens a new
/// one, with its own handshake and slow start, for every transfer.
pub fn run_client(
    mut c: Client,
    flow: &FlowShared,
    socket: &SocketSlot,
    clock: &Clock,
    stop: &AtomicBool,
) {
    if !sleep_until(clock, c.start, stop) {
        return;
    }
    let mut counters = Counters::default();
    let result = if asks_for_transfers(c.traffic) {
        transfers(c, flow, socket, clock, stop, &mut counters)
    } else {
        bulk(&mut c, flow, socket, clock, stop, &mut counters)
    };
    if let Err(e) = result {
        flow.fail(e);
    }
    *lock(&flow.counters) = counters;
}

/// The run is over for this flow.
fn done(c: &Client, clock: &Clock, stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed) || clock.now() >= c.stop_at
}

/// Bulk, or an on/off source: writes without end, but for an on/off source only in its on
/// periods (what the socket holds still goes out in an off period, as a paused application's
/// data would).
fn bulk(
    c: &mut Client,
    flow: &FlowShared,
    socket: &SocketSlot,
    clock: &Clock,
    stop: &AtomicBool,
    counters: &mut Counters,
) -> Result<(), String> {
    let mut stream = open(c, flow, socket, clock)?;
    let chunk = vec![0x5au8; WRITE_CHUNK];
    let on_off = matches!(c.traffic, Traffic::OnOff { .. });
    if on_off {
        socket2::SockRef::from(&stream)
            .set_tcp_notsent_lowat(ON_OFF_NOTSENT_LOWAT as u32)
            .map_err(|e| format!("TCP_NOTSENT_LOWAT: {e}"))?;
    }
    let mut periods = 0u64;
    let mut result = Ok(());
    while !done(c, clock, stop) {
        while c.schedule.pop_due(clock.now()).is_some() {
            periods += 1;
        }
        if on_off && !on_period(periods) {
            let next = c.schedule.next().map_or(c.stop_at, |t| t.min(c.stop_at));
            sleep_until(clock, next, stop);
            continue;
        }
        if let Err(e) = write_some(&mut stream, &chunk) {
            // The run ending closes the server's side, which can reset a write under way.
            if !done(c, clock, stop) {
                result = Err(e);
            }
            break;
        }
    }
    flow.set_ended(clock.now().min(c.stop_at));
    close(stream, socket, counters, true);
    result
}

fn transfers(
    mut c: Client,
    flow: &FlowShared,
    socket: &SocketSlot,
    clock: &Clock,
    stop: &AtomicBool,
    counters: &mut Counters,
) -> Result<(), String> {
    let per_transfer = connection_per_transfer(c.traffic);
    let sized = matches!(c.traffic, Traffic::Sized { .. });
    let chunk = vec![0x5au8; WRITE_CHUNK];
    let mut stream: Option<TcpStream> = None;
    // Sizes of the transfers requested and not begun.
    let mut queued = VecDeque::new();
    // Bytes of the current transfer still to write; Some(0) once written, until the server's
    // cue.
    let mut left: Option<u64> = None;
    let mut posted: Option<Intent> = None;
    let mut result = Ok(());
    while !done(&c, clock, stop) {
        while let Some(t) = c.schedule.pop_due(clock.now()) {
            let (bytes, intent) = c.schedule.transfer(t);
            flow.request(t, bytes);
            queued.push_back(bytes);
            if let (Some((agent, port)), Some(intent)) = (c.player_intents, intent) {
                if posted != Some(intent) {
                    // The agent keeps it for the flow's sockets to come; one that died is
                    // reported when the run stops it.
                    let _ = agent.set_intent(Sockets::ToPort(port), intent);
                    posted = Some(intent);
                }
            }
        }
        if left.is_none() {
            if let Some(bytes) = queued.pop_front() {
                if stream.is_none() {
                    stream = Some(open(&c, flow, socket, clock)?);
                }
                left = Some(bytes);
            }
        }
        let (Some(s), Some(n)) = (stream.as_mut(), left) else {
            let next = c.schedule.next().map_or(c.stop_at, |t| t.min(c.stop_at));
            sleep_until(clock, next, stop);
            continue;
        };
        let step = if n > 0 {
            write_some(s, &chunk[..n.min(WRITE_CHUNK as u64) as usize]).map(|w| {
                left = Some(n - w as u64);
            })
        } else {
            await_cue(s).map(|cued| {
                if cued {
                    left = None;
                    // The server recorded the time before it cued.
                    if let Some(at) = flow.last_completed() {
                        c.schedule.completed(at);
                    }
                }
            })
        };
        if left.is_none() && per_transfer {
            if let Some(s) = stream.take() {
                close(s, socket, counters, false);
            }
        }
        if let Err(e) = step {
            if !done(&c, clock, stop) {
                result = Err(e);
            }
            break;
        }
        if sized && left.is_none() {
            break; // its one transfer is in full
        }
    }
    flow.set_ended(clock.now().min(c.stop_at));
    *lock(&flow.streaming) = c.schedule.streaming(c.stop_at);
    if let Some(s) = stream {
        close(s, socket, counters, true);
    }
    result
}

/// Connects to the flow's server and publishes the socket to the sampler.
fn open(
    c: &Client,
    flow: &FlowShared,
    socket: &SocketSlot,
    clock: &Clock,
) -> Result<TcpStream, String> {
    let stream = connect(c.server, c.cca).map_err(|e| format!("connect to {}: {e}", c.server))?;
    lock(&flow.started).get_or_insert(clock.now());
    stream
        .set_write_timeout(Some(POLL))
        .and_then(|_| stream.set_read_timeout(Some(POLL)))
        .map_err(|e| format!("socket timeout: {e}"))?;
    *lock(socket) = stream.try_clone().ok();
    Ok(stream)
}

/// Ends a connection: its counters added to the flow's, the sampler's copy dropped. At the end
/// of the run it is reset rather than left to linger with whatever is still queued.
fn close(stream: TcpStream, socket: &SocketSlot, counters: &mut Counters, reset: bool) {
    if let Ok(i) = TcpInfo::read(&stream) {
        counters.add(&Counters {
            packets_sent: i.segs_out as u64,
            retransmits: i.total_retrans as u64,
            lost_packets: i.total_retrans as u64,
            spurious_losses: i.dsack_dups as u64,
            probe_timeouts: i.total_rto as u64,
            persistent_congestions: 0,
        });
    }
    *lock(socket) = None;
    if reset {
        let _ = socket::setsockopt(
            &stream,
            sockopt::Linger,
            &libc::linger {
                l_onoff: 1,
                l_linger: 0,
            },
        );
    }
}

/// Writes what the socket takes within [`POLL`] (0 bytes when its buffer stays full).
fn write_some(s: &mut TcpStream, data: &[u8]) -> Result<usize, String> {
    match s.write(data) {
        Ok(n) => Ok(n),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(0),
        Err(e) if e.kind() == ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(format!("write: {e}")),
    }
}

/// Waits up to [`POLL`] for the server's cue that the transfer is in full.
fn await_cue(s: &mut TcpStream) -> Result<bool, String> {
    let mut b = [0u8; 1];
    match s.read(&mut b) {
        Ok(1) if b[0] == TRANSFER_DONE => Ok(true),
        Ok(0) => Err("the server closed the connection before the transfer was in".into()),
        Ok(_) => Err(format!("unexpected byte {:#x} from the server", b[0])),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(false),
        Err(e) if e.kind() == ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(format!("read: {e}")),
    }
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

/// Runs the server (on a thread already in the receiving namespace) until the run stops: accepts
/// the flow's connections one after another (one, unless a web flow opens one per transfer),
/// reads what arrives, and, for sized, web and DASH flows, records each transfer complete when
/// its last byte is read and cues the client.
pub fn run_server(
    listener: &TcpListener,
    cues: bool,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    if let Err(e) = listener.set_nonblocking(true) {
        return flow.fail(format!("listener: {e}"));
    }
    let mut buf = vec![0u8; WRITE_CHUNK];
    while let Some(mut stream) = accept(listener, flow, stop) {
        let options = stream
            .set_nonblocking(false)
            .and_then(|_| stream.set_read_timeout(Some(POLL)))
            .and_then(|_| stream.set_write_timeout(Some(POLL)));
        if let Err(e) = options {
            return flow.fail(format!("server socket options: {e}"));
        }
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let total = flow.add_received(n as u64);
                    if !cues {
                        continue;
                    }
                    // One cue per transfer now in full (at most one: the client sends the next
                    // only after the cue).
                    for _ in 0..flow.complete_bytes(total, clock.now()) {
                        if stream.write_all(&[TRANSFER_DONE]).is_err() {
                            break;
                        }
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
                .fetch_add(info.segs_out as u64, Ordering::Relaxed);
        }
    }
}

/// The flow's next connection; None once the run stops.
fn accept(listener: &TcpListener, flow: &FlowShared, stop: &AtomicBool) -> Option<TcpStream> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let timeout = PollTimeout::try_from(POLL).unwrap_or(PollTimeout::MAX);
    while !stop.load(Ordering::Relaxed) {
        let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                flow.fail(format!("poll: {e}"));
                return None;
            }
        }
        match listener.accept() {
            Ok((s, _)) => return Some(s),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => {
                flow.fail(format!("accept: {e}"));
                return None;
            }
        }
    }
    None
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
