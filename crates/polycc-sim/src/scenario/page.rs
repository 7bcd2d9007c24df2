//! A validated page-load source (`traffic = { kind = "page", ... }`): the pages a browser at the
//! receiver loads and when, read by the engine's loader (`engine::page_loader`).

use polycc::units::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct PageModel {
    /// Each page's levels, in bytes: the document, then what it references, then what that
    /// references. A level is asked for once the level before has arrived in full; its objects
    /// come multiplexed on one connection (HTTP/2), so a level is one transfer.
    pub pages: Vec<Vec<u64>>,
    /// Mean time between page loads (the first at the flow's start).
    pub interval: Duration,
    /// Exponential gaps around `interval` (Proteus §6.2.2's Poisson requests); else fixed.
    pub poisson: bool,
    /// One connection for every load (`connection = "persistent"`); by default each load opens
    /// its own (a page from another site).
    pub persistent: bool,
}
