//! ACK processing (RFC 9002 §6 and Appendix A.7): newly acknowledged packets, the RTT sample,
//! the delivery-rate sample, spurious losses, then loss detection, then the controller's ACK.

use crate::ledger::State;
use crate::sender::Sender;
use polycc::signals::{AckEvent, Arrival, Feedback, PacketOutcome};
use polycc::units::{Bytes, Duration, Time};
use std::ops::RangeInclusive;
use thiserror::Error;

/// ECN counts of an ACK frame (RFC 9000 §19.3.2), cumulative over the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// Packets received with ECT(0).
    pub ect0: u64,
    /// Packets received with ECT(1).
    pub ect1: u64,
    /// Packets received with ECN-CE.
    pub ce: u64,
}

/// What an ACK says besides its ranges.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo<'a> {
    /// The Largest Acknowledged field: the RTT sample is taken when this packet is newly
    /// acknowledged by this ACK (RFC 9002 §5.1).
    pub largest: u64,
    /// The receiver's delay between receiving `largest` and sending the ACK.
    pub ack_delay: Duration,
    /// ECN counts, when the ACK carries them.
    pub ecn: Option<EcnCounts>,
    /// Receive timestamps of packets, when the receiver reports them (RTP transport-wide
    /// feedback, QUIC receive-timestamp extensions); given to controllers that ask for them.
    pub arrivals: &'a [Arrival],
}

/// What happened to one packet, handed to the caller's sink as it is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent<P> {
    /// Newly acknowledged.
    Acked {
        /// Its packet number.
        pn: u64,
        /// The caller's tag.
        payload: P,
    },
    /// Declared lost: resend what it carried, if it needs resending.
    Lost {
        /// Its packet number.
        pn: u64,
        /// The caller's tag.
        payload: P,
    },
    /// Acknowledged after it was declared lost: it was reordered, not lost. Its data arrived;
    /// a retransmission still queued need not be sent.
    SpuriousLoss {
        /// Its packet number.
        pn: u64,
        /// The caller's tag.
        payload: P,
    },
}

/// What one ACK (or one loss-detection pass) did, for the caller's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Packets this ACK newly acknowledged.
    pub acked_packets: u32,
    /// Their bytes.
    pub acked_bytes: Bytes,
    /// The RTT sample taken (from the largest acknowledged packet), if one was.
    pub rtt_sample: Option<Duration>,
    /// Packets declared lost while processing it.
    pub lost_packets: u32,
    /// Packets it acknowledged that had been declared lost.
    pub spurious_losses: u32,
    /// The losses amounted to persistent congestion (RFC 9002 §7.6).
    pub persistent_congestion: bool,
    /// Packets newly reported with ECN-CE (RFC 9002 §7.1 counts an increase as congestion;
    /// no polycc controller reacts to it yet).
    pub ecn_ce: u64,
}

/// An ACK the sender must reject; nothing of it was applied.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum AckError {
    /// A range acknowledges a packet number that was never sent (RFC 9000 §13.1: a
    /// PROTOCOL_VIOLATION; a skipped number shows an optimistic ACK, §21.4).
    #[error("ACK covers packet {pn}, which was never sent")]
    UnsentPacket {
        /// The first such packet number.
        pn: u64,
    },
    /// A range whose start lies above its end.
    #[error("ACK range {start}..={end} is empty")]
    EmptyRange {
        /// Range start.
        start: u64,
        /// Range end.
        end: u64,
    },
    /// ECN counts fell below those of an earlier ACK (RFC 9000 §13.4.2.1: ECN validation fails).
    #[error("ECN counts decreased: {now:?} after {before:?}")]
    EcnDecreased {
        /// Counts of an earlier ACK.
        before: EcnCounts,
        /// Counts of this one.
        now: EcnCounts,
    },
}

/// Sums over the packets one ACK newly acknowledges.
#[derive(Default)]
struct Newly {
    bytes: Bytes,
    packets: u32,
    min_rtt: Option<Duration>,
    max_rtt: Option<Duration>,
    /// Send time of `largest` if this ACK newly acknowledges it.
    largest_sent: Option<Time>,
    spurious: u32,
}

impl<P: Copy> Sender<P> {
    /// Processes an ACK: `ranges` are the acknowledged packet numbers, processed in the order
    /// given (an ACK frame's ranges, or only those not covered by earlier ACKs). Packets already
    /// acknowledged are skipped. `sink` hears of every packet acknowledged, declared lost or
    /// found spuriously lost, in that order of decision. The controller is driven as the crate
    /// docs' event-order contract says.
    #[inline]
    pub fn on_ack_received(
        &mut self,
        now: Time,
        ranges: &[RangeInclusive<u64>],
        info: AckInfo<'_>,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) -> Result<AckOutcome, AckError> {
        let ecn_ce = self.validate_ack(ranges, &info)?;
        let prior_in_flight = self.in_flight;
        let mut n = Newly::default();
        let detail = self.cc.wants_packet_detail();
        for r in ranges {
            self.ack_range(
                now,
                *r.start(),
                *r.end(),
                info.largest,
                detail,
                &mut n,
                sink,
            );
        }
        let mut out = AckOutcome {
            acked_packets: n.packets,
            acked_bytes: n.bytes,
            spurious_losses: n.spurious,
            ecn_ce,
            ..AckOutcome::default()
        };
        if n.packets == 0 {
            return Ok(out);
        }
        self.rto_base = now;
        self.largest_acked = Some(
            self.largest_acked
                .map_or(info.largest, |l| l.max(info.largest)),
        );
        let mut largest_sent_time = Time::ZERO;
        // The reported delay is the largest packet's: it counts only when that one is new.
        let mut ack_delay = Duration::ZERO;
        if let Some(sent) = n.largest_sent {
            let sample = now - sent;
            ack_delay = info.ack_delay.min(self.config.max_ack_delay);
            self.rtt.update(now, sample, ack_delay);
            self.first_rtt_sample.get_or_insert(now);
            out.rtt_sample = Some(sample);
            largest_sent_time = sent;
        }
        let rate_sample = self.rate.finish_ack(self.rtt.min());
        if !info.arrivals.is_empty() && self.cc.wants_feedback() {
            self.cc.on_feedback(
                now,
                &Feedback {
                    arrivals: info.arrivals,
                },
            );
        }
        let mut ev = AckEvent {
            acked_bytes: n.bytes,
            acked_packets: n.packets,
            largest_acked: info.largest,
            largest_acked_sent_time: largest_sent_time,
            min_rtt_sample: n.min_rtt,
            max_rtt_sample: n.max_rtt,
            kernel_mdev: None,
            ack_delay,
            rtt: self.rtt.snapshot(),
            prior_in_flight,
            in_flight: self.in_flight,
            delivered: self.rate.delivered(),
            rate_sample,
            app_limited: self.app_limited,
            mss: self.config.max_datagram,
        };
        // RFC 9002 Appendix A.7: losses are detected and reported before the ACKed packets, so a
        // loss from before the recovery start is judged while that recovery is still in force.
        let loss = self.detect_lost(now, sink);
        out.lost_packets = loss.lost_packets;
        out.persistent_congestion = loss.persistent_congestion;
        ev.in_flight = self.in_flight;
        self.cc.on_ack(now, &ev);
        self.pto_count = 0;
        self.ledger.retire();
        Ok(out)
    }

    /// Rejects an ACK before any of it is applied; returns the newly reported ECN-CE count.
    fn validate_ack(
        &mut self,
        ranges: &[RangeInclusive<u64>],
        info: &AckInfo<'_>,
    ) -> Result<u64, AckError> {
        let end = self.ledger.end();
        if info.largest >= end {
            return Err(AckError::UnsentPacket { pn: info.largest });
        }
        for r in ranges {
            let (s, e) = (*r.start(), *r.end());
            if s > e {
                return Err(AckError::EmptyRange { start: s, end: e });
            }
            if e >= end {
                return Err(AckError::UnsentPacket { pn: s.max(end) });
            }
            if let Some(pn) = self.ledger.skipped_in(s, e) {
                return Err(AckError::UnsentPacket { pn });
            }
        }
        let Some(ecn) = info.ecn else { return Ok(0) };
        let before = self.ecn;
        if ecn.ect0 < before.ect0 || ecn.ect1 < before.ect1 || ecn.ce < before.ce {
            return Err(AckError::EcnDecreased { before, now: ecn });
        }
        self.ecn = ecn;
        Ok(ecn.ce - before.ce)
    }

    /// Applies one acknowledged range `[s, e]`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn ack_range(
        &mut self,
        now: Time,
        s: u64,
        e: u64,
        largest: u64,
        detail: bool,
        n: &mut Newly,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) {
        // Below the ledger only lost packets are remembered: those are spurious losses.
        let base = self.ledger.base();
        if s < base {
            let below_end = e.min(base - 1);
            while let Some(r) = self.ledger.take_lost_in(s, below_end) {
                self.acked_after_loss(r.pn, r.payload, n, sink);
            }
        }
        for pn in s.max(base)..=e {
            let Some(m) = self.ledger.get_mut(pn) else {
                continue;
            };
            match m.state() {
                State::InFlight => {}
                State::Lost => {
                    if let Some(r) = self.ledger.take_lost_in(pn, pn) {
                        self.acked_after_loss(pn, r.payload, n, sink);
                    }
                    continue;
                }
                State::Acked | State::Untracked | State::Skipped => continue,
            }
            m.set_state(State::Acked);
            let r = *m;
            let (bytes, payload) = (r.bytes() as u64, r.payload);
            let d = self.ledger.delivery(pn, &r);
            self.in_flight -= bytes;
            self.rate.on_packet_acked(now, &d, bytes);
            n.bytes += bytes;
            n.packets += 1;
            let sample = now - d.sent_time;
            n.min_rtt = Some(n.min_rtt.map_or(sample, |m| m.min(sample)));
            n.max_rtt = Some(n.max_rtt.map_or(sample, |m| m.max(sample)));
            if detail {
                let o = PacketOutcome {
                    pn,
                    bytes,
                    sent_time: d.sent_time,
                    rtt: Some(sample),
                };
                self.cc.on_packet_acked(now, &o);
            }
            sink(PacketEvent::Acked { pn, payload });
            if pn == largest {
                n.largest_sent = Some(d.sent_time);
            }
        }
    }

    /// Packet `pn`, declared lost, is acknowledged: a spurious loss. Its bytes already left
    /// `in_flight` and it is no delivery-rate sample; the controller is not told (no undo).
    #[cold]
    #[inline(never)]
    fn acked_after_loss(
        &mut self,
        pn: u64,
        payload: P,
        n: &mut Newly,
        sink: &mut impl FnMut(PacketEvent<P>),
    ) {
        n.spurious += 1;
        if let Some(m) = self.ledger.get_mut(pn) {
            m.set_state(State::Acked); // not lost after all (persistent congestion looks at this)
        }
        sink(PacketEvent::SpuriousLoss { pn, payload });
        // A loss is declared only below the largest acknowledged packet, so a spurious one
        // always means reordering: on the data path, or of ACKs beyond the time threshold.
        let done = self.largest_acked.unwrap_or(0);
        self.reordering.on_reordered(done, self.ledger.end());
    }
}
