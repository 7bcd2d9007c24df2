//! Property test: every controller in `Registry::standard()` keeps its output invariants under
//! arbitrary, internally consistent event sequences.
//!
//! A model transport keeps the in-flight accounting honest (what is acked or lost was sent and not
//! yet acked or lost) while everything else is random: RTT samples from 1 µs to 10 s, rate samples
//! that are sometimes missing, application-limited flags, losses including persistent congestion,
//! receiver feedback, timers, idle periods, and calibrations / hand-overs from a policy.
//!
//! The run is deterministic (fixed seed); set `PROPTEST_CASES` to change the number of cases.

use polycc::estimators::rtt::{RttEstimator, RttSnapshot};
use polycc::{
    AckEvent, Arrival, Bytes, Calibration, CcContext, CcSpec, ClampChange, CongestionControl,
    Duration, Feedback, HandoverState, LossEvent, PacketOutcome, Rate, RateSample, Registry,
    SentPacket, Time,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestRunner};
use std::collections::VecDeque;

/// RFC 9002 §7.2 kMinimumWindow, in datagrams.
const MIN_WINDOW_PACKETS: u64 = polycc::cc::MIN_WINDOW_PACKETS;
/// Cases per controller unless `PROPTEST_CASES` says otherwise.
const DEFAULT_CASES: u32 = 2000;
/// Longest event sequence of one case.
const MAX_ACTIONS: usize = 120;
/// The model sender never has more packets than this outstanding (keeps cases cheap).
const MAX_IN_FLIGHT_PACKETS: usize = 2048;
/// How many times timers may fire back to back at one instant before that counts as a livelock.
const MAX_TIMER_FIRINGS: usize = 64;
const SEED: u64 = 0x0070_6f6c_7963_6363; // "polyccc"

/// Where an ACK's RTT sample comes from.
#[derive(Clone, Copy, Debug)]
enum RttDraw {
    /// Anything from 1 µs to 10 s, unrelated to earlier samples.
    Wild(Duration),
    /// The case's path RTT plus a queueing delay that random-walks by `step`/16 of the path RTT
    /// (kept within 0..4 path RTTs), so that delay-based logic sees trends it can act on.
    Path { step: i8 },
}

#[derive(Clone, Debug)]
enum Action {
    Send {
        packets: usize,
        partial_last: bool,
        respect_cwnd: bool,
        app_limited: bool,
        retransmission: bool,
    },
    Ack {
        packets: usize,
        /// Offset into the in-flight queue of the first acked packet: models reordering.
        skip: usize,
        rtt_sample: Option<RttDraw>,
        /// The receiver's reported hold of the ACK (up to 30 ms, above the usual 25-ms cap).
        ack_delay: Duration,
        rate: Option<(Duration, bool)>,
        app_limited: bool,
    },
    Lose {
        packets: usize,
        persistent: bool,
    },
    Feedback {
        arrivals: usize,
        one_way_delay: Duration,
        clock_offset: u64,
    },
    Wait(Duration),
    /// Jumps to the controller's next timer if it has one.
    RunToTimer,
    Calibrate(Calibration),
    Adopt(HandoverState),
}

/// Raw randomness for one action. Proptest generates and shrinks these cheaply (strategies built
/// from `prop_oneof!` over structs cost far more than the controllers do in a debug build);
/// [`decode`] turns them into an [`Action`]. Shrinking moves every field towards zero, which
/// decodes to the simplest action: one full packet sent.
type RawAction = (u8, u32, u64, u64);

/// Relative weights of the action kinds, in the order [`decode`] matches them.
const KIND_WEIGHTS: [u8; 8] = [6, 8, 2, 1, 4, 1, 1, 1];

/// splitmix64 finaliser: derives further independent-looking values from one field.
fn mix(mut z: u64, salt: u64) -> u64 {
    z = z.wrapping_add(salt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn bit(x: u32, i: u32) -> bool {
    x >> i & 1 == 1
}

/// True with probability about `percent`/100, from 7 bits of `x` starting at bit `i`.
fn chance(x: u32, i: u32, percent: u32) -> bool {
    (x >> i & 0x7f) * 100 < percent * 128
}

/// 1 µs .. 10 s, log-uniform.
fn duration_1us_to_10s(v: u64) -> Duration {
    let frac = (v % 1_000_001) as f64 / 1e6;
    Duration((1e3 * 10f64.powf(7.0 * frac)) as u64)
}

/// Mostly short waits, sometimes long idle periods (up to 10 s).
fn wait(v: u64) -> Duration {
    match v % 8 {
        0..=3 => Duration((v >> 3) % 2_000_000),
        4..=6 => Duration((v >> 3) % 500_000_000),
        _ => Duration((v >> 3) % 10_000_000_001),
    }
}

/// Byte counts a policy might write, including absurd ones.
fn bytes_value(v: u64) -> Bytes {
    match v % 8 {
        0..=4 => (v >> 3) % 200_001,
        5 | 6 => (v >> 3) % (1 << 40),
        _ => u64::MAX,
    }
}

/// Rates a policy might write, including zero and the maximum.
fn rate_value(v: u64) -> Rate {
    match v % 8 {
        0 => Rate::ZERO,
        7 => Rate(u64::MAX),
        _ => Rate(1 + (v >> 3) % 100_000_000_000),
    }
}

fn decode(raw: &RawAction) -> Action {
    let &(kind, x, y, z) = raw;
    let total: u8 = KIND_WEIGHTS.iter().sum();
    let mut k = kind % total;
    let mut idx = 0;
    while k >= KIND_WEIGHTS[idx] {
        k -= KIND_WEIGHTS[idx];
        idx += 1;
    }
    match idx {
        0 => Action::Send {
            packets: 1 + (y % 48) as usize,
            partial_last: bit(x, 0),
            respect_cwnd: !chance(x, 1, 20),
            app_limited: chance(x, 8, 15),
            retransmission: chance(x, 15, 10),
        },
        1 => Action::Ack {
            // Mostly one packet per ACK, so that rounds hold enough ACKs for HyStart++'s and
            // Vegas' sample counts; sometimes up to 16 (stretch ACKs).
            packets: if x >> 28 & 0x7 < 5 {
                1
            } else {
                1 + (y % 16) as usize
            },
            skip: if chance(x, 0, 20) {
                (y >> 8) as usize % 8
            } else {
                0
            },
            rtt_sample: (!chance(x, 7, 10)).then(|| {
                if bit(x, 31) {
                    RttDraw::Wild(duration_1us_to_10s(z))
                } else {
                    RttDraw::Path {
                        step: (z % 17) as i8 - 8,
                    }
                }
            }),
            ack_delay: if y >> 40 & 1 == 1 {
                Duration(mix(z, 2) % 30_000_000)
            } else {
                Duration::ZERO
            },
            rate: (!chance(x, 14, 30)).then(|| (duration_1us_to_10s(mix(z, 1)), chance(x, 21, 20))),
            app_limited: mix(y, 11) % 100 < 15,
        },
        2 => Action::Lose {
            packets: 1 + (y % 8) as usize,
            persistent: chance(x, 0, 20),
        },
        3 => Action::Feedback {
            arrivals: 1 + (y % 16) as usize,
            one_way_delay: duration_1us_to_10s(z),
            clock_offset: x as u64,
        },
        4 => Action::Wait(wait(y)),
        5 => Action::RunToTimer,
        6 => Action::Calibrate(Calibration {
            cwnd: bit(x, 0).then(|| bytes_value(y)),
            ssthresh: bit(x, 1).then(|| bytes_value(z)),
            pacing_rate: bit(x, 2).then(|| rate_value(mix(y, 2))),
            cwnd_clamp: bit(x, 3)
                .then(|| ClampChange::to_bound(bit(x, 4).then(|| bytes_value(mix(z, 3))))),
        }),
        _ => Action::Adopt(HandoverState {
            cwnd: bytes_value(y),
            ssthresh: bit(x, 0).then(|| bytes_value(z)),
            pacing_rate: bit(x, 1).then(|| rate_value(mix(y, 4))),
            bandwidth_estimate: bit(x, 2).then(|| rate_value(mix(y, 5))),
            rtt: RttSnapshot {
                latest: duration_1us_to_10s(mix(z, 6)),
                smoothed: duration_1us_to_10s(mix(z, 7)),
                var: duration_1us_to_10s(mix(z, 8)),
                min: duration_1us_to_10s(mix(z, 9)),
                has_sample: bit(x, 3),
            },
            in_flight: mix(z, 10) % 100_000_000,
        }),
    }
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    pn: u64,
    bytes: Bytes,
    sent: Time,
}

/// A transport with honest bookkeeping around one controller.
struct Model {
    name: String,
    cc: Box<dyn CongestionControl>,
    mss: Bytes,
    now: Time,
    next_pn: u64,
    in_flight: VecDeque<Outstanding>,
    in_flight_bytes: Bytes,
    delivered: Bytes,
    rtt: RttEstimator,
    /// Recently sent packets, for receiver feedback.
    recent: VecDeque<Outstanding>,
    path_rtt: Duration,
    queue_delay: Duration,
}

impl Model {
    fn new(name: &str, mss: Bytes, path_rtt: Duration) -> Self {
        let ctx = CcContext::new(mss);
        let cc = Registry::standard()
            .build(&CcSpec::named(name), &ctx)
            .unwrap_or_else(|e| panic!("{name} must build with default parameters: {e}"));
        Model {
            name: name.to_string(),
            cc,
            mss,
            now: ctx.now,
            next_pn: 0,
            in_flight: VecDeque::new(),
            in_flight_bytes: 0,
            delivered: 0,
            rtt: RttEstimator::new(),
            recent: VecDeque::new(),
            path_rtt,
            queue_delay: Duration::ZERO,
        }
    }

    fn apply(&mut self, a: &Action) {
        match *a {
            Action::Send {
                packets,
                partial_last,
                respect_cwnd,
                app_limited,
                retransmission,
            } => {
                for i in 0..packets {
                    let bytes = if partial_last && i + 1 == packets {
                        (self.mss / 3).max(1)
                    } else {
                        self.mss
                    };
                    if self.in_flight.len() >= MAX_IN_FLIGHT_PACKETS
                        || (respect_cwnd
                            && self.in_flight_bytes.saturating_add(bytes) > self.cc.cwnd())
                    {
                        break;
                    }
                    let p = Outstanding {
                        pn: self.next_pn,
                        bytes,
                        sent: self.now,
                    };
                    self.next_pn += 1;
                    self.in_flight_bytes += bytes;
                    self.in_flight.push_back(p);
                    self.recent.push_back(p);
                    if self.recent.len() > 64 {
                        self.recent.pop_front();
                    }
                    self.cc.on_sent(
                        self.now,
                        &SentPacket {
                            pn: p.pn,
                            bytes,
                            in_flight: self.in_flight_bytes,
                            is_retransmission: retransmission,
                            app_limited,
                        },
                    );
                }
            }
            Action::Ack {
                packets,
                skip,
                rtt_sample,
                ack_delay,
                rate,
                app_limited,
            } => {
                if self.in_flight.is_empty() {
                    return;
                }
                let start = skip % self.in_flight.len();
                let end = (start + packets).min(self.in_flight.len());
                let acked: Vec<Outstanding> = self.in_flight.drain(start..end).collect();
                let acked_bytes: Bytes = acked.iter().map(|p| p.bytes).sum();
                let largest = acked
                    .iter()
                    .max_by_key(|p| p.pn)
                    .copied()
                    .unwrap_or(acked[0]);
                let prior_in_flight = self.in_flight_bytes;
                self.in_flight_bytes -= acked_bytes;
                let prior_delivered = self.delivered;
                self.delivered += acked_bytes;
                let rtt_sample = rtt_sample.map(|d| self.draw_rtt(d));
                if let Some(s) = rtt_sample {
                    self.rtt.update(self.now, s, ack_delay);
                }
                let rate_sample = rate.map(|(interval, is_app_limited)| RateSample {
                    delivered: acked_bytes,
                    interval,
                    delivery_rate: Rate::from_bytes_over(acked_bytes, interval),
                    prior_delivered,
                    is_app_limited,
                    rtt: rtt_sample.unwrap_or(interval),
                });
                if self.cc.wants_packet_detail() {
                    for p in &acked {
                        let o = PacketOutcome {
                            pn: p.pn,
                            bytes: p.bytes,
                            sent_time: p.sent,
                            rtt: rtt_sample,
                        };
                        self.cc.on_packet_acked(self.now, &o);
                    }
                }
                let ev = AckEvent {
                    acked_bytes,
                    acked_packets: acked.len() as u32,
                    largest_acked: largest.pn,
                    largest_acked_sent_time: largest.sent,
                    min_rtt_sample: rtt_sample,
                    max_rtt_sample: rtt_sample,
                    kernel_mdev: None,
                    ack_delay,
                    rtt: self.rtt.snapshot(),
                    prior_in_flight,
                    in_flight: self.in_flight_bytes,
                    delivered: self.delivered,
                    rate_sample,
                    app_limited,
                    mss: self.mss,
                };
                self.cc.on_ack(self.now, &ev);
            }
            Action::Lose {
                packets,
                persistent,
            } => {
                if self.in_flight.is_empty() {
                    return;
                }
                let n = packets.min(self.in_flight.len());
                let lost: Vec<Outstanding> = self.in_flight.drain(..n).collect();
                let lost_bytes: Bytes = lost.iter().map(|p| p.bytes).sum();
                self.in_flight_bytes -= lost_bytes;
                let largest = lost[lost.len() - 1];
                if self.cc.wants_packet_detail() {
                    for p in &lost {
                        let o = PacketOutcome {
                            pn: p.pn,
                            bytes: p.bytes,
                            sent_time: p.sent,
                            rtt: None,
                        };
                        self.cc.on_packet_lost(self.now, &o);
                    }
                }
                self.cc.on_loss(
                    self.now,
                    &LossEvent {
                        lost_bytes,
                        lost_packets: lost.len() as u32,
                        largest_lost_pn: largest.pn,
                        largest_lost_sent_time: largest.sent,
                        persistent_congestion: persistent,
                        in_flight: self.in_flight_bytes,
                        mss: self.mss,
                    },
                );
            }
            Action::Feedback {
                arrivals,
                one_way_delay,
                clock_offset,
            } => {
                if !self.cc.wants_feedback() || self.recent.is_empty() {
                    return;
                }
                let from = self.recent.len().saturating_sub(arrivals);
                let list: Vec<Arrival> = self
                    .recent
                    .range(from..)
                    .enumerate()
                    .map(|(i, p)| Arrival {
                        pn: p.pn,
                        bytes: p.bytes,
                        sent_time: p.sent,
                        // The receiver's clock has an unknown offset; arrivals keep send order.
                        arrival_time: Time(clock_offset)
                            + (p.sent - Time::ZERO)
                            + one_way_delay
                            + Duration(i as u64),
                    })
                    .collect();
                self.cc.on_feedback(self.now, &Feedback { arrivals: &list });
            }
            Action::Wait(d) => self.now += d,
            Action::RunToTimer => {
                if let Some(t) = self.cc.next_timer() {
                    if t > self.now && t - self.now <= Duration::from_secs(100) {
                        self.now = t;
                    }
                }
            }
            Action::Calibrate(c) => self.cc.calibrate(self.now, &c),
            Action::Adopt(h) => self.cc.adopt(self.now, &h),
        }
    }

    fn draw_rtt(&mut self, d: RttDraw) -> Duration {
        match d {
            RttDraw::Wild(s) => s,
            RttDraw::Path { step } => {
                let unit = self.path_rtt.0 / 16;
                let q = self.queue_delay.0 as i128 + step as i128 * unit as i128;
                self.queue_delay = Duration(q.clamp(0, 4 * self.path_rtt.0 as i128) as u64);
                self.path_rtt + self.queue_delay
            }
        }
    }

    /// Fires every timer that is due, as a transport's event loop would.
    fn fire_timers(&mut self) -> Result<(), String> {
        for _ in 0..MAX_TIMER_FIRINGS {
            match self.cc.next_timer() {
                Some(t) if t <= self.now => self.cc.on_timer(self.now),
                _ => return Ok(()),
            }
        }
        Err(format!(
            "{}: timer still due at {:?} after {MAX_TIMER_FIRINGS} firings",
            self.name, self.now
        ))
    }

    fn check(&self) -> Result<(), String> {
        let cc = &self.cc;
        let min = MIN_WINDOW_PACKETS * self.mss;
        if cc.cwnd() < min {
            return Err(format!(
                "{}: cwnd {} below {MIN_WINDOW_PACKETS}·mss = {min}",
                self.name,
                cc.cwnd()
            ));
        }
        if let Some(r) = cc.pacing_rate() {
            if r.as_bps() == 0 {
                return Err(format!("{}: pacing rate is zero", self.name));
            }
        }
        let t = cc.telemetry();
        for (k, v) in t.entries() {
            if v.is_infinite() {
                return Err(format!("{}: telemetry {k} = {v}", self.name));
            }
        }
        // Reading every other output must not panic either.
        let _ = (
            cc.ssthresh(),
            cc.in_slow_start(),
            cc.media_control(),
            cc.accepts_calibration(),
        );
        let _ = cc.handover_state();
        Ok(())
    }
}

/// Runs one case. In a `lossless` case no packet is lost, so that start-up phases (slow start,
/// HyStart++, Vegas' slow-start exit) are explored as well as the states after losses.
fn run_case(
    name: &str,
    (mss, path_rtt, lossless): (Bytes, u64, bool),
    raw: &[RawAction],
) -> Result<(), TestCaseError> {
    let mut m = Model::new(name, mss, duration_1us_to_10s(path_rtt));
    m.check().map_err(TestCaseError::fail)?;
    let actions = raw
        .iter()
        .map(decode)
        .filter(|a| !(lossless && matches!(a, Action::Lose { .. })));
    for (i, a) in actions.enumerate() {
        m.apply(&a);
        m.fire_timers()
            .and_then(|()| m.check())
            .map_err(|e| TestCaseError::fail(format!("after action {i} ({a:?}): {e}")))?;
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

#[test]
fn every_registered_controller_keeps_its_invariants() {
    let registry = Registry::standard();
    let names = registry.names();
    assert!(names.len() >= 3, "registry lost controllers: {names:?}");
    for name in names {
        let config = Config {
            cases: cases(),
            rng_algorithm: RngAlgorithm::ChaCha,
            rng_seed: RngSeed::Fixed(SEED),
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let strategy = (
            prop_oneof![Just(1200u64), Just(1460), Just(1000), Just(536), Just(8960)],
            any::<u64>(),
            any::<bool>(),
            prop::collection::vec(any::<RawAction>(), 1..MAX_ACTIONS),
        );
        let result = runner.run(&strategy, |(mss, path_rtt, lossless, actions)| {
            run_case(name, (mss, path_rtt, lossless), &actions)
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
