//! The capture generators of the performance harness (`bench/run`).
//!
//! Two traffic shapes, each a binary and a module:
//!
//! - [`long_flow`] (`gen-capture`): many interleaved TCP connections with a
//!   whole life each (handshake with options, data and ACKs, SACK after
//!   simulated loss, retransmissions, FIN), at most `--open` of them open at
//!   once: the capture the dump and analyze timings and the 1 GB memory test
//!   run on.
//! - [`many_conns`] (`gen-many-conns`): a SYN scan, about one connection per
//!   two segments (refused, half-open, unanswered 2:1:1): the shape where the
//!   per-connection cost of an analyser shows.
//!
//! Every packet is a [`tcp_options::PacketRepr`] (IPv4 or IPv6 header and a
//! [`tcp_options::TcpRepr`]) with options from [`tcp_options::OptionsBuilder`],
//! emitted with valid IP and TCP checksums, behind a 14-byte Ethernet header
//! ([`frame::ethernet`], the one thing here the crates have no repr for). The
//! records go through the one capture writer, [`capture::writer`] (pcap
//! and pcapng), cut at the snap length ([`sink::CaptureSink`]). Beside each
//! file a JSON sidecar gives the counts `bench/render.py` prints
//! ([`files::Sidecar`]).
//!
//! Deterministic for a seed: one [`rand::rngs::ChaCha8Rng`] seeded with
//! [`rand::SeedableRng::seed_from_u64`] makes every draw, in a fixed order.
//! These generators replace two Python scripts (`bench/gen_capture.py` and
//! `bench/gen_many_conns.py`); the byte stream differs from theirs (another
//! generator), but every probability, range and rule of the traffic model is
//! theirs, so the statistics match by construction (the module docs list
//! them).
//!
//! ```
//! use tcp_perf_bench::long_flow::{self, Limit, Params};
//! use tcp_perf_bench::sink::{CaptureSink, Format};
//!
//! let mut sinks = [CaptureSink::new(Vec::new(), Format::Pcap, 65535).unwrap()];
//! let params = Params { limit: Limit::Segments(500), open: 8, seed: 1 };
//! let counts = long_flow::generate(&params, &mut sinks).unwrap();
//! assert_eq!(counts.segments, 500);
//! assert_eq!(counts.ipv4_segments + counts.ipv6_segments, 500);
//! assert!(counts.connections >= 8);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conn;
pub mod error;
pub mod files;
pub mod frame;
pub mod long_flow;
pub mod many_conns;
pub mod record;
pub mod sink;

pub use error::GenError;

/// The seeded generator every draw comes from.
pub type Rng = rand::rngs::ChaCha8Rng;

/// The generator for `seed` ([`rand::SeedableRng::seed_from_u64`]).
pub fn rng(seed: u64) -> Rng {
    rand::SeedableRng::seed_from_u64(seed)
}

/// What a generator wrote: the counts of the sidecar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// TCP segments (records) written.
    pub segments: u64,
    /// Of them, over IPv4.
    pub ipv4_segments: u64,
    /// Of them, over IPv6.
    pub ipv6_segments: u64,
    /// Connections with at least one segment in the capture.
    pub connections: u64,
}

/// Capture time of the first record: 2023-11-14 22:13:20 UTC, in
/// microseconds since the epoch (the Python generators' start).
pub const START_US: u64 = 1_700_000_000 * 1_000_000;
