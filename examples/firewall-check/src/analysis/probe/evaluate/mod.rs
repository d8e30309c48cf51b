//! From the test runs to the report: each test's outcome, its detail, the
//! findings.
//!
//! For each run, in order:
//!
//! 1. [`verdict`]: what the observers say. No answer from the far end and
//!    a note: `unknown` (the test could not run). No answer: `dropped`,
//!    placed after the last hop that quoted the probe (or the far end that
//!    captured it) and at the first that should have and did not. A change
//!    any observer shows ([`super::diff::locate`]): `modified`, a finding
//!    per field at the first observer that saw it changed. Else
//!    `unchanged` as far as the observers saw what the test checks (a
//!    quote of 8 bytes shows no option: [`quotes`]), `unknown` when the
//!    last one to quote it did not.
//! 2. The test's own judgment, from its module under
//!    [`super::tests`]: the path's TTL decrement, what became of Fast
//!    Open's data, the out-of-window byte, the DSCP maps.
//! 3. [`path`]: the findings of the path as a whole: routers that answer
//!    from the target's address (a NAT), a SYN-ACK from fewer hops away
//!    than the target (a SYN proxy).
//!
//! The server's own choices are never findings: what the target answers
//! says what the server chose, not what the path did. Words are in
//! [`super::report`]; here everything is typed ([`Detail`], [`Outcome`]).

pub mod path;
pub mod quotes;
pub mod verdict;

use std::net::{IpAddr, SocketAddr};

use super::catalogue::{TestSpec, Unit};
use super::diff::{Field, FieldValue};
use super::prober::Prober;
use super::report::{HopRef, Report, ReportNote, TestResult};
use super::tests::out_of_window::OowEvidence;
use super::tests::{dscp_all, fastopen_data, out_of_window, synack, Note, TestRun};

pub use quotes::{Beyond, QuoteEvidence};

/// A test's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every observer saw it as sent.
    Unchanged,
    /// A finding.
    Modified,
    /// It never arrived.
    Dropped,
    /// Nothing to compare.
    Unknown,
}

/// How many hops could have quoted a probe: the hops before the target,
/// or the hops probed when the target is beyond `--max-ttl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hops {
    /// How many.
    pub count: u8,
    /// Only the hops up to `--max-ttl`.
    pub probed_only: bool,
}

/// How many quoted a probe, for a test's detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoted {
    /// Said of an unchanged probe ("quoted unchanged by").
    pub unchanged: bool,
    /// Quotes of the whole header.
    pub full: usize,
    /// Out of.
    pub hops: Hops,
    /// Quotes of part of it.
    pub partial: usize,
}

/// Where a change was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// At this hop.
    Hop(u8),
    /// At the far end, past `--max-ttl` (the value).
    FarEndPast(u8),
    /// Not located.
    Unknown,
}

/// One part of a test's detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// What the test met on the way.
    Note(Note),
    /// Server to client: a NAT's translation undone.
    TranslatedBack {
        /// As sent.
        before: FieldValue,
        /// As seen.
        after: FieldValue,
    },
    /// The target never answered: no path.
    NeverAnswered,
    /// The server did not answer the reverse tests' handshake.
    ServerDidNotAnswer,
    /// An ICMP unreachable answered.
    Unreachable {
        /// ICMP type.
        icmp_type: u8,
        /// Code.
        code: u8,
        /// Its sender.
        from: IpAddr,
    },
    /// The probe reached the target (beyond `--max-ttl`) without answer.
    ReachedBeyond {
        /// The target.
        address: IpAddr,
        /// `--max-ttl`.
        max_ttl: u8,
    },
    /// The probe reached the target without answer.
    Reached {
        /// The target's TTL.
        ttl: u8,
        /// The target.
        address: IpAddr,
    },
    /// Last seen at the far end.
    LastSeenAtFarEnd(IpAddr),
    /// Last quoted by a hop.
    LastQuoted(u8, IpAddr),
    /// No hop quoted it.
    NoHopQuoted,
    /// How many quoted it (of a modified probe).
    QuotedBy(Quoted),
    /// A field that changed and where.
    Changed {
        /// The field.
        field: Field,
        /// As sent.
        before: FieldValue,
        /// As seen.
        after: FieldValue,
        /// Where.
        at: Place,
    },
    /// A NAT's translation seen only at the far end.
    NatNotLocated,
    /// Unchanged and received here (server to client).
    ReceivedUnchanged(Quoted),
    /// Unchanged and captured at the target.
    CapturedUnchanged(Quoted),
    /// Unchanged as far as quoted; answered, not captured at the target.
    NotCaptured(Quoted, u8),
    /// Unchanged as far as quoted; nothing past without the reflector.
    NotVisiblePast(Quoted, u8),
    /// No quote at all.
    NoQuoteNotVisible,
    /// Quotes, none of what the test checks.
    NoQuoteOfWhat(Quoted),
    /// Partial quotes: which hops, how much, from where it is unknown.
    PartialQuotes {
        /// The hops.
        hops: Vec<u8>,
        /// The fewest TCP bytes one held.
        bytes: usize,
        /// From where unknown.
        beyond: Beyond,
    },
    /// Every hop quoted TTL 1.
    TtlDecrement,
    /// A hop quoted another TTL.
    QuotedTtl {
        /// The hop.
        hop: u8,
        /// The TTL it quoted.
        ttl: u8,
    },
    /// Fast Open: the SYN-ACK acknowledged the data.
    FastOpenDataAcked {
        /// Its bytes.
        bytes: usize,
    },
    /// Fast Open: the data reached the target, the server did not take it.
    FastOpenDataNotTaken {
        /// Its bytes.
        bytes: usize,
    },
    /// Fast Open: the SYN-ACK did not acknowledge the data.
    FastOpenDataNotAcked,
    /// Fast Open: the SYN with data never arrives.
    FastOpenDataDropped {
        /// Its bytes.
        bytes: usize,
    },
    /// A SYN-ACK's data arrived (how much of how much).
    SynAckData {
        /// Arrived.
        arrived: usize,
        /// Sent.
        sent: usize,
    },
    /// The server-side byte past the window arrived.
    ServerByteArrived(OowEvidence),
    /// The byte past the window was acknowledged.
    ByteAcked(OowEvidence),
    /// No DSCP value changed.
    MapUnchanged(usize),
    /// The changed values (first, last, seen, hop).
    Remarking(Vec<(u8, u8, u8, Option<u8>)>),
    /// Values nobody saw.
    MapUnseen(usize),
    /// Changed values not located (the reflector's budget).
    MapUnlocated(usize),
}

/// Turns the test runs into the report.
pub fn evaluate(
    target: SocketAddr,
    p: &Prober<'_>,
    runs: &[(TestSpec, TestRun)],
    table: &str,
    reflector: bool,
) -> Report {
    let mut report = Report::new(target, p.path.rtt);
    report
        .notes
        .push(ReportNote::RstSuppressed(table.to_string()));
    if reflector {
        report.notes.push(ReportNote::ReverseHops);
    }
    report.path = p
        .path
        .hops
        .iter()
        .map(|&(ttl, address)| HopRef { ttl, address })
        .collect();
    if let Some(l) = p.path.len.filter(|_| !p.path.beyond) {
        report.path.push(HopRef {
            ttl: l,
            address: target.ip(),
        });
    }
    if p.path.beyond {
        report.notes.push(ReportNote::Beyond(p.max_ttl));
    }
    if runs
        .first()
        .is_some_and(|(_, r)| r.notes.contains(&Note::PortClosed))
    {
        report.notes.push(ReportNote::PortClosed(target.port()));
    }
    let ctx = verdict::Context::new(target, p, runs, reflector);
    // One finding per field changed at one hop (the DSCP remarking of
    // several marks is one finding; its map is in the tests' details).
    let mut keys = Vec::new();
    for (spec, run) in runs {
        let mut v = ctx.judge(spec, run);
        own_judgment(p, spec, run, &mut v);
        for (field, f) in v.findings {
            if let Some(field) = field {
                let key = (f.kind, field, f.hop, f.direction);
                if keys.contains(&key) {
                    continue;
                }
                keys.push(key);
            }
            report.findings.push(f);
        }
        report.tests.push(TestResult {
            name: spec.name,
            direction: run.direction,
            result: v.outcome,
            detail: v.detail,
        });
    }
    report.dscp_map = p.dscp_map.clone();
    report.reverse_dscp_map = p.reverse_dscp_map.clone();
    path::nat_finding(&ctx, &mut report);
    path::proxied_finding(p, runs, reflector, &mut report);
    report
}

/// The judgments that are the test's own (its module's).
fn own_judgment(p: &Prober<'_>, spec: &TestSpec, run: &TestRun, v: &mut verdict::Verdict) {
    let detail = &mut v.detail;
    match spec.unit {
        Unit::Path => super::tests::path::judge(run, detail),
        Unit::FastOpenData => fastopen_data::judge(run, v.outcome, detail),
        Unit::SynAck => synack::judge(spec, run, detail),
        Unit::OutOfWindow | Unit::ReverseData => out_of_window::judge(run, detail),
        Unit::DscpAll => dscp_all::judge(&p.dscp_map, 0, &mut v.outcome, detail),
        Unit::ReverseDscpAll if run.notes.is_empty() => {
            let unlocated = p.reverse_dscp_unlocated;
            dscp_all::judge(&p.reverse_dscp_map, unlocated, &mut v.outcome, detail)
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::catalogue::catalogue;
    use crate::analysis::probe::net::RawIp;
    use crate::analysis::probe::prober::{Io, Progress};
    use crate::analysis::probe::wire::{packet, IcmpError, IcmpKind, IpFields, Seen, Segment};
    use std::net::Ipv4Addr;
    use std::time::Duration;
    use tcp_options::Flags;

    const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2));
    const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2));

    /// The lab's line: r1, r2, r3 at TTL 1 to 3, the target at 4.
    fn lab_prober(raw: &RawIp) -> Prober<'_> {
        let target = SocketAddr::new(SERVER, 5201);
        let mut p = Prober::new(
            Io::new(raw, CLIENT, target, (40000, 40100)),
            16,
            Progress::new(0, false),
        );
        p.path.len = Some(4);
        p.path.hops = (1..=3u8)
            .map(|t| (t, IpAddr::V4(Ipv4Addr::new(198, 18, 40 + t, t.min(2)))))
            .collect();
        p.path.rtt = Some(Duration::from_millis(1));
        p
    }

    fn spec(name: &str) -> TestSpec {
        catalogue().into_iter().find(|t| t.name == name).unwrap()
    }

    /// A run of `spec` whose SYN hop `t` quoted (all of it, or its first
    /// `cut` TCP bytes), as seen at each hop by `at(ttl)`.
    fn quoted_run(
        p: &Prober<'_>,
        spec: &TestSpec,
        quotes: &[(u8, Option<usize>)],
        at: impl Fn(u8, &Segment) -> Segment,
    ) -> TestRun {
        let seg = Segment {
            seq: 7,
            flags: Flags::SYN | spec.marks.flags,
            window: spec.marks.window,
            options: spec.marks.options.clone(),
            payload: spec.marks.payload.clone(),
            ..Segment::new(40001, 5201)
        };
        let ds = spec.marks.ds;
        let sent =
            Seen::parse(&packet(CLIENT, SERVER, IpFields::new(ds, 64, 0x0100), &seg).unwrap())
                .unwrap();
        let mut run = TestRun::new(sent, crate::conn::Direction::ClientToServer);
        for &(ttl, cut) in quotes {
            let ip = IpFields::new(ds, 1, 0x0100 | u16::from(ttl));
            let quote = Seen::parse(&packet(CLIENT, SERVER, ip, &at(ttl, &seg)).unwrap()).unwrap();
            let quote = cut.map_or(quote.clone(), |n| quote.truncated(n));
            let from = p.path.hops[usize::from(ttl) - 1].1;
            run.add_quote(
                ttl,
                IcmpError {
                    from,
                    kind: IcmpKind::TimeExceeded,
                    code: 0,
                    quote,
                    extensions: false,
                },
            );
        }
        let answer = Segment {
            seq: 99,
            ack: 8,
            flags: Flags::SYN | Flags::ACK,
            window: 64240,
            ..Segment::new(5201, 40001)
        };
        let a = packet(
            SERVER,
            CLIENT,
            IpFields::new(dscp::DsField::new(0), 61, 0),
            &answer,
        )
        .unwrap();
        run.answer = Some((4, Seen::parse(&a).unwrap()));
        run
    }

    /// Window scale replaced by NOPs (TCPOPTSTRIP).
    fn strip_wscale(seg: &Segment) -> Segment {
        Segment {
            options: vec![1, 1, 1, 1],
            ..seg.clone()
        }
    }

    fn detail(r: &Report, i: usize) -> String {
        crate::analysis::probe::report::detail::joined(&r.tests[i].detail)
    }

    /// An RFC 792 quote (8 TCP bytes) shows ports and sequence number
    /// only: it is never counted as a hop that saw the options unchanged,
    /// and from the last hop that quoted them in full on they are unknown.
    #[test]
    fn a_partial_quote_is_not_an_unchanged_hop() {
        let raw = RawIp::inert();
        let p = lab_prober(&raw);
        let target: SocketAddr = "198.18.44.2:5201".parse().unwrap();
        let wscale = spec("wscale");
        assert_eq!(wscale.marks.options, [1, 3, 3, 7]);
        // r3 quotes 8 bytes; r2 strips window scale after its own quote
        // (FORWARD): nobody shows the change, nothing may be placed.
        let run = quoted_run(
            &p,
            &wscale,
            &[(1, None), (2, None), (3, Some(8))],
            |t, s| {
                if t >= 3 {
                    strip_wscale(s)
                } else {
                    s.clone()
                }
            },
        );
        let r = evaluate(
            target,
            &p,
            &[(spec("ttl"), run.clone()), (wscale.clone(), run)],
            "t",
            false,
        );
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        assert_eq!(r.tests[1].result, Outcome::Unknown);
        let d = detail(&r, 1);
        assert!(d.contains("quoted unchanged by 2 of 3 hops"), "{d}");
        assert!(!d.contains("by 3 of 3"), "{d}");
        assert!(
            d.contains("hop(s) 3 quoted only the first 8 TCP bytes")
                && d.contains("unknown beyond hop 2"),
            "{d}"
        );
        assert!(d.contains("not visible past hop 2"), "{d}");
        // The DSCP tests need only the IP header: r3's quote shows it.
        let af11 = spec("dscp_af11");
        let run = quoted_run(&p, &af11, &[(1, None), (2, None), (3, Some(8))], |_, s| {
            s.clone()
        });
        let r = evaluate(target, &p, &[(af11, run)], "t", false);
        assert_eq!(r.tests[0].result, Outcome::Unchanged, "{}", detail(&r, 0));
        assert!(
            detail(&r, 0).contains("unknown beyond hop 2"),
            "{}",
            detail(&r, 0)
        );
        // r1 quotes 8 bytes, r2 and r3 in full: known up to hop 3, the
        // change at r2 before its routing located after no hop (r1 did not
        // show the options).
        let run = quoted_run(
            &p,
            &wscale,
            &[(1, Some(8)), (2, None), (3, None)],
            |t, s| {
                if t >= 2 {
                    strip_wscale(s)
                } else {
                    s.clone()
                }
            },
        );
        let r = evaluate(target, &p, &[(wscale, run)], "t", false);
        let f = &r.findings[0];
        assert_eq!(f.kind, crate::finding::Kind::WscaleStripped);
        assert_eq!(f.hop.map(|h| h.ttl), Some(2));
        assert_eq!(f.after_hop, None, "r1's 8 bytes show no option");
        let d = detail(&r, 0);
        assert!(
            d.contains("quoted by 2 of 3 hops in full and 1 in part"),
            "{d}"
        );
        assert!(
            d.contains("hop(s) 1 quoted only the first 8 TCP bytes"),
            "{d}"
        );
        assert!(!d.contains("unknown beyond"), "{d}");
        assert!(d.contains("option:3 7 -> \"absent\" at hop 2"), "{d}");
    }

    /// No answer from the target while the hops quoted the probe up to r2:
    /// dropped, after r2 and at r3, with the test's description as
    /// `before`; the JSON and text say so.
    #[test]
    fn a_probe_without_answer_is_dropped_after_the_last_quoting_hop() {
        let raw = RawIp::inert();
        let p = lab_prober(&raw);
        let target: SocketAddr = "198.18.44.2:5201".parse().unwrap();
        let ecn = spec("ecn_setup");
        let mut run = quoted_run(&p, &ecn, &[(1, None), (2, None)], |_, s| s.clone());
        run.answer = None;
        let walk = quoted_run(
            &p,
            &spec("ttl"),
            &[(1, None), (2, None), (3, None)],
            |_, s| s.clone(),
        );
        let r = evaluate(target, &p, &[(spec("ttl"), walk), (ecn, run)], "t", false);
        assert_eq!(r.tests[1].result, Outcome::Dropped);
        let f = &r.findings[0];
        assert_eq!(f.kind, crate::finding::Kind::EcnSetupDropped);
        assert_eq!(
            (f.after_hop.map(|h| h.ttl), f.hop.map(|h| h.ttl)),
            (Some(2), Some(3))
        );
        assert!(detail(&r, 1).contains("never arrived; last quoted by hop 2 (198.18.42.2)"));
        let json = r.json().unwrap();
        assert!(json.contains("\"after\": \"dropped\""), "{json}");
        assert!(
            json.contains("\"before\": \"an ECN-setup SYN (ECE+CWR, RFC 3168)\""),
            "{json}"
        );
        assert!(r.text().contains(
            "hop 3 (198.18.43.2), after hop 2 (198.18.42.2), client to server: ECN-setup SYN dropped"
        ), "{}", r.text());
    }
}
