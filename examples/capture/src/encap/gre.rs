//! GRE: Generic Routing Encapsulation.
//!
//! Version 0 (RFC 2784, with the Key and Sequence Number extensions of RFC
//! 2890): a 4-byte base header of flags and a protocol type (an EtherType),
//! then, in this order and each only when its flag is set, a checksum and
//! reserved word (C), a 32-bit key (K) and a 32-bit sequence number (S).
//! The routing flag (R) and source routing entries of RFC 1701 are refused
//! ([`Unsupported::GreRouting`]).
//!
//! Version 1 is PPTP's enhanced GRE (RFC 2637 section 4.1): the key flag is
//! always set and the key field holds a 16-bit payload length and the 16-bit
//! call ID; an acknowledgment number follows the sequence number when the A
//! flag (first bit of the second byte) is set. It carries PPP.
//!
//! NVGRE (RFC 7637) is GRE version 0 with the key flag set, no checksum nor
//! sequence number, and protocol 0x6558 (Transparent Ethernet Bridging);
//! the key is the 24-bit Virtual Subnet ID and an 8-bit FlowID. A Linux
//! `gretap` tunnel with a key and no sequence numbers looks the same on the
//! wire, and is reported as NVGRE.
//!
//! The payload by protocol type: IPv4 (0x0800), IPv6 (0x86dd), Ethernet
//! (0x6558), ERSPAN (0x88be type I or II, 0x22eb type III; see
//! [`super::erspan`]), MPLS (0x8847, 0x8848), PPP (0x880b).

use super::{be16, be32, need, Parsed, Payload, Skip, Unsupported};

/// Length of the base header: flags, version, protocol type.
pub const BASE_LEN: usize = 4;
/// Offset of the protocol type.
const PROTOCOL: usize = 2;
/// First flag byte: checksum present.
const FLAG_C: u8 = 0x80;
/// First flag byte: routing present (RFC 1701).
const FLAG_R: u8 = 0x40;
/// First flag byte: key present.
const FLAG_K: u8 = 0x20;
/// First flag byte: sequence number present.
const FLAG_S: u8 = 0x10;
/// Second byte: acknowledgment number present (version 1).
const FLAG_A: u8 = 0x80;
/// Second byte: the version bits.
const VERSION_MASK: u8 = 0x07;
/// Length of each optional field (checksum + reserved, key, sequence, ack).
const FIELD_LEN: usize = 4;

/// Protocol type of IPv4.
pub const PROTO_IPV4: u16 = 0x0800;
/// Protocol type of IPv6.
pub const PROTO_IPV6: u16 = 0x86dd;
/// Protocol type of Transparent Ethernet Bridging (Ethernet frames, NVGRE).
pub const PROTO_TEB: u16 = 0x6558;
/// Protocol type of ERSPAN type I and II.
pub const PROTO_ERSPAN_II: u16 = 0x88be;
/// Protocol type of ERSPAN type III.
pub const PROTO_ERSPAN_III: u16 = 0x22eb;
/// Protocol type of MPLS unicast.
pub const PROTO_MPLS: u16 = 0x8847;
/// Protocol type of MPLS multicast.
pub const PROTO_MPLS_MULTICAST: u16 = 0x8848;
/// Protocol type of PPP (PPTP).
pub const PROTO_PPP: u16 = 0x880b;

/// A decoded GRE header (either version).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gre {
    /// 0 (RFC 2784) or 1 (PPTP).
    pub version: u8,
    /// The protocol type of the payload.
    pub protocol: u16,
    /// Whether a checksum field is present.
    pub checksum_present: bool,
    /// The key (version 0, K flag): for NVGRE, VSID << 8 | FlowID.
    pub key: Option<u32>,
    /// The sequence number (S flag).
    pub seq: Option<u32>,
    /// The acknowledgment number (version 1, A flag).
    pub ack: Option<u32>,
    /// Version 1: the call ID from the key field.
    pub call_id: Option<u16>,
}

impl Gre {
    /// True when this header is NVGRE's (RFC 7637): version 0, key, no
    /// checksum nor sequence number, Transparent Ethernet Bridging.
    pub fn is_nvgre(&self) -> bool {
        self.version == 0
            && self.key.is_some()
            && self.seq.is_none()
            && !self.checksum_present
            && self.protocol == PROTO_TEB
    }

    /// NVGRE's Virtual Subnet ID (the key's upper 24 bits).
    pub fn vsid(&self) -> Option<u32> {
        self.key.map(|k| k >> 8)
    }

    /// NVGRE's FlowID (the key's lower 8 bits).
    pub fn flow_id(&self) -> Option<u8> {
        self.key.map(|k| (k & 0xff) as u8)
    }

    /// Decodes the GRE header at `at` in `data`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Gre>, Skip> {
        need("GRE", data, at, BASE_LEN)?;
        let flags = data[at];
        let second = data[at + 1];
        let version = second & VERSION_MASK;
        let protocol = be16(data, at + PROTOCOL);
        if flags & FLAG_R != 0 {
            return Err(Skip::Unsupported(Unsupported::GreRouting));
        }
        let checksum_present = flags & FLAG_C != 0;
        let mut gre = Gre {
            version,
            protocol,
            checksum_present,
            key: None,
            seq: None,
            ack: None,
            call_id: None,
        };
        let mut len = BASE_LEN;
        let field = |len: &mut usize| -> Result<u32, Skip> {
            need("GRE", data, at, *len + FIELD_LEN)?;
            let v = be32(data, at + *len);
            *len += FIELD_LEN;
            Ok(v)
        };
        match version {
            0 => {
                if checksum_present {
                    field(&mut len)?;
                }
                if flags & FLAG_K != 0 {
                    gre.key = Some(field(&mut len)?);
                }
                if flags & FLAG_S != 0 {
                    gre.seq = Some(field(&mut len)?);
                }
            }
            1 => {
                if flags & FLAG_K != 0 {
                    gre.call_id = Some((field(&mut len)? & 0xffff) as u16);
                }
                if flags & FLAG_S != 0 {
                    gre.seq = Some(field(&mut len)?);
                }
                if second & FLAG_A != 0 {
                    gre.ack = Some(field(&mut len)?);
                }
            }
            other => return Err(Skip::Unsupported(Unsupported::GreVersion(other))),
        }
        let payload = match protocol {
            PROTO_IPV4 => Payload::Ipv4,
            PROTO_IPV6 => Payload::Ipv6,
            PROTO_TEB => Payload::Ethernet,
            PROTO_MPLS | PROTO_MPLS_MULTICAST => Payload::Mpls,
            PROTO_PPP => Payload::Ppp,
            // The ERSPAN header is decoded by the caller (super::erspan).
            PROTO_ERSPAN_II | PROTO_ERSPAN_III => Payload::EtherType(protocol),
            other => return Err(Skip::Unsupported(Unsupported::GreProtocol(other))),
        };
        Ok(Parsed {
            header: gre,
            payload_at: at + len,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_and_sequence_in_order() {
        // C, K, S set: checksum word, key 0x01020304, sequence 7.
        let h = [
            0xb0, 0, 0x08, 0, 0xab, 0xcd, 0, 0, 1, 2, 3, 4, 0, 0, 0, 7, 0x45,
        ];
        let p = Gre::parse(&h, 0).unwrap();
        assert_eq!(p.header.key, Some(0x0102_0304));
        assert_eq!(p.header.seq, Some(7));
        assert_eq!(p.payload_at, 16);
        assert_eq!(p.payload, Payload::Ipv4);
        assert!(!p.header.is_nvgre());
    }

    #[test]
    fn nvgre_vsid_and_flow_id() {
        let h = [0x20, 0, 0x65, 0x58, 0, 0x10, 0x00, 0x2a];
        let p = Gre::parse(&h, 0).unwrap();
        assert!(p.header.is_nvgre());
        assert_eq!(p.header.vsid(), Some(0x1000));
        assert_eq!(p.header.flow_id(), Some(0x2a));
        assert_eq!(p.payload, Payload::Ethernet);
    }

    #[test]
    fn pptp_call_id_seq_ack() {
        let h = [
            0x30, 0x81, 0x88, 0x0b, 0, 40, 0x12, 0x34, 0, 0, 0, 9, 0, 0, 0, 8,
        ];
        let p = Gre::parse(&h, 0).unwrap();
        assert_eq!(p.header.version, 1);
        assert_eq!(p.header.call_id, Some(0x1234));
        assert_eq!((p.header.seq, p.header.ack), (Some(9), Some(8)));
        assert_eq!(p.payload, Payload::Ppp);
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            Gre::parse(&[0x20, 0, 0x08, 0, 1], 0),
            Err(Skip::Decode(_))
        ));
        assert_eq!(
            Gre::parse(&[0x40, 0, 0x08, 0], 0),
            Err(Skip::Unsupported(Unsupported::GreRouting))
        );
        assert_eq!(
            Gre::parse(&[0, 2, 0x08, 0], 0),
            Err(Skip::Unsupported(Unsupported::GreVersion(2)))
        );
        assert_eq!(
            Gre::parse(&[0, 0, 0x12, 0x34], 0),
            Err(Skip::Unsupported(Unsupported::GreProtocol(0x1234)))
        );
    }
}
