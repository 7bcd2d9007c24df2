//! The link service process against analytic values: schedules (steps, ramps, zero-rate gaps)
//! and mahimahi traces (byte-granular sharing, lost opportunities, looping, a real trace).

use polycc::units::{Duration, Rate, Time};
use polycc_sim::scenario::spec::Capacity;
use polycc_sim::service::Server;
use polycc_sim::trace;
use rand::{Rng, SeedableRng};
use std::path::Path;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn schedule(points: &[(u64, u64, bool)]) -> Server {
    Server::new(Capacity::Schedule(
        points
            .iter()
            .map(|&(at_ns, bps, ramp)| (Duration(at_ns), Rate(bps), ramp))
            .collect(),
    ))
}

fn trace_server(text: &str) -> Server {
    let (opportunities_ms, period_ms) = trace::parse_mahimahi(text).unwrap();
    Server::new(Capacity::Trace {
        opportunities_ms,
        period_ms,
        bytes_per_opportunity: trace::MAHIMAHI_OPPORTUNITY_BYTES,
    })
}

/// `fin` is the earliest time by which `bytes` are offered from `start`: exactly what `serve`
/// promises on a schedule.
fn assert_exact_finish(s: &Server, start: Time, bytes: u64, fin: Time) {
    assert!(
        s.offered_bytes(start, fin) >= bytes,
        "{bytes} B from {start:?} not offered by {fin:?}"
    );
    assert!(
        s.offered_bytes(start, Time(fin.0 - 1)) < bytes,
        "{bytes} B from {start:?} already offered before {fin:?}"
    );
}

#[test]
fn constant_rate() {
    let mut s = Server::new(Capacity::Constant(Rate::from_mbps(12)));
    assert_eq!(s.serve(Time(0), 1500), Time(MS));
    assert_eq!(s.offered_bytes(Time(0), Time(10 * S)), 15_000_000);
    assert_eq!(s.rate_at(Time(7)), Rate::from_mbps(12));
}

#[test]
fn schedule_step_finish_times_across_the_step() {
    // 20 Mbit/s, then 10 Mbit/s from 5 s.
    let mut s = schedule(&[(0, 20_000_000, false), (5 * S, 10_000_000, false)]);
    // 1500 B = 12 000 bit: 600 us at 20 Mbit/s, 1200 us at 10 Mbit/s.
    assert_eq!(s.serve(Time(0), 1500), Time(600 * US));
    assert_eq!(s.serve(Time(5 * S), 1500), Time(5 * S + 1200 * US));
    // Starting 300 us before the step: 750 B at 20 Mbit/s, the other 750 B take 600 us after.
    assert_eq!(
        s.serve(Time(5 * S - 300 * US), 1500),
        Time(5 * S + 600 * US)
    );
    // 5 s at 20 + 5 s at 10 Mbit/s = 150 Mbit.
    assert_eq!(s.offered_bytes(Time(0), Time(10 * S)), 18_750_000);
    assert_eq!(s.offered_bytes(Time(4 * S), Time(6 * S)), 3_750_000);
    assert_eq!(s.rate_at(Time(5 * S - 1)), Rate::from_mbps(20));
    assert_eq!(s.rate_at(Time(5 * S)), Rate::from_mbps(10));
}

#[test]
fn ramp_integrates_to_the_trapezoid_area() {
    // Linear 10 -> 20 Mbit/s over [0, 10 s], then 20 Mbit/s.
    let mut s = schedule(&[(0, 10_000_000, false), (10 * S, 20_000_000, true)]);
    assert_eq!(s.offered_bytes(Time(0), Time(10 * S)), 18_750_000); // mean 15 Mbit/s
    assert_eq!(s.offered_bytes(Time(2 * S), Time(4 * S)), 3_250_000); // mean 13 Mbit/s
    assert_eq!(s.offered_bytes(Time(9 * S), Time(11 * S)), 4_937_500); // 19.5 + 20 Mbit
    assert_eq!(s.rate_at(Time(5 * S)), Rate::from_mbps(15));
    // 10 Mbit/s · 2 s + 0.5 · 1 Mbit/s² · (2 s)² = 22 Mbit = 2.75 MB: done at exactly 2 s.
    assert_eq!(s.serve(Time(0), 2_750_000), Time(2 * S));
    assert_eq!(s.serve(Time(2 * S), 3_250_000), Time(4 * S));
    // Across the end of the ramp: 19.5 Mbit in [9 s, 10 s), 20 Mbit/s after.
    assert_eq!(s.serve(Time(9 * S), 2_437_500 + 2_500_000), Time(11 * S));
    // Single packets inside the ramp finish at the earliest nanosecond that covers them.
    for start in [0, 1, 3 * S + 12_345, 7 * S, 10 * S - 50 * US] {
        let fin = s.serve(Time(start), 1500);
        assert_exact_finish(&s, Time(start), 1500, fin);
    }
}

#[test]
fn decreasing_ramp_to_zero_runs_dry() {
    // 10 -> 0 Mbit/s over 1 s: 5 Mbit = 625 000 B in total, then nothing forever.
    let mut s = schedule(&[(0, 10_000_000, false), (S, 0, true)]);
    assert_eq!(s.serve(Time(0), 625_000), Time(S));
    assert_eq!(s.serve(Time(0), 625_001), Time::MAX);
    assert_eq!(s.serve(Time(2 * S), 1), Time::MAX);
    assert_eq!(s.offered_bytes(Time(0), Time(100 * S)), 625_000);
}

#[test]
fn zero_rate_gap_makes_a_packet_wait() {
    // 10 Mbit/s, off during [1 s, 2 s), then 10 Mbit/s again.
    let mut s = schedule(&[
        (0, 10_000_000, false),
        (S, 0, false),
        (2 * S, 10_000_000, false),
    ]);
    // 500 us before the gap: 625 B fit, the remaining 875 B take 700 us after it.
    assert_eq!(s.serve(Time(S - 500 * US), 1500), Time(2 * S + 700 * US));
    assert_eq!(s.serve(Time(S + 1), 1500), Time(2 * S + 1200 * US));
}

#[test]
fn random_schedules_finish_exactly_when_capacity_suffices() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    for _ in 0..20 {
        let mut points = vec![(0, rng.gen_range(0..50_000_000u64), false)];
        let mut at = 0;
        for _ in 0..8 {
            at += rng.gen_range(1..500 * MS);
            let rate = if rng.gen_bool(0.2) {
                0
            } else {
                rng.gen_range(1..50_000_000)
            };
            points.push((at, rate, rng.gen_bool(0.5)));
        }
        points.push((at + 1, 1_000_000, false)); // never runs dry
        let mut s = schedule(&points);
        for _ in 0..50 {
            let start = Time(rng.gen_range(0..at + S));
            let bytes = rng.gen_range(1..200_000);
            let fin = s.serve(start, bytes);
            assert_exact_finish(&s, start, bytes, fin);
        }
    }
}

#[test]
fn trace_of_one_line_is_a_constant_12_mbit_link() {
    let mut s = trace_server("1\n");
    // Opportunities at 1, 2, 3, ... ms. [0, 10 s) misses the one at exactly 10 s; any 10 s
    // window not starting at 0 holds 10 000.
    assert_eq!(s.offered_bytes(Time(0), Time(10 * S)), 9_999 * 1500);
    assert_eq!(s.offered_bytes(Time(MS), Time(10 * S + MS)), 10_000 * 1500);
    assert_eq!(
        s.offered_bytes(Time(3 * S + 1), Time(13 * S + 1)),
        10_000 * 1500
    );
    // Back-to-back full packets: the n-th departs at n ms, i.e. 12 Mbit/s.
    let mut now = Time(0);
    for n in 1..=10_000u64 {
        now = s.serve(now, 1500);
        assert_eq!(now, Time(n * MS));
    }
    assert_eq!(s.rate_at(Time(5 * S + 1)), Rate::from_mbps(12));
}

#[test]
fn trace_opportunity_is_byte_granular() {
    let mut s = trace_server("1\n");
    // Two 750-byte packets share the opportunity at 1 ms; the third needs the next one.
    assert_eq!(s.serve(Time(0), 750), Time(MS));
    assert_eq!(s.serve(Time(MS), 750), Time(MS));
    assert_eq!(s.serve(Time(MS), 750), Time(2 * MS));
    // A packet spans opportunities: 750 B left at 2 ms plus 1500 B at 3 ms and 250 B at 4 ms.
    assert_eq!(s.serve(Time(2 * MS), 2500), Time(4 * MS));
    assert_eq!(s.serve(Time(4 * MS), 1250), Time(4 * MS)); // exactly the 1250 B left
    assert_eq!(s.serve(Time(4 * MS), 1), Time(5 * MS));
}

#[test]
fn trace_unused_opportunities_are_lost() {
    let mut s = trace_server("1\n");
    // Leaves 500 B at 1 ms.
    assert_eq!(s.serve(Time(0), 1000), Time(MS));
    // The next packet arrives after the 1 ms opportunity: its 500 B are gone, and so are the
    // opportunities at 2..=10 ms that nobody used.
    assert_eq!(s.serve(Time(10 * MS + 1), 3000), Time(12 * MS));
    // An opportunity at exactly the start time is usable.
    assert_eq!(s.serve(Time(20 * MS), 1500), Time(20 * MS));
}

#[test]
fn trace_repeated_timestamps_are_several_opportunities() {
    let mut s = trace_server("2\n2\n2\n5\n");
    assert_eq!(s.serve(Time(0), 4500), Time(2 * MS));
    assert_eq!(s.serve(Time(2 * MS), 100), Time(5 * MS));
    assert_eq!(s.offered_bytes(Time(0), Time(5 * MS)), 3 * 1500);
    assert_eq!(s.rate_at(Time(2 * MS + 5)), Rate::from_mbps(36));
}

#[test]
fn trace_loops_with_the_last_timestamp_as_period() {
    // Opportunities at 2, 5 | 7, 10 | 12, 15 | 17, 20 | ... ms.
    let mut s = trace_server("2\n5\n");
    assert_eq!(s.offered_bytes(Time(0), Time(20 * MS)), 7 * 1500);
    assert_eq!(s.offered_bytes(Time(0), Time(20 * MS + 1)), 8 * 1500);
    assert_eq!(s.serve(Time(0), 6000), Time(10 * MS));
    // Far into the run: 1000 ms is loop 199's second opportunity.
    assert_eq!(s.serve(Time(1000 * MS), 1500), Time(1000 * MS));
    assert_eq!(s.serve(Time(1000 * MS + 1), 1500), Time(1002 * MS));
    // A period longer than the last timestamp (synthesised traces): 1, 5, 9, ... ms.
    let mut s = Server::new(Capacity::Trace {
        opportunities_ms: vec![1],
        period_ms: 4,
        bytes_per_opportunity: 1500,
    });
    assert_eq!(s.offered_bytes(Time(0), Time(10 * MS)), 3 * 1500);
    assert_eq!(s.serve(Time(2 * MS), 1500), Time(5 * MS));
}

#[test]
fn verizon_lte_trace_offers_one_opportunity_per_line_per_period() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/Verizon-LTE-short.down");
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let (opps, period_ms) = trace::load_mahimahi(&path).unwrap();
    let lines = opps.len() as u64;
    assert_eq!(lines, 58_655); // as listed in shared/traces/README.md
    let mut s = Server::new(Capacity::Trace {
        opportunities_ms: opps,
        period_ms,
        bytes_per_opportunity: 1500,
    });
    let p = period_ms * MS;
    // Any full period holds every line once (the first one may lose opportunities at exactly
    // the period boundary, which fall on the next loop's start).
    assert_eq!(s.offered_bytes(Time(p), Time(2 * p)), lines * 1500);
    assert_eq!(s.offered_bytes(Time(p / 3), Time(p / 3 + p)), lines * 1500);
    // Mean rate: the shared reference gives 5.04 Mbit/s with mahimahi's 1504-byte opportunity.
    let mbps = (lines * 1500 * 8) as f64 / (period_ms as f64 / 1000.0) / 1e6;
    assert!((mbps - 5.04 * 1500.0 / 1504.0).abs() < 0.01, "{mbps}");
    // A saturated link sends exactly one full packet per line per period.
    let mut now = Time(p);
    let mut sent = 0u64;
    loop {
        now = s.serve(now, 1500);
        if now >= Time(2 * p) {
            break;
        }
        sent += 1;
    }
    assert_eq!(sent, lines);
}
