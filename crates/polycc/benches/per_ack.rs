//! Per-ACK cost of every controller in `Registry::standard()` in steady state.
//!
//! Each controller first runs a bulk flow through a model bottleneck (20 Mbit/s, 20 ms base RTT,
//! one BDP of drop-tail buffer) while the events it sees are recorded. The measured controller is
//! an identical twin fed the same warm-up, after which the recorded stretch is replayed in a loop
//! (shifted in time and packet number on every lap). One iteration is one ACK: `on_ack`, `cwnd()`,
//! `pacing_rate()`, plus the `on_sent` / `on_loss` calls that fall between two ACKs in the trace
//! (about one send per ACK in steady state). Losses reach the controller as a transport reports
//! them: those an ACK reveals (RFC 9002 packet threshold) form one loss event just before that
//! ACK. The model's own bookkeeping is not measured.
//!
//! A second group, `poly_pool`, measures PolyCC's agent with 1, 2, 4 and 8 members against the
//! same members run side by side without it: on the trace recorded by `poly` with n members, one
//! iteration is one ACK delivered (a) to the agent and (b) to n separately built members, each
//! fed the same events and read (`cwnd()`, `pacing_rate()`) by the benchmark loop. The
//! difference is the agent's own cost: fan-out, reading every member, the fusion, the write-back
//! calibrations and the measurement windows of the filter.
//!
//! Run: `cargo bench -p polycc --bench per_ack` (`-- poly_pool` for the second group only).
//!
//! Instruction counts (steadier than time on a shared machine): with `PER_ACK_COUNT=WHAT:N:ACKS`
//! the binary skips criterion and replays ACKS ACKs of the `poly_pool` case (WHAT = `poly` or
//! `members`, N members) once (`PER_ACK_COUNT=cca:NAME:ACKS`: one controller of the `per_ack`
//! group), so that `perf stat -e instructions` of two runs with different
//! ACKS gives the instructions per ACK as the difference over the difference (set-up cancels):
//! `PER_ACK_COUNT=poly:4:200000 perf stat -e instructions target/release/deps/per_ack-* --bench`
//! (or `valgrind --tool=callgrind` where the PMU is not available; BENCHMARKS.md).

use criterion::{black_box, criterion_group, Criterion, Throughput};
use polycc::estimators::delivery_rate::{DeliveryRateEstimator, PacketDeliveryState};
use polycc::estimators::rtt::RttEstimator;
use polycc::{
    AckEvent, Bytes, CcContext, CcSpec, CongestionControl, Duration, LossEvent, Rate, Registry,
    SentPacket, Time,
};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

const MSS: Bytes = 1200;
const LINK: Rate = Rate::from_mbps(20);
const BASE_RTT: Duration = Duration::from_millis(20);
/// ACKs before the recorded stretch: enough to leave slow start and see several losses.
const WARMUP_ACKS: usize = 20_000;
/// ACKs replayed in a loop while measuring: about 24 s of the flow, several CUBIC loss cycles
/// (K ≈ 3.7 s here), so that a replayed controller keeps meeting losses and stays bounded.
const TRACE_ACKS: usize = 40_000;

#[derive(Clone, Copy)]
enum Event {
    Sent(Time, SentPacket),
    Ack(Time, AckEvent),
    Loss(Time, LossEvent),
}

struct Trace {
    warmup: Vec<Event>,
    steady: Vec<Event>,
}

/// RFC 9002 §6.1.1 packet threshold: a packet is declared lost once a packet sent this many
/// packets after it was acknowledged.
const PACKET_THRESHOLD: u64 = 3;

/// Runs `cc` through the model bottleneck and records what it was told. Losses are reported as
/// a transport does (and as the simulator does): when an ACK shows a dropped packet
/// [`PACKET_THRESHOLD`] packets behind it, every packet so detected is declared lost in one loss
/// event, just before that ACK is processed.
fn record(cc: &mut dyn CongestionControl) -> Trace {
    let ser = LINK.time_to_send(MSS);
    let buffer = BASE_RTT; // one BDP of queueing delay
    let mut now = Time::ZERO;
    let mut link_free = Time::ZERO;
    let mut next_pn = 0u64;
    let mut in_flight: BTreeMap<u64, (Time, PacketDeliveryState)> = BTreeMap::new();
    // Deliveries: (ACK arrival time, pn).
    let mut pending: BinaryHeap<Reverse<(Time, u64)>> = BinaryHeap::new();
    // Tail-dropped packets not yet declared lost, in send order.
    let mut dropped: VecDeque<u64> = VecDeque::new();
    let mut rtt = RttEstimator::new();
    let mut rate = DeliveryRateEstimator::new();
    let mut events = Vec::new();
    let mut acks = 0usize;
    let mut warmup_len = 0;

    while acks < WARMUP_ACKS + TRACE_ACKS {
        // Keep the window full.
        let mut in_flight_bytes = in_flight.len() as Bytes * MSS;
        while in_flight_bytes + MSS <= cc.cwnd() {
            let pn = next_pn;
            next_pn += 1;
            let state = rate.on_sent(now, in_flight_bytes);
            in_flight_bytes += MSS;
            in_flight.insert(pn, (now, state));
            let sent = SentPacket {
                pn,
                bytes: MSS,
                in_flight: in_flight_bytes,
                ..SentPacket::default()
            };
            cc.on_sent(now, &sent);
            events.push(Event::Sent(now, sent));
            let start = link_free.max(now);
            if start - now > buffer {
                dropped.push_back(pn);
            } else {
                link_free = start + ser;
                pending.push(Reverse((link_free + BASE_RTT, pn)));
            }
        }
        let Some(Reverse((t, pn))) = pending.pop() else {
            break;
        };
        now = now.max(t);
        let Some((sent_time, state)) = in_flight.remove(&pn) else {
            continue;
        };
        let prior_in_flight = (in_flight.len() as Bytes + 1) * MSS;
        let mut loss = LossEvent {
            mss: MSS,
            ..LossEvent::default()
        };
        while dropped.front().is_some_and(|d| d + PACKET_THRESHOLD <= pn) {
            let lost = dropped.pop_front().expect("front checked");
            let (lost_sent, _) = in_flight
                .remove(&lost)
                .expect("a dropped packet is in flight");
            loss.lost_bytes += MSS;
            loss.lost_packets += 1;
            loss.largest_lost_pn = lost;
            loss.largest_lost_sent_time = lost_sent;
        }
        let in_flight_bytes = in_flight.len() as Bytes * MSS;
        if loss.lost_packets > 0 {
            loss.in_flight = in_flight_bytes;
            cc.on_loss(now, &loss);
            events.push(Event::Loss(now, loss));
        }
        let sample = now - sent_time;
        rtt.update(now, sample, Duration::ZERO);
        rate.on_packet_acked(now, &state, MSS);
        let ack = AckEvent {
            acked_bytes: MSS,
            acked_packets: 1,
            largest_acked: pn,
            largest_acked_sent_time: sent_time,
            min_rtt_sample: Some(sample),
            max_rtt_sample: Some(sample),
            kernel_mdev: None,
            ack_delay: Duration::ZERO,
            rtt: rtt.snapshot(),
            prior_in_flight,
            in_flight: in_flight_bytes,
            delivered: rate.delivered(),
            rate_sample: rate.finish_ack(rtt.min()),
            app_limited: false,
            mss: MSS,
        };
        cc.on_ack(now, &ack);
        events.push(Event::Ack(now, ack));
        acks += 1;
        if acks == WARMUP_ACKS {
            warmup_len = events.len();
        }
    }
    let steady = events.split_off(warmup_len);
    Trace {
        warmup: events,
        steady,
    }
}

/// How far one replay of the steady trace moves time, packet numbers and the delivered counter,
/// so that every lap starts after everything the previous one referred to.
struct Lap {
    time: Duration,
    pn: u64,
    bytes: Bytes,
}

impl Lap {
    fn of(events: &[Event]) -> Lap {
        let mut t = (Time::MAX, Time::ZERO);
        let mut pn = (u64::MAX, 0u64);
        let mut delivered = (Bytes::MAX, 0);
        let mut see = |at: Time, sent: Time, n: u64| {
            t = (t.0.min(sent), t.1.max(at));
            pn = (pn.0.min(n), pn.1.max(n));
        };
        for ev in events {
            match ev {
                Event::Sent(at, s) => see(*at, *at, s.pn),
                Event::Ack(at, a) => {
                    see(*at, a.largest_acked_sent_time, a.largest_acked);
                    delivered = (delivered.0.min(a.delivered), delivered.1.max(a.delivered));
                }
                Event::Loss(at, l) => see(*at, l.largest_lost_sent_time, l.largest_lost_pn),
            }
        }
        Lap {
            time: (t.1 - t.0) + Duration::from_micros(1),
            pn: pn.1.saturating_sub(pn.0) + 1,
            bytes: delivered.1.saturating_sub(delivered.0) + MSS,
        }
    }

    /// `ev` as it occurs on lap `n` (lap 0 is the recording).
    fn shift(&self, ev: Event, n: u64) -> Event {
        let (dt, dpn, dbytes) = (self.time * n, self.pn * n, self.bytes * n);
        match ev {
            Event::Sent(t, mut s) => {
                s.pn += dpn;
                Event::Sent(t + dt, s)
            }
            Event::Ack(t, mut a) => {
                a.largest_acked += dpn;
                a.largest_acked_sent_time += dt;
                a.delivered += dbytes;
                if let Some(r) = a.rate_sample.as_mut() {
                    r.prior_delivered += dbytes;
                }
                Event::Ack(t + dt, a)
            }
            Event::Loss(t, mut l) => {
                l.largest_lost_pn += dpn;
                l.largest_lost_sent_time += dt;
                Event::Loss(t + dt, l)
            }
        }
    }
}

fn deliver(cc: &mut dyn CongestionControl, ev: &Event) {
    match ev {
        Event::Sent(t, s) => cc.on_sent(*t, s),
        Event::Ack(t, a) => {
            cc.on_ack(*t, a);
            black_box(cc.cwnd());
            black_box(cc.pacing_rate());
        }
        Event::Loss(t, l) => cc.on_loss(*t, l),
    }
}

fn per_ack(c: &mut Criterion) {
    let registry = Registry::standard();
    let ctx = CcContext::new(MSS);
    let mut group = c.benchmark_group("per_ack");
    group.throughput(Throughput::Elements(1));
    for name in registry.names() {
        let build = || {
            registry
                .build(&CcSpec::named(name), &ctx)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        let trace = record(build().as_mut());
        let lap = Lap::of(&trace.steady);
        let losses = trace
            .steady
            .iter()
            .filter(|e| matches!(e, Event::Loss(..)))
            .count();

        let mut cc = build();
        for ev in &trace.warmup {
            deliver(cc.as_mut(), ev);
        }
        let mut i = 0usize;
        let mut laps = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| loop {
                let ev = lap.shift(trace.steady[i], laps);
                deliver(cc.as_mut(), &ev);
                i += 1;
                if i == trace.steady.len() {
                    i = 0;
                    laps += 1;
                }
                if matches!(ev, Event::Ack(..)) {
                    break;
                }
            })
        });
        let t = cc.telemetry();
        eprintln!(
            "{name}: {losses} losses per lap of {TRACE_ACKS} ACKs; after the run cwnd = {} B \
             ({} packets), state {}",
            cc.cwnd(),
            cc.cwnd() / MSS,
            t.state
        );
    }
    group.finish();
}

/// Members of the measured pools, in order: the first n form the pool of size n.
const POOL: [&str; 8] = [
    "bbr", "cubic", "vegas", "copa", "newreno", "bbr3", "westwood", "htcp",
];

fn poly_spec(n: usize) -> CcSpec {
    let copilots: Vec<serde_json::Value> = POOL[1..n].iter().map(|m| (*m).into()).collect();
    serde_json::from_value(serde_json::json!({
        "name": "poly", "pilot": POOL[0], "copilots": copilots, "fuse": "max", "on": "cwnd",
    }))
    .expect("poly spec")
}

/// Runs `events` of `trace` from index `*i` until one ACK was delivered to every controller.
fn replay_one_ack(
    ccs: &mut [Box<dyn CongestionControl>],
    trace: &[Event],
    lap: &Lap,
    i: &mut usize,
    laps: &mut u64,
) {
    loop {
        let ev = lap.shift(trace[*i], *laps);
        for cc in ccs.iter_mut() {
            deliver(cc.as_mut(), &ev);
        }
        *i += 1;
        if *i == trace.len() {
            *i = 0;
            *laps += 1;
        }
        if matches!(ev, Event::Ack(..)) {
            break;
        }
    }
}

/// The first `n` members of [`POOL`], each built alone.
fn build_members(
    registry: &Registry,
    ctx: &CcContext,
    n: usize,
) -> Vec<Box<dyn CongestionControl>> {
    POOL[..n]
        .iter()
        .map(|m| {
            registry
                .build(&CcSpec::named(m), ctx)
                .expect("member builds")
        })
        .collect()
}

/// `PER_ACK_COUNT` mode (module comment): replays `acks` ACKs of the trace `spec` records,
/// through `spec` itself or, with `members = Some(n)`, through the first n members of [`POOL`]
/// built alone.
fn count(registry: &Registry, spec: &CcSpec, members: Option<usize>, acks: usize) {
    let ctx = CcContext::new(MSS);
    let build = || registry.build(spec, &ctx).expect("controller builds");
    let trace = record(build().as_mut());
    let lap = Lap::of(&trace.steady);
    let mut ccs = match members {
        Some(n) => build_members(registry, &ctx, n),
        None => vec![build()],
    };
    for ev in &trace.warmup {
        for cc in ccs.iter_mut() {
            deliver(cc.as_mut(), ev);
        }
    }
    let (mut i, mut laps) = (0usize, 0u64);
    for _ in 0..acks {
        replay_one_ack(&mut ccs, &trace.steady, &lap, &mut i, &mut laps);
    }
    black_box(ccs[0].cwnd());
}

fn poly_pool(c: &mut Criterion) {
    let registry = Registry::standard();
    let ctx = CcContext::new(MSS);
    let mut group = c.benchmark_group("poly_pool");
    group.throughput(Throughput::Elements(1));
    for n in [1usize, 2, 4, 8] {
        let spec = poly_spec(n);
        let build_poly = || registry.build(&spec, &ctx).expect("poly builds");
        let trace = record(build_poly().as_mut());
        let lap = Lap::of(&trace.steady);
        for (what, mut ccs) in [
            ("poly", vec![build_poly()]),
            ("members_alone", build_members(&registry, &ctx, n)),
        ] {
            for ev in &trace.warmup {
                for cc in ccs.iter_mut() {
                    deliver(cc.as_mut(), ev);
                }
            }
            let (mut i, mut laps) = (0usize, 0u64);
            group.bench_function(format!("{n}/{what}"), |b| {
                b.iter(|| replay_one_ack(&mut ccs, &trace.steady, &lap, &mut i, &mut laps))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, per_ack, poly_pool);

fn main() {
    if let Ok(what) = std::env::var("PER_ACK_COUNT") {
        let registry = Registry::standard();
        let parts: Vec<&str> = what.split(':').collect();
        let parsed = match parts.as_slice() {
            [w @ ("poly" | "members"), n, acks] => n
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=POOL.len()).contains(n))
                .zip(acks.parse::<usize>().ok())
                .map(|(n, acks)| (poly_spec(n), (*w == "members").then_some(n), acks)),
            ["cca", name, acks] => registry
                .names()
                .contains(name)
                .then(|| acks.parse::<usize>().ok())
                .flatten()
                .map(|acks| (CcSpec::named(name), None, acks)),
            _ => None,
        };
        let Some((spec, members, acks)) = parsed else {
            eprintln!(
                "PER_ACK_COUNT={what:?}: expected poly|members:N:ACKS with N in 1..=8, or \
                 cca:NAME:ACKS with NAME a registered controller"
            );
            std::process::exit(2);
        };
        count(&registry, &spec, members, acks);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
