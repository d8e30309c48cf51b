//! The layers a segment was carried in: a compact record while decoding
//! ([`Tunnels`]), a typed view of each layer ([`Tunnel`], [`Layer`]) read
//! back from the frame, and the identity of the path that keeps two inner
//! connections apart ([`TunnelKey`]).

use super::erspan::Erspan;
use super::fddi::Fddi;
use super::geneve::Geneve;
use super::gre::Gre;
use super::gtp::GtpU;
use super::llc::Llc;
use super::mpls::{Labels, MplsHeader, ENTRY_LEN};
use super::nflog::Nflog;
use super::pbb::Pbb;
use super::pppoe::Pppoe;
use super::vxlan::Vxlan;
use super::{EncapKind, Endpoints};
use std::net::IpAddr;

/// At most this many layers are followed from the link layer to TCP; a
/// frame nested deeper is skipped ([`super::Skip::TooDeep`]).
pub const MAX_LAYERS: usize = 8;
/// `outer` of a layer that no IP header carries.
const NO_OUTER: u32 = u32::MAX;

/// One layer as recorded while decoding: its kind, where its header starts
/// and where the IP header that carries it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RawLayer {
    kind: EncapKind,
    at: u32,
    outer: u32,
}

const EMPTY: RawLayer = RawLayer {
    kind: EncapKind::Gre,
    at: 0,
    outer: NO_OUTER,
};

/// The layers a segment was carried in, outermost first: at most
/// [`MAX_LAYERS`], a kind and two offsets each, borrowed from the frame
/// (no allocation). Empty for a segment on a plain link (Ethernet with or
/// without VLAN tags, Linux cooked capture, raw IP, loopback).
#[derive(Clone, Copy)]
pub struct Tunnels<'a> {
    frame: &'a [u8],
    len: u8,
    layers: [RawLayer; MAX_LAYERS],
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
            len: 0,
            layers: [EMPTY; MAX_LAYERS],
        }
    }

    /// Records a layer of `kind` whose header is at `at`, carried by the IP
    /// header at `outer` (if any). False when [`MAX_LAYERS`] are recorded.
    pub(crate) fn push(&mut self, kind: EncapKind, at: usize, outer: Option<usize>) -> bool {
        let i = usize::from(self.len);
        if i >= MAX_LAYERS {
            return false;
        }
        self.layers[i] = RawLayer {
            kind,
            at: u32::try_from(at).unwrap_or(NO_OUTER),
            outer: outer
                .and_then(|o| u32::try_from(o).ok())
                .unwrap_or(NO_OUTER),
        };
        self.len += 1;
        true
    }

    /// Changes the kind of the layer recorded last (GRE turns out to be
    /// PPTP's or NVGRE once its header is read).
    pub(crate) fn set_last_kind(&mut self, kind: EncapKind) {
        if let Some(l) = usize::from(self.len)
            .checked_sub(1)
            .and_then(|i| self.layers.get_mut(i))
        {
            l.kind = kind;
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

    /// The kinds of the layers, outermost first.
    pub fn kinds(&self) -> impl Iterator<Item = EncapKind> + '_ {
        self.layers[..self.len()].iter().map(|l| l.kind)
    }

    /// The layers, outermost first, read from the frame.
    pub fn iter(&self) -> impl Iterator<Item = Tunnel<'a>> + '_ {
        let frame = self.frame;
        self.layers[..self.len()]
            .iter()
            .map(move |l| Tunnel::read(frame, *l))
    }

    /// The identity of the path: equal for the segments of both directions
    /// of one inner connection in one tunnel, different when the tunnels
    /// differ (see [`TunnelKey`]).
    pub fn key(&self) -> TunnelKey {
        let mut key = TunnelKey::default();
        for (i, t) in self.iter().enumerate() {
            key.parts[i] = t.key_part();
        }
        key.len = self.len;
        key
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
}

impl<'a> Tunnel<'a> {
    /// Reads the layer back from the frame it was decoded from: every
    /// header was whole then, so each parse succeeds; a failure (which
    /// cannot happen) gives the bare kind with zero fields.
    fn read(frame: &'a [u8], raw: RawLayer) -> Tunnel<'a> {
        let at = raw.at as usize;
        let outer = (raw.outer != NO_OUTER)
            .then(|| Endpoints::read(frame, raw.outer as usize))
            .flatten();
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
            Layer::IpInIp => EncapKind::IpInIp,
            Layer::Mpls { .. } => EncapKind::Mpls,
            Layer::Pppoe(_) => EncapKind::Pppoe,
            Layer::Ppp => EncapKind::Ppp,
            Layer::CiscoHdlc => EncapKind::CiscoHdlc,
            Layer::Pbb(_) => EncapKind::Pbb,
            Layer::LlcSnap(_) => EncapKind::LlcSnap,
            Layer::Fddi(_) => EncapKind::Fddi,
            Layer::Nflog(_) => EncapKind::Nflog,
        }
    }

    /// The identifier that names this tunnel in both directions, where the
    /// format has one: the GRE key, the NVGRE VSID, the ERSPAN session, the
    /// VXLAN and Geneve VNI, the PPPoE session, the I-SID.
    ///
    /// Not included, because each direction has its own: GTP-U TEIDs, MPLS
    /// labels, PPTP call IDs. Not included, because they change from packet
    /// to packet or do not name a tunnel: sequence numbers, the ERSPAN
    /// index, the NFLOG group (one packet may be logged to several).
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
}
