//! RFC 6349 ("Framework for TCP Throughput Testing") metrics.
//!
//! - *Ideal TCP transfer time*: the data divided by the maximum achievable
//!   TCP throughput (the link's goodput after framing and headers, see
//!   [`crate::Link::goodput`]).
//! - *TCP transfer time ratio* (section 4.1): actual transfer time over the
//!   ideal one; 1.0 is perfect, larger is worse.
//! - *TCP efficiency* (section 4.2): the share of transmitted bytes that
//!   were not retransmissions, in percent:
//!   `(transmitted - retransmitted) / transmitted * 100`, where
//!   `transmitted` counts originals and retransmissions.
//! - *Buffer delay* (section 4.3): how much the RTT grows under load, in
//!   percent of the baseline: `(average RTT - baseline RTT) / baseline * 100`.

use crate::duration::{duration_from_nanos, NANOS_PER_SEC};
use crate::error::CalcError;
use crate::rate::BitsPerSecond;
use crate::size::Bytes;
use core::time::Duration;

/// Ideal transfer time of `size` at `max_throughput`, rounded up to the nanosecond.
///
/// ```
/// use bdp::{rfc6349, BitsPerSecond, Bytes};
/// use core::time::Duration;
/// // 100 MB at 80 Mbit/s: 10 s.
/// let t = rfc6349::ideal_transfer_time(Bytes::new(100_000_000), BitsPerSecond::new(80_000_000))?;
/// assert_eq!(t, Duration::from_secs(10));
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn ideal_transfer_time(
    size: Bytes,
    max_throughput: BitsPerSecond,
) -> Result<Duration, CalcError> {
    if max_throughput.is_zero() {
        return Err(CalcError::ZeroRate);
    }
    let ns = (size.bits() * NANOS_PER_SEC).div_ceil(u128::from(max_throughput.get()));
    duration_from_nanos(ns).ok_or(CalcError::Overflow {
        what: "ideal transfer time",
    })
}

/// TCP transfer time ratio: `actual / ideal`.
pub fn transfer_time_ratio(actual: Duration, ideal: Duration) -> Result<f64, CalcError> {
    if ideal.is_zero() {
        return Err(CalcError::ZeroDuration {
            what: "ideal transfer time",
        });
    }
    Ok(actual.as_secs_f64() / ideal.as_secs_f64())
}

/// TCP efficiency in percent: `(transmitted - retransmitted) / transmitted * 100`.
///
/// ```
/// use bdp::{rfc6349, Bytes};
/// let e = rfc6349::tcp_efficiency(Bytes::new(102_000), Bytes::new(2_000))?;
/// assert!((e - 98.039).abs() < 0.001);
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn tcp_efficiency(transmitted: Bytes, retransmitted: Bytes) -> Result<f64, CalcError> {
    if transmitted.is_zero() {
        return Err(CalcError::ZeroSize {
            what: "transmitted bytes",
        });
    }
    if retransmitted > transmitted {
        return Err(CalcError::RetransmittedExceedsTransmitted {
            transmitted: transmitted.get(),
            retransmitted: retransmitted.get(),
        });
    }
    let good = (transmitted.get() - retransmitted.get()) as f64;
    Ok(good / transmitted.get() as f64 * 100.0)
}

/// Buffer delay in percent: `(average_rtt - baseline_rtt) / baseline_rtt * 100`.
///
/// Negative when the loaded RTT is below the baseline (a baseline measured
/// too high).
pub fn buffer_delay(average_rtt: Duration, baseline_rtt: Duration) -> Result<f64, CalcError> {
    if baseline_rtt.is_zero() {
        return Err(CalcError::ZeroRtt);
    }
    let base = baseline_rtt.as_secs_f64();
    Ok((average_rtt.as_secs_f64() - base) / base * 100.0)
}
