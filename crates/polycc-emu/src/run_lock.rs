//! One emulated run at a time on a machine. The emulator keeps time on a real clock, and two
//! runs side by side take each other's CPU: their emulator threads, endpoints and the kernel's
//! softirqs delay each other's packets, which a run reads as its network's doing. Runs also
//! share the kernel-TCP shim's eBPF `struct_ops` name, which one process at a time can
//! register. So a run takes an exclusive `flock` on a file before it makes anything, and waits
//! while another process holds it; the kernel releases the lock when its holder exits, killed
//! too, so a crashed run never blocks the next.

use crate::error::EmuError;
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file: `/run/lock` is the FHS place for lock files and exists on systemd hosts;
/// elsewhere the temporary directory.
const LOCK_DIRS: [&str; 1] = ["/run/lock"];
const LOCK_NAME: &str = "polycc-emu.lock";
/// How often a waiting run looks again (and asks whether it was cancelled).
const POLL: Duration = Duration::from_millis(100);

/// Held for the whole run; dropping it releases the lock.
pub struct RunLock {
    _lock: Flock<File>,
}

impl RunLock {
    /// Takes the machine's emulator lock, waiting while another process holds it (saying so
    /// once on stderr, with the holder's pid). `cancelled` ends the wait with an error.
    pub fn acquire(cancelled: &dyn Fn() -> bool) -> Result<RunLock, EmuError> {
        Self::acquire_at(&lock_path(), cancelled)
    }

    fn acquire_at(path: &Path, cancelled: &dyn Fn() -> bool) -> Result<RunLock, EmuError> {
        let what = || format!("opening the emulator's lock file {}", path.display());
        let mut told = false;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| EmuError::system(what(), e))?;
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(mut lock) => {
                    // The holder's pid, for the message of a run that waits for this one.
                    let pid = std::process::id().to_string();
                    let written = lock
                        .set_len(0)
                        .and_then(|_| lock.rewind())
                        .and_then(|_| lock.write_all(pid.as_bytes()));
                    written.map_err(|e| EmuError::system(what(), e))?;
                    return Ok(RunLock { _lock: lock });
                }
                Err((mut file, Errno::EWOULDBLOCK)) => {
                    if !told {
                        let mut holder = String::new();
                        let _ = file.read_to_string(&mut holder);
                        eprintln!(
                            "polycc-emu: waiting for another emulated run (pid {}) to finish: \
                             runs on one machine go one at a time",
                            holder.trim()
                        );
                        told = true;
                    }
                }
                Err((_, e)) => return Err(EmuError::system(what(), e)),
            }
            if cancelled() {
                return Err(EmuError::system(
                    "waiting for another emulated run",
                    "cancelled",
                ));
            }
            std::thread::sleep(POLL);
        }
    }
}

fn lock_path() -> PathBuf {
    LOCK_DIRS
        .iter()
        .map(Path::new)
        .find(|d| d.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
        .join(LOCK_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_second_run_waits_until_the_first_lets_go() {
        let path =
            std::env::temp_dir().join(format!("polycc-emu-lock-test-{}", std::process::id()));
        let first = RunLock::acquire_at(&path, &|| false).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            std::process::id().to_string()
        );
        // flock locks belong to the open file, so a second open in this process conflicts as
        // another process's would. Cancel the waiter after three looks: it must not get in.
        let looks = AtomicUsize::new(0);
        let waited = RunLock::acquire_at(&path, &|| looks.fetch_add(1, Ordering::SeqCst) >= 2);
        assert!(waited.is_err());
        assert_eq!(looks.load(Ordering::SeqCst), 3);
        drop(first);
        let second = RunLock::acquire_at(&path, &|| true);
        assert!(
            second.is_ok(),
            "a free lock is taken at once, cancelled or not"
        );
        drop(second);
        std::fs::remove_file(&path).unwrap();
    }
}
