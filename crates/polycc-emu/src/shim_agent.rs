//! `stack = "tcp"` flows: kernel TCP sockets with `TCP_CONGESTION = "polycc"`, steered by the
//! flows' polycc controllers through polycc-tcp's eBPF shim and agent. One agent (with its
//! shim) serves the run: registered before the testbed is made, unregistered when the run
//! ends, however it ends (the [`AgentThread`] unregisters when dropped, and the kernel drops
//! the registration with the process).

use crate::classify::server_port;
use crate::clock::Clock;
use crate::error::EmuError;
use crate::flow_state::Sample;
use crate::tcp_info::TcpInfo;
use polycc::units::Time;
use polycc::{Intent, Registry};
use polycc_sim::engine::connection::new_controller;
use polycc_sim::scenario::spec::Stack;
use polycc_sim::Model;
use polycc_tcp::{Agent, AgentThread, FlowView, SocketId, Sockets, Views};
use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};

/// Starts the agent for the run's `stack = "tcp"` flows (`None` without any). Each socket's
/// controller is built as the simulator builds the flow's (`new_controller`, seeded per
/// connection, with the flow's intent), found by the socket's remote port, the flow's server
/// port.
pub fn start(model: &Model, registry: &Registry) -> Result<Option<AgentThread>, EmuError> {
    if !model.flows.iter().any(|f| f.stack == Stack::Tcp) {
        return Ok(None);
    }
    let (model, registry) = (model.clone(), registry.clone());
    let by_port: HashMap<u16, usize> = model
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.stack == Stack::Tcp)
        .map(|(i, _)| (server_port(i), i))
        .collect();
    let mut connections: HashMap<usize, u64> = HashMap::new();
    let agent = Agent::new(Box::new(move |socket: &SocketId, ctx| {
        let Some(&i) = by_port.get(&socket.remote_port) else {
            return Ok(None);
        };
        let n = connections.entry(i).or_default();
        let connection = *n;
        *n += 1;
        let f = &model.flows[i];
        new_controller(
            &model,
            &registry,
            f,
            i,
            connection,
            ctx.now,
            f.intent.as_ref(),
        )
        .map(Some)
    }));
    AgentThread::spawn(agent).map(Some).map_err(|e| {
        EmuError::Privilege(format!(
            "polycc's eBPF shim for stack = \"tcp\" flows, which could not start: {e}"
        ))
    })
}

/// How often [`post_intents`] looks at the run's stop flag while it waits for the next intent.
const INTENT_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// Hands each `stack = "tcp"` flow's `intent_schedule` to the agent at its times (to every
/// socket of the flow: those connected to its server port); returns when all are posted or the
/// run stops.
pub fn post_intents(agent: &AgentThread, model: &Model, clock: &Clock, stop: &AtomicBool) {
    let mut due: Vec<(Time, u16, Intent)> = model
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.stack == Stack::Tcp)
        .flat_map(|(i, f)| {
            f.intent_schedule
                .iter()
                .map(move |(at, intent)| (Time::ZERO + *at, server_port(i), *intent))
        })
        .collect();
    due.sort_by_key(|(at, _, _)| *at);
    for (at, port, intent) in due {
        while clock.now() < at {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let left = std::time::Duration::from_nanos((at - clock.now()).0);
            std::thread::sleep(left.min(INTENT_WAIT));
        }
        // An agent that died is reported when the run stops it.
        let _ = agent.set_intent(Sockets::ToPort(port), intent);
    }
}

/// The agent's view of the socket, found by its cookie (asking for it the first time makes
/// the kernel give the socket one, which its next reports carry).
pub fn view_of(views: &Views, sock: &TcpStream) -> Option<FlowView> {
    let cookie = polycc_tcp::socket_cookie(sock).ok()?;
    let views = views.lock().unwrap_or_else(|e| e.into_inner());
    views.values().find(|v| v.socket.cookie == cookie).cloned()
}

/// A `stack = "tcp"` sender's sample: the kernel's view of the socket, with the polycc
/// controller's state, window, pacing rate and telemetry in place of the kernel's.
pub fn sample(i: &TcpInfo, view: Option<&FlowView>) -> Sample {
    let mut s = Sample::from_tcp(i, None);
    // What the socket paces at, to compare with the controller's rate.
    s.extras
        .push(("kernel_pacing_rate_mbps", i.pacing_rate as f64 * 8.0 / 1e6));
    if let Some(v) = view {
        s.state = v.telemetry.state;
        s.cwnd_bytes = Some(v.cwnd as f64);
        if let Some(r) = v.pacing_rate {
            s.pacing_rate_mbps = Some(r.as_mbps_f64());
        }
        // The controller's own values, then the kernel's that it lacks.
        let kernel = std::mem::take(&mut s.extras);
        s.extras = v.telemetry.entries().to_vec();
        for (k, x) in kernel {
            if !s.extras.iter().any(|(n, _)| *n == k) {
                s.extras.push((k, x));
            }
        }
    } else {
        s.state = "fallback";
    }
    s
}
