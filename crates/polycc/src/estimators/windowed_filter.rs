//! Windowed running min / max, as Kathleen Nichols' algorithm in Linux `lib/win_minmax.c`:
//! three samples kept so the best value over the window is known in O(1) per update.

use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample<V> {
    t: Time,
    v: V,
}

/// Running best (min or max, by `better`) of values over a sliding time window of length `window`
/// (in the caller's time units: nanoseconds, or round counts passed as `Time`).
#[derive(Clone, Debug)]
pub struct WindowedFilter<V: Copy + PartialOrd> {
    window: u64,
    want_max: bool,
    s: [Option<Sample<V>>; 3],
}

impl<V: Copy + PartialOrd> WindowedFilter<V> {
    /// An empty filter keeping the maximum over `window` (Linux `minmax_running_max`).
    pub fn new_max(window: u64) -> Self {
        WindowedFilter {
            window,
            want_max: true,
            s: [None; 3],
        }
    }
    /// An empty filter keeping the minimum over `window` (Linux `minmax_running_min`).
    pub fn new_min(window: u64) -> Self {
        WindowedFilter {
            window,
            want_max: false,
            s: [None; 3],
        }
    }

    fn better_or_equal(&self, a: V, b: V) -> bool {
        if self.want_max {
            a >= b
        } else {
            a <= b
        }
    }

    /// The best value in the window; `None` before the first sample or after [`Self::clear`].
    pub fn get(&self) -> Option<V> {
        self.s[0].map(|s| s.v)
    }

    /// Forgets every sample and restarts from `v` taken at `t` (Linux `minmax_reset`).
    pub fn reset(&mut self, t: Time, v: V) {
        let s = Some(Sample { t, v });
        self.s = [s, s, s];
    }

    /// Forgets every sample: [`Self::get`] is `None` until the next update.
    pub fn clear(&mut self) {
        self.s = [None; 3];
    }

    /// Changes the window length for later updates (Copa's windows follow the smoothed RTT);
    /// samples already kept stay until they age out under the new length.
    pub fn set_window(&mut self, window: u64) {
        self.window = window;
    }

    /// Adds a sample taken at `t` and returns the best value over the window.
    pub fn update(&mut self, t: Time, v: V) -> V {
        let new = Sample { t, v };
        let Some(best) = self.s[0] else {
            self.reset(t, v);
            return v;
        };
        let third = self.s[2].expect("filled together");
        if self.better_or_equal(v, best.v) || t.0.saturating_sub(third.t.0) > self.window {
            self.reset(t, v);
            return v;
        }
        if self.better_or_equal(v, self.s[1].expect("filled").v) {
            self.s[1] = Some(new);
            self.s[2] = Some(new);
        } else if self.better_or_equal(v, third.v) {
            self.s[2] = Some(new);
        }
        self.subwin_update(new)
    }

    // Expire the best sample when it ages out, promoting the next ones (win_minmax.c logic).
    fn subwin_update(&mut self, new: Sample<V>) -> V {
        let win = self.window;
        let dt = new.t.0.saturating_sub(self.s[0].unwrap().t.0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = Some(new);
            if new.t.0.saturating_sub(self.s[0].unwrap().t.0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = Some(new);
            }
        } else if self.s[1].unwrap().t == self.s[0].unwrap().t && dt > win / 4 {
            self.s[1] = Some(new);
            self.s[2] = Some(new);
        } else if self.s[2].unwrap().t == self.s[1].unwrap().t && dt > win / 2 {
            self.s[2] = Some(new);
        }
        self.s[0].unwrap().v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_forgets_old_peaks() {
        let mut f = WindowedFilter::new_max(10);
        assert_eq!(f.update(Time(0), 100u64), 100);
        assert_eq!(f.update(Time(3), 50), 100);
        assert_eq!(f.update(Time(8), 70), 100);
        // The peak at t=0 is older than the window at t=12: the best remaining is 70.
        assert_eq!(f.update(Time(12), 20), 70);
        assert_eq!(f.update(Time(30), 10), 10);
    }

    #[test]
    fn min_filter_tracks_the_minimum() {
        let mut f = WindowedFilter::new_min(100);
        f.update(Time(0), 30u64);
        f.update(Time(10), 20);
        assert_eq!(f.update(Time(20), 40), 20);
        assert_eq!(f.get(), Some(20));
    }
}
