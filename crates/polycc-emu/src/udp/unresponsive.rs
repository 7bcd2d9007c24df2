//! An unresponsive source (`cbr` and `poisson` traffic): full-size datagrams at the times its
//! schedule says, whatever happens to them, as the simulator's sources without a controller.
//! It runs over UDP whatever the flow's `stack`: neither a kernel nor a polycc controller has a
//! say. Its receiver is the polycc UDP server, told not to acknowledge.

use super::client::WIRE_BYTES;
use super::wire::{Data, IP_UDP_HEADERS};
use crate::app::Schedule;
use crate::clock::Clock;
use crate::flow_state::{lock, Counters, FlowShared};
use polycc::units::Time;
use std::io::ErrorKind;
use std::net::{SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};

/// Sends the source's packets (on a thread in the sending namespace) from its first scheduled
/// time until `stop_at`. A packet whose time has passed (the thread woke late) goes at once, so
/// the source keeps its rate.
pub fn run_source(
    mut schedule: Schedule,
    server: SocketAddrV4,
    sock: &UdpSocket,
    stop_at: Time,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    let Some(first) = schedule.next() else {
        return;
    };
    if !crate::linux_tcp::sleep_until(clock, first, stop) {
        return;
    }
    let _ = nix::sys::prctl::set_timerslack(1);
    if let Err(e) = sock.connect(server) {
        return flow.fail(format!("UDP socket to {server}: {e}"));
    }
    flow.set_started(clock.now());
    let mut packet = vec![0u8; (WIRE_BYTES - IP_UDP_HEADERS) as usize];
    let mut sent = 0u64;
    loop {
        let now = clock.now();
        if now >= stop_at || stop.load(Ordering::Relaxed) {
            break;
        }
        while schedule.pop_due(now).is_some() {
            Data {
                pn: sent,
                segment: sent,
                sent: now,
            }
            .write(&mut packet);
            match sock.send(&packet) {
                // A full socket buffer or the server not yet listening loses the packet, as
                // a host would.
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => return flow.fail(format!("send: {e}")),
            }
            sent += 1;
        }
        match schedule.next() {
            Some(t) => crate::linux_tcp::sleep_until(clock, t.min(stop_at), stop),
            None => break,
        };
    }
    *lock(&flow.counters) = Counters {
        packets_sent: sent,
        ..Counters::default()
    };
    flow.set_ended(clock.now().min(stop_at));
}
