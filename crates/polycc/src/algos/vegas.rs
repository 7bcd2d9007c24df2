//! TCP Vegas as Linux `net/ipv4/tcp_vegas.c`: once per RTT, compare the window with what the
//! base RTT says the path holds and move it by one packet towards `alpha..beta` packets queued.
//!
//! Windows are in bytes; Vegas' one-packet steps and its alpha/beta/gamma thresholds are in packets
//! of the context's MSS. Loss handling is Reno's, with one reduction per recovery epoch
//! (`reno/`).

use crate::algos::reno;
use crate::algos::reno::{
    reno_family_methods, reno_window_in, AiCredit, RenoFamily, RenoWindow, RENO_BETA,
};
use crate::algos::round::RoundTracker;
use crate::cc::{CcContext, CongestionControl, Telemetry};
use crate::params::{self, Bound, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, SentPacket};
use crate::units::{Bytes, Duration, Time};
use serde::{Deserialize, Serialize};

/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "TCP Vegas (Linux tcp_vegas.c): delay-based, holds alpha..beta packets queued";

/// tcp_vegas.c module parameter `alpha`: below this many packets queued, grow by one per RTT.
pub const ALPHA: f64 = 2.0;
/// tcp_vegas.c module parameter `beta`: above this many packets queued, shrink by one per RTT.
pub const BETA: f64 = 4.0;
/// tcp_vegas.c module parameter `gamma`: above this many packets queued, leave slow start.
pub const GAMMA: f64 = 1.0;
/// tcp_vegas.c: a round with this many RTT samples or fewer (delayed ACKs) gives no reliable
/// minimum, so that round behaves as Reno.
const MAX_SAMPLES_FOR_RENO: u32 = 2;
/// tcp_current_ssthresh in the Open state: ssthresh is kept at least at ¾ of the window.
const SSTHRESH_FLOOR_FRACTION: (u64, u64) = (3, 4);

/// Registry and scenario name.
pub const NAME: &str = "vegas";
/// Most packets a threshold may hold queued: far above any path's need (Linux's defaults are a
/// few packets), low enough that a typo in the thousands is caught.
const MAX_THRESHOLD_PACKETS: f64 = 1000.0;

/// Registers Vegas under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<VegasConfig>(), build);
}

/// Builds Vegas from scenario parameters (the fields of [`VegasConfig`]), checking them against
/// [`VegasConfig::PARAMS`] (which keeps `alpha` at most `beta`).
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: VegasConfig = params::parse(NAME, p)?;
    Ok(Box::new(Vegas::new(ctx, params)))
}

/// Thresholds of [`Vegas`] in packets, validated by [`build`]; absent keys take the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct VegasConfig {
    /// Below this many packets queued, grow by one packet per RTT (default [`ALPHA`]).
    pub alpha: f64,
    /// Above this many packets queued, shrink by one packet per RTT (default [`BETA`]).
    pub beta: f64,
    /// Above this many packets queued, leave slow start (default [`GAMMA`]).
    pub gamma: f64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: ALPHA,
            beta: BETA,
            gamma: GAMMA,
        }
    }
}

impl ParamTable for VegasConfig {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "alpha",
            Kind::Number,
            "packets queued below which the window grows by one packet per RTT",
            "Linux tcp_vegas.c module parameter alpha",
        )
        .range(0.0, MAX_THRESHOLD_PACKETS),
        // alpha ≤ beta: otherwise a window with between beta and alpha packets queued would have
        // to grow and shrink at once.
        ParamSpec::new(
            "beta",
            Kind::Number,
            "packets queued above which the window shrinks by one packet per RTT",
            "Linux tcp_vegas.c module parameter beta",
        )
        .bounds(Bound::Param("alpha"), Bound::At(MAX_THRESHOLD_PACKETS)),
        ParamSpec::new(
            "gamma",
            Kind::Number,
            "packets queued above which slow start ends",
            "Linux tcp_vegas.c module parameter gamma",
        )
        .range(0.0, MAX_THRESHOLD_PACKETS),
    ];
}

/// Vegas for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    /// Its recovery period is over at the first ACK of a packet sent after it began; Vegas is
    /// off meanwhile, as Linux runs it only in TCP_CA_Open.
    reno: RenoWindow,
    /// Reno congestion-avoidance credit for the rounds that fall back to Reno.
    ca_credit: AiCredit,
    /// baseRTT: the smallest RTT seen over the connection.
    base_rtt: Option<Duration>,
    /// minRTT and cntRTT of the round in progress.
    min_rtt: Option<Duration>,
    cnt_rtt: u32,
    /// Delimits rounds at `beg_snd_nxt`.
    rounds: RoundTracker,
    /// Packets queued as estimated at the last per-RTT decision, for telemetry.
    last_diff: Option<f64>,
}

impl Vegas {
    /// Vegas in slow start from the context's initial window, with no base RTT yet.
    pub fn new(ctx: &CcContext, cfg: VegasConfig) -> Self {
        Vegas {
            cfg,
            reno: RenoWindow::new(ctx),
            ca_credit: AiCredit::default(),
            base_rtt: None,
            min_rtt: None,
            cnt_rtt: 0,
            rounds: RoundTracker::default(),
            last_diff: None,
        }
    }

    /// tcp_vegas_enable: start a fresh per-RTT measurement from the next packet sent.
    fn restart_rounds(&mut self) {
        self.rounds.start();
        self.min_rtt = None;
        self.cnt_rtt = 0;
    }

    /// tcp_reno_cong_avoid for one ACK.
    fn reno_cong_avoid(&mut self, acked: Bytes) {
        if self.reno.in_slow_start() {
            self.reno.slow_start_uncapped(acked);
        } else {
            self.ca_credit.on_ack(&mut self.reno, acked);
        }
    }

    /// The once-per-RTT decision, taken on the ACK that ends a round.
    fn per_rtt(&mut self, acked: Bytes) {
        let (Some(rtt), Some(base)) = (self.min_rtt, self.base_rtt) else {
            self.reno_cong_avoid(acked);
            return;
        };
        if self.cnt_rtt <= MAX_SAMPLES_FOR_RENO {
            self.reno_cong_avoid(acked);
            return;
        }
        // Both are at least 1 ns (see on_ack), and rtt >= base since base is the all-time min.
        let cwnd_pkts = self.reno.cwnd as f64 / self.reno.mss as f64;
        let diff = cwnd_pkts * rtt.0.saturating_sub(base.0) as f64 / base.0 as f64;
        self.last_diff = Some(diff);
        if self.reno.in_slow_start() {
            if diff > self.cfg.gamma {
                // Too much queued to keep doubling: drop to what the base RTT supports plus one
                // packet, and leave slow start.
                let target = (self.reno.cwnd as u128 * base.0 as u128 / rtt.0 as u128) as Bytes;
                self.reno.cwnd = self.reno.cwnd.min(target.saturating_add(self.reno.mss));
                self.reno.ssthresh = self.reno.ssthresh.min(self.reno.cwnd);
            } else {
                self.reno.slow_start_uncapped(acked);
            }
        } else if diff > self.cfg.beta {
            self.reno.cwnd = self.reno.cwnd.saturating_sub(self.reno.mss);
            self.reno.ssthresh = self.reno.ssthresh.min(self.reno.cwnd);
        } else if diff < self.cfg.alpha {
            self.reno.cwnd = self.reno.cwnd.saturating_add(self.reno.mss);
        }
        self.reno.apply_clamp();
        let (num, den) = SSTHRESH_FLOOR_FRACTION;
        let floor = (self.reno.cwnd as u128 * num as u128 / den as u128) as Bytes;
        self.reno.ssthresh = self.reno.ssthresh.max(floor).max(self.reno.min_window());
    }
}

impl RenoFamily for Vegas {
    reno_window_in!(reno);

    fn reset_growth(&mut self) {
        self.ca_credit.reset();
    }

    fn on_congestion_event(&mut self, _now: Time) {
        self.reno.reduce(RENO_BETA);
    }

    fn on_persistent_congestion(&mut self, _now: Time) {
        self.restart_rounds();
    }

    fn on_cwnd_written(&mut self) {}
}

impl CongestionControl for Vegas {
    reno_family_methods!();

    fn name(&self) -> &str {
        "vegas"
    }

    fn on_handshake(&mut self, _now: Time, rtt: Duration) {
        // The SYN's round trip is the path's RTT without the data's queue: over the kernel's
        // TCP the shim hands it over with its first report, and the testbed's Vegas flows start
        // from it. Without it, flows whose first data packets queue behind each other's
        // initial windows keep base RTTs several packets' time apart and share unevenly
        // (four flows on 20 Mbit/s: 1.78 to 7.13 Mbit/s against the kernel's 4.3 to 5.9).
        let sample = rtt.max(Duration(1));
        self.base_rtt = Some(self.base_rtt.map_or(sample, |b| b.min(sample)));
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        self.rounds.on_sent(sent.pn);
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        // tcp_vegas_pkts_acked adds 1 µs so that a sample is never zero; here 1 ns.
        let sample = ack.min_rtt_sample.map(|s| s.max(Duration(1)));
        if let Some(s) = sample {
            self.base_rtt = Some(self.base_rtt.map_or(s, |b| b.min(s)));
        }
        if self.reno.recovery.covers(ack.largest_acked_sent_time) {
            return; // acknowledges a packet from before the last reduction
        }
        if self.reno.recovery.end() {
            self.restart_rounds(); // back in the Open state: tcp_vegas_enable
        }
        if let Some(s) = sample {
            self.min_rtt = Some(self.min_rtt.map_or(s, |m| m.min(s)));
            self.cnt_rtt = self.cnt_rtt.saturating_add(1);
        }
        if ack.app_limited {
            // Linux calls cong_avoid only when cwnd-limited; the round keeps collecting samples.
            return;
        }
        if self.rounds.on_ack(ack.largest_acked) {
            self.per_rtt(ack.acked_bytes);
            self.min_rtt = None;
            self.cnt_rtt = 0;
        } else if self.reno.in_slow_start() {
            self.reno.slow_start_uncapped(ack.acked_bytes);
        }
        self.reno.apply_clamp();
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = self.reno.telemetry();
        t.push("base_rtt_ms", reno::millis_or_nan(self.base_rtt));
        t.push("min_rtt_ms", reno::millis_or_nan(self.min_rtt));
        t.push("cnt_rtt", self.cnt_rtt as f64);
        t.push("diff_pkts", self.last_diff.unwrap_or(f64::NAN));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{ack, assert_params, loss, start_in_ca, Flow};
    use crate::estimators::rtt::RttSnapshot;

    const MSS: Bytes = 1000;

    fn vegas() -> Vegas {
        Vegas::new(&CcContext::new(MSS), VegasConfig::default())
    }

    /// A Vegas in congestion avoidance at `pkts` packets whose base RTT is `flow.rtt`.
    fn in_ca(flow: &mut Flow, pkts: u64) -> Vegas {
        let mut cc = vegas();
        start_in_ca(&mut cc, flow.now, pkts * MSS);
        flow.run_rtts(&mut cc, 1);
        cc
    }

    #[test]
    fn grows_one_packet_per_rtt_below_alpha() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 20);
        flow.run_rtts(&mut cc, 2);
        let before = cc.cwnd();
        flow.run_rtts(&mut cc, 10);
        assert_eq!(cc.cwnd() - before, 10 * MSS);
        assert_eq!(cc.telemetry().get("diff_pkts"), Some(0.0));
        assert_eq!(cc.telemetry().get("base_rtt_ms"), Some(100.0));
    }

    #[test]
    fn the_handshake_rtt_is_a_base_rtt_sample() {
        // A 100 ms path whose data packets see 10 ms of queue from the start: the base RTT is
        // the handshake's 100 ms, not the first data packet's 110 ms.
        let mut flow = Flow::new(MSS, Duration::from_millis(110));
        let mut cc = vegas();
        cc.on_handshake(flow.now, Duration::from_millis(100));
        start_in_ca(&mut cc, flow.now, 20 * MSS);
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.telemetry().get("base_rtt_ms"), Some(100.0));
    }

    #[test]
    fn holds_between_alpha_and_beta() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 20);
        flow.run_rtts(&mut cc, 2);
        // 15 ms of queueing: diff = cwnd·0.15, inside (2, 4) for windows of 14..26 packets.
        flow.rtt = Duration::from_millis(115);
        flow.run_rtts(&mut cc, 3); // flush the round that mixes old and new samples
        let held = cc.cwnd();
        flow.run_rtts(&mut cc, 10);
        assert_eq!(cc.cwnd(), held);
        let diff = cc.telemetry().get("diff_pkts").expect("diff");
        let expected = held as f64 / MSS as f64 * 0.15;
        assert!((diff - expected).abs() < 1e-9, "diff {diff} vs {expected}");
        assert!(diff > ALPHA && diff < BETA);
    }

    #[test]
    fn shrinks_one_packet_per_rtt_above_beta_until_inside() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 20);
        flow.run_rtts(&mut cc, 1);
        flow.rtt = Duration::from_millis(130);
        // diff = cwnd·0.3 > 4 until the window is 13 packets (diff 3.9).
        let mut history = vec![cc.cwnd() / MSS];
        for _ in 0..20 {
            flow.run_rtts(&mut cc, 1);
            history.push(cc.cwnd() / MSS);
        }
        for pair in history.windows(2) {
            let step = pair[0] as i64 - pair[1] as i64;
            assert!(step <= 1, "more than one packet per RTT: {history:?}");
        }
        assert_eq!(cc.cwnd(), 13 * MSS, "{history:?}");
        assert_eq!(cc.ssthresh(), Some(13 * MSS));
    }

    #[test]
    fn slow_start_ends_at_the_base_rtt_window_plus_one() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = vegas();
        flow.run_rtts(&mut cc, 2);
        assert!(cc.in_slow_start());
        flow.rtt = Duration::from_millis(150);
        // Step ACK by ACK: the round whose samples are all 150 ms ends slow start with
        // cwnd = cwnd·100/150 + 1 packet, ssthresh = cwnd.
        loop {
            let before = cc.cwnd();
            assert!(flow.ack_next(&mut cc));
            if !cc.in_slow_start() {
                assert_eq!(cc.cwnd(), before * 100 / 150 + MSS);
                assert_eq!(cc.ssthresh(), Some(cc.cwnd()));
                break;
            }
            assert!(
                flow.now < Time::ZERO + Duration::from_secs(2),
                "never left slow start"
            );
        }
    }

    #[test]
    fn rounds_with_two_samples_or_fewer_act_as_reno() {
        let mut cc = vegas();
        start_in_ca(&mut cc, Time::ZERO, 20 * MSS);
        let snap = RttSnapshot::default();
        let mut now = Time::ZERO;
        // Sends `pns` now, then acks them all `rtt_ms` later.
        let mut round = |cc: &mut Vegas, pns: std::ops::Range<u64>, rtt_ms: u64| {
            let rtt = Duration::from_millis(rtt_ms);
            for pn in pns.clone() {
                let sent = SentPacket {
                    pn,
                    bytes: MSS,
                    ..SentPacket::default()
                };
                cc.on_sent(now, &sent);
            }
            let sent_at = now;
            now += rtt;
            for pn in pns {
                cc.on_ack(now, &ack(pn, sent_at, MSS, MSS, rtt, snap));
            }
        };
        round(&mut cc, 0..10, 100); // base RTT 100 ms; the first ACK opens the first round
        round(&mut cc, 10..12, 300); // pn 10 closes a round of 10 samples at 100 ms: +1
        assert_eq!(cc.cwnd(), 21 * MSS);
        // pn 12 closes a round of two samples (pn 11, 12) at 300 ms: Vegas would shrink
        // (diff = 42 packets), Reno's credit is far below a window: no change.
        round(&mut cc, 12..14, 300);
        assert_eq!(cc.cwnd(), 21 * MSS);
        round(&mut cc, 14..18, 300); // pn 14 closes (pn 13, 14): Reno again
        assert_eq!(cc.cwnd(), 21 * MSS);
        round(&mut cc, 18..19, 300); // pn 18 closes (pn 15..18): four samples, Vegas shrinks
        assert_eq!(cc.cwnd(), 20 * MSS);
        assert_eq!(cc.telemetry().get("diff_pkts"), Some(42.0));
    }

    #[test]
    fn loss_halves_once_per_epoch_and_vegas_resumes_after() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 40);
        let w = cc.cwnd();
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), w / 2);
        assert_eq!(cc.telemetry().state, "recovery");
        // Another packet from before the reduction: no second halving.
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), w / 2);
        // Recovery ends with the first ACK of a packet sent after it began; then Vegas grows
        // by a packet per RTT again (no queue: diff = 0).
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.telemetry().state, "congestion_avoidance");
        // A loss declared late for a packet sent before the reduction changes nothing.
        let w = cc.cwnd();
        cc.on_loss(flow.now, &loss(0, Time::ZERO, MSS, MSS));
        assert_eq!(cc.cwnd(), w);
        let before = cc.cwnd();
        flow.run_rtts(&mut cc, 5);
        assert_eq!(cc.cwnd() - before, 5 * MSS);
    }

    #[test]
    fn params_are_validated() {
        use serde_json::json;
        assert_params(
            json!({"name": "vegas", "alpha": 1, "beta": 3, "gamma": 2}),
            &[
                json!({"name": "vegas", "alpha": 5, "beta": 4}),
                json!({"name": "vegas", "gamma": -1}),
                json!({"name": "vegas", "delta": 1}),
            ],
        );
    }
}
