//! The SYN tests: a SYN carrying one option, one DSCP or ECN mark, or one
//! ECN setup, each sent with TTL 1 to the hop before the target and once
//! in full ([`super::super::prober::Prober::sweep`], all of them and the
//! 64 SYNs of [`super::dscp_all`] at once).
//!
//! Judged by the routers' quotes (and with the reflector the capture at
//! the target): a field that differs is a finding located between the
//! last observer that saw it as sent and the first that saw it changed; no
//! answer from the target is a drop ([`TestSpec::drop_kind`]:
//! `ecn_setup_dropped` for the ECN setups, `probe_dropped` otherwise). The
//! options are written by tcp-options' builder in Linux's layout; the
//! experimental and unassigned kinds as [`OptionsBuilder::other`] records.

use dscp::DsField;
use tcp_options::{AccEcnCounters, Flags, MpCapable, OptionsBuilder};

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::error::ProbeError;
use super::super::prober::{Flight, Prober};
use super::super::reflect::Control;
use super::super::wire::{options, Segment};
use super::{dscp_all, TestRun};
use crate::conn::Direction;
use crate::finding::Kind;

/// One row of the table.
struct SynTest {
    name: &'static str,
    what: &'static str,
    /// The DS field (DSCP << 2 | ECN).
    ds: u8,
    /// Flags besides SYN.
    flags: Flags,
    options: OptionsBuilder<'static>,
    drop_kind: Kind,
    twin: &'static str,
}

const fn t(
    name: &'static str,
    what: &'static str,
    ds: u8,
    flags: Flags,
    options: OptionsBuilder<'static>,
    twin: &'static str,
) -> SynTest {
    SynTest {
        name,
        what,
        ds,
        flags,
        options,
        drop_kind: if flags.is_empty() {
            Kind::ProbeDropped
        } else {
            Kind::EcnSetupDropped
        },
        twin,
    }
}

const NONE: Flags = Flags::empty();
const NO_OPTIONS: OptionsBuilder<'static> = OptionsBuilder::new();

/// The SYN tests, in the order they are reported.
const SYN_TESTS: [SynTest; 18] = [
    t(
        "mss",
        "a SYN with MSS 1460",
        0,
        NONE,
        NO_OPTIONS.mss(1460),
        "synack_mss",
    ),
    t(
        "wscale",
        "a SYN with window scale 7",
        0,
        NONE,
        NO_OPTIONS.window_scale(7),
        "synack_wscale",
    ),
    t(
        "sackperm",
        "a SYN with SACK-permitted",
        0,
        NONE,
        NO_OPTIONS.sack_permitted(),
        "synack_sackperm",
    ),
    t(
        "timestamps",
        "a SYN with timestamps",
        0,
        NONE,
        NO_OPTIONS.timestamps(0x1234_5678, 0),
        "synack_timestamps",
    ),
    t(
        "linux_syn",
        "a SYN as Linux sends it (MSS, SACK-permitted, timestamps, window scale)",
        0,
        NONE,
        NO_OPTIONS
            .mss(1460)
            .sack_permitted()
            .timestamps(0x1234_5678, 0)
            .window_scale(7),
        "synack_linux",
    ),
    t(
        "exp253",
        "a SYN with experimental option 253 carrying an RFC 6994 ExID",
        0,
        NONE,
        NO_OPTIONS.other(253, &[0x12, 0x34, 0xab, 0xcd]),
        "synack_exp253",
    ),
    t(
        "exp254",
        "a SYN with experimental option 254 carrying an RFC 6994 ExID",
        0,
        NONE,
        NO_OPTIONS.other(254, &[0x4e, 0x4f]),
        "synack_exp254",
    ),
    t(
        "unassigned",
        "a SYN with option kind 99 (unassigned)",
        0,
        NONE,
        NO_OPTIONS.other(99, &[0x5a, 0x5a]),
        "synack_unassigned",
    ),
    t(
        "accecn0",
        "a SYN with an AccECN option, kind 172 (two 24-bit counters, RFC 9768)",
        0,
        NONE,
        NO_OPTIONS.accecn(AccEcnCounters {
            order1: false,
            ee0b: 1,
            eceb: 2,
            ee1b: 0,
            fields: 2,
        }),
        "synack_accecn0",
    ),
    t(
        "accecn1",
        "a SYN with an AccECN option, kind 174 (two 24-bit counters, RFC 9768)",
        0,
        NONE,
        NO_OPTIONS.accecn(AccEcnCounters {
            order1: true,
            ee0b: 0,
            eceb: 4,
            ee1b: 3,
            fields: 2,
        }),
        "synack_accecn1",
    ),
    t(
        "fastopen",
        "a SYN with a Fast Open cookie request (kind 34, RFC 7413)",
        0,
        NONE,
        NO_OPTIONS.fast_open(&[]),
        "synack_fastopen",
    ),
    t(
        "mptcp",
        "a SYN with MPTCP MP_CAPABLE version 1 (kind 30, RFC 8684)",
        0,
        NONE,
        NO_OPTIONS.mp_capable(MpCapable { key: None }),
        "synack_mptcp",
    ),
    t(
        "dscp_af11",
        "a SYN marked AF11 (DSCP 10)",
        10 << 2,
        NONE,
        NO_OPTIONS,
        "synack_dscp_af11",
    ),
    t(
        "dscp_cs1",
        "a SYN marked CS1 (DSCP 8, scavenger)",
        8 << 2,
        NONE,
        NO_OPTIONS,
        "synack_dscp_cs1",
    ),
    t(
        "dscp_ef",
        "a SYN marked EF (DSCP 46)",
        46 << 2,
        NONE,
        NO_OPTIONS,
        "synack_dscp_ef",
    ),
    t(
        "ect0",
        "a SYN marked ECT(0) in the IP header",
        0b10,
        NONE,
        NO_OPTIONS,
        "synack_ect0",
    ),
    t(
        "ecn_setup",
        "an ECN-setup SYN (ECE+CWR, RFC 3168)",
        0,
        Flags::ECE.union(Flags::CWR),
        NO_OPTIONS,
        "synack_ecn_setup",
    ),
    t(
        "accecn_setup",
        "an AccECN-setup SYN (AE+CWR+ECE, RFC 9768)",
        0,
        Flags::AE.union(Flags::ECE).union(Flags::CWR),
        NO_OPTIONS,
        "synack_accecn_setup",
    ),
];

/// The SYN tests' specs.
pub fn specs() -> Vec<TestSpec> {
    SYN_TESTS
        .iter()
        .map(|s| TestSpec {
            name: s.name,
            what: s.what,
            unit: Unit::Syn,
            direction: Direction::ClientToServer,
            marks: Marks {
                ds: DsField::new(s.ds),
                flags: s.flags,
                // The table's blocks are within 40 bytes (a unit test
                // builds each).
                options: options(s.options).unwrap_or_default(),
                ..Marks::plain()
            },
            drop_kind: s.drop_kind,
            twin: Some(s.twin),
        })
        .collect()
}

/// A SYN test's flight: its SYN with the spec's marks.
pub fn flight(p: &mut Prober<'_>, index: u8, spec: &TestSpec) -> Result<Flight, ProbeError> {
    let m = &spec.marks;
    let seg = Segment {
        flags: m.flags,
        window: m.window,
        options: m.options.clone(),
        payload: m.payload.clone(),
        ..Segment::new(0, 0)
    };
    Flight::new(p, index, m.ds, seg)
}

/// Runs the SYN tests and `dscp_all` among `selected` in one sweep; with
/// the reflector, adds its capture at the target to each; fills `runs`
/// (by the tests' positions) and the DSCP map.
pub fn run_sweep(
    p: &mut Prober<'_>,
    selected: &[TestSpec],
    runs: &mut [Option<TestRun>],
    control: Option<&mut Control>,
) -> Result<(), ProbeError> {
    let mut flights = Vec::new();
    let mut owners = Vec::new();
    for (i, spec) in selected.iter().enumerate() {
        match spec.unit {
            Unit::Syn => {
                let tag = p.tag(i);
                flights.push(flight(p, tag, spec)?);
                owners.push(i);
            }
            Unit::DscpAll => {
                let tag = p.tag(i);
                for f in dscp_all::flights(p, tag)? {
                    flights.push(f);
                    owners.push(i);
                }
            }
            _ => {}
        }
    }
    if flights.is_empty() {
        return Ok(());
    }
    p.sweep(&mut flights)?;
    if let Some(c) = control {
        // The path walk's copy that reached the target too.
        let walk = runs
            .iter_mut()
            .zip(selected)
            .filter(|(_, s)| s.unit == Unit::Path)
            .filter_map(|(r, _)| r.as_mut());
        let all: Vec<&mut TestRun> = walk.chain(flights.iter_mut().map(|f| &mut f.run)).collect();
        p.capture_forward(c, all)?;
    }
    let mut map_runs = Vec::new();
    for (f, i) in flights.into_iter().zip(owners) {
        match selected[i].unit {
            Unit::DscpAll => map_runs.push((i, f.run)),
            _ => runs[i] = Some(f.run),
        }
    }
    if let Some(&(i, _)) = map_runs.first() {
        let map: Vec<TestRun> = map_runs.into_iter().map(|(_, r)| r).collect();
        runs[i] = Some(dscp_all::finish(p, map)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks the probe sent before the builder wrote them, and every
    /// table row's block builds.
    #[test]
    fn the_table_s_blocks_are_the_probe_s_bytes() {
        for row in &SYN_TESTS {
            assert!(row.options.build().is_ok(), "{}", row.name);
        }
        let all = specs();
        let block = |name: &str| {
            all.iter()
                .find(|t| t.name == name)
                .unwrap()
                .marks
                .options
                .clone()
        };
        assert_eq!(block("exp253"), [253, 6, 0x12, 0x34, 0xab, 0xcd, 1, 1]);
        assert_eq!(block("exp254"), [254, 4, 0x4e, 0x4f]);
        assert_eq!(block("unassigned"), [99, 4, 0x5a, 0x5a]);
        assert_eq!(block("mptcp"), [30, 4, 0x01, 0x01]);
    }

    #[test]
    fn accecn_options_parse_as_rfc_9768_options() {
        // RFC 9768 section 3.2.3: kind 172 carries EE0B, ECEB (, EE1B);
        // kind 174 EE1B, ECEB (, EE0B); each field 24 bits.
        let all = specs();
        let opt = |name: &str| {
            let t = all.iter().find(|t| t.name == name).unwrap();
            let mut it = tcp_options::StrictOptions::new(&t.marks.options);
            let o = it.next().unwrap().unwrap().option;
            assert!(it.next().is_none(), "{name}: one option");
            match o {
                tcp_options::TcpOption::AccEcn(a) => {
                    (a.kind(), a.field_count(), a.ee0b(), a.eceb(), a.ee1b())
                }
                other => panic!("{name}: {other:?}"),
            }
        };
        assert_eq!(opt("accecn0"), (172, 2, Some(1), Some(2), None));
        assert_eq!(opt("accecn1"), (174, 2, None, Some(4), Some(3)));
    }
}
