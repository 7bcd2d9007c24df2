//! Real-time media as QUIC DATAGRAM frames (RFC 9221) with a deadline: the datagram provider of
//! an s2n-quic endpoint that carries one media flow.
//!
//! s2n-quic's default datagram sender keeps its queue with no expiry and does not say when a
//! datagram left. A media source needs both: a frame's packets that could not leave by its
//! deadline are worthless (the frame is late however it ends), and the frame's delay is counted
//! from its first packet's departure. So [`MediaDatagrams`] is an endpoint provider whose
//! sender drops what is past its deadline each time s2n offers it a packet, writes one datagram
//! per packet in order when it fits (congestion-controlled like every 1-RTT packet), and logs
//! each departure; its receiver timestamps each datagram as s2n hands it over. The application
//! shares a [`MediaChannel`] with them: [`MediaChannel::queue`] to send, [`MediaChannel::drain`]
//! for what was sent and what arrived. Every queue is bounded ([`MAX_QUEUED`]); what overflows
//! is dropped, oldest first, and counted.
//!
//! One channel serves every connection of its endpoint: give each media connection its own
//! endpoint, or let one connection end before the next starts (a new connection clears the
//! last one's end).

use crate::handle::ControllerHandle;
use bytes::Bytes;
use s2n_quic::provider::datagram::{
    ConnectionInfo, Endpoint, Packet, PreConnectionInfo, ReceiveContext, Receiver, Sender,
};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use std::time::Instant;

/// Most datagrams waiting in each direction (to leave, or to be read): 2 s of a 10 Mbit/s
/// source of 1200-byte packets.
pub const MAX_QUEUED: usize = 2048;

/// RFC 9221 §3: the largest DATAGRAM frame this endpoint accepts (its transport parameter);
/// media datagrams are one packet each, so the path's MTU bounds them anyway.
const MAX_DATAGRAM_FRAME: u64 = 65_535;

/// One datagram waiting to leave.
#[derive(Clone, Debug)]
struct Outgoing {
    id: u64,
    data: Bytes,
    deadline: Instant,
}

/// Counters of a channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediaCounters {
    /// Datagrams written into packets.
    pub sent: u64,
    /// Datagrams dropped unsent at their deadline.
    pub expired: u64,
    /// Datagrams dropped because a queue was full, or too large for any packet.
    pub overflowed: u64,
    /// Datagrams received.
    pub received: u64,
    /// Padding datagrams sent (the controller asked for padding and no media waited).
    pub padding: u64,
}

#[derive(Debug, Default)]
struct State {
    out: VecDeque<Outgoing>,
    sent: Vec<(u64, Instant)>,
    arrivals: VecDeque<(Bytes, Instant)>,
    counters: MediaCounters,
    /// Wakes the connection when there is something to send.
    connection: Option<Waker>,
    /// Wakes the application when something arrived.
    reader: Option<Waker>,
    /// Why the connection ended, once it has.
    error: Option<String>,
    /// The controller asked about padding, and the padding datagram to send.
    padding: Option<(ControllerHandle, Bytes)>,
}

impl State {
    fn wants_padding(&self) -> bool {
        self.out.is_empty()
            && self
                .padding
                .as_ref()
                .is_some_and(|(h, _)| h.wants_padding())
    }
}

/// What the application shares with the endpoint's datagram sender and receiver.
#[derive(Clone, Debug, Default)]
pub struct MediaChannel(Arc<Mutex<State>>);

impl MediaChannel {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while a lock was held leaves plain data behind: take it as it is.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a datagram (`id` names it in [`MediaChannel::drain`]'s departures) to leave by
    /// `deadline` or not at all.
    pub fn queue(&self, id: u64, data: Bytes, deadline: Instant) {
        let mut s = self.lock();
        if s.out.len() == MAX_QUEUED {
            s.out.pop_front();
            s.counters.overflowed += 1;
        }
        s.out.push_back(Outgoing { id, data, deadline });
        if let Some(w) = s.connection.clone() {
            drop(s);
            w.wake();
        }
    }

    /// Moves the departures (id, time) since the last call to `sent` and the arrivals (data,
    /// time) to `arrived`.
    pub fn drain(&self, sent: &mut Vec<(u64, Instant)>, arrived: &mut Vec<(Bytes, Instant)>) {
        let mut s = self.lock();
        sent.append(&mut s.sent);
        arrived.extend(s.arrivals.drain(..));
    }

    /// Resolves when a datagram has arrived (at once if one waits) or the connection ended.
    pub async fn arrival(&self) {
        std::future::poll_fn(|cx| {
            let mut s = self.lock();
            if !s.arrivals.is_empty() || s.error.is_some() {
                return std::task::Poll::Ready(());
            }
            s.reader = Some(cx.waker().clone());
            std::task::Poll::Pending
        })
        .await;
    }

    /// When the queue is empty and `controller` wants padding, sends `datagram` (WebRTC's
    /// probes are padding when the media leaves room).
    pub fn pad_with(&self, controller: ControllerHandle, datagram: Bytes) {
        self.lock().padding = Some((controller, datagram));
    }

    /// Datagrams waiting to leave.
    pub fn queued(&self) -> usize {
        self.lock().out.len()
    }

    /// The counters so far.
    pub fn counters(&self) -> MediaCounters {
        self.lock().counters
    }

    /// Why the connection ended, if it has.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }
}

/// The datagram provider: pass it to `with_datagram` on the s2n-quic builder.
#[derive(Clone, Debug, Default)]
pub struct MediaDatagrams {
    channel: MediaChannel,
}

impl MediaDatagrams {
    /// A provider sharing `channel` with the application.
    pub fn new(channel: MediaChannel) -> Self {
        MediaDatagrams { channel }
    }
}

/// The sending half inside s2n-quic.
#[derive(Debug)]
pub struct MediaSender(MediaChannel);

/// The receiving half inside s2n-quic.
#[derive(Debug)]
pub struct MediaReceiver(MediaChannel);

impl Endpoint for MediaDatagrams {
    type Sender = MediaSender;
    type Receiver = MediaReceiver;

    fn create_connection(&mut self, info: &ConnectionInfo) -> (MediaSender, MediaReceiver) {
        let mut s = self.channel.lock();
        s.connection = Some(info.waker.clone());
        // A new connection after the last one ended (a server serving one media connection at
        // a time): the last one's end is not this one's.
        s.error = None;
        drop(s);
        (
            MediaSender(self.channel.clone()),
            MediaReceiver(self.channel.clone()),
        )
    }

    fn max_datagram_frame_size(&self, _info: &PreConnectionInfo) -> u64 {
        MAX_DATAGRAM_FRAME
    }
}

impl Sender for MediaSender {
    fn on_transmit<P: Packet>(&mut self, packet: &mut P) {
        let now = Instant::now();
        let mut s = self.0.lock();
        if s.wants_padding() {
            if let Some((_, pad)) = s.padding.as_ref() {
                if packet.remaining_capacity() >= pad.len() && packet.write_datagram(pad).is_ok() {
                    s.counters.padding += 1;
                }
            }
            return;
        }
        while let Some(front) = s.out.front() {
            if front.deadline < now {
                s.out.pop_front();
                s.counters.expired += 1;
                continue;
            }
            if packet.remaining_capacity() < front.data.len() {
                break; // the next packet
            }
            let Some(d) = s.out.pop_front() else { break };
            match packet.write_datagram(&d.data) {
                Ok(()) => {
                    s.counters.sent += 1;
                    if s.sent.len() < MAX_QUEUED {
                        s.sent.push((d.id, now));
                    }
                }
                Err(_) => s.counters.overflowed += 1,
            }
            // One datagram a packet: each is a media packet of its own on the wire.
            break;
        }
    }

    fn has_transmission_interest(&self) -> bool {
        let s = self.0.lock();
        !s.out.is_empty() || s.wants_padding()
    }

    fn on_connection_error(&mut self, error: s2n_quic::connection::Error) {
        let mut s = self.0.lock();
        s.error.get_or_insert_with(|| error.to_string());
        s.out.clear();
        if let Some(w) = s.reader.take() {
            drop(s);
            w.wake();
        }
    }
}

impl Receiver for MediaReceiver {
    fn on_datagram(&mut self, _context: &ReceiveContext<'_>, datagram: &[u8]) {
        let now = Instant::now();
        let mut s = self.0.lock();
        if s.arrivals.len() == MAX_QUEUED {
            s.arrivals.pop_front();
            s.counters.overflowed += 1;
        }
        s.arrivals
            .push_back((Bytes::copy_from_slice(datagram), now));
        s.counters.received += 1;
        if let Some(w) = s.reader.take() {
            drop(s);
            w.wake();
        }
    }

    fn on_connection_error(&mut self, error: s2n_quic::connection::Error) {
        let mut s = self.0.lock();
        s.error.get_or_insert_with(|| error.to_string());
        if let Some(w) = s.reader.take() {
            drop(s);
            w.wake();
        }
    }
}
