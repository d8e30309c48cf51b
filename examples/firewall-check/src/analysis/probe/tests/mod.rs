//! The probe's tests, one module per family: each holds its tests' specs
//! (what they send), how they run, and the judgments that are theirs
//! alone; the judgments common to all (dropped, modified, unchanged, where)
//! are in [`super::evaluate`].
//!
//! A run ([`run_all`]) goes in phases, each test's packets from source
//! ports of its own, so that tests whose packets can travel together do:
//!
//! 1. [`path`]: `ttl`, the walk that finds the path, its length and its
//!    routers (each copy on its own port, so the target's answer says
//!    which TTL reached it);
//! 2. [`syn`] and [`dscp_all`]: every SYN test and the 64 SYNs of the DSCP
//!    map in one sweep ([`super::prober::Prober::sweep`]): all copies sent,
//!    paced, then what comes back sorted by port, one wait for all;
//! 3. [`fastopen_data`], [`data_marks`], [`out_of_window`]: each a
//!    connection of its own, in turn;
//! 4. with the reflector, the far end's capture of each forward probe,
//!    then [`synack`] (the server's SYN-ACK and the crafted twins, their
//!    handshakes opened together), [`reverse_data`] and
//!    [`reverse_dscp_all`].

pub mod data_marks;
pub mod dscp_all;
pub mod fastopen_data;
pub mod out_of_window;
pub mod path;
pub mod reverse_data;
pub mod reverse_dscp_all;
pub mod syn;
pub mod synack;

use std::net::IpAddr;

use super::catalogue::{TestSpec, Unit};
use super::diff::Observation;
use super::error::ProbeError;
use super::prober::{Arrival, Prober};
use super::reflect::Control;
use super::wire::{Answer, IcmpError, IcmpKind, Seen};
use crate::conn::Direction;

/// What one test's copies brought back.
#[derive(Debug, Clone)]
pub struct TestRun {
    /// The probe as sent (the copy that reaches the far end).
    pub sent: Seen,
    /// The copies that differ from `sent` by more than TTL and
    /// identification, by TTL (the path walk's, each on its own port).
    pub copies: Vec<(u8, Seen)>,
    /// Router quotes by TTL.
    pub quotes: Vec<(u8, IcmpError)>,
    /// The far end's answer (SYN-ACK, RST, ACK of data) and the TTL of
    /// the copy that drew it.
    pub answer: Option<(u8, Seen)>,
    /// ICMP destination unreachable (e.g. administratively prohibited).
    pub unreachable: Option<IcmpError>,
    /// Which way the probe travels.
    pub direction: Direction,
    /// The far end's view: the reflector's capture at the target (forward
    /// tests) or the prober's receipt (reverse tests).
    pub at_end: Option<FarEnd>,
    /// Why the test could not run as planned, or what it met on the way.
    pub notes: Vec<Note>,
    /// Out-of-window tests: what the handshake showed.
    pub oow: Option<out_of_window::OowEvidence>,
}

/// The far end's observation of a probe.
#[derive(Debug, Clone)]
pub struct FarEnd {
    /// Its TTL (the path's length).
    pub ttl: u8,
    /// Who saw it (the target, or the prober for reverse tests).
    pub address: IpAddr,
    /// What it saw.
    pub seen: Seen,
}

/// Whether a data probe's run is complete: the far end's answer, and a
/// quote from every short TTL whose router answers.
pub fn data_complete(p: &Prober<'_>, run: &TestRun) -> bool {
    run.answer.is_some()
        && p.path
            .short_ttls()
            .filter(|t| p.path.answers(*t))
            .all(|t| run.has_quote(t))
}

/// Reads `sport`'s arrivals until `until` or until the run is complete
/// ([`data_complete`]): the far end's segment that `acks` accepts becomes
/// the answer (from the full copy, at the path's length), and each
/// router's time-exceeded quote of the data segment at `seq` is kept by
/// the TTL its identification names.
pub fn collect_data_answers(
    p: &mut Prober<'_>,
    run: &mut TestRun,
    sport: u16,
    seq: u32,
    until: std::time::Instant,
    acks: impl Fn(&Seen) -> bool,
) {
    let len = p.path.len.unwrap_or(1);
    let mine = |a: &Arrival| a.port() == sport;
    loop {
        for a in p.io.take(mine) {
            match a.answer {
                Answer::Tcp(s) if acks(&s) => {
                    run.answer.get_or_insert((len, s));
                }
                Answer::Icmp(e) if e.kind == IcmpKind::TimeExceeded && e.quote.seq() == seq => {
                    run.add_quote(super::prober::ttl_in(e.quote.ident), e);
                }
                _ => {}
            }
        }
        if data_complete(p, run) || std::time::Instant::now() >= until {
            break;
        }
        p.io.wait(until, |inbox| inbox.iter().any(mine));
    }
}

impl TestRun {
    /// A run whose probe is `sent`, nothing seen yet.
    pub fn new(sent: Seen, direction: Direction) -> TestRun {
        TestRun {
            sent,
            copies: Vec::new(),
            quotes: Vec::new(),
            answer: None,
            unreachable: None,
            direction,
            at_end: None,
            notes: Vec::new(),
            oow: None,
        }
    }

    /// Whether hop `ttl` quoted it.
    pub fn has_quote(&self, ttl: u8) -> bool {
        self.quotes.iter().any(|(t, _)| *t == ttl)
    }

    /// Keeps `e` as hop `ttl`'s quote unless there is one.
    pub fn add_quote(&mut self, ttl: u8, e: IcmpError) {
        if ttl > 0 && !self.has_quote(ttl) {
            self.quotes.push((ttl, e));
            self.quotes.sort_by_key(|(t, _)| *t);
        }
    }

    /// The copy hop `ttl` saw, as sent.
    fn copy(&self, ttl: u8) -> &Seen {
        self.copies
            .iter()
            .find(|(t, _)| *t == ttl)
            .map_or(&self.sent, |(_, s)| s)
    }

    /// Every observer of the probe in path order: the routers' quotes by
    /// TTL, then the far end.
    pub fn observations(&self) -> Vec<Observation<'_>> {
        let mut obs: Vec<Observation<'_>> = self
            .quotes
            .iter()
            .map(|(ttl, e)| Observation {
                ttl: *ttl,
                address: e.from,
                seen: &e.quote,
                sent: self.copy(*ttl),
            })
            .collect();
        obs.extend(self.at_end.iter().map(|o| Observation {
            ttl: o.ttl,
            address: o.address,
            seen: &o.seen,
            sent: &self.sent,
        }));
        obs
    }
}

/// What a test met on the way, for its detail (the words are in
/// [`super::report`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// No path: the target never answered the path walk.
    NoPath,
    /// The target answers SYNs with RST: nothing listens on the port.
    PortClosed,
    /// A handshake got no SYN-ACK.
    NoSynAck,
    /// A reverse test's handshake got no SYN-ACK.
    NoSynAckToReflect,
    /// Fast Open's cookie request got no SYN-ACK.
    CookieRequestUnanswered,
    /// The SYN-ACK carried no Fast Open cookie.
    NoCookie,
    /// The out-of-window test's first byte was not acknowledged.
    InWindowByteUnacked,
    /// A flight inside the window was not acknowledged.
    FlightUnacked {
        /// Its bytes.
        bytes: u32,
    },
    /// The server's window never grew enough to test.
    WindowDidNotGrow {
        /// The scaled window, bytes.
        scaled: u32,
        /// Its field.
        field: u16,
        /// The shift.
        shift: u8,
        /// Where the shift came from.
        source: out_of_window::ShiftSource,
        /// Twice the unscaled window (and the slack), bytes.
        limit: u32,
        /// Bytes sent to grow it.
        sent: u32,
    },
    /// The server's SYN-ACK carried no window scale: nothing past the
    /// unscaled window is inside its window.
    ServerUnscaled,
    /// The reflector refused a request.
    Reflector(ReflectorRefusal),
    /// `synack_accecn_setup`: its AccECN-setup SYN got no SYN-ACK.
    AccEcnNoSynAck,
    /// `synack_accecn_setup`: the reflector did not capture its SYN.
    AccEcnNotCaptured,
    /// `synack_accecn_setup`: what the SYN arrived with, what the SYN-ACK
    /// answers.
    AccEcn {
        /// The SYN reached the server only after the prober's ACK (a SYN
        /// proxy).
        after_ack: bool,
        /// The answer.
        answer: synack::AccEcnAnswer,
    },
    /// `synack`: a SYN proxy keeps the server's own SYN-ACK.
    ProxyKeepsSynAck {
        /// The proxy's SYN-ACK's sequence number.
        proxy_seq: u32,
        /// The server's.
        server_seq: u32,
    },
    /// The copies went out after the prober completed a SYN proxy's
    /// handshake.
    SentAfterProxy,
}

/// A refusal of the reflector's, its words and what it means here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReflectorRefusal {
    /// The error as the prober states it.
    pub error: String,
    /// Its code.
    pub code: Option<super::error::Refusal>,
}

/// Runs the selected tests (forward, then with the reflector their
/// server-to-client twins); the runs in the order of the tests.
pub fn run_all(
    p: &mut Prober<'_>,
    selected: &[TestSpec],
    mut control: Option<&mut Control>,
) -> Result<Vec<(TestSpec, TestRun)>, ProbeError> {
    let mut runs: Vec<Option<TestRun>> = vec![None; selected.len()];
    for (i, spec) in selected
        .iter()
        .enumerate()
        .filter(|(_, s)| s.unit == Unit::Path)
    {
        runs[i] = Some(path::run(p, p.tag(i), spec)?);
    }
    p.progress.phase("path", 1);
    let before = runs.iter().flatten().count();
    syn::run_sweep(p, selected, &mut runs, control.as_deref_mut())?;
    let swept = runs.iter().flatten().count() - before;
    p.progress.phase("SYN tests", swept);
    for (i, spec) in selected.iter().enumerate() {
        let c = control.as_deref_mut();
        let tag = p.tag(i);
        let run = match spec.unit {
            Unit::FastOpenData => fastopen_data::run(p, tag, spec, c)?,
            Unit::DataMark => data_marks::run(p, tag, spec, c)?,
            Unit::OutOfWindow => out_of_window::run(p, tag, spec, c)?,
            _ => continue,
        };
        p.progress.phase(spec.name, 1);
        runs[i] = Some(run);
    }
    let mut out: Vec<(TestSpec, TestRun)> = selected
        .iter()
        .cloned()
        .zip(runs)
        .filter_map(|(s, r)| Some((s, r?)))
        .collect();
    if let (Some(c), Some(_)) = (control, p.path.len) {
        out.extend(run_reverse(p, c, selected)?);
    }
    Ok(out)
}

/// The server-to-client tests, in the reverse catalogue's order.
fn run_reverse(
    p: &mut Prober<'_>,
    c: &mut Control,
    selected: &[TestSpec],
) -> Result<Vec<(TestSpec, TestRun)>, ProbeError> {
    let specs = super::catalogue::reverse_catalogue(selected);
    let mut runs: Vec<Option<TestRun>> = vec![None; specs.len()];
    synack::run_all(p, c, &specs, &mut runs)?;
    p.progress
        .phase("SYN-ACK twins", runs.iter().flatten().count());
    for (i, spec) in specs.iter().enumerate() {
        let run = match spec.unit {
            Unit::ReverseData => reverse_data::run(p, c, i as u8, spec)?,
            Unit::ReverseDscpAll => reverse_dscp_all::run(p, c, i as u8, spec)?,
            _ => continue,
        };
        p.progress.phase(spec.name, 1);
        runs[i] = Some(run);
    }
    Ok(specs
        .into_iter()
        .zip(runs)
        .filter_map(|(s, r)| Some((s, r?)))
        .collect())
}
