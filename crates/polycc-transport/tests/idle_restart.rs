//! Restart after idle (`LossRules::idle_restart`, Linux `tcp_cwnd_restart`): a TCP sender silent
//! for longer than its RTO halves its window once per RTO of the silence, down to the restart
//! window; shorter pauses, and senders without the rule, keep their window.

mod common;

use common::*;
use polycc::registry::{CcSpec, Registry};
use polycc::CcContext;

/// NewReno with a 10-packet initial window, on a Linux-rules sender (`idle_restart` as given).
fn reno_sender(idle_restart: Option<u64>) -> Sender<u64> {
    let ctx = CcContext {
        initial_cwnd: 10 * MSS,
        ..CcContext::new(MSS)
    };
    let cc = Registry::standard()
        .build(&CcSpec::named("newreno"), &ctx)
        .expect("newreno");
    let mut s = Sender::new(cc, config());
    s.set_loss_rules(LossRules {
        idle_restart,
        ..LossRules::linux()
    });
    s
}

/// Two slow-start rounds of 100 ms: 10 packets, then 20; the window ends at 40 packets, with
/// srtt 100 ms and rttvar 50 ms at the last ACK (1200 ms), so the RTO is 100 + max(200, 200)
/// = 300 ms.
fn grown(idle_restart: Option<u64>) -> Sender<u64> {
    let mut s = reno_sender(idle_restart);
    send(&mut s, ms(1000), 10);
    ack(&mut s, ms(1100), &[0..=9], 9, &[]);
    send(&mut s, ms(1100), 20);
    ack(&mut s, ms(1200), &[0..=29], 29, &[]);
    assert_eq!(s.controller().cwnd(), 40 * MSS);
    assert_eq!(s.in_flight(), 0);
    s
}

#[test]
fn the_window_halves_once_per_rto_of_silence_down_to_the_restart_window() {
    // Silent from 1100 ms (the last send) to 1350: 250 ms, under an RTO: the window stays.
    let mut s = grown(Some(10));
    send(&mut s, ms(1350), 1);
    assert_eq!(s.controller().cwnd(), 40 * MSS);

    // 500 ms: one RTO passed, and 200 ms more: halved once.
    let mut s = grown(Some(10));
    let threshold = s.controller().ssthresh();
    send(&mut s, ms(1600), 1);
    assert_eq!(s.controller().cwnd(), 20 * MSS);
    // NewReno has not set a threshold (no loss yet): it stays unset, slow start goes on.
    assert_eq!(s.controller().ssthresh(), threshold);
    assert!(s.controller().in_slow_start());

    // 700 ms: halved twice, 40 → 20 → 10 packets, the restart window.
    let mut s = grown(Some(10));
    send(&mut s, ms(1800), 1);
    assert_eq!(s.controller().cwnd(), 10 * MSS);

    // 5 s: never below the restart window.
    let mut s = grown(Some(10));
    send(&mut s, ms(6100), 1);
    assert_eq!(s.controller().cwnd(), 10 * MSS);
}

#[test]
fn a_threshold_below_three_quarters_of_the_old_window_is_raised_to_it() {
    let mut s = grown(Some(10));
    // A loss halves NewReno to 20 packets, its threshold too; recovery ends with the next ACK
    // of a packet sent after it.
    send(&mut s, ms(1200), 20);
    ack(&mut s, ms(1300), &[30..=30, 34..=49], 49, &[]);
    let (cwnd, threshold) = (s.controller().cwnd(), s.controller().ssthresh());
    assert_eq!((cwnd, threshold), (20 * MSS, Some(20 * MSS)));
    ack(&mut s, ms(1300), &[30..=49], 49, &[]);
    // Congestion avoidance, one packet more per round of 100 ms, to above 4/3 of the threshold.
    let mut t = 1300;
    while s.controller().cwnd() <= 27 * MSS {
        let (first, n) = (s.next_pn(), s.controller().cwnd() / MSS);
        send(&mut s, ms(t), n);
        t += 100;
        ack(&mut s, ms(t), &[30..=first + n - 1], first + n - 1, &[]);
    }
    let cwnd = s.controller().cwnd();
    assert_eq!(s.controller().ssthresh(), Some(20 * MSS));
    assert_eq!(s.in_flight(), 0);
    // Silent for 2 s: the window falls to the restart window, the threshold rises to 3/4 of
    // the window it had.
    send(&mut s, ms(t + 2000), 1);
    assert_eq!(s.controller().cwnd(), 10 * MSS);
    assert_eq!(s.controller().ssthresh(), Some(cwnd / 2 + cwnd / 4));
}

#[test]
fn without_the_rule_the_window_survives_any_silence() {
    let mut s = grown(None);
    send(&mut s, ms(6100), 1);
    assert_eq!(s.controller().cwnd(), 40 * MSS);
}
