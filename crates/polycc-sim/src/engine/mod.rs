//! The simulation engine: routes packets through links and delay lines, runs senders, receivers
//! and applications, and records time series and summaries.

pub mod app;
mod bola;
mod bola_rule;
pub mod connection;
pub mod delay_histogram;
pub mod delayed_ack;
mod events;
mod fast_link;
mod handshake;
pub mod link;
mod packet;
mod page_loader;
pub mod pipe;
mod player;
mod pn_ranges;
pub mod receive_window;
mod receiver;
mod recorder;
mod route;
pub mod segset;
mod send_jitter;
mod sender;
pub use sender::DEFAULT_RWND;
pub mod transfers;
pub mod video;

use crate::output::{RunOutput, Table};
use crate::scenario::{FlowModel, Model, Traffic};
use crate::SimError;
use app::App;
use events::{Ev, EventQueue, Timer};
use handshake::{Handshake, Pending, SYN_WIRE_BYTES};
use link::LinkDir;
use packet::{Kind, Packet};
use pipe::Pipe;
use polycc::units::{Duration, Rate, Time};
use polycc::{CongestionControl, Intent, Registry};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use receiver::Receiver;
use recorder::Recorder;
use route::{Hop, Route};
use sender::{Poll, Sender, Transfer, NO_SEGMENT};
use std::sync::Arc;
use video::VideoSource;

pub use recorder::{frames_table_of, mean_p95, percentiles, video_summary, Accounting, VideoStats};

/// The engine's timers of a reliable flow's sender.
#[derive(Default)]
struct SenderTimers {
    /// Pacing or send-noise release.
    wake: Timer,
    /// The transport's loss-detection timer (time threshold or PTO).
    loss: Timer,
    /// The controller's own timer.
    cc: Timer,
}

/// One flow's state, laid out in the order written (`repr(C)`) so that what a packet touches
/// shares few cache lines: first what a data packet touches at the receiver, then what its ACK
/// touches at the sender, then what only set-up, the application's events and the summary read.
/// With a thousand flows a flow's state has left the caches by its next packet (BENCHMARKS.md,
/// "Cache and TLB misses against the number of flows"), so every line touched is a miss.
#[repr(C, align(64))]
struct Flow {
    receiver: Receiver,
    stats: recorder::FlowStats,
    /// Real-time video flows: the encoder and the per-frame records.
    video: Option<Box<VideoSource>>,
    data_route: Route,
    ack_route: Route,
    app: App,
    timers: SenderTimers,
    sender: Option<Sender>,
    model: FlowModel,
    /// One-way delay of the ACK direction, used for unresponsive flows' RTT estimate.
    reverse_owd: Duration,
    started: Option<Time>,
    ended: Option<Time>,
    stopped: bool,
    next_unresponsive_pn: u64,
    /// The connection's handshake while it waits for its SYN-ACK.
    handshake: Option<Box<Handshake>>,
    /// The application's current intent.
    intent: Option<Intent>,
    /// Target rate from each intent change on (`None`: no target), for satisfaction.
    target_log: Vec<(Time, Option<Rate>)>,
}

impl Flow {
    /// The application's intent is now `intent`: logged for satisfaction, told to the controller.
    fn apply_intent(&mut self, now: Time, intent: Intent) {
        self.intent = Some(intent);
        self.target_log.push((now, intent.target_rate()));
        if let Some(s) = self.sender.as_mut() {
            s.cc_mut().set_intent(now, &intent);
        }
    }
}

/// Engine choices that do not change what is simulated.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Serve constant-rate drop-tail links without an event per packet (`fast_link`). Off, every
    /// link takes the general path; results then differ only where two events fall on the same
    /// nanosecond (see `fast_link` on ties).
    pub event_free_links: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            event_free_links: true,
        }
    }
}

/// One run of a scenario. `run` goes to the end at once; `advance`, `drain` and `finish` run it
/// in steps, handing over the time series recorded so far between steps so that a caller can
/// write them out instead of holding the whole run (`Simulator::drain`). The steps change nothing
/// that is simulated: pausing between two events and going on is the same sequence of events,
/// so a run in steps gives the same output as `run`, byte for byte.
pub struct Simulator {
    model: Arc<Model>,
    registry: Arc<Registry>,
    now: Time,
    end: Time,
    q: EventQueue,
    rng: Pcg64Mcg,
    links: Vec<Option<LinkDir>>,
    pipes: Vec<Pipe<Packet>>,
    /// (delay, aggregation, feeding link direction, index) of the delay lines hops may share.
    shared_pipes: Vec<(Duration, Option<Duration>, Option<u32>, u32)>,
    flows: Vec<Flow>,
    events: u64,
    scratch: Vec<Packet>,
    acct: Accounting,
    rec: Recorder,
    /// Per link: index of its next entry in `conditions`.
    next_condition: Vec<usize>,
    /// Scheduled intent changes: (flow, new intent).
    intent_changes: Vec<(u32, Intent)>,
    /// Wall-clock time spent in `advance` so far.
    wall: std::time::Duration,
}

/// When `Simulator::advance` may return before the time asked for (both: whichever comes
/// first; neither: never).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseAt {
    /// After this much wall-clock time (checked every `CLOCK_EVERY` events), so that a caller
    /// can show progress or react to a signal.
    pub wall: Option<std::time::Duration>,
    /// Once this many flow rows are pending (`drain`), so that a caller can take them over in
    /// chunks of about this size whatever the pace of the run.
    pub pending_rows: Option<usize>,
}

/// How far `Simulator::advance` got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Stopped before the time asked for (`PauseAt`); call again.
    Paused,
    /// Every event before the time asked for is processed.
    Reached,
    /// The run is over: every event before the end is processed (`finish` next).
    Done,
}

/// `advance` looks at the wall clock once per this many events (a clock read is ~20 ns).
const CLOCK_EVERY: u64 = 1024;

impl Simulator {
    pub fn new(model: Arc<Model>, registry: Arc<Registry>) -> Result<Self, SimError> {
        Self::with_options(model, registry, Options::default())
    }

    pub fn with_options(
        model: Arc<Model>,
        registry: Arc<Registry>,
        options: Options,
    ) -> Result<Self, SimError> {
        // A kernel controller without a polycc model (`linux_stack`) can run only on the kernel,
        // an outside program (`stack = "external"`) only in the emulator.
        for f in &model.flows {
            if let Err(e) = &f.sim_cca {
                let key = if f.stack == crate::scenario::spec::Stack::External {
                    "stack"
                } else {
                    "cca"
                };
                return Err(SimError::Scenario(crate::ScenarioError {
                    origin: model.scenario.name.clone(),
                    path: format!("flows ({}).{key}", f.id),
                    message: e.clone(),
                }));
            }
        }
        let mut links = Vec::with_capacity(model.links.len() * 2);
        for l in &model.links {
            // Event-free service hands packets to delay lines ahead of time: only where their
            // delay cannot change and no jitter is drawn (see `pipe_for`).
            let fixed = options.event_free_links && l.conditions.is_empty();
            let fwd_free = fixed && l.forward.jitter.is_none();
            let rev_free = fixed && l.reverse_jitter.is_none();
            links.push(Some(LinkDir::new(&l.forward, fwd_free)));
            links.push(l.reverse.as_ref().map(|m| LinkDir::new(m, rev_free)));
        }
        let mut sim = Simulator {
            now: Time::ZERO,
            end: Time::ZERO + model.duration,
            q: EventQueue::default(),
            rng: Pcg64Mcg::seed_from_u64(model.scenario.seed),
            links,
            pipes: Vec::new(),
            shared_pipes: Vec::new(),
            flows: Vec::new(),
            events: 0,
            scratch: Vec::new(),
            acct: Accounting::default(),
            rec: Recorder::new(&model),
            next_condition: vec![0; model.links.len()],
            intent_changes: Vec::new(),
            wall: std::time::Duration::ZERO,
            model: model.clone(),
            registry,
        };
        for (li, l) in model.links.iter().enumerate() {
            if let Some(c) = l.conditions.first() {
                sim.q.push(Time::ZERO + c.at, Ev::LinkChange(li as u32));
            }
        }
        for (i, fm) in model.flows.iter().enumerate() {
            let flow = sim.build_flow(fm)?;
            sim.flows.push(flow);
            sim.q.push(Time::ZERO + fm.start, Ev::Start(i as u32));
            if let Some(stop) = fm.stop {
                sim.q.push(Time::ZERO + stop, Ev::Stop(i as u32));
            }
            for (at, intent) in &fm.intent_schedule {
                let k = sim.intent_changes.len() as u32;
                sim.intent_changes.push((i as u32, *intent));
                sim.q.push(Time::ZERO + *at, Ev::IntentChange(k));
            }
        }
        sim.q
            .push(Time::ZERO + model.bin.min(model.duration), Ev::Sample);
        Ok(sim)
    }

    /// The application of a flow changes its intent; its controller is told at once.
    fn intent_change(&mut self, k: u32) {
        let now = self.now;
        let (flow, intent) = self.intent_changes[k as usize];
        self.flows[flow as usize].apply_intent(now, intent);
        self.try_send(flow);
    }

    /// Builds flow `index`'s controller for its `connection`-th connection (web flows open one
    /// per transfer) and tells it the application's current intent.
    fn new_cc(
        &self,
        fm: &FlowModel,
        index: usize,
        connection: u64,
        intent: Option<&Intent>,
    ) -> Result<Box<dyn CongestionControl>, SimError> {
        connection::new_controller(
            &self.model,
            &self.registry,
            fm,
            index,
            connection,
            self.now,
            intent,
        )
        .map_err(SimError::Internal)
    }

    fn build_flow(&mut self, fm: &FlowModel) -> Result<Flow, SimError> {
        // A handle of its own: the route closure below needs `self` mutably.
        let model = self.model.clone();
        let links = &model.links;
        let sc = &model.scenario;
        let fwd_owd = Duration(fm.rtt.0 / 2);
        let rev_owd = fm.rtt - fwd_owd;
        // Link indices in data order and in ACK order.
        let data_links: Vec<usize> = if fm.reverse {
            fm.path.iter().rev().copied().collect()
        } else {
            fm.path.clone()
        };
        let ack_links: Vec<usize> = data_links.iter().rev().copied().collect();
        let mut route = |order: &[usize],
                         forward_dir_for_data: bool,
                         is_ack: bool,
                         owd: Duration|
         -> Vec<Hop> {
            let n = order.len();
            order
                .iter()
                .enumerate()
                .map(|(k, &li)| {
                    let l = &links[li];
                    // Data of forward flows and ACKs of reverse flows use the forward direction.
                    let forward = forward_dir_for_data != is_ack;
                    let link_dir = if forward {
                        Some(2 * li as u32)
                    } else {
                        l.reverse.as_ref().map(|_| 2 * li as u32 + 1)
                    };
                    let loss = if forward {
                        l.forward.loss
                    } else {
                        l.reverse_loss
                    };
                    let jitter = if forward {
                        l.forward.jitter
                    } else {
                        l.reverse_jitter
                    };
                    let aggregation = if is_ack {
                        l.forward.ack_aggregation
                    } else {
                        None
                    };
                    let extra_delay = if k + 1 == n { owd } else { Duration::ZERO };
                    // A link whose delay changes during the run needs lines of its own.
                    let shareable = jitter.is_none() && l.conditions.is_empty();
                    Hop {
                        link_dir,
                        loss,
                        pipe: self.pipe_for(
                            l.delay + extra_delay,
                            aggregation,
                            shareable.then_some(link_dir),
                            jitter,
                            l.jitter_reorder,
                        ),
                        link: li as u32,
                        forward,
                        extra_delay,
                    }
                })
                .collect()
        };
        let no_links = || SimError::Internal(format!("flow {}: a path without links", fm.id));
        let data_route =
            Route::new(route(&data_links, !fm.reverse, false, fwd_owd)).ok_or_else(no_links)?;
        let ack_route =
            Route::new(route(&ack_links, !fm.reverse, true, rev_owd)).ok_or_else(no_links)?;
        let back = model.return_delay(fm);
        let sender = if fm.traffic.is_unresponsive() {
            None
        } else {
            let cc = self.new_cc(fm, self.flows.len(), 0, fm.intent.as_ref())?;
            let mut s = Sender::new(
                cc,
                model.wire_packet_bytes(fm) - sc.header_bytes,
                sc.header_bytes,
                fm.host.counts.uncounted(sc.header_bytes),
                fm.max_ack_delay,
                fm.pacing,
                fm.rwnd,
            );
            s.set_host(&fm.host);
            if let Traffic::Video(v) = &fm.traffic {
                if !v.retransmit {
                    s.no_retransmission();
                }
            }
            if let Some(j) = fm.send_jitter {
                let seed = send_jitter::flow_seed(sc.seed, self.flows.len());
                s.set_send_jitter(send_jitter::SendJitter::new(j, seed));
            }
            Some(s)
        };
        let video = match &fm.traffic {
            Traffic::Video(v) => Some(Box::new(VideoSource::new(*v))),
            _ => None,
        };
        let keep_log = sender.as_ref().is_some_and(|s| s.cc().wants_feedback());
        Ok(Flow {
            model: fm.clone(),
            sender,
            timers: SenderTimers::default(),
            receiver: Receiver::new(fm.ack_every, fm.max_ack_delay, keep_log).with_acks(
                fm.host.acks,
                sc.mss,
                back,
            ),
            app: App::new(
                fm.traffic.clone(),
                sc.mss,
                connection::application_seed(sc.seed, self.flows.len()),
            ),
            data_route,
            ack_route,
            reverse_owd: back,
            started: None,
            ended: None,
            stopped: false,
            next_unresponsive_pn: 0,
            stats: recorder::FlowStats::new(),
            handshake: None,
            intent: fm.intent,
            target_log: vec![(
                Time::ZERO + fm.start,
                fm.intent.and_then(|i| i.target_rate()),
            )],
            video,
        })
    }

    /// The delay line for a hop. Lines without jitter on links with a fixed delay are shared by
    /// every hop with the same delay and aggregation fed by the same link direction (`share`:
    /// `Some(feeder)`, `None` inside for hops without a queue): packets enter each at
    /// non-decreasing times, as the feeder's departures are in order, so one FIFO keeps each
    /// flow's order, and fewer lines mean fewer pending events. Jittered lines stay private, as
    /// their no-reordering rule applies per hop (and a reordering line has no order to keep).
    fn pipe_for(
        &mut self,
        delay: Duration,
        aggregation: Option<Duration>,
        share: Option<Option<u32>>,
        jitter: Option<Duration>,
        reorder: bool,
    ) -> u32 {
        if let Some(feeder) = share {
            if let Some(&(.., i)) = self
                .shared_pipes
                .iter()
                .find(|&&(d, a, f, _)| d == delay && a == aggregation && f == feeder)
            {
                return i;
            }
        }
        self.pipes
            .push(Pipe::new(delay, jitter, aggregation, reorder));
        let i = self.pipes.len() as u32 - 1;
        if let Some(feeder) = share {
            self.shared_pipes.push((delay, aggregation, feeder, i));
        }
        i
    }

    /// Runs to the end of the scenario.
    pub fn run(mut self) -> Result<RunOutput, SimError> {
        self.advance(self.end, PauseAt::default())?;
        self.finish()
    }

    /// Processes the events before `until` (at most to the end of the run), or returns
    /// `Paused` earlier as `pause` says.
    pub fn advance(&mut self, until: Time, pause: PauseAt) -> Result<Progress, SimError> {
        let started = std::time::Instant::now();
        let limit = until.min(self.end);
        let mut reached = true;
        while let Some((t, ev)) = self.q.pop() {
            // The run covers [0, end): capacity is offered over that interval too.
            if t >= limit {
                self.q.unpop();
                break;
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev)?;
            if let Some(b) = pause.wall {
                if self.events % CLOCK_EVERY == 0 && started.elapsed() >= b {
                    reached = false;
                    break;
                }
            }
            if let Some(rows) = pause.pending_rows {
                if self.rec.pending_rows().0 >= rows {
                    reached = false;
                    break;
                }
            }
        }
        self.wall += started.elapsed();
        Ok(if !reached {
            Progress::Paused
        } else if self.is_done() {
            Progress::Done
        } else {
            Progress::Reached
        })
    }

    /// Whether every event before the end is processed.
    pub fn is_done(&mut self) -> bool {
        match self.q.pop() {
            Some((t, _)) => {
                self.q.unpop();
                t >= self.end
            }
            None => true,
        }
    }

    /// The time of the last event processed (the end once `finish` has run).
    pub fn now(&self) -> Time {
        self.now
    }

    /// The end of the run.
    pub fn end(&self) -> Time {
        self.end
    }

    /// The model being run.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Flow and link rows recorded and not yet drained.
    pub fn pending_rows(&self) -> (usize, usize) {
        self.rec.pending_rows()
    }

    /// The flow and link time-series rows recorded since the last drain (whole bins), in the
    /// columns of `RunOutput::flows` and `links`. Joined in order with `Table::append`, the
    /// drained chunks and the tables `finish` returns make the tables of a run without drains.
    /// A column can first appear in a later chunk (a controller's telemetry value that it
    /// reports only in some states); the chunks before hold no such column.
    pub fn drain(&mut self) -> (Table, Table) {
        self.rec.take_tables()
    }

    fn dispatch(&mut self, ev: Ev) -> Result<(), SimError> {
        let now = self.now;
        match ev {
            Ev::LinkDone(ld) => self.link_done(ld),
            Ev::LinkChange(li) => self.link_change(li as usize),
            Ev::IntentChange(k) => self.intent_change(k),
            Ev::Pipe(p) => self.pipe_due(p),
            Ev::SenderWake(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.sender.is_some() && fl.timers.wake.fire(now, &mut self.q, ev) {
                    self.try_send(f);
                }
            }
            Ev::AckTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.receiver.ack_timer.fire(now, &mut self.q, ev) && fl.receiver.has_unacked() {
                    self.send_ack(f);
                }
            }
            Ev::LossTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if let Some(s) = fl.sender.as_mut() {
                    if fl.timers.loss.fire(now, &mut self.q, ev) {
                        s.on_loss_timer(now, &mut fl.stats);
                        self.try_send(f);
                    }
                }
            }
            Ev::CcTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if let Some(s) = fl.sender.as_mut() {
                    if fl.timers.cc.fire(now, &mut self.q, ev) {
                        s.cc_mut().on_timer(now);
                        self.try_send(f);
                    }
                }
            }
            Ev::Start(f) => self.start_flow(f)?,
            Ev::SynTimer(f) => self.syn_timer(f),
            Ev::Stop(f) => {
                let fl = &mut self.flows[f as usize];
                fl.stopped = true;
                if fl.ended.is_none() {
                    fl.ended = Some(now);
                }
                if let Some(s) = fl.sender.as_mut() {
                    s.stop();
                }
            }
            Ev::App(f) => self.app_event(f)?,
            Ev::Sample => {
                self.sample();
                let next = self.now + self.model.bin;
                if self.now < self.end {
                    self.q.push(next.min(self.end), Ev::Sample);
                }
            }
        }
        Ok(())
    }

    fn start_flow(&mut self, f: u32) -> Result<(), SimError> {
        let now = self.now;
        let wire_full = self.model.packet_bytes();
        let fl = &mut self.flows[f as usize];
        fl.started = Some(now);
        match fl.app.traffic.clone() {
            Traffic::Bulk | Traffic::OnOff { .. } => {
                // An on/off source starts with an on period; its end is the next event.
                if let Some(gap) = fl.app.next_gap(wire_full) {
                    self.q.push(now + gap, Ev::App(f));
                }
                let mss = self.model.scenario.mss;
                let transfer = Transfer {
                    first: 0,
                    end: u64::MAX,
                    last_payload: mss,
                };
                self.open(f, transfer, None);
            }
            Traffic::Sized { bytes } | Traffic::Web { bytes, .. } => {
                fl.app.request(now, bytes);
                fl.receiver.transfer_end = fl.app.receiving_end();
                if let Some(gap) = fl.app.next_gap(wire_full) {
                    self.q.push(now + gap, Ev::App(f));
                }
                self.begin_next_transfer(f, true)?;
            }
            Traffic::Cbr { .. } | Traffic::Poisson { .. } | Traffic::Video(_) => {
                self.app_event(f)?
            }
            Traffic::Dash(_) => {
                let owd = fl.reverse_owd;
                if let Some(wait) = fl.app.player.as_mut().and_then(|p| p.first(now)) {
                    self.q.push(now + wait + owd, Ev::App(f));
                }
            }
            Traffic::Page(_) => {
                if let Some(l) = fl.app.loader.as_mut() {
                    self.q.push(l.first(now), Ev::App(f));
                }
            }
        }
        Ok(())
    }

    /// The video encoder produces a frame: sized from the controller's target, announced to the
    /// controller, appended to the sender's stream.
    fn video_frame(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let (Some(s), Some(v)) = (fl.sender.as_mut(), fl.video.as_mut()) else {
            return;
        };
        let media = s.cc().media_control();
        let frame = v.encode(
            now,
            media.map(|m| m.target_bitrate),
            media.and_then(|m| m.competing),
            &mut self.rng,
        );
        s.cc_mut().on_frame(
            now,
            &polycc::FrameInfo {
                index: v.frames.len() as u64 - 1,
                packets: frame.packets,
                bytes: frame.bytes,
            },
        );
        s.extend_transfer(v.end_seg());
        self.try_send(f);
    }

    fn app_event(&mut self, f: u32) -> Result<(), SimError> {
        let now = self.now;
        let wire = self.model.packet_bytes();
        let fl = &mut self.flows[f as usize];
        if fl.stopped {
            return Ok(());
        }
        if let Some(gap) = fl.app.next_gap(wire) {
            self.q.push(now + gap, Ev::App(f));
        }
        match fl.app.traffic {
            Traffic::Web { bytes, .. } => {
                fl.app.request(now, bytes);
                fl.receiver.transfer_end = fl.app.receiving_end();
                let busy = fl.handshake.is_some()
                    || fl
                        .sender
                        .as_ref()
                        .is_some_and(|s| s.transfer().is_some() && !s.transfer_done());
                if !busy {
                    self.begin_next_transfer(f, false)?;
                }
            }
            Traffic::Cbr { .. } | Traffic::Poisson { .. } => {
                let pn = fl.next_unresponsive_pn;
                fl.next_unresponsive_pn += 1;
                fl.stats.packets_sent += 1;
                let p = Packet {
                    flow: f,
                    kind: Kind::Data,
                    hop: 0,
                    wire_bytes: wire as u32,
                    pn,
                    seg: pn,
                    sent: now,
                    queue_ns: 0,
                    ack_delay_ns: 0,
                    log_pos: 0,
                };
                self.acct.sent_bytes += wire;
                self.arrive(p);
            }
            Traffic::Video(_) => self.video_frame(f),
            Traffic::Dash(_) => {
                // The request left the player a one-way delay ago; it picked the bitrate then.
                let asked = Time(now.0.saturating_sub(fl.reverse_owd.0));
                if let Some(p) = fl.app.player.as_mut() {
                    let (bytes, intent) = p.request(asked);
                    // Without an intent of the scenario's, the player's is the chunk it fetches.
                    if fl.model.states_no_intent() && fl.intent != Some(intent) {
                        fl.apply_intent(now, intent);
                    }
                    self.request_transfer(f, bytes)?;
                }
            }
            Traffic::Page(_) => {
                let owd = fl.reverse_owd;
                let Some(l) = fl.app.loader.as_mut() else {
                    return Ok(());
                };
                let (bytes, wakes) = l.poll(now, owd);
                for at in wakes.into_iter().flatten() {
                    self.q.push(at, Ev::App(f));
                }
                if let Some(bytes) = bytes {
                    self.request_transfer(f, bytes)?;
                }
            }
            Traffic::OnOff { .. } => {
                let sending = fl.app.sending();
                if let Some(s) = fl.sender.as_mut() {
                    s.set_paused(!sending, fl.model.host.unsent_at_pause);
                }
                if sending {
                    self.try_send(f);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A receiver-driven application (a DASH player, a browser) asked for `bytes` that reach
    /// the sender now: registers the transfer and starts it (the previous one is complete).
    fn request_transfer(&mut self, f: u32, bytes: u64) -> Result<(), SimError> {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        fl.app.request(now, bytes);
        fl.receiver.transfer_end = fl.app.receiving_end();
        let first = fl.app.transfers.len() == 1;
        self.begin_next_transfer(f, first)
    }

    /// Starts the next queued transfer of a sized or web flow, on a fresh connection state for
    /// every transfer after the first unless the web flow's connection is persistent.
    fn begin_next_transfer(&mut self, f: u32, first: bool) -> Result<(), SimError> {
        let fl = &self.flows[f as usize];
        let Some(&idx) = fl.app.queued.front() else {
            return Ok(());
        };
        // A DASH player fetches its chunks over one connection; a browser a page's levels.
        let persistent = match &fl.app.traffic {
            Traffic::Web { persistent, .. } => *persistent,
            Traffic::Dash(_) => true,
            Traffic::Page(_) => !fl.app.loader.as_ref().is_some_and(|l| l.opens_connection()),
            _ => false,
        };
        let cc = if first || persistent {
            None
        } else {
            Some(self.new_cc(&fl.model, f as usize, idx as u64, fl.intent.as_ref())?)
        };
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        fl.app.queued.pop_front();
        let rec = &mut fl.app.transfers[idx];
        rec.started = Some(now);
        let bytes = rec.bytes;
        let t = Transfer {
            first: rec.first_seg,
            end: rec.end_seg,
            last_payload: fl.app.last_payload(bytes),
        };
        if first || !persistent {
            self.open(f, t, cc);
        } else {
            fl.app.transfers[idx].connected = Some(now);
            if let Some(s) = fl.sender.as_mut() {
                s.start_transfer(t, cc);
            }
            self.try_send(f);
        }
        Ok(())
    }

    /// Opens a connection for transfer `t` (on `cc`, a fresh controller, when given): at once,
    /// or after TCP's handshake when the flow's hosts make one (`engine::handshake`).
    fn open(&mut self, f: u32, t: Transfer, cc: Option<Box<dyn CongestionControl>>) {
        let fl = &mut self.flows[f as usize];
        if !fl.model.host.handshake {
            fl.app.connected(t.first, self.now);
            if let Some(s) = fl.sender.as_mut() {
                s.start_transfer(t, cc);
            }
            self.try_send(f);
            return;
        }
        let pending = Pending { transfer: t, cc };
        let h = Handshake::new(self.now, pending);
        self.q.push(h.deadline, Ev::SynTimer(f));
        fl.handshake = Some(Box::new(h));
        self.send_syn(f, 0);
    }

    fn send_syn(&mut self, f: u32, retries: u32) {
        let p = Packet {
            flow: f,
            kind: Kind::Syn,
            hop: 0,
            wire_bytes: SYN_WIRE_BYTES,
            pn: retries as u64,
            seg: NO_SEGMENT,
            sent: self.now,
            queue_ns: 0,
            ack_delay_ns: 0,
            log_pos: 0,
        };
        self.arrive(p);
    }

    /// A SYN timed out (unless its SYN-ACK came, or a later SYN's deadline is due instead).
    fn syn_timer(&mut self, f: u32) {
        let now = self.now;
        let Some(h) = self.flows[f as usize].handshake.as_mut() else {
            return;
        };
        if now < h.deadline {
            return;
        }
        if h.retransmit(now) {
            let (deadline, retries) = (h.deadline, h.retries);
            self.q.push(deadline, Ev::SynTimer(f));
            self.send_syn(f, retries);
        }
    }

    /// The receiver answers a SYN at once.
    fn on_syn(&mut self, syn: Packet) {
        self.arrive(Packet {
            kind: Kind::SynAck,
            hop: 0,
            queue_ns: 0,
            ..syn
        });
    }

    /// The SYN-ACK arrived: the handshake's round trip is the first RTT sample, and the
    /// connection's data starts (unless the flow stopped meanwhile).
    fn on_synack(&mut self, p: Packet) {
        let now = self.now;
        let fl = &mut self.flows[p.flow as usize];
        let Some(h) = fl.handshake.take() else {
            return; // an answer to a retransmitted SYN, after the first answer
        };
        if fl.stopped {
            return;
        }
        let Pending { transfer, cc } = h.pending;
        fl.app.connected(transfer.first, now);
        let rtt = now - p.sent;
        if let Some(s) = fl.sender.as_mut() {
            s.start_transfer(transfer, cc);
            s.on_handshake(now, rtt);
        }
        // Linux's srtt starts from this sample (the SYN's RTT, taken in `tcp_ack`), so it is
        // recorded as the flow's first RTT sample, as the kernel's `tcpi_rtt` shows it.
        fl.stats.record_rtt(rtt);
        self.try_send(p.flow);
    }

    fn try_send(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if let (Some(v), Some(s)) = (fl.video.as_ref(), fl.sender.as_mut()) {
            if v.model.retransmit && s.has_retx() {
                s.retain_retx(|seg, acked| v.needs_retransmit(seg, |x| acked.contains(x)));
            }
        }
        loop {
            let fl = &mut self.flows[f as usize];
            let Some(s) = fl.sender.as_mut() else { return };
            match s.poll_send(now, &mut fl.stats) {
                Poll::Send { pn, seg, wire } => {
                    if let Some(v) = fl.video.as_mut() {
                        v.on_sent(seg, now);
                    }
                    let p = Packet {
                        flow: f,
                        kind: Kind::Data,
                        hop: 0,
                        wire_bytes: wire as u32,
                        pn,
                        seg,
                        sent: now,
                        queue_ns: 0,
                        ack_delay_ns: 0,
                        log_pos: 0,
                    };
                    self.acct.sent_bytes += wire;
                    self.arrive(p);
                }
                Poll::Wait(t) => {
                    fl.timers.wake.arm(t, &mut self.q, Ev::SenderWake(f));
                    break;
                }
                Poll::Blocked | Poll::Idle => break,
            }
        }
        self.arm_sender_timers(f);
    }

    fn arm_sender_timers(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let Some(s) = fl.sender.as_ref() else {
            return;
        };
        let t = &mut fl.timers;
        match s.loss_deadline() {
            Some(d) => t.loss.arm(d.max(self.now), &mut self.q, Ev::LossTimer(f)),
            None => t.loss.cancel(),
        }
        match s.cc().next_timer() {
            Some(d) => t.cc.arm(d.max(self.now), &mut self.q, Ev::CcTimer(f)),
            None => t.cc.cancel(),
        }
    }

    fn route_hop(&self, p: &Packet) -> Hop {
        let fl = &self.flows[p.flow as usize];
        if p.kind.forward() {
            fl.data_route.hop(p.hop as usize)
        } else {
            fl.ack_route.hop(p.hop as usize)
        }
    }

    /// A packet reaches the entry of its current hop.
    fn arrive(&mut self, p: Packet) {
        let hop = self.route_hop(&p);
        if hop.loss > 0.0 && self.rng.gen::<f64>() < hop.loss {
            self.account_drop(&p, hop.link_dir, true);
            return;
        }
        match hop.link_dir {
            Some(ld) => self.link_enqueue(ld, p),
            None => self.pipe_push(hop.pipe, p),
        }
    }

    fn account_drop(&mut self, p: &Packet, link_dir: Option<u32>, random: bool) {
        if p.kind == Kind::Data {
            self.acct.dropped_bytes += p.wire_bytes as u64;
            self.flows[p.flow as usize].stats.dropped_in_network += 1;
        }
        if let Some(ld) = link_dir {
            if let Some(l) = self.links[ld as usize].as_mut() {
                if random {
                    self.rec.random_losses[ld as usize] += 1;
                } else {
                    l.drops += 1;
                    l.bin.drops += 1;
                }
            }
        }
    }

    fn link_enqueue(&mut self, ld: u32, mut p: Packet) {
        let now = self.now;
        let l = self.links[ld as usize]
            .as_mut()
            .expect("route names an existing link");
        if l.fast.is_some() {
            match l.admit_fast(now, p.wire_bytes) {
                Some((depart, sojourn)) => {
                    p.queue_ns += sojourn.0;
                    let pipe = self.route_hop(&p).pipe;
                    self.pipe_enter(pipe, depart, p);
                }
                None => self.account_drop(&p, Some(ld), false),
            }
            return;
        }
        let mut dropped = std::mem::take(&mut self.scratch);
        l.touch(now);
        if p.kind == Kind::Data {
            l.data_queued += p.wire_bytes as u64;
        }
        l.queue.enqueue(now, p, &mut |d| dropped.push(d));
        let idle = l.in_service.is_none();
        for d in &dropped {
            if d.kind == Kind::Data {
                l.data_queued -= d.wire_bytes as u64;
            }
        }
        for d in dropped.drain(..) {
            self.account_drop(&d, Some(ld), false);
        }
        self.scratch = dropped;
        if idle {
            self.start_service(ld);
        }
    }

    fn start_service(&mut self, ld: u32) {
        let now = self.now;
        let mut dropped = std::mem::take(&mut self.scratch);
        let l = self.links[ld as usize].as_mut().expect("link exists");
        l.touch(now);
        let next = l.queue.dequeue(now, &mut |d| dropped.push(d));
        for d in &dropped {
            if d.kind == Kind::Data {
                l.data_queued -= d.wire_bytes as u64;
            }
        }
        if let Some((mut p, sojourn)) = next {
            if p.kind == Kind::Data {
                l.data_queued -= p.wire_bytes as u64;
            }
            p.queue_ns += sojourn.0;
            l.record_sojourn(sojourn);
            let done = l.server.serve(now, p.wire_bytes as u64);
            l.in_service = Some(p);
            if done != Time::MAX {
                self.q.push(done, Ev::LinkDone(ld));
            }
        }
        for d in dropped.drain(..) {
            self.account_drop(&d, Some(ld), false);
        }
        self.scratch = dropped;
    }

    /// Applies link `li`'s next loss / delay change to every hop crossing it and schedules the
    /// one after. Packets already in a delay line keep their exit times.
    fn link_change(&mut self, li: usize) {
        let changes = &self.model.links[li].conditions;
        let Some(&c) = changes.get(self.next_condition[li]) else {
            return;
        };
        self.next_condition[li] += 1;
        if let Some(next) = changes.get(self.next_condition[li]) {
            self.q.push(Time::ZERO + next.at, Ev::LinkChange(li as u32));
        }
        for fl in &mut self.flows {
            for hop in fl.data_route.iter_mut().chain(fl.ack_route.iter_mut()) {
                if hop.link as usize != li {
                    continue;
                }
                hop.loss = if hop.forward { c.loss } else { c.ack_loss };
                self.pipes[hop.pipe as usize].delay = c.delay + hop.extra_delay;
            }
        }
    }

    fn link_done(&mut self, ld: u32) {
        let l = self.links[ld as usize].as_mut().expect("link exists");
        let Some(p) = l.in_service.take() else { return };
        l.tx_bytes += p.wire_bytes as u64;
        l.bin.tx_bytes += p.wire_bytes as u64;
        let more = !l.queue.is_empty();
        let hop = self.route_hop(&p);
        self.pipe_push(hop.pipe, p);
        if more {
            self.start_service(ld);
        }
    }

    fn pipe_push(&mut self, pipe: u32, p: Packet) {
        self.pipe_enter(pipe, self.now, p);
    }

    /// A packet enters a delay line at `at` (now, or its future departure from an event-free
    /// link feeding the line).
    fn pipe_enter(&mut self, pipe: u32, at: Time, p: Packet) {
        if let Some(t) = self.pipes[pipe as usize].push(at, p, &mut self.rng) {
            self.q.push(t, Ev::Pipe(pipe));
        }
    }

    fn pipe_due(&mut self, pipe: u32) {
        if !self.pipes[pipe as usize].take_event(self.now) {
            return; // superseded by an earlier exit (a reordering line)
        }
        while let Some(p) = self.pipes[pipe as usize].pop_due(self.now) {
            self.leave_hop(p);
        }
        if let Some(t) = self.pipes[pipe as usize].schedule_next() {
            self.q.push(t, Ev::Pipe(pipe));
        }
    }

    /// A packet has crossed its hop's delay line: on to the next hop or to its endpoint.
    fn leave_hop(&mut self, mut p: Packet) {
        let fl = &self.flows[p.flow as usize];
        let len = if p.kind.forward() {
            fl.data_route.len()
        } else {
            fl.ack_route.len()
        };
        if (p.hop as usize) + 1 < len {
            p.hop += 1;
            self.arrive(p);
            return;
        }
        match p.kind {
            Kind::Data => self.on_data(p),
            Kind::Ack => self.on_ack(p),
            Kind::Syn => self.on_syn(p),
            Kind::SynAck => self.on_synack(p),
        }
    }

    fn on_data(&mut self, p: Packet) {
        let now = self.now;
        let f = p.flow;
        let header = self.model.scenario.header_bytes;
        self.acct.delivered_bytes += p.wire_bytes as u64;
        let fl = &mut self.flows[f as usize];
        fl.stats.on_arrival(p.wire_bytes as u64, p.queue_ns);
        if fl.sender.is_none() {
            // Unresponsive source: every packet is new; its RTT is what a probe would see.
            fl.stats.on_unique(p.wire_bytes as u64 - header);
            fl.stats.record_rtt((now - p.sent) + fl.reverse_owd);
            return;
        }
        let r = fl
            .receiver
            .on_data(now, p.pn, p.seg, p.wire_bytes as u64, p.sent);
        if r.new_segment && p.seg != NO_SEGMENT {
            fl.stats.on_unique(p.wire_bytes as u64 - header);
            if let Some(v) = fl.video.as_mut() {
                v.on_arrival(p.seg, now);
            }
            let cum = fl.receiver.segs.cumulative();
            if cum >= fl.receiver.transfer_end {
                while let Some(t) = fl.app.transfers.get_mut(fl.app.receiving) {
                    if cum < t.end_seg {
                        break;
                    }
                    t.completed = Some(now);
                    fl.app.receiving += 1;
                    // A DASH player's next request reaches the server a one-way delay later.
                    if let Some(wait) = fl.app.player.as_mut().and_then(|pl| pl.on_chunk(now)) {
                        self.q.push(now + wait + fl.reverse_owd, Ev::App(f));
                    }
                    // A browser's next request (or next load) likewise.
                    if let Some(at) = fl
                        .app
                        .loader
                        .as_mut()
                        .and_then(|l| l.on_level(now, fl.reverse_owd))
                    {
                        self.q.push(at, Ev::App(f));
                    }
                }
                fl.receiver.transfer_end = fl.app.receiving_end();
            }
        }
        if r.ack_now {
            self.send_ack(f);
        } else if let Some(d) = fl
            .receiver
            .ack_deadline(now, fl.receiver.ack_timer.deadline())
        {
            fl.receiver.ack_timer.arm(d, &mut self.q, Ev::AckTimer(f));
        }
    }

    fn send_ack(&mut self, f: u32) {
        let now = self.now;
        let ack_bytes = self.model.scenario.ack_bytes;
        let fl = &mut self.flows[f as usize];
        let Some((idx, largest, delay, log_pos)) = fl.receiver.make_ack(now) else {
            return;
        };
        fl.stats.acks_sent += 1;
        let p = Packet {
            flow: f,
            kind: Kind::Ack,
            hop: 0,
            wire_bytes: ack_bytes as u32,
            pn: largest,
            seg: idx,
            sent: now,
            queue_ns: 0,
            ack_delay_ns: delay.0.min(u32::MAX as u64) as u32,
            log_pos,
        };
        self.arrive(p);
    }

    fn on_ack(&mut self, p: Packet) {
        let now = self.now;
        let f = p.flow;
        let fl = &mut self.flows[f as usize];
        let Flow {
            sender,
            receiver,
            stats,
            ..
        } = fl;
        let Some(s) = sender.as_mut() else { return };
        let log: &[polycc::Arrival] = if receiver.keep_log {
            let from = s.log_consumed().saturating_sub(receiver.log_base) as usize;
            let to = p.log_pos.saturating_sub(receiver.log_base) as usize;
            let all = receiver.log.make_contiguous();
            &all[from.min(all.len())..to.min(all.len())]
        } else {
            &[]
        };
        s.on_ack(
            now,
            receiver.pns.runs(),
            p.seg as usize,
            p.pn,
            Duration(p.ack_delay_ns as u64),
            log,
            stats,
        );
        receiver.pns.release(s.ack_cursor());
        if receiver.keep_log {
            receiver.trim_log(s.consume_log(p.log_pos));
        }
        let done = s.transfer_done();
        if done {
            if !fl.app.queued.is_empty() {
                // The next web transfer was waiting for this one.
                if self.begin_next_transfer(f, false).is_err() {
                    return;
                }
                return;
            }
            if matches!(fl.app.traffic, Traffic::Sized { .. }) && fl.ended.is_none() {
                fl.ended = fl.app.transfers.first().and_then(|t| t.completed);
            }
        }
        self.try_send(f);
    }

    fn sample(&mut self) {
        let now = self.now;
        self.rec
            .sample(now, &mut self.flows, &mut self.links, &self.model);
    }

    /// Ends the run: records the last partial bin and returns the summary, the rows not yet
    /// drained and the frame table. Events still before the end are processed first.
    pub fn finish(mut self) -> Result<RunOutput, SimError> {
        self.advance(self.end, PauseAt::default())?;
        self.now = self.end;
        let wall_s = self.wall.as_secs_f64();
        // The last partial bin, if the final Sample did not land exactly at the end.
        if self.rec.last_sample() < self.end {
            self.sample();
        }
        let in_network = self.in_network_bytes();
        self.acct.in_network_bytes = in_network;
        for fl in &mut self.flows {
            fl.stats.queue_hist.settle();
            fl.stats.rtt_hist.settle();
        }
        let summary = self.rec.summary(
            &self.model,
            &self.flows,
            &self.links,
            self.events,
            wall_s,
            &self.acct,
            self.end,
        );
        let resolved_toml = toml::to_string(&self.model.scenario).map_err(|e| {
            SimError::Internal(format!("cannot serialise the resolved scenario: {e}"))
        })?;
        let frames = recorder::frames_table(&self.flows, self.end);
        let transfers = self.transfers_table();
        let (flows, links) = self.rec.take_tables();
        Ok(RunOutput {
            resolved_toml,
            summary,
            flows,
            links,
            frames,
            transfers,
        })
    }

    /// The per-transfer table of the sized and web flows.
    fn transfers_table(&self) -> Table {
        transfers::transfers_table_of(self.flows.iter().filter_map(|fl| {
            if fl.app.transfers.is_empty() && fl.app.traffic.transfer_bytes().is_none() {
                return None;
            }
            let rows = fl
                .app
                .transfers
                .iter()
                .map(move |t| transfers::TransferRow {
                    bytes: t.bytes,
                    requested: t.requested,
                    started: t.started,
                    connected: t.connected,
                    completed: t.completed,
                });
            Some((fl.model.id.as_str(), rows))
        }))
    }

    /// Data bytes still in the network: queued or in service on links, or in delay lines.
    fn in_network_bytes(&self) -> u64 {
        let mut b = 0;
        for l in self.links.iter().flatten() {
            b += l.data_bytes_queued();
            if let Some(p) = &l.in_service {
                if p.kind == Kind::Data {
                    b += p.wire_bytes as u64;
                }
            }
        }
        for pipe in &self.pipes {
            b += pipe
                .iter()
                .filter(|p| p.kind == Kind::Data)
                .map(|p| p.wire_bytes as u64)
                .sum::<u64>();
        }
        b
    }
}
