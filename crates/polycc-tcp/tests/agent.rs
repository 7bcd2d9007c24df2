//! polycc controllers on kernel TCP through the shim and the agent, in the emulated testbed:
//! polycc's CUBIC fills a 20 Mbit/s, 40 ms link with a one-BDP buffer; polycc's BBR fills it
//! at the rate it paces, and the socket paces at that rate; a spec the registry rejects is a
//! typed error; a socket that closes mid-run loses its controller while the others go on; a
//! socket whose agent died falls back to TCP's initial window; and nothing stays registered
//! afterwards.

use polycc::CcSpec;
use polycc_sim::Model;
use polycc_tcp::{Agent, AgentError, AgentThread, CONTROLLER};
use std::sync::{Mutex, MutexGuard};

/// One registration of `polycc` at a time (the kernel knows one controller by a name), and one
/// real-time run at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Set in CI (root, BTF, the BPF toolchain) so that a test that cannot run fails instead of
/// skipping.
const REQUIRE: &str = "POLYCC_REQUIRE_EMU";

/// Whether the shim can be registered here; says why not (failing under `POLYCC_REQUIRE_EMU=1`).
fn available(test: &str) -> Option<MutexGuard<'static, ()>> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let why = if !polycc_tcp::BUILT {
        Some(polycc_tcp::ShimError::NotBuilt.to_string())
    } else {
        polycc_emu::netns::check_privileges()
            .err()
            .map(|e| e.to_string())
    };
    match why {
        None => Some(one),
        Some(e) => {
            assert!(
                std::env::var(REQUIRE).as_deref() != Ok("1"),
                "{test}: {e} (and {REQUIRE}=1 demands it)"
            );
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

fn model(text: &str) -> Model {
    let origin = polycc_sim::Origin {
        name: "agent.toml".into(),
        base_dir: ".".into(),
    };
    polycc_sim::load_toml(text, &origin, &polycc::Registry::standard())
        .unwrap_or_else(|e| panic!("test scenario: {e}"))
}

/// What names `polycc` now: the kernel's list of controllers and `bpftool struct_ops list`
/// (where bpftool is installed).
fn registrations() -> String {
    let mut found = String::new();
    let kernel = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    if kernel.split_whitespace().any(|c| c == CONTROLLER) {
        found += &format!("tcp_available_congestion_control: {kernel}");
    }
    if let Ok(out) = std::process::Command::new("bpftool")
        .args(["struct_ops", "list"])
        .output()
    {
        let listed = String::from_utf8_lossy(&out.stdout);
        if listed.lines().any(|l| l.contains(CONTROLLER)) {
            found += &format!("bpftool struct_ops list: {listed}");
        }
    }
    found
}

/// Nothing names `polycc` any more. The kernel frees a struct_ops map after an RCU grace
/// period, so the check is repeated for up to two seconds.
fn assert_unregistered() {
    let mut found = registrations();
    for _ in 0..20 {
        if found.is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        found = registrations();
    }
    assert!(found.is_empty(), "still registered: {found}");
}

/// One flow's column `name` from `t_s` >= `from`, as (t, value).
fn series(out: &polycc_sim::RunOutput, flow: &str, name: &str, from: f64) -> Vec<(f64, f64)> {
    let t = out.flows.f64s("t_s").expect("t_s");
    let ids = out.flows.strs("flow").expect("flow");
    let v = out
        .flows
        .f64s(name)
        .unwrap_or_else(|| panic!("column {name}"));
    t.iter()
        .zip(&ids)
        .zip(&v)
        .filter(|((t, id), v)| **t >= from && id.as_str() == flow && v.is_finite())
        .map(|((t, _), v)| (*t, *v))
        .collect()
}

fn mean(xs: &[(f64, f64)]) -> f64 {
    xs.iter().map(|(_, v)| v).sum::<f64>() / xs.len().max(1) as f64
}

/// One flow of `cca` on `stack` on a 20 Mbit/s path of `rtt` with a one-BDP buffer, for
/// `duration`.
fn single(cca: &str, stack: &str, rtt: &str, duration: &str) -> Model {
    model(&format!(
        r#"
name = "{stack}-{cca}"
duration = "{duration}"
[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = {{ kind = "droptail", size = "1bdp" }}
[[flows]]
id = "f"
cca = "{cca}"
stack = "{stack}"
rtt = "{rtt}"
"#
    ))
}

/// One polycc controller on kernel TCP (`stack = "tcp"`) on a 40 ms path, for four seconds.
fn one_flow(cca: &str) -> Model {
    single(cca, "tcp", "40ms", "4s")
}

#[test]
fn polycc_cubic_through_the_agent_fills_the_link_and_its_buffer() {
    let Some(_one) = available("polycc_cubic_through_the_agent_fills_the_link_and_its_buffer")
    else {
        return;
    };
    let out = polycc_emu::run(
        &one_flow("cubic"),
        &polycc::Registry::standard(),
        &Default::default(),
    )
    .expect("emulated run");
    assert_unregistered();
    let f = &out.summary.flows[0];
    let after_1s = mean(&series(&out, "f", "throughput_mbps", 1.0));
    let states: Vec<String> = out.flows.strs("cc_state").expect("cc_state");
    eprintln!(
        "cubic via the agent: throughput after 1 s {after_1s:.2} Mbit/s, goodput {:.2}, RTT mean \
         {:.1} ms, retransmits {}",
        f.goodput_mbps, f.rtt_ms.mean, f.retransmits
    );
    // Utilisation after slow start, in IP packets against the link's 20 Mbit/s.
    assert!(after_1s / 20.0 >= 0.85, "utilisation {}", after_1s / 20.0);
    // The path's 40 ms plus a queue that CUBIC fills and drains by its β (0.7): between a
    // fifth and the whole of the buffer's 40 ms on average.
    assert!(
        f.rtt_ms.mean > 48.0 && f.rtt_ms.mean < 80.0,
        "{:?}",
        f.rtt_ms
    );
    // Unpaced, the socket's pacing rate (which sizes its TSO bursts) is the kernel's own rule
    // for window-based controllers: 1.2 × window / smoothed RTT after slow start.
    let cwnd = series(&out, "f", "cwnd_bytes", 1.0);
    let srtt = series(&out, "f", "rtt_ms", 1.0);
    let paced = series(&out, "f", "cc_kernel_pacing_rate_mbps", 1.0);
    let mut ratios: Vec<f64> = cwnd
        .iter()
        .zip(&srtt)
        .zip(&paced)
        .filter(|(((_, w), (_, r)), _)| *w > 0.0 && *r > 0.0)
        .map(|(((_, w), (_, r)), (_, p))| p / (w * 8.0 / 1e6 / (r / 1e3)))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
    eprintln!("unpaced rate / (window / srtt): median {median:.3}");
    assert!(median > 1.05 && median < 1.4, "{median}");
    // The controller's own telemetry, not the kernel's state names.
    assert!(
        states
            .iter()
            .any(|s| s == "congestion_avoidance" || s == "slow_start" || s == "recovery"),
        "{:?}",
        &states[..states.len().min(10)]
    );
}

/// One flow on an 80 ms path for five seconds: slow start overshoots by about a BDP at 0.6 s
/// and recovery lasts to about 1.1 s.
fn long_path(cca: &str, stack: &str) -> Model {
    single(cca, stack, "80ms", "5s")
}

/// The kernel's `kernel` controller (`kernel_runs` runs) and polycc's `spec` through the shim,
/// each alone on [`long_path`]: the issue's fidelity bands, goodput within 5 % of the kernel's
/// mean and mean RTT (from `settled_s` on) within 10 % of the kernel's runs' range.
fn holds_the_kernels_goodput_and_queue(
    kernel: &str,
    spec: polycc::CcSpec,
    settled_s: f64,
    kernel_runs: usize,
) {
    let registry = polycc::Registry::standard();
    let rtt = |out: &polycc_sim::RunOutput| mean(&series(out, "f", "rtt_ms", settled_s));
    let theirs: Vec<(f64, f64)> = (0..kernel_runs)
        .map(|_| {
            let out = polycc_emu::run(&long_path(kernel, "linux"), &registry, &Default::default())
                .expect("kernel run");
            (out.summary.flows[0].goodput_mbps, rtt(&out))
        })
        .collect();
    let mut shim = long_path(kernel, "tcp");
    shim.flows[0].cca = spec.clone();
    shim.flows[0].sim_cca = Ok(spec.clone());
    let ours = polycc_emu::run(&shim, &registry, &Default::default()).expect("shim run");
    assert_unregistered();
    let s = &ours.summary.flows[0];
    let s_rtt = rtt(&ours);
    eprintln!(
        "kernel {kernel}: (Mbit/s, RTT mean from {settled_s} s) {theirs:.1?}; polycc {} through \
         the shim: {:.2} Mbit/s, RTT mean {:.1} ms ({s_rtt:.1})",
        spec.name(),
        s.goodput_mbps,
        s.rtt_ms.mean
    );
    let k_goodput = theirs.iter().map(|t| t.0).sum::<f64>() / theirs.len() as f64;
    assert!(
        (s.goodput_mbps / k_goodput - 1.0).abs() < 0.05,
        "goodput {} against {k_goodput}",
        s.goodput_mbps
    );
    let lo = theirs.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let hi = theirs.iter().map(|t| t.1).fold(0.0, f64::max);
    assert!(
        s_rtt > 0.9 * lo && s_rtt < 1.1 * hi,
        "mean RTT {s_rtt} against the kernel's {lo}-{hi}"
    );
}

#[test]
fn polycc_cubic_with_the_kernels_parameters_keeps_the_kernel_cubics_queue() {
    let Some(_one) =
        available("polycc_cubic_with_the_kernels_parameters_keeps_the_kernel_cubics_queue")
    else {
        return;
    };
    // The shim once reduced the window three times after the overshoot where the kernel
    // reduces once (losses marked over the recovery's round trip read as new events: 104
    // against 132 ms), and later in some runs twice (a lost retransmission read as new data
    // lost: 106 against 131 ms).
    let linux = polycc_sim::scenario::linux_stack::controller("cubic").expect("modelled");
    holds_the_kernels_goodput_and_queue("cubic", linux, 0.0, 1);
}

#[test]
fn polycc_bbr_keeps_the_kernel_bbrs_rate_and_queue() {
    let Some(_one) = available("polycc_bbr_keeps_the_kernel_bbrs_rate_and_queue") else {
        return;
    };
    // Judged after STARTUP: the kernel's own BBR leaves it up to two round trips later in some
    // runs than in others (mean RTT over the whole 5 s 96-110 ms from run to run), which the
    // shim cannot be expected to match run for run. And now and then the kernel's BBR holds a
    // standing queue for a whole run (CI: 109 ms from 2 s on against the shim's 85 on this
    // 80-ms path; VALIDATION.md sees the same in its grid), so the shim is judged against the
    // range of two kernel runs.
    holds_the_kernels_goodput_and_queue("bbr", CcSpec::named("bbr"), 2.0, 2);
}

#[test]
fn polycc_bbr_through_the_agent_fills_the_link_at_the_rate_the_socket_paces() {
    let Some(_one) =
        available("polycc_bbr_through_the_agent_fills_the_link_at_the_rate_the_socket_paces")
    else {
        return;
    };
    let out = polycc_emu::run(
        &one_flow("bbr"),
        &polycc::Registry::standard(),
        &Default::default(),
    )
    .expect("emulated run");
    assert_unregistered();
    let f = &out.summary.flows[0];
    let after_1s = mean(&series(&out, "f", "throughput_mbps", 1.0));
    let ours = series(&out, "f", "pacing_rate_mbps", 0.5);
    let kernel = series(&out, "f", "cc_kernel_pacing_rate_mbps", 0.5);
    // Each sample: the socket's pacing rate against the controller's at the same instant.
    let mut ratios: Vec<f64> = ours
        .iter()
        .zip(&kernel)
        .filter(|((_, a), (_, b))| *a > 0.0 && *b > 0.0)
        .map(|((_, a), (_, b))| b / a)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
    eprintln!(
        "bbr via the agent: throughput after 1 s {after_1s:.2} Mbit/s, RTT mean {:.1} ms, pacing \
         kernel/controller median {median:.3} over {} samples",
        f.rtt_ms.mean,
        ratios.len()
    );
    assert!(after_1s / 20.0 >= 0.70, "utilisation {}", after_1s / 20.0);
    // One sample per 100-ms bin after the first half second.
    assert!(ratios.len() >= 30, "{} samples", ratios.len());
    // Samples race the ACK that applies a new rate; most find the two equal.
    assert!((median - 1.0).abs() < 0.02, "median ratio {median}");
    // And the rate holds the link near its capacity: BBR's gains around 20 Mbit/s.
    let paced = mean(&ours);
    assert!(
        paced > 15.0 && paced < 30.0,
        "controller's mean rate {paced}"
    );
}

#[test]
fn a_spec_the_registry_rejects_is_a_typed_error_and_nothing_is_registered() {
    let Some(_one) =
        available("a_spec_the_registry_rejects_is_a_typed_error_and_nothing_is_registered")
    else {
        return;
    };
    let bad = CcSpec::named("no-such-controller");
    match Agent::for_spec(&bad) {
        Err(AgentError::Spec { spec, source }) => {
            assert_eq!(spec, "no-such-controller");
            assert!(
                source.to_string().contains("cubic"),
                "lists the known: {source}"
            );
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("a bad spec was accepted"),
    }
    let mut agent = Agent::for_spec(&CcSpec::named("cubic")).expect("cubic");
    let bad_params: CcSpec =
        serde_json::from_str(r#"{ "name": "cubic", "beta": 7 }"#).expect("a table");
    assert!(matches!(
        agent.attach(polycc_tcp::Sockets::Cookie(1), &bad_params),
        Err(AgentError::Spec { .. })
    ));
    // A good agent registers and unregisters.
    let running = AgentThread::spawn(agent).expect("registered");
    assert!(running.is_running());
    running.stop().expect("stopped");
    assert_unregistered();
    // A scenario naming it is refused before anything runs.
    let origin = polycc_sim::Origin {
        name: "bad.toml".into(),
        base_dir: ".".into(),
    };
    let text = r#"
name = "bad"
duration = "1s"
[[links]]
id = "l"
rate = "20Mbps"
[[flows]]
id = "f"
cca = "no-such-controller"
stack = "tcp"
rtt = "40ms"
"#;
    let e =
        polycc_sim::load_toml(text, &origin, &polycc::Registry::standard()).expect_err("refused");
    assert!(e.to_string().contains("flows[0].cca"), "{e}");
}

#[test]
fn a_socket_that_closes_loses_its_controller_and_the_others_go_on() {
    let Some(_one) = available("a_socket_that_closes_loses_its_controller_and_the_others_go_on")
    else {
        return;
    };
    // Both flows on polycc's shim with the agent run here (`stack = "linux"` with the kernel
    // controller `polycc`), so that its state can be watched during the run.
    let m = model(
        r#"
name = "close-mid-run"
duration = "3s"
[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = { kind = "droptail", size = "1bdp" }
[[flows]]
id = "stays"
cca = "polycc"
stack = "linux"
rtt = "40ms"
[[flows]]
id = "leaves"
cca = "polycc"
stack = "linux"
rtt = "40ms"
stop = "1.5s"
"#,
    );
    let agent = AgentThread::spawn(Agent::for_spec(&CcSpec::named("cubic")).expect("cubic"))
        .expect("registered");
    let views = agent.views();
    let registry = polycc::Registry::standard();
    let watch = std::thread::spawn(move || {
        // (time, sockets with a controller) every 100 ms.
        let start = std::time::Instant::now();
        let mut seen = Vec::new();
        while start.elapsed() < std::time::Duration::from_millis(2900) {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let n = views.lock().map(|v| v.len()).unwrap_or(0);
            seen.push((start.elapsed().as_secs_f64(), n));
        }
        seen
    });
    let out = polycc_emu::run(&m, &registry, &Default::default()).expect("emulated run");
    let seen = watch.join().expect("watcher");
    let stats = agent.stop().expect("agent");
    assert_unregistered();
    let stays_late = mean(&series(&out, "stays", "throughput_mbps", 2.0));
    eprintln!(
        "controllers over time {seen:?}; built {}, dropped {}; the staying flow after 2 s \
         {stays_late:.2} Mbit/s",
        stats.controllers_built, stats.controllers_dropped
    );
    assert_eq!(stats.controllers_built, 2);
    // Each by its socket's release: the leaving one's at 1.5 s, the other's at the end.
    assert_eq!((stats.releases, stats.controllers_dropped), (2, 2));
    assert!(seen.iter().any(|(t, n)| *t < 1.4 && *n == 2), "{seen:?}");
    assert!(
        seen.iter().filter(|(t, _)| *t > 2.0).all(|(_, n)| *n <= 1),
        "{seen:?}"
    );
    assert!(seen.iter().any(|(t, n)| *t > 2.0 && *n == 1), "{seen:?}");
    // The staying flow's controller goes on and grows past the half it had while sharing (on
    // the fallback, 10 packets per 40 ms, it would get 2.9 Mbit/s). How far within 1.5 s
    // depends on CUBIC's epoch: after a reduction just before the other flow left, its window
    // takes K = (W_max·(1 − β)/C)^(1/3), about 3 s here, to regain W_max; 16.3 and 20.0 Mbit/s
    // were both seen.
    assert!(stays_late / 20.0 > 0.65, "{stays_late}");
}

#[test]
fn when_the_agent_dies_open_sockets_fall_back_to_the_initial_window() {
    let Some(_one) = available("when_the_agent_dies_open_sockets_fall_back_to_the_initial_window")
    else {
        return;
    };
    let m = model(
        r#"
name = "agent-dies"
duration = "4s"
[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = { kind = "droptail", size = "1bdp" }
[[flows]]
id = "f"
cca = "polycc"
stack = "linux"
rtt = "40ms"
"#,
    );
    let agent = AgentThread::spawn(Agent::for_spec(&CcSpec::named("cubic")).expect("cubic"))
        .expect("registered");
    // The agent (and with it the registration) goes 1.5 s into the run; the socket keeps the
    // controller it has, whose last decision goes stale one second later.
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        agent.stop().expect("agent")
    });
    let out = polycc_emu::run(&m, &polycc::Registry::standard(), &Default::default())
        .expect("emulated run");
    let stats = killer.join().expect("killer");
    assert_unregistered();
    let early = series(&out, "f", "throughput_mbps", 0.8)
        .into_iter()
        .filter(|(t, _)| *t < 1.4)
        .collect::<Vec<_>>();
    let late = series(&out, "f", "throughput_mbps", 3.0);
    let cwnd_late = series(&out, "f", "cwnd_bytes", 3.0);
    let max_cwnd = cwnd_late.iter().map(|(_, c)| *c).fold(0.0, f64::max);
    eprintln!(
        "agent: {} reports; throughput 0.8-1.4 s {:.2}, after 3 s {:.2} Mbit/s; largest window \
         after 3 s {max_cwnd} bytes",
        stats.reports,
        mean(&early),
        mean(&late)
    );
    assert!(
        mean(&early) > 17.0,
        "the agent's CUBIC fills the link first"
    );
    // On the fallback: at most 10 packets of 1448 bytes per round trip of 40–44 ms.
    assert!(
        !cwnd_late.is_empty() && max_cwnd <= 10.0 * 1448.0,
        "{max_cwnd}"
    );
    let fallback = mean(&late);
    assert!(fallback > 1.5 && fallback < 3.3, "{fallback} Mbit/s");
}

#[test]
fn sockets_named_by_their_cookies_get_their_own_controllers_on_one_server_port() {
    let Some(_one) = available("sockets_named_by_their_cookies_get_their_own_controllers") else {
        return;
    };
    use socket2::{Domain, Socket, Type};
    use std::io::{Read, Write};
    // Loopback in this namespace; the server's sockets keep the host's default controller.
    let server = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let to = server.local_addr().expect("address");
    let reader = std::thread::spawn(move || {
        let mut readers = Vec::new();
        for _ in 0..3 {
            let (mut s, _) = server.accept().expect("accepted");
            readers.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                while s.read(&mut buf).is_ok_and(|n| n > 0) {}
            }));
        }
        readers.into_iter().for_each(|r| r.join().expect("reader"));
    });
    // Three clients of the one server port; the first two named by cookie, asked before they
    // connect, the third left to the factory, which leaves it to the fallback.
    let clients: Vec<Socket> = (0..3)
        .map(|_| Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket"))
        .collect();
    let cookies: Vec<u64> = clients
        .iter()
        .map(|c| polycc_tcp::socket_cookie(c).expect("SO_COOKIE"))
        .collect();
    let mut agent = Agent::new(Box::new(
        |_: &polycc_tcp::SocketId, _: &polycc::CcContext| Ok(None),
    ));
    for (cookie, cca) in cookies.iter().zip(["vegas", "bbr"]) {
        agent
            .attach(polycc_tcp::Sockets::Cookie(*cookie), &CcSpec::named(cca))
            .expect("a known controller");
    }
    let agent = AgentThread::spawn(agent).expect("registered");
    let views = agent.views();
    let writers: Vec<_> = clients
        .into_iter()
        .map(|c| {
            c.set_tcp_congestion(CONTROLLER.as_bytes())
                .expect("TCP_CONGESTION polycc");
            c.connect(&to.into()).expect("connected");
            let mut s: std::net::TcpStream = c.into();
            std::thread::spawn(move || {
                let chunk = vec![7u8; 1 << 16];
                let start = std::time::Instant::now();
                while start.elapsed() < std::time::Duration::from_millis(400) {
                    if s.write_all(&chunk).is_err() {
                        break;
                    }
                }
            })
        })
        .collect();
    // While they send (a closed socket's view goes with its controller).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let seen: Vec<(u64, String, u16)> = views
        .lock()
        .map(|v| {
            v.values()
                .map(|v| (v.socket.cookie, v.controller.clone(), v.socket.remote_port))
                .collect()
        })
        .unwrap_or_default();
    writers.into_iter().for_each(|w| w.join().expect("writer"));
    let stats = agent.stop().expect("agent");
    reader.join().expect("server");
    assert_unregistered();
    eprintln!("views: {seen:?}; {} reports", stats.reports);
    let controller_of = |cookie: u64| {
        seen.iter()
            .find(|(c, _, _)| *c == cookie)
            .map(|(_, name, _)| name.as_str())
    };
    assert_eq!(controller_of(cookies[0]), Some("vegas"));
    assert_eq!(controller_of(cookies[1]), Some("bbr"));
    assert_eq!(
        seen.len(),
        2,
        "the third socket has no controller: {seen:?}"
    );
    assert!(seen.iter().all(|(_, _, port)| *port == to.port()));
    assert!(stats.reports > 100, "{} reports", stats.reports);
}
