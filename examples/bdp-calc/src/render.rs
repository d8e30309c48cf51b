//! The report for people (aligned `label: value` lines, in the order of the
//! report's fields) and for scripts (one JSON object), and `--list-links`.

use std::fmt::Write as _;

use bdp::{BitsPerSecond, Bytes, DurationDisplay, TcpIpHeaders};

use bdp::linux::Side;

use crate::report::{
    KernelSource, LimitedBy, LinkReport, LinuxReport, RateSource, Report, WindowOf,
};

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
    if let Some(l) = &r.link {
        link_lines(&mut o, r, l);
    }
    input_lines(&mut o, r);
    window_lines(&mut o, r);
    transfer_lines(&mut o, r);
    if let Some(l) = &r.linux {
        render_linux(&mut o, l);
    }
    loss_lines(&mut o, r);
    o
}

/// `--link`: its rates, framing and goodput.
fn link_lines(o: &mut String, r: &Report, l: &LinkReport) {
    let i = &r.inputs;
    line(o, "link:", format!("{} ({})", l.name, l.description));
    line(o, "  line rate:", rate_text(l.line_bps));
    line(o, "  payload rate:", rate_text(l.payload_bps));
    line(
        o,
        "  framing:",
        format!(
            "{} bytes on the wire per {}-byte IP packet, {} of them TCP/IP headers",
            l.wire_bytes_per_packet,
            i.mtu_bytes.unwrap_or(0),
            i.header_bytes.unwrap_or(0)
        ),
    );
    line(o, "  TCP goodput:", rate_text(l.goodput_bps));
}

/// The rate, RTT, window and size as understood.
fn input_lines(o: &mut String, r: &Report) {
    let i = &r.inputs;
    if let Some(rate) = i.rate_bps {
        let src = match i.rate_source {
            Some(RateSource::Link) => " (link goodput)",
            Some(RateSource::Rate) | None => "",
        };
        line(o, "rate:", format!("{}{src}", rate_text(rate)));
    }
    if let Some(rtt) = i.rtt {
        line(o, "rtt:", DurationDisplay(rtt));
    }
    if let Some(w) = i.window_bytes {
        match i.window_clamped_from_bytes {
            Some(given) => line(
                o,
                "window:",
                format!(
                    "{}, clamped from {given} bytes: RFC 7323's largest window is 65535 << 14",
                    bytes_text(w)
                ),
            ),
            None => line(o, "window:", bytes_text(w)),
        }
    }
    if let Some(size) = i.size_bytes {
        line(o, "size:", bytes_text(size));
    }
}

/// The BDP, the window-scale shift, the window's ceiling and the throughput.
fn window_lines(o: &mut String, r: &Report) {
    if let Some(b) = r.bdp_bytes {
        line(o, "BDP (window needed):", bytes_text(b));
    }
    if let Some(shift) = r.window_scale_shift {
        let of = match r.window_scale_shift_for {
            Some(WindowOf::Bdp) => "the BDP",
            Some(WindowOf::Window) | None => "the window",
        };
        match shift {
            Some(s) => line(
                o,
                "window scale:",
                format!(
                    "shift {s} for {of}; largest window at shift {s}: {}",
                    bytes_text(r.max_window_for_shift_bytes.unwrap_or(0))
                ),
            ),
            None => line(
                o,
                "window scale:",
                format!(
                    "none: {}",
                    r.window_scale_explanation.as_deref().unwrap_or("")
                ),
            ),
        }
        if let Some(l) = r.linux_rcv_wscale {
            line(
                o,
                "  Linux rule:",
                format!(
                    "shift {l} for a receive buffer of that size (clamp(ilog2(space) - 15, 0, 14))"
                ),
            );
        }
    }
    if let Some(c) = r.ceiling_bps {
        line(o, "window ceiling:", rate_text(c));
    }
    if let (Some(t), Some(by)) = (r.throughput_bps, r.limited_by) {
        let by = match by {
            LimitedBy::Rate => "rate",
            LimitedBy::Window => "window",
        };
        line(
            o,
            "throughput:",
            format!("{} (limited by the {by})", rate_text(t)),
        );
    }
}

/// The transfer time, steady and with slow start.
fn transfer_lines(o: &mut String, r: &Report) {
    let i = &r.inputs;
    if let Some(t) = r.transfer_time {
        line(
            o,
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
            o,
            "  with slow start:",
            format!(
                "{:.3} ({rounds} round trips of slow start from an initial window of 10 x {} bytes, {share:.0}% of the time)",
                DurationDisplay(t),
                i.mss_bytes.unwrap_or(0)
            ),
        );
    }
}

/// Loss-limited throughput: Mathis, with delayed ACKs, Padhye.
fn loss_lines(o: &mut String, r: &Report) {
    let i = &r.inputs;
    let Some(m) = r.mathis_bps else {
        return;
    };
    line(
        o,
        "loss-limited:",
        format!(
            "MSS {} bytes, p = {}",
            i.mss_bytes.unwrap_or(0),
            i.loss.unwrap_or(0.0)
        ),
    );
    line(
        o,
        "  Mathis:",
        format!("{} (C = sqrt(3/2))", float_rate_text(m)),
    );
    if let Some(d) = r.mathis_delayed_ack_bps {
        line(
            o,
            "  Mathis delayed ACK:",
            format!("{} (C = sqrt(3/4))", float_rate_text(d)),
        );
    }
    if let Some(p) = r.padhye_bps {
        line(
            o,
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

/// `--host linux`: the kernel, the window share, and each setting with its
/// reason, receiver's first, then the commands.
fn render_linux(o: &mut String, l: &LinuxReport) {
    let src = match l.kernel_source {
        KernelSource::Default => " (the newest modelled; --kernel to choose)",
        KernelSource::Kernel => "",
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
    let of = match l.window_for {
        WindowOf::Bdp => "the BDP",
        WindowOf::Window => "the window given",
    };
    line(
        o,
        "  window:",
        format!("{} ({of})", bytes_text(l.window_bytes)),
    );
    for side in [Side::Receiver, Side::Sender] {
        let mut label = format!("  {side}:");
        for a in l.advice.iter().filter(|a| a.side == side) {
            let op = if a.setting.is_switch() { "=" } else { ">=" };
            line(o, &label, format!("{} {op} {}", a.setting.name(), a.value));
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
