//! Why a frame gave no TCP segment: one typed reason, for messages and for
//! counting.

use thiserror::Error;

use crate::error::DecodeError;

/// Why a frame gave no TCP segment.
///
/// [`reason`](Skip::reason) groups the variants for counting;
/// [`is_unopened`](Skip::is_unopened) says whether the frame may have held
/// TCP the decoder could not reach (a link type or an encapsulation it does
/// not decode, a cut or malformed header, too many layers), as opposed to a
/// frame that was read and holds no TCP header (ARP, UDP, a later fragment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum Skip {
    /// The capture's link type is not decoded.
    #[error("link type {0} is not supported")]
    LinkType(u32),
    /// An encapsulation the decoder does not open.
    #[error("{0} is not supported")]
    Unsupported(Unsupported),
    /// The frame carries a protocol other than IP (ARP, LLDP, PPP's LCP, ...).
    #[error("not IP ({0})")]
    NotIp(NotIp),
    /// The (innermost) IP packet carries another protocol than TCP.
    #[error("IP protocol {0}, not TCP")]
    NotTcp(u8),
    /// A later IP fragment: no TCP header in it.
    #[error("a later IP fragment (no TCP header)")]
    Fragment,
    /// A header is cut short or has an impossible field.
    #[error(transparent)]
    Decode(DecodeError),
    /// More layers than the decoder follows.
    #[error("more than {} nested layers", crate::encap::MAX_LAYERS)]
    TooDeep,
}

/// An encapsulation that is recognised but not decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Error)]
pub enum Unsupported {
    /// An EtherType that may carry IP but is not decoded (MACsec, NSH, a
    /// local experimental type, FabricPath after a VLAN tag, ...).
    #[error("EtherType {0:#06x}")]
    EtherType(u16),
    /// An IP protocol that carries packets but is not decoded (ESP, EtherIP,
    /// L2TPv3, MPLS in IP).
    #[error("IP protocol {0}")]
    IpProtocol(u8),
    /// A UDP tunnel port that is not decoded (Teredo, VXLAN-GPE, AYIYA,
    /// MPLS over UDP).
    #[error("UDP port {0}")]
    UdpPort(u16),
    /// A GRE protocol type that is not decoded.
    #[error("GRE protocol {0:#06x}")]
    GreProtocol(u16),
    /// A GRE version other than 0 and 1.
    #[error("GRE version {0}")]
    GreVersion(u8),
    /// GRE with RFC 1701 source routing.
    #[error("GRE with source routing")]
    GreRouting,
    /// An ERSPAN version other than I, II and III, or a frame type other than Ethernet and IP.
    #[error("ERSPAN version {0}")]
    ErspanVersion(u8),
    /// A Geneve protocol type that is not decoded, or a Geneve version other than 0.
    #[error("Geneve protocol {0:#06x}")]
    GeneveProtocol(u16),
    /// A GTP version other than 1 (GTP' or GTPv2 on the GTP-U port).
    #[error("GTP version {0}")]
    GtpVersion(u8),
    /// An L2TP version other than 2 on L2TP's port (L2TPv3 over UDP, L2F).
    #[error("L2TP version {0}")]
    L2tpVersion(u8),
    /// An MPLS payload that is neither IP nor an Ethernet pseudowire.
    #[error("MPLS payload starting with nibble {0}")]
    MplsPayload(u8),
    /// An NFLOG address family other than IPv4 and IPv6.
    #[error("NFLOG address family {0}")]
    NflogFamily(u8),
}

/// A frame that was read and carries no IP: what it carries instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Error)]
pub enum NotIp {
    /// A non-IP EtherType (ARP, LLDP, EAPOL, PPPoE discovery, ...).
    #[error("EtherType {0:#06x}")]
    EtherType(u16),
    /// A loopback address family other than IPv4 and IPv6.
    #[error("address family {0}")]
    AddressFamily(u32),
    /// A PPP protocol other than IP (LCP, IPCP, CHAP, ...).
    #[error("PPP protocol {0:#06x}")]
    PppProtocol(u16),
    /// An 802.2 LLC service access point other than SNAP and IP (STP, ...).
    #[error("LLC DSAP {0:#04x}")]
    LlcSap(u8),
    /// An FDDI frame that is not LLC (SMT, MAC frames): its frame control byte.
    #[error("FDDI frame control {0:#04x}")]
    FddiFrame(u8),
    /// A GTP message other than a G-PDU (echo, error indication, ...).
    #[error("GTP message type {0}")]
    GtpMessage(u8),
    /// An L2TP control message (RFC 2661 section 3.1: the T bit).
    #[error("L2TP control message")]
    L2tpControl,
    /// An MPLS pseudowire associated channel (OAM, RFC 4385).
    #[error("MPLS associated channel")]
    MplsChannel,
    /// An NFLOG record without a packet.
    #[error("NFLOG record without a payload")]
    NflogNoPayload,
}

/// The groups [`Skip`] counts fall into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// The link type is not decoded.
    LinkType,
    /// An encapsulation is not decoded.
    Encapsulation,
    /// No IP in the frame.
    NotIp,
    /// IP without TCP.
    NotTcp,
    /// A later IP fragment.
    Fragment,
    /// A header cut short (snap length, end of frame).
    Truncated,
    /// A header with an impossible field.
    Malformed,
    /// Too many nested layers.
    TooDeep,
}

impl SkipReason {
    /// A lower-case identifier, as the tools' JSON names it.
    pub fn id(self) -> &'static str {
        match self {
            SkipReason::LinkType => "link_type_unsupported",
            SkipReason::Encapsulation => "encapsulation_unsupported",
            SkipReason::NotIp => "not_ip",
            SkipReason::NotTcp => "not_tcp",
            SkipReason::Fragment => "fragment",
            SkipReason::Truncated => "truncated",
            SkipReason::Malformed => "malformed",
            SkipReason::TooDeep => "too_deep",
        }
    }

    /// True for the reasons that may hide TCP the decoder could not reach.
    pub fn is_unopened(self) -> bool {
        !matches!(
            self,
            SkipReason::NotIp | SkipReason::NotTcp | SkipReason::Fragment
        )
    }
}

impl Skip {
    /// The group this reason is counted in.
    pub fn reason(&self) -> SkipReason {
        match self {
            Skip::LinkType(_) => SkipReason::LinkType,
            Skip::Unsupported(_) => SkipReason::Encapsulation,
            Skip::NotIp(_) => SkipReason::NotIp,
            Skip::NotTcp(_) => SkipReason::NotTcp,
            Skip::Fragment => SkipReason::Fragment,
            Skip::Decode(DecodeError::Truncated { .. }) => SkipReason::Truncated,
            Skip::Decode(DecodeError::Malformed { .. }) => SkipReason::Malformed,
            Skip::TooDeep => SkipReason::TooDeep,
        }
    }

    /// True when the frame may have held TCP the decoder could not reach
    /// (see [`SkipReason::is_unopened`]).
    pub fn is_unopened(&self) -> bool {
        self.reason().is_unopened()
    }
}

impl From<DecodeError> for Skip {
    fn from(e: DecodeError) -> Self {
        Skip::Decode(e)
    }
}
