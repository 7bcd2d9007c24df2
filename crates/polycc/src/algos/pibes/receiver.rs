//! The PIBES receiver (§III-A eq. 2, §III-B eq. 4): exponentially weighted moving averages of
//! the inter-arrival time of burst packets (d) and of paced packets (d~) of the same frame
//! received one after the other, and the competing-flow flag c = d~ > (1 + β)·d. Both averages and the
//! flag go back to the sender in ACKs.
//!
//! A sans-IO state machine fed with arrivals stamped with the receiver's clock; it uses only
//! differences of arrival times, so it needs no clock synchronisation.

use super::burst::Slot;
use crate::units::{Duration, Time};

/// §IV-A: α = 0.1 (accuracy and precision fall as α grows, Fig. 7).
pub const ALPHA: f64 = 0.1;
/// §III-B: competing flows are declared when d~ exceeds d by more than β = 10 %.
pub const BETA: f64 = 0.1;
/// Ours, a diagnostic (the paper has no such count): a paced gap of at least 1.5·d held at least
/// one other packet's service time of the bottleneck between the two paced packets (a competitor's
/// packet, or the slot of a video packet lost in between); d~ only sees a competitor through such
/// gaps. Halfway between one slot (d) and two (2·d).
pub const STRETCHED: f64 = 1.5;

/// What the receiver reports to the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    /// Smoothed burst inter-arrival time d.
    pub d: Option<Duration>,
    /// Smoothed paced inter-arrival time d~.
    pub d_tilde: Option<Duration>,
    /// c: a competing flow shares the bottleneck.
    pub competing: bool,
}

/// Eq. (2)/(4): the first sample initialises the average, later ones are blended with weight α.
#[derive(Clone, Copy, Debug, Default)]
struct Ewma {
    value_ns: Option<f64>,
}

impl Ewma {
    fn update(&mut self, sample_ns: f64, alpha: f64) {
        self.value_ns = Some(match self.value_ns {
            None => sample_ns,
            Some(v) => alpha * sample_ns + (1.0 - alpha) * v,
        });
    }
    fn get(&self) -> Option<Duration> {
        self.value_ns
            .map(|v| Duration::from_nanos(v.round() as u64))
    }
}

/// The receiver's averages d and d~ and the last arrival, which the next one pairs with.
#[derive(Clone, Debug)]
pub struct PibesReceiver {
    alpha: f64,
    beta: f64,
    burst: Ewma,
    paced: Ewma,
    last: Option<(Slot, Time)>,
    /// Burst inter-arrival samples taken so far (pairs of burst packets received in a row).
    pub burst_samples: u64,
    /// Paced inter-arrival samples taken so far (pairs of paced packets received in a row).
    pub paced_samples: u64,
    /// Paced samples of at least [`STRETCHED`]·d (d as it stood), so far.
    pub paced_stretched: u64,
    /// The sum of those samples over d: with [`Self::paced_stretched`], how long a stretched gap
    /// is on average (in slots of d), i.e. whether competitors' packets come one at a time or in
    /// clumps.
    pub paced_stretch_sum: f64,
}

impl PibesReceiver {
    /// A receiver with EWMA weight `alpha` ([`ALPHA`]) and competition margin `beta`
    /// ([`BETA`]), before any arrival.
    pub fn new(alpha: f64, beta: f64) -> Self {
        PibesReceiver {
            alpha,
            beta,
            burst: Ewma::default(),
            paced: Ewma::default(),
            last: None,
            burst_samples: 0,
            paced_samples: 0,
            paced_stretched: 0,
            paced_stretch_sum: 0.0,
        }
    }

    /// One packet arrived at `at`. Two packets of one frame received one after the other give a
    /// sample, their inter-arrival time (a frame boundary breaks the pair): both in the burst for
    /// d, both paced for d~. Arrivals must come in packet order, as they do on a FIFO path.
    ///
    /// A packet lost between the two does not break the pair (§III-B: d~ averages the observed
    /// inter-arrival times of the paced packets). At a full drop-tail queue every admitted packet
    /// waits the same, so a competitor's packet cannot stretch the gap between two adjacent video
    /// packets: it takes the slot of a video packet, which is dropped, and shows only as the
    /// longer gap around that loss. Pairing adjacent packets only discarded exactly those gaps
    /// (d~ = d beside 3-4 CUBIC flows once PIBES, which does not back off on loss, kept the queue
    /// full). Burst packets dropped at the queue take no service time, so received ones still
    /// arrive P/C apart; a random loss on the wire lengthens burst and paced gaps alike.
    pub fn on_arrival(&mut self, slot: Slot, at: Time) {
        if let Some((prev, t)) = self.last {
            if prev.frame == slot.frame && prev.pos < slot.pos && at >= t {
                let gap = (at - t).as_nanos() as f64;
                if prev.in_burst() && slot.in_burst() {
                    self.burst.update(gap, self.alpha);
                    self.burst_samples += 1;
                } else if !prev.in_burst() && !slot.in_burst() {
                    self.paced.update(gap, self.alpha);
                    self.paced_samples += 1;
                    if let Some(d) = self.burst.value_ns.filter(|&d| gap >= STRETCHED * d) {
                        self.paced_stretched += 1;
                        self.paced_stretch_sum += gap / d;
                    }
                }
            }
        }
        self.last = Some((slot, at));
    }

    /// d, d~ and c as they stand; c stays false until both averages have a sample.
    pub fn report(&self) -> Report {
        let (d, d_tilde) = (self.burst.get(), self.paced.get());
        let competing = match (self.burst.value_ns, self.paced.value_ns) {
            (Some(d), Some(dt)) => dt > (1.0 + self.beta) * d,
            _ => false,
        };
        Report {
            d,
            d_tilde,
            competing,
        }
    }
}
