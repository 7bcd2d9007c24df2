//! polycc-tcp: polycc's controllers and policies on Linux kernel TCP, through an eBPF
//! congestion controller.
//!
//! The kernel side (`src/bpf/polycc.bpf.c`) is a `struct_ops` TCP congestion controller named
//! `polycc` that decides nothing: on every ACK it reports the ACK's rate sample to user space
//! ([`Report`]) and applies the window and pacing rate user space last set for the socket
//! ([`Decision`]). Sockets opt in with `TCP_CONGESTION = "polycc"`; the host's default
//! controller never changes, and the controller is unregistered when the [`Shim`] is dropped
//! (also when its process ends, since the kernel drops a struct_ops link with its last file
//! descriptor).
//!
//! Building the BPF program needs the `bpf` feature and its toolchain (clang, bpftool, libelf,
//! zlib: `scripts/install-bpf-deps.sh`); without it the crate still builds and
//! [`Shim::register`] says what is missing. Registering needs root (`CAP_BPF` and
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

pub use agent::{Agent, AgentError, AgentStats, FlowView, Views};
pub use agent_thread::AgentThread;
pub use error::ShimError;
pub use report::{Decision, FlowKey, Report, ReportKind, TCP_CA_LOSS};
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

/// Locks a mutex whose holders never panic while holding it (a poisoned one still holds valid
/// data: every critical section is a plain store).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
