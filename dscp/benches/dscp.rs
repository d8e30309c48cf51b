//! Benchmarks: parsing and printing DSCP names, and rewriting the DS field
//! of an IPv4 header with the RFC 1624 incremental checksum update against
//! the same rewrite followed by a full recomputation (the anchor).

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dscp::{ipv4, Dscp};

/// Every named code point and a few numeric forms, as an operator types them.
const INPUTS: [&str; 30] = [
    "cs0",
    "CS1",
    "cs2",
    "CS3",
    "cs4",
    "CS5",
    "cs6",
    "CS7",
    "af11",
    "AF12",
    "af13",
    "AF21",
    "af22",
    "AF23",
    "af31",
    "AF32",
    "af33",
    "AF41",
    "af42",
    "AF43",
    "ef",
    "VOICE-ADMIT",
    "le",
    "default",
    "46",
    "0x2e",
    "101110",
    "Expedited Forwarding",
    "Class Selector 1",
    "63",
];

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(INPUTS.len() as u64));
    group.bench_function("names_and_numbers", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for s in INPUTS {
                acc += u32::from(black_box(s).parse::<Dscp>().map_or(0, Dscp::value));
            }
            acc
        })
    });
    group.finish();
}

fn display(c: &mut Criterion) {
    let mut group = c.benchmark_group("display");
    group.throughput(Throughput::Elements(64));
    let mut out = String::with_capacity(64 * 24);
    group.bench_function("short_all_64", |b| {
        b.iter(|| {
            out.clear();
            for d in Dscp::all() {
                write!(out, "{}", black_box(d)).unwrap();
            }
            out.len()
        })
    });
    group.bench_function("long_all_64", |b| {
        b.iter(|| {
            out.clear();
            for d in Dscp::all() {
                write!(out, "{:#}", black_box(d)).unwrap();
            }
            out.len()
        })
    });
    group.finish();
}

/// A 60-byte header (IHL 15, 40 bytes of NOP options): the worst case for
/// a full recomputation, which the incremental update does not depend on.
fn long_header() -> [u8; 60] {
    let mut h = [0x01u8; 60];
    h[..20].copy_from_slice(&[
        0x4f, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ]);
    ipv4::fill_checksum(&mut h).unwrap();
    h
}

fn rewrite(c: &mut Criterion) {
    let mut group = c.benchmark_group("ipv4_rewrite");
    let marks = [Dscp::CS1, Dscp::EF, Dscp::LE, Dscp::AF41];
    let mut h = long_header();
    group.bench_function("set_dscp_incremental", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % marks.len();
            ipv4::set_dscp(black_box(&mut h), marks[i]).unwrap();
        })
    });
    let mut h = long_header();
    group.bench_function("set_dscp_then_full_recompute", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % marks.len();
            let buf = black_box(&mut h);
            let field = ipv4::ds_field(buf).unwrap().with_dscp(marks[i]);
            buf[ipv4::DS_FIELD] = field.value();
            ipv4::fill_checksum(buf).unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, parse, display, rewrite);
criterion_main!(benches);
