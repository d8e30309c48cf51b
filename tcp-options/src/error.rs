//! Errors. Reading (header, options) and writing (builder, rewrites) have
//! separate types; each says what was wrong and where.

use core::fmt;

/// The TCP header could not be viewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum HeaderError {
    /// Fewer than 20 bytes.
    #[error("segment of {len} bytes is shorter than the 20-byte TCP header")]
    Truncated {
        /// Length of the buffer.
        len: usize,
    },
    /// Data offset below 5 words.
    #[error("data offset {data_offset} words is below the minimum of 5")]
    DataOffsetTooSmall {
        /// The data offset field.
        data_offset: u8,
    },
    /// Data offset beyond the buffer.
    #[error("data offset {data_offset} words ({} bytes) runs past the {len}-byte segment", usize::from(*data_offset) * 4)]
    DataOffsetOverrun {
        /// The data offset field.
        data_offset: u8,
        /// Length of the buffer.
        len: usize,
    },
    /// A data offset above 15 words was asked for.
    #[error("data offset {data_offset} words does not fit the 4-bit field")]
    DataOffsetTooLarge {
        /// The requested value.
        data_offset: u8,
    },
}

/// What length a known option kind must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpectedLength {
    /// Exactly this length byte.
    Exactly(u8),
    /// At least this length byte.
    AtLeast(u8),
    /// SACK: 2 + 8n with n in 1..=4 (10, 18, 26 or 34).
    SackBlocks,
    /// Fast Open: 2 (a cookie request) or 2 + an even cookie length in 4..=16.
    FastOpen,
    /// AccECN: 2 + 3n with n in 0..=3 (2, 5, 8 or 11).
    AccEcn,
}

impl fmt::Display for ExpectedLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpectedLength::Exactly(n) => write!(f, "{n}"),
            ExpectedLength::AtLeast(n) => write!(f, "at least {n}"),
            ExpectedLength::SackBlocks => f.write_str("10, 18, 26 or 34"),
            ExpectedLength::FastOpen => f.write_str("2, or 6 to 18 and even"),
            ExpectedLength::AccEcn => f.write_str("2, 5, 8 or 11"),
        }
    }
}

/// Why an option record is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum OptionErrorReason {
    /// The kind byte is the last byte of the block: no length byte.
    #[error("length byte missing")]
    LengthMissing,
    /// The length byte is 0 or 1.
    #[error("length {length} is below 2")]
    LengthTooSmall {
        /// The length byte.
        length: u8,
    },
    /// The option runs past the end of the option block.
    #[error("length {length} runs past the option block ({available} bytes left)")]
    Overrun {
        /// The length byte.
        length: u8,
        /// Bytes from the kind byte to the end of the block.
        available: usize,
    },
    /// A known kind with a length its specification does not allow.
    #[error("length {length} is wrong for this kind (expected {expected})")]
    WrongLength {
        /// The length byte.
        length: u8,
        /// What the specification allows.
        expected: ExpectedLength,
    },
    /// Bytes after End of Option List that are not zero. This is a warning:
    /// the options before it are complete and valid.
    #[error("{count} non-zero byte(s) after end of option list")]
    NonZeroAfterEol {
        /// How many padding bytes are non-zero.
        count: usize,
    },
}

/// A malformed option, found by the strict policy.
///
/// `offset` counts from the first byte of the option block (add 20 for the
/// offset in the TCP header); `kind` is the kind byte of the bad option (for
/// [`OptionErrorReason::NonZeroAfterEol`], the first non-zero byte found).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("option kind {kind} at offset {offset}: {reason}")]
pub struct OptionError {
    /// Offset of the option's kind byte within the option block.
    pub offset: usize,
    /// The option kind.
    pub kind: u8,
    /// What is wrong.
    pub reason: OptionErrorReason,
}

impl OptionError {
    /// Whether this is only a warning (non-zero bytes after EOL): every
    /// option before it was read completely.
    pub fn is_warning(&self) -> bool {
        matches!(self.reason, OptionErrorReason::NonZeroAfterEol { .. })
    }
}

/// Why Linux drops a segment during its separate walk for signature options
/// (MD5, TCP-AO); see [`crate::linux::auth_options`].
///
/// A kernel built with MD5 or TCP-AO support runs this walk on every segment
/// for a listening or connected socket, whether or not the connection uses a
/// signature, and discards the segment on any of these errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum AuthOptionError {
    /// A record whose length byte is below 2 or runs past the block.
    #[error("option kind {kind} at offset {offset}: {reason}")]
    Framing {
        /// Offset of the kind byte in the option block.
        offset: usize,
        /// The kind byte.
        kind: u8,
        /// What is wrong with the record's length.
        reason: OptionErrorReason,
    },
    /// An MD5 signature option whose length is not 18.
    #[error("MD5 signature option at offset {offset} has length {length}, not 18")]
    Md5Length {
        /// Offset of the kind byte in the option block.
        offset: usize,
        /// The length byte.
        length: u8,
    },
    /// A TCP-AO option with no MAC byte (length 4 or less).
    #[error("TCP-AO option at offset {offset} has length {length}, below 5")]
    AoTooShort {
        /// Offset of the kind byte in the option block.
        offset: usize,
        /// The length byte.
        length: u8,
    },
    /// A second signature option (MD5 or TCP-AO) after one was found.
    #[error("second signature option (kind {kind}) at offset {offset}")]
    Duplicate {
        /// Offset of the second option's kind byte.
        offset: usize,
        /// Its kind (19 or 29).
        kind: u8,
    },
}

/// The option builder could not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum BuildError {
    /// The options need more than the 40 bytes a TCP header can hold.
    #[error("options need {needed} bytes, more than the 40 a TCP header can hold")]
    TooLong {
        /// Bytes the options would take.
        needed: usize,
    },
    /// The caller's buffer is too small.
    #[error("options need {needed} bytes but the buffer holds {available}")]
    BufferTooSmall {
        /// Bytes the options would take.
        needed: usize,
        /// Size of the buffer.
        available: usize,
    },
    /// A Fast Open cookie must be empty (a request) or of even length 4..=16.
    #[error("Fast Open cookie of {len} bytes (must be 0, or even and 4 to 16)")]
    InvalidFastOpenCookie {
        /// The cookie length.
        len: usize,
    },
    /// More SACK blocks than fit in one option (4).
    #[error("{count} SACK blocks, at most 4 fit")]
    TooManySackBlocks {
        /// Blocks asked for.
        count: usize,
    },
    /// An AccECN option has at most 3 counter fields (RFC 9768 section 3.2.3).
    #[error("an AccECN option with {fields} counter fields (at most 3)")]
    TooManyAccEcnFields {
        /// Fields asked for.
        fields: u8,
    },
}

/// An in-place rewrite could not be done; the segment is left unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum RewriteError {
    /// The segment's header is invalid.
    #[error("invalid TCP header: {0}")]
    Header(#[from] HeaderError),
    /// The option block is malformed where the rewrite needs to walk it.
    #[error("malformed options: {0}")]
    Options(#[from] OptionError),
    /// The option to change is not in the segment.
    #[error("no option of kind {kind} in the segment")]
    NotPresent {
        /// The kind looked for.
        kind: u8,
    },
}

/// A whole IP packet could not be read as one TCP segment
/// ([`crate::PacketRepr::parse`], [`crate::IpRepr::parse`] and the
/// per-family parsers). Offsets count from the first byte of the IP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum PacketError {
    /// The buffer ends before the IP header does.
    #[error("the buffer holds {len} bytes, the IP header needs {needed}")]
    Truncated {
        /// Bytes the header needs (1 for the version nibble of an empty
        /// buffer, 20 or the IHL for IPv4, 40 for IPv6).
        needed: usize,
        /// Length of the buffer.
        len: usize,
    },
    /// The version nibble is neither 4 nor 6.
    #[error("IP version {version} at offset 0 is neither 4 nor 6")]
    Version {
        /// The version nibble.
        version: u8,
    },
    /// An IPv4 header length (IHL) below 5 words.
    #[error("IPv4 header length {ihl} words at offset 0 is below the minimum of 5")]
    Ipv4HeaderLen {
        /// The IHL field.
        ihl: u8,
    },
    /// An IPv4 total length shorter than the IPv4 header.
    #[error(
        "IPv4 total length {total_len} at offset 2 is shorter than the {header_len}-byte header"
    )]
    Ipv4TotalLen {
        /// The total length field.
        total_len: u16,
        /// The header length from the IHL.
        header_len: usize,
    },
    /// The IP length (IPv4 total length, or 40 plus the IPv6 payload
    /// length) runs past the buffer.
    #[error("the IP header says {ip_len} bytes, the buffer holds {len}")]
    LengthOverrun {
        /// The packet length from the IP header.
        ip_len: usize,
        /// Length of the buffer.
        len: usize,
    },
    /// A fragment (IPv4 MF flag or fragment offset, or an IPv6 fragment
    /// header with either): no whole TCP segment.
    #[error("a fragment (offset {offset} bytes, more fragments: {more}), not a whole segment")]
    Fragment {
        /// The fragment offset in bytes.
        offset: u16,
        /// The MF / M flag.
        more: bool,
    },
    /// An IPv6 extension header runs past the packet.
    #[error("IPv6 extension header of type {header} at offset {offset} runs past the packet")]
    ExtensionOverrun {
        /// The header's type (the next header value that named it).
        header: u8,
        /// Offset of the header.
        offset: usize,
    },
    /// The upper-layer protocol is not TCP (6).
    #[error("protocol {protocol} at offset {offset} is not TCP (6)")]
    NotTcp {
        /// The IPv4 protocol, or the IPv6 next header where the walk over
        /// extension headers ended.
        protocol: u8,
        /// Offset of the upper-layer header.
        offset: usize,
    },
    /// A quoted packet ([`crate::quote::QuotedPacket`]) holds fewer TCP
    /// bytes than the 8 (ports and sequence number) every ICMP error
    /// quotes.
    #[error("the quote holds {len} bytes of the TCP segment at offset {offset}, fewer than 8 (ports and sequence number)")]
    QuoteTooShort {
        /// Offset of the TCP segment.
        offset: usize,
        /// TCP bytes quoted.
        len: usize,
    },
    /// The TCP header is invalid.
    #[error("TCP header at offset {offset}: {error}")]
    Tcp {
        /// Offset of the TCP header.
        offset: usize,
        /// What is wrong with it.
        #[source]
        error: HeaderError,
    },
    /// The IPv4 header checksum is wrong (checked by
    /// [`crate::PacketRepr::parse_verified`] only).
    #[error("IPv4 header checksum {stored:#06x} at offset 10, correct is {computed:#06x}")]
    Ipv4Checksum {
        /// The checksum field.
        stored: u16,
        /// The correct checksum.
        computed: u16,
    },
    /// The TCP checksum is wrong (checked by
    /// [`crate::PacketRepr::parse_verified`] only).
    #[error("TCP checksum {stored:#06x} at offset {}, correct is {computed:#06x}", offset + 16)]
    TcpChecksum {
        /// Offset of the TCP header (the checksum field is 16 bytes on).
        offset: usize,
        /// The checksum field.
        stored: u16,
        /// The correct checksum.
        computed: u16,
    },
}

/// A representation could not be written ([`crate::TcpRepr::emit`],
/// [`crate::PacketRepr::emit`] and the IP emitters). Nothing is written
/// on error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum EmitError {
    /// A TCP option block that is not whole 32-bit words or is longer than
    /// 40 bytes.
    #[error("TCP option block of {len} bytes (must be a multiple of 4, at most 40)")]
    TcpOptionsLen {
        /// Its length.
        len: usize,
    },
    /// IPv4 options that are not whole 32-bit words or longer than 40 bytes.
    #[error("IPv4 options of {len} bytes (must be a multiple of 4, at most 40)")]
    Ipv4OptionsLen {
        /// Their length.
        len: usize,
    },
    /// An IPv6 flow label above 20 bits.
    #[error("IPv6 flow label {flow_label:#x} does not fit 20 bits")]
    FlowLabel {
        /// The flow label.
        flow_label: u32,
    },
    /// IPv6 extension headers that are not one whole chain: the walk from
    /// the next header field stops (or a header overruns) at `offset`,
    /// not at their end.
    #[error("IPv6 extension headers of {len} bytes: the chain stops at offset {offset} of them")]
    ExtensionChain {
        /// Where the chain stops or the header that runs past the end,
        /// from the first extension header.
        offset: usize,
        /// Length of the extension headers.
        len: usize,
    },
    /// IPv6 extension headers holding a fragment header that makes the
    /// packet a fragment (a parser would refuse it).
    #[error(
        "IPv6 extension headers make a fragment (offset {offset} bytes, more fragments: {more})"
    )]
    Fragment {
        /// The fragment offset in bytes.
        offset: u16,
        /// The M flag.
        more: bool,
    },
    /// The IP header names a protocol other than TCP (6) before a TCP segment.
    #[error("the IP header says protocol {protocol}, not TCP (6)")]
    NotTcp {
        /// The IPv4 protocol or the IPv6 upper-layer next header.
        protocol: u8,
    },
    /// More bytes than a length field can hold (IPv4 total length, IPv6
    /// payload length, or the IPv4 pseudo-header's TCP length: 65535).
    #[error("{len} bytes do not fit a length field of at most {max}")]
    TooLong {
        /// Bytes to describe.
        len: usize,
        /// The most the field can say.
        max: usize,
    },
    /// The caller's buffer is too small.
    #[error("{needed} bytes to write, the buffer holds {available}")]
    BufferTooSmall {
        /// Bytes the packet or segment takes.
        needed: usize,
        /// Size of the buffer.
        available: usize,
    },
}
