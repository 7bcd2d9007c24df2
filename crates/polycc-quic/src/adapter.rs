//! One polycc controller behind s2n-quic's `CongestionController` trait.
//!
//! s2n-quic (feature `unstable-congestion-controller`) calls its controller per packet sent,
//! per RTT update, per packet lost, once per ACK with the bytes it newly acknowledged, and asks
//! it for the window, the bytes in flight and the earliest departure time of the next packet.
//! [`Core`] turns these calls into polycc's events with the simulator's semantics (the contract
//! on [`polycc::CongestionControl`] and in `polycc-transport`'s crate docs):
//!
//! - **sent**: [`CongestionControl::on_sent`] per congestion-controlled packet (s2n counts
//!   ACK-only packets with 0 bytes; they are not shown), numbered by the adapter in send order,
//!   with the bytes in flight after it and the application-limited mark of its delivery-rate
//!   state.
//! - **delivery rate**: polycc-transport's estimator (`DeliveryRateEstimator`, the one the
//!   simulator's sender uses); its per-packet state travels in s2n's `PacketInfo` and comes back
//!   with the newest packet of each ACK, which is the packet the draft takes the sample from.
//!   s2n's `app_limited` flag on each send marks the application-limited phases.
//! - **one ACK**: the per-packet outcomes (for controllers that ask) from the [`Ledger`]'s
//!   attribution, then the losses s2n declared while processing this ACK (it reports them before
//!   the ACK, RFC 9002 Appendix A.7) as per-packet outcomes and **one** `on_loss`, then one
//!   `on_ack` whose `in_flight` excludes both. The RTT values are s2n's estimator's (RFC 9002
//!   §5, as polycc's), read before the events.
//! - **losses by timer**: s2n calls `on_packet_lost` per packet; consecutive calls with one
//!   timestamp are one detection pass, closed (one `on_loss`) by the next call of any kind.
//! - **pacing**: the controller's `pacing_rate()`, else cwnd/srtt with Linux's gains as
//!   `polycc-transport` paces (`fallback_pacing_rate`) on paths of at least
//!   [`MIN_FALLBACK_PACING_RTT`], spaced per packet by its `PacingClock`;
//!   `earliest_departure_time()` is that clock's next send time.
//! - **controller timers**: s2n has no timer for its controller, so a due `next_timer()` fires
//!   at the next event (a send or an ACK) after its time.
//!
//! Deliberate deviations, each because s2n does not hand the fact over: ECN-CE marks
//! (`on_explicit_congestion`) are counted in [`AdapterStats::ce_marks`] and not shown to the
//! controller, as `polycc-transport` reports them to its caller only; retransmissions are not
//! marked (`SentPacket::is_retransmission` is false: s2n retransmits frames, not packets); packets
//! s2n discards (a dropped packet-number space, lost MTU probes) leave the bytes in flight without
//! a loss event. To a controller that wants packet detail such a packet is reported lost
//! (`on_packet_lost`, no `on_loss`) once the ledger drops it, three packets below a newer
//! acknowledged one, since no outcome will ever come for it: PCC's monitor intervals otherwise
//! waited for it until 64 of them were pending (seconds), steering meanwhile on stale results.
//!
//! - **receiver timing**: for a controller that wants it
//!   ([`CongestionControl::wants_feedback`]), each packet's record (number, bytes, send time)
//!   is left for the endpoint's [`crate::TimingEvents`] to file under its QUIC packet number;
//!   arrivals the peer reported ([`crate::timing`]) and the application posted to the handle
//!   go to [`CongestionControl::on_feedback`] at the next event, after its other calls, with
//!   the receiver's times (another clock: controllers use differences only). Without reports
//!   (a peer that sends none) LEDBAT, GCC and PIBES run on RTTs alone.
//! - **media frames**: frames a media source posts to the handle
//!   ([`ControllerHandle::post_frame`]) go to [`CongestionControl::on_frame`] at the next event,
//!   before a send's `on_sent` (a frame scheduler such as PIBES then paces that packet as the
//!   frame's first).

use crate::ack_delay::ack_delay_taken;
use crate::clock::{from_std, Clock};
use crate::handle::{ControllerHandle, Shared, Snapshot, PUBLISH_INTERVAL};
use crate::ledger::{Acked, Ledger};
use crate::report::ReportedArrival;
use polycc::estimators::delivery_rate::{DeliveryRateEstimator, PacketDeliveryState};
use polycc::estimators::rtt::RttSnapshot;
use polycc::{
    AckEvent, Arrival, Bytes, CongestionControl, Duration, Feedback, Intent, LossEvent,
    PacketOutcome, Rate, SentPacket, Telemetry, Time,
};
use polycc_transport::{fallback_pacing_rate, Pacer, PacingClock};
use s2n_quic::provider::congestion_controller::{RttEstimator, Timestamp};
use std::net::SocketAddr;
use std::sync::Arc;

/// Below this smoothed RTT the fallback pacing (for controllers that give no rate) is off, as
/// s2n-quic's own pacer does (`recovery::pacing::MINIMUM_PACING_RTT`, 2 ms): s2n wakes its
/// pacing timer with a 1 ms granularity (`K_GRANULARITY`), so gaps of a fraction of that
/// cannot be kept, and on such paths a window's worth of packets leaves in well under a
/// millisecond anyway. A controller's own rate (BBR, PCC, Copa) is always applied.
pub const MIN_FALLBACK_PACING_RTT: polycc::Duration = polycc::Duration::from_millis(2);

/// How late a packet may leave after its paced time and still be spaced from that time, not
/// from when it left. s2n-quic sends at most one paced packet per wake-up (each wake-up's
/// packets share its timestamp) and wakes a connection for its earliest departure time on
/// tokio's timer, which rounds up to the next millisecond tick; under load the thread runs later
/// still. A packet due every 0.6 ms (20 Mbit/s of 1500-byte packets) so leaves up to a
/// millisecond or two late, and spacing each from its late send caps the rate at one packet per
/// wake-up (BBR then measures that and lowers its rate, round after round: 0.4-0.7 of a
/// 20 Mbit/s link in the emulator). Lateness up to this is made up by the next packets leaving
/// together (at most two milliseconds of the rate); a sender idle longer starts afresh,
/// without credit.
pub const PACING_CATCH_UP: polycc::Duration = polycc::Duration::from_millis(2);

/// The time the next gap is measured from: the packet's paced time if it left at most
/// [`PACING_CATCH_UP`] after it, else when it left. A clock that has paced nothing yet reads
/// [`Time::ZERO`], before any of the adapter's times ([`crate::clock::FIRST_EVENT`] on): no
/// credit for it.
fn paced_from(now: Time, due: Time) -> Time {
    if due > Time::ZERO && due <= now && now - due <= PACING_CATCH_UP {
        due
    } else {
        now
    }
}

/// What s2n-quic keeps with each packet and hands back when it is acknowledged (as the newest
/// of its ACK) or lost.
#[derive(Clone, Copy, Debug)]
pub struct PacketInfo {
    /// The adapter's packet number, or `None` for a packet not counted in flight.
    pn: Option<u64>,
    /// The delivery-rate estimator's state at its send.
    delivery: PacketDeliveryState,
}

/// Counters over the connection, for the application and the benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdapterStats {
    /// Congestion-controlled packets sent.
    pub sent_packets: u64,
    /// Their bytes.
    pub sent_bytes: Bytes,
    /// ACKs that newly acknowledged something (`on_ack` calls).
    pub acks: u64,
    /// Bytes acknowledged.
    pub acked_bytes: Bytes,
    /// Packets declared lost.
    pub lost_packets: u64,
    /// Their bytes.
    pub lost_bytes: Bytes,
    /// Loss-detection passes (`on_loss` calls).
    pub loss_events: u64,
    /// Packets the peer reported with ECN-CE.
    pub ce_marks: u64,
    /// The controller's window now.
    pub cwnd: Bytes,
    /// Bytes in flight now (s2n's count: UDP payloads).
    pub in_flight: Bytes,
    /// Packets in flight now (the ledger's count).
    pub in_flight_packets: u64,
    /// The pacing rate in force (the controller's or the fallback), if any.
    pub pacing_rate: Option<Rate>,
    /// s2n-quic's RTT estimate as of the last event.
    pub rtt: RttSnapshot,
    /// The latest delivery-rate sample.
    pub delivery_rate: Option<Rate>,
    /// The path's datagram size now (s2n's path MTU discovery raises it from 1200).
    pub mss: Bytes,
    /// Arrivals the peer reported that were given to the controller (`on_feedback`).
    pub feedback_arrivals: u64,
    /// `on_feedback` calls.
    pub feedback_reports: u64,
    /// Reported arrivals of packets the sender no longer (or never) knew: not given.
    pub feedback_unmatched: u64,
    /// Reported arrivals dropped because the handle's inbox was full.
    pub feedback_dropped: u64,
}

/// Losses of one detection pass not yet reported with `on_loss`.
#[derive(Clone, Copy, Debug)]
struct Pass {
    at: Timestamp,
    event: LossEvent,
    /// In flight before the first loss of the pass.
    prior_in_flight: Bytes,
}

/// One connection's adapter state around one controller.
pub struct Core {
    cc: Box<dyn CongestionControl>,
    detail: bool,
    clock: Clock,
    mss: Bytes,
    in_flight: Bytes,
    next_pn: u64,
    rate: DeliveryRateEstimator,
    app_limited: bool,
    pacing: PacingClock,
    departure: Option<Time>,
    rtt: RttSnapshot,
    has_rtt: bool,
    /// The ACK delay s2n subtracted from the last RTT sample, for the ACK that follows it.
    ack_delay: Duration,
    ledger: Ledger,
    pass: Option<Pass>,
    lost_detail: Vec<PacketOutcome>,
    acked: Vec<Acked>,
    /// Packets the ledger dropped without an outcome, at the last ACK.
    unresolved: Vec<Acked>,
    last_now: Time,
    stats: AdapterStats,
    shared: Arc<Shared>,
    published: Time,
    /// `cc.cwnd()` as of the last event: s2n asks for the window several times per packet,
    /// and a sans-IO controller's window moves only with an event.
    cwnd: Bytes,
    /// The controller takes receiver timing (`wants_feedback`).
    feedback: bool,
    reported: Vec<ReportedArrival>,
    arrivals: Vec<Arrival>,
    frames: Vec<polycc::FrameInfo>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("cc", &self.cc.name())
            .field("in_flight", &self.in_flight)
            .field("cwnd", &self.cc.cwnd())
            .finish_non_exhaustive()
    }
}

impl Core {
    /// Adapter state around `cc`, for datagrams of `mss` bytes.
    pub fn new(cc: Box<dyn CongestionControl>, mss: Bytes) -> Self {
        Core {
            cwnd: cc.cwnd(),
            detail: cc.wants_packet_detail(),
            feedback: cc.wants_feedback(),
            reported: Vec::new(),
            arrivals: Vec::new(),
            frames: Vec::new(),
            cc,
            clock: Clock::new(),
            mss,
            in_flight: 0,
            next_pn: 0,
            rate: DeliveryRateEstimator::new(),
            app_limited: false,
            pacing: PacingClock::new(Pacer::PerPacket),
            departure: None,
            rtt: RttSnapshot::default(),
            has_rtt: false,
            ack_delay: Duration::ZERO,
            ledger: Ledger::new(),
            pass: None,
            lost_detail: Vec::new(),
            acked: Vec::new(),
            unresolved: Vec::new(),
            last_now: Time::ZERO,
            stats: AdapterStats::default(),
            shared: Arc::default(),
            published: Time::ZERO,
        }
    }

    /// A handle for the application, sharing this core's mailbox (`crate::handle`).
    pub fn handle(&mut self, peer: Option<SocketAddr>) -> ControllerHandle {
        self.publish();
        ControllerHandle::new(self.shared.clone(), self.cc.name(), peer, self.feedback)
    }

    /// Publishes the telemetry and counters for the handles now.
    pub fn publish(&mut self) {
        let s = Snapshot {
            telemetry: self.telemetry(),
            stats: self.stats(),
            media: self.cc.media_control(),
            at: self.last_now,
            seq: 0,
        };
        self.published = self.last_now;
        self.shared.publish(s);
    }

    /// Takes a posted intent, and publishes when due or asked; after each event.
    #[inline]
    fn mailbox(&mut self, now: Time) {
        if let Some(intent) = self.shared.take_intent() {
            self.settle();
            self.cc.set_intent(now, &intent);
        }
        if self.feedback && self.shared.take_arrivals_posted() {
            self.deliver_feedback(now);
        }
        self.take_frames(now);
        // Also when nothing is left in flight: the end of a transfer is published exactly.
        if now.saturating_since(self.published) >= PUBLISH_INTERVAL
            || self.in_flight == 0
            || self.shared.refresh_asked()
        {
            self.publish();
        }
        // Every event ends here, after its calls to the controller.
        self.cwnd = self.cc.cwnd();
        self.shared.set_padding(self.cc.wants_padding());
    }

    /// The frames a media source announced through the handle, to `on_frame`.
    fn take_frames(&mut self, now: Time) {
        let mut frames = std::mem::take(&mut self.frames);
        self.shared.take_frames(&mut frames);
        for f in frames.drain(..) {
            self.cc.on_frame(now, &f);
        }
        self.frames = frames;
    }

    /// The arrivals posted to the handle, as one `on_feedback` with the packets' records.
    fn deliver_feedback(&mut self, now: Time) {
        self.settle();
        let mut reported = std::mem::take(&mut self.reported);
        reported.clear();
        self.stats.feedback_dropped = self.shared.take_arrivals(&mut reported);
        let mut arrivals = std::mem::take(&mut self.arrivals);
        arrivals.clear();
        {
            let sent = self.shared.sent();
            for r in &reported {
                match sent.find(r.pn) {
                    Some(s) => arrivals.push(Arrival {
                        pn: s.pn,
                        bytes: s.bytes,
                        sent_time: s.sent,
                        arrival_time: Time(r.arrival_us.saturating_mul(1000)),
                    }),
                    None => self.stats.feedback_unmatched += 1,
                }
            }
        }
        if !arrivals.is_empty() {
            self.cc.on_feedback(
                now,
                &Feedback {
                    arrivals: &arrivals,
                },
            );
            self.stats.feedback_reports += 1;
            self.stats.feedback_arrivals += arrivals.len() as u64;
            self.poll_timer(now);
        }
        self.reported = reported;
        self.arrivals = arrivals;
    }

    /// The controller's registry name.
    pub fn name(&self) -> &str {
        self.cc.name()
    }

    /// The controller, read-only.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The window, after closing an open loss pass.
    pub fn cwnd(&mut self) -> Bytes {
        self.settle();
        self.cwnd
    }

    /// Bytes in flight.
    pub fn in_flight(&self) -> Bytes {
        self.in_flight
    }

    /// The datagram size windows are counted in.
    pub fn mss(&self) -> Bytes {
        self.mss
    }

    /// s2n's `is_congestion_limited`: no room for one more full datagram.
    pub fn is_congestion_limited(&mut self) -> bool {
        self.cwnd().saturating_sub(self.in_flight) < self.mss
    }

    /// When the next packet may leave, on the controller's clock (`None`: now).
    pub fn departure(&mut self) -> Option<Time> {
        self.settle();
        self.departure
    }

    /// [`Core::departure`] as an s2n timestamp.
    pub fn earliest_departure_time(&mut self) -> Option<Timestamp> {
        let t = self.departure()?;
        self.clock.to_timestamp(t)
    }

    /// The pacing rate in force: the controller's, else the transport's fallback once an RTT
    /// sample of at least [`MIN_FALLBACK_PACING_RTT`] exists.
    pub fn pacing_rate(&self) -> Option<Rate> {
        self.cc.pacing_rate().or_else(|| {
            (self.has_rtt && self.rtt.smoothed >= MIN_FALLBACK_PACING_RTT).then(|| {
                fallback_pacing_rate(self.cc.cwnd(), self.rtt.smoothed, self.cc.in_slow_start())
            })
        })
    }

    /// Hands the application's intent to the controller now, stamped with the latest event's
    /// time (the handle's `set_intent` posts it for the next event instead).
    pub fn set_intent(&mut self, intent: &Intent) {
        self.settle();
        self.cc.set_intent(self.last_now, intent);
        self.cwnd = self.cc.cwnd();
    }

    /// The controller's telemetry.
    pub fn telemetry(&mut self) -> Telemetry {
        self.settle();
        self.cc.telemetry()
    }

    /// Counters and the current window, rate and RTT.
    pub fn stats(&mut self) -> AdapterStats {
        self.settle();
        AdapterStats {
            cwnd: self.cc.cwnd(),
            in_flight: self.in_flight,
            in_flight_packets: self.ledger.in_flight_packets() as u64,
            pacing_rate: self.pacing_rate(),
            rtt: self.rtt,
            mss: self.mss,
            ..self.stats
        }
    }

    fn read_rtt(&mut self, est: &RttEstimator) {
        self.has_rtt = est.first_rtt_sample().is_some();
        self.rtt = RttSnapshot {
            latest: from_std(est.latest_rtt()),
            smoothed: from_std(est.smoothed_rtt()),
            var: from_std(est.rttvar()),
            min: from_std(est.min_rtt()),
            has_sample: self.has_rtt,
        };
    }

    fn now(&mut self, ts: Timestamp) -> Time {
        let t = self.clock.to_time(ts).max(self.last_now);
        self.last_now = t;
        t
    }

    /// Fires the controller's timer if it is due (never inside another event).
    fn poll_timer(&mut self, now: Time) {
        if self.cc.next_timer().is_some_and(|t| t <= now) {
            self.cc.on_timer(now);
        }
    }

    /// A packet left: `bytes` counted in flight (0 for packets s2n does not count).
    pub fn on_sent(
        &mut self,
        ts: Timestamp,
        bytes: usize,
        app_limited: Option<bool>,
        est: &RttEstimator,
    ) -> PacketInfo {
        self.settle();
        let now = self.now(ts);
        if !self.has_rtt {
            // RTT values change with on_rtt_update and on_ack, which read them; before the
            // first sample s2n's estimator holds its initial values.
            self.read_rtt(est);
        }
        self.poll_timer(now);
        // Frames announced since the last event come before their first packet.
        self.take_frames(now);
        let bytes = bytes as Bytes;
        if bytes == 0 {
            self.cwnd = self.cc.cwnd();
            return PacketInfo {
                pn: None,
                delivery: PacketDeliveryState::default(),
            };
        }
        // s2n's flag: the application had too little to fill the window. Mark the
        // delivery-rate samples from now until what is in flight is delivered (Linux
        // `tcp_rate_check_app_limited`), once per limited phase as polycc-transport does.
        match app_limited {
            Some(true) if !self.app_limited => {
                self.app_limited = true;
                self.rate.on_app_limited(self.in_flight);
            }
            Some(false) => self.app_limited = false,
            _ => {}
        }
        let delivery = self.rate.on_sent(now, self.in_flight);
        let pn = self.next_pn;
        self.next_pn += 1;
        self.in_flight += bytes;
        self.ledger.push(pn, bytes, now);
        if self.feedback {
            crate::timing::note_sent(&self.shared, pn, bytes, now);
        }
        // As polycc-transport: the rate in force before the controller hears of this packet
        // spaces the next one.
        let rate = self.pacing_rate();
        let paced_from = paced_from(now, self.pacing.next_send());
        self.pacing.on_sent(paced_from, rate, bytes, || 1);
        self.departure = self.pacing.wait(now, || 1);
        self.cc.on_sent(
            now,
            &SentPacket {
                pn,
                bytes,
                in_flight: self.in_flight,
                is_retransmission: false,
                app_limited: delivery.is_app_limited,
            },
        );
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += bytes;
        self.mailbox(now);
        PacketInfo {
            pn: Some(pn),
            delivery,
        }
    }

    /// s2n updated its RTT estimate (the ACK newly acknowledged its largest packet).
    pub fn on_rtt_update(&mut self, ts: Timestamp, est: &RttEstimator) {
        self.settle();
        let now = self.now(ts);
        let (had_rtt, before) = (self.has_rtt, self.rtt.smoothed);
        self.read_rtt(est);
        if had_rtt {
            self.ack_delay = ack_delay_taken(before, self.rtt.smoothed, self.rtt.latest)
                .min(from_std(est.max_ack_delay()));
        }
        self.poll_timer(now);
        self.mailbox(now);
    }

    /// One packet declared lost. Passes are grouped by timestamp; `on_loss` comes when the pass
    /// closes.
    pub fn on_lost(
        &mut self,
        ts: Timestamp,
        bytes: u32,
        info: PacketInfo,
        persistent_congestion: bool,
    ) {
        if self.pass.is_some_and(|p| p.at != ts) {
            self.settle();
        }
        let now = self.now(ts);
        let bytes = Bytes::from(bytes);
        let prior = self.in_flight;
        self.in_flight = self.in_flight.saturating_sub(bytes);
        let pn = info.pn.unwrap_or(0);
        if info.pn.is_some() {
            self.ledger.on_lost(pn);
        }
        self.stats.lost_packets += 1;
        self.stats.lost_bytes += bytes;
        let sent = if info.pn.is_some() {
            info.delivery.sent_time
        } else {
            now
        };
        let pass = self.pass.get_or_insert(Pass {
            at: ts,
            event: LossEvent {
                mss: self.mss,
                ..LossEvent::default()
            },
            prior_in_flight: prior,
        });
        let e = &mut pass.event;
        e.lost_bytes += bytes;
        e.lost_packets += 1;
        if e.lost_packets == 1 || pn > e.largest_lost_pn {
            e.largest_lost_pn = pn;
            e.largest_lost_sent_time = sent;
        }
        e.persistent_congestion |= persistent_congestion;
        e.in_flight = self.in_flight;
        if self.detail {
            self.lost_detail.push(PacketOutcome {
                pn,
                bytes,
                sent_time: sent,
                rtt: None,
            });
        }
    }

    /// Closes an open loss pass: per-packet outcomes (with detail), then one `on_loss`.
    fn settle(&mut self) {
        let Some(pass) = self.pass.take() else { return };
        let now = self.last_now;
        for p in self.lost_detail.drain(..) {
            self.cc.on_packet_lost(now, &p);
        }
        self.cc.on_loss(now, &pass.event);
        self.stats.loss_events += 1;
        self.poll_timer(now);
        self.cwnd = self.cc.cwnd();
    }

    /// An ACK newly acknowledged `bytes`, `newest` being the info of the newest packet among
    /// them, sent at `newest_sent`.
    pub fn on_ack(&mut self, ts: Timestamp, bytes: usize, newest: PacketInfo, est: &RttEstimator) {
        if self.pass.is_some_and(|p| p.at != ts) {
            // A pass of the loss timer, not of this ACK.
            self.settle();
        }
        let now = self.now(ts);
        self.read_rtt(est);
        let bytes = bytes as Bytes;
        let pass = self.pass.take();
        // Before the ACK: before its losses too (they were counted out as s2n declared them).
        let prior_in_flight = pass.map_or(self.in_flight, |p| p.prior_in_flight);
        self.in_flight = self.in_flight.saturating_sub(bytes);
        if newest.pn.is_some() {
            self.rate.on_packet_acked(now, &newest.delivery, bytes);
        }
        let rate_sample = self.rate.finish_ack(self.rtt.min);
        let mut acked = std::mem::take(&mut self.acked);
        match newest.pn {
            Some(pn) => self
                .ledger
                .on_ack(pn, bytes, &mut acked, &mut self.unresolved),
            None => acked.clear(),
        }
        if self.detail {
            for a in &acked {
                self.cc.on_packet_acked(
                    now,
                    &PacketOutcome {
                        pn: a.pn,
                        bytes: a.bytes,
                        sent_time: a.sent,
                        rtt: Some(now.saturating_since(a.sent)),
                    },
                );
            }
            for d in self.unresolved.drain(..) {
                self.cc.on_packet_lost(
                    now,
                    &PacketOutcome {
                        pn: d.pn,
                        bytes: d.bytes,
                        sent_time: d.sent,
                        rtt: None,
                    },
                );
            }
        }
        // The losses this ACK revealed come after its acknowledged packets, before its on_ack;
        // as in polycc-transport, their `in_flight` excludes this ACK's packets too.
        if let Some(mut p) = pass {
            p.event.in_flight = self.in_flight;
            self.pass = Some(p);
            self.settle();
        }
        let (largest_acked, largest_sent) = match (newest.pn, acked.last()) {
            (Some(pn), _) => (pn, newest.delivery.sent_time),
            (None, Some(a)) => (a.pn, a.sent),
            (None, None) => (0, now),
        };
        let ev = AckEvent {
            acked_bytes: bytes,
            acked_packets: acked_packets(acked.len(), bytes, self.mss),
            largest_acked,
            largest_acked_sent_time: largest_sent,
            min_rtt_sample: acked.last().map(|a| now.saturating_since(a.sent)),
            max_rtt_sample: acked.first().map(|a| now.saturating_since(a.sent)),
            kernel_mdev: None,
            ack_delay: std::mem::take(&mut self.ack_delay),
            rtt: self.rtt,
            prior_in_flight,
            in_flight: self.in_flight,
            delivered: self.rate.delivered(),
            rate_sample,
            app_limited: self.app_limited,
            mss: self.mss,
        };
        self.acked = acked;
        self.cc.on_ack(now, &ev);
        self.stats.acks += 1;
        self.stats.acked_bytes += bytes;
        if let Some(s) = rate_sample {
            self.stats.delivery_rate = Some(s.delivery_rate);
        }
        self.poll_timer(now);
        self.mailbox(now);
    }

    /// The peer reported `ce_count` more packets with ECN-CE.
    pub fn on_explicit_congestion(&mut self, ce_count: u64) {
        self.stats.ce_marks += ce_count;
    }

    /// The path's datagram size changed (DPLPMTUD): windows now grow in the new unit.
    pub fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.settle();
        self.mss = Bytes::from(max_datagram_size);
    }

    /// A packet s2n will neither acknowledge nor declare lost (its packet-number space was
    /// discarded, or it was a lost MTU probe) leaves the bytes in flight.
    pub fn on_discarded(&mut self, bytes: usize) {
        self.settle();
        self.in_flight = self.in_flight.saturating_sub(bytes as Bytes);
    }
}

/// Packets an ACK acknowledged: those attributed, or when the newest was not numbered (an
/// ACK-only packet) its bytes in full datagrams.
fn acked_packets(attributed: usize, bytes: Bytes, mss: Bytes) -> u32 {
    let n = if attributed > 0 {
        attributed as u64
    } else {
        bytes.div_ceil(mss.max(1)).max(1)
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::{Calibration, Duration};
    use polycc::{CcContext, CcSpec, Registry};
    use s2n_quic_core::packet::number::PacketNumberSpace;
    use std::sync::{Arc, Mutex};

    const MSS: Bytes = 1200;

    /// A timestamp `ms` milliseconds after the test clock's epoch.
    fn ts(ms: u64) -> Timestamp {
        // SAFETY: `from_duration` is `unsafe` only to keep timestamps of different clocks from
        // being mixed (s2n's contract for time sources); it touches no memory. Every timestamp
        // of these tests comes from this one function, so they share one clock.
        unsafe { Timestamp::from_duration(core::time::Duration::from_millis(1000 + ms)) }
    }

    fn rtt_after(sample_ms: u64, at_ms: u64) -> RttEstimator {
        let mut est = RttEstimator::new(core::time::Duration::from_millis(333));
        est.update_rtt(
            core::time::Duration::ZERO,
            core::time::Duration::from_millis(sample_ms),
            ts(at_ms),
            true,
            PacketNumberSpace::ApplicationData,
        );
        est
    }

    /// A window controller that records what it is told.
    struct Recorder {
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Recorder {
        fn boxed() -> (Box<dyn CongestionControl>, Arc<Mutex<Vec<String>>>) {
            let log = Arc::new(Mutex::new(Vec::new()));
            (Box::new(Recorder { log: log.clone() }), log)
        }
        fn say(&self, s: String) {
            self.log.lock().expect("test lock").push(s);
        }
    }

    impl CongestionControl for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }
        fn on_sent(&mut self, _: Time, p: &SentPacket) {
            self.say(format!("sent {} in_flight {}", p.pn, p.in_flight));
        }
        fn on_ack(&mut self, now: Time, a: &AckEvent) {
            let rs = a.rate_sample.expect("a rate sample");
            self.say(format!(
                "ack@{} bytes {} packets {} largest {} prior {} in_flight {} rtt {}..{} srtt {} rate {} over {}",
                now.0 / 1_000_000,
                a.acked_bytes,
                a.acked_packets,
                a.largest_acked,
                a.prior_in_flight,
                a.in_flight,
                a.min_rtt_sample.map_or(0, |d| d.0 / 1_000_000),
                a.max_rtt_sample.map_or(0, |d| d.0 / 1_000_000),
                a.rtt.smoothed.0 / 1_000_000,
                rs.delivered,
                rs.interval.0 / 1_000_000,
            ));
        }
        fn on_loss(&mut self, now: Time, l: &LossEvent) {
            self.say(format!(
                "loss@{} bytes {} packets {} largest {} in_flight {}",
                now.0 / 1_000_000,
                l.lost_bytes,
                l.lost_packets,
                l.largest_lost_pn,
                l.in_flight
            ));
        }
        fn wants_packet_detail(&self) -> bool {
            true
        }
        fn on_packet_acked(&mut self, _: Time, p: &PacketOutcome) {
            self.say(format!("acked {}", p.pn));
        }
        fn on_packet_lost(&mut self, _: Time, p: &PacketOutcome) {
            self.say(format!("lost {}", p.pn));
        }
        fn set_intent(&mut self, now: Time, i: &Intent) {
            self.say(format!("intent@{} {}", now.0 / 1_000_000, i.class()));
        }
        fn cwnd(&self) -> Bytes {
            100 * MSS
        }
        fn calibrate(&mut self, _: Time, _: &Calibration) {}
    }

    #[test]
    fn one_ack_gives_acked_packets_then_its_losses_then_the_ack() {
        let (cc, log) = Recorder::boxed();
        let mut core = Core::new(cc, MSS);
        let fresh = RttEstimator::new(core::time::Duration::from_millis(333));
        // Ten packets, one a millisecond; packet 3 is lost, the rest acknowledged at 50 ms.
        let infos: Vec<PacketInfo> = (0..10)
            .map(|i| core.on_sent(ts(i), MSS as usize, Some(false), &fresh))
            .collect();
        let est = rtt_after(41, 50);
        core.on_rtt_update(ts(50), &est);
        core.on_lost(ts(50), 1200, infos[3], false);
        assert_eq!(core.in_flight(), 9 * MSS, "a loss leaves in flight at once");
        core.on_ack(ts(50), 9 * MSS as usize, infos[9], &est);
        let log = log.lock().expect("test lock").clone();
        assert_eq!(log[0], "sent 0 in_flight 1200");
        assert_eq!(log[9], "sent 9 in_flight 12000");
        let acked: Vec<&str> = log[10..19].iter().map(String::as_str).collect();
        assert_eq!(
            acked,
            [
                "acked 0", "acked 1", "acked 2", "acked 4", "acked 5", "acked 6", "acked 7",
                "acked 8", "acked 9"
            ]
        );
        // The first event is at 1 ms on the controller's clock (FIRST_EVENT), so 50 ms is 51.
        assert_eq!(log[19], "lost 3");
        assert_eq!(
            log[20],
            "loss@51 bytes 1200 packets 1 largest 3 in_flight 0"
        );
        // Rate sample: 10 800 bytes over max(send 9 ms, ack 50 ms) from packet 9's state.
        assert_eq!(
            log[21],
            "ack@51 bytes 10800 packets 9 largest 9 prior 12000 in_flight 0 rtt 41..50 srtt 41 rate 10800 over 50"
        );
        assert_eq!(log.len(), 22);
        let s = core.stats();
        assert_eq!(
            (s.acks, s.lost_packets, s.loss_events, s.sent_bytes),
            (1, 1, 1, 12_000)
        );
    }

    /// A controller that takes receiver timing and records it.
    struct FeedbackRecorder {
        log: Arc<Mutex<Vec<Arrival>>>,
    }

    impl CongestionControl for FeedbackRecorder {
        fn name(&self) -> &str {
            "feedback-recorder"
        }
        fn on_sent(&mut self, _: Time, _: &SentPacket) {}
        fn on_ack(&mut self, _: Time, _: &AckEvent) {}
        fn on_loss(&mut self, _: Time, _: &LossEvent) {}
        fn wants_feedback(&self) -> bool {
            true
        }
        fn on_feedback(&mut self, _: Time, f: &Feedback<'_>) {
            self.log
                .lock()
                .expect("test lock")
                .extend_from_slice(f.arrivals);
        }
        fn cwnd(&self) -> Bytes {
            100 * MSS
        }
        fn calibrate(&mut self, _: Time, _: &Calibration) {}
    }

    #[test]
    fn reported_arrivals_reach_the_controller_by_quic_packet_number_at_the_next_event() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut core = Core::new(Box::new(FeedbackRecorder { log: log.clone() }), MSS);
        let handle = core.handle(None);
        assert!(handle.wants_feedback());
        let est = rtt_after(40, 0);
        // Packets 0..3 leave as QUIC packets 10, 11, (an MTU probe the adapter did not see:
        // 12), 13; an Initial-space packet takes the slot without a number.
        core.on_sent(ts(0), MSS as usize, Some(false), &est);
        crate::timing::file_just_sent(Some(10));
        core.on_sent(ts(1), MSS as usize, Some(false), &est);
        crate::timing::file_just_sent(Some(11));
        crate::timing::file_just_sent(Some(12));
        core.on_sent(ts(2), MSS as usize, Some(false), &est);
        crate::timing::file_just_sent(None);
        core.on_sent(ts(3), 1000, Some(false), &est);
        crate::timing::file_just_sent(Some(13));
        // The receiver saw 13 before 11, 12 (not the adapter's) and 99 (unknown).
        let at = |pn, arrival_us| ReportedArrival { pn, arrival_us };
        handle.post_arrivals(&[
            at(10, 500),
            at(13, 520),
            at(11, 530),
            at(12, 540),
            at(99, 600),
        ]);
        assert!(
            log.lock().expect("test lock").is_empty(),
            "not before an event"
        );
        core.on_sent(ts(4), MSS as usize, Some(false), &est);
        let got = log.lock().expect("test lock").clone();
        let first = crate::clock::FIRST_EVENT;
        let ms = polycc::Duration::from_millis;
        assert_eq!(
            got,
            [
                Arrival {
                    pn: 0,
                    bytes: MSS,
                    sent_time: first,
                    arrival_time: Time(500_000)
                },
                Arrival {
                    pn: 3,
                    bytes: 1000,
                    sent_time: first + ms(3),
                    arrival_time: Time(520_000)
                },
                Arrival {
                    pn: 1,
                    bytes: MSS,
                    sent_time: first + ms(1),
                    arrival_time: Time(530_000)
                },
            ]
        );
        let s = core.stats();
        assert_eq!(
            (
                s.feedback_reports,
                s.feedback_arrivals,
                s.feedback_unmatched,
                s.feedback_dropped
            ),
            (1, 3, 2, 0)
        );
        // Nothing posted: no further call.
        core.on_sent(ts(5), MSS as usize, Some(false), &est);
        assert_eq!(core.stats().feedback_reports, 1);
    }

    #[test]
    fn a_packet_s2n_discards_is_reported_lost_to_a_detail_controller_once_the_ledger_drops_it() {
        let (cc, log) = Recorder::boxed();
        let mut core = Core::new(cc, MSS);
        let fresh = RttEstimator::new(core::time::Duration::from_millis(333));
        let infos: Vec<PacketInfo> = (0..6)
            .map(|i| core.on_sent(ts(i), MSS as usize, Some(false), &fresh))
            .collect();
        // Packet 0 is discarded (its packet-number space dropped): no loss, no ACK will come.
        core.on_discarded(MSS as usize);
        let est = rtt_after(41, 50);
        core.on_rtt_update(ts(50), &est);
        core.on_ack(ts(50), 5 * MSS as usize, infos[5], &est);
        let log = log.lock().expect("test lock").clone();
        let outcomes: Vec<&str> = log[6..12].iter().map(String::as_str).collect();
        assert_eq!(
            outcomes,
            ["acked 1", "acked 2", "acked 3", "acked 4", "acked 5", "lost 0"]
        );
        assert!(
            !log.iter().any(|l| l.starts_with("loss@")),
            "no congestion event: {log:?}"
        );
    }

    #[test]
    fn losses_found_by_the_timer_are_one_pass_closed_by_the_next_call() {
        let (cc, log) = Recorder::boxed();
        let mut core = Core::new(cc, MSS);
        let est = rtt_after(40, 0);
        let infos: Vec<PacketInfo> = (0..4)
            .map(|i| core.on_sent(ts(i), MSS as usize, Some(false), &est))
            .collect();
        // The loss timer declares 0 and 1 lost at 100 ms, then 2 at 200 ms.
        core.on_lost(ts(100), 1200, infos[0], false);
        core.on_lost(ts(100), 1200, infos[1], false);
        assert!(!log
            .lock()
            .expect("test lock")
            .iter()
            .any(|l| l.starts_with("loss")));
        core.on_lost(ts(200), 1200, infos[2], true);
        // s2n asks for the window: the second pass closes.
        assert_eq!(core.cwnd(), 100 * MSS);
        let log = log.lock().expect("test lock").clone();
        let losses: Vec<&String> = log.iter().filter(|l| l.starts_with("loss")).collect();
        assert_eq!(losses.len(), 2);
        assert_eq!(
            *losses[0],
            "loss@101 bytes 2400 packets 2 largest 1 in_flight 2400"
        );
        assert_eq!(
            *losses[1],
            "loss@201 bytes 1200 packets 1 largest 2 in_flight 1200"
        );
    }

    #[test]
    fn the_handle_posts_intents_for_the_next_event_and_reads_snapshots() {
        let (cc, log) = Recorder::boxed();
        let mut core = Core::new(cc, MSS);
        let handle = core.handle("127.0.0.1:1".parse().ok());
        assert_eq!(handle.name(), "recorder");
        let first = handle.snapshot();
        assert_eq!((first.seq, first.stats.cwnd), (1, 120_000));
        let est = rtt_after(40, 0);
        core.on_sent(ts(0), MSS as usize, Some(false), &est);
        handle.set_intent(&Intent::Scavenger);
        let said = |log: &Arc<Mutex<Vec<String>>>| log.lock().expect("test lock").clone();
        assert!(
            !said(&log).iter().any(|l| l.starts_with("intent")),
            "not before an event"
        );
        // The next event, 12 ms later, takes it with its own time (the first was at 1 ms).
        core.on_sent(ts(12), MSS as usize, Some(false), &est);
        assert_eq!(
            said(&log).last().map(String::as_str),
            Some("intent@13 scavenger")
        );
        // Published at 13 ms: PUBLISH_INTERVAL after the creation's snapshot at 0.
        let s = handle.snapshot();
        assert_eq!(
            (s.at, s.stats.in_flight, s.stats.sent_packets),
            (Time(13_000_000), 2400, 2)
        );
        // Within the interval nothing is published, unless asked.
        core.on_sent(ts(13), MSS as usize, Some(false), &est);
        assert_eq!(handle.stats().in_flight, 2400);
        handle.request_refresh();
        core.on_sent(ts(14), MSS as usize, Some(false), &est);
        assert_eq!(handle.stats().in_flight, 4800);
    }

    #[test]
    fn without_a_controller_rate_pacing_is_twice_cwnd_over_srtt_in_slow_start() {
        let cc = Registry::standard()
            .build(&CcSpec::named("cubic"), &CcContext::new(MSS))
            .expect("cubic");
        let mut core = Core::new(cc, MSS);
        let fresh = RttEstimator::new(core::time::Duration::from_millis(333));
        core.on_sent(ts(0), MSS as usize, Some(false), &fresh);
        assert_eq!(core.departure(), None, "no pacing before an RTT sample");
        // cwnd 12 000 bytes over srtt 40 ms, × 2 in slow start: 4.8 Mbit/s, 2 ms a packet.
        let est = rtt_after(40, 0);
        // Sent more than PACING_CATCH_UP after the last: no credit, the gap counts from now.
        core.on_sent(ts(3), MSS as usize, Some(false), &est);
        assert_eq!(core.pacing_rate(), Some(Rate::from_bps(4_800_000)));
        let t1 = crate::clock::FIRST_EVENT + Duration::from_millis(3);
        assert_eq!(core.departure(), Some(t1 + Duration::from_millis(2)));
        assert_eq!(
            core.earliest_departure_time(),
            Some(ts(5)),
            "as an s2n timestamp"
        );
        // A packet sent 0.5 ms after its time: the next is due 2 ms after that time (1.5 ms
        // after it left), not 2 ms after it left.
        core.on_sent(
            ts(5) + core::time::Duration::from_micros(500),
            MSS as usize,
            Some(false),
            &est,
        );
        assert_eq!(core.departure(), Some(t1 + Duration::from_millis(4)));
        // On a 1.5 ms path the fallback is off, as s2n's own pacer below 2 ms.
        let short = rtt_after(1, 5);
        let mut est = short;
        est.update_rtt(
            core::time::Duration::ZERO,
            core::time::Duration::from_micros(1500),
            ts(6),
            true,
            PacketNumberSpace::ApplicationData,
        );
        core.on_rtt_update(ts(6), &est);
        core.on_sent(ts(10), MSS as usize, Some(false), &est);
        assert!(core.rtt.smoothed < MIN_FALLBACK_PACING_RTT);
        assert_eq!(core.pacing_rate(), None);
    }

    /// RFC 9002 §7.3.2 through the adapter: losses of packets sent before the recovery period
    /// began are not new congestion events, whichever ACK reveals them; a loss of a packet sent
    /// after it is. The adapter must hand the controller each lost packet's own send time.
    #[test]
    fn polycc_cubic_reduces_once_per_recovery_period_over_quic() {
        let cc = Registry::standard()
            .build(&CcSpec::named("cubic"), &CcContext::new(MSS))
            .expect("cubic");
        let mut core = Core::new(cc, MSS);
        let est = rtt_after(40, 0);
        // One flight of ten packets, sent 0..9 ms.
        let flight: Vec<PacketInfo> = (0..10)
            .map(|i| core.on_sent(ts(i), MSS as usize, Some(false), &est))
            .collect();
        let start = core.cwnd();
        // An ACK at 50 ms of 0..2 reveals packet 3 lost: one reduction by β = 0.7.
        core.on_lost(ts(50), 1200, flight[3], false);
        core.on_ack(ts(50), 3 * MSS as usize, flight[2], &est);
        let reduced = core.cwnd();
        assert_eq!(reduced, (start as f64 * 0.7) as Bytes);
        // Packets sent after the reduction.
        let later: Vec<PacketInfo> = (0..3)
            .map(|i| core.on_sent(ts(51 + i), MSS as usize, Some(false), &est))
            .collect();
        // Later ACKs reveal packets 6 and 9 lost, both of the old flight (sent before 50 ms):
        // the same event, no further reduction.
        core.on_lost(ts(55), 1200, flight[6], false);
        core.on_ack(ts(55), 2 * MSS as usize, flight[5], &est);
        core.on_lost(ts(60), 1200, flight[9], false);
        core.on_ack(ts(60), 2 * MSS as usize, flight[8], &est);
        assert_eq!(core.cwnd(), reduced, "losses of the old flight: one event");
        assert_eq!(core.controller().ssthresh(), Some(reduced));
        // A loss of a packet sent after the period began is a new event.
        core.on_lost(ts(100), 1200, later[0], false);
        core.on_ack(ts(100), MSS as usize, later[1], &est);
        assert_eq!(core.cwnd(), (reduced as f64 * 0.7) as Bytes);
        assert_eq!(core.stats().loss_events, 4, "four passes, two reductions");
    }

    #[test]
    fn a_controller_rate_spaces_packets_at_that_rate() {
        // BBR paces from its start: 2.885 × initial window / RTT.
        let cc = Registry::standard()
            .build(&CcSpec::named("bbr"), &CcContext::new(MSS))
            .expect("bbr");
        let rate = cc.pacing_rate().expect("bbr paces");
        let mut core = Core::new(cc, MSS);
        let est = rtt_after(40, 0);
        core.on_sent(ts(0), MSS as usize, Some(false), &est);
        let gap = core.departure().expect("paced") - crate::clock::FIRST_EVENT;
        assert_eq!(gap, rate.time_to_send(MSS));
        assert!(gap > Duration::ZERO);
    }
}
