//! `polycc-quic server|client`: verified bulk and sized transfers over s2n-quic with any polycc
//! controller (`--cca`), or s2n-quic's own CUBIC (`--builtin-cubic`) for comparison; receiver
//! timing for the controllers that take it (`server --timing-reports`); real-time video over
//! QUIC datagrams (`--video`, both ends).
//!
//! Exit codes: 0 every transfer verified; 1 a transfer failed (no handshake, connection lost,
//! timeout, checksum mismatch); 2 bad input (a spec the registry rejects, a bad address or
//! intent, a missing certificate file).

use clap::{Args, Parser, Subcommand};
use polycc::{Intent, Rate};
use polycc_quic::endpoints::{run_client, run_server, Cca, ClientOptions, ServerOptions};
use polycc_quic::video_endpoints::VideoOptions;
use polycc_quic::Polycc;
use polycc_sim::scenario::spec::{
    DEFAULT_FEC, DEFAULT_FPS, DEFAULT_FRAME_NOISE, DEFAULT_VIDEO_MAX_BPS, DEFAULT_VIDEO_MIN_BPS,
    DEFAULT_VIDEO_PACKET,
};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "polycc-quic",
    about = "Verified transfers over s2n-quic driven by a polycc controller"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Receive transfers and verify each (bytes in = bytes out, checksum).
    Server(ServerArgs),
    /// Send one transfer (sized with --bytes, else bulk for --duration) and wait for the
    /// server's verdict.
    Client(ClientArgs),
}

#[derive(Args)]
struct CcArgs {
    /// Controller: a registered name (`cubic`, `bbr`, `janus`, ...) or a JSON spec
    /// (`{"name": "cubic", "beta": 0.7}`).
    #[arg(long, default_value = "cubic")]
    cca: String,
    /// Use s2n-quic's own CUBIC instead of a polycc controller.
    #[arg(long, conflicts_with = "cca")]
    builtin_cubic: bool,
    /// The application's intent as JSON, e.g. `{"class": "bandwidth_guarantee",
    /// "target_rate": 5000000}`; given to the controller before its first packet.
    #[arg(long)]
    intent: Option<String>,
    /// Seed for controllers that randomise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seconds of silence after which a connection is closed.
    #[arg(long, default_value_t = 5.0)]
    idle_timeout: f64,
}

#[derive(Args)]
struct ServerArgs {
    /// Address to listen on (port 0: any free port; printed).
    #[arg(long, default_value = "127.0.0.1:4433")]
    listen: SocketAddr,
    /// Where to write the self-signed certificate (default: $TMPDIR/polycc-quic-<port>.pem).
    #[arg(long)]
    cert_out: Option<PathBuf>,
    /// Exit after this many transfers.
    #[arg(long)]
    transfers: Option<u64>,
    /// Exit after this many seconds.
    #[arg(long)]
    run_for: Option<f64>,
    /// Send each client the arrival time of every packet it sent (receiver timing, every 20
    /// ms on a unidirectional stream), for controllers that read one-way delays (ledbat,
    /// ledbat++, gcc, pibes); a client whose controller takes them reads them by itself.
    #[arg(long)]
    timing_reports: bool,
    /// Receive video frames as QUIC datagrams (clients run with --video), one connection at a
    /// time: a JSON line per frame and one per connection.
    #[arg(long)]
    video: bool,
    #[command(flatten)]
    cc: CcArgs,
}

#[derive(Args)]
struct VideoArgs {
    /// Send real-time video as QUIC datagrams for --duration instead of a transfer: the
    /// simulator's video source, frames sized from the controller's media target (gcc, pibes)
    /// within --min-rate-mbps..--max-rate-mbps, or --bitrate-mbps; the server needs --video.
    #[arg(long, conflicts_with = "bytes")]
    video: bool,
    /// Frames a second.
    #[arg(long, requires = "video", default_value_t = DEFAULT_FPS)]
    fps: f64,
    /// A fixed bitrate (Mbit/s), whatever the controller's target.
    #[arg(long, requires = "video", conflicts_with_all = ["min_rate_mbps", "max_rate_mbps"])]
    bitrate_mbps: Option<f64>,
    /// The lowest bitrate the encoder produces (Mbit/s): what a controller without a media
    /// target (cubic, bbr, ...) gets.
    #[arg(long, requires = "video", default_value_t = DEFAULT_VIDEO_MIN_BPS as f64 / 1e6)]
    min_rate_mbps: f64,
    /// The highest bitrate the encoder produces (Mbit/s).
    #[arg(long, requires = "video", default_value_t = DEFAULT_VIDEO_MAX_BPS as f64 / 1e6)]
    max_rate_mbps: f64,
    /// Bytes of a video datagram on the wire (IP and UDP headers included).
    #[arg(long, requires = "video", default_value_t = DEFAULT_VIDEO_PACKET)]
    packet: u64,
    /// Reed-Solomon repair packets per data packet (0: no FEC).
    #[arg(long, requires = "video", default_value_t = DEFAULT_FEC)]
    fec: f64,
    /// Standard deviation of the encoder's relative frame-size error (0: exact sizes).
    #[arg(long, requires = "video", default_value_t = DEFAULT_FRAME_NOISE)]
    frame_noise: f64,
}

#[derive(Args)]
struct ClientArgs {
    /// The server's address.
    #[arg(long, default_value = "127.0.0.1:4433")]
    connect: SocketAddr,
    /// The server's certificate (default: $TMPDIR/polycc-quic-<port>.pem).
    #[arg(long)]
    ca: Option<PathBuf>,
    /// Send exactly this many bytes (a sized transfer); without it, bulk for --duration.
    #[arg(long)]
    bytes: Option<u64>,
    /// Seconds a bulk transfer sends.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds to wait for the handshake.
    #[arg(long, default_value_t = 5.0)]
    connect_timeout: f64,
    /// Seconds from the start to the verdict, at most (default: the duration + 30 for bulk,
    /// 120 for sized).
    #[arg(long)]
    timeout: Option<f64>,
    /// Print the controller's telemetry and counters as a JSON line (`"event": "telemetry"`)
    /// every this many seconds while the run lasts, before the report.
    #[arg(long)]
    telemetry_every: Option<f64>,
    #[command(flatten)]
    video: VideoArgs,
    #[command(flatten)]
    cc: CcArgs,
}

/// A bad-input error: exit 2.
struct Usage(String);

/// The longest time any option may give (about 11.6 days): far beyond any run, and small
/// enough that adding it to the clock cannot overflow (`Instant + Duration` panics on overflow).
const MAX_SECONDS: f64 = 1e6;

fn seconds(name: &str, s: f64) -> Result<Duration, Usage> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero() && s <= MAX_SECONDS)
        .ok_or_else(|| {
            Usage(format!(
                "--{name} must be a positive number of seconds up to {MAX_SECONDS}, not {s}"
            ))
        })
}

/// A rate in Mbit/s from `--name`.
fn mbps(name: &str, v: f64) -> Result<Rate, Usage> {
    if v.is_finite() && v > 0.0 && v <= 1e6 {
        Ok(Rate::from_bps((v * 1e6).round() as u64))
    } else {
        Err(Usage(format!(
            "--{name} must be a positive number of Mbit/s up to 1e6, not {v}"
        )))
    }
}

fn video(a: &VideoArgs, seed: u64) -> Result<Option<VideoOptions>, Usage> {
    if !a.video {
        return Ok(None);
    }
    let (min_rate, max_rate) = match a.bitrate_mbps {
        Some(b) => {
            let r = mbps("bitrate-mbps", b)?;
            (r, r)
        }
        None => (
            mbps("min-rate-mbps", a.min_rate_mbps)?,
            mbps("max-rate-mbps", a.max_rate_mbps)?,
        ),
    };
    let o = VideoOptions {
        fps: a.fps,
        min_rate,
        max_rate,
        packet: a.packet,
        fec: a.fec,
        frame_noise: a.frame_noise,
        seed,
    };
    o.model().map_err(Usage)?;
    Ok(Some(o))
}

fn cca(a: &CcArgs, media: bool) -> Result<Cca, Usage> {
    if a.builtin_cubic {
        if a.intent.is_some() {
            return Err(Usage(
                "--intent needs a polycc controller, not --builtin-cubic".into(),
            ));
        }
        return Ok(Cca::BuiltinCubic);
    }
    // A video connection carries frames: a frame scheduler (pibes) can run on it.
    let parsed = if media {
        Polycc::parse_for_media(&a.cca)
    } else {
        Polycc::parse(&a.cca)
    };
    let mut p = parsed.map_err(|e| Usage(e.to_string()))?.with_seed(a.seed);
    if let Some(text) = &a.intent {
        let intent: Intent =
            serde_json::from_str(text).map_err(|e| Usage(format!("--intent {text}: {e}")))?;
        intent
            .validate()
            .map_err(|e| Usage(format!("--intent {text}: {e}")))?;
        p = p.with_intent(intent);
    }
    Ok(Cca::Polycc(p))
}

enum Plan {
    Server(ServerOptions),
    Client(ClientOptions),
}

fn plan(cli: Cli) -> Result<Plan, Usage> {
    Ok(match cli.command {
        Command::Server(a) => Plan::Server(ServerOptions {
            listen: a.listen,
            cca: cca(&a.cc, false)?,
            cert_out: a.cert_out,
            transfers: a.transfers,
            run_for: a.run_for.map(|s| seconds("run-for", s)).transpose()?,
            idle_timeout: seconds("idle-timeout", a.cc.idle_timeout)?,
            timing_reports: a.timing_reports,
            video: a.video,
        }),
        Command::Client(a) => {
            let duration = seconds("duration", a.duration)?;
            let default_timeout = match a.bytes {
                Some(_) => Duration::from_secs(120),
                None => duration + Duration::from_secs(30),
            };
            if let Some(ca) = &a.ca {
                if !ca.is_file() {
                    return Err(Usage(format!("--ca {}: no such file", ca.display())));
                }
            }
            let video = video(&a.video, a.cc.seed)?;
            Plan::Client(ClientOptions {
                connect: a.connect,
                cca: cca(&a.cc, video.is_some())?,
                ca: a.ca,
                bytes: a.bytes,
                duration,
                connect_timeout: seconds("connect-timeout", a.connect_timeout)?,
                timeout: a
                    .timeout
                    .map(|s| seconds("timeout", s))
                    .transpose()?
                    .unwrap_or(default_timeout),
                idle_timeout: seconds("idle-timeout", a.cc.idle_timeout)?,
                video,
                telemetry_every: a
                    .telemetry_every
                    .map(|s| seconds("telemetry-every", s))
                    .transpose()?,
            })
        }
    })
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let plan = match plan(cli) {
        Ok(p) => p,
        Err(Usage(msg)) => {
            eprintln!("polycc-quic: {msg}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("polycc-quic: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = rt.block_on(async {
        match plan {
            Plan::Server(o) => run_server(o).await.map(|failed| {
                if failed > 0 {
                    eprintln!("polycc-quic: {failed} transfer(s) failed");
                }
                failed == 0
            }),
            Plan::Client(o) => run_client(o).await.map(|r| {
                println!("{}", r.json);
                true
            }),
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("polycc-quic: {e:#}");
            ExitCode::from(1)
        }
    }
}
