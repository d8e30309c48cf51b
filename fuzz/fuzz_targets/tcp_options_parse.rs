//! Both option policies, the Linux repr, the header view and the negotiation
//! summary on arbitrary bytes: never a panic; the policies stay consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcp_options::{
    Handshake, LinuxOptions, LinuxRepr, ParseContext, RawOptions, StrictOptions, TcpPacket,
};

fuzz_target!(|data: &[u8]| {
    // As an option block.
    let strict: Vec<_> = StrictOptions::new(data).collect();
    let clean = strict
        .iter()
        .all(|r| r.as_ref().map_or_else(|e| e.is_warning(), |_| true));
    let strict_ok: Vec<_> = strict
        .iter()
        .filter_map(|r| r.as_ref().ok().copied())
        .collect();
    let mut linux_it = LinuxOptions::new(data);
    let linux: Vec<_> = linux_it.by_ref().collect();
    assert!(linux.len() >= strict_ok.len());
    assert_eq!(&linux[..strict_ok.len()], &strict_ok[..]);
    if clean {
        assert_eq!(linux, strict_ok);
    }
    for p in &linux {
        assert!(p.offset + p.wire_len() <= data.len());
    }
    assert_eq!(RawOptions::new(data).count() >= linux.len(), true);
    for syn in [false, true] {
        let r = LinuxRepr::parse(data, ParseContext::handshake(syn));
        assert_eq!(r.stopped, linux_it.stopped());
        assert!(r.window_scale.is_none_or(|w| w <= 14));
    }
    let _ = LinuxRepr::parse(data, ParseContext::established(true, true));

    // As a segment.
    if let Ok(p) = TcpPacket::new_checked(data) {
        assert!(p.header().header_len() >= 20);
        let _ = p.options_strict().count();
        let _ = p.linux_repr(ParseContext::default());
    }

    // As a handshake: split in two.
    let mid = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
    let (a, b) = data.split_at(mid);
    let n = Handshake::observed(Some(a), Some(b)).negotiate();
    let _ = (n.window_scaling_mismatch(), n.window_shift_mismatch());
});
