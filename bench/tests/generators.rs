//! The generators read back: what the sidecar counts is what a capture
//! reader and the decoder find; every IP and TCP checksum is valid; the
//! open-at-once bound holds; a seed gives the same bytes; the mixes are the
//! traffic model's.

use std::collections::HashMap;
use std::net::IpAddr;

use capture::{decode_tcp, CaptureReader, IpVersion, Timestamp};
use tcp_options::{Flags, PacketRepr, StrictOptions, TcpOption, TcpRepr};
use tcp_perf_bench::conn::{self, Layout};
use tcp_perf_bench::long_flow::{self, Limit};
use tcp_perf_bench::many_conns::{self, Kind};
use tcp_perf_bench::sink::{CaptureSink, Format};
use tcp_perf_bench::Counts;

/// A connection as the capture shows it: both endpoints, in order.
type Key = ((IpAddr, u16), (IpAddr, u16));

fn key(src: IpAddr, sport: u16, dst: IpAddr, dport: u16) -> Key {
    let (a, b) = ((src, sport), (dst, dport));
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// What a capture holds, read with the capture crate and tcp-options.
#[derive(Debug, Default)]
struct Readback {
    counts: Counts,
    /// Connections seen (distinct endpoint pairs).
    keys: usize,
    /// Most connections between their first and last segment at one time.
    max_open: usize,
    /// Per connection (by its SYN): the layout seen, the family, the DS field.
    layouts: HashMap<Layout, u64>,
    ipv6_connections: u64,
    ds: HashMap<u8, u64>,
    /// Records with the snap length cutting them.
    truncated: u64,
    /// Segments with a SACK option, and the most blocks seen in one.
    sack_segments: u64,
    most_sack_blocks: usize,
    /// Client data segments whose sequence number is below the highest sent.
    retransmissions: u64,
    /// Segments by flags.
    flags: HashMap<Flags, u64>,
    /// Every (timestamp, frame) in order.
    frames: Vec<(Option<Timestamp>, Vec<u8>, u32)>,
}

fn layout_of(options: &[u8]) -> Layout {
    let kinds: Vec<u8> = StrictOptions::new(options)
        .map(|o| o.expect("well-formed options").kind)
        .collect();
    match kinds.as_slice() {
        [2, 4, 8, 1, 3] => Layout::Linux,
        [2, 1, 3, 1, 1, 4] => Layout::Windows,
        [2, 4, 8, 1, 1, 1, 1] => Layout::LinuxNoWindowScale,
        other => panic!("a SYN with options {other:?}"),
    }
}

/// Read `file` back; `verify` checks every packet with
/// [`PacketRepr::parse_verified`] (records must be whole).
fn read_back(file: &[u8], verify: bool) -> Readback {
    let mut rb = Readback::default();
    let mut first: HashMap<Key, usize> = HashMap::new();
    let mut last: HashMap<Key, usize> = HashMap::new();
    let mut highest: HashMap<(IpAddr, u16), u32> = HashMap::new();
    let mut r = CaptureReader::new(file).expect("a capture");
    let mut i = 0;
    while let Some(rec) = r.next_record().expect("a record") {
        rb.frames.push((rec.ts, rec.data.to_vec(), rec.origlen));
        let seg = decode_tcp(rec.linktype, rec.data, rec.origlen)
            .expect("decodes")
            .expect("a TCP segment");
        if seg.is_truncated() {
            rb.truncated += 1;
        }
        let tcp = if verify {
            let packet =
                PacketRepr::parse_verified(&rec.data[seg.link.offset..]).expect("valid checksums");
            assert_eq!((packet.ip.src(), packet.ip.dst()), (seg.ip.src, seg.ip.dst));
            packet.tcp
        } else {
            // Cut by the snap length: the header is whole, the payload not.
            TcpRepr::parse(seg.tcp).expect("a TCP header")
        };
        rb.counts.segments += 1;
        match seg.ip.version {
            IpVersion::V4 => rb.counts.ipv4_segments += 1,
            IpVersion::V6 => rb.counts.ipv6_segments += 1,
        }
        *rb.flags.entry(tcp.flags).or_default() += 1;
        let k = key(seg.ip.src, tcp.src_port, seg.ip.dst, tcp.dst_port);
        first.entry(k).or_insert(i);
        last.insert(k, i);
        if tcp.flags == Flags::SYN {
            rb.counts.connections += 1;
            *rb.layouts.entry(layout_of(tcp.options)).or_default() += 1;
            *rb.ds.entry(seg.ip.tos).or_default() += 1;
            if seg.ip.version == IpVersion::V6 {
                rb.ipv6_connections += 1;
            }
        }
        for o in tcp.options_strict() {
            if let TcpOption::Sack(blocks) = o.expect("well-formed options").option {
                rb.sack_segments += 1;
                rb.most_sack_blocks = rb.most_sack_blocks.max(blocks.len());
            }
        }
        let wire_payload = seg.wire_len - tcp.header_len();
        if wire_payload > 0 {
            let h = highest
                .entry((seg.ip.src, tcp.src_port))
                .or_insert(tcp.seq_number);
            let end = tcp.seq_number.wrapping_add(wire_payload as u32);
            if end.wrapping_sub(*h) as i32 <= 0 {
                rb.retransmissions += 1;
            } else {
                *h = end;
            }
        }
        i += 1;
    }
    rb.keys = first.len();
    // Sweep: a connection is open from its first to its last segment.
    let mut events: Vec<(usize, i32)> = Vec::new();
    for (k, f) in &first {
        events.push((2 * f, 1));
        events.push((2 * last[k] + 1, -1));
    }
    events.sort();
    let mut open = 0i32;
    for (_, d) in events {
        open += d;
        rb.max_open = rb.max_open.max(open as usize);
    }
    rb
}

fn long_flow(
    segments: u64,
    open: usize,
    seed: u64,
    format: Format,
    snaplen: usize,
) -> (Counts, Vec<u8>) {
    let mut sinks = [CaptureSink::new(Vec::new(), format, snaplen).unwrap()];
    let params = long_flow::Params {
        limit: Limit::Segments(segments),
        open,
        seed,
    };
    let counts = long_flow::generate(&params, &mut sinks).unwrap();
    let [sink] = sinks;
    let (file, bytes) = sink.finish().unwrap();
    assert_eq!(bytes, file.len() as u64, "bytes counted as written");
    (counts, file)
}

fn many(segments: u64, open: usize, seed: u64) -> (Counts, Vec<u8>) {
    let mut sinks = [CaptureSink::new(Vec::new(), Format::Pcap, 65535).unwrap()];
    let params = many_conns::Params {
        segments,
        open,
        seed,
    };
    let counts = many_conns::generate(&params, &mut sinks).unwrap();
    let [sink] = sinks;
    let (file, bytes) = sink.finish().unwrap();
    assert_eq!(bytes, file.len() as u64);
    (counts, file)
}

#[test]
fn long_flow_counts_are_what_the_capture_holds() {
    for format in [Format::Pcap, Format::Pcapng] {
        let (counts, file) = long_flow(6000, 32, 7, format, 65535);
        let rb = read_back(&file, true);
        assert_eq!(rb.counts, counts, "{format:?}");
        assert_eq!(rb.keys as u64, counts.connections, "one SYN per connection");
        assert!(rb.max_open <= 32, "{} open at once", rb.max_open);
        assert_eq!(rb.truncated, 0);
        // Whole lives: as many SYN-ACKs as SYNs, FINs from both sides.
        assert_eq!(rb.flags[&(Flags::SYN | Flags::ACK)], rb.flags[&Flags::SYN]);
        let fins = rb.flags[&(Flags::FIN | Flags::ACK)];
        assert!(fins > 0 && fins <= 2 * counts.connections, "{fins} FINs");
    }
}

#[test]
fn many_conns_counts_are_what_the_capture_holds() {
    let (counts, file) = many(6000, 64, 7);
    let rb = read_back(&file, true);
    assert_eq!(rb.counts, counts);
    assert_eq!(rb.keys as u64, counts.connections);
    assert!(rb.max_open <= 64, "{} open at once", rb.max_open);
    let syn = rb.flags[&Flags::SYN];
    assert_eq!(syn, counts.connections);
    // No segment but SYN, SYN-ACK, RST-ACK and RST.
    let kinds = [
        Flags::SYN,
        Flags::SYN | Flags::ACK,
        Flags::RST | Flags::ACK,
        Flags::RST,
    ];
    assert!(rb.flags.keys().all(|f| kinds.contains(f)), "{:?}", rb.flags);
}

#[test]
fn a_seed_gives_the_same_capture() {
    let a = long_flow(3000, 16, 42, Format::Pcapng, 65535);
    let b = long_flow(3000, 16, 42, Format::Pcapng, 65535);
    let c = long_flow(3000, 16, 43, Format::Pcapng, 65535);
    assert_eq!(a, b);
    assert_ne!(a.1, c.1);
    assert_eq!(many(3000, 64, 42), many(3000, 64, 42));
    assert_ne!(many(3000, 64, 42).1, many(3000, 64, 43).1);
}

#[test]
fn pcap_and_pcapng_and_the_snap_length_hold_the_same_traffic() {
    let (full_counts, full) = long_flow(2000, 16, 3, Format::Pcap, 65535);
    let (ng_counts, ng) = long_flow(2000, 16, 3, Format::Pcapng, 65535);
    let (cut_counts, cut) = long_flow(2000, 16, 3, Format::Pcap, 128);
    assert_eq!(full_counts, ng_counts);
    assert_eq!(full_counts, cut_counts);
    let (full, ng, cut) = (
        read_back(&full, true),
        read_back(&ng, true),
        read_back(&cut, false),
    );
    assert_eq!(full.frames, ng.frames);
    assert!(cut.truncated > 0);
    for ((ts, whole, len), (cts, part, clen)) in full.frames.iter().zip(&cut.frames) {
        assert_eq!((ts, len), (cts, clen));
        assert_eq!(*len as usize, whole.len());
        assert_eq!(&whole[..whole.len().min(128)], &part[..]);
    }
}

#[test]
fn a_byte_limit_stops_at_the_first_record_past_it() {
    let mut sinks = [
        CaptureSink::new(Vec::new(), Format::Pcap, 128).unwrap(),
        CaptureSink::new(Vec::new(), Format::Pcapng, 128).unwrap(),
    ];
    let params = long_flow::Params {
        limit: Limit::Bytes(100_000),
        open: 8,
        seed: 1,
    };
    let counts = long_flow::generate(&params, &mut sinks).unwrap();
    let [pcap, pcapng] = sinks;
    let (pcap, bytes) = pcap.finish().unwrap();
    assert!((100_000..100_000 + 16 + 128).contains(&bytes), "{bytes}");
    assert_eq!(read_back(&pcap, false).counts, counts);
    assert_eq!(read_back(&pcapng.finish().unwrap().0, false).counts, counts);
}

fn assert_share(what: &str, got: u64, n: u64, want: f64, tolerance: f64) {
    let s = got as f64 / n as f64;
    assert!(
        (s - want).abs() <= tolerance,
        "{what}: {s:.3} of {n}, the model says {want}"
    );
}

#[test]
fn the_mixes_are_the_models() {
    // About 10,000 connections: a share's standard error is under 0.005.
    let (counts, file) = many(20_000, 1024, 1);
    let rb = read_back(&file, true);
    let n = counts.connections;
    assert!(
        (9_000..11_000).contains(&n),
        "about one connection per two segments: {n}"
    );
    assert_share("IPv6", rb.ipv6_connections, n, conn::IPV6_SHARE, 0.03);
    let mut low = 0.0;
    for (bound, ds) in conn::DS_MIX {
        assert_share(&format!("DS {ds:#04x}"), rb.ds[&ds], n, bound - low, 0.03);
        low = bound;
    }
    let mut low = 0.0;
    for (bound, layout) in conn::LAYOUT_MIX {
        assert_share(
            &format!("{layout:?}"),
            rb.layouts[&layout],
            n,
            bound - low,
            0.03,
        );
        low = bound;
    }
    // Kinds: a refused connection has an RST-ACK, a half-open one a
    // SYN-ACK (and an RST); the rest are unanswered. The last connections
    // may be cut short by the end of the capture.
    let refused = rb.flags[&(Flags::RST | Flags::ACK)];
    let half_open = rb.flags[&(Flags::SYN | Flags::ACK)];
    assert_share("refused", refused, n, many_conns::REFUSED, 0.03);
    assert_share(
        "half-open",
        half_open,
        n,
        many_conns::REFUSED_OR_HALF_OPEN - many_conns::REFUSED,
        0.03,
    );
    assert_eq!(
        Kind::of(0.2).segments() + Kind::of(0.6).segments() + Kind::of(0.9).segments(),
        6
    );
}

#[test]
fn losses_are_sacked_and_repaired() {
    let (counts, file) = long_flow(40_000, 64, 5, Format::Pcap, 65535);
    let rb = read_back(&file, true);
    assert_eq!(rb.counts, counts);
    // About one data segment in a hundred is lost; each gets SACKed until
    // its retransmission, which is seen below the highest sequence sent.
    let data = rb.flags[&(Flags::ACK | Flags::PSH)];
    assert!(rb.sack_segments > 0, "no SACK");
    assert_share(
        "retransmissions",
        rb.retransmissions,
        data,
        long_flow::LOSS,
        0.005,
    );
    assert!((1..=long_flow::MAX_HOLES).contains(&rb.most_sack_blocks));
}

/// A fresh directory under the system's temporary one.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tcp-perf-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The fields bench/run and bench/render.py read from a sidecar.
const SIDECAR_FIELDS: [&str; 9] = [
    "segments",
    "ipv4_segments",
    "ipv6_segments",
    "connections",
    "max_open_connections",
    "seed",
    "format",
    "bytes",
    "file",
];

fn run(bin: &str, args: &[&str]) {
    let out = std::process::Command::new(bin).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_binaries_write_captures_and_sidecars() {
    let dir = temp_dir("bins");
    let d = dir.to_str().unwrap();
    run(
        env!("CARGO_BIN_EXE_gen-capture"),
        &[
            "--segments",
            "700",
            "--snaplen",
            "128",
            "--format",
            "both",
            "--out",
            d,
            "--name",
            "c",
            "--open",
            "9",
        ],
    );
    run(
        env!("CARGO_BIN_EXE_gen-many-conns"),
        &["--segments", "700", "--out", d, "--seed", "4"],
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "c.pcap",
            "c.pcap.json",
            "c.pcapng",
            "c.pcapng.json",
            "many-700.pcap",
            "many-700.pcap.json"
        ],
        "no .tmp left"
    );
    for (file, format, open, shape) in [
        ("c.pcap", "pcap", 9, false),
        ("c.pcapng", "pcapng", 9, false),
        ("many-700.pcap", "pcap", 1024, true),
    ] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{file}.json"))).unwrap())
                .unwrap();
        for f in SIDECAR_FIELDS {
            assert!(json.get(f).is_some(), "{file}: no {f}");
        }
        assert_eq!(json.get("shape").is_some(), shape);
        let rb = read_back(&bytes, false);
        assert_eq!(json["segments"], 700);
        assert_eq!(json["ipv4_segments"], rb.counts.ipv4_segments);
        assert_eq!(json["ipv6_segments"], rb.counts.ipv6_segments);
        assert_eq!(json["connections"], rb.counts.connections);
        assert_eq!(json["max_open_connections"], open);
        assert_eq!(json["format"], format);
        assert_eq!(json["bytes"], bytes.len());
        assert_eq!(json["file"], path.to_str().unwrap());
        assert!(rb.max_open <= open);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_refused() {
    for (bin, args) in [
        (env!("CARGO_BIN_EXE_gen-capture"), &["--segments", "0"][..]),
        (env!("CARGO_BIN_EXE_gen-capture"), &["--size", "big"][..]),
        (env!("CARGO_BIN_EXE_gen-many-conns"), &["--open", "0"][..]),
        (env!("CARGO_BIN_EXE_gen-many-conns"), &["--size", "1G"][..]),
    ] {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
