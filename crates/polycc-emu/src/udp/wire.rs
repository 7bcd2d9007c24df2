//! The datagrams of polycc's UDP transport. Big-endian, fixed layouts; anything that does not
//! parse is dropped by the endpoint (counted, never trusted).
//!
//! ```text
//! data: kind=1 | pn u64 | segment u64 | sent_ns u64 | padding up to the datagram size
//! ack:  kind=2 | largest u64 | ack_delay_us u32 | n u8 | n × (first u64, last u64)
//!       | m u8 | m × (pn u64, bytes u32, sent_ns u64, arrival_ns u64)
//! ```

use polycc::signals::Arrival;
use polycc::units::Time;
use std::ops::RangeInclusive;

const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
/// Bytes of a data packet's header.
pub const DATA_HEADER: usize = 1 + 8 + 8 + 8;
/// Most ranges an ACK carries: the newest ones (older ones were acknowledged before).
pub const MAX_RANGES: usize = 16;
/// Most arrival reports an ACK carries.
pub const MAX_ARRIVALS: usize = 32;
/// IP and UDP headers around every datagram (IPv4 without options).
pub const IP_UDP_HEADERS: u64 = 28;
/// The segment number of a packet that carries no data (a probe with nothing to send).
pub const NO_SEGMENT: u64 = u64::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Data {
    pub pn: u64,
    pub segment: u64,
    pub sent: Time,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    pub largest: u64,
    pub ack_delay_us: u32,
    /// Ascending, disjoint.
    pub ranges: Vec<RangeInclusive<u64>>,
    pub arrivals: Vec<Arrival>,
}

/// What a datagram holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Datagram {
    Data(Data),
    Ack(Ack),
}

/// Why a datagram was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("datagram too short")]
    Short,
    #[error("unknown datagram kind {0}")]
    Kind(u8),
    #[error("ACK ranges not ascending and disjoint, or above the largest")]
    Ranges,
}

impl Data {
    /// Writes the header into the start of `buf` (whose length is the datagram's).
    pub fn write(&self, buf: &mut [u8]) {
        buf[0] = KIND_DATA;
        buf[1..9].copy_from_slice(&self.pn.to_be_bytes());
        buf[9..17].copy_from_slice(&self.segment.to_be_bytes());
        buf[17..25].copy_from_slice(&self.sent.0.to_be_bytes());
    }
}

impl Ack {
    pub fn encode(&self) -> Vec<u8> {
        let ranges = &self.ranges[self.ranges.len().saturating_sub(MAX_RANGES)..];
        let arrivals = &self.arrivals[self.arrivals.len().saturating_sub(MAX_ARRIVALS)..];
        let mut b = Vec::with_capacity(15 + ranges.len() * 16 + arrivals.len() * 28);
        b.push(KIND_ACK);
        b.extend_from_slice(&self.largest.to_be_bytes());
        b.extend_from_slice(&self.ack_delay_us.to_be_bytes());
        b.push(ranges.len() as u8);
        for r in ranges {
            b.extend_from_slice(&r.start().to_be_bytes());
            b.extend_from_slice(&r.end().to_be_bytes());
        }
        b.push(arrivals.len() as u8);
        for a in arrivals {
            b.extend_from_slice(&a.pn.to_be_bytes());
            b.extend_from_slice(&(a.bytes.min(u32::MAX as u64) as u32).to_be_bytes());
            b.extend_from_slice(&a.sent_time.0.to_be_bytes());
            b.extend_from_slice(&a.arrival_time.0.to_be_bytes());
        }
        b
    }
}

/// Reads fields off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let (head, rest) = self.0.split_first_chunk::<N>().ok_or(WireError::Short)?;
        self.0 = rest;
        Ok(*head)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.take()?))
    }
}

pub fn decode(b: &[u8]) -> Result<Datagram, WireError> {
    let mut r = Reader(b);
    match r.u8()? {
        KIND_DATA => Ok(Datagram::Data(Data {
            pn: r.u64()?,
            segment: r.u64()?,
            sent: Time(r.u64()?),
        })),
        KIND_ACK => {
            let largest = r.u64()?;
            let ack_delay_us = r.u32()?;
            let n = r.u8()? as usize;
            let mut ranges: Vec<RangeInclusive<u64>> = Vec::with_capacity(n);
            for _ in 0..n {
                let (first, last) = (r.u64()?, r.u64()?);
                let after_previous = ranges.last().is_none_or(|p| first > *p.end());
                if first > last || last > largest || !after_previous {
                    return Err(WireError::Ranges);
                }
                ranges.push(first..=last);
            }
            let m = r.u8()? as usize;
            let mut arrivals = Vec::with_capacity(m);
            for _ in 0..m {
                arrivals.push(Arrival {
                    pn: r.u64()?,
                    bytes: r.u32()? as u64,
                    sent_time: Time(r.u64()?),
                    arrival_time: Time(r.u64()?),
                });
            }
            Ok(Datagram::Ack(Ack {
                largest,
                ack_delay_us,
                ranges,
                arrivals,
            }))
        }
        k => Err(WireError::Kind(k)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_acks_round_trip() {
        let d = Data {
            pn: 7,
            segment: 3,
            sent: Time(123),
        };
        let mut buf = vec![0u8; 1472];
        d.write(&mut buf);
        assert_eq!(decode(&buf), Ok(Datagram::Data(d)));
        let a = Ack {
            largest: 20,
            ack_delay_us: 250,
            ranges: vec![0..=5, 8..=20],
            arrivals: vec![Arrival {
                pn: 20,
                bytes: 1500,
                sent_time: Time(1),
                arrival_time: Time(2),
            }],
        };
        assert_eq!(decode(&a.encode()), Ok(Datagram::Ack(a)));
    }

    #[test]
    fn bad_datagrams_are_errors_not_panics() {
        assert_eq!(decode(&[]), Err(WireError::Short));
        assert_eq!(decode(&[9, 0]), Err(WireError::Kind(9)));
        assert_eq!(decode(&[KIND_DATA, 1, 2]), Err(WireError::Short));
        let overlapping = Ack {
            largest: 20,
            ranges: vec![0..=5, 4..=20],
            ..Ack::default()
        };
        assert_eq!(decode(&overlapping.encode()), Err(WireError::Ranges));
        let above = Ack {
            largest: 3,
            ranges: vec![0..=5],
            ..Ack::default()
        };
        assert_eq!(decode(&above.encode()), Err(WireError::Ranges));
        // Every truncation of a valid ACK is refused.
        let full = Ack {
            largest: 9,
            ranges: vec![0..=9],
            ..Ack::default()
        }
        .encode();
        for n in 0..full.len() {
            assert!(decode(&full[..n]).is_err(), "{n}");
        }
    }
}
