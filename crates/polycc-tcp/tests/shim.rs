//! The kernel-TCP shim on a real kernel: registered, a window written from user space paces a
//! kernel TCP flow in the emulated testbed to window / RTT, every ACK is reported, and the
//! controller is gone once the shim is dropped.

use polycc_tcp::Shim;

/// Set in CI (root, BTF, the BPF toolchain) so that a test that cannot run fails instead of
/// skipping.
const REQUIRE: &str = "POLYCC_REQUIRE_EMU";

fn required() -> bool {
    std::env::var(REQUIRE).as_deref() == Ok("1")
}

#[cfg(feature = "bpf")]
fn kernel_controllers() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default()
}

#[cfg(not(feature = "bpf"))]
#[test]
fn without_its_bpf_program_the_shim_says_how_to_build_it() {
    let err = Shim::register().err().expect("nothing to register");
    assert!(matches!(err, polycc_tcp::ShimError::NotBuilt));
    assert!(
        err.to_string().contains("scripts/install-bpf-deps.sh"),
        "{err}"
    );
    assert!(
        !required(),
        "{REQUIRE}=1 but polycc-tcp was built without the bpf feature: {err}"
    );
    eprintln!("SKIPPED the kernel shim's tests: {err}");
}

#[cfg(feature = "bpf")]
#[test]
fn a_window_written_from_user_space_sets_a_kernel_flows_rate() {
    use polycc_tcp::{Decision, FlowKey, CONTROLLER};
    if let Err(e) = polycc_emu::netns::check_privileges() {
        assert!(!required(), "{REQUIRE}=1 but: {e}");
        eprintln!("SKIPPED: {e}");
        return;
    }
    let mut shim = match Shim::register() {
        Ok(s) => s,
        Err(e) => {
            assert!(!required(), "{REQUIRE}=1 but: {e}");
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    assert!(kernel_controllers()
        .split_whitespace()
        .any(|c| c == CONTROLLER));
    const WINDOW: u32 = 20;
    shim.decide(
        FlowKey::ANY,
        Decision {
            cwnd_packets: WINDOW,
            pacing_bytes_per_sec: None,
            slow_start: false,
            ack_ns: 0,
            in_flight_packets: 0,
            reducing: false,
        },
    )
    .expect("decision");
    let text = r#"
name = "shim-window"
duration = "4s"
[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = { kind = "droptail", size = "1bdp" }
[[flows]]
id = "shim"
cca = "polycc"
stack = "linux"
rtt = "40ms"
"#;
    let origin = polycc_sim::Origin {
        name: "shim.toml".into(),
        base_dir: ".".into(),
    };
    let registry = polycc::Registry::standard();
    let model = polycc_sim::load_toml(text, &origin, &registry).expect("scenario");
    // The emulated run on a thread of its own; the reports are read here meanwhile.
    let run = std::thread::spawn(move || polycc_emu::run(&model, &registry, &Default::default()));
    let mut reports = Vec::new();
    while !run.is_finished() {
        shim.poll(std::time::Duration::from_millis(50), |r| reports.push(r))
            .expect("poll");
    }
    shim.poll(std::time::Duration::ZERO, |r| reports.push(r))
        .expect("poll");
    let out = run.join().expect("run thread").expect("emulated run");
    let f = &out.summary.flows[0];
    // A window of 20 packets of 1448 bytes per round trip, after the first few.
    let expected = f64::from(WINDOW) * 1448.0 * 8.0 / (f.rtt_ms.mean / 1e3) / 1e6;
    eprintln!(
        "goodput {:.2} Mbit/s (window/RTT {expected:.2}), RTT {:.1} ms, {} reports",
        f.goodput_mbps,
        f.rtt_ms.mean,
        reports.len()
    );
    assert!(
        (f.goodput_mbps - expected).abs() < 0.08 * expected,
        "{} / {expected}",
        f.goodput_mbps
    );
    // The window never fills the 20 Mbit/s link: no queue, RTT at the path's 40 ms.
    assert!(
        f.rtt_ms.mean > 40.0 && f.rtt_ms.mean < 44.0,
        "{:?}",
        f.rtt_ms
    );
    // Every ACK is reported (the receiver acknowledges every second segment, or more often).
    assert!(
        reports.len() as u64 >= f.packets_sent / 3,
        "{} reports for {} packets",
        reports.len(),
        f.packets_sent
    );
    let rtts: Vec<u32> = reports.iter().filter_map(|r| r.rtt_us).collect();
    assert!(
        rtts.iter().all(|r| *r >= 40_000 && *r < 60_000),
        "{:?}",
        &rtts[..10.min(rtts.len())]
    );
    let last = reports
        .iter()
        .rfind(|r| r.kind == polycc_tcp::ReportKind::Ack)
        .expect("reports");
    assert_eq!((last.snd_cwnd, last.mss), (WINDOW, 1448));
    // The socket's close is reported, after its last ACK.
    assert_eq!(
        reports.last().map(|r| (r.kind, r.key)),
        Some((polycc_tcp::ReportKind::Release, last.key))
    );
    drop(shim);
    assert!(
        !kernel_controllers()
            .split_whitespace()
            .any(|c| c == CONTROLLER),
        "unregistered: {}",
        kernel_controllers()
    );
}
