//! When a flow's application acts: the requests of a sized or web flow, the packets of a CBR
//! or Poisson source. The gaps are the simulator's own ([`App::next_gap`]), drawn from the same
//! stream of the flow's own, so a scenario and seed ask for the same requests at the same times
//! in the simulator and in every emulated run.

use polycc::units::Time;
use polycc_sim::engine::app::App;
use polycc_sim::engine::connection::application_seed;
use polycc_sim::scenario::Traffic;

pub struct Schedule {
    app: App,
    /// Bytes on the wire of an unresponsive source's packets (what sets its gaps).
    wire: u64,
    next: Option<Time>,
}

impl Schedule {
    /// Flow `index`'s schedule from its `start`: a sized flow's one request, a web flow's
    /// requests, an on/off source's periods (the first, on, begins at the start), an
    /// unresponsive source's packets; nothing for bulk (always has data) and video (paced by its
    /// frames, not emulated).
    pub fn new(traffic: &Traffic, start: Time, seed: u64, index: usize, wire: u64) -> Schedule {
        let first = matches!(
            traffic,
            Traffic::Sized { .. }
                | Traffic::Web { .. }
                | Traffic::OnOff { .. }
                | Traffic::Cbr { .. }
                | Traffic::Poisson { .. }
        )
        .then_some(start);
        Schedule {
            app: App::new(traffic.clone(), wire, application_seed(seed, index)),
            wire,
            next: first,
        }
    }

    /// When the application acts next (None: never again).
    pub fn next(&self) -> Option<Time> {
        self.next
    }

    /// The time of the next action if it is due at `now`, moving on to the one after.
    pub fn pop_due(&mut self, now: Time) -> Option<Time> {
        let t = self.next.filter(|t| *t <= now)?;
        self.next = self.app.next_gap(self.wire).map(|g| t + g);
        Some(t)
    }
}

/// Whether an on/off source sends, from the periods begun so far (the first is on).
pub fn on_period(periods_begun: u64) -> bool {
    periods_begun % 2 == 1
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
        let mut s = Schedule::new(&web, start, 1, 0, 1500);
        assert_eq!(s.pop_due(Time::ZERO), None, "nothing before the start");
        let times: Vec<_> = std::iter::from_fn(|| s.pop_due(Time::ZERO + Duration::from_secs(1)))
            .map(|t| (t - Time::ZERO).0 / 1_000_000)
            .collect();
        assert_eq!(times, vec![500, 700, 900]);
        let mut sized = Schedule::new(&Traffic::Sized { bytes: 1 }, start, 1, 0, 1500);
        assert_eq!(sized.pop_due(start), Some(start));
        assert_eq!(sized.next(), None);
        assert_eq!(
            Schedule::new(&Traffic::Bulk, start, 1, 0, 1500).next(),
            None
        );
    }

    #[test]
    fn poisson_arrivals_average_the_rate_and_repeat_with_the_seed() {
        let traffic = Traffic::Poisson {
            rate: Rate::from_bps(12_000_000),
        };
        let count = |seed| {
            let mut s = Schedule::new(&traffic, Time::ZERO, seed, 3, 1500);
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
