//! Transfer time with slow start: what a short transfer on a long path costs.
//!
//! [`crate::transfer_time`] is the steady state: every byte at
//! `min(rate, window / RTT)`. A new connection does not start there. It
//! starts with an initial window of [`INITIAL_WINDOW_SEGMENTS`] segments
//! (RFC 6928; Linux's `TCP_INIT_CWND`) and, in slow start (RFC 5681), doubles
//! its window every round trip until the window reaches what the path
//! holds. On a 550 ms path that takes seconds, and a transfer of a few
//! megabytes spends most of its time there.
//!
//! # The model
//!
//! Round `k` (from 0) may send `cwnd_k = 10 * MSS * 2^k` bytes and lasts one
//! RTT, as long as `cwnd_k` is below the steady window: the
//! bandwidth-delay product (with a rate) or the receive window (with a
//! window), the smaller of the two when both are given. Once a round's
//! window reaches the steady window, or the data left fits in the round,
//! the rest flows at the steady-state throughput, timed exactly as
//! [`crate::transfer_time`] times it. So the answer is the steady-state
//! time of what is left plus one RTT per slow-start round before it, never
//! less than the steady-state time of the whole transfer; like that one it
//! leaves out the handshake and the last segment's one-way delay.
//!
//! Not modelled: loss (no slow start ends early at a `ssthresh`), delayed
//! ACKs (which slow the doubling to about 1.5x per round), HyStart, and a
//! receiver's initial window below 10 segments.

use crate::error::CalcError;
use crate::rate::BitsPerSecond;
use crate::size::Bytes;
use crate::window::{bdp, transfer_time, Limit};
use core::time::Duration;

/// Segments in the initial window: RFC 6928, Linux's `TCP_INIT_CWND`.
pub const INITIAL_WINDOW_SEGMENTS: u64 = 10;

/// A transfer time with slow start: see [`transfer_time_slow_start`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowStartTransfer {
    /// The whole transfer.
    pub time: Duration,
    /// Round trips spent in slow start before the steady state (or before
    /// the last round, when the transfer ends in slow start).
    pub slow_start_rounds: u32,
    /// Bytes sent during those rounds.
    pub slow_start_bytes: Bytes,
    /// `slow_start_rounds` round trips.
    pub slow_start_time: Duration,
    /// What limits the steady state.
    pub limit: Limit,
    /// The steady-state throughput.
    pub throughput: BitsPerSecond,
}

/// The time to transfer `size` bytes over a new connection with segments of
/// `mss` bytes, starting from an initial window of 10 segments and doubling
/// per `rtt` up to the steady state of `rate` and/or `window` (see the
/// module documentation).
///
/// Errors: a zero `mss`, `rtt`, rate or window; neither a rate nor a window
/// ([`CalcError::NoLimit`]); overflow.
///
/// ```
/// use bdp::slow_start::transfer_time_slow_start;
/// use bdp::{transfer_time, BitsPerSecond, Bytes};
/// use core::time::Duration;
/// // A 1 MB transfer at 51.84 Mbit/s over 550 ms: 0.154 s in steady state...
/// let oc1 = BitsPerSecond::new(51_840_000);
/// let rtt = Duration::from_millis(550);
/// let steady = transfer_time(Bytes::new(1_000_000), Some(oc1), None)?;
/// assert_eq!(steady.time.as_micros(), 154_320);
/// // ...but 6 round trips of slow start (14,600 to 467,200 bytes) come first.
/// let t = transfer_time_slow_start(Bytes::new(1_000_000), Bytes::new(1460), Some(oc1), None, rtt)?;
/// assert_eq!(t.slow_start_rounds, 6);
/// assert_eq!(t.time.as_micros(), 3_300_000 + 12_376);
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn transfer_time_slow_start(
    size: Bytes,
    mss: Bytes,
    rate: Option<BitsPerSecond>,
    window: Option<Bytes>,
    rtt: Duration,
) -> Result<SlowStartTransfer, CalcError> {
    const OVERFLOW: CalcError = CalcError::Overflow {
        what: "slow-start transfer time",
    };
    if mss.is_zero() {
        return Err(CalcError::ZeroMss);
    }
    if rtt.is_zero() {
        return Err(CalcError::ZeroRtt);
    }
    // Validates rate/window (zero, neither) the same way as the steady state.
    transfer_time(size, rate, window.map(|w| (w, rtt)))?;
    let pipe = match rate {
        Some(r) => Some(bdp(r, rtt)?.get()),
        None => None,
    };
    let steady_window = match (pipe, window) {
        (Some(p), Some(w)) => p.min(w.get()),
        (Some(p), None) => p,
        (None, Some(w)) => w.get(),
        (None, None) => return Err(CalcError::NoLimit),
    };
    let steady_window = u128::from(steady_window);
    let mut cwnd = u128::from(mss.get()) * u128::from(INITIAL_WINDOW_SEGMENTS);
    let mut left = u128::from(size.get());
    let mut rounds: u32 = 0;
    // Each round doubles cwnd, which starts at >= 10 and stops below
    // steady_window < 2^64: at most 64 rounds.
    while cwnd < steady_window && left > cwnd {
        left -= cwnd;
        cwnd *= 2;
        rounds += 1;
    }
    let sent = u128::from(size.get()) - left;
    // left <= size fits u64.
    let tail = transfer_time(Bytes::new(left as u64), rate, window.map(|w| (w, rtt)))?;
    let ss_time = rtt.checked_mul(rounds).ok_or(OVERFLOW)?;
    let time = ss_time.checked_add(tail.time).ok_or(OVERFLOW)?;
    Ok(SlowStartTransfer {
        time,
        slow_start_rounds: rounds,
        slow_start_bytes: Bytes::new(sent as u64),
        slow_start_time: ss_time,
        limit: tail.limit,
        throughput: tail.throughput,
    })
}
