//! The Linux receiver's window as it opens (`net/ipv4/tcp_input.c` `tcp_grow_window`,
//! `tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`, `tcp_rcv_rtt_update`; kernel 6.18): what decides
//! how often a Linux receiver acknowledges while its window grows.
//!
//! The window the receiver may advertise, `rcv_ssthresh`, grows by two segments per arriving
//! segment up to `window_clamp`, and every segment that grows it is acknowledged at once
//! (`tcp_grow_window` sets `icsk_ack.quick |= 1`). `window_clamp` follows the receive buffer,
//! which dynamic right-sizing (DRS) raises once per receiver-measured RTT from what the
//! application read in that RTT. So early in a connection, and again whenever the flow's rate
//! or RTT grows past what DRS last sized, the receiver acknowledges every segment instead of
//! every second one. Measured on this kernel (`ss -ti` and `/proc/net/snmp` in the receiver's
//! namespace, cubic, 10 Mbit/s, 20 ms, 4 BDP): `rcv_ssthresh` 64 088, then 80 480 (the first
//! cap) after a few segments, 151 257 from about the 65th (DRS's first raise); one ACK per
//! segment up to there, one per two after. The model stops at the same caps (tests below), and
//! with it the Linux model's HyStart leaves slow start where the kernel's did
//! (`tests/linux_stack.rs`).
//!
//! The window is not enforced on the sender: DRS sizes it at two or more RTTs' worth of what
//! was read, above what a congestion window fills, so in the runs modelled it never limits.

use polycc::units::{Duration, Time};

/// `rcv_ssthresh` at the first data segment: Linux's initial receive window for the default
/// `tcp_rmem[1]` ("SYN rwin around 64KB", commit a337531b942b), read on this kernel with
/// `ss -ti`.
pub const INITIAL_RCV_SSTHRESH: u64 = 64_088;
/// `tcp_rmem[1]`: the receive buffer a socket starts with.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`: the largest receive buffer autotuning may reach (32 MB since 6.18, commit
/// 572be9bf9d0d).
pub const RMEM_MAX: u64 = 33_554_432;
/// The memory an arriving full-sized segment is charged (`skb->truesize`) on the emulator's TUN
/// path. With [`SCALING_RATIO`] it gives every cap `rcv_ssthresh` was seen to stop at with
/// `ss -ti`: 80 480, 151 257 and 169 950 are `tcp_space` with one such segment held, for
/// buffers of 131 072 and of DRS's 152 698- and 171 390-byte windows.
pub const SEGMENT_TRUESIZE: u64 = 2304;
/// `scaling_ratio` / 256: the share of the receive buffer's memory that is payload
/// (`tcp_win_from_space`); the kernel measures it from arriving segments as
/// `len * 256 / truesize`, 1 448 * 256 / 2 304 → 160.
pub const SCALING_RATIO: (u64, u64) = (160, 256);
/// `TCP_INIT_CWND`: `rcvq_space.space` starts at ten segments (`tcp_init_buffer_space`).
const INITIAL_SPACE_SEGMENTS: u64 = 10;

fn win_from_space(space: u64) -> u64 {
    space * SCALING_RATIO.0 / SCALING_RATIO.1
}

fn space_from_win(win: u64) -> u64 {
    win * SCALING_RATIO.1 / SCALING_RATIO.0
}

/// The receive-window state of one connection's receiver.
#[derive(Clone, Debug)]
pub struct ReceiveWindow {
    mss: u64,
    /// Reverse path's one-way delay: the receiver's RTT sample is the data's one-way delay
    /// plus this, as the timestamp echo gives it (see [`ReceiveWindow::on_segment`]).
    reverse_owd: Duration,
    rcv_ssthresh: u64,
    rcvbuf: u64,
    window_clamp: u64,
    /// `rcvq_space`: bytes read in the last measured RTT, and where and when it started.
    space: u64,
    space_seq: u64,
    space_time: Option<Time>,
    /// `rcv_rtt_est`; `None` before the first sample.
    rcv_rtt: Option<Duration>,
}

impl ReceiveWindow {
    pub fn new(mss: u64, reverse_owd: Duration) -> Self {
        ReceiveWindow {
            mss,
            reverse_owd,
            rcv_ssthresh: INITIAL_RCV_SSTHRESH,
            rcvbuf: RMEM_DEFAULT,
            window_clamp: win_from_space(RMEM_DEFAULT),
            space: INITIAL_SPACE_SEGMENTS * mss,
            space_seq: 0,
            space_time: None,
            rcv_rtt: None,
        }
    }

    /// A data segment of `bytes` payload sent at `sent` arrived at `now`. Takes the receiver's
    /// RTT sample and grows the window (`tcp_grow_window`); returns whether it grew, in which
    /// case the kernel acknowledges this segment at once.
    ///
    /// The kernel's sample is the time since the receiver sent the ACK whose timestamp the
    /// segment echoes; here it is the segment's one-way delay plus the reverse path's, which
    /// differs only by the time the sender held the segment after that ACK arrived.
    pub fn on_segment(&mut self, now: Time, sent: Time, bytes: u64) -> bool {
        if bytes >= self.mss {
            self.rtt_sample((now - sent) + self.reverse_owd);
        }
        // `min(window_clamp, tcp_space)`, the free space counted with this segment held.
        let space = win_from_space(self.rcvbuf.saturating_sub(SEGMENT_TRUESIZE));
        let room = self
            .window_clamp
            .min(space)
            .saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        // `incr = max(2 * advmss, 2 * len)`: a full-sized segment's truesize fits the ratio.
        self.rcv_ssthresh += room.min(2 * self.mss.max(bytes));
        true
    }

    /// The receiver's RTT estimate (`rcv_rtt_est`), once it has a sample.
    pub fn rtt(&self) -> Option<Duration> {
        self.rcv_rtt
    }

    /// `tcp_rcv_rtt_update` since 6.16: a smaller sample is taken at once, a larger one by 1/8.
    fn rtt_sample(&mut self, sample: Duration) {
        if sample.0 == 0 {
            return;
        }
        self.rcv_rtt = Some(match self.rcv_rtt {
            Some(old) if sample.0 >= old.0 => Duration(old.0 - old.0 / 8 + sample.0 / 8),
            _ => sample,
        });
    }

    /// The application has read `copied` bytes in all at `now` (`tcp_rcv_space_adjust`, run
    /// from `recvmsg`): once per receiver RTT the buffer is sized from what was read in it.
    pub fn on_read(&mut self, now: Time, copied: u64) {
        let Some(rtt) = self.rcv_rtt else { return };
        let start = *self.space_time.get_or_insert(now);
        if now - start < rtt {
            return;
        }
        let read = copied - self.space_seq;
        if read > self.space {
            self.grow_buffer(read);
        }
        self.space_seq = copied;
        self.space_time = Some(now);
    }

    /// `tcp_rcvbuf_grow`: room for twice what was read in an RTT, plus twice the growth over
    /// the RTT before ("DRS is always one RTT late"; slow start doubles the rate).
    fn grow_buffer(&mut self, read: u64) {
        let old = self.space;
        self.space = read;
        let mut rcvwin = 2 * read;
        rcvwin += 2 * (rcvwin * (read - old) / old);
        let rcvbuf = space_from_win(rcvwin).min(RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(rcvbuf);
        }
    }

    /// The window the receiver advertises at most (for tests and telemetry).
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn ms(x: f64) -> Time {
        Time::ZERO + Duration::from_secs_f64(x / 1e3)
    }

    #[test]
    fn the_first_segments_open_the_window_to_the_first_clamp() {
        let mut w = ReceiveWindow::new(MSS, Duration::from_millis(10));
        let grew: Vec<bool> = (0..8)
            .map(|i| w.on_segment(ms(20.0 + i as f64), ms(10.0 + i as f64), MSS))
            .collect();
        // 64 088 + 5 × 2 896 = 78 568, the sixth reaches the cap (80 480), then no room.
        assert_eq!(grew, [true, true, true, true, true, true, false, false]);
        assert_eq!(w.rcv_ssthresh(), 80_480);
    }

    #[test]
    fn drs_raises_the_clamp_from_what_was_read_in_an_rtt() {
        let mut w = ReceiveWindow::new(MSS, Duration::from_millis(10));
        // RTT samples of 20 ms; reads of 11, then 20 segments per RTT.
        w.on_segment(ms(20.0), ms(10.0), MSS);
        w.on_read(ms(20.0), MSS);
        w.on_read(ms(40.0), 11 * MSS);
        // 11 segments read against a space of 10: rcvwin = 31 856 + 2 × 3 185, below the
        // first clamp (81 920), which stays.
        assert_eq!(w.window_clamp(), 81_920);
        w.on_read(ms(60.0), 31 * MSS);
        // 20 segments (28 960) against 11 (15 928): rcvwin = 57 920 + 2 × 47 389 = 152 698,
        // and the window then opens to the kernel's 151 257 (one segment's memory held).
        assert_eq!(w.window_clamp(), 152_697);
        while w.on_segment(ms(60.0), ms(50.0), MSS) {}
        assert_eq!(w.rcv_ssthresh(), 151_257);
    }

    #[test]
    fn the_rtt_estimate_latches_a_smaller_sample_and_follows_a_larger_by_an_eighth() {
        let mut w = ReceiveWindow::new(MSS, Duration::ZERO);
        w.rtt_sample(Duration::from_millis(40));
        w.rtt_sample(Duration::from_millis(20));
        assert_eq!(w.rcv_rtt, Some(Duration::from_millis(20)));
        w.rtt_sample(Duration::from_millis(100));
        assert_eq!(w.rcv_rtt, Some(Duration::from_millis(30)));
    }
}
