//! The application's side of one connection's controller.
//!
//! s2n-quic owns the controller inside the connection's task and calls it several times per
//! packet; the application runs on other threads. Sharing the controller behind a mutex cost a
//! lock per call, 8 per ACK of two packets, several hundred nanoseconds per ACK on this machine
//! kind (BENCHMARKS.md), more than the controllers themselves. So the two sides share only a
//! mailbox: the application posts an intent, which the controller takes at its next event (one
//! relaxed atomic load per event while none is posted), and the controller publishes its
//! telemetry and counters every [`PUBLISH_INTERVAL`] of connection time, after an ACK that
//! leaves nothing in flight (the end of a transfer), at once when the application asked for a
//! fresh copy, and when the connection ends.

use crate::adapter::AdapterStats;
use crate::report::ReportedArrival;
use crate::timing::{ArrivalLog, SentLog, SentRecord};
use polycc::units::Duration;
use polycc::{Intent, Telemetry};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How often a running controller publishes its telemetry: the emulated testbed's sampling
/// period of kernel flows (`TCP_INFO` every 10 ms, README "Emulated testbed").
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(10);

/// Most frames announced and not yet taken by the controller: a second of 30 fps video; a
/// controller's next event takes them (every packet is one).
pub const MAX_PENDING_FRAMES: usize = 32;

/// What the controller last published.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    /// Its telemetry.
    pub telemetry: Telemetry,
    /// The adapter's counters and the window, pacing rate and RTT.
    pub stats: AdapterStats,
    /// What the controller tells a media source (`media_control()`: the encoder's target).
    pub media: Option<polycc::MediaControl>,
    /// The connection time it was taken at (the controller's clock; zero before any event).
    pub at: polycc::Time,
    /// Snapshots published so far (0: none yet).
    pub seq: u64,
}

/// The mailbox shared by a controller and its handles.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    intent_posted: AtomicBool,
    intent: Mutex<Option<Intent>>,
    refresh: AtomicBool,
    snapshot: Mutex<Snapshot>,
    /// Receiver timing (`crate::timing`): the peer's arrivals posted since the controller's
    /// last event, and the packets sent by QUIC packet number.
    arrivals_posted: AtomicBool,
    /// The controller's `wants_padding()` as of its last event (WebRTC's probes: a media
    /// sender pads when it has nothing to send).
    padding: AtomicBool,
    /// Frames a media source announced (`on_frame`) since the controller's last event.
    frames_posted: AtomicBool,
    frames: Mutex<std::collections::VecDeque<polycc::FrameInfo>>,
    inbox: Mutex<ArrivalLog>,
    sent: Mutex<SentLog>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a lock was held leaves plain data behind: take it as it is.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    /// The intent posted since the last call, if any.
    #[inline]
    pub(crate) fn take_intent(&self) -> Option<Intent> {
        if !self.intent_posted.load(Ordering::Relaxed) {
            return None;
        }
        self.intent_posted.store(false, Ordering::Relaxed);
        lock(&self.intent).take()
    }

    /// Whether the application asked for a fresh snapshot.
    #[inline]
    pub(crate) fn refresh_asked(&self) -> bool {
        self.refresh.load(Ordering::Relaxed)
    }

    /// Moves the frames announced since the last call to `out`.
    #[inline]
    pub(crate) fn take_frames(&self, out: &mut Vec<polycc::FrameInfo>) {
        if self.frames_posted.swap(false, Ordering::Acquire) {
            out.extend(lock(&self.frames).drain(..));
        }
    }

    /// Records the controller's `wants_padding()`.
    #[inline]
    pub(crate) fn set_padding(&self, wanted: bool) {
        self.padding.store(wanted, Ordering::Relaxed);
    }

    /// Whether arrivals were posted since the last call.
    #[inline]
    pub(crate) fn take_arrivals_posted(&self) -> bool {
        self.arrivals_posted.swap(false, Ordering::Acquire)
    }

    /// Moves the posted arrivals to `out`; returns how many the inbox dropped so far.
    pub(crate) fn take_arrivals(&self, out: &mut Vec<ReportedArrival>) -> u64 {
        let mut inbox = lock(&self.inbox);
        inbox.drain_into(out);
        inbox.dropped()
    }

    /// Files a packet sent under its QUIC packet number.
    pub(crate) fn record_sent(&self, r: SentRecord) {
        lock(&self.sent).push(r);
    }

    /// The packets sent, locked (for the controller's task).
    pub(crate) fn sent(&self) -> MutexGuard<'_, SentLog> {
        lock(&self.sent)
    }

    pub(crate) fn publish(&self, mut s: Snapshot) {
        self.refresh.store(false, Ordering::Relaxed);
        let mut slot = lock(&self.snapshot);
        s.seq = slot.seq + 1;
        *slot = s;
    }
}

/// The application's handle to one connection's controller. Cloneable and thread-safe.
#[derive(Clone, Debug)]
pub struct ControllerHandle {
    shared: Arc<Shared>,
    name: Arc<str>,
    peer: Option<SocketAddr>,
    wants_feedback: bool,
}

impl ControllerHandle {
    pub(crate) fn new(
        shared: Arc<Shared>,
        name: &str,
        peer: Option<SocketAddr>,
        wants_feedback: bool,
    ) -> Self {
        ControllerHandle {
            shared,
            name: name.into(),
            peer,
            wants_feedback,
        }
    }

    /// Whether the controller takes receiver timing ([`polycc::CongestionControl::wants_feedback`]):
    /// its peer should run [`crate::timing::send_reports`].
    pub fn wants_feedback(&self) -> bool {
        self.wants_feedback
    }

    /// Announces a media frame to the controller ([`polycc::CongestionControl::on_frame`]) at
    /// its next event, before that event's packet if it is a send: post it before queueing the
    /// frame's packets. At most [`MAX_PENDING_FRAMES`] wait (the oldest beyond are dropped).
    pub fn post_frame(&self, frame: &polycc::FrameInfo) {
        let mut frames = lock(&self.shared.frames);
        if frames.len() == MAX_PENDING_FRAMES {
            frames.pop_front();
        }
        frames.push_back(*frame);
        drop(frames);
        self.shared.frames_posted.store(true, Ordering::Release);
    }

    /// Whether the controller wants padding now (`wants_padding()` as of its last event): a
    /// media sender with nothing to send should send padding at the controller's pace.
    pub fn wants_padding(&self) -> bool {
        self.shared.padding.load(Ordering::Relaxed)
    }

    /// Hands arrivals the peer reported ([`crate::timing::read_reports`] does) to the
    /// controller at its next event. At most [`crate::timing::MAX_PENDING_ARRIVALS`] wait; the
    /// oldest beyond are dropped (counted in [`AdapterStats::feedback_dropped`]).
    pub fn post_arrivals(&self, arrivals: &[ReportedArrival]) {
        if arrivals.is_empty() || !self.wants_feedback {
            return;
        }
        let mut inbox = lock(&self.shared.inbox);
        for a in arrivals {
            inbox.push(*a);
        }
        drop(inbox);
        self.shared.arrivals_posted.store(true, Ordering::Release);
    }

    /// The controller's registry name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The peer's address, as s2n-quic reported it when the path was created.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// Hands the application's intent to the controller at its next event (the next packet
    /// sent or ACK received), stamped with that event's time. A later intent posted before it
    /// replaces this one.
    pub fn set_intent(&self, intent: &Intent) {
        *lock(&self.shared.intent) = Some(*intent);
        self.shared.intent_posted.store(true, Ordering::Release);
    }

    /// The controller's latest published state: at most [`PUBLISH_INTERVAL`] of connection
    /// time old while the connection sends, exact when nothing is in flight, final once the
    /// connection has ended.
    pub fn snapshot(&self) -> Snapshot {
        *lock(&self.shared.snapshot)
    }

    /// Asks the controller to publish at its next event rather than at the interval.
    pub fn request_refresh(&self) {
        self.shared.refresh.store(true, Ordering::Relaxed);
    }

    /// [`Snapshot::telemetry`] of the latest snapshot.
    pub fn telemetry(&self) -> Telemetry {
        self.snapshot().telemetry
    }

    /// [`Snapshot::stats`] of the latest snapshot.
    pub fn stats(&self) -> AdapterStats {
        self.snapshot().stats
    }
}
