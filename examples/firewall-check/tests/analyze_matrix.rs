//! `analyze`'s limit on captures from the lab's truth matrix
//! (`examples/lab/tests/labs/matrix.rs`, issue 30 section 3), each side of
//! a transfer whose sender's `TCP_INFO` was recorded: the first 600 to 900
//! records of each capture (`editcap -s 80 -r FILE OUT 1-N`), kept small.
//!
//! - `loss-cubic-10ms`: 1% random loss of the download's data (CUBIC, 10
//!   ms; the kernel: rwnd 0.02, sndbuf 0, the rest busy): the network.
//!   Called `sender` (0.57 and 0.62 of the busy time) before the rule that
//!   books the rounds after a loss, while the window regrows, to the
//!   network.
//! - `pausing-cubic-10ms`: the server writes 16 KB, pauses 10 ms (CUBIC,
//!   10 ms; the kernel counts no window, no send buffer): the sender. Called
//!   `network` on the whole transfer from both sides (0.53, 0.56) before
//!   growth and queueing looked past one round's most in flight.
//! - `pausing-round-cubic-10ms`: the server writes 20 KB, pauses 11 ms
//!   (CUBIC, 10 ms; taken by hand with `lab.sh pause4 --chunk-bytes 20480
//!   --pause-ms 11`): every chunk is acknowledged just before the next
//!   leaves, so the flight tops out at 20,480 bytes, to the byte, round
//!   after round. Called `receive_window` from both sides (0.96, 0.94),
//!   "a window field rewritten on the way" (`window_read_inferred_bytes`
//!   20,480), before the plateau asked for whole segments: a Linux sender
//!   at the window's edge sends full segments only, a writer's chunk ends
//!   where its write did.
//! - `pausing-whole-round-cubic-10ms`: the server writes 14,480 bytes (10
//!   whole segments of 1,448), pauses 12 ms (CUBIC, 10 ms; `lab.sh pause4
//!   --chunk-bytes 14480 --pause-ms 12 --bytes 3000000`; the kernel counts
//!   no window, no send buffer): each chunk whole segments, all
//!   acknowledged before the next leaves. Called `receive_window` from both
//!   sides (1.0; `window_read_inferred_bytes` 14,480) before a round with
//!   nothing outstanding for more than an eighth of it stopped counting as
//!   a plateau round.
//! - `pausing-whole-cubic-10ms`: the same chunks 8 ms apart (`--pause-ms
//!   8`), two in flight by turns and never idle, the first 1,500 records.
//!   Called `receive_window` from both sides (0.62, 0.65; a window of
//!   28,960 bytes) before a plateau asked for a sender answering the ACKs
//!   it read: each chunk leaves about 8 ms after the newest ACK its
//!   timestamps echo.
//! - the counter-cases, which the rules must leave alone:
//!   `rcvbuf-cubic-10ms` (SO_RCVBUF 16 KB; the kernel: rwnd 0.98),
//!   `rewrite-cubic-10ms` (the window field rewritten to 20 KB between the
//!   client and the server's capture; the kernel: rwnd 0.97; the client's
//!   side finds it from the flight's plateau), `sndbuf-cubic-10ms`
//!   (SO_SNDBUF 8 KB: the sender).

use std::path::PathBuf;

use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use serde_json::Value;

fn limit(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/matrix")
        .join(format!("{name}.pcap"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    analyze(
        &bytes[..],
        &mut out,
        AnalyzeFormat::Json,
        &Settings::default(),
    )
    .expect("analyze");
    let v: Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(v["connections"].as_array().unwrap().len(), 1, "{name}");
    v["connections"][0]["directions"]["server_to_client"]["limit"].clone()
}

fn check(case: &str, kind: &str, plateau: bool) {
    for side in ["inside", "outside"] {
        let l = limit(&format!("{case}-{side}"));
        assert_eq!(l["kind"], kind, "{case} {side}: {l}");
        // A window the capture does not show only where one was rewritten,
        // and only from the receiver's side.
        let inferred = !l["window_read_inferred_bytes"].is_null();
        assert_eq!(inferred, plateau && side == "inside", "{case} {side}: {l}");
    }
}

#[test]
fn random_loss_is_the_network_from_either_side() {
    check("loss-cubic-10ms", "network", false);
}

#[test]
fn a_writer_pausing_between_chunks_is_the_sender_from_either_side() {
    check("pausing-cubic-10ms", "sender", false);
}

#[test]
fn a_writer_one_chunk_per_round_is_no_rewritten_window_from_either_side() {
    check("pausing-round-cubic-10ms", "sender", false);
}

#[test]
fn a_writer_of_whole_segments_idle_between_chunks_is_the_sender_from_either_side() {
    check("pausing-whole-round-cubic-10ms", "sender", false);
}

#[test]
fn a_writer_of_whole_segments_two_chunks_in_flight_is_the_sender_from_either_side() {
    check("pausing-whole-cubic-10ms", "sender", false);
}

#[test]
fn a_small_receive_buffer_stays_the_receive_window() {
    check("rcvbuf-cubic-10ms", "receive_window", false);
}

#[test]
fn a_rewritten_window_stays_the_receive_window() {
    check("rewrite-cubic-10ms", "receive_window", true);
}

#[test]
fn a_small_send_buffer_stays_the_sender() {
    check("sndbuf-cubic-10ms", "sender", false);
}
