//! A flow's route in one direction: the hops its packets cross, in order.
//!
//! A route has at least one hop (a flow's path names at least one link), and most have exactly
//! one, so the first hop is kept inside the flow's state and only the others in a vector of their
//! own: a packet on a one-link path reads its hop from a line of its flow that the packet touches
//! anyway, not from an allocation that has left the caches since the flow's last packet when there
//! are many flows.

use polycc::units::Duration;

/// One stage of a route: an optional congested link direction, random loss on entry, and the
/// delay line that follows it.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub link_dir: Option<u32>,
    pub loss: f64,
    pub pipe: u32,
    /// The link this hop crosses, and whether in its forward direction (for condition changes).
    pub link: u32,
    pub forward: bool,
    /// Delay of the hop's delay line beyond the link's own (the flow's share of its base RTT).
    pub extra_delay: Duration,
}

pub struct Route {
    first: Hop,
    rest: Vec<Hop>,
}

impl Route {
    /// The route through `hops`, in order; `None` when there are none.
    pub fn new(hops: Vec<Hop>) -> Option<Self> {
        let mut hops = hops.into_iter();
        let first = hops.next()?;
        Some(Route {
            first,
            rest: hops.collect(),
        })
    }

    /// Hop `i` (`i < len`).
    #[inline]
    pub fn hop(&self, i: usize) -> Hop {
        match i.checked_sub(1) {
            None => self.first,
            Some(k) => self.rest[k],
        }
    }

    /// The number of hops.
    #[inline]
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Hop> {
        std::iter::once(&mut self.first).chain(self.rest.iter_mut())
    }
}
