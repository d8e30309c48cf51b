//! Output: the iperf-like text report, the JSON object and the CSV table.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use super::scenario::{Scenario, StreamKind};
use super::sched::{ClassSpec, SaturationSpec};
use super::sim::RunResult;
use super::time::NS_PER_S;
use super::vc::VcKind;

/// `1234567` -> `"1.23 Mbits/sec"`, in iperf's units.
pub fn format_rate(bps: f64) -> String {
    let (v, unit) = if bps >= 1e9 {
        (bps / 1e9, "Gbits/sec")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbits/sec")
    } else if bps >= 1e3 {
        (bps / 1e3, "Kbits/sec")
    } else {
        (bps, "bits/sec")
    };
    format!("{v:.2} {unit}")
}

fn format_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MBytes", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KBytes", b / 1024.0)
    } else {
        format!("{b:.0} Bytes")
    }
}

fn dscp_name(ds: u8) -> String {
    dscp::DsField::new(ds).dscp().to_string()
}

fn kind_name(k: &StreamKind) -> &'static str {
    match k {
        StreamKind::Udp { .. } => "udp",
        StreamKind::Tcp { .. } => "tcp",
    }
}

fn class_text(c: ClassSpec) -> String {
    match c {
        ClassSpec::Weighted(w) => format!("weight {w}"),
        ClassSpec::Scavenger(w) => format!("scavenger weight {w}"),
        ClassSpec::Priority => "strict priority".into(),
    }
}

/// The link's IP goodput for the scenario's packet size, in bit/s.
pub fn link_goodput(sc: &Scenario) -> u64 {
    sc.link.goodput_bps(sc.reference_packet_bytes())
}

/// The VC's IP goodput for the scenario's packet size, in bit/s (its rate on the
/// wire less the framing); `None` without a VC.
pub fn vc_goodput(sc: &Scenario) -> Option<f64> {
    let size = sc.reference_packet_bytes();
    sc.vc
        .map(|vc| vc.rate_bps as f64 * f64::from(size) / sc.link.wire_bytes(size) as f64)
}

/// The scenario's header: link, VC, scheduler, classifier and streams.
pub fn header(sc: &Scenario) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "qbss-model: {}", sc.name);
    for l in sc.description.lines() {
        let _ = writeln!(o, "  {l}");
    }
    let size = sc.reference_packet_bytes();
    let _ = writeln!(
        o,
        "link: {}, {} on the line, {} payload, {} goodput for {size}-byte packets",
        sc.link.name,
        format_rate(sc.link.line_bps as f64),
        format_rate(sc.link.payload_bps as f64),
        format_rate(link_goodput(sc) as f64),
    );
    if let Some(vc) = sc.vc {
        let kind = match vc.kind {
            VcKind::Policed => format!("policed (token bucket of {} bytes)", vc.burst_bytes),
            VcKind::Shaped => "shaped (the scheduler is served at the VC rate)".to_string(),
        };
        let _ = writeln!(
            o,
            "vc: {} on the wire ({} goodput), {kind}",
            format_rate(vc.rate_bps as f64),
            format_rate(vc_goodput(sc).unwrap_or(0.0))
        );
    }
    let sat = match sc.scheduler.saturation {
        SaturationSpec::WorkConserving => "work-conserving WRR".to_string(),
        SaturationSpec::Forced => "WRR forced on every packet (transmit-buffers)".to_string(),
        SaturationSpec::WhenSaturatedPackets(n) => {
            format!("WRR only when saturated (backlog >= {n} packets)")
        }
        SaturationSpec::WhenSaturatedBytes(n) => {
            format!("WRR only when saturated (backlog >= {n} bytes)")
        }
    };
    let fair = match sc.scheduler.fairness_mtu {
        Some(m) => format!("byte fairness, quantum = weight x {m}"),
        None => "packet fairness".to_string(),
    };
    let _ = writeln!(o, "scheduler: {sat}, {fair}");
    for (i, q) in sc.scheduler.queues.iter().enumerate() {
        let limit = if q.limit_packets == super::sched::QUEUE_CAPACITY {
            String::new()
        } else {
            format!(", limit {} packets", q.limit_packets)
        };
        let _ = writeln!(o, "  queue {i} {}: {}{limit}", q.name, class_text(q.class));
    }
    for (i, s) in sc.streams.iter().enumerate() {
        let ds = dscp::DsField::new(s.ds);
        let q = sc.classifier.queue(s.ds);
        let what = match s.kind {
            StreamKind::Udp { rate_bps } => format!("udp {}", format_rate(rate_bps as f64)),
            StreamKind::Tcp {
                rtt_ns,
                window_packets,
                cc,
                ..
            } => format!(
                "tcp {} rtt {} ms, window {window_packets} packets",
                cc.name(),
                rtt_ns as f64 / 1e6
            ),
        };
        let _ = writeln!(
            o,
            "stream {} {}: {what}, {}-byte packets, {} (precedence {:03b}, TOS 0x{:02x}) -> queue {q}, {:.1}-{:.1} s",
            i + 1,
            s.name,
            s.packet_bytes,
            ds.dscp(),
            ds.precedence().value(),
            s.ds,
            s.start_ns as f64 / 1e9,
            s.stop_ns as f64 / 1e9,
        );
    }
    o
}

/// Writes the iperf-like per-second report and the summary.
pub fn write_text(w: &mut dyn Write, sc: &Scenario, res: &RunResult) -> io::Result<()> {
    w.write_all(header(sc).as_bytes())?;
    writeln!(w)?;
    let name_w = sc
        .streams
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(4)
        .max(6);
    writeln!(
        w,
        "[ ID] {:<name_w$} {:>11}      {:>12}  {:>17}  {:>7}  {:>7}",
        "Stream", "Interval", "Transfer", "Bandwidth", "Packets", "Drops"
    )?;
    for i in 0..res.intervals.len() {
        let (t0, t1) = (i as u64 * NS_PER_S, (i as u64 + 1) * NS_PER_S);
        for (k, s) in sc.streams.iter().enumerate() {
            let c = res.intervals.cell(i, k);
            let active = s.start_ns < t1 && s.stop_ns > t0;
            if !active && c.packets == 0 && c.drops == 0 {
                continue;
            }
            writeln!(
                w,
                "[{:3}] {:<name_w$} {:>11} sec  {:>12}  {:>17}  {:>7}  {:>7}",
                k + 1,
                s.name,
                format!("{i}.0-{}.0", i + 1),
                format_bytes(c.bytes),
                format_rate((c.bytes * 8) as f64),
                c.packets,
                c.drops,
            )?;
        }
        let mut line = String::new();
        for q in 0..sc.scheduler.queues.len() {
            let b = res.intervals.backlog(i, q);
            let _ = write!(line, "  q{q} {} pkts", b.packets);
        }
        writeln!(
            w,
            "[  Q] {:<name_w$} {:>11} sec  backlog:{line}",
            "queues",
            format!("{}.0", i + 1)
        )?;
    }
    writeln!(w)?;
    writeln!(w, "Summary over {} s:", sc.duration_s)?;
    for (k, s) in sc.streams.iter().enumerate() {
        let t = res.intervals.total(k, 0, res.intervals.len());
        let tot = res.totals[k];
        let active_s =
            ((s.stop_ns.min(sc.duration_ns()).saturating_sub(s.start_ns)) as f64 / 1e9).max(1e-9);
        let lost = if tot.sent > 0 {
            100.0 * t.drops as f64 / tot.sent as f64
        } else {
            0.0
        };
        let mut extra = String::new();
        if let StreamKind::Tcp { .. } = s.kind {
            extra = format!(
                ", {} retransmits, {} timeouts",
                tot.retransmits, tot.timeouts
            );
        }
        writeln!(
            w,
            "[{:3}] {:<name_w$} sent {} packets, received {} ({} while active), dropped {} ({lost:.1}%){extra}",
            k + 1,
            s.name,
            tot.sent,
            t.packets,
            format_rate((t.bytes * 8) as f64 / active_s),
            t.drops,
        )?;
    }
    for (q, st) in res.queue_stats.iter().enumerate() {
        writeln!(
            w,
            "[  Q] queue {q} {}: dequeued {} packets, dropped {}, peak backlog {} packets",
            sc.scheduler.queues[q].name,
            st.dequeued_packets,
            st.dropped_packets,
            st.peak_backlog_packets
        )?;
    }
    Ok(())
}

/// The `--json` object. Field order is the order of the schema.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JsonReport {
    /// Scenario name.
    pub scenario: String,
    /// The link and its goodput.
    pub link: JsonLink,
    /// The streams.
    pub streams: Vec<JsonStream>,
    /// One-second intervals from 0.
    pub intervals: Vec<JsonInterval>,
    /// The factor every rate was divided by (`--scale`; absent when not scaled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
}

/// The link in the JSON report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JsonLink {
    /// Link name.
    pub name: String,
    /// IP goodput for the scenario's packet size.
    pub bits_per_second: u64,
}

/// A stream in the JSON report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JsonStream {
    /// Stream name.
    pub name: String,
    /// DSCP value (0-63).
    pub dscp: u8,
    /// Output queue the classifier chose.
    pub queue: u8,
    /// DSCP short name (`CS1`).
    pub dscp_name: String,
    /// IP precedence (0-7).
    pub precedence: u8,
    /// The whole DS field / TOS byte.
    pub tos: u8,
    /// `udp` or `tcp`.
    pub kind: &'static str,
    /// IP packet length.
    pub packet_bytes: u32,
    /// Start time.
    pub start_s: f64,
    /// Stop time.
    pub stop_s: f64,
    /// UDP: offered rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_bits_per_second: Option<u64>,
    /// TCP: base RTT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<f64>,
    /// TCP: congestion control (`cubic`, `reno`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<&'static str>,
    /// Packets sent.
    pub sent_packets: u64,
    /// Packets received (new data).
    pub received_packets: u64,
    /// Packets dropped.
    pub dropped_packets: u64,
    /// TCP: retransmissions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// TCP: retransmission timeouts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<u64>,
}

/// One interval in the JSON report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JsonInterval {
    /// Start, seconds.
    pub start_s: u64,
    /// End, seconds.
    pub end_s: u64,
    /// Per-stream figures.
    pub streams: Vec<JsonIntervalStream>,
}

/// A stream's figures in one interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JsonIntervalStream {
    /// Stream name.
    pub name: String,
    /// Received bit/s (IP packets of new data).
    pub bits_per_second: u64,
    /// Packets received.
    pub packets: u64,
    /// Packets dropped.
    pub drops: u64,
}

/// The JSON object: `{"scenario", "link": {"name", "bits_per_second"}, "streams": [...],
/// "intervals": [{"start_s", "end_s", "streams": [{"name", "bits_per_second", "packets",
/// "drops"}]}]}`.
pub fn to_json(sc: &Scenario, res: &RunResult) -> JsonReport {
    let streams = sc
        .streams
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let ds = dscp::DsField::new(s.ds);
            let tot = res.totals[k];
            let t = res.intervals.total(k, 0, res.intervals.len());
            let (offered, rtt, cc, retx, rto) = match s.kind {
                StreamKind::Udp { rate_bps } => (Some(rate_bps), None, None, None, None),
                StreamKind::Tcp { rtt_ns, cc, .. } => (
                    None,
                    Some(rtt_ns as f64 / 1e6),
                    Some(cc.name()),
                    Some(tot.retransmits),
                    Some(tot.timeouts),
                ),
            };
            JsonStream {
                name: s.name.clone(),
                dscp: ds.dscp().value(),
                queue: sc.classifier.queue(s.ds),
                dscp_name: dscp_name(s.ds),
                precedence: ds.precedence().value(),
                tos: s.ds,
                kind: kind_name(&s.kind),
                packet_bytes: s.packet_bytes,
                start_s: s.start_ns as f64 / 1e9,
                stop_s: s.stop_ns as f64 / 1e9,
                offered_bits_per_second: offered,
                rtt_ms: rtt,
                cc,
                sent_packets: tot.sent,
                received_packets: t.packets,
                dropped_packets: t.drops,
                retransmits: retx,
                timeouts: rto,
            }
        })
        .collect();
    let intervals = (0..res.intervals.len())
        .map(|i| JsonInterval {
            start_s: i as u64,
            end_s: i as u64 + 1,
            streams: sc
                .streams
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let c = res.intervals.cell(i, k);
                    JsonIntervalStream {
                        name: s.name.clone(),
                        bits_per_second: c.bytes * 8,
                        packets: c.packets,
                        drops: c.drops,
                    }
                })
                .collect(),
        })
        .collect();
    JsonReport {
        scenario: sc.name.clone(),
        link: JsonLink {
            name: sc.link.name.clone(),
            bits_per_second: link_goodput(sc),
        },
        streams,
        intervals,
        scale: None,
    }
}

/// Writes the CSV table: one row per interval and stream, with its queue's backlog at
/// the end of the interval.
pub fn write_csv(w: &mut dyn Write, sc: &Scenario, res: &RunResult) -> io::Result<()> {
    writeln!(
        w,
        "start_s,end_s,stream,bits_per_second,packets,drops,queue,queue_backlog_packets,queue_backlog_bytes"
    )?;
    for i in 0..res.intervals.len() {
        for (k, s) in sc.streams.iter().enumerate() {
            let c = res.intervals.cell(i, k);
            let q = usize::from(sc.classifier.queue(s.ds));
            let b = res.intervals.backlog(i, q);
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{}",
                i,
                i + 1,
                s.name,
                c.bytes * 8,
                c.packets,
                c.drops,
                q,
                b.packets,
                b.bytes
            )?;
        }
    }
    Ok(())
}
