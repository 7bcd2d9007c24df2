//! BBR v1 / v3 unit tests: explicit event sequences checked against the algorithms' definitions,
//! and a closed loop through the test_support flow.

use super::pacing::{pacing_for, PACING_MARGIN};
use super::scavenger::{self, ScavengerRule};
use super::v1::{self, BbrV1, BbrV1Config, PACING_GAIN_CYCLE};
use super::v3::{self, BbrV3, BbrV3Config, Phase};
use crate::algos::test_support::{loss, Flow};
use crate::cc::{CcContext, CongestionControl, HandoverState};
use crate::estimators::delivery_rate::{DeliveryRateEstimator, PacketDeliveryState};
use crate::estimators::rtt::RttSnapshot;
use crate::signals::{AckEvent, LossEvent, RateSample, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use std::collections::HashMap;

const MSS: Bytes = 1000;
const BW: Rate = Rate::from_mbps(12); // 1.5 packets of 1000 B per ms
const RTT: Duration = Duration::from_millis(10); // BDP = 15 000 B = 15 packets

fn v1_with_seed(seed: u64) -> BbrV1 {
    v1_with_quantum(seed, None)
}

fn v1_with_quantum(seed: u64, send_quantum_packets: Option<u64>) -> BbrV1 {
    BbrV1::new(
        &CcContext::new(MSS),
        BbrV1Config {
            seed,
            cwnd_gain: v1::CWND_GAIN,
            startup_gain: v1::HIGH_GAIN,
            send_quantum_packets,
            extra_acked: false,
            scavenger: None,
        },
    )
}

fn v3_with_seed(seed: u64) -> BbrV3 {
    BbrV3::new(
        &CcContext::new(MSS),
        BbrV3Config {
            seed,
            ..BbrV3Config::default()
        },
    )
}

fn snapshot(rtt: Duration) -> RttSnapshot {
    RttSnapshot {
        latest: rtt,
        smoothed: rtt,
        var: Duration::ZERO,
        min: rtt,
        has_sample: true,
    }
}

/// A model path for explicit event sequences: every millisecond one packet is sent and the packet
/// sent one path RTT earlier is acknowledged, with a delivery-rate sample of `bw` and the RTT
/// `rtt` (≥ the path RTT, to model queueing). In flight is whatever the test says it is.
struct Path {
    now: Time,
    next_pn: u64,
    path_rtt: Duration,
    rtt: Duration,
    bw: Rate,
    in_flight: Bytes,
    delivered: Bytes,
    /// Every other ACK's RTT sample is `rtt + 2·jitter`: a mean deviation of about `jitter`.
    jitter: Duration,
    /// Every other ACK also covers an earlier packet the receiver held this long (a delayed
    /// ACK): its largest RTT sample grows by `held`, its smallest does not.
    held: Duration,
}

impl Path {
    fn new() -> Self {
        Path {
            now: Time::ZERO,
            next_pn: 0,
            path_rtt: RTT,
            rtt: RTT,
            bw: BW,
            in_flight: 15 * MSS,
            delivered: 0,
            jitter: Duration::ZERO,
            held: Duration::ZERO,
        }
    }

    fn lag(&self) -> u64 {
        self.path_rtt.as_nanos() / 1_000_000
    }

    fn ack_event(&mut self) -> AckEvent {
        let pn = self.next_pn.saturating_sub(self.lag());
        self.delivered += MSS;
        let sample = if pn % 2 == 1 {
            self.rtt + self.jitter * 2
        } else {
            self.rtt
        };
        AckEvent {
            acked_bytes: MSS,
            acked_packets: 1,
            largest_acked: pn,
            largest_acked_sent_time: self.now - self.path_rtt,
            min_rtt_sample: Some(sample),
            max_rtt_sample: Some(if pn % 2 == 1 {
                sample + self.held
            } else {
                sample
            }),
            kernel_mdev: None,
            ack_delay: Duration::ZERO,
            rtt: snapshot(self.rtt),
            prior_in_flight: self.in_flight + MSS,
            in_flight: self.in_flight,
            delivered: self.delivered,
            rate_sample: Some(RateSample {
                delivered: self.bw.bytes_in(self.rtt),
                interval: self.rtt,
                delivery_rate: self.bw,
                prior_delivered: self.delivered.saturating_sub(self.bw.bytes_in(self.rtt)),
                is_app_limited: false,
                rtt: self.rtt,
            }),
            app_limited: false,
            mss: MSS,
        }
    }

    /// One millisecond: a send, then an ACK.
    fn step(&mut self, cc: &mut dyn CongestionControl) {
        self.now += Duration::from_millis(1);
        cc.on_sent(
            self.now,
            &SentPacket {
                pn: self.next_pn,
                bytes: MSS,
                in_flight: self.in_flight + MSS,
                ..SentPacket::default()
            },
        );
        self.next_pn += 1;
        let ev = self.ack_event();
        cc.on_ack(self.now, &ev);
    }

    fn run(&mut self, cc: &mut dyn CongestionControl, ms: u64) {
        for _ in 0..ms {
            self.step(cc);
        }
    }

    /// The loss of a packet sent just now (after any recovery epoch began).
    fn lose_fresh(&mut self, cc: &mut dyn CongestionControl, in_flight_after: Bytes) {
        let pn = self.next_pn;
        self.next_pn += 1;
        cc.on_sent(
            self.now,
            &SentPacket {
                pn,
                bytes: MSS,
                in_flight: self.in_flight + MSS,
                ..SentPacket::default()
            },
        );
        let mut l: LossEvent = loss(pn, self.now, MSS, MSS);
        l.in_flight = in_flight_after;
        cc.on_loss(self.now, &l);
    }

    /// A hand-over that seeds BtlBw = `BW` and min RTT = `RTT`: BBR goes straight to PROBE_BW.
    fn adopt(&self, cc: &mut dyn CongestionControl) {
        cc.adopt(
            self.now,
            &HandoverState {
                cwnd: 30 * MSS,
                bandwidth_estimate: Some(BW),
                rtt: snapshot(RTT),
                ..HandoverState::default()
            },
        );
    }
}

fn state(cc: &dyn CongestionControl) -> &'static str {
    cc.telemetry().state
}

fn approx(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

// ---------------------------------------------------------------------------------------------
// BBR v1

#[test]
fn v1_initial_pacing_is_high_gain_times_initial_window_over_srtt() {
    let mut cc = v1_with_seed(1);
    // Before any RTT sample Linux assumes 1 ms: 10 packets of 1000 B per ms · 2.885 · 0.99.
    let r0 = cc.pacing_rate().unwrap().as_bps() as f64;
    let expected = 10_000.0 * 8.0 / 1e-3 * v1::HIGH_GAIN * (1.0 - PACING_MARGIN);
    assert!(approx(r0, expected, 1e-6), "{r0} vs {expected}");
    // The first ACK with an RTT sample (40 ms) re-initialises it from srtt: 10 packets of
    // 1000 B / 40 ms · 2.885 · 0.99 = 5.71 Mbit/s.
    let mut p = Path::new();
    p.rtt = Duration::from_millis(40);
    let mut ev = p.ack_event();
    ev.rate_sample = None;
    cc.on_ack(Time(1), &ev);
    let r = cc.pacing_rate().unwrap().as_mbps_f64();
    let expected = 10_000.0 * 8.0 / 0.040 * v1::HIGH_GAIN * 0.99 / 1e6;
    assert!(approx(r, expected, 1e-3), "{r} vs {expected}");
    assert_eq!(state(&cc), "startup");
    assert!(cc.in_slow_start());
}

#[test]
fn v1_startup_exits_after_three_rounds_without_growth_then_drains() {
    let mut cc = v1_with_seed(1);
    let mut p = Path::new();
    // A constant delivery rate: the first round sets full_bw, three more without 25 % growth
    // fill the pipe.
    p.run(&mut cc, 25);
    assert_eq!(state(&cc), "startup");
    p.run(&mut cc, 20);
    assert_eq!(cc.telemetry().get("full_bw_reached"), Some(1.0));
    // In flight (15 packets) is at the BDP, so DRAIN ends at once: PROBE_BW.
    assert_eq!(state(&cc), "probe_bw");
    assert_ne!(cc.cycle_idx(), 1, "PROBE_BW never starts in the 3/4 phase");
    // cwnd converges to 2·BDP + 3 TSO bursts (2 packets each at 12 Mbit/s), even: 30 + 6 = 36
    // packets (plus 2 in the 5/4 phase).
    p.run(&mut cc, 100);
    let w = cc.cwnd() / MSS;
    assert!(w == 36 || w == 38, "cwnd {w} packets");
    assert_eq!(cc.telemetry().get("bdp_bytes"), Some(15_000.0));
}

#[test]
fn v1_starting_phase_is_random_never_three_quarters_and_seeded() {
    let mut seen = [0u32; 8];
    for seed in 0..400 {
        let mut cc = v1_with_seed(seed);
        Path::new().adopt(&mut cc);
        assert_eq!(state(&cc), "probe_bw");
        seen[cc.cycle_idx()] += 1;
        // Same seed, same phase.
        let mut again = v1_with_seed(seed);
        Path::new().adopt(&mut again);
        assert_eq!(again.cycle_idx(), cc.cycle_idx());
    }
    assert_eq!(seen[1], 0, "{seen:?}");
    // Linux: cycle_idx = 7 − rand(7), then advanced: phases 2..7 and 0, equally likely.
    for (i, n) in seen.iter().enumerate().filter(|(i, _)| *i != 1) {
        assert!((35..=80).contains(n), "phase {i}: {n} of 400 ({seen:?})");
    }
}

#[test]
fn v1_gain_cycle_phases_last_one_min_rtt_each() {
    let mut cc = v1_with_seed(3);
    let mut p = Path::new();
    p.adopt(&mut cc);
    // In flight well above 5/4·BDP, so the 5/4 phase ends on time, and above BDP, so the 3/4
    // phase runs its full min RTT too.
    p.in_flight = 40 * MSS;
    let mut phases: Vec<(usize, Time, f64)> = Vec::new();
    for _ in 0..400 {
        p.step(&mut cc);
        let idx = cc.cycle_idx();
        if phases.last().is_none_or(|(i, _, _)| *i != idx) {
            let rate = cc.pacing_rate().unwrap().as_bps() as f64;
            phases.push((idx, p.now, rate));
        }
    }
    assert!(phases.len() > 20, "{phases:?}");
    for w in phases.windows(2) {
        let ((a, t0, rate), (b, t1, _)) = (w[0], w[1]);
        assert_eq!(b, (a + 1) % 8, "phases advance in order");
        // A phase ends on the first ACK more than min RTT (10 ms) after it began.
        let len = (t1 - t0).as_millis_f64();
        assert!((10.0..=11.0).contains(&len), "phase {a} lasted {len} ms");
        let expected = BW.as_bps() as f64 * PACING_GAIN_CYCLE[a] * 0.99;
        assert!(
            approx(rate, expected, 1e-6),
            "phase {a}: {rate} vs {expected}"
        );
    }
}

#[test]
fn v1_three_quarters_phase_ends_early_when_the_queue_is_drained() {
    let mut cc = v1_with_seed(3);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.in_flight = 40 * MSS;
    while cc.cycle_idx() != 1 {
        p.step(&mut cc);
    }
    // In flight at or below BDP + budget (15 + 6 packets): the 3/4 phase ends on the next ACK.
    p.in_flight = 20 * MSS;
    p.step(&mut cc);
    assert_eq!(cc.cycle_idx(), 2);
}

/// PROBE_BW with in flight above every target, stepped into a unity-gain phase: cwnd is then
/// exactly the in-flight target 2·BDP + budget.
fn v1_unity_phase_cwnd_packets(send_quantum_packets: Option<u64>) -> u64 {
    let mut cc = v1_with_quantum(3, send_quantum_packets);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.in_flight = 40 * MSS;
    while cc.cycle_idx() < 2 {
        p.step(&mut cc);
    }
    p.run(&mut cc, 3);
    assert!(cc.cycle_idx() >= 2, "still in a unity phase");
    cc.cwnd() / MSS
}

#[test]
fn v1_quantization_budget_is_three_tso_goals_or_three_fixed_quanta() {
    // Pacing at 12 Mbit/s: Linux's TSO goal is 1 ms of it (1.5 kB, one 1000-B packet) but at
    // least 2 packets above 1.2 Mbit/s, so the budget is 6 packets: 2·15 + 6 = 36 (even).
    assert_eq!(v1_unity_phase_cwnd_packets(None), 36);
    // ns-3's one-segment send quantum: 2·15 + 3 = 33, rounded up to even as Linux does: 34.
    assert_eq!(
        v1_unity_phase_cwnd_packets(Some(v1::NS3_SEND_QUANTUM_PACKETS)),
        34
    );
    // A larger fixed quantum (4 packets: 30 + 12).
    assert_eq!(v1_unity_phase_cwnd_packets(Some(4)), 42);
}

#[test]
fn v1_extra_acked_adds_the_aggregated_excess_to_the_window_when_on() {
    // In a unity phase the target is 2·BDP + budget = 36 packets (above). With `extra_acked`,
    // smooth ACKs (one packet a millisecond, 1.5 due) show one packet of excess per epoch: 30 +
    // 1 + 6, rounded up to even, is 38. Then 20 ACKs arrive at once after 10 ms of silence: the
    // allowance becomes the 20 packets of the burst (the epoch restarts on its first ACK, as 15
    // packets were due by then) and the target 30 + 20 + 6 = 56; without it, the window stays
    // at 36.
    for (extra_acked, smooth, want) in [(false, 36, 36), (true, 38, 56)] {
        let mut cc = BbrV1::new(
            &CcContext::new(MSS),
            BbrV1Config {
                seed: 3,
                cwnd_gain: v1::CWND_GAIN,
                startup_gain: v1::HIGH_GAIN,
                send_quantum_packets: None,
                extra_acked,
                scavenger: None,
            },
        );
        let mut p = Path::new();
        p.adopt(&mut cc);
        p.in_flight = 40 * MSS;
        while cc.cycle_idx() < 2 {
            p.step(&mut cc);
        }
        p.run(&mut cc, 3);
        assert_eq!(cc.cwnd() / MSS, smooth, "extra_acked = {extra_acked}");
        p.now += Duration::from_millis(10);
        for _ in 0..20 {
            let ev = p.ack_event();
            cc.on_ack(p.now, &ev);
        }
        p.run(&mut cc, 20);
        assert!(cc.cycle_idx() >= 2, "still in a unity phase");
        assert_eq!(cc.cwnd() / MSS, want, "extra_acked = {extra_acked}");
        let t = cc.telemetry().get("extra_acked_bytes");
        assert_eq!(t, extra_acked.then_some(20.0 * MSS as f64));
    }
}

#[test]
fn v1_three_quarters_phase_drains_to_bdp_plus_the_budget() {
    // The 3/4 phase ends once the in flight before an ACK is at most BDP + budget, rounded up to
    // even: 15 + 6 → 22 packets with Linux's budget, 15 + 3 → 18 with ns-3's quantum. 22 packets
    // end it only with Linux's budget: the budget is the queue BBR leaves standing.
    for (quantum, prior_in_flight, ends) in [
        (None, 22, true),
        (None, 23, false),
        (Some(v1::NS3_SEND_QUANTUM_PACKETS), 22, false),
        (Some(v1::NS3_SEND_QUANTUM_PACKETS), 19, false),
        (Some(v1::NS3_SEND_QUANTUM_PACKETS), 18, true),
    ] {
        let mut cc = v1_with_quantum(3, quantum);
        let mut p = Path::new();
        p.adopt(&mut cc);
        p.in_flight = 40 * MSS;
        while cc.cycle_idx() != 1 {
            p.step(&mut cc);
        }
        // The ACK reports one packet less in flight than before it.
        p.in_flight = (prior_in_flight - 1) * MSS;
        p.step(&mut cc);
        assert_eq!(
            cc.cycle_idx() == 2,
            ends,
            "quantum {quantum:?}, {prior_in_flight} packets in flight before the ACK"
        );
    }
}

#[test]
fn v1_packet_conservation_in_recovery_then_restore() {
    let mut cc = v1_with_seed(5);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.in_flight = 40 * MSS;
    p.run(&mut cc, 50);
    let before = cc.cwnd();
    assert!(before >= 36 * MSS, "{before}");
    // A loss with 20 packets left in flight: cwnd = in flight (Linux: in flight + acked on the
    // first recovery ACK).
    p.lose_fresh(&mut cc, 20 * MSS);
    assert_eq!(cc.cwnd(), 20 * MSS);
    assert_eq!(cc.telemetry().get("ca_state"), Some(1.0));
    // ACKs of packets sent before the loss: cwnd = max(cwnd, in flight + acked).
    p.in_flight = 22 * MSS;
    let mut ev = p.ack_event();
    ev.largest_acked_sent_time = p.now - Duration::from_millis(5);
    cc.on_ack(p.now, &ev);
    assert_eq!(cc.cwnd(), 23 * MSS);
    // A second loss in the same epoch only subtracts the lost bytes.
    let mut l = loss(0, p.now - Duration::from_millis(6), MSS, MSS);
    l.in_flight = 21 * MSS;
    cc.on_loss(p.now, &l);
    assert_eq!(cc.cwnd(), 22 * MSS);
    // The first ACK of a packet sent after the recovery began restores the saved window, and
    // the ordinary rule caps it at the target again.
    p.now += Duration::from_millis(11);
    let mut ev = p.ack_event();
    ev.largest_acked_sent_time = p.now;
    cc.on_ack(p.now, &ev);
    assert_eq!(cc.telemetry().get("ca_state"), Some(0.0));
    assert!(cc.cwnd() >= before - 2 * MSS, "{} vs {before}", cc.cwnd());
}

#[test]
fn v1_probe_rtt_after_10s_without_a_new_min_holds_4_packets_for_200ms() {
    let mut cc = v1_with_seed(5);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.in_flight = 30 * MSS;
    p.rtt = RTT + Duration::from_millis(2); // queueing: no sample refreshes the 10 ms minimum
    p.run(&mut cc, 9_990);
    assert_eq!(state(&cc), "probe_bw");
    let before = cc.cwnd();
    p.run(&mut cc, 11);
    assert_eq!(state(&cc), "probe_rtt");
    assert_eq!(cc.cwnd(), 4 * MSS);
    assert_eq!(cc.pacing_rate(), Some(pacing_for(BW, 1.0)));
    // The window drains to 4 packets; PROBE_RTT then lasts 200 ms and at least a round.
    p.in_flight = 4 * MSS;
    let entered = p.now;
    while state(&cc) == "probe_rtt" {
        p.step(&mut cc);
        assert!(p.now - entered < Duration::from_millis(300));
    }
    let held = (p.now - entered).as_millis_f64();
    assert!((200.0..=202.0).contains(&held), "held {held} ms");
    assert_eq!(state(&cc), "probe_bw");
    // The min-RTT filter took the 12 ms sample at expiry, the window was restored, and the next
    // PROBE_RTT is 10 s away.
    assert_eq!(cc.telemetry().get("min_rtt_ms"), Some(12.0));
    assert!(cc.cwnd() >= before.min(38 * MSS) - 2 * MSS, "{}", cc.cwnd());
    p.in_flight = 30 * MSS;
    p.run(&mut cc, 9_900);
    assert_eq!(state(&cc), "probe_bw");
}

#[test]
fn v1_btlbw_is_a_ten_round_max_and_ignores_lower_app_limited_samples() {
    let mut cc = v1_with_seed(5);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.run(&mut cc, 30);
    // Lower samples: the 12 Mbit/s peak is remembered for 10 rounds (10 ms each here)…
    p.bw = Rate::from_mbps(6);
    p.run(&mut cc, 60);
    assert_eq!(cc.telemetry().get("btl_bw_mbps"), Some(12.0));
    p.run(&mut cc, 60);
    assert_eq!(cc.telemetry().get("btl_bw_mbps"), Some(6.0));
    // … and an app-limited sample counts only when it raises the maximum.
    let mut ev = p.ack_event();
    let rs = ev.rate_sample.as_mut().unwrap();
    rs.is_app_limited = true;
    rs.delivery_rate = Rate::from_mbps(3);
    cc.on_ack(p.now, &ev);
    assert_eq!(cc.telemetry().get("btl_bw_mbps"), Some(6.0));
    let mut ev = p.ack_event();
    let rs = ev.rate_sample.as_mut().unwrap();
    rs.is_app_limited = true;
    rs.delivery_rate = Rate::from_mbps(20);
    cc.on_ack(p.now, &ev);
    assert_eq!(cc.telemetry().get("btl_bw_mbps"), Some(20.0));
}

/// Adds delivery-rate samples to the ACKs of the test_support flow, as a transport would.
struct WithRateSamples {
    cc: Box<dyn CongestionControl>,
    est: DeliveryRateEstimator,
    sent: HashMap<u64, PacketDeliveryState>,
}

impl CongestionControl for WithRateSamples {
    fn name(&self) -> &str {
        self.cc.name()
    }
    fn on_sent(&mut self, now: Time, s: &SentPacket) {
        let st = self.est.on_sent(now, s.in_flight - s.bytes);
        self.sent.insert(s.pn, st);
        self.cc.on_sent(now, s);
    }
    fn on_ack(&mut self, now: Time, a: &AckEvent) {
        let mut a = *a;
        if let Some(st) = self.sent.remove(&a.largest_acked) {
            self.est.on_packet_acked(now, &st, a.acked_bytes);
            a.rate_sample = self.est.finish_ack(a.rtt.min);
        }
        self.cc.on_ack(now, &a);
    }
    fn on_loss(&mut self, now: Time, l: &LossEvent) {
        self.cc.on_loss(now, l);
    }
    fn cwnd(&self) -> Bytes {
        self.cc.cwnd()
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.cc.pacing_rate()
    }
    fn calibrate(&mut self, now: Time, c: &crate::cc::Calibration) {
        self.cc.calibrate(now, c);
    }
    fn telemetry(&self) -> crate::cc::Telemetry {
        self.cc.telemetry()
    }
}

#[test]
fn startup_doubles_the_window_and_delivery_rate_each_round_closed_loop() {
    // No bottleneck on the test_support flow: STARTUP's gain makes every round deliver twice
    // the previous one, as slow start does, and BtlBw follows the delivery rate.
    for v3 in [false, true] {
        let inner: Box<dyn CongestionControl> = if v3 {
            Box::new(v3_with_seed(1))
        } else {
            Box::new(v1_with_seed(1))
        };
        let mut cc = WithRateSamples {
            cc: inner,
            est: DeliveryRateEstimator::new(),
            sent: HashMap::new(),
        };
        let mut flow = Flow::new(MSS, Duration::from_millis(20));
        let mut rates = Vec::new();
        for _ in 0..6 {
            flow.run_rtts(&mut cc, 1);
            let key = if v3 { "max_bw_mbps" } else { "btl_bw_mbps" };
            rates.push(cc.telemetry().get(key).unwrap());
        }
        assert_eq!(cc.telemetry().state, "startup");
        // 10 packets initially: 80 after 3 rounds, 640 after 6.
        assert_eq!(cc.cwnd(), 640 * MSS, "v3={v3}");
        for w in rates.windows(2).skip(1) {
            assert!(approx(w[1] / w[0], 2.0, 0.05), "v3={v3}: {rates:?}");
        }
        for r in &rates[1..] {
            assert!(r.is_finite() && *r > 0.0);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// BBR v3

#[test]
fn v3_probe_bw_cycle_cruise_refill_up_down() {
    let mut cc = v3_with_seed(9);
    let mut p = Path::new();
    p.adopt(&mut cc);
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Cruise));
    let gains = |cc: &BbrV3| {
        let t = cc.telemetry();
        (t.get("pacing_gain").unwrap(), t.get("cwnd_gain").unwrap())
    };
    assert_eq!(gains(&cc), (1.0, 2.0));
    // The next probe comes 2–3 s after the cycle began, or after a Reno-like number of rounds:
    // min(63, target in flight in packets) = 15 rounds of 10 ms here, less a random head start
    // of 0–1 rounds.
    p.in_flight = 15 * MSS;
    let start = p.now;
    while cc.mode() == v3::Mode::ProbeBw(Phase::Cruise) {
        p.step(&mut cc);
    }
    let waited = (p.now - start).as_millis_f64();
    assert!((120.0..=160.0).contains(&waited), "cruised {waited} ms");
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Refill));
    assert_eq!(gains(&cc), (1.0, 2.0));
    // One round of REFILL, then UP at 5/4 with cwnd gain 2.25.
    p.run(&mut cc, 11);
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Up));
    assert_eq!(gains(&cc), (1.25, 2.25));
    assert_eq!(cc.pacing_rate(), Some(pacing_for(BW, v3::PROBE_UP_GAIN)));
    // No growth in the delivery rate for 3 rounds: the pipe is full, go DOWN at 0.91.
    p.run(&mut cc, 45);
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Down));
    assert_eq!(gains(&cc), (v3::PROBE_DOWN_GAIN, 2.0));
    // DOWN holds while in flight is above the BDP (15 packets), and ends when it drains below.
    p.in_flight = 16 * MSS;
    p.run(&mut cc, 5);
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Down));
    p.in_flight = 12 * MSS;
    p.step(&mut cc);
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Cruise));
}

#[test]
fn v3_loss_rounds_cut_the_lower_bounds_by_beta() {
    let mut cc = v3_with_seed(9);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.in_flight = 30 * MSS;
    // The delivery rate drops to 6 Mbit/s (cross traffic), then a loss while cruising. At the
    // end of that loss round inflight_lo = max(delivered in the round, 0.7·cwnd) and
    // bw_lo = max(latest round's bw, 0.7·max_bw).
    p.bw = Rate::from_mbps(6);
    p.run(&mut cc, 30);
    let cwnd = cc.cwnd();
    assert_eq!(
        cc.telemetry().get("inflight_lo_bytes").map(f64::is_nan),
        Some(true)
    );
    p.lose_fresh(&mut cc, 29 * MSS);
    p.run(&mut cc, 12);
    let t = cc.telemetry();
    let lo = t.get("inflight_lo_bytes").unwrap();
    assert_eq!(lo, (cwnd as f64 * 0.7).floor(), "cwnd {cwnd}: {t:?}");
    assert!(
        approx(t.get("bw_lo_mbps").unwrap(), 12.0 * 0.7, 1e-6),
        "{t:?}"
    );
    assert!(approx(t.get("bw_mbps").unwrap(), 8.4, 1e-6));
    assert!(cc.cwnd() as f64 <= lo);
    assert_eq!(
        cc.pacing_rate(),
        Some(pacing_for(Rate::from_bps(8_400_000), 1.0))
    );
}

#[test]
fn v3_loss_above_threshold_while_probing_sets_inflight_hi() {
    let mut cc = v3_with_seed(9);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.in_flight = 15 * MSS;
    while cc.mode() != v3::Mode::ProbeBw(Phase::Up) {
        p.step(&mut cc);
    }
    assert_eq!(cc.inflight_hi(), None);
    // Probing: in flight rises to 40 packets, and a packet sent with 41 in flight is lost:
    // 1 of 41 is above 2 %. inflight_hi is the level at which the loss rate crossed 2 %: 40
    // packets before the lost one, none lost before it, so budget ceil(40 000 B · 0.02) = 800 B
    // and prefix 800 / 0.98 = 816 B: 40 816 B. Probing stops: DOWN.
    p.in_flight = 40 * MSS;
    p.run(&mut cc, 3);
    p.lose_fresh(&mut cc, 40 * MSS);
    assert_eq!(cc.inflight_hi(), Some(40_816));
    assert_eq!(cc.mode(), v3::Mode::ProbeBw(Phase::Down));
    assert!(cc.cwnd() <= 40_816);
    // Only once per probe: a further loss leaves it.
    p.lose_fresh(&mut cc, 40 * MSS);
    assert_eq!(cc.inflight_hi(), Some(40_816));
}

#[test]
fn v3_probe_rtt_every_5s_at_half_the_bdp() {
    let mut cc = v3_with_seed(9);
    let mut p = Path::new();
    p.path_rtt = Duration::from_millis(40); // BDP = 60 packets; half = 30
    p.adopt(&mut cc);
    cc.adopt(
        p.now,
        &HandoverState {
            cwnd: 100 * MSS,
            bandwidth_estimate: Some(BW),
            rtt: snapshot(Duration::from_millis(40)),
            ..HandoverState::default()
        },
    );
    p.rtt = Duration::from_millis(42);
    p.in_flight = 60 * MSS;
    p.run(&mut cc, 4_990);
    assert_ne!(cc.telemetry().state, "probe_rtt");
    p.run(&mut cc, 12);
    assert_eq!(cc.telemetry().state, "probe_rtt");
    assert_eq!(cc.cwnd(), 30 * MSS);
    p.in_flight = 30 * MSS;
    let entered = p.now;
    while cc.telemetry().state == "probe_rtt" {
        p.step(&mut cc);
    }
    let held = (p.now - entered).as_millis_f64();
    assert!((200.0..=202.0).contains(&held), "held {held} ms");
    // Back to PROBE_BW cruising; the 10-s min RTT is still the 40 ms one.
    assert_eq!(cc.telemetry().state, "probe_bw_cruise");
    assert_eq!(cc.telemetry().get("min_rtt_ms"), Some(40.0));
}

#[test]
fn v3_extra_acked_measures_ack_aggregation() {
    let mut cc = v3_with_seed(9);
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.run(&mut cc, 50);
    let base = cc.telemetry().get("extra_acked_bytes").unwrap();
    // 20 packets acked at once after 10 ms of silence: 15 were expected at 12 Mbit/s over
    // 10 ms… the epoch began at the first of them, so the excess is 20 − 1.5 = 18.5 packets at
    // most; it must exceed what smooth ACKs showed.
    p.now += Duration::from_millis(10);
    for _ in 0..20 {
        let ev = p.ack_event();
        cc.on_ack(p.now, &ev);
    }
    let agg = cc.telemetry().get("extra_acked_bytes").unwrap();
    assert!(agg >= base + 15.0 * MSS as f64, "{base} -> {agg}");
}

#[test]
fn parameters_are_validated() {
    use crate::registry::{CcSpec, Registry};
    let r = Registry::standard();
    let ctx = CcContext::new(MSS);
    let spec = |name: &str, json: serde_json::Value| CcSpec::Table {
        name: name.into(),
        params: json.as_object().unwrap().clone(),
    };
    assert!(r
        .build(
            &spec("bbr", serde_json::json!({"seed": 4, "cwnd_gain": 2.5})),
            &ctx
        )
        .is_ok());
    assert!(r
        .build(&spec("bbr", serde_json::json!({"cwnd_gain": 0.5})), &ctx)
        .is_err());
    assert!(r
        .build(&spec("bbr", serde_json::json!({"beta": 0.5})), &ctx)
        .is_err());
    for (quantum, ok) in [(0, false), (1, true), (127, true), (128, false)] {
        let built = r.build(
            &spec("bbr", serde_json::json!({"send_quantum_packets": quantum})),
            &ctx,
        );
        assert_eq!(built.is_ok(), ok, "send_quantum_packets = {quantum}");
    }
    assert!(r
        .build(
            &spec("bbr", serde_json::json!({"send_quantum_packets": -1})),
            &ctx
        )
        .is_err());
    assert!(r
        .build(
            &spec(
                "bbr3",
                serde_json::json!({"loss_thresh": 0.05, "beta": 0.5, "headroom": 0.1})
            ),
            &ctx
        )
        .is_ok());
    assert!(r
        .build(&spec("bbr3", serde_json::json!({"beta": 1.5})), &ctx)
        .is_err());
}

// ---------------------------------------------------------------------------------------------
// BBR-S

fn bbr_s() -> BbrV1 {
    BbrV1::new(
        &CcContext::new(MSS),
        BbrV1Config {
            seed: 1,
            cwnd_gain: v1::CWND_GAIN,
            startup_gain: v1::HIGH_GAIN,
            send_quantum_packets: None,
            extra_acked: false,
            scavenger: Some(ScavengerRule::default()),
        },
    )
}

fn telemetry_value(cc: &dyn CongestionControl, name: &str) -> f64 {
    cc.telemetry()
        .get(name)
        .unwrap_or_else(|| panic!("no telemetry {name}"))
}

#[test]
fn linux_mdev_is_four_mean_deviations_damped_on_falling_samples() {
    let mut d = scavenger::LinuxMdev::default();
    assert_eq!(d.mdev(), None);
    // First sample 10 ms: srtt 10 ms, mdev 2 x 10 ms (Linux: "make sure rto = 3*rtt").
    d.on_sample(Duration::from_millis(10));
    assert_eq!(d.mdev(), Some(Duration::from_millis(20)));
    // 18 ms: error +8000 us; mdev += 8000 - 20000/4 = 23 000 us; srtt 11 ms.
    d.on_sample(Duration::from_millis(18));
    assert_eq!(d.mdev(), Some(Duration::from_micros(23_000)));
    // 3 ms: error -8000 us; |e| - mdev/4 = 8000 - 5750 = 2250, an eighth of it: 281 us.
    d.on_sample(Duration::from_millis(3));
    assert_eq!(d.mdev(), Some(Duration::from_micros(23_281)));
    // Steady samples at srtt: mdev loses a quarter per sample.
    let mut steady = scavenger::LinuxMdev::default();
    steady.on_sample(Duration::from_millis(10));
    steady.on_sample(Duration::from_millis(10));
    assert_eq!(steady.mdev(), Some(Duration::from_millis(15)));
    // The rule compares strictly above the threshold.
    let rule = ScavengerRule::default();
    let mut at = scavenger::LinuxMdev::default();
    at.on_sample(Duration::from_millis(10)); // mdev 20 ms, the threshold
    assert!(!rule.should_yield(&at));
    assert!(rule.should_yield(&d));
}

/// A BBR-S flow 100 ms into the test path, and the path.
fn bbr_s_running() -> (BbrV1, Path) {
    let mut cc = bbr_s();
    let mut p = Path::new();
    p.adopt(&mut cc);
    p.run(&mut cc, 100);
    (cc, p)
}

/// Steps the path until BBR-S is forced into PROBE_RTT, within 10 ms, by a deviation above 20 ms.
fn step_until_forced_probe_rtt(cc: &mut BbrV1, p: &mut Path) {
    let mut ms = 0;
    while state(cc) != "probe_rtt" {
        p.step(cc);
        ms += 1;
        assert!(ms < 10, "no probe_rtt after {ms} ms");
    }
    assert!(telemetry_value(cc, "rtt_mdev_ms") > 20.0);
}

#[test]
fn bbr_s_forces_a_40ms_probe_rtt_when_the_rtt_deviation_exceeds_20ms() {
    let (mut cc, mut p) = bbr_s_running();
    assert_eq!(state(&cc), "probe_bw");
    // Samples alternating 10 and 16 ms: mdev settles near 4 x 3 ms, below 20 ms.
    p.jitter = Duration::from_millis(3);
    p.run(&mut cc, 200);
    assert_eq!(state(&cc), "probe_bw");
    let mdev = telemetry_value(&cc, "rtt_mdev_ms");
    assert!((9.0..16.0).contains(&mdev), "mdev {mdev} ms");
    let before = cc.cwnd();
    assert!(before > 4 * MSS);

    // Alternating 10 and 30 ms: mdev passes 20 ms within a few samples: PROBE_RTT, window 4
    // packets.
    p.jitter = Duration::from_millis(10);
    p.in_flight = 4 * MSS;
    step_until_forced_probe_rtt(&mut cc, &mut p);
    assert_eq!(cc.cwnd(), 4 * MSS);
    assert_eq!(telemetry_value(&cc, "forced_probe_rtts"), 1.0);

    // The deviation falls back: the phase still lasts its 40 ms (in flight was already at the
    // 4-packet target, and the round of the 10 ms path ends inside it), not Linux's 200 ms.
    p.jitter = Duration::ZERO;
    let mut ms = 0;
    while state(&cc) == "probe_rtt" {
        p.step(&mut cc);
        ms += 1;
        assert!(ms < 300, "still in probe_rtt after {ms} ms");
    }
    assert!((40..=42).contains(&ms), "forced probe_rtt lasted {ms} ms");
    assert_eq!(state(&cc), "probe_bw");
    // The window comes back to PROBE_BW's 2·BDP (30 packets) plus the quantization budget,
    // restored from the one saved on entry (which the 5/4 phase had raised by 2 packets more).
    assert!(
        cc.cwnd() >= 30 * MSS && cc.cwnd() + 2 * MSS >= before,
        "{} vs {before}",
        cc.cwnd()
    );
    assert_eq!(telemetry_value(&cc, "forced_probe_rtts"), 1.0);
}

#[test]
fn bbr_s_stays_aside_while_the_deviation_stays_high_and_plain_bbr_ignores_it() {
    let mut s = bbr_s();
    let mut plain = v1_with_seed(1);
    let (mut ps, mut pp) = (Path::new(), Path::new());
    ps.adopt(&mut s);
    pp.adopt(&mut plain);
    ps.run(&mut s, 50);
    pp.run(&mut plain, 50);
    ps.jitter = Duration::from_millis(15);
    pp.jitter = Duration::from_millis(15);
    ps.in_flight = 4 * MSS;
    let mut in_probe = 0;
    for _ in 0..1000 {
        ps.step(&mut s);
        pp.step(&mut plain);
        in_probe += (state(&s) == "probe_rtt") as u32;
        assert_eq!(state(&plain), "probe_bw");
    }
    // Phases of 40-41 ms back to back, each left for one ACK: about 1000 / 41.5 = 24 entries
    // and over 95 % of the time at the 4-packet window.
    let forced = telemetry_value(&s, "forced_probe_rtts");
    assert!(
        (22.0..=26.0).contains(&forced),
        "{forced} forced probe_rtts"
    );
    assert!(in_probe >= 950, "{in_probe} ms of 1000 in probe_rtt");
}

#[test]
fn bbr_s_reads_the_rtt_of_the_earliest_packet_an_ack_covers() {
    // Linux's estimator takes each ACK's sample from its earliest newly acked packet: a delayed
    // ACK that held a packet 30 ms on every other ACK swings that sample by 30 ms (mdev above
    // 20 ms), while the smallest sample, the one BBR's min_rtt filter takes, stays at 10 ms.
    let (mut cc, mut p) = bbr_s_running();
    p.held = Duration::from_millis(30);
    p.in_flight = 4 * MSS;
    step_until_forced_probe_rtt(&mut cc, &mut p);
    assert_eq!(telemetry_value(&cc, "forced_probe_rtts"), 1.0);
    assert_eq!(telemetry_value(&cc, "min_rtt_ms"), 10.0);
}

#[test]
fn bbr_s_has_the_kernels_ack_aggregation_allowance_unless_told_otherwise() {
    // The kernel's BBR (since 4.19), which BBR-S modifies and competes with, has it.
    let r = crate::registry::Registry::standard();
    let ctx = CcContext::new(MSS);
    let build = |json: &str| {
        let spec: crate::registry::CcSpec = serde_json::from_str(json).unwrap();
        r.build(&spec, &ctx).unwrap().telemetry()
    };
    assert!(build(r#"{"name": "bbr-s"}"#)
        .get("extra_acked_bytes")
        .is_some());
    let off = build(r#"{"name": "bbr-s", "extra_acked": false}"#);
    assert!(off.get("extra_acked_bytes").is_none());
}

#[test]
fn bbr_s_is_registered_with_its_thresholds_as_parameters() {
    let r = crate::registry::Registry::standard();
    let ctx = CcContext::new(MSS);
    let spec: crate::registry::CcSpec =
        serde_json::from_str(r#"{"name": "bbr-s", "rtt_dev_threshold_ms": 5, "probe_rtt_ms": 80}"#)
            .unwrap();
    let cc = r.build(&spec, &ctx).unwrap();
    assert_eq!(cc.name(), scavenger::NAME);
    let bad: crate::registry::CcSpec =
        serde_json::from_str(r#"{"name": "bbr-s", "rtt_dev_threshold_ms": -1}"#).unwrap();
    let err = r.build(&bad, &ctx).err().unwrap().to_string();
    assert!(err.contains("rtt_dev_threshold_ms"), "{err}");
}

#[test]
fn flows_built_at_the_same_instant_draw_their_own_phase_from_the_flow_seed() {
    // The transport hands every flow its own seed in CcContext (the simulator mixes the run's
    // seed with the flow's index); without a `seed` parameter BBR v1's gain-cycle phase and
    // v3's probe wait come from it, so flows starting together do not probe in lockstep.
    let registry = crate::registry::Registry::standard();
    // What a flow draws: v1's pacing gain in each of its first 8 min RTTs of PROBE_BW (the
    // phase), v3's probe wait.
    let drawn = |name: &str, what: &str, flow_seed: u64| -> Vec<u64> {
        let ctx = CcContext {
            seed: flow_seed,
            ..CcContext::new(MSS)
        };
        let mut cc = registry
            .build(&crate::registry::CcSpec::named(name), &ctx)
            .expect("builds");
        let mut p = Path::new();
        p.adopt(cc.as_mut());
        let mut out = vec![];
        for _ in 0..8 {
            out.push((cc.telemetry().get(what).expect("telemetry") * 1e6) as u64);
            p.run(cc.as_mut(), RTT.as_millis_f64() as u64);
        }
        out
    };
    for (name, what, min_distinct) in [
        ("bbr", "pacing_gain", 6),
        ("bbr-s", "pacing_gain", 6),
        ("bbr3", "probe_wait_s", 24),
    ] {
        let values: Vec<Vec<u64>> = (0..32).map(|s| drawn(name, what, s)).collect();
        let mut distinct = values.clone();
        distinct.sort();
        distinct.dedup();
        assert!(
            distinct.len() >= min_distinct,
            "{name}: {what} over 32 flow seeds: {values:?}"
        );
        // The same flow seed replays the same draw.
        assert_eq!(drawn(name, what, 5), values[5], "{name}");
    }
}

#[test]
fn taking_a_flow_over_without_a_bandwidth_estimate_counts_rounds_from_its_own_sends() {
    // A predecessor sent packets 0..100 at BW; BBR takes the flow over without an estimate (so
    // in STARTUP) and the ACKs of those packets come in before it sends anything. None of them
    // ends a round: they say what the predecessor's rate was, not whether STARTUP's grew. Before
    // (`Rounds::restart_at_next_send`) each ended one, and three rounds without growth ended
    // STARTUP within four ACKs.
    let cases: [(&str, Box<dyn CongestionControl>); 2] = [
        ("v1", Box::new(v1_with_seed(1))),
        ("v3", Box::new(v3_with_seed(1))),
    ];
    for (name, mut cc) in cases {
        let mut p = Path::new();
        p.next_pn = 100;
        p.now = Time::ZERO + Duration::from_millis(100);
        cc.adopt(
            p.now,
            &HandoverState {
                cwnd: 30 * MSS,
                bandwidth_estimate: None,
                rtt: snapshot(RTT),
                ..HandoverState::default()
            },
        );
        for i in 0..20 {
            p.now += Duration::from_millis(1);
            let mut ev = p.ack_event();
            ev.largest_acked = 80 + i;
            cc.on_ack(p.now, &ev);
        }
        assert_eq!(state(cc.as_ref()), "startup", "{name}");
        // Its own packets end rounds as usual: at the constant BW, three of them (10 ms each,
        // after the 10 ms of the predecessor's packets still in flight) end STARTUP.
        p.run(cc.as_mut(), 60);
        assert_ne!(state(cc.as_ref()), "startup", "{name}");
    }
}
