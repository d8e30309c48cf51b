//! `firewall-check probe`: test what the path to a TCP server does to TCP,
//! actively and hop by hop.
//!
//! # The algorithm
//!
//! Each test sends a probe (a SYN with one option, one DSCP or ECN mark,
//! one ECN setup; or one data byte on a real connection) as copies with
//! TTL 1, 2, ... up to the hop before the target, and once in full.
//! Routers answer the short-lived copies with ICMP time-exceeded messages
//! quoting the probe as it reached them (Linux routers quote the whole
//! SYN, RFC 1812; others only 8 bytes, RFC 792, which shows ports and
//! sequence number only: "unknown beyond hop N"). Comparing each quote with
//! the copy as sent ([`diff`]) locates a change between the last hop that
//! quoted it unchanged (`after_hop`) and the first that quoted it changed
//! (`hop`). A middlebox's own quote may show the probe before or after its
//! rules, depending on where in the box they run (Linux quotes a packet
//! whose TTL runs out after PREROUTING and before FORWARD). The target's
//! answer says the probe arrived; none, that the path dropped it.
//!
//! A run goes in phases ([`tests`]): the path walk first (`ttl`: each copy
//! on its own port, so the target's answer names the TTL that reached it),
//! then every SYN test and the 64 SYNs of the DSCP map in one sweep (all
//! copies sent, paced, then one wait for everything they bring back,
//! sorted by port: the waits overlap, so a run takes about as long as its
//! packets take to send and one or two timeouts, whatever the number of
//! tests), then the tests that need a connection of their own (ECN marks on
//! data, Fast Open with data, the out-of-window byte of a tracker that
//! missed the window scaling). Only routers that answered the path walk
//! are waited for. Progress goes to standard error, one line per phase.
//!
//! With `--reflector` ([`reflect`] on the target's host) the probe is also
//! seen where it arrives, and every test but `ttl` has a server-to-client
//! twin ([`catalogue::reverse_catalogue`]): the reflector sends crafted
//! copies of the server's SYN-ACK, TTL-limited ones whose quotes it
//! captures, and a full one the prober compares.
//!
//! `--max-ttl N` caps the TTL-limited copies; a target further away still
//! gets each test's full copy, but its distance is unknown: the path lists
//! the probed hops only, and a change seen only at the far end has no
//! `hop` (it lies past `after_hop`).
//!
//! The kernel's RSTs for the probes' ports (its answer to SYN-ACKs for
//! ports no socket owns) are dropped for the run by an nftables table of
//! its own ([`net::RstGuard`]); the prober ends each connection with its
//! own RST. The server's own choices are never findings: what the target
//! answers says what the server chose, not what the path did.
//!
//! # Where things are
//!
//! | part | module |
//! |---|---|
//! | the tests, one module per family (what each sends, how it runs, its own judgments) | [`tests`], listed in [`mod@catalogue`] |
//! | sending and receiving: the inbox, the sweep, handshakes, the reflector's capture | [`prober`] |
//! | packets, built and read through tcp-options | [`wire`] |
//! | comparison and location | [`diff`] |
//! | from the runs to the findings | [`evaluate`] |
//! | text, JSON, details, costs, progress | [`report`] |
//! | raw sockets, the RST rule | [`net`] |
//! | the far end and its control connection | [`reflect`] |
//! | errors | [`error`] |

pub mod catalogue;
pub mod diff;
pub mod error;
pub mod evaluate;
pub mod net;
pub mod prober;
pub mod reflect;
pub mod report;
pub mod tests;
pub mod wire;

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use clap::Args;

use self::catalogue::{catalogue, reverse_catalogue, select};
use self::error::{ProbeError, UsageError};
use self::net::{RawIp, RstGuard};
use self::prober::{Io, Prober};
use self::report::progress::Progress;
use crate::{Failure, Outcome};

/// Command-line arguments of `probe`.
#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// The server to test, as ADDRESS:PORT (a listening TCP port).
    pub target: String,
    /// A `firewall-check reflect` on the target's side, HOST:PORT (over
    /// the target's address family: the reflector sends only to the
    /// control connection's peer).
    #[arg(long)]
    pub reflector: Option<String>,
    /// The reflector's key (`reflect --key`, or the one it printed);
    /// default: the environment's FIREWALL_CHECK_REFLECT_KEY.
    #[arg(long)]
    pub reflector_key: Option<String>,
    /// JSON instead of text (schema in docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Largest TTL of the TTL-limited copies (the hops probed, 1 to 64).
    /// Each test also sends a full copy to the target; a target further
    /// away is still tested end to end, but a change seen only there is
    /// not placed on a hop, and the path lists the probed hops only.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub max_ttl: u8,
    /// Tests to run, comma separated (default: all); see `--list-tests`.
    /// `ttl` always runs first (it finds the path); with `--reflector`
    /// each test's server-to-client twin runs too.
    #[arg(long)]
    pub tests: Option<String>,
    /// How long to wait for the answers to a round of copies, in ms (a
    /// round ends sooner once everything expected is in).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub timeout_ms: u64,
    /// Pause between two probe packets to the same hop, in ms (pacing).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub pace_ms: u64,
    /// No progress lines on standard error.
    #[arg(long)]
    pub quiet: bool,
    /// Print the tests and exit.
    #[arg(long)]
    pub list_tests: bool,
}

fn resolve(s: &str, what: &'static str) -> Result<SocketAddr, UsageError> {
    s.to_socket_addrs()
        .map_err(|source| UsageError::Resolve {
            what,
            input: s.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| UsageError::NoAddress {
            what,
            input: s.to_string(),
        })
}

/// Source ports a run may use: the path walk's (one per copy), each test's,
/// the DSCP maps', the reverse tests'.
const PORTS_PER_RUN: u16 = 512;

/// Runs `firewall-check probe`.
pub fn run(args: &ProbeArgs) -> Result<Outcome, Failure> {
    Ok(probe_run(args)?)
}

/// [`run`] with its typed error.
fn probe_run(args: &ProbeArgs) -> Result<Outcome, ProbeError> {
    let all = catalogue();
    if args.list_tests {
        for t in &all {
            println!("{:<14} {}", t.name, t.what);
        }
        return Ok(Outcome::Clean);
    }
    let target = resolve(&args.target, "target")?;
    let selected = select(&all, args.tests.as_deref())?;
    let reflector = match &args.reflector {
        Some(r) => {
            let key = reflect::key_from(args.reflector_key.as_deref()).ok_or(
                UsageError::NoReflectorKey {
                    env: reflect::KEY_ENV,
                },
            )?;
            Some((resolve(r, "reflector")?, key))
        }
        None => None,
    };
    let report = probe(args, target, &selected, reflector)?;
    let out = if args.json {
        report.json().map_err(ProbeError::Json)?
    } else {
        report.text()
    };
    if let Err(e) = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes()) {
        if !crate::is_broken_pipe(&e) {
            return Err(ProbeError::Write(e));
        }
    }
    Ok(if report.findings.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// The run itself: sockets, the RST rule, the tests, the report.
fn probe(
    args: &ProbeArgs,
    target: SocketAddr,
    selected: &[catalogue::TestSpec],
    reflector: Option<(SocketAddr, String)>,
) -> Result<report::Report, ProbeError> {
    let src = net::source_for(target)?;
    let raw = if target.is_ipv6() {
        RawIp::open_v6()?
    } else {
        RawIp::open()?
    };
    let base = 33000 + (prober::random_u32() % 24000) as u16;
    let ports = (base, base + PORTS_PER_RUN);
    let mut control = match &reflector {
        Some((addr, key)) => {
            let mut c = reflect::Control::connect(*addr, key)?;
            c.watch(src, ports, target.port())?;
            Some(c)
        }
        None => None,
    };
    // The handler first: a Ctrl-C at any moment after the table exists
    // must find a handler that deletes it.
    RstGuard::install_ctrlc()?;
    let guard = RstGuard::new(target.ip(), ports)?;
    let mut io = Io::new(&raw, src, target, ports);
    io.timeout = Duration::from_millis(args.timeout_ms);
    io.pace = Duration::from_millis(args.pace_ms);
    let total = selected.len()
        + if reflector.is_some() {
            reverse_catalogue(selected).len()
        } else {
            0
        };
    let mut p = Prober::new(io, args.max_ttl, Progress::new(total, !args.quiet));
    let runs = tests::run_all(&mut p, selected, control.as_mut())?;
    if let Some(c) = control {
        c.bye();
    }
    Ok(evaluate::evaluate(
        target,
        &p,
        &runs,
        guard.table(),
        reflector.is_some(),
    ))
}
