//! The kernel's `TCP_INFO` for a socket (`include/uapi/linux/tcp.h`), read into a byte buffer
//! and decoded at the field offsets of `libc::tcp_info`, so no layout is typed here by hand.

use std::mem::{offset_of, size_of};
use std::os::fd::{AsFd, AsRawFd};

/// `tcpi_ca_state` values (`enum tcp_ca_state`), named as the flows table's `cc_state`.
const CA_STATES: [&str; 5] = ["open", "disorder", "cwr", "recovery", "loss"];
/// Byte 7 of `tcp_info` holds `tcpi_delivery_rate_app_limited` in its lowest bit (a bitfield
/// `libc::tcp_info` leaves out).
const APP_LIMITED_BYTE: usize = 7;

/// What the emulator reads from `TCP_INFO` (times in µs, rates in bytes/s as the kernel gives).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpInfo {
    pub ca_state: u8,
    pub app_limited: bool,
    pub snd_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub total_retrans: u32,
    pub segs_out: u32,
    pub pacing_rate: u64,
    pub delivery_rate: u64,
    pub bytes_acked: u64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub total_rto: u16,
}

impl TcpInfo {
    /// Reads `TCP_INFO` of a TCP socket.
    pub fn read(socket: &impl AsFd) -> std::io::Result<TcpInfo> {
        let mut buf = [0u8; size_of::<libc::tcp_info>()];
        let mut len = buf.len() as libc::socklen_t;
        // SAFETY: `buf` is a live, writable buffer of `len` bytes for the duration of the call;
        // getsockopt writes at most `len` bytes into it and stores the count in `len`, and the fd
        // is borrowed from an open socket, so the call cannot touch memory we do not own.
        let rc = unsafe {
            libc::getsockopt(
                socket.as_fd().as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self::parse(&buf[..len as usize]))
    }

    /// Decodes the fields present in `b` (an older kernel returns a shorter struct; missing
    /// fields read as zero).
    pub fn parse(b: &[u8]) -> TcpInfo {
        let u8_at = |o: usize| b.get(o).copied().unwrap_or(0);
        let u16_at = |o: usize| {
            b.get(o..o + 2)
                .map_or(0, |s| u16::from_ne_bytes([s[0], s[1]]))
        };
        let u32_at = |o: usize| {
            b.get(o..o + 4)
                .map_or(0, |s| u32::from_ne_bytes(s.try_into().expect("4 bytes")))
        };
        let u64_at = |o: usize| {
            b.get(o..o + 8)
                .map_or(0, |s| u64::from_ne_bytes(s.try_into().expect("8 bytes")))
        };
        macro_rules! at {
            ($read:ident, $field:ident) => {
                $read(offset_of!(libc::tcp_info, $field))
            };
        }
        TcpInfo {
            ca_state: at!(u8_at, tcpi_ca_state),
            app_limited: u8_at(APP_LIMITED_BYTE) & 1 == 1,
            snd_mss: at!(u32_at, tcpi_snd_mss),
            unacked: at!(u32_at, tcpi_unacked),
            sacked: at!(u32_at, tcpi_sacked),
            lost: at!(u32_at, tcpi_lost),
            retrans: at!(u32_at, tcpi_retrans),
            rtt_us: at!(u32_at, tcpi_rtt),
            rttvar_us: at!(u32_at, tcpi_rttvar),
            min_rtt_us: at!(u32_at, tcpi_min_rtt),
            snd_ssthresh: at!(u32_at, tcpi_snd_ssthresh),
            snd_cwnd: at!(u32_at, tcpi_snd_cwnd),
            total_retrans: at!(u32_at, tcpi_total_retrans),
            segs_out: at!(u32_at, tcpi_segs_out),
            pacing_rate: at!(u64_at, tcpi_pacing_rate),
            delivery_rate: at!(u64_at, tcpi_delivery_rate),
            bytes_acked: at!(u64_at, tcpi_bytes_acked),
            bytes_sent: at!(u64_at, tcpi_bytes_sent),
            bytes_retrans: at!(u64_at, tcpi_bytes_retrans),
            dsack_dups: at!(u32_at, tcpi_dsack_dups),
            total_rto: at!(u16_at, tcpi_total_rto),
        }
    }

    /// Bytes in flight as the kernel counts them (`tcp_packets_in_flight`): sent and not
    /// acknowledged, minus SACKed and presumed lost, plus retransmitted, times the MSS.
    pub fn inflight_bytes(&self) -> u64 {
        let packets = (self.unacked as u64 + self.retrans as u64)
            .saturating_sub(self.sacked as u64 + self.lost as u64);
        packets * self.snd_mss as u64
    }

    pub fn cwnd_bytes(&self) -> u64 {
        self.snd_cwnd as u64 * self.snd_mss as u64
    }

    /// The congestion-avoidance state's name.
    pub fn state_name(&self) -> &'static str {
        CA_STATES
            .get(self.ca_state as usize)
            .copied()
            .unwrap_or("unknown")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_at_the_kernel_offsets() {
        let mut b = vec![0u8; size_of::<libc::tcp_info>()];
        let put32 = |b: &mut [u8], o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_snd_cwnd), 10);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_snd_mss), 1448);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_unacked), 7);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_sacked), 2);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_retrans), 1);
        b[offset_of!(libc::tcp_info, tcpi_ca_state)] = 3;
        b[APP_LIMITED_BYTE] = 1;
        let i = TcpInfo::parse(&b);
        assert_eq!(i.cwnd_bytes(), 14480);
        assert_eq!(i.inflight_bytes(), 6 * 1448);
        assert_eq!(i.state_name(), "recovery");
        assert!(i.app_limited);
        // A short (older) struct reads the missing fields as zero.
        let short = TcpInfo::parse(&b[..offset_of!(libc::tcp_info, tcpi_pacing_rate)]);
        assert_eq!((short.snd_cwnd, short.pacing_rate), (10, 0));
    }
}
