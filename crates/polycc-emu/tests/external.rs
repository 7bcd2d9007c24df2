//! Outside programs as flows (`stack = "external"`): the emulator starts a flow's receiver and
//! sender commands in the two namespaces, measures the flow on the link, and leaves no process
//! behind; a program that cannot run is a clear error naming the flow, at once.

mod common;

use common::emulator_available;
use polycc::Registry;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A TCP sink: accepts one connection on the port it is given and reads until EOF.
const SINK: &str = r#"
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
c, _ = s.accept()
while c.recv(1 << 16):
    pass
"#;

/// A TCP source: writes to the receiver for the seconds it is given, then exits with success.
const SOURCE: &str = r#"
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
end = time.monotonic() + float(sys.argv[3])
buf = b"x" * 65536
while time.monotonic() < end:
    c.send(buf)
"#;

/// A scratch directory with the two scripts.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("polycc-ext-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("sink.py"), SINK).unwrap();
        std::fs::write(d.join("source.py"), SOURCE).unwrap();
        Scratch(d)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scenario(duration: &str, sender: &str, receiver: &str) -> String {
    format!(
        r#"
name = "external"
duration = "{duration}"
[[links]]
id = "l"
rate = "10Mbps"
[links.queue]
size = "1bdp"
[[flows]]
id = "prog"
stack = "external"
rtt = "20ms"
sender = {sender:?}
receiver = {receiver:?}
"#
    )
}

/// Processes whose command line contains `token` (ours carry a unique one).
fn processes_with(token: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (cmd.contains(token) && pid != std::process::id()).then(|| format!("{pid}: {cmd}"))
        })
        .collect()
}

/// The mean of a numeric column of the flows table over the bins from `from_s` on.
fn mean_after(t: &polycc_sim::Table, name: &str, from_s: f64) -> f64 {
    let col = |n: &str| match t.columns.iter().find(|(c, _)| c == n).map(|(_, c)| c) {
        Some(polycc_sim::Column::F64(v)) => v.clone(),
        _ => panic!("numeric column {n}"),
    };
    let (ts, vs) = (col("t_s"), col(name));
    let after: Vec<f64> = ts
        .iter()
        .zip(&vs)
        .filter(|(t, _)| **t >= from_s)
        .map(|(_, v)| *v)
        .collect();
    after.iter().sum::<f64>() / after.len() as f64
}

fn run(toml: &str, log_dir: &Path) -> Result<polycc_sim::RunOutput, polycc_emu::EmuError> {
    let options = polycc_emu::Options {
        cancelled: &|| false,
        log_dir: Some(log_dir),
    };
    polycc_emu::run(&common::model(toml), &Registry::standard(), &options)
}

#[test]
fn an_outside_program_is_measured_on_the_link_and_leaves_nothing_behind() {
    let Some(_one) = emulator_available("an_outside_program_is_measured_on_the_link") else {
        return;
    };
    let x = Scratch::new("measured");
    let logs = x.0.join("logs");
    // The receiver ignores SIGTERM, so the emulator's SIGKILL must end it; the sender writes
    // for longer than the flow runs, so it is killed too.
    let receiver = format!(
        "trap '' TERM; exec python3 {} {{receiver_ip}} {{port}}",
        x.path("sink.py")
    );
    let sender = format!(
        "python3 {} {{receiver_ip}} {{port}} 60",
        x.path("source.py")
    );
    let out = run(&scenario("3s", &sender, &receiver), &logs).expect("emulated");
    let f = &out.summary.flows[0];
    eprintln!(
        "external TCP: throughput {:.2} goodput {:.2} Mbit/s, queue delay {:?} ms, loss {:.4}, \
         active {:.2} s",
        f.throughput_mbps, f.goodput_mbps, f.queue_delay_ms, f.loss_rate, f.active_s
    );
    // The kernel's TCP fills a 10 Mbit/s link within its first few RTTs of 20 ms: after the
    // first second the emulator sees it at the link's rate (Cubic keeps a 1-BDP buffer busy),
    // and the payload is 1448 of each 1500-byte packet (timestamps on).
    let steady = mean_after(&out.flows, "throughput_mbps", 1.0);
    eprintln!("throughput after 1 s: {steady:.2} Mbit/s");
    assert!(steady > 9.0 && steady < 10.2, "{steady}");
    assert!(f.throughput_mbps > 6.0 && f.throughput_mbps <= steady + 0.1);
    let payload_share = f.goodput_mbps / f.throughput_mbps;
    assert!(
        payload_share > 0.94 && payload_share < 0.98,
        "{payload_share}"
    );
    assert_eq!(f.cca, "external");
    assert!(f.packets_sent > 2000, "{}", f.packets_sent);
    // A 1-BDP buffer under a loss-based sender: queueing delay up to a BDP's 20 ms.
    assert!(f.queue_delay_ms.mean > 1.0 && f.queue_delay_ms.mean < 25.0);
    // No controller telemetry: its columns are null in every bin.
    let cwnd = out
        .flows
        .columns
        .iter()
        .find(|(n, _)| n == "cwnd_bytes")
        .map(|(_, c)| c)
        .unwrap();
    match cwnd {
        polycc_sim::Column::F64(v) => assert!(v.iter().all(|x| x.is_nan()), "{v:?}"),
        _ => panic!("cwnd_bytes is numeric"),
    }
    for role in ["sender", "receiver"] {
        for ext in ["stdout", "stderr"] {
            assert!(
                logs.join(format!("prog.{role}.{ext}")).exists(),
                "{role}.{ext}"
            );
        }
    }
    let left = processes_with(&x.0.display().to_string());
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn a_program_that_cannot_run_is_an_error_naming_the_flow_at_once() {
    let Some(_one) = emulator_available("a_program_that_cannot_run_is_an_error") else {
        return;
    };
    let x = Scratch::new("fails");
    let logs = x.0.join("logs");
    let sink = format!("python3 {} {{receiver_ip}} {{port}}", x.path("sink.py"));
    // A missing binary, a sender failing on its own, a receiver that never binds its port.
    let cases = [
        (
            "no-such-sender-xyz {receiver_ip} {port}".to_string(),
            sink.clone(),
            "not found",
        ),
        (
            "echo refused >&2; exit 3".to_string(),
            sink.clone(),
            "exited with status 3",
        ),
        (
            format!(
                "python3 {} {{receiver_ip}} {{port}} 60",
                x.path("source.py")
            ),
            format!(
                "python3 -c 'import time; time.sleep(60)' {}",
                x.path("idle")
            ),
            "did not listen on port",
        ),
    ];
    for (sender, receiver, want) in cases {
        let t0 = Instant::now();
        let e = run(&scenario("30s", &sender, &receiver), &logs).unwrap_err();
        let msg = e.to_string();
        eprintln!("{msg}");
        assert!(e.is_user_error(), "{msg}");
        assert!(msg.contains("flows (prog)"), "{msg}");
        assert!(msg.contains(want), "{msg}");
        // Ended by the failure, not by the 30 s run (the receiver's wait is 5 s at most).
        assert!(t0.elapsed().as_secs() < 10, "{:?}", t0.elapsed());
    }
    let left = processes_with(&x.0.display().to_string());
    assert!(left.is_empty(), "left running: {left:?}");
}
