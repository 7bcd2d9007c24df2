//! Network namespaces the emulator creates, enters and removes.
//!
//! Names are `polycc-<pid>-<n>-<role>`: the pid lets a later run remove what a killed run left
//! behind ([`remove_stale`]), the counter keeps concurrent runs of one process apart. Namespaces
//! are made and removed with iproute2's `ip netns`, which also bind-mounts them under
//! `/run/netns` so that a thread can join one with `setns(2)`.

use crate::error::EmuError;
use std::fs::File;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Prefix of every namespace polycc creates.
pub const PREFIX: &str = "polycc-";
/// Where `ip netns` keeps its namespace handles.
const NETNS_DIR: &str = "/run/netns";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A namespace owned by this process, removed on drop (which also tears down its devices and
/// closes the sockets' routes).
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates a fresh namespace with its loopback up.
    pub fn create(role: &str) -> Result<Self, EmuError> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{}-{n}-{role}", std::process::id());
        ip(&["netns", "add", &name])?;
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n NAME ARGS...`.
    pub fn ip(&self, args: &[&str]) -> Result<(), EmuError> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Moves the calling thread into the namespace: sockets and devices it creates from now on
    /// live there. Only for threads the emulator owns.
    pub fn enter(&self) -> Result<(), EmuError> {
        let path = format!("{NETNS_DIR}/{}", self.name);
        let f = File::open(&path).map_err(|e| EmuError::system(format!("open {path}"), e))?;
        nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| EmuError::system(format!("setns into {}", self.name), e))
    }

    /// Runs `f` on a new thread inside the namespace and returns its result.
    pub fn run_in<T: Send>(
        &self,
        f: impl FnOnce() -> Result<T, EmuError> + Send,
    ) -> Result<T, EmuError> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter()?;
                f()
            })
            .join()
            .map_err(|_| EmuError::Internal(format!("a thread in {} panicked", self.name)))?
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        kill_processes(&self.name);
        let _ = ip(&["netns", "delete", &self.name]);
    }
}

/// Kills (SIGKILL) every process still in namespace `name` but this one: an outside program
/// (`stack = "external"`) that outlived its process group's kill, or one a killed run left
/// behind. Deleting a namespace does not end its processes.
pub fn kill_processes(name: &str) -> Vec<i32> {
    let Ok(out) = Command::new("ip").args(["netns", "pids", name]).output() else {
        return Vec::new();
    };
    let me = std::process::id() as i32;
    let pids: Vec<i32> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|&p| p != me && p > 1)
        .collect();
    for &p in &pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    pids
}

/// Runs iproute2's `ip` with `args`; its stderr becomes the error.
pub fn ip(args: &[&str]) -> Result<(), EmuError> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        EmuError::system(
            "running `ip` (iproute2; install it with scripts/install-emu-deps.sh)",
            e,
        )
    })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(EmuError::system(
            format!("ip {}", args.join(" ")),
            String::from_utf8_lossy(&out.stderr).trim(),
        ))
    }
}

/// Removes namespaces named by [`Netns::create`] whose process is gone (a run killed with
/// SIGKILL, or a crash); returns their names. Namespaces of live processes are left alone.
pub fn remove_stale() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name) else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        kill_processes(&name);
        if ip(&["netns", "delete", &name]).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// The pid in a name made by [`Netns::create`].
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Whether this process may create namespaces and devices; the error says what is missing.
pub fn check_privileges() -> Result<(), EmuError> {
    if !nix::unistd::Uid::effective().is_root() {
        return Err(EmuError::Privilege(
            "root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces and TUN \
             devices; run it with sudo, or use --backend sim"
                .into(),
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::Privilege(
            "/dev/net/tun (the TUN driver); it is missing on this host".into(),
        ));
    }
    Command::new("ip").arg("-V").output().map_err(|_| {
        EmuError::Privilege("iproute2's `ip`: run scripts/install-emu-deps.sh".into())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_reads_only_our_names() {
        assert_eq!(owner_pid("polycc-123-0-left"), Some(123));
        assert_eq!(owner_pid("polycc-x-0-left"), None);
        assert_eq!(owner_pid("other-123-0"), None);
    }
}
