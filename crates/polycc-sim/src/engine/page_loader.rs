//! The browser at a `page` flow's receiver: when each page load begins, which page it loads,
//! and when each of its levels is asked for. Loads come one at a time; one that arrives while
//! another is in progress waits for it. A level is asked for once the level before has arrived
//! in full, and the request reaches the server a one-way delay later.

use crate::engine::app::exp;
use crate::output::{PageSummary, Percentiles};
use crate::scenario::page::PageModel;
use polycc::units::{Duration, Time};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// One page load, for the summary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageLoad {
    pub page: usize,
    /// When the load was due (its arrival).
    pub arrived: Time,
    /// When the browser began it: `arrived`, or the end of the load before it.
    pub began: Time,
    /// When the first level (the document) had arrived in full: the page response time's end.
    pub document: Option<Time>,
    /// When the last level had arrived in full: the page load time's end.
    pub loaded: Option<Time>,
}

/// The load in progress.
#[derive(Clone, Copy, Debug)]
struct Active {
    /// Index into `loads`.
    load: usize,
    level: usize,
    /// When the current level's request reaches the server, until it is handed to the sender.
    request_at: Option<Time>,
}

#[derive(Clone, Debug)]
pub struct PageLoader {
    model: PageModel,
    rng: Pcg64Mcg,
    next_arrival: Time,
    waiting: VecDeque<Time>,
    active: Option<Active>,
    pub loads: Vec<PageLoad>,
}

/// Times the engine must wake the loader at (each once).
pub type Wakes = [Option<Time>; 2];

impl PageLoader {
    /// `seed`: the loader's own stream (page choice and arrival gaps).
    pub fn new(model: PageModel, seed: u64) -> PageLoader {
        PageLoader {
            model,
            rng: Pcg64Mcg::seed_from_u64(seed),
            next_arrival: Time::ZERO,
            waiting: VecDeque::new(),
            active: None,
            loads: Vec::new(),
        }
    }

    /// The flow starts at `now`: the first load arrives then.
    pub fn first(&mut self, now: Time) -> Time {
        self.next_arrival = now;
        now
    }

    fn gap(&mut self) -> Duration {
        if self.model.poisson {
            exp(self.model.interval, &mut self.rng)
        } else {
            self.model.interval
        }
    }

    /// Begins the oldest waiting load at `now` if none is in progress: returns when its first
    /// request reaches the server.
    fn begin(&mut self, now: Time, owd: Duration) -> Option<Time> {
        if self.active.is_some() {
            return None;
        }
        let arrived = self.waiting.pop_front()?;
        let page = self.rng.gen_range(0..self.model.pages.len());
        self.loads.push(PageLoad {
            page,
            arrived,
            began: now,
            document: None,
            loaded: None,
        });
        let at = now + owd;
        self.active = Some(Active {
            load: self.loads.len() - 1,
            level: 0,
            request_at: Some(at),
        });
        Some(at)
    }

    /// Handles what is due at `now` (a load's arrival, a request reaching the server): returns
    /// the bytes the sender must now send (the requested level), if any, and when to wake the
    /// loader next.
    pub fn poll(&mut self, now: Time, owd: Duration) -> (Option<u64>, Wakes) {
        let mut wakes = [None; 2];
        if self.next_arrival <= now {
            self.waiting.push_back(self.next_arrival);
            self.next_arrival = now + self.gap();
            wakes[0] = Some(self.next_arrival);
        }
        wakes[1] = self.begin(now, owd);
        let mut bytes = None;
        if let Some(a) = self.active.as_mut() {
            if a.request_at.is_some_and(|t| t <= now) {
                a.request_at = None;
                let page = self.loads[a.load].page;
                bytes = Some(self.model.pages[page][a.level]);
            }
        }
        (bytes, wakes)
    }

    /// Whether the level just asked for opens a connection of its own: the first of a load,
    /// unless the browser keeps one connection for every load.
    pub fn opens_connection(&self) -> bool {
        !self.model.persistent && self.active.is_some_and(|a| a.level == 0)
    }

    /// The level on its way arrived in full at `now`: returns when the loader must wake next
    /// (the next level's request reaching the server, or the next waiting load's).
    pub fn on_level(&mut self, now: Time, owd: Duration) -> Option<Time> {
        let a = self.active.as_mut()?;
        let load = &mut self.loads[a.load];
        if a.level == 0 {
            load.document = Some(now);
        }
        a.level += 1;
        if a.level < self.model.pages[load.page].len() {
            let at = now + owd;
            a.request_at = Some(at);
            return Some(at);
        }
        load.loaded = Some(now);
        self.active = None;
        self.begin(now, owd)
    }
}

impl PageLoader {
    /// The completed loads' figures, for the run's summary.
    pub fn summary(&self) -> PageSummary {
        let done: Vec<&PageLoad> = self.loads.iter().filter(|p| p.loaded.is_some()).collect();
        let since = |t: Option<Time>, p: &PageLoad| t.map_or(0.0, |t| (t - p.began).as_secs_f64());
        let plt: Vec<f64> = done.iter().map(|p| since(p.loaded, p)).collect();
        let prt: Vec<f64> = done.iter().map(|p| since(p.document, p)).collect();
        PageSummary {
            page_loads: done.len() as u64,
            page_loads_delayed: done.iter().filter(|p| p.began > p.arrived).count() as u64,
            page_load_s: Percentiles::of_samples(&plt),
            page_response_s: Percentiles::of_samples(&prt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loader(pages: Vec<Vec<u64>>, persistent: bool) -> PageLoader {
        PageLoader::new(
            PageModel {
                pages,
                interval: Duration::from_secs(1),
                poisson: false,
                persistent,
            },
            7,
        )
    }

    fn t(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn levels_are_asked_for_one_after_another_a_one_way_delay_after_the_last() {
        let owd = Duration::from_millis(20);
        let mut l = loader(vec![vec![10_000, 300_000]], false);
        assert_eq!(l.first(t(0)), t(0));
        // The load arrives; its document's request reaches the server 20 ms later.
        assert_eq!(l.poll(t(0), owd), (None, [Some(t(1000)), Some(t(20))]));
        assert!(l.opens_connection());
        assert_eq!(l.poll(t(20), owd), (Some(10_000), [None, None]));
        // The document arrives at 100 ms: the objects' request reaches the server at 120.
        assert_eq!(l.on_level(t(100), owd), Some(t(120)));
        assert!(!l.opens_connection());
        assert_eq!(l.poll(t(120), owd), (Some(300_000), [None, None]));
        assert_eq!(l.on_level(t(400), owd), None);
        let load = l.loads[0];
        assert_eq!(
            (load.began, load.document, load.loaded),
            (t(0), Some(t(100)), Some(t(400)))
        );
    }

    #[test]
    fn a_load_that_arrives_during_another_waits_for_it() {
        let owd = Duration::from_millis(20);
        let mut l = loader(vec![vec![10_000]], true);
        l.first(t(0));
        l.poll(t(0), owd);
        assert_eq!(l.poll(t(20), owd).0, Some(10_000));
        // The second load arrives at 1 s while the first is still loading.
        assert_eq!(l.poll(t(1000), owd), (None, [Some(t(2000)), None]));
        // The first ends at 1.5 s; the second begins then.
        assert_eq!(l.on_level(t(1500), owd), Some(t(1520)));
        assert!(!l.opens_connection(), "one connection for every load");
        assert_eq!(l.poll(t(1520), owd).0, Some(10_000));
        assert_eq!((l.loads[1].arrived, l.loads[1].began), (t(1000), t(1500)));
    }
}
