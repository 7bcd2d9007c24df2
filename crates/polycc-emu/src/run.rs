//! One emulated run: the testbed made, each flow's server and client started on threads in
//! their namespaces, the flows sampled every [`SAMPLE`], and everything removed again, whatever
//! way the run ends. What carries a flow, by its `stack`:
//!
//! - `"linux"`: the kernel's TCP with the kernel's controller ([`crate::linux_tcp`]);
//! - `"quic"`: real QUIC, s2n-quic with the flow's polycc controller through `polycc-quic`
//!   ([`crate::quic`]);
//! - `"udp"`: polycc's own transport model over UDP, the simulator's sender (`polycc-transport`)
//!   on a real link ([`crate::udp`]);
//! - `"tcp"`: the kernel's TCP steered by the flow's polycc controller through the eBPF shim
//!   ([`crate::shim_agent`]);
//! - `"external"`: an outside program, the flow's `receiver` and `sender` commands
//!   ([`crate::external`]);
//! - CBR and Poisson sources, on any stack: unresponsive UDP datagrams.

use crate::app::{asks_for_transfers, connection_per_transfer, Schedule};
use crate::classify::server_port;
use crate::clock::Clock;
use crate::error::EmuError;
use crate::flow_state::{lock, FlowShared, Sample};
use crate::linux_tcp::{self, Client, SocketSlot};
use crate::netns::Netns;
use crate::output::{self, FlowSeries};
use crate::quic::client::QuicClient;
use crate::tcp_info::{BbrInfo, TcpInfo};
use crate::testbed::Testbed;
use crate::tunnel::{LEFT_ADDR, RIGHT_ADDR};
use crate::udp::client::{segments_of, ClientConfig, NewController, WIRE_BYTES};
use crate::udp::server::ServerConfig;
use polycc::units::{Duration, Time};
use polycc::Registry;
use polycc_sim::engine::connection::new_controller;
use polycc_sim::engine::DEFAULT_RWND;
use polycc_sim::scenario::spec::Stack;
use polycc_sim::scenario::{FlowModel, Traffic};
use polycc_sim::{Model, RunOutput};
use std::net::{SocketAddrV4, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};

/// How often the sampler reads each flow's sender state (the 10 ms).
pub const SAMPLE: Duration = Duration::from_millis(10);

/// Options of an emulated run.
pub struct Options<'a> {
    /// Polled every sample; returning true ends the run early (Ctrl-C in the caller), with
    /// everything cleaned up and an error returned.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Where outside programs (`stack = "external"`) write their stdout and stderr; None: a
    /// fresh directory under the system's temporary one
    /// ([`crate::external::default_log_dir`]).
    pub log_dir: Option<&'a std::path::Path>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            cancelled: &|| false,
            log_dir: None,
        }
    }
}

/// A flow's server socket, made before any client starts.
enum Listener {
    Tcp(TcpListener),
    Udp(UdpSocket),
    /// An outside program binds its own.
    Program,
}

/// What carries a flow's packets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Carrier {
    /// The kernel's TCP (`stack = "linux"`, and `"tcp"` with the controller `polycc`).
    KernelTcp,
    /// s2n-quic with the flow's polycc controller (`stack = "quic"`).
    Quic,
    /// polycc's sender over UDP (`stack = "udp"`).
    PolyccUdp,
    /// A CBR or Poisson source over UDP, on either stack.
    Unresponsive,
    /// An outside program (`stack = "external"`).
    Program,
}

fn carrier(f: &FlowModel) -> Carrier {
    match f.stack {
        _ if f.traffic.is_unresponsive() => Carrier::Unresponsive,
        Stack::Linux | Stack::Tcp => Carrier::KernelTcp,
        Stack::Quic => Carrier::Quic,
        Stack::Udp => Carrier::PolyccUdp,
        Stack::External => Carrier::Program,
    }
}

/// Runs a validated scenario in the emulator (needs root: see
/// [`crate::netns::check_privileges`]).
pub fn run(model: &Model, registry: &Registry, options: &Options) -> Result<RunOutput, EmuError> {
    let kernel_ccas = linux_tcp::available_controllers()?;
    crate::support::check(model, &kernel_ccas)?;
    crate::netns::check_privileges()?;
    // Before anything is made; held to the end of the run (dropped last: declared first).
    let _one_at_a_time = crate::run_lock::RunLock::acquire(options.cancelled)?;
    // Registered before anything else is made, so that a refusal leaves nothing behind; dropped
    // (unregistered) on every way out of this function.
    let agent = crate::shim_agent::start(model, registry)?;
    let views = agent.as_ref().map(|a| a.views());
    let bed = Testbed::start(model)?;
    let clock = bed.clock;
    let listeners = model
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| listen(&bed, i, f))
        .collect::<Result<Vec<_>, _>>()?;
    let flows: Vec<FlowShared> = model.flows.iter().map(|_| FlowShared::default()).collect();
    let sockets: Vec<SocketSlot> = model.flows.iter().map(|_| SocketSlot::default()).collect();
    // The flows' controllers, built as the simulator builds them (seeded per connection).
    let new_ccs: Vec<Box<NewController>> = model
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| -> Box<NewController> {
            Box::new(move |connection, now, intent| {
                new_controller(model, registry, f, i, connection, now, intent)
            })
        })
        .collect();
    // Each QUIC flow's server certificate, made now: signed by itself, trusted by its client.
    let certificates = model
        .flows
        .iter()
        .map(|f| {
            (carrier(f) == Carrier::Quic)
                .then(polycc_quic::endpoints::self_signed_tls)
                .transpose()
                .map_err(|e| EmuError::Internal(format!("flow {}: {e:#}", f.id)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut certificates = certificates.into_iter();
    let log_dir = external_log_dir(model, options)?;
    let stop = AtomicBool::new(false);
    let end = Time::ZERO + model.duration;
    let wall = std::time::Instant::now();
    let series = std::thread::scope(|s| -> Result<Vec<FlowSeries>, EmuError> {
        let mut endpoints = Vec::new();
        for (i, f) in model.flows.iter().enumerate() {
            let (client_ns, server_ns, server_addr) = if f.reverse {
                (&bed.right, &bed.left, LEFT_ADDR)
            } else {
                (&bed.left, &bed.right, RIGHT_ADDR)
            };
            let server = SocketAddrV4::new(server_addr, server_port(i));
            let (flow, slot, stop) = (&flows[i], &sockets[i], &stop);
            let start = Time::ZERO + f.start;
            let stop_at = f.stop.map_or(end, |t| (Time::ZERO + t).min(end));
            let client_addr = if f.reverse { RIGHT_ADDR } else { LEFT_ADDR };
            let schedule = Schedule::new(
                &f.traffic,
                start,
                model.scenario.seed,
                i,
                WIRE_BYTES,
                model.return_delay(f),
            );
            let certificate = certificates.next().flatten();
            match (&listeners[i], carrier(f)) {
                (Listener::Program, _) => {
                    let (Some(commands), Some(log_dir)) = (&f.external, &log_dir) else {
                        return Err(EmuError::Internal(
                            "an external flow without commands".into(),
                        ));
                    };
                    let x = crate::external::ExternalFlow {
                        id: &f.id,
                        commands,
                        values: polycc_sim::scenario::external::Values {
                            receiver_ip: server_addr.to_string(),
                            sender_ip: client_addr.to_string(),
                            port: server.port(),
                            duration_s: (stop_at - start).as_secs_f64(),
                            flow: f.id.clone(),
                        },
                        sender_ns: client_ns,
                        receiver_ns: server_ns,
                        start,
                        stop_at,
                        log_dir,
                    };
                    endpoints.push(s.spawn(move || {
                        crate::external::run_flow(x, flow, &clock, stop);
                    }));
                }
                (Listener::Tcp(listener), _) => {
                    let cues = asks_for_transfers(&f.traffic);
                    endpoints.push(in_ns(s, server_ns, flow, move || {
                        linux_tcp::run_server(listener, cues, flow, &clock, stop)
                    }));
                    let client = Client {
                        cca: if f.stack == Stack::Tcp {
                            polycc_tcp::CONTROLLER
                        } else {
                            f.cca.name()
                        },
                        traffic: &f.traffic,
                        server,
                        start,
                        stop_at,
                        schedule,
                        player_intents: agent
                            .as_ref()
                            .filter(|_| f.stack == Stack::Tcp && f.states_no_intent())
                            .map(|a| (a, server.port())),
                    };
                    endpoints.push(in_ns(s, client_ns, flow, move || {
                        linux_tcp::run_client(client, flow, slot, &clock, stop)
                    }));
                }
                (Listener::Udp(sock), Carrier::Unresponsive) => {
                    let cfg = ServerConfig {
                        unresponsive_return: Some(model.return_delay(f)),
                        ack_every: f.ack_every,
                        max_ack_delay: f.max_ack_delay,
                        report_arrivals: false,
                        transfer_segments: None,
                    };
                    endpoints.push(in_ns(s, server_ns, flow, move || {
                        crate::udp::server::run_server(sock, &cfg, flow, &clock, stop)
                    }));
                    endpoints.push(in_ns(s, client_ns, flow, move || {
                        if let Some(sock) = udp_socket(client_addr, flow) {
                            crate::udp::unresponsive::run_source(
                                schedule, server, &sock, stop_at, flow, &clock, stop,
                            )
                        }
                    }));
                }
                (Listener::Udp(sock), Carrier::Quic) => {
                    let (tls, cert_pem) = certificate
                        .ok_or_else(|| EmuError::Internal("no QUIC certificate".into()))?;
                    let sock = sock
                        .try_clone()
                        .map_err(|e| EmuError::system(format!("flow {} socket", f.id), e))?;
                    // The receiver reports arrivals when the controller takes them (as for UDP).
                    let probe = new_ccs[i](0, Time::ZERO, None).map_err(EmuError::Internal)?;
                    let report_arrivals = probe.wants_feedback();
                    let video = match &f.traffic {
                        Traffic::Video(v) => {
                            *lock(&flow.video) =
                                Some(polycc_sim::engine::video::VideoSource::new(*v));
                            Some((*v, video_seed(model.scenario.seed, i)))
                        }
                        _ => None,
                    };
                    endpoints.push(in_ns(s, server_ns, flow, move || {
                        crate::quic::server::run_server(
                            sock,
                            tls,
                            crate::quic::server::Receives {
                                transfers: asks_for_transfers(&f.traffic),
                                report_arrivals,
                                video: video.is_some(),
                            },
                            flow,
                            &clock,
                            stop,
                        )
                    }));
                    let client = QuicClient {
                        new_cc: &new_ccs[i],
                        cca: f.cca.name(),
                        server,
                        local: client_addr,
                        cert_pem,
                        start,
                        stop_at,
                        transfers: asks_for_transfers(&f.traffic),
                        player_intents: f.states_no_intent(),
                        per_transfer: connection_per_transfer(&f.traffic),
                        sized: matches!(f.traffic, Traffic::Sized { .. }),
                        on_off: matches!(f.traffic, Traffic::OnOff { .. }),
                        intents: intents_of(f),
                        initial_intent: f.intent,
                        video,
                    };
                    endpoints.push(in_ns(s, client_ns, flow, move || {
                        crate::quic::client::run_client(client, schedule, flow, &clock, stop)
                    }));
                }
                (Listener::Udp(sock), _) => {
                    let new_cc = &new_ccs[i];
                    // The flow's intent is set when it starts (`ClientConfig::initial_intent`).
                    let cc = new_cc(0, Time::ZERO, None).map_err(EmuError::Internal)?;
                    let transfer = f.traffic.transfer_bytes();
                    let cfg = ServerConfig {
                        unresponsive_return: None,
                        ack_every: f.ack_every,
                        max_ack_delay: f.max_ack_delay,
                        report_arrivals: cc.wants_feedback(),
                        transfer_segments: transfer.map(segments_of),
                    };
                    endpoints.push(in_ns(s, server_ns, flow, move || {
                        crate::udp::server::run_server(sock, &cfg, flow, &clock, stop)
                    }));
                    let client = ClientConfig {
                        cc,
                        new_cc,
                        server,
                        start,
                        stop_at,
                        schedule,
                        on_off: matches!(f.traffic, Traffic::OnOff { .. }),
                        transfer_bytes: transfer,
                        per_transfer: connection_per_transfer(&f.traffic),
                        max_ack_delay: f.max_ack_delay,
                        pacing: f.pacing,
                        rwnd: f.rwnd.unwrap_or(DEFAULT_RWND),
                        intents: intents_of(f),
                        initial_intent: f.intent,
                    };
                    endpoints.push(in_ns(s, client_ns, flow, move || {
                        if let Some(sock) = udp_socket(client_addr, flow) {
                            crate::udp::client::run_client(client, &sock, flow, &clock, stop)
                        }
                    }));
                }
            }
        }
        if let Some(agent) = &agent {
            let stop = &stop;
            s.spawn(move || crate::shim_agent::post_intents(agent, model, &clock, stop));
        }
        let series = sample(
            model,
            &flows,
            &sockets,
            views.as_ref(),
            &clock,
            end,
            options,
        );
        stop.store(true, Ordering::Relaxed);
        for e in endpoints {
            let _ = e.join();
        }
        Ok(series)
    });
    let wall_s = wall.elapsed().as_secs_f64();
    let agent_result = agent.map(|a| a.stop()).transpose();
    let finished = bed.finish()?;
    agent_result.map_err(|e| EmuError::Internal(format!("stack = \"tcp\": {e}")))?;
    let series = series?;
    if (options.cancelled)() {
        return Err(EmuError::Internal("cancelled".into()));
    }
    if let Some((i, e)) = flows
        .iter()
        .enumerate()
        .find_map(|(i, f)| lock(&f.error).clone().map(|e| (i, e)))
    {
        let fm = &model.flows[i];
        if fm.stack == Stack::External {
            return Err(EmuError::Program(format!(
                "{}: flows ({}): {e}",
                model.scenario.name, fm.id
            )));
        }
        return Err(EmuError::system(format!("flow {}", fm.id), e));
    }
    output::build(model, &finished, &flows, series, end, wall_s)
}

/// The directory outside programs write their output to, made now; None without an external
/// flow.
fn external_log_dir(
    model: &Model,
    options: &Options,
) -> Result<Option<std::path::PathBuf>, EmuError> {
    if !model.flows.iter().any(|f| f.stack == Stack::External) {
        return Ok(None);
    }
    let dir = options
        .log_dir
        .map_or_else(crate::external::default_log_dir, |d| d.to_path_buf());
    std::fs::create_dir_all(&dir)
        .map_err(|e| EmuError::system(format!("creating {}", dir.display()), e))?;
    Ok(Some(dir))
}

/// A flow's later intents `(from, intent)` on the run's clock, in time order.
fn intents_of(f: &FlowModel) -> Vec<(Time, polycc::Intent)> {
    f.intent_schedule
        .iter()
        .map(|(t, i)| (Time::ZERO + *t, *i))
        .collect()
}

/// A client's UDP socket on `addr` (in its namespace); None, with the flow failed, if it cannot
/// be made.
fn udp_socket(addr: std::net::Ipv4Addr, flow: &FlowShared) -> Option<UdpSocket> {
    UdpSocket::bind(SocketAddrV4::new(addr, 0))
        .map_err(|e| flow.fail(format!("UDP client socket: {e}")))
        .ok()
}

/// Flow `i`'s server socket, bound in its receiving namespace.
fn listen(bed: &Testbed, i: usize, f: &FlowModel) -> Result<Listener, EmuError> {
    let (ns, addr) = if f.reverse {
        (&bed.left, LEFT_ADDR)
    } else {
        (&bed.right, RIGHT_ADDR)
    };
    let at = SocketAddrV4::new(addr, server_port(i));
    let failed = |e: std::io::Error| EmuError::system(format!("listen on {at}"), e);
    ns.run_in(|| match carrier(f) {
        Carrier::Program => Ok(Listener::Program),
        Carrier::KernelTcp => TcpListener::bind(at).map(Listener::Tcp).map_err(failed),
        Carrier::Quic | Carrier::PolyccUdp | Carrier::Unresponsive => {
            UdpSocket::bind(at).map(Listener::Udp).map_err(failed)
        }
    })
}

/// Spawns `f` on a scoped thread inside `ns`; a failure to enter it is the flow's error.
fn in_ns<'scope, 'env>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    ns: &'env Netns,
    flow: &'env FlowShared,
    f: impl FnOnce() + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, ()> {
    s.spawn(move || match ns.enter() {
        Ok(()) => f(),
        Err(e) => flow.fail(e.to_string()),
    })
}

/// Reads every flow's sender state each [`SAMPLE`] (or each bin, if shorter) until `end`, and
/// closes a bin every `model.bin`.
fn sample(
    model: &Model,
    flows: &[FlowShared],
    sockets: &[SocketSlot],
    views: Option<&polycc_tcp::Views>,
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
        // A failed flow fails the run: end it now rather than at its end (an outside
        // program that could not start would otherwise hold it for its whole length).
        if flows.iter().any(|f| lock(&f.error).is_some()) {
            break;
        }
        for (((f, slot), s), fm) in flows
            .iter()
            .zip(sockets)
            .zip(series.iter_mut())
            .zip(&model.flows)
        {
            // Kernel TCP: read its TCP_INFO now; polycc's sender publishes its own.
            let (tcp, bbr, view) = match lock(slot).as_ref() {
                Some(sock) => (
                    TcpInfo::read(sock).ok(),
                    BbrInfo::read(sock),
                    views
                        .filter(|_| fm.stack == Stack::Tcp)
                        .and_then(|v| crate::shim_agent::view_of(v, sock)),
                ),
                None => (None, None, None),
            };
            if let Some(i) = &tcp {
                if i.rtt_us > 0 {
                    lock(&f.rtt).record(i.rtt_us as u64);
                }
            }
            let sample = match (tcp, views) {
                (Some(i), Some(_)) if fm.stack == Stack::Tcp => {
                    Some(crate::shim_agent::sample(&i, view.as_ref()))
                }
                (Some(i), _) => Some(Sample::from_tcp(&i, bbr.as_ref())),
                (None, _) => lock(&f.sample).clone(),
            };
            s.sample(sample);
        }
        while next >= bin_end {
            for (i, (f, s)) in flows.iter().zip(series.iter_mut()).enumerate() {
                let received = f.received();
                let rtt = lock(&f.rtt).take_bin();
                s.close_bin(received - received_before[i], rtt);
                received_before[i] = received;
            }
            bin_end += model.bin;
        }
        next += period;
    }
    series
}

/// The seed of flow `i`'s video encoder noise (the simulator draws it from the run's generator,
/// which the emulator has not).
fn video_seed(seed: u64, i: usize) -> u64 {
    // Weyl step (the golden ratio in 64 bits) so that flows of one run differ.
    seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
