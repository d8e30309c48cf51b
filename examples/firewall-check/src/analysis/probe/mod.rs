//! `firewall-check probe`: test what the path to a TCP server does to TCP,
//! actively and hop by hop.
//!
//! For each test (a SYN with one option, one DSCP or one ECN mark) the
//! prober sends copies with TTL 1, 2, ... up to the hop before the target,
//! and one that reaches the target. Routers answer the short-lived copies
//! with ICMP time-exceeded messages quoting the probe as it reached them
//! (Linux routers quote the whole SYN, RFC 1812; others only 8 bytes, RFC
//! 792, which shows ports and sequence number only: "unknown beyond hop N").
//! Comparing each quote with the probe as sent locates a change between the
//! last hop that quoted it unchanged (`after_hop`) and the first that
//! quoted it changed (`hop`). A middlebox's own quote may show the probe
//! before or after its rules, depending on where in the box they run (Linux
//! quotes a packet whose TTL runs out after PREROUTING and before FORWARD).
//!
//! Besides the SYN tests: ECN marks on data and an out-of-window byte after
//! a real handshake (the "TCP sequence checking" of a firewall that missed
//! the window scaling), 64 SYNs for the DSCP remarking map, a SYN proxy
//! found by the SYN-ACK's TTL, a NAT by the routers answering from the
//! target's address. IPv4 and IPv6.
//!
//! With `--reflector` ([`reflect`] on the target's host) the probe is also
//! seen where it arrives, and every test but `ttl` has a server-to-client
//! twin ([`reverse_catalogue`]): the reflector
//! sends crafted copies
//! of the server's SYN-ACK, TTL-limited ones whose quotes it captures, and
//! a full one the prober compares.
//!
//! `--max-ttl N` caps the TTL-limited copies; a target further away still
//! gets each test's full copy, but its distance is unknown: the path lists
//! the probed hops only, and a change seen only at the far end has no
//! `hop` (it lies past `after_hop`).
//!
//! The server's own choices are never findings: what the target answers
//! says what the server chose, not what the path did.
//!
//! Modules: [`wire`] (packets), [`diff`] (comparison, location),
//! [`net`] (raw sockets, RST suppression), [`report`] (text and JSON),
//! [`reflect`] (the far end and its control connection).

pub mod diff;
pub mod net;
pub mod reflect;
pub mod report;
pub mod wire;

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};
use tcp_options::{AccEcnCounters, Flags, MpCapable, OptionsBuilder};

use self::diff::{locate, Observation, ProbeKind};
use self::net::{RawIp, RstGuard};
use self::report::{Finding, HopRef, Report, TestResult};
use self::wire::{build_ip, parse_ip_answer, Answer, Seen, Segment};
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
    /// How long to wait for the answers to one test's copies, in ms.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub timeout_ms: u64,
    /// Pause between two probe packets, in ms (pacing).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub pace_ms: u64,
    /// Print the tests and exit.
    #[arg(long)]
    pub list_tests: bool,
}

/// One test: a SYN with these options and marks.
#[derive(Debug, Clone)]
pub struct TestSpec {
    /// Name (`--tests`, JSON `tests[].name`).
    pub name: &'static str,
    /// What it checks, in words.
    pub what: &'static str,
    /// The DS byte of the probe (DSCP << 2 | ECN).
    pub tos: u8,
    /// Extra TCP flags besides SYN.
    pub flags: Flags,
    /// The option block.
    pub options: Vec<u8>,
    /// The window field.
    pub window: u16,
    /// Data carried in the SYN (Fast Open).
    pub payload: Vec<u8>,
    /// The finding kind when the probe never arrives.
    pub drop_kind: ProbeKind,
}

/// The tests, in the order they run (`ttl` first: it finds the path).
pub fn catalogue() -> Vec<TestSpec> {
    let opts = |b: OptionsBuilder| b.build().map(|v| v.to_vec()).unwrap_or_default();
    let t = |name, what, tos, flags, options, drop_kind| TestSpec {
        name,
        what,
        tos,
        flags,
        options,
        window: 64240,
        payload: vec![],
        drop_kind,
    };
    vec![
        t(
            "ttl",
            "a bare SYN: the path, and each hop's TTL decrement",
            0,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "mss",
            "a SYN with MSS 1460",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().mss(1460)),
            ProbeKind::ProbeDropped,
        ),
        t(
            "wscale",
            "a SYN with window scale 7",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().window_scale(7)),
            ProbeKind::ProbeDropped,
        ),
        t(
            "sackperm",
            "a SYN with SACK-permitted",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().sack_permitted()),
            ProbeKind::ProbeDropped,
        ),
        t(
            "timestamps",
            "a SYN with timestamps",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().timestamps(0x1234_5678, 0)),
            ProbeKind::ProbeDropped,
        ),
        t(
            "linux_syn",
            "a SYN as Linux sends it (MSS, SACK-permitted, timestamps, window scale)",
            0,
            Flags::empty(),
            opts(
                OptionsBuilder::new()
                    .mss(1460)
                    .sack_permitted()
                    .timestamps(0x1234_5678, 0)
                    .window_scale(7),
            ),
            ProbeKind::ProbeDropped,
        ),
        t(
            "exp253",
            "a SYN with experimental option 253 carrying an RFC 6994 ExID",
            0,
            Flags::empty(),
            vec![253, 6, 0x12, 0x34, 0xab, 0xcd, 1, 1],
            ProbeKind::ProbeDropped,
        ),
        t(
            "exp254",
            "a SYN with experimental option 254 carrying an RFC 6994 ExID",
            0,
            Flags::empty(),
            vec![254, 4, 0x4e, 0x4f],
            ProbeKind::ProbeDropped,
        ),
        t(
            "unassigned",
            "a SYN with option kind 99 (unassigned)",
            0,
            Flags::empty(),
            vec![99, 4, 0x5a, 0x5a],
            ProbeKind::ProbeDropped,
        ),
        t(
            "accecn0",
            "a SYN with an AccECN option, kind 172 (two 24-bit counters, RFC 9768)",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().accecn(AccEcnCounters {
                order1: false,
                ee0b: 1,
                eceb: 2,
                ee1b: 0,
                fields: 2,
            })),
            ProbeKind::ProbeDropped,
        ),
        t(
            "accecn1",
            "a SYN with an AccECN option, kind 174 (two 24-bit counters, RFC 9768)",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().accecn(AccEcnCounters {
                order1: true,
                ee0b: 0,
                eceb: 4,
                ee1b: 3,
                fields: 2,
            })),
            ProbeKind::ProbeDropped,
        ),
        t(
            "fastopen",
            "a SYN with a Fast Open cookie request (kind 34, RFC 7413)",
            0,
            Flags::empty(),
            opts(OptionsBuilder::new().fast_open(&[])),
            ProbeKind::ProbeDropped,
        ),
        t(
            "fastopen_data",
            "Fast Open (RFC 7413): a cookie request, then a SYN with the server's cookie and 64 bytes of data",
            0,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "mptcp",
            "a SYN with MPTCP MP_CAPABLE version 1 (kind 30, RFC 8684)",
            0,
            Flags::empty(),
            options(OptionsBuilder::new().mp_capable(MpCapable { key: None })),
            ProbeKind::ProbeDropped,
        ),
        t(
            "dscp_af11",
            "a SYN marked AF11 (DSCP 10)",
            10 << 2,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "dscp_cs1",
            "a SYN marked CS1 (DSCP 8, scavenger)",
            8 << 2,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "dscp_ef",
            "a SYN marked EF (DSCP 46)",
            46 << 2,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "ect0",
            "a SYN marked ECT(0) in the IP header",
            0b10,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "ecn_setup",
            "an ECN-setup SYN (ECE+CWR, RFC 3168)",
            0,
            Flags::ECE | Flags::CWR,
            vec![],
            ProbeKind::EcnSetupDropped,
        ),
        t(
            "accecn_setup",
            "an AccECN-setup SYN (AE+CWR+ECE, RFC 9768)",
            0,
            Flags::AE | Flags::ECE | Flags::CWR,
            vec![],
            ProbeKind::EcnSetupDropped,
        ),
        t(
            "ect0_data",
            "after a handshake, one data byte marked ECT(0)",
            0b10,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "ce_data",
            "after a handshake, one data byte marked CE",
            0b11,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "dscp_all",
            "64 SYNs, one per DSCP value: the path's remarking map",
            0,
            Flags::empty(),
            vec![],
            ProbeKind::ProbeDropped,
        ),
        t(
            "out_of_window",
            "after a handshake with window scaling, one byte beyond the unscaled window edge (inside the scaled window)",
            0,
            Flags::empty(),
            vec![],
            ProbeKind::OutOfWindowDropped,
        ),
    ]
}

/// The data of the `fastopen_data` SYN: 64 bytes, so that the SYN is
/// longer than any SYN without data (at most 40 + 20 + 40 = 100 bytes over
/// IPv6), which is how the lab's `tfo_drop_fwd` rule tells them apart.
pub const FASTOPEN_DATA: &[u8; 64] =
    b"firewall-check probe: data in a SYN with a Fast Open cookie....\n";

/// A cheap random number from the clock and the process id (ports and
/// sequence numbers only need to differ between runs).
fn random_u32() -> u32 {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let x = n ^ (u64::from(std::process::id()) << 32);
    let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x >> 32) as u32
}

fn resolve(s: &str, what: &str) -> Result<SocketAddr, Failure> {
    s.to_socket_addrs()
        .map_err(|e| Failure::Usage(format!("{what} {s}: {e} (expected ADDRESS:PORT)")))?
        .next()
        .ok_or_else(|| Failure::Usage(format!("{what} {s}: no address")))
}

/// Runs `firewall-check probe`.
pub fn run(args: &ProbeArgs) -> Result<Outcome, Failure> {
    let all = catalogue();
    if args.list_tests {
        for t in &all {
            println!("{:<14} {}", t.name, t.what);
        }
        return Ok(Outcome::Clean);
    }
    let target = resolve(&args.target, "target")?;
    let selected: Vec<TestSpec> = match &args.tests {
        None => all,
        Some(list) => {
            let mut v = Vec::new();
            // The path comes from the ttl test: it always runs first.
            v.push(all[0].clone());
            let names: Vec<&str> = list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            if names.is_empty() {
                return Err(Failure::Usage(format!(
                    "--tests {list:?}: no test named (see --list-tests)"
                )));
            }
            for name in names {
                let t = all.iter().find(|t| t.name == name).ok_or_else(|| {
                    Failure::Usage(format!("unknown test {name:?} (see --list-tests)"))
                })?;
                if !v.iter().any(|x: &TestSpec| x.name == t.name) {
                    v.push(t.clone());
                }
            }
            v
        }
    };
    let reflector = match &args.reflector {
        Some(r) => {
            let key = reflect::key_from(args.reflector_key.as_deref()).ok_or_else(|| {
                Failure::Usage(format!(
                    "--reflector needs the reflector's key: --reflector-key, or {} (reflect prints one at start unless given one)",
                    reflect::KEY_ENV
                ))
            })?;
            Some((resolve(r, "reflector")?, key))
        }
        None => None,
    };
    let dst = target.ip();
    let src = net::source_for(target)?;
    let raw = if dst.is_ipv6() {
        RawIp::open_v6()?
    } else {
        RawIp::open()?
    };
    let base = 33000 + (random_u32() % 24000) as u16;
    // Forward tests, as many reverse ones, 64 for the DSCP map and at most
    // 128 for the reverse one (each value's arrival, then the changed ones
    // located), one for the out-of-window test, one for Fast Open's cookie
    // request.
    let ports = (base, base + 2 * selected.len() as u16 + 67 + 128);
    let mut control = match &reflector {
        Some((addr, key)) => {
            let mut c = reflect::Control::connect(*addr, key)?;
            c.call(&json!({"op": "watch", "client": src.to_string(), "ports": [ports.0, ports.1], "server_port": target.port()}))?;
            Some(c)
        }
        None => None,
    };
    // The handler first: a Ctrl-C at any moment after the table exists
    // must find a handler that deletes it.
    RstGuard::install_ctrlc()?;
    let guard = RstGuard::new(target.ip(), ports)?;
    let mut prober = Prober {
        raw: &raw,
        src,
        dst,
        dport: target.port(),
        timeout: Duration::from_millis(args.timeout_ms),
        pace: Duration::from_millis(args.pace_ms),
        max_ttl: args.max_ttl,
        path_len: None,
        beyond: false,
        path: Vec::new(),
        rtt: None,
        next_port: base,
        dscp_map: Vec::new(),
        reverse_dscp_map: Vec::new(),
        reverse_dscp_unlocated: 0,
    };
    let mut runs = Vec::new();
    for (i, spec) in selected.iter().enumerate() {
        let sport = prober.port();
        let mut run = match spec.name {
            "dscp_all" => prober.run_dscp_all(i as u8, control.as_mut())?,
            "out_of_window" => prober.run_out_of_window(i as u8, sport, control.as_mut())?,
            "fastopen_data" => prober.run_fastopen(i as u8, sport, spec)?,
            "ect0_data" | "ce_data" => {
                prober.run_data_mark(i as u8, sport, spec.tos, control.as_mut())?
            }
            _ => prober.run_test(i as u8, sport, spec)?,
        };
        // The special tests ask the reflector themselves.
        let plain_syn = !matches!(
            spec.name,
            "dscp_all" | "out_of_window" | "ect0_data" | "ce_data"
        );
        if let (Some(c), true) = (control.as_mut(), plain_syn) {
            prober.reflected_forward(c, sport, &mut run)?;
        }
        runs.push((spec.clone(), run));
    }
    if let Some(c) = control.as_mut() {
        if prober.path_len.is_some() {
            for (i, spec) in reverse_catalogue(&selected).iter().enumerate() {
                let sport = prober.port();
                let run = match spec.name {
                    "reverse_ect0_data" | "reverse_ce_data" | "reverse_out_of_window" => {
                        prober.run_reverse_data(c, i as u8, sport, spec)?
                    }
                    "reverse_dscp_all" => prober.run_reverse_dscp_all(c, i as u8, spec)?,
                    n if REVERSE_NOT_RUN.iter().any(|(x, _)| *x == n) => {
                        prober.reverse_not_run(sport, spec)?
                    }
                    _ => prober.run_reverse(c, i as u8, sport, spec)?,
                };
                runs.push((spec.clone(), run));
            }
        }
    }
    if let Some(c) = control {
        c.bye();
    }
    let report = evaluate(target, &prober, &runs, guard.table(), reflector.is_some());
    drop(guard);
    drop(raw);
    let out = if args.json {
        serde_json::to_string_pretty(&report).map_err(|e| format!("JSON: {e}"))? + "\n"
    } else {
        report.text()
    };
    if let Err(e) = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes()) {
        if !crate::is_broken_pipe(&e) {
            return Err(Failure::Runtime(format!("writing the report: {e}")));
        }
    }
    Ok(if report.findings.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// What one test's copies brought back.
#[derive(Debug, Clone)]
pub struct TestRun {
    /// The probe as sent (the copy that reached the target).
    pub sent: Seen,
    /// Router quotes by TTL.
    pub quotes: Vec<(u8, wire::IcmpError)>,
    /// The target's answer (SYN-ACK or RST) and the TTL of the first copy
    /// that drew it.
    pub answer: Option<(u8, Seen)>,
    /// ICMP destination unreachable (e.g. administratively prohibited).
    pub unreachable: Option<wire::IcmpError>,
    /// `client_to_server` or `server_to_client`.
    pub direction: &'static str,
    /// The far end's view: the reflector's capture at the target (forward
    /// tests) or the prober's receipt (reverse tests).
    pub at_end: Option<Observation>,
    /// Why the test could not run as planned, in words.
    pub note: Option<String>,
    /// Out-of-window test: what the handshake showed.
    pub oow: Option<OowEvidence>,
}

impl TestRun {
    /// Every observer of the probe in path order: the routers' quotes by
    /// TTL, then the far end.
    fn observations(&self) -> Vec<Observation> {
        let mut obs: Vec<Observation> = self
            .quotes
            .iter()
            .map(|(ttl, e)| Observation {
                ttl: *ttl,
                address: e.from,
                seen: e.quote.clone(),
            })
            .collect();
        obs.extend(self.at_end.clone());
        obs
    }

    /// A run whose probe is the IP packet `sent`, nothing seen yet.
    fn new(sent: &[u8], direction: &'static str) -> Result<TestRun, Failure> {
        Ok(TestRun {
            sent: Seen::from_ip(sent)
                .ok_or_else(|| Failure::Runtime("probe does not decode".into()))?,
            quotes: Vec::new(),
            answer: None,
            unreachable: None,
            direction,
            at_end: None,
            note: None,
            oow: None,
        })
    }
}

/// What the out-of-window test saw before its segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OowEvidence {
    /// The window field of the SYN-ACK as received.
    pub synack_window: u16,
    /// The window-scale shift of the SYN-ACK as received.
    pub synack_shift: Option<u8>,
    /// The window field of the server's ACK of the in-window byte.
    pub ack_window: u16,
    /// How far past the acknowledged point the segment was, bytes.
    pub offset: u32,
    /// The server's window-scale shift used.
    pub shift: u8,
    /// Where the shift came from: `reflector`, `syn-ack` or `inferred`.
    pub shift_source: &'static str,
    /// The unscaled window edge past the acknowledged point, bytes.
    pub unscaled_edge: u32,
    /// The scaled window edge past the acknowledged point, bytes.
    pub scaled_edge: u32,
}

/// The window-scale shift of a SYN or SYN-ACK (`None`: no option).
pub fn window_shift(s: &Seen) -> Option<u8> {
    s.options().and_then(|o| {
        tcp_options::RawOptions::new(o)
            .filter_map(Result::ok)
            .find(|x| x.kind == tcp_options::kind::WINDOW_SCALE)
            .and_then(|x| x.data.first().copied())
    })
}

/// Whether a SACK block of `s` covers sequence number `seq`.
pub fn sack_covers(s: &Seen, seq: u32) -> bool {
    s.options().is_some_and(|o| {
        tcp_options::RawOptions::new(o)
            .filter_map(Result::ok)
            .filter(|x| x.kind == tcp_options::kind::SACK)
            .any(|x| {
                x.data.chunks_exact(8).any(|b| {
                    let left = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let right = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    seq.wrapping_sub(left) < right.wrapping_sub(left)
                })
            })
    })
}

/// The shift that makes `window_field << shift` closest to the SYN-ACK's
/// (unscaled) window: a receiver's first ACK advertises the same window,
/// scaled. 0 when the field did not shrink (no scaling).
pub fn infer_shift(synack_window: u16, window_field: u16) -> u8 {
    if window_field == 0 || u32::from(window_field) * 2 > u32::from(synack_window) {
        return 0;
    }
    (0..=14u8)
        .min_by_key(|s| (i64::from(window_field) << s).abs_diff(i64::from(synack_window)))
        .unwrap_or(0)
}

struct Prober<'a> {
    raw: &'a RawIp,
    src: IpAddr,
    dst: IpAddr,
    dport: u16,
    timeout: Duration,
    pace: Duration,
    max_ttl: u8,
    /// TTL at which the target answers (with `beyond`, `max_ttl` + 1:
    /// the end of the probed hops, not the target's distance).
    path_len: Option<u8>,
    /// The target answered only a full copy: it is more than `max_ttl`
    /// hops away, its distance unknown.
    beyond: bool,
    /// Router addresses by TTL (from the `ttl` test).
    path: Vec<(u8, IpAddr)>,
    /// SYN to SYN-ACK time of the first answer.
    rtt: Option<Duration>,
    /// The next free source port.
    next_port: u16,
    /// The DSCP map: (sent, seen at the last observer, where it changed).
    dscp_map: Vec<report::DscpMapEntry>,
    /// The server-to-client DSCP map (`reverse_dscp_all`).
    reverse_dscp_map: Vec<report::DscpMapEntry>,
    /// Changed values of the reverse map left unlocated (the reflector's
    /// packet budget).
    reverse_dscp_unlocated: usize,
}

impl Prober<'_> {
    fn run_test(&mut self, index: u8, sport: u16, spec: &TestSpec) -> Result<TestRun, Failure> {
        let seq = random_u32();
        let seg = Segment {
            sport,
            dport: self.dport,
            seq,
            ack: 0,
            flags: Flags::SYN | spec.flags,
            window: spec.window,
            options: spec.options.clone(),
            payload: spec.payload.clone(),
        };
        let ident = |ttl: u8| (u16::from(index) << 8) | u16::from(ttl);
        let sent_packet = build_ip(self.src, self.dst, spec.tos, 64, ident(0), &seg)?;
        let mut run = TestRun::new(&sent_packet, "client_to_server")?;
        // TTLs to try: up to the hop before the target when the path is
        // known, then the target itself; otherwise in batches of 4.
        let mut sent_at: Vec<(u8, Instant)> = Vec::new();
        let batches: Vec<Vec<u8>> = match self.path_len {
            Some(len) => vec![(1..len).chain([64]).collect()],
            None => (1..=self.max_ttl)
                .collect::<Vec<u8>>()
                .chunks(4)
                .map(<[u8]>::to_vec)
                .collect(),
        };
        for attempt in 0..2 {
            for batch in &batches {
                for &ttl in batch {
                    let have = if ttl == 64 || self.path_len.is_some_and(|l| ttl >= l) {
                        run.answer.is_some()
                    } else {
                        run.quotes.iter().any(|(t, _)| *t == ttl)
                    };
                    if have || (attempt > 0 && self.path_len.is_none() && run.answer.is_some()) {
                        continue;
                    }
                    let p = build_ip(self.src, self.dst, spec.tos, ttl, ident(ttl), &seg)?;
                    let t = Instant::now();
                    self.raw.send(self.dst, &p)?;
                    sent_at.push((ttl, t));
                    std::thread::sleep(self.pace);
                }
                self.collect(&seg, index, &mut run, &sent_at, batch);
                if self.path_len.is_none() && run.answer.is_some() {
                    break;
                }
            }
            let complete = run.answer.is_some()
                && self
                    .path_len
                    .or(run.answer.as_ref().map(|a| a.0))
                    .is_some_and(|len| (1..len).all(|t| run.quotes.iter().any(|(q, _)| *q == t)));
            if complete || run.unreachable.is_some() {
                break;
            }
        }
        // No answer up to --max-ttl: the target may be further. A full
        // copy finds out; if it answers, its distance is unknown (more
        // than max_ttl hops), and the TTL-limited copies stop at max_ttl.
        if self.path_len.is_none() && run.answer.is_none() && run.unreachable.is_none() {
            for _ in 0..2 {
                let p = build_ip(self.src, self.dst, spec.tos, 64, ident(64), &seg)?;
                sent_at.push((64, Instant::now()));
                self.raw.send(self.dst, &p)?;
                self.collect(&seg, index, &mut run, &sent_at, &[64]);
                if run.answer.is_some() {
                    self.beyond = true;
                    break;
                }
            }
        }
        if self.path_len.is_none() {
            let beyond = self.beyond.then(|| self.max_ttl.saturating_add(1));
            if let Some(a) = run.answer.as_mut() {
                a.0 = beyond.unwrap_or_else(|| {
                    run.quotes
                        .iter()
                        .map(|(t, _)| *t)
                        .max()
                        .map_or(1, |m| m.saturating_add(1))
                });
            }
        }
        if let Some((ttl, ans)) = &run.answer {
            if self.path_len.is_none() {
                self.path_len = Some(*ttl);
                self.path = run.quotes.iter().map(|(t, e)| (*t, e.from)).collect();
            }
            // Close the server's half-open connection with our own RST
            // (at the sequence number it expects: past data it took).
            if ans.flags().is_some_and(|f| f.contains(Flags::SYN)) {
                let rst = Segment {
                    sport,
                    dport: self.dport,
                    seq: ans.ack().unwrap_or(seq.wrapping_add(1)),
                    ack: 0,
                    flags: Flags::RST,
                    window: 0,
                    options: vec![],
                    payload: vec![],
                };
                let p = build_ip(self.src, self.dst, 0, 64, ident(255), &rst)?;
                self.raw.send(self.dst, &p)?;
            }
        }
        run.quotes.sort_by_key(|(t, _)| *t);
        Ok(run)
    }

    /// Reads answers until every copy of `batch` is answered or the timeout.
    fn collect(
        &mut self,
        seg: &Segment,
        index: u8,
        run: &mut TestRun,
        sent_at: &[(u8, Instant)],
        batch: &[u8],
    ) {
        let mut deadline = Instant::now() + self.timeout;
        let mut answer_at = None;
        while let Some(r) = self.raw.recv_until(deadline) {
            match parse_ip_answer(&r.bytes) {
                Some(Answer::Tcp(s)) => {
                    let ours = s.src == self.dst
                        && s.sport() == Some(seg.dport)
                        && s.dport() == Some(seg.sport)
                        && s.flags()
                            .is_some_and(|f| f.intersects(Flags::SYN | Flags::RST))
                        && (s.ack() == Some(seg.seq.wrapping_add(1))
                            || s.ack() == Some(seg.seq.wrapping_add(1 + seg.payload.len() as u32)));
                    if ours && run.answer.is_none() {
                        // The TTL is settled once the quotes are in.
                        run.answer = Some((self.path_len.unwrap_or(0), s));
                        answer_at = Some(r.at);
                        if self.path_len.is_none() {
                            // Let the routers' quotes of this batch arrive.
                            deadline = deadline.min(Instant::now() + Duration::from_millis(100));
                        }
                    }
                }
                Some(Answer::Icmp(e)) => {
                    let q = &e.quote;
                    let ours = q.sport() == Some(seg.sport) || q.seq() == Some(seg.seq);
                    if !ours {
                        continue;
                    }
                    if e.icmp_type == wire::ICMP_TIME_EXCEEDED {
                        let ttl = if q.ident >> 8 == u16::from(index) && q.ident & 0xff != 0 {
                            (q.ident & 0xff) as u8
                        } else {
                            // Identification rewritten: the TTL is the
                            // first copy not yet answered.
                            (1..=self.max_ttl)
                                .find(|t| !run.quotes.iter().any(|(x, _)| x == t))
                                .unwrap_or(1)
                        };
                        if !run.quotes.iter().any(|(t, _)| *t == ttl) {
                            run.quotes.push((ttl, e));
                        }
                    } else if run.unreachable.is_none() {
                        run.unreachable = Some(e);
                    }
                }
                None => {}
            }
            let limit = self.path_len.unwrap_or(u8::MAX);
            let done = batch.iter().all(|&t| {
                if t >= limit || t == 64 {
                    run.answer.is_some()
                } else {
                    run.quotes.iter().any(|(q, _)| *q == t)
                }
            });
            if done {
                break;
            }
        }
        if let (Some(at), None) = (answer_at, self.rtt) {
            // From the first copy that could have reached the target.
            let first = self.path_len.unwrap_or_else(|| {
                run.quotes
                    .iter()
                    .map(|(t, _)| *t)
                    .max()
                    .map_or(1, |m| m.saturating_add(1))
            });
            if let Some((_, sent)) = sent_at.iter().find(|(t, _)| *t >= first) {
                self.rtt = Some(at.saturating_duration_since(*sent));
            }
        }
    }
}

fn hop_ref(h: Option<(u8, IpAddr)>) -> Option<HopRef> {
    h.map(|(ttl, address)| HopRef { ttl, address })
}

impl Prober<'_> {
    /// A hop as reported: the far end's observation (at `path_len`) is no
    /// hop when the target is beyond `--max-ttl` (its TTL is not known).
    fn placed(&self, h: Option<(u8, IpAddr)>) -> Option<(u8, IpAddr)> {
        h.filter(|(t, _)| !(self.beyond && Some(*t) == self.path_len))
    }

    /// The next source port of the run.
    fn port(&mut self) -> u16 {
        let p = self.next_port;
        self.next_port = self.next_port.wrapping_add(1);
        p
    }

    /// Our own RST (marked: it passes the suppression rule).
    fn send_rst(&self, sport: u16, seq: u32) -> Result<(), Failure> {
        let rst = Segment {
            sport,
            dport: self.dport,
            seq,
            ack: 0,
            flags: Flags::RST,
            window: 0,
            options: vec![],
            payload: vec![],
        };
        let p = build_ip(self.src, self.dst, 0, 64, 0x40ff, &rst)?;
        self.raw.send(self.dst, &p)?;
        Ok(())
    }

    /// A segment from the target to `sport` matching `pred`, before the timeout.
    fn wait_for(&self, sport: u16, pred: impl Fn(&Seen) -> bool) -> Option<Seen> {
        let deadline = Instant::now() + self.timeout;
        while let Some(r) = self.raw.recv_until(deadline) {
            if let Some(Answer::Tcp(s)) = parse_ip_answer(&r.bytes) {
                if s.src == self.dst
                    && s.sport() == Some(self.dport)
                    && s.dport() == Some(sport)
                    && pred(&s)
                {
                    return Some(s);
                }
            }
        }
        None
    }

    /// `dscp_all`: one SYN per DSCP value; fills the map and returns the
    /// run of the first value that changed (or of the last value).
    fn run_dscp_all(
        &mut self,
        index: u8,
        mut control: Option<&mut reflect::Control>,
    ) -> Result<TestRun, Failure> {
        let mut first_changed = None;
        let mut last = None;
        for d in 0..64u8 {
            let spec = TestSpec {
                name: "dscp_all",
                what: "a SYN marked with one DSCP value",
                tos: d << 2,
                flags: Flags::empty(),
                options: vec![],
                window: 64240,
                payload: vec![],
                drop_kind: ProbeKind::ProbeDropped,
            };
            let sport = self.port();
            let mut run = self.run_test(index, sport, &spec)?;
            if let Some(c) = control.as_deref_mut() {
                self.reflected_forward(c, sport, &mut run)?;
            }
            let obs = run.observations();
            let change = locate(&run.sent, &obs)
                .into_iter()
                .find(|l| l.change.key == "dscp");
            self.dscp_map.push(report::DscpMapEntry {
                sent: d,
                seen: obs.last().map(|o| o.seen.tos >> 2),
                hop: change.as_ref().and_then(|l| hop_ref(self.placed(l.hop))),
                after_hop: change
                    .as_ref()
                    .and_then(|l| hop_ref(self.placed(l.after_hop))),
            });
            if change.is_some() && first_changed.is_none() {
                first_changed = Some(run);
            } else {
                last = Some(run);
            }
        }
        first_changed
            .or(last)
            .ok_or_else(|| Failure::Runtime("no DSCP probe ran".into()))
    }

    /// `ect0_data`, `ce_data`: a real handshake, then one data byte with
    /// the DS byte `tos` (TTL-limited copies and a full one); the server's
    /// ACK of it is the answer, the routers' quotes and the reflector's
    /// capture show its ECN field on the way.
    fn run_data_mark(
        &mut self,
        index: u8,
        sport: u16,
        tos: u8,
        control: Option<&mut reflect::Control>,
    ) -> Result<TestRun, Failure> {
        let len = self.path_len.unwrap_or(1);
        let ident = |ttl: u8| (u16::from(index) << 8) | u16::from(ttl);
        let (mut run, hs) =
            self.handshake(sport, ident(0), "client_to_server", SYN_OPTIONS, 502)?;
        let Some(hs) = hs else { return Ok(run) };
        let seq = hs.isn;
        let mut seg = hs.ack;
        seg.flags = Flags::PSH | Flags::ACK;
        seg.payload = vec![b'E'];
        let full = build_ip(self.src, self.dst, tos, 64, ident(0), &seg)?;
        run.sent =
            Seen::from_ip(&full).ok_or_else(|| Failure::Runtime("probe does not decode".into()))?;
        let next = seq.wrapping_add(2);
        // Retransmitted as a TCP would, each wait twice the one before
        // (RFC 6298 backoff): a SYN proxy takes the data only once it has
        // finished its own handshake with the server, which on a loaded
        // host may take longer than one wait.
        for attempt in 0..3u32 {
            for ttl in 1..len {
                if run.quotes.iter().any(|(t, _)| *t == ttl) {
                    continue;
                }
                let p = build_ip(self.src, self.dst, tos, ttl, ident(ttl), &seg)?;
                self.raw.send(self.dst, &p)?;
                std::thread::sleep(self.pace);
            }
            if run.answer.is_none() {
                self.raw.send(self.dst, &full)?;
            }
            let deadline = Instant::now() + self.timeout * (1 << attempt);
            while let Some(r) = self.raw.recv_until(deadline) {
                match parse_ip_answer(&r.bytes) {
                    Some(Answer::Tcp(s))
                        if s.src == self.dst
                            && s.sport() == Some(self.dport)
                            && s.dport() == Some(sport)
                            && s.ack() == Some(next) =>
                    {
                        run.answer = Some((len, s));
                    }
                    Some(Answer::Icmp(e))
                        if e.quote.sport() == Some(sport)
                            && e.quote.seq() == Some(seg.seq)
                            && e.icmp_type == wire::ICMP_TIME_EXCEEDED =>
                    {
                        let ttl = (e.quote.ident & 0xff) as u8;
                        if ttl > 0 && !run.quotes.iter().any(|(t, _)| *t == ttl) {
                            run.quotes.push((ttl, e));
                        }
                    }
                    _ => {}
                }
                if run.answer.is_some() && run.quotes.len() + 1 >= usize::from(len) {
                    break;
                }
            }
            if run.answer.is_some() && run.quotes.len() + 1 >= usize::from(len) {
                break;
            }
        }
        run.quotes.sort_by_key(|(t, _)| *t);
        if let Some(c) = control {
            let until = Instant::now() + Duration::from_secs(1);
            loop {
                let rep = c.report(sport, None)?;
                let seen = rep
                    .into_iter()
                    .filter(|(d, _)| d == "in")
                    .filter_map(|(_, ip)| Seen::from_ip(&ip))
                    .find(|s| {
                        s.seq() == Some(seg.seq) && s.payload().is_some_and(|p| !p.is_empty())
                    });
                if let Some(seen) = seen {
                    run.at_end = Some(Observation {
                        ttl: len,
                        address: self.dst,
                        seen,
                    });
                    break;
                }
                if run.answer.is_none() || Instant::now() >= until {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.send_rst(sport, next)?;
        Ok(run)
    }

    /// `fastopen_data`: a SYN with a Fast Open cookie request (from its
    /// own port), whose SYN-ACK carries the server's cookie (RFC 7413
    /// section 4.1.1); then, like every SYN test (TTL-limited copies and a
    /// full one), a SYN with that cookie and [`FASTOPEN_DATA`]. A server
    /// that takes the data acknowledges it in its SYN-ACK (section 4.2.2);
    /// no SYN-ACK at all while the cookie request got one means the path
    /// drops SYNs carrying data (section 6: middleboxes that do).
    fn run_fastopen(&mut self, index: u8, sport: u16, spec: &TestSpec) -> Result<TestRun, Failure> {
        let req_port = self.port();
        let seq = random_u32();
        let request = Segment {
            sport: req_port,
            dport: self.dport,
            seq,
            ack: 0,
            flags: Flags::SYN,
            window: 64240,
            options: OptionsBuilder::new()
                .mss(1460)
                .sack_permitted()
                .window_scale(7)
                .fast_open(&[])
                .build()
                .map(|v| v.to_vec())
                .unwrap_or_default(),
            payload: vec![],
        };
        let p = build_ip(self.src, self.dst, 0, 64, u16::from(index) << 8, &request)?;
        let not_run = |note: &str| -> Result<TestRun, Failure> {
            let mut run = TestRun::new(&p, "client_to_server")?;
            run.note = Some(note.to_string());
            Ok(run)
        };
        if self.path_len.is_none() {
            return not_run("no path to the target");
        }
        self.raw.send(self.dst, &p)?;
        let Some(synack) = self.wait_for(req_port, |s| {
            s.flags()
                .is_some_and(|f| f.contains(Flags::SYN | Flags::ACK))
                && s.ack() == Some(seq.wrapping_add(1))
        }) else {
            return not_run("the cookie request got no SYN-ACK: the data test did not run");
        };
        self.send_rst(req_port, seq.wrapping_add(1))?;
        let cookie = synack.options().and_then(|o| {
            tcp_options::LinuxOptions::new(o).find_map(|x| match x.option {
                tcp_options::TcpOption::FastOpen(f) if !f.is_request() => Some(f.cookie.to_vec()),
                _ => None,
            })
        });
        let Some(cookie) = cookie else {
            return not_run(
                "the server's SYN-ACK carried no Fast Open cookie (the server does not offer Fast Open, or the path removed the request or the cookie): the data test did not run",
            );
        };
        let mut spec = spec.clone();
        spec.options = OptionsBuilder::new()
            .mss(1460)
            .sack_permitted()
            .window_scale(7)
            .fast_open(&cookie)
            .build()
            .map(|v| v.to_vec())
            .map_err(|e| {
                Failure::Runtime(format!("a {}-byte Fast Open cookie: {e}", cookie.len()))
            })?;
        spec.payload = FASTOPEN_DATA.to_vec();
        self.run_test(index, sport, &spec)
    }

    /// `out_of_window`: a real handshake (window scale 7 offered), one
    /// byte in the window, then one byte beyond the unscaled window edge
    /// the server's ACK advertised (TTL-limited copies and a full one).
    /// The server acknowledges any segment it gets (a duplicate ACK for
    /// one out of order or out of its window); none means the path
    /// dropped it.
    fn run_out_of_window(
        &mut self,
        index: u8,
        sport: u16,
        control: Option<&mut reflect::Control>,
    ) -> Result<TestRun, Failure> {
        let len = self.path_len.unwrap_or(1);
        let ident = |ttl: u8| (u16::from(index) << 8) | u16::from(ttl);
        let (mut run, hs) =
            self.handshake(sport, ident(0), "client_to_server", SYN_OPTIONS, 502)?;
        let Some(Handshake {
            isn: seq,
            synack,
            ack: mut seg,
        }) = hs
        else {
            return Ok(run);
        };
        let synack_shift = window_shift(&synack);
        // With SACK, the duplicate ACK for the byte names it: a window
        // update cannot pass for it.
        let sack_ok = synack.options().is_some_and(|o| {
            tcp_options::RawOptions::new(o)
                .filter_map(Result::ok)
                .any(|x| x.kind == tcp_options::kind::SACK_PERMITTED)
        });
        seg.flags = Flags::PSH | Flags::ACK;
        seg.payload = vec![b'A'];
        let p = build_ip(self.src, self.dst, 0, 64, ident(0), &seg)?;
        self.raw.send(self.dst, &p)?;
        let next = seq.wrapping_add(2);
        let Some(ack) = self.wait_for(sport, |s| s.ack() == Some(next)) else {
            run.note = Some("the in-window byte was not acknowledged".into());
            self.send_rst(sport, next)?;
            return Ok(run);
        };
        let w = ack.window().unwrap_or(0);
        let synack_window = synack.window().unwrap_or(0);
        // The server's shift: what the reflector saw the server send, else
        // the SYN-ACK's as received, else inferred from the window field
        // (the SYN-ACK's is never scaled; the first ACK's is, so the
        // initial window divided by the shift's power of two).
        let reflected_shift = match control {
            Some(c) => c
                .report(sport, None)?
                .into_iter()
                .filter(|(d, _)| d == "out")
                .filter_map(|(_, ip)| Seen::from_ip(&ip))
                .find(|s| {
                    s.flags()
                        .is_some_and(|f| f.contains(Flags::SYN | Flags::ACK))
                })
                .map(|s| window_shift(&s)),
            None => None,
        };
        let (shift, shift_source) = match (reflected_shift, synack_shift) {
            (Some(r), _) => (r.unwrap_or(0), "reflector"),
            (None, Some(x)) => (x, "syn-ack"),
            (None, None) => (infer_shift(synack_window, w), "inferred"),
        };
        // A window tracker that missed the scaling holds the window fields
        // unscaled: its edge is the largest of them past the acknowledged
        // point, and Linux conntrack lets a segment overshoot it by up to
        // the largest window it has seen (the same unscaled fields). The
        // byte must go beyond both and stay inside the real, scaled
        // window, so first grow the server's window with in-window data
        // (at most 8 flights of 60,000 bytes, each acknowledged).
        //
        // Conntrack's largest window also grows: a segment that starts at
        // or before its edge and ends past it adds the bytes past the edge
        // (`tcp_in_window`, net/netfilter/nf_conntrack_proto_tcp.c). Sent
        // in order, every segment of a flight does that once the server
        // has acknowledged the ones before it by the time it crosses the
        // box: on a loaded host, ACK after ACK, the tracker's slack grew
        // past the byte and it passed (the IPv6 campus flake). So each
        // flight goes out highest segment first: until the lowest arrives
        // the server only repeats its acknowledgment (with SACK, which
        // moves the tracker's edge past the flight), every other segment
        // starts past the edge, and only the lowest can straddle it. The
        // slack grows by at most one segment per pass, counted in `limit`.
        let largest_raw = u32::from(synack_window).max(u32::from(w));
        let unscaled = largest_raw;
        let mut limit = unscaled + largest_raw;
        let mut acked = next;
        let mut window = w;
        let mut sent_bytes = 0u32;
        let mut rounds = 0;
        while (u32::from(window) << shift.min(14)) <= limit + 16_000 && rounds < 8 && shift > 0 {
            rounds += 1;
            let room = (u32::from(window) << shift.min(14)).min(60_000) / 1400 * 1400;
            let want = acked.wrapping_add(room);
            sent_bytes += room;
            // Go-back-N from the highest acknowledgment, three times at
            // most: a loaded host may lose a segment of the flight.
            let mut tries = 0;
            while acked != want {
                tries += 1;
                if tries > 4 {
                    run.note = Some(format!(
                        "a flight of {room} bytes inside the window was not acknowledged"
                    ));
                    self.send_rst(sport, want)?;
                    return Ok(run);
                }
                let segments = want.wrapping_sub(acked).div_ceil(1400);
                for k in (0..segments).rev() {
                    seg.seq = acked.wrapping_add(k * 1400);
                    seg.payload = vec![b'g'; 1400];
                    let p = build_ip(self.src, self.dst, 0, 64, ident(0), &seg)?;
                    self.raw.send(self.dst, &p)?;
                }
                limit += 1400;
                let deadline = Instant::now() + self.timeout.max(Duration::from_secs(1));
                while let Some(r) = self.raw.recv_until(deadline) {
                    let Some(Answer::Tcp(s)) = parse_ip_answer(&r.bytes) else {
                        continue;
                    };
                    if s.src != self.dst
                        || s.sport() != Some(self.dport)
                        || s.dport() != Some(sport)
                    {
                        continue;
                    }
                    let Some(a) = s.ack() else { continue };
                    // An acknowledgment inside (acked, want].
                    let ahead = a.wrapping_sub(acked);
                    if ahead > 0 && ahead <= want.wrapping_sub(acked) {
                        acked = a;
                        window = s.window().unwrap_or(0);
                    }
                    if acked == want {
                        break;
                    }
                }
            }
            // Let the server's application read, so the window opens.
            std::thread::sleep(Duration::from_millis(20));
        }
        let scaled = u32::from(window) << shift.min(14);
        run.oow = Some(OowEvidence {
            synack_window,
            synack_shift,
            ack_window: window,
            offset: 0,
            shift,
            shift_source,
            unscaled_edge: unscaled,
            scaled_edge: scaled,
        });
        if scaled <= limit + 2 {
            run.note = Some(format!(
                "the server's window ({scaled} bytes: field {window}, shift {shift} from the {shift_source}) did not grow past twice the unscaled window ({limit}) after {sent_bytes} bytes: nothing to test"
            ));
            self.send_rst(sport, acked)?;
            return Ok(run);
        }
        let offset = limit + (scaled - limit) / 2;
        if let Some(o) = run.oow.as_mut() {
            o.offset = offset;
        }
        let next = acked;
        seg.seq = next.wrapping_add(offset);
        seg.payload = vec![b'B'];
        let full = build_ip(self.src, self.dst, 0, 64, ident(0), &seg)?;
        run.sent =
            Seen::from_ip(&full).ok_or_else(|| Failure::Runtime("probe does not decode".into()))?;
        for attempt in 0..2 {
            for ttl in 1..len {
                if run.quotes.iter().any(|(t, _)| *t == ttl) {
                    continue;
                }
                let p = build_ip(self.src, self.dst, 0, ttl, ident(ttl), &seg)?;
                self.raw.send(self.dst, &p)?;
                std::thread::sleep(self.pace);
            }
            if run.answer.is_none() {
                self.raw.send(self.dst, &full)?;
            }
            let deadline = Instant::now() + self.timeout;
            while let Some(r) = self.raw.recv_until(deadline) {
                match parse_ip_answer(&r.bytes) {
                    Some(Answer::Tcp(s))
                        if s.src == self.dst
                            && s.sport() == Some(self.dport)
                            && s.dport() == Some(sport)
                            && s.ack() == Some(next)
                            && (!sack_ok || sack_covers(&s, seg.seq)) =>
                    {
                        run.answer = Some((len, s));
                    }
                    Some(Answer::Icmp(e))
                        if e.quote.sport() == Some(sport)
                            && e.quote.seq() == Some(seg.seq)
                            && e.icmp_type == wire::ICMP_TIME_EXCEEDED =>
                    {
                        let ttl = (e.quote.ident & 0xff) as u8;
                        if ttl > 0 && !run.quotes.iter().any(|(t, _)| *t == ttl) {
                            run.quotes.push((ttl, e));
                        }
                    }
                    _ => {}
                }
                if run.answer.is_some() && run.quotes.len() + 1 >= usize::from(len) {
                    break;
                }
            }
            if run.answer.is_some() && (attempt > 0 || run.quotes.len() + 1 >= usize::from(len)) {
                break;
            }
        }
        run.quotes.sort_by_key(|(t, _)| *t);
        self.send_rst(sport, next)?;
        Ok(run)
    }
}

/// Why a reverse test could not run, from the reflector's refusal.
fn reverse_note(e: &str) -> String {
    if e.contains("no SYN-ACK from the server") {
        format!(
            "{e}: the server sent no SYN-ACK acknowledging the prober's SYN (to any address, even once the prober had acknowledged the SYN-ACK it got), so the reflector has none to send from; not tested"
        )
    } else if e.contains("not to this control connection's peer") {
        format!(
            "{e}: the server's SYN-ACK went to a translated address other than the control connection's source (a NAT that translates the probes and the control connection differently); not tested"
        )
    } else {
        e.to_string()
    }
}

/// The Fast Open cookie the crafted `synack_fastopen` and
/// `synack_fastopen_data` SYN-ACKs carry: 8 bytes (RFC 7413 section 4.1.1
/// allows 4 to 16). The prober never uses it: it only has to arrive.
pub const REVERSE_COOKIE: [u8; 8] = *b"fcpcooki";

/// The sender's key in the crafted `synack_mptcp` SYN-ACK's MP_CAPABLE
/// (RFC 8684 section 3.1: a SYN-ACK's carries one, a SYN's none).
pub const REVERSE_MPTCP_KEY: u64 = u64::from_be_bytes(*b"lab-key1");

/// The twins that are reported but not run, and why (none now: the
/// mechanism stays for a twin that cannot be run honestly).
pub const REVERSE_NOT_RUN: [(&str, &str); 0] = [];

/// The ECN flags a server answers a SYN with, from the flags and the
/// IP-ECN field the SYN arrived with (`tos & 3`), and why in words. RFC
/// 9768: an AccECN server answers a SYN with AE, CWR and ECE all set (and,
/// section 3.1.3, any combination but none and CWR+ECE, RFC 3168's setup)
/// with the SYN's IP-ECN field fed back in AE, CWR, ECE (Table 2, section
/// 3.1.1): Not-ECT 0,1,0; ECT(1) 0,1,1; ECT(0) 1,0,0; CE 1,1,0; an RFC
/// 3168 setup gets ECE;
/// a SYN without them no ECN flag.
pub fn accecn_synack_flags(syn_flags: Flags, syn_ecn: u8) -> (Flags, String) {
    let setup = syn_flags & (Flags::AE | Flags::CWR | Flags::ECE);
    if setup.is_empty() {
        return (
            Flags::empty(),
            "the SYN arrived without AE, CWR or ECE: a server answers without ECN flags".into(),
        );
    }
    if setup == Flags::CWR | Flags::ECE {
        return (
            Flags::ECE,
            "the SYN arrived as an RFC 3168 ECN setup (CWR+ECE): an AccECN server answers ECE"
                .into(),
        );
    }
    let (flags, name) = match syn_ecn & 3 {
        0 => (Flags::CWR, "Not-ECT"),
        1 => (Flags::CWR | Flags::ECE, "ECT(1)"),
        2 => (Flags::AE, "ECT(0)"),
        _ => (Flags::AE | Flags::CWR, "CE"),
    };
    let arrived = [(Flags::AE, "AE"), (Flags::CWR, "CWR"), (Flags::ECE, "ECE")]
        .iter()
        .filter(|(f, _)| setup.contains(*f))
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("+");
    let answer = [(Flags::AE, "AE"), (Flags::CWR, "CWR"), (Flags::ECE, "ECE")]
        .iter()
        .filter(|(f, _)| flags.contains(*f))
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("+");
    (
        flags,
        format!("the AccECN-setup SYN arrived at the server with {arrived} and IP-ECN {name}: the SYN-ACK answers {answer} (RFC 9768)"),
    )
}

/// Crafted packets the reverse DSCP map may take from the reflector's
/// session budget (1024) to locate its changed values: the other reverse
/// tests need the rest.
const REVERSE_DSCP_LOCATE_BUDGET: usize = 512;

/// The reverse tests: the server's own SYN-ACK, then a crafted SYN-ACK per
/// forward test (its options, DS byte and ECN flags), sent by the reflector.
///
/// Each SYN test has its server-to-client twin; where a SYN-ACK carries
/// an option in another form than a SYN, the twin carries the SYN-ACK's:
/// Fast Open a cookie instead of the cookie request (RFC 7413 section
/// 4.1.1), MP_CAPABLE with the sender's key (RFC 8684 section 3.1), and
/// Fast Open's data in the SYN becomes data in the SYN-ACK (RFC 7413
/// allows both: a server may send data in its SYN-ACK once the cookie is
/// valid). `ttl` has no twin (the path is found from the client's side);
/// `reverse_dscp_all` is the server-to-client remarking map
/// (`Prober::run_reverse_dscp_all`); `synack_accecn_setup` follows an
/// AccECN-setup SYN, its flags answering that SYN as the reflector captured
/// it at the server ([`accecn_synack_flags`]).
pub fn reverse_catalogue(forward: &[TestSpec]) -> Vec<TestSpec> {
    let mut v = vec![TestSpec {
        name: "synack",
        what: "the server's own SYN-ACK",
        tos: 0,
        flags: Flags::empty(),
        options: vec![],
        window: 0,
        payload: vec![],
        drop_kind: ProbeKind::ProbeDropped,
    }];
    for t in forward {
        let name = match t.name {
            "ttl" => continue,
            "accecn_setup" => "synack_accecn_setup",
            "dscp_all" => "reverse_dscp_all",
            "mss" => "synack_mss",
            "wscale" => "synack_wscale",
            "sackperm" => "synack_sackperm",
            "timestamps" => "synack_timestamps",
            "linux_syn" => "synack_linux",
            "dscp_af11" => "synack_dscp_af11",
            "dscp_cs1" => "synack_dscp_cs1",
            "dscp_ef" => "synack_dscp_ef",
            "ect0" => "synack_ect0",
            "ecn_setup" => "synack_ecn_setup",
            "exp253" => "synack_exp253",
            "exp254" => "synack_exp254",
            "unassigned" => "synack_unassigned",
            "accecn0" => "synack_accecn0",
            "accecn1" => "synack_accecn1",
            "mptcp" => "synack_mptcp",
            "fastopen" => "synack_fastopen",
            "fastopen_data" => "synack_fastopen_data",
            "ect0_data" => "reverse_ect0_data",
            "ce_data" => "reverse_ce_data",
            "out_of_window" => "reverse_out_of_window",
            _ => continue,
        };
        let mut r = t.clone();
        r.name = name;
        if t.name == "ecn_setup" {
            // An ECN-setup SYN-ACK carries ECE only (RFC 3168 section 6.1.1).
            r.flags = Flags::ECE;
        }
        match t.name {
            "fastopen" | "fastopen_data" => {
                r.options = options(OptionsBuilder::new().fast_open(&REVERSE_COOKIE));
                if t.name == "fastopen_data" {
                    r.what = "a SYN-ACK with a Fast Open cookie and 64 bytes of data (RFC 7413)";
                    r.payload = FASTOPEN_DATA.to_vec();
                }
            }
            "mptcp" => {
                r.options = options(OptionsBuilder::new().mp_capable(MpCapable {
                    key: Some(REVERSE_MPTCP_KEY),
                }))
            }
            _ => {}
        }
        v.push(r);
    }
    v
}

impl Prober<'_> {
    /// A reverse test listed but not run ([`REVERSE_NOT_RUN`]): `unknown`,
    /// its note the reason; nothing is sent.
    fn reverse_not_run(&self, sport: u16, spec: &TestSpec) -> Result<TestRun, Failure> {
        let seg = Segment {
            sport,
            dport: self.dport,
            seq: 0,
            ack: 0,
            flags: Flags::SYN | Flags::ACK | spec.flags,
            window: spec.window,
            options: vec![],
            payload: vec![],
        };
        let p = build_ip(self.src, self.dst, spec.tos, 64, 0, &seg)?;
        let mut run = TestRun::new(&p, "server_to_client")?;
        run.note = REVERSE_NOT_RUN
            .iter()
            .find(|(n, _)| *n == spec.name)
            .map(|(_, why)| (*why).to_string())
            .or_else(|| Some("not tested".into()));
        Ok(run)
    }

    /// Adds the reflector's capture of the probe at the target.
    fn reflected_forward(
        &mut self,
        c: &mut reflect::Control,
        sport: u16,
        run: &mut TestRun,
    ) -> Result<(), Failure> {
        let Some(len) = self.path_len else {
            return Ok(());
        };
        let seq = run.sent.seq();
        // The reflector reads its capture while it answers: when the
        // target answered, the probe was there; ask again for up to 1 s.
        let until = Instant::now() + Duration::from_secs(1);
        let seen = loop {
            let seen = c
                .report(sport, None)?
                .into_iter()
                .filter(|(d, _)| d == "in")
                .filter_map(|(_, ip)| Seen::from_ip(&ip))
                .find(|s| s.seq() == seq && s.flags().is_some_and(|f| f.contains(Flags::SYN)));
            // Not by its ports: translated on the way (NAT)? By its sequence.
            let seen = match seen {
                Some(s) => Some(s),
                None if run.answer.is_some() => {
                    let r = c.call(&json!({"op": "report_seq", "seq": seq}))?;
                    r["packets"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p["ip"].as_str().and_then(reflect::unhex))
                        .filter_map(|ip| Seen::from_ip(&ip))
                        .find(|s| s.flags().is_some_and(|f| f.contains(Flags::SYN)))
                }
                None => None,
            };
            if seen.is_some() || run.answer.is_none() || Instant::now() >= until {
                break seen;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        run.at_end = seen.map(|seen| Observation {
            ttl: len,
            address: self.dst,
            seen,
        });
        Ok(())
    }

    /// The reverse data tests: a handshake the prober completes (its ACK
    /// advertises `window`, shift 7), then the reflector sends one data
    /// byte from the server's side (`send_data`: TTL-limited copies and a
    /// full one), marked with the test's DS byte (`reverse_ect0_data`,
    /// `reverse_ce_data`) or past the prober's unscaled window edge and
    /// its slack but inside its scaled window (`reverse_out_of_window`,
    /// the campus firewall's sequence checking in the server-to-client
    /// direction). What arrives here is the far end's view; the routers'
    /// quotes reach the reflector. A SYN-ACK the server did not send to
    /// the prober's own address (a NAT) leaves the reflector nothing to
    /// copy: the test says so and is `unknown`.
    fn run_reverse_data(
        &mut self,
        c: &mut reflect::Control,
        index: u8,
        sport: u16,
        spec: &TestSpec,
    ) -> Result<TestRun, Failure> {
        let len = self.path_len.unwrap_or(1);
        let oow = spec.name == "reverse_out_of_window";
        // The prober's window as a tracker that missed the scaling reads
        // it (the field) and as the server means it (shifted by 7). The
        // tracker's slack is the largest window it saw from the prober:
        // the SYN's 64240. The byte goes half-way between twice that and
        // the scaled window.
        let field: u16 = if oow { 4000 } else { 502 };
        let (limit, scaled) = (2 * 64240u32, u32::from(field) << 7);
        let offset = if oow { limit + (scaled - limit) / 2 } else { 0 };
        // Timestamps as Linux sends them: a SYN proxy (Linux SYNPROXY)
        // keeps window scaling and SACK only with them (it encodes them in
        // its timestamp cookie, RFC 7323 TSval, echoed by the prober's ACK).
        let (mut run, hs) = self.handshake(
            sport,
            0x4000,
            "server_to_client",
            SYN_OPTIONS.timestamps(TSVAL, 0),
            field,
        )?;
        let Some(hs) = hs else {
            run.note =
                Some("the handshake got no SYN-ACK: nothing for the reflector to send".into());
            return Ok(run);
        };
        let seq = hs.isn;
        // The server scales the prober's window only when its own SYN-ACK
        // carried window scale (as the reflector captured it; what reaches
        // the prober may have lost it on the way, as in the campus case).
        let server_unscaled = oow
            && c.server_synack(sport, seq.wrapping_add(1))?
                .is_some_and(|s| window_shift(&s).is_none());
        if server_unscaled {
            run.note = Some(
                "the server's SYN-ACK carried no window scale: the server does not scale the prober's window, no byte past the unscaled window is inside it; not tested".into(),
            );
            self.send_rst(sport, seq.wrapping_add(1))?;
            return Ok(run);
        }
        if oow {
            run.oow = Some(OowEvidence {
                synack_window: 64240,
                synack_shift: Some(7),
                ack_window: field,
                offset,
                shift: 7,
                shift_source: "prober",
                unscaled_edge: 64240,
                scaled_edge: scaled,
            });
        }
        let ident = 0x8000 | (u16::from(index) << 8);
        let mut ttls: Vec<u8> = (1..len).collect();
        ttls.push(64);
        let mut req = json!({"op": "send_data", "port": sport, "ack": seq.wrapping_add(1), "ident": ident, "ttls": ttls, "tos": spec.tos, "offset": offset});
        let is_answer = |s: &Seen| {
            s.src == self.dst
                && s.sport() == Some(self.dport)
                && s.dport() == Some(sport)
                && s.ident == ident
                && s.payload().is_some_and(|d| !d.is_empty())
        };
        // Sent twice at most (the second time the full copy only).
        for attempt in 0..2 {
            let reply = match c.call(&req) {
                Ok(r) => r,
                Err(e) => {
                    run.note = Some(reverse_note(&e));
                    self.send_rst(sport, seq.wrapping_add(1))?;
                    if let Some(o) = run.oow.as_mut() {
                        o.offset = 0;
                    }
                    return Ok(run);
                }
            };
            if attempt == 0 {
                match reply["sent"]
                    .as_str()
                    .and_then(reflect::unhex)
                    .and_then(|b| Seen::from_ip(&b))
                {
                    Some(sent) => run.sent = sent,
                    None => {
                        return Err(Failure::Runtime(format!(
                            "reflector: no data segment to port {sport} sent"
                        )))
                    }
                }
            }
            let deadline = Instant::now() + self.timeout;
            while let Some(r) = self.raw.recv_until(deadline) {
                if let Some(Answer::Tcp(s)) = parse_ip_answer(&r.bytes) {
                    if is_answer(&s) {
                        run.answer = Some((len, s));
                        break;
                    }
                }
            }
            if run.answer.is_some() {
                break;
            }
            req["ttls"] = json!([64]);
        }
        run.quotes = self.reverse_quotes(c, sport, seq.wrapping_add(1), ident, true)?;
        if let Some((_, s)) = &run.answer {
            run.at_end = Some(Observation {
                ttl: len,
                address: self.src,
                seen: s.clone(),
            });
        }
        self.send_rst(sport, seq.wrapping_add(1))?;
        Ok(run)
    }

    /// One reverse test: open a half connection, have the reflector send
    /// SYN-ACK copies (TTL-limited and one full), read what arrives here
    /// and what the routers quoted to the reflector.
    ///
    /// The reflector finds the server's SYN-ACK by its acknowledgment (the
    /// SYN's sequence number + 1), wherever it went: behind a NAT the
    /// server answers the translated address and port, the copies go
    /// there and the NAT translates them back. Behind a SYN proxy the
    /// server sees nothing until the prober's ACK completes the proxy's
    /// handshake; the proxy then opens its own to the server (with the
    /// prober's sequence number, Linux SYNPROXY) and keeps the server's
    /// SYN-ACK: the copies are sent after it, through the proxy's
    /// sequence translation.
    fn run_reverse(
        &mut self,
        c: &mut reflect::Control,
        index: u8,
        sport: u16,
        spec: &TestSpec,
    ) -> Result<TestRun, Failure> {
        self.run_reverse_copies(c, index, sport, spec, false)
    }

    /// `reverse_dscp_all`: the server-to-client remarking map. For each of
    /// the 64 DSCP values a crafted SYN-ACK marked with it (one handshake
    /// each, as [`Prober::run_reverse`]), first its full copy only: what
    /// arrives here is the map. Then each value that arrived changed once
    /// more with the TTL-limited copies too, whose quotes (at the
    /// reflector) locate the change, while the packets stay within
    /// [`REVERSE_DSCP_LOCATE_BUDGET`]; a value left over is reported
    /// unlocated. Returns the run of the first value that changed (or of
    /// the last value).
    fn run_reverse_dscp_all(
        &mut self,
        c: &mut reflect::Control,
        index: u8,
        spec: &TestSpec,
    ) -> Result<TestRun, Failure> {
        let marked = |d: u8| {
            let mut s = spec.clone();
            s.tos = d << 2;
            s
        };
        let mut runs = Vec::new();
        for d in 0..64u8 {
            let sport = self.port();
            let run = self.run_reverse_copies(c, index, sport, &marked(d), true)?;
            let seen = run.at_end.as_ref().map(|o| o.seen.tos >> 2);
            self.reverse_dscp_map.push(report::DscpMapEntry {
                sent: d,
                seen,
                hop: None,
                after_hop: None,
            });
            runs.push(run);
            std::thread::sleep(self.pace);
        }
        let per_value = usize::from(self.path_len.unwrap_or(1));
        let mut spent = 0;
        let mut first_changed = None;
        for d in 0..64u8 {
            let e = self.reverse_dscp_map[usize::from(d)].clone();
            if e.seen.is_none_or(|x| x == d) {
                continue;
            }
            if spent + per_value > REVERSE_DSCP_LOCATE_BUDGET {
                self.reverse_dscp_unlocated += 1;
                continue;
            }
            spent += per_value;
            let sport = self.port();
            let run = self.run_reverse_copies(c, index, sport, &marked(d), false)?;
            let obs = run.observations();
            let change = locate(&run.sent, &obs)
                .into_iter()
                .find(|l| l.change.key == "dscp");
            let entry = &mut self.reverse_dscp_map[usize::from(d)];
            entry.hop = change.as_ref().and_then(|l| hop_ref(l.hop));
            entry.after_hop = change.as_ref().and_then(|l| hop_ref(l.after_hop));
            if first_changed.is_none() {
                first_changed = Some(run);
            }
            std::thread::sleep(self.pace);
        }
        first_changed
            .or_else(|| runs.pop())
            .ok_or_else(|| Failure::Runtime("no reverse DSCP probe ran".into()))
    }

    /// [`Prober::run_reverse`]; with `full_only`, the reflector sends the
    /// full copy alone (no TTL-limited ones, no quotes to wait for).
    fn run_reverse_copies(
        &mut self,
        c: &mut reflect::Control,
        index: u8,
        sport: u16,
        spec: &TestSpec,
        full_only: bool,
    ) -> Result<TestRun, Failure> {
        let len = self.path_len.unwrap_or(1);
        let seq = random_u32();
        // synack_accecn_setup: an AccECN-setup SYN (AE+CWR+ECE), whose
        // SYN-ACK's flags answer it as it arrived at the server.
        let accecn = spec.name == "synack_accecn_setup";
        let syn = Segment {
            sport,
            dport: self.dport,
            seq,
            ack: 0,
            flags: if accecn {
                Flags::SYN | Flags::AE | Flags::CWR | Flags::ECE
            } else {
                Flags::SYN
            },
            window: 64240,
            options: options(SYN_OPTIONS.timestamps(TSVAL, 0)),
            payload: vec![],
        };
        let p = build_ip(self.src, self.dst, 0, 64, 0x4000, &syn)?;
        let mut run = TestRun::new(&p, "server_to_client")?;
        self.raw.send(self.dst, &p)?;
        let is_answer = |s: &Seen| {
            s.src == self.dst
                && s.sport() == Some(self.dport)
                && s.dport() == Some(sport)
                && s.flags()
                    .is_some_and(|f| f.contains(Flags::SYN | Flags::ACK))
                && s.ack() == Some(seq.wrapping_add(1))
        };
        let Some(first_synack) = self.wait_for(sport, |s| is_answer(s)) else {
            // No handshake: nothing to reflect.
            if accecn {
                run.note = Some(
                    "the AccECN-setup SYN got no SYN-ACK (see accecn_setup): nothing to answer it with; not tested".into(),
                );
            }
            return Ok(run);
        };
        let ack = seq.wrapping_add(1);
        let ident = 0x8000 | (u16::from(index) << 8);
        let mut req = json!({"op": "send_synack", "port": sport, "ack": ack, "ident": ident});
        let own = spec.name == "synack";
        let mut ttls: Vec<u8> = if full_only {
            vec![]
        } else {
            (1..len).collect()
        };
        if !own {
            ttls.push(64);
            req["tos"] = json!(spec.tos);
            req["extra_flags"] = json!(spec.flags.bits());
            req["options"] = json!(reflect::hex(&spec.options));
            if !spec.payload.is_empty() {
                req["payload"] = json!(reflect::hex(&spec.payload));
            }
        }
        req["ttls"] = json!(ttls);
        let mut accecn_note = None;
        if accecn {
            // The SYN as it arrived at the server; behind a SYN proxy it
            // arrives only once the prober has completed the proxy's
            // handshake (the proxy then opens its own, with the prober's
            // sequence number).
            let mut arrived = self.arrived_syn(c, sport, seq)?;
            let mut after_ack = false;
            if arrived.is_none() {
                self.send_ack(sport, seq.wrapping_add(1), &first_synack, 0x4000, 502)?;
                arrived = self.arrived_syn(c, sport, seq)?;
                after_ack = true;
            }
            let Some(arrived) = arrived else {
                run.note = Some(
                    "the reflector did not capture the AccECN-setup SYN at the server: no SYN to answer; not tested".into(),
                );
                self.send_rst(sport, seq.wrapping_add(1))?;
                return Ok(run);
            };
            let (flags, why) =
                accecn_synack_flags(arrived.flags().unwrap_or(Flags::SYN), arrived.tos);
            req["extra_flags"] = json!(flags.bits());
            accecn_note = Some(if after_ack {
                format!("a SYN reached the server only after the prober's ACK (a SYN proxy on the path answered the prober's and opened its own handshake); {why}")
            } else {
                why
            });
        }
        let mut proxied = false;
        let reply = match c.call(&req) {
            Ok(r) => r,
            Err(e) if e.contains("no SYN-ACK from the server") => {
                // The server has not answered: something on the path did
                // (a SYN proxy). Complete that handshake: a proxy then
                // opens its own to the server.
                self.send_ack(sport, ack, &first_synack, 0x4000, 502)?;
                match c.call(&req) {
                    Ok(r) => {
                        proxied = true;
                        r
                    }
                    Err(e) => {
                        run.note = Some(reverse_note(&e));
                        self.send_rst(sport, ack)?;
                        return Ok(run);
                    }
                }
            }
            Err(e) => {
                run.note = Some(reverse_note(&e));
                self.send_rst(sport, ack)?;
                return Ok(run);
            }
        };
        let sent = if own {
            // What the server sent, as the reflector captured it (the
            // reflector found it for send_synack: it is there).
            c.server_synack(sport, ack)?
        } else {
            reply["sent"]
                .as_str()
                .and_then(reflect::unhex)
                .and_then(|b| Seen::from_ip(&b))
        };
        let Some(sent) = sent else {
            return Err(Failure::Runtime(format!(
                "reflector: no SYN-ACK to port {sport} captured or sent"
            )));
        };
        run.sent = sent;
        if own && proxied {
            run.note = Some(format!(
                "a SYN proxy on the path answered the handshake (its SYN-ACK, sequence number {}, came before the server had seen anything; the server answered only after the prober's ACK, sequence number {}, to the proxy, which keeps it): the server's own SYN-ACK never reaches the client; not tested",
                first_synack.seq().unwrap_or(0),
                run.sent.seq().unwrap_or(0)
            ));
            self.send_rst(sport, ack)?;
            return Ok(run);
        }
        if proxied {
            run.note = Some(
                "sent after the handshake a SYN proxy on the path completed (the server answered the proxy only after the prober's ACK)".into(),
            );
        }
        if let Some(why) = accecn_note {
            run.note = Some(match run.note.take() {
                Some(n) => format!("{n}; {why}"),
                None => why,
            });
        }
        if own {
            run.answer = Some((len, first_synack));
        } else {
            // The crafted full copy, by its identification.
            let deadline = Instant::now() + self.timeout;
            while let Some(r) = self.raw.recv_until(deadline) {
                if let Some(Answer::Tcp(s)) = parse_ip_answer(&r.bytes) {
                    if is_answer(&s) && s.ident == ident {
                        run.answer = Some((len, s));
                        break;
                    }
                }
            }
        }
        if !full_only {
            run.quotes = self.reverse_quotes(c, sport, ack, ident, false)?;
        }
        if let Some((_, s)) = &run.answer {
            run.at_end = Some(Observation {
                ttl: len,
                address: self.src,
                seen: s.clone(),
            });
        }
        // Close the server's half-open connection.
        self.send_rst(sport, ack)?;
        Ok(run)
    }

    /// The prober's SYN `seq` from `sport` as the reflector captured it at
    /// the server (by its port, else by its sequence number: a NAT's
    /// translation), waiting up to the timeout.
    fn arrived_syn(
        &self,
        c: &mut reflect::Control,
        sport: u16,
        seq: u32,
    ) -> Result<Option<Seen>, Failure> {
        let syn = |s: &Seen| {
            s.seq() == Some(seq)
                && s.flags()
                    .is_some_and(|f| f.contains(Flags::SYN) && !f.contains(Flags::ACK))
        };
        let deadline = Instant::now() + self.timeout;
        loop {
            let by_port = c
                .report(sport, None)?
                .into_iter()
                .filter(|(d, _)| d == "in")
                .filter_map(|(_, ip)| Seen::from_ip(&ip))
                .find(|s| syn(s));
            let found = match by_port {
                Some(s) => Some(s),
                None => {
                    let r = c.call(&json!({"op": "report_seq", "seq": seq}))?;
                    r["packets"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p["ip"].as_str().and_then(reflect::unhex))
                        .filter_map(|ip| Seen::from_ip(&ip))
                        .find(|s| syn(s))
                }
            };
            if found.is_some() || Instant::now() >= deadline {
                return Ok(found);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The routers' quotes of the reflector's copies `ident` (they reach
    /// the reflector, also from beyond a NAT: by the copies' `ack`), one
    /// per TTL; waits up to the timeout for one from each hop before the
    /// target. `data`: only quotes of data segments.
    fn reverse_quotes(
        &self,
        c: &mut reflect::Control,
        sport: u16,
        ack: u32,
        ident: u16,
        data: bool,
    ) -> Result<Vec<(u8, wire::IcmpError)>, Failure> {
        let want = usize::from(self.path_len.unwrap_or(1).saturating_sub(1));
        let deadline = Instant::now() + self.timeout;
        loop {
            let mut quotes: Vec<(u8, wire::IcmpError)> = c
                .report(sport, Some(ack))?
                .into_iter()
                .filter(|(d, _)| d == "icmp")
                .filter_map(|(_, ip)| match parse_ip_answer(&ip) {
                    Some(Answer::Icmp(e)) if e.icmp_type == wire::ICMP_TIME_EXCEEDED => Some(e),
                    _ => None,
                })
                .filter_map(|e| {
                    let ttl = (e.quote.ident & 0xff) as u8;
                    (e.quote.ident & 0xff00 == ident
                        && ttl > 0
                        && (!data || e.quote.payload().is_none_or(|d| !d.is_empty())))
                    .then_some((ttl, e))
                })
                .collect();
            quotes.sort_by_key(|(t, _)| *t);
            quotes.dedup_by_key(|(t, _)| *t);
            if quotes.len() >= want || Instant::now() >= deadline {
                return Ok(quotes);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The prober's ACK of `synack` (its sequence `seq`, the ISN + 1),
    /// echoing the SYN-ACK's timestamp when it has one.
    fn send_ack(
        &self,
        sport: u16,
        seq: u32,
        synack: &Seen,
        ident: u16,
        window: u16,
    ) -> Result<Segment, Failure> {
        let echo = synack.options().and_then(|o| {
            tcp_options::RawOptions::new(o)
                .filter_map(Result::ok)
                .find(|x| x.kind == tcp_options::kind::TIMESTAMPS)
                .and_then(|x| {
                    x.data
                        .get(..4)
                        .map(|v| u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
                })
        });
        let seg = Segment {
            sport,
            dport: self.dport,
            seq,
            ack: synack.seq().unwrap_or(0).wrapping_add(1),
            flags: Flags::ACK,
            window,
            options: echo.map_or_else(Vec::new, |e| {
                options(OptionsBuilder::new().timestamps(TSVAL.wrapping_add(1), e))
            }),
            payload: vec![],
        };
        let p = build_ip(self.src, self.dst, 0, 64, ident, &seg)?;
        self.raw.send(self.dst, &p)?;
        Ok(seg)
    }

    /// A handshake for the tests that need a connection: a SYN from
    /// `sport` with `opts`, the target's SYN-ACK, the prober's ACK with the
    /// window field `window` (its timestamp echoed: a SYN proxy reads the
    /// options it agreed on from it). The run's `sent` is the SYN; its
    /// note says why there is no [`Handshake`].
    fn handshake(
        &mut self,
        sport: u16,
        ident: u16,
        direction: &'static str,
        opts: OptionsBuilder<'_>,
        window: u16,
    ) -> Result<(TestRun, Option<Handshake>), Failure> {
        let isn = random_u32();
        let syn = Segment {
            sport,
            dport: self.dport,
            seq: isn,
            ack: 0,
            flags: Flags::SYN,
            window: 64240,
            options: options(opts),
            payload: vec![],
        };
        let p = build_ip(self.src, self.dst, 0, 64, ident, &syn)?;
        let mut run = TestRun::new(&p, direction)?;
        if self.path_len.is_none() {
            run.note = Some("no path to the target".into());
            return Ok((run, None));
        }
        self.raw.send(self.dst, &p)?;
        let Some(synack) = self.wait_for(sport, |s| {
            s.flags()
                .is_some_and(|f| f.contains(Flags::SYN | Flags::ACK))
                && s.ack() == Some(isn.wrapping_add(1))
        }) else {
            run.note = Some("the handshake got no SYN-ACK".into());
            return Ok((run, None));
        };
        let ack = self.send_ack(sport, isn.wrapping_add(1), &synack, ident, window)?;
        Ok((run, Some(Handshake { isn, synack, ack })))
    }
}

/// The SYN of the handshakes the data tests open: MSS, SACK-permitted,
/// window scale 7.
const SYN_OPTIONS: OptionsBuilder<'static> = OptionsBuilder::new()
    .mss(1460)
    .sack_permitted()
    .window_scale(7);

/// The prober's TSval in the SYNs that carry timestamps.
const TSVAL: u32 = 0x1234_5678;

/// An option block from the builder (empty if it cannot be written).
fn options(b: OptionsBuilder<'_>) -> Vec<u8> {
    b.build().map(|v| v.to_vec()).unwrap_or_default()
}

/// What [`Prober::handshake`] opened.
struct Handshake {
    /// The prober's initial sequence number.
    isn: u32,
    /// The SYN-ACK as received.
    synack: Seen,
    /// The prober's ACK as sent (sequence number ISN + 1): the template of
    /// the data segments.
    ack: Segment,
}

/// The changed entries of a DSCP map, runs of consecutive values with the
/// same outcome joined: `1-63->0 at hop 2`, `10->12 at hop 3`.
pub fn remarking_map(map: &[report::DscpMapEntry]) -> Vec<String> {
    let mut out = Vec::new();
    let changed: Vec<&report::DscpMapEntry> = map
        .iter()
        .filter(|e| e.seen.is_some_and(|x| x != e.sent))
        .collect();
    let mut i = 0;
    while i < changed.len() {
        let first = changed[i];
        let mut j = i;
        while j + 1 < changed.len()
            && changed[j + 1].sent == changed[j].sent + 1
            && changed[j + 1].seen == first.seen
            && changed[j + 1].hop.map(|h| h.ttl) == first.hop.map(|h| h.ttl)
        {
            j += 1;
        }
        let values = if j > i {
            format!("{}-{}", first.sent, changed[j].sent)
        } else {
            first.sent.to_string()
        };
        out.push(format!(
            "{values}->{}{}",
            first.seen.unwrap_or(0),
            first
                .hop
                .map_or(String::new(), |h| format!(" at hop {}", h.ttl))
        ));
        i = j + 1;
    }
    out
}

/// How much of the probe a test needs an observer to have seen: its
/// option block and data for the tests that carry them, the fixed header
/// for the ECN-setup flags, the IP header and the first 8 TCP bytes for
/// the marks and the arrival tests (an RFC 792 quote shows those).
fn needs(spec: &TestSpec) -> diff::Coverage {
    let ecn_flags = Flags::AE | Flags::CWR | Flags::ECE;
    match spec.name {
        // The DS byte of data segments; whether a segment arrives.
        "ttl"
        | "ect0_data"
        | "ce_data"
        | "reverse_ect0_data"
        | "reverse_ce_data"
        | "out_of_window"
        | "reverse_out_of_window"
        | "dscp_all"
        | "reverse_dscp_all" => diff::Coverage::Partial,
        // The server's own SYN-ACK: its options.
        "synack" => diff::Coverage::Full,
        _ if !spec.options.is_empty()
            || !spec.payload.is_empty()
            || spec.name.contains("fastopen") =>
        {
            diff::Coverage::Full
        }
        _ if spec.flags.intersects(ecn_flags) => diff::Coverage::FixedHeader,
        _ => diff::Coverage::Partial,
    }
}

/// What the routers' quotes of one run show: how many quoted the whole
/// header, and which quoted only part of it (RFC 792: the first 8 TCP
/// bytes, ports and sequence number), so that a partial quote is never
/// counted as having seen what it does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
struct QuoteEvidence {
    /// Quotes of the whole TCP header (options included).
    full: usize,
    /// The partial quotes: (TTL, TCP bytes quoted), by TTL.
    partial: Vec<(u8, usize)>,
    /// The last hop (TTL) that quoted the whole header.
    last_full: Option<u8>,
    /// Each quote's TTL and coverage, by TTL.
    all: Vec<(u8, diff::Coverage)>,
}

impl QuoteEvidence {
    fn of(quotes: &[(u8, wire::IcmpError)]) -> QuoteEvidence {
        let mut all: Vec<(u8, diff::Coverage)> = quotes
            .iter()
            .map(|(t, e)| (*t, diff::coverage(&e.quote)))
            .collect();
        all.sort_by_key(|(t, _)| *t);
        let mut partial: Vec<(u8, usize)> = quotes
            .iter()
            .filter(|(_, e)| diff::coverage(&e.quote) != diff::Coverage::Full)
            .map(|(t, e)| (*t, e.quoted_tcp_len))
            .collect();
        partial.sort_by_key(|(t, _)| *t);
        QuoteEvidence {
            full: all
                .iter()
                .filter(|(_, c)| *c == diff::Coverage::Full)
                .count(),
            partial,
            last_full: all
                .iter()
                .filter(|(_, c)| *c == diff::Coverage::Full)
                .map(|(t, _)| *t)
                .max(),
            all,
        }
    }

    /// The last hop whose quote shows what a test needing `needs` checks.
    fn last_covering(&self, needs: diff::Coverage) -> Option<u8> {
        self.all
            .iter()
            .filter(|(_, c)| *c >= needs)
            .map(|(t, _)| *t)
            .max()
    }

    /// Whether the last hop that quoted the probe at all showed what the
    /// test checks (no quote at all: only the marks' tests, whose fields
    /// the answer's arrival does not show either, count as seen).
    fn covers_last(&self, needs: diff::Coverage) -> bool {
        match self.all.last() {
            Some((_, c)) => *c >= needs,
            None => needs == diff::Coverage::Partial,
        }
    }

    /// ", 1 more in part" after the count of full quotes.
    fn in_part(&self) -> String {
        match self.partial.len() {
            0 => String::new(),
            n => format!(" in full and {n} in part"),
        }
    }

    /// The partial quotes in words: which hops, how much, and from which
    /// hop on the rest of the probe is unknown (past the last hop that
    /// quoted it in full, when a partial quote comes after it).
    fn partial_note(&self) -> Option<String> {
        let (first, _) = *self.partial.first()?;
        let last = self.partial.last().map_or(first, |(t, _)| *t);
        let hops = self
            .partial
            .iter()
            .map(|(t, _)| t.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let bytes = self.partial.iter().map(|(_, n)| *n).min().unwrap_or(0);
        let what = if bytes < 20 {
            " (ports and sequence number: options, flags and window not quoted)"
        } else {
            " (options not quoted in full)"
        };
        let beyond = match self.last_full {
            Some(k) if k > last => String::new(),
            Some(k) => format!(": unknown beyond hop {k}"),
            None => ": no hop quoted it in full".into(),
        };
        Some(format!(
            "hop(s) {hops} quoted only the first {bytes} TCP bytes{what}{beyond}"
        ))
    }
}

/// Turns the test runs into the report.
fn evaluate(
    target: SocketAddr,
    p: &Prober<'_>,
    runs: &[(TestSpec, TestRun)],
    table: &str,
    reflector: bool,
) -> Report {
    let mut report = Report::new(target, p.rtt);
    report.notes.push(format!(
        "kernel RSTs from the probes' ports suppressed for the run by nftables table inet {table} (deleted on exit)"
    ));
    if reflector {
        report.notes.push(
            "server_to_client hops count from the server: TTL 1 is the router next to it".into(),
        );
    }
    let len = p.path_len;
    for &(ttl, address) in &p.path {
        report.path.push(HopRef { ttl, address });
    }
    if let Some(l) = len.filter(|_| !p.beyond) {
        report.path.push(HopRef {
            ttl: l,
            address: target.ip(),
        });
    }
    if p.beyond {
        report.notes.push(format!(
            "the target answered only copies with a full TTL: it is more than {m} hops away (--max-ttl {m}), its distance unknown; hops past {m} were not probed, and a change seen only at the far end is not placed on a hop",
            m = p.max_ttl
        ));
    }
    // "of 3 hops", or of the hops probed when the target is further.
    let of_hops = |n: u8| {
        if p.beyond {
            format!("{n} hops probed (--max-ttl)")
        } else {
            format!("{n} hops")
        }
    };
    // The server-to-client path: the routers that quoted any reverse
    // test's copies, by TTL from the server.
    let mut reverse_path: Vec<(u8, IpAddr)> = Vec::new();
    for (_, r) in runs
        .iter()
        .filter(|(_, r)| r.direction == "server_to_client")
    {
        for (t, e) in &r.quotes {
            if !reverse_path.iter().any(|(x, _)| x == t) {
                reverse_path.push((*t, e.from));
            }
        }
    }
    let baseline_ttls: Vec<u8> = runs
        .first()
        .map(|(_, r)| r.quotes.iter().map(|(t, _)| *t).collect())
        .unwrap_or_default();
    let mut seen_keys: Vec<(ProbeKind, String, Option<HopRef>, &str)> = Vec::new();
    // Routers short of the target that answer from the target's own
    // address: a NAT rewrote their ICMP errors (it translates the error
    // and its quote back, so the quotes themselves show nothing).
    let nat_hint: Option<(HopRef, Option<HopRef>)> = p
        .path
        .iter()
        .position(|(t, a)| *a == target.ip() && len.is_some_and(|l| *t < l))
        .map(|i| {
            let (t, a) = p.path[i];
            let before = i.checked_sub(1).map(|j| HopRef {
                ttl: p.path[j].0,
                address: p.path[j].1,
            });
            (HopRef { ttl: t, address: a }, before)
        });
    for (spec, run) in runs {
        let reverse = run.direction == "server_to_client";
        let obs = run.observations();
        let ev = QuoteEvidence::of(&run.quotes);
        let mut located = locate(&run.sent, &obs);
        let mut detail: Vec<String> = run.note.iter().cloned().collect();
        // Server to client behind a NAT: the reflector's copies go to the
        // translated address and port, and the NAT translates them back.
        // That is the client-to-server translation undone (reported
        // there, once), not a change of its own.
        if reverse {
            located.retain(|l| {
                let undone = l.change.kind == crate::finding::Kind::Nat;
                if undone {
                    detail.push(format!(
                        "translated back by the NAT ({} -> {}): the client-to-server translation undone, not a finding",
                        shown(&l.change.before),
                        shown(&l.change.after)
                    ));
                }
                !undone
            });
        }
        let result;
        if matches!(spec.name, "out_of_window" | "reverse_out_of_window")
            && run.oow.as_ref().is_none_or(|o| o.offset == 0)
        {
            result = "unknown";
        } else if run.answer.is_none() && run.note.is_some() {
            // The reflector could not send it (no SYN-ACK of the server's
            // to copy): nothing was tested.
            result = "unknown";
        } else if run.answer.is_none() {
            // Dropped: the quotes stop somewhere.
            let last = run.quotes.iter().map(|(t, _)| *t).max();
            let hop_at = |t: u8| {
                if reverse {
                    // The routers from the server's side answer the
                    // reflector: every reverse test's quotes name them; at
                    // the path's length, the prober itself.
                    reverse_path
                        .iter()
                        .find(|(x, _)| *x == t)
                        .copied()
                        .or_else(|| (len == Some(t)).then_some((t, p.src)))
                } else {
                    p.path.iter().find(|(x, _)| *x == t).copied()
                }
            };
            let next = if reverse {
                last.map(|l| l + 1).or(Some(1))
            } else {
                baseline_ttls
                    .iter()
                    .copied()
                    .find(|t| last.is_none_or(|l| *t > l))
            };
            let hop = next.and_then(&hop_at).or_else(|| {
                if reverse {
                    None
                } else if run.at_end.is_some() {
                    // It arrived: the answer was lost on the way back.
                    None
                } else {
                    len.map(|l| (l, target.ip()))
                }
            });
            let after = match &run.at_end {
                Some(o) if !reverse => Some((o.ttl, o.address)),
                _ => last.and_then(&hop_at),
            };
            // Beyond --max-ttl the far end has no TTL to name.
            let (hop, after_raw, after) = (p.placed(hop), after, p.placed(after));
            if spec.name == "ttl" || len.is_none() {
                detail.push(
                    "the target never answered: no path length, nothing to compare".to_string(),
                );
                result = "unknown";
            } else if reverse && spec.name == "synack" {
                detail.push("the server did not answer the handshake".into());
                result = "unknown";
            } else {
                result = "dropped";
                detail.push(match (&after_raw, &run.unreachable) {
                    (_, Some(u)) => format!(
                        "answered by ICMP unreachable type {} code {} from {}",
                        u.icmp_type, u.code, u.from
                    ),
                    (Some((_, a)), None) if !reverse && run.at_end.is_some() && p.beyond => {
                        format!(
                            "reached the target ({a}, more than {} hops away) but no answer came back",
                            p.max_ttl
                        )
                    }
                    (Some((t, a)), None) if !reverse && run.at_end.is_some() => {
                        format!("reached the target (hop {t}, {a}) but no answer came back")
                    }
                    (Some((_, a)), None) if p.placed(after_raw).is_none() => {
                        format!("never arrived; last seen at the far end ({a})")
                    }
                    (Some((t, a)), None) => {
                        format!("never arrived; last quoted by hop {t} ({a})")
                    }
                    (None, None) => "never arrived; no hop quoted it".to_string(),
                });
                let before = match &run.oow {
                    Some(o) => json!({
                        "bytes_past_ack": o.offset,
                        "unscaled_edge": o.unscaled_edge,
                        "scaled_edge": o.scaled_edge,
                        "window_field": o.ack_window,
                        "shift": o.shift,
                        "shift_from": o.shift_source,
                    }),
                    None => json!(spec.what),
                };
                report.findings.push(Finding {
                    kind: spec.drop_kind,
                    option_kind: None,
                    direction: run.direction,
                    hop: hop_ref(hop),
                    after_hop: hop_ref(after),
                    before,
                    after: json!("dropped"),
                    impact: report::drop_impact_at(spec.drop_kind, p.rtt),
                    test: spec.name,
                });
            }
        } else if !located.is_empty() {
            result = "modified";
            detail.push(format!(
                "quoted by {} of {}{}",
                ev.full,
                of_hops(len.map_or(0, |x| x.saturating_sub(1))),
                ev.in_part()
            ));
            for l in &located {
                detail.push(format!(
                    "{} {} -> {} at {}",
                    l.change.key,
                    shown(&l.change.before),
                    shown(&l.change.after),
                    match (l.hop, p.placed(l.hop)) {
                        (_, Some(h)) => format!("hop {}", h.0),
                        (Some(_), None) =>
                            format!("the far end, past hop {} (the last probed)", p.max_ttl),
                        (None, _) => "hop ?".into(),
                    }
                ));
                // A NAT translates the routers' quotes back (the ICMP
                // error is related to the connection): a translation seen
                // only at the far end cannot be placed on the path.
                let nat_at_end = l.change.kind == crate::finding::Kind::Nat
                    && run
                        .at_end
                        .as_ref()
                        .is_some_and(|o| Some((o.ttl, o.address)) == l.hop);
                if nat_at_end && nat_hint.is_none() {
                    detail.push("NAT translates the routers' quotes back: not located".into());
                }
                let f = Finding {
                    kind: l.change.kind,
                    option_kind: l.change.option_kind,
                    direction: run.direction,
                    hop: match (nat_at_end, nat_hint) {
                        (false, _) => hop_ref(p.placed(l.hop)),
                        (true, Some((h, _))) => Some(h),
                        (true, None) => None,
                    },
                    after_hop: match (nat_at_end, nat_hint) {
                        (false, _) => hop_ref(p.placed(l.after_hop)),
                        (true, Some((_, a))) => a,
                        (true, None) => None,
                    },
                    before: l.change.before.clone(),
                    after: l.change.after.clone(),
                    impact: report::impact(&l.change, p.rtt),
                    test: spec.name,
                };
                // One finding per field changed at one hop (the DSCP
                // remarking of several marks is one finding; its map is
                // in the tests' details).
                let key = (l.change.kind, l.change.key.clone(), f.hop, f.direction);
                if !seen_keys.contains(&key) {
                    seen_keys.push(key);
                    report.findings.push(f);
                }
            }
        } else {
            // Unchanged as far as the observers saw: the test's fields
            // are known up to the last hop that quoted them (a partial
            // quote past it says nothing about them), and at the far end
            // with the reflector.
            result = if run.at_end.is_none() && !ev.covers_last(needs(spec)) {
                "unknown"
            } else {
                "unchanged"
            };
            let hops = of_hops(len.map_or(0, |x| x.saturating_sub(1)));
            let quoted = format!("quoted unchanged by {} of {hops}{}", ev.full, ev.in_part());
            match (&run.at_end, ev.last_covering(needs(spec))) {
                (Some(_), _) if reverse => {
                    detail.push(format!("{quoted} and received unchanged here"))
                }
                (Some(_), _) => detail.push(format!(
                    "{quoted} and captured unchanged at the target by the reflector"
                )),
                (None, Some(l)) if reflector && run.answer.is_some() => detail.push(format!(
                    "{quoted}; answered, but the reflector did not capture it at the target (past hop {l} a SYN proxy answered it, or a NAT translated it beyond what the reflector finds)"
                )),
                (None, Some(l)) => detail.push(format!(
                    "{quoted}; not visible past hop {l} without --reflector"
                )),
                (None, None) if run.quotes.is_empty() => {
                    detail.push("no hop quoted it; not visible without --reflector".into())
                }
                (None, None) => detail.push(format!(
                    "{quoted}; no hop quoted what this test checks; not visible without --reflector"
                )),
            }
        }
        if let Some(note) = ev.partial_note() {
            detail.push(note);
        }
        if spec.name == "ttl" {
            let bad: Vec<String> = run
                .quotes
                .iter()
                .filter(|(_, e)| e.quote.ttl != 1)
                .map(|(t, e)| format!("hop {t} quoted TTL {}", e.quote.ttl))
                .collect();
            if bad.is_empty() && !run.quotes.is_empty() {
                detail.push("every hop quoted TTL 1: each decrements TTL by one".into());
            } else {
                detail.extend(bad);
            }
        }
        if spec.name == "fastopen_data" && run.note.is_none() {
            let n = run.sent.payload().map_or(0, <[u8]>::len);
            let seq = run.sent.seq().unwrap_or(0);
            let at_target = run
                .at_end
                .as_ref()
                .is_some_and(|o| o.seen.payload().is_some_and(|d| d.len() == n));
            match &run.answer {
                Some((_, a)) if a.ack() == Some(seq.wrapping_add(1).wrapping_add(n as u32)) => {
                    detail.push(format!(
                        "the server's SYN-ACK acknowledged the {n} bytes of data in the SYN: they arrived"
                    ));
                }
                Some(_) if at_target => detail.push(format!(
                    "the reflector captured the {n} bytes of data at the target; the server's SYN-ACK acknowledged the SYN only (it did not take them)"
                )),
                Some(_) => detail.push(
                    "the server's SYN-ACK acknowledged the SYN only: it did not take the data (its choice, or the cookie or the data did not reach it; not visible without --reflector)".into(),
                ),
                None if result == "dropped" => detail.push(format!(
                    "a SYN with the server's Fast Open cookie and {n} bytes of data never arrives, while the cookie request without data was answered"
                )),
                None => {}
            }
        }
        if spec.name == "synack_fastopen_data" {
            let n = run.sent.payload().map_or(0, <[u8]>::len);
            match run
                .at_end
                .as_ref()
                .map(|o| o.seen.payload().map_or(0, <[u8]>::len))
            {
                Some(m) if m == n => {
                    detail.push(format!("the {n} bytes of data in the SYN-ACK arrived here"))
                }
                Some(m) => detail.push(format!(
                    "the SYN-ACK arrived here with {m} of its {n} bytes of data"
                )),
                None => {}
            }
        }
        let mut result = result;
        if let (Some(o), Some(_), true) = (&run.oow, &run.answer, reverse) {
            detail.push(format!(
                "the server-side byte {} past the prober's acknowledged point (unscaled edge {}, scaled edge {}: the prober's window field {} shift {}) arrived here",
                o.offset, o.unscaled_edge, o.scaled_edge, o.ack_window, o.shift
            ));
        } else if let (Some(o), Some(_)) = (&run.oow, &run.answer) {
            detail.push(format!(
                "the byte {} past the acknowledged point (unscaled edge {}, scaled edge {}: window field {} shift {} from the {}) was acknowledged",
                o.offset, o.unscaled_edge, o.scaled_edge, o.ack_window, o.shift, o.shift_source
            ));
        }
        if spec.name == "dscp_all" || (spec.name == "reverse_dscp_all" && run.note.is_none()) {
            let map = if reverse {
                &p.reverse_dscp_map
            } else {
                &p.dscp_map
            };
            let changed = remarking_map(map);
            let unseen = map.iter().filter(|e| e.seen.is_none()).count();
            // The map replaces the one value's words; a NAT's translation
            // back stays said.
            let nat: Vec<String> = detail
                .iter()
                .filter(|d| d.starts_with("translated back by the NAT"))
                .cloned()
                .collect();
            detail = vec![if changed.is_empty() {
                format!("all {} values seen unchanged", map.len() - unseen)
            } else {
                format!("remarking map: {}", changed.join(", "))
            }];
            if unseen > 0 {
                detail.push(format!("{unseen} values seen by nobody"));
            }
            detail.extend(nat);
            if reverse && p.reverse_dscp_unlocated > 0 {
                detail.push(format!(
                    "{} changed values not located (the reflector's packet budget)",
                    p.reverse_dscp_unlocated
                ));
            }
            result = if changed.is_empty() {
                "unchanged"
            } else {
                "modified"
            };
        }
        report.tests.push(TestResult {
            name: spec.name,
            direction: run.direction,
            result,
            detail: detail.join("; "),
        });
    }
    report.dscp_map = p.dscp_map.clone();
    report.reverse_dscp_map = p.reverse_dscp_map.clone();
    let nat = crate::finding::Kind::Nat;
    if let Some((h, a)) = nat_hint {
        if !report.findings.iter().any(|f| f.kind == nat) {
            let from: Vec<String> = p
                .path
                .iter()
                .filter(|(_, x)| *x == target.ip())
                .map(|(t, _)| t.to_string())
                .collect();
            report.findings.push(Finding {
                kind: nat,
                option_kind: None,
                direction: "client_to_server",
                hop: Some(h),
                after_hop: a,
                // The destination translated, to an end only the
                // reflector can show.
                before: crate::finding::nat_ends(
                    None,
                    Some((target.ip(), Some(target.port()))),
                ),
                after: Value::Null,
                impact: report::Impact {
                    summary: format!(
                        "addresses are translated: hops {} answer from the target's address {}, so the target is not the host that answers; the reflector shows the translation",
                        from.join(","),
                        target.ip()
                    ),
                    rtt_s: None,
                    ceiling_bps_before: None,
                    ceiling_bps_after: None,
                },
                test: "ttl",
            });
        }
    }
    // A SYN-ACK whose TTL says it came from fewer hops than the target is
    // away was sent by a box on the path (a SYN proxy): inferred from the
    // TTL (assumes the answer came back over as many hops), and, with a
    // reflector, the SYN never reached the target.
    if let (Some((_, first)), Some(l)) = (runs.first(), len) {
        if let Some((_, ans)) = &first.answer {
            let init: u16 = match ans.ttl {
                0..=64 => 64,
                65..=128 => 128,
                _ => 255,
            };
            let from = init - u16::from(ans.ttl) + 1;
            let unseen = !reflector || first.at_end.is_none();
            if from < u16::from(l) && unseen {
                let at = from as u8;
                let find = |t: u8| p.path.iter().find(|(x, _)| *x == t).copied();
                report.findings.insert(
                    0,
                    Finding {
                        kind: crate::finding::Kind::HandshakeProxied,
                        option_kind: None,
                        direction: "client_to_server",
                        hop: hop_ref(find(at)),
                        after_hop: hop_ref(find(at.saturating_sub(1))),
                        before: json!({"target_ttl": l}),
                        after: json!({"synack_ttl": ans.ttl, "answered_from_ttl": at}),
                        impact: report::Impact {
                            summary: "the handshake is answered on the path: the server's own options and window scale are not what the client sees".into(),
                            rtt_s: None,
                            ceiling_bps_before: None,
                            ceiling_bps_after: None,
                        },
                        test: "ttl",
                    },
                );
            }
        }
    }
    report
}

/// A change's value in a test's detail: as JSON (`7`, `"absent"`), a
/// NAT's ends in words (`source 198.18.43.1:40001`).
fn shown(v: &Value) -> String {
    crate::finding::nat_ends_text(v).unwrap_or_else(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn entry(sent: u8, seen: u8, ttl: u8) -> report::DscpMapEntry {
        let h = |t| HopRef {
            ttl: t,
            address: IpAddr::V4(Ipv4Addr::new(198, 18, 40 + t, 1)),
        };
        report::DscpMapEntry {
            sent,
            seen: Some(seen),
            hop: (sent != seen).then(|| h(ttl)),
            after_hop: (sent != seen).then(|| h(ttl - 1)),
        }
    }

    /// The lab's line: r1, r2, r3 at TTL 1 to 3, the target at 4.
    fn lab_prober(raw: &RawIp) -> Prober<'_> {
        let hop = |t: u8| (t, IpAddr::V4(Ipv4Addr::new(198, 18, 40 + t, t.min(2))));
        Prober {
            raw,
            src: IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2)),
            dst: IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2)),
            dport: 5201,
            timeout: Duration::from_millis(10),
            pace: Duration::ZERO,
            max_ttl: 16,
            path_len: Some(4),
            beyond: false,
            path: (1..=3).map(hop).collect(),
            rtt: Some(Duration::from_millis(1)),
            next_port: 40000,
            dscp_map: Vec::new(),
            reverse_dscp_map: Vec::new(),
            reverse_dscp_unlocated: 0,
        }
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
            sport: 40001,
            dport: 5201,
            seq: 7,
            ack: 0,
            flags: Flags::SYN | spec.flags,
            window: spec.window,
            options: spec.options.clone(),
            payload: spec.payload.clone(),
        };
        let sent = build_ip(p.src, p.dst, spec.tos, 64, 0x0100, &seg).unwrap();
        let mut run = TestRun::new(&sent, "client_to_server").unwrap();
        for &(ttl, cut) in quotes {
            let seen = at(ttl, &seg);
            let ip = build_ip(p.src, p.dst, spec.tos, 1, 0x0100 | u16::from(ttl), &seen).unwrap();
            let mut quote = Seen::from_ip(&ip).unwrap();
            if let Some(n) = cut {
                quote.tcp.truncate(n);
            }
            run.quotes.push((
                ttl,
                wire::IcmpError {
                    from: p.path[usize::from(ttl) - 1].1,
                    icmp_type: wire::ICMP_TIME_EXCEEDED,
                    code: 0,
                    quoted_tcp_len: quote.tcp.len(),
                    quote,
                    extensions: false,
                },
            ));
        }
        let answer = Segment {
            sport: 5201,
            dport: 40001,
            seq: 99,
            ack: 8,
            flags: Flags::SYN | Flags::ACK,
            window: 64240,
            options: vec![],
            payload: vec![],
        };
        let a = build_ip(p.dst, p.src, 0, 61, 0, &answer).unwrap();
        run.answer = Some((4, Seen::from_ip(&a).unwrap()));
        run
    }

    fn spec(name: &str) -> TestSpec {
        catalogue().into_iter().find(|t| t.name == name).unwrap()
    }

    fn strip_wscale(seg: &Segment) -> Segment {
        let mut s = seg.clone();
        let at = s.options.windows(3).position(|w| w == [3, 3, 7]).unwrap();
        s.options[at..at + 3].fill(1);
        s
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
        // r3 quotes 8 bytes; r2 strips window scale after its own quote
        // (FORWARD): nobody shows the change, nothing may be placed.
        let run = quoted_run(
            &p,
            &wscale,
            &[(1, None), (2, None), (3, Some(8))],
            |t, s| if t >= 3 { strip_wscale(s) } else { s.clone() },
        );
        let r = evaluate(
            target,
            &p,
            &[(spec("ttl"), run.clone()), (wscale.clone(), run)],
            "t",
            false,
        );
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        let t = &r.tests[1];
        assert_eq!(t.result, "unknown", "{}", t.detail);
        assert!(
            t.detail.contains("quoted unchanged by 2 of 3 hops"),
            "{}",
            t.detail
        );
        assert!(!t.detail.contains("by 3 of 3"), "{}", t.detail);
        assert!(
            t.detail
                .contains("hop(s) 3 quoted only the first 8 TCP bytes")
                && t.detail.contains("unknown beyond hop 2"),
            "{}",
            t.detail
        );
        assert!(t.detail.contains("not visible past hop 2"), "{}", t.detail);
        // The DSCP tests need only the IP header: r3's quote shows it.
        let af11 = spec("dscp_af11");
        let run = quoted_run(&p, &af11, &[(1, None), (2, None), (3, Some(8))], |_, s| {
            s.clone()
        });
        let r = evaluate(target, &p, &[(af11, run)], "t", false);
        assert_eq!(r.tests[0].result, "unchanged", "{}", r.tests[0].detail);
        assert!(
            r.tests[0].detail.contains("unknown beyond hop 2"),
            "{}",
            r.tests[0].detail
        );
        // r1 quotes 8 bytes, r2 and r3 in full: known up to hop 3, the
        // change at r2 before its routing located after no hop (r1 did not
        // show the options).
        let run = quoted_run(
            &p,
            &wscale,
            &[(1, Some(8)), (2, None), (3, None)],
            |t, s| if t >= 2 { strip_wscale(s) } else { s.clone() },
        );
        let r = evaluate(target, &p, &[(wscale, run)], "t", false);
        let f = &r.findings[0];
        assert_eq!(f.kind.as_str(), "wscale_stripped");
        assert_eq!(f.hop.map(|h| h.ttl), Some(2));
        assert_eq!(f.after_hop, None, "r1's 8 bytes show no option");
        let d = &r.tests[0].detail;
        assert!(
            d.contains("quoted by 2 of 3 hops in full and 1 in part"),
            "{d}"
        );
        assert!(
            d.contains("hop(s) 1 quoted only the first 8 TCP bytes"),
            "{d}"
        );
        assert!(!d.contains("unknown beyond"), "{d}");
    }

    /// RFC 9768 Table 2 (section 3.1.1): the SYN-ACK's AE, CWR and ECE for
    /// each IP-ECN field of an AccECN-setup SYN; and the other setups
    /// (section 3.1.3).
    #[test]
    fn accecn_synack_answers_the_syns_ip_ecn_field() {
        let all = Flags::AE | Flags::CWR | Flags::ECE;
        let f = |flags, ecn| accecn_synack_flags(flags, ecn).0;
        assert_eq!(f(all, 0), Flags::CWR);
        assert_eq!(f(all, 1), Flags::CWR | Flags::ECE);
        assert_eq!(f(all, 2), Flags::AE);
        assert_eq!(f(all, 3), Flags::AE | Flags::CWR);
        // Any other combination but 000 and 011 is taken as AccECN.
        assert_eq!(f(Flags::AE, 2), Flags::AE);
        assert_eq!(f(Flags::CWR | Flags::ECE, 0), Flags::ECE);
        assert_eq!(f(Flags::empty(), 3), Flags::empty());
        assert!(accecn_synack_flags(all, 0).1.contains("IP-ECN Not-ECT"));
    }

    #[test]
    fn remarking_map_joins_runs_of_one_outcome() {
        let mut map: Vec<_> = (0..64).map(|d| entry(d, 0, 2)).collect();
        assert_eq!(remarking_map(&map), ["1-63->0 at hop 2"]);
        map = (0..64).map(|d| entry(d, d, 2)).collect();
        map[10] = entry(10, 12, 3);
        map[46] = entry(46, 0, 3);
        map[63] = entry(63, 8, 3);
        assert_eq!(
            remarking_map(&map),
            ["10->12 at hop 3", "46->0 at hop 3", "63->8 at hop 3"]
        );
        assert!(remarking_map(&[]).is_empty());
    }

    #[test]
    fn shift_inferred_from_the_first_ack() {
        // Linux: SYN-ACK window 64240 unscaled, first ACK 63 << 10 = 64512.
        assert_eq!(infer_shift(64240, 63), 10);
        // 502 << 7 = 64256.
        assert_eq!(infer_shift(64240, 502), 7);
        // No scaling: the field stays about the same.
        assert_eq!(infer_shift(64240, 64240), 0);
        assert_eq!(infer_shift(64240, 0), 0);
    }

    #[test]
    fn accecn_options_parse_as_rfc_9768_options() {
        // RFC 9768 section 3.2.3: kind 172 carries EE0B, ECEB (, EE1B);
        // kind 174 EE1B, ECEB (, EE0B); each field 24 bits.
        let all = catalogue();
        let opt = |name: &str| {
            let t = all.iter().find(|t| t.name == name).unwrap();
            let mut it = tcp_options::StrictOptions::new(&t.options);
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

    #[test]
    fn catalogue_names_are_unique_and_reverse_tests_mirror_them() {
        let all = catalogue();
        let mut names: Vec<&str> = all.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert_eq!(all[0].name, "ttl");
        let rev = reverse_catalogue(&all);
        assert_eq!(rev[0].name, "synack");
        let ecn = rev.iter().find(|t| t.name == "synack_ecn_setup").unwrap();
        assert_eq!(ecn.flags, Flags::ECE);
        let mut rev_names: Vec<&str> = rev.iter().map(|t| t.name).collect();
        rev_names.sort_unstable();
        rev_names.dedup();
        assert_eq!(rev_names.len(), rev.len());
        // Every forward test has its twin but the path.
        let unmirrored: Vec<&str> = all
            .iter()
            .map(|t| t.name)
            .filter(|n| {
                !rev.iter().any(|r| {
                    let base = r
                        .name
                        .strip_prefix("synack_")
                        .or(r.name.strip_prefix("reverse_"));
                    base == Some(n) || (base == Some("linux") && *n == "linux_syn")
                })
            })
            .collect();
        assert_eq!(unmirrored, ["ttl"]);
        assert_eq!(rev.len(), all.len());
        // Two are listed, not run: each has its reason.
        for (name, why) in REVERSE_NOT_RUN {
            assert!(rev.iter().any(|t| t.name == name), "{name}");
            assert!(why.starts_with("not tested: "), "{name}");
        }
        let twin = |name: &str| rev.iter().find(|t| t.name == name).unwrap();
        for (fwd, back) in [
            ("exp253", "synack_exp253"),
            ("exp254", "synack_exp254"),
            ("unassigned", "synack_unassigned"),
            ("accecn0", "synack_accecn0"),
            ("accecn1", "synack_accecn1"),
        ] {
            let f = all.iter().find(|t| t.name == fwd).unwrap();
            assert_eq!(twin(back).options, f.options, "{back}");
        }
        // The SYN-ACK forms: a cookie, not a request; MP_CAPABLE with a key.
        for name in ["synack_fastopen", "synack_fastopen_data"] {
            let o = tcp_options::StrictOptions::new(&twin(name).options)
                .filter_map(Result::ok)
                .find_map(|o| match o.option {
                    tcp_options::TcpOption::FastOpen(f) => Some(f.cookie.to_vec()),
                    _ => None,
                });
            assert_eq!(o.as_deref(), Some(&REVERSE_COOKIE[..]), "{name}");
        }
        assert_eq!(twin("synack_fastopen_data").payload, FASTOPEN_DATA);
        assert!(twin("synack_fastopen").payload.is_empty());
        let mp = &twin("synack_mptcp").options;
        assert_eq!(
            (mp[0], mp[1], mp[2] >> 4),
            (30, 12, 0),
            "MP_CAPABLE, subtype 0"
        );
        // The bytes the probe sent before the builder wrote them.
        assert_eq!(mp[..], *b"\x1e\x0c\x01\x01lab-key1");
        let syn = &all.iter().find(|t| t.name == "mptcp").unwrap().options;
        assert_eq!(syn[..], [30, 4, 0x01, 0x01]);
        for t in all.iter().chain(&rev) {
            assert!(
                t.options.len().is_multiple_of(4) && t.options.len() <= 40,
                "{}",
                t.name
            );
        }
    }
}
