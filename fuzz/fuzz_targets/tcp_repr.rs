//! Arbitrary bytes through the representations: never a panic; whatever
//! `PacketRepr::parse` reads is emitted, verifies, reads back as the same
//! repr, equals the input but for the checksums and the bits a repr does
//! not keep (IPv4 evil bit, TCP reserved bits), and has its TCP header
//! where `netfilter::locate` finds it. The same for `TcpRepr` alone and
//! for `IpRepr` alone.
#![no_main]

use std::net::Ipv6Addr;

use libfuzzer_sys::fuzz_target;
use tcp_options::checksum::PseudoHeader;
use tcp_options::{netfilter, IpRepr, PacketRepr, TcpRepr};

/// Clear what a repr does not keep: checksum fields, the IPv4 evil bit
/// and the TCP reserved bits (`ip` None for a bare TCP segment).
fn canonical(bytes: &[u8], ip: Option<&IpRepr>) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let tcp = ip.map_or(0, IpRepr::header_len);
    if let Some(IpRepr::V4(_)) = ip {
        v[6] &= 0x7f;
        v[10] = 0;
        v[11] = 0;
    }
    v[tcp + 12] &= 0xf1;
    v[tcp + 16] = 0;
    v[tcp + 17] = 0;
    v
}

fuzz_target!(|data: &[u8]| {
    let verified = PacketRepr::parse_verified(data);
    match PacketRepr::parse(data) {
        Ok(p) => {
            let mut buf = vec![0u8; p.buffer_len()];
            let n = p.emit(&mut buf).expect("a parsed packet is emitted");
            assert_eq!(n, buf.len());
            assert!(n <= data.len());
            assert_eq!(PacketRepr::parse_verified(&buf), Ok(p));
            assert_eq!(
                canonical(&buf, Some(&p.ip)),
                canonical(&data[..n], Some(&p.ip))
            );
            if verified.is_ok() && canonical_bits(&data[..n], &p.ip) == data[..n] {
                // Correct checksums, no ignored bit set: the same bytes.
                assert_eq!(buf[..], data[..n]);
            }
            let at = netfilter::locate(data).expect("netfilter finds the TCP header");
            assert_eq!((at.tcp_offset, at.len), (p.ip.header_len(), n));
        }
        Err(e) => assert_eq!(verified, Err(e)),
    }

    if let Ok(t) = TcpRepr::parse(data) {
        let mut buf = vec![0u8; t.buffer_len()];
        assert_eq!(t.emit(&mut buf, None), Ok(data.len()));
        assert_eq!(TcpRepr::parse(&buf), Ok(t));
        assert_eq!(canonical(&buf, None), canonical(data, None));
        let ph = PseudoHeader::V6 {
            src: Ipv6Addr::LOCALHOST,
            dst: Ipv6Addr::UNSPECIFIED,
        };
        assert_eq!(t.emit(&mut buf, Some(ph)), Ok(data.len()));
        assert!(ph.verify(&buf));
    }

    if let Ok((ip, payload)) = IpRepr::parse(data) {
        let h = ip.header_len();
        let mut buf = vec![0u8; h + payload.len()];
        assert_eq!(ip.emit(&mut buf, payload.len()), Ok(h));
        buf[h..].copy_from_slice(payload);
        assert_eq!(IpRepr::parse(&buf), Ok((ip, payload)));
    }
});

/// `bytes` with only the ignored bits cleared (checksums kept).
fn canonical_bits(bytes: &[u8], ip: &IpRepr) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let tcp = ip.header_len();
    if let IpRepr::V4(_) = ip {
        v[6] &= 0x7f;
    }
    v[tcp + 12] &= 0xf1;
    v
}
