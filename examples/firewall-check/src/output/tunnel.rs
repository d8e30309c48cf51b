//! The layers a segment was carried in, and a run's counts of segments by
//! encapsulation and of frames skipped by reason: in words and as JSON.
//!
//! A layer in words is its name, the outer IP endpoints when an IP header
//! carries it, and its identifiers, then a colon, outermost first, before
//! the inner IP header, as tcpdump prints a tunnel:
//! `GRE 198.18.0.1 > 198.18.0.2 key 256 seq 3: VXLAN ... vni 5000: IP ...`.
//! The JSON of each layer is described in `docs/json.md` (`tunnels` and
//! `summary` of `dump --json`).

use std::fmt;
use std::io::{self, Write};

use capture::encap::OwnedTunnels;
use capture::encap::{EncapKind, Layer, SkipReason, Tunnel};
use capture::tally::{Cause, Tally};
use capture::Tunnels;

use crate::conn::tracker::CarriedIn;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};

use crate::output::format::write_u64;

/// A kind of layer in words.
pub fn kind_name(kind: EncapKind) -> &'static str {
    match kind {
        EncapKind::Gre => "GRE",
        EncapKind::Pptp => "PPTP GRE",
        EncapKind::Nvgre => "NVGRE",
        EncapKind::Erspan => "ERSPAN",
        EncapKind::Vxlan => "VXLAN",
        EncapKind::Geneve => "Geneve",
        EncapKind::GtpU => "GTP-U",
        EncapKind::L2tp => "L2TP",
        EncapKind::IpInIp => "IP-in-IP",
        EncapKind::Mpls => "MPLS",
        EncapKind::Pppoe => "PPPoE",
        EncapKind::Ppp => "PPP",
        EncapKind::CiscoHdlc => "C-HDLC",
        EncapKind::Pbb => "802.1ah",
        EncapKind::LlcSnap => "LLC/SNAP",
        EncapKind::Fddi => "FDDI",
        EncapKind::Nflog => "NFLOG",
        EncapKind::FabricPath => "FabricPath",
        EncapKind::VnTag => "VN-Tag",
        EncapKind::ETag => "E-Tag",
    }
}

/// Writes each layer in words, outermost first, each followed by `": "`.
#[cold]
#[inline(never)]
pub fn write_text<W: Write + ?Sized>(w: &mut W, tunnels: &Tunnels<'_>) -> io::Result<()> {
    for t in tunnels.iter() {
        w.write_all(kind_name(t.kind()).as_bytes())?;
        if let Some(o) = t.outer {
            write!(w, " {} > {}", o.src, o.dst)?;
        }
        write_text_fields(w, &t, true)?;
        w.write_all(b": ")?;
    }
    Ok(())
}

/// The layers as a connection's path, in words, outermost first,
/// separated by `": "` (as [`write_text`], without the last colon, and
/// without what changes from packet to packet: sequence and acknowledgment
/// numbers, the ERSPAN index): `GRE 198.18.0.1 > 198.18.0.2 key 1`.
#[cold]
#[inline(never)]
pub fn write_text_layers<W: Write + ?Sized>(w: &mut W, tunnels: &Tunnels<'_>) -> io::Result<()> {
    for (i, t) in tunnels.iter().enumerate() {
        if i > 0 {
            w.write_all(b": ")?;
        }
        w.write_all(kind_name(t.kind()).as_bytes())?;
        if let Some(o) = t.outer {
            write!(w, " {} > {}", o.src, o.dst)?;
        }
        write_text_fields(w, &t, false)?;
    }
    Ok(())
}

/// The layers as a connection's path, as serde sees them (for the reports
/// built with serde, `analyze --json`): the array [`write_json`] writes,
/// field for field, without what changes from packet to packet (`seq`,
/// `ack`, `ns`, `nr`, `index`).
pub struct JsonLayers<'a>(pub Tunnels<'a>);

impl Serialize for JsonLayers<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for t in self.0.iter() {
            seq.serialize_element(&JsonLayer(t))?;
        }
        seq.end()
    }
}

struct JsonLayer<'a>(Tunnel<'a>);

impl Serialize for JsonLayer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = &self.0;
        let mut o = s.serialize_struct("Layer", 8)?;
        o.serialize_field("kind", t.kind().id())?;
        if let Some(e) = t.outer {
            o.serialize_field("outer_src", &e.src.to_string())?;
            o.serialize_field("outer_dst", &e.dst.to_string())?;
        }
        match t.layer {
            Layer::Gre(g) => o.serialize_field("key", &g.key)?,
            Layer::Pptp(g) => o.serialize_field("call_id", &g.call_id)?,
            Layer::Nvgre(g) => {
                o.serialize_field("vsid", &g.vsid())?;
                o.serialize_field("flow_id", &g.flow_id())?;
            }
            Layer::Erspan(e) => {
                o.serialize_field("type", &e.erspan_type)?;
                o.serialize_field("session", &e.session)?;
                o.serialize_field("vlan", &e.vlan)?;
            }
            Layer::Vxlan(v) => o.serialize_field("vni", &v.vni)?,
            Layer::Geneve(g) => o.serialize_field("vni", &g.vni)?,
            Layer::GtpU(g) => o.serialize_field("teid", &g.teid)?,
            Layer::L2tp(l) => {
                o.serialize_field("tunnel_id", &l.tunnel_id)?;
                o.serialize_field("session_id", &l.session_id)?;
            }
            Layer::Mpls {
                labels,
                control_word,
            } => {
                let labels: Vec<u32> = labels.iter().map(|l| l.label).collect();
                o.serialize_field("labels", &labels)?;
                o.serialize_field("control_word", &control_word)?;
            }
            Layer::Pppoe(p) => o.serialize_field("session", &p.session)?,
            Layer::Pbb(p) => o.serialize_field("isid", &p.isid)?,
            Layer::Nflog(n) => o.serialize_field("group", &n.group)?,
            Layer::FabricPath(f) => {
                o.serialize_field("ftag", &f.ftag)?;
                o.serialize_field("src_switch_id", &f.src_switch_id)?;
                o.serialize_field("dst_switch_id", &f.dst_switch_id)?;
            }
            Layer::VnTag(v) => {
                o.serialize_field("dst_vif", &v.dst_vif)?;
                o.serialize_field("src_vif", &v.src_vif)?;
            }
            Layer::ETag(e) => {
                o.serialize_field("ecid_base", &e.ecid_base)?;
                o.serialize_field("ecid_ext", &e.ecid_ext)?;
                o.serialize_field("ingress_ecid_base", &e.ingress_ecid_base)?;
                o.serialize_field("ingress_ecid_ext", &e.ingress_ecid_ext)?;
            }
            Layer::IpInIp | Layer::Ppp | Layer::CiscoHdlc | Layer::LlcSnap(_) | Layer::Fddi(_) => {}
        }
        o.end()
    }
}

/// A layer's fields in words; `per_packet`: with the sequence and
/// acknowledgment numbers and the ERSPAN index.
fn write_text_fields<W: Write + ?Sized>(
    w: &mut W,
    t: &Tunnel<'_>,
    per_packet: bool,
) -> io::Result<()> {
    let opt = |w: &mut W, name: &str, v: Option<u64>| match v {
        Some(v) => write!(w, " {name} {v}"),
        None => Ok(()),
    };
    let packet = |v: Option<u64>| v.filter(|_| per_packet);
    match t.layer {
        Layer::Gre(g) => {
            opt(w, "key", g.key.map(u64::from))?;
            opt(w, "seq", packet(g.seq.map(u64::from)))
        }
        Layer::Pptp(g) => {
            opt(w, "call", g.call_id.map(u64::from))?;
            opt(w, "seq", packet(g.seq.map(u64::from)))?;
            opt(w, "ack", packet(g.ack.map(u64::from)))
        }
        Layer::Nvgre(g) => {
            opt(w, "vsid", g.vsid().map(u64::from))?;
            opt(w, "flowid", g.flow_id().map(u64::from))
        }
        Layer::Erspan(e) => {
            let roman = ["", "I", "II", "III"];
            write!(
                w,
                " {}",
                roman.get(usize::from(e.erspan_type)).unwrap_or(&"?")
            )?;
            opt(w, "session", e.session.map(u64::from))?;
            opt(w, "vlan", e.vlan.map(u64::from))?;
            opt(w, "index", packet(e.index.map(u64::from)))
        }
        Layer::Vxlan(v) => write!(w, " vni {}", v.vni),
        Layer::Geneve(g) => write!(w, " vni {}", g.vni),
        Layer::GtpU(g) => {
            write!(w, " teid {}", g.teid)?;
            opt(w, "seq", packet(g.seq.map(u64::from)))
        }
        Layer::L2tp(l) => {
            write!(w, " tunnel {} session {}", l.tunnel_id, l.session_id)?;
            opt(w, "ns", packet(l.ns.map(u64::from)))?;
            opt(w, "nr", packet(l.nr.map(u64::from)))
        }
        Layer::Mpls {
            labels,
            control_word,
        } => {
            for (i, l) in labels.iter().enumerate() {
                w.write_all(if i == 0 { b" label " } else { b"/" })?;
                write_u64(w, u64::from(l.label))?;
            }
            if control_word {
                w.write_all(b" control word")?;
            }
            Ok(())
        }
        Layer::Pppoe(p) => write!(w, " session {}", p.session),
        Layer::Pbb(p) => write!(w, " isid {}", p.isid),
        Layer::Nflog(n) => write!(w, " group {}", n.group),
        Layer::FabricPath(f) => {
            write!(
                w,
                " switch {} > {} ftag {}",
                f.src_switch_id, f.dst_switch_id, f.ftag
            )?;
            opt(w, "ttl", packet(Some(u64::from(f.ttl))))
        }
        Layer::VnTag(v) => write!(w, " vif {} > {}", v.src_vif, v.dst_vif),
        Layer::ETag(e) => write!(
            w,
            " ecid {}.{} ingress {}.{}",
            e.ecid_ext, e.ecid_base, e.ingress_ecid_ext, e.ingress_ecid_base
        ),
        Layer::IpInIp | Layer::Ppp | Layer::CiscoHdlc | Layer::LlcSnap(_) | Layer::Fddi(_) => {
            Ok(())
        }
    }
}

/// Writes the layers as a JSON array of objects, outermost first.
#[cold]
#[inline(never)]
pub fn write_json<W: Write + ?Sized>(w: &mut W, tunnels: &Tunnels<'_>) -> io::Result<()> {
    w.write_all(b"[")?;
    for (i, t) in tunnels.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write!(w, "{{\"kind\":\"{}\"", t.kind().id())?;
        if let Some(o) = t.outer {
            write!(
                w,
                ",\"outer_src\":\"{}\",\"outer_dst\":\"{}\"",
                o.src, o.dst
            )?;
        }
        write_json_fields(w, &t)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"]")
}

fn write_json_fields<W: Write + ?Sized>(w: &mut W, t: &Tunnel<'_>) -> io::Result<()> {
    let field = |w: &mut W, name: &str, v: Option<u64>| match v {
        Some(v) => write!(w, ",\"{name}\":{v}"),
        None => write!(w, ",\"{name}\":null"),
    };
    match t.layer {
        Layer::Gre(g) => {
            field(w, "key", g.key.map(u64::from))?;
            field(w, "seq", g.seq.map(u64::from))
        }
        Layer::Pptp(g) => {
            field(w, "call_id", g.call_id.map(u64::from))?;
            field(w, "seq", g.seq.map(u64::from))?;
            field(w, "ack", g.ack.map(u64::from))
        }
        Layer::Nvgre(g) => {
            field(w, "vsid", g.vsid().map(u64::from))?;
            field(w, "flow_id", g.flow_id().map(u64::from))
        }
        Layer::Erspan(e) => {
            field(w, "type", Some(u64::from(e.erspan_type)))?;
            field(w, "session", e.session.map(u64::from))?;
            field(w, "vlan", e.vlan.map(u64::from))?;
            field(w, "index", e.index.map(u64::from))
        }
        Layer::Vxlan(v) => field(w, "vni", Some(u64::from(v.vni))),
        Layer::Geneve(g) => field(w, "vni", Some(u64::from(g.vni))),
        Layer::GtpU(g) => {
            field(w, "teid", Some(u64::from(g.teid)))?;
            field(w, "seq", g.seq.map(u64::from))
        }
        Layer::L2tp(l) => {
            field(w, "tunnel_id", Some(u64::from(l.tunnel_id)))?;
            field(w, "session_id", Some(u64::from(l.session_id)))?;
            field(w, "ns", l.ns.map(u64::from))?;
            field(w, "nr", l.nr.map(u64::from))
        }
        Layer::Mpls {
            labels,
            control_word,
        } => {
            w.write_all(b",\"labels\":[")?;
            for (i, l) in labels.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_u64(w, u64::from(l.label))?;
            }
            write!(w, "],\"control_word\":{control_word}")
        }
        Layer::Pppoe(p) => field(w, "session", Some(u64::from(p.session))),
        Layer::Pbb(p) => field(w, "isid", Some(u64::from(p.isid))),
        Layer::Nflog(n) => field(w, "group", Some(u64::from(n.group))),
        Layer::FabricPath(f) => {
            field(w, "ftag", Some(u64::from(f.ftag)))?;
            field(w, "src_switch_id", Some(u64::from(f.src_switch_id)))?;
            field(w, "dst_switch_id", Some(u64::from(f.dst_switch_id)))?;
            field(w, "ttl", Some(u64::from(f.ttl)))
        }
        Layer::VnTag(v) => {
            field(w, "dst_vif", Some(u64::from(v.dst_vif)))?;
            field(w, "src_vif", Some(u64::from(v.src_vif)))
        }
        Layer::ETag(e) => {
            field(w, "ecid_base", Some(u64::from(e.ecid_base)))?;
            field(w, "ecid_ext", Some(u64::from(e.ecid_ext)))?;
            field(w, "ingress_ecid_base", Some(u64::from(e.ingress_ecid_base)))?;
            field(w, "ingress_ecid_ext", Some(u64::from(e.ingress_ecid_ext)))
        }
        Layer::IpInIp | Layer::Ppp | Layer::CiscoHdlc | Layer::LlcSnap(_) | Layer::Fddi(_) => {
            Ok(())
        }
    }
}

/// One direction's layers, or `null`.
fn layers(t: &Option<OwnedTunnels>) -> Option<JsonLayers<'_>> {
    t.as_ref().map(|t| JsonLayers(t.tunnels()))
}

/// A connection's layers per direction, as serde sees them:
/// `{"client_to_server": [layers] | null, "server_to_client": ...}`.
pub struct CarriedInJson<'a>(pub &'a CarriedIn);

impl Serialize for CarriedInJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let CarriedIn {
            client_to_server,
            server_to_client,
        } = self.0;
        let mut o = s.serialize_struct("CarriedIn", 2)?;
        o.serialize_field("client_to_server", &layers(client_to_server))?;
        o.serialize_field("server_to_client", &layers(server_to_client))?;
        o.end()
    }
}

/// A connection's layers in words, a line for each direction seen, each
/// after `indent`: `tunnel client->server: GRE 198.18.0.1 > 198.18.0.2
/// key 1`.
pub fn write_carried_text<W: Write + ?Sized>(
    w: &mut W,
    t: &CarriedIn,
    indent: &str,
) -> io::Result<()> {
    for (name, layers) in [
        ("client->server", &t.client_to_server),
        ("server->client", &t.server_to_client),
    ] {
        if let Some(layers) = layers {
            write!(w, "{indent}tunnel {name}: ")?;
            write_text_layers(w, &layers.tunnels())?;
            w.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// A run's counts as serde sees them: the object [`write_json_summary`]
/// writes, field for field (for the reports built with serde).
pub struct SummaryJson<'a> {
    /// Records read.
    pub frames: u64,
    /// The counts.
    pub tally: &'a Tally,
}

impl Serialize for SummaryJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Kinds<'a>(&'a Tally);
        impl Serialize for Kinds<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                for (kind, n) in self.0.by_encapsulation() {
                    m.serialize_entry(kind.id(), &n)?;
                }
                m.end()
            }
        }
        struct Skipped(Cause, u64);
        impl Serialize for Skipped {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut o = s.serialize_struct("Skipped", 3)?;
                o.serialize_field("reason", self.0.reason().id())?;
                o.serialize_field("detail", &CauseDetail(self.0).to_string())?;
                o.serialize_field("frames", &self.1)?;
                o.end()
            }
        }
        let t = self.tally;
        let skipped: Vec<Skipped> = t.skipped().map(|(c, n)| Skipped(c, n)).collect();
        let mut o = s.serialize_struct("Summary", 6)?;
        o.serialize_field("frames", &self.frames)?;
        o.serialize_field("segments", &t.segments())?;
        o.serialize_field("plain", &t.plain())?;
        o.serialize_field("encapsulations", &Kinds(t))?;
        o.serialize_field("skipped", &skipped)?;
        o.serialize_field("unopened", &t.unopened())?;
        o.end()
    }
}

/// A skip reason in words, as counted ("encapsulation unsupported").
pub fn reason_words(r: SkipReason) -> &'static str {
    match r {
        SkipReason::LinkType => "link type unsupported",
        SkipReason::Encapsulation => "encapsulation unsupported",
        SkipReason::NotIp => "not IP",
        SkipReason::NotTcp => "not TCP",
        SkipReason::Fragment => "later IP fragment",
        SkipReason::Truncated => "truncated",
        SkipReason::Malformed => "malformed",
        SkipReason::TooDeep => "nested too deep",
    }
}

/// The detail of a cause in words: `link type 147`, `UDP port 1701`,
/// `EtherType 0x0806`, `IP protocol 17`, `GRE header`.
pub struct CauseDetail(pub Cause);

impl fmt::Display for CauseDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Cause::LinkType(t) => write!(f, "link type {t}"),
            Cause::Unsupported(u) => write!(f, "{u}"),
            Cause::NotIp(n) => write!(f, "{n}"),
            Cause::NotTcp(p) => write!(f, "IP protocol {p}"),
            Cause::Fragment => f.write_str("fragment"),
            Cause::Truncated(layer) | Cause::Malformed(layer) => write!(f, "{layer} header"),
            Cause::TooDeep => write!(f, "more than {} layers", capture::encap::MAX_LAYERS),
        }
    }
}

/// At most this many details are listed per reason in words.
const DETAILS_IN_WORDS: usize = 4;

/// True when a run's counts are worth a summary: a segment was carried in
/// a tunnel or encapsulation, or a frame could not be opened.
pub fn summary_due(tally: &Tally) -> bool {
    tally.encapsulated() > 0 || tally.unopened() > 0
}

/// The counts in one line of words (no newline):
/// `44 frames, 36 TCP segments (6 plain, 30 in GRE); 8 frames skipped: 4
/// encapsulation unsupported (UDP port 1701: 1, ...), ...`.
pub fn write_text_summary<W: Write + ?Sized>(
    w: &mut W,
    frames: u64,
    tally: &Tally,
) -> io::Result<()> {
    write!(
        w,
        "{} frame{}, {} TCP segment{} ({} plain",
        frames,
        plural(frames),
        tally.segments(),
        plural(tally.segments()),
        tally.plain()
    )?;
    for (kind, n) in tally.by_encapsulation() {
        write!(w, ", {n} in {}", kind_name(kind))?;
    }
    w.write_all(b")")?;
    let skipped = tally.skipped_total();
    if skipped == 0 {
        return Ok(());
    }
    write!(w, "; {skipped} frame{} skipped:", plural(skipped))?;
    for (i, (reason, n)) in tally.by_reason().into_iter().enumerate() {
        let sep = if i == 0 { " " } else { ", " };
        write!(w, "{sep}{n} {} (", reason_words(reason))?;
        let causes = tally.skipped().filter(|(c, _)| c.reason() == reason);
        for (j, (cause, m)) in causes.enumerate() {
            if j == DETAILS_IN_WORDS {
                w.write_all(b", ...")?;
                break;
            }
            let sep = if j == 0 { "" } else { ", " };
            write!(w, "{sep}{}: {m}", CauseDetail(cause))?;
        }
        w.write_all(b")")?;
    }
    Ok(())
}

/// The warning, when frames could not be opened (no newline; nothing
/// written otherwise): `4 of 8 frames could not be opened (3 encapsulation
/// unsupported, 1 truncated): any TCP they carry is not shown`.
pub fn write_text_warning<W: Write + ?Sized>(
    w: &mut W,
    frames: u64,
    tally: &Tally,
) -> io::Result<bool> {
    let unopened = tally.unopened();
    if unopened == 0 {
        return Ok(false);
    }
    write!(
        w,
        "{unopened} of {frames} frame{} could not be opened (",
        plural(frames)
    )?;
    let reasons = tally
        .by_reason()
        .into_iter()
        .filter(|(r, _)| r.is_unopened());
    for (i, (reason, n)) in reasons.enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(w, "{sep}{n} {}", reason_words(reason))?;
    }
    w.write_all(b"): any TCP they carry is not shown")?;
    Ok(true)
}

/// The summary object ([`SummaryJson`]) as a value, when one is due
/// ([`summary_due`]): for the end line of a live capture.
pub fn json_summary(frames: u64, tally: &Tally) -> Option<serde_json::Value> {
    summary_due(tally)
        .then(|| serde_json::to_value(SummaryJson { frames, tally }).ok())
        .flatten()
}

/// The counts as one JSON object (no newline):
/// `{"frames":8,"segments":1,"plain":1,"encapsulations":{"gre":1},
/// "skipped":[{"reason":"not_tcp","detail":"IP protocol 17","frames":1}],"unopened":0}`.
pub fn write_json_summary<W: Write + ?Sized>(
    w: &mut W,
    frames: u64,
    tally: &Tally,
) -> io::Result<()> {
    write!(
        w,
        "{{\"frames\":{frames},\"segments\":{},\"plain\":{},\"encapsulations\":{{",
        tally.segments(),
        tally.plain()
    )?;
    for (i, (kind, n)) in tally.by_encapsulation().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(w, "{sep}\"{}\":{n}", kind.id())?;
    }
    w.write_all(b"},\"skipped\":[")?;
    for (i, (cause, n)) in tally.skipped().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(
            w,
            "{sep}{{\"reason\":\"{}\",\"detail\":\"{}\",\"frames\":{n}}}",
            cause.reason().id(),
            CauseDetail(cause)
        )?;
    }
    write!(w, "],\"unopened\":{}}}", tally.unopened())
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
