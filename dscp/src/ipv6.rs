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
use crate::error::{HeaderError, IpVersion, ReadError, WriteError};

use zerocopy::network_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

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

/// A zero-copy view of the fixed 40-byte IPv6 header, for reading and
/// rewriting its traffic class (the DS field) in place.
///
/// [`Ipv6Header::from_bytes`] and [`Ipv6Header::from_bytes_mut`] check the
/// buffer as [`check`] does; the free functions of this module are thin
/// wrappers around them. A rewrite touches only the traffic class's eight
/// bits: version and flow label are kept, and IPv6 has no header checksum.
///
/// ```
/// use dscp::ipv6::Ipv6Header;
/// use dscp::{CongestionAction, Dscp, Ecn};
///
/// let mut packet = [0u8; 40];
/// packet[..4].copy_from_slice(&[0x60, 0x11, 0x23, 0x45]); // ECT(1), flow 0x12345
/// let header = Ipv6Header::from_bytes_mut(&mut packet)?;
/// assert!(header.ecn().is_l4s());
/// header.set_dscp(Dscp::NQB);
/// assert_eq!(header.mark_congestion(), CongestionAction::MarkCe);
/// assert_eq!((header.traffic_class().value(), header.flow_label()), (0xb7, 0x12345));
/// # Ok::<(), dscp::HeaderError>(())
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct Ipv6Header {
    version_class_flow: U32,
    payload_length: U16,
    next_header: u8,
    hop_limit: u8,
    source: [u8; 16],
    destination: [u8; 16],
}

impl Ipv6Header {
    /// Checks that `buf` starts with a 40-byte header of version 6 and
    /// views it.
    pub fn from_bytes(buf: &[u8]) -> Result<&Ipv6Header, HeaderError> {
        check(buf)?;
        Ipv6Header::ref_from_prefix(buf)
            .map(|(h, _)| h)
            .map_err(|_| too_short(buf.len()))
    }

    /// As [`Ipv6Header::from_bytes`], for rewriting.
    pub fn from_bytes_mut(buf: &mut [u8]) -> Result<&mut Ipv6Header, HeaderError> {
        check(buf)?;
        let len = buf.len();
        Ipv6Header::mut_from_prefix(buf)
            .map(|(h, _)| h)
            .map_err(|_| too_short(len))
    }

    /// The version field (6 for a header this view accepted).
    pub fn version(&self) -> u8 {
        (self.version_class_flow.get() >> 28) as u8
    }

    /// The traffic class (DS field).
    pub fn traffic_class(&self) -> DsField {
        DsField::new((self.version_class_flow.get() >> 20) as u8)
    }

    /// The DSCP.
    pub fn dscp(&self) -> Dscp {
        self.traffic_class().dscp()
    }

    /// The ECN codepoint.
    pub fn ecn(&self) -> Ecn {
        self.traffic_class().ecn()
    }

    /// The 20-bit flow label.
    pub fn flow_label(&self) -> u32 {
        self.version_class_flow.get() & FLOW_LABEL_MASK
    }

    /// Replaces the traffic class; version and flow label are kept.
    pub fn set_traffic_class(&mut self, field: DsField) {
        let word = self.version_class_flow.get();
        let word = (word & !(0xff << 20)) | (u32::from(field.value()) << 20);
        self.version_class_flow.set(word);
    }

    /// Rewrites the DSCP, keeping ECN, version and flow label.
    pub fn set_dscp(&mut self, dscp: Dscp) {
        self.set_traffic_class(self.traffic_class().with_dscp(dscp));
    }

    /// Rewrites the ECN codepoint, keeping DSCP, version and flow label.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.set_traffic_class(self.traffic_class().with_ecn(ecn));
    }

    /// A congested router's ECN action (RFC 3168 section 5), as
    /// [`Ipv4Header::mark_congestion`](crate::ipv4::Ipv4Header::mark_congestion).
    pub fn mark_congestion(&mut self) -> CongestionAction {
        let action = self.ecn().on_congestion();
        if let CongestionAction::MarkCe = action {
            self.set_ecn(Ecn::Ce);
        }
        action
    }
}

fn too_short(len: usize) -> HeaderError {
    HeaderError::TooShort {
        header: IpVersion::V6,
        needed: HEADER_LEN,
        len,
    }
}

/// The traffic class (DS field) of the header.
pub fn traffic_class(buf: &[u8]) -> Result<DsField, ReadError> {
    Ipv6Header::from_bytes(buf).map(Ipv6Header::traffic_class)
}

/// The DSCP of the header.
pub fn dscp(buf: &[u8]) -> Result<Dscp, ReadError> {
    Ipv6Header::from_bytes(buf).map(Ipv6Header::dscp)
}

/// The ECN codepoint of the header.
pub fn ecn(buf: &[u8]) -> Result<Ecn, ReadError> {
    Ipv6Header::from_bytes(buf).map(Ipv6Header::ecn)
}

/// The 20-bit flow label.
pub fn flow_label(buf: &[u8]) -> Result<u32, ReadError> {
    Ipv6Header::from_bytes(buf).map(Ipv6Header::flow_label)
}

/// Replaces the whole traffic class; version and flow label are kept.
pub fn set_traffic_class(buf: &mut [u8], field: DsField) -> Result<(), WriteError> {
    Ipv6Header::from_bytes_mut(buf).map(|h| h.set_traffic_class(field))
}

/// Rewrites the DSCP, keeping ECN, version and flow label.
pub fn set_dscp(buf: &mut [u8], dscp: Dscp) -> Result<(), WriteError> {
    Ipv6Header::from_bytes_mut(buf).map(|h| h.set_dscp(dscp))
}

/// Rewrites the ECN codepoint, keeping DSCP, version and flow label.
pub fn set_ecn(buf: &mut [u8], ecn: Ecn) -> Result<(), WriteError> {
    Ipv6Header::from_bytes_mut(buf).map(|h| h.set_ecn(ecn))
}

/// A congested router's ECN action on this packet (RFC 3168 section 5),
/// as [`ipv4::mark_congestion`](crate::ipv4::mark_congestion): ECT(0) or
/// ECT(1) is marked CE here; CE is left alone; a Not-ECT packet is left
/// untouched and [`CongestionAction::Drop`] says the caller must drop it.
pub fn mark_congestion(buf: &mut [u8]) -> Result<CongestionAction, WriteError> {
    Ipv6Header::from_bytes_mut(buf).map(Ipv6Header::mark_congestion)
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
    fn the_view_is_the_fixed_header() {
        assert_eq!(core::mem::size_of::<Ipv6Header>(), HEADER_LEN);
        let h = header(0x6b9a_bcde);
        let v = Ipv6Header::from_bytes(&h).unwrap();
        assert_eq!(
            (v.version(), v.traffic_class().value(), v.flow_label()),
            (6, 0xb9, 0xabcde)
        );
        assert_eq!(
            Ipv6Header::from_bytes(&h[..39]).err(),
            traffic_class(&h[..39]).err()
        );
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
