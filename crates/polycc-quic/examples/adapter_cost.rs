//! The adapter's per-ACK cost: s2n-quic's calls for one ACK of two packets, through
//! `CongestionController`, for polycc controllers (via the adapter) and for s2n-quic's own CUBIC.
//!
//! One iteration is what s2n does per ACK of a bulk sender in steady state with an ACK every
//! two packets: for each of two packets `is_congestion_limited`, `earliest_departure_time` and
//! `on_packet_sent`, then `on_rtt_update` and `on_ack` for both, then `congestion_window`. The
//! loop is open (every ACK acknowledges the two packets just sent, 20 ms later, on a 100 Mbit/s
//! schedule), so the window keeps growing in slow start for some controllers; the work per ACK
//! is what is measured. The figure for polycc `cubic` minus that of the bare controller
//! (`polycc` crate's per-ACK bench) is the adapter's own cost.
//!
//! Run: `cargo run --release -p polycc-quic --example adapter_cost [ACKS]`

use num_rational::Ratio;
use polycc_quic::Polycc;
use s2n_quic::provider::congestion_controller::{
    CongestionController, Endpoint, PathInfo, Publisher, RttEstimator, Timestamp,
};
use s2n_quic_core::event::builder::{BbrState, SlowStartExitCause};
use s2n_quic_core::inet::SocketAddress;
use s2n_quic_core::packet::number::PacketNumberSpace;
use s2n_quic_core::recovery::bandwidth::{Bandwidth, RateSample};
use std::hint::black_box;
use std::time::{Duration, Instant};

struct NoPublisher;

impl Publisher for NoPublisher {
    fn on_slow_start_exited(&mut self, _: SlowStartExitCause, _: u32) {}
    fn on_delivery_rate_sampled(&mut self, _: RateSample) {}
    fn on_pacing_rate_updated(&mut self, _: Bandwidth, _: u32, _: Ratio<u64>) {}
    fn on_bbr_state_changed(&mut self, _: BbrState) {}
}

struct NoRandom;

impl s2n_quic::provider::congestion_controller::RandomGenerator for NoRandom {
    fn public_random_fill(&mut self, dest: &mut [u8]) {
        dest.fill(7);
    }
    fn private_random_fill(&mut self, dest: &mut [u8]) {
        dest.fill(7);
    }
}

fn at(d: Duration) -> Timestamp {
    // SAFETY: `from_duration` is `unsafe` only to keep timestamps of different clocks apart (a
    // contract for time sources); it touches no memory. This loop's timestamps all come from
    // here, one clock.
    unsafe { Timestamp::from_duration(Duration::from_secs(1) + d) }
}

/// Nanoseconds per ACK over `acks` ACKs.
fn run<C: CongestionController>(mut cc: C, acks: u64) -> f64 {
    let mut est = RttEstimator::new(Duration::from_millis(333));
    let (mut pub_, mut rng) = (NoPublisher, NoRandom);
    // 1200-byte packets at 100 Mbit/s: one every 96 µs; the ACK comes 20 ms after the send.
    let gap = Duration::from_micros(96);
    let rtt = Duration::from_millis(20);
    let mut infos = std::collections::VecDeque::with_capacity(512);
    let mut now = Duration::ZERO;
    let start = Instant::now();
    for _ in 0..acks {
        for _ in 0..2 {
            black_box(cc.is_congestion_limited());
            black_box(cc.earliest_departure_time());
            let info = cc.on_packet_sent(at(now), 1200, Some(false), &est, &mut pub_);
            infos.push_back((now, info));
            now += gap;
        }
        // The ACK of the oldest two outstanding once they are 20 ms old.
        let (sent, _) = infos.pop_front().expect("sent");
        let (newest_sent, newest) = infos.pop_front().expect("sent");
        let ack = (newest_sent + rtt).max(now);
        est.update_rtt(
            Duration::ZERO,
            ack - newest_sent,
            at(ack),
            true,
            PacketNumberSpace::ApplicationData,
        );
        cc.on_rtt_update(at(newest_sent), at(ack), &est, &mut pub_);
        cc.on_ack(
            at(newest_sent),
            2400,
            newest,
            &est,
            &mut rng,
            at(ack),
            &mut pub_,
        );
        black_box(cc.congestion_window());
        black_box(sent);
    }
    start.elapsed().as_nanos() as f64 / acks as f64
}

fn path() -> (s2n_quic_core::path::Config, SocketAddress) {
    let addr: std::net::SocketAddr = "127.0.0.1:4433".parse().expect("an address");
    (s2n_quic_core::path::Config::default(), addr.into())
}

fn main() {
    let acks: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let (mtu, addr) = path();
    let mut results = Vec::new();
    for _ in 0..3 {
        let mut s2n = s2n_quic::provider::congestion_controller::Cubic::default();
        let ns = run(
            s2n.new_congestion_controller(PathInfo::new(&mtu, &addr)),
            acks,
        );
        results.push(("s2n-cubic".to_string(), ns));
        for name in ["cubic", "newreno", "bbr", "pcc-vivace", "janus"] {
            let mut p = Polycc::parse(name).expect("registered");
            let ns = run(
                p.new_congestion_controller(PathInfo::new(&mtu, &addr)),
                acks,
            );
            results.push((format!("polycc {name}"), ns));
        }
    }
    println!("ns per ACK of 2 packets (3 rounds, {acks} ACKs each):");
    let mut names: Vec<String> = results.iter().map(|r| r.0.clone()).collect();
    names.dedup();
    names.truncate(6);
    for n in names {
        let v: Vec<String> = results
            .iter()
            .filter(|r| r.0 == n)
            .map(|r| format!("{:.1}", r.1))
            .collect();
        println!("{n:>18}: {}", v.join("  "));
    }
}
