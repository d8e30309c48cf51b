//! The layers a segment was carried in: a compact record while decoding
//! ([`Tunnels`]), a typed view of each layer ([`Tunnel`], [`Layer`]) read
//! back from the frame, and the identity of the path that keeps two inner
//! connections apart ([`TunnelKey`]).

use super::erspan::Erspan;
use super::etag::ETag;
use super::fabricpath::FabricPath;
use super::fddi::Fddi;
use super::geneve::Geneve;
use super::gre::Gre;
use super::gtp::GtpU;
use super::l2tp::L2tp;
use super::llc::Llc;
use super::mpls::{Labels, MplsHeader, ENTRY_LEN};
use super::nflog::Nflog;
use super::pbb::Pbb;
use super::pppoe::Pppoe;
use super::vntag::VnTag;
use super::vxlan::Vxlan;
use super::{EncapKind, Endpoints};
use std::net::IpAddr;

/// At most this many layers are followed from the link layer to TCP; a
/// frame nested deeper is skipped ([`super::Skip::TooDeep`]).
pub const MAX_LAYERS: usize = 8;

/// One layer as the walk meets it: its kind, where its header starts and
/// where the IP header that carries it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawLayer {
    kind: EncapKind,
    at: usize,
    outer: Option<usize>,
}

const EMPTY: RawLayer = RawLayer {
    kind: EncapKind::Gre,
    at: 0,
    outer: None,
};

/// What the walk does with the layers it meets: count them (while
/// decoding, so a plain link costs nothing), or keep them (when a
/// segment's layers are asked for).
pub(crate) trait Recorder {
    /// Records a layer; false when [`MAX_LAYERS`] are recorded.
    fn push(&mut self, kind: EncapKind, at: usize, outer: Option<usize>) -> bool;
    /// Changes the kind of the layer recorded last (GRE turns out to be
    /// PPTP's or NVGRE once its header is read).
    fn set_last_kind(&mut self, kind: EncapKind);
    /// Layers recorded.
    fn len(&self) -> usize;
}

/// Counts layers.
#[derive(Debug, Default)]
pub(crate) struct Count(pub(crate) u8);

impl Recorder for Count {
    fn push(&mut self, _: EncapKind, _: usize, _: Option<usize>) -> bool {
        if usize::from(self.0) >= MAX_LAYERS {
            return false;
        }
        self.0 += 1;
        true
    }
    fn set_last_kind(&mut self, _: EncapKind) {}
    fn len(&self) -> usize {
        usize::from(self.0)
    }
}

/// Keeps the layers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keep {
    len: usize,
    layers: [RawLayer; MAX_LAYERS],
}

impl Keep {
    pub(crate) fn new() -> Self {
        Keep {
            len: 0,
            layers: [EMPTY; MAX_LAYERS],
        }
    }
}

impl Recorder for Keep {
    fn push(&mut self, kind: EncapKind, at: usize, outer: Option<usize>) -> bool {
        let Some(slot) = self.layers.get_mut(self.len) else {
            return false;
        };
        *slot = RawLayer { kind, at, outer };
        self.len += 1;
        true
    }
    fn set_last_kind(&mut self, kind: EncapKind) {
        if let Some(l) = self.len.checked_sub(1).and_then(|i| self.layers.get_mut(i)) {
            l.kind = kind;
        }
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// The layers a segment was carried in, outermost first (at most
/// [`MAX_LAYERS`]): empty for a segment on a plain link (Ethernet with or
/// without VLAN tags, Linux cooked capture, raw IP, loopback).
///
/// Small and free to copy: it holds the frame and how many layers there
/// are; the layers themselves are found again from the frame when asked
/// for ([`iter`](Self::iter), [`kinds`](Self::kinds), [`key`](Self::key)),
/// so decoding a plain link records nothing and allocates nothing.
#[derive(Clone, Copy)]
pub struct Tunnels<'a> {
    frame: &'a [u8],
    linktype: u32,
    len: u8,
}

impl std::fmt::Debug for Tunnels<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Tunnels<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<'a> Tunnels<'a> {
    /// No layers, over `frame`.
    pub fn empty(frame: &'a [u8]) -> Self {
        Tunnels {
            frame,
            linktype: 0,
            len: 0,
        }
    }

    /// The `len` layers of `frame`, found by the walk of [`crate::decode`].
    pub(crate) fn new(linktype: u32, frame: &'a [u8], len: usize) -> Self {
        Tunnels {
            frame,
            linktype,
            len: u8::try_from(len.min(MAX_LAYERS)).unwrap_or(0),
        }
    }

    /// Number of layers.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True for a segment on a plain link.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The layers as the walk meets them again.
    fn raw(&self) -> Keep {
        let mut keep = Keep::new();
        if self.len > 0 {
            // The same walk over the same bytes meets the same layers (the
            // wire length plays no part in that).
            let _ = crate::decode::walk_with(self.linktype, self.frame, 0, MAX_LAYERS, &mut keep);
            keep.len = keep.len.min(self.len());
        }
        keep
    }

    /// The kinds of the layers, outermost first.
    pub fn kinds(&self) -> impl Iterator<Item = EncapKind> {
        let keep = self.raw();
        (0..keep.len).map(move |i| keep.layers[i].kind)
    }

    /// The layers, outermost first, read from the frame.
    pub fn iter(&self) -> impl Iterator<Item = Tunnel<'a>> {
        let frame = self.frame;
        let keep = self.raw();
        (0..keep.len).map(move |i| Tunnel::read(frame, keep.layers[i]))
    }

    /// The identity of the path: equal for the segments of both directions
    /// of one inner connection in one tunnel, different when the tunnels
    /// differ (see [`TunnelKey`]).
    pub fn key(&self) -> TunnelKey {
        let mut key = TunnelKey::default();
        for (i, t) in self.iter().enumerate() {
            key.parts[i] = t.key_part();
            key.len = (i + 1) as u8;
        }
        key
    }

    /// The IP header that encapsulates the inner IP packet: that of the
    /// innermost layer carried in IP (the one the nearest encapsulating box
    /// wrote, e.g. the GRE or VXLAN packet's outer header), with its DS
    /// field and TTL and how many bytes it and the headers after it add in
    /// front of the inner IP header, which starts at `inner_ip_at` in the
    /// frame (the tunnel's overhead). `None` for a segment on a plain link
    /// or in link-level layers only (MPLS, PPPoE, ...).
    pub fn outer_ip(&self, inner_ip_at: usize) -> Option<OuterIp> {
        if self.len == 0 {
            return None;
        }
        let keep = self.raw();
        let last = (0..keep.len)
            .rev()
            .map(|i| keep.layers[i])
            .find(|l| l.outer.is_some())?;
        let at = last.outer?;
        let first = *self.frame.get(at)?;
        let (tos, ttl) = match first >> 4 {
            4 => (*self.frame.get(at + 1)?, *self.frame.get(at + 8)?),
            6 => {
                let b1 = *self.frame.get(at + 1)?;
                ((first << 4) | (b1 >> 4), *self.frame.get(at + 7)?)
            }
            _ => return None,
        };
        Some(OuterIp {
            kind: last.kind,
            v6: first >> 4 == 6,
            tos,
            ttl,
            overhead: inner_ip_at.checked_sub(at)?,
        })
    }

    /// An owned copy of the layers, for keeping past the frame (a
    /// connection's report names the tunnel its segments came in): the
    /// first `keep` bytes of the frame, which must reach past the inner IP
    /// header (the end of the inner TCP header does), so that the same walk
    /// finds the same layers in the copy ([`OwnedTunnels::tunnels`]).
    pub fn to_owned_prefix(&self, keep: usize) -> OwnedTunnels {
        let end = if self.len == 0 {
            0
        } else {
            keep.min(self.frame.len())
        };
        OwnedTunnels {
            linktype: self.linktype,
            len: self.len,
            frame: self.frame[..end].into(),
        }
    }
}

/// The outer IP header of a tunnel, as [`Tunnels::outer_ip`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OuterIp {
    /// The layer that header carries (GRE, VXLAN, IP in IP, ...).
    pub kind: EncapKind,
    /// IPv6 rather than IPv4.
    pub v6: bool,
    /// Its TOS byte / traffic class: DSCP and ECN field.
    pub tos: u8,
    /// Its TTL / hop limit.
    pub ttl: u8,
    /// Bytes from its first byte to the inner IP header's: the outer IP
    /// header and every header after it (for GRE over IPv4 without key 24,
    /// for VXLAN over IPv4 50: UDP, VXLAN and the inner Ethernet header).
    pub overhead: usize,
}

/// The layers of one segment, owned ([`Tunnels::to_owned_prefix`]): the
/// frame's headers up to the inner transport header, and how many layers
/// they hold.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OwnedTunnels {
    linktype: u32,
    len: u8,
    frame: Box<[u8]>,
}

impl std::fmt::Debug for OwnedTunnels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.tunnels().fmt(f)
    }
}

impl OwnedTunnels {
    /// The layers, read from the copy as from the frame.
    pub fn tunnels(&self) -> Tunnels<'_> {
        Tunnels {
            frame: &self.frame,
            linktype: self.linktype,
            len: self.len,
        }
    }
}

/// One layer: the outer IP endpoints when an IP header carries it, and the
/// layer's own fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunnel<'a> {
    /// The addresses of the IP header that carries this layer (GRE, the UDP
    /// tunnels, IP in IP); `None` for link-level layers.
    pub outer: Option<Endpoints>,
    /// The layer.
    pub layer: Layer<'a>,
}

/// The fields of one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer<'a> {
    /// GRE version 0: key, sequence number, protocol type.
    Gre(Gre),
    /// PPTP's enhanced GRE: call ID, sequence and acknowledgment numbers.
    Pptp(Gre),
    /// NVGRE: the VSID and FlowID ([`Gre::vsid`], [`Gre::flow_id`]).
    Nvgre(Gre),
    /// ERSPAN: type, session ID, VLAN, index.
    Erspan(Erspan),
    /// VXLAN: the VNI.
    Vxlan(Vxlan),
    /// Geneve: the VNI and protocol.
    Geneve(Geneve),
    /// GTP-U: the TEID.
    GtpU(GtpU),
    /// L2TPv2: the tunnel and session IDs (the recipient's), Ns and Nr.
    L2tp(L2tp),
    /// IP in IP: the outer header is the layer ([`Tunnel::outer`]).
    IpInIp,
    /// MPLS: the label stack, top first, and whether a pseudowire control word followed.
    Mpls {
        /// The label stack entries.
        labels: Labels<'a>,
        /// A pseudowire control word followed the stack.
        control_word: bool,
    },
    /// PPPoE: the session ID.
    Pppoe(Pppoe),
    /// PPP.
    Ppp,
    /// Cisco HDLC.
    CiscoHdlc,
    /// 802.1ah: the I-SID.
    Pbb(Pbb),
    /// 802.2 LLC / SNAP.
    LlcSnap(Llc),
    /// FDDI.
    Fddi(Fddi),
    /// NFLOG: the group.
    Nflog(Nflog),
    /// FabricPath: the outer switch ids, FTag and TTL.
    FabricPath(FabricPath),
    /// VN-Tag: the destination and source VIFs.
    VnTag(VnTag),
    /// E-Tag: the E-CID and ingress E-CID.
    ETag(ETag),
}

impl<'a> Tunnel<'a> {
    /// Reads the layer back from the frame it was decoded from: every
    /// header was whole then, so each parse succeeds; a failure (which
    /// cannot happen) gives the bare kind with zero fields.
    fn read(frame: &'a [u8], raw: RawLayer) -> Tunnel<'a> {
        let at = raw.at;
        let outer = raw.outer.and_then(|o| Endpoints::read(frame, o));
        let gre = || {
            Gre::parse(frame, at).map(|p| p.header).unwrap_or(Gre {
                version: 0,
                protocol: 0,
                checksum_present: false,
                key: None,
                seq: None,
                ack: None,
                call_id: None,
            })
        };
        let layer = match raw.kind {
            EncapKind::Gre => Layer::Gre(gre()),
            EncapKind::Pptp => Layer::Pptp(gre()),
            EncapKind::Nvgre => Layer::Nvgre(gre()),
            EncapKind::Erspan => Layer::Erspan(erspan(frame, at)),
            EncapKind::Vxlan => Layer::Vxlan(
                Vxlan::parse(frame, at).map_or(Vxlan { vni: 0, flags: 0 }, |p| p.header),
            ),
            EncapKind::Geneve => Layer::Geneve(Geneve::parse(frame, at).map_or(
                Geneve {
                    vni: 0,
                    protocol: 0,
                    options_len: 0,
                },
                |p| p.header,
            )),
            EncapKind::GtpU => Layer::GtpU(
                GtpU::parse(frame, at).map_or(GtpU { teid: 0, seq: None }, |p| p.header),
            ),
            EncapKind::L2tp => Layer::L2tp(L2tp::parse(frame, at).map_or(
                L2tp {
                    tunnel_id: 0,
                    session_id: 0,
                    ns: None,
                    nr: None,
                },
                |p| p.header,
            )),
            EncapKind::IpInIp => Layer::IpInIp,
            EncapKind::Mpls => {
                let (depth, control_word) = MplsHeader::parse(frame, at)
                    .map_or((0, false), |p| (p.header.depth, p.header.control_word));
                let stack = frame.get(at..at + depth * ENTRY_LEN).unwrap_or(&[]);
                Layer::Mpls {
                    labels: Labels::new(stack),
                    control_word,
                }
            }
            EncapKind::Pppoe => {
                Layer::Pppoe(Pppoe::parse(frame, at).map_or(Pppoe { session: 0 }, |p| p.header))
            }
            EncapKind::Ppp => Layer::Ppp,
            EncapKind::CiscoHdlc => Layer::CiscoHdlc,
            EncapKind::Pbb => {
                Layer::Pbb(Pbb::parse(frame, at).map_or(Pbb { isid: 0, pcp: 0 }, |p| p.header))
            }
            EncapKind::LlcSnap => Layer::LlcSnap(Llc::parse(frame, at).map_or(
                Llc {
                    dsap: 0,
                    oui: None,
                    pid: None,
                },
                |p| p.header,
            )),
            EncapKind::Fddi => {
                Layer::Fddi(Fddi::parse(frame, at).map_or(Fddi { frame_control: 0 }, |p| p.header))
            }
            EncapKind::Nflog => Layer::Nflog(Nflog::parse(frame, at).map_or(
                Nflog {
                    family: 0,
                    group: 0,
                },
                |p| p.header,
            )),
            EncapKind::FabricPath => Layer::FabricPath(FabricPath::parse(frame, at).map_or(
                FabricPath {
                    dst_switch_id: 0,
                    src_switch_id: 0,
                    ftag: 0,
                    ttl: 0,
                },
                |p| p.header,
            )),
            EncapKind::VnTag => Layer::VnTag(VnTag::parse(frame, at).map_or(
                VnTag {
                    dst_vif: 0,
                    src_vif: 0,
                    direction: false,
                    pointer: false,
                    looped: false,
                },
                |p| p.header,
            )),
            EncapKind::ETag => Layer::ETag(ETag::parse(frame, at).map_or(
                ETag {
                    ecid_base: 0,
                    ecid_ext: 0,
                    grp: 0,
                    ingress_ecid_base: 0,
                    ingress_ecid_ext: 0,
                    pcp: 0,
                },
                |p| p.header,
            )),
        };
        Tunnel { outer, layer }
    }

    /// The kind of the layer.
    pub fn kind(&self) -> EncapKind {
        match self.layer {
            Layer::Gre(_) => EncapKind::Gre,
            Layer::Pptp(_) => EncapKind::Pptp,
            Layer::Nvgre(_) => EncapKind::Nvgre,
            Layer::Erspan(_) => EncapKind::Erspan,
            Layer::Vxlan(_) => EncapKind::Vxlan,
            Layer::Geneve(_) => EncapKind::Geneve,
            Layer::GtpU(_) => EncapKind::GtpU,
            Layer::L2tp(_) => EncapKind::L2tp,
            Layer::IpInIp => EncapKind::IpInIp,
            Layer::Mpls { .. } => EncapKind::Mpls,
            Layer::Pppoe(_) => EncapKind::Pppoe,
            Layer::Ppp => EncapKind::Ppp,
            Layer::CiscoHdlc => EncapKind::CiscoHdlc,
            Layer::Pbb(_) => EncapKind::Pbb,
            Layer::LlcSnap(_) => EncapKind::LlcSnap,
            Layer::Fddi(_) => EncapKind::Fddi,
            Layer::Nflog(_) => EncapKind::Nflog,
            Layer::FabricPath(_) => EncapKind::FabricPath,
            Layer::VnTag(_) => EncapKind::VnTag,
            Layer::ETag(_) => EncapKind::ETag,
        }
    }

    /// The identifier that names this tunnel in both directions, where the
    /// format has one: the GRE key, the NVGRE VSID, the ERSPAN session, the
    /// VXLAN and Geneve VNI, the PPPoE session, the I-SID.
    ///
    /// Not included, because each direction has its own: GTP-U TEIDs, L2TP
    /// tunnel and session IDs (each names the recipient's end), MPLS labels,
    /// PPTP call IDs. Not included, because they change from packet
    /// to packet or do not name a tunnel: sequence numbers, the ERSPAN
    /// index, the NFLOG group (one packet may be logged to several).
    /// FabricPath has none: its outer switch ids swap with the direction,
    /// and its FTag names a distribution tree, not a tunnel. VN-Tag and
    /// E-Tag have none: they are tags of one hop, like VLAN tags (which are
    /// not part of the key either), and the VIF or E-CID a port is known
    /// by is the source field one way and the destination field the other.
    pub fn shared_id(&self) -> Option<u32> {
        match self.layer {
            Layer::Gre(g) => g.key,
            Layer::Nvgre(g) => g.vsid(),
            Layer::Erspan(e) => e.session.map(u32::from),
            Layer::Vxlan(v) => Some(v.vni),
            Layer::Geneve(g) => Some(g.vni),
            Layer::Pppoe(p) => Some(u32::from(p.session)),
            Layer::Pbb(p) => Some(p.isid),
            _ => None,
        }
    }

    fn key_part(&self) -> KeyPart {
        KeyPart {
            kind: Some(self.kind()),
            outer: self.outer.map(|e| e.ordered()),
            id: self.shared_id(),
        }
    }
}

/// The ERSPAN header at `at`, found again from the GRE header before it
/// (its protocol and sequence flag say the type).
fn erspan(frame: &[u8], at: usize) -> Erspan {
    let none = Erspan {
        erspan_type: 0,
        session: None,
        vlan: None,
        index: None,
    };
    // `at` is the ERSPAN header; its type was decided from the GRE header,
    // whose protocol is recorded here in the first bytes' meaning: type I
    // has no header, so the layer is recorded at the GRE header instead.
    match Gre::parse(frame, at) {
        Ok(p) if p.payload == super::Payload::EtherType(p.header.protocol) => Erspan::parse(
            frame,
            p.payload_at,
            p.header.protocol,
            p.header.seq.is_some(),
        )
        .map_or(none, |e| e.header),
        _ => none,
    }
}

/// One layer of a [`TunnelKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct KeyPart {
    /// The layer's kind (`None` only in unused slots).
    pub kind: Option<EncapKind>,
    /// The outer endpoints, lower address first.
    pub outer: Option<(IpAddr, IpAddr)>,
    /// The identifier both directions share ([`Tunnel::shared_id`]).
    pub id: Option<u32>,
}

/// The path a segment took, as far as it names a connection: per layer the
/// kind, the outer endpoints in a fixed order and the identifier both
/// directions share. Two segments of one inner connection in one tunnel
/// have equal keys whichever way they travel; two inner connections with
/// the same addresses and ports in two tunnels have different keys. The
/// empty key (`TunnelKey::default()`) is a plain link's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TunnelKey {
    len: u8,
    parts: [KeyPart; MAX_LAYERS],
}

impl TunnelKey {
    /// The layers of the key, outermost first.
    pub fn parts(&self) -> &[KeyPart] {
        &self.parts[..usize::from(self.len)]
    }

    /// A key of these layers, outermost first; `None` for more than
    /// [`MAX_LAYERS`].
    pub fn from_parts(parts: &[KeyPart]) -> Option<TunnelKey> {
        let mut key = TunnelKey::default();
        key.parts.get_mut(..parts.len())?.copy_from_slice(parts);
        key.len = u8::try_from(parts.len()).ok()?;
        Some(key)
    }
}
