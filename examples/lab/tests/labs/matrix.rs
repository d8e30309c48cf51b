//! The truth matrix (issue 30, section 3): `analyze`'s `limit` of the
//! download, from each capture side, against the sender's own `TCP_INFO`,
//! over every combination of
//!
//! - congestion control: CUBIC, Reno, BBR (the server's, `--cc`);
//! - shape: bulk, a writer pausing between chunks (8, 16, 20, 32, 48, 64
//!   KB, pausing one RTT or a little more: one size per transfer), a small
//!   receive
//!   buffer, a small send buffer, 1% random loss, a tbf bottleneck, window
//!   scale stripped from the SYN-ACK, the window field rewritten;
//! - RTT: 10 and 50 ms (`--delay-ms`, half each way);
//!
//! 48 transfers, 96 sides. Each side is judged by the rules of the
//! `transfer` suite ([`kernel_kind`]): the kernel's dominant share of
//! `tcpi_busy_time`, or `sender` when the capture shows the sender idle
//! most of the transfer. Where the kernel's counters cannot see the limit
//! the shape was built with, the shape decides (marked `*` in the table):
//!
//! - a small send buffer under CUBIC or Reno: Linux starts
//!   `TCP_CHRONO_SNDBUF_LIMITED` only in `tcp_cwnd_validation`, after a
//!   transmit that was not congestion-window limited emptied the write
//!   queue while the application waits for space (`SOCK_NOSPACE`); with a
//!   16 KB buffer these senders book the time as plain busy time (in the
//!   `transfer` suite BBR books it, CUBIC does not: lab.sh's comment);
//! - a writer that pauses: the kernel has no counter for an application
//!   that has nothing to write (its time is busy while data is in flight,
//!   not busy after): `sender` by construction, and never
//!   `receive_window`.
//!
//! - a small receive buffer or a rewritten window field under BBR:
//!   `receive_window` by construction, and no fraction check, because
//!   BBR's `tcpi_rwnd_limited` undercounts (0.35 to 0.39 of the busy time
//!   where CUBIC and Reno count 0.96 to 0.98 on the same windows). Linux
//!   starts `TCP_CHRONO_RWND_LIMITED` only where `tcp_write_xmit` finds
//!   the next segment beyond the window (`tcp_snd_wnd_test`, or
//!   `tcp_tso_should_defer` deferring for it) and stops it at the end of
//!   every other call. BBR asks for internal pacing
//!   (`sk_pacing_status = SK_PACING_NEEDED`, there is no fq qdisc on the
//!   lab's veths), and the loop's first test is `tcp_pacing_check`: after
//!   the segments an ACK let through, the next departure time lies ahead,
//!   the loop breaks there before it reaches the window test, and the
//!   counter stops; the time until the next ACK is booked busy (the
//!   "neither" share). CUBIC and Reno do not pace here (the check returns
//!   false at once), so their loops reach the window test and keep the
//!   counter running.
//!
//! A capture names a middlebox when it infers a window the sender read
//! that it does not show (`window_read_inferred_bytes`, evidence
//! `flight_plateau`: "a window field rewritten on the way") or a scaling
//! mismatch (`negotiated.wscale_mismatch`). On the clean paths (every
//! shape but the stripped scale and the rewritten window) none may.
//!
//! The test prints the table (`--show-output`; `LAB_MATRIX_OUT=FILE`
//! writes it as TSV too) and asserts the right-kind share
//! ([`RIGHT_FLOOR`]), no middlebox on a clean path, and the share of
//! sides whose receive-window fraction is within 0.15 of the kernel's
//! ([`FRACTION_FLOOR`]). `LAB_MATRIX=bbr,loss` runs only the transfers
//! whose label (`cc/shape/rtt`, as `bbr/loss/50ms`) contains every
//! comma-separated term.
//!
//! One exclusive row: the transfers measure time and run one at a time.

use std::fmt::Write as _;

use lab::{CaseRun, Ctx, Req, Share};
use serde_json::Value;

use crate::common::{kernel_kind, kernel_shares, BOTH, S2C};

/// The row: how it shares the machine and what it needs.
pub struct Case {
    share: Share,
    needs: &'static [Req],
}

/// One shape of the matrix.
pub struct Shape {
    /// The table's name for it.
    pub name: &'static str,
    /// lab.sh's case.
    pub case: &'static str,
    /// A clean path: no middlebox may be named.
    clean: bool,
    /// Slow (a window, a buffer or a writer holds it to a few Mbit/s at
    /// 50 ms): 1 MB at 50 ms instead of 2 MB.
    slow: bool,
    /// The kind it was built with where the kernel's counters cannot see
    /// it (module docs).
    built: Option<&'static str>,
    /// Keeps its own send buffer (the others get one that holds the whole
    /// download, as in the `transfer` suite).
    own_sndbuf: bool,
    /// Built receive-window limited (a small receive buffer, a rewritten
    /// window field): under BBR, whose `tcpi_rwnd_limited` undercounts
    /// (module docs), the shape decides.
    window: bool,
}

const SHAPE: Shape = Shape {
    name: "",
    case: "",
    clean: true,
    slow: false,
    built: None,
    own_sndbuf: false,
    window: false,
};

/// The shapes, in the table's order.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "bulk",
        case: "clean4",
        ..SHAPE
    },
    Shape {
        name: "pausing",
        case: "pause4",
        slow: true,
        built: Some("sender"),
        ..SHAPE
    },
    Shape {
        name: "rcvbuf",
        case: "rcvbuf-small4",
        slow: true,
        window: true,
        ..SHAPE
    },
    Shape {
        name: "sndbuf",
        case: "sndbuf-small4",
        slow: true,
        built: Some("sender"),
        own_sndbuf: true,
        ..SHAPE
    },
    Shape {
        name: "loss",
        case: "loss4",
        ..SHAPE
    },
    Shape {
        name: "tbf",
        case: "tbf4",
        ..SHAPE
    },
    Shape {
        name: "wscale",
        case: "wscale-synack4",
        clean: false,
        ..SHAPE
    },
    Shape {
        name: "rewrite",
        case: "window-rewrite4",
        clean: false,
        slow: true,
        window: true,
        ..SHAPE
    },
];

const CCS: [&str; 3] = ["cubic", "reno", "bbr"];
const RTTS_MS: [u32; 2] = [10, 50];

/// The right-kind share the matrix must reach (of the sides run).
pub const RIGHT_FLOOR: f64 = 0.95;
/// The share of sides whose receive-window fraction is within 0.15 of the
/// kernel's must reach this.
pub const FRACTION_FLOOR: f64 = 0.95;

const NEEDS: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("ip6tables"),
    Req::Tool("tcpdump"),
    Req::Tool("python3"),
    Req::Tool("nft"),
    Req::Tool("tc"),
    Req::Netns,
    Req::Iptables,
    Req::Nft,
    Req::Tbf,
    Req::Congestion("reno"),
    Req::Congestion("bbr"),
];

lab::rows! {
    lab = crate::LABS;
    run = run_matrix;
    type = Case;
    /// Every transfer of the matrix, one at a time, then the table.
    truth => Case { share: Share::Exclusive, needs: NEEDS },
}

/// One side's verdict against the kernel.
struct Side {
    label: String,
    side: &'static str,
    kernel: (f64, f64, f64),
    truth: &'static str,
    built: bool,
    kind: String,
    rwnd: f64,
    sender: f64,
    network: f64,
    idle: f64,
    confidence: String,
    middlebox: Option<String>,
    clean: bool,
    /// The kernel's receive-window counter applies (not BBR on a window it
    /// was built with).
    counters_apply: bool,
}

impl Side {
    fn right(&self) -> bool {
        self.kind == self.truth
    }

    /// Within 0.15 of the kernel's receive-window share (`None`: its
    /// counter does not apply).
    fn fraction_ok(&self) -> Option<bool> {
        self.counters_apply
            .then(|| (self.rwnd - self.kernel.0).abs() <= 0.15)
    }
}

fn selected(label: &str) -> bool {
    match std::env::var("LAB_MATRIX") {
        Ok(f) if !f.trim().is_empty() => f
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .all(|t| label.contains(t)),
        _ => true,
    }
}

fn run_matrix(ctx: &Ctx, _: &Case) {
    let mut sides = Vec::new();
    for cc in CCS {
        for shape in SHAPES {
            for rtt in RTTS_MS {
                let label = format!("{cc}/{}/{rtt}ms", shape.name);
                if !selected(&label) {
                    continue;
                }
                let run = transfer(ctx, cc, shape, rtt);
                for side in BOTH {
                    sides.push(judge(&run, &label, cc, shape, side));
                }
            }
        }
    }
    assert!(!sides.is_empty(), "LAB_MATRIX selects no transfer");
    let table = table(&sides);
    for line in table.lines() {
        lab::note!("{line}");
    }
    if let Ok(out) = std::env::var("LAB_MATRIX_OUT") {
        std::fs::write(&out, &table).unwrap_or_else(|e| panic!("{out}: {e}"));
    }
    let n = sides.len() as f64;
    let right = sides.iter().filter(|s| s.right()).count() as f64 / n;
    let applicable = sides.iter().filter(|s| s.fraction_ok().is_some()).count();
    let fractions = sides
        .iter()
        .filter(|s| s.fraction_ok() == Some(true))
        .count() as f64
        / applicable.max(1) as f64;
    let accused: Vec<&Side> = sides
        .iter()
        .filter(|s| s.clean && s.middlebox.is_some())
        .collect();
    assert!(
        accused.is_empty(),
        "a middlebox named on a clean path: {}",
        accused
            .iter()
            .map(|s| format!(
                "{} {}: {}",
                s.label,
                s.side,
                s.middlebox.as_deref().unwrap_or("")
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    assert!(
        right >= RIGHT_FLOOR,
        "limit kind right on {:.1}% of {} sides, below {:.0}%",
        right * 100.0,
        sides.len(),
        RIGHT_FLOOR * 100.0
    );
    assert!(
        fractions >= FRACTION_FLOOR,
        "receive-window fraction within 0.15 of the kernel's on {:.1}% of the {} sides its counter applies to, below {:.0}%",
        fractions * 100.0,
        applicable,
        FRACTION_FLOOR * 100.0
    );
}

fn transfer(ctx: &Ctx, cc: &str, shape: &Shape, rtt: u32) -> CaseRun {
    let rtt_s = rtt.to_string();
    let bytes = if rtt > 10 && shape.slow {
        "1000000"
    } else {
        "2000000"
    };
    let mut args = vec!["--cc", cc, "--delay-ms", &rtt_s, "--bytes", bytes];
    if !shape.own_sndbuf {
        args.extend(["--server-sndbuf", "4194304"]);
    }
    let chunk;
    if shape.case == "pause4" {
        // One chunk size and pause per transfer, 8 to 64 KB over the
        // matrix (16 and 20 KB at 10 ms: the writers issue 30 saw called
        // receive-window limited). A pause of one RTT leaves one chunk or
        // two in flight by turns; a pause a little longer has each chunk
        // acknowledged just before the next leaves, the same byte in
        // flight every round (a window of 20 KB, read from the flight's
        // plateau, before the plateau asked for whole segments).
        let (bytes, pause) = match (cc, rtt) {
            ("cubic", 10) => (16_384, 10),
            ("reno", 10) => (8_192, 12),
            ("bbr", 10) => (20_480, 11),
            ("cubic", _) => (65_536, 55),
            ("reno", _) => (32_768, 50),
            _ => (49_152, 60),
        };
        chunk = (bytes.to_string(), pause.to_string());
        args.extend(["--pause-ms", &chunk.1, "--chunk-bytes", &chunk.0]);
    }
    ctx.lab_sh(shape.case, &args)
}

/// What a capture says of a middlebox (module docs), if anything.
fn middlebox(v: &Value, l: &Value) -> Option<String> {
    let mut said = Vec::new();
    if let Some(w) = l["window_read_inferred_bytes"].as_u64() {
        said.push(format!("window read {w} (flight plateau)"));
    } else if l["receive_window_evidence"]["kind"] == "flight_plateau" {
        said.push("flight plateau".to_string());
    }
    if v["connections"][0]["negotiated"]["wscale_mismatch"] == true {
        said.push("wscale mismatch".to_string());
    }
    (!said.is_empty()).then(|| said.join(", "))
}

fn judge(run: &CaseRun, label: &str, cc: &str, shape: &Shape, side: &'static str) -> Side {
    let kernel = kernel_shares(run, "server");
    let v = run.tools().analyze(&[], &run.capture(side));
    let conns = v["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 1, "{label} {side}: {v}");
    let l = &conns[0]["directions"][S2C]["limit"];
    let f = |k: &str| l[k].as_f64().unwrap_or(-1.0);
    let idle = f("idle_fraction").max(0.0);
    let by_kernel = kernel_kind(kernel, idle);
    // BBR's tcpi_rwnd_limited undercounts (module docs): its counters do
    // not apply to the window it was built with.
    let bbr_window = cc == "bbr" && shape.window;
    let (truth, built) = match shape.built {
        _ if bbr_window => ("receive_window", by_kernel != "receive_window"),
        Some(k) if by_kernel != "receive_window" && by_kernel != k => (k, true),
        _ => (by_kernel, false),
    };
    Side {
        label: label.to_string(),
        side,
        kernel,
        truth,
        built,
        kind: l["kind"].as_str().unwrap_or("?").to_string(),
        rwnd: f("receive_window_fraction"),
        sender: f("sender_fraction"),
        network: f("network_fraction"),
        idle,
        confidence: l["confidence"].as_str().unwrap_or("-").to_string(),
        middlebox: middlebox(&v, l),
        clean: shape.clean,
        counters_apply: !bbr_window,
    }
}

/// The table: one line per side, then the totals.
fn table(sides: &[Side]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "transfer\tside\tkernel rwnd\tkernel sndbuf\tkernel neither\ttruth\tanalyze\trwnd\tsender\tnetwork\tidle\tconfidence\tmiddlebox\tkind\trwnd within 0.15"
    );
    for s in sides {
        let _ = writeln!(
            t,
            "{}\t{}\t{:.2}\t{:.2}\t{:.2}\t{}{}\t{}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{}\t{}\t{}\t{}",
            s.label,
            s.side,
            s.kernel.0,
            s.kernel.1,
            s.kernel.2,
            s.truth,
            if s.built { "*" } else { "" },
            s.kind,
            s.rwnd,
            s.sender,
            s.network,
            s.idle,
            s.confidence,
            s.middlebox.as_deref().unwrap_or("-"),
            if s.right() { "right" } else { "WRONG" },
            match s.fraction_ok() {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "n/a",
            },
        );
    }
    let n = sides.len();
    let right = sides.iter().filter(|s| s.right()).count();
    let frac = sides
        .iter()
        .filter(|s| s.fraction_ok() == Some(true))
        .count();
    let applicable = sides.iter().filter(|s| s.fraction_ok().is_some()).count();
    let _ = writeln!(
        t,
        "kind right on {right} of {n} sides ({:.1}%); receive-window fraction within 0.15 on {frac} of the {applicable} sides the kernel's counter applies to ({:.1}%); middlebox named on a clean path: {}",
        100.0 * right as f64 / n as f64,
        100.0 * frac as f64 / applicable.max(1) as f64,
        sides
            .iter()
            .filter(|s| s.clean && s.middlebox.is_some())
            .count()
    );
    for cc in CCS {
        let mine: Vec<&Side> = sides
            .iter()
            .filter(|s| s.label.starts_with(&format!("{cc}/")))
            .collect();
        if !mine.is_empty() {
            let _ = writeln!(
                t,
                "{cc}: right on {} of {}",
                mine.iter().filter(|s| s.right()).count(),
                mine.len()
            );
        }
    }
    t
}
