//! Field-by-field comparison of matched packets, folded into one finding per
//! connection, direction and kind, with the typed values before and after
//! ([`FieldValue`]); IP-level changes outside the finding kinds are notes
//! ([`NoteDetail`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use tcp_options::kind::{MSS, SACK, SACK_PERMITTED, TIMESTAMPS, WINDOW_SCALE};
use tcp_options::Flags;

use super::packet::Packet;
use crate::conn::tracker::Direction;
use crate::finding::{
    Address, CaptureSide, FieldValue, Frames, Kind, Party, TunnelAction, TunnelPoint,
};
use dscp::tunnel::{decapsulate, encapsulate, EncapsulationMode};
use dscp::Ecn;

/// An IP-level change outside the finding kinds, with the figures of its
/// first example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteDetail {
    /// Don't Fragment set or cleared by the middlebox.
    Df {
        /// Set (else cleared).
        set: bool,
    },
    /// The IPv4 identification rewritten.
    IpId {
        /// Before the middlebox.
        before: u32,
        /// After it.
        after: u32,
    },
    /// A TTL / hop-limit decrement other than the usual one.
    Ttl {
        /// This decrement (before minus after).
        change: i16,
        /// The usual decrement of the direction.
        usual: i16,
        /// The TTL before the middlebox.
        before: u8,
        /// The TTL after it.
        after: u8,
    },
    /// Packets of one side not compared: the two captures' sequence numbers
    /// could not be aligned in this direction.
    Unaligned,
}

/// Which note a [`NoteDetail`] is: one per connection and direction. The
/// order is the report's (`df`, `ip_id`, `ttl`, `unaligned`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NoteWhat {
    /// [`NoteDetail::Df`].
    Df,
    /// [`NoteDetail::IpId`].
    IpId,
    /// [`NoteDetail::Ttl`].
    Ttl,
    /// [`NoteDetail::Unaligned`].
    Unaligned,
}

impl NoteDetail {
    /// Which note it is.
    pub fn what(&self) -> NoteWhat {
        match self {
            NoteDetail::Df { .. } => NoteWhat::Df,
            NoteDetail::IpId { .. } => NoteWhat::IpId,
            NoteDetail::Ttl { .. } => NoteWhat::Ttl,
            NoteDetail::Unaligned => NoteWhat::Unaligned,
        }
    }
}

/// A finding being accumulated.
#[derive(Debug, Clone)]
pub struct Acc {
    /// Packets affected.
    pub count: u64,
    /// First value before the middlebox.
    pub before: FieldValue,
    /// First value after it.
    pub after: FieldValue,
    /// Distinct (before, after) pairs seen, up to a few.
    pub distinct: u64,
    /// Largest numeric before value.
    pub max_before: Option<u64>,
    /// Largest numeric after value.
    pub max_after: Option<u64>,
    /// The affected frames.
    pub frames: Frames,
    /// For [`Kind::Nat`]: source and destination before, then after.
    pub nat: Option<[SocketAddr; 4]>,
    /// For [`Kind::CaptureLoss`]: frames outside the other capture's time span.
    pub outside_span: u64,
    /// For [`Kind::Nat`] client to server: replies translated back.
    pub replies_translated: u64,
    /// For the `tunnel_*` kinds: the encapsulation point, as the first
    /// affected packet showed it.
    pub tunnel: Option<TunnelPoint>,
}

/// Key of a finding inside one connection: direction ([`dir_index`]),
/// kind, option kind (for the `option_*` kinds) and the capture a capture
/// loss is in. Its order is the report's.
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
    /// IP-level observations outside the finding kinds, by direction and
    /// note: the count and the first example.
    pub notes: BTreeMap<(u8, NoteWhat), (u64, NoteDetail)>,
}

/// One affected packet (pair) to record.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Its finding's key.
    pub key: FindingKey,
    /// The value before the middlebox.
    pub before: FieldValue,
    /// The value after it.
    pub after: FieldValue,
    /// The frame in the client-side capture.
    pub frame_client_side: Option<u64>,
    /// The frame in the server-side capture.
    pub frame_server_side: Option<u64>,
}

/// Most distinct before/after pairs counted.
const MAX_DISTINCT: u64 = 1000;

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
        let (num_before, num_after) = (before.number(), after.number());
        let acc = match self.map.entry(key) {
            std::collections::btree_map::Entry::Occupied(e) => {
                let acc = e.into_mut();
                if (acc.before != before || acc.after != after) && acc.distinct < MAX_DISTINCT {
                    acc.distinct += 1;
                }
                acc
            }
            std::collections::btree_map::Entry::Vacant(e) => e.insert(Acc {
                count: 0,
                before,
                after,
                distinct: 1,
                max_before: None,
                max_after: None,
                frames: Frames::default(),
                nat: None,
                outside_span: 0,
                replies_translated: 0,
                tunnel: None,
            }),
        };
        acc.count += 1;
        acc.max_before = max_opt(acc.max_before, num_before);
        acc.max_after = max_opt(acc.max_after, num_after);
        if let Some(f) = frame_client_side {
            acc.frames.push(CaptureSide::ClientSide, f);
        }
        if let Some(f) = frame_server_side {
            acc.frames.push(CaptureSide::ServerSide, f);
        }
        acc
    }

    /// Records an observation outside the kinds list.
    pub fn note(&mut self, dir: Direction, detail: NoteDetail) {
        self.note_n(dir, detail, 1);
    }

    /// Records `n` observations outside the kinds list; the first example
    /// of a note is the one kept.
    pub fn note_n(&mut self, dir: Direction, detail: NoteDetail, n: u64) {
        let e = self
            .notes
            .entry((dir_index(dir), detail.what()))
            .or_insert((0, detail));
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

/// The flags a segment's value shows (`S`, `F`, `R`, `P`, `.`): two
/// segments that differ only in others are the same value.
const SHOWN_FLAGS: Flags = Flags::SYN
    .union(Flags::FIN)
    .union(Flags::RST)
    .union(Flags::PSH)
    .union(Flags::ACK);

/// A segment in a few fields, as a packet seen on one side only shows it.
pub fn segment_value(p: &Packet) -> FieldValue {
    FieldValue::Segment {
        flags: p.flags & SHOWN_FLAGS,
        seq: p.seq,
        payload_len: p.payload_len as usize,
    }
}

/// A SYN-ACK of a proxied handshake as `from` built it.
pub fn syn_ack_value(from: Party, p: &Packet) -> FieldValue {
    FieldValue::SynAck {
        from,
        isn: p.seq,
        window: p.window,
        mss: p.mss(),
        shift: p.wscale(),
    }
}

/// The ends a NAT rewrote (only the rewritten ones).
fn endpoints_value(src: Option<SocketAddr>, dst: Option<SocketAddr>) -> FieldValue {
    let end = |e: SocketAddr| Address {
        addr: e.ip(),
        port: Some(e.port()),
    };
    FieldValue::Endpoints {
        src: src.map(end),
        dst: dst.map(end),
    }
}

/// The value of option `kind` as the receiver reads it.
fn opt_val(p: &Packet, kind: u8) -> FieldValue {
    match kind {
        MSS => p.mss().map_or(FieldValue::Absent, FieldValue::Mss),
        WINDOW_SCALE => p.wscale().map_or(FieldValue::Absent, FieldValue::Shift),
        TIMESTAMPS => p.timestamps().map_or(FieldValue::Absent, |(tsval, tsecr)| {
            FieldValue::Timestamps { tsval, tsecr }
        }),
        SACK_PERMITTED => {
            if p.carries(kind) {
                FieldValue::Present
            } else {
                FieldValue::Absent
            }
        }
        _ => match p.records(kind).last() {
            Some(o) => FieldValue::Option {
                kind,
                data: o.data.clone(),
            },
            None => FieldValue::Absent,
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

/// One matched pair being compared: `p` before the middlebox, `q` after.
struct PairCmp<'a> {
    col: &'a mut Collector,
    cx: &'a DirCtx,
    p: &'a Packet,
    q: &'a Packet,
    /// The pair's frames in the client-side and server-side captures.
    frames: (Option<u64>, Option<u64>),
    /// A proxied handshake's SYN, SYN-ACK and bare ACKs are the proxy's own
    /// packets: only their options and addresses are compared.
    own_fields: bool,
}

impl PairCmp<'_> {
    fn add(&mut self, kind: Kind, option_kind: Option<u8>, before: FieldValue, after: FieldValue) {
        let (fc, fs) = self.frames;
        self.col.add(Hit {
            key: (dir_index(self.cx.dir), kind, option_kind, None),
            before,
            after,
            frame_client_side: fc,
            frame_server_side: fs,
        });
    }

    /// DSCP, ECN (and the TCP ECN flags), addresses and ports; IP ID and
    /// DF as notes.
    fn ip_layer(&mut self, inner_ecn_judged: bool) {
        let (p, q) = (self.p, self.q);
        if p.ip.dscp() != q.ip.dscp() {
            let (b, a) = (FieldValue::Dscp(p.ip.dscp()), FieldValue::Dscp(q.ip.dscp()));
            self.add(Kind::DscpChanged, None, b, a);
        }
        if p.ip.ecn() != q.ip.ecn() && !inner_ecn_judged {
            let (b, a) = (FieldValue::Ecn(p.ip.ecn()), FieldValue::Ecn(q.ip.ecn()));
            self.add(Kind::EcnChanged, None, b, a);
        }
        let ecn_flags = Flags::ECE | Flags::CWR;
        if (p.flags & ecn_flags) != (q.flags & ecn_flags) && !self.own_fields {
            let (b, a) = (
                FieldValue::ecn_flags(p.flags),
                FieldValue::ecn_flags(q.flags),
            );
            self.add(Kind::EcnChanged, None, b, a);
        }
        self.addresses();
        if self.own_fields {
            return;
        }
        let d = self.cx.dir;
        if let (Some(before), Some(after)) = (p.ident(), q.ident()) {
            if before != after {
                self.col.note(d, NoteDetail::IpId { before, after });
            }
        }
        if p.ip.df != q.ip.df {
            self.col.note(d, NoteDetail::Df { set: q.ip.df });
        }
    }

    /// Records a `tunnel_*` finding with its encapsulation point.
    fn add_tunnel(
        &mut self,
        kind: Kind,
        before: FieldValue,
        after: FieldValue,
        point: TunnelPoint,
    ) {
        let (fc, fs) = self.frames;
        let acc = self.col.add(Hit {
            key: (dir_index(self.cx.dir), kind, None, None),
            before,
            after,
            frame_client_side: fc,
            frame_server_side: fs,
        });
        if acc.tunnel.is_none() {
            acc.tunnel = Some(point);
        }
    }

    /// The encapsulation point between the two captures, when the pair
    /// crossed one: the DS field the encapsulating box wrote in the outer
    /// header (DSCP copied or not, ECN per RFC 6040 Figure 3), and the
    /// inner ECN field the decapsulating box rebuilt (RFC 6040 Figure 4),
    /// each judged by the `dscp` crate's rules. True when the inner ECN
    /// field's change (or its absence) was judged here, so that
    /// `ecn_changed` does not report it again.
    fn tunnel(&mut self) -> bool {
        let (p, q) = (self.p, self.q);
        if !p.crosses_tunnel(q) {
            return false;
        }
        let mut judged = false;
        // Out of p's tunnel: the box rebuilt the inner ECN field from p's
        // inner and outer ones.
        if let Some(o) = p.outer {
            let (inner, outer, got) = (ecn(p.ip.tos), ecn(o.tos), ecn(q.ip.tos));
            let expected = decapsulate(inner, outer).ecn();
            let point = |rfc: Option<Ecn>| TunnelPoint {
                action: TunnelAction::Decapsulation,
                encapsulation: o.kind,
                overhead: u16::try_from(o.overhead).unwrap_or(u16::MAX),
                mss_matches_overhead: None,
                outer_ecn: Some(outer.value()),
                rfc6040: Some(rfc.map(Ecn::value)),
            };
            match expected {
                Some(e) if e == got => judged = true,
                // A CE mark the inner header does not carry on.
                Some(Ecn::Ce) => {
                    judged = true;
                    self.add_tunnel(
                        Kind::TunnelCeNotPropagated,
                        FieldValue::Ecn(inner.value()),
                        FieldValue::Ecn(got.value()),
                        point(expected),
                    );
                }
                // A CE the captured outer header does not explain: a
                // router between the capture and the box may have marked
                // it; left to `ecn_changed`.
                Some(_) if got == Ecn::Ce => {}
                _ => {
                    judged = true;
                    self.add_tunnel(
                        Kind::TunnelEcnNonstandard,
                        FieldValue::Ecn(inner.value()),
                        FieldValue::Ecn(got.value()),
                        point(expected),
                    );
                }
            }
        }
        // Into q's tunnel: the box wrote q's outer header from q's inner one.
        if let Some(o) = q.outer {
            let (inner, outer) = (ecn(q.ip.tos), ecn(o.tos));
            let normal = encapsulate(inner, EncapsulationMode::Normal);
            let compat = encapsulate(inner, EncapsulationMode::Compatibility);
            let point = |rfc: Option<Ecn>| TunnelPoint {
                action: TunnelAction::Encapsulation,
                encapsulation: o.kind,
                overhead: u16::try_from(o.overhead).unwrap_or(u16::MAX),
                mss_matches_overhead: None,
                outer_ecn: rfc.map(|_| outer.value()),
                rfc6040: rfc.map(|e| Some(e.value())),
            };
            let (inner_dscp, outer_dscp) = (q.ip.tos >> 2, o.tos >> 2);
            let (b, a) = (FieldValue::Dscp(inner_dscp), FieldValue::Dscp(outer_dscp));
            if inner_dscp != outer_dscp {
                self.add_tunnel(Kind::TunnelDscpNotCopied, b, a, point(None));
            } else if inner_dscp != 0 {
                // An inner DSCP 0 under an outer 0 shows nothing: a fixed
                // outer DSCP 0 gives the same.
                self.add_tunnel(Kind::TunnelDscpCopied, b, a, point(None));
            }
            // Normal mode, or a CE mark a router inside the tunnel set
            // (between the box and the capture) on an ECN-capable outer
            // header: nothing to report.
            let marked_inside = outer == Ecn::Ce && normal.is_ect();
            if outer != normal && !marked_inside {
                let kind = if outer == compat {
                    Kind::TunnelEcnNotCopied
                } else {
                    Kind::TunnelEcnNonstandard
                };
                let (b, a) = (
                    FieldValue::Ecn(inner.value()),
                    FieldValue::Ecn(outer.value()),
                );
                self.add_tunnel(kind, b, a, point(Some(normal)));
            }
        }
        judged
    }

    /// Addresses and ports: a `nat` finding with the rewritten ends.
    fn addresses(&mut self) {
        let (p, q) = (self.p, self.q);
        let src_changed = p.ip.src != q.ip.src || p.sport != q.sport;
        let dst_changed = p.ip.dst != q.ip.dst || p.dport != q.dport;
        if !(src_changed || dst_changed) {
            return;
        }
        let (ps, pd) = (
            SocketAddr::new(p.ip.src, p.sport),
            SocketAddr::new(p.ip.dst, p.dport),
        );
        let (qs, qd) = (
            SocketAddr::new(q.ip.src, q.sport),
            SocketAddr::new(q.ip.dst, q.dport),
        );
        let (fc, fs) = self.frames;
        let acc = self.col.add(Hit {
            key: (dir_index(self.cx.dir), Kind::Nat, None, None),
            before: endpoints_value(src_changed.then_some(ps), dst_changed.then_some(pd)),
            after: endpoints_value(src_changed.then_some(qs), dst_changed.then_some(qd)),
            frame_client_side: fc,
            frame_server_side: fs,
        });
        if acc.nat.is_none() {
            acc.nat = Some([ps, pd, qs, qd]);
        }
    }

    /// Sequence and acknowledgment numbers, the window field.
    fn sequence_space(&mut self) {
        let (p, q) = (self.p, self.q);
        if p.seq != q.seq {
            self.add(
                Kind::SeqRewritten,
                None,
                FieldValue::Seq(p.seq),
                FieldValue::Seq(q.seq),
            );
        }
        if p.has(Flags::ACK) && q.has(Flags::ACK) && p.ack != q.ack {
            self.add(
                Kind::AckRewritten,
                None,
                FieldValue::Ack(p.ack),
                FieldValue::Ack(q.ack),
            );
        }
        if p.window != q.window && !self.own_fields {
            self.add(
                Kind::WindowRewritten,
                None,
                FieldValue::Window(p.window),
                FieldValue::Window(q.window),
            );
        }
    }

    /// Each option kind on either side, only when both blocks were
    /// captured whole.
    fn options(&mut self) {
        let (p, q) = (self.p, self.q);
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
            match (p.carries(k), q.carries(k)) {
                (true, false) => {
                    let kind = match k {
                        WINDOW_SCALE => Kind::WscaleStripped,
                        SACK_PERMITTED => Kind::SackpermStripped,
                        TIMESTAMPS => Kind::TimestampsStripped,
                        _ => Kind::OptionStripped,
                    };
                    let ok = (kind == Kind::OptionStripped).then_some(k);
                    self.add(kind, ok, opt_val(p, k), opt_val(q, k));
                }
                (false, true) => {
                    let kind = if k == WINDOW_SCALE {
                        Kind::WscaleAdded
                    } else {
                        Kind::OptionAdded
                    };
                    let ok = (kind == Kind::OptionAdded).then_some(k);
                    self.add(kind, ok, opt_val(p, k), opt_val(q, k));
                }
                (true, true)
                    if !p
                        .records(k)
                        .map(|o| &o.data)
                        .eq(q.records(k).map(|o| &o.data)) =>
                {
                    self.option_changed(k);
                }
                _ => {}
            }
        }
    }

    /// Option `k`, on both sides, with different bytes.
    fn option_changed(&mut self, k: u8) {
        let (p, q) = (self.p, self.q);
        let (bv, av) = (opt_val(p, k), opt_val(q, k));
        match k {
            MSS => {
                let lowered = match (bv.number(), av.number()) {
                    (Some(x), Some(y)) if y < x => Some(x - y),
                    _ => None,
                };
                // Lowered between the two sides of an encapsulation point:
                // the tunnel's clamp, said with the overhead it matches.
                if let (Some(by), Some(o)) = (lowered, p.outer.or(q.outer)) {
                    if p.crosses_tunnel(q) {
                        let action = if q.outer.is_some() {
                            TunnelAction::Encapsulation
                        } else {
                            TunnelAction::Decapsulation
                        };
                        let point = TunnelPoint {
                            action,
                            encapsulation: o.kind,
                            overhead: u16::try_from(o.overhead).unwrap_or(u16::MAX),
                            mss_matches_overhead: Some(by == o.overhead as u64),
                            outer_ecn: None,
                            rfc6040: None,
                        };
                        self.add_tunnel(Kind::TunnelMssClamped, bv, av, point);
                        return;
                    }
                }
                let kind = if lowered.is_some() {
                    Kind::MssClamped
                } else {
                    Kind::MssChanged
                };
                self.add(kind, None, bv, av);
            }
            WINDOW_SCALE => self.add(Kind::WscaleChanged, None, bv, av),
            TIMESTAMPS => self.add(Kind::TimestampsChanged, None, bv, av),
            SACK if p
                .records(k)
                .map(|o| sack_shifted(&o.data, self.cx.ack_offset))
                .eq(q.records(k).map(|o| o.data.clone())) => {}
            _ => self.add(Kind::OptionChanged, Some(k), bv, av),
        }
    }
}

/// The ECN field of a TOS byte / traffic class.
fn ecn(tos: u8) -> Ecn {
    Ecn::from_low_bits(tos)
}

/// Compares one matched pair: `p` before the middlebox, `q` after.
pub fn compare_pair(col: &mut Collector, cx: &DirCtx, p: &Packet, q: &Packet) {
    let frames = if cx.before_is_client_side {
        (Some(p.frame), Some(q.frame))
    } else {
        (Some(q.frame), Some(p.frame))
    };
    let handshake = p.has(Flags::SYN) || q.has(Flags::SYN);
    let own_fields = cx.proxied
        && (handshake || (p.payload_len == 0 && (p.ident() == Some(0)) != (q.ident() == Some(0))));
    let mut c = PairCmp {
        col,
        cx,
        p,
        q,
        frames,
        own_fields,
    };
    let inner_ecn_judged = c.tunnel();
    c.ip_layer(inner_ecn_judged);
    c.sequence_space();
    c.options();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_in_the_reports_order() {
        // The report lists a connection's notes by direction, then in this
        // order (it was the order of their JSON names).
        let all = [
            NoteWhat::Df,
            NoteWhat::IpId,
            NoteWhat::Ttl,
            NoteWhat::Unaligned,
        ];
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        let mut col = Collector::default();
        let d = Direction::ClientToServer;
        col.note(
            d,
            NoteDetail::IpId {
                before: 1,
                after: 2,
            },
        );
        col.note(
            d,
            NoteDetail::IpId {
                before: 3,
                after: 4,
            },
        );
        col.note_n(
            d,
            NoteDetail::Ttl {
                change: 3,
                usual: 1,
                before: 64,
                after: 61,
            },
            5,
        );
        col.note(d, NoteDetail::Df { set: true });
        let notes: Vec<_> = col.notes.values().collect();
        assert_eq!(
            notes,
            [
                &(1, NoteDetail::Df { set: true }),
                &(
                    2,
                    NoteDetail::IpId {
                        before: 1,
                        after: 2
                    }
                ),
                &(
                    5,
                    NoteDetail::Ttl {
                        change: 3,
                        usual: 1,
                        before: 64,
                        after: 61
                    }
                ),
            ]
        );
    }
}
