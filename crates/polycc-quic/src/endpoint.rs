//! The congestion-controller provider for an s2n-quic endpoint: builds a polycc controller from
//! a [`CcSpec`] for every path, and collects the handles the application reads.
//!
//! ```no_run
//! use polycc_quic::{Polycc, s2n_quic};
//! # fn tls() -> s2n_quic::provider::tls::rustls::Server { unimplemented!() }
//! let cc = Polycc::parse("cubic").expect("cubic is registered");
//! let handles = cc.handles();
//! let server = s2n_quic::Server::builder()
//!     .with_tls(tls()).unwrap()
//!     .with_io("127.0.0.1:4433").unwrap()
//!     .with_congestion_controller(cc).unwrap()
//!     .start().unwrap();
//! // Later, for the newest connection's controller:
//! if let Some(h) = handles.latest() {
//!     println!("{} cwnd {}", h.name(), h.stats().cwnd);
//! }
//! ```

use crate::adapter::Core;
use crate::controller::PolyccController;
use crate::handle::ControllerHandle;
use polycc::algos::newreno::NewReno;
use polycc::{Bytes, CcContext, CcError, CcSpec, CongestionControl, Intent, Registry};
use s2n_quic::provider::congestion_controller::{Endpoint, PathInfo};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// RFC 9000 §14.1: the smallest datagram a QUIC path carries, and the size s2n-quic starts
/// every path at (its initial MTU) before path MTU discovery. A spec is checked by building it
/// once for this size.
pub const INITIAL_DATAGRAM: u16 = 1200;

/// RFC 9002 Appendix B.2 kLossReductionFactor, for the fallback controller.
const NEWRENO_BETA: f64 = 0.5;

/// Why a controller spec cannot drive a QUIC connection.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SpecError {
    /// The text is neither a registered name nor a JSON spec (`{"name": "cubic", "beta": 0.7}`).
    #[error("bad controller spec {text:?}: {message}")]
    Syntax {
        /// The text given.
        text: String,
        /// What the JSON parser said.
        message: String,
    },
    /// The registry rejected the spec: an unknown name or bad parameters.
    #[error("the registry rejects the controller: {0}")]
    Rejected(#[from] CcError),
    /// The controller needs a media source's frames, which a byte stream has not (PIBES, or a
    /// policy that runs it); the trait asks a transport without frames to refuse it.
    #[error("{name:?} needs the frames of a real-time media source; byte streams have none (the polycc-quic client's --video mode has them)")]
    NeedsMediaFrames {
        /// The controller's name.
        name: String,
    },
}

/// The handles of the controllers an endpoint built, one per path, in creation order.
#[derive(Clone, Debug, Default)]
pub struct Handles {
    list: Arc<Mutex<Vec<ControllerHandle>>>,
}

impl Handles {
    /// Every handle so far.
    pub fn all(&self) -> Vec<ControllerHandle> {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The newest handle (the last path created), if any.
    pub fn latest(&self) -> Option<ControllerHandle> {
        self.list
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last()
            .cloned()
    }

    /// The newest handle for a path to `peer`.
    pub fn for_peer(&self, peer: SocketAddr) -> Option<ControllerHandle> {
        self.all()
            .into_iter()
            .rev()
            .find(|h| h.peer() == Some(peer))
    }

    /// Takes out the handles of the paths to `peer` (a connection that has ended) and returns
    /// the newest. An endpoint that runs for long calls this as each connection ends: the
    /// list then holds the connections still open, not every one it ever served.
    pub fn remove_peer(&self, peer: SocketAddr) -> Option<ControllerHandle> {
        // One address however a dual-stack socket reports it (IPv4-mapped IPv6 or IPv4).
        let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
        let to_peer = |h: &ControllerHandle| h.peer().map(canonical) == Some(canonical(peer));
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        let newest = list.iter().rev().find(|h| to_peer(h)).cloned();
        list.retain(|h| !to_peer(h));
        newest
    }

    /// Handles held.
    pub fn len(&self) -> usize {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&self, h: ControllerHandle) {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).push(h);
    }
}

/// Builds the controller of the `n`th path a provider makes (from 0), for datagrams of `mss`
/// bytes: for a caller that builds its controllers itself (the emulated testbed builds them as
/// the simulator does, seeded per connection). `None` when it has none ready; RFC 9002's
/// NewReno then stands in (s2n-quic takes no error here), as for a path the caller did not
/// open (s2n builds one more for the first path's clone, see `PolyccController::clone`).
pub type ControllerFactory =
    Arc<dyn Fn(u64, Bytes) -> Option<Box<dyn CongestionControl>> + Send + Sync>;

/// The provider: one polycc controller per path, built from one spec by a registry
/// ([`Registry::standard`] unless given), or by the caller's [`ControllerFactory`]. Pass it to
/// `s2n_quic::{Server, Client}::builder().with_congestion_controller(..)`.
#[derive(Clone)]
pub struct Polycc {
    spec: CcSpec,
    registry: Arc<Registry>,
    factory: Option<ControllerFactory>,
    intent: Option<Intent>,
    seed: u64,
    built: u64,
    handles: Handles,
}

impl std::fmt::Debug for Polycc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Polycc")
            .field("spec", &self.spec)
            .field("intent", &self.intent)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Polycc {
    /// A provider for `spec` from the standard registry, checked now.
    pub fn new(spec: CcSpec) -> Result<Self, SpecError> {
        Polycc::with_registry(spec, Arc::new(Registry::standard()))
    }

    /// A provider for `text`: a registered name (`cubic`) or a JSON spec
    /// (`{"name": "cubic", "beta": 0.7}`).
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        Polycc::new(parse_spec(text)?)
    }

    /// A provider for `text` (as [`Polycc::parse`]) whose connections carry a media source's
    /// frames ([`ControllerHandle::post_frame`]): a frame scheduler (PIBES) is accepted too.
    pub fn parse_for_media(text: &str) -> Result<Self, SpecError> {
        Polycc::checked(parse_spec(text)?, Arc::new(Registry::standard()), true)
    }

    /// A provider for `spec` from `registry`, checked now by building it once.
    pub fn with_registry(spec: CcSpec, registry: Arc<Registry>) -> Result<Self, SpecError> {
        Polycc::checked(spec, registry, false)
    }

    fn checked(spec: CcSpec, registry: Arc<Registry>, frames: bool) -> Result<Self, SpecError> {
        let probe = registry.build(&spec, &CcContext::new(u64::from(INITIAL_DATAGRAM)))?;
        if probe.needs_media_frames() && !frames {
            return Err(SpecError::NeedsMediaFrames {
                name: spec.name().to_string(),
            });
        }
        Ok(Polycc {
            spec,
            registry,
            factory: None,
            intent: None,
            seed: 0,
            built: 0,
            handles: Handles::default(),
        })
    }

    /// A provider whose controllers `factory` builds; `name` is what they are called (the
    /// spec's name, for reports). The caller checks its controllers: a factory's controller
    /// is not built here first.
    pub fn from_factory(name: &str, factory: ControllerFactory) -> Self {
        Polycc {
            spec: CcSpec::named(name),
            registry: Arc::new(Registry::default()),
            factory: Some(factory),
            intent: None,
            seed: 0,
            built: 0,
            handles: Handles::default(),
        }
    }

    /// Every controller gets `intent` before its first packet.
    pub fn with_intent(mut self, intent: Intent) -> Self {
        self.intent = Some(intent);
        self
    }

    /// Seeds controllers that randomise; the n-th path built gets `seed + n`, so runs repeat
    /// and connections still differ.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The spec it builds.
    pub fn spec(&self) -> &CcSpec {
        &self.spec
    }

    /// The handles of the controllers it builds (shared: read them after the provider has been
    /// moved into the endpoint).
    pub fn handles(&self) -> Handles {
        self.handles.clone()
    }

    /// The adapter state for one path of `mss`-byte datagrams.
    pub fn build_core(&mut self, mss: u16) -> Core {
        let mss = u64::from(mss);
        let ctx = CcContext {
            seed: self.seed.wrapping_add(self.built),
            ..CcContext::new(mss)
        };
        let n = self.built;
        self.built += 1;
        // The spec built at construction; another datagram size cannot make a registered
        // controller fail, but s2n-quic takes no error here, so RFC 9002's own controller stands
        // in rather than a panic.
        let built = match &self.factory {
            Some(factory) => factory(n, mss),
            None => self.registry.build(&self.spec, &ctx).ok(),
        };
        let mut cc = built.unwrap_or_else(|| Box::new(NewReno::new(&ctx, NEWRENO_BETA)));
        if let Some(intent) = &self.intent {
            cc.set_intent(ctx.now, intent);
        }
        Core::new(cc, mss)
    }
}

/// A spec from the command line or a config: JSON when it starts with `{` or `"`, else a name.
pub fn parse_spec(text: &str) -> Result<CcSpec, SpecError> {
    let t = text.trim();
    if t.starts_with('{') || t.starts_with('"') {
        serde_json::from_str(t).map_err(|e| SpecError::Syntax {
            text: text.to_string(),
            message: e.to_string(),
        })
    } else {
        Ok(CcSpec::named(t))
    }
}

impl Endpoint for Polycc {
    type CongestionController = PolyccController;

    fn new_congestion_controller(&mut self, path_info: PathInfo) -> PolyccController {
        let mss = path_info.max_datagram_size;
        let mut core = self.build_core(mss);
        let peer = SocketAddr::from(&path_info.remote_address);
        self.handles.push(core.handle(Some(peer)));
        let proto = self.clone();
        let rebuild = move || proto.clone().build_core(mss);
        PolyccController::new(core, Arc::new(rebuild))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_running_endpoint_holds_the_handles_of_its_open_connections_only() {
        // A server that took each connection's handle out as it ended holds only those open,
        // however many it served: 10 000 connections of two paths each (s2n builds one more
        // controller for a path's clone), two or three open at a time.
        let handles = Handles::default();
        let peer = |i: u32| SocketAddr::from(([127, 0, 0, 1], 1024 + (i % 60_000) as u16));
        let open = |i: u32| {
            for _ in 0..2 {
                handles.push(ControllerHandle::new(
                    Arc::default(),
                    "cubic",
                    Some(peer(i)),
                    false,
                ));
            }
        };
        open(0);
        open(1);
        for i in 2..10_000 {
            open(i);
            assert!(
                handles.remove_peer(peer(i - 2)).is_some(),
                "connection {}",
                i - 2
            );
            assert_eq!(handles.len(), 4, "after connection {i}");
        }
        assert!(handles.remove_peer(peer(0)).is_none(), "taken out already");
        assert!(handles.remove_peer(peer(9_998)).is_some());
        assert!(handles.remove_peer(peer(9_999)).is_some());
        assert!(handles.is_empty());
    }

    #[test]
    fn every_registered_controller_but_the_frame_scheduler_is_accepted() {
        let registry = Registry::standard();
        let mut refused = Vec::new();
        for name in registry.names() {
            match Polycc::parse(name) {
                Ok(mut p) => {
                    let core = p.build_core(INITIAL_DATAGRAM);
                    assert_eq!(core.name(), name, "built as asked, no fallback");
                }
                Err(SpecError::NeedsMediaFrames { name }) => refused.push(name),
                Err(e) => panic!("{name}: {e}"),
            }
        }
        assert_eq!(refused, ["pibes"]);
        // A media connection takes it.
        let mut p = Polycc::parse_for_media("pibes").expect("pibes with frames");
        assert_eq!(p.build_core(INITIAL_DATAGRAM).name(), "pibes");
        assert!(matches!(
            Polycc::parse_for_media("no-such-cca"),
            Err(SpecError::Rejected(_))
        ));
        assert!(registry.names().len() > 20, "policies included");
    }

    #[test]
    fn rejected_specs_are_typed_errors() {
        assert!(matches!(
            Polycc::parse("no-such-cca"),
            Err(SpecError::Rejected(CcError::UnknownName { .. }))
        ));
        match Polycc::parse(r#"{"name": "cubic", "beta": 7}"#) {
            Err(SpecError::Rejected(CcError::BadParams { name, message })) => {
                assert_eq!(name, "cubic");
                assert!(message.contains("beta"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            Polycc::parse(r#"{"name": "cubic""#),
            Err(SpecError::Syntax { .. })
        ));
        let ok = Polycc::parse(r#"{"name": "cubic", "beta": 0.8}"#).expect("valid");
        assert_eq!(ok.spec().params()["beta"], 0.8);
    }

    #[test]
    fn each_path_gets_its_own_seed_and_the_intent() {
        let mut p = Polycc::parse("janus")
            .expect("janus")
            .with_seed(10)
            .with_intent(Intent::BandwidthGuarantee {
                target_rate: polycc::Rate::from_mbps(5),
                min_rate: polycc::Rate::ZERO,
            });
        let mut a = p.build_core(1200);
        let t = a.telemetry();
        assert_eq!(t.get("target_rate_mbps"), Some(5.0), "{:?}", t.entries());
        assert_eq!(p.built, 1);
        let _ = p.build_core(1200);
        assert_eq!(p.built, 2);
    }

    #[test]
    fn a_factory_builds_each_path_and_newreno_stands_in_when_it_has_none() {
        let factory: ControllerFactory = Arc::new(|n, mss| {
            (n == 0).then(|| {
                let ctx = CcContext::new(mss);
                Registry::standard()
                    .build(&CcSpec::named("bbr"), &ctx)
                    .expect("bbr")
            })
        });
        let mut p = Polycc::from_factory("bbr", factory);
        assert_eq!(p.spec().name(), "bbr");
        assert_eq!(p.build_core(1200).name(), "bbr");
        assert_eq!(p.build_core(1200).name(), "newreno");
    }
}
