//! The send path: pacing, and packets that elicit no ACK.

mod common;

use common::*;

#[test]
fn pacing_spaces_packets_by_the_controllers_rate() {
    // 8 Mbit/s: a 1000-byte packet every 1 ms.
    let (mut s, _) = sender(Some(polycc::Rate::from_mbps(8)));
    send(&mut s, ms(1000), 1);
    assert_eq!(s.poll_send(ms(1000), MSS), SendPermit::At(ms(1001)));
    assert_eq!(s.next_send_time(ms(1000), MSS), Some(ms(1001)));
    assert!(s.can_send(ms(1001), MSS));
    send(&mut s, ms(1001), 1);
    // Each packet moves the next departure on by its own transmission time.
    assert_eq!(s.poll_send(ms(1001), MSS), SendPermit::At(ms(1002)));
}

#[test]
fn packets_that_elicit_no_ack_are_not_in_flight() {
    let (mut s, log) = sender(None);
    send(&mut s, ms(1000), 1);
    let p = Outgoing {
        pn: 1,
        bytes: 50,
        ack_eliciting: false,
        retransmission: false,
        payload: 0,
    };
    s.on_packet_sent(ms(1000), p).expect("in order");
    assert_eq!(s.in_flight(), MSS);
    assert_eq!(take(&log), ["sent 0 in_flight=1000"]);
    // Acknowledging it alone is no news.
    let ev = ack(&mut s, ms(1040), &[1..=1], 1, &[]);
    assert!(ev.is_empty());
    assert!(take(&log).is_empty());
}
