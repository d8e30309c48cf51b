//! `reverse_dscp_all` (with the reflector): the server-to-client remarking
//! map.
//!
//! For each of the 64 DSCP values a crafted SYN-ACK marked with it (one
//! handshake each, as the twins of [`super::synack`], all together), first
//! its full copy only: what arrives here is the map. Then each value that
//! arrived changed is sent once more with the TTL-limited copies too, whose
//! quotes (at the reflector) locate the change, while the packets stay
//! within [`LOCATE_BUDGET`]; a value left over is reported unlocated.

use dscp::{DsField, Dscp, Ecn};

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::diff::{locate, Field};
use super::super::error::ProbeError;
use super::super::prober::Prober;
use super::super::reflect::Control;
use super::super::report::{hop_ref, DscpMapEntry};
use super::synack::run_jobs;
use super::TestRun;
use crate::conn::Direction;
use crate::finding::Kind;

/// Crafted packets the map may take from the reflector's session budget
/// (1024) to locate its changed values: the other reverse tests need the
/// rest.
pub const LOCATE_BUDGET: usize = 512;

/// The test.
pub fn spec() -> TestSpec {
    TestSpec {
        name: "reverse_dscp_all",
        what: "64 SYNs, one per DSCP value: the path's remarking map",
        unit: Unit::ReverseDscpAll,
        direction: Direction::ServerToClient,
        marks: Marks::plain(),
        drop_kind: Kind::ProbeDropped,
        twin: None,
    }
}

/// Runs the test; fills the prober's reverse map; returns the run of the
/// first value that changed (or of the last value).
pub fn run(
    p: &mut Prober<'_>,
    c: &mut Control,
    index: u8,
    spec: &TestSpec,
) -> Result<TestRun, ProbeError> {
    let marked: Vec<TestSpec> = Dscp::all()
        .map(|d| TestSpec {
            marks: Marks {
                ds: DsField::from_parts(d, Ecn::NotEct),
                ..spec.marks.clone()
            },
            ..spec.clone()
        })
        .collect();
    let all: Vec<(u8, &TestSpec)> = marked.iter().map(|s| (index, s)).collect();
    let mut runs = run_jobs(p, c, &all, true)?;
    for (d, run) in (0u8..).zip(&runs) {
        p.reverse_dscp_map.push(DscpMapEntry {
            sent: d,
            seen: run.at_end.as_ref().map(|o| o.seen.ds.dscp().value()),
            hop: None,
            after_hop: None,
        });
    }
    // The changed values again with TTL-limited copies, within the budget.
    let per_value = usize::from(p.path.len.unwrap_or(1));
    let changed: Vec<u8> = p
        .reverse_dscp_map
        .iter()
        .filter(|e| e.seen.is_some_and(|x| x != e.sent))
        .map(|e| e.sent)
        .collect();
    let fits = (LOCATE_BUDGET / per_value.max(1)).min(changed.len());
    p.reverse_dscp_unlocated += changed.len() - fits;
    let again: Vec<(u8, &TestSpec)> = changed[..fits]
        .iter()
        .map(|&d| (index, &marked[usize::from(d)]))
        .collect();
    let located = run_jobs(p, c, &again, false)?;
    let mut first_changed = None;
    for (&d, run) in changed.iter().zip(located) {
        let change = locate(&run.observations())
            .into_iter()
            .find(|l| l.change.field == Field::Dscp);
        let e = &mut p.reverse_dscp_map[usize::from(d)];
        e.hop = change.as_ref().and_then(|l| hop_ref(l.hop));
        e.after_hop = change.as_ref().and_then(|l| hop_ref(l.after_hop));
        first_changed.get_or_insert(run);
    }
    // No value changed: the last value's run that arrived (or the last).
    let arrived = runs.iter().rposition(|r| r.answer.is_some());
    let last = arrived.map(|i| runs.swap_remove(i)).or_else(|| runs.pop());
    first_changed
        .or(last)
        .ok_or(ProbeError::Internal("no reverse DSCP probe ran"))
}
