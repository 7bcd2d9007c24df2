//! `polycc-quic server|client`: verified bulk and sized transfers over s2n-quic with any polycc
//! controller (`--cca`), or s2n-quic's own CUBIC (`--builtin-cubic`) for comparison.
//!
//! Exit codes: 0 every transfer verified; 1 a transfer failed (no handshake, connection lost,
//! timeout, checksum mismatch); 2 bad input (a spec the registry rejects, a bad address or
//! intent, a missing certificate file).

use clap::{Args, Parser, Subcommand};
use polycc::Intent;
use polycc_quic::endpoints::{run_client, run_server, Cca, ClientOptions, ServerOptions};
use polycc_quic::Polycc;
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
    #[command(flatten)]
    cc: CcArgs,
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

fn cca(a: &CcArgs) -> Result<Cca, Usage> {
    if a.builtin_cubic {
        if a.intent.is_some() {
            return Err(Usage(
                "--intent needs a polycc controller, not --builtin-cubic".into(),
            ));
        }
        return Ok(Cca::BuiltinCubic);
    }
    let mut p = Polycc::parse(&a.cca)
        .map_err(|e| Usage(e.to_string()))?
        .with_seed(a.seed);
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
            cca: cca(&a.cc)?,
            cert_out: a.cert_out,
            transfers: a.transfers,
            run_for: a.run_for.map(|s| seconds("run-for", s)).transpose()?,
            idle_timeout: seconds("idle-timeout", a.cc.idle_timeout)?,
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
            Plan::Client(ClientOptions {
                connect: a.connect,
                cca: cca(&a.cc)?,
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
