//! The Internet checksum for TCP: full computation over a pseudo-header and
//! the segment (RFC 9293 section 3.1, RFC 8200 section 8.1 for IPv6) and the
//! incremental update of RFC 1624.
//!
//! # Incremental update (RFC 1624, equation 3)
//!
//! When a 16-bit word `m` of the checksummed data becomes `m'`, the new
//! checksum is `HC' = ~(~HC + ~m + m')` in one's complement arithmetic.
//! Unlike the older RFC 1141 form, this never produces 0xFFFF (negative zero)
//! for a TCP segment, so the result equals a full recomputation bit for bit.
//! Bytes at odd offsets are updated through the 16-bit word that contains
//! them; offsets count from the start of the TCP header, which is word
//! aligned with the pseudo-header.
//!
//! # The IPv4 header checksum
//!
//! [`ipv4_header`] is the same sum over the IPv4 header alone (RFC 791
//! section 3.1, computed as RFC 1071 describes), the checksum field
//! counted as zero; [`verify_ipv4_header`] checks a stored one.
//!
//! # Pseudo-headers as a value
//!
//! [`PseudoHeader`] holds the two addresses of either family, so code that
//! handles both calls one [`PseudoHeader::checksum`], [`PseudoHeader::verify`]
//! or [`PseudoHeader::fill`]; [`crate::TcpRepr::emit`] takes one.

use core::net::{Ipv4Addr, Ipv6Addr};

use crate::header::field;

/// One's complement sum of `data` as big-endian 16-bit words (an odd last
/// byte is padded with zero), added to `initial`; not folded.
#[inline]
pub fn sum(data: &[u8], initial: u32) -> u64 {
    let mut acc = u64::from(initial);
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        if let [a, b] = *c {
            acc += u64::from(u16::from_be_bytes([a, b]));
        }
    }
    if let [last] = *chunks.remainder() {
        acc += u64::from(u16::from_be_bytes([last, 0]));
    }
    acc
}

/// Fold a wide sum to 16 bits with end-around carry.
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

fn pseudo_ipv4(src: [u8; 4], dst: [u8; 4], tcp_len: u32) -> u64 {
    sum(&src, 0) + sum(&dst, 0) + 6 + u64::from(tcp_len >> 16) + u64::from(tcp_len & 0xffff)
}

fn pseudo_ipv6(src: [u8; 16], dst: [u8; 16], tcp_len: u32) -> u64 {
    sum(&src, 0) + sum(&dst, 0) + u64::from(tcp_len >> 16) + u64::from(tcp_len & 0xffff) + 6
}

fn over_segment(pseudo: u64, segment: &[u8]) -> u16 {
    // The checksum field itself counts as zero.
    let stored = match segment.get(field::CHECKSUM) {
        Some([a, b]) => u64::from(u16::from_be_bytes([*a, *b])),
        _ => 0,
    };
    let total = pseudo + sum(segment, 0);
    // Subtract the stored checksum in one's complement: add its complement.
    !fold(total + (0xffff - stored))
}

/// The TCP checksum of `segment` (TCP header and payload) for IPv4 addresses,
/// computed as if the checksum field were zero. Returns `None` when the
/// segment is longer than an IPv4 length field can describe (65535 bytes).
pub fn ipv4(src: [u8; 4], dst: [u8; 4], segment: &[u8]) -> Option<u16> {
    let len = u16::try_from(segment.len()).ok()?;
    Some(over_segment(pseudo_ipv4(src, dst, u32::from(len)), segment))
}

/// The TCP checksum of `segment` for IPv6 addresses (upper-layer packet
/// length is 32 bits, so jumbograms are covered). `None` above `u32::MAX` bytes.
pub fn ipv6(src: [u8; 16], dst: [u8; 16], segment: &[u8]) -> Option<u16> {
    let len = u32::try_from(segment.len()).ok()?;
    Some(over_segment(pseudo_ipv6(src, dst, len), segment))
}

fn stored(segment: &[u8]) -> Option<u16> {
    match segment.get(field::CHECKSUM) {
        Some([a, b]) => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    }
}

/// Whether the checksum field of `segment` is correct for these IPv4 addresses.
pub fn verify_ipv4(src: [u8; 4], dst: [u8; 4], segment: &[u8]) -> bool {
    stored(segment).is_some() && stored(segment) == ipv4(src, dst, segment)
}

/// Whether the checksum field of `segment` is correct for these IPv6 addresses.
pub fn verify_ipv6(src: [u8; 16], dst: [u8; 16], segment: &[u8]) -> bool {
    stored(segment).is_some() && stored(segment) == ipv6(src, dst, segment)
}

/// Write the correct IPv4 checksum into `segment`; `false` (nothing written)
/// when it is shorter than 20 bytes or longer than 65535.
pub fn fill_ipv4(src: [u8; 4], dst: [u8; 4], segment: &mut [u8]) -> bool {
    match (ipv4(src, dst, segment), segment.get_mut(field::CHECKSUM)) {
        (Some(c), Some(f)) if f.len() == 2 => {
            f.copy_from_slice(&c.to_be_bytes());
            true
        }
        _ => false,
    }
}

/// Write the correct IPv6 checksum into `segment`; `false` (nothing written)
/// when it is shorter than 20 bytes.
pub fn fill_ipv6(src: [u8; 16], dst: [u8; 16], segment: &mut [u8]) -> bool {
    match (ipv6(src, dst, segment), segment.get_mut(field::CHECKSUM)) {
        (Some(c), Some(f)) if f.len() == 2 => {
            f.copy_from_slice(&c.to_be_bytes());
            true
        }
        _ => false,
    }
}

/// RFC 1624 equation 3 for one 16-bit word: the checksum after `old`
/// became `new`.
#[inline]
pub fn update_word(checksum: u16, old: u16, new: u16) -> u16 {
    !fold(u64::from(!checksum) + u64::from(!old) + u64::from(new))
}

/// RFC 1624 for a 32-bit field (two words).
#[inline]
pub fn update_u32(checksum: u16, old: u32, new: u32) -> u16 {
    !fold(
        u64::from(!checksum)
            + u64::from(!(old >> 16) as u16)
            + u64::from(!(old as u16))
            + u64::from(new >> 16)
            + u64::from(new & 0xffff),
    )
}

/// Accumulates RFC 1624 updates for byte writes into a segment buffer.
///
/// `write` replaces bytes and records the old and new value of every
/// aligned 16-bit word they touch; `finish` stores the updated checksum.
#[derive(Debug)]
pub struct Incremental<'s> {
    segment: &'s mut [u8],
    acc: u64,
}

impl<'s> Incremental<'s> {
    /// Start updating `segment` (at least 20 bytes for `finish` to store).
    pub fn new(segment: &'s mut [u8]) -> Self {
        let acc = u64::from(!stored(segment).unwrap_or(0));
        Incremental { segment, acc }
    }

    /// The segment being edited.
    pub fn segment(&self) -> &[u8] {
        self.segment
    }

    /// Write `bytes` at `at`; `false` (nothing written) if out of range.
    /// Must not overlap the checksum field.
    pub fn write(&mut self, at: usize, bytes: &[u8]) -> bool {
        let Some(end) = at.checked_add(bytes.len()) else {
            return false;
        };
        if end > self.segment.len() {
            return false;
        }
        let (start_w, end_w) = (at & !1, (end + 1) & !1);
        self.acc += !fold(sum(word_range(self.segment, start_w, end_w), 0)) as u64 & 0xffff;
        // `!fold(x)` is the one's complement of the partial sum: adding it
        // subtracts the old words.
        if let Some(dst) = self.segment.get_mut(at..end) {
            dst.copy_from_slice(bytes);
        }
        self.acc += sum(word_range(self.segment, start_w, end_w), 0);
        true
    }

    /// Store the updated checksum and return it.
    pub fn finish(self) -> u16 {
        let c = !fold(self.acc);
        if let Some(f) = self.segment.get_mut(field::CHECKSUM) {
            f.copy_from_slice(&c.to_be_bytes());
        }
        c
    }
}

fn word_range(seg: &[u8], start: usize, end: usize) -> &[u8] {
    // An odd-length segment: the last word is padded with zero by `sum`.
    seg.get(start..end.min(seg.len())).unwrap_or(&[])
}

/// Offset of the checksum field in an IPv4 header.
const IPV4_CHECKSUM: core::ops::Range<usize> = 10..12;

/// The IPv4 header checksum of `header` (the whole header, options
/// included), computed as if its checksum field were zero. `None` when
/// `header` is shorter than 20 bytes or longer than 60.
///
/// ```
/// use tcp_options::checksum;
/// // Header with checksum b861 (the worked example of Wikipedia's
/// // "Internet checksum" article).
/// let h = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61,
///          0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
/// assert_eq!(checksum::ipv4_header(&h), Some(0xb861));
/// assert!(checksum::verify_ipv4_header(&h));
/// ```
pub fn ipv4_header(header: &[u8]) -> Option<u16> {
    if !(20..=60).contains(&header.len()) {
        return None;
    }
    let stored = match header.get(IPV4_CHECKSUM) {
        Some([a, b]) => u64::from(u16::from_be_bytes([*a, *b])),
        _ => 0,
    };
    Some(!fold(sum(header, 0) + (0xffff - stored)))
}

/// Whether the checksum field of the IPv4 header `header` (20 to 60
/// bytes, options included) is correct.
pub fn verify_ipv4_header(header: &[u8]) -> bool {
    match (ipv4_header(header), header.get(IPV4_CHECKSUM)) {
        (Some(c), Some([a, b])) => c == u16::from_be_bytes([*a, *b]),
        _ => false,
    }
}

/// Write the correct checksum into the IPv4 header `header` (20 to 60
/// bytes); `false` (nothing written) for any other length.
pub fn fill_ipv4_header(header: &mut [u8]) -> bool {
    match (ipv4_header(header), header.get_mut(IPV4_CHECKSUM)) {
        (Some(c), Some(f)) => {
            f.copy_from_slice(&c.to_be_bytes());
            true
        }
        _ => false,
    }
}

/// The addresses of a TCP pseudo-header (RFC 9293 section 3.1 for IPv4,
/// RFC 8200 section 8.1 for IPv6); the protocol (6) and the segment length
/// are added by each method.
///
/// With an IPv6 Routing header, RFC 8200 asks for the final destination
/// in `dst`, not the one in the fixed header.
///
/// ```
/// use core::net::Ipv4Addr;
/// use tcp_options::checksum::PseudoHeader;
/// let mut seg = [0u8; 20];
/// seg[12] = 0x50; // data offset 5
/// let ph = PseudoHeader::V4 { src: Ipv4Addr::new(192, 0, 2, 1), dst: Ipv4Addr::new(192, 0, 2, 2) };
/// assert!(ph.fill(&mut seg));
/// assert!(ph.verify(&seg));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PseudoHeader {
    /// IPv4 source and destination.
    V4 {
        /// Source address.
        src: Ipv4Addr,
        /// Destination address.
        dst: Ipv4Addr,
    },
    /// IPv6 source and destination.
    V6 {
        /// Source address.
        src: Ipv6Addr,
        /// Destination address (the final one).
        dst: Ipv6Addr,
    },
}

impl PseudoHeader {
    /// The TCP checksum of `segment` with this pseudo-header, the checksum
    /// field counted as zero ([`ipv4`], [`ipv6`]). `None` when the segment
    /// is longer than the pseudo-header's length field can say (65535
    /// bytes for IPv4).
    pub fn checksum(&self, segment: &[u8]) -> Option<u16> {
        match *self {
            PseudoHeader::V4 { src, dst } => ipv4(src.octets(), dst.octets(), segment),
            PseudoHeader::V6 { src, dst } => ipv6(src.octets(), dst.octets(), segment),
        }
    }

    /// Whether the checksum field of `segment` is correct.
    pub fn verify(&self, segment: &[u8]) -> bool {
        stored(segment).is_some() && stored(segment) == self.checksum(segment)
    }

    /// Write the correct checksum into `segment`; `false` (nothing
    /// written) when it is shorter than 20 bytes or too long (see
    /// [`PseudoHeader::checksum`]).
    pub fn fill(&self, segment: &mut [u8]) -> bool {
        match *self {
            PseudoHeader::V4 { src, dst } => fill_ipv4(src.octets(), dst.octets(), segment),
            PseudoHeader::V6 { src, dst } => fill_ipv6(src.octets(), dst.octets(), segment),
        }
    }

    /// The largest segment the pseudo-header's length field can describe.
    pub const fn max_segment_len(&self) -> usize {
        match self {
            PseudoHeader::V4 { .. } => u16::MAX as usize,
            // 32 bits; on a 16-bit target, the whole address space.
            PseudoHeader::V6 { .. } => {
                if usize::BITS > 32 {
                    u32::MAX as usize
                } else {
                    usize::MAX
                }
            }
        }
    }
}
