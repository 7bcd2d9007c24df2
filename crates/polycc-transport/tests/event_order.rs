//! The event-order contract of the crate docs, checked with scripted ACK frames: time is passed
//! in, nothing sleeps, and a recording controller writes down every call it gets.

mod common;

use common::*;

#[test]
fn sends_then_acks_in_order_then_losses_just_before_their_ack() {
    let (mut s, log) = sender(None);
    send(&mut s, ms(1000), 6);
    assert_eq!(take(&log)[5], "sent 5 in_flight=6000");

    // ACK of 0 and 1 with two receive timestamps: per-packet detail, feedback, then the ACK.
    let arr = [Arrival::default(); 2];
    let ev = ack(&mut s, ms(1040), &[0..=1], 1, &arr);
    assert_eq!(
        ev,
        vec![
            PacketEvent::Acked {
                pn: 0,
                payload: 100
            },
            PacketEvent::Acked {
                pn: 1,
                payload: 101
            }
        ]
    );
    assert_eq!(
        take(&log),
        [
            "acked 0",
            "acked 1",
            "feedback 2",
            "ack 2 packets prior=6000 in_flight=4000 min_rtt=Some(40) max_rtt=Some(40)"
        ]
    );

    // ACK of 5 alone: 2 is 3 below it (RFC 9002 packet threshold) and is lost; 3 and 4 are
    // not yet. The loss comes after the packet detail and before the ACK, whose in_flight
    // already leaves out the lost packet.
    let ev = ack(&mut s, ms(1045), &[5..=5], 5, &[]);
    assert_eq!(
        ev,
        vec![
            PacketEvent::Acked {
                pn: 5,
                payload: 105
            },
            PacketEvent::Lost {
                pn: 2,
                payload: 102
            }
        ]
    );
    assert_eq!(
        take(&log),
        [
            "acked 5",
            "lost 2",
            "loss 1 packets largest=2 in_flight=2000 persistent=false",
            "ack 1 packets prior=4000 in_flight=2000 min_rtt=Some(45) max_rtt=Some(45)"
        ]
    );

    // 3 and 4 become lost by time (9/8 of the RTT after they were sent): the loss timer fires,
    // and the losses come alone, without an ACK.
    let deadline = s.loss_deadline().expect("armed");
    assert!(deadline > ms(1045) && deadline < ms(1060), "{deadline:?}");
    let mut seen = Vec::new();
    let t = s.on_loss_timeout(deadline, &mut |e| seen.push(e));
    assert!(matches!(t, Timeout::Losses(l) if l.lost_packets == 2));
    assert_eq!(seen.len(), 2);
    assert_eq!(
        take(&log),
        [
            "lost 3",
            "lost 4",
            "loss 2 packets largest=4 in_flight=0 persistent=false"
        ]
    );

    // A late ACK of 2: a spurious loss. The sink hears of it; the controller does not, and as
    // nothing is newly acknowledged there is no `on_ack` either.
    let ev = ack(&mut s, deadline, &[2..=2], 5, &[]);
    assert_eq!(
        ev,
        vec![PacketEvent::SpuriousLoss {
            pn: 2,
            payload: 102
        }]
    );
    assert!(take(&log).is_empty());
    // The same ACK again changes nothing.
    assert!(ack(&mut s, deadline, &[2..=2], 5, &[]).is_empty());
}

#[test]
fn a_stretch_ack_reports_the_rtts_of_its_latest_and_earliest_sent_packets() {
    let (mut s, log) = sender(None);
    // Four packets 1 ms apart, then one ACK for them all at 1050 ms: the latest sent gives the
    // smallest RTT (47 ms), the earliest the largest (50 ms, Linux's `seq_rtt_us`); the RTT
    // estimator samples the largest acknowledged (47 ms).
    for i in 0..4 {
        send(&mut s, ms(1000 + i), 1);
    }
    take(&log);
    let mut n = 0;
    let out = s
        .on_ack_received(
            ms(1050),
            &[0..=3],
            AckInfo {
                largest: 3,
                ack_delay: Duration::from_millis(2),
                ..AckInfo::default()
            },
            &mut |_| n += 1,
        )
        .expect("valid");
    assert_eq!(
        take(&log).last().map(String::as_str),
        Some("ack 4 packets prior=4000 in_flight=0 min_rtt=Some(47) max_rtt=Some(50)")
    );
    assert_eq!(out.rtt_sample, Some(Duration::from_millis(47)));
    assert_eq!((out.acked_packets, out.acked_bytes, n), (4, 4 * MSS, 4));
    // First sample: srtt is the sample itself (RFC 9002 §5.3), the ACK delay not subtracted.
    assert_eq!(s.rtt().smoothed(), Duration::from_millis(47));
}
