//! When a flow's application acts: the requests of a sized, web or DASH flow, the packets of a
//! CBR or Poisson source. The gaps are the simulator's own ([`App::next_gap`]), drawn from the
//! same stream of the flow's own, so a scenario and seed ask for the same requests at the same
//! times in the simulator and in every emulated run. A DASH flow's player is the simulator's
//! too: it asks for a chunk once the last is in and the next fits in its buffer.

use polycc::units::{Duration, Time};
use polycc::Intent;
use polycc_sim::engine::app::App;
use polycc_sim::engine::connection::application_seed;
use polycc_sim::output::StreamingSummary;
use polycc_sim::scenario::Traffic;

pub struct Schedule {
    app: App,
    /// Bytes on the wire of an unresponsive source's packets (what sets its gaps).
    wire: u64,
    next: Option<Time>,
    /// The flow's return delay: a DASH player sits at the receiver, and its requests cross it
    /// to reach the sender.
    back: Duration,
}

impl Schedule {
    /// Flow `index`'s schedule from its `start`: a sized flow's one request, a web flow's
    /// requests, a DASH player's first chunk, an on/off source's periods (the first, on,
    /// begins at the start), an unresponsive source's packets; nothing for bulk (always has
    /// data) and video (paced by its frames). `back`: the flow's return delay.
    pub fn new(
        traffic: &Traffic,
        start: Time,
        seed: u64,
        index: usize,
        wire: u64,
        back: Duration,
    ) -> Schedule {
        let mut app = App::new(traffic.clone(), wire, application_seed(seed, index));
        let first = match traffic {
            Traffic::Sized { .. }
            | Traffic::Web { .. }
            | Traffic::OnOff { .. }
            | Traffic::Cbr { .. }
            | Traffic::Poisson { .. } => Some(start),
            // As in the simulator: the player asks at the start, its request a return delay
            // on its way.
            Traffic::Dash(_) => app
                .player
                .as_mut()
                .and_then(|p| p.first(start))
                .map(|wait| start + wait + back),
            _ => None,
        };
        Schedule {
            app,
            wire,
            next: first,
            back,
        }
    }

    /// When the application acts next (None: never again, or, for a DASH player, not before
    /// the chunk on its way is in).
    pub fn next(&self) -> Option<Time> {
        self.next
    }

    /// The time of the next action if it is due at `now`, moving on to the one after.
    pub fn pop_due(&mut self, now: Time) -> Option<Time> {
        let t = self.next.filter(|t| *t <= now)?;
        self.next = match self.app.player {
            // The next request waits for this chunk ([`Schedule::completed`]).
            Some(_) => None,
            None => self.app.next_gap(self.wire).map(|g| t + g),
        };
        Some(t)
    }

    /// Bytes of the transfer requested at `t` (when it reached the sender), and a DASH
    /// player's intent for it: the player's chunk at the level it picked when it asked, a
    /// return delay earlier (`Player::request`); a sized or web flow's fixed size.
    pub fn transfer(&mut self, t: Time) -> (u64, Option<Intent>) {
        match self.app.player.as_mut() {
            Some(p) => {
                let (bytes, intent) = p.request(Time(t.0.saturating_sub(self.back.0)));
                (bytes, Some(intent))
            }
            None => (self.app.traffic.transfer_bytes().unwrap_or(0), None),
        }
    }

    /// The receiving application had the transfer under way in full at `at`: a DASH player
    /// takes the chunk into its buffer and asks for the next when it fits.
    pub fn completed(&mut self, at: Time) {
        if let Some(p) = self.app.player.as_mut() {
            self.next = p.on_chunk(at).map(|wait| at + wait + self.back);
        }
    }

    /// What a DASH player saw up to `end` (None for other traffic).
    pub fn streaming(&self, end: Time) -> Option<StreamingSummary> {
        self.app.player.as_ref().map(|p| p.stats(end).into())
    }
}

/// Whether an on/off source sends, from the periods begun so far (the first is on).
pub fn on_period(periods_begun: u64) -> bool {
    periods_begun % 2 == 1
}

/// Traffic sent as transfers the receiving application asks for, each in full before the next
/// (sized, web, DASH); bulk, on/off and video send without asking.
pub fn asks_for_transfers(traffic: &Traffic) -> bool {
    matches!(
        traffic,
        Traffic::Sized { .. } | Traffic::Web { .. } | Traffic::Dash(_)
    )
}

/// A web flow that opens a connection per transfer (not one persistent connection).
pub fn connection_per_transfer(traffic: &Traffic) -> bool {
    matches!(
        traffic,
        Traffic::Web {
            persistent: false,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::{Duration, Rate};

    #[test]
    fn web_requests_follow_the_interval_and_sized_asks_once() {
        let start = Time::ZERO + Duration::from_millis(500);
        let web = Traffic::Web {
            bytes: 100_000,
            interval: Duration::from_millis(200),
            poisson: false,
            persistent: true,
        };
        let mut s = Schedule::new(&web, start, 1, 0, 1500, Duration::ZERO);
        assert_eq!(s.pop_due(Time::ZERO), None, "nothing before the start");
        let times: Vec<_> = std::iter::from_fn(|| s.pop_due(Time::ZERO + Duration::from_secs(1)))
            .map(|t| (t - Time::ZERO).0 / 1_000_000)
            .collect();
        assert_eq!(times, vec![500, 700, 900]);
        let mut sized = Schedule::new(
            &Traffic::Sized { bytes: 1 },
            start,
            1,
            0,
            1500,
            Duration::ZERO,
        );
        assert_eq!(sized.pop_due(start), Some(start));
        assert_eq!(sized.next(), None);
        assert_eq!(
            Schedule::new(&Traffic::Bulk, start, 1, 0, 1500, Duration::ZERO).next(),
            None
        );
    }

    #[test]
    fn a_dash_player_asks_for_its_next_chunk_only_once_the_last_is_in() {
        let ms = |n: u64| Time::ZERO + Duration::from_millis(n);
        let back = Duration::from_millis(20);
        let dash = polycc_sim::scenario::dash::DashModel {
            bitrates: vec![Rate::from_mbps(1), Rate::from_mbps(4)],
            chunk: Duration::from_secs(2),
            buffer: Duration::from_secs(4),
            startup: Duration::from_secs(2),
            abr: polycc_sim::scenario::dash::Abr::Highest,
            chunks: None,
        };
        let mut s = Schedule::new(&Traffic::Dash(Box::new(dash)), ms(100), 1, 0, 1500, back);
        // The first request leaves the player at the start and reaches the sender a return
        // delay later; it asks for a 2-s chunk at 4 Mbit/s, and for that bitrate.
        assert_eq!(s.pop_due(ms(119)), None);
        assert_eq!(s.pop_due(ms(120)), Some(ms(120)));
        let (bytes, intent) = s.transfer(ms(120));
        assert_eq!(bytes, 1_000_000);
        assert_eq!(
            intent,
            Some(Intent::BandwidthGuarantee {
                target_rate: Rate::from_mbps(4),
                min_rate: Rate::from_mbps(1)
            })
        );
        // Nothing more until the chunk is in.
        assert_eq!(s.next(), None);
        // In at 1.1 s: 2 s buffered of 4, playing; the next fits at once.
        s.completed(ms(1_100));
        assert_eq!(s.next(), Some(ms(1_120)));
        s.pop_due(ms(1_120));
        s.transfer(ms(1_120));
        // In at 1.6 s: 3.5 s buffered, the next fits once 1.5 s more has played.
        s.completed(ms(1_600));
        assert_eq!(s.next(), Some(ms(3_120)));
        let st = s.streaming(ms(2_000)).expect("a player");
        assert_eq!((st.chunks, st.rebuffers), (2, 0));
        assert_eq!(
            Schedule::new(&Traffic::Bulk, ms(0), 1, 0, 1500, back).streaming(ms(1)),
            None
        );
    }

    #[test]
    fn poisson_arrivals_average_the_rate_and_repeat_with_the_seed() {
        let traffic = Traffic::Poisson {
            rate: Rate::from_bps(12_000_000),
        };
        let count = |seed| {
            let mut s = Schedule::new(&traffic, Time::ZERO, seed, 3, 1500, Duration::ZERO);
            let end = Time::ZERO + Duration::from_secs(10);
            std::iter::from_fn(|| s.pop_due(end)).count()
        };
        // 12 Mbit/s of 1500-byte packets: 1000 a second; 10 s gives 10 000 ± 3·100.
        let n = count(7);
        assert!((9_700..=10_300).contains(&n), "{n} packets");
        assert_eq!(n, count(7));
        assert_ne!(n, count(8));
    }
}
