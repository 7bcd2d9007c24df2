//! One connection's memory over a long lossy transfer: a `polycc-quic` server and client in
//! this process, a bulk transfer through a loopback relay that drops a fraction of the
//! datagrams both ways ([`polycc_quic::relay`]), and this process's resident set size (`VmRSS`
//! of `/proc/self/status`) sampled every few seconds. If the adapter, the controller or
//! s2n-quic kept state per packet or per loss without bound, the RSS would grow with time;
//! bounded, it levels off once the window and the buffers have reached their sizes.
//!
//! Run: `cargo run --release -p polycc-quic --example memory_under_loss [SECONDS [LOSS [CCA]]]`
//! (defaults 120 s, 0.03, `cubic`; `s2n-cubic` is s2n-quic's own). Prints one line per
//! sample, then the RSS at 10 % and at 100 % of the sending time and after the last bytes
//! drained, and the transfer's report.

use polycc_quic::endpoints::{run_client, run_server, Cca, ClientOptions, ServerOptions};
use polycc_quic::relay::{Faults, Relay};
use polycc_quic::Polycc;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Time between two RSS samples.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);

/// The resident set size of this process in bytes: `VmRSS` of `/proc/self/status`, in kB
/// (proc(5)); 0 if unreadable.
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map_or(Ok(120.0), |s| s.parse())?;
    let loss: f64 = args.next().map_or(Ok(0.03), |s| s.parse())?;
    let cca = args.next().unwrap_or_else(|| "cubic".into());
    anyhow::ensure!(
        seconds > 0.0 && seconds <= 3600.0,
        "SECONDS in (0, 3600], not {seconds}"
    );
    anyhow::ensure!((0.0..1.0).contains(&loss), "LOSS in [0, 1), not {loss}");
    let duration = Duration::from_secs_f64(seconds);

    // A free port for the server (bound and released: the server prints its address, it does
    // not return it).
    let port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
    let server_addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let cert = std::env::temp_dir().join(format!("polycc-quic-memory-{port}.pem"));
    let relay = Relay::start(
        server_addr,
        Faults {
            loss,
            ..Faults::default()
        },
        1,
    )?;
    // `s2n-cubic`: s2n-quic's own CUBIC, for comparison.
    let spec = |s: &str| -> anyhow::Result<Cca> {
        Ok(match s {
            "s2n-cubic" => Cca::BuiltinCubic,
            _ => Cca::Polycc(Polycc::parse(s)?),
        })
    };
    let idle = Duration::from_secs(5);
    let server = ServerOptions {
        listen: server_addr,
        cca: spec("cubic")?,
        cert_out: Some(cert.clone()),
        transfers: Some(1),
        run_for: Some(duration + Duration::from_secs(60)),
        idle_timeout: idle,
        timing_reports: false,
        video: false,
    };
    let client = ClientOptions {
        connect: relay.addr(),
        cca: spec(&cca)?,
        ca: Some(cert.clone()),
        bytes: None,
        duration,
        connect_timeout: Duration::from_secs(5),
        timeout: duration + Duration::from_secs(60),
        idle_timeout: idle,
        video: None,
        telemetry_every: None,
    };

    let samples: Arc<Mutex<Vec<(f64, u64)>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (samples, done) = (samples.clone(), done.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = start;
            while !done.load(Ordering::Relaxed) {
                if Instant::now() >= next {
                    let (t, rss) = (start.elapsed().as_secs_f64(), rss_bytes());
                    eprintln!("t {t:6.1} s  RSS {:7.2} MiB", mib(rss));
                    samples
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((t, rss));
                    next += SAMPLE_EVERY;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(async {
        let server = tokio::spawn(run_server(server));
        // The server writes its certificate before it listens; wait for the file.
        let ready = Instant::now();
        while !cert.is_file() && ready.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let report = run_client(client).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), server).await;
        report
    });
    let rss_end = rss_bytes();
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let _ = std::fs::remove_file(&cert);

    let samples = samples.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // The sample nearest a fraction of the sending time.
    let at = |frac: f64| {
        samples
            .iter()
            .min_by(|a, b| {
                (a.0 - frac * seconds)
                    .abs()
                    .total_cmp(&(b.0 - frac * seconds).abs())
            })
            .copied()
            .unwrap_or((0.0, 0))
    };
    let (at_10, at_100) = (at(0.1), at(1.0));
    let peak = samples.iter().map(|s| s.1).max().unwrap_or(0).max(rss_end);
    println!(
        "{cca}, {seconds} s, loss {loss}: RSS at 10 % ({:.0} s) {:.2} MiB, at 100 % ({:.0} s) \
         {:.2} MiB (growth {:+.2} MiB), after the drain {:.2} MiB, peak {:.2} MiB",
        at_10.0,
        mib(at_10.1),
        at_100.0,
        mib(at_100.1),
        mib(at_100.1) - mib(at_10.1),
        mib(rss_end),
        mib(peak),
    );
    let c = relay.counts();
    let (fwd, dropped) = (c.forwarded, c.dropped);
    println!("relay: dropped {dropped} of {} datagrams", fwd + dropped);
    let report = report?;
    let stats = &report.json["controller"]["stats"];
    println!(
        "transfer: {:.1} MB verified at {:.1} Mbit/s; the sender lost {} of {} packets (window \
         at the end {} B, datagrams {} B, srtt {} µs)",
        report.bytes as f64 / 1e6,
        report.json["goodput_mbps"].as_f64().unwrap_or(f64::NAN),
        stats["lost_packets"],
        stats["sent_packets"],
        stats["cwnd_bytes"],
        stats["mss_bytes"],
        stats["srtt_us"],
    );
    Ok(())
}
