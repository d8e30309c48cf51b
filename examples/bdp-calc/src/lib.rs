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

use bdp::linux::{plan_window, LinuxHost, LinuxKernel, WindowShare};
use bdp::{
    bdp as bdp_of, ceiling, linux_rcv_wscale, mathis, max_window, padhye, parse_duration,
    transfer_time, transfer_time_slow_start, window_scale_shift, BitsPerSecond, Bytes, CalcError,
    DurationDisplay, Limit, Link, MathisConstant, PadhyeParams, TcpIpHeaders, MAX_WINDOW,
};
use clap::Parser;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// Command-line arguments.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "bdp-calc",
    about = "TCP window calculator: bandwidth-delay product, window scaling, throughput ceilings, transfer times, loss-limited throughput",
    after_help = "Units: rates in bits per second (1Gbps, 155.52Mbit/s, 1.544Mbps, 10G); sizes in bytes \
(65535, 64KiB, 1MiB, 1.25MB, 4KB: KB = 1000, KiB = 1024); times with a unit (10ms, 0.55s, 25us).\n\n\
Examples:\n  bdp-calc --rate 1Gbps --rtt 10ms\n  bdp-calc --window 65535 --rtt 10ms\n  \
bdp-calc --size 8MiB --rate 51.84Mbps --window 1MiB --rtt 0.55s\n  bdp-calc --mss 1460 --rtt 100ms --loss 1%\n  \
bdp-calc --link oc3-atm --rtt 70ms --json\n  bdp-calc --rate 1Gbps --rtt 10ms --host linux --kernel 5.15\n  \
bdp-calc --size 8MiB --rate 51.84Mbps --rtt 0.55s\n\n\
Exit status: 0 done (also when standard output is closed early, as by `| head`); 1 runtime error \
(writing the output failed); 2 usage error (an unknown flag, a value that cannot be read, such as a \
zero RTT, or inputs that answer nothing)."
)]
pub struct Args {
    /// Path rate (bottleneck), e.g. 1Gbps, 155.52Mbit/s, 10G.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<String>,
    /// Round-trip time, e.g. 10ms, 0.55s.
    #[arg(long, value_name = "TIME")]
    pub rtt: Option<String>,
    /// TCP window (receive window or buffer), e.g. 65535, 64KiB, 1MiB.
    #[arg(long, value_name = "SIZE")]
    pub window: Option<String>,
    /// Amount of data to transfer, e.g. 8MiB, 100MB.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// TCP maximum segment size, e.g. 1460 (default with --link: MTU minus headers).
    #[arg(long, value_name = "SIZE")]
    pub mss: Option<String>,
    /// Packet loss probability: 0.01 or 1%.
    #[arg(long, value_name = "P")]
    pub loss: Option<String>,
    /// Padhye model: segments acknowledged per ACK (RFC 5348: 1).
    #[arg(long, value_name = "B", default_value_t = 1)]
    pub ack_every: u32,
    /// Padhye model: retransmission timeout (default 4 x RTT, as RFC 5348).
    #[arg(long, value_name = "TIME")]
    pub rto: Option<String>,
    /// A predefined link (see --list-links); its goodput is the rate when --rate is absent.
    #[arg(long, value_name = "NAME")]
    pub link: Option<String>,
    /// IP MTU for --link goodput (default 1500).
    #[arg(long, value_name = "SIZE")]
    pub mtu: Option<String>,
    /// Count IPv6 headers (40 bytes) instead of IPv4 (20) in goodput and MSS.
    #[arg(long)]
    pub ipv6: bool,
    /// Count the TCP timestamps option (12 bytes) in goodput and MSS.
    #[arg(long)]
    pub timestamps: bool,
    /// Print the settings a host needs for the BDP (or --window): only `linux`.
    #[arg(long, value_name = "OS", value_parser = ["linux"])]
    pub host: Option<String>,
    /// With --host linux: the kernel version, e.g. 6.8 or 5.15.0-91-generic (default: the newest modelled, 6.16).
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// With --host linux on a kernel before 6.6: net.ipv4.tcp_adv_win_scale (-31..31; default 1).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub adv_win_scale: Option<i8>,
    /// With --host linux on 6.6 or later: the measured share of the receive buffer advertised as window, e.g. 0.7 or 70% (default 0.5).
    #[arg(long, value_name = "R")]
    pub scaling_ratio: Option<String>,
    /// List the predefined links and exit.
    #[arg(long)]
    pub list_links: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A refusal: the message printed on stderr before exiting with status 2.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CliError {
    /// A flag's value could not be read.
    #[error("--{flag} '{value}': {reason}")]
    BadValue {
        /// The flag, without dashes.
        flag: &'static str,
        /// The value given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// Inputs that answer nothing, or no inputs at all.
    #[error("{0}")]
    Usage(String),
    /// A calculation had no meaningful answer.
    #[error("{0}")]
    Calc(#[from] CalcError),
}

fn bad(flag: &'static str, value: &str, reason: impl ToString) -> CliError {
    CliError::BadValue {
        flag,
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

/// The inputs as understood, echoed in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inputs {
    /// Rate used, bit/s (from --rate, or the link's goodput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// Where the rate came from: "rate" or "link".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_source: Option<&'static str>,
    /// RTT in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_seconds: Option<f64>,
    /// RTT, exact, for text output.
    #[serde(skip)]
    pub rtt: Option<Duration>,
    /// Window in bytes, as used: at most RFC 7323's largest window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_bytes: Option<u64>,
    /// The window given, in bytes, when it exceeded RFC 7323's largest
    /// window (65535 << 14) and `window_bytes` is clamped to that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_clamped_from_bytes: Option<u64>,
    /// Transfer size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// MSS in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mss_bytes: Option<u64>,
    /// Where the MSS came from: "mss" or "link".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mss_source: Option<&'static str>,
    /// Loss probability (0..1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Padhye's b.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_every: Option<u32>,
    /// Padhye's t_RTO in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_seconds: Option<f64>,
    /// Padhye's t_RTO, exact, for text output.
    #[serde(skip)]
    pub rto: Option<Duration>,
    /// Link name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<&'static str>,
    /// IP MTU for the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu_bytes: Option<u64>,
    /// TCP/IP header bytes per packet counted for goodput/MSS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<u64>,
}

/// Link figures in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkReport {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
    /// Line rate, bit/s.
    pub line_bps: u64,
    /// Rate left for framed packets, bit/s.
    pub payload_bps: u64,
    /// Bytes of capacity one MTU-sized packet occupies.
    pub wire_bytes_per_packet: u64,
    /// TCP goodput with full-MTU segments, bit/s.
    pub goodput_bps: u64,
}

/// Everything computed, each field present when the inputs allow it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// The inputs as understood.
    pub inputs: Inputs,
    /// The link, when --link was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkReport>,
    /// Bandwidth-delay product = window needed, bytes (rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bdp_bytes: Option<u64>,
    /// Smallest window-scale shift for the needed window (or the given one); null above RFC 7323's limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scale_shift: Option<Option<u8>>,
    /// Which window the shift is for: "bdp" or "window".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scale_shift_for: Option<&'static str>,
    /// Why the shift is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scale_explanation: Option<String>,
    /// Largest window the shift can advertise, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_window_for_shift_bytes: Option<u64>,
    /// What Linux would announce for a buffer of that size (clamp(ilog2 - 15, 0, 14)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux_rcv_wscale: Option<u8>,
    /// Throughput ceiling of the window at the RTT, bit/s (rounded down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_bps: Option<u64>,
    /// Effective steady-state throughput min(rate, window/RTT), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_bps: Option<u64>,
    /// What limits the throughput: "rate" or "window".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<&'static str>,
    /// Steady-state transfer time of --size, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_seconds: Option<f64>,
    /// Mathis et al. 1997, C = sqrt(3/2), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mathis_bps: Option<f64>,
    /// Mathis with delayed ACKs, C = sqrt(3/4), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mathis_delayed_ack_bps: Option<f64>,
    /// Padhye et al. 1998 as in RFC 5348, bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub padhye_bps: Option<f64>,
    /// Exact transfer time, kept for text output.
    #[serde(skip)]
    pub transfer_time: Option<Duration>,
    /// Transfer time of --size with slow start from 10 segments, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_seconds_slow_start: Option<f64>,
    /// Round trips spent in slow start before the steady state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_start_rounds: Option<u32>,
    /// Bytes sent during those round trips.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_start_bytes: Option<u64>,
    /// Exact slow-start transfer time, kept for text output.
    #[serde(skip)]
    pub transfer_time_slow_start: Option<Duration>,
    /// The Linux settings, with --host linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux: Option<LinuxReport>,
}

/// One setting to change, as in `analyze`'s `advice`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdviceReport {
    /// The setting: a sysctl, with ` max` for the third value of tcp_rmem/tcp_wmem.
    pub setting: &'static str,
    /// The value: at least this many bytes for buffers, exactly this for switches (1).
    pub value: u64,
    /// Why, one sentence.
    pub why: String,
    /// The host it is set on: "receiver" or "sender".
    pub side: &'static str,
    /// A sysctl command that applies it (min and default kept at the kernel's defaults).
    pub command: String,
}

/// The Linux settings for the window (`--host linux`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinuxReport {
    /// Kernel version modelled, "major.minor".
    pub kernel: String,
    /// "kernel" (from --kernel) or "default" (the newest modelled).
    pub kernel_source: &'static str,
    /// The window planned for, bytes.
    pub window_bytes: u64,
    /// Which window: "bdp" or "window".
    pub window_for: &'static str,
    /// "tcp_adv_win_scale" (before 6.6) or "scaling_ratio" (6.6 and later).
    pub window_share_rule: &'static str,
    /// tcp_adv_win_scale used, before 6.6.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_adv_win_scale: Option<i8>,
    /// Scaling ratio used, in 256ths, 6.6 and later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling_ratio_256: Option<u8>,
    /// Share of the receive buffer advertised as window (0..1).
    pub window_share: f64,
    /// Receive buffer that advertises the window = minimum tcp_rmem max, bytes.
    pub receive_buffer_bytes: u64,
    /// SO_RCVBUF request that gives the window = minimum rmem_max, bytes; null when none can.
    pub so_rcvbuf_bytes: Option<u64>,
    /// Send buffer for the window in flight = minimum tcp_wmem max, bytes.
    pub send_buffer_bytes: u64,
    /// SO_SNDBUF request for it = minimum wmem_max, bytes.
    pub so_sndbuf_bytes: u64,
    /// Window-scale shift Linux announces with that tcp_rmem max (or the default, if larger).
    pub rcv_wscale: u8,
    /// The kernel's default tcp_rmem (min, default, max), bytes.
    pub default_tcp_rmem: [u64; 3],
    /// The kernel's default tcp_wmem (min, default, max), bytes.
    pub default_tcp_wmem: [u64; 3],
    /// The settings, receiver's first.
    pub advice: Vec<AdviceReport>,
}

fn parse_rate(flag: &'static str, v: &str) -> Result<BitsPerSecond, CliError> {
    v.parse().map_err(|e| bad(flag, v, e))
}

fn parse_size(flag: &'static str, v: &str) -> Result<Bytes, CliError> {
    v.parse().map_err(|e| bad(flag, v, e))
}

fn parse_time(flag: &'static str, v: &str) -> Result<Duration, CliError> {
    parse_duration(v).map_err(|e| bad(flag, v, e))
}

/// Reads a loss probability: `0.01` or `1%`, in (0, 1].
pub fn parse_loss(v: &str) -> Result<f64, CliError> {
    let t = v.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    if num.is_empty()
        || !num.bytes().all(|b| {
            b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'-' || b == b'+'
        })
    {
        return Err(bad("loss", v, "expected a probability such as 0.01 or 1%"));
    }
    let p: f64 = num
        .parse()
        .map_err(|_| bad("loss", v, "expected a probability such as 0.01 or 1%"))?;
    let p = p / scale;
    if !(p > 0.0 && p <= 1.0) {
        return Err(bad(
            "loss",
            v,
            "loss probability must be in (0, 1], i.e. above 0% and at most 100%",
        ));
    }
    Ok(p)
}

fn headers(args: &Args) -> TcpIpHeaders {
    TcpIpHeaders {
        ip: if args.ipv6 {
            bdp::IpVersion::V6
        } else {
            bdp::IpVersion::V4
        },
        timestamps: args.timestamps,
    }
}

/// Looks a link up, with the list of names in the error.
pub fn find_link(name: &str) -> Result<Link, CliError> {
    Link::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = bdp::LINKS.iter().map(|l| l.name).collect();
        bad(
            "link",
            name,
            format!("unknown link; known: {}", names.join(", ")),
        )
    })
}

/// Computes every answer the inputs allow; refuses inputs that answer nothing.
pub fn compute(args: &Args) -> Result<Report, CliError> {
    let mut r = Report::default();
    let hdrs = headers(args);

    let rtt = args
        .rtt
        .as_deref()
        .map(|v| parse_time("rtt", v))
        .transpose()?;
    if let (Some(v), Some(Duration::ZERO)) = (args.rtt.as_deref(), rtt) {
        return Err(bad("rtt", v, "a round-trip time must be greater than zero"));
    }
    let window_given = args
        .window
        .as_deref()
        .map(|v| parse_size("window", v))
        .transpose()?;
    // RFC 7323 section 2.3: no window above 65535 << 14 can be advertised.
    let window = window_given.map(|w| {
        if w.get() > MAX_WINDOW.get() {
            MAX_WINDOW
        } else {
            w
        }
    });
    let size = args
        .size
        .as_deref()
        .map(|v| parse_size("size", v))
        .transpose()?;
    let explicit_rate = args
        .rate
        .as_deref()
        .map(|v| parse_rate("rate", v))
        .transpose()?;
    let mss_arg = args
        .mss
        .as_deref()
        .map(|v| parse_size("mss", v))
        .transpose()?;
    let loss = args.loss.as_deref().map(parse_loss).transpose()?;
    let rto = args
        .rto
        .as_deref()
        .map(|v| parse_time("rto", v))
        .transpose()?;
    if let (Some(v), Some(Duration::ZERO)) = (args.rto.as_deref(), rto) {
        return Err(bad(
            "rto",
            v,
            "a retransmission timeout must be greater than zero",
        ));
    }
    let mtu = args
        .mtu
        .as_deref()
        .map(|v| parse_size("mtu", v))
        .transpose()?;

    if mtu.is_some() && args.link.is_none() {
        return Err(CliError::Usage(
            "--mtu applies to --link; give a link".into(),
        ));
    }
    if (args.ipv6 || args.timestamps) && args.link.is_none() {
        return Err(CliError::Usage(
            "--ipv6 and --timestamps apply to --link goodput and MSS; give a link".into(),
        ));
    }
    if loss.is_none() && (rto.is_some() || args.ack_every != 1) {
        return Err(CliError::Usage(
            "--rto and --ack-every apply to --loss; give a loss".into(),
        ));
    }

    let link = match args.link.as_deref() {
        Some(name) => {
            let mut l = find_link(name)?;
            if let Some(m) = mtu {
                l = l.with_mtu(m);
            }
            let goodput = l.goodput(hdrs)?;
            r.link = Some(LinkReport {
                name: l.name,
                description: l.description,
                line_bps: l.line_rate.get(),
                payload_bps: l.payload_rate.get(),
                wire_bytes_per_packet: l.wire_bytes(l.mtu)?.get(),
                goodput_bps: goodput.get(),
            });
            r.inputs.link = Some(l.name);
            r.inputs.mtu_bytes = Some(l.mtu.get());
            r.inputs.header_bytes = Some(hdrs.header_bytes());
            Some((l, goodput))
        }
        None => None,
    };

    let rate = match (explicit_rate, link) {
        (Some(x), _) => {
            r.inputs.rate_source = Some("rate");
            Some(x)
        }
        (None, Some((_, goodput))) => {
            r.inputs.rate_source = Some("link");
            Some(goodput)
        }
        (None, None) => None,
    };
    r.inputs.rate_bps = rate.map(BitsPerSecond::get);
    r.inputs.rtt_seconds = rtt.map(|d| d.as_secs_f64());
    r.inputs.rtt = rtt;
    r.inputs.window_bytes = window.map(Bytes::get);
    r.inputs.window_clamped_from_bytes = window_given
        .filter(|w| w.get() > MAX_WINDOW.get())
        .map(Bytes::get);
    r.inputs.size_bytes = size.map(Bytes::get);

    if rtt.is_none() && size.is_none() && (window.is_some() || explicit_rate.is_some()) {
        return Err(CliError::Usage(
            "--rate and --window need --rtt (or --size, for a transfer time)".into(),
        ));
    }

    // Bandwidth-delay product and the shift it needs.
    if let (Some(rate), Some(rtt)) = (rate, rtt) {
        let b = bdp_of(rate, rtt)?;
        r.bdp_bytes = Some(b.get());
        shift_report(&mut r, b, "bdp");
    } else if let (Some(w), Some(_)) = (window, rtt) {
        shift_report(&mut r, w, "window");
    }

    // Ceiling of the window, and the effective throughput.
    if let (Some(w), Some(rtt)) = (window, rtt) {
        let c = ceiling(w, rtt)?;
        r.ceiling_bps = Some(c.get());
        match rate {
            Some(rate) if rate <= c => {
                r.throughput_bps = Some(rate.get());
                r.limited_by = Some("rate");
            }
            Some(_) => {
                r.throughput_bps = Some(c.get());
                r.limited_by = Some("window");
            }
            None => {}
        }
    }

    // Transfer time.
    if let Some(size) = size {
        if window.is_some() && rtt.is_none() {
            return Err(CliError::Usage(
                "--window needs --rtt for a transfer time".into(),
            ));
        }
        let win = window.zip(rtt);
        if rate.is_none() && win.is_none() {
            return Err(CliError::Usage(
                "--size needs --rate (or --link), or --window with --rtt".into(),
            ));
        }
        let t = transfer_time(size, rate, win)?;
        r.transfer_seconds = Some(t.time.as_secs_f64());
        r.transfer_time = Some(t.time);
        r.throughput_bps = Some(t.throughput.get());
        r.limited_by = Some(match t.limit {
            Limit::Rate => "rate",
            Limit::Window => "window",
        });
    }

    // Loss-limited throughput.
    let mss = match (mss_arg, link) {
        (Some(m), _) => {
            r.inputs.mss_source = Some("mss");
            Some(m)
        }
        (None, Some((l, _))) if loss.is_some() => {
            r.inputs.mss_source = Some("link");
            Some(hdrs.mss(l.mtu)?)
        }
        _ => None,
    };
    r.inputs.mss_bytes = mss.map(Bytes::get);
    match (mss, loss) {
        (Some(mss), Some(p)) => {
            let rtt = rtt.ok_or_else(|| CliError::Usage("--loss needs --rtt".into()))?;
            r.inputs.loss = Some(p);
            r.inputs.ack_every = Some(args.ack_every);
            let t_rto = match rto {
                Some(t) => t,
                None => rtt
                    .checked_mul(4)
                    .ok_or(CalcError::Overflow { what: "t_RTO" })?,
            };
            r.inputs.rto_seconds = Some(t_rto.as_secs_f64());
            r.inputs.rto = Some(t_rto);
            r.mathis_bps = Some(mathis(mss, rtt, p, MathisConstant::Periodic)?);
            r.mathis_delayed_ack_bps = Some(mathis(mss, rtt, p, MathisConstant::DelayedAck)?);
            let params = PadhyeParams {
                b: args.ack_every,
                t_rto: rto,
                max_window: None,
            };
            r.padhye_bps = Some(padhye(mss, rtt, p, params)?);
        }
        (Some(_), None) if size.is_none() || rtt.is_none() => {
            return Err(CliError::Usage(
                "--mss needs --loss and --rtt, or --size and --rtt (slow start)".into(),
            ));
        }
        (Some(_), None) => {}
        (None, Some(_)) => {
            return Err(CliError::Usage(
                "--loss needs --mss (or --link) and --rtt".into(),
            ));
        }
        (None, None) => {}
    }

    // Transfer time with slow start.
    if let (Some(size), Some(rtt)) = (size, rtt) {
        let ss_mss = match (mss_arg, link) {
            (Some(m), _) => {
                r.inputs.mss_source = Some("mss");
                m
            }
            (None, Some((l, _))) => {
                r.inputs.mss_source = Some("link");
                hdrs.mss(l.mtu)?
            }
            (None, None) => {
                r.inputs.mss_source = Some("default");
                Bytes::new(DEFAULT_MSS)
            }
        };
        r.inputs.mss_bytes = Some(ss_mss.get());
        let t = transfer_time_slow_start(size, ss_mss, rate, window, rtt)?;
        r.transfer_seconds_slow_start = Some(t.time.as_secs_f64());
        r.transfer_time_slow_start = Some(t.time);
        r.slow_start_rounds = Some(t.slow_start_rounds);
        r.slow_start_bytes = Some(t.slow_start_bytes.get());
    }

    // Linux settings.
    match args.host.as_deref() {
        Some(_) => r.linux = Some(linux_report(args, &r, window)?),
        None => {
            if args.kernel.is_some() || args.adv_win_scale.is_some() || args.scaling_ratio.is_some()
            {
                return Err(CliError::Usage(
                    "--kernel, --adv-win-scale and --scaling-ratio apply to --host linux".into(),
                ));
            }
        }
    }

    let answered = r.bdp_bytes.is_some()
        || r.ceiling_bps.is_some()
        || r.transfer_seconds.is_some()
        || r.mathis_bps.is_some()
        || r.link.is_some();
    if !answered {
        if rtt.is_some() {
            return Err(CliError::Usage(
                "--rtt alone answers nothing: add --rate, --link, --window, or --mss with --loss"
                    .into(),
            ));
        }
        return Err(CliError::Usage(
            "nothing to compute: give --rate (or --link) with --rtt, --window with --rtt, \
--size with a rate or window, or --mss with --rtt and --loss (see --help)"
                .into(),
        ));
    }
    Ok(r)
}

/// MSS for slow start when neither --mss nor --link gives one: IPv4 in a
/// 1500-byte MTU without TCP options.
const DEFAULT_MSS: u64 = 1460;

/// Reads a scaling ratio: `0.7` or `70%`, as 256ths (1..=255).
pub fn parse_scaling_ratio(v: &str) -> Result<u8, CliError> {
    let t = v.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    let why = "expected the share of the receive buffer advertised as window, such as 0.7 or 70%";
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad("scaling-ratio", v, why));
    }
    let f: f64 = num.parse().map_err(|_| bad("scaling-ratio", v, why))?;
    let n = (f / scale * 256.0).round();
    if !(1.0..=255.0).contains(&n) {
        return Err(bad(
            "scaling-ratio",
            v,
            "the kernel keeps the ratio in 256ths: from 1/256 to 255/256 (0.004 to 0.996)",
        ));
    }
    Ok(n as u8)
}

fn linux_report(args: &Args, r: &Report, window: Option<Bytes>) -> Result<LinuxReport, CliError> {
    let (kernel, kernel_source) = match args.kernel.as_deref() {
        Some(v) => (
            v.parse::<LinuxKernel>().map_err(|e| bad("kernel", v, e))?,
            "kernel",
        ),
        None => (LinuxKernel::LATEST, "default"),
    };
    let mut host = LinuxHost::new(kernel);
    if let Some(s) = args.adv_win_scale {
        let v = s.to_string();
        if kernel.has_scaling_ratio() {
            return Err(bad(
                "adv-win-scale",
                &v,
                format!("tcp_adv_win_scale is obsolete since Linux 6.6 (kernel {kernel}); give a measured --scaling-ratio instead"),
            ));
        }
        if !(-31..=31).contains(&s) {
            return Err(bad("adv-win-scale", &v, "the kernel accepts -31 to 31"));
        }
        host = host.with_share(WindowShare::AdvWinScale(s));
    }
    if let Some(v) = args.scaling_ratio.as_deref() {
        if !kernel.has_scaling_ratio() {
            return Err(bad(
                "scaling-ratio",
                v,
                format!(
                    "the scaling ratio exists from Linux 6.6; kernel {kernel} uses --adv-win-scale"
                ),
            ));
        }
        host = host.with_share(WindowShare::ScalingRatio(parse_scaling_ratio(v)?));
    }
    let (w, window_for) = match (r.bdp_bytes, window) {
        (Some(b), _) => (Bytes::new(b), "bdp"),
        (None, Some(w)) => (w, "window"),
        (None, None) => {
            return Err(CliError::Usage(
                "--host linux needs a window: --rate (or --link) with --rtt, or --window".into(),
            ))
        }
    };
    let p = plan_window(w, host)?;
    let (rule, adv, ratio) = match host.share {
        WindowShare::AdvWinScale(s) => ("tcp_adv_win_scale", Some(s), None),
        WindowShare::ScalingRatio(q) => ("scaling_ratio", None, Some(q)),
    };
    let unit = Bytes::new(1 << 20);
    let advice = p
        .all_advice()
        .iter()
        .map(|a| AdviceReport {
            setting: a.setting.name(),
            value: a.value,
            why: a.why.to_string(),
            side: a.setting.side().name(),
            command: a.command(kernel).to_string(),
        })
        .collect();
    Ok(LinuxReport {
        kernel: kernel.to_string(),
        kernel_source,
        window_bytes: w.get(),
        window_for,
        window_share_rule: rule,
        tcp_adv_win_scale: adv,
        scaling_ratio_256: ratio,
        window_share: host.share.window_from_space(unit).get() as f64 / unit.get() as f64,
        receive_buffer_bytes: p.receive_buffer.get(),
        so_rcvbuf_bytes: p.so_rcvbuf.map(Bytes::get),
        send_buffer_bytes: p.send_buffer.get(),
        so_sndbuf_bytes: p.so_sndbuf.get(),
        rcv_wscale: p.rcv_wscale,
        default_tcp_rmem: kernel.default_tcp_rmem(),
        default_tcp_wmem: kernel.default_tcp_wmem(),
        advice,
    })
}

fn shift_report(r: &mut Report, window: Bytes, of: &'static str) {
    r.window_scale_shift_for = Some(of);
    r.linux_rcv_wscale = Some(linux_rcv_wscale(window));
    match window_scale_shift(window) {
        Ok(s) => {
            r.window_scale_shift = Some(Some(s));
            r.max_window_for_shift_bytes = max_window(s).ok().map(Bytes::get);
        }
        Err(_) => {
            r.window_scale_shift = Some(None);
            let consequence = if of == "bdp" {
                "; one TCP connection cannot keep this path full"
            } else {
                ""
            };
            r.window_scale_explanation = Some(format!(
                "{} bytes exceeds RFC 7323's largest window, {} bytes (65535 << 14): no window-scale shift can advertise it{consequence}",
                window.get(),
                MAX_WINDOW.get()
            ));
        }
    }
}

fn bytes_text(b: u64) -> String {
    let b = Bytes::new(b);
    if b.get() < 1000 {
        format!("{} bytes", b.get())
    } else {
        format!("{} bytes ({:.2}, {:.2})", b.get(), b.si(), b.binary())
    }
}

fn rate_text(bps: u64) -> String {
    let r = BitsPerSecond::new(bps);
    if bps < 1000 {
        format!("{r}")
    } else {
        format!("{r:.3} ({bps} bit/s)")
    }
}

fn float_rate_text(bps: f64) -> String {
    match bdp::loss::to_rate(bps) {
        Some(r) => format!("{r:.3}"),
        None => format!("{bps} bit/s"),
    }
}

/// Width of the label column in text output.
const LABEL: usize = 22;

fn line(o: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(o, "{label:<LABEL$}{value}");
}

/// The report for people.
pub fn render_text(r: &Report) -> String {
    let mut o = String::new();
    let i = &r.inputs;
    if let Some(l) = &r.link {
        line(&mut o, "link:", format!("{} ({})", l.name, l.description));
        line(&mut o, "  line rate:", rate_text(l.line_bps));
        line(&mut o, "  payload rate:", rate_text(l.payload_bps));
        line(
            &mut o,
            "  framing:",
            format!(
                "{} bytes on the wire per {}-byte IP packet, {} of them TCP/IP headers",
                l.wire_bytes_per_packet,
                i.mtu_bytes.unwrap_or(0),
                i.header_bytes.unwrap_or(0)
            ),
        );
        line(&mut o, "  TCP goodput:", rate_text(l.goodput_bps));
    }
    if let Some(rate) = i.rate_bps {
        let src = if i.rate_source == Some("link") {
            " (link goodput)"
        } else {
            ""
        };
        line(&mut o, "rate:", format!("{}{src}", rate_text(rate)));
    }
    if let Some(rtt) = i.rtt {
        line(&mut o, "rtt:", DurationDisplay(rtt));
    }
    if let Some(w) = i.window_bytes {
        match i.window_clamped_from_bytes {
            Some(given) => line(
                &mut o,
                "window:",
                format!(
                    "{}, clamped from {given} bytes: RFC 7323's largest window is 65535 << 14",
                    bytes_text(w)
                ),
            ),
            None => line(&mut o, "window:", bytes_text(w)),
        }
    }
    if let Some(size) = i.size_bytes {
        line(&mut o, "size:", bytes_text(size));
    }
    if let Some(b) = r.bdp_bytes {
        line(&mut o, "BDP (window needed):", bytes_text(b));
    }
    if let Some(shift) = r.window_scale_shift {
        let of = if r.window_scale_shift_for == Some("bdp") {
            "the BDP"
        } else {
            "the window"
        };
        match shift {
            Some(s) => line(
                &mut o,
                "window scale:",
                format!(
                    "shift {s} for {of}; largest window at shift {s}: {}",
                    bytes_text(r.max_window_for_shift_bytes.unwrap_or(0))
                ),
            ),
            None => line(
                &mut o,
                "window scale:",
                format!(
                    "none: {}",
                    r.window_scale_explanation.as_deref().unwrap_or("")
                ),
            ),
        }
        if let Some(l) = r.linux_rcv_wscale {
            line(
                &mut o,
                "  Linux rule:",
                format!(
                    "shift {l} for a receive buffer of that size (clamp(ilog2(space) - 15, 0, 14))"
                ),
            );
        }
    }
    if let Some(c) = r.ceiling_bps {
        line(&mut o, "window ceiling:", rate_text(c));
    }
    if let (Some(t), Some(by)) = (r.throughput_bps, r.limited_by) {
        line(
            &mut o,
            "throughput:",
            format!("{} (limited by the {by})", rate_text(t)),
        );
    }
    if let Some(t) = r.transfer_time {
        line(
            &mut o,
            "transfer time:",
            format!("{:.3} (steady state, no slow start)", DurationDisplay(t)),
        );
    }
    if let (Some(t), Some(rounds)) = (r.transfer_time_slow_start, r.slow_start_rounds) {
        let ss = i.rtt.unwrap_or_default().saturating_mul(rounds);
        let share = if t.is_zero() {
            0.0
        } else {
            ss.as_secs_f64() / t.as_secs_f64() * 100.0
        };
        line(
            &mut o,
            "  with slow start:",
            format!(
                "{:.3} ({rounds} round trips of slow start from an initial window of 10 x {} bytes, {share:.0}% of the time)",
                DurationDisplay(t),
                i.mss_bytes.unwrap_or(0)
            ),
        );
    }
    if let Some(l) = &r.linux {
        render_linux(&mut o, l);
    }
    if let Some(m) = r.mathis_bps {
        line(
            &mut o,
            "loss-limited:",
            format!(
                "MSS {} bytes, p = {}",
                i.mss_bytes.unwrap_or(0),
                i.loss.unwrap_or(0.0)
            ),
        );
        line(
            &mut o,
            "  Mathis:",
            format!("{} (C = sqrt(3/2))", float_rate_text(m)),
        );
        if let Some(d) = r.mathis_delayed_ack_bps {
            line(
                &mut o,
                "  Mathis delayed ACK:",
                format!("{} (C = sqrt(3/4))", float_rate_text(d)),
            );
        }
        if let Some(p) = r.padhye_bps {
            line(
                &mut o,
                "  Padhye:",
                format!(
                    "{} (RFC 5348 form, b = {}, t_RTO = {})",
                    float_rate_text(p),
                    i.ack_every.unwrap_or(1),
                    DurationDisplay(i.rto.unwrap_or_default())
                ),
            );
        }
    }
    o
}

fn render_linux(o: &mut String, l: &LinuxReport) {
    let src = if l.kernel_source == "default" {
        " (the newest modelled; --kernel to choose)"
    } else {
        ""
    };
    line(o, "Linux host:", format!("kernel {}{src}", l.kernel));
    let share = match (l.tcp_adv_win_scale, l.scaling_ratio_256) {
        (Some(s), _) => format!("tcp_adv_win_scale = {s}"),
        (_, Some(q)) => format!("scaling ratio {q}/256"),
        _ => String::new(),
    };
    line(
        o,
        "  window share:",
        format!(
            "{:.1}% of the receive buffer is advertised as window ({share})",
            l.window_share * 100.0
        ),
    );
    let of = if l.window_for == "bdp" {
        "the BDP"
    } else {
        "the window given"
    };
    line(
        o,
        "  window:",
        format!("{} ({of})", bytes_text(l.window_bytes)),
    );
    for side in ["receiver", "sender"] {
        let mut label = format!("  {side}:");
        for a in l.advice.iter().filter(|a| a.side == side) {
            let op = if a.setting.ends_with(" max") || a.setting.ends_with("mem_max") {
                ">="
            } else {
                "="
            };
            line(o, &label, format!("{} {op} {}", a.setting, a.value));
            line(o, "", format!("  {}", a.why));
            label.clear();
        }
    }
    let mut label = "  commands:".to_string();
    for a in &l.advice {
        line(o, &label, &a.command);
        label.clear();
    }
}

/// The report as one JSON object.
pub fn render_json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|_| "{}".to_string())
}

/// `--list-links` as text.
pub fn links_text() -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<14} {:>16} {:>16} {:>16}  description",
        "name", "line rate", "payload rate", "TCP goodput*"
    );
    for l in bdp::LINKS {
        let g = l
            .goodput(TcpIpHeaders::IPV4)
            .map(|g| format!("{g:.3}"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "{:<14} {:>16} {:>16} {:>16}  {}",
            l.name,
            format!("{:.3}", l.line_rate),
            format!("{:.3}", l.payload_rate),
            g,
            l.description
        );
    }
    let _ = writeln!(o, "* IPv4, no TCP options, 1500-byte MTU");
    o
}

/// `--list-links` as JSON.
pub fn links_json() -> String {
    let links: Vec<LinkReport> = bdp::LINKS
        .iter()
        .filter_map(|l| {
            Some(LinkReport {
                name: l.name,
                description: l.description,
                line_bps: l.line_rate.get(),
                payload_bps: l.payload_rate.get(),
                wire_bytes_per_packet: l.wire_bytes(l.mtu).ok()?.get(),
                goodput_bps: l.goodput(TcpIpHeaders::IPV4).ok()?.get(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "links": links }))
        .unwrap_or_else(|_| "{}".to_string())
}

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
