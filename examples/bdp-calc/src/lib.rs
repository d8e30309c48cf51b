//! `bdp-calc`: the window calculator.
//!
//! Answers what a network engineer asks from whatever inputs are given:
//!
//! - `--rate R --rtt T`: the bandwidth-delay product (the window needed) and
//!   the window-scale shift that lets it be advertised;
//! - `--window W --rtt T`: the throughput ceiling of that window;
//! - `--size S` with a rate and/or a window and an RTT: the steady-state
//!   transfer time at `min(rate, window / RTT)`;
//! - `--mss M --rtt T --loss P`: loss-limited throughput (Mathis, Padhye);
//! - `--link NAME`: a predefined link; its TCP goodput after framing stands
//!   in for `--rate` when no rate is given (`--list-links` shows them);
//! - `--host linux`: the Linux settings that let the receiver advertise and
//!   the sender keep in flight the BDP (or `--window`): `tcp_rmem`/`tcp_wmem`
//!   maxima, `rmem_max`/`wmem_max`, window scaling, autotuning, from the
//!   `bdp` crate's buffer model for `--kernel` (default: the newest modelled),
//!   optionally with `--adv-win-scale` (before 6.6) or a measured
//!   `--scaling-ratio` (6.6 and later);
//! - with `--size` and `--rtt`, the transfer time with slow start from an
//!   initial window of 10 segments of `--mss` (or the link's MSS, or 1460
//!   bytes) beside the steady-state time.
//!
//! All arithmetic is done by the `bdp` crate. [`compute`] turns [`Args`]
//! into a [`Report`]; [`render_text`] and [`render_json`] print it. Every
//! input is used or refused: an input that answers nothing (a `--size`
//! without a rate or window, a `--loss` without `--mss`) is an error, so a
//! typo never yields a silently partial answer. A zero round-trip time is
//! refused wherever it is given; a window above RFC 7323's largest,
//! 65535 << 14 bytes, is clamped to it, and the report says so.
//!
//! Each stage has one module: the command line (`args`), reading the values
//! and computing each answer (`compute`; `linux` for the host settings), the
//! report as data (`report`, its tags as enums), its text and JSON
//! (`render`), and the refusals (`error`: [`CliError`], with a typed reason
//! for a bad value, [`BadValue`], and for inputs that do not go together,
//! [`Usage`]).
//!
//! ```
//! use clap::Parser;
//!
//! // The campus firewall of DESIGN.md: 1 Gbit/s at 10 ms needs a
//! // 1,250,000-byte window, window-scale shift 5.
//! let args = bdp_calc::Args::parse_from(["bdp-calc", "--rate", "1Gbps", "--rtt", "10ms"]);
//! let report = bdp_calc::compute(&args).unwrap();
//! assert_eq!(report.bdp_bytes, Some(1_250_000));
//! assert_eq!(report.window_scale_shift, Some(Some(5)));
//! assert!(bdp_calc::render_text(&report).contains("shift 5 for the BDP"));
//!
//! let alone = bdp_calc::Args::parse_from(["bdp-calc", "--rtt", "10ms"]);
//! assert_eq!(
//!     bdp_calc::compute(&alone),
//!     Err(bdp_calc::CliError::Usage(bdp_calc::Usage::RttAlone))
//! );
//! ```

mod args;
mod compute;
mod error;
mod linux;
mod render;
mod report;

pub use args::{Args, Host};
pub use compute::{compute, find_link, parse_loss};
pub use error::{BadValue, CliError, Usage};
pub use linux::parse_scaling_ratio;
pub use render::{links_json, links_text, render_json, render_text};
pub use report::{
    AdviceReport, Inputs, KernelSource, LimitedBy, LinkReport, LinuxReport, MssSource, RateSource,
    Report, WindowOf, WindowShareRule,
};

/// Runs the tool: returns what to print on stdout, or the error for stderr.
pub fn run(args: &Args) -> Result<String, CliError> {
    if args.list_links {
        return Ok(if args.json {
            links_json()
        } else {
            links_text()
        });
    }
    let report = compute(args)?;
    Ok(if args.json {
        render_json(&report)
    } else {
        render_text(&report)
    })
}
