//! Linux rules checked against the kernel sources: one test per rule that
//! the first version of the `linux` module had wrong or left out. Each test
//! names the kernel function the rule comes from.

use tcp_options::{
    auth_options, AuthOptionError, LinuxRepr, OptionErrorReason, ParseContext, SignatureBuild,
    SignatureDrop,
};

const SYN: ParseContext = ParseContext::handshake(true);
const ACK: ParseContext = ParseContext::established(true, true);

fn md5(digest: u8) -> Vec<u8> {
    let mut v = vec![0x13, 18];
    v.extend([digest; 16]);
    v
}

// ---- tcp_parse_options (net/ipv4/tcp_input.c) ----

/// tcp_parse_options: kind 253 has no case of its own, and kind 254 is
/// Linux's only if it carries the Fast Open ExID; both are "unknown".
#[test]
fn experimental_kinds_without_fast_open_exid_are_unknown() {
    let r = LinuxRepr::parse(&[0xfd, 0x04, 0x12, 0x34], SYN);
    assert!(r.saw_unknown, "kind 253");
    let r = LinuxRepr::parse(&[0xfe, 0x04, 0x12, 0x34], SYN);
    assert!(r.saw_unknown, "kind 254 with another ExID");
    assert_eq!(r.fast_open, None);
    // With the Fast Open ExID the option is Linux's, even off a SYN.
    let r = LinuxRepr::parse(&[0xfe, 0x04, 0xf9, 0x89], ParseContext::handshake(false));
    assert!(!r.saw_unknown);
    assert_eq!(r.fast_open, None, "Fast Open counts only on a SYN");
}

/// tcp_parse_options: MPTCP (kind 30) has no case (the MPTCP code walks the
/// options itself), so it marks the segment as carrying an unknown option;
/// TCP-AO (kind 29) and MD5 (kind 19) are stepped over quietly.
#[test]
fn mptcp_is_unknown_signatures_are_not() {
    let r = LinuxRepr::parse(&[0x1e, 0x04, 0x00, 0x81], SYN);
    assert!(r.saw_unknown);
    let r = LinuxRepr::parse(&[0x1d, 0x06, 0x01, 0x02, 0xaa, 0xbb], SYN);
    assert!(!r.saw_unknown);
    let digest = md5(1);
    let r = LinuxRepr::parse(&digest, SYN);
    assert!(!r.saw_unknown);
    assert_eq!(r.md5, Some(&[1u8; 16]));
}

/// tcp_parse_options keeps the position of the last AccECN option whatever
/// its length and whether or not SYN is set; tcp_accecn_process_option then
/// reads whole 3-byte fields only, at most three.
#[test]
fn accecn_of_any_length_is_kept_and_read_in_whole_fields() {
    // Length 6: one whole field (00 00 07) and one stray byte.
    let r = LinuxRepr::parse(&[0xac, 0x06, 0x00, 0x00, 0x07, 0x09], ACK);
    let a = r.accecn.expect("kept despite a length that is not 2 + 3n");
    assert_eq!((a.ee0b(), a.eceb(), a.ee1b()), (Some(7), None, None));
    assert_eq!(r.skipped, 0, "Linux does not check AccECN's length");
    // Length 14: four fields on the wire, three read.
    let mut block = vec![0xae, 14];
    block.extend([0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4]);
    let a = LinuxRepr::parse(&block, ACK).accecn.unwrap();
    assert_eq!(a.kind(), 174);
    assert_eq!((a.ee1b(), a.eceb(), a.ee0b()), (Some(1), Some(2), Some(3)));
    // The last of two wins; a bare option (length 2) still counts.
    let r = LinuxRepr::parse(&[0xac, 0x05, 0, 0, 9, 0xae, 0x02, 0x01], ACK);
    let a = r.accecn.unwrap();
    assert_eq!((a.kind(), a.ee1b()), (174, None));
}

/// tcp_parse_options checks the length of MSS, Window Scale,
/// SACK-Permitted, Timestamps and SACK only; an MD5 option of another length
/// is not "skipped" there (the signature walk rejects it instead).
#[test]
fn skipped_counts_only_length_checked_kinds() {
    let r = LinuxRepr::parse(&[0x13, 0x04, 0, 0, 0x22, 0x03, 0x01, 0x01], SYN);
    assert_eq!(r.skipped, 0);
    let r = LinuxRepr::parse(&[0x08, 0x08, 0, 0, 0, 0, 0, 0], SYN);
    assert_eq!(r.skipped, 1, "Timestamps of length 8");
}

// ---- tcp_do_parse_auth_options (net/ipv4/tcp_input.c), used by
// ---- tcp_inbound_hash, which drops the segment on failure ----

/// A second signature option with room to be read is an error, where the
/// first version kept the first MD5 and ignored the rest.
#[test]
fn second_signature_option_drops_the_segment() {
    // A second, short MD5 record with 6 bytes left: looked at, rejected.
    let mut block = md5(7);
    block.extend([0x13, 0x04, 0, 0, 0x01, 0x01]);
    let r = LinuxRepr::parse(&block, ACK);
    assert_eq!(r.md5, None);
    assert_eq!(
        r.auth_error,
        Some(AuthOptionError::Md5Length {
            offset: 18,
            length: 4
        })
    );
    // Two complete MD5 options: the duplicate itself is the error.
    let mut block = md5(7);
    block.extend(md5(8));
    assert_eq!(
        auth_options(&block, true),
        Err(AuthOptionError::Duplicate {
            offset: 18,
            kind: 19
        })
    );
    // MD5 then TCP-AO: also a duplicate.
    let mut block = md5(7);
    block.extend([0x1d, 0x05, 1, 2, 0xaa]);
    assert_eq!(
        auth_options(&block, true),
        Err(AuthOptionError::Duplicate {
            offset: 18,
            kind: 29
        })
    );
}

/// MD5 must have length 18 and TCP-AO at least 5, or the segment is dropped.
#[test]
fn signature_option_lengths() {
    let block = [0x13, 0x04, 0, 0, 0x01, 0x01];
    assert_eq!(
        auth_options(&block, true),
        Err(AuthOptionError::Md5Length {
            offset: 0,
            length: 4
        })
    );
    let block = [0x1d, 0x04, 1, 2, 0x01, 0x01];
    assert_eq!(
        auth_options(&block, true),
        Err(AuthOptionError::AoTooShort {
            offset: 0,
            length: 4
        })
    );
    let block = [0x01, 0x1d, 0x07, 1, 2, 0xaa, 0xbb, 0xcc];
    let found = auth_options(&block, true).unwrap();
    let ao = found.tcp_ao.unwrap();
    assert_eq!(
        (ao.key_id, ao.rnext_key_id, ao.mac),
        (1, 2, &[0xaa, 0xbb, 0xcc][..])
    );
    assert_eq!(LinuxRepr::parse(&block, ACK).tcp_ao, Some(ao));
}

/// Framing errors: tcp_parse_options stops quietly, but the signature walk
/// fails (and the segment is dropped) when at least 5 bytes are left, or 18
/// on a kernel with MD5 but no TCP-AO.
#[test]
fn framing_error_is_fatal_only_to_the_signature_walk() {
    // NOP NOP, MSS of length 1, then padding: 6 bytes from the bad record.
    let block = [0x01, 0x01, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00];
    let r = LinuxRepr::parse(&block, SYN);
    assert_eq!(r.stopped.map(|e| e.offset), Some(2));
    assert_eq!(
        r.auth_error,
        Some(AuthOptionError::Framing {
            offset: 2,
            kind: 2,
            reason: OptionErrorReason::LengthTooSmall { length: 1 }
        })
    );
    assert!(
        auth_options(&block, false).is_ok(),
        "MD5-only kernel: 8 < 18"
    );
    // 4 bytes left at the bad record: below the 5 the walk needs.
    let block = [0x02, 0x04, 0x05, 0xb4, 0x03, 0x09, 0x07, 0x00];
    assert_eq!(LinuxRepr::parse(&block, SYN).auth_error, None);
    // EOL ends the signature walk before anything after it.
    let block = [0x00, 0x02, 0x01, 0x00, 0x00, 0x00];
    assert_eq!(auth_options(&block, true), Ok(Default::default()));
}

// ---- the three kernel builds (tcp_do_parse_auth_options' minimum length,
// ---- include/net/tcp_ao.h's stub without MD5 or TCP-AO, tcp_inbound_hash) ----

fn tcp_ao(mac_len: usize) -> Vec<u8> {
    let mut v = vec![0x1d, (4 + mac_len) as u8, 1, 1];
    v.extend(std::iter::repeat_n(0xab, mac_len));
    v
}

fn parse_for(block: &[u8], build: SignatureBuild) -> LinuxRepr<'_> {
    LinuxRepr::parse(block, SYN.with_signature_build(build))
}

/// The default context models a kernel built with TCP-AO.
#[test]
fn default_build_is_tcp_ao() {
    assert_eq!(SYN.signature_build, SignatureBuild::TcpAo);
    assert_eq!(
        ParseContext::default().signature_build,
        SignatureBuild::TcpAo
    );
    assert_eq!(
        LinuxRepr::parse(&[], SYN).signature_build,
        SignatureBuild::TcpAo
    );
    assert_eq!(SignatureBuild::default(), SignatureBuild::TcpAo);
}

/// MD5 then TCP-AO (18 + 6 = 24 bytes): after the MD5 option 6 bytes are
/// left, enough for the TCP-AO walk (5) but not for the MD5-only walk (18).
/// TCP-AO then MD5 (16 + 18 = 34): the MD5 option starts with exactly 18
/// left, so both walks see the duplicate. Without either, nothing drops.
#[test]
fn md5_and_tcp_ao_together_per_build() {
    let mut md5_first = md5(7);
    md5_first.extend(tcp_ao(2));
    let dup = |offset, kind| Some(AuthOptionError::Duplicate { offset, kind });
    assert_eq!(
        parse_for(&md5_first, SignatureBuild::TcpAo).auth_error,
        dup(18, 0x1d)
    );
    let r = parse_for(&md5_first, SignatureBuild::Md5Only);
    assert_eq!(r.auth_error, None);
    assert_eq!(r.md5, Some(&[7u8; 16]));
    assert_eq!(r.tcp_ao, None, "the MD5-only walk never reached it");
    assert_eq!(r.drop_without_keys(), Some(SignatureDrop::Md5Unexpected));
    let r = parse_for(&md5_first, SignatureBuild::Neither);
    assert_eq!(
        (r.auth_error, r.md5, r.drop_without_keys()),
        (None, None, None)
    );

    let mut ao_first = tcp_ao(12);
    ao_first.extend(md5(7));
    assert_eq!(ao_first.len(), 34);
    for build in [SignatureBuild::TcpAo, SignatureBuild::Md5Only] {
        let r = parse_for(&ao_first, build);
        assert_eq!(r.auth_error, dup(16, 0x13), "{build:?}");
        assert!(matches!(
            r.drop_without_keys(),
            Some(SignatureDrop::Walk(_))
        ));
    }
    assert_eq!(
        parse_for(&ao_first, SignatureBuild::Neither).drop_without_keys(),
        None
    );
}

/// tcp_inbound_hash on a socket with no key: an MD5 option is unexpected on
/// every build with MD5; a TCP-AO option only on a build with TCP-AO (the
/// MD5-only build's tcp_inbound_ao_hash is a stub that lets it through).
#[test]
fn lone_signature_options_per_build() {
    let ao = tcp_ao(16);
    let m = md5(1);
    let cases = [
        (
            &ao,
            SignatureBuild::TcpAo,
            Some(SignatureDrop::AoUnexpected),
        ),
        (&ao, SignatureBuild::Md5Only, None),
        (&ao, SignatureBuild::Neither, None),
        (
            &m,
            SignatureBuild::TcpAo,
            Some(SignatureDrop::Md5Unexpected),
        ),
        (
            &m,
            SignatureBuild::Md5Only,
            Some(SignatureDrop::Md5Unexpected),
        ),
        (&m, SignatureBuild::Neither, None),
    ];
    for (block, build, want) in cases {
        assert_eq!(
            parse_for(block, build).drop_without_keys(),
            want,
            "{build:?} {block:02x?}"
        );
    }
    // The MD5-only walk still finds a TCP-AO option with 18 bytes left.
    let r = parse_for(&ao, SignatureBuild::Md5Only);
    assert_eq!(r.tcp_ao.map(|a| a.mac.len()), Some(16));
    // An unsigned SYN passes everywhere.
    let plain = [0x02, 0x04, 0x05, 0xb4];
    for build in SignatureBuild::ALL {
        assert_eq!(parse_for(&plain, build).drop_without_keys(), None);
    }
}

/// A framing error 5..17 bytes from the end drops the segment on a TCP-AO
/// build only; the same error with 18 or more bytes left drops it on both
/// builds with a walk; never without one. The main walk stops quietly in
/// every build.
#[test]
fn framing_error_per_build() {
    // NOP, then a window-scale record of length 9 with 6 bytes left.
    let short = [0x01, 0x03, 0x09, 0x07, 0x00, 0x00, 0x00];
    let ws = |block: &[u8], b| parse_for(block, b).drop_without_keys().is_some();
    assert!(ws(&short, SignatureBuild::TcpAo));
    assert!(!ws(&short, SignatureBuild::Md5Only));
    assert!(!ws(&short, SignatureBuild::Neither));
    // A length-1 record with 20 bytes left.
    let mut long = vec![0x22, 0x01];
    long.extend([0u8; 18]);
    assert!(ws(&long, SignatureBuild::TcpAo));
    assert!(ws(&long, SignatureBuild::Md5Only));
    assert!(!ws(&long, SignatureBuild::Neither));
    for build in SignatureBuild::ALL {
        assert!(parse_for(&long, build).stopped.is_some(), "{build:?}");
        // The bool form is the same walk.
        if let Some(min) = build.walk_min_left() {
            let tcp_ao = min == 5;
            assert_eq!(auth_options(&short, tcp_ao), build.auth_options(&short));
        }
    }
}
