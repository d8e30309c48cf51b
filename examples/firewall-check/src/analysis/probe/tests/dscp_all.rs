//! `dscp_all`: 64 SYNs, one per DSCP value, in the SYN tests' sweep: the
//! path's remarking map.
//!
//! Each value's SYN is located like a SYN test; the map entry is the DSCP
//! the last observer saw (the reflector at the target, else the last
//! router that quoted it) and where it changed. The test's run is that of
//! the first value that changed (or of the last value), its detail the map
//! in runs of values with one outcome ([`remarking_map`]).

use dscp::{DsField, Dscp, Ecn};

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::diff::{locate, Field};
use super::super::error::ProbeError;
use super::super::evaluate::{Detail, Outcome};
use super::super::prober::{Flight, Prober};
use super::super::report::{hop_ref, DscpMapEntry};
use super::super::wire::Segment;
use super::TestRun;
use crate::conn::Direction;
use crate::finding::Kind;

/// The test.
pub fn spec() -> TestSpec {
    TestSpec {
        name: "dscp_all",
        what: "64 SYNs, one per DSCP value: the path's remarking map",
        unit: Unit::DscpAll,
        direction: Direction::ClientToServer,
        marks: Marks::plain(),
        drop_kind: Kind::ProbeDropped,
        twin: Some("reverse_dscp_all"),
    }
}

/// The 64 flights, DSCP 0 to 63, Not-ECT.
pub fn flights(p: &mut Prober<'_>, index: u8) -> Result<Vec<Flight>, ProbeError> {
    Dscp::all()
        .map(|d| {
            let seg = Segment {
                window: 64240,
                ..Segment::new(0, 0)
            };
            Flight::new(p, index, DsField::from_parts(d, Ecn::NotEct), seg)
        })
        .collect()
}

/// The map entry of one value's run, and whether it changed.
pub fn entry(p: &Prober<'_>, sent: u8, run: &TestRun) -> (DscpMapEntry, bool) {
    let obs = run.observations();
    let change = locate(&obs)
        .into_iter()
        .find(|l| l.change.field == Field::Dscp);
    let e = DscpMapEntry {
        sent,
        seen: obs.last().map(|o| o.seen.ds.dscp().value()),
        hop: change.as_ref().and_then(|l| hop_ref(p.path.placed(l.hop))),
        after_hop: change
            .as_ref()
            .and_then(|l| hop_ref(p.path.placed(l.after_hop))),
    };
    (e, change.is_some())
}

/// Fills the prober's map from the 64 runs (by value); returns the run of
/// the first value that changed, or of the last.
pub fn finish(p: &mut Prober<'_>, runs: Vec<TestRun>) -> Result<TestRun, ProbeError> {
    let mut first_changed = None;
    let mut last = None;
    for (d, run) in (0u8..).zip(runs) {
        let (e, changed) = entry(p, d, &run);
        p.dscp_map.push(e);
        if changed && first_changed.is_none() {
            first_changed = Some(run);
        } else {
            last = Some(run);
        }
    }
    first_changed
        .or(last)
        .ok_or(ProbeError::Internal("no DSCP probe ran"))
}

/// The changed entries of a DSCP map, runs of consecutive values with the
/// same outcome joined: (first value, last value, seen, hop TTL).
pub fn remarking_map(map: &[DscpMapEntry]) -> Vec<(u8, u8, u8, Option<u8>)> {
    let mut out: Vec<(u8, u8, u8, Option<u8>)> = Vec::new();
    for e in map.iter().filter(|e| e.seen.is_some_and(|x| x != e.sent)) {
        let (seen, hop) = (e.seen.unwrap_or(0), e.hop.map(|h| h.ttl));
        match out.last_mut() {
            Some(r) if r.1 + 1 == e.sent && r.2 == seen && r.3 == hop => r.1 = e.sent,
            _ => out.push((e.sent, e.sent, seen, hop)),
        }
    }
    out
}

/// A DSCP map's test (`dscp_all`, `reverse_dscp_all`): the map replaces
/// the one value's words (a NAT's translation back stays said); modified
/// when a value changed.
pub fn judge(
    map: &[DscpMapEntry],
    unlocated: usize,
    outcome: &mut Outcome,
    detail: &mut Vec<Detail>,
) {
    let changed = remarking_map(map);
    let unseen = map.iter().filter(|e| e.seen.is_none()).count();
    let nat: Vec<Detail> = detail
        .iter()
        .filter(|d| matches!(d, Detail::TranslatedBack { .. }))
        .cloned()
        .collect();
    *outcome = if changed.is_empty() {
        Outcome::Unchanged
    } else {
        Outcome::Modified
    };
    *detail = vec![if changed.is_empty() {
        Detail::MapUnchanged(map.len() - unseen)
    } else {
        Detail::Remarking(changed)
    }];
    if unseen > 0 {
        detail.push(Detail::MapUnseen(unseen));
    }
    detail.extend(nat);
    if unlocated > 0 {
        detail.push(Detail::MapUnlocated(unlocated));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::report::HopRef;
    use std::net::{IpAddr, Ipv4Addr};

    fn entry(sent: u8, seen: u8, ttl: u8) -> DscpMapEntry {
        let h = |t| HopRef {
            ttl: t,
            address: IpAddr::V4(Ipv4Addr::new(198, 18, 40 + t, 1)),
        };
        DscpMapEntry {
            sent,
            seen: Some(seen),
            hop: (sent != seen).then(|| h(ttl)),
            after_hop: (sent != seen).then(|| h(ttl - 1)),
        }
    }

    #[test]
    fn remarking_map_joins_runs_of_one_outcome() {
        let mut map: Vec<_> = (0..64).map(|d| entry(d, 0, 2)).collect();
        assert_eq!(remarking_map(&map), [(1, 63, 0, Some(2))]);
        map = (0..64).map(|d| entry(d, d, 2)).collect();
        map[10] = entry(10, 12, 3);
        map[46] = entry(46, 0, 3);
        map[63] = entry(63, 8, 3);
        assert_eq!(
            remarking_map(&map),
            [
                (10, 10, 12, Some(3)),
                (46, 46, 0, Some(3)),
                (63, 63, 8, Some(3))
            ]
        );
        assert!(remarking_map(&[]).is_empty());
    }
}
