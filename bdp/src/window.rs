//! Window math: bandwidth-delay product, window scaling, ceilings, transfer time.
//!
//! Everything here is exact integer arithmetic with `u128` intermediates:
//! rates are whole bits per second, sizes whole bytes, times whole
//! nanoseconds. Where a quotient is not whole, the rounding direction is the
//! safe one: a *needed* window is rounded up (a window one byte short does not
//! fill the pipe), a *ceiling* is rounded down (the flow can never exceed it),
//! a *time* is rounded up to the nanosecond.
//!
//! # Window scaling: two rules
//!
//! A TCP header carries a 16-bit window; RFC 7323 lets each side announce a
//! shift `s` (0..=14) in its SYN, after which the window field counts units
//! of `2^s` bytes, so the largest window is `65535 << s`.
//!
//! - [`window_scale_shift`] answers "which shift must I configure so that a
//!   window of W bytes can be advertised?": the smallest `s` with
//!   `65535 << s >= W`. Above `65535 << 14` = 1,073,725,440 bytes no shift
//!   works, and that is an error, never a clamped shift.
//! - [`linux_rcv_wscale`] is what Linux announces (`tcp_select_initial_window`
//!   in `net/ipv4/tcp_output.c`): it takes the largest receive space the
//!   socket could grow to (the larger of the socket's space, `tcp_rmem[2]` and
//!   `rmem_max`, capped by the window clamp) and picks
//!   `clamp(ilog2(space) - 15, 0, 14)`, the smallest `s` with
//!   `space >> s <= 65535`. That rule looks at buffer *capacity*, not at the
//!   path: with default sysctls (`tcp_rmem[2]` = 6 MiB) Linux announces 7
//!   whatever the BDP. It also differs at the edge: for 131,071 bytes Linux
//!   picks 1 (131,071 >> 1 = 65,535), although `65535 << 1` = 131,070 is one
//!   byte short, so [`window_scale_shift`] says 2.

use crate::duration::{duration_from_nanos, NANOS_PER_SEC};
use crate::error::CalcError;
use crate::rate::BitsPerSecond;
use crate::size::Bytes;
use core::time::Duration;

/// The largest window a TCP header can carry without scaling.
pub const MAX_UNSCALED_WINDOW: u64 = 65_535;
/// RFC 7323's largest window-scale shift.
pub const MAX_WINDOW_SCALE: u8 = 14;
/// RFC 7323's largest window: `65535 << 14` = 1,073,725,440 bytes.
pub const MAX_WINDOW: Bytes = Bytes::new(MAX_UNSCALED_WINDOW << MAX_WINDOW_SCALE);

/// Bits in a byte.
const BITS_PER_BYTE: u128 = 8;

fn nanos(rtt: Duration) -> u128 {
    rtt.as_nanos()
}

/// The bandwidth-delay product of `rate` over `rtt`, in bytes, rounded up.
///
/// This is the data in flight on a full pipe, and so the window a sender
/// needs to keep it full (see [`window_needed`]).
///
/// ```
/// use bdp::{bdp, BitsPerSecond, Bytes};
/// use core::time::Duration;
/// // 1 Gbit/s over 10 ms: 1,250,000 bytes.
/// assert_eq!(bdp(BitsPerSecond::new(1_000_000_000), Duration::from_millis(10))?, Bytes::new(1_250_000));
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn bdp(rate: BitsPerSecond, rtt: Duration) -> Result<Bytes, CalcError> {
    let bits_ns = u128::from(rate.get())
        .checked_mul(nanos(rtt))
        .ok_or(CalcError::Overflow {
            what: "bandwidth-delay product",
        })?;
    let bytes = bits_ns.div_ceil(BITS_PER_BYTE * NANOS_PER_SEC);
    u64::try_from(bytes)
        .map(Bytes::new)
        .map_err(|_| CalcError::Overflow {
            what: "bandwidth-delay product",
        })
}

/// The window needed to sustain `rate` at `rtt`: the [`bdp`], rounded up.
pub fn window_needed(rate: BitsPerSecond, rtt: Duration) -> Result<Bytes, CalcError> {
    bdp(rate, rtt)
}

/// The smallest window-scale shift that lets `window` be advertised:
/// the least `s` with `65535 << s >= window`.
///
/// ```
/// use bdp::{window_scale_shift, Bytes};
/// assert_eq!(window_scale_shift(Bytes::new(65_535))?, 0);
/// assert_eq!(window_scale_shift(Bytes::new(1_250_000))?, 5);
/// assert!(window_scale_shift(Bytes::new(2_000_000_000)).is_err());
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn window_scale_shift(window: Bytes) -> Result<u8, CalcError> {
    let w = window.get();
    (0..=MAX_WINDOW_SCALE)
        .find(|&s| MAX_UNSCALED_WINDOW << s >= w)
        .ok_or(CalcError::WindowTooLarge {
            window: w,
            max: MAX_WINDOW.get(),
        })
}

/// The shift Linux announces for a receive space of `space` bytes:
/// `clamp(ilog2(space) - 15, 0, 14)` (0 for an empty space).
///
/// `space` is the value `tcp_select_initial_window` computes, see
/// [`linux_initial_rcv_wscale`]; the module documentation compares the rules.
pub fn linux_rcv_wscale(space: Bytes) -> u8 {
    let v = space.get();
    if v == 0 {
        return 0;
    }
    let ilog2 = v.ilog2();
    // ilog2 <= 63, so the clamped difference fits u8.
    ilog2.saturating_sub(15).min(u32::from(MAX_WINDOW_SCALE)) as u8
}

/// Linux's initial receive window scale from the socket's receive space and
/// the sysctls: `space = min(max(space, tcp_rmem[2], rmem_max), window_clamp)`
/// (a `window_clamp` of zero means no clamp), then [`linux_rcv_wscale`].
///
/// Recent kernels cap by the socket's receive buffer rather than the clamp;
/// pass that as `window_clamp` to model them.
///
/// ```
/// use bdp::{linux_initial_rcv_wscale, Bytes};
/// // Default sysctls: tcp_rmem[2] = 6 MiB, rmem_max = 208 KiB -> shift 7.
/// let s = linux_initial_rcv_wscale(Bytes::new(131_072), Bytes::new(6 << 20), Bytes::new(212_992), Bytes::ZERO);
/// assert_eq!(s, 7);
/// ```
pub fn linux_initial_rcv_wscale(
    space: Bytes,
    tcp_rmem_max: Bytes,
    rmem_max: Bytes,
    window_clamp: Bytes,
) -> u8 {
    let mut s = space.max(tcp_rmem_max).max(rmem_max);
    if !window_clamp.is_zero() {
        s = s.min(window_clamp);
    }
    linux_rcv_wscale(s)
}

/// The largest window a shift can advertise: `65535 << shift`.
pub fn max_window(shift: u8) -> Result<Bytes, CalcError> {
    if shift > MAX_WINDOW_SCALE {
        return Err(CalcError::ShiftTooLarge { shift });
    }
    Ok(Bytes::new(MAX_UNSCALED_WINDOW << shift))
}

/// The throughput ceiling of `window` at `rtt`: `window * 8 / rtt`, rounded down.
///
/// ```
/// use bdp::{ceiling, Bytes};
/// use core::time::Duration;
/// // An unscaled 64 KiB window over 10 ms: 52,428,000 bit/s.
/// assert_eq!(ceiling(Bytes::new(65_535), Duration::from_millis(10))?.get(), 52_428_000);
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn ceiling(window: Bytes, rtt: Duration) -> Result<BitsPerSecond, CalcError> {
    let rtt_ns = nanos(rtt);
    if rtt_ns == 0 {
        return Err(CalcError::ZeroRtt);
    }
    // bits <= 2^67 and NANOS_PER_SEC < 2^30: no overflow in u128.
    let v = window.bits() * NANOS_PER_SEC / rtt_ns;
    u64::try_from(v)
        .map(BitsPerSecond::new)
        .map_err(|_| CalcError::Overflow {
            what: "throughput ceiling",
        })
}

/// What limits a transfer in [`transfer_time`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// The path rate.
    Rate,
    /// The window over the round-trip time.
    Window,
}

/// The result of [`transfer_time`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transfer {
    /// Steady-state time to move the data, rounded up to the nanosecond.
    pub time: Duration,
    /// The binding limit (the rate when both give the same time).
    pub limit: Limit,
    /// The effective throughput, `min(rate, window / rtt)`, rounded down.
    pub throughput: BitsPerSecond,
}

/// Steady-state time to move `size` bytes at `min(rate, window / rtt)`.
///
/// Give a rate, a window with its RTT, or both. The model ignores the
/// handshake, slow start and losses: it is the time at full speed, the
/// "ideal" transfer time of RFC 6349. The window path is computed as
/// `size * rtt / window` so the ceiling's rounding does not leak into it.
///
/// ```
/// use bdp::{transfer_time, BitsPerSecond, Bytes, Limit};
/// use core::time::Duration;
/// // An 8 MiB image through a 1 MiB window on a 0.55 s path: 4.4 s.
/// let t = transfer_time(
///     Bytes::new(8 << 20),
///     Some(BitsPerSecond::new(51_840_000)),
///     Some((Bytes::new(1 << 20), Duration::from_millis(550))),
/// )?;
/// assert_eq!(t.time, Duration::from_millis(4400));
/// assert_eq!(t.limit, Limit::Window);
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn transfer_time(
    size: Bytes,
    rate: Option<BitsPerSecond>,
    window: Option<(Bytes, Duration)>,
) -> Result<Transfer, CalcError> {
    const OVERFLOW: CalcError = CalcError::Overflow {
        what: "transfer time",
    };
    // Each candidate: (time in ns, limit, throughput).
    let by_rate = match rate {
        None => None,
        Some(r) if r.is_zero() => return Err(CalcError::ZeroRate),
        Some(r) => {
            let ns = (size.bits() * NANOS_PER_SEC).div_ceil(u128::from(r.get()));
            Some((ns, Limit::Rate, r))
        }
    };
    let by_window = match window {
        None => None,
        Some((w, rtt)) => {
            if w.is_zero() {
                return Err(CalcError::ZeroWindow);
            }
            let ceil = ceiling(w, rtt)?;
            let ns = u128::from(size.get())
                .checked_mul(nanos(rtt))
                .ok_or(OVERFLOW)?
                .div_ceil(u128::from(w.get()));
            Some((ns, Limit::Window, ceil))
        }
    };
    let (ns, limit, throughput) = match (by_rate, by_window) {
        (None, None) => return Err(CalcError::NoLimit),
        (Some(a), None) | (None, Some(a)) => a,
        (Some(a), Some(b)) => {
            if b.0 > a.0 {
                b
            } else {
                a
            }
        }
    };
    let time = duration_from_nanos(ns).ok_or(OVERFLOW)?;
    Ok(Transfer {
        time,
        limit,
        throughput,
    })
}
