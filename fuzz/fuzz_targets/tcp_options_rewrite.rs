//! Arbitrary segment and rewrite operation: never a panic, an error leaves
//! the segment unchanged, and a valid checksum stays valid.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tcp_options::{checksum, rewrite};

#[derive(Debug, Arbitrary)]
enum Op {
    Strip(Vec<u8>),
    SetWindowScale(u8),
    RemoveWindowScale,
    ClampMss(u16),
    SetWindow(u16),
    AddToSeq(u32),
    AddToAck(u32),
}

#[derive(Debug, Arbitrary)]
struct Input {
    src: [u8; 4],
    dst: [u8; 4],
    fix_checksum: bool,
    ops: Vec<Op>,
    segment: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let Input {
        src,
        dst,
        fix_checksum,
        ops,
        mut segment,
    } = input;
    if fix_checksum {
        checksum::fill_ipv4(src, dst, &mut segment);
    }
    let valid = checksum::verify_ipv4(src, dst, &segment);
    for op in ops.iter().take(16) {
        let before = segment.clone();
        let ok = match op {
            Op::Strip(k) => rewrite::strip_options(&mut segment, k).is_ok(),
            Op::SetWindowScale(s) => rewrite::set_window_scale(&mut segment, *s).is_ok(),
            Op::RemoveWindowScale => rewrite::remove_window_scale(&mut segment).is_ok(),
            Op::ClampMss(m) => rewrite::clamp_mss(&mut segment, *m).is_ok(),
            Op::SetWindow(w) => rewrite::set_window(&mut segment, *w).is_ok(),
            Op::AddToSeq(d) => rewrite::add_to_seq(&mut segment, *d).is_ok(),
            Op::AddToAck(d) => rewrite::add_to_ack(&mut segment, *d).is_ok(),
        };
        if !ok {
            assert_eq!(segment, before, "a failed rewrite changed the segment");
        }
        if valid {
            assert!(
                checksum::verify_ipv4(src, dst, &segment),
                "checksum broken by {op:?}"
            );
        }
    }
});
