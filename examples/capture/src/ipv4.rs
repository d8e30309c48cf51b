//! IPv4 header (RFC 791), options skipped by the header length.

use std::net::Ipv4Addr;

use super::error::DecodeError;

/// Fixed part of the IPv4 header.
pub const IPV4_MIN_HEADER_LEN: usize = 20;
/// Byte holding version and IHL.
const VER_IHL: usize = 0;
/// DS field / TOS byte (RFC 2474, RFC 3168).
const TOS: usize = 1;
/// Total length.
const TOTAL_LEN: usize = 2;
/// Identification.
const IDENT: usize = 4;
/// Flags and fragment offset.
const FRAG: usize = 6;
/// Time to live.
const TTL: usize = 8;
/// Protocol.
const PROTOCOL: usize = 9;
/// Source address.
const SRC: usize = 12;
/// Destination address.
const DST: usize = 16;
/// Don't Fragment flag in the flags/offset word.
const FLAG_DF: u16 = 0x4000;
/// More Fragments flag.
const FLAG_MF: u16 = 0x2000;
/// Fragment offset mask (8-byte units).
const FRAG_OFFSET_MASK: u16 = 0x1fff;

/// The decoded fields of an IPv4 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Header {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// The DS field / TOS byte (DSCP in the upper six bits, ECN in the lower two).
    pub tos: u8,
    /// Time to live.
    pub ttl: u8,
    /// Identification field.
    pub ident: u16,
    /// Don't Fragment.
    pub df: bool,
    /// More Fragments.
    pub mf: bool,
    /// Fragment offset in 8-byte units.
    pub fragment_offset: u16,
    /// Upper-layer protocol number.
    pub protocol: u8,
    /// Header length in bytes, options included.
    pub header_len: usize,
    /// The total-length field (0 on segmentation-offload / BIG TCP captures).
    pub total_len: u16,
}

impl Ipv4Header {
    /// Parses the header at the start of `data` (the captured bytes from the IP header on).
    pub fn parse(data: &[u8]) -> Result<Self, DecodeError> {
        if data.len() < IPV4_MIN_HEADER_LEN {
            return Err(DecodeError::Truncated {
                layer: "IPv4",
                offset: 0,
                needed: IPV4_MIN_HEADER_LEN,
                available: data.len(),
            });
        }
        if data[VER_IHL] >> 4 != 4 {
            return Err(DecodeError::Malformed {
                layer: "IPv4",
                offset: VER_IHL,
                reason: "version is not 4",
            });
        }
        let header_len = usize::from(data[VER_IHL] & 0x0f) * 4;
        if header_len < IPV4_MIN_HEADER_LEN {
            return Err(DecodeError::Malformed {
                layer: "IPv4",
                offset: VER_IHL,
                reason: "header length below 20 bytes",
            });
        }
        if data.len() < header_len {
            return Err(DecodeError::Truncated {
                layer: "IPv4 options",
                offset: 0,
                needed: header_len,
                available: data.len(),
            });
        }
        let total_len = u16::from_be_bytes([data[TOTAL_LEN], data[TOTAL_LEN + 1]]);
        if total_len != 0 && usize::from(total_len) < header_len {
            return Err(DecodeError::Malformed {
                layer: "IPv4",
                offset: TOTAL_LEN,
                reason: "total length shorter than the header",
            });
        }
        let frag = u16::from_be_bytes([data[FRAG], data[FRAG + 1]]);
        Ok(Ipv4Header {
            src: Ipv4Addr::new(data[SRC], data[SRC + 1], data[SRC + 2], data[SRC + 3]),
            dst: Ipv4Addr::new(data[DST], data[DST + 1], data[DST + 2], data[DST + 3]),
            tos: data[TOS],
            ttl: data[TTL],
            ident: u16::from_be_bytes([data[IDENT], data[IDENT + 1]]),
            df: frag & FLAG_DF != 0,
            mf: frag & FLAG_MF != 0,
            fragment_offset: frag & FRAG_OFFSET_MASK,
            protocol: data[PROTOCOL],
            header_len,
            total_len,
        })
    }

    /// Payload length on the wire according to the header, `None` when the
    /// total length is 0 (segmentation offload: the capture length decides).
    pub fn payload_len(&self) -> Option<usize> {
        (self.total_len != 0).then(|| usize::from(self.total_len) - self.header_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HDR: [u8; 24] = [
        0x46, 0x20, 0x00, 0x2c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0, 0, 192, 0, 2, 1, 198, 51,
        100, 2, 0x01, 0x01, 0x01, 0x00,
    ];

    #[test]
    fn with_options() {
        let h = Ipv4Header::parse(&HDR).unwrap();
        assert_eq!(h.header_len, 24);
        assert_eq!(h.tos, 0x20);
        assert!(h.df && !h.mf);
        assert_eq!(h.payload_len(), Some(20));
        assert_eq!(h.src, Ipv4Addr::new(192, 0, 2, 1));
    }

    #[test]
    fn bad_lengths() {
        let mut h = HDR;
        h[0] = 0x44;
        assert!(Ipv4Header::parse(&h).is_err());
        let mut h = HDR;
        h[2] = 0;
        h[3] = 10;
        assert!(Ipv4Header::parse(&h).is_err());
        assert!(Ipv4Header::parse(&HDR[..22]).is_err());
    }
}
