//! Reading and rewriting the traffic class of an IPv6 header (RFC 8200).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Version| Traffic Class |           Flow Label                  |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The traffic class is the DS field (RFC 2474, RFC 3168) and straddles a
//! byte boundary: its upper nibble is the low nibble of byte 0, its lower
//! nibble the high nibble of byte 1. IPv6 has no header checksum, so a
//! rewrite touches only those eight bits; the version and the flow label
//! are left as they were.
//!
//! Every function first checks that the buffer holds the 40-byte fixed
//! header and that the version is 6.
//!
//! ```
//! use dscp::{ipv6, Dscp, Ecn};
//!
//! let mut header = [0u8; 40];
//! header[..4].copy_from_slice(&[0x60, 0x0a, 0xbc, 0xde]); // flow label 0xabcde
//! ipv6::set_dscp(&mut header, Dscp::EF)?;
//! ipv6::set_ecn(&mut header, Ecn::Ect1)?;
//! assert_eq!(header[..4], [0x6b, 0x9a, 0xbc, 0xde]);
//! assert_eq!(ipv6::traffic_class(&header)?.value(), 0xb9);
//! assert_eq!(ipv6::flow_label(&header)?, 0xabcde);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ds_field::DsField;
use crate::dscp::Dscp;
use crate::ecn::{CongestionAction, Ecn};
use crate::error::{IpVersion, ReadError, WriteError};

/// The version field value of IPv6.
pub const VERSION: u8 = 6;
/// Length of the fixed IPv6 header.
pub const HEADER_LEN: usize = 40;
/// Mask of the flow label in the first 32-bit word.
pub const FLOW_LABEL_MASK: u32 = 0x000f_ffff;

/// Checks that `buf` starts with a 40-byte header of version 6.
pub fn check(buf: &[u8]) -> Result<(), ReadError> {
    if buf.len() < HEADER_LEN {
        return Err(ReadError::TooShort {
            header: IpVersion::V6,
            needed: HEADER_LEN,
            len: buf.len(),
        });
    }
    let version = buf[0] >> 4;
    if version != VERSION {
        return Err(ReadError::WrongVersion {
            expected: IpVersion::V6,
            found: version,
        });
    }
    Ok(())
}

/// The traffic class (DS field) of the header.
pub fn traffic_class(buf: &[u8]) -> Result<DsField, ReadError> {
    check(buf)?;
    Ok(DsField::new((buf[0] << 4) | (buf[1] >> 4)))
}

/// The DSCP of the header.
pub fn dscp(buf: &[u8]) -> Result<Dscp, ReadError> {
    traffic_class(buf).map(DsField::dscp)
}

/// The ECN codepoint of the header.
pub fn ecn(buf: &[u8]) -> Result<Ecn, ReadError> {
    traffic_class(buf).map(DsField::ecn)
}

/// The 20-bit flow label.
pub fn flow_label(buf: &[u8]) -> Result<u32, ReadError> {
    check(buf)?;
    Ok(u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) & FLOW_LABEL_MASK)
}

/// Replaces the whole traffic class; version and flow label are kept.
pub fn set_traffic_class(buf: &mut [u8], field: DsField) -> Result<(), WriteError> {
    check(buf)?;
    let tc = field.value();
    buf[0] = (buf[0] & 0xf0) | (tc >> 4);
    buf[1] = (buf[1] & 0x0f) | (tc << 4);
    Ok(())
}

/// Rewrites the DSCP, keeping ECN, version and flow label.
pub fn set_dscp(buf: &mut [u8], dscp: Dscp) -> Result<(), WriteError> {
    let field = traffic_class(buf)?;
    set_traffic_class(buf, field.with_dscp(dscp))
}

/// Rewrites the ECN codepoint, keeping DSCP, version and flow label.
pub fn set_ecn(buf: &mut [u8], ecn: Ecn) -> Result<(), WriteError> {
    let field = traffic_class(buf)?;
    set_traffic_class(buf, field.with_ecn(ecn))
}

/// A congested router's ECN action on this packet (RFC 3168 section 5),
/// as [`ipv4::mark_congestion`](crate::ipv4::mark_congestion): ECT(0) or
/// ECT(1) is marked CE here; CE is left alone; a Not-ECT packet is left
/// untouched and [`CongestionAction::Drop`] says the caller must drop it.
pub fn mark_congestion(buf: &mut [u8]) -> Result<CongestionAction, WriteError> {
    let field = traffic_class(buf)?;
    let action = field.ecn().on_congestion();
    if action == CongestionAction::MarkCe {
        set_traffic_class(buf, field.with_ecn(Ecn::Ce))?;
    }
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(first_word: u32) -> [u8; 40] {
        let mut h = [0u8; 40];
        h[..4].copy_from_slice(&first_word.to_be_bytes());
        h
    }

    #[test]
    fn every_traffic_class_is_written_in_place() {
        let h0 = header(0x6fff_ffff);
        for tc in 0..=255u8 {
            let mut h = h0;
            set_traffic_class(&mut h, DsField::new(tc)).unwrap();
            let word = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
            assert_eq!(word, 0x6000_0000 | (u32::from(tc) << 20) | 0x000f_ffff);
            assert_eq!(traffic_class(&h), Ok(DsField::new(tc)));
            assert_eq!(h[4..], h0[4..]);
        }
    }

    #[test]
    fn rfc3168_marking_in_the_header() {
        for ecn in Ecn::ALL {
            let mut h = header(0x6fff_ffff);
            set_ecn(&mut h, ecn).unwrap();
            let before = h;
            let action = mark_congestion(&mut h).unwrap();
            assert_eq!(action, ecn.on_congestion());
            if action == CongestionAction::MarkCe {
                assert_eq!(super::ecn(&h), Ok(Ecn::Ce));
                assert_eq!(flow_label(&h), Ok(0xfffff));
            } else {
                assert_eq!(h, before);
            }
        }
    }

    #[test]
    fn errors() {
        let mut short = [0x60u8; 39];
        assert_eq!(
            set_dscp(&mut short, Dscp::EF),
            Err(WriteError::TooShort {
                header: IpVersion::V6,
                needed: 40,
                len: 39
            })
        );
        let mut v4 = header(0x4500_0000);
        assert_eq!(
            set_ecn(&mut v4, Ecn::Ce),
            Err(WriteError::WrongVersion {
                expected: IpVersion::V6,
                found: 4
            })
        );
        assert_eq!(v4, header(0x4500_0000));
        assert!(flow_label(&[]).is_err());
    }
}
