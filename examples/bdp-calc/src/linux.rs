//! `--host linux`: the settings that let the receiver advertise, and the sender
//! keep in flight, the bandwidth-delay product (or `--window`), from the `bdp`
//! crate's buffer model of the kernel chosen (`--kernel`, `--adv-win-scale`,
//! `--scaling-ratio`).

use bdp::linux::{plan_window, LinuxHost, LinuxKernel, WindowShare};
use bdp::Bytes;

use crate::args::Args;
use crate::error::{bad, BadValue, CliError, Usage};
use crate::report::{AdviceReport, KernelSource, LinuxReport, Report, WindowOf, WindowShareRule};

/// Reads a scaling ratio: `0.7` or `70%`, as 256ths (1..=255).
pub fn parse_scaling_ratio(v: &str) -> Result<u8, CliError> {
    let t = v.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad("scaling-ratio", v, BadValue::NotAShare));
    }
    let f: f64 = num
        .parse()
        .map_err(|_| bad("scaling-ratio", v, BadValue::NotAShare))?;
    let n = (f / scale * 256.0).round();
    if !(1.0..=255.0).contains(&n) {
        return Err(bad("scaling-ratio", v, BadValue::ShareRange));
    }
    Ok(n as u8)
}

/// The kernel and the share of its receive buffer advertised as window, from
/// `--kernel`, `--adv-win-scale` and `--scaling-ratio`.
fn host(args: &Args) -> Result<(LinuxHost, KernelSource), CliError> {
    let (kernel, source) = match args.kernel.as_deref() {
        Some(v) => (
            v.parse::<LinuxKernel>().map_err(|e| bad("kernel", v, e))?,
            KernelSource::Kernel,
        ),
        None => (LinuxKernel::LATEST, KernelSource::Default),
    };
    let mut host = LinuxHost::new(kernel);
    if let Some(s) = args.adv_win_scale {
        let v = s.to_string();
        if kernel.has_scaling_ratio() {
            return Err(bad(
                "adv-win-scale",
                &v,
                BadValue::AdvWinScaleObsolete { kernel },
            ));
        }
        if !(-31..=31).contains(&s) {
            return Err(bad("adv-win-scale", &v, BadValue::AdvWinScaleRange));
        }
        host = host.with_share(WindowShare::AdvWinScale(s));
    }
    if let Some(v) = args.scaling_ratio.as_deref() {
        if !kernel.has_scaling_ratio() {
            return Err(bad("scaling-ratio", v, BadValue::NoScalingRatio { kernel }));
        }
        host = host.with_share(WindowShare::ScalingRatio(parse_scaling_ratio(v)?));
    }
    Ok((host, source))
}

/// The Linux settings for the BDP of `r`, or else for `window`.
pub(crate) fn linux_report(
    args: &Args,
    r: &Report,
    window: Option<Bytes>,
) -> Result<LinuxReport, CliError> {
    let (host, kernel_source) = host(args)?;
    let kernel = host.kernel;
    let (w, window_for) = match (r.bdp_bytes, window) {
        (Some(b), _) => (Bytes::new(b), WindowOf::Bdp),
        (None, Some(w)) => (w, WindowOf::Window),
        (None, None) => return Err(Usage::HostWithoutWindow.into()),
    };
    let p = plan_window(w, host)?;
    let (rule, adv, ratio) = match host.share {
        WindowShare::AdvWinScale(s) => (WindowShareRule::TcpAdvWinScale, Some(s), None),
        WindowShare::ScalingRatio(q) => (WindowShareRule::ScalingRatio, None, Some(q)),
    };
    let unit = Bytes::new(1 << 20);
    let advice = p
        .all_advice()
        .iter()
        .map(|a| AdviceReport {
            setting: a.setting,
            value: a.value,
            why: a.why.to_string(),
            side: a.setting.side(),
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
