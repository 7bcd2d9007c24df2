//! The event-order contract of the crate docs, checked with scripted ACK frames: time is passed
//! in, nothing sleeps, and a recording controller writes down every call it gets.

use polycc::signals::{AckEvent, Arrival, Feedback, LossEvent, PacketOutcome, SentPacket};
use polycc::{Bytes, Calibration, CongestionControl, Duration, Time};
use polycc_transport::{
    AckError, AckInfo, Config, EcnCounts, Outgoing, PacketEvent, SendError, SendPermit, Sender,
    Timeout, PTO_PROBES,
};
use std::sync::{Arc, Mutex};

const MSS: Bytes = 1000;
const WINDOW: Bytes = 10 * MSS;

type Log = Arc<Mutex<Vec<String>>>;

/// A fixed-window controller that logs every event, and optionally paces.
struct Recorder {
    log: Log,
    pacing: Option<polycc::Rate>,
    timer: Option<Time>,
}

impl Recorder {
    fn push(&self, s: String) {
        self.log.lock().expect("not poisoned").push(s);
    }
}

impl CongestionControl for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn on_sent(&mut self, _: Time, p: &SentPacket) {
        self.push(format!("sent {} in_flight={}", p.pn, p.in_flight));
    }
    fn on_ack(&mut self, _: Time, a: &AckEvent) {
        self.push(format!(
            "ack {} packets prior={} in_flight={} min_rtt={:?} max_rtt={:?}",
            a.acked_packets,
            a.prior_in_flight,
            a.in_flight,
            a.min_rtt_sample.map(|d| d.0 / 1_000_000),
            a.max_rtt_sample.map(|d| d.0 / 1_000_000)
        ));
    }
    fn on_loss(&mut self, _: Time, l: &LossEvent) {
        self.push(format!(
            "loss {} packets largest={} in_flight={} persistent={}",
            l.lost_packets, l.largest_lost_pn, l.in_flight, l.persistent_congestion
        ));
    }
    fn wants_feedback(&self) -> bool {
        true
    }
    fn on_feedback(&mut self, _: Time, f: &Feedback<'_>) {
        self.push(format!("feedback {}", f.arrivals.len()));
    }
    fn wants_packet_detail(&self) -> bool {
        true
    }
    fn on_packet_acked(&mut self, _: Time, p: &PacketOutcome) {
        self.push(format!("acked {}", p.pn));
    }
    fn on_packet_lost(&mut self, _: Time, p: &PacketOutcome) {
        self.push(format!("lost {}", p.pn));
    }
    fn on_timer(&mut self, now: Time) {
        self.push(format!("timer at {} ms", now.0 / 1_000_000));
        self.timer = None;
    }
    fn next_timer(&self) -> Option<Time> {
        self.timer
    }
    fn calibrate(&mut self, _: Time, _: &Calibration) {}
    fn cwnd(&self) -> Bytes {
        WINDOW
    }
    fn pacing_rate(&self) -> Option<polycc::Rate> {
        self.pacing
    }
}

fn config() -> Config {
    Config {
        max_datagram: MSS,
        max_ack_delay: Duration::from_millis(25),
        pacing_fallback: false,
        rwnd: u64::MAX,
    }
}

fn sender(pacing: Option<polycc::Rate>) -> (Sender<u64>, Log) {
    let log = Log::default();
    let cc = Recorder {
        log: Log::clone(&log),
        pacing,
        timer: None,
    };
    (Sender::new(Box::new(cc), config()), log)
}

fn ms(x: u64) -> Time {
    Time::ZERO + Duration::from_millis(x)
}

fn send(s: &mut Sender<u64>, now: Time, n: u64) {
    for _ in 0..n {
        let pn = s.next_pn();
        let p = Outgoing {
            pn,
            bytes: MSS,
            ack_eliciting: true,
            retransmission: false,
            payload: 100 + pn,
        };
        s.on_packet_sent(now, p).expect("in order");
    }
}

/// Sends an ACK and returns what the sink heard.
fn ack(
    s: &mut Sender<u64>,
    now: Time,
    ranges: &[std::ops::RangeInclusive<u64>],
    largest: u64,
    arrivals: &[Arrival],
) -> Vec<PacketEvent<u64>> {
    let mut seen = Vec::new();
    let info = AckInfo {
        largest,
        arrivals,
        ..AckInfo::default()
    };
    s.on_ack_received(now, ranges, info, &mut |e| seen.push(e))
        .expect("a valid ACK");
    seen
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().expect("not poisoned"))
}

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
