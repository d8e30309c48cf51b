//! The segment and packet representations: golden vectors from real
//! packets, errors that say what and where, and property tests (any repr
//! written then read is the same repr; any bytes read never panic, and
//! what reads is written back as it was). Failing seeds are kept in
//! `tests/regressions/repr.txt`.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use tcp_options::checksum::{self, PseudoHeader};
use tcp_options::ip::{IPV4_HEADER_LEN, PROTOCOL_TCP};
use tcp_options::{
    netfilter, EmitError, Flags, HeaderError, IpRepr, Ipv4Repr, Ipv6Repr, OptionsBuilder,
    PacketError, PacketRepr, TcpOption, TcpRepr, Timestamps,
};

/// A real Linux SYN over IPv4: the first packet of
/// `examples/data/campus-inside.pcap` (made by the lab in `examples/lab`,
/// recorded by tcpdump on the client's interface), Ethernet header
/// removed. tcpdump -vv prints it as
/// `IP (tos 0x0, ttl 64, id 41845, offset 0, flags [DF], proto TCP (6),
/// length 60) 198.18.1.2.53612 > 198.18.2.2.5201: Flags [S], cksum 0x8f57
/// (incorrect -> 0x9062), seq 1813472455, win 64240, options [mss
/// 1460,sackOK,TS val 1335699271 ecr 0,nop,wscale 10], length 0`.
/// The TCP checksum is the one left for the network card to finish
/// (checksum offload): only the pseudo-header sum.
const LINUX_SYN_V4: [u8; 60] = [
    0x45, 0x00, 0x00, 0x3c, 0xa3, 0x75, 0x40, 0x00, 0x40, 0x06, 0x08, 0x1e, 0xc6, 0x12, 0x01, 0x02,
    0xc6, 0x12, 0x02, 0x02, 0xd1, 0x6c, 0x14, 0x51, 0x6c, 0x17, 0x64, 0xc7, 0x00, 0x00, 0x00, 0x00,
    0xa0, 0x02, 0xfa, 0xf0, 0x8f, 0x57, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a,
    0x4f, 0x9d, 0x27, 0x47, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x0a,
];

/// A real Linux SYN over IPv6: the first packet of
/// `examples/data/clean6-inside.pcap` (same lab), Ethernet header removed.
/// tcpdump -vv: `IP6 (flowlabel 0xe2be7, hlim 64, next-header TCP (6)
/// payload length: 40) 2001:db8:1::2.39234 > 2001:db8:2::2.5201: Flags
/// [S], cksum 0x5ba7 (incorrect -> 0x9a56), seq 1595227066, win 64800,
/// options [mss 1440,sackOK,TS val 4272885262 ecr 0,nop,wscale 10],
/// length 0` (checksum offloaded likewise).
const LINUX_SYN_V6: [u8; 80] = [
    0x60, 0x0e, 0x2b, 0xe7, 0x00, 0x28, 0x06, 0x40, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x99, 0x42, 0x14, 0x51, 0x5f, 0x15, 0x3b, 0xba,
    0x00, 0x00, 0x00, 0x00, 0xa0, 0x02, 0xfd, 0x20, 0x5b, 0xa7, 0x00, 0x00, 0x02, 0x04, 0x05, 0xa0,
    0x04, 0x02, 0x08, 0x0a, 0xfe, 0xaf, 0x0e, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x0a,
];

/// The capture with the TCP checksum tcpdump says is correct.
fn with_tcp_checksum<const N: usize>(pkt: [u8; N], at: usize, c: u16) -> [u8; N] {
    let mut p = pkt;
    p[at..at + 2].copy_from_slice(&c.to_be_bytes());
    p
}

#[test]
fn real_linux_syn_over_ipv4() {
    let p = PacketRepr::parse(&LINUX_SYN_V4).unwrap();
    let IpRepr::V4(ip) = p.ip else {
        panic!("IPv4 expected")
    };
    assert_eq!(ip.src, Ipv4Addr::new(198, 18, 1, 2));
    assert_eq!(ip.dst, Ipv4Addr::new(198, 18, 2, 2));
    assert_eq!(
        (ip.tos, ip.identification, ip.dont_fragment, ip.ttl),
        (0, 41845, true, 64)
    );
    assert_eq!(ip.protocol, PROTOCOL_TCP);
    assert!(ip.options.is_empty());
    let t = p.tcp;
    assert_eq!((t.src_port, t.dst_port), (53612, 5201));
    assert_eq!((t.seq_number, t.ack_number), (1813472455, 0));
    assert_eq!(t.flags, Flags::SYN);
    assert_eq!((t.window, t.urgent_pointer), (64240, 0));
    assert!(t.payload.is_empty());
    let opts: Vec<TcpOption> = t.options_strict().map(|o| o.unwrap().option).collect();
    assert_eq!(
        opts,
        [
            TcpOption::MaxSegmentSize(1460),
            TcpOption::SackPermitted,
            TcpOption::Timestamps(Timestamps {
                tsval: 1335699271,
                tsecr: 0
            }),
            TcpOption::NoOperation,
            TcpOption::WindowScale(10),
        ]
    );
    // The builder writes Linux's layout: the same 20 bytes.
    let built = OptionsBuilder::new()
        .mss(1460)
        .sack_permitted()
        .timestamps(1335699271, 0)
        .window_scale(10)
        .build()
        .unwrap();
    assert_eq!(&built[..], t.options);

    // IPv4 header checksum 0x081e is right (tcpdump does not complain);
    // the TCP one is the offloaded partial sum, tcpdump computes 0x9062.
    assert!(checksum::verify_ipv4_header(&LINUX_SYN_V4[..20]));
    assert_eq!(
        PacketRepr::parse_verified(&LINUX_SYN_V4),
        Err(PacketError::TcpChecksum {
            offset: 20,
            stored: 0x8f57,
            computed: 0x9062
        })
    );

    // Written again: the capture with the checksum the card would write.
    let fixed = with_tcp_checksum(LINUX_SYN_V4, 36, 0x9062);
    let mut buf = [0u8; 60];
    assert_eq!(p.emit(&mut buf), Ok(60));
    assert_eq!(buf, fixed);
    assert_eq!(PacketRepr::parse_verified(&fixed), Ok(p));

    // And from scratch, the way a tool builds it.
    let scratch = PacketRepr {
        ip: IpRepr::V4(Ipv4Repr {
            identification: 41845,
            ..Ipv4Repr::tcp(Ipv4Addr::new(198, 18, 1, 2), Ipv4Addr::new(198, 18, 2, 2))
        }),
        tcp: TcpRepr {
            seq_number: 1813472455,
            flags: Flags::SYN,
            window: 64240,
            options: &built,
            ..TcpRepr::new(53612, 5201)
        },
    };
    let mut buf2 = [0u8; 60];
    assert_eq!(scratch.emit(&mut buf2), Ok(60));
    assert_eq!(buf2, fixed);
}

#[test]
fn real_linux_syn_over_ipv6() {
    let p = PacketRepr::parse(&LINUX_SYN_V6).unwrap();
    let IpRepr::V6(ip) = p.ip else {
        panic!("IPv6 expected")
    };
    assert_eq!(ip.src, "2001:db8:1::2".parse::<Ipv6Addr>().unwrap());
    assert_eq!(ip.dst, "2001:db8:2::2".parse::<Ipv6Addr>().unwrap());
    assert_eq!(
        (ip.traffic_class, ip.flow_label, ip.hop_limit),
        (0, 0xe2be7, 64)
    );
    assert_eq!(ip.next_header, PROTOCOL_TCP);
    assert!(ip.extension_headers.is_empty());
    let t = p.tcp;
    assert_eq!((t.src_port, t.dst_port), (39234, 5201));
    assert_eq!(t.seq_number, 1595227066);
    assert_eq!((t.flags, t.window), (Flags::SYN, 64800));
    let built = OptionsBuilder::new()
        .mss(1440)
        .sack_permitted()
        .timestamps(4272885262, 0)
        .window_scale(10)
        .build()
        .unwrap();
    assert_eq!(&built[..], t.options);
    assert_eq!(
        PacketRepr::parse_verified(&LINUX_SYN_V6),
        Err(PacketError::TcpChecksum {
            offset: 40,
            stored: 0x5ba7,
            computed: 0x9a56
        })
    );
    let fixed = with_tcp_checksum(LINUX_SYN_V6, 56, 0x9a56);
    let mut buf = [0u8; 80];
    assert_eq!(p.emit(&mut buf), Ok(80));
    assert_eq!(buf, fixed);
    assert_eq!(PacketRepr::parse_verified(&fixed), Ok(p));
    // The TCP part alone, with the pseudo-header from the IP header.
    let seg = TcpRepr::parse(&fixed[40..]).unwrap();
    assert_eq!(seg, t);
    assert!(p.ip.pseudo_header().verify(&fixed[40..]));
}

#[test]
fn ipv4_header_checksum_worked_example() {
    // The worked example of the IPv4 header checksum in Wikipedia's
    // "Internet checksum" (and "IPv4 header checksum") article:
    // 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
    let mut h = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];
    assert_eq!(checksum::ipv4_header(&h), Some(0xb861));
    assert!(checksum::verify_ipv4_header(&h));
    // The same header through Ipv4Repr: emit computes the same checksum.
    let mut whole = h.to_vec();
    whole.resize(0x73, 0);
    let (ip, _) = Ipv4Repr::parse(&whole).unwrap();
    assert_eq!(ip.protocol, 17);
    let mut out = [0u8; 20];
    assert_eq!(ip.emit(&mut out, 0x73 - 20), Ok(20));
    assert_eq!(out, h);
    h[10] = 0;
    assert!(!checksum::verify_ipv4_header(&h));
    assert!(checksum::fill_ipv4_header(&mut h));
    assert_eq!(h[10..12], [0xb8, 0x61]);
    assert_eq!(checksum::ipv4_header(&h[..19]), None);
}

#[test]
fn parse_errors_say_what_and_where() {
    let good = with_tcp_checksum(LINUX_SYN_V4, 36, 0x9062);
    let cases: Vec<(Vec<u8>, PacketError, &str)> = vec![
        (
            vec![],
            PacketError::Truncated { needed: 1, len: 0 },
            "the buffer holds 0 bytes, the IP header needs 1",
        ),
        (
            good[..12].to_vec(),
            PacketError::Truncated {
                needed: 20,
                len: 12,
            },
            "holds 12 bytes, the IP header needs 20",
        ),
        (
            {
                let mut p = good.to_vec();
                p[0] = 0x55;
                p
            },
            PacketError::Version { version: 5 },
            "IP version 5 at offset 0",
        ),
        (
            {
                let mut p = good.to_vec();
                p[0] = 0x43;
                p
            },
            PacketError::Ipv4HeaderLen { ihl: 3 },
            "IPv4 header length 3 words at offset 0",
        ),
        (
            {
                let mut p = good.to_vec();
                p[3] = 16;
                p
            },
            PacketError::Ipv4TotalLen {
                total_len: 16,
                header_len: 20,
            },
            "total length 16 at offset 2",
        ),
        (
            good[..59].to_vec(),
            PacketError::LengthOverrun {
                ip_len: 60,
                len: 59,
            },
            "says 60 bytes, the buffer holds 59",
        ),
        (
            {
                let mut p = good.to_vec();
                p[6] = 0x00;
                p[7] = 0xb9; // offset 185 words
                p
            },
            PacketError::Fragment {
                offset: 1480,
                more: false,
            },
            "offset 1480 bytes",
        ),
        (
            {
                let mut p = good.to_vec();
                p[9] = 17;
                p
            },
            PacketError::NotTcp {
                protocol: 17,
                offset: 20,
            },
            "protocol 17 at offset 20",
        ),
        (
            {
                let mut p = good.to_vec();
                p[3] = 39; // 19 bytes of TCP
                p
            },
            PacketError::Tcp {
                offset: 20,
                error: HeaderError::Truncated { len: 19 },
            },
            "TCP header at offset 20: segment of 19 bytes",
        ),
        (
            {
                let mut p = good.to_vec();
                p[32] = 0xb0; // data offset 11: 44 bytes, 40 there
                p
            },
            PacketError::Tcp {
                offset: 20,
                error: HeaderError::DataOffsetOverrun {
                    data_offset: 11,
                    len: 40,
                },
            },
            "data offset 11 words",
        ),
    ];
    for (bytes, err, text) in cases {
        assert_eq!(PacketRepr::parse(&bytes), Err(err), "{bytes:02x?}");
        let shown = err.to_string();
        assert!(shown.contains(text), "{shown:?} lacks {text:?}");
    }
}

#[test]
fn checksum_errors_come_from_parse_verified_only() {
    let good = with_tcp_checksum(LINUX_SYN_V4, 36, 0x9062);
    let mut bad = good;
    bad[11] ^= 0xff;
    let e = PacketRepr::parse_verified(&bad).unwrap_err();
    assert_eq!(
        e,
        PacketError::Ipv4Checksum {
            stored: 0x08e1,
            computed: 0x081e
        }
    );
    assert_eq!(
        e.to_string(),
        "IPv4 header checksum 0x08e1 at offset 10, correct is 0x081e"
    );
    assert!(PacketRepr::parse(&bad).is_ok());
    assert_eq!(
        PacketRepr::parse_verified(&LINUX_SYN_V4)
            .unwrap_err()
            .to_string(),
        "TCP checksum 0x8f57 at offset 36, correct is 0x9062"
    );
}

/// IPv6: an extension header running past the payload, and a chain
/// that ends in another protocol.
#[test]
fn ipv6_parse_errors_say_what_and_where() {
    let v6 = with_tcp_checksum(LINUX_SYN_V6, 56, 0x9a56);
    let mut p = v6;
    p[6] = 60; // destination options where TCP is: length byte 0x42, 536 bytes
    assert_eq!(
        PacketRepr::parse(&p),
        Err(PacketError::ExtensionOverrun {
            header: 60,
            offset: 40
        })
    );
    p[41] = 0; // 8 bytes; next header 0x99 = 153
    assert_eq!(
        PacketRepr::parse(&p),
        Err(PacketError::NotTcp {
            protocol: 0x99,
            offset: 48
        })
    );
    let mut short = v6;
    short[5] = 19;
    assert_eq!(
        PacketRepr::parse(&short),
        Err(PacketError::Tcp {
            offset: 40,
            error: HeaderError::Truncated { len: 19 }
        })
    );
    assert_eq!(
        PacketRepr::parse(&v6[..39]),
        Err(PacketError::Truncated {
            needed: 40,
            len: 39
        })
    );
}

#[test]
fn emit_errors_say_what_and_write_nothing() {
    let syn = PacketRepr::parse(&LINUX_SYN_V4).unwrap();
    let five = [1u8; 5];
    let forty_four = [1u8; 44];
    let v6 = Ipv6Repr::tcp(Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST);
    let cases: Vec<(PacketRepr, EmitError, &str)> = vec![
        (
            PacketRepr {
                tcp: TcpRepr {
                    options: &five,
                    ..syn.tcp
                },
                ..syn
            },
            EmitError::TcpOptionsLen { len: 5 },
            "TCP option block of 5 bytes (must be a multiple of 4, at most 40)",
        ),
        (
            PacketRepr {
                ip: IpRepr::V4(Ipv4Repr {
                    options: &forty_four,
                    ..Ipv4Repr::tcp(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST)
                }),
                ..syn
            },
            EmitError::Ipv4OptionsLen { len: 44 },
            "IPv4 options of 44 bytes",
        ),
        (
            PacketRepr {
                ip: IpRepr::V6(Ipv6Repr {
                    flow_label: 0x12_3456,
                    ..v6
                }),
                ..syn
            },
            EmitError::FlowLabel {
                flow_label: 0x12_3456,
            },
            "flow label 0x123456 does not fit 20 bits",
        ),
        (
            PacketRepr {
                ip: IpRepr::V6(Ipv6Repr {
                    next_header: 0,
                    extension_headers: &[6, 1, 0, 0, 0, 0, 0, 0],
                    ..v6
                }),
                ..syn
            },
            EmitError::ExtensionChain { offset: 0, len: 8 },
            "IPv6 extension headers of 8 bytes: the chain stops at offset 0",
        ),
        (
            PacketRepr {
                ip: IpRepr::V6(Ipv6Repr {
                    next_header: 17,
                    ..v6
                }),
                ..syn
            },
            EmitError::NotTcp { protocol: 17 },
            "protocol 17, not TCP",
        ),
    ];
    for (repr, err, text) in cases {
        let mut buf = [0x5au8; 200];
        assert_eq!(repr.emit(&mut buf), Err(err));
        assert_eq!(buf, [0x5a; 200], "nothing written for {err:?}");
        let shown = err.to_string();
        assert!(shown.contains(text), "{shown:?} lacks {text:?}");
    }
    let mut small = [0u8; 59];
    assert_eq!(
        syn.emit(&mut small),
        Err(EmitError::BufferTooSmall {
            needed: 60,
            available: 59
        })
    );
    assert_eq!(small, [0; 59]);
}

#[test]
fn tcp_repr_alone_with_either_pseudo_header() {
    let seg = &with_tcp_checksum(LINUX_SYN_V4, 36, 0x9062)[20..];
    let t = TcpRepr::parse(seg).unwrap();
    let ph = PseudoHeader::V4 {
        src: Ipv4Addr::new(198, 18, 1, 2),
        dst: Ipv4Addr::new(198, 18, 2, 2),
    };
    assert!(ph.verify(seg));
    let mut buf = [0u8; 40];
    assert_eq!(t.emit(&mut buf, Some(ph)), Ok(40));
    assert_eq!(&buf[..], seg);
    assert_eq!(t.emit(&mut buf, None), Ok(40));
    assert_eq!(buf[16..18], [0, 0], "no pseudo-header: checksum left zero");
    assert_eq!(
        TcpRepr::parse(&seg[..30]),
        Err(HeaderError::DataOffsetOverrun {
            data_offset: 10,
            len: 30
        })
    );
    let r = t.linux_repr(tcp_options::ParseContext::default());
    assert_eq!((r.mss, r.window_scale), (Some(1460), Some(10)));
    assert_eq!(t.options_linux().count(), 5);
}

// ---- properties ----

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/regressions/repr.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// Owned bytes behind a generated repr.
#[derive(Debug, Clone)]
struct Gen {
    v6: bool,
    a4: (Ipv4Addr, Ipv4Addr),
    a6: (Ipv6Addr, Ipv6Addr),
    tos: u8,
    ident: u16,
    df: bool,
    ttl: u8,
    flow_label: u32,
    ip_options: Vec<u8>,
    /// First next header and the chain's bytes.
    ext: (u8, Vec<u8>),
    ports: (u16, u16),
    seq: u32,
    ack: u32,
    flags: u16,
    window: u16,
    urgent: u16,
    tcp_options: Vec<u8>,
    payload: Vec<u8>,
}

impl Gen {
    fn repr(&self) -> PacketRepr<'_> {
        let ip = if self.v6 {
            IpRepr::V6(Ipv6Repr {
                src: self.a6.0,
                dst: self.a6.1,
                traffic_class: self.tos,
                flow_label: self.flow_label,
                hop_limit: self.ttl,
                next_header: self.ext.0,
                extension_headers: &self.ext.1,
            })
        } else {
            IpRepr::V4(Ipv4Repr {
                src: self.a4.0,
                dst: self.a4.1,
                tos: self.tos,
                identification: self.ident,
                dont_fragment: self.df,
                ttl: self.ttl,
                protocol: PROTOCOL_TCP,
                options: &self.ip_options,
            })
        };
        PacketRepr {
            ip,
            tcp: TcpRepr {
                src_port: self.ports.0,
                dst_port: self.ports.1,
                seq_number: self.seq,
                ack_number: self.ack,
                flags: Flags::from_bits_truncate(self.flags),
                window: self.window,
                urgent_pointer: self.urgent,
                options: &self.tcp_options,
                payload: &self.payload,
            },
        }
    }
}

/// Whole words of arbitrary bytes, at most 40.
fn words() -> impl Strategy<Value = Vec<u8>> {
    (0usize..=10).prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n * 4))
}

/// A TCP option block: arbitrary words or what the builder writes.
fn tcp_options() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        words(),
        (
            proptest::option::of(any::<u16>()),
            any::<bool>(),
            proptest::option::of((any::<u32>(), any::<u32>())),
            proptest::option::of(0u8..=14),
        )
            .prop_map(|(mss, sack, ts, ws)| {
                let b = OptionsBuilder {
                    mss,
                    sack_permitted: sack,
                    timestamps: ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                    window_scale: ws,
                    ..OptionsBuilder::new()
                };
                b.build().unwrap().to_vec()
            }),
    ]
}

/// One IPv6 extension header of type `kind` whose next header is `next`.
fn ext_header(kind: u8, next: u8, n: u8, fill: &[u8]) -> Vec<u8> {
    let len = match kind {
        44 => 8,
        51 => (usize::from(n) + 2) * 4,
        _ => (usize::from(n) + 1) * 8,
    };
    let mut h = vec![next, n];
    h.extend(fill.iter().cycle().take(len - 2));
    if kind == 44 {
        // Fragment offset 0 and M clear (an atomic fragment, RFC 6946);
        // the two reserved bits are whatever was drawn.
        h[1] = fill.first().copied().unwrap_or(0);
        h[2] = 0;
        h[3] &= 0x06;
    }
    h
}

/// A whole chain of 0 to 3 extension headers ending in TCP.
fn ext_chain() -> impl Strategy<Value = (u8, Vec<u8>)> {
    proptest::collection::vec(
        (
            prop_oneof![Just(0u8), Just(43), Just(44), Just(51), Just(60)],
            1u8..4,
            proptest::collection::vec(any::<u8>(), 1..8),
        ),
        0..=3,
    )
    .prop_map(|hs| {
        let mut bytes = Vec::new();
        for (i, (kind, n, fill)) in hs.iter().enumerate() {
            let next = hs.get(i + 1).map_or(PROTOCOL_TCP, |h| h.0);
            bytes.extend(ext_header(*kind, next, *n, fill));
        }
        (hs.first().map_or(PROTOCOL_TCP, |h| h.0), bytes)
    })
}

prop_compose! {
    fn gen()(
        v6 in any::<bool>(),
        a4 in any::<([u8; 4], [u8; 4])>(),
        a6 in any::<([u8; 16], [u8; 16])>(),
        (tos, ident, df, ttl) in any::<(u8, u16, bool, u8)>(),
        flow_label in 0u32..=0xf_ffff,
        ip_options in words(),
        ext in ext_chain(),
        (ports, seq, ack, flags) in any::<((u16, u16), u32, u32, u16)>(),
        (window, urgent) in any::<(u16, u16)>(),
        tcp_options in tcp_options(),
        payload in proptest::collection::vec(any::<u8>(), 0..100),
    ) -> Gen {
        Gen {
            v6,
            a4: (a4.0.into(), a4.1.into()),
            a6: (a6.0.into(), a6.1.into()),
            tos, ident, df, ttl, flow_label, ip_options, ext,
            ports, seq, ack, flags, window, urgent, tcp_options, payload,
        }
    }
}

/// Emit a repr into a fresh buffer.
fn emit(r: &PacketRepr) -> Vec<u8> {
    let mut buf = vec![0u8; r.buffer_len()];
    let n = r.emit(&mut buf).expect("emits");
    assert_eq!(n, buf.len());
    buf
}

/// `out` (what emitting the repr parsed from `input` wrote) equals the
/// start of `input` except where a repr keeps nothing: the two checksums,
/// the IPv4 evil bit and the TCP reserved bits.
fn same_but_ignored(input: &[u8], out: &[u8], r: &PacketRepr) -> Result<(), TestCaseError> {
    prop_assert!(input.len() >= out.len());
    let tcp = r.ip.header_len();
    let mut a = input[..out.len()].to_vec();
    let mut b = out.to_vec();
    for v in [&mut a, &mut b] {
        if let IpRepr::V4(_) = r.ip {
            v[6] &= 0x7f;
            v[10] = 0;
            v[11] = 0;
        }
        v[tcp + 12] &= 0xf1;
        v[tcp + 16] = 0;
        v[tcp + 17] = 0;
    }
    prop_assert_eq!(a, b);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Any repr, written then read (checksums verified), is the same repr;
    /// the TCP header is where netfilter's walk finds it.
    #[test]
    fn repr_emit_parse_round_trips(g in gen()) {
        let r = g.repr();
        let bytes = emit(&r);
        prop_assert_eq!(bytes.len(), r.buffer_len());
        prop_assert_eq!(PacketRepr::parse_verified(&bytes), Ok(r));
        let at = netfilter::locate(&bytes).unwrap();
        prop_assert_eq!(at.tcp_offset, r.ip.header_len());
        prop_assert_eq!(at.len, bytes.len());
        // Written again from what was read: the same bytes.
        let again = emit(&PacketRepr::parse(&bytes).unwrap());
        prop_assert_eq!(&again, &bytes);
        // The TCP part alone.
        let seg = &bytes[r.ip.header_len()..];
        prop_assert_eq!(TcpRepr::parse(seg), Ok(r.tcp));
        prop_assert!(r.ip.pseudo_header().verify(seg));
    }

    /// Arbitrary bytes: no panic anywhere, and whatever reads writes back.
    #[test]
    fn arbitrary_bytes_never_panic(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..120),
        version in prop_oneof![Just(0x45u8), Just(0x46), Just(0x60), any::<u8>()],
    ) {
        if let Some(b) = bytes.first_mut() {
            *b = version;
        }
        let _ = PacketRepr::parse_verified(&bytes);
        if let Ok((ip, payload)) = IpRepr::parse(&bytes) {
            prop_assert!(ip.header_len() + payload.len() <= bytes.len());
            let _ = ip.protocol();
        }
        if let Ok(p) = PacketRepr::parse(&bytes) {
            let out = emit(&p);
            same_but_ignored(&bytes, &out, &p)?;
        }
        if let Ok(t) = TcpRepr::parse(&bytes) {
            let mut buf = vec![0u8; t.buffer_len()];
            prop_assert_eq!(t.emit(&mut buf, None), Ok(bytes.len()));
            prop_assert_eq!(TcpRepr::parse(&buf), Ok(t));
        }
    }

    /// A repr with fields emit must refuse (bad option lengths, a long
    /// flow label, a chain that does not end in TCP, a short buffer):
    /// an error writes nothing; a success reads back.
    #[test]
    fn refused_emits_write_nothing(
        g in gen(),
        tcp_opts in proptest::collection::vec(any::<u8>(), 0..48),
        ip_opts in proptest::collection::vec(any::<u8>(), 0..48),
        ext in proptest::collection::vec(any::<u8>(), 0..24),
        (next_header, protocol, flow_label) in any::<(u8, u8, u32)>(),
        which in 0u8..6,
        room in 0usize..200,
    ) {
        let mut r = g.repr();
        match which {
            0 => r.tcp.options = &tcp_opts,
            1 => if let IpRepr::V4(ip) = &mut r.ip { ip.options = &ip_opts },
            2 => if let IpRepr::V6(ip) = &mut r.ip {
                ip.next_header = next_header;
                ip.extension_headers = &ext;
            },
            3 => if let IpRepr::V4(ip) = &mut r.ip { ip.protocol = protocol },
            4 => if let IpRepr::V6(ip) = &mut r.ip { ip.flow_label = flow_label },
            _ => {}
        }
        let mut buf = vec![0xa5u8; room];
        match r.emit(&mut buf) {
            Ok(n) => {
                prop_assert_eq!(n, r.buffer_len());
                prop_assert_eq!(PacketRepr::parse_verified(&buf[..n]), Ok(r));
            }
            Err(e) => {
                prop_assert!(buf.iter().all(|b| *b == 0xa5), "{:?} wrote", e);
                if let EmitError::BufferTooSmall { needed, available } = e {
                    prop_assert_eq!((needed, available), (r.buffer_len(), room));
                }
            }
        }
    }
}

#[test]
fn ipv4_constants() {
    assert_eq!(IPV4_HEADER_LEN, 20);
    assert_eq!(tcp_options::ip::IPV6_HEADER_LEN, 40);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..config() })]

    /// A written packet with bits of its headers flipped: reading never
    /// panics, and whatever reads is written back as it was but for the
    /// checksums and ignored bits, and reads again as the same repr.
    #[test]
    fn damaged_packets_read_and_write_back(
        g in gen(),
        flips in proptest::collection::vec((any::<usize>(), 0u8..8), 0..4),
        cut in any::<usize>(),
        cut_it in any::<bool>(),
        extra in proptest::collection::vec(any::<u8>(), 0..4),
    ) {
        let r = g.repr();
        let mut bytes = emit(&r);
        // The headers are where the reading is; the payload is copied.
        let headers = r.ip.header_len() + r.tcp.header_len();
        for (at, bit) in flips {
            bytes[at % headers] ^= 1 << bit;
        }
        if cut_it {
            bytes.truncate(cut % (bytes.len() + 1));
        }
        bytes.extend(extra);
        let _ = PacketRepr::parse_verified(&bytes);
        let _ = IpRepr::parse(&bytes);
        if let Ok(p) = PacketRepr::parse(&bytes) {
            let out = emit(&p);
            same_but_ignored(&bytes, &out, &p)?;
            prop_assert_eq!(PacketRepr::parse_verified(&out), Ok(p));
        }
    }
}
