//! The shim with its BPF program: load and register it, write decisions, read reports.

use crate::{Decision, FlowKey, Report, ShimError};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, RingBuffer, RingBufferBuilder};
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::rc::Rc;
use std::time::Duration;

#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/polycc.skel.rs"));
}

/// The registered `polycc` controller. Dropping it unregisters the controller.
pub struct Shim {
    // Fields drop in this order: the ring buffer, then the link (which unregisters the
    // controller), then the program and maps.
    ring: RingBuffer<'static>,
    received: Rc<RefCell<Vec<Report>>>,
    _link: Link,
    skel: skel::PolyccSkel<'static>,
    /// Ring-buffer records that were not reports (never expected; counted, not trusted).
    pub malformed: u64,
}

fn kernel(what: &'static str) -> impl FnOnce(libbpf_rs::Error) -> ShimError {
    move |e| ShimError::Kernel {
        what,
        why: format!("{e:#}"),
    }
}

impl Shim {
    /// Loads the BPF program and registers the `polycc` controller (root, BTF and BPF
    /// struct_ops needed).
    pub fn register() -> Result<Shim, ShimError> {
        // The skeleton borrows its object storage for its whole life, and the shim owns the
        // skeleton: the storage (a few hundred bytes per registration) is leaked to give it
        // that life.
        let storage = Box::leak(Box::new(MaybeUninit::uninit()));
        let open = skel::PolyccSkelBuilder::default()
            .open(storage)
            .map_err(kernel("open the BPF program"))?;
        let mut skel = open.load().map_err(kernel("load the BPF program"))?;
        let link = skel
            .maps
            .polycc
            .attach_struct_ops()
            .map_err(kernel("register the polycc controller"))?;
        let received = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&received);
        let mut builder = RingBufferBuilder::new();
        builder
            .add(&skel.maps.reports, move |bytes: &[u8]| {
                match Report::from_bytes(bytes) {
                    Some(r) => sink.borrow_mut().push(r),
                    None => return 1, // stops this poll; counted by the caller
                }
                0
            })
            .map_err(kernel("open the report ring"))?;
        let ring = builder.build().map_err(kernel("open the report ring"))?;
        Ok(Shim {
            ring,
            received,
            _link: link,
            skel,
            malformed: 0,
        })
    }

    /// Sets the window and pacing rate of the socket `key` (or of every socket without its own,
    /// with [`FlowKey::ANY`]); the kernel side applies it from the socket's next ACK. A
    /// socket's own decision goes stale one second after it was written (the agent refreshes
    /// it); the default one holds until replaced.
    pub fn decide(&self, key: FlowKey, d: Decision) -> Result<(), ShimError> {
        self.skel
            .maps
            .decisions
            .update(
                &key.0.to_ne_bytes(),
                &d.to_bytes(crate::monotonic_ns()),
                MapFlags::ANY,
            )
            .map_err(kernel("write a decision"))
    }

    /// Waits up to `timeout` for reports and hands each to `on`; returns how many.
    pub fn poll(
        &mut self,
        timeout: Duration,
        mut on: impl FnMut(Report),
    ) -> Result<usize, ShimError> {
        let status = self.ring.poll(timeout);
        let reports: Vec<Report> = std::mem::take(&mut *self.received.borrow_mut());
        if status.is_err() {
            self.malformed += 1;
        }
        let n = reports.len();
        reports.into_iter().for_each(&mut on);
        Ok(n)
    }
}
