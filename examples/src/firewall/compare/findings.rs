//! Field-by-field comparison of matched packets, folded into one finding per
//! connection, direction and kind.

use std::collections::BTreeMap;

use super::conn::Direction;
use super::packet::{
    Packet, ACK, CWR, ECE, KIND_MSS, KIND_SACK, KIND_SACK_PERMITTED, KIND_TIMESTAMPS, KIND_WSCALE,
    SYN,
};

/// The finding kinds, in report order.
pub const KINDS: [&str; 20] = [
    "handshake_proxied",
    "nat",
    "wscale_stripped",
    "wscale_changed",
    "wscale_added",
    "sackperm_stripped",
    "timestamps_stripped",
    "timestamps_changed",
    "mss_clamped",
    "mss_changed",
    "option_stripped",
    "option_added",
    "option_changed",
    "seq_rewritten",
    "ack_rewritten",
    "window_rewritten",
    "dscp_changed",
    "ecn_changed",
    "packet_dropped",
    "packet_injected",
];

/// Packet frame numbers kept per finding and side.
const FRAMES_KEPT: usize = 10;

/// One value before or after, for display and for impact arithmetic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Val {
    /// As shown.
    pub text: String,
    /// As a number, when it is one.
    pub num: Option<u64>,
}

impl Val {
    /// A number.
    pub fn n(v: u64) -> Val {
        Val {
            text: v.to_string(),
            num: Some(v),
        }
    }
    /// Words.
    pub fn t(s: impl Into<String>) -> Val {
        Val {
            text: s.into(),
            num: None,
        }
    }
    /// The option or field is not there.
    pub fn absent() -> Val {
        Val::t("absent")
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
}

/// Key of a finding inside one connection.
pub type FindingKey = (Direction, usize, Option<u8>);

/// Findings of one connection being accumulated.
#[derive(Debug, Default)]
pub struct Collector {
    /// By direction, kind index, option kind.
    pub map: BTreeMap<FindingKey, Acc>,
    /// IP-level observations outside the finding kinds (TTL, IP ID, DF): text and count.
    pub notes: BTreeMap<(Direction, &'static str), (u64, String)>,
}

/// Index of a kind in [`KINDS`].
pub fn kind_index(kind: &str) -> usize {
    KINDS.iter().position(|k| *k == kind).unwrap_or(KINDS.len())
}

impl Collector {
    /// Records one affected packet pair (or single packet).
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        dir: Direction,
        kind: &str,
        option_kind: Option<u8>,
        before: Val,
        after: Val,
        frame_client_side: Option<u64>,
        frame_server_side: Option<u64>,
    ) {
        let acc = self
            .map
            .entry((dir, kind_index(kind), option_kind))
            .or_insert_with(|| Acc {
                count: 0,
                before: before.clone(),
                after: after.clone(),
                distinct: 1,
                max_before: None,
                max_after: None,
                frames_client_side: Vec::new(),
                frames_server_side: Vec::new(),
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
    }

    /// Records an observation outside the kinds list.
    pub fn note(&mut self, dir: Direction, what: &'static str, text: String) {
        let e = self.notes.entry((dir, what)).or_insert((0, text));
        e.0 += 1;
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// A DSCP value with its name: `10 (AF11)`.
pub fn dscp_name(v: u8) -> String {
    match dscp::Dscp::new(v).ok().and_then(|d| d.name()) {
        Some(n) => format!("{} ({v})", n.to_uppercase()),
        None => v.to_string(),
    }
}

fn ecn_name(v: u8) -> String {
    match dscp::Ecn::new(v) {
        Ok(e) => e.name().to_string(),
        Err(_) => v.to_string(),
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

fn opt_text(p: &Packet, kind: u8) -> Val {
    match kind {
        KIND_MSS => p
            .mss()
            .map(|m| Val::n(u64::from(m)))
            .unwrap_or_else(Val::absent),
        KIND_WSCALE => p
            .wscale()
            .map(|s| Val {
                text: format!("shift {s}"),
                num: Some(u64::from(s)),
            })
            .unwrap_or_else(Val::absent),
        KIND_TIMESTAMPS => p
            .timestamps()
            .map(|(v, e)| Val::t(format!("TSval {v} TSecr {e}")))
            .unwrap_or_else(Val::absent),
        KIND_SACK_PERMITTED => {
            if p.option(kind).is_some() {
                Val::t("present")
            } else {
                Val::absent()
            }
        }
        _ => match p.option(kind) {
            Some(o) => Val::t(format!(
                "kind {kind}: {}",
                o.data
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            )),
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
    let handshake = p.has(SYN) || q.has(SYN);
    // A proxied handshake's SYN, SYN-ACK and bare ACKs are the proxy's own
    // packets: only their options and addresses are compared.
    let own_fields = cx.proxied
        && (handshake || (p.payload_len == 0 && (p.ident == Some(0)) != (q.ident == Some(0))));
    let add = |col: &mut Collector, kind: &str, ok: Option<u8>, b: Val, a: Val| {
        col.add(d, kind, ok, b, a, fc, fs);
    };
    // IP layer.
    if p.tos >> 2 != q.tos >> 2 {
        add(
            col,
            "dscp_changed",
            None,
            Val::t(dscp_name(p.tos >> 2)),
            Val::t(dscp_name(q.tos >> 2)),
        );
    }
    if p.tos & 3 != q.tos & 3 {
        add(
            col,
            "ecn_changed",
            None,
            Val::t(ecn_name(p.tos & 3)),
            Val::t(ecn_name(q.tos & 3)),
        );
    }
    if (p.flags & (ECE | CWR)) != (q.flags & (ECE | CWR)) && !own_fields {
        let f = |x: tcp_options::Flags| {
            let mut s = Vec::new();
            if x.contains(ECE) {
                s.push("ECE");
            }
            if x.contains(CWR) {
                s.push("CWR");
            }
            if s.is_empty() {
                "TCP flags without ECE/CWR".to_string()
            } else {
                format!("TCP flags {}", s.join("+"))
            }
        };
        add(
            col,
            "ecn_changed",
            None,
            Val::t(f(p.flags)),
            Val::t(f(q.flags)),
        );
    }
    if p.src != q.src || p.sport != q.sport {
        add(
            col,
            "nat",
            None,
            Val::t(super::conn::endpoint_str((p.src, p.sport))),
            Val::t(super::conn::endpoint_str((q.src, q.sport))),
        );
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
            "seq_rewritten",
            None,
            Val::n(u64::from(p.seq)),
            Val::n(u64::from(q.seq)),
        );
    }
    if p.has(ACK) && q.has(ACK) && p.ack != q.ack {
        add(
            col,
            "ack_rewritten",
            None,
            Val::n(u64::from(p.ack)),
            Val::n(u64::from(q.ack)),
        );
    }
    if p.window != q.window && !own_fields {
        add(
            col,
            "window_rewritten",
            None,
            Val::n(u64::from(p.window)),
            Val::n(u64::from(q.window)),
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
        let (x, y) = (p.option(k), q.option(k));
        let (bv, av) = (opt_text(p, k), opt_text(q, k));
        match (x, y) {
            (Some(_), None) => {
                let kind = match k {
                    KIND_WSCALE => "wscale_stripped",
                    KIND_SACK_PERMITTED => "sackperm_stripped",
                    KIND_TIMESTAMPS => "timestamps_stripped",
                    _ => "option_stripped",
                };
                let ok = (kind == "option_stripped").then_some(k);
                add(col, kind, ok, bv, av);
            }
            (None, Some(_)) => {
                let kind = if k == KIND_WSCALE {
                    "wscale_added"
                } else {
                    "option_added"
                };
                let ok = (kind == "option_added").then_some(k);
                add(col, kind, ok, bv, av);
            }
            (Some(a), Some(b)) if a.data != b.data => match k {
                KIND_MSS => {
                    let clamped = matches!((bv.num, av.num), (Some(x), Some(y)) if y < x);
                    add(
                        col,
                        if clamped {
                            "mss_clamped"
                        } else {
                            "mss_changed"
                        },
                        None,
                        bv,
                        av,
                    );
                }
                KIND_WSCALE => add(col, "wscale_changed", None, bv, av),
                KIND_TIMESTAMPS => add(col, "timestamps_changed", None, bv, av),
                KIND_SACK if sack_shifted(&a.data, cx.ack_offset) == b.data => {}
                _ => add(col, "option_changed", Some(k), bv, av),
            },
            _ => {}
        }
    }
}
