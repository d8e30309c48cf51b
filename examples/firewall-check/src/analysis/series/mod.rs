//! `series`' reasoning: each connection's state over time, one
//! [`SeriesSample`] per row.
//!
//! # What a sample means
//!
//! [`sample::series`] gives, in capture order, the sending direction's
//! state after each of its data segments and the receiving direction's
//! state after each of its ACKs. A sample describes one direction's sender
//! ([`SeriesSample::direction`]):
//!
//! - [`time_s`](SeriesSample::time_s): seconds since the connection's first
//!   segment; [`connection`](SeriesSample::connection): its number, from 1
//!   in order of first appearance, as `analyze` numbers them.
//! - [`seq_end`](SeriesSample::seq_end): one past the highest byte sent,
//!   and [`ack`](SeriesSample::ack): the highest acknowledgment the
//!   receiver sent, both relative to the direction's first sequence number
//!   seen.
//! - [`window_bytes`](SeriesSample::window_bytes): the receiver's last
//!   window in bytes as the receiver means it (its field shifted by its own
//!   scale); [`window_read_bytes`](SeriesSample::window_read_bytes): the
//!   same window as the sender reads it (the field shifted by the scale the
//!   sender believes in); unknown where that shift is. The window's right
//!   edge as the sender reads it is `ack + window_read_bytes`; where
//!   `window_bytes` differs, the receiver meant another edge (a window
//!   scale the sender never learned, or a field rewritten on the way).
//! - [`in_flight_bytes`](SeriesSample::in_flight_bytes): bytes sent and not
//!   yet acknowledged, as seen at the capture point;
//!   [`throughput_bps`](SeriesSample::throughput_bps): bytes acknowledged
//!   over the last RTT, in bit/s, unknown without an RTT.
//! - [`rtt_s`](SeriesSample::rtt_s): an RTT sample on a sample where the
//!   receiver's ACK covers new data: from the newest data segment it covers
//!   to the ACK as the capture point saw them, plus the sender's side of
//!   the loop (capture point to sender and back: from the handshake, else
//!   from the sender's echoes of the receiver's TSvals); never from a
//!   retransmitted segment (Karn's rule).
//! - [`limit`](SeriesSample::limit): the sender's phase from this sample to
//!   the next of its direction, as `analyze`'s limit (section 1) books it:
//!   the receive window (including rounds a plateau of the flight moved
//!   there), the network, the sender (decided per round trip: samples wait
//!   for their round, at most [`SERIES_HELD`] of them), idle, busy (network
//!   or sender, where a sample could not wait), or unknown before the first
//!   data segment and wherever the window scale or the RTT is (see
//!   [`crate::analysis::limits`]).
//!
//! Besides one sample per segment, a direction gets a sample (with the
//! previous sample's figures and no RTT sample) where its sender learned of
//! an ACK between two segments (the ACK's time here plus the loop to the
//! sender and back): its phase changes there. So the time between samples,
//! summed by `limit`, is `analyze`'s split of the sender's time.
//!
//! The samples stream: memory is that of `analyze`, plus the samples
//! waiting for their round trip to be decided (at most [`SERIES_HELD`]),
//! whatever the capture's length.
//!
//! # Captures without the handshake
//!
//! A connection whose handshake is not in the capture has no known window
//! scale or RTT when its samples are taken. From a capture file, a first
//! pass learns what `analyze` infers for it
//! ([`crate::analysis::analyze::learn`]: each direction's
//! `limit.inferred_shift` and the RTT, from the timestamps' echoes, at most
//! [`crate::analysis::analyze::LEARN_MAX`] connections), and
//! [`sample::series_learned`] reads windows and books limits with those,
//! as `analyze`'s report does (its fractions and the samples' time by
//! phase agree). `--assume-wscale` and `--rtt` replace what was learned.
//! Where nothing was inferred (a shift the capture leaves as an interval),
//! and from standard input or a pipe (read once) without both settings,
//! the windows and the limit stay unknown rather than guessed.
//!
//! # Which connection a plot shows
//!
//! Unless one is named, the one that carried the most data
//! ([`DataTotals::busiest`]).
//!
//! The words and the formats (CSV, SVG) are
//! [`crate::output::series`]'s; the command line is
//! [`crate::cli::series`].

pub mod sample;
pub mod totals;

pub use sample::{series, series_learned, SeriesSample, SERIES_HELD};
pub use totals::{Busiest, DataTotals};
