//! Link-capacity traces: mahimahi files (one delivery opportunity per line, a millisecond
//! timestamp; see `../shared/traces/README.md`) and synthesised random walks in the same form.

use crate::scenario::spec::SynthTrace;
use polycc::units::{Duration, Rate};
use rand::{Rng, SeedableRng};
use std::io::Read;
use std::path::Path;

/// Bytes one mahimahi opportunity carries. mahimahi's own PACKET_SIZE is 1504 (the TUN MTU);
/// polycc uses 1500 so a trace line is one full-size IP packet, as its README states.
pub const MAHIMAHI_OPPORTUNITY_BYTES: u64 = 1500;

/// Reads a mahimahi trace of any size (see [`load_mahimahi_within`]).
pub fn load_mahimahi(path: &Path) -> Result<(Vec<u64>, u64), String> {
    load_mahimahi_within(path, u64::MAX)
}

/// Reads a mahimahi trace: returns the opportunity timestamps (ms) and the loop period (the last
/// timestamp, as mahimahi advances its base time on wrap-around). Only a regular file is read
/// (a FIFO or a device would block or never end), and only up to `max_file_bytes`.
pub fn load_mahimahi_within(path: &Path, max_file_bytes: u64) -> Result<(Vec<u64>, u64), String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read trace {shown}: {e}"))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(format!(
            "trace {shown} is {what}; give a mahimahi trace file"
        ));
    }
    if meta.len() > max_file_bytes {
        return Err(format!(
            "trace {shown} has {} bytes, more than the {max_file_bytes} the memory limit allows (see `limits.memory`)",
            meta.len()
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max_file_bytes).read_to_string(&mut text))
        .map_err(|e| format!("cannot read trace {shown}: {e}"))?;
    parse_mahimahi(&text).map_err(|m| format!("trace {shown}: {m}"))
}

/// Parses mahimahi text. Errors give the line number and what was expected, never the line's
/// content (the file may be one the user should not see, e.g. a path mistyped to a secret).
pub fn parse_mahimahi(text: &str) -> Result<(Vec<u64>, u64), String> {
    let mut out = Vec::with_capacity(text.len() / 6);
    let mut last = 0u64;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: u64 = line.parse().map_err(|_| {
            format!(
                "line {}: expected a non-negative integer millisecond timestamp (one per line)",
                i + 1
            )
        })?;
        if v < last {
            return Err(format!("line {}: timestamp {v} is smaller than the previous one ({last}); timestamps must not decrease", i + 1));
        }
        last = v;
        out.push(v);
    }
    if out.is_empty() {
        return Err("the trace has no delivery opportunities".into());
    }
    if last == 0 {
        return Err("the last timestamp must be greater than 0".into());
    }
    Ok((out, last))
}

/// A bounded random walk of the capacity, turned into delivery opportunities.
pub fn synthesize(
    s: &SynthTrace,
    seed: u64,
    duration: Duration,
) -> Result<(Vec<u64>, u64), String> {
    if s.synth != "random_walk" {
        return Err(format!(
            "unknown synthetic trace {:?}; allowed: \"random_walk\"",
            s.synth
        ));
    }
    let (lo, hi) = (s.min.value.as_bps() as f64, s.max.value.as_bps() as f64);
    if lo > hi || hi <= 0.0 {
        return Err("random_walk needs 0 <= min <= max and max > 0".into());
    }
    let step_ms = (s.interval.value.as_nanos() / 1_000_000).max(1);
    let total_ms = (duration.as_nanos() / 1_000_000).max(step_ms);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut rate = (s.start.value.as_bps() as f64).clamp(lo, hi);
    let step = s.step.value.as_bps() as f64;
    let mut out = Vec::new();
    let mut carry = 0.0f64; // opportunities owed, fractional
    let mut t = 0u64;
    while t < total_ms {
        for ms in t..(t + step_ms).min(total_ms) {
            carry += Rate::from_bps_f64(rate).as_bytes_per_sec_f64()
                / 1000.0
                / MAHIMAHI_OPPORTUNITY_BYTES as f64;
            while carry >= 1.0 {
                out.push(ms + 1);
                carry -= 1.0;
            }
        }
        t += step_ms;
        rate = (rate + rng.gen_range(-step..=step)).clamp(lo, hi);
    }
    if out.is_empty() {
        return Err("the random walk produced no delivery opportunities (max too small)".into());
    }
    Ok((out, total_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(parse_mahimahi("1\n1\n3\n").unwrap(), (vec![1, 1, 3], 3));
        assert!(parse_mahimahi("5\n3\n").unwrap_err().contains("line 2"));
        assert!(parse_mahimahi("x\n").unwrap_err().contains("line 1"));
        assert!(parse_mahimahi("").is_err());
        assert!(parse_mahimahi("0\n").is_err());
    }
}
