//! The netfilter targets that rewrite TCP options, byte for byte as the
//! Linux modules do: `TCPMSS` (`xt_TCPMSS`: `--set-mss`,
//! `--clamp-mss-to-pmtu`) and `TCPOPTSTRIP` (`xt_TCPOPTSTRIP`), and the
//! `-p tcp --tcp-flags SYN,RST SYN` match a `TCPMSS` rule must carry
//! (`xt_tcpudp`).
//!
//! Each function takes a whole IP packet (IPv4 or IPv6, starting at the IP
//! header) in the caller's buffer, finds the TCP header as the kernel does,
//! and returns a [`Verdict`]: the packet goes on (with what was changed) or
//! the kernel drops it (with why). A [`NetfilterError`] means the bytes are
//! not a packet the rule would see (not TCP, shorter than its IP length);
//! nothing is changed then.
//!
//! # What the modules do (Linux 6.x, net/netfilter)
//!
//! Both walk the options with their own `optlen()`, not with the walk of
//! `tcp_parse_options` ([`crate::linux`]): a kind of EOL or NOP, or a
//! length byte of 0, steps **one** byte; any other length byte, including 1
//! and lengths that run past the header, steps that many bytes. EOL does not
//! end the walk, so options after it are found.
//!
//! `TCPMSS`:
//! - A fragment other than the first is left alone; fewer than 20 bytes of
//!   TCP, a data offset below 5 words or past the packet: dropped.
//! - The MSS to set is `--set-mss N`, or with `--clamp-mss-to-pmtu` the
//!   smaller of the route's MTU and the reverse route's MTU less 40 (IPv4)
//!   or 60 (IPv6), whatever IP options or extension headers the packet has;
//!   an MTU not above that is an "invalid path-MTU" and the packet is
//!   dropped. (An MTU above 65575 gives an MSS that wraps in the module's
//!   16-bit variable; so it does here.)
//! - The walk looks at offsets 20 to header length - 4 only. The **first**
//!   option with kind 2 and length byte 4 decides: if its MSS is not above
//!   the new one, nothing changes (a later MSS option is not looked at);
//!   otherwise it is lowered and the checksum updated as if the two bytes
//!   were one aligned 16-bit word, which gives a wrong checksum when the
//!   MSS value sits at an odd offset (the module does so; so does this).
//! - No such option: when the segment carries payload, or the header is
//!   already 60 bytes, nothing changes. Otherwise an MSS option is
//!   **inserted** at the front of the options: `min(MSS, 536)` for IPv4,
//!   `min(MSS, 1220)` for IPv6 (the defaults a host assumes without one),
//!   the data offset grows by one word, the IPv4 total length (and header
//!   checksum) or the IPv6 payload length by 4.
//!
//! `TCPOPTSTRIP`: a fragment other than the first is left alone; fewer than
//! 20 bytes of TCP, a data offset below 5 words or one past the packet:
//! dropped. The walk looks at offsets 20 to header length - 2; it stops at
//! an option that would run past the header; every option whose kind is in
//! the set is overwritten with NOPs for the `optlen()` bytes (so a record
//! with length byte 1 loses only its kind byte), on every segment.
//!
//! The checksum is updated incrementally with the kernel's own arithmetic
//! (`csum_replace4` / `csum_replace2`), so a checksum that was wrong stays
//! wrong by the same amount, and 0xFFFF becomes 0x0000 where the kernel's
//! folding makes it so.
//!
//! ```
//! use tcp_options::netfilter::{tcpmss, MssChange, MssTarget, Verdict};
//! // An IPv4 SYN with no options, and 4 spare bytes in the buffer.
//! let mut buf = [0u8; 44];
//! buf[..20].copy_from_slice(&[0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0,
//!                             198, 18, 1, 2, 198, 19, 2, 2]);
//! buf[32] = 0x50; // data offset 5
//! buf[33] = 0x02; // SYN
//! let v = tcpmss(&mut buf, MssTarget::Set(1400)).unwrap();
//! assert_eq!(v, Verdict::Accept(MssChange::Inserted { mss: 536, len: 44 }));
//! assert_eq!(&buf[40..44], &[2, 4, 0x02, 0x18]);
//! ```

use crate::header::HEADER_LEN;
use crate::kind;

/// What the kernel does with the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict<T> {
    /// The packet goes on (`XT_CONTINUE`), changed as `T` says.
    Accept(T),
    /// The packet is dropped (`NF_DROP`, or a match's hot drop).
    Drop(DropReason),
}

/// Why the kernel drops a packet here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum DropReason {
    /// Fewer than 20 bytes of TCP header in the packet.
    #[error("only {len} bytes of TCP, fewer than the 20-byte header")]
    TcpTruncated {
        /// Bytes from the TCP header to the end of the packet.
        len: usize,
    },
    /// A data offset below 5 words.
    #[error("data offset {data_offset} words is below 5")]
    DataOffsetTooSmall {
        /// The data offset field.
        data_offset: u8,
    },
    /// A data offset past the end of the packet.
    #[error("data offset {data_offset} words runs past the {len} bytes of TCP")]
    DataOffsetPastPacket {
        /// The data offset field.
        data_offset: u8,
        /// Bytes from the TCP header to the end of the packet.
        len: usize,
    },
    /// `--clamp-mss-to-pmtu` with a path MTU not above the IP and TCP
    /// headers ("unknown or invalid path-MTU").
    #[error("invalid path MTU {mtu}")]
    InvalidPathMtu {
        /// The path MTU.
        mtu: u32,
    },
    /// The `tcp` match drops a fragment at offset 8 bytes (fragment offset
    /// field 1), which could overwrite the TCP flags.
    #[error("TCP fragment at offset 8 bytes")]
    TinyFragment,
}

/// The bytes are not a packet these rules would see; nothing was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum NetfilterError {
    /// Not IPv4 or IPv6 (version nibble shown), or the IP header is cut short.
    #[error("not a whole IPv4 or IPv6 header (version {version}, {len} bytes)")]
    NotIp {
        /// The version nibble (0 when the buffer is empty).
        version: u8,
        /// Length of the buffer.
        len: usize,
    },
    /// The IP length field says more bytes than the buffer holds.
    #[error("IP length {ip_len} is more than the {len} bytes in the buffer")]
    Truncated {
        /// The packet length from the IP header.
        ip_len: usize,
        /// Length of the buffer.
        len: usize,
    },
    /// The upper-layer protocol is not TCP (the protocol or last next
    /// header shown), or an IPv6 jumbogram (payload length 0).
    #[error("not TCP (protocol {protocol})")]
    NotTcp {
        /// The IPv4 protocol or the IPv6 next header where the walk ended.
        protocol: u8,
    },
    /// TCPMSS must insert an MSS option but the buffer has no 4 spare
    /// bytes after the packet.
    #[error("no room to insert the MSS option: {needed} bytes needed, buffer holds {available}")]
    NoRoom {
        /// Packet length plus 4.
        needed: usize,
        /// Length of the buffer.
        available: usize,
    },
}

/// The IP version of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpFamily {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// Where the TCP header of an IP packet is, as netfilter finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TcpLocation {
    /// IPv4 or IPv6.
    pub family: IpFamily,
    /// Offset of the TCP header from the start of the IP header.
    pub tcp_offset: usize,
    /// Packet length from the IP header (IPv4 total length; IPv6 40 plus
    /// the payload length). Bytes after it in the buffer are not packet.
    pub len: usize,
    /// Fragment offset (IPv4: the 13-bit field, in 8-byte units; IPv6: in
    /// bytes); 0 for an unfragmented packet or a first fragment.
    pub fragment_offset: u16,
}

impl TcpLocation {
    /// Bytes of the IP and TCP headers `--clamp-mss-to-pmtu` subtracts
    /// from the MTU: 40 for IPv4, 60 for IPv6.
    pub const fn min_headers(&self) -> u32 {
        match self.family {
            IpFamily::V4 => 40,
            IpFamily::V6 => 60,
        }
    }
}

use crate::ip::PROTOCOL_TCP as IPPROTO_TCP;

/// Find the TCP header of `packet` (module docs). IPv6 extension headers
/// (hop-by-hop, routing, destination options, AH, fragment) are stepped
/// over; a fragment header with a non-zero offset ends the walk there.
pub fn locate(packet: &[u8]) -> Result<TcpLocation, NetfilterError> {
    let len = packet.len();
    let version = packet.first().map_or(0, |b| b >> 4);
    let not_ip = NetfilterError::NotIp { version, len };
    match version {
        4 => {
            let ihl = usize::from(packet.first().map_or(0, |b| b & 0x0f)) * 4;
            if ihl < 20 || ihl > len {
                return Err(not_ip);
            }
            let ip_len = usize::from(be16(packet, 2).ok_or(not_ip)?);
            if ip_len > len {
                return Err(NetfilterError::Truncated { ip_len, len });
            }
            if ip_len < ihl {
                return Err(not_ip);
            }
            let protocol = packet.get(9).copied().ok_or(not_ip)?;
            if protocol != IPPROTO_TCP {
                return Err(NetfilterError::NotTcp { protocol });
            }
            let frag = be16(packet, 6).ok_or(not_ip)? & 0x1fff;
            Ok(TcpLocation {
                family: IpFamily::V4,
                tcp_offset: ihl,
                len: ip_len,
                fragment_offset: frag,
            })
        }
        6 => {
            if len < 40 {
                return Err(not_ip);
            }
            let payload = usize::from(be16(packet, 4).ok_or(not_ip)?);
            if payload == 0 {
                return Err(NetfilterError::NotTcp { protocol: 0 });
            }
            let ip_len = 40 + payload;
            if ip_len > len {
                return Err(NetfilterError::Truncated { ip_len, len });
            }
            let first = packet.get(6).copied().ok_or(not_ip)?;
            let walk =
                ipv6_extensions(packet, first, 40, ip_len).map_err(|e| NetfilterError::NotTcp {
                    protocol: e.reported,
                })?;
            let (next, at, fragment_offset) = (walk.next, walk.offset, walk.fragment_offset);
            if next != IPPROTO_TCP {
                return Err(NetfilterError::NotTcp { protocol: next });
            }
            Ok(TcpLocation {
                family: IpFamily::V6,
                tcp_offset: at,
                len: ip_len,
                fragment_offset,
            })
        }
        _ => Err(not_ip),
    }
}

/// Where the walk over IPv6 extension headers stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExtensionWalk {
    /// The next header value there: the upper-layer protocol, or for a
    /// later fragment the fragment header's next header.
    pub(crate) next: u8,
    /// Where the walk stopped: the upper-layer header, or for a later
    /// fragment its fragment header.
    pub(crate) offset: usize,
    /// A later fragment's offset in bytes; 0 otherwise.
    pub(crate) fragment_offset: u16,
    /// Whether a fragment header on the way had its M (more) flag set.
    pub(crate) more_fragments: bool,
}

/// An extension header that runs past the end of the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExtensionOverrun {
    /// Offset of the header.
    pub(crate) offset: usize,
    /// Its type (the next header value that named it).
    pub(crate) header: u8,
    /// The protocol [`locate`] reports for it in [`NetfilterError::NotTcp`].
    pub(crate) reported: u8,
}

/// The one walk over IPv6 extension headers (hop-by-hop 0, routing 43,
/// fragment 44, AH 51, destination options 60), starting at `start` in
/// `packet` with header type `first`, where no header may end after `end`.
/// A fragment header with a non-zero offset ends the walk there. Used by
/// [`locate`] and by [`crate::ip::Ipv6Repr`].
pub(crate) fn ipv6_extensions(
    packet: &[u8],
    first: u8,
    start: usize,
    end: usize,
) -> Result<ExtensionWalk, ExtensionOverrun> {
    let mut next = first;
    let mut at = start;
    let mut fragment_offset = 0u16;
    let mut more_fragments = false;
    loop {
        if !matches!(next, 0 | 43 | 44 | 51 | 60) {
            break;
        }
        let overrun = ExtensionOverrun {
            offset: at,
            header: next,
            reported: next,
        };
        let following = packet.get(at).copied().ok_or(overrun)?;
        let hdr_len = match next {
            51 => packet
                .get(at + 1)
                .map(|l| (usize::from(*l) + 2) * 4)
                .ok_or(overrun)?,
            44 => {
                let word = be16(packet, at + 2).ok_or(overrun)?;
                more_fragments |= word & 1 != 0;
                let off = word & !0x7;
                if off != 0 {
                    // A later fragment: its protocol is the fragment
                    // header's next header.
                    fragment_offset = off;
                    next = following;
                    break;
                }
                8
            }
            _ => packet
                .get(at + 1)
                .map(|l| (usize::from(*l) + 1) * 8)
                .ok_or(overrun)?,
        };
        next = following;
        at += hdr_len;
        if at > end {
            return Err(ExtensionOverrun {
                reported: next,
                ..overrun
            });
        }
    }
    Ok(ExtensionWalk {
        next,
        offset: at,
        fragment_offset,
        more_fragments,
    })
}

/// The `tcp` match of `-p tcp --tcp-flags SYN,RST SYN` (`xt_tcpudp`):
/// `Accept(true)` for a segment with SYN set and RST clear. A fragment
/// other than the first does not match; one at offset 8 bytes is dropped,
/// as is a packet with fewer than 20 bytes of TCP header.
pub fn syn_match(packet: &[u8]) -> Result<Verdict<bool>, NetfilterError> {
    let at = locate(packet)?;
    if at.fragment_offset != 0 {
        if at.family == IpFamily::V4 && at.fragment_offset == 1 {
            return Ok(Verdict::Drop(DropReason::TinyFragment));
        }
        return Ok(Verdict::Accept(false));
    }
    let tcp_len = at.len.saturating_sub(at.tcp_offset);
    if tcp_len < HEADER_LEN {
        return Ok(Verdict::Drop(DropReason::TcpTruncated { len: tcp_len }));
    }
    let flags = packet.get(at.tcp_offset + 13).copied().unwrap_or(0);
    Ok(Verdict::Accept(flags & 0x06 == 0x02))
}

/// The MSS a `TCPMSS` rule sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MssTarget {
    /// `--set-mss N`.
    Set(u16),
    /// `--clamp-mss-to-pmtu`, given the smaller of the route's and the
    /// reverse route's MTU.
    ClampToPmtu {
        /// The path MTU the kernel would find.
        mtu: u32,
    },
}

/// Why `TCPMSS` left a packet as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MssKept {
    /// A fragment other than the first.
    Fragment,
    /// The first MSS option's value is not above the new MSS.
    NotAbove {
        /// Offset of the option in the TCP header.
        offset: usize,
        /// Its MSS.
        mss: u16,
    },
    /// No MSS option, and the segment carries payload.
    Payload,
    /// No MSS option, and the header is already 60 bytes.
    HeaderFull,
}

/// What `TCPMSS` did to a packet it let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MssChange {
    /// Nothing changed.
    Kept(MssKept),
    /// The MSS option at `offset` (in the TCP header) was lowered.
    Lowered {
        /// Offset of the option's kind byte in the TCP header.
        offset: usize,
        /// The MSS before.
        from: u16,
        /// The MSS after.
        to: u16,
    },
    /// An MSS option was inserted; the packet is now `len` bytes.
    Inserted {
        /// The MSS written.
        mss: u16,
        /// The new packet length.
        len: usize,
    },
}

/// The `TCPMSS` target on `buf`, whose IP packet is followed by at least 4
/// spare bytes when an option may have to be inserted (module docs). Apply
/// it only where the rule's match holds ([`syn_match`]).
pub fn tcpmss(buf: &mut [u8], target: MssTarget) -> Result<Verdict<MssChange>, NetfilterError> {
    let at = locate(buf)?;
    if at.fragment_offset != 0 {
        return Ok(Verdict::Accept(MssChange::Kept(MssKept::Fragment)));
    }
    let t0 = at.tcp_offset;
    let len = at.len - t0;
    if len < HEADER_LEN {
        return Ok(Verdict::Drop(DropReason::TcpTruncated { len }));
    }
    let data_offset = buf.get(t0 + 12).map_or(0, |b| b >> 4);
    let hdrlen = usize::from(data_offset) * 4;
    if hdrlen < HEADER_LEN {
        return Ok(Verdict::Drop(DropReason::DataOffsetTooSmall {
            data_offset,
        }));
    }
    if len < hdrlen {
        return Ok(Verdict::Drop(DropReason::DataOffsetPastPacket {
            data_offset,
            len,
        }));
    }
    let newmss = match target {
        MssTarget::Set(m) => m,
        MssTarget::ClampToPmtu { mtu } => {
            let min = at.min_headers();
            if mtu <= min {
                return Ok(Verdict::Drop(DropReason::InvalidPathMtu { mtu }));
            }
            // The module stores this in a u16: it wraps above 65535.
            ((mtu - min) & 0xffff) as u16
        }
    };
    let Some(tcp) = buf.get_mut(t0..t0 + len) else {
        return Err(NetfilterError::Truncated {
            ip_len: at.len,
            len: 0,
        });
    };
    let mut i = HEADER_LEN;
    while i + 4 <= hdrlen {
        if let [kind::MSS, 4, hi, lo] = *tcp.get(i..i + 4).unwrap_or(&[]) {
            let old = u16::from_be_bytes([hi, lo]);
            if old <= newmss {
                return Ok(Verdict::Accept(MssChange::Kept(MssKept::NotAbove {
                    offset: i,
                    mss: old,
                })));
            }
            write(tcp, i + 2, &newmss.to_be_bytes());
            // Updated as one aligned word, whatever the offset's parity.
            let c = kcsum::replace4(check(tcp), u32::from(old), u32::from(newmss));
            set_check(tcp, c);
            return Ok(Verdict::Accept(MssChange::Lowered {
                offset: i,
                from: old,
                to: newmss,
            }));
        }
        i += optlen(tcp, i);
    }
    if len > hdrlen {
        return Ok(Verdict::Accept(MssChange::Kept(MssKept::Payload)));
    }
    if hdrlen >= crate::header::MAX_HEADER_LEN {
        return Ok(Verdict::Accept(MssChange::Kept(MssKept::HeaderFull)));
    }
    let available = buf.len();
    let needed = at.len + 4;
    if available < needed {
        return Err(NetfilterError::NoRoom { needed, available });
    }
    let mss = match at.family {
        IpFamily::V4 => newmss.min(536),
        IpFamily::V6 => newmss.min(1220),
    };
    let Some(tcp) = buf.get_mut(t0..t0 + len + 4) else {
        return Err(NetfilterError::NoRoom { needed, available });
    };
    tcp.copy_within(HEADER_LEN..len, HEADER_LEN + 4);
    // len is at most 56 here: no truncation.
    let mut c = kcsum::replace4(check(tcp), len as u32, (len + 4) as u32);
    let opt = [kind::MSS, kind::MSS_LEN, (mss >> 8) as u8, mss as u8];
    write(tcp, HEADER_LEN, &opt);
    c = kcsum::replace4(c, 0, u32::from_be_bytes(opt));
    let old_word = be16(tcp, 12).unwrap_or(0);
    let new_word = old_word.wrapping_add(0x1000);
    write(tcp, 12, &new_word.to_be_bytes());
    c = kcsum::replace4(c, u32::from(old_word), u32::from(new_word));
    set_check(tcp, c);
    match at.family {
        IpFamily::V4 => {
            let old_len = be16(buf, 2).unwrap_or(0);
            let new_len = old_len.wrapping_add(4);
            let ip_check = be16(buf, 10).unwrap_or(0);
            write(
                buf,
                10,
                &kcsum::replace2(ip_check, old_len, new_len).to_be_bytes(),
            );
            write(buf, 2, &new_len.to_be_bytes());
        }
        IpFamily::V6 => {
            let new_len = be16(buf, 4).unwrap_or(0).wrapping_add(4);
            write(buf, 4, &new_len.to_be_bytes());
        }
    }
    Ok(Verdict::Accept(MssChange::Inserted { mss, len: needed }))
}

/// A set of option kinds for `TCPOPTSTRIP` (the module's 256-bit map).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StripSet {
    bits: [u32; 8],
}

/// The option names `iptables -j TCPOPTSTRIP --strip-options` accepts,
/// with their kinds.
pub const STRIP_NAMES: [(&str, u8); 6] = [
    ("wscale", kind::WINDOW_SCALE),
    ("mss", kind::MSS),
    ("sack-permitted", kind::SACK_PERMITTED),
    ("sack", kind::SACK),
    ("timestamp", kind::TIMESTAMPS),
    ("md5", kind::MD5_SIGNATURE),
];

/// A `--strip-options` list that cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum StripListError {
    /// An item that is neither a known name nor a number 0..=255.
    #[error("item {index} of the option list is neither an option name nor a kind 0..=255")]
    BadItem {
        /// Position of the item in the list, from 0.
        index: usize,
    },
    /// Kind 0 (EOL) or 1 (NOP): iptables refuses them ("Option value may
    /// not be 0 or 1").
    #[error("item {index} of the option list is kind {kind}: EOL and NOP cannot be stripped")]
    EolOrNop {
        /// Position of the item in the list, from 0.
        index: usize,
        /// The kind.
        kind: u8,
    },
}

impl StripSet {
    /// No kinds.
    pub const fn new() -> Self {
        StripSet { bits: [0; 8] }
    }

    /// The same set with `kind` added.
    pub const fn with(mut self, kind: u8) -> Self {
        self.bits[(kind / 32) as usize] |= 1 << (kind % 32);
        self
    }

    /// The set of `kinds`.
    pub fn from_kinds(kinds: &[u8]) -> Self {
        kinds.iter().fold(StripSet::new(), |s, k| s.with(*k))
    }

    /// Whether `kind` is in the set.
    pub const fn contains(&self, kind: u8) -> bool {
        self.bits[(kind / 32) as usize] & (1 << (kind % 32)) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    /// The kinds in the set, in increasing order.
    pub fn kinds(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|k| self.contains(*k))
    }

    /// Read a comma-separated list as iptables does: the names of
    /// [`STRIP_NAMES`] or kind numbers 2..=255 (decimal, or hex with `0x`).
    /// ([`StripSet::from_kinds`] takes any kind, 0 and 1 included, as the
    /// module itself would.)
    ///
    /// ```
    /// use tcp_options::netfilter::StripSet;
    /// let s = StripSet::parse("wscale,sack-permitted,30").unwrap();
    /// assert_eq!(s.kinds().collect::<Vec<_>>(), [3, 4, 30]);
    /// assert!(StripSet::parse("wscale,nope").is_err());
    /// ```
    pub fn parse(list: &str) -> Result<Self, StripListError> {
        let mut set = StripSet::new();
        for (index, item) in list.split(',').enumerate() {
            let item = item.trim();
            let kind = STRIP_NAMES
                .iter()
                .find(|(n, _)| *n == item)
                .map(|(_, k)| *k)
                .or_else(|| match item.strip_prefix("0x") {
                    Some(hex) => u8::from_str_radix(hex, 16).ok(),
                    None => item.parse::<u8>().ok(),
                })
                .ok_or(StripListError::BadItem { index })?;
            if kind <= kind::NOP {
                return Err(StripListError::EolOrNop { index, kind });
            }
            set = set.with(kind);
        }
        Ok(set)
    }
}

/// The `TCPOPTSTRIP` target on `packet` (module docs): every option whose
/// kind is in `set` becomes NOPs, on any segment. Returns how many options
/// were stripped.
pub fn tcpoptstrip(packet: &mut [u8], set: &StripSet) -> Result<Verdict<usize>, NetfilterError> {
    let at = locate(packet)?;
    if at.fragment_offset != 0 {
        return Ok(Verdict::Accept(0));
    }
    let t0 = at.tcp_offset;
    let len = at.len - t0;
    if len < HEADER_LEN {
        return Ok(Verdict::Drop(DropReason::TcpTruncated { len }));
    }
    let data_offset = packet.get(t0 + 12).map_or(0, |b| b >> 4);
    let hdrlen = usize::from(data_offset) * 4;
    if hdrlen < HEADER_LEN {
        return Ok(Verdict::Drop(DropReason::DataOffsetTooSmall {
            data_offset,
        }));
    }
    if hdrlen > len {
        return Ok(Verdict::Drop(DropReason::DataOffsetPastPacket {
            data_offset,
            len,
        }));
    }
    let Some(tcp) = packet.get_mut(t0..t0 + hdrlen) else {
        return Ok(Verdict::Drop(DropReason::DataOffsetPastPacket {
            data_offset,
            len,
        }));
    };
    let mut c = check(tcp);
    let mut stripped = 0;
    let mut i = HEADER_LEN;
    while i + 1 < hdrlen {
        let optl = optlen(tcp, i);
        if i + optl > hdrlen {
            break;
        }
        if set.contains(tcp.get(i).copied().unwrap_or(0)) {
            for j in i..i + optl {
                let (mut o, mut n) = (u32::from(tcp.get(j).copied().unwrap_or(0)), 1u32);
                if j % 2 == 0 {
                    o <<= 8;
                    n <<= 8;
                }
                c = kcsum::replace4(c, o, n);
                if let Some(b) = tcp.get_mut(j) {
                    *b = kind::NOP;
                }
            }
            stripped += 1;
        }
        i += optl;
    }
    if stripped > 0 {
        set_check(tcp, c);
    }
    Ok(Verdict::Accept(stripped))
}

/// The modules' step over the option at `i` (module docs).
fn optlen(tcp: &[u8], i: usize) -> usize {
    let kind = tcp.get(i).copied().unwrap_or(0);
    let len = tcp.get(i + 1).copied().unwrap_or(0);
    if kind <= kind::NOP || len == 0 {
        1
    } else {
        usize::from(len)
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at.checked_add(2)?)? {
        [x, y] => Some(u16::from_be_bytes([*x, *y])),
        _ => None,
    }
}

fn write(b: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(d) = b.get_mut(at..at + bytes.len()) {
        d.copy_from_slice(bytes);
    }
}

fn check(tcp: &[u8]) -> u16 {
    be16(tcp, 16).unwrap_or(0)
}

fn set_check(tcp: &mut [u8], c: u16) {
    write(tcp, 16, &c.to_be_bytes());
}

/// The kernel's checksum helpers (include/net/checksum.h), computed on
/// big-endian values: one's complement sums commute with the byte order up
/// to the same representation of zero, so the stored result is the same.
pub(crate) mod kcsum {
    /// `csum_add`: 32-bit one's complement addition.
    fn add32(a: u32, b: u32) -> u32 {
        let (s, carry) = a.overflowing_add(b);
        s.wrapping_add(u32::from(carry))
    }

    /// `csum_fold`: fold to 16 bits and complement.
    fn fold(x: u32) -> u16 {
        let s = (x & 0xffff) + (x >> 16);
        let s = (s & 0xffff) + (s >> 16);
        !(s as u16)
    }

    /// `csum_replace4` (and `inet_proto_csum_replace2/4` on a packet
    /// whose checksum is not offloaded).
    pub(crate) fn replace4(sum: u16, from: u32, to: u32) -> u16 {
        fold(add32(add32(!u32::from(sum), !from), to))
    }

    /// `csum16_add`: 16-bit one's complement addition.
    fn add16(a: u16, b: u16) -> u16 {
        let r = a.wrapping_add(b);
        r.wrapping_add(u16::from(r < b))
    }

    /// `csum_replace2`: the 16-bit form (used for the IPv4 header).
    pub(crate) fn replace2(sum: u16, old: u16, new: u16) -> u16 {
        !add16(add16(!sum, !old), new)
    }
}
