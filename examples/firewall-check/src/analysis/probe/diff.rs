//! What changed between the probe as sent and the probe as an observer saw
//! it, and where on the path the change happened.
//!
//! Each difference is a [`Change`] of one field (`key`), in the finding
//! kinds `compare` uses ([`crate::finding::Kind`]) or the probe's
//! own ([`ProbeKind`]). [`locate`] walks the observers in path order (the
//! router quotes at TTL 1, 2, ..., then the reflector at the target) and
//! names, per field, the first observer that saw it changed (`hop`) and the
//! last one before it that saw it unchanged (`after_hop`).

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde_json::{json, Value};
use tcp_options::{kind, Flags, RawOptions};

use super::wire::Seen;
use crate::finding::{self, Kind};

/// A finding kind: the one list (`finding::Kind`), probing-only kinds included.
pub type ProbeKind = Kind;

/// One field that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The field (`dscp`, `ecn`, `ecn_flags`, `window`, `seq`, `ack`,
    /// `address`, `port`, `option:N`): changes are located per key.
    pub key: String,
    /// The finding kind.
    pub kind: ProbeKind,
    /// The option kind, for option findings.
    pub option_kind: Option<u8>,
    /// The value as sent.
    pub before: Value,
    /// The value as seen.
    pub after: Value,
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
    /// Whether a field with this key was visible.
    pub fn shows(self, key: &str) -> bool {
        match key {
            "dscp" | "ecn" | "address" | "seq" => true,
            "ecn_flags" | "window" | "ack" => self >= Coverage::FixedHeader,
            _ => self == Coverage::Full,
        }
    }
}

/// How much of `seen` covers the segment.
pub fn coverage(seen: &Seen) -> Coverage {
    match seen.header_len() {
        None => Coverage::Partial,
        Some(len) if seen.tcp.len() >= len => Coverage::Full,
        Some(_) => Coverage::FixedHeader,
    }
}

/// The options of a block by kind (last one wins), EOL/NOP left out; the
/// walk stops at a framing error.
fn options_by_kind(block: &[u8]) -> BTreeMap<u8, Vec<u8>> {
    let mut m = BTreeMap::new();
    for o in RawOptions::new(block) {
        let Ok(o) = o else { break };
        if o.kind != kind::EOL && o.kind != kind::NOP {
            m.insert(o.kind, o.data.to_vec());
        }
    }
    m
}

fn be16(d: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes([*d.first()?, *d.get(1)?]))
}

/// An option's value as JSON: MSS and window scale as numbers, Timestamps
/// as `{tsval, tsecr}`, others as hex.
pub fn option_value(kind_byte: u8, data: &[u8]) -> Value {
    match (kind_byte, data.len()) {
        (kind::MSS, 2) => json!(be16(data)),
        (kind::WINDOW_SCALE, 1) => json!(data[0]),
        (kind::SACK_PERMITTED, 0) => json!("present"),
        (kind::TIMESTAMPS, 8) => json!({
            "tsval": u32::from_be_bytes([data[0], data[1], data[2], data[3]]),
            "tsecr": u32::from_be_bytes([data[4], data[5], data[6], data[7]]),
        }),
        _ => json!(data.iter().map(|b| format!("{b:02x}")).collect::<String>()),
    }
}

fn ecn_flag_names(f: Flags) -> Value {
    let names: Vec<&str> = [(Flags::AE, "AE"), (Flags::CWR, "CWR"), (Flags::ECE, "ECE")]
        .iter()
        .filter(|(b, _)| f.contains(*b))
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        json!("none")
    } else {
        json!(names.join("+"))
    }
}

/// The DSCP of a DS byte as JSON: `{"value": 10, "name": "af11"}`.
pub fn dscp_value(tos: u8) -> Value {
    let d = dscp::DsField::new(tos).dscp();
    json!({"value": d.value(), "name": d.to_string()})
}

/// The ECN codepoint of a DS byte as JSON (`"ECT(0)"`).
pub fn ecn_value(tos: u8) -> Value {
    json!(dscp::DsField::new(tos).ecn().to_string())
}

/// Every field of `sent` that `seen` shows different. `translated` is true
/// when addresses and ports are compared in the direction of `sent` (false
/// when the observer could not see them as sent).
pub fn diff(sent: &Seen, seen: &Seen) -> Vec<Change> {
    let mut out = Vec::new();
    let mut push = |key: &str, kind: Kind, option_kind: Option<u8>, before: Value, after: Value| {
        out.push(Change {
            key: key.to_string(),
            kind,
            option_kind,
            before,
            after,
        })
    };
    if sent.tos >> 2 != seen.tos >> 2 {
        push(
            "dscp",
            Kind::DscpChanged,
            None,
            dscp_value(sent.tos),
            dscp_value(seen.tos),
        );
    }
    if sent.tos & 3 != seen.tos & 3 {
        push(
            "ecn",
            Kind::EcnChanged,
            None,
            ecn_value(sent.tos),
            ecn_value(seen.tos),
        );
    }
    // Addresses and ports: one translation, one change, in `compare`'s
    // shape (only the rewritten ends, each with its port when the copy
    // shows it; a port only one copy shows is not a change).
    let src = |s: &Seen| (s.src, s.sport());
    let dst = |s: &Seen| (s.dst, s.dport());
    let differ = |(a, p): (IpAddr, Option<u16>), (b, q): (IpAddr, Option<u16>)| {
        a != b || matches!((p, q), (Some(p), Some(q)) if p != q)
    };
    let src_changed = differ(src(sent), src(seen));
    let dst_changed = differ(dst(sent), dst(seen));
    if src_changed || dst_changed {
        let ends =
            |s: &Seen| finding::nat_ends(src_changed.then(|| src(s)), dst_changed.then(|| dst(s)));
        push("address", Kind::Nat, None, ends(sent), ends(seen));
    }
    if let (Some(a), Some(b)) = (sent.seq(), seen.seq()) {
        if a != b {
            push("seq", Kind::SeqRewritten, None, json!(a), json!(b));
        }
    }
    if let (Some(fa), Some(fb)) = (sent.flags(), seen.flags()) {
        let ecn = Flags::AE | Flags::CWR | Flags::ECE;
        if fa & ecn != fb & ecn {
            push(
                "ecn_flags",
                Kind::EcnChanged,
                None,
                ecn_flag_names(fa),
                ecn_flag_names(fb),
            );
        }
        if fa.contains(Flags::ACK) && fb.contains(Flags::ACK) && sent.ack() != seen.ack() {
            push(
                "ack",
                Kind::AckRewritten,
                None,
                json!(sent.ack()),
                json!(seen.ack()),
            );
        }
    }
    if let (Some(a), Some(b)) = (sent.window(), seen.window()) {
        if a != b {
            push("window", Kind::WindowRewritten, None, json!(a), json!(b));
        }
    }
    if let (Some(oa), Some(ob)) = (sent.options(), seen.options()) {
        let (ma, mb) = (options_by_kind(oa), options_by_kind(ob));
        for (&k, da) in &ma {
            let key = format!("option:{k}");
            match mb.get(&k) {
                None => {
                    let kind = match k {
                        kind::WINDOW_SCALE => Kind::WscaleStripped,
                        kind::SACK_PERMITTED => Kind::SackpermStripped,
                        kind::TIMESTAMPS => Kind::TimestampsStripped,
                        _ => Kind::OptionStripped,
                    };
                    push(&key, kind, Some(k), option_value(k, da), json!("absent"));
                }
                Some(db) if db != da => {
                    let kind = match k {
                        kind::MSS => match (be16(da), be16(db)) {
                            (Some(x), Some(y)) if y < x => Kind::MssClamped,
                            _ => Kind::MssChanged,
                        },
                        kind::WINDOW_SCALE => Kind::WscaleChanged,
                        kind::TIMESTAMPS => Kind::TimestampsChanged,
                        _ => Kind::OptionChanged,
                    };
                    push(
                        &key,
                        kind,
                        Some(k),
                        option_value(k, da),
                        option_value(k, db),
                    );
                }
                Some(_) => {}
            }
        }
        for (&k, db) in &mb {
            if !ma.contains_key(&k) {
                let kind = if k == kind::WINDOW_SCALE {
                    Kind::WscaleAdded
                } else {
                    Kind::OptionAdded
                };
                push(
                    &format!("option:{k}"),
                    kind,
                    Some(k),
                    json!("absent"),
                    option_value(k, db),
                );
            }
        }
    }
    out
}

/// One observer on the path: a router's quote (by TTL) or the reflector at
/// the target.
#[derive(Debug, Clone)]
pub struct Observation {
    /// Hops from the sender (the TTL of the copy it saw; the target's is
    /// the path length).
    pub ttl: u8,
    /// Who saw it.
    pub address: IpAddr,
    /// What it saw.
    pub seen: Seen,
}

/// A change located on the path.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// The change as the first observer that showed it saw it.
    pub change: Change,
    /// The first observer showing the change: (TTL, address).
    pub hop: Option<(u8, IpAddr)>,
    /// The last observer before `hop` showing the field unchanged.
    pub after_hop: Option<(u8, IpAddr)>,
}

/// Locates every change that any observer shows, in path order.
///
/// Observations must be sorted by TTL. A field an observer did not see
/// (an 8-byte quote and an option) says nothing either way.
pub fn locate(sent: &Seen, path: &[Observation]) -> Vec<Located> {
    let mut out: Vec<Located> = Vec::new();
    let diffs: Vec<(Coverage, Vec<Change>)> = path
        .iter()
        .map(|o| (coverage(&o.seen), diff(sent, &o.seen)))
        .collect();
    for (i, (_, changes)) in diffs.iter().enumerate() {
        for c in changes {
            if out.iter().any(|l| l.change.key == c.key) {
                continue;
            }
            let after_hop = (0..i).rev().find_map(|j| {
                let (cov, ch) = &diffs[j];
                (cov.shows(&c.key) && !ch.iter().any(|x| x.key == c.key))
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
    use std::net::Ipv4Addr;
    use tcp_options::OptionsBuilder;

    use crate::analysis::probe::wire::{build_ipv4, Segment};

    fn probe(options: Vec<u8>, tos: u8) -> Seen {
        let seg = Segment {
            sport: 40000,
            dport: 5201,
            seq: 1000,
            ack: 0,
            flags: Flags::SYN,
            window: 65535,
            options,
            payload: vec![],
        };
        let p = build_ipv4(
            Ipv4Addr::new(198, 18, 0, 2),
            Ipv4Addr::new(198, 19, 0, 2),
            tos,
            1,
            1,
            &seg,
        )
        .unwrap();
        Seen::from_ipv4(&p).unwrap()
    }

    fn all() -> Vec<u8> {
        OptionsBuilder::new()
            .mss(1460)
            .sack_permitted()
            .timestamps(1, 0)
            .window_scale(7)
            .build()
            .unwrap()
            .to_vec()
    }

    #[test]
    fn identical_shows_nothing() {
        assert!(diff(&probe(all(), 0x28), &probe(all(), 0x28)).is_empty());
    }

    #[test]
    fn stripped_wscale_is_wscale_stripped_with_its_shift() {
        let mut stripped = all();
        // TCPOPTSTRIP replaces the option with NOPs.
        let at = stripped.windows(3).position(|w| w == [3, 3, 7]).unwrap();
        stripped[at..at + 3].fill(1);
        let d = diff(&probe(all(), 0), &probe(stripped, 0));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind.as_str(), "wscale_stripped");
        assert_eq!(d[0].option_kind, Some(3));
        assert_eq!(d[0].before, json!(7));
    }

    #[test]
    fn lower_mss_is_clamped_higher_is_changed() {
        let o = |m| OptionsBuilder::new().mss(m).build().unwrap().to_vec();
        assert_eq!(
            diff(&probe(o(1460), 0), &probe(o(1200), 0))[0]
                .kind
                .as_str(),
            "mss_clamped"
        );
        assert_eq!(
            diff(&probe(o(1200), 0), &probe(o(1460), 0))[0]
                .kind
                .as_str(),
            "mss_changed"
        );
    }

    #[test]
    fn dscp_and_ecn_are_separate_findings() {
        // AF11 with ECT(0) seen as CS0 with Not-ECT: both fields changed.
        let d = diff(&probe(vec![], (10 << 2) | 2), &probe(vec![], 0));
        let kinds: Vec<&str> = d.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["dscp_changed", "ecn_changed"]);
        assert_eq!(d[0].before["value"], 10);
        assert_eq!(d[0].after["value"], 0);
    }

    #[test]
    fn unknown_option_removed_is_option_stripped_with_kind() {
        let d = diff(
            &probe(vec![253, 4, 0xab, 0xcd], 0),
            &probe(vec![1, 1, 1, 1], 0),
        );
        assert_eq!(d[0].kind.as_str(), "option_stripped");
        assert_eq!(d[0].option_kind, Some(253));
    }

    #[test]
    fn nat_gives_the_rewritten_ends_only_as_compare_does() {
        let sent = probe(vec![], 0);
        // Destination NAT: address and port of the destination rewritten.
        let mut dnat = sent.clone();
        dnat.dst = IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2));
        dnat.tcp[2..4].copy_from_slice(&8080u16.to_be_bytes());
        let d = diff(&sent, &dnat);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, Kind::Nat);
        assert_eq!(
            d[0].before,
            json!({"dst": {"addr": "198.19.0.2", "port": 5201}})
        );
        assert_eq!(
            d[0].after,
            json!({"dst": {"addr": "198.18.44.2", "port": 8080}})
        );
        // Source NAT that keeps the address and changes the port only.
        let mut snat = sent.clone();
        snat.tcp[0..2].copy_from_slice(&40999u16.to_be_bytes());
        let d = diff(&sent, &snat);
        assert_eq!(
            (d[0].before.clone(), d[0].after.clone()),
            (
                json!({"src": {"addr": "198.18.0.2", "port": 40000}}),
                json!({"src": {"addr": "198.18.0.2", "port": 40999}})
            )
        );
        // A copy too short to show the ports: the address change alone,
        // the unseen port null, and a port it cannot show is no change.
        let mut short = dnat.clone();
        short.tcp.truncate(2);
        let d = diff(&sent, &short);
        assert_eq!(
            d[0].after,
            json!({"dst": {"addr": "198.18.44.2", "port": null}})
        );
        let mut same_addr = sent.clone();
        same_addr.tcp.truncate(2);
        assert!(diff(&sent, &same_addr).is_empty());
    }

    fn obs(ttl: u8, seen: Seen) -> Observation {
        Observation {
            ttl,
            address: IpAddr::V4(Ipv4Addr::new(198, 18, ttl, 1)),
            seen,
        }
    }

    #[test]
    fn located_between_the_last_unchanged_and_the_first_changed_quote() {
        let sent = probe(vec![], 10 << 2);
        let bleached = probe(vec![], 0);
        let path = [
            obs(1, sent.clone()),
            obs(2, sent.clone()),
            obs(3, bleached.clone()),
            obs(4, bleached),
        ];
        let l = locate(&sent, &path);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].hop.unwrap().0, 3);
        assert_eq!(l[0].after_hop.unwrap().0, 2);
    }

    #[test]
    fn partial_quotes_say_nothing_about_options() {
        let sent = probe(all(), 0);
        let mut partial = sent.clone();
        partial.tcp.truncate(8);
        let mut stripped = all();
        let at = stripped.windows(3).position(|w| w == [3, 3, 7]).unwrap();
        stripped[at..at + 3].fill(1);
        let path = [
            obs(1, sent.clone()),
            obs(2, partial),
            obs(3, probe(stripped, 0)),
        ];
        let l = locate(&sent, &path);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].change.kind.as_str(), "wscale_stripped");
        // Hop 2 quoted 8 bytes: the option was last seen intact at hop 1.
        assert_eq!(l[0].after_hop.unwrap().0, 1);
        assert_eq!(l[0].hop.unwrap().0, 3);
    }
}
