//! Builder layouts, checksums and rewrites.

use tcp_options::{
    checksum, rewrite, BuildError, MpCapable, OptionsBuilder, RewriteError, SackBlock,
    StrictOptions, TcpOption, TcpPacket,
};

#[test]
fn builder_linux_syn_layout() {
    // Linux tcp_options_write: MSS, SACK-Permitted+TS in one word, NOP WS.
    let b = OptionsBuilder::new()
        .mss(1460)
        .sack_permitted()
        .timestamps(0x841d6b12, 0)
        .window_scale(7)
        .build()
        .unwrap();
    assert_eq!(
        &b[..],
        &[
            0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x84, 0x1d, 0x6b, 0x12, 0, 0, 0, 0,
            0x01, 0x03, 0x03, 0x07
        ]
    );
}

#[test]
fn builder_linux_syn_without_timestamps() {
    // tcpdump shows such a Linux SYN as "mss 1460,nop,nop,sackOK,nop,wscale 7".
    let b = OptionsBuilder::new()
        .mss(1460)
        .sack_permitted()
        .window_scale(7)
        .build()
        .unwrap();
    assert_eq!(
        &b[..],
        &[0x02, 0x04, 0x05, 0xb4, 0x01, 0x01, 0x04, 0x02, 0x01, 0x03, 0x03, 0x07]
    );
}

#[test]
fn builder_sack_ack_fills_40_bytes() {
    let blocks = [
        SackBlock {
            left: 0x3000,
            right: 0x35b4,
        },
        SackBlock {
            left: 0x4000,
            right: 0x45b4,
        },
        SackBlock {
            left: 0x5000,
            right: 0x55b4,
        },
    ];
    let b = OptionsBuilder::new()
        .timestamps(0x1000, 0x2000)
        .sack_blocks(&blocks)
        .build()
        .unwrap();
    assert_eq!(b.len(), 40);
    assert_eq!(&b[..4], &[0x01, 0x01, 0x08, 0x0a]);
    assert_eq!(&b[12..16], &[0x01, 0x01, 0x05, 0x1a]);
    // A fourth block next to timestamps does not fit (RFC 2018).
    let four = [blocks[0], blocks[1], blocks[2], blocks[0]];
    let too_long = OptionsBuilder::new().timestamps(1, 2).sack_blocks(&four);
    assert_eq!(too_long.build(), Err(BuildError::TooLong { needed: 48 }));
    let five = [blocks[0]; 5];
    assert_eq!(
        OptionsBuilder::new().sack_blocks(&five).len(),
        Err(BuildError::TooManySackBlocks { count: 5 })
    );
}

#[test]
fn builder_md5_fast_open_and_errors() {
    let b = OptionsBuilder::new()
        .md5([9; 16])
        .mss(1460)
        .build()
        .unwrap();
    assert_eq!(&b[..4], &[0x01, 0x01, 0x13, 0x12]);
    assert_eq!(&b[20..], &[0x02, 0x04, 0x05, 0xb4]);
    // Request: 22 02 + NOP NOP.
    let b = OptionsBuilder::new().fast_open(&[]).build().unwrap();
    assert_eq!(&b[..], &[0x22, 0x02, 0x01, 0x01]);
    let b = OptionsBuilder::new()
        .fast_open(&[1, 2, 3, 4, 5, 6, 7, 8])
        .build()
        .unwrap();
    assert_eq!(&b[..], &[0x22, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 0x01, 0x01]);
    assert_eq!(
        OptionsBuilder::new().fast_open(&[1, 2, 3]).build(),
        Err(BuildError::InvalidFastOpenCookie { len: 3 })
    );
    let mut small = [0u8; 8];
    let full = OptionsBuilder::new().mss(1).timestamps(1, 1);
    assert_eq!(
        full.write(&mut small),
        Err(BuildError::BufferTooSmall {
            needed: 16,
            available: 8
        })
    );
    assert_eq!(small, [0; 8], "nothing written on error");
    // MD5 + MSS + TS + WS + SACK-Permitted = 20+4+12+4 = 40 exactly.
    let max = OptionsBuilder::new()
        .md5([0; 16])
        .mss(1460)
        .timestamps(1, 2)
        .sack_permitted()
        .window_scale(7);
    assert_eq!(max.len(), Ok(40));
    assert_eq!(
        max.fast_open(&[]).len(),
        Err(BuildError::TooLong { needed: 44 })
    );
}

#[test]
fn rfc1071_and_rfc1624_checksum_vectors() {
    // RFC 1071 section 3: the one's complement sum of 00 01 f2 03 f4 f5 f6 f7 is 0xddf2.
    assert_eq!(
        checksum::fold(checksum::sum(
            &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7],
            0
        )),
        0xddf2
    );
    // RFC 1624 section 4: HC 0xDD2F, m 0x5555 -> m' 0x3285 gives 0x0000
    // (equation 3), not the 0xFFFF of equation 2.
    assert_eq!(checksum::update_word(0xdd2f, 0x5555, 0x3285), 0x0000);
}

const SRC: [u8; 4] = [198, 18, 0, 1];
const DST: [u8; 4] = [198, 18, 0, 2];

fn segment(opts: &[u8], payload: &[u8]) -> Vec<u8> {
    let words = (20 + opts.len()) / 4;
    let mut s = vec![
        0x9c,
        0x40,
        0x00,
        0x50,
        0x00,
        0x00,
        0x10,
        0x00,
        0x00,
        0x00,
        0x20,
        0x00,
        (words as u8) << 4,
        0x12,
        0xfa,
        0xf0,
        0,
        0,
        0,
        0,
    ];
    s.extend_from_slice(opts);
    s.extend_from_slice(payload);
    assert!(checksum::fill_ipv4(SRC, DST, &mut s));
    s
}

fn etherparse_checksum(seg: &[u8]) -> u16 {
    let (h, rest) = etherparse::TcpHeader::from_slice(seg).unwrap();
    h.calc_checksum_ipv4_raw(SRC, DST, rest).unwrap()
}

#[test]
fn full_checksum_matches_etherparse() {
    let opts = OptionsBuilder::new()
        .mss(1460)
        .window_scale(7)
        .build()
        .unwrap();
    for payload in [&b""[..], b"x", b"hello world!"] {
        let s = segment(&opts, payload);
        assert_eq!(checksum::ipv4(SRC, DST, &s), Some(etherparse_checksum(&s)));
        assert!(checksum::verify_ipv4(SRC, DST, &s));
    }
    let mut s = segment(&opts, b"abc");
    let (a6, b6) = (
        [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
    );
    assert!(checksum::fill_ipv6(a6, b6, &mut s));
    assert!(checksum::verify_ipv6(a6, b6, &s));
    let (h, rest) = etherparse::TcpHeader::from_slice(&s).unwrap();
    assert_eq!(h.calc_checksum_ipv6_raw(a6, b6, rest).unwrap(), h.checksum);
    s[25] ^= 1;
    assert!(!checksum::verify_ipv6(a6, b6, &s));
}

#[test]
fn strip_window_scale_like_the_campus_firewall() {
    let opts = OptionsBuilder::new()
        .mss(1460)
        .sack_permitted()
        .timestamps(1, 0)
        .window_scale(7)
        .build()
        .unwrap();
    let mut s = segment(&opts, b"");
    assert_eq!(rewrite::remove_window_scale(&mut s), Ok(true));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    assert_eq!(&s[36..40], &[0x01, 0x01, 0x01, 0x01]);
    assert_eq!(rewrite::remove_window_scale(&mut s), Ok(false));
    assert_eq!(
        rewrite::set_window_scale(&mut s, 3),
        Err(RewriteError::NotPresent { kind: 3 })
    );
}

#[test]
fn each_rewrite_keeps_checksum_valid() {
    let blocks = [
        SackBlock {
            left: 10,
            right: 20,
        },
        SackBlock {
            left: 30,
            right: 40,
        },
    ];
    let opts = OptionsBuilder::new()
        .mss(1460)
        .timestamps(5, 6)
        .window_scale(7)
        .sack_blocks(&blocks)
        .build()
        .unwrap();
    let mut s = segment(&opts, b"odd");
    assert_eq!(rewrite::set_window_scale(&mut s, 2), Ok(7));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    assert_eq!(rewrite::clamp_mss(&mut s, 1400), Ok(Some(1460)));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    assert_eq!(rewrite::clamp_mss(&mut s, 1500), Ok(Some(1400)), "no raise");
    assert_eq!(rewrite::set_window(&mut s, 1234), Ok(0xfaf0));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    assert_eq!(rewrite::add_to_seq(&mut s, u32::MAX), Ok(0x0fff));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    assert_eq!(rewrite::add_to_ack(&mut s, 100), Ok(2));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    assert_eq!(rewrite::strip_options(&mut s, &[8, 2]), Ok(2));
    assert!(checksum::verify_ipv4(SRC, DST, &s));
    let p = TcpPacket::new_checked(&s).unwrap();
    assert_eq!(p.header().window(), 1234);
    assert_eq!(p.header().ack_number(), 0x2000 + 100);
    let opts: Vec<TcpOption> = StrictOptions::new(p.options())
        .map(|o| o.unwrap().option)
        .collect();
    assert!(opts.contains(&TcpOption::WindowScale(2)));
    assert!(!opts
        .iter()
        .any(|o| matches!(o, TcpOption::MaxSegmentSize(_) | TcpOption::Timestamps(_))));
    let sack = opts.iter().find_map(|o| match o {
        TcpOption::Sack(b) => Some(b.iter().collect::<Vec<_>>()),
        _ => None,
    });
    assert_eq!(
        sack,
        Some(vec![
            SackBlock {
                left: 110,
                right: 120
            },
            SackBlock {
                left: 130,
                right: 140
            }
        ])
    );
}

#[test]
fn rewrite_rejects_bad_headers_without_change() {
    let mut short = [0u8; 19];
    assert!(matches!(
        rewrite::set_window(&mut short, 1),
        Err(RewriteError::Header(_))
    ));
    assert_eq!(short, [0; 19]);
}

/// AccECN options (RFC 9768 section 3.2.3, the option's two layouts): kind 172 carries
/// EE0B, ECEB, EE1B and kind 174 EE1B, ECEB, EE0B, each a 24-bit field; the
/// length is 2, 5, 8 or 11 for 0 to 3 fields. Golden bytes written from
/// that section; each block round trips through the strict and the Linux
/// parsers to the same counters.
#[test]
fn builder_accecn_golden_and_round_trip() {
    use tcp_options::{AccEcnCounters, LinuxOptions, StrictOptions, TcpOption};
    let c = |order1, fields| AccEcnCounters {
        order1,
        ee0b: 0x0a_0b0c,
        eceb: 0x01_0203,
        // Counters wrap at 2^24: only the low 24 bits go on the wire.
        ee1b: 0x7f_aabbcc,
        fields,
    };
    let golden: [(bool, u8, &[u8]); 8] = [
        (false, 0, &[0x01, 0x01, 172, 2]),
        (false, 1, &[0x01, 0x01, 0x01, 172, 5, 0x0a, 0x0b, 0x0c]),
        (false, 2, &[172, 8, 0x0a, 0x0b, 0x0c, 0x01, 0x02, 0x03]),
        (
            false,
            3,
            &[
                0x01, 172, 11, 0x0a, 0x0b, 0x0c, 0x01, 0x02, 0x03, 0xaa, 0xbb, 0xcc,
            ],
        ),
        (true, 0, &[0x01, 0x01, 174, 2]),
        (true, 1, &[0x01, 0x01, 0x01, 174, 5, 0xaa, 0xbb, 0xcc]),
        (true, 2, &[174, 8, 0xaa, 0xbb, 0xcc, 0x01, 0x02, 0x03]),
        (
            true,
            3,
            &[
                0x01, 174, 11, 0xaa, 0xbb, 0xcc, 0x01, 0x02, 0x03, 0x0a, 0x0b, 0x0c,
            ],
        ),
    ];
    for (order1, fields, want) in golden {
        let b = OptionsBuilder::new()
            .accecn(c(order1, fields))
            .build()
            .unwrap();
        assert_eq!(&b[..], want, "order1 {order1} fields {fields}");
        let seen = |o: TcpOption<'_>| match o {
            TcpOption::AccEcn(a) => Some((a.kind(), a.field_count(), a.ee0b(), a.eceb(), a.ee1b())),
            _ => None,
        };
        let strict: Vec<_> = StrictOptions::new(&b)
            .map(|r| r.expect("well formed").option)
            .filter_map(seen)
            .collect();
        let linux: Vec<_> = LinuxOptions::new(&b)
            .map(|p| p.option)
            .filter_map(seen)
            .collect();
        let f = usize::from(fields);
        let field = |i: usize, v: u32| (i < f).then_some(v & 0xff_ffff);
        let (ee0b, ee1b) = if order1 {
            (field(2, 0x0a_0b0c), field(0, 0x7f_aabbcc))
        } else {
            (field(0, 0x0a_0b0c), field(2, 0x7f_aabbcc))
        };
        let expect = (
            if order1 { 174 } else { 172 },
            f,
            ee0b,
            field(1, 0x01_0203),
            ee1b,
        );
        assert_eq!(strict, [expect], "strict, order1 {order1} fields {fields}");
        assert_eq!(linux, [expect], "linux, order1 {order1} fields {fields}");
    }
    // Behind the other options, as the last one.
    let b = OptionsBuilder::new()
        .mss(1460)
        .window_scale(7)
        .accecn(c(false, 2))
        .build()
        .unwrap();
    assert_eq!(
        &b[..],
        &[2, 4, 0x05, 0xb4, 1, 3, 3, 7, 172, 8, 0x0a, 0x0b, 0x0c, 0x01, 0x02, 0x03]
    );
    assert_eq!(
        OptionsBuilder::new().accecn(c(true, 4)).build(),
        Err(BuildError::TooManyAccEcnFields { fields: 4 })
    );
    // 40 bytes at most: MD5 (20) + timestamps (12) + AccECN of 11 (12) = 44.
    assert_eq!(
        OptionsBuilder::new()
            .md5([0; 16])
            .timestamps(1, 2)
            .accecn(c(false, 3))
            .len(),
        Err(BuildError::TooLong { needed: 44 })
    );
}

/// MP_CAPABLE as RFC 8684 section 3.1 lays it out (version 1, flag H): 4
/// bytes in a SYN, 12 with the sender's key in a SYN-ACK; the strict
/// parser reads it back as subtype 0, and a full block with it is refused
/// as too long rather than cut.
#[test]
fn builder_mp_capable_round_trips() {
    for (key, len) in [(None, 4usize), (Some(0x6c61_622d_6b65_7931u64), 12)] {
        let b = OptionsBuilder::new()
            .mss(1460)
            .mp_capable(MpCapable { key });
        let opts = b.build().unwrap();
        assert_eq!(opts.len(), 4 + len);
        let parsed: Vec<_> = StrictOptions::new(&opts)
            .map(|o| o.unwrap().option)
            .collect();
        match parsed[1] {
            TcpOption::Mptcp(m) => {
                assert_eq!(m.subtype, 0);
                assert_eq!(m.subtype_name(), Some("MP_CAPABLE"));
                assert_eq!(m.data.len(), len - 2);
                assert_eq!(m.data[0..2], [0x01, 0x01]);
                if let Some(k) = key {
                    assert_eq!(m.data[2..], k.to_be_bytes());
                }
            }
            ref o => panic!("{o:?}"),
        }
    }
    let full = OptionsBuilder::new()
        .timestamps(1, 2)
        .sack_permitted()
        .mss(1460)
        .window_scale(7)
        .fast_open(&[1, 2, 3, 4, 5, 6, 7, 8])
        .mp_capable(MpCapable { key: Some(1) });
    assert!(matches!(full.build(), Err(BuildError::TooLong { .. })));
}

/// Any other option (`OptionsBuilder::other`): written last as given and
/// padded with NOPs to a whole word; an RFC 6994 experimental option reads
/// back with its ExID, an unassigned kind as `Unknown`; more than 40
/// bytes in all is refused, nothing written.
#[test]
fn builder_other_option_round_trips() {
    let exp = OptionsBuilder::new()
        .other(253, &[0x12, 0x34, 0xab, 0xcd])
        .build()
        .unwrap();
    assert_eq!(&exp[..], &[253, 6, 0x12, 0x34, 0xab, 0xcd, 1, 1]);
    match StrictOptions::new(&exp).next().unwrap().unwrap().option {
        TcpOption::Experimental(e) => {
            assert_eq!(
                (e.kind, e.exid, e.data),
                (253, Some(0x1234), &[0xab, 0xcd][..])
            );
        }
        o => panic!("{o:?}"),
    }
    let unassigned = OptionsBuilder::new()
        .mss(1460)
        .other(99, &[0x5a, 0x5a])
        .build()
        .unwrap();
    assert_eq!(&unassigned[..], &[2, 4, 5, 0xb4, 99, 4, 0x5a, 0x5a]);
    assert!(matches!(
        StrictOptions::new(&unassigned)
            .nth(1)
            .unwrap()
            .unwrap()
            .option,
        TcpOption::Unknown { kind: 99, .. }
    ));
    let big = [0u8; 39];
    let mut buf = [0xffu8; 48];
    assert!(matches!(
        OptionsBuilder::new().other(99, &big).write(&mut buf),
        Err(BuildError::TooLong { needed: 44 })
    ));
    assert!(buf.iter().all(|b| *b == 0xff));
    assert_eq!(OptionsBuilder::new().other(99, &big[..38]).len(), Ok(40));
}
