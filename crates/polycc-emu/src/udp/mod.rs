//! polycc's own sender over real UDP sockets (`stack = "udp"` in the emulator): the
//! simulator's default transport, `polycc-transport` (QUIC's loss recovery, RFC 9002, ACK
//! ranges, delivery-rate samples, pacing), driving the flow's polycc controller, with its
//! packets and ACKs carried as datagrams through the emulated network. It has QUIC's recovery
//! and acknowledgement semantics, not QUIC's encryption, streams or flow control.
//!
//! The client sends numbered data packets of one MTU (1500 bytes on the wire); each carries a
//! segment of the flow's data, and a lost segment is sent again under a new packet number. The
//! server acknowledges as the scenario's `ack` policy says, with the most recent ranges of
//! packet numbers received and, for controllers that ask for receiver timing (LEDBAT, PIBES,
//! GCC), each packet's arrival time.

pub mod client;
pub mod server;
pub mod unresponsive;
pub mod wire;
