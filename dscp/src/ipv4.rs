//! Reading and rewriting the DS field of an IPv4 header (RFC 791).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Version|  IHL  |   DS field    |          Total Length         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  ...  (bytes 4-9)             |        Header Checksum        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Every function first checks the buffer: at least 20 bytes, version 4,
//! IHL at least 5, and at least IHL × 4 bytes (the whole header, options
//! included, since the checksum covers it). A buffer that fails is a
//! [`ReadError`] or [`WriteError`] and is left untouched.
//!
//! The writers change only the DS-field byte and the checksum. The
//! checksum is updated by RFC 1624 eqn. 3 on the 16-bit word that holds the
//! DS field (bytes 0-1), so the cost does not depend on the header length,
//! and a header whose checksum was valid stays valid. An invalid checksum
//! stays exactly as wrong as it was: a rewrite never hides corruption.
//!
//! ```
//! use dscp::{ipv4, Dscp, Ecn};
//!
//! // An IPv4 header (the well-known 192.168.0.1 -> 192.168.0.199 UDP
//! // example), checksum 0xb861.
//! let mut header = [
//!     0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
//!     0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
//! ];
//! ipv4::set_ecn(&mut header, Ecn::Ect0)?;
//! ipv4::set_dscp(&mut header, Dscp::CS1)?; // mark as scavenger traffic
//! assert_eq!(header[1], 0x22);
//! assert_eq!(ipv4::dscp(&header)?, Dscp::CS1);
//! assert_eq!(ipv4::ecn(&header)?, Ecn::Ect0);
//! assert!(ipv4::verify_checksum(&header)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::ops::Range;

use crate::checksum::{incremental_update, ones_complement_sum};
use crate::ds_field::DsField;
use crate::dscp::Dscp;
use crate::ecn::{CongestionAction, Ecn};
use crate::error::{HeaderError, IpVersion, ReadError, WriteError};

use zerocopy::network_endian::U16;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The version field value of IPv4.
pub const VERSION: u8 = 4;
/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Smallest valid IHL, in 32-bit words.
pub const MIN_IHL: u8 = 5;
/// Byte holding version (high nibble) and IHL (low nibble).
pub const VERSION_IHL: usize = 0;
/// Byte holding the DS field (formerly TOS).
pub const DS_FIELD: usize = 1;
/// Bytes of the header checksum, big-endian.
pub const CHECKSUM: Range<usize> = 10..12;

/// Checks that `buf` starts with a whole IPv4 header and returns its length
/// in bytes (IHL × 4).
pub fn header_len(buf: &[u8]) -> Result<usize, ReadError> {
    if buf.len() < MIN_HEADER_LEN {
        return Err(ReadError::TooShort {
            header: IpVersion::V4,
            needed: MIN_HEADER_LEN,
            len: buf.len(),
        });
    }
    let version = buf[VERSION_IHL] >> 4;
    if version != VERSION {
        return Err(ReadError::WrongVersion {
            expected: IpVersion::V4,
            found: version,
        });
    }
    let ihl = buf[VERSION_IHL] & 0x0f;
    if ihl < MIN_IHL {
        return Err(ReadError::BadIhl { ihl });
    }
    let len = usize::from(ihl) * 4;
    if buf.len() < len {
        return Err(ReadError::TooShort {
            header: IpVersion::V4,
            needed: len,
            len: buf.len(),
        });
    }
    Ok(len)
}

/// A zero-copy view of the fixed 20 bytes of an IPv4 header, for reading
/// and rewriting its DS field in place.
///
/// [`Ipv4Header::from_bytes`] and [`Ipv4Header::from_bytes_mut`] check the
/// buffer as [`header_len`] does (the whole header, options included, must
/// be present) and borrow its first 20 bytes; the free functions of this
/// module are thin wrappers around them.
///
/// ```
/// use dscp::ipv4::Ipv4Header;
/// use dscp::{CongestionAction, Dscp, Ecn};
///
/// let mut packet = [
///     0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
///     0xb8, 0x5f, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
/// ];
/// let header = Ipv4Header::from_bytes_mut(&mut packet)?;
/// assert_eq!((header.ecn(), header.header_len()), (Ecn::Ect0, 20));
/// header.set_dscp(Dscp::AF41);
/// assert_eq!(header.mark_congestion(), CongestionAction::MarkCe);
/// assert_eq!(header.ds_field().value(), 0x8b);
/// assert!(dscp::ipv4::verify_checksum(&packet)?);
/// # Ok::<(), dscp::HeaderError>(())
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct Ipv4Header {
    version_ihl: u8,
    ds_field: u8,
    total_length: U16,
    identification: U16,
    flags_fragment: U16,
    ttl: u8,
    protocol: u8,
    checksum: U16,
    source: [u8; 4],
    destination: [u8; 4],
}

impl Ipv4Header {
    /// Checks that `buf` starts with a whole IPv4 header (see
    /// [`header_len`]) and views its fixed part.
    pub fn from_bytes(buf: &[u8]) -> Result<&Ipv4Header, HeaderError> {
        header_len(buf)?;
        Ipv4Header::ref_from_prefix(buf)
            .map(|(h, _)| h)
            .map_err(|_| too_short(buf.len()))
    }

    /// As [`Ipv4Header::from_bytes`], for rewriting.
    pub fn from_bytes_mut(buf: &mut [u8]) -> Result<&mut Ipv4Header, HeaderError> {
        header_len(buf)?;
        let len = buf.len();
        Ipv4Header::mut_from_prefix(buf)
            .map(|(h, _)| h)
            .map_err(|_| too_short(len))
    }

    /// The version field (4 for a header this view accepted).
    pub const fn version(&self) -> u8 {
        self.version_ihl >> 4
    }

    /// The header length in bytes (IHL x 4), options included.
    pub const fn header_len(&self) -> usize {
        (self.version_ihl & 0x0f) as usize * 4
    }

    /// The DS field (TOS byte).
    pub const fn ds_field(&self) -> DsField {
        DsField::new(self.ds_field)
    }

    /// The DSCP.
    pub const fn dscp(&self) -> Dscp {
        self.ds_field().dscp()
    }

    /// The ECN codepoint.
    pub const fn ecn(&self) -> Ecn {
        self.ds_field().ecn()
    }

    /// The header checksum field as stored.
    pub fn checksum(&self) -> u16 {
        self.checksum.get()
    }

    /// Replaces the DS field and updates the checksum incrementally
    /// (RFC 1624 eqn. 3 on the word of bytes 0-1). Nothing is written if
    /// the byte does not change.
    pub fn set_ds_field(&mut self, field: DsField) {
        let (old, new) = (self.ds_field, field.value());
        if old == new {
            return;
        }
        let old_word = u16::from_be_bytes([self.version_ihl, old]);
        let new_word = u16::from_be_bytes([self.version_ihl, new]);
        let checksum = incremental_update(self.checksum.get(), old_word, new_word);
        self.ds_field = new;
        self.checksum.set(checksum);
    }

    /// Rewrites the DSCP, keeping ECN; checksum updated.
    pub fn set_dscp(&mut self, dscp: Dscp) {
        self.set_ds_field(self.ds_field().with_dscp(dscp));
    }

    /// Rewrites the ECN codepoint, keeping the DSCP; checksum updated.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.set_ds_field(self.ds_field().with_ecn(ecn));
    }

    /// A congested router's ECN action (RFC 3168 section 5): marks CE on
    /// an ECT(0) or ECT(1) packet; leaves CE and Not-ECT packets as they
    /// are, and says [`CongestionAction::Drop`] for Not-ECT.
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
        header: IpVersion::V4,
        needed: MIN_HEADER_LEN,
        len,
    }
}

/// The DS field (TOS byte) of the header.
pub fn ds_field(buf: &[u8]) -> Result<DsField, ReadError> {
    Ipv4Header::from_bytes(buf).map(Ipv4Header::ds_field)
}

/// The DSCP of the header.
pub fn dscp(buf: &[u8]) -> Result<Dscp, ReadError> {
    Ipv4Header::from_bytes(buf).map(Ipv4Header::dscp)
}

/// The ECN codepoint of the header.
pub fn ecn(buf: &[u8]) -> Result<Ecn, ReadError> {
    Ipv4Header::from_bytes(buf).map(Ipv4Header::ecn)
}

/// The header checksum field as stored.
pub fn stored_checksum(buf: &[u8]) -> Result<u16, ReadError> {
    Ipv4Header::from_bytes(buf).map(Ipv4Header::checksum)
}

/// The checksum the header should carry, computed from scratch (RFC 1071)
/// over the whole header with the checksum field taken as zero.
///
/// ```
/// // The classic example header 192.168.0.1 -> 192.168.0.199: 0xb861.
/// let header = [
///     0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
///     0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
/// ];
/// assert_eq!(dscp::ipv4::compute_checksum(&header), Ok(0xb861));
/// ```
pub fn compute_checksum(buf: &[u8]) -> Result<u16, ReadError> {
    let len = header_len(buf)?;
    let header = &buf[..len];
    let before = ones_complement_sum(&header[..CHECKSUM.start]);
    let after = ones_complement_sum(&header[CHECKSUM.end..]);
    // Both halves start on an even offset, so their sums add as words.
    let sum = u32::from(before) + u32::from(after);
    let folded = (sum & 0xffff) + (sum >> 16);
    Ok(!(folded as u16))
}

/// True if the one's complement sum of the whole header, checksum included,
/// is `0xffff` (RFC 1071 verification).
pub fn verify_checksum(buf: &[u8]) -> Result<bool, ReadError> {
    let len = header_len(buf)?;
    Ok(ones_complement_sum(&buf[..len]) == 0xffff)
}

/// Recomputes the checksum from scratch, stores it and returns it.
pub fn fill_checksum(buf: &mut [u8]) -> Result<u16, WriteError> {
    let checksum = compute_checksum(buf)?;
    buf[CHECKSUM].copy_from_slice(&checksum.to_be_bytes());
    Ok(checksum)
}

/// Replaces the whole DS field and updates the checksum incrementally
/// (RFC 1624). Nothing is written if the byte does not change.
pub fn set_ds_field(buf: &mut [u8], field: DsField) -> Result<(), WriteError> {
    Ipv4Header::from_bytes_mut(buf).map(|h| h.set_ds_field(field))
}

/// Rewrites the DSCP, keeping ECN, and updates the checksum (RFC 1624).
pub fn set_dscp(buf: &mut [u8], dscp: Dscp) -> Result<(), WriteError> {
    Ipv4Header::from_bytes_mut(buf).map(|h| h.set_dscp(dscp))
}

/// Rewrites the ECN codepoint, keeping the DSCP, and updates the checksum
/// (RFC 1624), as a router does when it marks CE (RFC 3168).
pub fn set_ecn(buf: &mut [u8], ecn: Ecn) -> Result<(), WriteError> {
    Ipv4Header::from_bytes_mut(buf).map(|h| h.set_ecn(ecn))
}

/// A congested router's ECN action on this packet (RFC 3168 section 5):
/// an ECT(0) or ECT(1) packet is marked CE here (checksum updated) and
/// [`CongestionAction::MarkCe`] returned; a CE packet is left as it is
/// ([`CongestionAction::AlreadyCe`]); a Not-ECT packet is left untouched
/// and [`CongestionAction::Drop`] says the caller must drop it.
///
/// ```
/// use dscp::{ipv4, CongestionAction, Ecn};
///
/// let mut header = [
///     0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
///     0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
/// ];
/// ipv4::fill_checksum(&mut header)?;
/// assert_eq!(ipv4::mark_congestion(&mut header)?, CongestionAction::MarkCe);
/// assert_eq!(ipv4::ecn(&header)?, Ecn::Ce);
/// assert!(ipv4::verify_checksum(&header)?);
/// # Ok::<(), dscp::HeaderError>(())
/// ```
pub fn mark_congestion(buf: &mut [u8]) -> Result<CongestionAction, WriteError> {
    Ipv4Header::from_bytes_mut(buf).map(Ipv4Header::mark_congestion)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The widely used example header 192.168.0.1 -> 192.168.0.199, UDP,
    /// total length 0x73, whose checksum is 0xb861.
    const EXAMPLE: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn rfc3168_marking_in_the_header() {
        for ecn in Ecn::ALL {
            let mut h = EXAMPLE;
            set_ecn(&mut h, ecn).unwrap();
            let before = h;
            let action = mark_congestion(&mut h).unwrap();
            assert_eq!(action, ecn.on_congestion());
            match action {
                CongestionAction::MarkCe => {
                    assert_eq!(super::ecn(&h), Ok(Ecn::Ce));
                    assert_eq!(verify_checksum(&h), Ok(true));
                }
                // Not-ECT is never marked: the header is untouched.
                CongestionAction::Drop | CongestionAction::AlreadyCe => assert_eq!(h, before),
            }
        }
    }

    #[test]
    fn the_view_is_the_fixed_header() {
        assert_eq!(core::mem::size_of::<Ipv4Header>(), MIN_HEADER_LEN);
        let h = Ipv4Header::from_bytes(&EXAMPLE).unwrap();
        assert_eq!((h.version(), h.header_len(), h.checksum()), (4, 20, 0xb861));
        assert_eq!(h.as_bytes(), &EXAMPLE);
        // The view checks what the free functions check, with the same error.
        let mut long_ihl = EXAMPLE;
        long_ihl[0] = 0x46;
        assert_eq!(
            Ipv4Header::from_bytes(&long_ihl).err(),
            ds_field(&long_ihl).err()
        );
        assert!(Ipv4Header::from_bytes_mut(&mut long_ihl).is_err());
        assert_eq!(long_ihl[0], 0x46);
    }

    #[test]
    fn example_header_checksum() {
        assert_eq!(compute_checksum(&EXAMPLE), Ok(0xb861));
        assert_eq!(stored_checksum(&EXAMPLE), Ok(0xb861));
        assert_eq!(verify_checksum(&EXAMPLE), Ok(true));
    }

    #[test]
    fn qbss_marking_rewrite() {
        // Marking the example as QBSS (TOS 0x20) raises the DS word by
        // 0x0020, so the checksum drops by 0x0020: 0xb861 -> 0xb841.
        let mut h = EXAMPLE;
        set_dscp(&mut h, Dscp::CS1).unwrap();
        assert_eq!(h[DS_FIELD], 0x20);
        assert_eq!(stored_checksum(&h), Ok(0xb841));
        assert_eq!(compute_checksum(&h), Ok(0xb841));
        assert_eq!(h[..1], EXAMPLE[..1]);
        assert_eq!(h[2..10], EXAMPLE[2..10]);
        assert_eq!(h[12..], EXAMPLE[12..]);
    }

    #[test]
    fn ecn_and_dscp_are_independent() {
        let mut h = EXAMPLE;
        set_ecn(&mut h, Ecn::Ce).unwrap();
        set_dscp(&mut h, Dscp::EF).unwrap();
        assert_eq!(ds_field(&h), Ok(DsField::new(0xbb)));
        set_dscp(&mut h, Dscp::CS0).unwrap();
        assert_eq!(ecn(&h), Ok(Ecn::Ce));
        set_ecn(&mut h, Ecn::NotEct).unwrap();
        assert_eq!(h, EXAMPLE);
    }

    #[test]
    fn zero_checksum_stays_valid_and_never_becomes_minus_zero() {
        // A header whose valid checksum is 0x0000 (+0). RFC 1624 eqn. 3 with
        // the end-around carry never turns it into 0xffff (-0): rewriting
        // the DS field to any value and back gives what a recomputation
        // gives, and the original 0x0000.
        let mut h = EXAMPLE;
        // Choose the identification field so that the checksum is 0.
        h[4..6].copy_from_slice(&0xb861_u16.to_be_bytes());
        h[CHECKSUM].copy_from_slice(&[0, 0]);
        assert_eq!(compute_checksum(&h), Ok(0x0000));
        assert_eq!(verify_checksum(&h), Ok(true));
        set_dscp(&mut h, Dscp::CS0).unwrap();
        assert_eq!(stored_checksum(&h), Ok(0x0000));
        let original = h;
        for byte in 0..=255u8 {
            set_ds_field(&mut h, DsField::new(byte)).unwrap();
            assert_eq!(stored_checksum(&h), compute_checksum(&h));
            assert_ne!(stored_checksum(&h), Ok(0xffff));
            set_ds_field(&mut h, DsField::new(0)).unwrap();
            assert_eq!(h, original);
        }
    }

    #[test]
    fn options_are_covered_by_the_checksum() {
        let mut h = [0u8; 24];
        h[..20].copy_from_slice(&EXAMPLE);
        h[0] = 0x46; // IHL 6
        h[20..].copy_from_slice(&[0x94, 0x04, 0x00, 0x00]); // router alert
        fill_checksum(&mut h).unwrap();
        assert_eq!(verify_checksum(&h), Ok(true));
        set_dscp(&mut h, Dscp::AF41).unwrap();
        assert_eq!(verify_checksum(&h), Ok(true));
        assert_eq!(h[20..], [0x94, 0x04, 0x00, 0x00]);
        // Truncated options: the header is incomplete.
        assert_eq!(
            set_dscp(&mut h[..23], Dscp::EF),
            Err(WriteError::TooShort {
                header: IpVersion::V4,
                needed: 24,
                len: 23
            })
        );
    }

    #[test]
    fn bad_buffers_are_typed_errors_and_untouched() {
        let mut short = [0x45u8; 19];
        assert_eq!(
            set_dscp(&mut short, Dscp::EF),
            Err(WriteError::TooShort {
                header: IpVersion::V4,
                needed: 20,
                len: 19
            })
        );
        assert_eq!(short, [0x45u8; 19]);

        let mut v6 = EXAMPLE;
        v6[0] = 0x65;
        assert_eq!(
            set_ecn(&mut v6, Ecn::Ce),
            Err(WriteError::WrongVersion {
                expected: IpVersion::V4,
                found: 6
            })
        );
        assert_eq!(v6[1], 0);

        let mut bad_ihl = EXAMPLE;
        bad_ihl[0] = 0x44;
        assert_eq!(dscp(&bad_ihl), Err(ReadError::BadIhl { ihl: 4 }));
        assert_eq!(
            set_dscp(&mut bad_ihl, Dscp::EF),
            Err(WriteError::BadIhl { ihl: 4 })
        );

        let mut long_ihl = EXAMPLE;
        long_ihl[0] = 0x4f; // 60-byte header in a 20-byte buffer
        assert_eq!(
            dscp(&long_ihl),
            Err(ReadError::TooShort {
                header: IpVersion::V4,
                needed: 60,
                len: 20
            })
        );
        assert!(fill_checksum(&mut long_ihl).is_err());
        assert_eq!(
            verify_checksum(&[]),
            Err(ReadError::TooShort {
                header: IpVersion::V4,
                needed: 20,
                len: 0
            })
        );
    }
}
