//! Send-time grouping of packets (WebRTC `inter_arrival_delta.cc`, draft-ietf-rmcat-gcc-02 §5.1):
//! packets sent within 5 ms of a group's first packet form one group, and so do packets that
//! arrive in a burst behind it; each completed group yields the send and receive deltas to the
//! previous group, the input of the trendline estimator.

use crate::units::{Bytes, Duration, Time};

/// WebRTC `kSendTimeGroupLength`: a group spans at most 5 ms of send time.
pub const GROUP_LENGTH: Duration = Duration::from_millis(5);
/// WebRTC `kBurstDeltaThreshold`: packets arriving within 5 ms of the group's last arrival, and
/// earlier than their send spacing predicts, belong to the group's burst.
pub const BURST_DELTA: Duration = Duration::from_millis(5);
/// WebRTC `kMaxBurstDuration`: a burst lasts at most 100 ms from the group's first arrival.
pub const MAX_BURST: Duration = Duration::from_millis(100);
/// WebRTC `kArrivalTimeOffsetThreshold`: after 2 s without packets the grouping starts over.
pub const RESET_GAP: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Group {
    first_send: Time,
    last_send: Time,
    first_arrival: Time,
    last_arrival: Time,
    bytes: Bytes,
}

impl Group {
    fn new(send: Time, arrival: Time, bytes: Bytes) -> Self {
        Group {
            first_send: send,
            last_send: send,
            first_arrival: arrival,
            last_arrival: arrival,
            bytes,
        }
    }
}

/// The deltas between two consecutive completed groups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupDelta {
    /// Difference of the groups' last send times, ms.
    pub send_delta_ms: f64,
    /// Difference of the groups' last arrival times, ms (the receiver's clock; only
    /// differences are used, so a clock offset cancels).
    pub recv_delta_ms: f64,
    /// Arrival time of the completed group.
    pub arrival: Time,
}

#[derive(Clone, Debug, Default)]
pub struct InterArrival {
    current: Option<Group>,
    previous: Option<Group>,
}

impl InterArrival {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one received packet; returns the deltas when it completes a group that has a
    /// predecessor.
    pub fn on_packet(&mut self, send: Time, arrival: Time, bytes: Bytes) -> Option<GroupDelta> {
        let Some(cur) = self.current.as_mut() else {
            self.current = Some(Group::new(send, arrival, bytes));
            return None;
        };
        if arrival.saturating_since(cur.last_arrival) > RESET_GAP {
            self.previous = None;
            self.current = Some(Group::new(send, arrival, bytes));
            return None;
        }
        if send < cur.first_send {
            return None; // reordered behind the group: no usable delta
        }
        if send.saturating_since(cur.first_send) <= GROUP_LENGTH
            || Self::in_burst(cur, send, arrival)
        {
            cur.last_send = cur.last_send.max(send);
            cur.last_arrival = cur.last_arrival.max(arrival);
            cur.bytes += bytes;
            return None;
        }
        let done = *cur;
        let delta = self.previous.map(|prev| GroupDelta {
            send_delta_ms: signed_ms(done.last_send, prev.last_send),
            recv_delta_ms: signed_ms(done.last_arrival, prev.last_arrival),
            arrival: done.last_arrival,
        });
        self.previous = Some(done);
        self.current = Some(Group::new(send, arrival, bytes));
        delta
    }

    /// WebRTC's burst rule: the packet arrived within `BURST_DELTA` of the group's last arrival,
    /// sooner than its send spacing (negative propagation delta), inside `MAX_BURST`.
    fn in_burst(g: &Group, send: Time, arrival: Time) -> bool {
        let arrival_delta = signed_ms(arrival, g.last_arrival);
        let send_delta = signed_ms(send, g.last_send);
        arrival_delta <= BURST_DELTA.as_millis_f64()
            && arrival_delta - send_delta < 0.0
            && arrival.saturating_since(g.first_arrival) < MAX_BURST
    }
}

fn signed_ms(a: Time, b: Time) -> f64 {
    (a.as_nanos() as f64 - b.as_nanos() as f64) / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    #[test]
    fn groups_of_five_ms_give_deltas_between_last_packets() {
        let mut ia = InterArrival::new();
        // Group A: sent 0, 2, 4 ms; group B: sent 10, 12 ms; group C starts at 20 ms.
        assert_eq!(ia.on_packet(ms(0), ms(50), 1200), None);
        assert_eq!(ia.on_packet(ms(2), ms(52), 1200), None);
        assert_eq!(ia.on_packet(ms(4), ms(54), 1200), None);
        assert_eq!(ia.on_packet(ms(10), ms(61), 1200), None); // completes A (no predecessor)
        assert_eq!(ia.on_packet(ms(12), ms(64), 1200), None);
        let d = ia.on_packet(ms(20), ms(70), 1200).expect("B completes");
        assert!((d.send_delta_ms - 8.0).abs() < 1e-9); // 12 - 4
        assert!((d.recv_delta_ms - 10.0).abs() < 1e-9); // 64 - 54: 2 ms of queue growth
        assert_eq!(d.arrival, ms(64));
    }

    #[test]
    fn a_burst_arriving_back_to_back_joins_the_group() {
        let mut ia = InterArrival::new();
        ia.on_packet(ms(0), ms(40), 1200);
        // Sent 8 ms later but arrived 1 ms after the previous packet: queued behind it.
        assert_eq!(ia.on_packet(ms(8), ms(41), 1200), None);
        assert_eq!(ia.current.unwrap().bytes, 2400);
    }

    #[test]
    fn reordered_packets_are_ignored_and_a_long_gap_resets() {
        let mut ia = InterArrival::new();
        ia.on_packet(ms(10), ms(40), 1200);
        assert_eq!(ia.on_packet(ms(5), ms(41), 1200), None);
        assert_eq!(ia.current.unwrap().bytes, 1200);
        ia.on_packet(ms(20), ms(50), 1200); // completes the first group
        assert!(ia.previous.is_some());
        ia.on_packet(ms(3000), ms(3030), 1200); // 2.98 s gap
        assert!(ia.previous.is_none());
    }
}
