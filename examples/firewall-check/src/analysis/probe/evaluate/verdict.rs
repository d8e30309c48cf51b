//! What the observers of one run say: `unknown`, `dropped` (and where),
//! `modified` (the changes, each a finding where it was first seen) or
//! `unchanged` (as far as the observers saw what the test checks).

use std::net::{IpAddr, SocketAddr};

use super::super::catalogue::{TestSpec, Unit};
use super::super::diff::{locate, Field, Located};
use super::super::prober::Prober;
use super::super::report::{drop_impact_at, hop_ref, impact, Finding, Shown};
use super::super::tests::TestRun;
use super::{Detail, Hops, Outcome, Place, QuoteEvidence, Quoted};
use crate::conn::Direction;
use crate::finding::Kind;

/// What one run says.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The result.
    pub outcome: Outcome,
    /// The detail's parts, in order.
    pub detail: Vec<Detail>,
    /// The findings, each with the field it is about (a change's: one
    /// finding per field and hop; a drop's: none).
    pub findings: Vec<(Option<Field>, Finding)>,
}

/// What every run is judged against: the path, both ways.
pub struct Context<'a> {
    /// The target.
    pub target: SocketAddr,
    /// The prober (its path).
    pub p: &'a Prober<'a>,
    /// With the reflector.
    pub reflector: bool,
    /// The server-to-client path: the routers that quoted any reverse
    /// test's copies, by TTL from the server.
    reverse_path: Vec<(u8, IpAddr)>,
    /// The TTLs that quoted the path walk.
    walk_ttls: Vec<u8>,
    /// Routers short of the target that answer from the target's own
    /// address (a NAT rewrote their ICMP errors: it translates the error
    /// and its quote back, so the quotes themselves show nothing): the
    /// first of them and the hop before it.
    pub nat_hint: Option<(
        super::super::report::HopRef,
        Option<super::super::report::HopRef>,
    )>,
}

impl<'a> Context<'a> {
    /// The context of `runs`.
    pub fn new(
        target: SocketAddr,
        p: &'a Prober<'a>,
        runs: &[(TestSpec, TestRun)],
        reflector: bool,
    ) -> Context<'a> {
        let mut reverse_path: Vec<(u8, IpAddr)> = Vec::new();
        for (_, r) in runs
            .iter()
            .filter(|(_, r)| r.direction == Direction::ServerToClient)
        {
            for (t, e) in &r.quotes {
                if !reverse_path.iter().any(|(x, _)| x == t) {
                    reverse_path.push((*t, e.from));
                }
            }
        }
        let walk_ttls = runs
            .first()
            .map(|(_, r)| r.quotes.iter().map(|(t, _)| *t).collect())
            .unwrap_or_default();
        Context {
            target,
            p,
            reflector,
            reverse_path,
            walk_ttls,
            nat_hint: super::path::nat_hint(p, target),
        }
    }

    /// How many hops could have quoted a probe.
    fn hops(&self) -> Hops {
        Hops {
            count: self.p.path.len.map_or(0, |x| x.saturating_sub(1)),
            probed_only: self.p.path.beyond,
        }
    }

    /// Judges one run.
    pub fn judge(&self, spec: &TestSpec, run: &TestRun) -> Verdict {
        let reverse = run.direction == Direction::ServerToClient;
        let ev = QuoteEvidence::of(&run.quotes);
        let mut located = locate(&run.observations());
        let mut v = Verdict {
            outcome: Outcome::Unknown,
            detail: run.notes.iter().cloned().map(Detail::Note).collect(),
            findings: Vec::new(),
        };
        // Server to client behind a NAT: the reflector's copies go to the
        // translated address and port, and the NAT translates them back.
        // That is the client-to-server translation undone (reported there,
        // once), not a change of its own.
        if reverse {
            located.retain(|l| {
                let undone = l.change.kind == Kind::Nat;
                if undone {
                    v.detail.push(Detail::TranslatedBack {
                        before: l.change.before.clone(),
                        after: l.change.after.clone(),
                    });
                }
                !undone
            });
        }
        let oow_unsent = matches!(spec.unit, Unit::OutOfWindow)
            || (spec.unit == Unit::ReverseData && spec.drop_kind == Kind::OutOfWindowDropped);
        if oow_unsent && run.oow.as_ref().is_none_or(|o| o.offset == 0) {
            v.outcome = Outcome::Unknown;
        } else if run.answer.is_none() && !run.notes.is_empty() {
            // The test could not run as planned: nothing was tested.
            v.outcome = Outcome::Unknown;
        } else if run.answer.is_none() {
            self.dropped(spec, run, &mut v);
        } else if !located.is_empty() {
            self.modified(spec, run, &ev, &located, &mut v);
        } else {
            self.unchanged(spec, run, &ev, &mut v);
        }
        if let Some(beyond) = ev.beyond() {
            v.detail.push(Detail::PartialQuotes {
                hops: ev.partial.iter().map(|(t, _)| *t).collect(),
                bytes: ev.fewest_bytes(),
                beyond,
            });
        }
        v
    }

    /// The hop at TTL `t` on the run's path: the routers from the
    /// server's side for a reverse run (every reverse test's quotes name
    /// them; at the path's length, the prober itself), the path walk's
    /// otherwise.
    fn hop_at(&self, reverse: bool, t: u8) -> Option<(u8, IpAddr)> {
        if reverse {
            self.reverse_path
                .iter()
                .find(|(x, _)| *x == t)
                .copied()
                .or_else(|| (self.p.path.len == Some(t)).then_some((t, self.p.io.src)))
        } else {
            self.p.path.hops.iter().find(|(x, _)| *x == t).copied()
        }
    }

    /// No answer: dropped after the last hop that quoted it, at the first
    /// that should have (or the far end, which captured it: the answer
    /// was lost on the way back).
    fn dropped(&self, spec: &TestSpec, run: &TestRun, v: &mut Verdict) {
        let reverse = run.direction == Direction::ServerToClient;
        let (path, len) = (&self.p.path, self.p.path.len);
        let last = run.quotes.iter().map(|(t, _)| *t).max();
        let next = if reverse {
            last.map(|l| l + 1).or(Some(1))
        } else {
            self.walk_ttls
                .iter()
                .copied()
                .find(|t| last.is_none_or(|l| *t > l))
        };
        let hop = next.and_then(|t| self.hop_at(reverse, t)).or_else(|| {
            if reverse || run.at_end.is_some() {
                None
            } else {
                len.map(|l| (l, self.target.ip()))
            }
        });
        let after = match &run.at_end {
            Some(o) if !reverse => Some((o.ttl, o.address)),
            _ => last.and_then(|t| self.hop_at(reverse, t)),
        };
        if spec.unit == Unit::Path || len.is_none() {
            v.detail.push(Detail::NeverAnswered);
            return;
        }
        if reverse && spec.name == super::super::tests::synack::OWN {
            v.detail.push(Detail::ServerDidNotAnswer);
            return;
        }
        v.outcome = Outcome::Dropped;
        let at_end = !reverse && run.at_end.is_some();
        v.detail.push(match (after, &run.unreachable) {
            (_, Some(u)) => Detail::Unreachable {
                icmp_type: u.kind.icmp_type(),
                code: u.code,
                from: u.from,
            },
            (Some((_, a)), None) if at_end && path.beyond => Detail::ReachedBeyond {
                address: a,
                max_ttl: self.p.max_ttl,
            },
            (Some((t, a)), None) if at_end => Detail::Reached { ttl: t, address: a },
            (Some((_, a)), None) if path.placed(after).is_none() => Detail::LastSeenAtFarEnd(a),
            (Some((t, a)), None) => Detail::LastQuoted(t, a),
            (None, None) => Detail::NoHopQuoted,
        });
        let before = match &run.oow {
            Some(o) => Shown::OutOfWindow(o.clone()),
            None => Shown::Test(spec.what),
        };
        let finding = Finding {
            kind: spec.drop_kind,
            option_kind: None,
            direction: run.direction,
            // Beyond --max-ttl the far end has no TTL to name.
            hop: hop_ref(path.placed(hop)),
            after_hop: hop_ref(path.placed(after)),
            before,
            after: Shown::Dropped,
            impact: drop_impact_at(spec.drop_kind, path.rtt),
            test: spec.name,
        };
        v.findings.push((None, finding));
    }

    /// Changes seen: each a finding at the first observer that saw it.
    fn modified(
        &self,
        spec: &TestSpec,
        run: &TestRun,
        ev: &QuoteEvidence,
        located: &[Located],
        v: &mut Verdict,
    ) {
        let path = &self.p.path;
        v.outcome = Outcome::Modified;
        v.detail.push(Detail::QuotedBy(Quoted {
            unchanged: false,
            full: ev.full,
            hops: self.hops(),
            partial: ev.partial.len(),
        }));
        for l in located {
            let at = match (l.hop, path.placed(l.hop)) {
                (_, Some(h)) => Place::Hop(h.0),
                (Some(_), None) => Place::FarEndPast(self.p.max_ttl),
                (None, _) => Place::Unknown,
            };
            v.detail.push(Detail::Changed {
                field: l.change.field,
                before: l.change.before.clone(),
                after: l.change.after.clone(),
                at,
            });
            // A NAT translates the routers' quotes back (the ICMP error is
            // related to the connection): a translation seen only at the
            // far end cannot be placed on the path.
            let nat_at_end = l.change.kind == Kind::Nat
                && run
                    .at_end
                    .as_ref()
                    .is_some_and(|o| Some((o.ttl, o.address)) == l.hop);
            if nat_at_end && self.nat_hint.is_none() {
                v.detail.push(Detail::NatNotLocated);
            }
            let (hop, after_hop) = match (nat_at_end, self.nat_hint) {
                (false, _) => (
                    hop_ref(path.placed(l.hop)),
                    hop_ref(path.placed(l.after_hop)),
                ),
                (true, Some((h, a))) => (Some(h), a),
                (true, None) => (None, None),
            };
            let finding = Finding {
                kind: l.change.kind,
                option_kind: l.change.option_kind(),
                direction: run.direction,
                hop,
                after_hop,
                before: Shown::Field(l.change.before.clone()),
                after: Shown::Field(l.change.after.clone()),
                impact: impact(&l.change, path.rtt),
                test: spec.name,
            };
            v.findings.push((Some(l.change.field), finding));
        }
    }

    /// Unchanged as far as the observers saw: the test's fields are known
    /// up to the last hop that quoted them (a partial quote past it says
    /// nothing about them), and at the far end with the reflector.
    fn unchanged(&self, spec: &TestSpec, run: &TestRun, ev: &QuoteEvidence, v: &mut Verdict) {
        let needs = spec.needs();
        v.outcome = if run.at_end.is_none() && !ev.covers_last(needs) {
            Outcome::Unknown
        } else {
            Outcome::Unchanged
        };
        let quoted = Quoted {
            unchanged: true,
            full: ev.full,
            hops: self.hops(),
            partial: ev.partial.len(),
        };
        let reverse = run.direction == Direction::ServerToClient;
        v.detail.push(match (&run.at_end, ev.last_covering(needs)) {
            (Some(_), _) if reverse => Detail::ReceivedUnchanged(quoted),
            (Some(_), _) => Detail::CapturedUnchanged(quoted),
            (None, Some(l)) if self.reflector && run.answer.is_some() => {
                Detail::NotCaptured(quoted, l)
            }
            (None, Some(l)) => Detail::NotVisiblePast(quoted, l),
            (None, None) if run.quotes.is_empty() => Detail::NoQuoteNotVisible,
            (None, None) => Detail::NoQuoteOfWhat(quoted),
        });
    }
}
