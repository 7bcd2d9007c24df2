//! The receiving end of a QUIC flow: an s2n-quic server on the flow's socket that reads each
//! stream as one transfer, counts its data bytes as they arrive (goodput), records the
//! transfer complete when its trailer arrives, and answers with the checksum's verdict. For a
//! controller that takes receiver timing it also reports every packet's arrival
//! ([`polycc_quic::timing::send_reports`]).

use super::{io, limits, VERIFY_GRACE};
use crate::clock::Clock;
use crate::flow_state::{lock, FlowShared};
use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt};
use polycc_quic::media_datagrams::{MediaChannel, MediaDatagrams};
use polycc_quic::s2n_quic::provider::io::tokio::Builder as IoBuilder;
use polycc_quic::s2n_quic::provider::tls::rustls;
use polycc_quic::s2n_quic::{Connection, Server};
use polycc_quic::timing::send_reports;
use polycc_quic::transfer::Receiver;
use polycc_quic::TimingEvents;
use std::cell::Cell;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};

/// How often the server looks at the stop flag.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// What the server's connections share (one thread: plain cells).
struct Served<'a> {
    flow: &'a FlowShared,
    clock: &'a Clock,
    /// Sized, web and DASH flows: each stream is a transfer the sender logged
    /// (`FlowShared::request`); bulk flows have one stream without end.
    transfers: bool,
    /// Report arrivals to the sender (its controller wants feedback).
    report_arrivals: bool,
    /// A video flow: its frames come as datagrams (`super::video`).
    video: bool,
    media: MediaChannel,
    /// Data bytes of the transfers received in full so far.
    completed: Cell<u64>,
    stop: &'a AtomicBool,
}

/// What a flow's server receives.
#[derive(Clone, Copy, Debug, Default)]
pub struct Receives {
    /// Sized, web and DASH flows: each stream is a transfer.
    pub transfers: bool,
    /// Report arrivals to the sender (its controller wants feedback).
    pub report_arrivals: bool,
    /// A video flow: frames as datagrams.
    pub video: bool,
}

/// Serves one flow (on a thread in the receiving namespace) until `stop`, and then while a
/// connection is still open, for at most [`VERIFY_GRACE`] (a bulk flow's sender is waiting for
/// its verdict).
pub fn run_server(
    sock: UdpSocket,
    tls: rustls::Server,
    Receives {
        transfers,
        report_arrivals,
        video,
    }: Receives,
    flow: &FlowShared,
    clock: &Clock,
    stop: &AtomicBool,
) {
    let rt = match super::runtime() {
        Ok(rt) => rt,
        Err(e) => return flow.fail(e),
    };
    let served = Served {
        flow,
        clock,
        transfers,
        report_arrivals,
        video,
        media: MediaChannel::default(),
        completed: Cell::new(0),
        stop,
    };
    if let Err(e) = rt.block_on(serve(sock, tls, &served)) {
        flow.fail(e);
    }
}

async fn serve(sock: UdpSocket, tls: rustls::Server, s: &Served<'_>) -> Result<(), String> {
    let io = IoBuilder::default()
        .with_rx_socket(sock)
        .map_err(|e| format!("QUIC server socket: {e}"))
        .and_then(io)?;
    let failed = |e: &dyn std::fmt::Display| format!("QUIC server: {e}");
    let mut server = Server::builder()
        .with_tls(tls)
        .map_err(|e| failed(&e))?
        .with_io(io)
        .map_err(|e| failed(&e))?
        .with_limits(limits()?)
        .map_err(|e| failed(&e))?
        .with_event(if s.report_arrivals {
            TimingEvents::receiver()
        } else {
            TimingEvents::sender()
        })
        .map_err(|e| failed(&e))?
        .with_datagram(MediaDatagrams::new(s.media.clone()))
        .map_err(|e| failed(&e))?
        .start()
        .map_err(|e| failed(&e))?;
    let mut connections = FuturesUnordered::new();
    let mut stopped_at: Option<std::time::Instant> = None;
    loop {
        if s.stop.load(Ordering::Relaxed) {
            let since = *stopped_at.get_or_insert_with(std::time::Instant::now);
            if connections.is_empty() || since.elapsed() >= VERIFY_GRACE {
                return Ok(());
            }
        }
        tokio::select! {
            conn = server.accept() => match conn {
                Some(conn) => connections.push(connection(conn, s)),
                None => return Err("the QUIC server's endpoint closed".into()),
            },
            Some(result) = connections.next(), if !connections.is_empty() => result?,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// One connection: its streams in turn, and its arrival reports when asked.
async fn connection(conn: Connection, s: &Served<'_>) -> Result<(), String> {
    let handle = conn.handle();
    let reports = async move {
        if s.report_arrivals {
            send_reports(handle).await;
        }
        std::future::pending::<()>().await
    };
    let frames = async {
        if s.video {
            receive_video(s).await
        } else {
            std::future::pending().await
        }
    };
    tokio::select! {
        r = transfers(conn, s) => r,
        _ = reports => Ok(()),
        r = frames => r,
    }
}

/// A video flow's datagrams as they arrive: each new shard counted (goodput, the source's
/// records) and each frame recovered and checked once any k of its shards are in; until the
/// connection ends. An error for a datagram that is not the flow's or a frame that does not
/// recover to what was sent.
async fn receive_video(s: &Served<'_>) -> Result<(), String> {
    let mut frames = super::video::FrameAssembler::default();
    let (mut sent, mut arrived) = (Vec::new(), Vec::new());
    loop {
        s.media.arrival().await;
        s.media.drain(&mut sent, &mut arrived);
        sent.clear();
        if arrived.is_empty() && s.media.error().is_some() {
            return Ok(());
        }
        let mut video = lock(&s.flow.video);
        for (d, at) in arrived.drain(..) {
            let Some(seg) = frames
                .on_datagram(&d)
                .map_err(|e| format!("QUIC video receiver: {e}"))?
            else {
                continue;
            };
            s.flow.add_received(d.len() as u64);
            if let Some(v) = video.as_mut() {
                v.on_arrival(seg, super::video::time_of(s.clock, at));
            }
        }
    }
}

/// Resolves once the flow's sender has stopped writing (it marks the flow ended before it
/// waits for its verdict) or the run is over.
async fn sender_done(s: &Served<'_>) {
    while !s.stop.load(Ordering::Relaxed) && lock(&s.flow.ended).is_none() {
        tokio::time::sleep(POLL).await;
    }
}

/// A connection's streams in turn, each a transfer, until the peer closes it. An error is
/// returned only for a transfer that arrived whole and failed its checksum; a connection cut
/// short (the run's end) is not an error.
///
/// A bulk stream's receiver publishes what it has read (`FlowShared::read_so_far`, which the
/// sender checks when the verdict cannot come in time) only from the moment the sender is done
/// (then on each chunk, and when the stream ends): not on every chunk of the run.
async fn transfers(mut conn: Connection, s: &Served<'_>) -> Result<(), String> {
    let publish = |rx: &Receiver| *lock(&s.flow.read_so_far) = (rx.bytes(), rx.checksum());
    while let Ok(Some(mut stream)) = conn.accept_bidirectional_stream().await {
        let mut rx = Receiver::new();
        let mut counted = 0;
        let mut recorded = false;
        let bulk = !s.transfers;
        // From the sender's end on: the tail of the stream, as it drains.
        let mut publishing = false;
        loop {
            // `receive` keeps what it has not returned: dropping it for the other branch loses
            // nothing.
            let next = tokio::select! {
                r = stream.receive() => r,
                _ = sender_done(s), if bulk && !publishing => {
                    publishing = true;
                    publish(&rx);
                    continue;
                }
            };
            match next {
                Ok(Some(chunk)) => {
                    if let Err(e) = rx.push(&chunk) {
                        return Err(format!("QUIC receiver: {e}"));
                    }
                    s.flow.add_received(rx.bytes() - counted);
                    counted = rx.bytes();
                    if publishing {
                        publish(&rx);
                    }
                    if rx.is_done() && !recorded {
                        recorded = true;
                        if s.transfers {
                            s.completed.set(s.completed.get() + counted);
                            s.flow.complete_bytes(s.completed.get(), s.clock.now());
                        }
                    }
                }
                Ok(None) => {
                    if bulk {
                        publish(&rx);
                    }
                    break;
                }
                Err(_) => {
                    // Reset or closed: the run ended.
                    if bulk {
                        publish(&rx);
                    }
                    return Ok(());
                }
            }
        }
        let Ok(verdict) = rx.finish() else {
            return Ok(()); // cut short
        };
        if !verdict.ok {
            return Err(format!(
                "QUIC transfer failed its checksum: {} bytes received, checksum {:016x}",
                verdict.bytes, verdict.checksum
            ));
        }
        if stream
            .send(Bytes::copy_from_slice(&verdict.encode()))
            .await
            .and_then(|_| stream.finish())
            .is_err()
        {
            return Ok(());
        }
    }
    Ok(())
}
