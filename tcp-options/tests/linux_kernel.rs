//! Linux rules checked against the kernel sources: one test per rule that
//! the first version of the `linux` module had wrong or left out. Each test
//! names the kernel function the rule comes from.

use tcp_options::{auth_options, AuthOptionError, LinuxRepr, OptionErrorReason, ParseContext};

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
