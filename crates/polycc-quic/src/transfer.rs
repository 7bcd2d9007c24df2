//! The transfer protocol of the `polycc-quic` endpoints: what the sender writes on one
//! bidirectional stream and how the receiver checks it, with no I/O here.
//!
//! The sender writes segments, each an 8-byte big-endian length then that many bytes of data,
//! and ends with a zero length followed by the trailer: the total data bytes and their
//! [`Checksum`] (8 bytes each). The receiver checksums what it reads and compares at the
//! trailer, so bytes in = bytes out is verified where the bytes arrive, for a sized transfer
//! and for a bulk one whose length the sender learns only when its time is up. The receiver
//! answers with a [`Verdict`] (17 bytes) and the stream ends.

use thiserror::Error;

/// Bytes of a segment header or of each trailer field.
const FIELD: usize = 8;

/// An order-sensitive 64-bit checksum over a byte stream, independent of how the stream is cut
/// into chunks. Each 8-byte little-endian word `w` is mixed as `h = (rotl(h, 5) ^ w) · K`, with
/// K = 2^64/φ (Knuth's multiplicative-hash constant, TAOCP vol. 3 §6.4); the final partial word
/// and the length are mixed in at the end. It catches lost, duplicated, reordered and altered
/// data; it is not a defence against an attacker (TLS is).
#[derive(Clone, Debug)]
pub struct Checksum {
    h: u64,
    partial: [u8; FIELD],
    filled: usize,
    total: u64,
}

/// 2^64 / φ, odd: multiplication by it is a bijection that spreads every input bit.
const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Default for Checksum {
    fn default() -> Self {
        Checksum::new()
    }
}

impl Checksum {
    /// The checksum of nothing so far.
    pub fn new() -> Self {
        Checksum {
            h: 0,
            partial: [0; FIELD],
            filled: 0,
            total: 0,
        }
    }

    #[inline]
    fn mix(&mut self, w: u64) {
        self.h = (self.h.rotate_left(5) ^ w).wrapping_mul(K);
    }

    /// Absorbs `data`, the next bytes of the stream.
    pub fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.filled > 0 {
            let take = (FIELD - self.filled).min(data.len());
            self.partial[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < FIELD {
                return;
            }
            self.mix(u64::from_le_bytes(self.partial));
            self.filled = 0;
        }
        let mut words = data.chunks_exact(FIELD);
        for w in &mut words {
            let mut b = [0; FIELD];
            b.copy_from_slice(w);
            self.mix(u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        self.partial[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    /// Bytes absorbed.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// True before any byte.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The checksum of everything absorbed.
    pub fn value(&self) -> u64 {
        let mut c = self.clone();
        if c.filled > 0 {
            let mut b = [0; FIELD];
            b[..c.filled].copy_from_slice(&c.partial[..c.filled]);
            c.mix(u64::from_le_bytes(b));
        }
        c.mix(c.total);
        c.h
    }
}

/// The checksum of the first `len` bytes of a stream that repeats `chunk` (a sender that writes
/// the same chunk over and over checks a receiver's prefix with it).
pub fn repeated_checksum(chunk: &[u8], len: u64) -> u64 {
    let mut sum = Checksum::new();
    if chunk.is_empty() {
        return sum.value();
    }
    let mut left = len;
    while left > 0 {
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(chunk.len());
        sum.update(&chunk[..n]);
        left -= n as u64;
    }
    sum.value()
}

/// A segment header announcing `len` data bytes (0: the trailer follows).
pub fn segment_header(len: u64) -> [u8; FIELD] {
    len.to_be_bytes()
}

/// The end of a transfer: a zero-length segment header, the byte count and the checksum.
pub fn trailer(sum: &Checksum) -> [u8; 3 * FIELD] {
    let mut t = [0; 3 * FIELD];
    t[FIELD..2 * FIELD].copy_from_slice(&sum.len().to_be_bytes());
    t[2 * FIELD..].copy_from_slice(&sum.value().to_be_bytes());
    t
}

/// The receiver's answer: whether it verified the transfer, and what it received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Bytes in = bytes out and the checksums agree.
    pub ok: bool,
    /// Data bytes the receiver read.
    pub bytes: u64,
    /// Their checksum.
    pub checksum: u64,
}

impl Verdict {
    /// Encoded length.
    pub const LEN: usize = 1 + 2 * FIELD;

    /// The 17 bytes on the wire.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0; Self::LEN];
        b[0] = u8::from(self.ok);
        b[1..1 + FIELD].copy_from_slice(&self.bytes.to_be_bytes());
        b[1 + FIELD..].copy_from_slice(&self.checksum.to_be_bytes());
        b
    }

    /// Reads a verdict; `None` unless exactly [`Verdict::LEN`] bytes of valid content.
    pub fn decode(b: &[u8]) -> Option<Verdict> {
        if b.len() != Self::LEN || b[0] > 1 {
            return None;
        }
        Some(Verdict {
            ok: b[0] == 1,
            bytes: u64::from_be_bytes(b[1..1 + FIELD].try_into().ok()?),
            checksum: u64::from_be_bytes(b[1 + FIELD..].try_into().ok()?),
        })
    }
}

/// What went wrong on the receiving side.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReceiveError {
    /// Bytes after the trailer.
    #[error("{0} bytes after the end of the transfer")]
    TrailingData(usize),
    /// The stream ended before the trailer.
    #[error("the stream ended after {bytes} data bytes, before the end of the transfer")]
    Truncated {
        /// Data bytes read.
        bytes: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Header,
    Data(u64),
    Trailer,
    Done,
}

/// The receiving side's parser: feed it the stream's chunks as they come.
#[derive(Clone, Debug)]
pub struct Receiver {
    phase: Phase,
    field: [u8; 2 * FIELD],
    filled: usize,
    sum: Checksum,
    claimed: Option<(u64, u64)>,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver::new()
    }
}

impl Receiver {
    /// A receiver at the start of a transfer.
    pub fn new() -> Self {
        Receiver {
            phase: Phase::Header,
            field: [0; 2 * FIELD],
            filled: 0,
            sum: Checksum::new(),
            claimed: None,
        }
    }

    /// Data bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.sum.len()
    }

    /// The checksum of the data bytes read so far.
    pub fn checksum(&self) -> u64 {
        self.sum.value()
    }

    /// True once the trailer has been read.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Collects up to `need` bytes of a header field; true when it is complete.
    fn fill(&mut self, data: &mut &[u8], need: usize) -> bool {
        let take = (need - self.filled).min(data.len());
        self.field[self.filled..self.filled + take].copy_from_slice(&data[..take]);
        self.filled += take;
        *data = &data[take..];
        if self.filled == need {
            self.filled = 0;
            true
        } else {
            false
        }
    }

    /// Absorbs the next chunk of the stream.
    pub fn push(&mut self, mut data: &[u8]) -> Result<(), ReceiveError> {
        while !data.is_empty() {
            match self.phase {
                Phase::Header => {
                    if self.fill(&mut data, FIELD) {
                        let len = u64::from_be_bytes(
                            self.field[..FIELD].try_into().unwrap_or([0; FIELD]),
                        );
                        self.phase = if len == 0 {
                            Phase::Trailer
                        } else {
                            Phase::Data(len)
                        };
                    }
                }
                Phase::Data(left) => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
                    self.sum.update(&data[..n]);
                    data = &data[n..];
                    let left = left - n as u64;
                    self.phase = if left == 0 {
                        Phase::Header
                    } else {
                        Phase::Data(left)
                    };
                }
                Phase::Trailer => {
                    if self.fill(&mut data, 2 * FIELD) {
                        let f = |r: std::ops::Range<usize>| {
                            u64::from_be_bytes(self.field[r].try_into().unwrap_or([0; FIELD]))
                        };
                        self.claimed = Some((f(0..FIELD), f(FIELD..2 * FIELD)));
                        self.phase = Phase::Done;
                    }
                }
                Phase::Done => return Err(ReceiveError::TrailingData(data.len())),
            }
        }
        Ok(())
    }

    /// The verdict at the end of the stream.
    pub fn finish(&self) -> Result<Verdict, ReceiveError> {
        let Some((bytes, checksum)) = self.claimed else {
            return Err(ReceiveError::Truncated {
                bytes: self.sum.len(),
            });
        };
        let ours = (self.sum.len(), self.sum.value());
        Ok(Verdict {
            ok: ours == (bytes, checksum),
            bytes: ours.0,
            checksum: ours.1,
        })
    }
}

/// A buffer of `len` pseudo-random bytes (xorshift64*, Vigna 2016), the data a sender repeats:
/// content that changes within a segment, so a misplaced chunk changes the checksum.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + FIELD);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receivers_prefix_of_a_repeated_chunk_is_checked_against_the_sender() {
        let chunk = pattern(1000, 7);
        // The receiver read 2 500 bytes of segments of the chunk, in uneven pieces.
        let mut wire = Vec::new();
        for _ in 0..3 {
            wire.extend_from_slice(&segment_header(chunk.len() as u64));
            wire.extend_from_slice(&chunk);
        }
        let mut rx = Receiver::new();
        let cut = 3 * FIELD + 2500;
        for piece in wire[..cut].chunks(333) {
            rx.push(piece).expect("well-formed");
        }
        assert_eq!(rx.bytes(), 2500);
        assert_eq!(repeated_checksum(&chunk, 2500), rx.checksum());
        assert_ne!(repeated_checksum(&chunk, 2499), rx.checksum());
        // A corrupted byte shows.
        let mut bad = Receiver::new();
        let mut w = wire[..cut].to_vec();
        w[FIELD + 10] ^= 1;
        bad.push(&w).expect("well-formed");
        assert_ne!(repeated_checksum(&chunk, 2500), bad.checksum());
        assert_eq!(repeated_checksum(&[], 10), Checksum::new().value());
    }

    /// A sender's bytes for `segments` of data, ending with the trailer.
    fn wire(segments: &[&[u8]]) -> (Vec<u8>, Checksum) {
        let mut w = Vec::new();
        let mut sum = Checksum::new();
        for s in segments {
            w.extend_from_slice(&segment_header(s.len() as u64));
            w.extend_from_slice(s);
            sum.update(s);
        }
        w.extend_from_slice(&trailer(&sum));
        (w, sum)
    }

    #[test]
    fn the_checksum_ignores_chunking_and_sees_order_and_length() {
        let data = pattern(1000, 7);
        let mut whole = Checksum::new();
        whole.update(&data);
        for cut in [1, 3, 7, 8, 9, 333] {
            let mut c = Checksum::new();
            for chunk in data.chunks(cut) {
                c.update(chunk);
            }
            assert_eq!(c.value(), whole.value(), "cut {cut}");
            assert_eq!(c.len(), 1000);
        }
        let mut swapped = data.clone();
        swapped.swap(10, 500);
        let mut c = Checksum::new();
        c.update(&swapped);
        assert_ne!(c.value(), whole.value());
        // A trailing zero byte changes the length and so the value.
        let mut longer = Checksum::new();
        longer.update(&data);
        longer.update(&[0]);
        assert_ne!(longer.value(), whole.value());
    }

    #[test]
    fn a_receiver_verifies_any_cut_of_the_stream() {
        let a = pattern(70_000, 1);
        let b = pattern(123, 2);
        let (w, sum) = wire(&[&a, &b]);
        for cut in [1, 5, 8, 24, 1000, w.len()] {
            let mut r = Receiver::new();
            for chunk in w.chunks(cut) {
                r.push(chunk).expect("well-formed");
            }
            assert!(r.is_done());
            let v = r.finish().expect("complete");
            assert_eq!(
                v,
                Verdict {
                    ok: true,
                    bytes: 70_123,
                    checksum: sum.value()
                }
            );
            assert_eq!(Verdict::decode(&v.encode()), Some(v));
        }
    }

    #[test]
    fn altered_truncated_and_overlong_streams_are_caught() {
        let a = pattern(5000, 3);
        let (mut w, _) = wire(&[&a]);
        w[100] ^= 1;
        let mut r = Receiver::new();
        r.push(&w).expect("well-formed");
        assert!(!r.finish().expect("complete").ok);

        let (w, _) = wire(&[&a]);
        let mut r = Receiver::new();
        r.push(&w[..4000]).expect("a prefix");
        assert_eq!(r.finish(), Err(ReceiveError::Truncated { bytes: 3992 }));

        let mut r = Receiver::new();
        r.push(&w).expect("well-formed");
        assert_eq!(r.push(&[1, 2]), Err(ReceiveError::TrailingData(2)));
        assert_eq!(Verdict::decode(&[2; Verdict::LEN]), None);
    }
}
