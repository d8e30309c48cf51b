//! Zero-copy TCP header and option parsing, building and in-place rewriting,
//! `no_std`, no allocator, no `unsafe`.
//!
//! # API overview
//!
//! | what | items |
//! |------|-------|
//! | header view | [`TcpPacket::new_checked`] (checks length and data offset) gives [`TcpPacket::header`] (a zerocopy [`TcpHeader`]: ports, seq/ack, [`Flags`], window, checksum, urgent), [`TcpPacket::options`] (the option block), [`TcpPacket::payload`] |
//! | options, strict | [`StrictOptions`] (or [`TcpPacket::options_strict`]): `Iterator<Item = Result<ParsedOption, OptionError>>`; an [`OptionError`] has `offset` (in the option block), `kind`, `reason` ([`OptionErrorReason`]); ends after the first error; non-zero bytes after EOL are a final `Err` with [`OptionError::is_warning`] |
//! | options, Linux | [`LinuxOptions`] (or [`TcpPacket::options_linux`]): `Iterator<Item = ParsedOption>`, never errors; [`LinuxRepr::parse`] gives what the kernel records (rules in [`linux`]); [`ParseContext::signature_build`] ([`SignatureBuild`]: TCP-AO, MD5 only, neither) picks the kernel build's signature walk, [`LinuxRepr::drop_without_keys`] says whether that build drops the segment ([`SignatureDrop`]) |
//! | one option | [`ParsedOption`] `{ offset, kind, data, option }` with [`TcpOption`]: `EndOfList`, `NoOperation`, `MaxSegmentSize`, `WindowScale`, `SackPermitted`, `Sack(`[`SackBlocks`]`)`, `Timestamps`, `Md5Signature`, `UserTimeout`, `TcpAo`, `Mptcp`, `FastOpen`, `AccEcn`, `Experimental`, `Unknown {kind, data}`, `Invalid` (Linux policy only) |
//! | text | [`display`]: `Display` for [`TcpOption`], [`ParsedOption`] and [`Flags`] in tcpdump's notation (`mss 1460`, `TS val 1 ecr 0`, `[S.]`); [`OptionList`] for a whole block |
//! | raw records | [`RawOptions`]: the generic kind/length/data walker under both policies |
//! | negotiation | [`Handshake`] (SYN / SYN-ACK option blocks, as sent and as received) `.negotiate()` gives a [`Negotiation`] with an [`EndpointView`] per side |
//! | builder | [`OptionsBuilder`] writes Linux's canonical layout into a buffer or a `heapless::Vec<u8, 40>`; over 40 bytes is [`BuildError::TooLong`] |
//! | netfilter | [`netfilter`]: the `TCPMSS` (`--set-mss`, `--clamp-mss-to-pmtu`, MSS insertion) and `TCPOPTSTRIP` targets and the `--tcp-flags SYN,RST SYN` match on a whole IP packet, byte for byte as the kernel modules do them |
//! | segment repr | [`TcpRepr`] (in [`repr`]): ports, seq/ack, [`Flags`], window, urgent pointer, the option block and payload as plain fields; [`TcpRepr::parse`] / [`TcpRepr::from_packet`] read one, [`TcpRepr::emit`] writes one (data offset computed, checksum filled for a [`PseudoHeader`] or left zero), [`TcpRepr::buffer_len`] |
//! | packet repr | [`PacketRepr`] `{ ip: `[`IpRepr`]`, tcp: `[`TcpRepr`]` }` (in [`packet`]): [`PacketRepr::parse`] / [`PacketRepr::parse_verified`] read a whole IPv4/IPv6 packet ([`PacketError`] says what and at which offset), [`PacketRepr::emit`] writes one with every length and checksum computed; [`IpRepr`] is [`Ipv4Repr`] (DS field, identification, DF, TTL, protocol, options) or [`Ipv6Repr`] (traffic class, flow label, hop limit, next header, extension headers, stepped over by the walk of [`netfilter::locate`]), each with its own `parse` and `emit` (in [`ip`]) |
//! | quoted packet | [`QuotedPacket::parse`] (in [`quote`]) reads a packet an ICMP error quotes, or a capture cut short: the IP header ([`IpRepr::parse_quoted`]: a length past the buffer is no error) and a [`QuotedSegment`] whose fields are there only when quoted (ports and sequence number always, RFC 792's 8 bytes; flags, window, options, payload, a whole [`TcpRepr`] when the quote holds them) |
//! | checksums | [`checksum`]: full IPv4/IPv6 pseudo-header checksum ([`PseudoHeader`] for either family), verification, RFC 1624 incremental update, the IPv4 header checksum |
//! | edit session | [`session::EditSession`]: validate an IPv4/IPv6 packet once, then strip, set window scale, clamp MSS, set window, seq/ack offsets (SACK blocks included), insert / remove options, re-pad; [`session::EditSession::finish`] fixes the IP length fields and makes one incremental checksum update (`bytes::BytesMut` with the `bytes` feature) |
//! | rewrites | [`rewrite`]: `strip_options`, `set_window_scale`, `remove_window_scale`, `clamp_mss`, `set_window`, `add_to_seq`, `add_to_ack` on a `&mut [u8]` segment, checksum kept valid |
//! | constants | [`kind`] (kinds, lengths, names), [`header::field`] (byte ranges) |
//! | errors | read: [`HeaderError`], [`OptionError`], [`AuthOptionError`] (why Linux drops a segment, from [`auth_options`]), [`PacketError`]; write: [`BuildError`], [`RewriteError`], [`EmitError`] |
//!
//! # Example
//!
//! ```
//! use tcp_options::{Handshake, StrictOptions, TcpOption};
//!
//! // A Linux SYN's options: MSS 1460, SACK-Permitted, Timestamps, NOP, Window Scale 7.
//! let syn = [0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 0,
//!            0x01, 0x03, 0x03, 0x07];
//! let kinds: Vec<u8> = StrictOptions::new(&syn).map(|o| o.unwrap().kind).collect();
//! assert_eq!(kinds, [2, 4, 8, 1, 3]);
//!
//! // The SYN-ACK lost its Window Scale option on the way to the client.
//! let synack_sent = [0x02, 0x04, 0x05, 0xb4, 0x01, 0x03, 0x03, 0x09];
//! let synack_received = [0x02, 0x04, 0x05, 0xb4, 0x01, 0x01, 0x01, 0x01];
//! let n = Handshake {
//!     syn_sent: Some(&syn),
//!     syn_received: Some(&syn),
//!     synack_sent: Some(&synack_sent),
//!     synack_received: Some(&synack_received),
//! }
//! .negotiate();
//! assert_eq!(n.window_scaling_mismatch(), Some(true));
//! assert!(n.server.unwrap().window_scaling);
//! assert!(!n.client.unwrap().window_scaling);
//! ```
//!
//! # Example: build a SYN, write it, read it back
//!
//! ```
//! use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
//! use tcp_options::{Flags, IpRepr, OptionsBuilder, PacketRepr, TcpOption, TcpRepr};
//!
//! // Linux's SYN options: MSS, SACK-Permitted, Timestamps, Window Scale.
//! let opts = OptionsBuilder::new()
//!     .mss(1460)
//!     .sack_permitted()
//!     .timestamps(1, 0)
//!     .window_scale(7)
//!     .build()
//!     .unwrap();
//! let tcp = TcpRepr {
//!     seq_number: 0x1234_5678,
//!     flags: Flags::SYN | Flags::ECE | Flags::CWR, // ECN setup SYN (RFC 3168)
//!     window: 64240,
//!     options: &opts,
//!     ..TcpRepr::new(40000, 443)
//! };
//! let hosts = [
//!     (IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)), IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7))),
//!     (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
//!      IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 7))),
//! ];
//! for (src, dst) in hosts {
//!     let syn = PacketRepr { ip: IpRepr::tcp(src, dst).unwrap(), tcp };
//!     let mut buf = [0u8; 128];
//!     let n = syn.emit(&mut buf).unwrap(); // lengths and checksums computed
//!     assert_eq!(n, syn.ip.header_len() + 40);
//!
//!     let back = PacketRepr::parse_verified(&buf[..n]).unwrap();
//!     assert_eq!(back, syn);
//!     let first = back.tcp.options_strict().next().unwrap().unwrap();
//!     assert_eq!(first.option, TcpOption::MaxSegmentSize(1460));
//! }
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(test)]
extern crate std;

mod builder;
pub mod checksum;
pub mod display;
mod error;
mod flags;
pub mod header;
pub mod ip;
pub mod kind;
pub mod linux;
mod negotiate;
pub mod netfilter;
mod option;
pub mod packet;
pub mod quote;
pub mod repr;
pub mod rewrite;
pub mod seq;
pub mod session;
mod walk;

pub use builder::{AccEcnCounters, MpCapable, OptionsBuilder};
pub use checksum::PseudoHeader;
pub use display::OptionList;
pub use error::{
    AuthOptionError, BuildError, EmitError, ExpectedLength, HeaderError, OptionError,
    OptionErrorReason, PacketError, RewriteError,
};
pub use flags::Flags;
pub use header::{TcpHeader, TcpPacket, HEADER_LEN, MAX_HEADER_LEN};
pub use ip::{IpRepr, Ipv4Repr, Ipv6Repr};
pub use linux::{
    auth_options, AuthOptions, FastOpenSeen, LinuxRepr, ParseContext, SignatureBuild, SignatureDrop,
};
pub use negotiate::{
    EcnMode, EndpointView, Handshake, Negotiation, DEFAULT_MSS_IPV4, DEFAULT_MSS_IPV6,
};
pub use option::{
    AccEcn, Experimental, FastOpen, Mptcp, ParsedOption, SackBlock, SackBlockIter, SackBlocks,
    TcpAo, TcpOption, Timestamps, UserTimeout,
};
pub use packet::PacketRepr;
pub use quote::{QuotedPacket, QuotedSegment};
pub use repr::TcpRepr;
pub use walk::{decode, LinuxOptions, RawOption, RawOptions, StrictOptions};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
