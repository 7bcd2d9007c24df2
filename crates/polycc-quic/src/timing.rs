//! Receiver-side timing for the controllers that ask for it (LEDBAT's one-way delay, GCC,
//! PIBES: [`polycc::CongestionControl::wants_feedback`]), as RTP's transport-wide feedback
//! gives it: the receiving endpoint timestamps every 1-RTT packet by its QUIC packet number
//! and sends the times back in [`crate::report`]s on a unidirectional stream every
//! [`REPORT_INTERVAL`]; the sending endpoint maps each packet number back to the packet the
//! adapter numbered and hands the controller a [`polycc::Feedback`] at its next event, on the
//! connection's own task.
//!
//! s2n-quic 1.91 has no receive-timestamps extension and does not show its controller the
//! packet numbers, so both ends use its event subscriber ([`TimingEvents`]):
//!
//! - **receiver**: `PacketReceived` gives the packet number after decryption and the
//!   datagram's receive time (the event's timestamp); [`ArrivalLog`] keeps them, at most
//!   [`MAX_PENDING_ARRIVALS`], until [`send_reports`] takes them.
//! - **sender**: s2n calls the controller's `on_packet_sent` and then, at once and on the same
//!   thread, publishes `PacketSent` with the packet's number (`space/application.rs`,
//!   `on_packet_sent`). The adapter leaves its packet's record in a thread-local slot; the
//!   subscriber takes it with the number and files it in the connection's `SentLog` (the
//!   latest [`MAX_SENT_RECORDS`] packets). Every `PacketSent` empties the slot, so a packet the
//!   controller did not see (an MTU probe) is never paired with another's record.
//!
//! [`read_reports`] reads the peer's reports and posts them to the connection's
//! [`ControllerHandle`]; at most [`MAX_PENDING_ARRIVALS`] wait there (the oldest go first).

use crate::handle::{ControllerHandle, Shared};
use crate::report::{encode, ReportError, ReportReader, ReportedArrival};
use polycc::{Bytes, Time};
use s2n_quic::provider::event::{events, ConnectionInfo, ConnectionMeta, Subscriber};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use thiserror::Error;

/// How often a receiver sends its arrivals: RTP's transport-wide feedback is sent about every
/// 50-100 ms (libwebrtc's `RtcpFeedbackSenderInterval`); a controller's next decision waits
/// for it, so the shortest that keeps a report's header small against its arrivals (one
/// packet a millisecond is 20 arrivals a report).
pub const REPORT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(20);

/// Most sent packets the sender remembers: a report about an older packet finds nothing. 16 Ki
/// packets of 1500 bytes are 2 s at 100 Mbit/s, far more than one report interval and an RTT.
pub const MAX_SENT_RECORDS: usize = 16 * 1024;

/// Most arrivals waiting at either end (the receiver's log before a report, the sender's inbox
/// before the controller's next event); beyond it the oldest are dropped and counted.
pub const MAX_PENDING_ARRIVALS: usize = 16 * 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a lock was held leaves plain data behind: take it as it is.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One packet the adapter counted, as the controller was told of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SentRecord {
    /// Its QUIC packet number.
    pub quic_pn: u64,
    /// The adapter's number ([`polycc::SentPacket::pn`]).
    pub pn: u64,
    /// Bytes on the wire.
    pub bytes: Bytes,
    /// Send time on the controller's clock.
    pub sent: Time,
}

/// The latest packets sent, by QUIC packet number (increasing: 1-RTT numbers only grow).
#[derive(Debug, Default)]
pub(crate) struct SentLog {
    records: VecDeque<SentRecord>,
}

impl SentLog {
    pub(crate) fn push(&mut self, r: SentRecord) {
        if self.records.back().is_some_and(|b| b.quic_pn >= r.quic_pn) {
            // Not in 1-RTT order; cannot happen with s2n, and a lookup needs the order.
            return;
        }
        if self.records.len() == MAX_SENT_RECORDS {
            self.records.pop_front();
        }
        self.records.push_back(r);
    }

    pub(crate) fn find(&self, quic_pn: u64) -> Option<&SentRecord> {
        let i = self
            .records
            .binary_search_by_key(&quic_pn, |r| r.quic_pn)
            .ok()?;
        self.records.get(i)
    }
}

/// Arrivals waiting, at most [`MAX_PENDING_ARRIVALS`].
#[derive(Debug, Default)]
pub struct ArrivalLog {
    arrivals: VecDeque<ReportedArrival>,
    dropped: u64,
}

impl ArrivalLog {
    /// Adds one arrival, dropping the oldest when full.
    pub fn push(&mut self, a: ReportedArrival) {
        if self.arrivals.len() == MAX_PENDING_ARRIVALS {
            self.arrivals.pop_front();
            self.dropped += 1;
        }
        self.arrivals.push_back(a);
    }

    /// Moves every waiting arrival to `out`.
    pub fn drain_into(&mut self, out: &mut Vec<ReportedArrival>) {
        out.extend(self.arrivals.drain(..));
    }

    /// Arrivals waiting.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// Arrivals dropped because the log was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The arrival log of one connection, shared by its subscriber and [`send_reports`].
#[derive(Clone, Debug, Default)]
pub struct SharedArrivals(Arc<Mutex<ArrivalLog>>);

impl SharedArrivals {
    /// The log, locked.
    pub fn lock(&self) -> MutexGuard<'_, ArrivalLog> {
        lock(&self.0)
    }
}

/// The adapter's packet waiting for its QUIC number: (its connection's mailbox, packet number,
/// bytes, send time).
type JustSent = (Arc<Shared>, u64, Bytes, Time);

thread_local! {
    static JUST_SENT: RefCell<Option<JustSent>> = const { RefCell::new(None) };
}

/// The adapter sent packet `pn`; its `PacketSent` event comes next on this thread.
pub(crate) fn note_sent(shared: &Arc<Shared>, pn: u64, bytes: Bytes, sent: Time) {
    JUST_SENT.with(|s| *s.borrow_mut() = Some((shared.clone(), pn, bytes, sent)));
}

fn take_just_sent() -> Option<JustSent> {
    JUST_SENT.with(|s| s.borrow_mut().take())
}

/// A packet was sent, numbered `one_rtt` in the 1-RTT space (`None`: another space): files the
/// adapter's record under that number. The slot is emptied either way: it belongs to this
/// packet or to none.
pub(crate) fn file_just_sent(one_rtt: Option<u64>) {
    let Some((shared, pn, bytes, sent)) = take_just_sent() else {
        return;
    };
    if let Some(quic_pn) = one_rtt {
        shared.record_sent(SentRecord {
            quic_pn,
            pn,
            bytes,
            sent,
        });
    }
}

/// The event subscriber of an endpoint whose connections send or receive timing feedback:
/// install it with `with_event` on the s2n-quic builder. Its connection context is the
/// connection's [`SharedArrivals`].
#[derive(Clone, Copy, Debug, Default)]
pub struct TimingEvents {
    record_arrivals: bool,
}

impl TimingEvents {
    /// For a sending endpoint: pairs the adapter's packets with their QUIC numbers.
    pub fn sender() -> Self {
        TimingEvents {
            record_arrivals: false,
        }
    }

    /// For a receiving endpoint: also timestamps every 1-RTT packet received.
    pub fn receiver() -> Self {
        TimingEvents {
            record_arrivals: true,
        }
    }
}

impl Subscriber for TimingEvents {
    type ConnectionContext = SharedArrivals;

    fn create_connection_context(
        &mut self,
        _meta: &ConnectionMeta,
        _info: &ConnectionInfo,
    ) -> SharedArrivals {
        SharedArrivals::default()
    }

    fn on_packet_sent(
        &mut self,
        _context: &mut SharedArrivals,
        _meta: &ConnectionMeta,
        event: &events::PacketSent,
    ) {
        let one_rtt = match event.packet_header {
            events::PacketHeader::OneRtt { number, .. } => Some(number),
            _ => None,
        };
        file_just_sent(one_rtt);
    }

    fn on_packet_received(
        &mut self,
        context: &mut SharedArrivals,
        meta: &ConnectionMeta,
        event: &events::PacketReceived,
    ) {
        if !self.record_arrivals {
            return;
        }
        if let events::PacketHeader::OneRtt { number, .. } = event.packet_header {
            let at = meta.timestamp.duration_since_start();
            context.lock().push(ReportedArrival {
                pn: number,
                arrival_us: u64::try_from(at.as_micros()).unwrap_or(u64::MAX),
            });
        }
    }
}

/// Why the peer's timing feedback could not be read.
#[derive(Debug, Error)]
pub enum FeedbackError {
    /// Its reports are malformed.
    #[error("the peer's timing feedback: {0}")]
    Report(#[from] ReportError),
}

/// Sends `conn`'s arrivals to its peer on a new unidirectional stream every
/// [`REPORT_INTERVAL`], until the connection ends; returns the arrivals reported. The endpoint
/// must run [`TimingEvents::receiver`]; otherwise nothing is recorded and nothing sent.
pub async fn send_reports(mut conn: s2n_quic::connection::Handle) -> u64 {
    let Ok(log) = conn.query_event_context(|c: &SharedArrivals| c.clone()) else {
        return 0;
    };
    let Ok(mut stream) = conn.open_send_stream().await else {
        return 0;
    };
    let mut tick = tokio::time::interval(REPORT_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut arrivals = Vec::new();
    let mut reported = 0;
    loop {
        tick.tick().await;
        arrivals.clear();
        log.lock().drain_into(&mut arrivals);
        if arrivals.is_empty() {
            continue;
        }
        let mut bytes = Vec::with_capacity(8 + 3 * arrivals.len());
        encode(&arrivals, &mut bytes);
        if stream.send(bytes.into()).await.is_err() {
            return reported; // the connection ended
        }
        reported += arrivals.len() as u64;
    }
}

/// Reads the peer's reports from the first unidirectional stream it opens on `acceptor`'s
/// connection and posts them to `handle`'s controller, until the stream or the connection
/// ends; returns the arrivals posted. Malformed reports are an error.
pub async fn read_reports(
    mut acceptor: s2n_quic::connection::ReceiveStreamAcceptor,
    handle: ControllerHandle,
) -> Result<u64, FeedbackError> {
    let Ok(Some(mut stream)) = acceptor.accept_receive_stream().await else {
        return Ok(0);
    };
    let mut reader = ReportReader::new();
    let mut arrivals = Vec::new();
    let mut posted = 0;
    loop {
        match stream.receive().await {
            Ok(Some(chunk)) => {
                arrivals.clear();
                reader.push(&chunk, &mut arrivals)?;
                handle.post_arrivals(&arrivals);
                posted += arrivals.len() as u64;
            }
            Ok(None) => {
                reader.finish()?;
                return Ok(posted);
            }
            // Reset, or the connection closed: the run ended.
            Err(_) => return Ok(posted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(quic_pn: u64, pn: u64) -> SentRecord {
        SentRecord {
            quic_pn,
            pn,
            bytes: 1200,
            sent: Time(pn),
        }
    }

    #[test]
    fn the_sent_log_keeps_the_latest_packets_in_order() {
        let mut log = SentLog::default();
        for i in 0..(MAX_SENT_RECORDS as u64 + 10) {
            // QUIC numbers skip some (ACK-only packets are not recorded).
            log.push(rec(3 * i + 5, i));
        }
        assert_eq!(log.records.len(), MAX_SENT_RECORDS);
        assert_eq!(log.find(5), None, "the oldest went first");
        assert_eq!(log.find(3 * 100 + 5).map(|r| r.pn), Some(100));
        assert_eq!(log.find(3 * 100 + 6), None);
        // Out of order: refused, the order kept.
        log.push(rec(7, 1));
        assert_eq!(log.find(7), None);
    }

    #[test]
    fn the_arrival_log_is_bounded_and_counts_what_it_drops() {
        let mut log = ArrivalLog::default();
        for i in 0..(MAX_PENDING_ARRIVALS as u64 + 3) {
            log.push(ReportedArrival {
                pn: i,
                arrival_us: i,
            });
        }
        assert_eq!((log.len(), log.dropped()), (MAX_PENDING_ARRIVALS, 3));
        let mut out = Vec::new();
        log.drain_into(&mut out);
        assert_eq!(out.first().map(|a| a.pn), Some(3));
        assert!(log.is_empty());
    }

    #[test]
    fn a_packet_event_takes_the_slot_whatever_its_space() {
        let shared = Arc::new(Shared::default());
        note_sent(&shared, 4, 1200, Time(9));
        assert!(take_just_sent().is_some());
        assert!(take_just_sent().is_none(), "taken once");
    }
}
