//! polycc-emu: an emulated testbed. The same scenario files as the simulator, run on real
//! network stacks between two Linux network namespaces joined by a user-space link emulator.
//!
//! ```text
//!  left namespace                 emulator thread                 right namespace
//!  (senders of forward flows)     (this process)                  (their receivers)
//!  kernel TCP --> pcc0 (TUN) ==>  classify by port, then per hop:  ==> pcc0 (TUN) --> kernel TCP
//!                                 loss, queue + service, delay line
//!             <==                 (the simulator's own models)     <==
//! ```
//!
//! The link models are the simulator's (`polycc_sim::queue`, `service`, `engine::pipe`), run on
//! wall-clock time ([`network`]); this crate adds namespaces ([`netns`]), the TUN pair
//! ([`tunnel`]), the real-time loop ([`run_loop`]), kernel-TCP endpoints ([`linux_tcp`]) and the
//! sampling of `TCP_INFO` ([`tcp_info`]). Everything a run creates is removed when it ends,
//! also on error; namespaces left by a killed run are removed by the next one.
//!
//! Needs root (or `CAP_NET_ADMIN` + `CAP_SYS_ADMIN`), `/dev/net/tun` and iproute2.

pub mod app;
pub mod classify;
pub mod clock;
pub mod cpu_latency;
pub mod error;
pub mod flow_state;
pub mod frame;
pub mod linux_tcp;
pub mod netns;
pub mod network;
pub mod output;
pub mod probe;
pub mod quic;
pub mod run;
pub mod run_loop;
pub mod support;
pub mod tcp_info;
pub mod testbed;
pub mod tunnel;
pub mod udp;

pub use error::EmuError;
pub use run::{run, Options};
