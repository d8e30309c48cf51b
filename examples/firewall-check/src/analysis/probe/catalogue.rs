//! The tests, in the order they run and are reported: each a [`TestSpec`]
//! (its name, what it checks, the packet it sends, the family of tests it
//! belongs to, [`Unit`]) made by the module of its family under
//! [`super::tests`], which also runs it and holds its own judgments.
//!
//! | family ([`Unit`]) | tests | module |
//! |---|---|---|
//! | the path | `ttl` | [`super::tests::path`] |
//! | one SYN | `mss` ... `accecn_setup` | [`super::tests::syn`] |
//! | Fast Open with data | `fastopen_data` | [`super::tests::fastopen_data`] |
//! | marked data | `ect0_data`, `ce_data` | [`super::tests::data_marks`] |
//! | DSCP map | `dscp_all` | [`super::tests::dscp_all`] |
//! | out of window | `out_of_window` | [`super::tests::out_of_window`] |
//! | the server's SYN-ACK and its twins (reflector) | `synack`, `synack_*` | [`super::tests::synack`] |
//! | server-side data (reflector) | `reverse_ect0_data`, `reverse_ce_data`, `reverse_out_of_window` | [`super::tests::reverse_data`] |
//! | server-to-client DSCP map (reflector) | `reverse_dscp_all` | [`super::tests::reverse_dscp_all`] |

use dscp::DsField;
use tcp_options::Flags;

use super::diff::Coverage;
use super::tests::{
    data_marks, dscp_all, fastopen_data, out_of_window, path, reverse_data, reverse_dscp_all, syn,
    synack,
};
use crate::conn::Direction;
use crate::finding::Kind;

/// The family a test belongs to: how it runs and what it needs judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `ttl`: the path walk.
    Path,
    /// A SYN with one option, mark or ECN setup.
    Syn,
    /// `fastopen_data`.
    FastOpenData,
    /// `ect0_data`, `ce_data`.
    DataMark,
    /// `dscp_all`.
    DscpAll,
    /// `out_of_window`.
    OutOfWindow,
    /// `synack` and the crafted twins of the SYN tests.
    SynAck,
    /// `reverse_ect0_data`, `reverse_ce_data`, `reverse_out_of_window`.
    ReverseData,
    /// `reverse_dscp_all`.
    ReverseDscpAll,
}

/// The packet a test's copies carry (a SYN, or the reflector's crafted
/// SYN-ACK or data byte): its DS field, flags besides SYN (or SYN+ACK),
/// option block, window field and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marks {
    /// The DS field.
    pub ds: DsField,
    /// Extra flags.
    pub flags: Flags,
    /// The option block.
    pub options: Vec<u8>,
    /// The window field.
    pub window: u16,
    /// Data.
    pub payload: Vec<u8>,
}

impl Marks {
    /// No mark, no option, no data, window 64240 (Linux's first window).
    pub fn plain() -> Marks {
        Marks {
            ds: DsField::new(0),
            flags: Flags::empty(),
            options: Vec::new(),
            window: 64240,
            payload: Vec::new(),
        }
    }
}

/// One test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestSpec {
    /// Name (`--tests`, JSON `tests[].name`).
    pub name: &'static str,
    /// What it checks, in words.
    pub what: &'static str,
    /// Its family.
    pub unit: Unit,
    /// Which way its probe travels.
    pub direction: Direction,
    /// What the probe carries.
    pub marks: Marks,
    /// The finding kind when the probe never arrives.
    pub drop_kind: Kind,
    /// The name of its server-to-client twin (with the reflector).
    pub twin: Option<&'static str>,
}

impl TestSpec {
    /// How much of the probe an observer must have seen to show what the
    /// test checks: its option block and data for the tests that carry
    /// them, the fixed header for the ECN-setup flags, the IP header and
    /// the first 8 TCP bytes (what an RFC 792 quote holds) for the marks
    /// and the arrival tests.
    pub fn needs(&self) -> Coverage {
        let ecn_flags = Flags::AE | Flags::CWR | Flags::ECE;
        match self.unit {
            Unit::Path
            | Unit::DataMark
            | Unit::ReverseData
            | Unit::OutOfWindow
            | Unit::DscpAll
            | Unit::ReverseDscpAll => Coverage::Partial,
            // The server's own SYN-ACK: its options.
            Unit::SynAck if self.name == synack::OWN => Coverage::Full,
            Unit::FastOpenData => Coverage::Full,
            _ if !self.marks.options.is_empty() || !self.marks.payload.is_empty() => Coverage::Full,
            _ if self.marks.flags.intersects(ecn_flags) => Coverage::FixedHeader,
            _ => Coverage::Partial,
        }
    }
}

/// The forward tests, in the order they run (`ttl` first: it finds the path).
pub fn catalogue() -> Vec<TestSpec> {
    let syn = syn::specs();
    // Fast Open with data follows the cookie request.
    let (before, after) = syn.split_at(
        syn.iter()
            .position(|t| t.name == "fastopen")
            .map_or(syn.len(), |i| i + 1),
    );
    let mut v = vec![path::spec()];
    v.extend_from_slice(before);
    v.push(fastopen_data::spec());
    v.extend_from_slice(after);
    v.extend(data_marks::specs());
    v.push(dscp_all::spec());
    v.push(out_of_window::spec());
    v
}

/// The server-to-client tests (with the reflector): the server's own
/// SYN-ACK, then each selected forward test's twin, in the forward order.
pub fn reverse_catalogue(forward: &[TestSpec]) -> Vec<TestSpec> {
    let mut v = vec![synack::own()];
    for t in forward {
        let twin = match t.unit {
            Unit::Path => None,
            Unit::Syn | Unit::FastOpenData => synack::twin(t),
            Unit::DataMark | Unit::OutOfWindow => reverse_data::twin(t),
            Unit::DscpAll => Some(reverse_dscp_all::spec()),
            Unit::SynAck | Unit::ReverseData | Unit::ReverseDscpAll => None,
        };
        v.extend(twin);
    }
    v
}

/// The tests `--tests LIST` selects (all without a list): `ttl` first (it
/// finds the path), then those listed, in the list's order, each once;
/// `Err` names the first unknown one.
pub fn select(
    all: &[TestSpec],
    list: Option<&str>,
) -> Result<Vec<TestSpec>, super::error::UsageError> {
    use super::error::UsageError;
    let Some(list) = list else {
        return Ok(all.to_vec());
    };
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err(UsageError::NoTestNamed(list.to_string()));
    }
    let mut v: Vec<TestSpec> = all
        .iter()
        .filter(|t| t.unit == Unit::Path)
        .cloned()
        .collect();
    for name in names {
        let t = all
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| UsageError::UnknownTest(name.to_string()))?;
        if !v.iter().any(|x| x.name == t.name) {
            v.push(t.clone());
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_runs_in_the_documented_order() {
        let names: Vec<&str> = catalogue().iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "ttl",
                "mss",
                "wscale",
                "sackperm",
                "timestamps",
                "linux_syn",
                "exp253",
                "exp254",
                "unassigned",
                "accecn0",
                "accecn1",
                "fastopen",
                "fastopen_data",
                "mptcp",
                "dscp_af11",
                "dscp_cs1",
                "dscp_ef",
                "ect0",
                "ecn_setup",
                "accecn_setup",
                "ect0_data",
                "ce_data",
                "dscp_all",
                "out_of_window"
            ]
        );
    }

    #[test]
    fn catalogue_names_are_unique_and_reverse_tests_mirror_them() {
        let all = catalogue();
        let rev = reverse_catalogue(&all);
        let mut names: Vec<&str> = all.iter().chain(&rev).map(|t| t.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(rev[0].name, "synack");
        // Every forward test has its twin but the path, named by the spec.
        assert_eq!(rev.len(), all.len());
        for t in &all {
            match t.twin {
                Some(tw) => assert!(rev.iter().any(|r| r.name == tw), "{}", t.name),
                None => assert_eq!(t.name, "ttl"),
            }
        }
        for t in all.iter().chain(&rev) {
            assert!(
                t.marks.options.len().is_multiple_of(4) && t.marks.options.len() <= 40,
                "{}",
                t.name
            );
            let d = if rev.iter().any(|r| r.name == t.name) {
                Direction::ServerToClient
            } else {
                Direction::ClientToServer
            };
            assert_eq!(t.direction, d, "{}", t.name);
        }
    }

    #[test]
    fn tests_select_names_the_unknown_one() {
        let all = catalogue();
        let s = select(&all, Some("wscale, mss,wscale")).unwrap();
        let names: Vec<&str> = s.iter().map(|t| t.name).collect();
        assert_eq!(names, ["ttl", "wscale", "mss"]);
        assert!(select(&all, Some(" , ")).is_err());
        let e = select(&all, Some("mss,nope")).unwrap_err().to_string();
        assert!(e.contains("unknown test \"nope\""), "{e}");
        assert_eq!(select(&all, None).unwrap().len(), all.len());
    }
}
