//! Field-by-field comparison of matched packets, folded into one finding per
//! connection, direction and kind; the structured before/after values.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde_json::{json, Value};
use tcp_options::kind::{MSS, SACK, SACK_PERMITTED, TIMESTAMPS, WINDOW_SCALE};
use tcp_options::Flags;

use super::packet::Packet;
use crate::conn::tracker::Direction;
use crate::finding::{self, Kind};

/// Packet frame numbers kept per finding and side.
const FRAMES_KEPT: usize = 10;

/// One value before or after: structured for JSON, words for people, and
/// the number impacts compute with.
#[derive(Debug, Clone, PartialEq)]
pub struct Val {
    /// The JSON value (`null` when the field or option is absent).
    pub json: Value,
    /// As the text report shows it.
    pub text: String,
    /// As a number, when it is one.
    pub num: Option<u64>,
}

impl Val {
    fn new(json: Value, text: impl Into<String>, num: Option<u64>) -> Val {
        Val {
            json,
            text: text.into(),
            num,
        }
    }
    /// Nothing to show (JSON `null`, empty text).
    pub fn none() -> Val {
        Val::new(Value::Null, "", None)
    }
    /// The packet is not in this capture (JSON `null`).
    pub fn missing() -> Val {
        Val::new(Value::Null, "missing", None)
    }
    /// The option or field is not there (JSON `null`).
    pub fn absent() -> Val {
        Val::new(Value::Null, "absent", None)
    }
    /// A window-scale shift: `{"shift": 10}`.
    pub fn shift(s: u8) -> Val {
        Val::new(
            json!({ "shift": s }),
            format!("shift {s}"),
            Some(u64::from(s)),
        )
    }
    /// An MSS: `{"mss_bytes": 1460}`.
    pub fn mss(m: u16) -> Val {
        Val::new(json!({ "mss_bytes": m }), m.to_string(), Some(u64::from(m)))
    }
    /// An option that is there without a value: `{"present": true}`.
    pub fn present() -> Val {
        Val::new(json!({ "present": true }), "present", None)
    }
    /// Timestamps: `{"tsval_ticks": .., "tsecr_ticks": ..}`.
    pub fn timestamps(v: u32, e: u32) -> Val {
        Val::new(
            json!({ "tsval_ticks": v, "tsecr_ticks": e }),
            format!("TSval {v} TSecr {e}"),
            None,
        )
    }
    /// Any option's bytes: `{"option_kind": 30, "data_hex": "..."}`.
    pub fn option(kind: u8, data: &[u8]) -> Val {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        Val::new(
            json!({ "option_kind": kind, "data_hex": hex }),
            format!("kind {kind}: {hex}"),
            None,
        )
    }
    /// A sequence number: `{"seq_number": ..}`.
    pub fn seq(n: u32) -> Val {
        Val::new(
            json!({ "seq_number": n }),
            n.to_string(),
            Some(u64::from(n)),
        )
    }
    /// An acknowledgment number: `{"ack_number": ..}`.
    pub fn ack(n: u32) -> Val {
        Val::new(
            json!({ "ack_number": n }),
            n.to_string(),
            Some(u64::from(n)),
        )
    }
    /// The raw window field: `{"window_field": ..}`.
    pub fn window(w: u16) -> Val {
        Val::new(
            json!({ "window_field": w }),
            w.to_string(),
            Some(u64::from(w)),
        )
    }
    /// A DSCP: `{"dscp": 10, "name": "AF11"}` (`name` null for unnamed values).
    pub fn dscp(v: u8) -> Val {
        let name = dscp::Dscp::new(v)
            .ok()
            .and_then(|d| d.name())
            .map(str::to_uppercase);
        let text = match &name {
            Some(n) => format!("{n} ({v})"),
            None => v.to_string(),
        };
        Val::new(json!({ "dscp": v, "name": name }), text, Some(u64::from(v)))
    }
    /// The IP ECN field: `{"ecn": 2, "name": "ECT(0)"}`.
    pub fn ecn(v: u8) -> Val {
        let name = dscp::Ecn::new(v).map(|e| e.name()).unwrap_or("?");
        Val::new(json!({ "ecn": v, "name": name }), name, Some(u64::from(v)))
    }
    /// The TCP ECE and CWR flags: `{"ece": true, "cwr": false}`.
    pub fn ecn_flags(f: Flags) -> Val {
        let (ece, cwr) = (f.contains(Flags::ECE), f.contains(Flags::CWR));
        let text = match (ece, cwr) {
            (false, false) => "TCP flags without ECE/CWR".to_string(),
            (true, false) => "TCP flags ECE".to_string(),
            (false, true) => "TCP flags CWR".to_string(),
            (true, true) => "TCP flags ECE+CWR".to_string(),
        };
        Val::new(json!({ "ece": ece, "cwr": cwr }), text, None)
    }
    /// A segment in a few fields: `{"flags": "S.", "seq_number": .., "payload_bytes": ..}`.
    pub fn segment(p: &Packet) -> Val {
        Val::new(
            json!({ "flags": p.flag_letters(), "seq_number": p.seq, "payload_bytes": p.payload_len }),
            format!("[{}] seq {} len {}", p.flag_letters(), p.seq, p.payload_len),
            None,
        )
    }
    /// A SYN-ACK as one party of a proxied handshake built it.
    pub fn syn_ack(from: &str, p: &Packet) -> Val {
        Val::new(
            json!({
                "from": from,
                "isn": p.seq,
                "window_field": p.window,
                "mss_bytes": p.mss(),
                "shift": p.wscale(),
            }),
            format!(
                "{from} SYN-ACK ISN {} window {}{}{}",
                p.seq,
                p.window,
                p.mss().map(|m| format!(" mss {m}")).unwrap_or_default(),
                p.wscale()
                    .map(|w| format!(" wscale {w}"))
                    .unwrap_or_default()
            ),
            None,
        )
    }
    /// The endpoints a NAT rewrote: only the rewritten ones are keys
    /// (`src`, `dst`), each `{"addr": .., "port": ..}`.
    pub fn endpoints(src: Option<SocketAddr>, dst: Option<SocketAddr>) -> Val {
        let end = |e: SocketAddr| (e.ip(), Some(e.port()));
        let json = finding::nat_ends(src.map(end), dst.map(end));
        let text = finding::nat_ends_text(&json).unwrap_or_default();
        Val::new(json, text, None)
    }
}

/// Which capture a [`Kind::CaptureLoss`] finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaptureSide {
    /// The capture nearer the client.
    ClientSide,
    /// The capture nearer the server.
    ServerSide,
}

impl CaptureSide {
    /// `client_side` or `server_side`.
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureSide::ClientSide => "client_side",
            CaptureSide::ServerSide => "server_side",
        }
    }
}

/// A finding being accumulated.
#[derive(Debug, Clone)]
pub struct Acc {
    /// Packets affected.
    pub count: u64,
    /// First value before the middlebox.
    pub before: Val,
    /// First value after it.
    pub after: Val,
    /// Distinct (before, after) pairs seen, up to a few.
    pub distinct: u64,
    /// Largest numeric before value.
    pub max_before: Option<u64>,
    /// Largest numeric after value.
    pub max_after: Option<u64>,
    /// Frames on the client-side capture.
    pub frames_client_side: Vec<u64>,
    /// Frames on the server-side capture.
    pub frames_server_side: Vec<u64>,
    /// For [`Kind::Nat`]: source and destination before, then after.
    pub nat: Option<[SocketAddr; 4]>,
    /// For [`Kind::CaptureLoss`]: frames outside the other capture's time span.
    pub outside_span: u64,
    /// For [`Kind::Nat`] client to server: replies translated back.
    pub replies_translated: u64,
}

/// Key of a finding inside one connection: direction ([`dir_index`]),
/// kind, option kind (for the `option_*` kinds) and the capture a capture
/// loss is in.
pub type FindingKey = (u8, Kind, Option<u8>, Option<CaptureSide>);

/// 0 for client to server, 1 for server to client (the report's order).
pub fn dir_index(d: Direction) -> u8 {
    match d {
        Direction::ClientToServer => 0,
        Direction::ServerToClient => 1,
    }
}

/// The direction of a [`dir_index`].
pub fn dir_from_index(i: u8) -> Direction {
    if i == 0 {
        Direction::ClientToServer
    } else {
        Direction::ServerToClient
    }
}

/// Findings of one connection being accumulated.
#[derive(Debug, Default)]
pub struct Collector {
    /// By direction, kind, option kind, capture.
    pub map: BTreeMap<FindingKey, Acc>,
    /// IP-level observations outside the finding kinds (TTL, IP ID, DF): text and count.
    pub notes: BTreeMap<(u8, &'static str), (u64, String)>,
}

/// One affected packet (pair) to record.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Its finding's key.
    pub key: FindingKey,
    /// The value before the middlebox.
    pub before: Val,
    /// The value after it.
    pub after: Val,
    /// The frame in the client-side capture.
    pub frame_client_side: Option<u64>,
    /// The frame in the server-side capture.
    pub frame_server_side: Option<u64>,
}

impl Collector {
    /// Records one affected packet pair (or single packet).
    pub fn add(&mut self, hit: Hit) -> &mut Acc {
        let Hit {
            key,
            before,
            after,
            frame_client_side,
            frame_server_side,
        } = hit;
        let acc = self.map.entry(key).or_insert_with(|| Acc {
            count: 0,
            before: before.clone(),
            after: after.clone(),
            distinct: 1,
            max_before: None,
            max_after: None,
            frames_client_side: Vec::new(),
            frames_server_side: Vec::new(),
            nat: None,
            outside_span: 0,
            replies_translated: 0,
        });
        acc.count += 1;
        if acc.count > 1 && (acc.before != before || acc.after != after) && acc.distinct < 1000 {
            acc.distinct += 1;
        }
        acc.max_before = max_opt(acc.max_before, before.num);
        acc.max_after = max_opt(acc.max_after, after.num);
        if let Some(f) = frame_client_side {
            if acc.frames_client_side.len() < FRAMES_KEPT {
                acc.frames_client_side.push(f);
            }
        }
        if let Some(f) = frame_server_side {
            if acc.frames_server_side.len() < FRAMES_KEPT {
                acc.frames_server_side.push(f);
            }
        }
        acc
    }

    /// Records an observation outside the kinds list.
    pub fn note(&mut self, dir: Direction, what: &'static str, text: String) {
        self.note_n(dir, what, text, 1);
    }

    /// Records `n` observations outside the kinds list.
    pub fn note_n(&mut self, dir: Direction, what: &'static str, text: String, n: u64) {
        let e = self
            .notes
            .entry((dir_index(dir), what))
            .or_insert((0, text));
        e.0 += n;
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// How the two sides relate for one direction.
#[derive(Debug, Clone, Copy)]
pub struct DirCtx {
    /// The direction.
    pub dir: Direction,
    /// Before-the-middlebox capture is the client side (true for client -> server).
    pub before_is_client_side: bool,
    /// Ack offset (after minus before) expected from the other direction's sequence offset.
    pub ack_offset: u32,
    /// The handshake was proxied: SYN / SYN-ACK fields other than options are the proxy's own.
    pub proxied: bool,
}

/// The value of option `kind` as the receiver reads it.
fn opt_val(p: &Packet, kind: u8) -> Val {
    match kind {
        MSS => p.mss().map(Val::mss).unwrap_or_else(Val::absent),
        WINDOW_SCALE => p.wscale().map(Val::shift).unwrap_or_else(Val::absent),
        TIMESTAMPS => p
            .timestamps()
            .map(|(v, e)| Val::timestamps(v, e))
            .unwrap_or_else(Val::absent),
        SACK_PERMITTED => {
            if p.carries(kind) {
                Val::present()
            } else {
                Val::absent()
            }
        }
        _ => match p.records(kind).last() {
            Some(o) => Val::option(kind, &o.data),
            None => Val::absent(),
        },
    }
}

/// SACK blocks translated by `off`: what a correct sequence translation gives.
fn sack_shifted(data: &[u8], off: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for c in data.chunks(4) {
        if c.len() == 4 {
            let v = u32::from_be_bytes([c[0], c[1], c[2], c[3]]).wrapping_add(off);
            out.extend_from_slice(&v.to_be_bytes());
        } else {
            out.extend_from_slice(c);
        }
    }
    out
}

/// Compares one matched pair: `p` before the middlebox, `q` after.
pub fn compare_pair(col: &mut Collector, cx: &DirCtx, p: &Packet, q: &Packet) {
    let d = cx.dir;
    let (fc, fs) = if cx.before_is_client_side {
        (Some(p.frame), Some(q.frame))
    } else {
        (Some(q.frame), Some(p.frame))
    };
    let handshake = p.has(Flags::SYN) || q.has(Flags::SYN);
    // A proxied handshake's SYN, SYN-ACK and bare ACKs are the proxy's own
    // packets: only their options and addresses are compared.
    let own_fields = cx.proxied
        && (handshake || (p.payload_len == 0 && (p.ident == Some(0)) != (q.ident == Some(0))));
    let add = |col: &mut Collector, kind: Kind, ok: Option<u8>, b: Val, a: Val| {
        col.add(Hit {
            key: (dir_index(d), kind, ok, None),
            before: b,
            after: a,
            frame_client_side: fc,
            frame_server_side: fs,
        });
    };
    // IP layer.
    if p.tos >> 2 != q.tos >> 2 {
        add(
            col,
            Kind::DscpChanged,
            None,
            Val::dscp(p.tos >> 2),
            Val::dscp(q.tos >> 2),
        );
    }
    if p.tos & 3 != q.tos & 3 {
        add(
            col,
            Kind::EcnChanged,
            None,
            Val::ecn(p.tos & 3),
            Val::ecn(q.tos & 3),
        );
    }
    let ecn_flags = Flags::ECE | Flags::CWR;
    if (p.flags & ecn_flags) != (q.flags & ecn_flags) && !own_fields {
        add(
            col,
            Kind::EcnChanged,
            None,
            Val::ecn_flags(p.flags),
            Val::ecn_flags(q.flags),
        );
    }
    let src_changed = p.src != q.src || p.sport != q.sport;
    let dst_changed = p.dst != q.dst || p.dport != q.dport;
    if src_changed || dst_changed {
        let (ps, pd) = (
            SocketAddr::new(p.src, p.sport),
            SocketAddr::new(p.dst, p.dport),
        );
        let (qs, qd) = (
            SocketAddr::new(q.src, q.sport),
            SocketAddr::new(q.dst, q.dport),
        );
        let acc = col.add(Hit {
            key: (dir_index(d), Kind::Nat, None, None),
            before: Val::endpoints(src_changed.then_some(ps), dst_changed.then_some(pd)),
            after: Val::endpoints(src_changed.then_some(qs), dst_changed.then_some(qd)),
            frame_client_side: fc,
            frame_server_side: fs,
        });
        if acc.nat.is_none() {
            acc.nat = Some([ps, pd, qs, qd]);
        }
    }
    if !own_fields {
        if let (Some(a), Some(b)) = (p.ident, q.ident) {
            if a != b {
                col.note(
                    d,
                    "ip_id",
                    format!("IPv4 identification rewritten (e.g. {a} -> {b})"),
                );
            }
        }
        if p.df != q.df {
            col.note(
                d,
                "df",
                format!(
                    "Don't Fragment {} by the middlebox",
                    if q.df { "set" } else { "cleared" }
                ),
            );
        }
    }
    // Sequence space.
    if p.seq != q.seq {
        add(
            col,
            Kind::SeqRewritten,
            None,
            Val::seq(p.seq),
            Val::seq(q.seq),
        );
    }
    if p.has(Flags::ACK) && q.has(Flags::ACK) && p.ack != q.ack {
        add(
            col,
            Kind::AckRewritten,
            None,
            Val::ack(p.ack),
            Val::ack(q.ack),
        );
    }
    if p.window != q.window && !own_fields {
        add(
            col,
            Kind::WindowRewritten,
            None,
            Val::window(p.window),
            Val::window(q.window),
        );
    }
    // Options: only when both blocks were captured whole.
    if !p.options_complete || !q.options_complete {
        return;
    }
    let mut kinds: Vec<u8> = p
        .options
        .iter()
        .chain(q.options.iter())
        .map(|o| o.kind)
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    for k in kinds {
        let (bv, av) = (opt_val(p, k), opt_val(q, k));
        match (p.carries(k), q.carries(k)) {
            (true, false) => {
                let kind = match k {
                    WINDOW_SCALE => Kind::WscaleStripped,
                    SACK_PERMITTED => Kind::SackpermStripped,
                    TIMESTAMPS => Kind::TimestampsStripped,
                    _ => Kind::OptionStripped,
                };
                let ok = (kind == Kind::OptionStripped).then_some(k);
                add(col, kind, ok, bv, av);
            }
            (false, true) => {
                let kind = if k == WINDOW_SCALE {
                    Kind::WscaleAdded
                } else {
                    Kind::OptionAdded
                };
                let ok = (kind == Kind::OptionAdded).then_some(k);
                add(col, kind, ok, bv, av);
            }
            (true, true)
                if !p
                    .records(k)
                    .map(|o| &o.data)
                    .eq(q.records(k).map(|o| &o.data)) =>
            {
                match k {
                    MSS => {
                        let clamped = matches!((bv.num, av.num), (Some(x), Some(y)) if y < x);
                        let kind = if clamped {
                            Kind::MssClamped
                        } else {
                            Kind::MssChanged
                        };
                        add(col, kind, None, bv, av);
                    }
                    WINDOW_SCALE => add(col, Kind::WscaleChanged, None, bv, av),
                    TIMESTAMPS => add(col, Kind::TimestampsChanged, None, bv, av),
                    SACK if p
                        .records(k)
                        .map(|o| sack_shifted(&o.data, cx.ack_offset))
                        .eq(q.records(k).map(|o| o.data.clone())) => {}
                    _ => add(col, Kind::OptionChanged, Some(k), bv, av),
                }
            }
            _ => {}
        }
    }
}
