//! The application on top of a flow: what data exists when (bulk, one sized transfer, repeated
//! web-like transfers) or, for unresponsive sources, when each packet is emitted.

use crate::engine::page_loader::PageLoader;
use crate::engine::player::Player;
use crate::scenario::Traffic;
use polycc::units::{Duration, Time};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// Mixed into the application's seed for a page loader's stream (any constant apart from 0).
const PAGE_STREAM: u64 = 0x7061_6765_6c6f_6164;

/// One transfer of a sized or web flow.
#[derive(Clone, Copy, Debug)]
pub struct TransferRecord {
    pub bytes: u64,
    /// When the application asked for it.
    pub requested: Time,
    /// When the sender started it (after the previous transfer finished).
    pub started: Option<Time>,
    /// When its connection could carry its data: `started`, or the end of TCP's handshake on a
    /// new connection of a stack that makes one (`engine::handshake`).
    pub connected: Option<Time>,
    pub first_seg: u64,
    pub end_seg: u64,
    /// When the receiver had all of it.
    pub completed: Option<Time>,
}

/// Laid out in the order written (`repr(C)`): every data packet reads the first two fields.
#[repr(C)]
pub struct App {
    pub transfers: Vec<TransferRecord>,
    /// Index of the transfer the receiver is completing.
    pub receiving: usize,
    /// Transfers requested and not yet started.
    pub queued: VecDeque<usize>,
    pub traffic: Traffic,
    next_seg: u64,
    mss: u64,
    /// On/off sources: periods begun so far (even ones are on).
    periods: u64,
    /// DASH flows: the player at the receiver.
    pub player: Option<Box<Player>>,
    /// Page-load flows: the browser at the receiver.
    pub loader: Option<Box<PageLoader>>,
    /// The application's own random stream (request and packet gaps), so that a seed gives the
    /// same arrivals whatever else in the run draws random numbers, and whichever backend
    /// runs it.
    rng: Pcg64Mcg,
}

impl App {
    /// `seed`: the application's stream ([`super::connection::application_seed`]).
    pub fn new(traffic: Traffic, mss: u64, seed: u64) -> Self {
        let player = match &traffic {
            Traffic::Dash(d) => Some(Box::new(Player::new((**d).clone()))),
            _ => None,
        };
        // Its own stream, apart from the request gaps' (a constant of ours).
        let loader = match &traffic {
            Traffic::Page(p) => Some(Box::new(PageLoader::new((**p).clone(), seed ^ PAGE_STREAM))),
            _ => None,
        };
        App {
            player,
            loader,
            rng: Pcg64Mcg::seed_from_u64(seed),
            periods: 0,
            traffic,
            transfers: Vec::new(),
            queued: VecDeque::new(),
            receiving: 0,
            next_seg: 0,
            mss,
        }
    }

    /// Registers a new transfer of `bytes` requested at `now`; returns its index.
    pub fn request(&mut self, now: Time, bytes: u64) -> usize {
        let segs = bytes.div_ceil(self.mss).max(1);
        let t = TransferRecord {
            bytes,
            requested: now,
            started: None,
            connected: None,
            first_seg: self.next_seg,
            end_seg: self.next_seg + segs,
            completed: None,
        };
        self.next_seg += segs;
        self.transfers.push(t);
        self.queued.push_back(self.transfers.len() - 1);
        self.transfers.len() - 1
    }

    /// The transfer beginning at segment `first_seg` has its connection from `now` on.
    pub fn connected(&mut self, first_seg: u64, now: Time) {
        let i = self.transfers.partition_point(|t| t.first_seg < first_seg);
        if let Some(t) = self.transfers.get_mut(i) {
            t.connected.get_or_insert(now);
        }
    }

    /// The segment index up to which the receiver must hold everything to complete the transfer
    /// it is completing (`u64::MAX`: none requested).
    pub fn receiving_end(&self) -> u64 {
        self.transfers
            .get(self.receiving)
            .map_or(u64::MAX, |t| t.end_seg)
    }

    /// Payload of the last segment of a transfer of `bytes`.
    pub fn last_payload(&self, bytes: u64) -> u64 {
        let r = bytes % self.mss;
        if r == 0 {
            self.mss
        } else {
            r
        }
    }

    /// Time until the next web request, the next unresponsive packet of `wire` bytes, or the
    /// end of the on/off period that begins now (the first call, at the start, begins an on
    /// period).
    pub fn next_gap(&mut self, wire: u64) -> Option<Duration> {
        let rng = &mut self.rng;
        match self.traffic {
            Traffic::OnOff {
                on,
                off,
                exponential,
            } => {
                let mean = if self.periods % 2 == 0 { on } else { off };
                self.periods += 1;
                Some(if exponential { exp(mean, rng) } else { mean })
            }
            Traffic::Web {
                interval, poisson, ..
            } => Some(if poisson {
                exp(interval, rng)
            } else {
                interval
            }),
            Traffic::Cbr { rate } => Some(rate.time_to_send(wire)),
            Traffic::Poisson { rate } => Some(exp(rate.time_to_send(wire), rng)),
            Traffic::Video(v) => Some(v.interval),
            _ => None,
        }
    }
}

impl App {
    /// An on/off source is in an on period (the last period begun was on).
    pub fn sending(&self) -> bool {
        self.periods % 2 == 1
    }
}

/// An exponential draw with the given mean.
/// An exponential draw around `mean`.
pub(super) fn exp(mean: Duration, rng: &mut impl Rng) -> Duration {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    mean.mul_f64(-u.ln())
}
