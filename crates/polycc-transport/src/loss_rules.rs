//! Which loss-detection and timeout rules a sender follows: RFC 9002's (the default) or Linux
//! TCP's, each a separate choice.

use polycc::units::Duration;

/// Linux `TCP_RTO_MIN` (`include/net/tcp.h`, HZ/5): the floor of the RTO's variation term
/// (`tcp_rtt_estimator` keeps `rttvar_us` at least `tcp_rto_min_us`).
pub const TCP_RTO_MIN: Duration = Duration::from_millis(200);
/// Linux `TCP_RTO_MAX` (120 s): the backed-off RTO never exceeds it.
pub const TCP_RTO_MAX: Duration = Duration::from_secs(120);
/// Linux `TCP_INIT_CWND` (`include/net/tcp.h`): the initial window, 10 segments (RFC 6928), and
/// the restart window after idle (`tcp_init_cwnd`).
pub const TCP_INIT_CWND: u64 = 10;
/// Linux `TCP_TIMEOUT_MIN_US` (2 ms): what `tcp_schedule_loss_probe` adds to 2·srtt when more
/// than one packet is in flight.
pub const TCP_TIMEOUT_MIN: Duration = Duration::from_millis(2);

/// The sender's loss-detection and timeout rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossRules {
    /// RACK's time rule from the first ACK (RFC 8985; Linux `tcp_recovery = 1`,
    /// `tcp_rack_detect_loss`): a packet sent before an acknowledged one is lost once the latest
    /// RTT plus a reordering window of min_rtt/4 (`tcp_rack_reo_wnd`) has passed since it was
    /// sent, and by the packet threshold of 3 until reordering is seen. `false`: RFC 9002 §6.1,
    /// 9/8 of max(srtt, latest RTT), with RACK's window only once a loss proved spurious.
    pub rack_from_start: bool,
    /// What happens when no ACK comes.
    pub timeouts: Timeouts,
    /// Restart after idle (RFC 5681 §4.1, RFC 2861; Linux `tcp_slow_start_after_idle = 1`): a
    /// sender that sends again after more than a TCP retransmission timeout with nothing in
    /// flight first halves its window once per RTO of the idle time, down to this restart
    /// window in packets (at most the window it had), and keeps at least 3/4 of the old window
    /// as its slow-start threshold (`tcp_cwnd_restart`, `tcp_current_ssthresh`). Only with
    /// [`Timeouts::Tcp`]; `None`: the window survives idle periods (RFC 9002 §7.8 lets QUIC
    /// keep it; Linux exempts controllers with their own `cong_control`, BBR).
    pub idle_restart: Option<u64>,
}

/// What the sender does when ACKs stop coming.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timeouts {
    /// RFC 9002 §6.2: probe timeouts of srtt + max(4·rttvar, 1 ms) + max_ack_delay, backed off,
    /// that send two probes and declare nothing lost; persistent congestion (§7.6) collapses
    /// the window after a long enough run of losses.
    #[default]
    Pto,
    /// Linux TCP: one tail-loss probe after 2·srtt plus 2 ms, or plus `min_rto` with a single
    /// packet in flight (`tcp_schedule_loss_probe`), then the retransmission timeout srtt +
    /// max(4·rttvar, `min_rto`) (`tcp_set_rto`), backed off while it repeats
    /// (`tcp_retransmit_timer`), counted from the last ACK that acknowledged data. An RTO
    /// declares everything in flight lost as persistent congestion: the window collapses and
    /// slow start resends (`tcp_enter_loss`). There is no other persistent-congestion rule.
    Tcp {
        /// Linux `tcp_rto_min` ([`TCP_RTO_MIN`] unless a route sets `rto_min`).
        min_rto: Duration,
    },
}

impl LossRules {
    /// Linux TCP's rules: RACK from the start, tail-loss probe, a 200-ms minimum RTO and the
    /// restart after idle to [`TCP_INIT_CWND`].
    pub fn linux() -> Self {
        LossRules {
            rack_from_start: true,
            timeouts: Timeouts::Tcp {
                min_rto: TCP_RTO_MIN,
            },
            idle_restart: Some(TCP_INIT_CWND),
        }
    }
}
