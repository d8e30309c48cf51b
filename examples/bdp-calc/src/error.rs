//! Refusals: a value that cannot be read (with its flag), inputs that answer
//! nothing or do not go together, a calculation without a meaningful answer.
//! Each is printed on standard error before the tool exits with status 2.

use bdp::linux::{KernelParseError, LinuxKernel};
use bdp::{CalcError, ParseError};

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
        reason: BadValue,
    },
    /// Inputs that answer nothing, or no inputs at all.
    #[error("{0}")]
    Usage(#[from] Usage),
    /// A calculation had no meaningful answer.
    #[error("{0}")]
    Calc(#[from] CalcError),
}

/// The refusal of `value` given to `--flag`.
pub(crate) fn bad(flag: &'static str, value: &str, reason: impl Into<BadValue>) -> CliError {
    CliError::BadValue {
        flag,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Why a flag's value was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadValue {
    /// Not a rate, size or time `bdp` reads.
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// Not a kernel version.
    #[error("{0}")]
    Kernel(#[from] KernelParseError),
    /// A round-trip time of zero.
    #[error("a round-trip time must be greater than zero")]
    ZeroRtt,
    /// A retransmission timeout of zero.
    #[error("a retransmission timeout must be greater than zero")]
    ZeroRto,
    /// Not a number or a percentage.
    #[error("expected a probability such as 0.01 or 1%")]
    NotAProbability,
    /// A probability outside (0, 1].
    #[error("loss probability must be in (0, 1], i.e. above 0% and at most 100%")]
    LossRange,
    /// No link of that name.
    #[error("unknown link; known: {}", link_names())]
    UnknownLink,
    /// Not a share or a percentage.
    #[error("expected the share of the receive buffer advertised as window, such as 0.7 or 70%")]
    NotAShare,
    /// A share that is not a whole number of 256ths from 1 to 255.
    #[error("the kernel keeps the ratio in 256ths: from 1/256 to 255/256 (0.004 to 0.996)")]
    ShareRange,
    /// `--adv-win-scale` for a kernel that no longer has it.
    #[error(
        "tcp_adv_win_scale is obsolete since Linux 6.6 (kernel {kernel}); give a measured --scaling-ratio instead"
    )]
    AdvWinScaleObsolete {
        /// The kernel modelled.
        kernel: LinuxKernel,
    },
    /// `--adv-win-scale` outside what the kernel accepts.
    #[error("the kernel accepts -31 to 31")]
    AdvWinScaleRange,
    /// `--scaling-ratio` for a kernel that does not have it yet.
    #[error("the scaling ratio exists from Linux 6.6; kernel {kernel} uses --adv-win-scale")]
    NoScalingRatio {
        /// The kernel modelled.
        kernel: LinuxKernel,
    },
}

/// The predefined links' names, as an unknown link's message lists them.
fn link_names() -> String {
    let names: Vec<&str> = bdp::LINKS.iter().map(|l| l.name).collect();
    names.join(", ")
}

/// Inputs that do not go together, or that answer nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Usage {
    /// `--mtu` without `--link`.
    #[error("--mtu applies to --link; give a link")]
    MtuWithoutLink,
    /// `--ipv6` or `--timestamps` without `--link`.
    #[error("--ipv6 and --timestamps apply to --link goodput and MSS; give a link")]
    HeadersWithoutLink,
    /// `--rto` or `--ack-every` without `--loss`.
    #[error("--rto and --ack-every apply to --loss; give a loss")]
    PadhyeWithoutLoss,
    /// `--rate` or `--window` with neither `--rtt` nor `--size`.
    #[error("--rate and --window need --rtt (or --size, for a transfer time)")]
    RateOrWindowWithoutRtt,
    /// `--size` and `--window` without `--rtt`.
    #[error("--window needs --rtt for a transfer time")]
    TransferWindowWithoutRtt,
    /// `--size` with no rate and no window.
    #[error("--size needs --rate (or --link), or --window with --rtt")]
    SizeWithoutRate,
    /// `--loss` and an MSS without `--rtt`.
    #[error("--loss needs --rtt")]
    LossWithoutRtt,
    /// `--mss` that no answer uses.
    #[error("--mss needs --loss and --rtt, or --size and --rtt (slow start)")]
    MssUnused,
    /// `--loss` without an MSS.
    #[error("--loss needs --mss (or --link) and --rtt")]
    LossWithoutMss,
    /// `--host linux` without a window to plan for.
    #[error("--host linux needs a window: --rate (or --link) with --rtt, or --window")]
    HostWithoutWindow,
    /// A Linux option without `--host linux`.
    #[error("--kernel, --adv-win-scale and --scaling-ratio apply to --host linux")]
    LinuxOptionsWithoutHost,
    /// `--rtt` and nothing it could be used with.
    #[error("--rtt alone answers nothing: add --rate, --link, --window, or --mss with --loss")]
    RttAlone,
    /// No input.
    #[error(
        "nothing to compute: give --rate (or --link) with --rtt, --window with --rtt, \
--size with a rate or window, or --mss with --rtt and --loss (see --help)"
    )]
    Nothing,
}
