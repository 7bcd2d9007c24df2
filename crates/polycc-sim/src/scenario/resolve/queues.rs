//! One direction of a link: its capacity and queue, the queue's size converted to bytes or
//! packets (a size in bdp from the rate and the largest RTT of the flows crossing it).

use crate::scenario::quantity::Size;
use crate::scenario::spec::{Capacity, QueueKind, QueueSpec};
use crate::scenario::{bytes_of, LinkDirModel, Origin, ScenarioError};
use polycc::units::{Duration, Rate};

/// The direction with `capacity` and queue `q` (errors name `at`, the queue's key); `rate` is
/// the capacity a bdp refers to. Loss, jitter and ACK aggregation are the link's to fill in.
pub(super) fn dir_model(
    origin: &Origin,
    at: &str,
    capacity: Capacity,
    q: &QueueSpec,
    rate: Rate,
    max_rtt: Duration,
    full_packet: u64,
) -> Result<LinkDirModel, ScenarioError> {
    let bdp_rtt = q.bdp_rtt.as_ref().map(|d| d.value).unwrap_or(max_rtt);
    let bdp = rate.bytes_in(bdp_rtt);
    if matches!(q.size.value, Size::Bdp(_)) && bdp_rtt.is_zero() {
        return Err(origin.err(
            format!("{at}.size"),
            "a size in bdp needs an RTT: no flow crosses this link, so set bdp_rtt or give the size in pkt or bytes",
        ));
    }
    let (limit_bytes, limit_packets) = match q.size.value {
        Size::Packets(n) => (None, Some(n)),
        ref s => (Some(bytes_of(s, full_packet, bdp)), None),
    };
    // At least one full packet either way: a smaller byte limit would drop every data packet.
    if limit_packets == Some(0) || limit_bytes.is_some_and(|b| b < full_packet) {
        let given = match limit_bytes {
            Some(b) if q.size.text != format!("{b}B") => format!("{} ({b} bytes)", q.size),
            Some(_) => q.size.to_string(),
            None => q.size.to_string(),
        };
        return Err(origin.err(
            format!("{at}.size"),
            format!(
                "{given} holds less than one full packet; allowed: at least \"1pkt\" or \"{full_packet}B\" (mss + header_bytes)"
            ),
        ));
    }
    if q.kind == QueueKind::FqCodel && q.quantum == 0 {
        return Err(origin.err(format!("{at}.quantum"), "must be positive"));
    }
    let policer = policer_of(origin, at, q, full_packet, bdp)?;
    if matches!(q.kind, QueueKind::Codel | QueueKind::FqCodel)
        && (q.target.value.is_zero() || q.interval.value.is_zero())
    {
        return Err(origin.err(
            format!("{at}.target"),
            "CoDel target and interval must be positive",
        ));
    }
    Ok(LinkDirModel {
        capacity,
        queue: q.clone(),
        queue_limit_bytes: limit_bytes,
        queue_limit_packets: limit_packets,
        loss: 0.0,
        jitter: None,
        ack_aggregation: None,
        policer,
    })
}

/// A policer's token rate and bucket depth in bytes; `rate` and `burst` belong to a policer only.
fn policer_of(
    origin: &Origin,
    at: &str,
    q: &QueueSpec,
    full_packet: u64,
    bdp: u64,
) -> Result<Option<(Rate, u64)>, ScenarioError> {
    if q.kind != QueueKind::Policer {
        for (key, given) in [("rate", q.rate.is_some()), ("burst", q.burst.is_some())] {
            if given {
                return Err(origin.err(
                    format!("{at}.{key}"),
                    "belongs to kind = \"policer\" only; remove it or set the kind",
                ));
            }
        }
        return Ok(None);
    }
    let Some(rate) = &q.rate else {
        return Err(origin.err(
            format!("{at}.rate"),
            "a policer needs its token rate, e.g. rate = \"10Mbps\"",
        ));
    };
    if rate.value.as_bps() == 0 {
        return Err(origin.err(format!("{at}.rate"), "must be positive"));
    }
    let Some(burst) = &q.burst else {
        return Err(origin.err(
            format!("{at}.burst"),
            "a policer needs its bucket depth, e.g. burst = \"30KB\" or \"20pkt\"",
        ));
    };
    let burst_bytes = bytes_of(&burst.value, full_packet, bdp);
    if burst_bytes < full_packet {
        return Err(origin.err(
            format!("{at}.burst"),
            format!(
                "{burst} holds less than one full packet ({full_packet}B, mss + header_bytes): \
                 no packet could ever pass"
            ),
        ));
    }
    Ok(Some((rate.value, burst_bytes)))
}
