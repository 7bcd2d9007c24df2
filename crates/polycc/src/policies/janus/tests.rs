//! Janus as a whole, driven by explicit ACK sequences: each test feeds ACKs at a chosen
//! throughput and RTT and checks the stage, the window written into the running CCA, R', D_p.

use super::*;
use crate::estimators::rtt::RttSnapshot;
use crate::units::Duration;

const MSS: Bytes = 1500;
const MBPS: f64 = 1e6;

/// Packets kept in flight by [`Feed`]: ACKs of one RTT acknowledge the packets of the last.
const IN_FLIGHT: u64 = 10;

/// Feeds ACKs to a controller: ten per RTT, each acknowledging rate·RTT/10 bytes, with ten
/// packets in flight so that the CCAs' per-round logic sees rounds of ten samples. The first
/// ACK, at time zero, opens Janus' first measurement window, so every later window holds
/// exactly the ACKs of one call's RTT.
struct Feed {
    now: Time,
    next_pn: u64,
    acked_pn: u64,
    delivered: Bytes,
    /// RFC 9002 rttvar reported with every ACK (Janus' sigma(RTT)).
    var: Duration,
}

impl Feed {
    fn new() -> Self {
        Feed {
            now: Time::ZERO,
            next_pn: 0,
            acked_pn: 0,
            delivered: 0,
            var: Duration::from_millis(1),
        }
    }

    fn send(&mut self, cc: &mut Janus) {
        cc.on_sent(
            self.now,
            &SentPacket {
                pn: self.next_pn,
                bytes: MSS,
                in_flight: IN_FLIGHT * MSS,
                ..SentPacket::default()
            },
        );
        self.next_pn += 1;
    }

    fn ack(&mut self, cc: &mut Janus, dt: Duration, bytes: Bytes, rtt: Duration) {
        if self.next_pn == 0 {
            for _ in 0..IN_FLIGHT {
                self.send(cc);
            }
        }
        self.now += dt;
        let pn = self.acked_pn;
        self.acked_pn += 1;
        self.delivered += bytes;
        let ev = AckEvent {
            acked_bytes: bytes,
            acked_packets: 1,
            largest_acked: pn,
            largest_acked_sent_time: self.now - rtt,
            min_rtt_sample: Some(rtt),
            rtt: RttSnapshot {
                latest: rtt,
                smoothed: rtt,
                var: self.var,
                min: rtt,
                has_sample: true,
            },
            delivered: self.delivered,
            in_flight: (IN_FLIGHT - 1) * MSS,
            prior_in_flight: IN_FLIGHT * MSS,
            mss: MSS,
            ..AckEvent::default()
        };
        cc.on_ack(self.now, &ev);
        self.send(cc);
    }

    /// `n` RTTs at `rate_mbps` with RTT `rtt_ms`.
    fn rtts(&mut self, cc: &mut Janus, n: u32, rate_mbps: f64, rtt_ms: u64) {
        let rtt = Duration::from_millis(rtt_ms);
        let bytes = (rate_mbps * MBPS / 8.0 * rtt.as_secs_f64() / 10.0).round() as Bytes;
        if self.acked_pn == 0 {
            self.ack(cc, Duration::ZERO, MSS, rtt);
        }
        for _ in 0..10 * n {
            self.ack(cc, Duration(rtt.0 / 10), bytes, rtt);
        }
    }
}

fn janus() -> Janus {
    Janus::new(
        &CcContext::new(MSS),
        &Registry::standard(),
        JanusConfig::default(),
    )
    .expect("defaults build")
}

#[test]
fn both_stages_hear_the_handshake() {
    let mut cc = Janus::new(
        &CcContext::new(MSS),
        &Registry::standard(),
        JanusConfig {
            aggressive: CcSpec::named("bbr"),
            ..JanusConfig::default()
        },
    )
    .expect("builds");
    cc.on_handshake(Time::ZERO, Duration::from_millis(60));
    let t = cc.conservative.telemetry();
    assert_eq!(t.get("base_rtt_ms"), Some(60.0), "vegas: {:?}", t.entries());
    let t = cc.aggressive.telemetry();
    assert_eq!(t.get("min_rtt_ms"), Some(60.0), "bbr: {:?}", t.entries());
}

fn bandwidth_guarantee(mbps: u64, min_mbps: u64) -> Intent {
    Intent::BandwidthGuarantee {
        target_rate: Rate::from_mbps(mbps),
        min_rate: Rate::from_mbps(min_mbps),
    }
}

fn set_cwnd(cc: &mut Janus, now: Time, cwnd: Bytes) {
    cc.calibrate(
        now,
        &Calibration {
            cwnd: Some(cwnd),
            ..Calibration::default()
        },
    );
}

#[test]
fn a_flow_with_a_target_starts_aggressive_with_ssthresh_r_times_dp() {
    let mut cc = janus();
    let mut feed = Feed::new();
    cc.set_intent(Time::ZERO, &bandwidth_guarantee(8, 0));
    assert_eq!(cc.stage(), Stage::Aggressive);
    assert_eq!(cc.active().name(), "cubic");
    // The first RTT sample gives D_p = 60 ms: ssthresh = 8 Mbit/s · 60 ms = 60 000 bytes.
    feed.ack(&mut cc, Duration::ZERO, MSS, Duration::from_millis(60));
    assert_eq!(cc.propagation_delay(), Some(Duration::from_millis(60)));
    assert_eq!(cc.ssthresh(), Some(60_000));
    assert_eq!(cc.telemetry().get("stage"), Some(1.0));
    assert_eq!(cc.telemetry().get("target_rate_mbps"), Some(8.0));
}

#[test]
fn the_sample_throughput_ends_the_first_aggressive_stage_with_buffer_clearing() {
    let mut cc = janus();
    let mut feed = Feed::new();
    cc.set_intent(Time::ZERO, &bandwidth_guarantee(8, 0));
    // Windows at 6 Mbit/s: below R, still aggressive (P_avg would be far lower anyway).
    feed.rtts(&mut cc, 3, 6.0, 60);
    assert_eq!(cc.stage(), Stage::Aggressive);
    let p_avg = cc.p_avg_bps();
    assert!(p_avg < 2.0 * MBPS, "P_avg still ramping: {p_avg}");
    // A 9 Mbit/s window: P_smp ≥ R. The window was 150 000 bytes; buffer clearing cuts it to
    // P_avg·D_p with P_avg reset to P_smp: 9 Mbit/s · 60 ms = 67 500 bytes.
    // CUBIC's threshold stands at 120 000 bytes (as after a loss at a larger window), above
    // the window clearing will leave.
    cc.calibrate(
        feed.now,
        &Calibration {
            cwnd: Some(150_000),
            ssthresh: Some(120_000),
            ..Calibration::default()
        },
    );
    feed.rtts(&mut cc, 1, 9.0, 60);
    assert_eq!(cc.stage(), Stage::Conservative);
    assert_eq!(cc.active().name(), "vegas");
    let p_avg = cc.p_avg_bps();
    assert!((p_avg - 9.0 * MBPS).abs() < 0.01 * MBPS, "P_avg {p_avg}");
    let cwnd = cc.cwnd();
    assert!(
        (67_000..=68_500).contains(&cwnd),
        "cwnd {cwnd} after clearing (vegas may have acted on one ACK)"
    );
    // The threshold comes down with the window (from 120 000 bytes): Vegas continues in
    // congestion avoidance from the cleared window instead of slow-starting from it.
    assert!(!cc.in_slow_start(), "Vegas slow-starts after the hand-over");
    let ssthresh = cc.ssthresh().expect("vegas has a threshold");
    assert!(
        (67_000..=68_500).contains(&ssthresh),
        "ssthresh {ssthresh}: the cleared window"
    );
    assert_eq!(
        cc.switches(),
        2,
        "conservative -> aggressive -> conservative"
    );
}

/// A flow with target `r` that has just entered its first conservative stage at `p` Mbit/s.
fn conservative_at(r: u64, p: f64, rtt_ms: u64) -> (Janus, Feed) {
    let mut cc = janus();
    let mut feed = Feed::new();
    cc.set_intent(Time::ZERO, &bandwidth_guarantee(r, 0));
    feed.rtts(&mut cc, 1, p, rtt_ms);
    feed.rtts(&mut cc, 1, p, rtt_ms);
    assert_eq!(cc.stage(), Stage::Conservative);
    (cc, feed)
}

#[test]
fn conservative_turns_aggressive_below_one_minus_gamma_of_r() {
    let (mut cc, mut feed) = conservative_at(8, 9.0, 60);
    // P_avg from 9 Mbit/s with zero-throughput windows: 9·(7/8)^k. (1 − 0.2)·8 = 6.4 Mbit/s is
    // crossed at k = 3 (6.03), not at k = 2 (6.89).
    feed.rtts(&mut cc, 2, 0.0, 60);
    assert_eq!(cc.stage(), Stage::Conservative);
    let p = cc.p_avg_bps();
    assert!(
        (p - 9.0 * MBPS * 0.875f64.powi(2)).abs() < 0.02 * MBPS,
        "{p}"
    );
    feed.rtts(&mut cc, 1, 0.0, 60);
    assert_eq!(cc.stage(), Stage::Aggressive);
    // D_p was re-estimated two RTTs into the conservative stage: 60 ms − Q_avg/P_avg with
    // P_avg ≈ 9·7/8 Mbit/s, i.e. 60 − 4·1500·8/7.875e6 s = 54.6 ms.
    let dp = cc.propagation_delay().expect("D_p").as_secs_f64();
    assert!((dp * 1e3 - 54.6).abs() < 0.2, "D_p {dp}");
    // Rate control: ssthresh = R'·D_p = 8 Mbit/s · D_p.
    assert_eq!(cc.ssthresh(), Some((1e6 * dp).round() as Bytes));
}

#[test]
fn dp_is_re_estimated_from_the_packets_sent_after_each_clearing() {
    // The path's propagation delay grows from 40 to 60 ms; the conservative stage sees 66 ms
    // (its own 4 packets queued at 8 Mbit/s take 6 ms).
    let (mut cc, mut feed) = conservative_at(8, 8.0, 40);
    assert_eq!(cc.propagation_delay(), Some(Duration::from_millis(40)));
    // 11 s on the longer path: the 40 ms samples leave the guard's 10-s window.
    feed.rtts(&mut cc, 167, 8.0, 66);
    // Hold P_avg at 8 Mbit/s so that Q_avg/P_avg = 4·1500·8/8e6 = 6 ms.
    cc.metrics.reset_average(8.0 * MBPS);
    cc.dp.start_measuring(feed.now);
    feed.rtts(&mut cc, 3, 8.0, 66);
    let dp = cc.propagation_delay().expect("estimated");
    // P_avg drifts little over 3 windows at 8 Mbit/s; D_p = 66 − 6 = 60 ms within 0.1 ms.
    assert!(
        (dp.as_millis_f64() - 60.0).abs() < 0.1,
        "D_p {} ms",
        dp.as_millis_f64()
    );
}

#[test]
fn a_satisfied_flow_is_clamped_at_one_plus_eps_r_rtt_and_released_below_r() {
    let (mut cc, mut feed) = conservative_at(8, 8.5, 60);
    // P_avg rises above 1.1·8 = 8.8 Mbit/s: the clamp is 8.8 Mbit/s · 60 ms = 66 000 bytes.
    cc.metrics.reset_average(9.5 * MBPS);
    feed.rtts(&mut cc, 1, 9.5, 60);
    assert_eq!(cc.clamp(), Some(66_000));
    set_cwnd(&mut cc, feed.now, 200_000);
    assert_eq!(cc.cwnd(), 66_000, "the running Vegas honours the clamp");
    // P_avg falls below R = 8 Mbit/s: released.
    cc.metrics.reset_average(7.0 * MBPS);
    feed.rtts(&mut cc, 1, 7.0, 60);
    assert_eq!(cc.clamp(), None);
    set_cwnd(&mut cc, feed.now, 200_000);
    assert_eq!(cc.cwnd(), 200_000);
}

#[test]
fn algorithm_1_lowers_r_after_delta_t1_while_the_rtt_grows_and_floors_at_r_min() {
    let (mut cc, mut feed) = conservative_at(10, 10.0, 60);
    // Throughput collapses: aggressive after two windows (P_avg 10·(7/8)^2 = 7.66 < 8).
    feed.rtts(&mut cc, 1, 0.0, 60);
    assert_eq!(cc.stage(), Stage::Conservative);
    feed.rtts(&mut cc, 1, 0.0, 60);
    assert_eq!(cc.stage(), Stage::Aggressive);
    let entered = feed.now;
    // The RTT grows by 5 ms per RTT while throughput stays at 5 Mbit/s. Delta T_1 = 5 RTTs
    // (300 ms at 60 ms): no reduction before it.
    let mut rtt = 60;
    while feed.now < entered + Duration::from_millis(300) {
        rtt += 5;
        feed.rtts(&mut cc, 1, 5.0, rtt);
        if feed.now <= entered + Duration::from_millis(300) {
            assert_eq!(
                cc.target_bps(),
                10.0 * MBPS,
                "reduced early at {:?}",
                feed.now
            );
        }
    }
    // Past it: R' = 0.8·10 = 8, then every 2 RTTs 6.4, 5.12, ...
    rtt += 5;
    feed.rtts(&mut cc, 1, 5.0, rtt);
    assert!((cc.target_bps() - 8.0 * MBPS).abs() < 1.0);
    for _ in 0..20 {
        rtt += 5;
        feed.rtts(&mut cc, 1, 5.0, rtt);
    }
    // 5 Mbit/s ≥ R' ends the aggressive stage once R' has fallen to 5.12 or below.
    assert!(cc.target_bps() <= 5.12 * MBPS + 1.0, "{}", cc.target_bps());
}

#[test]
fn r_min_bounds_the_reduction() {
    let mut cc = janus();
    let mut feed = Feed::new();
    cc.set_intent(Time::ZERO, &bandwidth_guarantee(10, 7));
    // Aggressive from the start, throughput 2 Mbit/s, RTT rising: R' falls to R_min only.
    let mut rtt = 60;
    for _ in 0..40 {
        rtt += 5;
        feed.rtts(&mut cc, 1, 2.0, rtt);
    }
    assert_eq!(cc.stage(), Stage::Aggressive);
    assert_eq!(cc.target_bps(), 7.0 * MBPS);
}

#[test]
fn a_flow_without_target_takes_its_available_bandwidth_two_rtts_after_slow_start() {
    let mut cc = janus();
    let mut feed = Feed::new();
    cc.set_intent(Time::ZERO, &Intent::Bulk);
    assert_eq!(cc.stage(), Stage::Conservative);
    assert_eq!(cc.telemetry().state, "initialising");
    // Vegas leaves slow start when its RTT exceeds the base RTT by a packet's worth: RTT 60 ms
    // for a while, then 90 ms.
    feed.rtts(&mut cc, 2, 3.0, 60);
    assert!(cc.in_slow_start());
    feed.rtts(&mut cc, 2, 3.0, 90);
    assert!(!cc.in_slow_start(), "vegas left slow start");
    assert_eq!(cc.telemetry().state, "initialising");
    // Two more windows, then R' = P_smp (3 Mbit/s).
    feed.rtts(&mut cc, 3, 3.0, 90);
    assert_eq!(cc.telemetry().state, "conservative");
    assert!((cc.target_bps() - 3.0 * MBPS).abs() < 0.01 * MBPS);
    // The bulk flow's R' rises while throughput exceeds R'/(1 − gamma) = 3.75 Mbit/s. R' rises
    // at most once per window, and P_avg (not P_smp) decides.
    cc.metrics.reset_average(6.0 * MBPS);
    feed.rtts(&mut cc, 1, 6.0, 90);
    assert!((cc.target_bps() - 3.75 * MBPS).abs() < 0.01 * MBPS);
    feed.rtts(&mut cc, 3, 6.0, 90);
    // 3.75 → 4.6875 → 5.86: above 6·0.8 = 4.8, so the third raise stops at 5.86.
    assert!((cc.target_bps() - 5.859_375 * MBPS).abs() < 0.01 * MBPS);
    assert_eq!(
        cc.clamp(),
        None,
        "no rate control without an application target"
    );
}

#[test]
fn parameters_and_pool_members_are_validated() {
    let reg = Registry::standard();
    let ctx = CcContext::new(MSS);
    let spec = |v: serde_json::Value| -> CcSpec { serde_json::from_value(v).expect("spec") };
    let ok = spec(
        serde_json::json!({"name": "janus", "conservative": "vegas", "aggressive": {"name": "cubic", "beta": 0.8}}),
    );
    let cc = reg.build(&ok, &ctx).expect("builds");
    assert_eq!(cc.name(), "janus");
    for (bad, mentions) in [
        (
            serde_json::json!({"name": "janus", "aggressive": "cubc"}),
            "aggressive",
        ),
        (
            serde_json::json!({"name": "janus", "conservative": {"name": "vegas", "alpha": 9}}),
            "conservative",
        ),
        (serde_json::json!({"name": "janus", "gamma": 1.5}), "gamma"),
        (serde_json::json!({"name": "janus", "tua": 20}), "tua"),
    ] {
        match reg.build(&spec(bad.clone()), &ctx) {
            Err(CcError::BadParams { message, .. }) => {
                assert!(message.contains(mentions), "{bad}: {message}")
            }
            Err(e) => panic!("{bad}: {e}"),
            Ok(_) => panic!("{bad} accepted"),
        }
    }
}

#[test]
fn telemetry_fits_and_names_the_series() {
    let (cc, _) = conservative_at(8, 9.0, 60);
    let t = cc.telemetry();
    for k in [
        "stage",
        "target_rate_mbps",
        "dp_ms",
        "p_avg_mbps",
        "p_smp_mbps",
        "rtt_ms",
        "clamp_bytes",
        "ssthresh_bytes",
        "switches",
    ] {
        assert!(t.get(k).is_some(), "{k}");
    }
    assert_eq!(t.state, "conservative");
    assert_eq!(t.get("dp_ms"), Some(60.0));
}
