//! polycc-emu: an emulated testbed. The same scenario files as the simulator, run on real
//! network stacks between two Linux network namespaces joined by a user-space link emulator.
//!
//! ```text
//!  left namespace                 emulator thread                 right namespace
//!  (senders of forward flows)     (this process)                  (their receivers)
//!  kernel TCP --> pcc0 (TUN) ==>  classify by port, then per hop:  ==> pcc0 (TUN) --> kernel TCP
//!  QUIC, UDP                      loss, queue + service, delay line         QUIC, UDP
//!             <==                 (the simulator's own models)     <==
//! ```
//!
//! The link models are the simulator's (`polycc_sim::queue`, `service`, `engine::pipe`), run on
//! wall-clock time ([`network`]); this crate adds namespaces ([`netns`]), the TUN pair
//! ([`tunnel`]), the real-time loop ([`run_loop`]) and each flow's endpoints, by its `stack`:
//!
//! - `"linux"`: the kernel's TCP with a kernel controller ([`linux_tcp`], `TCP_INFO` sampled by
//!   [`tcp_info`]);
//! - `"quic"`: real QUIC, s2n-quic with the flow's polycc controller through `polycc-quic`
//!   ([`quic`]);
//! - `"udp"`: polycc's own transport model over UDP, the simulator's sender
//!   (`polycc-transport`) on a real link ([`udp`]);
//! - `"tcp"`: the kernel's TCP steered by the flow's polycc controller through polycc-tcp's eBPF
//!   shim and its agent ([`shim_agent`]);
//! - `"external"`: an outside program, the flow's `sender` and `receiver` commands
//!   ([`external`]), measured by what the emulator sees of its packets.
//!
//! Everything a run creates is removed when it ends, also on error; namespaces left by a killed
//! run are removed by the next one.
//!
//! Needs root (or `CAP_NET_ADMIN` + `CAP_SYS_ADMIN`), `/dev/net/tun` and iproute2.

pub mod app;
pub mod classify;
pub mod clock;
pub mod cpu_latency;
pub mod error;
pub mod external;
pub mod flow_state;
pub mod frame;
pub mod linux_tcp;
pub mod netns;
pub mod network;
pub mod output;
pub mod probe;
pub mod quic;
pub mod run;
pub mod run_lock;
pub mod run_loop;
pub mod shim_agent;
pub mod support;
pub mod tcp_info;
pub mod testbed;
pub mod tunnel;
pub mod udp;

pub use error::EmuError;
pub use run::{run, Options};
