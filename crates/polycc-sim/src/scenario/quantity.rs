//! Quantities written as strings in scenario files: durations ("30ms"), rates ("100Mbps") and
//! sizes ("250pkt", "375KB", "1bdp"). Each keeps the text form for the resolved scenario.

use polycc::units::{Duration, Rate};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

/// Largest value of any quantity in its base unit (ns, bit/s, bytes, packets): 2^62, so that
/// the sum of two never overflows 64 bits and nothing saturates silently (2^62 ns is 146 years).
pub const MAX_QUANTITY: u64 = 1 << 62;

/// The value in base units, or an error when it does not fit below [`MAX_QUANTITY`].
fn checked_base(s: &str, v: f64, per_unit: f64, largest: &str) -> Result<u64, String> {
    let x = (v * per_unit).round();
    if x.is_finite() && x <= MAX_QUANTITY as f64 {
        Ok(x as u64)
    } else {
        Err(format!("{s:?} is too large; at most {largest}"))
    }
}

/// Parses a duration such as "30ms", "1.5s", "200us", "0".
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || {
        format!("{s:?} is not a duration; write a number with a unit: ns, us, ms, s, min (e.g. \"30ms\")")
    };
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("{s:?}: a duration cannot be negative"));
    }
    let ns_per = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" if v == 0.0 => 1.0,
        _ => return Err(bad()),
    };
    Ok(Duration(checked_base(s, v, ns_per, "146 years (2^62 ns)")?))
}

/// Parses a rate such as "100Mbps", "1.5Gbps", "500kbps", "12000bps".
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let bad = || {
        format!("{s:?} is not a rate; write a number with a unit: bps, Kbps, Mbps, Gbps (e.g. \"100Mbps\")")
    };
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("{s:?}: a rate cannot be negative"));
    }
    // The prefix is case-insensitive ("mbps", "MBPS"); the b of bits is not: "MBps" reads as
    // megabytes per second elsewhere, and reading it as megabits would be off by 8.
    let (prefix, rest) = match unit.char_indices().nth(1) {
        Some((k, _)) if unit.len() > 3 => unit.split_at(k),
        _ => ("", unit),
    };
    let mult = match prefix.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        _ => return Err(bad()),
    };
    if rest.len() == 3 && rest.starts_with('B') && rest[1..].eq_ignore_ascii_case("ps") {
        return Err(format!(
            "{s:?}: rates are in bits per second (bps, Kbps, Mbps, Gbps); B (bytes) is not accepted: write \"{}{prefix}bps\" for {s}, or \"{}{prefix}bps\" if bits were meant",
            fmt_num(v * 8.0),
            fmt_num(v),
        ));
    }
    if !rest.eq_ignore_ascii_case("bps") {
        return Err(bad());
    }
    checked_base(s, v, mult, "2^62 bit/s")?;
    Ok(Rate::from_bps_f64(v * mult))
}

/// A number as short as it can be written ("400", "2.5").
fn fmt_num(x: f64) -> String {
    let t = format!("{x:.6}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A buffer or transfer size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Bytes(u64),
    Packets(u64),
    /// Multiples of a bandwidth-delay product (meaning given by the key that uses it).
    Bdp(f64),
}

pub fn parse_size(s: &str) -> Result<Size, String> {
    let bad = || {
        format!("{s:?} is not a size; write a number with a unit: pkt, B, KB, MB, GB, KiB, MiB or bdp (e.g. \"250pkt\", \"375KB\", \"1bdp\")")
    };
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("{s:?}: a size cannot be negative"));
    }
    let bytes = |m: f64| Ok(Size::Bytes(checked_base(s, v, m, "2^62 bytes")?));
    match unit {
        "pkt" | "pkts" | "packets" => {
            if v.fract() != 0.0 {
                return Err(format!("{s:?}: a packet count must be a whole number"));
            }
            Ok(Size::Packets(checked_base(s, v, 1.0, "2^62 packets")?))
        }
        "B" => bytes(1.0),
        "KB" | "kB" => bytes(1e3),
        "MB" => bytes(1e6),
        "GB" => bytes(1e9),
        "KiB" => bytes(1024.0),
        "MiB" => bytes(1024.0 * 1024.0),
        "GiB" => bytes(1024.0 * 1024.0 * 1024.0),
        "bdp" | "BDP" => Ok(Size::Bdp(v)),
        _ => Err(bad()),
    }
}

macro_rules! text_quantity {
    ($name:ident, $inner:ty, $parse:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            pub value: $inner,
            pub text: String,
        }
        impl $name {
            pub fn parse(s: &str) -> Result<Self, String> {
                Ok($name {
                    value: $parse(s)?,
                    text: s.trim().to_string(),
                })
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $name::parse(&s).map_err(serde::de::Error::custom)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.text)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.text)
            }
        }
    };
}

text_quantity!(
    DurationQ,
    Duration,
    parse_duration,
    "A duration written as text."
);
text_quantity!(RateQ, Rate, parse_rate, "A rate written as text.");
text_quantity!(SizeQ, Size, parse_size, "A size written as text.");

impl DurationQ {
    pub fn from_value(d: Duration) -> Self {
        DurationQ {
            value: d,
            text: d.to_string(),
        }
    }
}
impl RateQ {
    pub fn from_value(r: Rate) -> Self {
        RateQ {
            value: r,
            text: r.to_string(),
        }
    }
}
impl SizeQ {
    pub fn packets(n: u64) -> Self {
        SizeQ {
            value: Size::Packets(n),
            text: format!("{n}pkt"),
        }
    }
    pub fn bytes(n: u64) -> Self {
        SizeQ {
            value: Size::Bytes(n),
            text: format!("{n}B"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("30ms").unwrap(), Duration::from_millis(30));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_rate("100Mbps").unwrap(), Rate::from_mbps(100));
        assert_eq!(parse_rate("1.5Gbps").unwrap(), Rate(1_500_000_000));
        assert_eq!(parse_size("250pkt").unwrap(), Size::Packets(250));
        assert_eq!(parse_size("1.5KB").unwrap(), Size::Bytes(1500));
        assert_eq!(parse_size("0.2bdp").unwrap(), Size::Bdp(0.2));
    }

    #[test]
    fn rejects_bad_units_with_a_hint() {
        assert!(parse_rate("100Mbit").unwrap_err().contains("Mbps"));
        assert!(parse_rate("-5Mbps").unwrap_err().contains("negative"));
        assert!(parse_duration("30").unwrap_err().contains("ms"));
        assert!(parse_size("2.5pkt").unwrap_err().contains("whole"));
    }
}
