//! Keeps idle CPUs out of deep idle states while a run lasts, through the kernel's PM QoS CPU
//! latency request (`/dev/cpu_dma_latency`, Documentation/admin-guide/pm/cpuidle.rst): writing
//! a 32-bit 0 and holding the file open asks for a 0 µs exit latency; closing it withdraws the
//! request. Idle CPUs then poll instead of halting, so a packet arriving at a TUN device wakes
//! the emulator at once. On this project's virtual machines (cpuidle driver `haltpoll`) it takes
//! a ping's excess RTT over a 40 ms path from about +0.24 ms to +0.05 ms (BENCHMARKS.md), at the
//! price of busy idle CPUs for the run's length.

use std::fs::{File, OpenOptions};
use std::io::Write;

const PM_QOS_DEVICE: &str = "/dev/cpu_dma_latency";
/// The exit latency asked for, µs.
const TARGET_US: i32 = 0;

/// The request, held while this lives; `None` where the device is missing or not writable
/// (the run then goes on with the host's idle states).
pub struct CpuLatencyGuard(#[allow(dead_code)] Option<File>);

impl CpuLatencyGuard {
    pub fn acquire() -> Self {
        let held = OpenOptions::new()
            .write(true)
            .open(PM_QOS_DEVICE)
            .and_then(|mut f| f.write_all(&TARGET_US.to_ne_bytes()).map(|()| f))
            .ok();
        CpuLatencyGuard(held)
    }

    /// Whether the request is in force.
    pub fn held(&self) -> bool {
        self.0.is_some()
    }
}
