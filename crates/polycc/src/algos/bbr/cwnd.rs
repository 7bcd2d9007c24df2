//! The congestion window's mechanics both versions share: its size at start, its growth toward
//! the in-flight target (Linux `bbr_set_cwnd`) and its bounds. Each version chooses the target
//! and its own caps.

use crate::cc::{CcContext, MIN_WINDOW_PACKETS};
use crate::units::Bytes;

/// Linux `bbr_cwnd_min_target`: at least 4 packets in flight, so that ACK-every-other-packet
/// receivers still see two outstanding pairs.
pub const CWND_MIN_TARGET_PACKETS: u64 = 4;

/// The MSS and the initial window (at least RFC 9002's minimum window).
pub fn initial(ctx: &CcContext) -> (Bytes, Bytes) {
    let mss = ctx.mss.max(1);
    (mss, ctx.initial_cwnd.max(MIN_WINDOW_PACKETS * mss))
}

/// `bbr_cwnd_min_target` in bytes.
pub fn min_target(mss: Bytes) -> Bytes {
    CWND_MIN_TARGET_PACKETS * mss
}

/// Linux `bbr_set_cwnd` outside recovery: once the pipe is full the window grows by what was
/// acked up to `target`; before, while below `target` or while `early` (still in the initial
/// window's growth); never below `min_target`.
pub fn grow(
    cwnd: Bytes,
    acked: Bytes,
    target: Bytes,
    full_bw_reached: bool,
    early: bool,
    min_target: Bytes,
) -> Bytes {
    let mut cwnd = cwnd;
    if full_bw_reached {
        cwnd = cwnd.saturating_add(acked).min(target);
    } else if cwnd < target || early {
        cwnd = cwnd.saturating_add(acked);
    }
    cwnd.max(min_target)
}

/// The window's bounds: the clamp (Linux `snd_cwnd_clamp`), then `cap` (the version's caps: the
/// PROBE_RTT window, v3's inflight bounds; `Bytes::MAX` for none), then RFC 9002's minimum
/// window, which wins over both. (`cap` is a closure so that it is computed after the clamp is
/// applied, as Linux orders them; the result would be the same either way.)
pub fn bound(cwnd: Bytes, clamp: Option<Bytes>, cap: impl FnOnce() -> Bytes, mss: Bytes) -> Bytes {
    let mut cwnd = cwnd;
    if let Some(c) = clamp {
        cwnd = cwnd.min(c);
    }
    cwnd.min(cap()).max(MIN_WINDOW_PACKETS * mss)
}
