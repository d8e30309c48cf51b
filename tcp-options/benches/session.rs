//! The edit session's cost per edit beside today's single rewrites.
//!
//! Each case edits a copy of the same IPv4 packet (a Linux SYN-ACK: MSS,
//! SACK-Permitted, Timestamps, NOP, Window Scale, 100 bytes of payload):
//!
//! - `single/N`: N of the `rewrite` functions in a row on the TCP segment
//!   (each checks the header, walks the options and updates the checksum);
//! - `session/N`: one `EditSession` (open: IP and TCP header checks, strict
//!   option walk, option copy), the same N edits, one `finish` (one
//!   checksum update, IP fields). `edits/0` is the copy alone beside open
//!   plus finish with no edit: the session's fixed cost.
//!
//! Criterion's throughput is in edits, so `elem/s` reads as edits per
//! second and its inverse as the cost per edit, copy of the packet
//! included. The edits, in order: set window, clamp MSS, add to seq, add to
//! ack, set window scale, strip SACK-Permitted.
//!
//! Run: `cargo bench -p tcp-options --bench session`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use tcp_options::session::EditSession;
use tcp_options::{checksum, kind, rewrite};

const OPTS: [u8; 20] = [
    0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x84, 0x1d, 0x6b, 0x12, 0x00, 0x00, 0x00, 0x01,
    0x01, 0x03, 0x03, 0x07,
];

fn packet() -> Vec<u8> {
    let (src, dst) = ([198, 18, 1, 2], [198, 19, 2, 2]);
    let mut t = vec![
        0x9c, 0x40, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 2, 0xa0, 0x12, 0xff, 0xff, 0, 0, 0, 0,
    ];
    t.extend(OPTS);
    t.extend([0x5a; 100]);
    checksum::fill_ipv4(src, dst, &mut t);
    let mut p = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0];
    p.extend(src);
    p.extend(dst);
    p[2..4].copy_from_slice(&((20 + t.len()) as u16).to_be_bytes());
    let c = !checksum::fold(checksum::sum(&p, 0));
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend(t);
    p
}

/// One of the single rewrites.
type Rewrite<'a> = &'a dyn Fn(&mut [u8]);

fn singles(seg: &mut [u8], n: usize) {
    let ops: [Rewrite; 6] = [
        &|s| {
            let _ = rewrite::set_window(s, 1000);
        },
        &|s| {
            let _ = rewrite::clamp_mss(s, 1400);
        },
        &|s| {
            let _ = rewrite::add_to_seq(s, 12345);
        },
        &|s| {
            let _ = rewrite::add_to_ack(s, 777);
        },
        &|s| {
            let _ = rewrite::set_window_scale(s, 5);
        },
        &|s| {
            let _ = rewrite::strip_options(s, &[kind::SACK_PERMITTED]);
        },
    ];
    for op in ops.iter().take(n) {
        op(seg);
    }
}

fn session(buf: &mut [u8], n: usize) -> usize {
    let Ok(mut s) = EditSession::open(buf) else {
        return 0;
    };
    if n > 0 {
        s.set_window(1000);
    }
    if n > 1 {
        s.clamp_mss(1400);
    }
    if n > 2 {
        s.add_to_seq(12345);
    }
    if n > 3 {
        s.add_to_ack(777);
    }
    if n > 4 {
        let _ = s.set_window_scale(5);
    }
    if n > 5 {
        s.strip(&[kind::SACK_PERMITTED]);
    }
    s.finish()
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    let p = packet();
    // Both ways give the same bytes (checked before timing).
    for n in [1, 3, 6] {
        let mut a = p.clone();
        singles(&mut a[20..], n);
        let mut b = p.clone();
        assert_eq!(session(&mut b, n), p.len());
        assert_eq!(a, b, "{n} edits");
    }
    for n in [0usize, 1, 3, 6] {
        let mut g = c.benchmark_group(format!("edits/{n}"));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("single", |b| {
            let mut buf = [0u8; 256];
            b.iter(|| {
                let seg = &mut buf[..p.len()];
                seg.copy_from_slice(&p);
                singles(&mut seg[20..], n);
                black_box(&seg[36]);
            })
        });
        g.bench_function("session", |b| {
            let mut buf = [0u8; 256];
            b.iter(|| {
                let seg = &mut buf[..p.len()];
                seg.copy_from_slice(&p);
                black_box(session(seg, n));
            })
        });
        g.finish();
    }
    c.final_summary();
}
