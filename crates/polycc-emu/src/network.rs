//! The emulated network: the scenario's links and each flow's access delays, applied to real
//! packets on wall-clock time.
//!
//! It is the simulator's network model run on a different clock. The parts that decide a
//! packet's fate are the simulator's own: the queue disciplines (`polycc_sim::queue`), the
//! service process for constant, scheduled and trace-driven capacity (`polycc_sim::service`),
//! the delay lines with jitter, reordering and ACK aggregation (`polycc_sim::engine::pipe`) and
//! the per-bin link counters. What is here is the route a packet takes, as the simulator's
//! engine builds it: per hop, i.i.d. loss, then the link direction's queue and service, then a
//! delay line of the link's propagation delay, plus the flow's access delay (half its `rtt`
//! each way) on the last hop.
//!
//! Events are handled at their scheduled times, not at the (slightly later) time the loop wakes
//! up, so the model's state stays exact; only the moment a packet is written back to a device
//! carries the wake-up latency ([`crate::run_loop`] measures it).

use crate::frame::{Frame, UNCLASSIFIED};
use polycc::units::{Duration, Time};
use polycc_sim::engine::delay_histogram::DelayHistogram;
use polycc_sim::engine::link::LinkBin;
use polycc_sim::engine::pipe::Pipe;
use polycc_sim::queue::Queue;
use polycc_sim::scenario::{LinkDirModel, Model};
use polycc_sim::service::Server;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One hop of a route: a link direction (or none: a direction without a model is an
/// infinitely fast, lossless-but-for-`loss` wire), its random loss and its delay line.
#[derive(Clone, Debug)]
struct Hop {
    link: u32,
    link_dir: Option<u32>,
    forward: bool,
    loss: f64,
    pipe: u32,
    /// The flow's access delay added to this hop's line (last hop only).
    extra_delay: Duration,
}

/// One direction of a link at run time.
struct LinkDir {
    queue: Queue<Frame>,
    server: Server,
    in_service: Option<Frame>,
    bin: LinkBin,
    last_change: Time,
    tx_bytes: u64,
    drops: u64,
    random_losses: u64,
    sojourn: DelayHistogram,
    sojourn_ns_sum: u128,
    sojourn_count: u64,
}

impl LinkDir {
    fn new(m: &LinkDirModel) -> Self {
        LinkDir {
            queue: Queue::new(m),
            server: Server::new(m.capacity.clone()),
            in_service: None,
            bin: LinkBin::default(),
            last_change: Time::ZERO,
            tx_bytes: 0,
            drops: 0,
            random_losses: 0,
            sojourn: DelayHistogram::new(),
            sojourn_ns_sum: 0,
            sojourn_count: 0,
        }
    }

    /// Accumulates the queue-occupancy integral up to `now`; call before the queue changes.
    fn touch(&mut self, now: Time) {
        let dt = now.0.saturating_sub(self.last_change.0) as u128;
        self.bin.queue_area += dt * self.queue.bytes() as u128;
        self.last_change = self.last_change.max(now);
    }

    fn record_sojourn(&mut self, d: Duration) {
        self.sojourn.record((d.0 / 1000).max(1));
        self.sojourn_ns_sum += d.0 as u128;
        self.sojourn_count += 1;
        self.bin.sojourn_ns_sum += d.0 as u128;
        self.bin.sojourn_count += 1;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    LinkDone(u32),
    Pipe(u32),
    LinkChange(u32),
}

/// Per-flow counters the network keeps (it sees every packet of every flow).
#[derive(Clone, Debug, Default)]
pub struct FlowCounters {
    /// Wire bytes of the flow's data packets delivered to the data receiver's side.
    pub delivered_wire: u64,
    pub delivered_packets: u64,
    pub bin_delivered_wire: u64,
    /// Transport payload bytes of the data packets delivered (duplicates included: the
    /// emulator cannot tell a retransmission), in the bin under way.
    pub bin_delivered_payload: u64,
    /// Data packets that entered the network, and that it dropped (queue or random loss).
    pub data_packets: u64,
    pub data_dropped: u64,
    /// Wire bytes of the data packets that entered the network, and that it dropped.
    pub data_bytes: u64,
    pub data_bytes_dropped: u64,
    /// Reverse-direction packets (ACKs, replies) that entered the network.
    pub reverse_packets: u64,
    /// Queueing delay of delivered data packets, summed over the hops.
    pub queue_delay: DelayHistogram,
    pub queue_ns_sum: u128,
    pub queue_count: u64,
}

/// A link direction's counters for one bin, ready to become a row of `links.parquet`.
#[derive(Clone, Debug)]
pub struct LinkRow {
    /// The link's id, with `:reverse` for its reverse direction (as the simulator names it).
    pub name: String,
    pub capacity_bytes: u64,
    pub bin: LinkBin,
    pub queue_packets: usize,
}

/// A link direction's totals for `summary.json`.
#[derive(Clone, Debug)]
pub struct LinkTotals {
    pub offered_bytes: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub sojourn: DelayHistogram,
    pub sojourn_ns_sum: u128,
    pub sojourn_count: u64,
}

/// The totals as they stood at the run's end. The network goes on carrying packets after it
/// (what was queued drains while the endpoints close), and those are not the run's: counted,
/// they took a link's utilisation above 1.
#[derive(Clone, Debug)]
struct Frozen {
    links: Vec<(String, LinkTotals)>,
    flows: Vec<FlowCounters>,
}

pub struct Network {
    links: Vec<Option<LinkDir>>,
    link_names: Vec<String>,
    pipes: Vec<Pipe<Frame>>,
    /// Route `2f` carries flow `f`'s data, `2f + 1` its reverse traffic; the last two carry
    /// unclassified packets left to right and right to left.
    routes: Vec<Vec<Hop>>,
    /// Per link, its `conditions` and the index of the next one to apply.
    conditions: Vec<(Vec<polycc_sim::scenario::ConditionChange>, usize)>,
    events: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    rng: Pcg64Mcg,
    /// Whether flow `f`'s data travels right to left (`reverse = true`).
    reverse_flow: Vec<bool>,
    pub flows: Vec<FlowCounters>,
    /// Packets written back out, and the total lateness of their writes (wake-up latency).
    pub delivered: u64,
    pub late_ns: u128,
    /// The latest event time handled: the model's clock.
    now: Time,
    last_bin: Time,
    /// The run's end (the scenario's duration).
    end: Time,
    /// The totals at `end`, once a bin reaching it was taken.
    frozen: Option<Frozen>,
}

impl Network {
    pub fn new(model: &Model, seed: u64) -> Self {
        let mut links = Vec::new();
        let mut link_names = Vec::new();
        for l in &model.links {
            links.push(Some(LinkDir::new(&l.forward)));
            links.push(l.reverse.as_ref().map(LinkDir::new));
            link_names.push(l.id.clone());
            link_names.push(format!("{}:reverse", l.id));
        }
        let mut net = Network {
            links,
            link_names,
            pipes: Vec::new(),
            routes: Vec::new(),
            conditions: model
                .links
                .iter()
                .map(|l| (l.conditions.clone(), 0))
                .collect(),
            events: BinaryHeap::new(),
            seq: 0,
            rng: Pcg64Mcg::seed_from_u64(seed),
            reverse_flow: model.flows.iter().map(|f| f.reverse).collect(),
            flows: vec![FlowCounters::default(); model.flows.len()],
            delivered: 0,
            late_ns: 0,
            now: Time::ZERO,
            last_bin: Time::ZERO,
            end: Time::ZERO + model.duration,
            frozen: None,
        };
        for fm in &model.flows {
            let fwd_owd = Duration(fm.rtt.0 / 2);
            let rev_owd = fm.rtt - fwd_owd;
            let data: Vec<usize> = if fm.reverse {
                fm.path.iter().rev().copied().collect()
            } else {
                fm.path.clone()
            };
            let back: Vec<usize> = data.iter().rev().copied().collect();
            let r = net.route(model, &data, !fm.reverse, false, fwd_owd);
            net.routes.push(r);
            let r = net.route(model, &back, !fm.reverse, true, rev_owd);
            net.routes.push(r);
        }
        // Unclassified packets cross every link, in order, with no access delay.
        let all: Vec<usize> = (0..model.links.len()).collect();
        let back: Vec<usize> = all.iter().rev().copied().collect();
        let r = net.route(model, &all, true, false, Duration::ZERO);
        net.routes.push(r);
        let r = net.route(model, &back, true, true, Duration::ZERO);
        net.routes.push(r);
        for (li, (changes, _)) in net.conditions.iter().enumerate() {
            if let Some(c) = changes.first() {
                let at = Time::ZERO + c.at;
                net.seq += 1;
                net.events
                    .push(Reverse((at, net.seq, Ev::LinkChange(li as u32))));
            }
        }
        net
    }

    /// The hops over links `order`, for data (`is_ack = false`) of a flow whose data uses the
    /// links' forward direction when `forward_data`, as the simulator's engine routes them.
    fn route(
        &mut self,
        model: &Model,
        order: &[usize],
        forward_data: bool,
        is_ack: bool,
        owd: Duration,
    ) -> Vec<Hop> {
        let n = order.len();
        order
            .iter()
            .enumerate()
            .map(|(k, &li)| {
                let l = &model.links[li];
                let forward = forward_data != is_ack;
                let link_dir = if forward {
                    Some(2 * li as u32)
                } else {
                    l.reverse.as_ref().map(|_| 2 * li as u32 + 1)
                };
                let (loss, jitter) = if forward {
                    (l.forward.loss, l.forward.jitter)
                } else {
                    (l.reverse_loss, l.reverse_jitter)
                };
                let aggregation = if is_ack {
                    l.forward.ack_aggregation
                } else {
                    None
                };
                let extra_delay = if k + 1 == n { owd } else { Duration::ZERO };
                self.pipes.push(Pipe::new(
                    l.delay + extra_delay,
                    jitter,
                    aggregation,
                    l.jitter_reorder,
                ));
                Hop {
                    link: li as u32,
                    link_dir,
                    forward,
                    loss,
                    pipe: self.pipes.len() as u32 - 1,
                    extra_delay,
                }
            })
            .collect()
    }

    fn push_event(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, ev)));
    }

    /// The time of the next event to handle.
    pub fn next_event(&self) -> Option<Time> {
        self.events.peek().map(|Reverse((t, _, _))| *t)
    }

    /// A packet read from a device at `now`: classified by the caller (`flow`, `data`).
    pub fn inject(&mut self, now: Time, mut frame: Frame) {
        self.now = self.now.max(now);
        let routes = self.routes.len() as u32;
        frame.route = if frame.flow == UNCLASSIFIED {
            routes - 2 + u32::from(!frame.from_left)
        } else {
            2 * frame.flow + u32::from(!frame.data)
        };
        frame.hop = 0;
        frame.entered = now;
        if frame.flow != UNCLASSIFIED {
            let c = &mut self.flows[frame.flow as usize];
            if frame.data {
                c.data_packets += 1;
                c.data_bytes += frame.bytes.len() as u64;
            } else {
                c.reverse_packets += 1;
            }
        }
        self.arrive(frame);
    }

    /// Handles every event due by `now`; packets leaving the network go to `out`.
    pub fn advance(&mut self, now: Time, out: &mut impl FnMut(Frame)) {
        while let Some(&Reverse((t, _, ev))) = self.events.peek() {
            if t > now {
                break;
            }
            self.events.pop();
            self.now = self.now.max(t);
            match ev {
                Ev::LinkDone(ld) => self.link_done(ld),
                Ev::Pipe(p) => self.pipe_due(p, now, out),
                Ev::LinkChange(li) => self.link_change(li),
            }
        }
    }

    fn hop(&self, f: &Frame) -> &Hop {
        &self.routes[f.route as usize][f.hop as usize]
    }

    fn arrive(&mut self, f: Frame) {
        let hop = self.hop(&f).clone();
        if hop.loss > 0.0 && self.rng.gen::<f64>() < hop.loss {
            if let Some(l) = hop.link_dir.and_then(|ld| self.links[ld as usize].as_mut()) {
                l.random_losses += 1;
            }
            self.count_drop(&f);
            return;
        }
        match hop.link_dir {
            Some(ld) => self.enqueue(ld, f),
            None => self.pipe_push(hop.pipe, f),
        }
    }

    fn count_drop(&mut self, f: &Frame) {
        if f.flow != UNCLASSIFIED && f.data {
            let c = &mut self.flows[f.flow as usize];
            c.data_dropped += 1;
            c.data_bytes_dropped += f.bytes.len() as u64;
        }
    }

    fn enqueue(&mut self, ld: u32, f: Frame) {
        let now = self.now;
        let mut dropped = Vec::new();
        let l = self.links[ld as usize]
            .as_mut()
            .expect("route names a link");
        l.touch(now);
        l.queue.enqueue(now, f, &mut |d| dropped.push(d));
        let idle = l.in_service.is_none();
        l.drops += dropped.len() as u64;
        l.bin.drops += dropped.len() as u64;
        for d in &dropped {
            self.count_drop(d);
        }
        if idle {
            self.start_service(ld);
        }
    }

    fn start_service(&mut self, ld: u32) {
        let now = self.now;
        let mut dropped = Vec::new();
        let l = self.links[ld as usize].as_mut().expect("link exists");
        l.touch(now);
        let next = l.queue.dequeue(now, &mut |d| dropped.push(d));
        l.drops += dropped.len() as u64;
        l.bin.drops += dropped.len() as u64;
        let mut done = None;
        if let Some((mut f, sojourn)) = next {
            f.queue_ns += sojourn.0;
            l.record_sojourn(sojourn);
            let t = l.server.serve(now, f.bytes.len() as u64);
            l.in_service = Some(f);
            done = (t != Time::MAX).then_some(t);
        }
        for d in &dropped {
            self.count_drop(d);
        }
        if let Some(t) = done {
            self.push_event(t, Ev::LinkDone(ld));
        }
    }

    fn link_done(&mut self, ld: u32) {
        let l = self.links[ld as usize].as_mut().expect("link exists");
        let Some(f) = l.in_service.take() else { return };
        let bytes = f.bytes.len() as u64;
        l.tx_bytes += bytes;
        l.bin.tx_bytes += bytes;
        let more = !l.queue.is_empty();
        let pipe = self.hop(&f).pipe;
        self.pipe_push(pipe, f);
        if more {
            self.start_service(ld);
        }
    }

    fn pipe_push(&mut self, pipe: u32, f: Frame) {
        let now = self.now;
        if let Some(t) = self.pipes[pipe as usize].push(now, f, &mut self.rng) {
            self.push_event(t, Ev::Pipe(pipe));
        }
    }

    fn pipe_due(&mut self, pipe: u32, wall: Time, out: &mut impl FnMut(Frame)) {
        let now = self.now;
        if !self.pipes[pipe as usize].take_event(now) {
            return;
        }
        while let Some(f) = self.pipes[pipe as usize].pop_due(now) {
            self.leave_hop(f, wall, out);
        }
        if let Some(t) = self.pipes[pipe as usize].schedule_next() {
            self.push_event(t, Ev::Pipe(pipe));
        }
    }

    fn leave_hop(&mut self, mut f: Frame, wall: Time, out: &mut impl FnMut(Frame)) {
        if (f.hop as usize) + 1 < self.routes[f.route as usize].len() {
            f.hop += 1;
            self.arrive(f);
            return;
        }
        if f.flow != UNCLASSIFIED && f.data {
            let c = &mut self.flows[f.flow as usize];
            let bytes = f.bytes.len() as u64;
            c.delivered_wire += bytes;
            c.delivered_packets += 1;
            c.bin_delivered_wire += bytes;
            c.bin_delivered_payload += u64::from(f.payload);
            c.queue_delay.record((f.queue_ns / 1000).max(1));
            c.queue_ns_sum += f.queue_ns as u128;
            c.queue_count += 1;
        }
        self.delivered += 1;
        self.late_ns += wall.0.saturating_sub(self.now.0) as u128;
        out(f);
    }

    /// Applies link `li`'s next loss / delay change to every hop crossing it (packets already
    /// in a delay line keep their exit times), as the simulator does.
    fn link_change(&mut self, li: u32) {
        let (changes, next) = &mut self.conditions[li as usize];
        let Some(&c) = changes.get(*next) else { return };
        *next += 1;
        let after = changes.get(*next).map(|n| Time::ZERO + n.at);
        for route in &mut self.routes {
            for hop in route.iter_mut().filter(|h| h.link == li) {
                hop.loss = if hop.forward { c.loss } else { c.ack_loss };
                self.pipes[hop.pipe as usize].delay = c.delay + hop.extra_delay;
            }
        }
        if let Some(at) = after {
            self.push_event(at, Ev::LinkChange(li));
        }
    }

    /// Whether flow `f`'s data travels right to left.
    pub fn is_reverse_flow(&self, f: u32) -> bool {
        self.reverse_flow[f as usize]
    }

    /// The bin [last bin end, `now`) of every link direction; resets the bin counters.
    pub fn take_link_bins(&mut self, now: Time) -> Vec<LinkRow> {
        let start = self.last_bin;
        self.last_bin = now;
        let mut rows = Vec::new();
        for (i, l) in self.links.iter_mut().enumerate() {
            let Some(l) = l.as_mut() else { continue };
            l.touch(now);
            rows.push(LinkRow {
                name: self.link_names[i].clone(),
                capacity_bytes: l.server.offered_bytes(start, now),
                bin: std::mem::take(&mut l.bin),
                queue_packets: l.queue.packets(),
            });
        }
        if now >= self.end && self.frozen.is_none() {
            self.frozen = Some(Frozen {
                links: self.live_link_totals(self.end),
                flows: self.flows.clone(),
            });
        }
        rows
    }

    /// Each link direction's totals over the run, in the order of [`Self::take_link_bins`]:
    /// as they stood at its end once a bin reaching it was taken, else up to `end`.
    pub fn link_totals(&self, end: Time) -> Vec<(String, LinkTotals)> {
        match &self.frozen {
            Some(f) => f.links.clone(),
            None => self.live_link_totals(end),
        }
    }

    /// Each flow's counters over the run: as they stood at its end once a bin reaching it was
    /// taken, else as they are.
    pub fn flow_totals(&self) -> &[FlowCounters] {
        self.frozen.as_ref().map_or(&self.flows, |f| &f.flows)
    }

    fn live_link_totals(&self, end: Time) -> Vec<(String, LinkTotals)> {
        self.links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let l = l.as_ref()?;
                Some((
                    self.link_names[i].clone(),
                    LinkTotals {
                        offered_bytes: l.server.offered_bytes(Time::ZERO, end),
                        tx_bytes: l.tx_bytes,
                        drops: l.drops,
                        random_losses: l.random_losses,
                        sojourn: l.sojourn.clone(),
                        sojourn_ns_sum: l.sojourn_ns_sum,
                        sojourn_count: l.sojourn_count,
                    },
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::UNCLASSIFIED;
    use polycc_sim::scenario::Origin;

    fn model() -> Model {
        let origin = Origin {
            name: "test.toml".into(),
            base_dir: ".".into(),
        };
        let toml = r#"
name = "drain"
duration = "1s"
bin = "100ms"
[[links]]
id = "l"
rate = "1Mbps"
queue = { kind = "droptail", size = "1000pkt" }
[[flows]]
id = "f"
rtt = "20ms"
"#;
        polycc_sim::load_toml(toml, &origin, &polycc::Registry::standard()).expect("scenario")
    }

    #[test]
    fn totals_stop_at_the_runs_end_while_the_queue_drains_after_it() {
        let mut net = Network::new(&model(), 1);
        // 100 packets of 1250 bytes at 0.5 s: 10 ms each at 1 Mbit/s, so half of them leave
        // after the run's end at 1 s, as a queue drains while the endpoints close.
        let at = Time::ZERO + Duration::from_millis(500);
        for _ in 0..100 {
            net.inject(
                at,
                Frame {
                    bytes: vec![0; 1250],
                    flow: UNCLASSIFIED,
                    data: true,
                    from_left: true,
                    route: 0,
                    hop: 0,
                    entered: at,
                    queue_ns: 0,
                    payload: 0,
                },
            );
        }
        let mut out = 0;
        for b in 1..=20 {
            let now = Time::ZERO + Duration::from_millis(100 * b);
            net.advance(now, &mut |_| out += 1);
            net.take_link_bins(now);
        }
        assert_eq!(out, 100, "every packet is delivered in the end");
        let end = Time::ZERO + Duration::from_secs(1);
        let (_, t) = &net.link_totals(end)[0];
        let served = t.tx_bytes / 1250;
        assert!((49..=51).contains(&served), "{served} packets counted");
        let utilisation = t.tx_bytes as f64 / t.offered_bytes as f64;
        assert!(utilisation <= 1.0, "utilisation {utilisation}");
        assert!(t.sojourn_count <= 51, "{} sojourns", t.sojourn_count);
    }
}
