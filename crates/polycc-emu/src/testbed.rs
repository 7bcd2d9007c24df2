//! The testbed without its traffic: two namespaces joined through the emulated network, with
//! the emulator running on its own thread from [`Testbed::start`] until [`Testbed::finish`] (or
//! drop). Runs put endpoints into it ([`crate::run()`]); tests put their own probes.

use crate::clock::Clock;
use crate::cpu_latency::CpuLatencyGuard;
use crate::error::EmuError;
use crate::netns::{self, Netns};
use crate::network::Network;
use crate::run_loop::{Emulator, Shared};
use crate::tunnel::Tunnel;
use polycc_sim::Model;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type EmulatorResult = Result<(Network, u64, f64), EmuError>;

/// What the emulator hands back when it stops.
pub struct Finished {
    pub net: Network,
    pub shared: Shared,
    /// Packets a device refused to take back (its queue full).
    pub write_failures: u64,
    /// CPU seconds the emulator's thread used (user + system).
    pub cpu_s: f64,
}

pub struct Testbed {
    /// Thread of the emulator; joined before the namespaces go (fields drop after `drop`).
    thread: Option<JoinHandle<EmulatorResult>>,
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    pub clock: Clock,
    pub left: Netns,
    pub right: Netns,
    /// Fast wake-ups for the run's length (see [`CpuLatencyGuard`]).
    pub cpu_latency: CpuLatencyGuard,
}

impl Testbed {
    /// Makes the namespaces and devices of `model`'s network and starts emulating it; the
    /// clock's zero is now. Removes namespaces a killed run left behind first.
    pub fn start(model: &Model) -> Result<Testbed, EmuError> {
        netns::check_privileges()?;
        netns::remove_stale();
        let left = Netns::create("left")?;
        let right = Netns::create("right")?;
        let tunnel = Tunnel::open(&left, &right)?;
        let cpu_latency = CpuLatencyGuard::acquire();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let clock = Clock::start();
        let emulator = Emulator {
            net: Network::new(model, model.scenario.seed),
            tunnel,
            clock,
            bin: model.bin,
            stop: stop.clone(),
            shared: shared.clone(),
            write_failures: 0,
        };
        let thread = std::thread::Builder::new()
            .name("polycc-emu".into())
            .spawn(move || emulator.run())
            .map_err(|e| EmuError::system("starting the emulator thread", e))?;
        Ok(Testbed {
            thread: Some(thread),
            stop,
            shared,
            clock,
            left,
            right,
            cpu_latency,
        })
    }

    /// Stops the emulator and returns what it measured.
    pub fn finish(mut self) -> Result<Finished, EmuError> {
        let (net, write_failures, cpu_s) = self.join()?;
        let shared = std::mem::take(&mut *self.shared.lock().expect("the emulator has ended"));
        Ok(Finished {
            net,
            shared,
            write_failures,
            cpu_s,
        })
    }

    fn join(&mut self) -> EmulatorResult {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self
            .thread
            .take()
            .ok_or_else(|| EmuError::Internal("the emulator was already stopped".into()))?;
        thread
            .join()
            .map_err(|_| EmuError::Internal("the emulator thread panicked".into()))?
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.join();
        }
    }
}
