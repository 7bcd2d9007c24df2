//! The loss-detection timer: probe timeouts and their back-off, persistent congestion, and one
//! connection timer shared with the controller's.

mod common;

use common::*;

#[test]
fn a_probe_timeout_allows_two_packets_beyond_the_window_and_backs_off() {
    let (mut s, log) = sender(None);
    send(&mut s, ms(1000), 10);
    assert_eq!(s.poll_send(ms(1000), MSS), SendPermit::Blocked);
    ack(&mut s, ms(1100), &[0..=0], 0, &[]);
    // RTT 100 ms: PTO = srtt + max(4 rttvar, 1 ms) + max_ack_delay = 100 + 200 + 25 ms after
    // the last ack-eliciting packet (sent at 1000 ms).
    assert_eq!(s.loss_deadline(), Some(ms(1325)));
    send(&mut s, ms(1100), 1);
    assert_eq!(s.poll_send(ms(1100), MSS), SendPermit::Blocked);
    let pto = s.loss_deadline().expect("armed");
    assert_eq!(pto, ms(1425));
    take(&log);
    let t = s.on_loss_timeout(pto, &mut |_| {});
    assert_eq!(t, Timeout::Probe { probes: PTO_PROBES });
    assert!(
        take(&log).is_empty(),
        "a PTO is not shown to the controller"
    );
    // The oldest packet in flight is what a probe resends when there is no new data.
    assert_eq!(s.in_flight_payloads().next(), Some(101));
    for _ in 0..PTO_PROBES {
        assert_eq!(s.poll_send(pto, MSS), SendPermit::Now);
        send(&mut s, pto, 1);
    }
    assert_eq!(s.poll_send(pto, MSS), SendPermit::Blocked);
    // The next PTO is twice as long, counted from the last probe.
    assert_eq!(
        s.loss_deadline(),
        Some(pto + Duration::from_millis(2 * 325))
    );
}

#[test]
fn a_long_run_of_losses_is_persistent_congestion() {
    let (mut s, log) = sender(None);
    send(&mut s, ms(1000), 1);
    ack(&mut s, ms(1100), &[0..=0], 0, &[]);
    // Packets 1..=9 sent 100 ms apart, then 10 acknowledged 100 ms after it was sent: 1..=9 are
    // lost, a run spanning 800 ms, shorter than 3 × (srtt + 4 rttvar + max_ack_delay) =
    // 3 × (100 + 150 + 25) ms: no persistent congestion.
    for i in 0..9 {
        send(&mut s, ms(1100 + 100 * i), 1);
    }
    send(&mut s, ms(2000), 1);
    take(&log);
    ack(&mut s, ms(2100), &[10..=10], 10, &[]);
    assert!(take(&log)
        .iter()
        .any(|l| l.starts_with("loss") && l.ends_with("persistent=false")));

    // A run spanning 1100 ms, over 3 × (100 + 112.5 + 25) ms: packets 11..=22 sent 100 ms
    // apart, then 23 acknowledged.
    for i in 0..12 {
        send(&mut s, ms(2100 + 100 * i), 1);
    }
    send(&mut s, ms(3300), 1);
    let min_before = s.rtt().min();
    ack(&mut s, ms(3400), &[23..=23], 23, &[]);
    let l = take(&log);
    assert!(
        l.iter()
            .any(|l| l.starts_with("loss") && l.ends_with("persistent=true")),
        "{l:?}"
    );
    // RFC 9002 §5.2: min_rtt is reset on persistent congestion, to the next sample.
    assert_eq!(min_before, Duration::from_millis(100));
    assert_eq!(s.rtt().min(), s.rtt().latest());
}

#[test]
fn one_timer_serves_loss_detection_and_the_controller() {
    let (mut s, log) = sender(None);
    send(&mut s, ms(1000), 2);
    take(&log);
    // The controller wants a timer at 1200 ms; the PTO (initial RTT 333 ms: 333 + 4 × 166.5 +
    // 25 ms) is later, so the connection's one timer is the controller's.
    let rec = Recorder {
        log: Log::clone(&log),
        pacing: None,
        timer: Some(ms(1200)),
    };
    let mut s2 = Sender::<u64>::new(Box::new(rec), config());
    send(&mut s2, ms(1000), 2);
    take(&log);
    assert_eq!(
        s2.loss_deadline(),
        Some(ms(1000) + Duration::from_micros(1_024_000))
    );
    assert_eq!(s2.next_timeout(), Some(ms(1200)));
    // Early: nothing is due.
    assert_eq!(s2.on_timeout(ms(1100), &mut |_| {}), None);
    assert!(take(&log).is_empty());
    assert_eq!(s2.on_timeout(ms(1200), &mut |_| {}), None);
    assert_eq!(take(&log), ["timer at 1200 ms"]);
    // Now the PTO is next.
    let pto = s2.next_timeout().expect("packets in flight");
    assert_eq!(
        s2.on_timeout(pto, &mut |_| {}),
        Some(Timeout::Probe { probes: PTO_PROBES })
    );

    // A new path: a fresh controller and RTT estimate; the packets in flight stay.
    ack(&mut s, ms(1050), &[0..=0], 0, &[]);
    assert!(s.rtt().has_sample());
    let fresh = Recorder {
        log: Log::default(),
        pacing: None,
        timer: None,
    };
    s.new_path(Box::new(fresh));
    assert!(!s.rtt().has_sample());
    assert_eq!((s.in_flight(), s.next_pn()), (MSS, 2));
}

fn linux_sender() -> (Sender<u64>, Log) {
    let (mut s, log) = sender(None);
    s.set_loss_rules(LossRules::linux());
    (s, log)
}

#[test]
fn tcp_timeouts_probe_the_tail_once_then_the_rto_declares_everything_lost() {
    let (mut s, log) = linux_sender();
    send(&mut s, ms(1000), 10);
    ack(&mut s, ms(1100), &[0..=0], 0, &[]);
    // srtt 100 ms, rttvar 50 ms: RTO = 100 + max(4 × 50, 200) = 300 ms from this ACK; the
    // tail-loss probe comes first, 2·srtt + 2 ms after it (9 packets in flight).
    assert_eq!(s.loss_deadline(), Some(ms(1302)));
    let t = s.on_loss_timeout(ms(1302), &mut |_| {});
    assert_eq!(t, Timeout::Probe { probes: 1 });
    take(&log);
    assert_eq!(s.poll_send(ms(1302), MSS), SendPermit::Now);
    send(&mut s, ms(1302), 1);
    assert_eq!(s.poll_send(ms(1302), MSS), SendPermit::Blocked);
    // Then the RTO, counted from the probe (`tcp_send_loss_probe` clears the pending timer so
    // that `tcp_rearm_rto` "will restart timer from now"), not from the last ACK (1400 ms): all
    // 10 packets in flight are lost and the controller hears persistent congestion (the
    // window's collapse, `tcp_enter_loss`).
    assert_eq!(s.loss_deadline(), Some(ms(1602)));
    let mut lost = Vec::new();
    let t = s.on_loss_timeout(ms(1602), &mut |e| lost.push(e));
    assert_eq!(
        t,
        Timeout::Losses(LossOutcome {
            lost_packets: 10,
            persistent_congestion: true
        })
    );
    assert_eq!((lost.len(), s.in_flight()), (10, 0));
    let losses: Vec<_> = take(&log)
        .into_iter()
        .filter(|l| l.starts_with("loss"))
        .collect();
    assert_eq!(
        losses,
        ["loss 10 packets largest=10 in_flight=0 persistent=true"]
    );
    // Linux keeps its min RTT filter through an RTO.
    assert_eq!(s.rtt().min(), Duration::from_millis(100));
    // The resent packet starts the timer again, backed off: 2 × 300 ms.
    send(&mut s, ms(1602), 1);
    assert_eq!(s.loss_deadline(), Some(ms(2202)));
}

#[test]
fn a_lone_packet_waits_the_minimum_rto_longer_for_its_probe() {
    let (mut s, _log) = linux_sender();
    send(&mut s, ms(1000), 2);
    ack(&mut s, ms(1040), &[0..=0], 0, &[]);
    // One packet in flight, srtt 40 ms: the probe waits for a delayed ACK, 2 × 40 + 200 ms,
    // but not past the RTO (40 + max(80, 200) = 240 ms after the ACK).
    assert_eq!(s.loss_deadline(), Some(ms(1280)));
}

#[test]
fn rack_from_the_start_waits_the_latest_rtt_plus_a_quarter_min_rtt() {
    for (linux, deadline_us) in [(false, 1_168_750), (true, 1_175_000)] {
        let (mut s, _log) = if linux { linux_sender() } else { sender(None) };
        send(&mut s, ms(1000), 10);
        ack(&mut s, ms(1100), &[0..=0], 0, &[]);
        // Packet 5 acknowledged 150 ms after it was sent: 1 and 2 are 3 or more below it (the
        // packet threshold, in both); 3 and 4 wait for the time threshold: RFC 9002's 9/8 of
        // max(srtt 106.25, latest 150) ms, or RACK's latest 150 + min 100 / 4 ms.
        let lost = ack(&mut s, ms(1150), &[5..=5], 5, &[]);
        let lost: Vec<_> = lost
            .iter()
            .filter_map(|e| match e {
                PacketEvent::Lost { pn, .. } => Some(*pn),
                _ => None,
            })
            .collect();
        assert_eq!(lost, [1, 2]);
        assert_eq!(
            s.loss_deadline(),
            Some(Time::ZERO + Duration::from_micros(deadline_us)),
            "linux = {linux}"
        );
    }
}
