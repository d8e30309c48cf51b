//! ERSPAN: Cisco's Encapsulated Remote SPAN, carried in GRE
//! (draft-foschiano-erspan-03).
//!
//! - Type I: GRE protocol 0x88be without a sequence number; no ERSPAN
//!   header, the mirrored Ethernet frame follows GRE directly.
//! - Type II: GRE protocol 0x88be with a sequence number; an 8-byte header:
//!   version (4 bits, 1), VLAN (12), COS (3), encapsulation type (2),
//!   truncated (1), session ID (10), reserved (12), index (20).
//! - Type III: GRE protocol 0x22eb; a 12-byte header: version (4 bits, 2),
//!   VLAN (12), COS (3), BSO (2), truncated (1), session ID (10), timestamp
//!   (32), SGT (16), P (1), frame type (5: 0 Ethernet, 2 IP), hardware ID
//!   (6), direction (1), granularity (2), O (1: an 8-byte platform-specific
//!   subheader follows).

use super::{be16, be32, need, Parsed, Payload, Skip, Unsupported};

/// Length of the type II header.
pub const TYPE_II_LEN: usize = 8;
/// Length of the type III header without its platform subheader.
pub const TYPE_III_LEN: usize = 12;
/// Length of the type III platform-specific subheader.
pub const PLATFORM_SUBHEADER_LEN: usize = 8;
/// The version field of type II.
pub const VERSION_II: u8 = 1;
/// The version field of type III.
pub const VERSION_III: u8 = 2;
/// Offset of the session ID word (COS, encapsulation / BSO, T, session).
const SESSION_WORD: usize = 2;
/// The session ID bits of that word.
const SESSION_MASK: u16 = 0x03ff;
/// The VLAN bits of the first word.
const VLAN_MASK: u16 = 0x0fff;
/// Offset of the type II index word.
const INDEX: usize = 4;
/// The index bits of that word.
const INDEX_MASK: u32 = 0x000f_ffff;
/// Offset of the type III word holding P, FT, HW ID, D, Gra and O.
const III_FLAGS: usize = 10;
/// Frame type bits (FT) of that word, and their shift.
const FT_MASK: u16 = 0x7c00;
/// Shift of the frame type.
const FT_SHIFT: u16 = 10;
/// The O bit: a platform-specific subheader follows.
const FLAG_O: u16 = 0x0001;
/// Frame type of an Ethernet frame.
const FT_ETHERNET: u16 = 0;
/// Frame type of an IP packet.
const FT_IP: u16 = 2;

/// A decoded ERSPAN header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Erspan {
    /// 1, 2 or 3 (type I, II, III).
    pub erspan_type: u8,
    /// The session ID (types II and III).
    pub session: Option<u16>,
    /// The original VLAN (types II and III).
    pub vlan: Option<u16>,
    /// The type II index (port index).
    pub index: Option<u32>,
}

impl Erspan {
    /// Decodes the ERSPAN header at `at`, after a GRE header with protocol
    /// `protocol` and (`has_seq`) a sequence number.
    pub fn parse(
        data: &[u8],
        at: usize,
        protocol: u16,
        has_seq: bool,
    ) -> Result<Parsed<Erspan>, Skip> {
        if protocol == super::gre::PROTO_ERSPAN_II && !has_seq {
            return Ok(Parsed {
                header: Erspan {
                    erspan_type: 1,
                    session: None,
                    vlan: None,
                    index: None,
                },
                payload_at: at,
                payload: Payload::Ethernet,
            });
        }
        need("ERSPAN", data, at, TYPE_II_LEN)?;
        let first = be16(data, at);
        let version = (first >> 12) as u8;
        let session = Some(be16(data, at + SESSION_WORD) & SESSION_MASK);
        let vlan = Some(first & VLAN_MASK);
        match version {
            VERSION_II => Ok(Parsed {
                header: Erspan {
                    erspan_type: 2,
                    session,
                    vlan,
                    index: Some(be32(data, at + INDEX) & INDEX_MASK),
                },
                payload_at: at + TYPE_II_LEN,
                payload: Payload::Ethernet,
            }),
            VERSION_III => {
                need("ERSPAN", data, at, TYPE_III_LEN)?;
                let flags = be16(data, at + III_FLAGS);
                let mut len = TYPE_III_LEN;
                if flags & FLAG_O != 0 {
                    need("ERSPAN", data, at, len + PLATFORM_SUBHEADER_LEN)?;
                    len += PLATFORM_SUBHEADER_LEN;
                }
                let payload = match (flags & FT_MASK) >> FT_SHIFT {
                    FT_ETHERNET => Payload::Ethernet,
                    FT_IP => Payload::Ip,
                    _ => return Err(Skip::Unsupported(Unsupported::ErspanVersion(version))),
                };
                Ok(Parsed {
                    header: Erspan {
                        erspan_type: 3,
                        session,
                        vlan,
                        index: None,
                    },
                    payload_at: at + len,
                    payload,
                })
            }
            other => Err(Skip::Unsupported(Unsupported::ErspanVersion(other))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encap::gre::{PROTO_ERSPAN_II, PROTO_ERSPAN_III};

    #[test]
    fn three_types() {
        let one = Erspan::parse(&[], 0, PROTO_ERSPAN_II, false).unwrap();
        assert_eq!((one.header.erspan_type, one.payload_at), (1, 0));
        let two = [0x10, 0x64, 0x00, 0x05, 0, 0, 0, 3];
        let p = Erspan::parse(&two, 0, PROTO_ERSPAN_II, true).unwrap();
        assert_eq!(p.header.session, Some(5));
        assert_eq!(p.header.vlan, Some(100));
        assert_eq!(p.header.index, Some(3));
        assert_eq!(p.payload_at, 8);
        let mut three = vec![0x20, 0x0a, 0x03, 0xff, 0, 0, 0, 1, 0, 0, 0, 1];
        three.extend_from_slice(&[0; 8]);
        let p = Erspan::parse(&three, 0, PROTO_ERSPAN_III, true).unwrap();
        assert_eq!(p.header.erspan_type, 3);
        assert_eq!(p.header.session, Some(0x3ff));
        assert_eq!(p.payload_at, 20);
        assert!(Erspan::parse(&three[..14], 0, PROTO_ERSPAN_III, true).is_err());
    }
}
