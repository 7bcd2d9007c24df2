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
    /// The path MTU: the size on the wire of a full segment (IP and TCP headers and options
    /// included), which `snd_mss` is the payload of.
    pub pmtu: u32,
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

/// Reads the TCP-level socket option `option` into `buf`; returns the bytes the kernel wrote.
fn tcp_option(socket: &impl AsFd, option: libc::c_int, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is a live, writable buffer of `len` bytes for the duration of the call;
    // getsockopt writes at most `len` bytes into it and stores the count in `len`, and the fd
    // is borrowed from an open socket, so the call cannot touch memory we do not own.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            option,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((len as usize).min(buf.len()))
}

impl TcpInfo {
    /// Reads `TCP_INFO` of a TCP socket.
    pub fn read(socket: &impl AsFd) -> std::io::Result<TcpInfo> {
        let mut buf = [0u8; size_of::<libc::tcp_info>()];
        let len = tcp_option(socket, libc::TCP_INFO, &mut buf)?;
        Ok(Self::parse(&buf[..len]))
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
            pmtu: at!(u32_at, tcpi_pmtu),
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
        self.inflight_packets() * self.snd_mss as u64
    }

    /// The same packets counted as IP packets of a full segment each (`pmtu` bytes), the
    /// simulator's unit: a BDP of the link's rate is in these bytes. Payload bytes when the
    /// kernel reports no path MTU.
    pub fn inflight_wire_bytes(&self) -> u64 {
        self.inflight_packets() * self.pmtu.max(self.snd_mss) as u64
    }

    fn inflight_packets(&self) -> u64 {
        (self.unacked as u64 + self.retrans as u64)
            .saturating_sub(self.sacked as u64 + self.lost as u64)
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

/// `TCP_CC_INFO` of a socket whose controller is the kernel's `bbr` (`struct tcp_bbr_info`,
/// `include/uapi/linux/inet_diag.h`): five native-endian u32, the bandwidth split in two.
const BBR_INFO_BYTES: usize = 20;
/// The kernel's gains are fixed point with 8 fractional bits (`BBR_SCALE`, `tcp_bbr.c`).
const BBR_UNIT: f64 = 256.0;

/// BBR's window in ProbeRTT, packets (`bbr_cwnd_min_target`, `tcp_bbr.c`).
const PROBE_RTT_CWND: u32 = 4;

/// What Linux's BBR (v1, `tcp_bbr.c`) tells of its model through `TCP_CC_INFO`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrInfo {
    /// The max-filtered bottleneck bandwidth, bytes/s.
    pub bw: u64,
    /// BBR's own min RTT filter (10 s window), µs.
    pub min_rtt_us: u32,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
}

impl BbrInfo {
    /// Reads `TCP_CC_INFO`; None when the socket's controller is not BBR (the kernel then
    /// fills another member of `union tcp_cc_info`, or nothing).
    pub fn read(socket: &impl AsFd) -> Option<BbrInfo> {
        let mut buf = [0u8; 64];
        let len = tcp_option(socket, libc::TCP_CC_INFO, &mut buf).ok()?;
        Self::parse(&buf[..len])
    }

    pub fn parse(b: &[u8]) -> Option<BbrInfo> {
        if b.len() < BBR_INFO_BYTES {
            return None;
        }
        let u = |i: usize| u32::from_ne_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        Some(BbrInfo {
            bw: u64::from(u(0)) | (u64::from(u(1)) << 32),
            min_rtt_us: u(2),
            pacing_gain: f64::from(u(3)) / BBR_UNIT,
            cwnd_gain: f64::from(u(4)) / BBR_UNIT,
        })
    }

    /// The BBR mode, named as polycc's `bbr` names it, read from the gains `bbr_update_gains`
    /// sets in each mode: Startup both at the high gain (2.885), Drain a pacing gain below 1
    /// under the high cwnd gain, ProbeRTT both at 1, ProbeBW the cwnd gain 2 with the pacing
    /// cycle's gain. Both gains read 1 also before the first ACK has run BBR's model (the
    /// connection is in Startup then, with its initial window); ProbeRTT is told apart by its
    /// window, which the same ACK cut to 4 packets (`bbr_cwnd_min_target`, `bbr_set_cwnd`).
    pub fn mode(&self, cwnd_packets: u32) -> &'static str {
        if self.cwnd_gain <= 1.0 {
            if cwnd_packets <= PROBE_RTT_CWND {
                "probe_rtt"
            } else {
                "startup"
            }
        } else if self.cwnd_gain > 2.0 {
            if self.pacing_gain < 1.0 {
                "drain"
            } else {
                "startup"
            }
        } else {
            "probe_bw"
        }
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
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_pmtu), 1500);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_unacked), 7);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_sacked), 2);
        put32(&mut b, offset_of!(libc::tcp_info, tcpi_retrans), 1);
        b[offset_of!(libc::tcp_info, tcpi_ca_state)] = 3;
        b[APP_LIMITED_BYTE] = 1;
        let i = TcpInfo::parse(&b);
        assert_eq!(i.cwnd_bytes(), 14480);
        assert_eq!(i.inflight_bytes(), 6 * 1448);
        assert_eq!(i.inflight_wire_bytes(), 6 * 1500);
        assert_eq!(i.state_name(), "recovery");
        assert!(i.app_limited);
        // A short (older) struct reads the missing fields as zero.
        let short = TcpInfo::parse(&b[..offset_of!(libc::tcp_info, tcpi_pacing_rate)]);
        assert_eq!((short.snd_cwnd, short.pacing_rate), (10, 0));
    }

    #[test]
    fn bbr_info_is_decoded_and_its_mode_read_from_the_gains() {
        let info = |words: [u32; 5]| {
            let b: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
            BbrInfo::parse(&b).expect("20 bytes")
        };
        // tcp_bbr.c: high gain 739/256 (2/ln 2), drain 88/256, cwnd gain 512/256.
        let startup = info([1_250_000, 1, 40_123, 739, 739]);
        assert_eq!(startup.bw, 1_250_000 + (1 << 32));
        assert_eq!(startup.min_rtt_us, 40_123);
        assert!((startup.pacing_gain - 2.887).abs() < 1e-3);
        assert_eq!(startup.mode(10), "startup");
        assert_eq!(info([0, 0, 0, 88, 739]).mode(30), "drain");
        for gain in [320, 192, 256] {
            assert_eq!(info([0, 0, 0, gain, 512]).mode(30), "probe_bw");
        }
        assert_eq!(info([0, 0, 0, 256, 256]).mode(4), "probe_rtt");
        // Before the first ACK: unit gains, the initial window.
        assert_eq!(info([0, 0, 0, 256, 256]).mode(10), "startup");
        // Another controller's info (Vegas's is 16 bytes) or none is not BBR's.
        assert!(BbrInfo::parse(&[0u8; 16]).is_none());
    }
}
