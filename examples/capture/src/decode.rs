//! The walk from a captured frame to its TCP segment, through any stack of
//! the tunnels and encapsulations of [`crate::encap`].
//!
//! The walk is a loop over "what comes next" (`Next`): each step decodes
//! one header at an offset and says what follows it. It ends at a TCP
//! header ([`TcpSegment`]) or with a typed reason ([`Skip`]). It is bounded:
//! at most [`MAX_STEPS`] steps and [`MAX_LAYERS`] recorded layers, every
//! header's length checked against the captured bytes before it is read,
//! nothing allocated.
//!
//! Bytes past the end of an outer IP packet (Ethernet padding, trailers)
//! are never taken for its payload: the walk's view of the frame is cut to
//! each outer IP header's length.

use std::net::IpAddr;

use crate::encap::gre::{Gre, PROTO_ERSPAN_II, PROTO_ERSPAN_III};
use crate::encap::udp::{self, UdpTunnel};
use crate::encap::{
    chdlc, erspan::Erspan, etag::ETag, fabricpath, fabricpath::FabricPath, fddi::Fddi,
    geneve::Geneve, gtp::GtpU, l2tp::L2tp, llc::Llc, mpls::MplsHeader, nflog::Nflog, pbb::Pbb, ppp,
    pppoe::Pppoe, vntag::VnTag, vxlan::Vxlan, Count, EncapKind, NotIp, Parsed, Payload, Recorder,
    Skip, Tunnels, Unsupported, MAX_LAYERS,
};
use crate::error::DecodeError;
use crate::ipv4::Ipv4Header;
use crate::ipv6::{Ipv6Header, NH_ESP};
use crate::link::{self, decode_link, LinkPayload, Network};
use crate::segment::{IpInfo, IpVersion, TcpSegment, IPPROTO_TCP};

/// At most this many headers are decoded in one frame.
pub const MAX_STEPS: usize = 4 * MAX_LAYERS + 8;

/// FDDI (LINKTYPE_FDDI).
pub const LINKTYPE_FDDI: u32 = 10;
/// PPP, with or without HDLC-like framing (LINKTYPE_PPP).
pub const LINKTYPE_PPP: u32 = 9;
/// PPP in HDLC-like framing, or Cisco PPP with HDLC framing (LINKTYPE_PPP_HDLC).
pub const LINKTYPE_PPP_HDLC: u32 = 50;
/// PPPoE without its Ethernet header (LINKTYPE_PPP_ETHER).
pub const LINKTYPE_PPP_ETHER: u32 = 51;
/// Cisco HDLC (LINKTYPE_C_HDLC).
pub const LINKTYPE_C_HDLC: u32 = 104;
/// PPP with a direction byte first (LINKTYPE_PPP_WITH_DIR).
pub const LINKTYPE_PPP_WITH_DIR: u32 = 204;
/// Cisco HDLC with a direction byte first (LINKTYPE_C_HDLC_WITH_DIR).
pub const LINKTYPE_C_HDLC_WITH_DIR: u32 = 205;
/// Linux NFLOG (LINKTYPE_NFLOG).
pub const LINKTYPE_NFLOG: u32 = 239;

/// EtherType of MPLS unicast.
pub const ETHERTYPE_MPLS: u16 = 0x8847;
/// EtherType of MPLS multicast.
pub const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
/// Linux's ETH_P_802_2: the frame starts with an 802.2 LLC header (cooked captures).
const ETH_P_802_2: u16 = 0x0004;
/// Length of an EtherType field.
const ETHERTYPE_LEN: usize = 2;
/// Below this, an Ethernet type field is an 802.3 length (an LLC header follows).
const ETHERTYPE_MIN: u16 = 0x0600;
/// EtherTypes that carry no IP: ARP, RARP, AppleTalk, AARP, IPX, MAC
/// control, slow protocols, PPPoE discovery, EAPOL, PROFINET, EtherCAT,
/// GOOSE, sampled values, LLDP, HomePlug, MRP, PTP, PRP, HSR, CFM, FCoE,
/// FIP, RoCE, IEEE 1905, loopback, AVTP, Wake-on-LAN, Realtek, the DEC protocols.
const NOT_IP_ETHERTYPES: [u16; 37] = [
    0x0806, 0x8035, 0x809b, 0x80f3, 0x8137, 0x8138, 0x8808, 0x8809, 0x8863, 0x888e, 0x8892, 0x88a4,
    0x88b8, 0x88ba, 0x88cc, 0x88e1, 0x88e3, 0x88f7, 0x88fb, 0x892f, 0x8902, 0x8906, 0x8914, 0x8915,
    0x893a, 0x9000, 0x22f0, 0x0842, 0x8899, 0x6000, 0x6001, 0x6002, 0x6003, 0x6004, 0x6005, 0x6006,
    0x6007,
];
/// IP protocols that carry packets and are not decoded: IPv6 ESP and IPv4
/// ESP (encrypted), EtherIP, L2TPv3, MPLS in IP.
const UNSUPPORTED_IP_PROTOCOLS: [u8; 4] = [NH_ESP, 97, 115, 137];
/// IP protocol of IPv4 in IP.
const IPPROTO_IPIP: u8 = 4;
/// IP protocol of IPv6 in IP.
const IPPROTO_IPV6: u8 = 41;
/// IP protocol of GRE.
const IPPROTO_GRE: u8 = 47;

/// What the walk decodes next, at its offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// An Ethernet header.
    Ethernet,
    /// The payload of an EtherType; `ethernet`: read from an Ethernet
    /// header, where a value below 0x0600 is an 802.3 length; `mac_at`:
    /// where that Ethernet header starts, when the EtherType follows its
    /// addresses directly (no VLAN tag between), for the formats that
    /// reuse the addresses (FabricPath).
    EtherType {
        ethertype: u16,
        ethernet: bool,
        mac_at: Option<usize>,
    },
    /// 802.2 LLC, recorded as a layer unless `in_fddi` (FDDI's own).
    Llc { in_fddi: bool },
    /// IP, version by the first nibble.
    Ip,
    /// IPv4.
    Ipv4,
    /// IPv6.
    Ipv6,
    /// A PPP protocol field.
    Ppp,
    /// An MPLS label stack.
    Mpls,
    /// PPPoE.
    Pppoe,
    /// An 802.1ah I-TAG.
    Pbb,
    /// A VN-Tag.
    VnTag,
    /// An 802.1BR E-Tag.
    ETag,
    /// GRE, carried by the IP header at `ip`.
    Gre { ip: usize },
    /// UDP, carried by the IP header at `ip`.
    Udp { ip: usize },
}

impl From<Payload> for Next {
    fn from(p: Payload) -> Next {
        match p {
            Payload::Ethernet => Next::Ethernet,
            Payload::EtherType(ethertype) => Next::EtherType {
                ethertype,
                ethernet: false,
                mac_at: None,
            },
            Payload::Ip => Next::Ip,
            Payload::Ipv4 => Next::Ipv4,
            Payload::Ipv6 => Next::Ipv6,
            Payload::Ppp => Next::Ppp,
            Payload::Mpls => Next::Mpls,
            Payload::Llc => Next::Llc { in_fddi: false },
        }
    }
}

/// One step's outcome.
enum Step {
    /// Decode this next, at this offset.
    Go(Next, usize),
    /// The innermost IP header, at `ip_at`, carries TCP.
    Tcp {
        ip_at: usize,
        ip: IpInfo,
        payload_len: Option<usize>,
    },
}

/// The walk's state.
struct Walk<'a, 'r, R: Recorder> {
    linktype: u32,
    frame: &'a [u8],
    /// The bytes the walk may read: cut to the outer IP packets' lengths.
    end: usize,
    /// Whether `end` was cut by an outer IP length.
    clipped: bool,
    origlen: u32,
    layers: &'r mut R,
    /// Layers the caller allows (0: plain links only).
    max_layers: usize,
}

/// Decodes `frame` (captured with `linktype`, `origlen` bytes on the wire)
/// through any tunnels down to its TCP segment, following at most
/// `max_layers` layers (at most [`MAX_LAYERS`]); a frame with more is
/// [`Skip::TooDeep`].
///
/// IP carrying TCP on a plain link is decoded straight through
/// ([`plain_tcp`]); only other frames take the general walk.
#[inline]
pub fn walk(
    linktype: u32,
    frame: &[u8],
    origlen: u32,
    max_layers: usize,
) -> Result<TcpSegment<'_>, Skip> {
    let link = decode_link(linktype, frame)?;
    if let Some(seg) = plain_tcp(frame, origlen, link)? {
        return Ok(seg);
    }
    walk_from(
        linktype,
        frame,
        origlen,
        link,
        max_layers,
        &mut Count::default(),
    )
}

/// [`walk`] without its shortcut, telling `layers` each layer it meets.
pub(crate) fn walk_with<'a, R: Recorder>(
    linktype: u32,
    frame: &'a [u8],
    origlen: u32,
    max_layers: usize,
    layers: &mut R,
) -> Result<TcpSegment<'a>, Skip> {
    let link = decode_link(linktype, frame)?;
    walk_from(linktype, frame, origlen, link, max_layers, layers)
}

/// The general walk, from the link layer `link` of `frame`.
#[inline(never)]
fn walk_from<'a, R: Recorder>(
    linktype: u32,
    frame: &'a [u8],
    origlen: u32,
    link: LinkPayload,
    max_layers: usize,
    layers: &mut R,
) -> Result<TcpSegment<'a>, Skip> {
    let mut w = Walk {
        linktype,
        frame,
        end: frame.len(),
        clipped: false,
        origlen,
        layers,
        max_layers: max_layers.min(MAX_LAYERS),
    };
    let (mut next, mut at) = match link.network {
        Network::Ipv4 => (Next::Ipv4, link.offset),
        Network::Ipv6 => (Next::Ipv6, link.offset),
        Network::OtherEthertype(ethertype) => {
            let ethernet = linktype == link::LINKTYPE_ETHERNET;
            (
                Next::EtherType {
                    ethertype,
                    ethernet,
                    mac_at: (ethernet && link.vlan_tags == 0).then_some(0),
                },
                link.offset,
            )
        }
        Network::OtherFamily(f) => return Err(Skip::NotIp(NotIp::AddressFamily(f))),
        Network::UnsupportedLinktype(lt) => w.start(lt)?,
    };
    for _ in 0..MAX_STEPS {
        match w.step(next, at)? {
            Step::Go(n, a) => (next, at) = (n, a),
            Step::Tcp {
                ip_at,
                ip,
                payload_len,
            } => return Ok(w.finish(link, ip_at, ip, payload_len)),
        }
    }
    Err(Skip::TooDeep)
}

impl<'a, R: Recorder> Walk<'a, '_, R> {
    /// The bytes the walk may read.
    fn data(&self) -> &'a [u8] {
        &self.frame[..self.end]
    }

    /// Records a layer, or refuses when the allowed depth is reached.
    fn enter(&mut self, kind: EncapKind, at: usize, outer: Option<usize>) -> Result<(), Skip> {
        if self.layers.len() >= self.max_layers || !self.layers.push(kind, at, outer) {
            return Err(Skip::TooDeep);
        }
        Ok(())
    }

    /// Where the link types that only the encapsulation decoders know begin.
    fn start(&mut self, linktype: u32) -> Result<(Next, usize), Skip> {
        let data = self.data();
        match linktype {
            LINKTYPE_FDDI => {
                self.enter(EncapKind::Fddi, 0, None)?;
                let p = Fddi::parse(data, 0)?;
                Ok((Next::Llc { in_fddi: true }, p.payload_at))
            }
            LINKTYPE_PPP | LINKTYPE_PPP_HDLC => self.ppp_or_c_hdlc(0),
            LINKTYPE_PPP_WITH_DIR => self.ppp_or_c_hdlc(1),
            LINKTYPE_PPP_ETHER => Ok((Next::Pppoe, 0)),
            LINKTYPE_C_HDLC => self.c_hdlc(0),
            LINKTYPE_C_HDLC_WITH_DIR => self.c_hdlc(1),
            LINKTYPE_NFLOG => {
                self.enter(EncapKind::Nflog, 0, None)?;
                let p = Nflog::parse(data, 0)?;
                Ok((p.payload.into(), p.payload_at))
            }
            other => Err(Skip::LinkType(other)),
        }
    }

    /// A PPP link's frame at `at`: PPP, with or without HDLC-like address
    /// and control, or Cisco HDLC when its first byte is C-HDLC's address
    /// (0x0f, 0x8f). Cisco routers' serial links are captured under every
    /// PPP link type (nDPI's `BGP_Cisco_hdlc_slarp.pcap` is LINKTYPE_PPP),
    /// and Wireshark takes those two bytes for C-HDLC on each of them. No
    /// uncompressed PPP protocol field starts with either (its first byte
    /// is even, RFC 1661 section 2); a compressed one would name protocol
    /// 0x000f or 0x008f, which this decoder, as Wireshark, takes for C-HDLC.
    fn ppp_or_c_hdlc(&mut self, at: usize) -> Result<(Next, usize), Skip> {
        match self.data().get(at) {
            Some(&chdlc::ADDRESS_UNICAST) | Some(&chdlc::ADDRESS_BROADCAST) => self.c_hdlc(at),
            _ => {
                self.enter(EncapKind::Ppp, at, None)?;
                Ok((Next::Ppp, ppp::skip_hdlc(self.data(), at)))
            }
        }
    }

    fn c_hdlc(&mut self, at: usize) -> Result<(Next, usize), Skip> {
        self.enter(EncapKind::CiscoHdlc, at, None)?;
        let (payload, payload_at) = chdlc::parse(self.data(), at)?;
        Ok((payload.into(), payload_at))
    }

    /// Records a layer of `kind` at `at` and decodes its header with `parse`.
    fn layer<T>(
        &mut self,
        kind: EncapKind,
        at: usize,
        outer: Option<usize>,
        parse: impl FnOnce(&[u8], usize) -> Result<Parsed<T>, Skip>,
    ) -> Result<Step, Skip> {
        self.enter(kind, at, outer)?;
        let p = parse(self.data(), at)?;
        Ok(Step::Go(p.payload.into(), p.payload_at))
    }

    fn step(&mut self, next: Next, at: usize) -> Result<Step, Skip> {
        let data = self.data();
        match next {
            Next::Ipv4 => self.ipv4(at),
            Next::Ipv6 => self.ipv6(at),
            Next::Ethernet => {
                let mac_at = at;
                let inner = decode_link(link::LINKTYPE_ETHERNET, &data[at.min(data.len())..])
                    .map_err(|e| shift(e, at))?;
                let at = at + inner.offset;
                let mac_at = (inner.vlan_tags == 0).then_some(mac_at);
                Ok(Step::Go(ethernet_next(inner.network, mac_at, at)?, at))
            }
            Next::EtherType {
                ethertype: fabricpath::ETHERTYPE_FABRICPATH,
                mac_at: Some(mac_at),
                ..
            } => self.layer(EncapKind::FabricPath, mac_at, None, FabricPath::parse),
            Next::EtherType {
                ethertype,
                ethernet,
                ..
            } => Ok(Step::Go(by_ethertype(ethertype, ethernet)?, at)),
            Next::Ip => {
                need_ip(data, at)?;
                match data[at] >> 4 {
                    4 => Ok(Step::Go(Next::Ipv4, at)),
                    6 => Ok(Step::Go(Next::Ipv6, at)),
                    _ => Err(Skip::Decode(DecodeError::Malformed {
                        layer: "IP",
                        offset: at,
                        reason: "IP version is neither 4 nor 6",
                    })),
                }
            }
            Next::Ppp => {
                let (payload, payload_at) = ppp::protocol(data, at)?;
                Ok(Step::Go(payload.into(), payload_at))
            }
            Next::Llc { in_fddi } => {
                if in_fddi {
                    let p = Llc::parse(data, at)?;
                    Ok(Step::Go(p.payload.into(), p.payload_at))
                } else {
                    self.layer(EncapKind::LlcSnap, at, None, Llc::parse)
                }
            }
            Next::Mpls => self.layer(EncapKind::Mpls, at, None, MplsHeader::parse),
            Next::Pppoe => self.layer(EncapKind::Pppoe, at, None, Pppoe::parse),
            Next::Pbb => self.layer(EncapKind::Pbb, at, None, Pbb::parse),
            Next::VnTag => self.tag(EncapKind::VnTag, at, VnTag::parse),
            Next::ETag => self.tag(EncapKind::ETag, at, ETag::parse),
            Next::Gre { ip } => self.gre(at, ip),
            Next::Udp { ip } => {
                let (tunnel, at) = udp::tunnel(data, at)?;
                match tunnel {
                    UdpTunnel::Vxlan => self.layer(EncapKind::Vxlan, at, Some(ip), Vxlan::parse),
                    UdpTunnel::Geneve => self.layer(EncapKind::Geneve, at, Some(ip), Geneve::parse),
                    UdpTunnel::GtpU => self.layer(EncapKind::GtpU, at, Some(ip), GtpU::parse),
                    UdpTunnel::L2tp => self.layer(EncapKind::L2tp, at, Some(ip), L2tp::parse),
                }
            }
        }
    }

    /// A tag that sits where an EtherType would (VN-Tag, E-Tag): records
    /// its layer, then follows the EtherType after it as an Ethernet
    /// header's, with any VLAN tags that follow (an 802.1BR frame carries
    /// its customer VLAN tag after the E-Tag).
    fn tag<T>(
        &mut self,
        kind: EncapKind,
        at: usize,
        parse: impl FnOnce(&[u8], usize) -> Result<Parsed<T>, Skip>,
    ) -> Result<Step, Skip> {
        self.enter(kind, at, None)?;
        let data = self.data();
        let p = parse(data, at)?;
        let type_at = p.payload_at - ETHERTYPE_LEN;
        let l = link::by_ethertype(data, type_at, p.payload_at)?;
        Ok(Step::Go(
            ethernet_next(l.network, None, l.offset)?,
            l.offset,
        ))
    }

    fn gre(&mut self, at: usize, ip: usize) -> Result<Step, Skip> {
        self.enter(EncapKind::Gre, at, Some(ip))?;
        let data = self.data();
        let p = Gre::parse(data, at)?;
        let kind = if p.header.version == 1 {
            EncapKind::Pptp
        } else if p.header.is_nvgre() {
            EncapKind::Nvgre
        } else {
            EncapKind::Gre
        };
        self.layers.set_last_kind(kind);
        match p.header.protocol {
            PROTO_ERSPAN_II | PROTO_ERSPAN_III => {
                // The ERSPAN layer is recorded at the GRE header, whose
                // protocol and sequence flag say its type (type I has no
                // header of its own).
                self.enter(EncapKind::Erspan, at, None)?;
                let e = Erspan::parse(
                    data,
                    p.payload_at,
                    p.header.protocol,
                    p.header.seq.is_some(),
                )?;
                Ok(Step::Go(e.payload.into(), e.payload_at))
            }
            _ if kind == EncapKind::Pptp => {
                Ok(Step::Go(Next::Ppp, ppp::skip_hdlc(data, p.payload_at)))
            }
            _ => Ok(Step::Go(p.payload.into(), p.payload_at)),
        }
    }

    /// Cuts the walk's view to the end of the IP packet at `at` whose
    /// header says it is `len` bytes long (0: unknown).
    fn clip(&mut self, at: usize, len: usize) {
        if len != 0 {
            let end = at.saturating_add(len);
            if end < self.end {
                self.end = end;
                self.clipped = true;
            }
        }
    }

    /// Where a tunnel carried by the IP header at `at` continues.
    fn carried(
        &mut self,
        at: usize,
        header_len: usize,
        protocol: u8,
        packet_len: usize,
    ) -> Result<Step, Skip> {
        let inner = at + header_len;
        let next = match protocol {
            IPPROTO_IPIP | IPPROTO_IPV6 => {
                self.enter(EncapKind::IpInIp, at, Some(at))?;
                if protocol == IPPROTO_IPIP {
                    Next::Ipv4
                } else {
                    Next::Ipv6
                }
            }
            IPPROTO_GRE => Next::Gre { ip: at },
            udp::IPPROTO_UDP => Next::Udp { ip: at },
            p if UNSUPPORTED_IP_PROTOCOLS.contains(&p) => {
                return Err(Skip::Unsupported(Unsupported::IpProtocol(p)))
            }
            p => return Err(Skip::NotTcp(p)),
        };
        self.clip(at, packet_len);
        Ok(Step::Go(next, inner))
    }

    fn ipv4(&mut self, at: usize) -> Result<Step, Skip> {
        let bytes = self.frame.get(at..self.end).unwrap_or(&[]);
        let h = Ipv4Header::parse(bytes).map_err(|e| shift(e, at))?;
        if h.fragment_offset != 0 {
            return Err(Skip::Fragment);
        }
        if h.protocol != IPPROTO_TCP {
            return self.carried(at, h.header_len, h.protocol, usize::from(h.total_len));
        }
        Ok(Step::Tcp {
            ip_at: at,
            ip: ipv4_info(&h),
            payload_len: h.payload_len(),
        })
    }

    fn ipv6(&mut self, at: usize) -> Result<Step, Skip> {
        let bytes = self.frame.get(at..self.end).unwrap_or(&[]);
        let h = Ipv6Header::parse(bytes).map_err(|e| shift(e, at))?;
        let Some(protocol) = h.upper_protocol else {
            if h.fragment_offset != 0 {
                return Err(Skip::Fragment);
            }
            if h.last_next_header == NH_ESP {
                return Err(Skip::Unsupported(Unsupported::IpProtocol(NH_ESP)));
            }
            return Err(Skip::NotTcp(h.last_next_header));
        };
        if protocol != IPPROTO_TCP {
            // The whole packet: the extension headers and the upper layer.
            let len = h.upper_len().map_or(0, |l| l + h.header_len);
            return self.carried(at, h.header_len, protocol, len);
        }
        Ok(Step::Tcp {
            ip_at: at,
            ip: ipv6_info(&h),
            payload_len: h.upper_len(),
        })
    }

    /// The TCP segment after the IP header at `at`.
    fn finish(
        &self,
        link: LinkPayload,
        at: usize,
        ip: IpInfo,
        ip_payload_len: Option<usize>,
    ) -> TcpSegment<'a> {
        // Without a usable IP length (segmentation offload), the end of the
        // outer packet, or else the wire length of the frame, decides.
        let wire_end = if self.clipped {
            self.end
        } else {
            self.origlen as usize
        };
        let tunnels = Tunnels::new(self.linktype, self.frame, self.layers.len());
        let view = &self.frame[..self.end];
        segment(link, view, at, ip, ip_payload_len, wire_end, tunnels)
    }
}

/// The common case, decoded straight through: IP on a plain link carrying
/// TCP, `link` being the frame's link layer. `Ok(None)` for anything else
/// (another protocol, a later fragment, a tunnel, another link type).
#[inline(always)]
pub fn plain_tcp(
    frame: &[u8],
    origlen: u32,
    link: LinkPayload,
) -> Result<Option<TcpSegment<'_>>, DecodeError> {
    let at = link.offset;
    let ip_bytes = frame.get(at..).unwrap_or(&[]);
    let (ip, payload_len) = match link.network {
        Network::Ipv4 => {
            let h = Ipv4Header::parse(ip_bytes).map_err(|e| shift(e, at))?;
            if h.fragment_offset != 0 || h.protocol != IPPROTO_TCP {
                return Ok(None);
            }
            (ipv4_info(&h), h.payload_len())
        }
        Network::Ipv6 => {
            let h = Ipv6Header::parse(ip_bytes).map_err(|e| shift(e, at))?;
            if h.upper_protocol != Some(IPPROTO_TCP) {
                return Ok(None);
            }
            (ipv6_info(&h), h.upper_len())
        }
        _ => return Ok(None),
    };
    let tunnels = Tunnels::empty(frame);
    Ok(Some(segment(
        link,
        frame,
        at,
        ip,
        payload_len,
        origlen as usize,
        tunnels,
    )))
}

/// The TCP segment after the IP header at `at` of `view` (the frame, cut to
/// the outer IP packets); without an IP length, the segment runs to
/// `wire_end` (or to the captured bytes, when longer).
#[inline(always)]
fn segment<'a>(
    link: LinkPayload,
    view: &'a [u8],
    at: usize,
    ip: IpInfo,
    ip_payload_len: Option<usize>,
    wire_end: usize,
    tunnels: Tunnels<'a>,
) -> TcpSegment<'a> {
    let tcp_offset = at + ip.header_len;
    let captured = view.get(tcp_offset..).unwrap_or(&[]);
    let wire_len =
        ip_payload_len.unwrap_or_else(|| wire_end.saturating_sub(tcp_offset).max(captured.len()));
    let tcp = &captured[..captured.len().min(wire_len)];
    TcpSegment {
        link,
        ip,
        tcp_offset,
        tcp,
        wire_len,
        tunnels,
    }
}

/// The IP facts of an IPv4 header.
#[inline]
fn ipv4_info(h: &Ipv4Header) -> IpInfo {
    IpInfo {
        version: IpVersion::V4,
        src: IpAddr::V4(h.src),
        dst: IpAddr::V4(h.dst),
        tos: h.tos,
        ttl: h.ttl,
        ident: Some(u32::from(h.ident)),
        df: h.df,
        flow_label: None,
        header_len: h.header_len,
    }
}

/// The IP facts of an IPv6 header.
#[inline]
fn ipv6_info(h: &Ipv6Header) -> IpInfo {
    IpInfo {
        version: IpVersion::V6,
        src: IpAddr::V6(h.src),
        dst: IpAddr::V6(h.dst),
        tos: h.traffic_class,
        ttl: h.hop_limit,
        ident: h.fragment_id,
        df: false,
        flow_label: Some(h.flow_label),
        header_len: h.header_len,
    }
}

/// What follows an Ethernet header's EtherType (after any VLAN tags), the
/// payload starting at `at`; `mac_at` as in [`Next::EtherType`].
fn ethernet_next(network: Network, mac_at: Option<usize>, at: usize) -> Result<Next, Skip> {
    Ok(match network {
        Network::Ipv4 => Next::Ipv4,
        Network::Ipv6 => Next::Ipv6,
        Network::OtherEthertype(ethertype) => Next::EtherType {
            ethertype,
            ethernet: true,
            mac_at,
        },
        // decode_link and by_ethertype give only these for Ethernet.
        _ => {
            return Err(Skip::Decode(DecodeError::Malformed {
                layer: "Ethernet",
                offset: at,
                reason: "no network layer",
            }))
        }
    })
}

/// What an EtherType carries.
fn by_ethertype(ethertype: u16, ethernet: bool) -> Result<Next, Skip> {
    Ok(match ethertype {
        link::ETHERTYPE_IPV4 => Next::Ipv4,
        link::ETHERTYPE_IPV6 => Next::Ipv6,
        ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST => Next::Mpls,
        crate::encap::pppoe::ETHERTYPE_SESSION => Next::Pppoe,
        crate::encap::pbb::ETHERTYPE_ITAG => Next::Pbb,
        crate::encap::vntag::ETHERTYPE_VNTAG => Next::VnTag,
        crate::encap::etag::ETHERTYPE_ETAG => Next::ETag,
        ETH_P_802_2 => Next::Llc { in_fddi: false },
        t if t < ETHERTYPE_MIN && ethernet => Next::Llc { in_fddi: false },
        t if t < ETHERTYPE_MIN || NOT_IP_ETHERTYPES.contains(&t) => {
            return Err(Skip::NotIp(NotIp::EtherType(t)))
        }
        t => return Err(Skip::Unsupported(Unsupported::EtherType(t))),
    })
}

fn need_ip(data: &[u8], at: usize) -> Result<(), Skip> {
    if at >= data.len() {
        return Err(Skip::Decode(DecodeError::Truncated {
            layer: "IP",
            offset: at,
            needed: 1,
            available: 0,
        }));
    }
    Ok(())
}

/// Makes a header-relative error offset frame-relative.
pub(crate) fn shift(e: DecodeError, by: usize) -> DecodeError {
    match e {
        DecodeError::Truncated {
            layer,
            offset,
            needed,
            available,
        } => DecodeError::Truncated {
            layer,
            offset: offset + by,
            needed,
            available,
        },
        DecodeError::Malformed {
            layer,
            offset,
            reason,
        } => DecodeError::Malformed {
            layer,
            offset: offset + by,
            reason,
        },
    }
}
