//! The `[[stream]]` tables: name, packet size, marking, times, then the
//! fields of its kind (UDP or TCP), checked in that order; and the bound on
//! the packets all streams together may offer.

use std::fmt::Display;
use std::str::FromStr;

use toml::Spanned;

use super::check::{Ctx, Keywords};
use super::raw::{IntOrName, RawStream};
use super::{
    ScenarioError, Stream, StreamKind, DEFAULT_STOP_S, MAX_DURATION_S, MAX_OFFERED_PACKETS,
    MAX_STREAMS, MAX_WINDOW_PACKETS,
};
use crate::tcp::Cc;
use crate::time::{secs_to_ns, Nanos, NS_PER_S};

/// `stream.kind`.
#[derive(Clone, Copy)]
enum Kind {
    /// Constant bit rate.
    Udp,
    /// A bulk transfer.
    Tcp,
}

const KINDS: &Keywords<Kind> = &[("udp", Kind::Udp), ("tcp", Kind::Tcp)];

/// `stream.cc`.
const CCS: &Keywords<Cc> = &[("cubic", Cc::Cubic), ("reno", Cc::Reno)];

/// What the rest of the scenario sets for its streams.
pub(super) struct StreamBounds {
    /// The scenario's duration: no stream starts after it.
    pub(super) duration_s: u32,
    /// The link's line rate: a TCP stream's access rate unless it gives one.
    pub(super) line_bps: u64,
    /// The scheduler's mtu under byte fairness: no packet may be larger.
    pub(super) fairness_mtu: Option<u32>,
}

/// Stream `index` (from 0) as a field path: `stream[1]`, `stream[1].rate`.
struct Path(String);

impl Path {
    fn new(index: usize) -> Self {
        Path(format!("stream[{}]", index + 1))
    }

    /// The path of field `key`.
    fn field(&self, key: &str) -> String {
        format!("{}.{key}", self.0)
    }
}

/// Every stream: 1 to [`MAX_STREAMS`], named apart, offering at most
/// [`MAX_OFFERED_PACKETS`] packets together.
pub(super) fn streams(
    cx: &Ctx,
    raw: &[RawStream],
    bounds: &StreamBounds,
) -> Result<Vec<Stream>, ScenarioError> {
    if raw.is_empty() || raw.len() > MAX_STREAMS {
        return Err(ScenarioError {
            line: 1,
            field: "stream".into(),
            message: format!("give 1 to {MAX_STREAMS} [[stream]] tables"),
        });
    }
    let mut streams: Vec<Stream> = Vec::with_capacity(raw.len());
    let mut offered = 0.0f64;
    for (i, r) in raw.iter().enumerate() {
        let path = Path::new(i);
        let s = stream(cx, &path, r, bounds, &streams)?;
        offered += offered_packets(&s, bounds.duration_s);
        if offered > MAX_OFFERED_PACKETS {
            return Err(cx.err(
                r.name.span(),
                path.0,
                format!("the scenario would offer more than {MAX_OFFERED_PACKETS:e} packets"),
            ));
        }
        streams.push(s);
    }
    Ok(streams)
}

/// Packets `s` offers while active within `duration_s`: a UDP stream at its
/// rate, a TCP stream at most at its access rate.
fn offered_packets(s: &Stream, duration_s: u32) -> f64 {
    let active_s = (s
        .stop_ns
        .min(u64::from(duration_s) * NS_PER_S)
        .saturating_sub(s.start_ns)) as f64
        / 1e9;
    let bps = match s.kind {
        StreamKind::Udp { rate_bps } => rate_bps,
        StreamKind::Tcp { access_bps, .. } => access_bps,
    };
    bps as f64 / (f64::from(s.packet_bytes) * 8.0) * active_s
}

/// One stream, named apart from the `earlier` ones.
fn stream(
    cx: &Ctx,
    path: &Path,
    r: &RawStream,
    bounds: &StreamBounds,
    earlier: &[Stream],
) -> Result<Stream, ScenarioError> {
    let name = r.name.get_ref().trim().to_string();
    if name.is_empty() || name.len() > 32 || name.contains(|c: char| c.is_control() || c == ',') {
        return Err(cx.err(
            r.name.span(),
            path.field("name"),
            "must be 1 to 32 characters, no commas or control characters",
        ));
    }
    if earlier.iter().any(|s| s.name == name) {
        return Err(cx.err(
            r.name.span(),
            path.field("name"),
            format!("{name:?} is used by another stream"),
        ));
    }
    let packet_bytes = packet_bytes(cx, path, r, bounds.fairness_mtu)?;
    let ds = ds_field(cx, path, r)?;
    let (start_ns, stop_ns) = times(cx, path, r, bounds.duration_s)?;
    let kind = match cx.keyword_or(r.kind.as_ref(), &path.field("kind"), KINDS, Kind::Udp)? {
        Kind::Udp => udp(cx, path, r)?,
        Kind::Tcp => tcp(cx, path, r, bounds.line_bps)?,
    };
    Ok(Stream {
        name,
        kind,
        packet_bytes,
        ds,
        start_ns,
        stop_ns,
    })
}

/// `packet_bytes` (default 1500): 20 to 65535, within the mtu under byte fairness.
fn packet_bytes(
    cx: &Ctx,
    path: &Path,
    r: &RawStream,
    fairness_mtu: Option<u32>,
) -> Result<u32, ScenarioError> {
    let field = path.field("packet_bytes");
    let packet_bytes = match &r.packet_bytes {
        Some(b) => cx.int(b, &field, 20, 65535)? as u32,
        None => 1500,
    };
    if let Some(m) = fairness_mtu {
        if packet_bytes > m {
            let span = r.packet_bytes.as_ref().map_or(r.name.span(), |b| b.span());
            return Err(cx.err(
                span,
                field,
                format!("{packet_bytes} exceeds the scheduler mtu of {m}"),
            ));
        }
    }
    Ok(packet_bytes)
}

/// The DS field, from one of `dscp`, `precedence` (its class selector) or
/// `tos` (the whole byte); 0 when none is given.
fn ds_field(cx: &Ctx, path: &Path, r: &RawStream) -> Result<u8, ScenarioError> {
    let marks = [r.dscp.is_some(), r.precedence.is_some(), r.tos.is_some()];
    if marks.iter().filter(|&&m| m).count() > 1 {
        return Err(cx.err(
            r.name.span(),
            path.0.clone(),
            "mark a stream by one of dscp, precedence or tos",
        ));
    }
    let ds = dscp::DsField::new(0);
    if let Some(d) = &r.dscp {
        let dscp = number_or_name(cx, d, &path.field("dscp"), "a DSCP (0..=63)", |n| {
            dscp::Dscp::new(n).ok()
        })?;
        Ok(ds.with_dscp(dscp).value())
    } else if let Some(p) = &r.precedence {
        let field = path.field("precedence");
        let precedence = number_or_name(cx, p, &field, "a precedence (0..=7)", |n| {
            dscp::Precedence::new(n).ok()
        })?;
        Ok(ds.with_dscp(precedence.class_selector()).value())
    } else if let Some(t) = &r.tos {
        Ok(cx.int(t, &path.field("tos"), 0, 255)? as u8)
    } else {
        Ok(0)
    }
}

/// A `dscp` crate value given as a number (`from_number`, else "N is not
/// `what`") or as a name its `FromStr` reads.
fn number_or_name<T: FromStr>(
    cx: &Ctx,
    v: &Spanned<IntOrName>,
    field: &str,
    what: &str,
    from_number: impl Fn(u8) -> Option<T>,
) -> Result<T, ScenarioError>
where
    T::Err: Display,
{
    match v.get_ref() {
        IntOrName::Int(n) => u8::try_from(*n)
            .ok()
            .and_then(from_number)
            .ok_or_else(|| cx.err(v.span(), field, format!("{n} is not {what}"))),
        IntOrName::Name(s) => s
            .parse()
            .map_err(|e| cx.err(v.span(), field, format!("{s:?}: {e}"))),
    }
}

/// `start_s` (default 0, within the duration) and `stop_s` (default
/// [`DEFAULT_STOP_S`], after the start), in nanoseconds.
fn times(
    cx: &Ctx,
    path: &Path,
    r: &RawStream,
    duration_s: u32,
) -> Result<(Nanos, Nanos), ScenarioError> {
    let start_ns = match &r.start_s {
        Some(s) => cx.secs(s, &path.field("start_s"), duration_s)?,
        None => 0,
    };
    let stop_ns = match &r.stop_s {
        Some(s) => cx.secs(s, &path.field("stop_s"), MAX_DURATION_S)?,
        None => secs_to_ns(DEFAULT_STOP_S).unwrap_or(0),
    };
    if stop_ns <= start_ns {
        let span = r.stop_s.as_ref().map_or(r.name.span(), |s| s.span());
        return Err(cx.err(
            span,
            path.field("stop_s"),
            "the stream must stop after it starts",
        ));
    }
    Ok((start_ns, stop_ns))
}

/// A field the stream's kind needs; its absence is reported at the stream's name.
fn needed<'r, T>(
    cx: &Ctx,
    r: &RawStream,
    value: Option<&'r T>,
    field: &str,
    message: &str,
) -> Result<&'r T, ScenarioError> {
    value.ok_or_else(|| cx.err(r.name.span(), field, message))
}

/// A UDP stream: a rate, and none of the TCP fields.
fn udp(cx: &Ctx, path: &Path, r: &RawStream) -> Result<StreamKind, ScenarioError> {
    for (field, present) in [
        ("rtt_ms", r.rtt_ms.is_some()),
        ("window_packets", r.window_packets.is_some()),
        ("access_rate", r.access_rate.is_some()),
        ("cc", r.cc.is_some()),
    ] {
        if present {
            return Err(cx.err(
                r.name.span(),
                path.field(field),
                "only a tcp stream takes this field",
            ));
        }
    }
    let field = path.field("rate");
    let rate = needed(cx, r, r.rate.as_ref(), &field, "a udp stream needs a rate")?;
    Ok(StreamKind::Udp {
        rate_bps: cx.rate(rate, &field)?,
    })
}

/// A TCP stream: no rate; an RTT; a window, an access rate (default the
/// link's line rate `line_bps`) and a congestion control, each optional.
fn tcp(cx: &Ctx, path: &Path, r: &RawStream, line_bps: u64) -> Result<StreamKind, ScenarioError> {
    if let Some(rate) = &r.rate {
        return Err(cx.err(
            rate.span(),
            path.field("rate"),
            "a tcp stream sends as fast as its window allows: use access_rate",
        ));
    }
    let field = path.field("rtt_ms");
    let rtt = needed(
        cx,
        r,
        r.rtt_ms.as_ref(),
        &field,
        "a tcp stream needs rtt_ms",
    )?;
    let rtt_ms = *rtt.get_ref();
    if !(rtt_ms.is_finite() && (0.001..=10_000.0).contains(&rtt_ms)) {
        return Err(cx.err(
            rtt.span(),
            field,
            format!("{rtt_ms} is not between 0.001 and 10000 ms"),
        ));
    }
    let window_packets = match &r.window_packets {
        Some(w) => cx.int(
            w,
            &path.field("window_packets"),
            2,
            i64::from(MAX_WINDOW_PACKETS),
        )? as u32,
        None => 8192,
    };
    let access_bps = match &r.access_rate {
        Some(a) => cx.rate(a, &path.field("access_rate"))?,
        None => line_bps,
    };
    let cc = cx.keyword_or(r.cc.as_ref(), &path.field("cc"), CCS, Cc::Cubic)?;
    Ok(StreamKind::Tcp {
        rtt_ns: (rtt_ms * 1e6).round() as Nanos,
        window_packets,
        access_bps,
        cc,
    })
}
