//! The agent on a thread of its own, with the shim it registers: started with
//! [`AgentThread::spawn`], stopped (and the `polycc` controller unregistered) by
//! [`AgentThread::stop`] or when dropped.

use crate::agent::{Agent, AgentError, AgentStats, Sockets, Views};
use crate::Shim;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

/// A running agent. The shim lives on the agent's thread (its ring buffer is not `Send`), so
/// the controller is registered when [`AgentThread::spawn`] returns and unregistered when the
/// thread ends.
pub struct AgentThread {
    stop: Arc<AtomicBool>,
    views: Views,
    intents: mpsc::Sender<(Sockets, polycc::Intent)>,
    thread: Option<JoinHandle<Result<AgentStats, AgentError>>>,
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

impl AgentThread {
    /// Registers the shim on a new thread and runs `agent` there; returns once the
    /// controller is registered, or with why it could not be.
    pub fn spawn(mut agent: Agent) -> Result<AgentThread, AgentError> {
        let stop = Arc::new(AtomicBool::new(false));
        let views = agent.views();
        let (intents, inbox) = mpsc::channel();
        agent.inbox = Some(inbox);
        let (ready_tx, ready_rx) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("polycc-agent".into())
            .spawn(move || {
                let mut shim = match Shim::register() {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Ok(AgentStats::default());
                    }
                };
                let cpu0 = thread_cpu_ns();
                let result = agent.run(&mut shim, &flag);
                let mut stats = agent.stats().clone();
                stats.cpu_ns = thread_cpu_ns().saturating_sub(cpu0);
                result.map(|()| stats)
            })
            .map_err(|e| AgentError::Died(format!("cannot start it: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(AgentThread {
                stop,
                views,
                intents,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e.into())
            }
            Err(_) => Err(AgentError::Died(join_message(thread.join()))),
        }
    }

    /// The sockets' views, updated as reports come.
    pub fn views(&self) -> Views {
        Arc::clone(&self.views)
    }

    /// Hands `intent` to the controllers of `sockets` (at the agent's next poll, within
    /// [`crate::agent::POLL`]) and of matching sockets that start later.
    pub fn set_intent(&self, sockets: Sockets, intent: polycc::Intent) -> Result<(), AgentError> {
        self.intents
            .send((sockets, intent))
            .map_err(|_| AgentError::Died("it ended before the intent reached it".into()))
    }

    /// Whether the agent's thread still runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the agent, unregisters the controller, and returns the agent's counters.
    pub fn stop(mut self) -> Result<AgentStats, AgentError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<AgentStats, AgentError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => match t.join() {
                Ok(r) => r,
                Err(p) => Err(AgentError::Died(join_message::<()>(Err(p)))),
            },
            None => Ok(AgentStats::default()),
        }
    }
}

fn join_message<T>(r: std::thread::Result<T>) -> String {
    match r {
        Ok(_) => "it ended before registering the controller".into(),
        Err(p) => p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "it panicked".into()),
    }
}

impl Drop for AgentThread {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
