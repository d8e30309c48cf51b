//! Linux NFLOG (LINKTYPE_NFLOG 239; the netlink messages of
//! `linux/netfilter/nfnetlink_log.h` as libpcap writes them).
//!
//! A 4-byte header: address family (1 byte: 2 IPv4, 10 IPv6), version (0),
//! resource ID (16 bits, network order: the NFLOG group). Then TLVs, each a
//! 16-bit length (the 4-byte TLV header included) and a 16-bit type, both
//! in the capturing host's byte order, the value padded to a multiple of 4
//! bytes. The packet, from its network header, is the value of the
//! NFULA_PAYLOAD TLV (type 9).

use super::{need, NotIp, Parsed, Payload, Skip, Unsupported};

/// NFLOG header length.
pub const HEADER_LEN: usize = 4;
/// TLV header length.
pub const TLV_HEADER_LEN: usize = 4;
/// The TLV type of the packet.
pub const NFULA_PAYLOAD: u16 = 9;
/// Netlink attribute flag bits carried in the type (nested, byte order).
const TYPE_FLAGS: u16 = 0xc000;
/// Offset of the resource ID.
const RESOURCE_ID: usize = 2;
/// Address family of IPv4.
const AF_INET: u8 = 2;
/// Address family of IPv6.
const AF_INET6: u8 = 10;
/// At most this many TLVs are looked at.
pub const MAX_TLVS: usize = 64;

/// A decoded NFLOG header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nflog {
    /// Address family.
    pub family: u8,
    /// The resource ID: the NFLOG group.
    pub group: u16,
}

impl Nflog {
    /// Decodes the NFLOG record at `at`: its header, and the payload TLV.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Nflog>, Skip> {
        need("NFLOG", data, at, HEADER_LEN)?;
        let family = data[at];
        let group = u16::from_be_bytes([data[at + RESOURCE_ID], data[at + RESOURCE_ID + 1]]);
        let payload = match family {
            AF_INET => Payload::Ipv4,
            AF_INET6 => Payload::Ipv6,
            other => return Err(Skip::Unsupported(Unsupported::NflogFamily(other))),
        };
        let little = host_order_is_little(data, at + HEADER_LEN);
        let read16 = |i: usize| {
            let b = [data[i], data[i + 1]];
            if little {
                u16::from_le_bytes(b)
            } else {
                u16::from_be_bytes(b)
            }
        };
        let mut tlv = at + HEADER_LEN;
        for _ in 0..MAX_TLVS {
            if data.len().saturating_sub(tlv) < TLV_HEADER_LEN {
                break;
            }
            let len = usize::from(read16(tlv));
            let kind = read16(tlv + 2) & !TYPE_FLAGS;
            if len < TLV_HEADER_LEN {
                return Err(super::malformed("NFLOG TLV", tlv, "length below 4"));
            }
            if kind == NFULA_PAYLOAD {
                return Ok(Parsed {
                    header: Nflog { family, group },
                    payload_at: tlv + TLV_HEADER_LEN,
                    payload,
                });
            }
            tlv += (len + 3) & !3;
        }
        Err(Skip::NotIp(NotIp::NflogNoPayload))
    }
}

/// Whether the TLVs starting at `at` are little-endian: the first length
/// read that way is plausible (at least 4, within the frame), where a
/// big-endian reading is not; little-endian when both are.
fn host_order_is_little(data: &[u8], at: usize) -> bool {
    let Some(b) = data.get(at..at + 2) else {
        return true;
    };
    let room = data.len() - at;
    let plausible = |len: usize| len >= TLV_HEADER_LEN && len <= room;
    let le = usize::from(u16::from_le_bytes([b[0], b[1]]));
    let be = usize::from(u16::from_be_bytes([b[0], b[1]]));
    plausible(le) || !plausible(be)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_after_other_tlvs_either_byte_order() {
        for little in [true, false] {
            let w = |v: u16| {
                if little {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                }
            };
            let mut f = vec![2, 0, 0, 5];
            // NFULA_PREFIX "ab" (6 bytes, padded to 8), then the payload.
            f.extend_from_slice(&w(6));
            f.extend_from_slice(&w(10));
            f.extend_from_slice(&[b'a', b'b', 0, 0]);
            f.extend_from_slice(&w(8));
            f.extend_from_slice(&w(9));
            f.extend_from_slice(&[0x45, 0, 0, 4]);
            let p = Nflog::parse(&f, 0).unwrap();
            assert_eq!(p.header.group, 5);
            assert_eq!(p.payload_at, 16, "little-endian {little}");
        }
        assert_eq!(
            Nflog::parse(&[2, 0, 0, 1], 0),
            Err(Skip::NotIp(NotIp::NflogNoPayload))
        );
    }
}
