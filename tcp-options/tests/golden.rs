//! Golden vectors: byte layouts from Linux and the RFCs, one vector per
//! malformation class, and the Linux-policy rules one by one.

use tcp_options::{
    ExpectedLength, FastOpenSeen, Flags, HeaderError, LinuxOptions, LinuxRepr, OptionErrorReason,
    ParseContext, SackBlock, StrictOptions, TcpOption, TcpPacket, Timestamps,
};

/// The option block of a Linux SYN (layout of Linux `tcp_options_write`
/// with MSS, SACK-Permitted, Timestamps and Window Scale; tcpdump prints it
/// as "mss 1460,sackOK,TS val 2216520466 ecr 0,nop,wscale 7").
const LINUX_SYN: [u8; 20] = [
    0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x84, 0x1d, 0x6b, 0x12, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x03, 0x03, 0x07,
];

/// An ACK with NOP NOP Timestamps and NOP NOP SACK of three blocks: the
/// Linux `tcp_options_write` layout for an established connection with
/// timestamps (3 blocks is the most that fits next to Timestamps, RFC 2018).
const SACK_ACK: [u8; 40] = [
    0x01, 0x01, 0x08, 0x0a, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, // NOP NOP TS
    0x01, 0x01, 0x05, 0x1a, // NOP NOP SACK len 26
    0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x35, 0xb4, // block 1
    0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x45, 0xb4, // block 2
    0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x55, 0xb4, // block 3
];

fn strict_ok(block: &[u8]) -> Vec<TcpOption<'_>> {
    StrictOptions::new(block)
        .map(|r| r.expect("well formed").option)
        .collect()
}

fn strict_err(block: &[u8]) -> (usize, u8, OptionErrorReason) {
    let e = StrictOptions::new(block)
        .find_map(|r| r.err())
        .expect("an error");
    (e.offset, e.kind, e.reason)
}

#[test]
fn linux_syn_block() {
    let opts = strict_ok(&LINUX_SYN);
    assert_eq!(
        opts,
        [
            TcpOption::MaxSegmentSize(1460),
            TcpOption::SackPermitted,
            TcpOption::Timestamps(Timestamps {
                tsval: 2216520466,
                tsecr: 0
            }),
            TcpOption::NoOperation,
            TcpOption::WindowScale(7),
        ]
    );
    let offsets: Vec<usize> = StrictOptions::new(&LINUX_SYN)
        .map(|r| r.unwrap().offset)
        .collect();
    assert_eq!(offsets, [0, 4, 6, 16, 17]);
    let r = LinuxRepr::parse(&LINUX_SYN, ParseContext::handshake(true));
    assert_eq!(r.mss, Some(1460));
    assert_eq!(r.window_scale, Some(7));
    assert!(r.sack_permitted);
    assert_eq!(r.timestamps.map(|t| t.tsval), Some(2216520466));
    assert_eq!(r.stopped, None);
    assert!(!r.saw_unknown);
}

#[test]
fn sack_ack_block() {
    let opts = strict_ok(&SACK_ACK);
    assert_eq!(opts.len(), 6);
    let TcpOption::Sack(blocks) = opts[5] else {
        panic!("expected SACK, got {:?}", opts[5]);
    };
    assert_eq!(blocks.len(), 3);
    let v: Vec<SackBlock> = blocks.iter().collect();
    assert_eq!(
        v,
        [
            SackBlock {
                left: 0x3000,
                right: 0x35b4
            },
            SackBlock {
                left: 0x4000,
                right: 0x45b4
            },
            SackBlock {
                left: 0x5000,
                right: 0x55b4
            },
        ]
    );
    assert_eq!(blocks.get(3), None);
    // Linux reads the blocks only when SACK was negotiated.
    let on = LinuxRepr::parse(&SACK_ACK, ParseContext::established(true, true));
    assert_eq!(on.sack.map(|(off, b)| (off, b.len())), Some((14, 3)));
    assert_eq!(
        on.timestamps,
        Some(Timestamps {
            tsval: 0x1000,
            tsecr: 0x2000
        })
    );
    let off = LinuxRepr::parse(&SACK_ACK, ParseContext::established(false, false));
    assert_eq!(off.sack, None);
    assert_eq!(off.timestamps, None);
}

#[test]
fn four_sack_blocks_are_kept() {
    // RFC 2018: 4 blocks (34 bytes) fit when there are no timestamps.
    let mut b = vec![0x01, 0x01, 0x05, 34];
    for i in 0..4u32 {
        b.extend_from_slice(&(i * 100).to_be_bytes());
        b.extend_from_slice(&(i * 100 + 50).to_be_bytes());
    }
    b.extend_from_slice(&[0, 0]);
    let opts = strict_ok(&b);
    let TcpOption::Sack(blocks) = opts[2] else {
        panic!()
    };
    assert_eq!(blocks.len(), 4);
    assert_eq!(
        blocks.get(3),
        Some(SackBlock {
            left: 300,
            right: 350
        })
    );
}

// ---- one vector per strict malformation class (issue 3, item 3) ----

fn wrong(length: u8, expected: ExpectedLength) -> OptionErrorReason {
    OptionErrorReason::WrongLength { length, expected }
}

#[test]
fn strict_length_byte_missing() {
    assert_eq!(
        strict_err(&[0x01, 0x01, 0x01, 0x02]),
        (3, 2, OptionErrorReason::LengthMissing)
    );
}

#[test]
fn strict_length_below_two() {
    assert_eq!(
        strict_err(&[0x01, 0x1b, 0x00, 0x00]),
        (1, 0x1b, OptionErrorReason::LengthTooSmall { length: 0 })
    );
    assert_eq!(
        strict_err(&[0x1b, 0x01, 0x00, 0x00]),
        (0, 0x1b, OptionErrorReason::LengthTooSmall { length: 1 })
    );
}

#[test]
fn strict_overrun() {
    assert_eq!(
        strict_err(&[0x02, 0x04, 0x05, 0xb4, 0x08, 0x0a, 0x00, 0x00]),
        (
            4,
            8,
            OptionErrorReason::Overrun {
                length: 10,
                available: 4
            }
        )
    );
}

#[test]
fn strict_wrong_lengths_of_known_kinds() {
    use ExpectedLength::*;
    let cases: &[(&[u8], u8, OptionErrorReason)] = &[
        (&[0x02, 0x03, 0x05, 0x01], 2, wrong(3, Exactly(4))),
        (&[0x03, 0x04, 0x07, 0x00], 3, wrong(4, Exactly(3))),
        (&[0x04, 0x03, 0x00, 0x01], 4, wrong(3, Exactly(2))),
        (&[0x08, 0x06, 0, 0, 0, 1, 0, 0], 8, wrong(6, Exactly(10))),
        (&[0x05, 0x02, 0x01, 0x01], 5, wrong(2, SackBlocks)),
        (&[0x05, 0x06, 0, 0, 0, 1, 0, 0], 5, wrong(6, SackBlocks)),
        (&[0x1c, 0x03, 0x80, 0x01], 28, wrong(3, Exactly(4))),
        (&[0x13, 0x04, 0xaa, 0xbb], 19, wrong(4, Exactly(18))),
        // Fast Open: odd cookie, cookie of 2 (< 4), cookie of 18 (> 16).
        (&[0x22, 0x05, 1, 2, 3, 0], 34, wrong(5, FastOpen)),
        (&[0x22, 0x04, 1, 2], 34, wrong(4, FastOpen)),
        (
            &[
                0x22, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
            ],
            34,
            wrong(20, FastOpen),
        ),
        (&[0xac, 0x03, 0x00, 0x00], 172, wrong(3, AccEcn)),
        (&[0x1d, 0x03, 0x01, 0x00], 29, wrong(3, AtLeast(4))),
        (&[0x1e, 0x02, 0x01, 0x01], 30, wrong(2, AtLeast(3))),
    ];
    for (block, kind, reason) in cases {
        assert_eq!(strict_err(block), (0, *kind, *reason), "block {block:02x?}");
    }
}

#[test]
fn fast_open_request_and_cookie_are_fine() {
    assert_eq!(
        strict_ok(&[0x22, 0x02, 0x01, 0x01])[0],
        TcpOption::FastOpen(tcp_options::FastOpen {
            kind: 34,
            cookie: &[]
        })
    );
    let c = [0x22, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 0x01, 0x01];
    let TcpOption::FastOpen(f) = strict_ok(&c)[0] else {
        panic!()
    };
    assert_eq!(f.cookie, &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert!(!f.is_request());
}

#[test]
fn strict_nonzero_after_eol_is_a_warning() {
    let block = [0x02, 0x04, 0x05, 0xb4, 0x00, 0x00, 0x07, 0x09];
    let items: Vec<_> = StrictOptions::new(&block).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(items[1].as_ref().unwrap().option, TcpOption::EndOfList);
    let w = items[2].unwrap_err();
    assert!(w.is_warning());
    assert_eq!((w.offset, w.kind), (6, 7));
    assert_eq!(w.reason, OptionErrorReason::NonZeroAfterEol { count: 2 });
    // Zero padding after EOL is fine.
    assert!(StrictOptions::validate(&[0x02, 0x04, 0x05, 0xb4, 0, 0, 0, 0]).is_ok());
}

#[test]
fn error_messages_say_what_and_where() {
    let e = StrictOptions::new(&[0x02, 0x03, 0x05, 0x00])
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "option kind 2 at offset 0: length 3 is wrong for this kind (expected 4)"
    );
}

#[test]
fn unknown_kind_does_not_end_iteration() {
    // Kind 99 (unassigned) then MSS.
    let opts = strict_ok(&[99, 4, 0xde, 0xad, 0x02, 0x04, 0x05, 0xb4]);
    assert_eq!(
        opts,
        [
            TcpOption::Unknown {
                kind: 99,
                data: &[0xde, 0xad]
            },
            TcpOption::MaxSegmentSize(1460)
        ]
    );
}

#[test]
fn decoders_of_the_other_kinds() {
    // RFC 5482: G bit set, 15-bit value 10 -> 10 minutes.
    let TcpOption::UserTimeout(u) = strict_ok(&[0x1c, 0x04, 0x80, 0x0a])[0] else {
        panic!()
    };
    assert!(u.minutes);
    assert_eq!((u.timeout, u.as_secs()), (10, 600));
    // RFC 5925: KeyID 1, RNextKeyID 2, 12-byte MAC.
    let ao = [0x1d, 16, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    let TcpOption::TcpAo(a) = strict_ok(&ao)[0] else {
        panic!()
    };
    assert_eq!((a.key_id, a.rnext_key_id, a.mac.len()), (1, 2, 12));
    // RFC 8684 MP_CAPABLE (subtype 0, version 1) on a SYN: length 12.
    let mp = [0x1e, 12, 0x01, 0x81, 1, 2, 3, 4, 5, 6, 7, 8];
    let TcpOption::Mptcp(m) = strict_ok(&mp)[0] else {
        panic!()
    };
    assert_eq!((m.subtype, m.subtype_name()), (0, Some("MP_CAPABLE")));
    // DSS is subtype 2.
    let TcpOption::Mptcp(m) = strict_ok(&[0x1e, 4, 0x20, 0x01])[0] else {
        panic!()
    };
    assert_eq!(m.subtype_name(), Some("DSS"));
    // RFC 9768 AccECN1 with three fields: EE1B, ECEB, EE0B.
    let acc = [0xae, 11, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0x01];
    let TcpOption::AccEcn(e) = strict_ok(&acc)[0] else {
        panic!()
    };
    assert_eq!((e.ee1b(), e.eceb(), e.ee0b()), (Some(1), Some(2), Some(3)));
    let TcpOption::AccEcn(e) = strict_ok(&[0xac, 5, 0, 0, 7, 0x01])[0] else {
        panic!()
    };
    assert_eq!((e.ee0b(), e.eceb(), e.ee1b()), (Some(7), None, None));
    // RFC 6994 experimental with ExID 0x1234.
    let TcpOption::Experimental(x) = strict_ok(&[0xfd, 5, 0x12, 0x34, 9, 0x01])[0] else {
        panic!()
    };
    assert_eq!((x.exid, x.data), (Some(0x1234), &[9u8][..]));
    // Linux's experimental Fast Open: kind 254, ExID 0xF989, 4-byte cookie.
    let TcpOption::FastOpen(f) = strict_ok(&[0xfe, 8, 0xf9, 0x89, 1, 2, 3, 4])[0] else {
        panic!()
    };
    assert_eq!((f.kind, f.cookie), (254, &[1u8, 2, 3, 4][..]));
    // MD5 digest.
    let mut md5 = vec![0x13, 18];
    md5.extend(0..16u8);
    md5.extend([0x01, 0x01]);
    let TcpOption::Md5Signature(d) = strict_ok(&md5)[0] else {
        panic!()
    };
    assert_eq!(d[15], 15);
}

// ---- Linux policy rules, one by one (Linux tcp_parse_options) ----

#[test]
fn linux_stops_silently_on_framing_errors() {
    for block in [
        &[0x02, 0x04, 0x05, 0xb4, 0x03][..], // length byte missing
        &[0x02, 0x04, 0x05, 0xb4, 0x03, 0x01, 0x03, 0x03, 0x07][..], // length 1
        &[0x02, 0x04, 0x05, 0xb4, 0x03, 0x00, 0x03, 0x03, 0x07][..], // length 0
        &[0x02, 0x04, 0x05, 0xb4, 0x08, 0x0a, 0, 0][..], // overrun
    ] {
        let mut it = LinuxOptions::new(block);
        let kinds: Vec<u8> = it.by_ref().map(|o| o.kind).collect();
        assert_eq!(kinds, [2], "block {block:02x?}");
        assert_eq!(it.stopped().map(|e| e.offset), Some(4));
        let r = LinuxRepr::parse(block, ParseContext::handshake(true));
        assert_eq!(
            r.mss,
            Some(1460),
            "options before the stop keep their effect"
        );
        assert_eq!(r.window_scale, None);
        assert!(r.stopped.is_some());
    }
}

#[test]
fn linux_skips_known_option_of_wrong_size() {
    // MSS of length 5 (skipped), then Window Scale.
    let block = [0x02, 0x05, 0x05, 0xb4, 0x00, 0x03, 0x03, 0x07];
    let opts: Vec<_> = LinuxOptions::new(&block).collect();
    assert!(matches!(opts[0].option, TcpOption::Invalid { kind: 2, .. }));
    assert_eq!(opts[1].option, TcpOption::WindowScale(7));
    let r = LinuxRepr::parse(&block, ParseContext::handshake(true));
    assert_eq!((r.mss, r.window_scale, r.skipped), (None, Some(7), 1));
}

#[test]
fn linux_last_duplicate_wins() {
    let block = [
        0x02, 0x04, 0x05, 0xb4, 0x02, 0x04, 0x02, 0x18, 0x03, 0x03, 0x02, 0x00,
    ];
    let r = LinuxRepr::parse(&block, ParseContext::handshake(true));
    assert_eq!(r.mss, Some(536));
    assert_eq!(r.window_scale, Some(2));
}

#[test]
fn linux_clamps_window_scale_and_reports_it() {
    // RFC 7323 section 2.3: a shift above 14 is used as 14.
    let block = [0x01, 0x03, 0x03, 0x0f];
    let r = LinuxRepr::parse(&block, ParseContext::handshake(true));
    assert_eq!(r.window_scale, Some(14));
    assert_eq!(r.window_scale_clamped_from, Some(15));
    // The strict policy shows the wire value.
    assert_eq!(strict_ok(&block)[1], TcpOption::WindowScale(15));
}

#[test]
fn linux_syn_only_options_and_mss_zero() {
    let r = LinuxRepr::parse(&LINUX_SYN, ParseContext::handshake(false));
    assert_eq!(
        (r.mss, r.window_scale, r.sack_permitted),
        (None, None, false)
    );
    assert!(r.timestamps.is_some(), "timestamps count on any segment");
    let r = LinuxRepr::parse(&[0x02, 0x04, 0x00, 0x00], ParseContext::handshake(true));
    assert_eq!(r.mss, None);
    // With the sysctl off, Window Scale is not recorded.
    let mut ctx = ParseContext::handshake(true);
    ctx.sysctl_window_scaling = false;
    assert_eq!(LinuxRepr::parse(&LINUX_SYN, ctx).window_scale, None);
}

#[test]
fn linux_fast_open_rules() {
    let syn = ParseContext::handshake(true);
    let r = LinuxRepr::parse(&[0x22, 0x02, 0x01, 0x01], syn);
    assert_eq!(r.fast_open, Some(FastOpenSeen::Request));
    let r = LinuxRepr::parse(&[0x22, 0x05, 1, 2, 3, 0x01], syn);
    assert_eq!(r.fast_open, None, "odd length ignored");
    let r = LinuxRepr::parse(&[0x22, 0x04, 1, 2], syn);
    assert_eq!(r.fast_open, Some(FastOpenSeen::Invalid));
    let r = LinuxRepr::parse(&[0xfe, 0x08, 0xf9, 0x89, 1, 2, 3, 4], syn);
    assert_eq!(r.fast_open, Some(FastOpenSeen::Cookie(&[1, 2, 3, 4])));
    let r = LinuxRepr::parse(&[0x22, 0x02, 0x01, 0x01], ParseContext::handshake(false));
    assert_eq!(r.fast_open, None, "only on a SYN");
}

#[test]
fn linux_unknown_and_md5() {
    let mut block = vec![0x1c, 0x04, 0x00, 0x1e];
    block.extend([0x13, 18]);
    block.extend([7u8; 16]);
    // A second, bad MD5 record is never looked at: only 3 bytes are left, and
    // Linux's signature walk (tcp_do_parse_auth_options) needs at least 5.
    block.extend([0x13, 0x03, 0x00]);
    let r = LinuxRepr::parse(&block, ParseContext::handshake(false));
    assert!(r.saw_unknown, "Linux does not parse User Timeout");
    assert_eq!(r.md5, Some(&[7u8; 16]));
    assert_eq!(r.auth_error, None);
}

// ---- header ----

/// A SYN from 192.0.2.1:40000 to :80 with the Linux SYN options (data
/// offset 10) and the AE bit set.
fn syn_segment() -> Vec<u8> {
    let mut s = vec![
        0x9c, 0x40, 0x00, 0x50, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x00, 0x00, 0xa1, 0xc2, 0xfa,
        0xf0, 0x00, 0x00, 0x00, 0x00,
    ];
    s.extend_from_slice(&LINUX_SYN);
    s
}

#[test]
fn header_accessors() {
    let s = syn_segment();
    let p = TcpPacket::new_checked(&s).unwrap();
    let h = p.header();
    assert_eq!((h.src_port(), h.dst_port()), (40000, 80));
    assert_eq!(h.seq_number(), 0x12345678);
    assert_eq!(h.data_offset(), 10);
    assert_eq!(h.header_len(), 40);
    assert_eq!(h.window(), 64240);
    // 0xc2 = CWR|ECE|SYN, plus the AE bit in byte 12.
    assert_eq!(h.flags(), Flags::SYN | Flags::ECE | Flags::CWR | Flags::AE);
    assert_eq!(
        h.flags().names().collect::<Vec<_>>(),
        ["SYN", "ECE", "CWR", "AE"]
    );
    assert_eq!(p.options(), &LINUX_SYN);
    assert!(p.payload().is_empty());
    let r = p.linux_repr(ParseContext::default());
    assert_eq!(r.mss, Some(1460), "linux_repr takes SYN from the header");
}

#[test]
fn header_checks() {
    let s = syn_segment();
    assert_eq!(
        TcpPacket::new_checked(&s[..19]),
        Err(HeaderError::Truncated { len: 19 })
    );
    assert_eq!(
        TcpPacket::new_checked(&s[..39]),
        Err(HeaderError::DataOffsetOverrun {
            data_offset: 10,
            len: 39
        })
    );
    let mut bad = s.clone();
    bad[12] = 0x40;
    assert_eq!(
        TcpPacket::new_checked(&bad),
        Err(HeaderError::DataOffsetTooSmall { data_offset: 4 })
    );
}
