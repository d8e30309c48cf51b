//! The network labs (root): one test binary, one harness (`lab`), one case
//! table per module. Every lab is an ignored test; run them with
//!
//! ```text
//! sudo -E cargo test -p lab -- --ignored          # every lab (and the probe lab)
//! sudo -E cargo test -p lab --test labs -- --ignored firewall::
//! LAB_SKIP=qbss,probe cargo test -p lab -- --ignored
//! ```
//!
//! A lab that cannot run here fails, saying what is missing, unless its
//! skip is asked for by name (`LAB_SKIP`, see the crate's README).
//!
//! - [`firewall`]: `compare` and `analyze` on both sides of real netfilter
//!   rules (lab.sh);
//! - [`transfer`]: bulk transfers held to the sender's `TCP_INFO`: limits,
//!   inferred shifts, advice, series;
//! - [`matrix`]: the truth matrix: congestion control x shape x RTT, each
//!   capture side's `limit` against the sender's `TCP_INFO`;
//! - [`advice`]: the advised buffer applied to the kernel reaches the rate;
//! - [`netfilter`]: `rewrite` byte for byte against TCPMSS and TCPOPTSTRIP;
//! - [`qbss`]: `qbss-model` against `qbss-router` and real sockets;
//! - [`encap`]: `compare` across a real VXLAN tunnel's encapsulation
//!   point (encap-lab.sh): MSS clamping, DSCP and ECN per RFC 6040;
//! - `live` (with the crate's `live` feature, which needs libpcap-dev:
//!   `cargo test -p lab --features live -- --ignored live::`):
//!   `dump`, `analyze` and `compare -i` capturing real transfers.

mod advice;
mod common;
mod encap;
mod firewall;
#[cfg(feature = "live")]
mod live;
mod matrix;
mod netfilter;
mod qbss;
mod transfer;

/// Every lab of this binary.
#[cfg(not(feature = "live"))]
static LABS: lab::Lab = lab::Lab::new(
    lab::bins!(),
    &[
        firewall::ROWS,
        transfer::ROWS,
        matrix::ROWS,
        advice::ROWS,
        netfilter::ROWS,
        qbss::ROWS,
        encap::ROWS,
    ],
);

/// Every lab of this binary, the live-capture lab included.
#[cfg(feature = "live")]
static LABS: lab::Lab = lab::Lab::new(
    lab::bins!(),
    &[
        firewall::ROWS,
        transfer::ROWS,
        matrix::ROWS,
        advice::ROWS,
        netfilter::ROWS,
        qbss::ROWS,
        encap::ROWS,
        live::ROWS,
    ],
);

/// Each row's test is named as its row, in the module of its suite; no name
/// twice.
#[test]
fn rows_are_named_after_their_tests() {
    let mut names: Vec<&str> = LABS.rows().map(|r| r.name()).collect();
    for r in LABS.rows() {
        let suite = lab::select::suite(r.name());
        assert!(
            [
                "firewall",
                "transfer",
                "matrix",
                "advice",
                "netfilter",
                "qbss",
                "encap",
                "live"
            ]
            .contains(&suite),
            "{}",
            r.name()
        );
    }
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "a row name twice");
}

/// Every case of encap-lab.sh (`--list`, no root needed) is a row.
#[test]
fn every_encap_lab_case_has_a_row() {
    let out = std::process::Command::new("bash")
        .arg(lab::run::script_path("encap-lab.sh"))
        .arg("--list")
        .output()
        .expect("bash encap-lab.sh --list");
    assert!(out.status.success(), "{out:?}");
    let used: Vec<&str> = encap::CASES.iter().map(|c| c.1.case()).collect();
    for case in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        assert!(used.contains(&case), "encap-lab.sh case {case} has no row");
    }
}

/// Every case of lab.sh (`lab.sh --list`, no root needed) is a row of some
/// table: a case added to the script without a test fails here.
#[test]
fn every_lab_sh_case_has_a_row() {
    let out = std::process::Command::new("bash")
        .arg(lab::run::script_path("lab.sh"))
        .arg("--list")
        .output()
        .expect("bash lab.sh --list");
    assert!(out.status.success(), "{out:?}");
    let mut used: Vec<&str> = firewall::CASES.iter().map(|c| c.1.case()).collect();
    used.extend(transfer::CASES.iter().map(|c| c.1.case()));
    used.extend(advice::CASES.iter().map(|c| c.1.case()));
    used.extend(matrix::SHAPES.iter().map(|s| s.case));
    for case in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        assert!(used.contains(&case), "lab.sh case {case} has no row");
    }
}
