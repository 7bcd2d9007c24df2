//! One emulated run: namespaces and devices made, the emulator and the flows' endpoints
//! started on their threads, the flows sampled every [`SAMPLE`], and everything removed again,
//! whatever way the run ends.

use crate::classify::server_port;
use crate::clock::Clock;
use crate::error::EmuError;
use crate::linux_tcp::{self, Client, TcpFlow};
use crate::output::{self, FlowSeries};
use crate::tcp_info::TcpInfo;
use crate::testbed::Testbed;
use crate::tunnel::{LEFT_ADDR, RIGHT_ADDR};
use polycc::units::{Duration, Time};
use polycc_sim::scenario::Traffic;
use polycc_sim::{Model, RunOutput};
use std::net::{SocketAddrV4, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};

/// How often the sampler reads each flow's `TCP_INFO` (the 10 ms).
pub const SAMPLE: Duration = Duration::from_millis(10);

/// Options of an emulated run.
pub struct Options<'a> {
    /// Polled every sample; returning true ends the run early (Ctrl-C in the caller), with
    /// everything cleaned up and an error returned.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            cancelled: &|| false,
        }
    }
}

/// Runs a validated scenario in the emulator (needs root: see [`netns::check_privileges`]).
pub fn run(model: &Model, options: &Options) -> Result<RunOutput, EmuError> {
    let kernel_ccas = linux_tcp::available_controllers()?;
    crate::support::check(model, &kernel_ccas)?;
    let bed = Testbed::start(model)?;
    let (left, right, clock) = (&bed.left, &bed.right, bed.clock);
    // Servers listen before any client starts, each in its receiving namespace.
    let mut listeners = Vec::new();
    for (i, f) in model.flows.iter().enumerate() {
        let (ns, addr) = if f.reverse {
            (left, LEFT_ADDR)
        } else {
            (right, RIGHT_ADDR)
        };
        let at = SocketAddrV4::new(addr, server_port(i));
        listeners.push(ns.run_in(|| {
            TcpListener::bind(at).map_err(|e| EmuError::system(format!("listen on {at}"), e))
        })?);
    }
    let flows: Vec<TcpFlow> = model.flows.iter().map(|_| TcpFlow::default()).collect();
    let stop = AtomicBool::new(false);
    let end = Time::ZERO + model.duration;
    let wall = std::time::Instant::now();
    let series = std::thread::scope(|s| {
        let mut endpoints = Vec::new();
        for (i, f) in model.flows.iter().enumerate() {
            let (client_ns, server_ns, server_addr) = if f.reverse {
                (right, left, LEFT_ADDR)
            } else {
                (left, right, RIGHT_ADDR)
            };
            let sized = match f.traffic {
                Traffic::Sized { bytes } => Some(bytes),
                _ => None,
            };
            let (flow, listener, stop) = (&flows[i], &listeners[i], &stop);
            endpoints.push(s.spawn(move || match server_ns.enter() {
                Ok(()) => linux_tcp::run_server(listener, sized, flow, &clock, stop),
                Err(e) => flow.fail(e.to_string()),
            }));
            let client = Client {
                cca: f.cca.name(),
                traffic: &f.traffic,
                server: SocketAddrV4::new(server_addr, server_port(i)),
                start: Time::ZERO + f.start,
                stop_at: f.stop.map_or(end, |t| (Time::ZERO + t).min(end)),
            };
            endpoints.push(s.spawn(move || match client_ns.enter() {
                Ok(()) => linux_tcp::run_client(&client, flow, &clock, stop),
                Err(e) => flow.fail(e.to_string()),
            }));
        }
        let series = sample(model, &flows, &clock, end, options);
        stop.store(true, Ordering::Relaxed);
        for e in endpoints {
            let _ = e.join();
        }
        series
    });
    let wall_s = wall.elapsed().as_secs_f64();
    if (options.cancelled)() {
        return Err(EmuError::Internal("cancelled".into()));
    }
    let finished = bed.finish()?;
    if let Some((i, e)) = flows.iter().enumerate().find_map(|(i, f)| {
        f.error
            .lock()
            .expect("threads joined")
            .clone()
            .map(|e| (i, e))
    }) {
        return Err(EmuError::system(format!("flow {}", model.flows[i].id), e));
    }
    output::build(
        model,
        &finished.net,
        &flows,
        series,
        finished.shared,
        end,
        wall_s,
    )
}

/// Reads every flow's `TCP_INFO` each [`SAMPLE`] until `end`, and closes a bin every
/// `model.bin`.
fn sample(
    model: &Model,
    flows: &[TcpFlow],
    clock: &Clock,
    end: Time,
    options: &Options,
) -> Vec<FlowSeries> {
    let mut series: Vec<FlowSeries> = flows.iter().map(|_| FlowSeries::default()).collect();
    let period = SAMPLE.min(model.bin);
    let mut next = Time::ZERO + period;
    let mut bin_end = Time::ZERO + model.bin;
    let mut received_before = vec![0u64; flows.len()];
    while next <= end {
        clock.sleep_until(next);
        if (options.cancelled)() {
            break;
        }
        for (f, s) in flows.iter().zip(series.iter_mut()) {
            let info = f
                .socket
                .lock()
                .expect("never poisoned")
                .as_ref()
                .and_then(|sock| TcpInfo::read(sock).ok());
            s.sample(info);
        }
        while next >= bin_end {
            for (i, (f, s)) in flows.iter().zip(series.iter_mut()).enumerate() {
                let received = f.received.load(Ordering::Relaxed);
                s.close_bin(received - received_before[i]);
                received_before[i] = received;
            }
            bin_end += model.bin;
        }
        next += period;
    }
    series
}
