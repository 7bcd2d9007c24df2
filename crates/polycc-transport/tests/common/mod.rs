//! Shared by the transport's integration tests: a recording controller and scripted sends
//! and ACKs (time is passed in; nothing sleeps).

#![allow(dead_code, unused_imports)] // each test file uses a different part

pub use polycc::signals::{AckEvent, Arrival, Feedback, LossEvent, PacketOutcome, SentPacket};
pub use polycc::{Bytes, Calibration, CongestionControl, Duration, Time};
pub use polycc_transport::{
    AckError, AckInfo, Config, EcnCounts, LossOutcome, LossRules, Outgoing, PacketEvent, SendError,
    SendPermit, Sender, Timeout, PTO_PROBES,
};
pub use std::sync::{Arc, Mutex};

pub const MSS: Bytes = 1000;
pub const WINDOW: Bytes = 10 * MSS;

pub type Log = Arc<Mutex<Vec<String>>>;

/// A fixed-window controller that logs every event, and optionally paces.
pub struct Recorder {
    pub log: Log,
    pub pacing: Option<polycc::Rate>,
    pub timer: Option<Time>,
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

pub fn config() -> Config {
    Config {
        max_datagram: MSS,
        max_ack_delay: Duration::from_millis(25),
        pacing_fallback: false,
        rwnd: u64::MAX,
    }
}

pub fn sender(pacing: Option<polycc::Rate>) -> (Sender<u64>, Log) {
    let log = Log::default();
    let cc = Recorder {
        log: Log::clone(&log),
        pacing,
        timer: None,
    };
    (Sender::new(Box::new(cc), config()), log)
}

pub fn ms(x: u64) -> Time {
    Time::ZERO + Duration::from_millis(x)
}

pub fn send(s: &mut Sender<u64>, now: Time, n: u64) {
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
pub fn ack(
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

pub fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().expect("not poisoned"))
}
