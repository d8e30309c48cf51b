//! `tcp_options::netfilter` against the rules of net/netfilter/xt_TCPMSS.c,
//! xt_TCPOPTSTRIP.c and xt_tcpudp.c (Linux 6.x), one test per rule; the
//! lab test (examples/lab/tests/labs/netfilter.rs) checks the same functions
//! against the real modules byte for byte.

use proptest::prelude::*;
use tcp_options::checksum;
use tcp_options::netfilter::{
    locate, syn_match, tcpmss, tcpoptstrip, DropReason, IpFamily, MssChange, MssKept, MssTarget,
    NetfilterError, StripSet, Verdict,
};

const SRC: [u8; 4] = [198, 18, 1, 2];
const DST: [u8; 4] = [198, 19, 2, 2];
const SRC6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const DST6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

/// An IPv4 packet (valid header checksum) with a TCP segment carrying
/// `opts` (padded to words with `pad`) and `payload`, TCP checksum valid,
/// and `spare` zero bytes after it.
fn v4(flags: u8, opts: &[u8], payload: &[u8], spare: usize) -> Vec<u8> {
    let tcp = segment(flags, opts, payload);
    let mut p = vec![0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0];
    p.extend(SRC);
    p.extend(DST);
    let total = (20 + tcp.len()) as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    let c = !checksum::fold(checksum::sum(&p, 0));
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let mut tcp = tcp;
    assert!(checksum::fill_ipv4(SRC, DST, &mut tcp));
    p.extend(tcp);
    p.extend(std::iter::repeat_n(0, spare));
    p
}

fn v6(flags: u8, opts: &[u8], payload: &[u8], spare: usize) -> Vec<u8> {
    let mut tcp = segment(flags, opts, payload);
    assert!(checksum::fill_ipv6(SRC6, DST6, &mut tcp));
    let mut p = vec![0x60, 0, 0, 0];
    p.extend((tcp.len() as u16).to_be_bytes());
    p.extend([6, 64]);
    p.extend(SRC6);
    p.extend(DST6);
    p.extend(tcp);
    p.extend(std::iter::repeat_n(0, spare));
    p
}

fn segment(flags: u8, opts: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut o = opts.to_vec();
    while o.len() % 4 != 0 {
        o.push(0);
    }
    let doff = (5 + o.len() / 4) as u8;
    let mut t = vec![
        0x9c,
        0x40,
        0x00,
        0x50,
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        0,
        doff << 4,
        flags,
        0xff,
        0xff,
    ];
    t.extend([0, 0, 0, 0]);
    t.extend(o);
    t.extend(payload);
    t
}

fn tcp_of(p: &[u8]) -> &[u8] {
    let at = locate(p).unwrap();
    &p[at.tcp_offset..at.len]
}

fn v4_ok(p: &[u8]) -> bool {
    let ihl_ok = !checksum::fold(checksum::sum(&p[..20], 0)) == 0;
    ihl_ok && checksum::verify_ipv4(SRC, DST, tcp_of(p))
}

// ---- TCPMSS ----

#[test]
fn lowers_the_first_mss_and_keeps_the_checksum() {
    let mut p = v4(SYN, &[2, 4, 0x05, 0xb4, 1, 3, 3, 7], &[], 0);
    let v = tcpmss(&mut p, MssTarget::Set(1400)).unwrap();
    assert_eq!(
        v,
        Verdict::Accept(MssChange::Lowered {
            offset: 20,
            from: 1460,
            to: 1400
        })
    );
    assert_eq!(&tcp_of(&p)[22..24], &1400u16.to_be_bytes());
    assert!(v4_ok(&p));
}

/// "Never increase MSS, even when setting it" (xt_TCPMSS), and the first
/// MSS option decides: a later, larger one is not looked at.
#[test]
fn never_raises_and_only_the_first_mss_counts() {
    let mut p = v4(SYN, &[2, 4, 0x03, 0xe8, 2, 4, 0x05, 0xb4], &[], 0);
    let before = p.clone();
    let v = tcpmss(&mut p, MssTarget::Set(1200)).unwrap();
    assert_eq!(
        v,
        Verdict::Accept(MssChange::Kept(MssKept::NotAbove {
            offset: 20,
            mss: 1000
        }))
    );
    assert_eq!(p, before);
}

/// optlen(): EOL steps one byte and the walk goes on, so an MSS after EOL
/// is rewritten; a length byte of 0 steps one byte.
#[test]
fn optlen_walk_goes_past_eol_and_length_zero() {
    let mut p = v4(SYN, &[0, 0, 0, 0, 2, 4, 0x05, 0xb4], &[], 0);
    assert!(matches!(
        tcpmss(&mut p, MssTarget::Set(1000)).unwrap(),
        Verdict::Accept(MssChange::Lowered { offset: 24, .. })
    ));
    // kind 99 with length 0 steps to its length byte (read as EOL, one
    // more byte), then MSS at offset 22.
    let mut p = v4(SYN, &[99, 0, 2, 4, 0x05, 0xb4, 1, 1], &[], 0);
    assert!(matches!(
        tcpmss(&mut p, MssTarget::Set(1000)).unwrap(),
        Verdict::Accept(MssChange::Lowered { offset: 22, .. })
    ));
    // Linux's own walk would stop at the length-0 record instead.
    assert_eq!(
        tcp_options::LinuxRepr::parse(&[99, 0, 2, 4, 5, 0xb4, 1, 1], Default::default()).mss,
        None
    );
}

/// xt_TCPMSS updates the checksum as if the MSS were one aligned word: at
/// an odd offset the result is the aligned update, which does not verify.
#[test]
fn unaligned_mss_gets_the_modules_checksum() {
    let mut p = v4(SYN, &[1, 2, 4, 0x05, 0xb4, 1, 1, 1], &[], 0);
    let old = u16::from_be_bytes([tcp_of(&p)[16], tcp_of(&p)[17]]);
    tcpmss(&mut p, MssTarget::Set(1000)).unwrap();
    let new = u16::from_be_bytes([tcp_of(&p)[16], tcp_of(&p)[17]]);
    assert_eq!(new, checksum::update_word(old, 1460, 1000));
    assert!(!checksum::verify_ipv4(SRC, DST, tcp_of(&p)));
}

/// The walk covers offsets 20..=hdrlen-4: an MSS record starting in the
/// last 3 bytes of the header is out of reach, so the SYN counts as having
/// no MSS and one is inserted.
#[test]
fn walk_stops_four_bytes_before_the_end() {
    // 8 bytes of options: NOP x5 then "2 4 x" cut by the header's end.
    let mut p = v4(SYN, &[1, 1, 1, 1, 1, 2, 4, 5], &[], 4);
    let v = tcpmss(&mut p, MssTarget::Set(1000)).unwrap();
    assert_eq!(
        v,
        Verdict::Accept(MssChange::Inserted { mss: 536, len: 52 })
    );
}

/// No MSS option: inserted at the front, min(MSS, 536) for IPv4; data
/// offset, total length, IP header checksum and TCP checksum all updated.
#[test]
fn inserts_an_mss_into_a_syn_without_one() {
    let mut p = v4(SYN, &[1, 3, 3, 7], &[], 4);
    let v = tcpmss(&mut p, MssTarget::Set(1400)).unwrap();
    assert_eq!(
        v,
        Verdict::Accept(MssChange::Inserted { mss: 536, len: 48 })
    );
    assert_eq!(&p[2..4], &48u16.to_be_bytes());
    let t = tcp_of(&p);
    assert_eq!(t[12] >> 4, 7);
    assert_eq!(&t[20..28], &[2, 4, 0x02, 0x18, 1, 3, 3, 7]);
    assert!(v4_ok(&p));
    // A lower MSS is used as it is.
    let mut p = v4(SYN, &[], &[], 4);
    assert_eq!(
        tcpmss(&mut p, MssTarget::Set(500)).unwrap(),
        Verdict::Accept(MssChange::Inserted { mss: 500, len: 44 })
    );
    assert!(v4_ok(&p));
}

#[test]
fn inserts_1220_at_most_for_ipv6() {
    let mut p = v6(SYN, &[4, 2], &[], 4);
    let v = tcpmss(&mut p, MssTarget::Set(1440)).unwrap();
    assert_eq!(
        v,
        Verdict::Accept(MssChange::Inserted { mss: 1220, len: 68 })
    );
    assert_eq!(&p[4..6], &28u16.to_be_bytes());
    assert!(checksum::verify_ipv6(SRC6, DST6, &p[40..68]));
}

#[test]
fn no_insert_with_payload_or_a_full_header_or_without_room() {
    let mut p = v4(SYN, &[], b"data", 4);
    assert_eq!(
        tcpmss(&mut p, MssTarget::Set(1400)).unwrap(),
        Verdict::Accept(MssChange::Kept(MssKept::Payload))
    );
    let mut p = v4(SYN, &[1; 40], &[], 4);
    assert_eq!(
        tcpmss(&mut p, MssTarget::Set(1400)).unwrap(),
        Verdict::Accept(MssChange::Kept(MssKept::HeaderFull))
    );
    let mut p = v4(SYN, &[], &[], 3);
    assert_eq!(
        tcpmss(&mut p, MssTarget::Set(1400)),
        Err(NetfilterError::NoRoom {
            needed: 44,
            available: 43
        })
    );
}

/// --clamp-mss-to-pmtu: MTU less 40 (IPv4) or 60 (IPv6); an MTU not above
/// that is "unknown or invalid path-MTU" and the packet is dropped.
#[test]
fn clamp_to_pmtu() {
    let mut p = v4(SYN, &[2, 4, 0x05, 0xb4], &[], 0);
    assert!(matches!(
        tcpmss(&mut p, MssTarget::ClampToPmtu { mtu: 1400 }).unwrap(),
        Verdict::Accept(MssChange::Lowered { to: 1360, .. })
    ));
    let mut p = v6(SYN, &[2, 4, 0x05, 0xb4], &[], 0);
    assert!(matches!(
        tcpmss(&mut p, MssTarget::ClampToPmtu { mtu: 1400 }).unwrap(),
        Verdict::Accept(MssChange::Lowered { to: 1340, .. })
    ));
    assert_eq!(
        tcpmss(&mut p, MssTarget::ClampToPmtu { mtu: 60 }).unwrap(),
        Verdict::Drop(DropReason::InvalidPathMtu { mtu: 60 })
    );
}

#[test]
fn malformed_headers_are_dropped() {
    let mut p = v4(SYN, &[], &[], 0);
    p[32] = 0x40; // data offset 4
    assert_eq!(
        tcpmss(&mut p.clone(), MssTarget::Set(1000)).unwrap(),
        Verdict::Drop(DropReason::DataOffsetTooSmall { data_offset: 4 })
    );
    assert_eq!(
        tcpoptstrip(&mut p, &StripSet::new().with(3)).unwrap(),
        Verdict::Drop(DropReason::DataOffsetTooSmall { data_offset: 4 })
    );
    let mut p = v4(SYN, &[], &[], 0);
    p[32] = 0x60; // 24 bytes of header in a 20-byte segment
    assert_eq!(
        tcpoptstrip(&mut p, &StripSet::new()).unwrap(),
        Verdict::Drop(DropReason::DataOffsetPastPacket {
            data_offset: 6,
            len: 20
        })
    );
    // 12 bytes of TCP: the tcp match itself drops it.
    let mut p = v4(SYN, &[], &[], 0);
    p.truncate(32);
    p[2..4].copy_from_slice(&32u16.to_be_bytes());
    assert_eq!(
        syn_match(&p).unwrap(),
        Verdict::Drop(DropReason::TcpTruncated { len: 12 })
    );
}

#[test]
fn syn_match_is_syn_without_rst() {
    assert_eq!(syn_match(&v4(SYN, &[], &[], 0)), Ok(Verdict::Accept(true)));
    assert_eq!(
        syn_match(&v4(SYN | ACK, &[], &[], 0)),
        Ok(Verdict::Accept(true))
    );
    assert_eq!(
        syn_match(&v4(SYN | 0x04, &[], &[], 0)),
        Ok(Verdict::Accept(false))
    );
    assert_eq!(syn_match(&v4(ACK, &[], &[], 0)), Ok(Verdict::Accept(false)));
    // A later fragment does not match; one at 8 bytes is dropped.
    let mut p = v4(SYN, &[], &[], 0);
    p[6..8].copy_from_slice(&[0, 2]);
    assert_eq!(syn_match(&p), Ok(Verdict::Accept(false)));
    p[6..8].copy_from_slice(&[0, 1]);
    assert_eq!(syn_match(&p), Ok(Verdict::Drop(DropReason::TinyFragment)));
    let mut udp = v4(SYN, &[], &[], 0);
    udp[9] = 17;
    assert_eq!(
        syn_match(&udp),
        Err(NetfilterError::NotTcp { protocol: 17 })
    );
}

#[test]
fn locates_tcp_behind_ipv6_extension_headers() {
    let mut p = v6(SYN, &[2, 4, 0x05, 0xb4], &[], 0);
    // Insert an 8-byte hop-by-hop header.
    p[6] = 0;
    let hbh = [6u8, 0, 1, 4, 0, 0, 0, 0];
    p.splice(40..40, hbh);
    let plen = u16::from_be_bytes([p[4], p[5]]) + 8;
    p[4..6].copy_from_slice(&plen.to_be_bytes());
    let at = locate(&p).unwrap();
    assert_eq!((at.family, at.tcp_offset, at.len), (IpFamily::V6, 48, 72));
    assert!(matches!(
        tcpmss(&mut p, MssTarget::Set(1000)).unwrap(),
        Verdict::Accept(MssChange::Lowered { offset: 20, .. })
    ));
}

// ---- TCPOPTSTRIP ----

#[test]
fn strips_to_nops_with_a_valid_checksum() {
    let syn = [
        2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    let mut p = v4(SYN, &syn, &[], 0);
    let set = StripSet::parse("wscale,sack-permitted").unwrap();
    assert_eq!(tcpoptstrip(&mut p, &set), Ok(Verdict::Accept(2)));
    let t = tcp_of(&p);
    assert_eq!(&t[24..26], &[1, 1]);
    assert_eq!(&t[36..40], &[1, 1, 1, 1]);
    assert!(v4_ok(&p));
}

/// optlen(): a record with length byte 1 steps one byte, so only its kind
/// byte becomes a NOP; an option running past the header ends the walk.
#[test]
fn strip_quirks() {
    let mut p = v4(ACK, &[3, 1, 3, 3, 7, 1, 1, 1], &[], 0);
    let set = StripSet::new().with(3);
    assert_eq!(tcpoptstrip(&mut p, &set), Ok(Verdict::Accept(2)));
    assert_eq!(&tcp_of(&p)[20..28], &[1, 1, 1, 1, 1, 1, 1, 1]);
    assert!(v4_ok(&p));
    let mut p = v4(ACK, &[1, 1, 3, 9, 7, 0, 0, 0], &[], 0);
    assert_eq!(tcpoptstrip(&mut p, &set), Ok(Verdict::Accept(0)));
    // The last header byte is never examined.
    let mut p = v4(ACK, &[1, 1, 1, 3], &[], 0);
    assert_eq!(tcpoptstrip(&mut p, &set), Ok(Verdict::Accept(0)));
}

/// The kernel's csum_fold never yields 0xFFFF after an update: a checksum
/// field of 0xFFFF becomes 0x0000 even when the stripped bytes were NOPs
/// already (net/core/utils.c inet_proto_csum_replace4 -> csum_replace4).
#[test]
fn checksum_ffff_becomes_zero() {
    let mut p = v4(ACK, &[1, 1, 1, 1], &[], 0);
    p[36..38].copy_from_slice(&[0xff, 0xff]);
    assert_eq!(
        tcpoptstrip(&mut p, &StripSet::new().with(1)),
        Ok(Verdict::Accept(3))
    );
    assert_eq!(&p[36..38], &[0, 0]);
}

#[test]
fn strip_list_names_and_numbers() {
    let s = StripSet::parse("mss,wscale,sack-permitted,sack,timestamp,md5,0x1e,254").unwrap();
    assert_eq!(s.kinds().collect::<Vec<_>>(), [2, 3, 4, 5, 8, 19, 30, 254]);
    assert!(StripSet::parse("256").is_err());
    // iptables: "Option value may not be 0 or 1".
    assert!(StripSet::parse("mss,1").is_err());
    assert!(StripSet::parse("0").is_err());
    assert!(StripSet::parse("").is_err());
    assert!(StripSet::new().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// On any option bytes and flags: nothing panics, the IP header stays
    /// valid, and the TCP checksum stays valid after a strip, after an
    /// insertion, and after a lowering at an even offset.
    #[test]
    fn checksums_stay_valid(
        words in 0usize..=10,
        bytes in proptest::collection::vec(prop_oneof![Just(1u8), Just(2), Just(4), 0u8..=255], 40),
        payload in proptest::collection::vec(any::<u8>(), 0..8),
        flags in any::<u8>(),
        mss in any::<u16>(),
        strip in proptest::collection::vec(any::<u8>(), 0..4),
    ) {
        let opts = &bytes[..words * 4];
        let mut p = v4(flags, opts, &payload, 4);
        let set = StripSet::from_kinds(&strip);
        let v = tcpoptstrip(&mut p, &set).unwrap();
        prop_assert!(matches!(v, Verdict::Accept(_)));
        prop_assert!(v4_ok(&p));
        match tcpmss(&mut p, MssTarget::Set(mss)).unwrap() {
            Verdict::Accept(MssChange::Lowered { offset, .. }) if offset % 2 == 1 => {}
            Verdict::Accept(_) => prop_assert!(v4_ok(&p)),
            Verdict::Drop(d) => prop_assert!(false, "dropped: {d}"),
        }
        let mut q = p.clone();
        let _ = syn_match(&q);
        let _ = tcpoptstrip(&mut q[..], &StripSet::from_kinds(&[0, 1, 2]));
    }

    /// Arbitrary bytes: no panic, and an error or a drop changes nothing.
    #[test]
    fn arbitrary_bytes(mut buf in proptest::collection::vec(any::<u8>(), 0..120), mss in any::<u16>(), mtu in any::<u32>()) {
        let before = buf.clone();
        if !matches!(tcpmss(&mut buf, MssTarget::Set(mss)), Ok(Verdict::Accept(_))) {
            prop_assert_eq!(&buf, &before);
        }
        let _ = tcpmss(&mut buf, MssTarget::ClampToPmtu { mtu });
        let _ = tcpoptstrip(&mut buf, &StripSet::from_kinds(&[2, 3, 0]));
        let _ = syn_match(&buf);
        let _ = locate(&buf);
    }
}
