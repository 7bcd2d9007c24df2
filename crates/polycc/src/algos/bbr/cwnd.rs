//! The congestion window's mechanics both versions share: its size at start, its growth toward
//! the in-flight target (Linux `bbr_set_cwnd`) and the bounds around a version's own caps (the
//! clamp first, the minimum window last). Each version chooses the target and its caps.

use crate::cc::{CcContext, MIN_WINDOW_PACKETS};
use crate::units::Bytes;

/// Linux `bbr_cwnd_min_target`: at least 4 packets in flight, so that ACK-every-other-packet
/// receivers still see two outstanding pairs.
pub const CWND_MIN_TARGET_PACKETS: u64 = 4;

/// The MSS and the initial window (at least RFC 9002's minimum window).
pub(crate) fn initial(ctx: &CcContext) -> (Bytes, Bytes) {
    let mss = ctx.mss.max(1);
    (mss, ctx.initial_cwnd.max(MIN_WINDOW_PACKETS * mss))
}

/// `bbr_cwnd_min_target` in bytes.
pub(crate) fn min_target(mss: Bytes) -> Bytes {
    CWND_MIN_TARGET_PACKETS * mss
}

/// Linux `bbr_set_cwnd` outside recovery: once the pipe is full the window grows by what was
/// acked up to `target`; before, while below `target` or while `early` (still in the initial
/// window's growth); never below `min_target`.
pub(crate) fn grow(
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

/// Linux `snd_cwnd_clamp`: a clamp set by a calibration bounds the window before any cap.
pub(crate) fn clamp(cwnd: Bytes, clamp: Option<Bytes>) -> Bytes {
    match clamp {
        Some(c) => cwnd.min(c),
        None => cwnd,
    }
}

/// RFC 9002's minimum window: the last bound, which wins over the clamp and every cap.
pub(crate) fn at_least_minimum(cwnd: Bytes, mss: Bytes) -> Bytes {
    cwnd.max(MIN_WINDOW_PACKETS * mss)
}
