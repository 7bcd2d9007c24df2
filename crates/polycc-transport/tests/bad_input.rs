//! Packets and ACKs a sender must refuse, whole: nothing of a bad ACK is applied.

mod common;

use common::*;

#[test]
fn bad_acks_and_packet_numbers_are_rejected_whole() {
    let (mut s, log) = sender(None);
    send(&mut s, ms(1000), 3);
    // Packet numbers 3 and 4 skipped (an optimistic-ACK check); 5 is sent.
    let p = Outgoing {
        pn: 5,
        bytes: MSS,
        ack_eliciting: true,
        retransmission: false,
        payload: 5,
    };
    s.on_packet_sent(ms(1000), p).expect("increasing");
    assert_eq!(
        s.on_packet_sent(ms(1000), p),
        Err(SendError::PnReused { pn: 5, next: 6 })
    );
    take(&log);
    let mut sink = |_: PacketEvent<u64>| panic!("nothing is applied");
    let bad = |largest| AckInfo {
        largest,
        ..AckInfo::default()
    };
    assert_eq!(
        s.on_ack_received(ms(1040), &[0..=9], bad(9), &mut sink),
        Err(AckError::UnsentPacket { pn: 9 })
    );
    assert_eq!(
        s.on_ack_received(ms(1040), &[0..=1, 6..=6], bad(1), &mut sink),
        Err(AckError::UnsentPacket { pn: 6 })
    );
    assert_eq!(
        s.on_ack_received(ms(1040), &[0..=1, 4..=5], bad(5), &mut sink),
        Err(AckError::UnsentPacket { pn: 4 })
    );
    #[allow(clippy::reversed_empty_ranges)]
    let empty = [2..=1];
    assert_eq!(
        s.on_ack_received(ms(1040), &empty, bad(1), &mut sink),
        Err(AckError::EmptyRange { start: 2, end: 1 })
    );
    assert!(take(&log).is_empty());
    assert_eq!(s.in_flight(), 4 * MSS);
    // ECN counts may only grow; CE increments are reported.
    let ecn = |ce| AckInfo {
        largest: 0,
        ecn: Some(EcnCounts {
            ect0: 10,
            ect1: 0,
            ce,
        }),
        ..AckInfo::default()
    };
    let out = s
        .on_ack_received(ms(1040), &[0..=0], ecn(2), &mut |_| {})
        .expect("valid");
    assert_eq!(out.ecn_ce, 2);
    assert!(matches!(
        s.on_ack_received(ms(1041), &[1..=1], ecn(1), &mut |_| {}),
        Err(AckError::EcnDecreased { .. })
    ));
    assert_eq!(s.in_flight(), 3 * MSS, "the rejected ACK left 1 in flight");
}

#[test]
fn packets_over_256_mib_are_refused() {
    let (mut s, _log) = sender(None);
    let p = |pn, bytes| Outgoing {
        pn,
        bytes,
        ack_eliciting: false,
        retransmission: false,
        payload: pn,
    };
    let max = (1 << 28) - 1;
    s.on_packet_sent(ms(1000), p(0, max))
        .expect("the largest size");
    assert_eq!(
        s.on_packet_sent(ms(1000), p(1, max + 1)),
        Err(SendError::TooLarge { bytes: max + 1 })
    );
    assert_eq!(
        s.on_packet_sent(ms(1000), p(1, 1 << 32)),
        Err(SendError::TooLarge { bytes: 1 << 32 })
    );
    s.on_packet_sent(ms(1000), p(1, MSS))
        .expect("nothing recorded for the refused ones");
}
