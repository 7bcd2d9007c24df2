//! The run's clock: nanoseconds since the run started, in the simulator's `Time` so that the
//! shared link models (queues, service processes, delay lines) run unchanged on wall time.

use polycc::units::{Duration, Time};
use std::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: Instant,
}

impl Clock {
    pub fn start() -> Self {
        Clock {
            origin: Instant::now(),
        }
    }

    pub fn now(&self) -> Time {
        Time(self.origin.elapsed().as_nanos() as u64)
    }

    /// Sleeps until `t` (returns at once when it has passed).
    pub fn sleep_until(&self, t: Time) {
        let now = self.now();
        if t > now {
            std::thread::sleep(std::time::Duration::from_nanos((t - now).0));
        }
    }

    /// The wall-clock instant of `t`.
    pub fn instant(&self, t: Time) -> Instant {
        self.origin + std::time::Duration::from_nanos(t.0)
    }

    pub fn elapsed_since(&self, t: Time) -> Duration {
        self.now() - t
    }
}
