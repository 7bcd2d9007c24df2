//! Monitor intervals (MIs): the measurement engine shared by every PCC controller.
//!
//! PCC Allegro §3.1: time is sliced into MIs; each MI sends at one rate and every packet is
//! attributed to the MI in which it was sent. When every packet of an MI has been acknowledged or
//! declared lost, the MI is complete and yields its statistics: sending rate, throughput, loss
//! rate, mean RTT, the RTT gradient (least-squares slope of RTT over send time, with the
//! regression error), the RTT standard deviation, and a reliability flag.
//!
//! Reliability (PCC-Uspace master, `pcc_sender.cpp`, dossier §7.2): an RTT sample is unreliable
//! when its ACK arrived more than [`ACK_BURST_RATIO`]× the EWMA of ACK inter-arrival times after
//! the previous ACK (the head of an ACK burst, whose RTT includes the time the ACKs were held).
//! An MI is reliable with at least [`MIN_RELIABLE_SAMPLES`] reliable samples that are more than
//! [`MIN_RELIABLE_RATIO`] of its samples. The gradient and deviation use the reliable samples
//! only.
//!
//! Extension: the ACKs that arrive while an MI is sending describe the ACK path of that moment.
//! When the MI reaches its end and those ACKs fail the reliability test, the MI (when the
//! controller enables it) is extended once to twice its length, so that its own packets span a
//! longer, less bursty stretch of ACKs. This is our sans-IO reading of master's "duration doubled
//! once": the MI's own samples arrive only about one RTT after it stopped sending, too late to
//! lengthen it.
//!
//! Re-alignment (Allegro §3.1): when a result changes the rate in the middle of an MI, the
//! current MI is closed at that moment and a new MI starts at the new rate.

use crate::signals::PacketOutcome;
use crate::units::{Bytes, Duration, Rate, Time};
use std::collections::VecDeque;

/// dossier §7.2: an ACK inter-arrival this many times its EWMA marks an ACK burst.
pub const ACK_BURST_RATIO: f64 = 50.0;
/// dossier §7.2: EWMA gain of the ACK inter-arrival average.
pub const ACK_INTERVAL_EWMA_ALPHA: f64 = 0.1;
/// dossier §7.2 `kMinReliableRtt`.
pub const MIN_RELIABLE_SAMPLES: u64 = 4;
/// dossier §7.2 `kMinReliabilityRatio` (strictly greater than).
pub const MIN_RELIABLE_RATIO: f64 = 0.8;
/// Allegro §3.1: an MI lasts at least the time to send this many packets.
pub const MIN_PACKETS_PER_MI: u64 = 10;
/// Bound on MIs awaiting their packets' fate: a transport that never reports some packet must
/// not make the queue grow without limit. The oldest MI is then completed, its packets still
/// pending counted as lost (unreported for 64 MIs, at least 64 RTTs: a transport would have
/// declared them lost long before).
pub const MAX_OUTSTANDING_MIS: usize = 64;

/// What a controller asks of the next MI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MiPlan {
    /// Sending rate of the MI.
    pub rate: Rate,
    /// Whether the controller wants this MI's result (MIs that only hold a rate while results
    /// are pending are not useful).
    pub useful: bool,
    /// The controller's label for the result (an experiment number and a trial index).
    pub tag: u64,
}

/// The statistics of one completed MI.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MiStats {
    /// The controller's label, from [`MiPlan::tag`].
    pub tag: u64,
    /// Whether the controller wanted this result, from [`MiPlan::useful`].
    pub useful: bool,
    /// Target sending rate of the MI.
    pub rate: Rate,
    /// When the MI started.
    pub start: Time,
    /// From the start until the MI was closed (its end, or a re-alignment).
    pub duration: Duration,
    /// Packets sent during the MI.
    pub packets_sent: u64,
    /// Of those, packets acknowledged.
    pub packets_acked: u64,
    /// Of those, packets declared lost, or never reported when the MI was forced complete
    /// ([`MAX_OUTSTANDING_MIS`]).
    pub packets_lost: u64,
    /// Bytes sent during the MI.
    pub bytes_sent: Bytes,
    /// Of those, bytes acknowledged.
    pub bytes_acked: Bytes,
    /// Of those, bytes lost (as `packets_lost`).
    pub bytes_lost: Bytes,
    /// Bytes sent over the duration, in bit/s.
    pub send_rate_bps: f64,
    /// Bytes acknowledged over the duration, in bit/s.
    pub throughput_bps: f64,
    /// Lost bytes over sent bytes.
    pub loss_rate: f64,
    /// Mean RTT of all samples, µs (NaN without samples).
    pub mean_rtt_us: f64,
    /// Least-squares slope of RTT against send time over the reliable samples (s/s).
    pub rtt_gradient: f64,
    /// Root-mean-square residual of that regression over the mean RTT.
    pub rtt_gradient_error: f64,
    /// Standard deviation of the reliable RTT samples, µs.
    pub rtt_dev_us: f64,
    /// The RTT regression line (as `rtt_gradient`) at the send time of the first reliable
    /// sample, µs (NaN without reliable samples): the RTT as the MI began, with per-packet noise
    /// averaged out.
    pub rtt_start_us: f64,
    /// The same line at the last reliable sample's send time, µs (NaN without reliable
    /// samples). `rtt_end_us − rtt_start_us` is the RTT change over the MI, caused by the MI's
    /// own rate against the bottleneck's (a mean RTT also carries the earlier MIs' queue).
    pub rtt_end_us: f64,
    /// RTT samples of the MI's packets.
    pub samples: u64,
    /// Of those, samples that passed the ACK-burst filter ([`ACK_BURST_RATIO`]).
    pub reliable_samples: u64,
    /// At least [`MIN_RELIABLE_SAMPLES`] reliable samples and a ratio above
    /// [`MIN_RELIABLE_RATIO`].
    pub reliable: bool,
    /// The MI was extended once because the ACKs seen while it sent were unreliable.
    pub extended: bool,
    /// Closed early because the controller changed the rate.
    pub realigned: bool,
    /// The transport flagged at least one of the MI's packets as sent while it was
    /// application-limited ([`SentPacket::app_limited`](crate::signals::SentPacket::app_limited)).
    pub app_limited_flag: bool,
    /// The sender's own window was full at some moment of the MI: it sent less than its rate
    /// for want of window, not of data.
    pub window_limited: bool,
}

impl MiStats {
    /// [`Self::send_rate_bps`] in Mbit/s, the unit of the utilities.
    pub fn send_rate_mbps(&self) -> f64 {
        self.send_rate_bps / 1e6
    }
    /// [`Self::throughput_bps`] in Mbit/s, the unit of the utilities.
    pub fn throughput_mbps(&self) -> f64 {
        self.throughput_bps / 1e6
    }
}

/// True when `reliable` of `total` samples pass the reliability test.
pub fn samples_reliable(reliable: u64, total: u64) -> bool {
    reliable >= MIN_RELIABLE_SAMPLES && reliable as f64 > MIN_RELIABLE_RATIO * total as f64
}

/// The length of an MI: `rtt_part`, but at least the time to send `min_packets` of `mss` at
/// `rate` (Allegro §3.1), and never zero.
pub fn interval_length(rate: Rate, mss: Bytes, min_packets: u64, rtt_part: Duration) -> Duration {
    let packets = if rate.as_bps() == 0 {
        Duration::ZERO
    } else {
        rate.time_to_send(mss.saturating_mul(min_packets))
    };
    rtt_part.max(packets).max(Duration(1))
}

/// The ACK-burst filter: the EWMA of ACK inter-arrival times and the verdict on each sample.
#[derive(Clone, Debug, Default)]
pub(crate) struct AckBurstFilter {
    last_ack: Option<Time>,
    ewma_ns: Option<f64>,
    last_verdict: bool,
}

impl AckBurstFilter {
    /// Judges the sample of a packet acknowledged at `now`. Packets acknowledged at the same
    /// instant belong to one ACK and share its verdict.
    pub fn on_ack(&mut self, now: Time) -> bool {
        let verdict = match self.last_ack {
            None => true,
            Some(t) if now <= t => return self.last_verdict,
            Some(t) => {
                let gap = (now - t).0 as f64;
                let reliable = self.ewma_ns.is_none_or(|e| gap <= ACK_BURST_RATIO * e);
                self.ewma_ns = Some(self.ewma_ns.map_or(gap, |e| {
                    (1.0 - ACK_INTERVAL_EWMA_ALPHA) * e + ACK_INTERVAL_EWMA_ALPHA * gap
                }));
                reliable
            }
        };
        self.last_ack = Some(now);
        self.last_verdict = verdict;
        verdict
    }

    /// The EWMA of ACK inter-arrival times; `None` before the second ACK.
    #[cfg(test)]
    pub fn ewma(&self) -> Option<Duration> {
        self.ewma_ns.map(|e| Duration(e as u64))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Pending,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Send time after the MI's start, s.
    sent_s: f64,
    rtt_us: f64,
    reliable: bool,
}

#[derive(Clone, Debug)]
struct Interval {
    plan: MiPlan,
    start: Time,
    deadline: Time,
    end: Option<Time>,
    extended: bool,
    realigned: bool,
    app_limited_flag: bool,
    window_limited: bool,
    /// Packets of this MI in send order.
    packets: Vec<(u64, Fate)>,
    /// Send times of the first and the last packet.
    first_sent: Option<Time>,
    last_sent: Time,
    resolved: u64,
    bytes_sent: Bytes,
    bytes_acked: Bytes,
    bytes_lost: Bytes,
    packets_acked: u64,
    packets_lost: u64,
    samples: Vec<Sample>,
    /// Samples (of any MI) that arrived while this MI was sending, and how many were reliable.
    live_samples: u64,
    live_reliable: u64,
}

impl Interval {
    fn complete(&self) -> bool {
        self.end.is_some() && self.resolved as usize == self.packets.len()
    }

    fn owns(&self, pn: u64) -> Option<usize> {
        let first = self.packets.first()?.0;
        let last = self.packets.last()?.0;
        if pn < first || pn > last {
            return None;
        }
        // Packet numbers rise by one per send, so the index is usually pn − first; numbers
        // skipped (sends outside any MI) fall back to a search.
        let guess = (pn - first) as usize;
        if self.packets.get(guess).is_some_and(|p| p.0 == pn) {
            return Some(guess);
        }
        self.packets.binary_search_by_key(&pn, |p| p.0).ok()
    }

    /// The time over which the MI's packets were sent, the denominator of its sending rate and
    /// throughput: N packets paced τ apart occupy N·τ, the span from the first to the last
    /// send plus one τ at the MI's rate (PCC-Uspace master, dossier §7.2). The MI's window
    /// `duration` is not used as such: its boundaries fall between packets, so it holds N − 1 to
    /// N + 1 intervals, an error of up to one packet in N (±8 % at 12 packets per MI), larger than
    /// the 1 %–5 % rate differences the controllers compare. The window less one τ is a lower
    /// bound, so that packets sent in a burst (an application-limited MI) do not count as a
    /// high rate.
    fn sending_time(&self, duration: Duration) -> Duration {
        let (Some(first), n) = (self.first_sent, self.packets.len() as u64) else {
            return duration;
        };
        if n == 0 || self.plan.rate.as_bps() == 0 {
            return duration;
        }
        let tau = self.plan.rate.time_to_send(self.bytes_sent / n);
        let span = self.last_sent.saturating_since(first) + tau;
        span.max(duration - tau).max(Duration(1))
    }

    /// Sets the fate of pending packet `k` (of `bytes`).
    fn resolve(&mut self, k: usize, fate: Fate, bytes: Bytes) {
        self.packets[k].1 = fate;
        self.resolved += 1;
        if fate == Fate::Lost {
            self.packets_lost += 1;
            self.bytes_lost = self.bytes_lost.saturating_add(bytes);
        } else {
            self.packets_acked += 1;
            self.bytes_acked = self.bytes_acked.saturating_add(bytes);
        }
    }

    /// Mean bytes of this MI's packets.
    fn packet_bytes(&self) -> Bytes {
        self.bytes_sent / (self.packets.len() as Bytes).max(1)
    }

    fn stats(&self) -> MiStats {
        let end = self.end.unwrap_or(self.deadline);
        let duration = end.saturating_since(self.start).max(Duration(1));
        let secs = self.sending_time(duration).as_secs_f64();
        let mut s = MiStats {
            tag: self.plan.tag,
            useful: self.plan.useful,
            rate: self.plan.rate,
            start: self.start,
            duration,
            packets_sent: self.packets.len() as u64,
            packets_acked: self.packets_acked,
            packets_lost: self.packets_lost,
            bytes_sent: self.bytes_sent,
            bytes_acked: self.bytes_acked,
            bytes_lost: self.bytes_lost,
            send_rate_bps: self.bytes_sent as f64 * 8.0 / secs,
            throughput_bps: self.bytes_acked as f64 * 8.0 / secs,
            loss_rate: if self.bytes_sent == 0 {
                0.0
            } else {
                self.bytes_lost as f64 / self.bytes_sent as f64
            },
            mean_rtt_us: f64::NAN,
            rtt_start_us: f64::NAN,
            rtt_end_us: f64::NAN,
            samples: self.samples.len() as u64,
            extended: self.extended,
            realigned: self.realigned,
            app_limited_flag: self.app_limited_flag,
            window_limited: self.window_limited,
            ..MiStats::default()
        };
        if !self.samples.is_empty() {
            s.mean_rtt_us =
                self.samples.iter().map(|x| x.rtt_us).sum::<f64>() / self.samples.len() as f64;
        }
        let fit = regress(self.samples.iter().filter(|x| x.reliable));
        s.reliable_samples = fit.n;
        s.reliable = samples_reliable(fit.n, s.samples);
        s.rtt_gradient = fit.slope;
        s.rtt_dev_us = fit.dev_us;
        s.rtt_start_us = fit.start_us;
        s.rtt_end_us = fit.end_us;
        s.rtt_gradient_error = if fit.mean_us > 0.0 {
            fit.rms_residual_us / fit.mean_us
        } else {
            0.0
        };
        s
    }
}

/// Least-squares fit of RTT (µs) against send time (s) over a set of samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Fit {
    n: u64,
    /// dRTT/dt, dimensionless (µs per µs).
    slope: f64,
    mean_us: f64,
    dev_us: f64,
    rms_residual_us: f64,
    /// The fitted line at the earliest and the latest send time (NaN without samples).
    start_us: f64,
    end_us: f64,
}

fn regress<'a>(samples: impl Iterator<Item = &'a Sample> + Clone) -> Fit {
    let (mut n, mut sx, mut sy) = (0u64, 0.0, 0.0);
    for s in samples.clone() {
        n += 1;
        sx += s.sent_s;
        sy += s.rtt_us;
    }
    if n == 0 {
        return Fit {
            start_us: f64::NAN,
            end_us: f64::NAN,
            ..Fit::default()
        };
    }
    let (mx, my) = (sx / n as f64, sy / n as f64);
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for s in samples.clone() {
        let (dx, dy) = (s.sent_s - mx, s.rtt_us - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    // slope in µs per s; ÷1e6 makes it dimensionless.
    let slope_us_per_s = if n >= 2 && sxx > 0.0 { sxy / sxx } else { 0.0 };
    let mut sse = 0.0;
    let (mut first_s, mut last_s) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in samples {
        first_s = first_s.min(s.sent_s);
        last_s = last_s.max(s.sent_s);
        let r = s.rtt_us - (my + slope_us_per_s * (s.sent_s - mx));
        sse += r * r;
    }
    Fit {
        n,
        slope: slope_us_per_s / 1e6,
        mean_us: my,
        dev_us: (syy / n as f64).sqrt(),
        rms_residual_us: (sse / n as f64).sqrt(),
        start_us: my + slope_us_per_s * (first_s - mx),
        end_us: my + slope_us_per_s * (last_s - mx),
    }
}

/// How the MI queue treats an MI whose live ACKs were unreliable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MonitorConfig {
    /// Extend such an MI once to twice its length (Vivace and Proteus; not Allegro).
    pub extend_unreliable: bool,
}

/// The MIs of one flow: the current one (sending) and the earlier ones awaiting their packets.
#[derive(Clone, Debug)]
pub(crate) struct MonitorQueue {
    cfg: MonitorConfig,
    intervals: VecDeque<Interval>,
    filter: AckBurstFilter,
    done: VecDeque<MiStats>,
    /// Emptied packet and sample buffers of completed MIs, reused by the next ones so that a
    /// steady flow allocates nothing per packet.
    spare: Vec<MiBuffers>,
}

/// An MI's packet list and RTT samples.
type MiBuffers = (Vec<(u64, Fate)>, Vec<Sample>);

impl MonitorQueue {
    pub fn new(cfg: MonitorConfig) -> Self {
        MonitorQueue {
            cfg,
            intervals: VecDeque::new(),
            filter: AckBurstFilter::default(),
            done: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    fn current(&self) -> Option<&Interval> {
        self.intervals.back().filter(|i| i.end.is_none())
    }

    /// The plan of the MI that is sending, if any.
    pub fn current_plan(&self) -> Option<MiPlan> {
        self.current().map(|i| i.plan)
    }

    /// When the current MI is due to end.
    pub fn deadline(&self) -> Option<Time> {
        self.current().map(|i| i.deadline)
    }

    /// MIs started but not yet complete (the current one included).
    #[cfg(test)]
    pub fn outstanding(&self) -> usize {
        self.intervals.len()
    }

    /// True when a new MI must start at `now`: there is none, or the current one reached its
    /// end. An MI whose live ACKs were unreliable is first extended once (when enabled).
    pub fn poll_end(&mut self, now: Time) -> bool {
        let extend = self.cfg.extend_unreliable;
        let Some(cur) = self.intervals.back_mut().filter(|i| i.end.is_none()) else {
            return true;
        };
        if now < cur.deadline {
            return false;
        }
        if extend && !cur.extended && !samples_reliable(cur.live_reliable, cur.live_samples) {
            cur.extended = true;
            let len = cur.deadline.saturating_since(cur.start);
            cur.deadline += len;
            return now >= cur.deadline;
        }
        true
    }

    /// Closes the current MI (if any) at `now` and starts a new one lasting `length`.
    pub fn begin(&mut self, now: Time, plan: MiPlan, length: Duration) {
        self.close(now, false);
        let (packets, samples) = self.spare.pop().unwrap_or_default();
        self.intervals.push_back(Interval {
            plan,
            start: now,
            deadline: now + length.max(Duration(1)),
            end: None,
            extended: false,
            realigned: false,
            app_limited_flag: false,
            window_limited: false,
            packets,
            first_sent: None,
            last_sent: now,
            resolved: 0,
            bytes_sent: 0,
            bytes_acked: 0,
            bytes_lost: 0,
            packets_acked: 0,
            packets_lost: 0,
            samples,
            live_samples: 0,
            live_reliable: 0,
        });
        self.collect();
    }

    /// Re-alignment: the current MI ends now (flagged as re-aligned) and a new one starts.
    pub fn realign(&mut self, now: Time, plan: MiPlan, length: Duration) {
        self.close(now, true);
        self.begin(now, plan, length);
    }

    fn close(&mut self, now: Time, realigned: bool) {
        if let Some(cur) = self.intervals.back_mut().filter(|i| i.end.is_none()) {
            cur.end = Some(now.max(cur.start));
            cur.realigned = realigned;
        }
    }

    /// Attributes a sent packet to the current MI. Packets sent with no MI open are not
    /// measured.
    pub fn on_sent(&mut self, now: Time, pn: u64, bytes: Bytes) {
        if let Some(cur) = self.intervals.back_mut().filter(|i| i.end.is_none()) {
            if cur.packets.last().is_some_and(|p| p.0 >= pn) {
                return; // numbers must increase; a repeat is not a new packet
            }
            cur.packets.push((pn, Fate::Pending));
            cur.first_sent.get_or_insert(now);
            cur.last_sent = now.max(cur.last_sent);
            cur.bytes_sent = cur.bytes_sent.saturating_add(bytes);
        }
    }

    /// Records, for the current MI, that the transport sent one of its packets while
    /// application-limited (`app`) or that the sender's window was full (`window`).
    pub fn mark_limits(&mut self, app: bool, window: bool) {
        if let Some(cur) = self.intervals.back_mut().filter(|i| i.end.is_none()) {
            cur.app_limited_flag |= app;
            cur.window_limited |= window;
        }
    }

    fn find(&mut self, pn: u64) -> Option<(&mut Interval, usize)> {
        self.intervals
            .iter_mut()
            .find_map(|i| i.owns(pn).map(|k| (i, k)))
    }

    pub fn on_acked(&mut self, now: Time, p: &PacketOutcome) {
        let reliable = p.rtt.map(|_| self.filter.on_ack(now));
        if let (Some(r), Some(cur)) = (
            reliable,
            self.intervals.back_mut().filter(|i| i.end.is_none()),
        ) {
            cur.live_samples += 1;
            cur.live_reliable += r as u64;
        }
        if let Some((mi, k)) = self.find(p.pn) {
            if mi.packets[k].1 != Fate::Pending {
                return;
            }
            mi.resolve(k, Fate::Acked, p.bytes);
            if let (Some(rtt), Some(reliable)) = (p.rtt, reliable) {
                mi.samples.push(Sample {
                    sent_s: p.sent_time.saturating_since(mi.start).as_secs_f64(),
                    rtt_us: rtt.0 as f64 / 1e3,
                    reliable,
                });
            }
        }
        self.collect();
    }

    pub fn on_lost(&mut self, p: &PacketOutcome) {
        if let Some((mi, k)) = self.find(p.pn) {
            if mi.packets[k].1 != Fate::Pending {
                return;
            }
            mi.resolve(k, Fate::Lost, p.bytes);
        }
        self.collect();
    }

    /// An ACK of `packets` packets of which only the largest, `p`, is known (a transport without
    /// per-packet outcomes). The others are taken to be the `packets − 1` pending packets just
    /// below `p.pn`, newest first: an ACK covers the packets that arrived since the previous
    /// one, and holes (losses, declared later) lie further back. They add no RTT samples.
    pub fn on_acked_aggregate(&mut self, now: Time, p: &PacketOutcome, packets: u64) {
        self.resolve_below(p.pn, packets.saturating_sub(1), Fate::Acked, p.bytes);
        self.on_acked(now, p);
    }

    /// A loss event of `packets` packets of which only the largest, `p`, is known: the others
    /// are taken to be the pending packets just below it, as in [`Self::on_acked_aggregate`].
    pub fn on_lost_aggregate(&mut self, p: &PacketOutcome, packets: u64) {
        self.resolve_below(p.pn, packets.saturating_sub(1), Fate::Lost, p.bytes);
        self.on_lost(p);
    }

    /// Gives `count` pending packets numbered below `pn`, newest first, the fate `fate`.
    fn resolve_below(&mut self, pn: u64, mut count: u64, fate: Fate, bytes: Bytes) {
        for mi in self.intervals.iter_mut().rev() {
            if count == 0 {
                break;
            }
            // Packets of this MI numbered below `pn`.
            let end = mi.packets.partition_point(|q| q.0 < pn);
            for k in (0..end).rev() {
                if count == 0 {
                    break;
                }
                if mi.packets[k].1 == Fate::Pending {
                    mi.resolve(k, fate, bytes);
                    count -= 1;
                }
            }
        }
    }

    /// Moves complete MIs (oldest first, in order) to the results.
    fn collect(&mut self) {
        while let Some(front) = self.intervals.front() {
            let forced = self.intervals.len() > MAX_OUTSTANDING_MIS && front.end.is_some();
            if !(front.complete() || forced) {
                break;
            }
            let mut mi = self.intervals.pop_front().expect("front exists");
            let bytes = mi.packet_bytes();
            for k in 0..mi.packets.len() {
                if mi.packets[k].1 == Fate::Pending {
                    mi.resolve(k, Fate::Lost, bytes);
                }
            }
            self.done.push_back(mi.stats());
            mi.packets.clear();
            mi.samples.clear();
            self.spare.push((mi.packets, mi.samples));
        }
    }

    /// The next completed MI's statistics, oldest first.
    pub fn pop_completed(&mut self) -> Option<MiStats> {
        self.done.pop_front()
    }

    /// Forgets every MI (on a hand-over or calibration that restarts measurement).
    pub fn clear(&mut self) {
        self.intervals.clear();
        self.done.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1000;
    const MS: u64 = 1_000_000;

    fn plan(tag: u64) -> MiPlan {
        MiPlan {
            rate: Rate::from_mbps(8),
            useful: true,
            tag,
        }
    }

    fn acked(pn: u64, sent_ms: u64, rtt_us: u64) -> PacketOutcome {
        PacketOutcome {
            pn,
            bytes: MSS,
            sent_time: Time(sent_ms * MS),
            rtt: Some(Duration::from_micros(rtt_us)),
        }
    }

    fn queue() -> MonitorQueue {
        MonitorQueue::new(MonitorConfig {
            extend_unreliable: false,
        })
    }

    #[test]
    fn statistics_of_a_scripted_interval() {
        let mut q = queue();
        q.begin(Time::ZERO, plan(7), Duration::from_millis(10));
        // Ten packets, one per ms; pn 4 is lost; the RTT grows 0.5 ms per ms sent (30 ms + t/2).
        for pn in 0..10 {
            q.on_sent(Time(pn * MS), pn, MSS);
        }
        assert!(q.poll_end(Time(10 * MS)));
        q.begin(Time(10 * MS), plan(8), Duration::from_millis(10));
        assert!(q.pop_completed().is_none());
        for pn in 0..10u64 {
            let now = Time((30 + pn) * MS + pn * MS / 2);
            if pn == 4 {
                q.on_lost(&PacketOutcome {
                    pn,
                    bytes: MSS,
                    sent_time: Time(pn * MS),
                    rtt: None,
                });
            } else {
                q.on_acked(now, &acked(pn, pn, 30_000 + pn * 500));
            }
        }
        let s = q.pop_completed().expect("complete");
        assert_eq!(
            (s.tag, s.packets_sent, s.packets_acked, s.packets_lost),
            (7, 10, 9, 1)
        );
        assert_eq!(s.duration, Duration::from_millis(10));
        // 10 000 B over 10 ms = 8 Mbit/s sent; 9 000 B acked = 7.2 Mbit/s; loss 10 %.
        assert!((s.send_rate_bps - 8e6).abs() < 1e-6);
        assert!((s.throughput_bps - 7.2e6).abs() < 1e-6);
        assert!((s.loss_rate - 0.1).abs() < 1e-12);
        // Mean of 30 000 + 500·pn over pn ≠ 4: 30 000 + 500·41/9 = 32 277.8 µs.
        assert!((s.mean_rtt_us - (30_000.0 + 500.0 * 41.0 / 9.0)).abs() < 1e-6);
        // Exactly linear: slope 0.5 (µs per µs), no residual.
        assert!((s.rtt_gradient - 0.5).abs() < 1e-9, "{}", s.rtt_gradient);
        assert!(s.rtt_gradient_error < 1e-9);
        // The line at the first and the last sample's send time: 30 ms (pn 0), 34.5 ms (pn 9).
        assert!(
            (s.rtt_start_us - 30_000.0).abs() < 1e-6,
            "{}",
            s.rtt_start_us
        );
        assert!((s.rtt_end_us - 34_500.0).abs() < 1e-6, "{}", s.rtt_end_us);
        // Std dev of 500·{0,1,2,3,5,6,7,8,9}: 500·sqrt(E[x²] − E[x]²) = 500·2.96273 = 1481.4 µs.
        let xs = [0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let m = xs.iter().sum::<f64>() / 9.0;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 9.0;
        assert!((s.rtt_dev_us - 500.0 * var.sqrt()).abs() < 1e-6);
        assert!(s.reliable && s.reliable_samples == 9);
    }

    #[test]
    fn regression_error_of_a_noisy_ramp() {
        let mut q = queue();
        q.begin(Time::ZERO, plan(1), Duration::from_millis(8));
        for pn in 0..8 {
            q.on_sent(Time::ZERO, pn, MSS);
        }
        q.begin(Time(8 * MS), plan(2), Duration::from_millis(8));
        // 40 ms + 0.1·t, ±200 µs alternating: the fit keeps slope ≈ 0.1 and the RMS residual
        // is ≈ 200 µs, so the error is ≈ 200/40 400 of the mean.
        for pn in 0..8u64 {
            let noise: i64 = if pn % 2 == 0 { 200 } else { -200 };
            let rtt = (40_000 + pn as i64 * 100 + noise) as u64;
            q.on_acked(Time((40 + pn) * MS), &acked(pn, pn, rtt));
        }
        let s = q.pop_completed().expect("complete");
        // Least squares of the alternating term against pn 0..7 adds −200·(sum of centred x·s)
        // / Σx²: x̄ = 3.5, Σ(x−x̄)·(±1) = −4, Σ(x−x̄)² = 42 → slope 100 − 200·4/42 µs/ms.
        let slope_us_per_ms = 100.0 - 200.0 * 4.0 / 42.0;
        assert!((s.rtt_gradient - slope_us_per_ms / 1000.0).abs() < 1e-9);
        assert!(s.rtt_gradient_error > 190.0 / 40_400.0 && s.rtt_gradient_error < 200.0 / 40_000.0);
    }

    /// Sends `n` packets one per ms from `first_ms` in an MI spanning [start, end) µs and acks
    /// them; returns the MI's statistics.
    fn paced_mi(start_us: u64, end_us: u64, first_ms: u64, n: u64) -> MiStats {
        let mut q = queue();
        q.begin(
            Time(start_us * 1000),
            plan(1),
            Duration(end_us * 1000 - start_us * 1000),
        );
        for pn in 0..n {
            q.on_sent(Time((first_ms + pn) * MS), pn, MSS);
        }
        q.begin(Time(end_us * 1000), plan(2), Duration::from_millis(10));
        for pn in 0..n {
            q.on_acked(
                Time((first_ms + pn + 30) * MS),
                &acked(pn, first_ms + pn, 30_000),
            );
        }
        q.pop_completed().expect("complete")
    }

    #[test]
    fn rates_are_measured_over_the_packets_not_the_window() {
        // 1000 B every 1 ms is exactly 8 Mbit/s (the plan's rate). A window of 11.8 ms
        // ([0.5, 12.3) ms) holds the 12 packets sent at 1..12 ms: over the window that reads
        // 8.14 Mbit/s. Over the packets, 11 ms between the first and the last plus one packet
        // time at 8 Mbit/s (1 ms): 12 ms, 8.00 Mbit/s.
        let s = paced_mi(500, 12_300, 1, 12);
        assert_eq!(s.duration, Duration(11_800_000));
        assert!((s.send_rate_bps - 8e6).abs() < 1.0, "{}", s.send_rate_bps);
        assert!((s.throughput_bps - 8e6).abs() < 1.0, "{}", s.throughput_bps);
        // A window of 10.95 ms ([0.1, 11.05) ms) holding 11 packets (1..11 ms): 8.04 Mbit/s
        // over the window, 8.00 over the packets.
        let s = paced_mi(100, 11_050, 1, 11);
        assert!((s.send_rate_bps - 8e6).abs() < 1.0, "{}", s.send_rate_bps);
        // Three packets in a burst at 1–3 ms of a 20 ms window (an application-limited MI):
        // 24 000 bit over the window less one packet time (19 ms) = 1.26 Mbit/s, not the
        // 8 Mbit/s of their span.
        let s = paced_mi(0, 20_000, 1, 3);
        assert!(
            (s.send_rate_bps - 24_000.0 / 0.019).abs() < 1.0,
            "{}",
            s.send_rate_bps
        );
    }

    #[test]
    fn ack_burst_filter_flags_an_ack_after_a_long_gap() {
        let mut f = AckBurstFilter::default();
        let mut t = 0;
        for _ in 0..20 {
            t += MS;
            assert!(f.on_ack(Time(t)));
        }
        assert_eq!(f.ewma(), Some(Duration::from_millis(1)));
        // Same instant: same ACK, same verdict, EWMA untouched.
        assert!(f.on_ack(Time(t)));
        // 40 ms ≤ 50 × 1 ms: reliable; the EWMA moves to 0.9·1 + 0.1·40 = 4.9 ms.
        t += 40 * MS;
        assert!(f.on_ack(Time(t)));
        assert_eq!(f.ewma(), Some(Duration(4_900_000)));
        // 250 ms > 50 × 4.9 ms = 245 ms: unreliable, and so is the rest of that ACK.
        t += 250 * MS;
        assert!(!f.on_ack(Time(t)));
        assert!(!f.on_ack(Time(t)));
        assert!(f.on_ack(Time(t + MS)));
    }

    #[test]
    fn reliability_needs_four_samples_and_more_than_eighty_percent() {
        assert!(!samples_reliable(3, 3));
        assert!(samples_reliable(4, 4));
        assert!(!samples_reliable(4, 5)); // exactly 0.8 is not enough
        assert!(samples_reliable(9, 10));
        // An interval whose second ACK follows a gap of 100× the first: its sample is unreliable.
        let mut q = queue();
        q.begin(Time::ZERO, plan(1), Duration::from_millis(5));
        for pn in 0..5 {
            q.on_sent(Time::ZERO, pn, MSS);
        }
        q.begin(Time(5 * MS), plan(2), Duration::from_millis(5));
        let times = [30, 31, 131, 132, 133];
        for (pn, at) in times.iter().enumerate() {
            q.on_acked(Time(at * MS), &acked(pn as u64, pn as u64, 30_000));
        }
        let s = q.pop_completed().expect("complete");
        assert_eq!((s.samples, s.reliable_samples), (5, 4));
        assert!(!s.reliable);
    }

    #[test]
    fn completion_in_order_realignment_and_extension() {
        let mut q = MonitorQueue::new(MonitorConfig {
            extend_unreliable: true,
        });
        q.begin(Time::ZERO, plan(1), Duration::from_millis(10));
        q.on_sent(Time::ZERO, 0, MSS);
        // No ACKs during the MI: at its end it is extended once to 20 ms, then it ends.
        assert!(!q.poll_end(Time(10 * MS)));
        assert_eq!(q.deadline(), Some(Time(20 * MS)));
        assert!(q.poll_end(Time(20 * MS)));
        q.begin(Time(20 * MS), plan(2), Duration::from_millis(10));
        q.on_sent(Time::ZERO, 1, MSS);
        // A re-alignment at 25 ms closes MI 2 early.
        q.realign(Time(25 * MS), plan(3), Duration::from_millis(10));
        q.on_sent(Time::ZERO, 2, MSS);
        // MI 2's packet resolves first, but results come out in order.
        q.on_acked(Time(60 * MS), &acked(1, 20, 35_000));
        assert!(q.pop_completed().is_none());
        q.on_acked(Time(61 * MS), &acked(0, 0, 61_000));
        let a = q.pop_completed().expect("MI 1");
        let b = q.pop_completed().expect("MI 2");
        assert_eq!(
            (a.tag, a.extended, a.duration),
            (1, true, Duration::from_millis(20))
        );
        assert_eq!(
            (b.tag, b.realigned, b.duration),
            (2, true, Duration::from_millis(5))
        );
        assert_eq!(q.current_plan().map(|p| p.tag), Some(3));
        // A packet number never sent is ignored.
        q.on_acked(Time(62 * MS), &acked(99, 30, 32_000));
        assert_eq!(q.outstanding(), 1);
    }

    #[test]
    fn aggregate_events_resolve_the_packets_just_below_the_largest() {
        let mut q = queue();
        q.begin(Time::ZERO, plan(1), Duration::from_millis(10));
        for pn in 0..10 {
            q.on_sent(Time(pn * MS), pn, MSS);
        }
        q.begin(Time(10 * MS), plan(2), Duration::from_millis(10));
        // One ACK of three packets whose largest is 9: 7, 8 and 9, not 0 and 1.
        q.on_acked_aggregate(Time(40 * MS), &acked(9, 9, 30_000), 3);
        // A loss event of two packets whose largest is 2: packets 1 and 2.
        q.on_lost_aggregate(
            &PacketOutcome {
                pn: 2,
                bytes: MSS,
                sent_time: Time(2 * MS),
                rtt: None,
            },
            2,
        );
        // An ACK of five packets (largest 6) resolves 3..=6 and the older pending 0.
        q.on_acked_aggregate(Time(41 * MS), &acked(6, 6, 30_000), 6);
        let s = q.pop_completed().expect("complete");
        assert_eq!((s.packets_acked, s.packets_lost, s.samples), (8, 2, 2));
        assert!((s.loss_rate - 0.2).abs() < 1e-12);
    }

    #[test]
    fn forced_completion_counts_unreported_packets_lost() {
        let mut q = queue();
        for i in 0..=MAX_OUTSTANDING_MIS as u64 {
            q.begin(Time(i * MS), plan(i), Duration::from_millis(1));
            q.on_sent(Time(i * MS), 2 * i, MSS);
            q.on_sent(Time(i * MS), 2 * i + 1, MSS);
            // Only the first packet of each MI is ever reported.
            q.on_acked(Time((i + 30) * MS), &acked(2 * i, i, 30_000));
        }
        // 65 MIs open: the oldest is completed with its silent packet counted lost.
        let s = q.pop_completed().expect("forced");
        assert_eq!((s.tag, s.packets_acked, s.packets_lost), (0, 1, 1));
        assert!((s.loss_rate - 0.5).abs() < 1e-12);
    }

    #[test]
    fn interval_length_is_at_least_ten_packets() {
        // 10 × 1000 B at 1 Mbit/s = 80 ms > 30 ms.
        assert_eq!(
            interval_length(
                Rate::from_mbps(1),
                MSS,
                MIN_PACKETS_PER_MI,
                Duration::from_millis(30)
            ),
            Duration::from_millis(80)
        );
        assert_eq!(
            interval_length(
                Rate::from_mbps(100),
                MSS,
                MIN_PACKETS_PER_MI,
                Duration::from_millis(30)
            ),
            Duration::from_millis(30)
        );
    }
}
