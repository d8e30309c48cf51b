//! Option iteration, full header parse, negotiation, builder and rewrites,
//! side by side with etherparse, smoltcp, pnet_packet and a bare
//! bounds-checked loop, in the same run. After criterion finishes, a table of
//! ratios (anchor time / our time, from criterion's medians) is printed, then
//! a second table from an interleaved pass (all implementations of a case
//! timed in alternating short rounds), which is robust to the machine's load
//! changing between criterion's benchmarks.
//!
//! Every consumer computes the same digest (option values folded into a
//! `u32`) so that each library must really decode what it yields.
//!
//! Run: `cargo bench -p tcp-options --bench options`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;
use tcp_options::{
    rewrite, Handshake, OptionsBuilder, SackBlock, StrictOptions, TcpOption, TcpPacket,
};

/// Linux SYN options (tcp_options_write layout).
const LINUX_SYN: &[u8] = &[
    0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x84, 0x1d, 0x6b, 0x12, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x03, 0x03, 0x07,
];
/// ACK with NOP NOP TS and NOP NOP SACK of three blocks.
const SACK_ACK: &[u8] = &[
    0x01, 0x01, 0x08, 0x0a, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01, 0x01, 0x05, 0x1a,
    0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x35, 0xb4, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x45, 0xb4,
    0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x55, 0xb4,
];
const NOPS: &[u8] = &[0x01; 40];
/// MSS, NOP, Window Scale, then Timestamps running past the block.
const MALFORMED: &[u8] = &[
    0x02, 0x04, 0x05, 0xb4, 0x01, 0x03, 0x03, 0x07, 0x08, 0x0a, 0x00, 0x00,
];

const INPUTS: [(&str, &[u8]); 4] = [
    ("linux_syn", LINUX_SYN),
    ("sack_ack", SACK_ACK),
    ("40_nops", NOPS),
    ("malformed", MALFORMED),
];

fn segment(opts: &[u8]) -> Vec<u8> {
    let mut s = vec![
        0x9c,
        0x40,
        0x00,
        0x50,
        0x12,
        0x34,
        0x56,
        0x78,
        0x00,
        0x00,
        0x00,
        0x00,
        (((20 + opts.len()) / 4) as u8) << 4,
        0x12,
        0xfa,
        0xf0,
        0,
        0,
        0,
        0,
    ];
    s.extend_from_slice(opts);
    tcp_options::checksum::fill_ipv4([198, 18, 0, 1], [198, 18, 0, 2], &mut s);
    s
}

// ---- the digest, per library ----

#[inline(always)]
fn ours(block: &[u8]) -> u32 {
    let mut acc = 0u32;
    for item in StrictOptions::new(block) {
        let Ok(p) = item else {
            return acc ^ 0xdead;
        };
        acc = acc.wrapping_add(match p.option {
            TcpOption::NoOperation => 1,
            TcpOption::MaxSegmentSize(m) => u32::from(m),
            TcpOption::WindowScale(s) => u32::from(s),
            TcpOption::SackPermitted => 4,
            TcpOption::Timestamps(t) => t.tsval ^ t.tsecr,
            TcpOption::Sack(b) => b.iter().fold(0, |a, b| a ^ b.left ^ b.right),
            o => u32::from(o.kind()),
        });
    }
    acc
}

/// The floor: a hand-written bounds-checked loop computing the same digest
/// (same values read) with no abstraction, no typed options and no error
/// details; it rejects what the strict policy rejects on these inputs.
#[inline(always)]
fn bare(block: &[u8]) -> u32 {
    let be32 = |d: &[u8], i: usize| -> u32 {
        match d.get(i..i + 4) {
            Some(&[a, b, c, e]) => u32::from_be_bytes([a, b, c, e]),
            _ => 0,
        }
    };
    let mut acc = 0u32;
    let mut i = 0;
    while i < block.len() {
        let k = block[i];
        if k == 0 {
            break;
        }
        if k == 1 {
            acc = acc.wrapping_add(1);
            i += 1;
            continue;
        }
        let Some(&l) = block.get(i + 1) else {
            return acc ^ 0xdead;
        };
        let l = usize::from(l);
        let Some(d) = block.get(i + 2..i + l) else {
            return acc ^ 0xdead;
        };
        if l < 2 {
            return acc ^ 0xdead;
        }
        acc = acc.wrapping_add(match (k, d.len()) {
            (2, 2) => u32::from(u16::from_be_bytes([d[0], d[1]])),
            (3, 1) => u32::from(d[0]),
            (4, 0) => 4,
            (8, 8) => be32(d, 0) ^ be32(d, 4),
            (5, 8 | 16 | 24 | 32) => {
                (0..d.len() / 8).fold(0, |a, j| a ^ be32(d, 8 * j) ^ be32(d, 8 * j + 4))
            }
            (2..=5 | 8, _) => return acc ^ 0xdead,
            _ => u32::from(k),
        });
        i += l;
    }
    acc
}

#[inline(always)]
fn etherparse_digest(block: &[u8]) -> u32 {
    use etherparse::TcpOptionElement::*;
    let mut acc = 0u32;
    for item in etherparse::TcpOptionsIterator::from_slice(block) {
        let Ok(o) = item else {
            return acc ^ 0xdead;
        };
        acc = acc.wrapping_add(match o {
            Noop => 1,
            MaximumSegmentSize(m) => u32::from(m),
            WindowScale(s) => u32::from(s),
            SelectiveAcknowledgementPermitted => 4,
            Timestamp(a, b) => a ^ b,
            SelectiveAcknowledgement(first, rest) => rest
                .iter()
                .flatten()
                .fold(first.0 ^ first.1, |a, b| a ^ b.0 ^ b.1),
        });
    }
    acc
}

#[inline(always)]
fn smoltcp_digest(mut block: &[u8]) -> u32 {
    use smoltcp::wire::TcpOption::*;
    let mut acc = 0u32;
    while !block.is_empty() {
        let Ok((rest, o)) = smoltcp::wire::TcpOption::parse(block) else {
            return acc ^ 0xdead;
        };
        acc = acc.wrapping_add(match o {
            EndOfList => break,
            NoOperation => 1,
            MaxSegmentSize(m) => u32::from(m),
            WindowScale(s) => u32::from(s),
            SackPermitted => 4,
            TimeStamp { tsval, tsecr } => tsval ^ tsecr,
            SackRange(r) => r.iter().flatten().fold(0, |a, b| a ^ b.0 ^ b.1),
            Unknown { kind, .. } => u32::from(kind),
        });
        block = rest;
    }
    acc
}

#[inline(always)]
fn pnet_options_digest(p: &pnet_packet::tcp::TcpPacket<'_>) -> u32 {
    use pnet_packet::tcp::TcpOptionNumbers as N;
    use pnet_packet::Packet;
    let mut acc = 0u32;
    for o in p.get_options_iter() {
        let d = o.payload();
        let be32 = |d: &[u8], i: usize| -> u32 {
            d.get(i..i + 4)
                .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        acc = acc.wrapping_add(match o.get_number() {
            N::NOP => 1,
            N::MSS => d
                .get(..2)
                .map_or(0, |b| u32::from(u16::from_be_bytes([b[0], b[1]]))),
            N::WSCALE => d.first().map_or(0, |b| u32::from(*b)),
            N::SACK_PERMITTED => 4,
            N::TIMESTAMPS => be32(d, 0) ^ be32(d, 4),
            N::SACK => (0..d.len() / 8).fold(0, |a, i| a ^ be32(d, 8 * i) ^ be32(d, 8 * i + 4)),
            n => u32::from(n.0),
        });
    }
    acc
}

// ---- full header + options ----

#[inline(always)]
fn full_ours(seg: &[u8]) -> u32 {
    let Ok(p) = TcpPacket::new_checked(seg) else {
        return 0;
    };
    let h = p.header();
    u32::from(h.src_port())
        ^ u32::from(h.dst_port())
        ^ h.seq_number()
        ^ h.ack_number()
        ^ u32::from(h.flags().bits())
        ^ u32::from(h.window())
        ^ ours(p.options())
}

/// The floor for a full header: the same fields and checks by hand.
#[inline(always)]
fn full_bare(seg: &[u8]) -> u32 {
    let Some(h) = seg.get(..20) else {
        return 0;
    };
    let hl = usize::from(h[12] >> 4) * 4;
    let (Some(opts), true) = (seg.get(20..hl), hl >= 20) else {
        return 0;
    };
    let u16at = |i: usize| u32::from(u16::from_be_bytes([h[i], h[i + 1]]));
    let u32at = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    u16at(0) ^ u16at(2) ^ u32at(4) ^ u32at(8) ^ (u16at(12) & 0x1ff) ^ u16at(14) ^ bare(opts)
}

#[inline(always)]
fn full_etherparse(seg: &[u8]) -> u32 {
    let Ok(h) = etherparse::TcpHeaderSlice::from_slice(seg) else {
        return 0;
    };
    let flags = u32::from(h.syn()) | u32::from(h.ack()) << 4;
    u32::from(h.source_port())
        ^ u32::from(h.destination_port())
        ^ h.sequence_number()
        ^ h.acknowledgment_number()
        ^ flags
        ^ u32::from(h.window_size())
        ^ etherparse_digest(h.options())
}

#[inline(always)]
fn full_smoltcp(seg: &[u8]) -> u32 {
    let Ok(p) = smoltcp::wire::TcpPacket::new_checked(seg) else {
        return 0;
    };
    let flags = u32::from(p.syn()) | u32::from(p.ack()) << 4;
    u32::from(p.src_port())
        ^ u32::from(p.dst_port())
        ^ (p.seq_number().0 as u32)
        ^ (p.ack_number().0 as u32)
        ^ flags
        ^ u32::from(p.window_len())
        ^ smoltcp_digest(p.options())
}

#[inline(always)]
fn full_pnet(seg: &[u8]) -> u32 {
    let Some(p) = pnet_packet::tcp::TcpPacket::new(seg) else {
        return 0;
    };
    u32::from(p.get_source())
        ^ u32::from(p.get_destination())
        ^ p.get_sequence()
        ^ p.get_acknowledgement()
        ^ u32::from(p.get_flags())
        ^ u32::from(p.get_window())
        ^ pnet_options_digest(&p)
}

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("criterion-tcp-options")
}

fn main() {
    // Start clean so that the ratio table reads only this run's estimates.
    let _ = std::fs::remove_dir_all(out_dir());
    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
        .configure_from_args();

    for (name, block) in INPUTS {
        // Sanity: everyone agrees on the well-formed inputs.
        let seg = segment(block);
        let pn = pnet_packet::tcp::TcpPacket::new(&seg).unwrap();
        assert_eq!(ours(block), bare(block), "{name}");
        if name != "malformed" {
            assert_eq!(ours(block), etherparse_digest(block), "{name}");
            assert_eq!(ours(block), pnet_options_digest(&pn), "{name}");
            if name != "sack_ack" {
                assert_eq!(ours(block), smoltcp_digest(block), "{name}");
            }
            assert_eq!(full_ours(&seg), full_pnet(&seg), "{name}");
            assert_eq!(full_ours(&seg), full_bare(&seg), "{name}");
        }
        let mut g = c.benchmark_group(format!("iterate/{name}"));
        g.bench_function("tcp-options", |b| b.iter(|| ours(black_box(block))));
        g.bench_function("bare-loop", |b| b.iter(|| bare(black_box(block))));
        g.bench_function("etherparse", |b| {
            b.iter(|| etherparse_digest(black_box(block)))
        });
        g.bench_function("smoltcp", |b| b.iter(|| smoltcp_digest(black_box(block))));
        g.bench_function("pnet", |b| {
            b.iter(|| {
                let p = pnet_packet::tcp::TcpPacket::new(black_box(&seg)).unwrap();
                pnet_options_digest(&p)
            })
        });
        g.finish();
    }

    for (name, block) in [("linux_syn", LINUX_SYN), ("sack_ack", SACK_ACK)] {
        let seg = segment(block);
        let mut g = c.benchmark_group(format!("header/{name}"));
        g.bench_function("tcp-options", |b| b.iter(|| full_ours(black_box(&seg))));
        g.bench_function("bare-loop", |b| b.iter(|| full_bare(black_box(&seg))));
        g.bench_function("etherparse", |b| {
            b.iter(|| full_etherparse(black_box(&seg)))
        });
        g.bench_function("smoltcp", |b| b.iter(|| full_smoltcp(black_box(&seg))));
        g.bench_function("pnet", |b| b.iter(|| full_pnet(black_box(&seg))));
        g.finish();
    }

    {
        let synack = [
            0x02, 0x04, 0x05, 0xb4, 0x01, 0x01, 0x04, 0x02, 0x01, 0x03, 0x03, 0x09,
        ];
        let mut g = c.benchmark_group("other");
        g.bench_function("negotiate", |b| {
            b.iter(|| {
                Handshake::observed(Some(black_box(LINUX_SYN)), Some(black_box(&synack)))
                    .negotiate()
            })
        });
        g.bench_function("build_linux_syn", |b| {
            b.iter(|| {
                let mut buf = [0u8; 40];
                OptionsBuilder::new()
                    .mss(black_box(1460))
                    .sack_permitted()
                    .timestamps(black_box(1), 0)
                    .window_scale(7)
                    .write(&mut buf)
                    .map(|n| buf[n - 1])
            })
        });
        let blocks = [SackBlock { left: 1, right: 2 }; 3];
        g.bench_function("build_sack_ack", |b| {
            b.iter(|| {
                OptionsBuilder::new()
                    .timestamps(1, 2)
                    .sack_blocks(black_box(&blocks))
                    .build()
            })
        });
        g.finish();
    }

    {
        let syn = segment(LINUX_SYN);
        let ack = segment(SACK_ACK);
        let mut g = c.benchmark_group("rewrite");
        // Each iteration copies the segment (a 40-byte copy) and rewrites it.
        let mut run = |name: &str, src: &[u8], f: fn(&mut [u8]) -> bool| {
            let mut buf = [0u8; 60];
            let n = src.len();
            g.bench_function(name, |b| {
                b.iter(|| {
                    buf[..n].copy_from_slice(src);
                    f(black_box(&mut buf[..n]))
                })
            });
        };
        run("copy_only", &syn, |_| true);
        run("strip_wscale", &syn, |s| {
            rewrite::strip_options(s, &[3]).is_ok()
        });
        run("set_wscale", &syn, |s| {
            rewrite::set_window_scale(s, 2).is_ok()
        });
        run("clamp_mss", &syn, |s| rewrite::clamp_mss(s, 1400).is_ok());
        run("set_window", &syn, |s| rewrite::set_window(s, 1000).is_ok());
        run("add_to_seq", &syn, |s| {
            rewrite::add_to_seq(s, 12345).is_ok()
        });
        run("add_to_ack_sack3", &ack, |s| {
            rewrite::add_to_ack(s, 12345).is_ok()
        });
        run("checksum_full_ipv4", &ack, |s| {
            tcp_options::checksum::fill_ipv4([198, 18, 0, 1], [198, 18, 0, 2], s)
        });
        g.finish();
    }

    c.final_summary();
    print_ratios();
    interleaved_ratios();
}

/// Time `f` over `iters` calls, in ns per call.
#[inline(never)]
fn time_ns<F: FnMut() -> u32>(iters: u32, mut f: F) -> f64 {
    let start = std::time::Instant::now();
    let mut acc = 0u32;
    for _ in 0..iters {
        acc = acc.wrapping_add(f());
    }
    black_box(acc);
    start.elapsed().as_nanos() as f64 / f64::from(iters)
}

/// A second, load-robust estimate: the implementations of a case are timed
/// in alternation (many short rounds, round-robin), so a change in machine
/// load hits all of them alike; the median round of each is reported.
fn interleaved_ratios() {
    let rounds = 41;
    let iters = 20_000;
    println!("\nInterleaved ratios ({rounds} alternating rounds of {iters} calls, medians; same meaning as above):\n");
    println!(
        "{:<22} {:>10} {:>10} {:>11} {:>11} {:>11} {:>10}",
        "case", "ours ns", "bare ns", "ours/bare", "etherparse", "smoltcp", "pnet"
    );
    let segs: Vec<(String, Vec<u8>, bool)> = INPUTS
        .iter()
        .map(|(n, b)| (format!("iterate/{n}"), segment(b), false))
        .chain(
            [("linux_syn", LINUX_SYN), ("sack_ack", SACK_ACK)]
                .iter()
                .map(|(n, b)| (format!("header/{n}"), segment(b), true)),
        )
        .collect();
    for (name, seg, full) in &segs {
        let seg = &seg[..];
        let block = &seg[20..];
        let mut samples: [Vec<f64>; 5] = Default::default();
        for _ in 0..rounds {
            let t = if *full {
                [
                    time_ns(iters, || full_ours(black_box(seg))),
                    time_ns(iters, || full_bare(black_box(seg))),
                    time_ns(iters, || full_etherparse(black_box(seg))),
                    time_ns(iters, || full_smoltcp(black_box(seg))),
                    time_ns(iters, || full_pnet(black_box(seg))),
                ]
            } else {
                [
                    time_ns(iters, || ours(black_box(block))),
                    time_ns(iters, || bare(black_box(block))),
                    time_ns(iters, || etherparse_digest(black_box(block))),
                    time_ns(iters, || smoltcp_digest(black_box(block))),
                    time_ns(iters, || {
                        let p = pnet_packet::tcp::TcpPacket::new(black_box(seg)).unwrap();
                        pnet_options_digest(&p)
                    }),
                ]
            };
            for (x, s) in t.into_iter().zip(samples.iter_mut()) {
                s.push(x);
            }
        }
        let med: Vec<f64> = samples
            .iter_mut()
            .map(|s| {
                s.sort_by(|a, b| a.total_cmp(b));
                s[s.len() / 2]
            })
            .collect();
        println!(
            "{:<22} {:>10.2} {:>10.2} {:>11.2} {:>10.2}x {:>10.2}x {:>9.2}x",
            name,
            med[0],
            med[1],
            med[0] / med[1],
            med[2] / med[0],
            med[3] / med[0],
            med[4] / med[0],
        );
    }
}

/// Median point estimate (ns) of one benchmark, from criterion's output.
fn median_ns(group: &str, id: &str) -> Option<f64> {
    let path = out_dir()
        .join(group.replace('/', "_"))
        .join(id)
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let at = text.find("\"median\"")?;
    let rest = &text[at..];
    let pe = rest.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let num: String = rest[pe..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-')
        .collect();
    num.parse().ok()
}

fn print_ratios() {
    println!("\nRatios from this run (criterion medians; ratio = anchor / tcp-options, >1 means we are faster;");
    println!("for bare-loop, ratio = tcp-options / bare-loop, the goal is <= 1.5):\n");
    println!(
        "{:<22} {:>10} {:>10} {:>11} {:>11} {:>11} {:>10}",
        "case", "ours ns", "bare ns", "ours/bare", "etherparse", "smoltcp", "pnet"
    );
    let groups = INPUTS.iter().map(|(n, _)| format!("iterate/{n}")).chain([
        "header/linux_syn".to_string(),
        "header/sack_ack".to_string(),
    ]);
    for g in groups {
        let Some(ours) = median_ns(&g, "tcp-options") else {
            println!("{g:<22} (no measurement)");
            continue;
        };
        let r = |id: &str| {
            median_ns(&g, id).map_or_else(|| "-".to_string(), |t| format!("{:.2}x", t / ours))
        };
        let bare = median_ns(&g, "bare-loop");
        println!(
            "{:<22} {:>10.2} {:>10} {:>11} {:>11} {:>11} {:>10}",
            g,
            ours,
            bare.map_or("-".into(), |b| format!("{b:.2}")),
            bare.map_or("-".into(), |b| format!("{:.2}", ours / b)),
            r("etherparse"),
            r("smoltcp"),
            r("pnet"),
        );
    }
}
