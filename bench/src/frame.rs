//! One Ethernet frame of a connection: the link header written here, the
//! IP packet and its TCP segment by [`PacketRepr::emit`].
//!
//! IPv4 packets carry the connection's DS field, the next identification
//! (the connection's counter plus one, as the Python generator did), DF and
//! TTL 64; IPv6 packets the DS field as traffic class, flow label 0 and hop
//! limit 64. The payload is [`PAYLOAD`] from offset `seq mod 16384`, so a
//! retransmission carries the bytes of the original.

use capture::link::{ETHERNET_HEADER_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use tcp_options::{rewrite, Flags, IpRepr, Ipv4Repr, Ipv6Repr, PacketRepr, TcpRepr};

use crate::conn::Connection;
use crate::error::GenError;

/// Longest frame the traffic model makes, with room to spare: Ethernet,
/// IPv6, TCP with 40 bytes of options and an MSS of payload.
pub const MAX_FRAME_LEN: usize = 2048;

/// Payload pattern: byte `i` is `(i * 131 + 7) mod 256`.
pub static PAYLOAD: [u8; 65536] = payload_pattern();

const fn payload_pattern() -> [u8; 65536] {
    let mut p = [0u8; 65536];
    let mut i = 0;
    while i < p.len() {
        p[i] = (i * 131 + 7) as u8;
        i += 1;
    }
    p
}

/// The part of the sequence space the payload offset is taken from.
const PAYLOAD_OFFSET_MASK: u32 = 0x3fff;

/// Write a 14-byte Ethernet II header (destination MAC, source MAC,
/// EtherType) to the start of `buf`; returns its length.
///
/// ```
/// let mut b = [0u8; 14];
/// let n = tcp_perf_bench::frame::ethernet(&mut b, [2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x0800);
/// assert_eq!((n, &b[12..]), (14, &[8u8, 0][..]));
/// ```
pub fn ethernet(buf: &mut [u8], dst: [u8; 6], src: [u8; 6], ethertype: u16) -> usize {
    const DST: core::ops::Range<usize> = 0..6;
    const SRC: core::ops::Range<usize> = 6..12;
    const ETHERTYPE: core::ops::Range<usize> = 12..14;
    buf[DST].copy_from_slice(&dst);
    buf[SRC].copy_from_slice(&src);
    buf[ETHERTYPE].copy_from_slice(&ethertype.to_be_bytes());
    ETHERNET_HEADER_LEN
}

/// One segment of a connection, as the traffic model describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Sent by the client (else by the server).
    pub from_client: bool,
    /// Control bits.
    pub flags: Flags,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Window field.
    pub window: u16,
    /// The option block.
    pub options: &'a [u8],
    /// Payload bytes (taken from [`PAYLOAD`]).
    pub payload_len: usize,
    /// Strip the Window Scale option after emitting, with
    /// [`tcp_options::rewrite::remove_window_scale`] (NOPs in its place,
    /// the checksum updated): a middlebox's edit.
    pub strip_window_scale: bool,
}

impl<'a> Segment<'a> {
    /// A segment without payload and without the strip.
    pub fn new(
        from_client: bool,
        flags: Flags,
        seq: u32,
        ack: u32,
        window: u16,
        options: &'a [u8],
    ) -> Self {
        Segment {
            from_client,
            flags,
            seq,
            ack,
            window,
            options,
            payload_len: 0,
            strip_window_scale: false,
        }
    }
}

/// Write `seg` of connection `c` as an Ethernet frame to the start of
/// `buf` (at least [`MAX_FRAME_LEN`] bytes); returns the frame's length.
/// An IPv4 packet takes the connection's next identification.
pub fn build(c: &mut Connection, seg: &Segment<'_>, buf: &mut [u8]) -> Result<usize, GenError> {
    let (src, dst) = if seg.from_client {
        (c.client, c.server)
    } else {
        (c.server, c.client)
    };
    // Ipv4Repr::tcp sets DF and TTL 64, Ipv6Repr::tcp hop limit 64 and
    // flow label 0.
    let (ip, ethertype) = match IpRepr::tcp(src.addr, dst.addr) {
        Some(IpRepr::V4(r)) => {
            c.ip_id = c.ip_id.wrapping_add(1);
            let ip = Ipv4Repr {
                tos: c.ds_field,
                identification: c.ip_id,
                ..r
            };
            (IpRepr::V4(ip), ETHERTYPE_IPV4)
        }
        Some(IpRepr::V6(r)) => {
            let ip = Ipv6Repr {
                traffic_class: c.ds_field,
                ..r
            };
            (IpRepr::V6(ip), ETHERTYPE_IPV6)
        }
        None => {
            return Err(GenError::MixedFamilies {
                src: src.addr,
                dst: dst.addr,
            })
        }
    };
    let at = (seg.seq & PAYLOAD_OFFSET_MASK) as usize;
    let packet = PacketRepr {
        ip,
        tcp: TcpRepr {
            seq_number: seg.seq,
            ack_number: seg.ack,
            flags: seg.flags,
            window: seg.window,
            options: seg.options,
            payload: &PAYLOAD[at..at + seg.payload_len],
            ..TcpRepr::new(src.port, dst.port)
        },
    };
    let link = ethernet(buf, dst.mac, src.mac, ethertype);
    let n = packet.emit(&mut buf[link..])?;
    if seg.strip_window_scale {
        let tcp_at = link + packet.ip.header_len();
        rewrite::remove_window_scale(&mut buf[tcp_at..link + n])?;
    }
    Ok(link + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::Layout;

    #[test]
    fn a_stripped_window_scale_leaves_nops_and_a_valid_checksum() {
        let mut c = Connection::draw(&mut crate::rng(3), 5);
        c.layout = Layout::LinuxNoWindowScale;
        let opts = c.syn_options(1, 0).unwrap();
        let seg = Segment {
            strip_window_scale: true,
            ..Segment::new(true, Flags::SYN, 100, 0, 64800, opts.as_slice())
        };
        let mut buf = [0u8; MAX_FRAME_LEN];
        let n = build(&mut c, &seg, &mut buf).unwrap();
        let p = PacketRepr::parse_verified(&buf[ETHERNET_HEADER_LEN..n]).unwrap();
        assert_eq!(&p.tcp.options[..16], &opts.as_slice()[..16]);
        assert_eq!(&p.tcp.options[16..], [1, 1, 1, 1]);
        assert_eq!(p.ip.ds_field(), c.ds_field);
        assert_eq!(&buf[..6], &c.server.mac);
        assert_eq!(&buf[6..12], &c.client.mac);
    }

    #[test]
    fn ipv4_identification_counts_up_and_payload_follows_seq() {
        let mut c = Connection::draw(&mut crate::rng(1), 0);
        c.client.addr = "198.18.0.0".parse().unwrap();
        c.server.addr = "198.19.0.1".parse().unwrap();
        let id = c.ip_id;
        let seg = Segment {
            payload_len: 3,
            ..Segment::new(false, Flags::ACK, 0x1_0001, 1, 502, &[])
        };
        let mut buf = [0u8; MAX_FRAME_LEN];
        let n = build(&mut c, &seg, &mut buf).unwrap();
        let p = PacketRepr::parse_verified(&buf[ETHERNET_HEADER_LEN..n]).unwrap();
        let IpRepr::V4(ip) = p.ip else { panic!("IPv4") };
        assert_eq!(ip.identification, id.wrapping_add(1));
        assert!(ip.dont_fragment);
        assert_eq!(p.tcp.payload, &PAYLOAD[1..4]);
        assert_eq!(p.tcp.payload, [138, 13, 144]);
        assert_eq!(&buf[12..14], &[8, 0]);
        c.client.addr = "2001:db8::1".parse().unwrap();
        assert!(matches!(
            build(&mut c, &seg, &mut buf),
            Err(GenError::MixedFamilies { .. })
        ));
    }
}
