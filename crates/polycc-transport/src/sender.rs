//! The sender state machine: configuration, the send path (window, pacing, application-limited
//! marks) and what the caller reads back. ACK processing is in [`crate::ack`], loss detection and
//! timers in [`crate::loss`].

use crate::ledger::{Ledger, State, MAX_BYTES};
use crate::loss_rules::LossRules;
use crate::pacer::{tso_autosize, Pacer, PacingClock};
use crate::reordering::Reordering;
use polycc::estimators::delivery_rate::{DeliveryRateEstimator, PacketDeliveryState};
use polycc::estimators::rtt::RttEstimator;
use polycc::signals::SentPacket;
use polycc::units::{Bytes, Duration, Rate, Time};
use polycc::CongestionControl;
use thiserror::Error;

/// Linux `tcp_update_pacing_rate`: without a rate from the controller, pacing runs at 200 % of
/// cwnd/srtt in slow start and 120 % after (sysctls `tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`).
pub const PACING_SS_RATIO: f64 = 2.0;
/// See [`PACING_SS_RATIO`].
pub const PACING_CA_RATIO: f64 = 1.2;

/// The rate a sender paces at when the controller gives none (Linux `tcp_update_pacing_rate`):
/// `cwnd / srtt` × [`PACING_SS_RATIO`] in slow start, × [`PACING_CA_RATIO`] after.
pub fn fallback_pacing_rate(cwnd: Bytes, srtt: Duration, in_slow_start: bool) -> Rate {
    let ratio = if in_slow_start {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    };
    Rate::from_bytes_over(cwnd, srtt).mul_f64(ratio)
}

/// How the sender is set up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Bytes of a full-sized datagram on the wire: the "one packet" of window arithmetic
    /// (QUIC's max_datagram_size; for TCP, MSS plus headers). Given to the controller in every
    /// [`polycc::AckEvent`] and [`polycc::LossEvent`] as `mss`.
    pub max_datagram: Bytes,
    /// The peer's max_ack_delay (RFC 9002 §5.3): caps the ACK delay subtracted from RTT
    /// samples and is part of the PTO and persistent-congestion durations.
    pub max_ack_delay: Duration,
    /// Pace at cwnd/srtt × [`PACING_SS_RATIO`] or [`PACING_CA_RATIO`] when the controller gives
    /// no rate (Linux with `fq`); `false` sends window-limited bursts.
    pub pacing_fallback: bool,
    /// The peer's receive window: bytes in flight never exceed it, whatever the controller's
    /// window (`u64::MAX` for none).
    pub rwnd: Bytes,
}

/// What the window and pacing allow for a packet of a given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendPermit {
    /// Send it now.
    Now,
    /// The window has room; pacing releases the packet at this time.
    At(Time),
    /// The window (the smaller of the controller's and the receive window) is full: wait for
    /// an ACK, a loss or a timeout.
    Blocked,
}

/// One packet as the caller hands it to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing<P> {
    /// Its packet number: at least [`Sender::next_pn`]; numbers jumped over are recorded as
    /// skipped, and an ACK of one is an error.
    pub pn: u64,
    /// Bytes on the wire.
    pub bytes: Bytes,
    /// Whether the packet asks for an ACK. Only ack-eliciting packets are in flight, counted
    /// against the window, paced, declared lost and shown to the controller (RFC 9002 §2).
    pub ack_eliciting: bool,
    /// It carries data sent before (told to the controller in [`SentPacket`]).
    pub retransmission: bool,
    /// The caller's own tag, handed back when the packet is acknowledged or declared lost
    /// (e.g. the stream frames it carries, or a segment number).
    pub payload: P,
}

/// A packet the sender cannot take.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum SendError {
    /// Packet numbers must increase.
    #[error("packet number {pn} was already used (next is {next})")]
    PnReused {
        /// The number given.
        pn: u64,
        /// The smallest number allowed.
        next: u64,
    },
    /// The number does not fit the ledger's record.
    #[error("packet of {bytes} bytes is larger than 256 MiB")]
    TooLarge {
        /// The size given.
        bytes: Bytes,
    },
}

/// The sending half of a reliable transport around one congestion controller. `P` is the
/// caller's per-packet tag (see [`Outgoing::payload`]).
pub struct Sender<P> {
    pub(crate) cc: Box<dyn CongestionControl>,
    pub(crate) rtt: RttEstimator,
    pub(crate) rate: DeliveryRateEstimator,
    pub(crate) config: Config,
    pub(crate) ledger: Ledger<P>,
    pub(crate) largest_acked: Option<u64>,
    pub(crate) in_flight: Bytes,
    pub(crate) reordering: Reordering,
    /// When pacing lets the next packet leave.
    pacing: PacingClock,
    /// Loss-detection and timeout rules.
    pub(crate) rules: LossRules,
    /// When the retransmission timeout started counting ([`crate::Timeouts::Tcp`]): the last
    /// ACK that acknowledged data, or the send that found nothing in flight.
    pub(crate) rto_base: Time,
    /// When the earliest packet not yet lost by time becomes lost (RFC 9002 loss_time).
    pub(crate) loss_time: Option<Time>,
    pub(crate) pto_count: u32,
    /// Probe packets the last PTO allows beyond the window.
    pub(crate) probes: u32,
    pub(crate) last_ack_eliciting: Time,
    pub(crate) first_rtt_sample: Option<Time>,
    pub(crate) app_limited: bool,
    pub(crate) ecn: crate::ack::EcnCounts,
}

impl<P: Copy> Sender<P> {
    /// A sender that has sent nothing yet.
    pub fn new(cc: Box<dyn CongestionControl>, config: Config) -> Self {
        Sender {
            cc,
            rtt: RttEstimator::new(),
            rate: DeliveryRateEstimator::new(),
            config,
            ledger: Ledger::new(),
            largest_acked: None,
            in_flight: 0,
            reordering: Reordering::new(),
            pacing: PacingClock::default(),
            rules: LossRules::default(),
            rto_base: Time::ZERO,
            loss_time: None,
            pto_count: 0,
            probes: 0,
            last_ack_eliciting: Time::ZERO,
            first_rtt_sample: None,
            app_limited: false,
            ecn: Default::default(),
        }
    }

    /// Follows `rules` for loss detection and timeouts from now on (the default is RFC 9002's;
    /// set before the first packet).
    pub fn set_loss_rules(&mut self, rules: LossRules) {
        self.rules = rules;
        self.reordering = Reordering::for_rules(&rules);
    }

    /// Paces with `pacer` (the default sends one packet at a time; set before the first packet).
    pub fn set_pacer(&mut self, pacer: Pacer) {
        self.pacing = PacingClock::new(pacer);
    }

    /// Replaces the controller and forgets what was learnt about the path (RTT, delivery rate,
    /// reordering), keeping the packets in flight and the packet-number space: what RFC 9000
    /// §9.4 asks of a connection that moves to a new path, and what a new connection over the
    /// same link looks like to a controller.
    pub fn new_path(&mut self, cc: Box<dyn CongestionControl>) {
        self.cc = cc;
        self.rtt = RttEstimator::new();
        self.rate = DeliveryRateEstimator::new();
        self.reordering = Reordering::for_rules(&self.rules);
        self.first_rtt_sample = None;
    }

    /// The connection's handshake completed at `now` after `rtt` (TCP's SYN to its SYN-ACK):
    /// the first RTT sample, taken before any data is sent, as the kernel takes it from the
    /// SYN-ACK; the controller hears of it ([`CongestionControl::on_handshake`]).
    pub fn on_handshake(&mut self, now: Time, rtt: Duration) {
        self.rtt.update(now, rtt, Duration::ZERO);
        self.cc.on_handshake(now, rtt);
    }

    /// The controller.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The controller, for calls outside the event flow (intent changes, frames, its timer).
    pub fn controller_mut(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    /// The RTT estimator (RFC 9002 §5).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Bytes of ack-eliciting packets neither acknowledged nor declared lost.
    pub fn in_flight(&self) -> Bytes {
        self.in_flight
    }

    /// The smallest packet number the next packet may have.
    pub fn next_pn(&self) -> u64 {
        self.ledger.end()
    }

    /// The largest packet number acknowledged so far.
    pub fn largest_acked(&self) -> Option<u64> {
        self.largest_acked
    }

    /// Sets the peer's receive window.
    pub fn set_rwnd(&mut self, rwnd: Bytes) {
        self.config.rwnd = rwnd;
    }

    /// The tags of the packets in flight, oldest first (what a PTO probe may resend).
    pub fn in_flight_payloads(&self) -> impl Iterator<Item = P> + '_ {
        self.ledger.in_flight().map(|(_, r)| r.payload)
    }

    /// The pacing rate in force: the controller's, else cwnd/srtt scaled as Linux does when
    /// [`Config::pacing_fallback`] is set and an RTT sample exists; `None`: no pacing.
    pub fn pacing_rate(&self) -> Option<Rate> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        if !self.config.pacing_fallback || !self.rtt.has_sample() {
            return None;
        }
        Some(fallback_pacing_rate(
            self.cc.cwnd(),
            self.rtt.smoothed(),
            self.cc.in_slow_start(),
        ))
    }

    /// Whether an ack-eliciting packet of `bytes` may leave at `now`: the window first (probes
    /// after a PTO bypass it, RFC 9002 §6.2.4), then pacing.
    #[inline]
    pub fn poll_send(&self, now: Time, bytes: Bytes) -> SendPermit {
        if self.probes == 0 && self.in_flight + bytes > self.cc.cwnd().min(self.config.rwnd) {
            return SendPermit::Blocked;
        }
        match self.pacing.wait(now, || self.burst_goal()) {
            Some(t) => SendPermit::At(t),
            None => SendPermit::Now,
        }
    }

    /// Packets of a Linux TSO burst at the pacing rate in force ([`Pacer::LinuxTso`]).
    fn burst_goal(&self) -> u64 {
        let rate = self.pacing_rate().unwrap_or(Rate::ZERO);
        tso_autosize(rate, self.rtt.min(), self.config.max_datagram)
    }

    /// `poll_send(now, bytes) == SendPermit::Now`.
    pub fn can_send(&self, now: Time, bytes: Bytes) -> bool {
        self.poll_send(now, bytes) == SendPermit::Now
    }

    /// When a packet of `bytes` may leave (`now` or later), or `None` while the window is full.
    pub fn next_send_time(&self, now: Time, bytes: Bytes) -> Option<Time> {
        match self.poll_send(now, bytes) {
            SendPermit::Now => Some(now),
            SendPermit::At(t) => Some(t),
            SendPermit::Blocked => None,
        }
    }

    /// The application has nothing to send although the window is open. Delivery-rate samples
    /// are marked application-limited until what is in flight now is delivered (Linux
    /// `tcp_rate_check_app_limited`), and ACKs report it until the next packet is sent.
    pub fn on_app_limited(&mut self) {
        if !self.app_limited {
            self.app_limited = true;
            self.rate.on_app_limited(self.in_flight);
        }
    }

    /// Records a packet handed to the network; an ack-eliciting one is counted in flight,
    /// advances the pacing clock and is shown to the controller ([`CongestionControl::on_sent`]).
    pub fn on_packet_sent(&mut self, now: Time, p: Outgoing<P>) -> Result<(), SendError> {
        let next = self.ledger.end();
        if p.pn < next {
            return Err(SendError::PnReused { pn: p.pn, next });
        }
        let bytes = u32::try_from(p.bytes)
            .ok()
            .filter(|&b| b as u64 <= MAX_BYTES)
            .ok_or(SendError::TooLarge { bytes: p.bytes })?;
        // Numbers never sent and packets never in flight take no part in rate samples.
        let untracked = PacketDeliveryState {
            sent_time: now,
            ..PacketDeliveryState::default()
        };
        for skipped in next..p.pn {
            self.ledger.skip(skipped, untracked, p.payload);
        }
        if !p.ack_eliciting {
            self.ledger
                .push(p.payload, bytes, State::Untracked, untracked);
            return Ok(());
        }
        if self.in_flight == 0 {
            self.restart_after_idle(now);
            self.rto_base = now;
        }
        let delivery = self.rate.on_sent(now, self.in_flight);
        self.app_limited = false;
        self.probes = self.probes.saturating_sub(1);
        self.ledger
            .push(p.payload, bytes, State::InFlight, delivery);
        self.in_flight += p.bytes;
        self.last_ack_eliciting = now;
        // The rate in force before the controller hears of this packet spaces the next one: a
        // frame scheduler answers per packet (PIBES's burst, then paced).
        let rate = self.pacing_rate();
        let (min_rtt, mss) = (self.rtt.min(), self.config.max_datagram);
        let goal = move || rate.map_or(0, |r| tso_autosize(r, min_rtt, mss));
        self.pacing.on_sent(now, rate, p.bytes, goal);
        self.cc.on_sent(
            now,
            &SentPacket {
                pn: p.pn,
                bytes: p.bytes,
                in_flight: self.in_flight,
                is_retransmission: p.retransmission,
                app_limited: delivery.is_app_limited,
            },
        );
        Ok(())
    }
}
