//! `analyze`'s limit of a writer that pauses between chunks (issue 30,
//! section 3, "Pausing writers"): never the receive window and never a
//! window field rewritten on the way, from either capture side; and the
//! counter-case, a real small receive window, still the receive window.
//!
//! The transfers are simulated in the sender's time: a Linux-like sender
//! (MSS 1448, timestamps, full segments only while the window is the limit)
//! on a 1 Gbit/s link (12 us a segment) with 5 ms each way (RTT 10 ms), and
//! a Linux-like receiver (window scale 7, an ACK every two segments and at
//! once for a short, pushed segment). Each packet is placed at the time the
//! chosen capture point sees it: next to the sender (the server) or next to
//! the receiver (the client).

mod dump_support;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use dump_support::*;
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use serde_json::Value;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 19, 0, 1];
const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000 * 1_000_000_000;
const MSS: u32 = 1448;
const ONE_WAY: u64 = 5 * MS;
const SERIALIZE: u64 = 12 * US;
const CISN: u32 = 1_000;
const SISN: u32 = 5_000_000;

/// Where the capture point is.
#[derive(Clone, Copy, Debug)]
enum Side {
    NearSender,
    NearReceiver,
}

/// A download: the server's application writes `writes` (time after the
/// handshake, bytes); the client advertises `window_field` (shift 7).
struct Download {
    writes: Vec<(u64, u32)>,
    window_field: u16,
    /// The window the sender reads, when a middlebox between the receiver
    /// and the sender rewrites it (bytes); the capture next to the sender
    /// shows it, the one next to the receiver does not.
    rewritten: Option<u32>,
}

/// A packet with its time at the server and at the client.
struct Timed {
    at_server: u64,
    at_client: u64,
    seg: Seg,
    /// The window field as the server's side sees it, when rewritten.
    field_at_server: Option<u16>,
}

fn ms_tick(t: u64) -> u32 {
    u32::try_from(t / MS).unwrap() + 1_000
}

fn simulate(d: &Download) -> Vec<Timed> {
    let c =
        |seq: u32, ack: u32, flags: u8| Seg::new(C, 40000, S, 5001).seq(seq).ack(ack).flags(flags);
    let s =
        |seq: u32, ack: u32, flags: u8| Seg::new(S, 5001, C, 40000).seq(seq).ack(ack).flags(flags);
    let mut out = vec![
        Timed {
            at_client: 0,
            at_server: ONE_WAY,
            seg: c(CISN, 0, SYN)
                .win(64240)
                .opts(&linux_syn_options(ms_tick(0), 0, 7)),
            field_at_server: None,
        },
        Timed {
            at_server: ONE_WAY + 10 * US,
            at_client: 2 * ONE_WAY + 10 * US,
            seg: s(SISN, CISN + 1, SYN | ACK)
                .win(65160)
                .opts(&linux_syn_options(ms_tick(ONE_WAY), ms_tick(0), 7)),
            field_at_server: None,
        },
        Timed {
            at_client: 2 * ONE_WAY + 20 * US,
            at_server: 3 * ONE_WAY + 20 * US,
            seg: c(CISN + 1, SISN + 1, ACK)
                .win(d.window_field)
                .opts(&ts_options(ms_tick(2 * ONE_WAY), ms_tick(ONE_WAY))),
            field_at_server: None,
        },
    ];
    let start = 3 * ONE_WAY + 100 * US;
    let window = d.rewritten.unwrap_or(u32::from(d.window_field) << 7);
    // Sender state (relative sequence numbers).
    let (mut written, mut nxt, mut una) = (0u32, 0u32, 0u32);
    let mut link_free = 0u64;
    let mut last_client_tsval = ms_tick(2 * ONE_WAY);
    // Receiver state: segments not yet acknowledged.
    let mut pending = 0;
    // ACKs on their way: (arrival at the server, ack, client tsval).
    let mut acks: BinaryHeap<Reverse<(u64, u32, u32)>> = BinaryHeap::new();
    let mut wi = 0;
    loop {
        let next_write = d.writes.get(wi).map(|w| start + w.0);
        let next_ack = acks.peek().map(|a| a.0 .0);
        let t = match (next_write, next_ack) {
            (Some(w), Some(a)) => w.min(a),
            (Some(w), None) => w,
            (None, Some(a)) => a,
            (None, None) => break,
        };
        while d.writes.get(wi).is_some_and(|w| start + w.0 <= t) {
            written += d.writes[wi].1;
            wi += 1;
        }
        while acks.peek().is_some_and(|a| a.0 .0 <= t) {
            let Reverse((_, ack, tsval)) = acks.pop().unwrap();
            una = una.max(ack);
            last_client_tsval = tsval;
        }
        loop {
            let len = MSS.min(written - nxt);
            if len == 0 || nxt + len > una + window {
                break;
            }
            let tx = t.max(link_free);
            link_free = tx + SERIALIZE;
            let rx = tx + ONE_WAY;
            out.push(Timed {
                at_server: tx,
                at_client: rx,
                seg: s(
                    SISN + 1 + nxt,
                    CISN + 1,
                    ACK | if len < MSS { PSH } else { 0 },
                )
                .win(502)
                .opts(&ts_options(ms_tick(tx), last_client_tsval))
                .payload(len as usize),
                field_at_server: None,
            });
            nxt += len;
            pending += 1;
            if pending == 2 || len < MSS {
                pending = 0;
                let at = rx + 20 * US;
                let tsval = ms_tick(at);
                out.push(Timed {
                    at_client: at,
                    at_server: at + ONE_WAY,
                    seg: c(CISN + 1, SISN + 1 + nxt, ACK)
                        .win(d.window_field)
                        .opts(&ts_options(tsval, ms_tick(tx))),
                    field_at_server: d.rewritten.map(|w| u16::try_from(w >> 7).unwrap()),
                });
                acks.push(Reverse((at + ONE_WAY, nxt, tsval)));
            }
        }
    }
    assert_eq!(una, written, "everything acknowledged");
    out
}

fn capture(d: &Download, side: Side) -> Vec<Pkt> {
    let mut v: Vec<(u64, Vec<u8>)> = simulate(d)
        .into_iter()
        .map(|p| {
            let t = match side {
                Side::NearSender => p.at_server,
                Side::NearReceiver => p.at_client,
            };
            let seg = match (side, p.field_at_server) {
                (Side::NearSender, Some(f)) => p.seg.win(f),
                _ => p.seg,
            };
            (t, seg.ipv4())
        })
        .collect();
    v.sort_by_key(|p| p.0);
    v.into_iter().map(|(t, b)| Pkt::new(T0 + t, b)).collect()
}

fn download_limit(pkts: &[Pkt]) -> Value {
    let file = pcap(101, true, pkts);
    let mut out = Vec::new();
    analyze(
        &file[..],
        &mut out,
        AnalyzeFormat::Json,
        &Settings::default(),
    )
    .expect("analyze");
    let v: Value = serde_json::from_slice(&out).expect("one JSON document");
    v["connections"][0]["directions"]["server_to_client"]["limit"].clone()
}

/// 16 KB written every `period`, 60 times, against a large window
/// (2000 << 7 = 256,000 bytes).
fn pausing(period: u64, chunk: u32) -> Download {
    Download {
        writes: (0..60).map(|i| (i * period, chunk)).collect(),
        window_field: 2000,
        rewritten: None,
    }
}

fn assert_not_window(l: &Value, what: &str) {
    assert_ne!(l["kind"], "receive_window", "{what}: {l}");
    assert_ne!(l["kind"], "none", "{what}: {l}");
    assert!(l["window_read_inferred_bytes"].is_null(), "{what}: {l}");
    assert!(
        l["receive_window_evidence"].is_null()
            || l["receive_window_evidence"]["kind"] != "flight_plateau",
        "{what}: {l}"
    );
    assert!(
        l["receive_window_fraction"].as_f64().unwrap() < 0.1,
        "{what}: {l}"
    );
}

/// The case: 16 KB every 10 ms at a 10 ms RTT. The next write
/// leaves just before the ACKs of the last one come back, so the sender is
/// never idle and every round's flight tops out at the same byte, far below
/// the window: what a rewritten window field looks like, but the flight
/// falls back by most of a chunk each round with nothing sent to refill it.
/// (What it is instead: `network`, from either side. The next chunk leaves
/// while the last one is still in flight, so a round's flight exceeds what
/// the round acknowledges by more than a quarter, which the round split
/// reads as a queue; the sender's kernel counts this time as neither the
/// receive window's nor the send buffer's, which the lab's truth check
/// expects as `network` when the sender is idle less than half the time.)
#[test]
fn a_writer_pausing_every_round_trip_is_not_the_receive_window() {
    for side in [Side::NearSender, Side::NearReceiver] {
        let l = download_limit(&capture(&pausing(10 * MS, 16_384), side));
        assert_not_window(&l, &format!("{side:?}"));
    }
}

/// Other chunk sizes and pauses of issue 30 (8-64 KB).
#[test]
fn writers_pausing_between_8_to_64_kb_chunks_are_not_the_receive_window() {
    for (period, chunk) in [
        (10 * MS, 8_192),
        (10 * MS, 20_000),
        (10 * MS, 65_536),
        (12 * MS, 16_384),
        (30 * MS, 16_384),
    ] {
        for side in [Side::NearSender, Side::NearReceiver] {
            let l = download_limit(&capture(&pausing(period, chunk), side));
            assert_not_window(&l, &format!("{side:?} {chunk} every {period} ns"));
        }
    }
}

/// The counter-case: the same sender with all its data written at once,
/// against a real small window (91 << 7 = 11,648 bytes: eight segments).
/// The flight sits at the window's edge, refilled as each ACK opens it.
#[test]
fn a_real_small_receive_window_stays_the_receive_window() {
    let d = Download {
        writes: vec![(0, 2_000_000)],
        window_field: 91,
        rewritten: None,
    };
    for side in [Side::NearSender, Side::NearReceiver] {
        let l = download_limit(&capture(&d, side));
        assert_eq!(l["kind"], "receive_window", "{side:?}: {l}");
        assert_eq!(
            l["receive_window_evidence"]["kind"], "advertised_window",
            "{side:?}: {l}"
        );
        assert!(
            l["receive_window_fraction"].as_f64().unwrap() > 0.9,
            "{side:?}: {l}"
        );
    }
}

/// The plateau still finds a window rewritten between the receiver and the
/// sender (the campus firewall's act) from the receiver's side, which shows
/// the receiver's own 256,000 bytes while the sender reads 16 segments
/// (a field of 181 << 7 = 23,168 bytes): the flight refilled at every ACK.
/// The sender's side shows the rewritten field itself.
#[test]
fn a_rewritten_window_is_still_found_from_either_side() {
    let d = Download {
        writes: vec![(0, 2_000_000)],
        window_field: 2000,
        rewritten: Some(181 << 7),
    };
    let l = download_limit(&capture(&d, Side::NearReceiver));
    assert_eq!(l["kind"], "receive_window", "{l}");
    assert_eq!(
        l["receive_window_evidence"]["kind"], "flight_plateau",
        "{l}"
    );
    let l = download_limit(&capture(&d, Side::NearSender));
    assert_eq!(l["kind"], "receive_window", "{l}");
    assert_eq!(
        l["receive_window_evidence"]["kind"], "advertised_window",
        "{l}"
    );
}
