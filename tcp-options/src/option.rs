//! Typed TCP options. Every variant borrows from the option block (no copies).

use crate::error::OptionErrorReason;
use crate::kind;

/// One decoded TCP option.
///
/// Produced by [`crate::StrictOptions`] and [`crate::LinuxOptions`] inside a
/// [`ParsedOption`], which also carries the offset and raw data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// End of Option List (kind 0). Iteration stops after it.
    EndOfList,
    /// No-Operation (kind 1).
    NoOperation,
    /// Maximum Segment Size (kind 2), in bytes.
    MaxSegmentSize(u16),
    /// Window Scale (kind 3): the shift as on the wire (may exceed 14).
    WindowScale(u8),
    /// SACK-Permitted (kind 4).
    SackPermitted,
    /// SACK (kind 5): one to four blocks.
    Sack(SackBlocks<'a>),
    /// Timestamps (kind 8).
    Timestamps(Timestamps),
    /// TCP MD5 Signature (kind 19): the 16-byte digest.
    Md5Signature(&'a [u8; 16]),
    /// User Timeout (kind 28).
    UserTimeout(UserTimeout),
    /// TCP Authentication Option (kind 29).
    TcpAo(TcpAo<'a>),
    /// Multipath TCP (kind 30).
    Mptcp(Mptcp<'a>),
    /// TCP Fast Open (kind 34, or kind 254 with ExID 0xF989).
    FastOpen(FastOpen<'a>),
    /// Accurate ECN (kind 172 or 174).
    AccEcn(AccEcn<'a>),
    /// Experimental option (kind 253 or 254, RFC 4727 / RFC 6994).
    Experimental(Experimental<'a>),
    /// Any other kind, preserved; never ends iteration.
    Unknown {
        /// The kind byte.
        kind: u8,
        /// The bytes after the length byte.
        data: &'a [u8],
    },
    /// A known kind with a length its specification forbids. Only the
    /// Linux-compatible iterator yields this (Linux walks past such an
    /// option; see [`crate::linux`] for which kinds it then ignores); the
    /// strict iterator returns an error instead.
    Invalid {
        /// The kind byte.
        kind: u8,
        /// The bytes after the length byte.
        data: &'a [u8],
        /// What is wrong with it.
        reason: OptionErrorReason,
    },
}

impl TcpOption<'_> {
    /// The option's kind byte.
    pub fn kind(&self) -> u8 {
        match self {
            TcpOption::EndOfList => kind::EOL,
            TcpOption::NoOperation => kind::NOP,
            TcpOption::MaxSegmentSize(_) => kind::MSS,
            TcpOption::WindowScale(_) => kind::WINDOW_SCALE,
            TcpOption::SackPermitted => kind::SACK_PERMITTED,
            TcpOption::Sack(_) => kind::SACK,
            TcpOption::Timestamps(_) => kind::TIMESTAMPS,
            TcpOption::Md5Signature(_) => kind::MD5_SIGNATURE,
            TcpOption::UserTimeout(_) => kind::USER_TIMEOUT,
            TcpOption::TcpAo(_) => kind::TCP_AO,
            TcpOption::Mptcp(_) => kind::MPTCP,
            TcpOption::FastOpen(f) => f.kind,
            TcpOption::AccEcn(a) => a.kind(),
            TcpOption::Experimental(e) => e.kind,
            TcpOption::Unknown { kind, .. } | TcpOption::Invalid { kind, .. } => *kind,
        }
    }
}

/// An option together with where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedOption<'a> {
    /// Offset of the kind byte from the start of the option block.
    pub offset: usize,
    /// The kind byte.
    pub kind: u8,
    /// The bytes after the length byte (empty for EOL and NOP).
    pub data: &'a [u8],
    /// The decoded option.
    pub option: TcpOption<'a>,
}

impl ParsedOption<'_> {
    /// Bytes the option occupies on the wire (1 for EOL and NOP).
    pub fn wire_len(&self) -> usize {
        match self.kind {
            kind::EOL | kind::NOP => 1,
            _ => self.data.len() + 2,
        }
    }
}

/// One SACK block: `[left, right)` in sequence space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SackBlock {
    /// First sequence number of the block.
    pub left: u32,
    /// Sequence number just after the block.
    pub right: u32,
}

/// The blocks of a SACK option, borrowed from the packet (a multiple of 8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SackBlocks<'a> {
    bytes: &'a [u8],
}

impl<'a> SackBlocks<'a> {
    /// View `bytes` as SACK blocks; `None` unless its length is 8, 16, 24 or 32.
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let n = bytes.len();
        if n == 0 || n % 8 != 0 || n / 8 > kind::SACK_MAX_BLOCKS {
            return None;
        }
        Some(SackBlocks { bytes })
    }
    /// Number of blocks (1..=4).
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }
    /// Always false: a SACK option has at least one block.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    /// The raw bytes of the blocks.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Block `i`, if present.
    pub fn get(&self, i: usize) -> Option<SackBlock> {
        let start = i.checked_mul(8)?;
        let b = self.bytes.get(start..start.checked_add(8)?)?;
        Some(SackBlock {
            left: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            right: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
        })
    }
    /// Iterate the blocks in wire order.
    pub fn iter(&self) -> SackBlockIter<'a> {
        SackBlockIter {
            chunks: self.bytes.chunks_exact(8),
        }
    }
}

impl<'a> IntoIterator for SackBlocks<'a> {
    type Item = SackBlock;
    type IntoIter = SackBlockIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over [`SackBlocks`].
#[derive(Debug, Clone)]
pub struct SackBlockIter<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
}

impl Iterator for SackBlockIter<'_> {
    type Item = SackBlock;
    fn next(&mut self) -> Option<SackBlock> {
        let b = self.chunks.next()?;
        match *b {
            [a0, a1, a2, a3, b0, b1, b2, b3] => Some(SackBlock {
                left: u32::from_be_bytes([a0, a1, a2, a3]),
                right: u32::from_be_bytes([b0, b1, b2, b3]),
            }),
            _ => None,
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl ExactSizeIterator for SackBlockIter<'_> {}

/// The Timestamps option (RFC 7323).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Timestamps {
    /// TSval: the sender's clock.
    pub tsval: u32,
    /// TSecr: the echoed TSval (meaningful when ACK is set).
    pub tsecr: u32,
}

/// The User Timeout option (RFC 5482).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UserTimeout {
    /// Granularity bit: `true` means minutes, `false` seconds.
    pub minutes: bool,
    /// The 15-bit timeout value.
    pub timeout: u16,
}

impl UserTimeout {
    /// The timeout in seconds.
    pub fn as_secs(&self) -> u32 {
        if self.minutes {
            u32::from(self.timeout) * 60
        } else {
            u32::from(self.timeout)
        }
    }
}

/// The TCP Authentication Option (RFC 5925).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpAo<'a> {
    /// KeyID of the MKT used for this segment.
    pub key_id: u8,
    /// RNextKeyID: the key the sender wants to receive with.
    pub rnext_key_id: u8,
    /// The message authentication code.
    pub mac: &'a [u8],
}

/// A Multipath TCP option (RFC 8684).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mptcp<'a> {
    /// The subtype: the high nibble of the first data byte (0 = MP_CAPABLE,
    /// 1 = MP_JOIN, 2 = DSS, 3 = ADD_ADDR, 4 = REMOVE_ADDR, 5 = MP_PRIO,
    /// 6 = MP_FAIL, 7 = MP_FASTCLOSE, 8 = MP_TCPRST).
    pub subtype: u8,
    /// All bytes after the length byte, the subtype byte included.
    pub data: &'a [u8],
}

impl Mptcp<'_> {
    /// The RFC 8684 name of the subtype, if it has one.
    pub fn subtype_name(&self) -> Option<&'static str> {
        Some(match self.subtype {
            0 => "MP_CAPABLE",
            1 => "MP_JOIN",
            2 => "DSS",
            3 => "ADD_ADDR",
            4 => "REMOVE_ADDR",
            5 => "MP_PRIO",
            6 => "MP_FAIL",
            7 => "MP_FASTCLOSE",
            8 => "MP_TCPRST",
            _ => return None,
        })
    }
}

/// TCP Fast Open (RFC 7413): a cookie request when `cookie` is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastOpen<'a> {
    /// 34, or 254 for the experimental encoding (ExID 0xF989).
    pub kind: u8,
    /// The cookie; empty for a request.
    pub cookie: &'a [u8],
}

impl FastOpen<'_> {
    /// Whether this is a cookie request (no cookie).
    pub fn is_request(&self) -> bool {
        self.cookie.is_empty()
    }
}

/// Accurate ECN option (RFC 9768): up to three 24-bit byte counters.
///
/// Kind 172 (AccECN0) carries EE0B, ECEB, EE1B in that order; kind 174
/// (AccECN1) carries EE1B, ECEB, EE0B. A shorter option omits trailing fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccEcn<'a> {
    order1: bool,
    fields: &'a [u8],
}

impl<'a> AccEcn<'a> {
    /// View `fields` (0, 3, 6 or 9 bytes) of an AccECN option of `kind`.
    pub fn new(kind: u8, fields: &'a [u8]) -> Option<Self> {
        if !(kind == kind::ACCECN0 || kind == kind::ACCECN1)
            || fields.len() % 3 != 0
            || fields.len() > 9
        {
            return None;
        }
        Some(AccEcn {
            order1: kind == kind::ACCECN1,
            fields,
        })
    }
    /// 172 or 174.
    pub fn kind(&self) -> u8 {
        if self.order1 {
            kind::ACCECN1
        } else {
            kind::ACCECN0
        }
    }
    /// Number of counter fields present (0..=3).
    pub fn field_count(&self) -> usize {
        self.fields.len() / 3
    }
    /// Counter field `i` in wire order.
    pub fn field(&self, i: usize) -> Option<u32> {
        let start = i.checked_mul(3)?;
        match self.fields.get(start..start.checked_add(3)?)? {
            [a, b, c] => Some(u32::from_be_bytes([0, *a, *b, *c])),
            _ => None,
        }
    }
    /// Bytes received with ECT(0) (EE0B), if present.
    pub fn ee0b(&self) -> Option<u32> {
        self.field(if self.order1 { 2 } else { 0 })
    }
    /// Bytes received with CE (ECEB), if present.
    pub fn eceb(&self) -> Option<u32> {
        self.field(1)
    }
    /// Bytes received with ECT(1) (EE1B), if present.
    pub fn ee1b(&self) -> Option<u32> {
        self.field(if self.order1 { 0 } else { 2 })
    }
}

/// An experimental option (kind 253 or 254).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Experimental<'a> {
    /// 253 or 254.
    pub kind: u8,
    /// The 16-bit RFC 6994 ExID, when the option has at least 2 data bytes.
    /// (RFC 6994 also allows 32-bit ExIDs; their first 16 bits appear here
    /// and the rest at the start of `data`.)
    pub exid: Option<u16>,
    /// The bytes after the ExID (all data bytes when there is no ExID).
    pub data: &'a [u8],
}
