//! The arrival reports a receiving endpoint sends its peer, on a unidirectional QUIC stream:
//! which 1-RTT packets arrived and when, on the receiver's clock, as RTP's transport-wide
//! congestion-control feedback carries them (draft-holmer-rmcat-transport-wide-cc-extensions).
//!
//! ```text
//! report := length u16 (big-endian, bytes of the body, 1..=MAX_REPORT_BYTES) | body
//! body   := count | pn | arrival_us | (count − 1) × (Δpn | Δarrival_us)
//! ```
//!
//! `count`, `pn` and `arrival_us` are unsigned LEB128 varints; the deltas (from the previous
//! arrival) are zig-zag varints (both as protobuf encodes them; the `integer-encoding` crate
//! writes and reads them), so reordered packets and any clock cost two bytes or so per
//! packet. A stream is a sequence of reports; [`ReportReader`] takes it in chunks of any size
//! and keeps at most one unfinished report, so it holds at most [`MAX_REPORT_BYTES`] + 2 bytes
//! whatever the peer sends. Anything malformed is a [`ReportError`] naming the report and the
//! field.

use integer_encoding::VarInt;
use thiserror::Error;

/// Most arrivals one report carries: 20 ms of a 500 Mbit/s flow of 1500-byte packets.
pub const MAX_ARRIVALS: usize = 1024;

/// Longest body: the first arrival's three varints of at most 10 bytes each, and two of at most
/// 10 bytes for each further one.
pub const MAX_REPORT_BYTES: usize = 30 + (MAX_ARRIVALS - 1) * 20;

/// One packet's arrival, as the receiver saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportedArrival {
    /// Its QUIC packet number (1-RTT space).
    pub pn: u64,
    /// When it arrived, in microseconds on the receiver's clock (any origin).
    pub arrival_us: u64,
}

/// Why a report stream cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReportError {
    /// A report announced an empty or oversized body.
    #[error("arrival report {report}: body length {length} is not in 1..={MAX_REPORT_BYTES}")]
    BadLength {
        /// Index of the report in the stream, from 0.
        report: u64,
        /// The length it announced.
        length: usize,
    },
    /// A report's arrival count is 0 or above [`MAX_ARRIVALS`].
    #[error("arrival report {report}: {count} arrivals is not in 1..={MAX_ARRIVALS}")]
    BadCount {
        /// Index of the report.
        report: u64,
        /// The count it gave.
        count: u64,
    },
    /// A field runs past the report's end, or a varint is longer than 10 bytes.
    #[error(
        "arrival report {report}: field {field} of arrival {arrival} is truncated or too long"
    )]
    BadField {
        /// Index of the report.
        report: u64,
        /// Index of the arrival in it.
        arrival: usize,
        /// The field's name.
        field: &'static str,
    },
    /// A delta takes a packet number or time below 0 or above `u64::MAX`.
    #[error("arrival report {report}: {field} of arrival {arrival} overflows")]
    Overflow {
        /// Index of the report.
        report: u64,
        /// Index of the arrival in it.
        arrival: usize,
        /// The field's name.
        field: &'static str,
    },
    /// Bytes after the last arrival the count announced.
    #[error("arrival report {report}: {extra} bytes after its {count} arrivals")]
    Trailing {
        /// Index of the report.
        report: u64,
        /// Its arrival count.
        count: u64,
        /// Bytes left over.
        extra: usize,
    },
    /// The stream ended inside a report.
    #[error("the arrival reports end inside report {report} ({have} of {need} bytes)")]
    Unfinished {
        /// Index of the report.
        report: u64,
        /// Bytes of it received.
        have: usize,
        /// Bytes it needs, with its length field.
        need: usize,
    },
}

/// Longest varint of a u64 (LEB128: 7 bits a byte).
const MAX_VARINT_BYTES: usize = 10;

fn put_varint(out: &mut Vec<u8>, v: impl VarInt) {
    let mut buf = [0u8; MAX_VARINT_BYTES];
    let n = v.encode_var(&mut buf);
    out.extend_from_slice(&buf[..n]);
}

/// `b − a`, which the encoder has checked fits an i64 (see [`delta_fits`]).
fn delta(a: u64, b: u64) -> i64 {
    b.wrapping_sub(a) as i64
}

/// Whether `b − a` fits an i64 (a zig-zag varint).
fn delta_fits(a: u64, b: u64) -> bool {
    let d = i128::from(b) - i128::from(a);
    d >= i128::from(i64::MIN) && d <= i128::from(i64::MAX)
}

/// Appends `arrivals` to `out` as reports of at most [`MAX_ARRIVALS`] each (none for none).
pub fn encode(arrivals: &[ReportedArrival], out: &mut Vec<u8>) {
    let mut rest = arrivals;
    while !rest.is_empty() {
        // A report ends where it is full or where a delta would not fit a zig-zag varint.
        let mut n = 1;
        while n < rest.len().min(MAX_ARRIVALS)
            && delta_fits(rest[n - 1].pn, rest[n].pn)
            && delta_fits(rest[n - 1].arrival_us, rest[n].arrival_us)
        {
            n += 1;
        }
        let (chunk, tail) = rest.split_at(n);
        let mut body = Vec::with_capacity(30 + 4 * n);
        put_varint(&mut body, n as u64);
        put_varint(&mut body, chunk[0].pn);
        put_varint(&mut body, chunk[0].arrival_us);
        for w in chunk.windows(2) {
            // i64s go out zig-zag encoded (`VarInt for i64`).
            put_varint(&mut body, delta(w[0].pn, w[1].pn));
            put_varint(&mut body, delta(w[0].arrival_us, w[1].arrival_us));
        }
        debug_assert!(body.len() <= MAX_REPORT_BYTES);
        out.extend_from_slice(&(body.len() as u16).to_be_bytes());
        out.extend_from_slice(&body);
        rest = tail;
    }
}

/// Reads the reports of one stream, chunk by chunk.
#[derive(Debug, Default)]
pub struct ReportReader {
    /// The unfinished report's bytes (at most its length field and body).
    partial: Vec<u8>,
    /// Reports read so far.
    reports: u64,
}

impl ReportReader {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        ReportReader::default()
    }

    /// Reports read in full so far.
    pub fn reports(&self) -> u64 {
        self.reports
    }

    /// Takes the next `chunk` of the stream and appends the arrivals of every report it
    /// completes to `out`. After an error the stream is unusable.
    pub fn push(
        &mut self,
        mut chunk: &[u8],
        out: &mut Vec<ReportedArrival>,
    ) -> Result<(), ReportError> {
        while !chunk.is_empty() {
            // The length field first, then exactly the body it announces.
            let need = if self.partial.len() < 2 {
                2
            } else {
                let length = usize::from(u16::from_be_bytes([self.partial[0], self.partial[1]]));
                if length == 0 || length > MAX_REPORT_BYTES {
                    return Err(ReportError::BadLength {
                        report: self.reports,
                        length,
                    });
                }
                2 + length
            };
            let take = (need - self.partial.len()).min(chunk.len());
            self.partial.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.partial.len() == need && need > 2 {
                decode_body(&self.partial[2..], self.reports, out)?;
                self.reports += 1;
                self.partial.clear();
            }
        }
        // A length field completed by the chunk's last bytes is checked now, not at the next.
        if self.partial.len() == 2 {
            let length = usize::from(u16::from_be_bytes([self.partial[0], self.partial[1]]));
            if length == 0 || length > MAX_REPORT_BYTES {
                return Err(ReportError::BadLength {
                    report: self.reports,
                    length,
                });
            }
        }
        Ok(())
    }

    /// The stream ended: an error if it ended inside a report.
    pub fn finish(&self) -> Result<(), ReportError> {
        if self.partial.is_empty() {
            return Ok(());
        }
        let need = if self.partial.len() >= 2 {
            2 + usize::from(u16::from_be_bytes([self.partial[0], self.partial[1]]))
        } else {
            2
        };
        Err(ReportError::Unfinished {
            report: self.reports,
            have: self.partial.len(),
            need,
        })
    }
}

/// A cursor over one body.
struct Body<'a> {
    b: &'a [u8],
    report: u64,
}

impl Body<'_> {
    /// The next varint: a u64, or an i64 read zig-zag. `decode_var` refuses a varint that runs
    /// past the body or past 10 bytes, or whose tenth byte holds more than bit 63.
    fn varint<T: VarInt>(&mut self, arrival: usize, field: &'static str) -> Result<T, ReportError> {
        let (v, n) = T::decode_var(self.b).ok_or(ReportError::BadField {
            report: self.report,
            arrival,
            field,
        })?;
        self.b = &self.b[n..];
        Ok(v)
    }
}

fn apply(
    base: u64,
    d: i64,
    report: u64,
    arrival: usize,
    field: &'static str,
) -> Result<u64, ReportError> {
    base.checked_add_signed(d).ok_or(ReportError::Overflow {
        report,
        arrival,
        field,
    })
}

fn decode_body(b: &[u8], report: u64, out: &mut Vec<ReportedArrival>) -> Result<(), ReportError> {
    let mut body = Body { b, report };
    let count: u64 = body.varint(0, "count")?;
    if count == 0 || count > MAX_ARRIVALS as u64 {
        return Err(ReportError::BadCount { report, count });
    }
    let start = out.len();
    let result = (|| {
        let mut last = ReportedArrival {
            pn: body.varint(0, "pn")?,
            arrival_us: body.varint(0, "arrival_us")?,
        };
        out.push(last);
        for i in 1..count as usize {
            let dpn: i64 = body.varint(i, "pn delta")?;
            let dt: i64 = body.varint(i, "arrival delta")?;
            last = ReportedArrival {
                pn: apply(last.pn, dpn, report, i, "pn")?,
                arrival_us: apply(last.arrival_us, dt, report, i, "arrival_us")?,
            };
            out.push(last);
        }
        if !body.b.is_empty() {
            return Err(ReportError::Trailing {
                report,
                count,
                extra: body.b.len(),
            });
        }
        Ok(())
    })();
    if result.is_err() {
        // A bad report adds nothing.
        out.truncate(start);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(pn: u64, arrival_us: u64) -> ReportedArrival {
        ReportedArrival { pn, arrival_us }
    }

    fn read_all(bytes: &[u8], chunk: usize) -> Result<Vec<ReportedArrival>, ReportError> {
        let mut r = ReportReader::new();
        let mut out = Vec::new();
        for c in bytes.chunks(chunk.max(1)) {
            r.push(c, &mut out)?;
        }
        r.finish()?;
        Ok(out)
    }

    #[test]
    fn reports_round_trip_in_chunks_of_any_size() {
        // Reordering (pn 12 before 11), equal times, a jump of the clock, extremes.
        let arrivals = vec![
            arr(10, 5_000_000),
            arr(12, 5_000_100),
            arr(11, 5_000_100),
            arr(13, 5_900_000),
            arr(u64::MAX, u64::MAX),
            arr(0, 0),
            arr(7, 1),
        ];
        let mut bytes = Vec::new();
        encode(&arrivals, &mut bytes);
        for chunk in [1, 2, 3, 7, bytes.len()] {
            assert_eq!(
                read_all(&bytes, chunk),
                Ok(arrivals.clone()),
                "chunk {chunk}"
            );
        }
        // u64::MAX − 13 and back do not fit an i64 delta: three reports.
        let mut r = ReportReader::new();
        r.push(&bytes, &mut Vec::new()).expect("valid");
        assert_eq!(r.reports(), 3);
    }

    #[test]
    fn the_wire_format_is_pinned_byte_for_byte() {
        // Length 11, count 3, pn 10, 5 000 000 µs as LEB128, then zig-zag deltas: Δpn +2 → 4,
        // Δt +100 → 200 (two bytes), Δpn −1 → 1, Δt 0 → 0. A peer built before or after a
        // change of varint code must read the same bytes.
        let mut bytes = Vec::new();
        encode(
            &[arr(10, 5_000_000), arr(12, 5_000_100), arr(11, 5_000_100)],
            &mut bytes,
        );
        assert_eq!(
            bytes,
            [0, 11, 3, 10, 0xc0, 0x96, 0xb1, 0x02, 4, 0xc8, 0x01, 1, 0]
        );
        // u64::MAX is ten bytes, its tenth holding bit 63 alone.
        let mut max = Vec::new();
        encode(&[arr(u64::MAX, 0)], &mut max);
        let mut want = vec![0, 12, 1];
        want.extend_from_slice(&[0xff; 9]);
        want.extend_from_slice(&[0x01, 0]);
        assert_eq!(max, want);
    }

    #[test]
    fn deltas_at_the_ends_of_i64_stay_in_one_report() {
        // Up by i64::MAX and down by it; then (a second report) down by i64::MAX again.
        let top = i64::MAX as u64;
        let arrivals = [
            arr(0, 0),
            arr(top, top),
            arr(0, 0),
            arr(top + 1, top + 1),
            arr(1, 1),
            arr(1, 0),
        ];
        let mut bytes = Vec::new();
        encode(&arrivals[..3], &mut bytes);
        encode(&arrivals[3..], &mut bytes);
        let mut r = ReportReader::new();
        let mut out = Vec::new();
        r.push(&bytes, &mut out).expect("valid");
        assert_eq!((r.reports(), out), (2, arrivals[..].to_vec()));
        // −2^63 itself: from 2^63 down to 0.
        let mut min = Vec::new();
        encode(&[arr(top + 1, 5), arr(0, 5)], &mut min);
        assert_eq!(read_all(&min, 3), Ok(vec![arr(top + 1, 5), arr(0, 5)]));
    }

    #[test]
    fn every_cut_of_a_stream_is_an_error_or_its_whole_reports() {
        let arrivals: Vec<ReportedArrival> =
            (0..40).map(|i| arr(1000 + 3 * i, 77 + 900 * i)).collect();
        let mut bytes = Vec::new();
        encode(&arrivals[..25], &mut bytes);
        let first = bytes.len();
        encode(&arrivals[25..], &mut bytes);
        for cut in 0..bytes.len() {
            let got = read_all(&bytes[..cut], 1);
            if cut == 0 {
                assert_eq!(got, Ok(vec![]));
            } else if cut == first {
                assert_eq!(got, Ok(arrivals[..25].to_vec()));
            } else {
                let report = u64::from(cut > first);
                assert!(
                    matches!(got, Err(ReportError::Unfinished { report: r, .. }) if r == report),
                    "cut {cut}: {got:?}"
                );
            }
        }
    }

    #[test]
    fn a_body_cut_inside_any_field_names_that_field() {
        let mut good = Vec::new();
        encode(&[arr(300, 70_000), arr(290, 71_000)], &mut good);
        let body = good[2..].to_vec();
        // Fields: count (1 byte), pn (2), arrival_us (3), Δpn (1), Δt (2).
        let fields = [
            (1, 0, "count"),
            (3, 0, "pn"),
            (6, 0, "arrival_us"),
            (7, 1, "pn delta"),
            (9, 1, "arrival delta"),
        ];
        assert_eq!(body.len(), 9);
        for (end, arrival, field) in fields {
            // Cut just before the field's last byte: its varint runs out.
            let cut = &body[..end - 1];
            if cut.is_empty() {
                continue;
            }
            let mut bytes = vec![0, cut.len() as u8];
            bytes.extend_from_slice(cut);
            assert_eq!(
                read_all(&bytes, 64),
                Err(ReportError::BadField {
                    report: 0,
                    arrival,
                    field
                }),
                "cut at {}",
                end - 1
            );
        }
    }

    #[test]
    fn a_steady_flow_costs_about_three_bytes_a_packet_and_splits_at_the_cap() {
        let arrivals: Vec<ReportedArrival> =
            (0..3000).map(|i| arr(100 + i, 40 + 1200 * i)).collect();
        let mut bytes = Vec::new();
        encode(&arrivals, &mut bytes);
        // Δpn 1 is one byte, Δt 1200 µs two: 3 bytes a packet and a header per report.
        assert!(bytes.len() < 3000 * 3 + 3 * 16, "{} bytes", bytes.len());
        let mut r = ReportReader::new();
        let mut out = Vec::new();
        r.push(&bytes, &mut out).expect("valid");
        assert_eq!(r.reports(), 3, "1024 + 1024 + 952");
        assert_eq!(out, arrivals);
        let mut none = Vec::new();
        encode(&[], &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn malformed_reports_are_errors_naming_report_and_field() {
        let mut good = Vec::new();
        encode(&[arr(1, 1), arr(2, 2)], &mut good);
        // A zero length and an oversized one.
        assert_eq!(
            read_all(&[0, 0], 1),
            Err(ReportError::BadLength {
                report: 0,
                length: 0
            })
        );
        let mut r = ReportReader::new();
        assert_eq!(
            r.push(&[0xff, 0xff], &mut Vec::new()),
            Err(ReportError::BadLength {
                report: 0,
                length: 0xffff
            })
        );
        // A count of 0, and one above the cap.
        assert_eq!(
            read_all(&[0, 1, 0], 3),
            Err(ReportError::BadCount {
                report: 0,
                count: 0
            })
        );
        let mut big = vec![0, 2];
        put_varint(&mut big, MAX_ARRIVALS as u64 + 1);
        big[1] = (big.len() - 2) as u8;
        assert!(matches!(
            read_all(&big, 4),
            Err(ReportError::BadCount { .. })
        ));
        // The second report's body cut short inside its second arrival.
        let mut two = good.clone();
        two.extend_from_slice(&[0, 4, 2, 5, 5, 2]);
        assert_eq!(
            read_all(&two, 5),
            Err(ReportError::BadField {
                report: 1,
                arrival: 1,
                field: "arrival delta"
            })
        );
        // Extra bytes after the count's arrivals.
        let mut extra = good.clone();
        extra[1] += 1;
        extra.push(0);
        assert_eq!(
            read_all(&extra, 64),
            Err(ReportError::Trailing {
                report: 0,
                count: 2,
                extra: 1
            })
        );
        // A delta below packet number 0.
        assert_eq!(
            read_all(&[0, 5, 2, 1, 1, 5, 0], 64),
            Err(ReportError::Overflow {
                report: 0,
                arrival: 1,
                field: "pn"
            })
        );
        // An eleven-byte varint, and a tenth byte above bit 63.
        let mut long = vec![0, 12, 1];
        long.extend_from_slice(&[0x80; 10]);
        long.push(0);
        assert!(matches!(
            read_all(&long, 64),
            Err(ReportError::BadField { field: "pn", .. })
        ));
        let mut wide = vec![0, 12, 1];
        wide.extend_from_slice(&[0xff; 9]);
        wide.extend_from_slice(&[0x02, 0]);
        assert!(matches!(
            read_all(&wide, 64),
            Err(ReportError::BadField { field: "pn", .. })
        ));
        // The stream ends inside a report.
        assert_eq!(
            read_all(&good[..good.len() - 1], 64),
            Err(ReportError::Unfinished {
                report: 0,
                have: good.len() - 1,
                need: good.len()
            })
        );
        // Garbage never panics, and a good report before it is kept.
        let mut r = ReportReader::new();
        let mut out = Vec::new();
        let mut junk = good.clone();
        junk.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
        let _ = r.push(&junk, &mut out);
        assert_eq!(out[..2], [arr(1, 1), arr(2, 2)]);
    }
}
