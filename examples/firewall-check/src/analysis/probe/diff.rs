//! What changed between a probe as sent and as an observer saw it, and
//! where on the path the change happened.
//!
//! [`diff`] compares one observation with the copy it saw, field by field
//! ([`Field`]: the DS field's DSCP and ECN, addresses and ports, sequence
//! and acknowledgment numbers, the ECN flags, the window, each option by
//! kind), each difference a [`Change`] in the one list of finding kinds
//! ([`Kind`]). [`locate`] walks the observers in path order (the routers'
//! quotes at TTL 1, 2, ..., then the far end) and names, per field, the
//! first observer that saw it changed (`hop`) and the last one before it
//! that saw it unchanged (`after_hop`). An observer that did not see a
//! field ([`Coverage`]: an 8-byte quote holds no option) says nothing
//! either way about it.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use dscp::{Dscp, Ecn};
use tcp_options::{kind, Flags, RawOptions, TcpOption};

use super::wire::Seen;
use crate::finding::Kind;

/// One field of a probe, the unit a change is located by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// The DSCP of the DS field.
    Dscp,
    /// The ECN codepoint of the DS field.
    Ecn,
    /// Addresses and ports (a translation).
    Address,
    /// The sequence number.
    Seq,
    /// The AE, CWR and ECE flags.
    EcnFlags,
    /// The acknowledgment number.
    Ack,
    /// The window field.
    Window,
    /// The option of this kind.
    Option(u8),
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Dscp => f.write_str("dscp"),
            Field::Ecn => f.write_str("ecn"),
            Field::Address => f.write_str("address"),
            Field::Seq => f.write_str("seq"),
            Field::EcnFlags => f.write_str("ecn_flags"),
            Field::Ack => f.write_str("ack"),
            Field::Window => f.write_str("window"),
            Field::Option(k) => write!(f, "option:{k}"),
        }
    }
}

/// The ends of a connection a translation rewrote: only the rewritten
/// ones, each an address and its port (the port `None` where the copy did
/// not show it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatEnds {
    /// The source, when rewritten.
    pub src: Option<(IpAddr, Option<u16>)>,
    /// The destination, when rewritten.
    pub dst: Option<(IpAddr, Option<u16>)>,
}

/// A field's value, as sent or as seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// A number: an MSS in bytes, a window-scale shift, a window field, a
    /// sequence or acknowledgment number.
    Number(u64),
    /// An option without data that is there (SACK-permitted).
    Present,
    /// An option that is not there.
    Absent,
    /// The Timestamps option's values.
    Timestamps {
        /// TSval.
        tsval: u32,
        /// TSecr.
        tsecr: u32,
    },
    /// Another option's data.
    Bytes(Vec<u8>),
    /// A DSCP.
    Dscp(Dscp),
    /// An ECN codepoint.
    Ecn(Ecn),
    /// The AE, CWR and ECE flags.
    EcnFlags(Flags),
    /// Translated ends.
    Ends(NatEnds),
}

/// One field that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The field: changes are located per field.
    pub field: Field,
    /// The finding kind.
    pub kind: Kind,
    /// The value as sent.
    pub before: FieldValue,
    /// The value as seen.
    pub after: FieldValue,
}

impl Change {
    /// The option kind, for option findings.
    pub fn option_kind(&self) -> Option<u8> {
        match self.field {
            Field::Option(k) => Some(k),
            _ => None,
        }
    }
}

/// How much of the TCP segment an observer saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coverage {
    /// Ports and sequence number only (an RFC 792 8-byte quote).
    Partial,
    /// The fixed header but not all options.
    FixedHeader,
    /// The whole header, options included.
    Full,
}

impl Coverage {
    /// Whether this field was visible.
    pub fn shows(self, field: Field) -> bool {
        match field {
            Field::Dscp | Field::Ecn | Field::Address | Field::Seq => true,
            Field::EcnFlags | Field::Window | Field::Ack => self >= Coverage::FixedHeader,
            Field::Option(_) => self == Coverage::Full,
        }
    }

    /// How much of `seen` covers the segment.
    pub fn of(seen: &Seen) -> Coverage {
        match (seen.flags(), seen.options()) {
            (None, _) => Coverage::Partial,
            (Some(_), Some(_)) => Coverage::Full,
            (Some(_), None) => Coverage::FixedHeader,
        }
    }
}

/// The options of a block by kind (last one wins), EOL/NOP left out; the
/// walk stops at a framing error.
fn options_by_kind(block: &[u8]) -> BTreeMap<u8, &[u8]> {
    let mut m = BTreeMap::new();
    for o in RawOptions::new(block) {
        let Ok(o) = o else { break };
        if o.kind != kind::EOL && o.kind != kind::NOP {
            m.insert(o.kind, o.data);
        }
    }
    m
}

/// An option's value: MSS and window scale as numbers, SACK-permitted
/// present, Timestamps as its two values, any other (or a malformed one)
/// as its bytes.
pub fn option_value(kind_byte: u8, data: &[u8]) -> FieldValue {
    match tcp_options::decode(kind_byte, data) {
        Ok(TcpOption::MaxSegmentSize(m)) => FieldValue::Number(u64::from(m)),
        Ok(TcpOption::WindowScale(s)) => FieldValue::Number(u64::from(s)),
        Ok(TcpOption::SackPermitted) => FieldValue::Present,
        Ok(TcpOption::Timestamps(t)) => FieldValue::Timestamps {
            tsval: t.tsval,
            tsecr: t.tsecr,
        },
        _ => FieldValue::Bytes(data.to_vec()),
    }
}

/// The finding kind of an option `k` that is gone.
fn stripped_kind(k: u8) -> Kind {
    match k {
        kind::WINDOW_SCALE => Kind::WscaleStripped,
        kind::SACK_PERMITTED => Kind::SackpermStripped,
        kind::TIMESTAMPS => Kind::TimestampsStripped,
        _ => Kind::OptionStripped,
    }
}

/// The finding kind of an option `k` whose data changed from `a` to `b`.
fn changed_kind(k: u8, a: &[u8], b: &[u8]) -> Kind {
    match k {
        kind::MSS => match (option_value(k, a), option_value(k, b)) {
            (FieldValue::Number(x), FieldValue::Number(y)) if y < x => Kind::MssClamped,
            _ => Kind::MssChanged,
        },
        kind::WINDOW_SCALE => Kind::WscaleChanged,
        kind::TIMESTAMPS => Kind::TimestampsChanged,
        _ => Kind::OptionChanged,
    }
}

/// The changes of the option blocks `sent` and `seen`, by kind.
fn option_changes(sent: &[u8], seen: &[u8], out: &mut Vec<Change>) {
    let (ma, mb) = (options_by_kind(sent), options_by_kind(seen));
    for (&k, &da) in &ma {
        let (kind, after) = match mb.get(&k) {
            None => (stripped_kind(k), FieldValue::Absent),
            Some(&db) if db != da => (changed_kind(k, da, db), option_value(k, db)),
            Some(_) => continue,
        };
        out.push(Change {
            field: Field::Option(k),
            kind,
            before: option_value(k, da),
            after,
        });
    }
    for (&k, &db) in mb.iter().filter(|(k, _)| !ma.contains_key(k)) {
        out.push(Change {
            field: Field::Option(k),
            kind: if k == kind::WINDOW_SCALE {
                Kind::WscaleAdded
            } else {
                Kind::OptionAdded
            },
            before: FieldValue::Absent,
            after: option_value(k, db),
        });
    }
}

/// Addresses and ports: one translation, one change, in `compare`'s shape
/// (only the rewritten ends, each with its port).
fn translation(sent: &Seen, seen: &Seen) -> Option<Change> {
    let src = |s: &Seen| (s.src, Some(s.sport()));
    let dst = |s: &Seen| (s.dst, Some(s.dport()));
    let (src_changed, dst_changed) = (src(sent) != src(seen), dst(sent) != dst(seen));
    if !src_changed && !dst_changed {
        return None;
    }
    let ends = |s: &Seen| {
        FieldValue::Ends(NatEnds {
            src: src_changed.then(|| src(s)),
            dst: dst_changed.then(|| dst(s)),
        })
    };
    Some(Change {
        field: Field::Address,
        kind: Kind::Nat,
        before: ends(sent),
        after: ends(seen),
    })
}

/// Every field of `sent` that `seen` shows different.
pub fn diff(sent: &Seen, seen: &Seen) -> Vec<Change> {
    let mut out = Vec::new();
    let mut push = |field, kind, before, after| {
        out.push(Change {
            field,
            kind,
            before,
            after,
        })
    };
    let (a, b) = (sent.ds, seen.ds);
    if a.dscp() != b.dscp() {
        push(
            Field::Dscp,
            Kind::DscpChanged,
            FieldValue::Dscp(a.dscp()),
            FieldValue::Dscp(b.dscp()),
        );
    }
    if a.ecn() != b.ecn() {
        push(
            Field::Ecn,
            Kind::EcnChanged,
            FieldValue::Ecn(a.ecn()),
            FieldValue::Ecn(b.ecn()),
        );
    }
    if let Some(c) = translation(sent, seen) {
        push(c.field, c.kind, c.before, c.after);
    }
    if sent.seq() != seen.seq() {
        let n = |s: &Seen| FieldValue::Number(u64::from(s.seq()));
        push(Field::Seq, Kind::SeqRewritten, n(sent), n(seen));
    }
    if let (Some(fa), Some(fb)) = (sent.flags(), seen.flags()) {
        let ecn = Flags::AE | Flags::CWR | Flags::ECE;
        if fa & ecn != fb & ecn {
            push(
                Field::EcnFlags,
                Kind::EcnChanged,
                FieldValue::EcnFlags(fa & ecn),
                FieldValue::EcnFlags(fb & ecn),
            );
        }
        if let (true, Some(x), Some(y)) = (
            fa.contains(Flags::ACK) && fb.contains(Flags::ACK),
            sent.ack(),
            seen.ack(),
        ) {
            if x != y {
                let n = |v: u32| FieldValue::Number(u64::from(v));
                push(Field::Ack, Kind::AckRewritten, n(x), n(y));
            }
        }
    }
    if let (Some(x), Some(y)) = (sent.window(), seen.window()) {
        if x != y {
            let n = |v: u16| FieldValue::Number(u64::from(v));
            push(Field::Window, Kind::WindowRewritten, n(x), n(y));
        }
    }
    if let (Some(oa), Some(ob)) = (sent.options(), seen.options()) {
        option_changes(oa, ob, &mut out);
    }
    out
}

/// One observer on the path: a router's quote (by TTL) or the far end.
#[derive(Debug, Clone)]
pub struct Observation<'a> {
    /// Hops from the sender (the TTL of the copy it saw; the far end's is
    /// the path length).
    pub ttl: u8,
    /// Who saw it.
    pub address: IpAddr,
    /// What it saw.
    pub seen: &'a Seen,
    /// The copy it saw, as sent.
    pub sent: &'a Seen,
}

/// A hop: its TTL and address.
pub type Hop = (u8, IpAddr);

/// A change located on the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The change as the first observer that showed it saw it.
    pub change: Change,
    /// The first observer showing the change.
    pub hop: Option<Hop>,
    /// The last observer before `hop` showing the field unchanged.
    pub after_hop: Option<Hop>,
}

/// Locates every change that any observer shows, in path order.
///
/// Observations must be sorted by TTL. A field an observer did not see
/// says nothing either way.
pub fn locate(path: &[Observation<'_>]) -> Vec<Located> {
    let mut out: Vec<Located> = Vec::new();
    let diffs: Vec<(Coverage, Vec<Change>)> = path
        .iter()
        .map(|o| (Coverage::of(o.seen), diff(o.sent, o.seen)))
        .collect();
    for (i, (_, changes)) in diffs.iter().enumerate() {
        for c in changes {
            if out.iter().any(|l| l.change.field == c.field) {
                continue;
            }
            let after_hop = (0..i).rev().find_map(|j| {
                let (cov, ch) = &diffs[j];
                (cov.shows(c.field) && !ch.iter().any(|x| x.field == c.field))
                    .then(|| (path[j].ttl, path[j].address))
            });
            out.push(Located {
                change: c.clone(),
                hop: Some((path[i].ttl, path[i].address)),
                after_hop,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::wire::{options, packet, IpFields, Segment};
    use dscp::DsField;
    use std::net::Ipv4Addr;
    use tcp_options::OptionsBuilder;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 19, 0, 2));

    fn probe_at(
        opts: Vec<u8>,
        tos: u8,
        (src, sport): (IpAddr, u16),
        (dst, dport): (IpAddr, u16),
    ) -> Seen {
        let seg = Segment {
            seq: 1000,
            flags: Flags::SYN,
            window: 65535,
            options: opts,
            ..Segment::new(sport, dport)
        };
        let p = packet(src, dst, IpFields::new(DsField::new(tos), 1, 1), &seg).unwrap();
        Seen::parse(&p).unwrap()
    }

    fn probe(opts: Vec<u8>, tos: u8) -> Seen {
        probe_at(opts, tos, (A, 40000), (B, 5201))
    }

    fn all() -> Vec<u8> {
        options(
            OptionsBuilder::new()
                .mss(1460)
                .sack_permitted()
                .timestamps(1, 0)
                .window_scale(7),
        )
        .unwrap()
    }

    /// Window scale replaced by NOPs, as netfilter's TCPOPTSTRIP does.
    fn stripped() -> Vec<u8> {
        options(
            OptionsBuilder::new()
                .mss(1460)
                .sack_permitted()
                .timestamps(1, 0),
        )
        .unwrap()
        .into_iter()
        .chain([1, 1, 1, 1])
        .collect()
    }

    #[test]
    fn identical_shows_nothing() {
        assert!(diff(&probe(all(), 0x28), &probe(all(), 0x28)).is_empty());
    }

    #[test]
    fn stripped_wscale_is_wscale_stripped_with_its_shift() {
        let d = diff(&probe(all(), 0), &probe(stripped(), 0));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, Kind::WscaleStripped);
        assert_eq!(d[0].option_kind(), Some(3));
        assert_eq!(d[0].before, FieldValue::Number(7));
        assert_eq!(d[0].after, FieldValue::Absent);
    }

    #[test]
    fn lower_mss_is_clamped_higher_is_changed() {
        let o = |m| options(OptionsBuilder::new().mss(m)).unwrap();
        assert_eq!(
            diff(&probe(o(1460), 0), &probe(o(1200), 0))[0].kind,
            Kind::MssClamped
        );
        assert_eq!(
            diff(&probe(o(1200), 0), &probe(o(1460), 0))[0].kind,
            Kind::MssChanged
        );
    }

    #[test]
    fn dscp_and_ecn_are_separate_findings() {
        // AF11 with ECT(0) seen as CS0 with Not-ECT: both fields changed.
        let d = diff(&probe(vec![], (10 << 2) | 2), &probe(vec![], 0));
        let kinds: Vec<Kind> = d.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [Kind::DscpChanged, Kind::EcnChanged]);
        assert_eq!(d[0].before, FieldValue::Dscp(Dscp::AF11));
        assert_eq!(d[0].after, FieldValue::Dscp(Dscp::CS0));
    }

    #[test]
    fn unknown_option_removed_is_option_stripped_with_kind() {
        let d = diff(
            &probe(vec![253, 4, 0xab, 0xcd], 0),
            &probe(vec![1, 1, 1, 1], 0),
        );
        assert_eq!(d[0].kind, Kind::OptionStripped);
        assert_eq!(d[0].option_kind(), Some(253));
        assert_eq!(d[0].before, FieldValue::Bytes(vec![0xab, 0xcd]));
    }

    #[test]
    fn nat_gives_the_rewritten_ends_only_as_compare_does() {
        let sent = probe(vec![], 0);
        let server = IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2));
        // Destination NAT: address and port of the destination rewritten.
        let dnat = probe_at(vec![], 0, (A, 40000), (server, 8080));
        let d = diff(&sent, &dnat);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, Kind::Nat);
        let ends = |src, dst| FieldValue::Ends(NatEnds { src, dst });
        assert_eq!(d[0].before, ends(None, Some((B, Some(5201)))));
        assert_eq!(d[0].after, ends(None, Some((server, Some(8080)))));
        // Source NAT that keeps the address and changes the port only.
        let snat = probe_at(vec![], 0, (A, 40999), (B, 5201));
        let d = diff(&sent, &snat);
        assert_eq!(
            (d[0].before.clone(), d[0].after.clone()),
            (
                ends(Some((A, Some(40000))), None),
                ends(Some((A, Some(40999))), None)
            )
        );
    }

    fn obs<'a>(ttl: u8, sent: &'a Seen, seen: &'a Seen) -> Observation<'a> {
        Observation {
            ttl,
            address: IpAddr::V4(Ipv4Addr::new(198, 18, ttl, 1)),
            seen,
            sent,
        }
    }

    #[test]
    fn located_between_the_last_unchanged_and_the_first_changed_quote() {
        let sent = probe(vec![], 10 << 2);
        let bleached = probe(vec![], 0);
        let path = [
            obs(1, &sent, &sent),
            obs(2, &sent, &sent),
            obs(3, &sent, &bleached),
            obs(4, &sent, &bleached),
        ];
        let l = locate(&path);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].hop.unwrap().0, 3);
        assert_eq!(l[0].after_hop.unwrap().0, 2);
    }

    #[test]
    fn partial_quotes_say_nothing_about_options() {
        let sent = probe(all(), 0);
        let partial = sent.truncated(8);
        let stripped = probe(stripped(), 0);
        let path = [
            obs(1, &sent, &sent),
            obs(2, &sent, &partial),
            obs(3, &sent, &stripped),
        ];
        let l = locate(&path);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].change.kind, Kind::WscaleStripped);
        // Hop 2 quoted 8 bytes: the option was last seen intact at hop 1.
        assert_eq!(l[0].after_hop.unwrap().0, 1);
        assert_eq!(l[0].hop.unwrap().0, 3);
        assert_eq!(Coverage::of(&partial), Coverage::Partial);
        assert_eq!(Coverage::of(&sent.truncated(24)), Coverage::FixedHeader);
    }

    /// A quote whose data offset is below 5 words (malformed) still shows
    /// the fixed header: what it shows changed there is located there
    /// (fuzz regression probe_answer/data-offset-below-5).
    #[test]
    fn a_fixed_header_with_a_bad_data_offset_shows_its_fields() {
        let sent = probe(vec![], 0);
        let seg = Segment {
            seq: 1000,
            flags: Flags::SYN,
            window: 1000,
            ..Segment::new(40000, 5201)
        };
        let mut p = packet(A, B, IpFields::new(DsField::new(0), 1, 1), &seg).unwrap();
        // The data offset nibble (TCP byte 12) set to 4 words.
        p[20 + 12] = 0x40;
        let odd = Seen::parse(&p).unwrap();
        assert_eq!((odd.header_len(), odd.window()), (None, Some(1000)));
        assert_eq!(Coverage::of(&odd), Coverage::FixedHeader);
        let l = locate(&[obs(1, &sent, &odd)]);
        assert_eq!(l[0].change.field, Field::Window);
        assert!(Coverage::of(&odd).shows(l[0].change.field));
    }

    /// Each observation is compared with the copy it saw: copies that
    /// differ by design (the path walk's) show no change.
    #[test]
    fn each_observation_is_compared_with_its_own_copy() {
        let one = probe_at(vec![], 0, (A, 40001), (B, 5201));
        let two = probe_at(vec![], 0, (A, 40002), (B, 5201));
        assert!(locate(&[obs(1, &one, &one), obs(2, &two, &two)]).is_empty());
        assert_eq!(locate(&[obs(1, &one, &two)]).len(), 1);
    }
}
