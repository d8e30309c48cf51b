//! From the flags to the [`Report`]: every value read (and refused with its
//! flag), the inputs checked to go together, then each answer the inputs allow,
//! one function each, in the order the report lists them: the link, the
//! bandwidth-delay product and its window-scale shift, the window's ceiling,
//! the transfer time, loss-limited throughput, the transfer time with slow
//! start, the Linux settings ([`crate::linux`]). The first refusal met is the
//! error; inputs that answer nothing are refused last.

use std::time::Duration;

use bdp::{
    bdp as bdp_of, ceiling, linux_rcv_wscale, mathis, max_window, padhye, parse_duration,
    transfer_time, transfer_time_slow_start, window_scale_shift, BitsPerSecond, Bytes, CalcError,
    Link, MathisConstant, PadhyeParams, TcpIpHeaders, MAX_WINDOW,
};

use crate::args::Args;
use crate::error::{bad, BadValue, CliError, Usage};
use crate::linux::linux_report;
use crate::report::{Inputs, LimitedBy, LinkReport, MssSource, RateSource, Report, WindowOf};

/// MSS for slow start when neither --mss nor --link gives one: IPv4 in a
/// 1500-byte MTU without TCP options.
const DEFAULT_MSS: u64 = 1460;

/// Every flag's value, read.
struct Given {
    rtt: Option<Duration>,
    /// The window as given, before the RFC 7323 clamp.
    window_given: Option<Bytes>,
    /// The window used: at most RFC 7323's largest.
    window: Option<Bytes>,
    size: Option<Bytes>,
    /// `--rate` (the link's goodput stands in for it later).
    rate: Option<BitsPerSecond>,
    mss: Option<Bytes>,
    loss: Option<f64>,
    rto: Option<Duration>,
    mtu: Option<Bytes>,
    /// TCP/IP headers counted in goodput and MSS.
    headers: TcpIpHeaders,
}

/// The link given, with its TCP goodput.
type LinkGoodput = (Link, BitsPerSecond);

/// Computes every answer the inputs allow; refuses inputs that answer nothing.
pub fn compute(args: &Args) -> Result<Report, CliError> {
    let given = read(args)?;
    check_scope(args, &given)?;
    let mut r = Report::default();
    let link = link(args, &given, &mut r)?;
    let rate = rate(&given, link, &mut r.inputs);
    echo(&given, &mut r.inputs);
    if given.rtt.is_none()
        && given.size.is_none()
        && (given.window.is_some() || given.rate.is_some())
    {
        return Err(Usage::RateOrWindowWithoutRtt.into());
    }
    bdp_and_shift(&given, rate, &mut r)?;
    window_ceiling(&given, rate, &mut r)?;
    transfer(&given, rate, &mut r)?;
    loss_limited(args, &given, link, &mut r)?;
    slow_start(&given, rate, link, &mut r)?;
    match args.host {
        Some(_) => r.linux = Some(linux_report(args, &r, given.window)?),
        None if args.kernel.is_some()
            || args.adv_win_scale.is_some()
            || args.scaling_ratio.is_some() =>
        {
            return Err(Usage::LinuxOptionsWithoutHost.into());
        }
        None => {}
    }
    answered(&r, given.rtt)?;
    Ok(r)
}

/// Reads every flag's value, in the order of `--help`'s inputs.
fn read(args: &Args) -> Result<Given, CliError> {
    let rtt = value("rtt", &args.rtt, nonzero(BadValue::ZeroRtt))?;
    let window_given = value("window", &args.window, size)?;
    // RFC 7323 section 2.3: no window above 65535 << 14 can be advertised.
    let window = window_given.map(|w| if w > MAX_WINDOW { MAX_WINDOW } else { w });
    Ok(Given {
        rtt,
        window_given,
        window,
        size: value("size", &args.size, size)?,
        rate: value("rate", &args.rate, |v| Ok(v.parse::<BitsPerSecond>()?))?,
        mss: value("mss", &args.mss, size)?,
        loss: value("loss", &args.loss, loss)?,
        rto: value("rto", &args.rto, nonzero(BadValue::ZeroRto))?,
        mtu: value("mtu", &args.mtu, size)?,
        headers: headers(args),
    })
}

/// The value of `--flag`, if given, read by `read` (its refusal names the flag).
fn value<T>(
    flag: &'static str,
    given: &Option<String>,
    read: impl Fn(&str) -> Result<T, BadValue>,
) -> Result<Option<T>, CliError> {
    given
        .as_deref()
        .map(|v| read(v).map_err(|reason| bad(flag, v, reason)))
        .transpose()
}

/// A size in bytes.
fn size(v: &str) -> Result<Bytes, BadValue> {
    Ok(v.parse::<Bytes>()?)
}

/// A time above zero (`zero`: the refusal of a zero time).
fn nonzero(zero: BadValue) -> impl Fn(&str) -> Result<Duration, BadValue> {
    move |v| match parse_duration(v)? {
        Duration::ZERO => Err(zero.clone()),
        t => Ok(t),
    }
}

/// Reads a loss probability: `0.01` or `1%`, in (0, 1].
pub fn parse_loss(v: &str) -> Result<f64, CliError> {
    loss(v).map_err(|reason| bad("loss", v, reason))
}

/// A loss probability ([`parse_loss`]).
fn loss(v: &str) -> Result<f64, BadValue> {
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
        return Err(BadValue::NotAProbability);
    }
    let p: f64 = num.parse().map_err(|_| BadValue::NotAProbability)?;
    let p = p / scale;
    if !(p > 0.0 && p <= 1.0) {
        return Err(BadValue::LossRange);
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

/// Refuses flags that only modify another flag that is absent.
fn check_scope(args: &Args, given: &Given) -> Result<(), Usage> {
    if given.mtu.is_some() && args.link.is_none() {
        return Err(Usage::MtuWithoutLink);
    }
    if (args.ipv6 || args.timestamps) && args.link.is_none() {
        return Err(Usage::HeadersWithoutLink);
    }
    if given.loss.is_none() && (given.rto.is_some() || args.ack_every != 1) {
        return Err(Usage::PadhyeWithoutLoss);
    }
    Ok(())
}

/// Looks a link up, with the list of names in the error.
pub fn find_link(name: &str) -> Result<Link, CliError> {
    Link::by_name(name).ok_or_else(|| bad("link", name, BadValue::UnknownLink))
}

/// `--link` (with `--mtu`): its figures in the report and its goodput.
fn link(args: &Args, given: &Given, r: &mut Report) -> Result<Option<LinkGoodput>, CliError> {
    let Some(name) = args.link.as_deref() else {
        return Ok(None);
    };
    let mut l = find_link(name)?;
    if let Some(m) = given.mtu {
        l = l.with_mtu(m);
    }
    let goodput = l.goodput(given.headers)?;
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
    r.inputs.header_bytes = Some(given.headers.header_bytes());
    Ok(Some((l, goodput)))
}

/// The rate: `--rate`, else the link's goodput.
fn rate(given: &Given, link: Option<LinkGoodput>, i: &mut Inputs) -> Option<BitsPerSecond> {
    let (rate, source) = match (given.rate, link) {
        (Some(x), _) => (x, RateSource::Rate),
        (None, Some((_, goodput))) => (goodput, RateSource::Link),
        (None, None) => return None,
    };
    i.rate_source = Some(source);
    i.rate_bps = Some(rate.get());
    Some(rate)
}

/// The inputs as understood, in the report.
fn echo(given: &Given, i: &mut Inputs) {
    i.rtt_seconds = given.rtt.map(|d| d.as_secs_f64());
    i.rtt = given.rtt;
    i.window_bytes = given.window.map(Bytes::get);
    i.window_clamped_from_bytes = given
        .window_given
        .filter(|w| *w > MAX_WINDOW)
        .map(Bytes::get);
    i.size_bytes = given.size.map(Bytes::get);
}

/// The bandwidth-delay product and the shift it needs; without a rate, the
/// shift the window needs.
fn bdp_and_shift(
    given: &Given,
    rate: Option<BitsPerSecond>,
    r: &mut Report,
) -> Result<(), CliError> {
    if let (Some(rate), Some(rtt)) = (rate, given.rtt) {
        let b = bdp_of(rate, rtt)?;
        r.bdp_bytes = Some(b.get());
        shift_report(r, b, WindowOf::Bdp);
    } else if let (Some(w), Some(_)) = (given.window, given.rtt) {
        shift_report(r, w, WindowOf::Window);
    }
    Ok(())
}

/// The window-scale shift for `window`, or why there is none.
fn shift_report(r: &mut Report, window: Bytes, of: WindowOf) {
    r.window_scale_shift_for = Some(of);
    r.linux_rcv_wscale = Some(linux_rcv_wscale(window));
    match window_scale_shift(window) {
        Ok(s) => {
            r.window_scale_shift = Some(Some(s));
            r.max_window_for_shift_bytes = max_window(s).ok().map(Bytes::get);
        }
        Err(_) => {
            r.window_scale_shift = Some(None);
            let consequence = match of {
                WindowOf::Bdp => "; one TCP connection cannot keep this path full",
                WindowOf::Window => "",
            };
            r.window_scale_explanation = Some(format!(
                "{} bytes exceeds RFC 7323's largest window, {} bytes (65535 << 14): no window-scale shift can advertise it{consequence}",
                window.get(),
                MAX_WINDOW.get()
            ));
        }
    }
}

/// The window's throughput ceiling, and with a rate what limits the throughput.
fn window_ceiling(
    given: &Given,
    rate: Option<BitsPerSecond>,
    r: &mut Report,
) -> Result<(), CliError> {
    let (Some(w), Some(rtt)) = (given.window, given.rtt) else {
        return Ok(());
    };
    let c = ceiling(w, rtt)?;
    r.ceiling_bps = Some(c.get());
    match rate {
        Some(rate) if rate <= c => {
            r.throughput_bps = Some(rate.get());
            r.limited_by = Some(LimitedBy::Rate);
        }
        Some(_) => {
            r.throughput_bps = Some(c.get());
            r.limited_by = Some(LimitedBy::Window);
        }
        None => {}
    }
    Ok(())
}

/// The steady-state transfer time of `--size`.
fn transfer(given: &Given, rate: Option<BitsPerSecond>, r: &mut Report) -> Result<(), CliError> {
    let Some(size) = given.size else {
        return Ok(());
    };
    if given.window.is_some() && given.rtt.is_none() {
        return Err(Usage::TransferWindowWithoutRtt.into());
    }
    let win = given.window.zip(given.rtt);
    if rate.is_none() && win.is_none() {
        return Err(Usage::SizeWithoutRate.into());
    }
    let t = transfer_time(size, rate, win)?;
    r.transfer_seconds = Some(t.time.as_secs_f64());
    r.transfer_time = Some(t.time);
    r.throughput_bps = Some(t.throughput.get());
    r.limited_by = Some(t.limit.into());
    Ok(())
}

/// Loss-limited throughput (Mathis, Padhye) for `--loss` with an MSS (given,
/// or the link's) and `--rtt`.
fn loss_limited(
    args: &Args,
    given: &Given,
    link: Option<LinkGoodput>,
    r: &mut Report,
) -> Result<(), CliError> {
    let mss = match (given.mss, link) {
        (Some(m), _) => {
            r.inputs.mss_source = Some(MssSource::Mss);
            Some(m)
        }
        (None, Some((l, _))) if given.loss.is_some() => {
            r.inputs.mss_source = Some(MssSource::Link);
            Some(given.headers.mss(l.mtu)?)
        }
        _ => None,
    };
    r.inputs.mss_bytes = mss.map(Bytes::get);
    match (mss, given.loss) {
        (Some(mss), Some(p)) => {
            let rtt = given.rtt.ok_or(Usage::LossWithoutRtt)?;
            r.inputs.loss = Some(p);
            r.inputs.ack_every = Some(args.ack_every);
            let t_rto = match given.rto {
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
                t_rto: given.rto,
                max_window: None,
            };
            r.padhye_bps = Some(padhye(mss, rtt, p, params)?);
            Ok(())
        }
        (Some(_), None) if given.size.is_none() || given.rtt.is_none() => {
            Err(Usage::MssUnused.into())
        }
        (None, Some(_)) => Err(Usage::LossWithoutMss.into()),
        (Some(_), None) | (None, None) => Ok(()),
    }
}

/// The transfer time of `--size` with slow start from an initial window of 10
/// segments of the MSS (given, the link's, or [`DEFAULT_MSS`]).
fn slow_start(
    given: &Given,
    rate: Option<BitsPerSecond>,
    link: Option<LinkGoodput>,
    r: &mut Report,
) -> Result<(), CliError> {
    let (Some(size), Some(rtt)) = (given.size, given.rtt) else {
        return Ok(());
    };
    let (mss, source) = match (given.mss, link) {
        (Some(m), _) => (m, MssSource::Mss),
        (None, Some((l, _))) => (given.headers.mss(l.mtu)?, MssSource::Link),
        (None, None) => (Bytes::new(DEFAULT_MSS), MssSource::Default),
    };
    r.inputs.mss_source = Some(source);
    r.inputs.mss_bytes = Some(mss.get());
    let t = transfer_time_slow_start(size, mss, rate, given.window, rtt)?;
    r.transfer_seconds_slow_start = Some(t.time.as_secs_f64());
    r.transfer_time_slow_start = Some(t.time);
    r.slow_start_rounds = Some(t.slow_start_rounds);
    r.slow_start_bytes = Some(t.slow_start_bytes.get());
    Ok(())
}

/// Refuses a report without an answer.
fn answered(r: &Report, rtt: Option<Duration>) -> Result<(), Usage> {
    let answered = r.bdp_bytes.is_some()
        || r.ceiling_bps.is_some()
        || r.transfer_seconds.is_some()
        || r.mathis_bps.is_some()
        || r.link.is_some();
    match (answered, rtt) {
        (true, _) => Ok(()),
        (false, Some(_)) => Err(Usage::RttAlone),
        (false, None) => Err(Usage::Nothing),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(a: &[&str]) -> Args {
        Args::parse_from(std::iter::once("bdp-calc").chain(a.iter().copied()))
    }

    #[test]
    fn values_are_read_in_order_and_refused_with_their_flag() {
        // Two bad values: the first in reading order is the one refused.
        let e = compute(&args(&["--window", "big", "--rtt", "0s"])).unwrap_err();
        assert_eq!(e, bad("rtt", "0s", BadValue::ZeroRtt));
        let e = compute(&args(&["--mtu", "x", "--rto", "0s", "--loss", "1%"])).unwrap_err();
        assert_eq!(e, bad("rto", "0s", BadValue::ZeroRto));
        assert_eq!(
            e.to_string(),
            "--rto '0s': a retransmission timeout must be greater than zero"
        );
        let e = value("size", &Some("1.5".into()), size).unwrap_err();
        assert!(e.to_string().starts_with("--size '1.5': "), "{e}");
        assert_eq!(value("size", &None, size), Ok(None));
        assert_eq!(parse_loss(" 2.5 % "), Ok(0.025));
        assert_eq!(parse_loss("0"), Err(bad("loss", "0", BadValue::LossRange)));
    }

    #[test]
    fn a_window_above_rfc7323s_largest_is_clamped_and_remembered() {
        let g = read(&args(&["--window", "2GiB", "--rtt", "1ms"])).unwrap();
        assert_eq!(g.window, Some(MAX_WINDOW));
        assert_eq!(g.window_given, Some(Bytes::new(1 << 31)));
    }

    #[test]
    fn the_scope_checks_come_before_the_answers() {
        let e = compute(&args(&["--mtu", "9000", "--ipv6", "--rto", "1s"])).unwrap_err();
        assert_eq!(e, CliError::Usage(Usage::MtuWithoutLink));
        let e = compute(&args(&["--ipv6", "--ack-every", "2"])).unwrap_err();
        assert_eq!(e, CliError::Usage(Usage::HeadersWithoutLink));
        let e = compute(&args(&["--rate", "1G", "--rtt", "1ms", "--kernel", "6.8"])).unwrap_err();
        assert_eq!(e, CliError::Usage(Usage::LinuxOptionsWithoutHost));
    }

    #[test]
    fn the_tags_name_where_each_figure_came_from() {
        let r = compute(&args(&[
            "--link",
            "ethernet-1g",
            "--size",
            "1MB",
            "--rtt",
            "1ms",
        ]))
        .unwrap();
        assert_eq!(r.inputs.rate_source, Some(RateSource::Link));
        assert_eq!(r.inputs.mss_source, Some(MssSource::Link));
        assert_eq!(r.window_scale_shift_for, Some(WindowOf::Bdp));
        assert_eq!(r.limited_by, Some(LimitedBy::Rate));
        let r = compute(&args(&[
            "--window", "64KiB", "--size", "1MB", "--rtt", "10ms",
        ]))
        .unwrap();
        assert_eq!(r.inputs.rate_source, None);
        assert_eq!(r.inputs.mss_source, Some(MssSource::Default));
        assert_eq!(r.window_scale_shift_for, Some(WindowOf::Window));
        assert_eq!(r.limited_by, Some(LimitedBy::Window));
    }
}
