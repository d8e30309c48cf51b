//! Tunnels and provider encapsulations: one decoder per format, and the
//! typed description of the layers a TCP segment was carried in.
//!
//! Each file decodes one header at a given offset of a frame and says what
//! follows it ([`Payload`]); [`crate::decode`] chains them, from the capture's
//! link layer to the innermost TCP header, and counts the layers it went
//! through ([`Tunnels`]: the frame and a count, nothing allocated). The
//! typed view of each layer ([`Layer`]: outer IP endpoints, GRE key and
//! sequence number, VNI, TEID, L2TP tunnel and session, MPLS labels, PPPoE
//! session, ...) is read back from the frame when asked for.
//!
//! | file | format | reference |
//! |---|---|---|
//! | [`gre`] | GRE, keys and sequence numbers; PPTP's enhanced GRE; NVGRE | RFC 2784, RFC 2890, RFC 1701 (flags), RFC 2637 (version 1), RFC 7637 |
//! | [`erspan`] | ERSPAN type I, II, III | draft-foschiano-erspan |
//! | [`udp`] | UDP, and the ports of the UDP tunnels | RFC 768 |
//! | [`vxlan`] | VXLAN | RFC 7348 |
//! | [`geneve`] | Geneve | RFC 8926 |
//! | [`gtp`] | GTP-U | 3GPP TS 29.281 |
//! | [`l2tp`] | L2TPv2 data messages (PPP inside) | RFC 2661 |
//! | [`mpls`] | MPLS label stacks, the pseudowire control word | RFC 3032, RFC 4385, RFC 4448 |
//! | [`pppoe`] | PPPoE session stage | RFC 2516 |
//! | [`ppp`] | PPP protocol field, HDLC-like framing | RFC 1661, RFC 1662 |
//! | [`chdlc`] | Cisco HDLC | LINKTYPE_C_HDLC (tcpdump.org/linktypes.html) |
//! | [`pbb`] | Provider Backbone Bridges (MAC-in-MAC) I-TAG | IEEE 802.1ah |
//! | [`llc`] | 802.2 LLC and SNAP | IEEE 802.2, RFC 1042 |
//! | [`fddi`] | FDDI MAC header | ANSI X3.139, LINKTYPE_FDDI |
//! | [`nflog`] | Linux NFLOG | Linux `nfnetlink_log.h`, LINKTYPE_NFLOG |
//! | [`fabricpath`] | Cisco FabricPath (MAC-in-MAC), EtherType 0x8903 | Wireshark's `cfp` dissection of real frames |
//! | [`vntag`] | VN-Tag, EtherType 0x8926 | IEEE 802.1Qbh proposal; Wireshark's `vntag` fields |
//! | [`etag`] | E-Tag, EtherType 0x893F | IEEE 802.1BR; Wireshark's `etag` fields |
//!
//! IP-in-IP (IPv4 protocol 4 and 41, the same next headers in IPv6: 4in4,
//! 6in4, 4in6, 6in6; RFC 2003, RFC 4213, RFC 2473) has no header of its own:
//! its layer is the outer IP header.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::DecodeError;

pub mod chdlc;
pub mod erspan;
pub mod etag;
pub mod fabricpath;
pub mod fddi;
pub mod geneve;
pub mod gre;
pub mod gtp;
pub mod l2tp;
pub mod llc;
pub mod mpls;
pub mod nflog;
pub mod pbb;
pub mod ppp;
pub mod pppoe;
mod skip;
mod tunnels;
pub mod udp;
pub mod vntag;
pub mod vxlan;

pub use skip::{NotIp, Skip, SkipReason, Unsupported};
pub(crate) use tunnels::{Count, Recorder};
pub use tunnels::{KeyPart, Layer, OuterIp, OwnedTunnels, Tunnel, TunnelKey, Tunnels, MAX_LAYERS};

/// The kinds of layer a segment can be carried in, one per format.
///
/// `EncapKind::ALL` lists them in a fixed order (counting tables index it
/// with [`EncapKind::index`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EncapKind {
    /// GRE version 0 (RFC 2784 / 2890).
    Gre,
    /// PPTP's enhanced GRE, version 1 (RFC 2637).
    Pptp,
    /// NVGRE (RFC 7637): GRE with a key and Transparent Ethernet Bridging.
    Nvgre,
    /// ERSPAN type I, II or III.
    Erspan,
    /// VXLAN (RFC 7348).
    Vxlan,
    /// Geneve (RFC 8926).
    Geneve,
    /// GTP-U (3GPP TS 29.281).
    GtpU,
    /// L2TPv2 (RFC 2661) data messages over UDP, with the PPP header they carry.
    L2tp,
    /// IP in IP: 4in4, 6in4, 4in6, 6in6.
    IpInIp,
    /// An MPLS label stack (RFC 3032), with or without a pseudowire control word.
    Mpls,
    /// PPPoE session stage (RFC 2516), with the PPP header it carries.
    Pppoe,
    /// PPP (RFC 1661) as a link layer or inside GRE.
    Ppp,
    /// Cisco HDLC.
    CiscoHdlc,
    /// 802.1ah Provider Backbone Bridges: I-TAG and customer MAC header.
    Pbb,
    /// 802.2 LLC with SNAP on an 802.3 frame (RFC 1042).
    LlcSnap,
    /// FDDI, with the LLC/SNAP header it carries.
    Fddi,
    /// Linux NFLOG.
    Nflog,
    /// Cisco FabricPath: outer header with switch ids, FTag and TTL.
    FabricPath,
    /// VN-Tag: destination and source virtual interfaces.
    VnTag,
    /// 802.1BR E-Tag: the E-CID.
    ETag,
}

impl EncapKind {
    /// Every kind, in [`index`](Self::index) order.
    pub const ALL: [EncapKind; 20] = [
        EncapKind::Gre,
        EncapKind::Pptp,
        EncapKind::Nvgre,
        EncapKind::Erspan,
        EncapKind::Vxlan,
        EncapKind::Geneve,
        EncapKind::GtpU,
        EncapKind::L2tp,
        EncapKind::IpInIp,
        EncapKind::Mpls,
        EncapKind::Pppoe,
        EncapKind::Ppp,
        EncapKind::CiscoHdlc,
        EncapKind::Pbb,
        EncapKind::LlcSnap,
        EncapKind::Fddi,
        EncapKind::Nflog,
        EncapKind::FabricPath,
        EncapKind::VnTag,
        EncapKind::ETag,
    ];

    /// Position in [`ALL`](Self::ALL).
    pub fn index(self) -> usize {
        self as usize
    }

    /// A short lower-case identifier (`gre`, `vxlan`, `gtp_u`, `ip_in_ip`,
    /// ...), as the tools' JSON names it.
    pub fn id(self) -> &'static str {
        match self {
            EncapKind::Gre => "gre",
            EncapKind::Pptp => "pptp_gre",
            EncapKind::Nvgre => "nvgre",
            EncapKind::Erspan => "erspan",
            EncapKind::Vxlan => "vxlan",
            EncapKind::Geneve => "geneve",
            EncapKind::GtpU => "gtp_u",
            EncapKind::L2tp => "l2tp",
            EncapKind::IpInIp => "ip_in_ip",
            EncapKind::Mpls => "mpls",
            EncapKind::Pppoe => "pppoe",
            EncapKind::Ppp => "ppp",
            EncapKind::CiscoHdlc => "c_hdlc",
            EncapKind::Pbb => "pbb",
            EncapKind::LlcSnap => "llc_snap",
            EncapKind::Fddi => "fddi",
            EncapKind::Nflog => "nflog",
            EncapKind::FabricPath => "fabricpath",
            EncapKind::VnTag => "vntag",
            EncapKind::ETag => "etag",
        }
    }
}

/// What follows a decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// An Ethernet header (destination, source, EtherType or length).
    Ethernet,
    /// The payload of this EtherType (as a PPP, C-HDLC or SNAP header names it).
    EtherType(u16),
    /// An IP header whose first nibble says the version.
    Ip,
    /// An IPv4 header.
    Ipv4,
    /// An IPv6 header.
    Ipv6,
    /// A PPP protocol field (RFC 1661), HDLC-like address and control already skipped.
    Ppp,
    /// An MPLS label stack.
    Mpls,
    /// An 802.2 LLC header.
    Llc,
}

/// A decoded header: its fields, where its payload starts in the frame and
/// what the payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed<T> {
    /// The header's fields.
    pub header: T,
    /// Offset of the payload in the frame.
    pub payload_at: usize,
    /// What the payload is.
    pub payload: Payload,
}

/// The outer IP endpoints of a tunnel: the addresses of the IP header that
/// carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoints {
    /// Outer source address.
    pub src: IpAddr,
    /// Outer destination address.
    pub dst: IpAddr,
}

/// Offset of the IPv4 source address.
const IPV4_SRC: usize = 12;
/// Offset of the IPv6 source address.
const IPV6_SRC: usize = 8;

impl Endpoints {
    /// The addresses of the IP header at `at` in `frame` (already decoded
    /// once; `None` only if the bytes are not there).
    pub fn read(frame: &[u8], at: usize) -> Option<Endpoints> {
        let version = frame.get(at)? >> 4;
        if version == 4 {
            let b = frame.get(at + IPV4_SRC..at + IPV4_SRC + 8)?;
            Some(Endpoints {
                src: IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3])),
                dst: IpAddr::V4(Ipv4Addr::new(b[4], b[5], b[6], b[7])),
            })
        } else {
            let b = frame.get(at + IPV6_SRC..at + IPV6_SRC + 32)?;
            let mut src = [0u8; 16];
            let mut dst = [0u8; 16];
            src.copy_from_slice(&b[..16]);
            dst.copy_from_slice(&b[16..]);
            Some(Endpoints {
                src: IpAddr::V6(Ipv6Addr::from(src)),
                dst: IpAddr::V6(Ipv6Addr::from(dst)),
            })
        }
    }

    /// The two addresses in a fixed order, the same for both directions.
    pub fn ordered(&self) -> (IpAddr, IpAddr) {
        if self.src <= self.dst {
            (self.src, self.dst)
        } else {
            (self.dst, self.src)
        }
    }
}

/// The big-endian 16-bit field at `at` (the caller checked the length).
pub(crate) fn be16(data: &[u8], at: usize) -> u16 {
    match data.get(at..at + 2) {
        Some(b) => u16::from_be_bytes([b[0], b[1]]),
        None => 0,
    }
}

/// The big-endian 32-bit field at `at` (the caller checked the length).
pub(crate) fn be32(data: &[u8], at: usize) -> u32 {
    match data.get(at..at + 4) {
        Some(b) => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

/// The big-endian 24-bit field at `at` (the caller checked the length).
pub(crate) fn be24(data: &[u8], at: usize) -> u32 {
    match data.get(at..at + 3) {
        Some(b) => u32::from_be_bytes([0, b[0], b[1], b[2]]),
        None => 0,
    }
}

/// `Ok` when `needed` bytes are captured at `at`; otherwise the truncation
/// of `layer`'s header there.
pub(crate) fn need(layer: &'static str, data: &[u8], at: usize, needed: usize) -> Result<(), Skip> {
    let available = data.len().saturating_sub(at);
    if available < needed {
        return Err(Skip::Decode(DecodeError::Truncated {
            layer,
            offset: at,
            needed,
            available,
        }));
    }
    Ok(())
}

/// A malformed `layer` header at `at`.
pub(crate) fn malformed(layer: &'static str, at: usize, reason: &'static str) -> Skip {
    Skip::Decode(DecodeError::Malformed {
        layer,
        offset: at,
        reason,
    })
}
