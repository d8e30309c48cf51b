//! Linux socket buffers: which settings let a Linux host reach a window.
//!
//! A TCP window is bytes of payload; a Linux socket buffer is bytes of
//! *memory*, counted as the kernel's `skb->truesize` (payload plus packet
//! metadata and the slack of the buffer it was received into). So a
//! receiver advertises only a share of its buffer as window, and a sender
//! needs more buffer than the data it keeps in flight. This module turns a
//! window (the bandwidth-delay product of a rate at an RTT, see
//! [`crate::bdp`]) into the settings of both hosts, the way the kernel
//! computes them.
//!
//! # The receiver
//!
//! 1. **The share of the buffer that is window** ([`WindowShare`]).
//!    `tcp_win_from_space()` (`include/net/tcp.h`) converts buffer space to
//!    window. Before Linux 6.6 it used the sysctl `net.ipv4.tcp_adv_win_scale`
//!    (`s`): for `s > 0` the window is `space - (space >> s)`, for `s <= 0` it
//!    is `space >> -s`. The default was 2 (3/4 of the buffer) until 2012's
//!    "tcp: change tcp_adv_win_scale and tcp_rmem\[2\]" (Linux 3.4) made it 1
//!    (1/2). Linux 6.6 ("tcp: get rid of sysctl_tcp_adv_win_scale") made the
//!    sysctl obsolete: each connection keeps a `scaling_ratio` in 256ths,
//!    measured in `tcp_measure_rcv_mss()` (`net/ipv4/tcp_input.c`) as
//!    `skb->len / skb->truesize` of received segments, and the window is
//!    `space * scaling_ratio >> 8`. Before the first measurement it is
//!    `TCP_DEFAULT_SCALING_RATIO`: about 25% in 6.6 to 6.9 (1200 bytes of
//!    payload per 4 KiB page), 50% since "tcp: increase the default TCP
//!    scaling ratio" (Linux 6.10, with stable backports). The measured ratio
//!    depends on the NIC driver: about 0.66 on a 1500-byte-MTU cloud NIC in
//!    the report that led to that change, higher with GRO and large MTUs,
//!    lower with a page per frame. The plans here assume 50% on 6.6 and
//!    later ([`LinuxKernel::window_share`]): the ratio that matches the old
//!    default, and on the safe side of what common NICs measure. Give the
//!    measured ratio with [`LinuxHost::with_share`] when it is known.
//! 2. **Autotuning** (`net.ipv4.tcp_moderate_rcvbuf = 1`, the default):
//!    `tcp_rcv_space_adjust()` grows the receive buffer as the connection
//!    delivers more per RTT (it aims at about twice the bytes delivered per
//!    RTT), but never above `net.ipv4.tcp_rmem`'s third value (max). So the
//!    largest window an autotuned connection can advertise is
//!    `tcp_win_from_space(tcp_rmem max)`, and the setting that lifts a
//!    receive-window limit is `tcp_rmem` max (default 6 MiB from Linux 3.4,
//!    32 MiB since 6.16's "tcp: increase tcp_rmem\[2\] to 32 MB"; 4 MiB before).
//! 3. **Applications that set `SO_RCVBUF`** turn autotuning off for their
//!    socket; the kernel stores twice the value asked for, capped at twice
//!    `net.core.rmem_max`. Their window is fixed at the share of that buffer
//!    computed when the connection opened: on 6.6 and later with the default
//!    ratio, not the measured one (the report above: a 65,536-byte
//!    `SO_RCVBUF` gave a ~28 KB window on 6.6). `tcp_rmem` does not apply to
//!    them; `rmem_max` does.
//! 4. **Window scaling.** A window above 65,535 bytes needs the RFC 7323
//!    option on both SYNs (`net.ipv4.tcp_window_scaling = 1`, the default)
//!    and a path that passes it. Linux picks its shift from the largest
//!    buffer the socket could reach, `max(tcp_rmem max, rmem_max)`
//!    (`tcp_select_initial_window()`, see [`crate::linux_initial_rcv_wscale`]),
//!    so raising `tcp_rmem` max also raises the shift.
//!
//! # The sender
//!
//! The send buffer holds every byte not yet acknowledged plus what the
//! application queued; its memory is counted like the receiver's. Send
//! autotuning (`tcp_sndbuf_expand()`) asks for twice the congestion
//! window's worth of segment memory ("Fast Recovery ... rounded to 2", as
//! its comment says) and is capped by `net.ipv4.tcp_wmem`'s max (default 4 MiB).
//! With TSO/GSO a segment's memory is close to its payload, so the plan asks
//! for `tcp_wmem` max of at least [`SEND_BUFFER_FACTOR`] times the window. An
//! application that sets `SO_SNDBUF` gets twice its value capped at twice
//! `net.core.wmem_max`, and no autotuning.
//!
//! # The receiver's window growth
//!
//! [`WindowGrowth`] reads the window-scale shift a Linux receiver means from
//! how it opens its window (`tcp_grow_window()`: 2 bytes of window per byte
//! received), for a capture that missed the handshake.
//!
//! # What is not modelled
//!
//! The global memory-pressure limits (`net.ipv4.tcp_mem`, in pages), cgroup
//! socket memory limits, and the window the peer's congestion control
//! actually uses. The plan is the buffer *capacity* that stops the window
//! being the limit; a path with loss may still not fill it.
//!
//! # Example: the campus path
//!
//! ```
//! use bdp::linux::{plan, LinuxHost, LinuxKernel};
//! use bdp::{BitsPerSecond, Bytes};
//! use core::time::Duration;
//!
//! // 1 Gbit/s at 10 ms on a 5.15 host (tcp_adv_win_scale = 1: half the buffer is window).
//! let host = LinuxHost::new(LinuxKernel::new(5, 15));
//! let p = plan(BitsPerSecond::new(1_000_000_000), Duration::from_millis(10), host)?;
//! assert_eq!(p.window, Bytes::new(1_250_000));
//! // The kernel keeps space - (space >> 1): 2,499,999 - 1,249,999 = 1,250,000.
//! assert_eq!(p.receive_buffer, Bytes::new(2_499_999));
//! assert_eq!(p.rcv_wscale, 7); // from max(tcp_rmem max, rmem_max) = the 6 MiB default
//! # Ok::<(), bdp::CalcError>(())
//! ```

mod growth;
pub use growth::{
    WindowGrowth, GROWTH_MAX_STALL, GROWTH_MIN_ACKS, GROWTH_MIN_UNITS, GROWTH_TOLERANCE_PER_MILLE,
};

use crate::error::CalcError;
use crate::rate::BitsPerSecond;
use crate::size::Bytes;
use crate::window::{bdp, linux_rcv_wscale, window_scale_shift, MAX_UNSCALED_WINDOW};
use core::fmt;
use core::str::FromStr;
use core::time::Duration;

/// The kernel's `TCP_RMEM_TO_WIN_SCALE`: scaling ratios are in 256ths.
pub const RATIO_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO` since Linux 6.10: 128/256 = 50%.
pub const DEFAULT_SCALING_RATIO: u8 = 128;
/// `TCP_DEFAULT_SCALING_RATIO` in Linux 6.6 to 6.9: `(1200 << 8) / SKB_TRUESIZE(4096)`,
/// 65/256 (about 25%) with x86-64's structure sizes.
pub const EARLY_DEFAULT_SCALING_RATIO: u8 = 65;
/// The largest socket buffer or buffer sysctl: the kernel keeps them in a C `int`.
pub const MAX_BUFFER: Bytes = Bytes::new(i32::MAX as u64);
/// Send buffer per byte of window the plan asks for (see the module documentation).
pub const SEND_BUFFER_FACTOR: u64 = 2;

/// How a Linux receiver turns receive-buffer space into advertised window
/// (`tcp_win_from_space()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowShare {
    /// Kernels before 6.6: `net.ipv4.tcp_adv_win_scale` (the kernel accepts
    /// -31..=31). Positive `s`: window = `space - (space >> s)`; zero or
    /// negative: window = `space >> -s`.
    AdvWinScale(i8),
    /// Linux 6.6 and later: the connection's scaling ratio in 256ths:
    /// window = `space * ratio >> 8`. The kernel never lets it be 0.
    ScalingRatio(u8),
}

impl WindowShare {
    /// The window a buffer of `space` bytes advertises, rounded down as the kernel does.
    ///
    /// ```
    /// use bdp::linux::WindowShare;
    /// use bdp::Bytes;
    /// let space = Bytes::new(6 << 20);
    /// assert_eq!(WindowShare::AdvWinScale(1).window_from_space(space), Bytes::new(3 << 20));
    /// assert_eq!(WindowShare::AdvWinScale(2).window_from_space(space), Bytes::new(4_718_592));
    /// assert_eq!(WindowShare::AdvWinScale(-2).window_from_space(space), Bytes::new(1_572_864));
    /// assert_eq!(WindowShare::ScalingRatio(128).window_from_space(space), Bytes::new(3 << 20));
    /// ```
    pub fn window_from_space(self, space: Bytes) -> Bytes {
        let v = space.get();
        Bytes::new(match self {
            WindowShare::AdvWinScale(s) if s <= 0 => {
                v.checked_shr(u32::from(s.unsigned_abs())).unwrap_or(0)
            }
            WindowShare::AdvWinScale(s) => {
                v - v.checked_shr(u32::from(s.unsigned_abs())).unwrap_or(0)
            }
            WindowShare::ScalingRatio(r) => {
                // v * r < 2^72: exact in u128, and the result is at most v.
                ((u128::from(v) * u128::from(r)) >> RATIO_SCALE) as u64
            }
        })
    }

    /// The smallest buffer whose window is at least `window` (the inverse of
    /// [`WindowShare::window_from_space`], exact).
    ///
    /// Errors with [`CalcError::SettingTooLarge`] when no buffer the kernel
    /// can hold ([`MAX_BUFFER`]) gives that window; `setting` names the
    /// setting in that error.
    pub fn space_for_window(
        self,
        window: Bytes,
        setting: &'static str,
    ) -> Result<Bytes, CalcError> {
        if self.window_from_space(MAX_BUFFER) < window {
            let needed = match self {
                WindowShare::ScalingRatio(0) => u64::MAX,
                WindowShare::ScalingRatio(r) => {
                    let n = (u128::from(window.get()) << RATIO_SCALE).div_ceil(u128::from(r));
                    u64::try_from(n).unwrap_or(u64::MAX)
                }
                // A rough figure for the message: twice the window.
                WindowShare::AdvWinScale(_) => window.get().saturating_mul(2),
            };
            return Err(CalcError::SettingTooLarge {
                setting,
                needed,
                max: MAX_BUFFER.get(),
            });
        }
        // window_from_space is non-decreasing: binary search for the least space.
        let (mut lo, mut hi) = (0u64, MAX_BUFFER.get());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.window_from_space(Bytes::new(mid)) >= window {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(Bytes::new(lo))
    }

    /// The share in thousandths (500 for half the buffer), rounded down.
    pub fn per_mille(self) -> u32 {
        let w = self.window_from_space(Bytes::new(1 << 20)).get();
        // w <= 2^20, so w * 1000 >> 20 fits u32.
        ((w * 1000) >> 20) as u32
    }
}

impl fmt::Display for WindowShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pm = self.per_mille();
        write!(f, "{}.{}% of the buffer (", pm / 10, pm % 10)?;
        match self {
            WindowShare::AdvWinScale(s) => write!(f, "tcp_adv_win_scale = {s})"),
            WindowShare::ScalingRatio(r) => write!(f, "scaling ratio {r}/256)"),
        }
    }
}

/// A Linux kernel version, `major.minor`: it decides which window rule
/// applies and the default buffer sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinuxKernel {
    /// Major version (6 in 6.8).
    pub major: u16,
    /// Minor version (8 in 6.8).
    pub minor: u16,
}

/// Why a kernel version string was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KernelParseError {
    /// Not `MAJOR.MINOR` followed by anything (`6.8`, `5.15.0-91-generic`).
    #[error("kernel version: expected MAJOR.MINOR such as 6.8 or 5.15.0-91-generic")]
    Malformed,
}

impl LinuxKernel {
    /// The newest behaviour modelled here (6.16: measured scaling ratio, 32 MiB `tcp_rmem` max).
    pub const LATEST: LinuxKernel = LinuxKernel::new(6, 16);

    /// Version `major.minor`.
    pub const fn new(major: u16, minor: u16) -> Self {
        LinuxKernel { major, minor }
    }

    const fn at_least(self, major: u16, minor: u16) -> bool {
        self.major > major || (self.major == major && self.minor >= minor)
    }

    /// True from 6.6 on: the window share is the measured scaling ratio and
    /// `tcp_adv_win_scale` is ignored.
    pub const fn has_scaling_ratio(self) -> bool {
        self.at_least(6, 6)
    }

    /// The share an autotuned connection advertises, as the plans assume:
    /// `tcp_adv_win_scale` 2 before 3.4, 1 up to 6.5; 50% from 6.6 (see the
    /// module documentation for why 50% rather than a measured ratio).
    pub const fn window_share(self) -> WindowShare {
        if self.has_scaling_ratio() {
            WindowShare::ScalingRatio(DEFAULT_SCALING_RATIO)
        } else if self.at_least(3, 4) {
            WindowShare::AdvWinScale(1)
        } else {
            WindowShare::AdvWinScale(2)
        }
    }

    /// The share a socket with `SO_RCVBUF` set is held to: from 6.6 the
    /// default ratio at connection time (about 25% in 6.6 to 6.9, 50% from
    /// 6.10), else the same as [`LinuxKernel::window_share`].
    pub const fn so_rcvbuf_share(self) -> WindowShare {
        if self.at_least(6, 10) {
            WindowShare::ScalingRatio(DEFAULT_SCALING_RATIO)
        } else if self.has_scaling_ratio() {
            WindowShare::ScalingRatio(EARLY_DEFAULT_SCALING_RATIO)
        } else {
            self.window_share()
        }
    }

    /// Default `net.ipv4.tcp_rmem` (min, default, max) on a host with enough
    /// memory: max 4 MiB before 3.4, 6 MiB from 3.4, 32 MiB from 6.16;
    /// default 87,380 before 4.20, then 131,072.
    pub const fn default_tcp_rmem(self) -> [u64; 3] {
        let default = if self.at_least(4, 20) {
            131_072
        } else {
            87_380
        };
        let max = if self.at_least(6, 16) {
            32 << 20
        } else if self.at_least(3, 4) {
            6 << 20
        } else {
            4 << 20
        };
        [4096, default, max]
    }

    /// Default `net.ipv4.tcp_wmem` (min, default, max): 4096, 16384, 4 MiB.
    pub const fn default_tcp_wmem(self) -> [u64; 3] {
        [4096, 16_384, 4 << 20]
    }
}

impl Default for LinuxKernel {
    fn default() -> Self {
        LinuxKernel::LATEST
    }
}

impl fmt::Display for LinuxKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for LinuxKernel {
    type Err = KernelParseError;

    /// Reads `6.8`, `5.15.0-91-generic`, `6.1.0`: the first two numbers.
    fn from_str(s: &str) -> Result<Self, KernelParseError> {
        let s = s.trim();
        let (major, rest) = s.split_once('.').ok_or(KernelParseError::Malformed)?;
        let minor_len = rest
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        let (minor, tail) = rest.split_at(minor_len);
        if !(tail.is_empty() || tail.starts_with(['.', '-', '+', '_'])) {
            return Err(KernelParseError::Malformed);
        }
        let num = |t: &str| -> Result<u16, KernelParseError> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(KernelParseError::Malformed);
            }
            t.parse().map_err(|_| KernelParseError::Malformed)
        };
        Ok(LinuxKernel::new(num(major)?, num(minor)?))
    }
}

/// A Linux host as the plans see it: its kernel and the share of the
/// receive buffer it advertises as window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinuxHost {
    /// The kernel version (defaults for the buffers, the `SO_RCVBUF` rule).
    pub kernel: LinuxKernel,
    /// The share of an autotuned receive buffer advertised as window.
    pub share: WindowShare,
}

impl LinuxHost {
    /// A host running `kernel` with that kernel's default share.
    pub const fn new(kernel: LinuxKernel) -> Self {
        LinuxHost {
            kernel,
            share: kernel.window_share(),
        }
    }

    /// The same host with another share: a `tcp_adv_win_scale` that was
    /// changed (before 6.6) or a measured scaling ratio (6.6 and later).
    pub const fn with_share(self, share: WindowShare) -> Self {
        LinuxHost {
            kernel: self.kernel,
            share,
        }
    }
}

impl Default for LinuxHost {
    fn default() -> Self {
        LinuxHost::new(LinuxKernel::LATEST)
    }
}

/// Which host's limit is to be lifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The receive window (the receiver's buffer, or window scaling) limited the sender.
    Receiver,
    /// The sender's own send buffer limited it.
    Sender,
}

impl Side {
    /// `"receiver"` or `"sender"`.
    pub const fn name(self) -> &'static str {
        match self {
            Side::Receiver => "receiver",
            Side::Sender => "sender",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Linux setting the advice names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// `net.ipv4.tcp_window_scaling` (1: offer RFC 7323 window scaling).
    TcpWindowScaling,
    /// `net.ipv4.tcp_moderate_rcvbuf` (1: receive-buffer autotuning).
    TcpModerateRcvbuf,
    /// `net.ipv4.tcp_rmem`, its third value (max): the autotuning cap.
    TcpRmemMax,
    /// `net.core.rmem_max`: the cap on `SO_RCVBUF` requests.
    RmemMax,
    /// `net.ipv4.tcp_wmem`, its third value (max): the send autotuning cap.
    TcpWmemMax,
    /// `net.core.wmem_max`: the cap on `SO_SNDBUF` requests.
    WmemMax,
}

impl Setting {
    /// The sysctl name (`net.ipv4.tcp_rmem`); for `tcp_rmem` and `tcp_wmem`
    /// the value advised is the third of the three.
    pub const fn sysctl(self) -> &'static str {
        match self {
            Setting::TcpWindowScaling => "net.ipv4.tcp_window_scaling",
            Setting::TcpModerateRcvbuf => "net.ipv4.tcp_moderate_rcvbuf",
            Setting::TcpRmemMax => "net.ipv4.tcp_rmem",
            Setting::RmemMax => "net.core.rmem_max",
            Setting::TcpWmemMax => "net.ipv4.tcp_wmem",
            Setting::WmemMax => "net.core.wmem_max",
        }
    }

    /// The setting as the advice names it: the sysctl, with `max` for the
    /// three-valued ones (`net.ipv4.tcp_rmem max`).
    pub const fn name(self) -> &'static str {
        match self {
            Setting::TcpRmemMax => "net.ipv4.tcp_rmem max",
            Setting::TcpWmemMax => "net.ipv4.tcp_wmem max",
            other => other.sysctl(),
        }
    }

    /// The host it is set on.
    pub const fn side(self) -> Side {
        match self {
            Setting::TcpWmemMax | Setting::WmemMax => Side::Sender,
            _ => Side::Receiver,
        }
    }

    /// True when the advised value is exact (a switch), false when it is a minimum.
    pub const fn is_switch(self) -> bool {
        matches!(self, Setting::TcpWindowScaling | Setting::TcpModerateRcvbuf)
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a setting is advised; `Display` writes one sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Why {
    /// A window above 65,535 bytes needs RFC 7323 window scaling.
    WindowScaling {
        /// The window needed.
        window: Bytes,
        /// The shift Linux will announce with the advised buffers.
        shift: u8,
    },
    /// Autotuning must be on for `tcp_rmem` max to matter.
    Autotuning,
    /// The autotuned receive buffer must reach `buffer` for `window`.
    ReceiveBuffer {
        /// The window needed.
        window: Bytes,
        /// The buffer that advertises it.
        buffer: Bytes,
        /// The share of the buffer advertised.
        share: WindowShare,
        /// The kernel's default `tcp_rmem` max.
        default: Bytes,
    },
    /// An application that sets `SO_RCVBUF` must ask for, and be allowed, `request`.
    SoRcvbuf {
        /// The window needed.
        window: Bytes,
        /// The `SO_RCVBUF` value to ask for (the kernel doubles it).
        request: Bytes,
        /// The share such a socket is held to.
        share: WindowShare,
    },
    /// The send buffer must hold the window in flight and as much again.
    SendBuffer {
        /// The window needed.
        window: Bytes,
        /// The kernel's default `tcp_wmem` max.
        default: Bytes,
    },
    /// An application that sets `SO_SNDBUF` must ask for, and be allowed, `request`.
    SoSndbuf {
        /// The window needed.
        window: Bytes,
        /// The `SO_SNDBUF` value to ask for (the kernel doubles it).
        request: Bytes,
    },
}

fn default_note(f: &mut fmt::Formatter<'_>, needed: Bytes, default: Bytes) -> fmt::Result {
    if needed <= default {
        write!(
            f,
            "; the default, {} bytes, already allows it, unless it was lowered on this host or the application sets its own buffer",
            default.get()
        )
    } else {
        write!(f, "; the default is {} bytes", default.get())
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Why::WindowScaling { window, shift } => write!(
                f,
                "a window of {} bytes is above 65535 and needs RFC 7323 window scaling offered by both hosts \
and passed by every middlebox (Linux will announce shift {shift})",
                window.get()
            ),
            Why::Autotuning => f.write_str(
                "receive-buffer autotuning grows the buffer up to tcp_rmem max; with it off the buffer stays at tcp_rmem's default",
            ),
            Why::ReceiveBuffer {
                window,
                buffer,
                share,
                default,
            } => {
                write!(
                    f,
                    "the receiver advertises {share} as window, so a window of {} bytes needs a buffer of {} bytes, \
and autotuning grows it only up to tcp_rmem max",
                    window.get(),
                    buffer.get()
                )?;
                default_note(f, buffer, default)
            }
            Why::SoRcvbuf {
                window,
                request,
                share,
            } => write!(
                f,
                "only for applications that set SO_RCVBUF (no autotuning; the kernel doubles the request, capped at twice rmem_max): \
a window of {} bytes needs SO_RCVBUF of {} bytes at {share}",
                window.get(),
                request.get()
            ),
            Why::SendBuffer { window, default } => {
                write!(
                    f,
                    "the sender's buffer holds every unacknowledged byte: a window of {} bytes in flight needs about twice that \
(send autotuning's own factor), and autotuning grows it only up to tcp_wmem max",
                    window.get()
                )?;
                default_note(f, Bytes::new(window.get().saturating_mul(SEND_BUFFER_FACTOR)), default)
            }
            Why::SoSndbuf { window, request } => write!(
                f,
                "only for applications that set SO_SNDBUF (no autotuning; the kernel doubles the request, capped at twice wmem_max): \
a window of {} bytes in flight needs SO_SNDBUF of {} bytes",
                window.get(),
                request.get()
            ),
        }
    }
}

/// One setting to change: `setting` to `value` (at least `value`, unless
/// [`Setting::is_switch`]), and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Advice {
    /// The setting.
    pub setting: Setting,
    /// The value: bytes for the buffers (a minimum), 1 for the switches.
    pub value: u64,
    /// Why, as one sentence.
    pub why: Why,
}

impl Advice {
    /// A `sysctl -w` command that applies the advice on `kernel`, keeping
    /// the kernel's default first two values of `tcp_rmem`/`tcp_wmem`.
    pub const fn command(self, kernel: LinuxKernel) -> SysctlCommand {
        SysctlCommand {
            advice: self,
            kernel,
        }
    }
}

impl fmt::Display for Advice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.setting.is_switch() { "=" } else { ">=" };
        write!(f, "{} {op} {}: {}", self.setting, self.value, self.why)
    }
}

/// [`Advice`] as a `sysctl -w` command line (see [`Advice::command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysctlCommand {
    advice: Advice,
    kernel: LinuxKernel,
}

impl fmt::Display for SysctlCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.advice;
        let name = a.setting.sysctl();
        match a.setting {
            Setting::TcpRmemMax | Setting::TcpWmemMax => {
                let d = if a.setting == Setting::TcpRmemMax {
                    self.kernel.default_tcp_rmem()
                } else {
                    self.kernel.default_tcp_wmem()
                };
                write!(f, "sysctl -w {name}=\"{} {} {}\"", d[0], d[1], a.value)
            }
            _ => write!(f, "sysctl -w {name}={}", a.value),
        }
    }
}

/// Most pieces of advice one answer holds.
pub const ADVICE_CAPACITY: usize = 8;

/// A short list of [`Advice`], in the order to read it; no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdviceList {
    items: [Advice; ADVICE_CAPACITY],
    len: usize,
}

const FILLER: Advice = Advice {
    setting: Setting::TcpModerateRcvbuf,
    value: 0,
    why: Why::Autotuning,
};

impl AdviceList {
    /// An empty list.
    pub const fn new() -> Self {
        AdviceList {
            items: [FILLER; ADVICE_CAPACITY],
            len: 0,
        }
    }

    fn push(&mut self, a: Advice) {
        // Callers push at most ADVICE_CAPACITY items (checked by tests); a
        // further one is dropped rather than panicking.
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = a;
            self.len += 1;
        }
    }

    fn extend(&mut self, other: &AdviceList) {
        for a in other {
            self.push(*a);
        }
    }

    /// The advice as a slice.
    pub fn as_slice(&self) -> &[Advice] {
        &self.items[..self.len]
    }

    /// Number of pieces of advice.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// True when there is nothing to change.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Iterates over the advice.
    pub fn iter(&self) -> core::slice::Iter<'_, Advice> {
        self.as_slice().iter()
    }

    /// The advice for `setting`, if any.
    pub fn get(&self, setting: Setting) -> Option<&Advice> {
        self.iter().find(|a| a.setting == setting)
    }
}

impl Default for AdviceList {
    fn default() -> Self {
        AdviceList::new()
    }
}

impl<'a> IntoIterator for &'a AdviceList {
    type Item = &'a Advice;
    type IntoIter = core::slice::Iter<'a, Advice>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Everything a Linux host pair needs for a window: see [`plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferPlan {
    /// The host modelled (the receiver's share applies to the receive side).
    pub host: LinuxHost,
    /// The window to reach, bytes.
    pub window: Bytes,
    /// The autotuned receive buffer that advertises `window`: the minimum
    /// `net.ipv4.tcp_rmem` max.
    pub receive_buffer: Bytes,
    /// The `SO_RCVBUF` request that gives `window` (the kernel doubles it):
    /// the minimum `net.core.rmem_max` for applications that set it; `None`
    /// when no request can (the share such sockets are held to is too small).
    pub so_rcvbuf: Option<Bytes>,
    /// The minimum `net.ipv4.tcp_wmem` max: [`SEND_BUFFER_FACTOR`] x `window`.
    pub send_buffer: Bytes,
    /// The `SO_SNDBUF` request for `send_buffer` (half of it): the minimum
    /// `net.core.wmem_max` for applications that set it.
    pub so_sndbuf: Bytes,
    /// The shift Linux announces once `tcp_rmem` max is at least
    /// `receive_buffer` (from the larger of that and the default).
    pub rcv_wscale: u8,
    /// True when `window` is above 65,535 bytes and needs window scaling.
    pub needs_window_scaling: bool,
}

/// The settings that let `host` reach the bandwidth-delay product of `rate`
/// at `rtt` (see [`plan_window`]).
pub fn plan(rate: BitsPerSecond, rtt: Duration, host: LinuxHost) -> Result<BufferPlan, CalcError> {
    if rtt.is_zero() {
        return Err(CalcError::ZeroRtt);
    }
    if rate.is_zero() {
        return Err(CalcError::ZeroRate);
    }
    plan_window(bdp(rate, rtt)?, host)
}

/// The settings that let `host` reach a window of `window` bytes.
///
/// Errors: [`CalcError::ZeroWindow`]; [`CalcError::WindowTooLarge`] above
/// RFC 7323's largest window; [`CalcError::SettingTooLarge`] when a buffer
/// would exceed what the kernel holds ([`MAX_BUFFER`]).
///
/// ```
/// use bdp::linux::{plan_window, LinuxHost, LinuxKernel};
/// use bdp::Bytes;
/// let p = plan_window(Bytes::new(1_250_000), LinuxHost::new(LinuxKernel::new(6, 8)))?;
/// assert_eq!(p.receive_buffer, Bytes::new(2_500_000)); // 50% is window
/// assert_eq!(p.so_rcvbuf, Some(Bytes::new(2_461_539))); // 6.8 holds SO_RCVBUF sockets to 65/256
/// assert_eq!(p.send_buffer, Bytes::new(2_500_000));
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn plan_window(window: Bytes, host: LinuxHost) -> Result<BufferPlan, CalcError> {
    if window.is_zero() {
        return Err(CalcError::ZeroWindow);
    }
    window_scale_shift(window)?;
    let receive_buffer = host
        .share
        .space_for_window(window, "net.ipv4.tcp_rmem max")?;
    let so_rcvbuf = host
        .kernel
        .so_rcvbuf_share()
        .space_for_window(window, "net.core.rmem_max")
        .ok()
        .map(|s| Bytes::new(s.get().div_ceil(2)));
    let send = window.get().saturating_mul(SEND_BUFFER_FACTOR);
    if send > MAX_BUFFER.get() {
        return Err(CalcError::SettingTooLarge {
            setting: "net.ipv4.tcp_wmem max",
            needed: send,
            max: MAX_BUFFER.get(),
        });
    }
    let default_max = Bytes::new(host.kernel.default_tcp_rmem()[2]);
    Ok(BufferPlan {
        host,
        window,
        receive_buffer,
        so_rcvbuf,
        send_buffer: Bytes::new(send),
        so_sndbuf: Bytes::new(send.div_ceil(2)),
        rcv_wscale: linux_rcv_wscale(receive_buffer.max(default_max)),
        needs_window_scaling: window.get() > MAX_UNSCALED_WINDOW,
    })
}

impl BufferPlan {
    /// The settings for one side, in the order to read them: for the
    /// receiver window scaling (when needed), autotuning, `tcp_rmem` max,
    /// `rmem_max`; for the sender `tcp_wmem` max, `wmem_max`.
    pub fn advice(&self, side: Side) -> AdviceList {
        let mut l = AdviceList::new();
        let w = self.window;
        match side {
            Side::Receiver => {
                if self.needs_window_scaling {
                    l.push(Advice {
                        setting: Setting::TcpWindowScaling,
                        value: 1,
                        why: Why::WindowScaling {
                            window: w,
                            shift: self.rcv_wscale,
                        },
                    });
                }
                l.push(Advice {
                    setting: Setting::TcpModerateRcvbuf,
                    value: 1,
                    why: Why::Autotuning,
                });
                l.push(Advice {
                    setting: Setting::TcpRmemMax,
                    value: self.receive_buffer.get(),
                    why: Why::ReceiveBuffer {
                        window: w,
                        buffer: self.receive_buffer,
                        share: self.host.share,
                        default: Bytes::new(self.host.kernel.default_tcp_rmem()[2]),
                    },
                });
                if let Some(request) = self.so_rcvbuf {
                    l.push(Advice {
                        setting: Setting::RmemMax,
                        value: request.get(),
                        why: Why::SoRcvbuf {
                            window: w,
                            request,
                            share: self.host.kernel.so_rcvbuf_share(),
                        },
                    });
                }
            }
            Side::Sender => {
                l.push(Advice {
                    setting: Setting::TcpWmemMax,
                    value: self.send_buffer.get(),
                    why: Why::SendBuffer {
                        window: w,
                        default: Bytes::new(self.host.kernel.default_tcp_wmem()[2]),
                    },
                });
                l.push(Advice {
                    setting: Setting::WmemMax,
                    value: self.so_sndbuf.get(),
                    why: Why::SoSndbuf {
                        window: w,
                        request: self.so_sndbuf,
                    },
                });
            }
        }
        l
    }

    /// Both sides' settings: the receiver's, then the sender's.
    pub fn all_advice(&self) -> AdviceList {
        let mut l = self.advice(Side::Receiver);
        l.extend(&self.advice(Side::Sender));
        l
    }
}

/// What lifts a window or buffer limit seen in a transfer: the settings
/// `side`'s host needs so that `target` can flow at `rtt`.
///
/// - `side`: [`Side::Receiver`] when the receive window limited (the
///   settings go on the receiving host), [`Side::Sender`] when the sender's
///   buffer did (they go on the sending host).
/// - `target`: the rate to reach: the path's rate when known, or a rate the
///   user asks about. The window needed is its bandwidth-delay product at `rtt`.
/// - `limiting`: the window (or bytes in flight at the buffer limit) that
///   limited the transfer.
/// - `host`: the kernel of the host to change (see [`LinuxHost::new`]).
///
/// Returns an empty list when `limiting` already carries `target` at `rtt`
/// (the window needed is not above it): then the window is not what keeps
/// the transfer from the target, and no buffer setting helps.
///
/// Errors as [`plan`]: zero RTT or rate, a target beyond any TCP window at
/// this RTT, or a buffer beyond what the kernel holds.
///
/// # Example
///
/// The campus case: a download stuck at 65,535 bytes of window on a 10 ms
/// path, the receiver a Linux 6.8 host, the target 1 Gbit/s.
///
/// ```
/// use bdp::linux::{advise, LinuxHost, LinuxKernel, Setting, Side};
/// use bdp::{BitsPerSecond, Bytes};
/// use core::time::Duration;
///
/// let advice = advise(
///     Side::Receiver,
///     BitsPerSecond::new(1_000_000_000),
///     Duration::from_millis(10),
///     Bytes::new(65_535),
///     LinuxHost::new(LinuxKernel::new(6, 8)),
/// )?;
/// let settings: Vec<_> = advice.iter().map(|a| (a.setting.name(), a.value)).collect();
/// assert_eq!(settings, [
///     ("net.ipv4.tcp_window_scaling", 1),
///     ("net.ipv4.tcp_moderate_rcvbuf", 1),
///     ("net.ipv4.tcp_rmem max", 2_500_000),
///     ("net.core.rmem_max", 2_461_539),
/// ]);
/// // Each `why` is a sentence (Display); the JSON form is {"setting", "value", "why"}.
/// let why = advice.get(Setting::TcpRmemMax).unwrap().why.to_string();
/// assert!(why.contains("a window of 1250000 bytes needs a buffer of 2500000 bytes"));
/// // A window that already carries the target needs no change.
/// assert!(advise(Side::Receiver, BitsPerSecond::new(50_000_000), Duration::from_millis(10),
///                Bytes::new(65_535), LinuxHost::default())?.is_empty());
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn advise(
    side: Side,
    target: BitsPerSecond,
    rtt: Duration,
    limiting: Bytes,
    host: LinuxHost,
) -> Result<AdviceList, CalcError> {
    let p = plan(target, rtt, host)?;
    if p.window <= limiting {
        return Ok(AdviceList::new());
    }
    Ok(p.advice(side))
}

/// The largest window an autotuned Linux receiver can advertise with
/// `tcp_rmem` max = `tcp_rmem_max`: `tcp_win_from_space(tcp_rmem_max)`.
pub fn max_autotuned_window(tcp_rmem_max: Bytes, share: WindowShare) -> Bytes {
    share.window_from_space(tcp_rmem_max.min(MAX_BUFFER))
}
