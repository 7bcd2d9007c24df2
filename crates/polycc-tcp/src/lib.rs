//! polycc-tcp: polycc's controllers and policies on Linux kernel TCP, through an eBPF
//! congestion controller.
//!
//! # Kernel TCP through the eBPF shim
//!
//! The kernel side (`src/bpf/polycc.bpf.c`) is a `struct_ops` TCP congestion controller named
//! `polycc` that decides nothing: on every ACK it applies the window and pacing rate user space
//! last set for the socket ([`Decision`]) and reports what the ACK measured ([`Report`]: the
//! rate sample, RTT state, in flight, losses, bytes sent, ECN-CE count); when a socket lets go
//! of it (`release`) it reports that too. The [`Agent`] runs one polycc controller per socket on
//! those reports ([`translate`] turns them into polycc's events and documents which facts are
//! exact and which approximate) and writes each controller's window and pacing rate back;
//! [`AgentThread`] runs it with its [`Shim`] on a thread of its own:
//!
//! ```no_run
//! use polycc::CcSpec;
//! use polycc_tcp::{Agent, AgentThread};
//! # fn main() -> Result<(), polycc_tcp::AgentError> {
//! // polycc's BBR for every socket with TCP_CONGESTION = "polycc", until `agent` is dropped.
//! let agent = AgentThread::spawn(Agent::for_spec(&CcSpec::named("bbr"))?)?;
//! // ... connect sockets with TCP_CONGESTION = "polycc" ...
//! let stats = agent.stop()?; // unregisters the controller
//! println!("{} reports, {} decisions", stats.reports, stats.decisions_written);
//! # Ok(())
//! # }
//! ```
//!
//! One socket can be given its own controller by its cookie, asked for before it connects:
//!
//! ```no_run
//! # use polycc::CcSpec;
//! # use polycc_tcp::{Agent, AgentThread, Sockets};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
//! let cookie = polycc_tcp::socket_cookie(&socket)?;
//! let mut agent = Agent::for_spec(&CcSpec::named("cubic"))?;
//! agent.attach(Sockets::Cookie(cookie), &CcSpec::named("janus"))?;
//! let agent = AgentThread::spawn(agent)?;
//! socket.set_tcp_congestion(polycc_tcp::CONTROLLER.as_bytes())?;
//! // ... connect and send: Janus steers this socket, CUBIC any other that opts in ...
//! # drop(agent);
//! # Ok(())
//! # }
//! ```
//!
//! In the testbed, `stack = "tcp"` does this for a flow's controller (`polycc_emu::shim_agent`).
//!
//! **Safe fallback**: a socket without a decision of its own fresher than one second, and with
//! no default decision ([`FlowKey::ANY`]) set, holds at most TCP's initial window of 10 packets
//! and is not paced: before the agent's first decision, and when the agent died or stalls. The
//! agent refreshes live sockets' decisions every [`agent::REFRESH`].
//!
//! Sockets opt in with `TCP_CONGESTION = "polycc"`; the host's default controller never changes,
//! and the controller is unregistered when the [`Shim`] is dropped (also when its process ends,
//! since the kernel drops a struct_ops link with its last file descriptor).
//!
//! Building the BPF program needs the `bpf` feature and its toolchain (clang, bpftool, libelf,
//! zlib: `scripts/install-bpf-deps.sh`); without it the crate still builds ([`BUILT`] is false)
//! and [`Shim::register`] says what is missing. Registering needs root (`CAP_BPF` and
//! `CAP_NET_ADMIN`) and a kernel with BTF and BPF struct_ops.

pub mod agent;
mod agent_thread;
mod error;
mod report;
#[cfg(feature = "bpf")]
mod shim;
pub mod translate;
#[cfg(not(feature = "bpf"))]
mod unbuilt;

pub use agent::{Agent, AgentError, AgentStats, FlowView, Sockets, Views};
pub use agent_thread::AgentThread;
pub use error::ShimError;
pub use report::{Decision, FlowKey, Report, ReportKind, SocketId, TCP_CA_LOSS, TCP_CA_RECOVERY};
#[cfg(feature = "bpf")]
pub use shim::Shim;
#[cfg(not(feature = "bpf"))]
pub use unbuilt::Shim;

/// Whether this build has the BPF program (the `bpf` feature): without it nothing can be
/// registered, and callers can refuse early with [`ShimError::NotBuilt`]'s message.
pub const BUILT: bool = cfg!(feature = "bpf");

/// The controller's name, as `TCP_CONGESTION` and `tcp_available_congestion_control` know it.
pub const CONTROLLER: &str = "polycc";

/// `CLOCK_MONOTONIC` now, ns: the clock of `bpf_ktime_get_ns`, so report times and user-space
/// times compare.
pub fn monotonic_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// The socket's cookie (`SO_COOKIE`), by which [`Sockets::Cookie`] names it. Asking makes the
/// kernel give the socket one, so ask before its first ACK for the agent to know the socket by
/// it when it builds the socket's controller.
pub fn socket_cookie(sock: &impl std::os::fd::AsFd) -> std::io::Result<u64> {
    socket2::SockRef::from(sock).cookie()
}

/// Locks a mutex whose holders never panic while holding it (a poisoned one still holds valid
/// data: every critical section is a plain store).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
