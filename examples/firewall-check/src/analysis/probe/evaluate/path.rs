//! What the path as a whole shows: a NAT (routers answering from the
//! target's address), a SYN proxy (a SYN-ACK from fewer hops away than the
//! target).

use std::net::SocketAddr;

use super::super::catalogue::TestSpec;
use super::super::diff::{FieldValue, NatEnds};
use super::super::prober::Prober;
use super::super::report::{HopRef, ImpactNote, Report, Shown};
use super::super::tests::TestRun;
use super::verdict::Context;
use crate::conn::Direction;
use crate::finding::Kind;

/// Routers short of the target that answer from the target's own address
/// (a NAT rewrote their ICMP errors: it translates the error and its quote
/// back, so the quotes themselves show nothing): the first of them and the
/// hop before it.
pub fn nat_hint(p: &Prober<'_>, target: SocketAddr) -> Option<(HopRef, Option<HopRef>)> {
    let hops = &p.path.hops;
    let i = hops
        .iter()
        .position(|(t, a)| *a == target.ip() && p.path.len.is_some_and(|l| *t < l))?;
    let hop = |(ttl, address): (u8, std::net::IpAddr)| HopRef { ttl, address };
    Some((hop(hops[i]), i.checked_sub(1).map(|j| hop(hops[j]))))
}

/// Without a finding of the translation from the reflector, the NAT the
/// routers' addresses show: the destination translated, to an end only the
/// reflector can show.
pub fn nat_finding(ctx: &Context<'_>, report: &mut Report) {
    let Some((h, a)) = ctx.nat_hint else { return };
    if report.findings.iter().any(|f| f.kind == Kind::Nat) {
        return;
    }
    let target = ctx.target;
    let from: Vec<u8> = ctx
        .p
        .path
        .hops
        .iter()
        .filter(|(_, x)| *x == target.ip())
        .map(|(t, _)| *t)
        .collect();
    report.findings.push(super::super::report::Finding {
        kind: Kind::Nat,
        option_kind: None,
        direction: Direction::ClientToServer,
        hop: Some(h),
        after_hop: a,
        before: Shown::Field(FieldValue::Ends(NatEnds {
            src: None,
            dst: Some((target.ip(), Some(target.port()))),
        })),
        after: Shown::Unknown,
        impact: ImpactNote::Nat {
            hops: from,
            target: target.ip(),
        }
        .impact(),
        test: "ttl",
    });
}

/// A SYN-ACK whose TTL says it came from fewer hops than the target is
/// away was sent by a box on the path (a SYN proxy): inferred from the TTL
/// (assumes the answer came back over as many hops, and an initial TTL of
/// 64, 128 or 255), and, with a reflector, the SYN never reached the
/// target.
pub fn proxied_finding(
    p: &Prober<'_>,
    runs: &[(TestSpec, TestRun)],
    reflector: bool,
    report: &mut Report,
) {
    let (Some((_, first)), Some(l)) = (runs.first(), p.path.len) else {
        return;
    };
    let Some((_, ans)) = &first.answer else {
        return;
    };
    let init: u16 = match ans.ttl {
        0..=64 => 64,
        65..=128 => 128,
        _ => 255,
    };
    let from = init - u16::from(ans.ttl) + 1;
    let unseen = !reflector || first.at_end.is_none();
    if from >= u16::from(l) || !unseen {
        return;
    }
    let at = from as u8;
    let find = |t: u8| {
        p.path
            .hops
            .iter()
            .find(|(x, _)| *x == t)
            .map(|&(ttl, address)| HopRef { ttl, address })
    };
    report.findings.insert(
        0,
        super::super::report::Finding {
            kind: Kind::HandshakeProxied,
            option_kind: None,
            direction: Direction::ClientToServer,
            hop: find(at),
            after_hop: find(at.saturating_sub(1)),
            before: Shown::TargetTtl(l),
            after: Shown::AnsweredFrom {
                synack_ttl: ans.ttl,
                answered_from_ttl: at,
            },
            impact: ImpactNote::Proxied.impact(),
            test: "ttl",
        },
    );
}
