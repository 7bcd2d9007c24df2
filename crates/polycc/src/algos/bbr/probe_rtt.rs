//! PROBE_RTT: the window cut to a few packets, held for a while and a round so the queue drains
//! and a fresh min RTT is measured: the hold's clock and the marking of its low-rate samples, which
//! v1 and v3 share (each chooses when to enter, the window to hold and what follows).

use super::min_rtt::MinRttFilter;
use super::rounds::Rounds;
use crate::signals::{AckEvent, RateSample};
use crate::units::{Bytes, Duration, Time};

/// Linux `bbr_probe_rtt_mode_ms`: least time spent at the PROBE_RTT window.
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);

/// PROBE_RTT's "ignore low rate samples" (Linux sets `tp->app_limited = delivered + inflight` on
/// every PROBE_RTT ACK): packets sent from then until everything in flight at the mark has been
/// delivered are application-limited, so their low delivery rates neither enter nor age out the
/// max-bandwidth filter. Tracked here by packet number, since the transport's own app-limited flag
/// only knows about the application.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProbeRttAppLimited {
    largest_sent: Option<u64>,
    largest_acked: Option<u64>,
    /// Packets are marked while this one is unacknowledged.
    mark: Option<u64>,
    /// Largest packet number sent while marked.
    upto: Option<u64>,
}

impl ProbeRttAppLimited {
    /// Notes a sent packet: while marking, it is covered.
    #[inline]
    pub fn on_sent(&mut self, pn: u64) {
        self.largest_sent = Some(self.largest_sent.map_or(pn, |p| p.max(pn)));
        if self.mark.is_some() {
            self.upto = Some(self.upto.map_or(pn, |u| u.max(pn)));
        }
    }

    /// Notes the largest packet acknowledged: once it reaches the mark, everything in flight at
    /// the mark has been delivered and marking stops.
    #[inline]
    pub fn on_ack(&mut self, largest_acked: u64) {
        let a = self
            .largest_acked
            .map_or(largest_acked, |p| p.max(largest_acked));
        self.largest_acked = Some(a);
        if self.mark.is_some_and(|m| a >= m) {
            self.mark = None;
        }
    }

    /// Marks everything sent until what is in flight now has been delivered.
    #[inline]
    pub fn mark(&mut self) {
        self.mark = self.largest_sent.or(self.largest_acked);
    }

    /// The packet was sent during a marked period.
    #[inline]
    pub fn covers(&self, pn: u64) -> bool {
        self.upto.is_some_and(|u| pn <= u)
    }
}

/// The PROBE_RTT hold (Linux `probe_rtt_done_stamp`, `probe_rtt_round_done`) and its sample marks.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProbeRtt {
    /// When the hold ends; `None` until in flight has fallen to the PROBE_RTT window.
    done: Option<Time>,
    /// A round has ended since the hold began.
    round_done: bool,
    app_limited: ProbeRttAppLimited,
}

impl ProbeRtt {
    /// Entering PROBE_RTT: the hold starts once in flight has fallen to the window.
    pub fn enter(&mut self) {
        self.done = None;
    }

    /// Notes every sent packet, in any mode, for the marks.
    pub fn on_sent(&mut self, pn: u64) {
        self.app_limited.on_sent(pn);
    }

    /// The packet was sent while PROBE_RTT marked samples as application-limited.
    pub fn covers(&self, pn: u64) -> bool {
        self.app_limited.covers(pn)
    }

    /// The ACK's delivery-rate sample, if valid (a non-zero interval, and `usable` by the
    /// version's own rule), marked app-limited when its packet was sent during PROBE_RTT.
    pub fn rate_sample(&mut self, ack: &AckEvent, usable: bool) -> Option<RateSample> {
        self.app_limited.on_ack(ack.largest_acked);
        let marked = self.app_limited.covers(ack.largest_acked);
        ack.rate_sample
            .filter(|r| !r.interval.is_zero() && usable)
            .map(|mut r| {
                r.is_app_limited |= marked;
                r
            })
    }

    /// An ACK in PROBE_RTT (Linux `bbr_update_min_rtt`'s second half): marks what is in flight
    /// app-limited; once `in_flight` is at most `target`, holds for `hold` and starts a round.
    /// Returns true once the hold has begun and a round has ended since: time to check
    /// [`ProbeRtt::leave_if_done`].
    pub fn on_ack(
        &mut self,
        now: Time,
        in_flight: Bytes,
        target: Bytes,
        hold: Duration,
        rounds: &mut Rounds,
    ) -> bool {
        self.app_limited.mark();
        if self.done.is_none() && in_flight <= target {
            self.done = Some(now + hold);
            self.round_done = false;
            rounds.restart();
            false
        } else if self.done.is_some() {
            if rounds.start {
                self.round_done = true;
            }
            self.round_done
        } else {
            false
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: once the hold is over, the next PROBE_RTT is a full
    /// window away and the window saved on entry is restored. True when the caller leaves the
    /// mode now.
    pub fn leave_if_done(
        &self,
        now: Time,
        min_rtt: &mut MinRttFilter,
        cwnd: &mut Bytes,
        prior_cwnd: Bytes,
    ) -> bool {
        if self.done.is_none_or(|d| now <= d) {
            return false;
        }
        min_rtt.probe_done(now);
        *cwnd = (*cwnd).max(prior_cwnd);
        true
    }
}
