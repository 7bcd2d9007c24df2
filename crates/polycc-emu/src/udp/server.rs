//! The receiving end of a polycc UDP flow: records what arrived, counts each segment's payload
//! once (goodput), and acknowledges by the flow's `ack` policy, as the simulator's receiver does
//! (RFC 9000 §13.2.1: at once when a packet arrives out of order, else every `ack_every`
//! packets or after `max_ack_delay`).

use super::wire::{self, Ack, Datagram, DATA_HEADER, MAX_RANGES, NO_SEGMENT};
use crate::clock::Clock;
use crate::flow_state::{lock, FlowShared};
use polycc::signals::Arrival;
use polycc::units::{Duration, Time};
use polycc_sim::engine::segset::SegSet;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicBool, Ordering};

/// Longest wait between looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// Disjoint, ascending ranges of numbers seen; only the newest [`KEEP`] are kept (older ones
/// were acknowledged many times over).
#[derive(Default)]
struct Ranges(Vec<RangeInclusive<u64>>);

/// Ranges kept: a few times what an ACK carries.
const KEEP: usize = 4 * MAX_RANGES;

impl Ranges {
    /// Adds `n`; returns whether it is new and whether it came in order (above every other).
    fn insert(&mut self, n: u64) -> (bool, bool) {
        let v = &mut self.0;
        let at = v.partition_point(|r| *r.end() < n);
        if v.get(at).is_some_and(|r| r.contains(&n)) {
            return (false, false);
        }
        let in_order = at == v.len();
        let joins_prev = at > 0 && *v[at - 1].end() + 1 == n;
        let joins_next = v.get(at).is_some_and(|r| *r.start() == n + 1);
        match (joins_prev, joins_next) {
            (true, true) => {
                let end = *v[at].end();
                v[at - 1] = *v[at - 1].start()..=end;
                v.remove(at);
            }
            (true, false) => v[at - 1] = *v[at - 1].start()..=n,
            (false, true) => v[at] = n..=*v[at].end(),
            (false, false) => v.insert(at, n..=n),
        }
        if v.len() > KEEP {
            v.remove(0);
        }
        (true, in_order)
    }

    fn largest(&self) -> Option<u64> {
        self.0.last().map(|r| *r.end())
    }
}

pub struct ServerConfig {
    /// An unresponsive source: nothing is acknowledged, and each packet's RTT is its one-way
    /// delay plus this, the return path's base delay (what a probe would see, as in the
    /// simulator).
    pub unresponsive_return: Option<Duration>,
    pub ack_every: u32,
    pub max_ack_delay: Duration,
    /// Report each packet's arrival time (the controller wants receiver feedback).
    pub report_arrivals: bool,
    /// Sized and web flows: segments of each transfer.
    pub transfer_segments: Option<u64>,
}

/// Serves one flow (on a thread in the receiving namespace) until `stop`.
pub fn run_server(
    sock: &UdpSocket,
    cfg: &ServerConfig,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    let mut pns = Ranges::default();
    let mut segs = SegSet::new();
    let mut arrivals: Vec<Arrival> = Vec::new();
    let mut unacked = 0u32;
    let mut deadline: Option<Time> = None;
    let mut largest_at = Time::ZERO;
    let mut peer: Option<SocketAddr> = None;
    let mut buf = vec![0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        let now = clock.now();
        let wait = deadline.map_or(POLL, |d| Duration(d.0.saturating_sub(now.0)).min(POLL));
        let _ = sock.set_read_timeout(Some(std::time::Duration::from_nanos(wait.0.max(1_000))));
        let received = sock.recv_from(&mut buf);
        let now = clock.now();
        match received {
            Ok((n, from)) => {
                let Ok(Datagram::Data(d)) = wire::decode(&buf[..n]) else {
                    continue; // not ours, or damaged: dropped
                };
                peer.get_or_insert(from);
                let (new, in_order) = pns.insert(d.pn);
                if !new {
                    continue;
                }
                flow.packets_received.fetch_add(1, Ordering::Relaxed);
                if let Some(back) = cfg.unresponsive_return {
                    lock(&flow.rtt).record((now - d.sent + back).0 / 1000);
                }
                if pns.largest() == Some(d.pn) {
                    largest_at = now;
                }
                if d.segment != NO_SEGMENT && segs.insert(d.segment) {
                    flow.add_received((n - DATA_HEADER) as u64);
                    if let Some(n) = cfg.transfer_segments {
                        flow.complete_through(segs.cumulative(), n, now);
                    }
                }
                if cfg.unresponsive_return.is_some() {
                    continue;
                }
                if cfg.report_arrivals {
                    arrivals.push(Arrival {
                        pn: d.pn,
                        bytes: n as u64 + wire::IP_UDP_HEADERS,
                        sent_time: d.sent,
                        arrival_time: now,
                    });
                }
                unacked += 1;
                if !in_order || unacked >= cfg.ack_every {
                    deadline = Some(now);
                } else {
                    deadline.get_or_insert(now + cfg.max_ack_delay);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return flow.fail(format!("receive: {e}")),
        }
        if let (Some(d), Some(to), Some(largest)) = (deadline, peer, pns.largest()) {
            if d <= now {
                let ack = Ack {
                    largest,
                    ack_delay_us: ((now - largest_at).0 / 1000).min(u32::MAX as u64) as u32,
                    ranges: pns.0.clone(),
                    arrivals: std::mem::take(&mut arrivals),
                };
                // A full socket buffer loses the ACK, as a congested host would.
                if sock.send_to(&ack.encode(), to).is_ok() {
                    flow.acks_sent.fetch_add(1, Ordering::Relaxed);
                }
                unacked = 0;
                deadline = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_report_order() {
        let mut r = Ranges::default();
        assert_eq!(r.insert(0), (true, true));
        assert_eq!(r.insert(1), (true, true));
        assert_eq!(r.insert(3), (true, true));
        assert_eq!(r.insert(1), (false, false));
        assert_eq!(r.insert(2), (true, false), "fills the hole");
        assert_eq!(r.0, vec![0..=3]);
        assert_eq!(r.insert(10), (true, true));
        assert_eq!(r.insert(8), (true, false));
        assert_eq!(r.0, vec![0..=3, 8..=8, 10..=10]);
        for k in 0..100 {
            r.insert(20 + 2 * k);
        }
        assert_eq!(r.0.len(), KEEP);
        assert_eq!(r.largest(), Some(218));
    }
}
