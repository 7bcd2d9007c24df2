//! What a transport tells a congestion controller.
//!
//! Every event carries plain values: the transport (the simulator, a QUIC stack, a TCP shim) owns
//! the packet bookkeeping and hands each CCA the same facts, so CCAs never need I/O or a clock.

use crate::estimators::rtt::RttSnapshot;
use crate::units::{Bytes, Duration, Rate, Time};

/// One packet handed to the network.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SentPacket {
    /// Packet number, increasing per flow (a retransmission gets a new number, as in QUIC).
    pub pn: u64,
    /// Bytes on the wire counted against the congestion window.
    pub bytes: Bytes,
    /// Bytes in flight after this packet was sent.
    pub in_flight: Bytes,
    /// True when the packet carries data sent before (a retransmission).
    pub is_retransmission: bool,
    /// True when the sender was application-limited when this packet left.
    pub app_limited: bool,
}

/// A delivery-rate sample, as in draft-cheng-iccrg-delivery-rate-estimation and Linux
/// `tcp_rate.c`: bytes delivered over the interval between the acked packet's send and its ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes delivered during `interval`.
    pub delivered: Bytes,
    /// max(send elapsed, ack elapsed) of the packet that produced the sample.
    pub interval: Duration,
    /// `delivered / interval`.
    pub delivery_rate: Rate,
    /// Total bytes delivered when the sampled packet was sent.
    pub prior_delivered: Bytes,
    /// The sample was taken while the sender was application-limited: it may underestimate.
    pub is_app_limited: bool,
    /// RTT of the packet the sample was taken from.
    pub rtt: Duration,
}

/// One ACK frame: the packets it newly acknowledges, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckEvent {
    /// Bytes newly acknowledged by this ACK.
    pub acked_bytes: Bytes,
    /// Packets newly acknowledged by this ACK.
    pub acked_packets: u32,
    /// Largest packet number newly acknowledged.
    pub largest_acked: u64,
    /// Send time of the largest newly acknowledged packet.
    pub largest_acked_sent_time: Time,
    /// Smallest RTT among the packets this ACK acknowledges (the freshest path-delay evidence;
    /// delay-based CCAs min-filter this).
    pub min_rtt_sample: Option<Duration>,
    /// Largest RTT among the packets this ACK acknowledges, that of the earliest sent: the
    /// sample Linux's RTT estimator takes per ACK (`seq_rtt_us` in `tcp_clean_rtx_queue`, from
    /// the first newly acknowledged packet). It differs from `min_rtt_sample` when one ACK
    /// covers several packets (delayed and stretch ACKs).
    pub max_rtt_sample: Option<Duration>,
    /// The Linux kernel's smoothed RTT deviation after this ACK (`tcp_sock.mdev_us`: 4× the mean
    /// deviation, falling samples damped to an eighth, from `seq_rtt_us`), where the transport
    /// is the kernel's own TCP (the eBPF shim reads it from the socket); `None` elsewhere, where
    /// a controller that wants it computes it from `max_rtt_sample`. Through the shim the
    /// per-ACK sample is the kernel's `rate_sample.rtt_us`, the latest packet's RTT, not the
    /// estimator's, so only this field carries the kernel's deviation.
    pub kernel_mdev: Option<Duration>,
    /// How long the receiver held this ACK after the largest packet it acknowledges arrived,
    /// as it reported (QUIC's ACK Delay field, RFC 9000 §19.3), capped at max_ack_delay (RFC
    /// 9002 §5.3); zero where the transport reports none (TCP). Part of `min_rtt_sample` (the
    /// largest packet's RTT) that no queue caused.
    pub ack_delay: Duration,
    /// RTT estimator state after this ACK was applied (RFC 9002 §5).
    pub rtt: RttSnapshot,
    /// Bytes in flight before the ACK arrived.
    pub prior_in_flight: Bytes,
    /// Bytes in flight after the acknowledged packets were removed.
    pub in_flight: Bytes,
    /// Total bytes delivered over the connection's life, including this ACK.
    pub delivered: Bytes,
    /// Delivery-rate sample, when one could be taken.
    pub rate_sample: Option<RateSample>,
    /// The sender is application-limited now (it had nothing to send while the window was open).
    pub app_limited: bool,
    /// Maximum datagram size the transport sends, in bytes: the unit in which windows grow
    /// (RFC 9002 §7.2 `max_datagram_size`).
    pub mss: Bytes,
}

/// Packets declared lost in one loss-detection pass (RFC 9002 §6).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossEvent {
    /// Bytes of the packets declared lost in this pass.
    pub lost_bytes: Bytes,
    /// Number of packets declared lost in this pass.
    pub lost_packets: u32,
    /// Largest lost packet number and its send time (one reduction per round trip keys on it).
    pub largest_lost_pn: u64,
    /// Send time of `largest_lost_pn`: a loss of a packet sent before the last reduction
    /// belongs to the same congestion event (RFC 9002 §7.3.2).
    pub largest_lost_sent_time: Time,
    /// RFC 9002 §7.6 persistent congestion: the window should collapse to the minimum.
    pub persistent_congestion: bool,
    /// Bytes in flight after the lost packets were removed.
    pub in_flight: Bytes,
    /// Maximum datagram size in bytes, as in [`AckEvent::mss`].
    pub mss: Bytes,
}

/// One packet newly acknowledged or declared lost, for controllers that attribute packets to
/// intervals (PCC's monitor intervals). Sent only when the controller asks for packet detail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketOutcome {
    /// Packet number, as in [`SentPacket::pn`].
    pub pn: u64,
    /// Bytes on the wire, as in [`SentPacket::bytes`].
    pub bytes: Bytes,
    /// When the packet was sent, on the sender's clock.
    pub sent_time: Time,
    /// RTT of this packet (`now − sent_time`) when acknowledged; `None` when lost.
    pub rtt: Option<Duration>,
}

/// The arrival of one packet at the receiver, as reported back to the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// Packet number, as in [`SentPacket::pn`].
    pub pn: u64,
    /// Bytes on the wire, as in [`SentPacket::bytes`].
    pub bytes: Bytes,
    /// Send time on the sender's clock.
    pub sent_time: Time,
    /// Arrival time on the receiver's clock. In the simulator both clocks are the same; a real
    /// receiver's clock has an unknown offset, so CCAs should use differences only.
    pub arrival_time: Time,
}

/// Receiver-side signals: per-packet arrival times (for one-way-delay and inter-arrival based
/// controllers such as LEDBAT, GCC and PIBES).
#[derive(Clone, Copy, Debug, Default)]
pub struct Feedback<'a> {
    /// The packet arrivals this report carries.
    pub arrivals: &'a [Arrival],
}

/// A video frame handed to the transport: the packets it was cut into, which the transport sends
/// in order after any packets already queued. Real-time media controllers that schedule frames
/// (PIBES's burst + paced sender) use it to know where frames start; everything else ignores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameInfo {
    /// Index of the frame in its flow, from 0.
    pub index: u64,
    /// Packets of the frame (data and FEC), each sent as one datagram.
    pub packets: u32,
    /// Bytes of the frame on the wire.
    pub bytes: Bytes,
}
