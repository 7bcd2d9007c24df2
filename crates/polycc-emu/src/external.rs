//! A flow carried by an outside program (`stack = "external"`): the scenario's `receiver`
//! command started in the receiving namespace when the run starts, its `sender` command in the
//! sending namespace at the flow's start, both killed (their whole process group) at the flow's
//! stop or the end of the run, as Pantheon runs its schemes.
//!
//! Each command runs as `sh -c COMMAND` in a session of its own, so that killing the group
//! ends whatever the shell started; the namespace's own clean-up
//! ([`crate::netns::kill_processes`]) catches a process that left the group. Its stdout and
//! stderr go to files (`<flow>.sender.stdout`, ...) in the run's log directory.
//!
//! The program reports nothing to polycc: the flow's numbers are the emulator's view of its
//! packets (classified by the receiver's port, [`crate::classify`]).

use crate::clock::Clock;
use crate::flow_state::FlowShared;
use crate::linux_tcp::sleep_until;
use crate::netns::Netns;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use polycc::units::{Duration, Time};
use polycc_sim::scenario::external::{expand, ExternalCommands, Values};
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// How long the receiver may take to listen on its port before the flow fails: a program that
/// never binds it (wrong port, a crash) would otherwise leave the sender talking to nothing.
const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// How often the supervisor looks at its programs and at the run's stop flag.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);
/// Between SIGTERM and SIGKILL: time for a program to exit on its own (flush its logs).
const GRACE: std::time::Duration = std::time::Duration::from_millis(500);
/// Lines of a failed program's stderr quoted in the error.
const STDERR_TAIL_LINES: usize = 6;
/// The shell's exit status for a command it cannot find (POSIX).
const NOT_FOUND: i32 = 127;

/// One running command: its shell is its process group's leader.
pub struct Program {
    child: Child,
    role: &'static str,
    stderr: PathBuf,
}

impl Program {
    /// Starts `command` with `sh -c` in the calling thread's network namespace (the child
    /// inherits it), in a new session; its output goes to `<log_dir>/<flow>.<role>.{stdout,stderr}`.
    pub fn spawn(
        command: &str,
        role: &'static str,
        flow: &str,
        log_dir: &Path,
    ) -> Result<Program, String> {
        let path = |ext: &str| log_dir.join(format!("{flow}.{role}.{ext}"));
        let file = |p: &PathBuf| {
            File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
        };
        let (out, err) = (path("stdout"), path("stderr"));
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(file(&out)?)
            .stderr(file(&err)?);
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid()
                    .map(|_| ())
                    .map_err(std::io::Error::from)
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the {role} (`sh -c {command:?}`): {e}"))?;
        Ok(Program {
            child,
            role,
            stderr: err,
        })
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Its exit status if it has ended.
    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Why an ended program failed, or None if it succeeded.
    fn failure(&self, status: ExitStatus, command: &str) -> Option<String> {
        if status.success() {
            return None;
        }
        let how = match (status.code(), status.signal()) {
            (Some(NOT_FOUND), _) => {
                "could not start: its program was not found (the shell's exit status 127)".into()
            }
            (Some(c), _) => format!("exited with status {c} before the flow's end"),
            (None, Some(s)) => format!("was killed by signal {s} before the flow's end"),
            (None, None) => "ended before the flow's end".into(),
        };
        let tail = std::fs::read_to_string(&self.stderr)
            .map(|s| {
                let lines: Vec<&str> = s.lines().collect();
                lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join("\n  ")
            })
            .unwrap_or_default();
        Some(format!(
            "the {} (`{command}`) {how}; its stderr ({}):\n  {}",
            self.role,
            self.stderr.display(),
            if tail.is_empty() { "(empty)" } else { &tail }
        ))
    }

    /// Ends its process group: SIGTERM, then SIGKILL after `GRACE`; reaps the shell.
    pub fn kill(&mut self) {
        if self.exited().is_some() {
            // The shell is gone; what it started may not be.
            let _ = killpg(Pid::from_raw(self.pid()), Signal::SIGKILL);
            return;
        }
        let group = Pid::from_raw(self.pid());
        let _ = killpg(group, Signal::SIGTERM);
        let t0 = std::time::Instant::now();
        while t0.elapsed() < GRACE && self.exited().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.pid()), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// One external flow, as the run hands it to [`run_flow`].
pub struct ExternalFlow<'a> {
    pub id: &'a str,
    pub commands: &'a ExternalCommands,
    pub values: Values,
    pub sender_ns: &'a Netns,
    pub receiver_ns: &'a Netns,
    pub start: Time,
    pub stop_at: Time,
    pub log_dir: &'a Path,
}

/// Runs one external flow from the run's start to `stop_at` (or the run's stop): receiver,
/// then sender, then both killed. A failure (a command that cannot start, a receiver that never
/// listens, a program ending early with a non-zero status) is the flow's error.
pub fn run_flow(x: ExternalFlow, flow: &FlowShared, clock: &Clock, stop: &AtomicBool) {
    if let Err(e) = supervise(&x, flow, clock, stop) {
        flow.fail(e);
    }
}

fn supervise(
    x: &ExternalFlow,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) -> Result<(), String> {
    let receiver_cmd = expand(&x.commands.receiver, &x.values)?;
    let sender_cmd = expand(&x.commands.sender, &x.values)?;
    let mut receiver = x
        .receiver_ns
        .run_in(|| Program::spawn(&receiver_cmd, "receiver", x.id, x.log_dir).map_err(internal))
        .map_err(|e| e.to_string())?;
    let result = run_both(
        x,
        &mut receiver,
        &receiver_cmd,
        &sender_cmd,
        flow,
        clock,
        stop,
    );
    receiver.kill();
    flow.set_ended(clock.now().min(x.stop_at));
    result
}

fn internal(e: String) -> crate::EmuError {
    crate::EmuError::Internal(e)
}

fn run_both(
    x: &ExternalFlow,
    receiver: &mut Program,
    receiver_cmd: &str,
    sender_cmd: &str,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) -> Result<(), String> {
    // The receiver listens before the sender starts (which is later than `start` if the
    // receiver is slow to bind).
    let t0 = std::time::Instant::now();
    loop {
        if let Some(status) = receiver.exited() {
            return Err(receiver.failure(status, receiver_cmd).unwrap_or_else(|| {
                format!("the receiver (`{receiver_cmd}`) exited before the sender started")
            }));
        }
        if listening(receiver.pid(), x.values.port) {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        if t0.elapsed() > READY_TIMEOUT {
            return Err(format!(
                "the receiver (`{receiver_cmd}`) did not listen on port {} within {} s (its \
                 command must bind {{port}}; its stderr: {})",
                x.values.port,
                READY_TIMEOUT.as_secs(),
                receiver.stderr.display()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    if !wait_until(x.start, receiver, receiver_cmd, clock, stop)? {
        return Ok(());
    }
    let mut sender = x
        .sender_ns
        .run_in(|| Program::spawn(sender_cmd, "sender", x.id, x.log_dir).map_err(internal))
        .map_err(|e| e.to_string())?;
    flow.set_started(clock.now());
    let mut result = Ok(());
    while !stop.load(Ordering::Relaxed) && clock.now() < x.stop_at {
        if let Some(status) = sender.exited() {
            // A sender that ends on its own with success is a flow that is done.
            if let Some(e) = sender.failure(status, sender_cmd) {
                result = Err(e);
            }
            break;
        }
        if let Some(status) = receiver.exited() {
            if let Some(e) = receiver.failure(status, receiver_cmd) {
                result = Err(e);
                break;
            }
        }
        let next = clock.now() + Duration::from_nanos(POLL.as_nanos() as u64);
        sleep_until(clock, next.min(x.stop_at), stop);
    }
    flow.set_ended(clock.now().min(x.stop_at));
    sender.kill();
    result
}

/// Sleeps until `t` while the receiver runs; false if the run stopped first.
fn wait_until(
    t: Time,
    receiver: &mut Program,
    receiver_cmd: &str,
    clock: &Clock,
    stop: &AtomicBool,
) -> Result<bool, String> {
    loop {
        if let Some(status) = receiver.exited() {
            if let Some(e) = receiver.failure(status, receiver_cmd) {
                return Err(e);
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let now = clock.now();
        if now >= t {
            return Ok(true);
        }
        let step = Duration::from_nanos(POLL.as_nanos() as u64);
        sleep_until(clock, (now + step).min(t), stop);
    }
}

/// Whether a socket in the namespace of process `pid` is bound to `port`: a listening TCP
/// socket, or any UDP socket (from `/proc/PID/net/{tcp,udp}[6]`, which show that process's
/// namespace).
fn listening(pid: i32, port: u16) -> bool {
    let want = format!(":{port:04X}");
    ["tcp", "tcp6", "udp", "udp6"].iter().any(|proto| {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{proto}")) else {
            return false;
        };
        text.lines().skip(1).any(|l| {
            let mut cols = l.split_whitespace();
            let local = cols.nth(1).unwrap_or("");
            // TCP state 0A is LISTEN; a UDP socket is bound when it appears at all.
            let state = cols.nth(1).unwrap_or("");
            local.ends_with(&want) && (proto.starts_with("udp") || state == "0A")
        })
    })
}

/// Where the programs' output goes when the caller names no directory: a fresh directory
/// under the system's temporary one.
pub fn default_log_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("polycc-external-{}-{n}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_program_is_reported_with_its_stderr() {
        let dir = default_log_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let mut p =
            Program::spawn("echo oops >&2; no-such-program-xyz", "sender", "f", &dir).unwrap();
        let status = p.child.wait().unwrap();
        let e = p.failure(status, "no-such-program-xyz").unwrap();
        assert!(e.contains("not found"), "{e}");
        assert!(e.contains("oops"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn killing_a_program_ends_its_whole_group() {
        let dir = default_log_dir();
        std::fs::create_dir_all(&dir).unwrap();
        // The shell forks a background child, which must die with it.
        let mut p = Program::spawn("sleep 30 & echo $! ; wait", "receiver", "f", &dir).unwrap();
        let out = dir.join("f.receiver.stdout");
        let t0 = std::time::Instant::now();
        let bg = loop {
            if let Ok(s) = std::fs::read_to_string(&out) {
                if let Ok(pid) = s.trim().parse::<i32>() {
                    break pid;
                }
            }
            assert!(t0.elapsed().as_secs() < 5, "the background child's pid");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert!(Path::new(&format!("/proc/{bg}")).exists());
        p.kill();
        std::thread::sleep(std::time::Duration::from_millis(50));
        // Reaped by init once killed: gone, or a zombie at most.
        let state = std::fs::read_to_string(format!("/proc/{bg}/stat")).unwrap_or_default();
        assert!(
            state.is_empty() || state.contains(") Z"),
            "the background child is gone: {state}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
