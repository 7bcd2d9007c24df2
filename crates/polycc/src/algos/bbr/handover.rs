//! What a policy does to a running BBR, v1 and v3 alike: calibrate it, hand its flow to another
//! controller, take a flow over. A version adds only how it takes a bandwidth estimate (v1
//! seeds its BtlBw filter, v3 its max-bandwidth window) and which PROBE_BW phase follows.

use super::min_rtt::MinRttFilter;
use super::pacing::Pacing;
use crate::cc::{Calibration, HandoverState};
use crate::estimators::rtt::RttSnapshot;
use crate::signals::{AckEvent, SentPacket};
use crate::units::{Bytes, Rate, Time};

/// What the last ACK said that later events need: whether the sender was application-limited
/// (the restart from idle) and the RTT state and flight (the hand-over).
#[derive(Clone, Debug, Default)]
pub struct LastAck {
    /// The sender was application-limited at the ACK (`AckEvent::app_limited`).
    pub app_limited: bool,
    /// The transport's RTT state after the ACK.
    pub rtt: RttSnapshot,
    /// Bytes in flight after the ACK.
    pub in_flight: Bytes,
}

impl LastAck {
    /// Keeps what this ACK says, for the next send or a hand-over.
    pub fn record(&mut self, ack: &AckEvent) {
        self.app_limited = ack.app_limited;
        self.rtt = ack.rtt;
        self.in_flight = ack.in_flight;
    }

    /// Linux `CA_EVENT_TX_START`: the first packet sent after an application-limited idle
    /// period (once an RTT has been seen).
    pub fn restarts_from_idle(&self, sent: &SentPacket, pacing: &Pacing) -> bool {
        sent.in_flight <= sent.bytes && self.app_limited && pacing.has_seen_rtt()
    }
}

/// `cwnd` and `pacing_rate` are written as is (both are recomputed from the model on the next
/// ACK); `cwnd_clamp` bounds the window as Linux `snd_cwnd_clamp`; BBR has no ssthresh. The
/// caller applies its bounds after.
pub fn calibrate(
    c: &Calibration,
    clamp: &mut Option<Bytes>,
    cwnd: &mut Bytes,
    pacing: &mut Pacing,
) {
    if let Some(new_clamp) = c.cwnd_clamp {
        *clamp = new_clamp.bound();
    }
    if let Some(w) = c.cwnd {
        *cwnd = w;
    }
    if let Some(r) = c.pacing_rate {
        pacing.calibrate(r);
    }
}

/// The state handed to a successor: window, pacing rate, the model's bandwidth (when it has one)
/// and the last ACK's RTT state and flight.
pub fn state(cwnd: Bytes, pacing: &Pacing, bw: Rate, last: &LastAck) -> HandoverState {
    HandoverState {
        cwnd,
        ssthresh: None,
        pacing_rate: Some(pacing.rate()),
        bandwidth_estimate: (bw > Rate::ZERO).then_some(bw),
        rtt: last.rtt,
        in_flight: last.in_flight,
    }
}

/// Taking a flow over: keeps its window and seeds min RTT from the predecessor's RTT state. With
/// a bandwidth estimate (and so a min RTT) pacing starts at it and the estimate is returned: the
/// caller takes the pipe as full and goes to PROBE_BW. Without one, pacing starts from the
/// predecessor's srtt as from a first RTT sample and BBR starts in STARTUP at the inherited
/// window, as Linux does on a switch. The caller applies its bounds after.
pub fn adopt(
    now: Time,
    from: &HandoverState,
    cwnd: &mut Bytes,
    min_rtt: &mut MinRttFilter,
    last: &mut LastAck,
    pacing: &mut Pacing,
    startup_gain: f64,
) -> Option<Rate> {
    *cwnd = from.cwnd;
    if from.rtt.has_sample {
        min_rtt.seed(now, from.rtt.min);
        last.rtt = from.rtt;
    }
    match from.bandwidth_estimate.filter(|b| *b > Rate::ZERO) {
        Some(bw) if min_rtt.min_rtt.is_some() => {
            pacing.adopt(bw);
            Some(bw)
        }
        _ => {
            if from.rtt.has_sample {
                pacing.init_from_rtt(*cwnd, Some(from.rtt.smoothed), startup_gain);
            }
            None
        }
    }
}
