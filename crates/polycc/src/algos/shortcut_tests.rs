//! The per-event shortcuts PolyCC's window fusion calls, `on_ack_cwnd` and `calibrate_cwnd`,
//! leave every standard controller exactly as `on_ack` then `cwnd()`, and `calibrate` with only
//! the window, do (some controllers override them with a shorter path).

use super::test_support::{ack, loss};
use crate::cc::{Calibration, CcContext, CongestionControl};
use crate::estimators::rtt::RttEstimator;
use crate::registry::{CcSpec, Registry};
use crate::signals::SentPacket;
use crate::units::{Bytes, Duration, Time};

const MSS: Bytes = 1000;

/// Window, pacing rate and every telemetry value, NaN-safe.
fn state(cc: &dyn CongestionControl) -> (Bytes, Option<u64>, Vec<(&'static str, u64)>) {
    let t = cc.telemetry();
    (
        cc.cwnd(),
        cc.pacing_rate().map(|r| r.as_bps()),
        t.entries().iter().map(|(k, v)| (*k, v.to_bits())).collect(),
    )
}

#[test]
fn the_shortcuts_match_the_general_calls_for_every_controller() {
    let registry = Registry::standard();
    let ctx = CcContext::new(MSS);
    for name in registry.names() {
        let build = || registry.build(&CcSpec::named(name), &ctx).expect("builds");
        let (mut plain, mut short) = (build(), build());
        let mut rtt = RttEstimator::new();
        for pn in 0..400u64 {
            // 10 ms between sends, RTT 40 ms growing by 0.1 ms per packet (a filling queue).
            let sent_at = Time::ZERO + Duration::from_millis(10 * pn);
            let sample = Duration::from_micros(40_000 + 100 * pn);
            let now = sent_at + sample;
            let sent = SentPacket {
                pn,
                bytes: MSS,
                in_flight: 4 * MSS,
                ..SentPacket::default()
            };
            plain.on_sent(sent_at, &sent);
            short.on_sent(sent_at, &sent);
            if pn % 97 == 96 {
                let l = loss(pn - 3, sent_at, MSS, MSS);
                plain.on_loss(now, &l);
                short.on_loss(now, &l);
            }
            rtt.update(now, sample, Duration::ZERO);
            let a = ack(pn, sent_at, MSS, MSS, sample, rtt.snapshot());
            plain.on_ack(now, &a);
            assert_eq!(short.on_ack_cwnd(now, &a), plain.cwnd(), "{name} ACK {pn}");
            if pn % 5 == 4 {
                // Above and below the window, alternately.
                let w = if pn % 10 == 9 {
                    plain.cwnd() * 3 / 2
                } else {
                    plain.cwnd() / 2
                };
                plain.calibrate(
                    now,
                    &Calibration {
                        cwnd: Some(w),
                        ..Calibration::default()
                    },
                );
                assert_eq!(
                    short.calibrate_cwnd(now, w),
                    plain.cwnd(),
                    "{name} write {pn}"
                );
            }
            assert_eq!(
                state(short.as_ref()),
                state(plain.as_ref()),
                "{name} after {pn}"
            );
        }
    }
}
