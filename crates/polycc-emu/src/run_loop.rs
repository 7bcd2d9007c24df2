//! The emulator's thread: reads packets from both TUN devices, runs them through the
//! [`Network`] and writes them out of the other device when they are due.
//!
//! It sleeps in `ppoll(2)` until the next due packet or the next readable device, with the
//! thread's timer slack set to 1 ns (the default 50 µs would be added to every wake-up), and
//! runs at a real-time priority so that the endpoints' own work, or anything else on the host,
//! does not delay a packet's exit (a 2-core machine running a sender, a receiver and a
//! compiler otherwise adds milliseconds). The last 50 µs (`SPIN`) before a packet is due it spins
//! instead of sleeping, which takes the exits from ~60 µs late to a few µs.

use crate::classify::classify;
use crate::clock::Clock;
use crate::error::EmuError;
use crate::frame::{parse, Frame};
use crate::network::{LinkRow, Network};
use crate::tunnel::Tunnel;
use nix::poll::{PollFd, PollFlags};
use polycc::units::{Duration, Time};
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// SCHED_FIFO priority of the emulator thread: above every normal thread, low among real-time
/// ones. The kernel's real-time throttling (by default 95 % of each second at most) bounds
/// what it can take from the rest of the host; it sleeps whenever no packet is due anyway.
const RT_PRIORITY: i32 = 10;
/// How long before a packet is due the loop stops sleeping and spins (see `run`).
const SPIN: Duration = Duration::from_micros(50);
/// Longest sleep between checks of the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(5);
/// Largest packet a device can hand over (MTU 1500, with room to spare).
const BUF_BYTES: usize = 65536;

/// Link rows and counters the emulator shares with the run's sampler, per bin.
#[derive(Default)]
pub struct Shared {
    pub link_rows: Vec<(f64, Vec<LinkRow>)>,
    /// Per flow: wire bytes of data delivered in the bins taken so far.
    pub flow_wire: Vec<Vec<u64>>,
    /// Per flow: transport payload bytes of those packets, in the same bins.
    pub flow_payload: Vec<Vec<u64>>,
}

pub struct Emulator {
    pub net: Network,
    pub tunnel: Tunnel,
    pub clock: Clock,
    pub bin: Duration,
    pub stop: Arc<AtomicBool>,
    pub shared: Arc<Mutex<Shared>>,
    /// Packets a device refused to take (its queue full): counted, not retried.
    pub write_failures: u64,
}

impl Emulator {
    /// Runs until `stop` is set; returns the network for its totals, the count of failed
    /// writes and the CPU seconds the thread used.
    pub fn run(mut self) -> Result<(Network, u64, f64), EmuError> {
        let _ = nix::sys::prctl::set_timerslack(1);
        raise_priority();
        let reverse: Vec<bool> = (0..self.net.flows.len() as u32)
            .map(|f| self.net.is_reverse_flow(f))
            .collect();
        let mut buf = vec![0u8; BUF_BYTES];
        let mut next_bin = Time::ZERO + self.bin;
        loop {
            let now = self.clock.now();
            self.flush(now);
            if now >= next_bin {
                self.take_bin(next_bin);
                next_bin += self.bin;
            }
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let wake = self
                .net
                .next_event()
                .unwrap_or(Time::MAX)
                .min(next_bin)
                .min(now + MAX_SLEEP);
            // Sleep until shortly before the next due packet, then spin: a timer wake-up on a
            // virtual machine comes some 60 µs late, a spin within a few.
            let timeout = wake.0.saturating_sub(self.clock.now().0 + SPIN.0);
            // SAFETY: both fds belong to devices `self.tunnel` owns, open until it drops, which
            // is after these borrows end (the next statement).
            let (l, r) = unsafe {
                (
                    BorrowedFd::borrow_raw(self.tunnel.left.as_raw_fd()),
                    BorrowedFd::borrow_raw(self.tunnel.right.as_raw_fd()),
                )
            };
            let mut fds = [
                PollFd::new(l, PollFlags::POLLIN),
                PollFd::new(r, PollFlags::POLLIN),
            ];
            let ts =
                nix::sys::time::TimeSpec::from_duration(std::time::Duration::from_nanos(timeout));
            match nix::poll::ppoll(&mut fds, Some(ts), None) {
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(EmuError::system("ppoll on the TUN devices", e)),
            }
            for from_left in [true, false] {
                self.drain(from_left, &reverse, &mut buf)?;
            }
        }
        let failures = self.write_failures;
        Ok((self.net, failures, thread_cpu_seconds()))
    }

    /// Reads every packet waiting on one device into the network.
    fn drain(&mut self, from_left: bool, reverse: &[bool], buf: &mut [u8]) -> Result<(), EmuError> {
        loop {
            let dev = if from_left {
                &self.tunnel.left
            } else {
                &self.tunnel.right
            };
            let n = match dev.recv(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(EmuError::system("reading a TUN device", e)),
            };
            let bytes = buf[..n].to_vec();
            let header = parse(&bytes);
            let (flow, data) = classify(header, from_left, reverse);
            let now = self.clock.now();
            // Events due before this arrival go first, so the model's clock never runs back.
            self.flush(now);
            self.net.inject(
                now,
                Frame {
                    bytes,
                    flow,
                    data,
                    from_left,
                    route: 0,
                    hop: 0,
                    entered: now,
                    queue_ns: 0,
                    payload: header.map_or(0, |h| h.payload),
                },
            );
        }
    }

    /// Handles the events due by `now`, writing the packets that leave to their devices.
    fn flush(&mut self, now: Time) {
        let Emulator {
            net,
            tunnel,
            write_failures,
            ..
        } = self;
        net.advance(now, &mut |f: Frame| {
            let dev = if f.from_left {
                &tunnel.right
            } else {
                &tunnel.left
            };
            if dev.send(&f.bytes).is_err() {
                *write_failures += 1;
            }
        });
    }

    fn take_bin(&mut self, end: Time) {
        let start = end - self.bin;
        let rows = self.net.take_link_bins(end);
        let mut shared = self
            .shared
            .lock()
            .expect("the sampler never panics holding it");
        shared.link_rows.push((start.as_secs_f64(), rows));
        if shared.flow_wire.len() < self.net.flows.len() {
            shared.flow_wire.resize(self.net.flows.len(), Vec::new());
            shared.flow_payload.resize(self.net.flows.len(), Vec::new());
        }
        for (f, c) in self.net.flows.iter_mut().enumerate() {
            shared.flow_wire[f].push(std::mem::take(&mut c.bin_delivered_wire));
            shared.flow_payload[f].push(std::mem::take(&mut c.bin_delivered_payload));
        }
    }
}

/// Puts the calling thread under SCHED_FIFO at [`RT_PRIORITY`]; without the privilege it stays
/// a normal thread (timing then depends on the host's load).
fn raise_priority() {
    let param = libc::sched_param {
        sched_priority: RT_PRIORITY,
    };
    // SAFETY: pid 0 names the calling thread and `param` is a valid `sched_param` that outlives
    // the call; the call reads it and changes only this thread's scheduling policy.
    let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

/// CPU time (user + system) the calling thread has used.
fn thread_cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD).map_or(f64::NAN, |u| {
        let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        secs(u.user_time()) + secs(u.system_time())
    })
}
