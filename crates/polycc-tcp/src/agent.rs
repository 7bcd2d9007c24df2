//! The agent: one polycc controller per socket that opted into `polycc`, fed from the shim's
//! reports ([`crate::translate`] says which facts are exact and which approximate), its window
//! and pacing rate written back through [`Shim::decide`] for that socket's key.
//!
//! A socket gets its controller at its first report: the one [`Agent::attach`] named for it
//! (by cookie, ports or remote port), else the agent's factory's (for every socket, [`Agent::for_spec`]; or per socket, as
//! the testbed builds each flow's controller the way the simulator does). A factory may leave a
//! socket alone (`Ok(None)`): it then runs on the kernel side's safe fallback. The controller
//! is dropped when the socket releases `polycc` (it closed or changed controller: the BPF
//! `release` callback reports it), or after [`FORGET_AFTER`] without a report.
//!
//! Safe fallback (kernel side, `src/bpf/polycc.bpf.c`): a socket whose own decision is missing
//! or older than one second, with no default decision ([`FlowKey::ANY`]) set, holds at most
//! TCP's initial window of 10 packets, unpaced. The agent refreshes each live socket's decision
//! every [`REFRESH`], so that covers only the time before its first decision and an agent that
//! died or stalls; when the agent's process ends the controller is unregistered, and sockets
//! still open keep running on the fallback.
//!
//! Intents ([`Agent::set_intent`], or [`crate::AgentThread::set_intent`] from another thread)
//! reach the controllers of the sockets they name at once, and the controllers of matching
//! sockets that start later at their start: an application states what it wants once, however
//! many connections it opens.

use crate::report::{Decision, FlowKey, Report, ReportKind, SocketId};
use crate::translate::Translator;
use crate::{monotonic_ns, Shim, ShimError};
use polycc::{
    Bytes, CcContext, CcError, CcSpec, CongestionControl, Intent, Rate, Registry, Telemetry, Time,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// A live socket's decision is rewritten at least this often, well inside the kernel side's
/// one-second staleness limit (`STALE_NS` in `polycc.bpf.c`).
pub const REFRESH: Duration = Duration::from_millis(250);
/// A socket without a report for this long is forgotten (its release report was lost to a
/// full ring, or it idles): a new report builds it a new controller.
pub const FORGET_AFTER: Duration = Duration::from_secs(30);
/// How long the agent waits for reports before it looks at the controllers' timers.
pub const POLL: Duration = Duration::from_millis(10);
/// The published views are refreshed at most this often per socket (the testbed samples every
/// 10 ms).
const PUBLISH_EVERY_NS: u64 = 2_000_000;
/// Latency samples kept per kind: a 10-second run at 100 Mbit/s has ~400 000 ACKs.
const MAX_LATENCY_SAMPLES: usize = 1 << 20;
/// The segment size a controller is built for before its socket's reports say otherwise:
/// a 1500-byte MTU less IPv4 and TCP headers with timestamps.
const DEFAULT_MSS: Bytes = 1448;

/// What can go wrong with the agent.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The controller spec is not one the standard registry builds.
    #[error("controller {spec:?} for kernel TCP: {source}")]
    Spec {
        spec: String,
        #[source]
        source: CcError,
    },
    #[error(transparent)]
    Shim(#[from] ShimError),
    /// The agent's thread ended unexpectedly.
    #[error("the polycc agent's thread died: {0}")]
    Died(String),
}

/// Builds the controller of a socket at its first report; `Ok(None)` leaves it alone.
pub type Factory = Box<
    dyn FnMut(&SocketId, &CcContext) -> Result<Option<Box<dyn CongestionControl>>, String> + Send,
>;

/// What the agent publishes of each socket's controller, for telemetry.
#[derive(Clone, Debug)]
pub struct FlowView {
    pub socket: SocketId,
    pub controller: String,
    pub cwnd: Bytes,
    pub pacing_rate: Option<Rate>,
    pub in_flight: Bytes,
    pub telemetry: Telemetry,
    /// `CLOCK_MONOTONIC` of the report it reflects, ns.
    pub at_ns: u64,
}

/// Which sockets a controller or an intent is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sockets {
    /// The socket with this cookie ([`crate::socket_cookie`]).
    Cookie(u64),
    /// The socket the shim knows by this key (from a report or a view).
    One(FlowKey),
    /// The socket with these local and remote ports.
    Ports { local: u16, remote: u16 },
    /// Every socket connected to this remote port (an application's connections to its
    /// server).
    ToPort(u16),
}

impl Sockets {
    fn holds(self, s: &SocketId) -> bool {
        match self {
            Sockets::Cookie(c) => c != 0 && c == s.cookie,
            Sockets::One(k) => k == s.key,
            Sockets::Ports { local, remote } => (local, remote) == (s.local_port, s.remote_port),
            Sockets::ToPort(p) => p == s.remote_port,
        }
    }
}

/// Every socket's view, by key, shared with whoever samples it.
pub type Views = Arc<Mutex<HashMap<FlowKey, FlowView>>>;

/// Counters and latency samples over the agent's life.
#[derive(Clone, Debug, Default)]
pub struct AgentStats {
    pub reports: u64,
    pub decisions_written: u64,
    pub controllers_built: u64,
    pub controllers_dropped: u64,
    /// Sockets that reported their release.
    pub releases: u64,
    /// Factory failures, with the first message.
    pub build_failures: u64,
    pub first_build_failure: Option<String>,
    pub decide_failures: u64,
    /// ACK (report's `now_ns`) to the decision it led to written into the map, ns.
    pub decide_latency_ns: Vec<u64>,
    /// ACK to the first later ACK the kernel applied that decision at, ns: the control loop.
    pub apply_latency_ns: Vec<u64>,
    /// CPU time of the agent's thread, ns (set by [`crate::AgentThread::stop`]).
    pub cpu_ns: u64,
}

struct Flow {
    socket: SocketId,
    tr: Translator,
    last_report_ns: u64,
    written: Option<(Decision, u64)>,
    last_applied: u64,
    published_ns: u64,
}

/// One controller per opted-in socket (see the module docs).
pub struct Agent {
    factory: Factory,
    registry: Registry,
    /// Controllers named for sockets, the latest first.
    attached: Vec<(Sockets, CcSpec)>,
    flows: HashMap<FlowKey, Flow>,
    views: Views,
    stats: AgentStats,
    /// The latest intent for each selector, in the order they were set.
    intents: Vec<(Sockets, Intent)>,
    /// Intents from other threads ([`crate::AgentThread::set_intent`]).
    pub(crate) inbox: Option<mpsc::Receiver<(Sockets, Intent)>>,
}

fn build(
    registry: &Registry,
    spec: &CcSpec,
    ctx: &CcContext,
) -> Result<Box<dyn CongestionControl>, AgentError> {
    registry
        .build(spec, ctx)
        .map_err(|source| AgentError::Spec {
            spec: spec.name().to_string(),
            source,
        })
}

fn context(key: FlowKey, now_ns: u64) -> CcContext {
    CcContext {
        now: Time(now_ns),
        seed: key.0,
        ..CcContext::new(DEFAULT_MSS)
    }
}

impl Agent {
    /// An agent whose factory builds each socket's controller.
    pub fn new(factory: Factory) -> Agent {
        Agent {
            factory,
            registry: Registry::standard(),
            attached: Vec::new(),
            flows: HashMap::new(),
            views: Views::default(),
            stats: AgentStats::default(),
            intents: Vec::new(),
            inbox: None,
        }
    }

    /// Hands `intent` to the controllers of `sockets` now, and to those of matching sockets
    /// when they start.
    pub fn set_intent(&mut self, sockets: Sockets, intent: Intent) {
        let now = Time(monotonic_ns());
        for f in self.flows.values_mut() {
            if sockets.holds(&f.socket) {
                f.tr.controller_mut().set_intent(now, &intent);
            }
        }
        self.intents.retain(|(s, _)| *s != sockets);
        self.intents.push((sockets, intent));
    }

    /// An agent that runs `spec` (anything [`Registry::standard`] builds) on every socket; a
    /// spec it rejects is an error now, not at the first socket.
    pub fn for_spec(spec: &CcSpec) -> Result<Agent, AgentError> {
        let registry = Registry::standard();
        build(&registry, spec, &CcContext::new(DEFAULT_MSS))?;
        let spec = spec.clone();
        Ok(Agent::new(Box::new(move |_, ctx| {
            registry
                .build(&spec, ctx)
                .map(Some)
                .map_err(|e| e.to_string())
        })))
    }

    /// Runs `spec` on `sockets` from their first report on (instead of the factory's); a later
    /// attach for the same sockets replaces it. A socket named by its cookie must have had it
    /// asked for before its first ACK.
    pub fn attach(&mut self, sockets: Sockets, spec: &CcSpec) -> Result<(), AgentError> {
        build(&self.registry, spec, &CcContext::new(DEFAULT_MSS))?;
        self.attached.retain(|(s, _)| *s != sockets);
        self.attached.insert(0, (sockets, spec.clone()));
        Ok(())
    }

    /// The sockets' views, updated as reports come.
    pub fn views(&self) -> Views {
        Arc::clone(&self.views)
    }

    pub fn stats(&self) -> &AgentStats {
        &self.stats
    }

    /// Sockets with a controller now.
    pub fn sockets(&self) -> Vec<FlowKey> {
        self.flows.keys().copied().collect()
    }

    /// Builds the controller of a socket seen for the first time.
    fn start(&mut self, r: &Report) -> Option<Flow> {
        let ctx = context(r.key, r.now_ns);
        let socket = r.socket();
        let built = match self.attached.iter().find(|(s, _)| s.holds(&socket)) {
            Some((_, spec)) => build(&self.registry, spec, &ctx)
                .map(Some)
                .map_err(|e| e.to_string()),
            None => (self.factory)(&socket, &ctx),
        };
        match built {
            Ok(Some(mut cc)) => {
                self.stats.controllers_built += 1;
                for (_, i) in self.intents.iter().filter(|(s, _)| s.holds(&socket)) {
                    cc.set_intent(Time(r.now_ns), i);
                }
                Some(Flow {
                    socket,
                    tr: Translator::new(cc, Bytes::from(r.mss).max(1)),
                    last_report_ns: r.now_ns,
                    written: None,
                    last_applied: 0,
                    published_ns: 0,
                })
            }
            Ok(None) => None,
            Err(e) => {
                self.stats.build_failures += 1;
                self.stats.first_build_failure.get_or_insert(e);
                None
            }
        }
    }

    /// One report: the socket's controller fed, and the decision to write for it, if one is
    /// due (changed, or older than [`REFRESH`]).
    pub fn on_report(&mut self, r: &Report) -> Option<(FlowKey, Decision)> {
        self.stats.reports += 1;
        if r.kind == ReportKind::Release {
            self.stats.releases += 1;
            self.forget(r.key);
            return None;
        }
        if !self.flows.contains_key(&r.key) {
            let flow = self.start(r)?;
            self.flows.insert(r.key, flow);
        }
        let flow = self.flows.get_mut(&r.key)?;
        if r.applied_ack_ns != 0 && r.applied_ack_ns != flow.last_applied {
            flow.last_applied = r.applied_ack_ns;
            if self.stats.apply_latency_ns.len() < MAX_LATENCY_SAMPLES {
                self.stats
                    .apply_latency_ns
                    .push(r.now_ns.saturating_sub(r.applied_ack_ns));
            }
        }
        flow.last_report_ns = r.now_ns;
        // The cookie may be asked for after the socket started.
        if r.cookie != 0 {
            flow.socket.cookie = r.cookie;
        }
        flow.tr.on_report(r);
        if r.now_ns.saturating_sub(flow.published_ns) >= PUBLISH_EVERY_NS {
            flow.published_ns = r.now_ns;
            publish(&self.views, flow, r.now_ns);
        }
        due(flow, r.now_ns).map(|(d, _)| (r.key, d))
    }

    /// Fires due controller timers and forgets silent sockets; the decisions due after the
    /// timers.
    pub fn on_idle(&mut self, now_ns: u64) -> Vec<(FlowKey, Decision)> {
        let silent: Vec<FlowKey> = self
            .flows
            .iter()
            .filter(|(_, f)| {
                now_ns.saturating_sub(f.last_report_ns) > FORGET_AFTER.as_nanos() as u64
            })
            .map(|(k, _)| *k)
            .collect();
        for k in silent {
            self.forget(k);
        }
        let mut out = Vec::new();
        for (k, f) in &mut self.flows {
            f.tr.poll_timer(Time(now_ns));
            // Between ACKs only a decision a timer changed is written; refreshes come with
            // ACKs, and a socket without ACKs needs none.
            if let Some((d, true)) = due(f, now_ns) {
                out.push((*k, d));
            }
        }
        out
    }

    fn forget(&mut self, key: FlowKey) {
        if self.flows.remove(&key).is_some() {
            self.stats.controllers_dropped += 1;
        }
        crate::lock(&self.views).remove(&key);
    }

    /// Records a decision as written at `written_ns`.
    fn written(&mut self, key: FlowKey, d: Decision, written_ns: u64) {
        self.stats.decisions_written += 1;
        if let Some(f) = self.flows.get_mut(&key) {
            let new = f.written.is_none_or(|(w, _)| w.ack_ns != d.ack_ns) && d.ack_ns != 0;
            if new && self.stats.decide_latency_ns.len() < MAX_LATENCY_SAMPLES {
                self.stats
                    .decide_latency_ns
                    .push(written_ns.saturating_sub(d.ack_ns));
            }
            f.written = Some((d, written_ns));
        }
    }

    /// Reads reports from `shim` and writes decisions until `stop` is set.
    pub fn run(&mut self, shim: &mut Shim, stop: &AtomicBool) -> Result<(), AgentError> {
        let mut batch = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            shim.poll(POLL, |r| batch.push(r))?;
            while let Some((sockets, intent)) = self.inbox.as_ref().and_then(|i| i.try_recv().ok())
            {
                self.set_intent(sockets, intent);
            }
            // Each report's decision is written before the next report is read, so the
            // latency of each is its own.
            for r in batch.drain(..) {
                if let Some((k, d)) = self.on_report(&r) {
                    self.write(shim, k, d);
                }
            }
            for (k, d) in self.on_idle(monotonic_ns()) {
                self.write(shim, k, d);
            }
        }
        Ok(())
    }

    fn write(&mut self, shim: &Shim, key: FlowKey, d: Decision) {
        match shim.decide(key, d) {
            Ok(()) => self.written(key, d, monotonic_ns()),
            Err(_) => self.stats.decide_failures += 1,
        }
    }
}

/// The decision to write for `flow` now, if it changed (true) or its last write is older than
/// [`REFRESH`] (false: the same decision again). While the socket reduces its window, the
/// kernel side reads a decision's window against the in-flight it was made at, so then a new
/// in-flight is a change too.
fn due(flow: &Flow, now_ns: u64) -> Option<(Decision, bool)> {
    let fresh = flow.tr.decision(now_ns);
    match flow.written {
        Some((w, at))
            if w.cwnd_packets == fresh.cwnd_packets
                && w.pacing_bytes_per_sec == fresh.pacing_bytes_per_sec
                && w.slow_start == fresh.slow_start
                && w.reducing == fresh.reducing
                && (!fresh.reducing || w.in_flight_packets == fresh.in_flight_packets) =>
        {
            (now_ns.saturating_sub(at) >= REFRESH.as_nanos() as u64).then_some((w, false))
        }
        _ => Some((fresh, true)),
    }
}

fn publish(views: &Views, flow: &Flow, now_ns: u64) {
    let (tr, key) = (&flow.tr, flow.socket.key);
    let cc = tr.controller();
    let view = FlowView {
        socket: flow.socket,
        controller: cc.name().to_string(),
        cwnd: cc.cwnd(),
        pacing_rate: cc.pacing_rate(),
        in_flight: tr.in_flight(),
        telemetry: tr.telemetry(),
        at_ns: now_ns,
    };
    crate::lock(views).insert(key, view);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::tests::report;

    #[test]
    fn a_socket_gets_its_controller_at_its_first_report_and_loses_it_at_its_release() {
        let mut agent = Agent::for_spec(&CcSpec::named("cubic")).expect("cubic");
        agent
            .attach(Sockets::One(FlowKey(2)), &CcSpec::named("bbr"))
            .expect("bbr");
        agent
            .attach(Sockets::Cookie(55), &CcSpec::named("vegas"))
            .expect("vegas");
        let mut r = report(10);
        let (key, d) = agent.on_report(&r).expect("a first decision");
        assert_eq!((key, d.cwnd_packets, d.ack_ns), (FlowKey(1), 10, r.now_ns));
        agent.written(key, d, r.now_ns + 50_000);
        assert_eq!(agent.stats().decide_latency_ns, vec![50_000]);
        // The same window 10 ms later: nothing to write until REFRESH has passed.
        r.now_ns += 10_000_000;
        assert_eq!(agent.on_report(&r), None);
        r.now_ns += REFRESH.as_nanos() as u64;
        let (_, again) = agent.on_report(&r).expect("a refresh");
        assert_eq!(again, d, "the same decision, still answering its ACK");
        // Another key gets the controller attached to it.
        let mut other = report(20);
        other.key = FlowKey(2);
        agent.on_report(&other).expect("bbr's first decision");
        assert_eq!(
            agent.views().lock().map(|v| v.len()).unwrap_or(0),
            2,
            "both published"
        );
        let name = |agent: &Agent, k: FlowKey| {
            agent
                .flows
                .get(&k)
                .map(|f| f.tr.controller().name().to_string())
        };
        assert_eq!(name(&agent, FlowKey(1)).as_deref(), Some("cubic"));
        assert_eq!(name(&agent, FlowKey(2)).as_deref(), Some("bbr"));
        // A socket whose cookie was asked for gets the controller attached to the cookie.
        let mut cookie = report(20);
        (cookie.key, cookie.cookie) = (FlowKey(3), 55);
        agent.on_report(&cookie).expect("vegas's first decision");
        assert_eq!(name(&agent, FlowKey(3)).as_deref(), Some("vegas"));
        let views = agent.views();
        let view = |k: FlowKey| views.lock().ok().and_then(|v| v.get(&k).map(|v| v.socket));
        assert_eq!(view(FlowKey(3)).map(|s| s.cookie), Some(55));
        crate::lock(&views).clear();
        agent.forget(FlowKey(3));
        // The kernel applied the decision at a later ACK: the loop's latency.
        let mut applied = report(30);
        applied.applied_ack_ns = d.ack_ns;
        agent.on_report(&applied);
        assert_eq!(agent.stats().apply_latency_ns, vec![20_000_000]);
        // Release: the controller goes, the other stays.
        let mut release = report(40);
        release.kind = ReportKind::Release;
        assert_eq!(agent.on_report(&release), None);
        assert_eq!(agent.sockets(), vec![FlowKey(2)]);
        assert_eq!(
            agent.stats().controllers_dropped,
            2,
            "this one and the cookie's"
        );
        // A silent socket is forgotten after FORGET_AFTER.
        agent.on_idle(other.now_ns + FORGET_AFTER.as_nanos() as u64 + 1);
        assert!(agent.sockets().is_empty());
    }

    #[test]
    fn an_intent_reaches_the_sockets_it_names_now_and_those_that_start_later() {
        let mut agent = Agent::for_spec(&CcSpec::named("janus")).expect("janus");
        let target = |agent: &Agent, key: FlowKey| {
            agent.flows[&key]
                .tr
                .controller()
                .telemetry()
                .entries()
                .iter()
                .find(|(n, _)| *n == "target_rate_mbps")
                .map(|(_, v)| *v)
        };
        // FlowKey(1): remote port 1. Another socket to port 1 and one to port 2.
        let socket = |key: u64, local: u32, remote: u32| {
            let mut r = report(20);
            (r.key, r.ports) = (FlowKey(key), local << 16 | remote);
            r
        };
        agent.on_report(&report(10));
        let intent = |mbps: u64| Intent::BandwidthGuarantee {
            target_rate: Rate::from_mbps(mbps),
            min_rate: Rate::ZERO,
        };
        agent.set_intent(Sockets::ToPort(1), intent(4));
        assert_eq!(target(&agent, FlowKey(1)), Some(4.0));
        let later = socket(2, 7, 1);
        agent.on_report(&later);
        assert_eq!(
            target(&agent, later.key),
            Some(4.0),
            "a later socket to the port"
        );
        let elsewhere = socket(3, 7, 2);
        agent.on_report(&elsewhere);
        assert!(
            target(&agent, elsewhere.key).is_none_or(f64::is_nan),
            "no target for another port"
        );
        // A newer intent for the same sockets replaces the older one, also for later sockets.
        agent.set_intent(Sockets::ToPort(1), intent(6));
        agent.set_intent(Sockets::One(elsewhere.key), intent(2));
        let last = socket(4, 9, 1);
        agent.on_report(&last);
        assert_eq!(target(&agent, FlowKey(1)), Some(6.0));
        assert_eq!(target(&agent, last.key), Some(6.0));
        assert_eq!(target(&agent, elsewhere.key), Some(2.0));
    }

    #[test]
    fn a_factory_may_leave_a_socket_to_the_fallback_and_its_failures_are_counted() {
        let mut agent = Agent::new(Box::new(|s: &SocketId, _: &CcContext| match s.key.0 {
            1 => Ok(None),
            _ => Err("no controller for this socket".to_string()),
        }));
        assert_eq!(agent.on_report(&report(10)), None);
        let mut r = report(10);
        r.key = FlowKey(3);
        assert_eq!(agent.on_report(&r), None);
        assert_eq!(agent.stats().build_failures, 1);
        assert_eq!(
            agent.stats().first_build_failure.as_deref(),
            Some("no controller for this socket")
        );
        assert!(agent.sockets().is_empty());
    }
}
