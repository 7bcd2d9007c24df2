//! A flow's traffic source: bulk, sized, web, on/off, CBR, Poisson or video, with its numbers
//! checked.

use crate::scenario::dash::{Abr, DashModel};
use crate::scenario::page::PageModel;
use crate::scenario::quantity::{self, DurationQ, RateQ, SizeQ};
use crate::scenario::spec::{Arrivals, Periods, Scenario, TrafficSpec, TrafficTable};
use crate::scenario::{Origin, ScenarioError, Traffic, VideoModel};
use polycc::units::{Duration, Rate};
use quantity::Size;

/// Web traffic's `connection` values.
const WEB_PER_REQUEST: &str = "per_request";
const WEB_PERSISTENT: &str = "persistent";
/// Page traffic's default `connection`: a new connection for each load.
const PAGE_PER_PAGE: &str = "per_page";
/// Shortest DASH chunk accepted: segments are seconds long; below this a unit slip ("4ms" for
/// "4s") would make a request per few packets.
const MIN_DASH_CHUNK: Duration = Duration::from_millis(100);
/// Most ladder levels accepted (services use up to a dozen or so).
const MAX_DASH_LEVELS: usize = 32;
/// Most pages, and levels per page, accepted: a page's dependency chain is a few levels deep
/// (document, style sheets and scripts, what they load), and a page set is a site list.
const MAX_PAGES: usize = 1000;
const MAX_PAGE_LEVELS: usize = 16;

/// The source of a flow; errors name `at` (the flow's `traffic` key) or the key under it.
pub(super) fn resolve_flow_traffic(
    origin: &Origin,
    at: &str,
    t: &TrafficSpec,
    sc: &Scenario,
) -> Result<Traffic, ScenarioError> {
    let traffic = resolve_traffic(t, sc.mss).map_err(|m| origin.err(at, m))?;
    if let Traffic::Video(v) = &traffic {
        if v.packet <= sc.header_bytes {
            return Err(origin.err(
                format!("{at}.packet"),
                format!(
                    "{} bytes leave no payload after the {}-byte header",
                    v.packet, sc.header_bytes
                ),
            ));
        }
    }
    Ok(traffic)
}

fn resolve_traffic(t: &TrafficSpec, mss: u64) -> Result<Traffic, String> {
    let size_bytes = |s: &SizeQ| -> Result<u64, String> {
        match s.value {
            Size::Bytes(0) | Size::Packets(0) => Err("size must be positive".into()),
            Size::Bytes(b) => Ok(b),
            Size::Packets(n) => Ok(n.saturating_mul(mss)),
            Size::Bdp(_) => Err("a transfer size cannot be given in bdp".into()),
        }
    };
    Ok(match t {
        TrafficSpec::Named(n) if n == "bulk" => Traffic::Bulk,
        TrafficSpec::Named(n) => {
            return Err(format!("unknown traffic {n:?}; allowed: \"bulk\" or a table with kind = bulk | sized | web | on_off | cbr | poisson | video | dash | page"))
        }
        TrafficSpec::Table(TrafficTable::Bulk) => Traffic::Bulk,
        TrafficSpec::Table(TrafficTable::Sized { size }) => Traffic::Sized { bytes: size_bytes(size)? },
        TrafficSpec::Table(TrafficTable::Web { size, interval, arrivals, connection }) => {
            web(interval, *arrivals, connection.as_deref(), || size_bytes(size))?
        }
        TrafficSpec::Table(TrafficTable::OnOff { on, off, periods }) => {
            if on.value.is_zero() || off.value.is_zero() {
                return Err("on and off must be positive durations".into());
            }
            Traffic::OnOff { on: on.value, off: off.value, exponential: *periods == Periods::Exponential }
        }
        TrafficSpec::Table(TrafficTable::Cbr { rate }) | TrafficSpec::Table(TrafficTable::Poisson { rate })
            if rate.value.as_bps() == 0 =>
        {
            return Err("rate must be positive".into())
        }
        TrafficSpec::Table(TrafficTable::Cbr { rate }) => Traffic::Cbr { rate: rate.value },
        TrafficSpec::Table(TrafficTable::Poisson { rate }) => Traffic::Poisson { rate: rate.value },
        TrafficSpec::Table(TrafficTable::Video { fps, min_rate, max_rate, packet, fec, retransmit, frame_noise }) => {
            Traffic::Video(video(*fps, min_rate, max_rate, packet, *fec, *retransmit, *frame_noise)?)
        }
        TrafficSpec::Table(TrafficTable::Page { pages, interval, arrivals, connection }) => {
            let interval = positive_interval(interval)?;
            let persistent = persistent(connection.as_deref(), PAGE_PER_PAGE, "page load", "loads")?;
            let poisson = *arrivals == Arrivals::Poisson;
            Traffic::Page(Box::new(page(pages, interval, poisson, persistent, size_bytes)?))
        }
        TrafficSpec::Table(TrafficTable::Dash { bitrates, chunk, buffer, startup, abr, length }) => {
            let rates: Vec<Rate> = bitrates.iter().map(|r| r.value).collect();
            Traffic::Dash(Box::new(dash(rates, chunk.value, buffer.value, startup.as_ref().map(|s| s.value), abr.as_deref(), length.as_ref().map(|l| l.value))?))
        }
    })
}

/// A DASH player's settings, checked.
fn dash(
    bitrates: Vec<Rate>,
    chunk: Duration,
    buffer: Duration,
    startup: Option<Duration>,
    abr: Option<&str>,
    length: Option<Duration>,
) -> Result<DashModel, String> {
    if bitrates.is_empty() || bitrates.len() > MAX_DASH_LEVELS {
        return Err(format!("bitrates must list 1 to {MAX_DASH_LEVELS} rates"));
    }
    if bitrates.iter().any(|r| r.as_bps() == 0) {
        return Err("bitrates must be positive".into());
    }
    if bitrates.windows(2).any(|w| w[1] <= w[0]) {
        return Err("bitrates must be listed from the lowest up, each above the one before".into());
    }
    if chunk < MIN_DASH_CHUNK {
        return Err(format!(
            "chunk = {chunk} is below {MIN_DASH_CHUNK}: DASH chunks are seconds of video"
        ));
    }
    if buffer < chunk {
        return Err(format!(
            "buffer = {buffer} holds less than one chunk ({chunk})"
        ));
    }
    let startup = startup.unwrap_or(chunk);
    if startup.is_zero() || startup > buffer {
        return Err(format!(
            "startup = {startup} must be positive and at most the buffer ({buffer})"
        ));
    }
    let abr = match abr {
        None => Abr::Bola,
        Some(name) => Abr::from_name(name)
            .ok_or_else(|| format!("abr = {name:?} is not known; use {}", Abr::NAMES))?,
    };
    let chunks = match length {
        None => None,
        Some(l) if l.is_zero() => return Err("length must be positive".into()),
        Some(l) => Some(l.as_nanos().div_ceil(chunk.as_nanos())),
    };
    Ok(DashModel {
        bitrates,
        chunk,
        buffer,
        startup,
        abr,
        chunks,
    })
}

/// Page loads' pages, checked: each level's size as a transfer's, `pages[i][j]` named.
fn page(
    pages: &[Vec<SizeQ>],
    interval: Duration,
    poisson: bool,
    persistent: bool,
    size_bytes: impl Fn(&SizeQ) -> Result<u64, String>,
) -> Result<PageModel, String> {
    if pages.is_empty() || pages.len() > MAX_PAGES {
        return Err(format!("pages must list 1 to {MAX_PAGES} pages"));
    }
    let mut out = Vec::with_capacity(pages.len());
    for (i, levels) in pages.iter().enumerate() {
        if levels.is_empty() || levels.len() > MAX_PAGE_LEVELS {
            return Err(format!(
                "pages[{i}] must list 1 to {MAX_PAGE_LEVELS} levels (the document, then what it references, ...)"
            ));
        }
        let sizes = levels
            .iter()
            .enumerate()
            .map(|(j, s)| size_bytes(s).map_err(|m| format!("pages[{i}][{j}]: {m}")))
            .collect::<Result<Vec<u64>, String>>()?;
        out.push(sizes);
    }
    Ok(PageModel {
        pages: out,
        interval,
        poisson,
        persistent,
    })
}

/// A mean interval between requests, checked.
fn positive_interval(interval: &DurationQ) -> Result<Duration, String> {
    if interval.value.is_zero() {
        return Err("interval must be positive".into());
    }
    Ok(interval.value)
}

/// Whether `connection` keeps one connection for every `what` (else `fresh`, the default: a
/// new one for each).
fn persistent(
    connection: Option<&str>,
    fresh: &str,
    what: &str,
    whats: &str,
) -> Result<bool, String> {
    match connection {
        None => Ok(false),
        Some(c) if c == fresh => Ok(false),
        Some(WEB_PERSISTENT) => Ok(true),
        Some(c) => Err(format!(
            "connection = {c:?} is not allowed; use \"{fresh}\" (a new connection per {what}, the default) or \"{WEB_PERSISTENT}\" (one connection for all {whats})"
        )),
    }
}

/// Web-like transfers; the size is checked after the interval and the connection.
fn web(
    interval: &DurationQ,
    arrivals: Arrivals,
    connection: Option<&str>,
    size_bytes: impl Fn() -> Result<u64, String>,
) -> Result<Traffic, String> {
    positive_interval(interval)?;
    let persistent = persistent(connection, WEB_PER_REQUEST, "request", "requests")?;
    Ok(Traffic::Web {
        bytes: size_bytes()?,
        interval: interval.value,
        poisson: arrivals == Arrivals::Poisson,
        persistent,
    })
}

/// A real-time video source (`spec::TrafficTable::Video`).
fn video(
    fps: f64,
    min_rate: &RateQ,
    max_rate: &RateQ,
    packet: &SizeQ,
    fec: f64,
    retransmit: bool,
    frame_noise: f64,
) -> Result<VideoModel, String> {
    if !(fps.is_finite() && (1.0..=1000.0).contains(&fps)) {
        return Err(format!("fps = {fps} is outside 1 ..= 1000"));
    }
    if max_rate.value.as_bps() == 0 {
        return Err("max_rate must be positive".into());
    }
    if min_rate.value > max_rate.value {
        return Err(format!(
            "min_rate {} must not exceed max_rate {}",
            min_rate.value, max_rate.value
        ));
    }
    let packet = match packet.value {
        Size::Bytes(b) => b,
        Size::Packets(_) | Size::Bdp(_) => {
            return Err("packet is a datagram size: give it in bytes (\"1200B\")".into())
        }
    };
    if !(64..=65_000).contains(&packet) {
        return Err(format!("packet = {packet} bytes is outside 64 ..= 65000"));
    }
    if !(fec.is_finite() && (0.0..=4.0).contains(&fec)) {
        return Err(format!(
            "fec = {fec} is outside 0.0 ..= 4.0 (repair packets per data packet)"
        ));
    }
    if !(frame_noise.is_finite() && (0.0..=0.5).contains(&frame_noise)) {
        return Err(format!(
            "frame_noise = {frame_noise} is outside 0.0 ..= 0.5"
        ));
    }
    Ok(VideoModel {
        interval: Duration::from_secs_f64(1.0 / fps),
        min_rate: min_rate.value,
        max_rate: max_rate.value,
        packet,
        fec,
        retransmit,
        frame_noise,
    })
}
