//! Loss-limited TCP throughput: the Mathis and Padhye models.
//!
//! **Mathis et al. 1997** ("The Macroscopic Behavior of the TCP Congestion
//! Avoidance Algorithm", CCR 27(3)): a Reno flow losing one segment in every
//! `1/p` settles into a saw-tooth whose average rate is
//! `MSS / RTT * C / sqrt(p)`. With one ACK per segment `C = sqrt(3/2)`
//! (about 1.22); with delayed ACKs (one ACK per two segments, `b = 2`) the
//! window grows half as fast and `C = sqrt(3/4)` (about 0.87).
//!
//! **Padhye et al. 1998** ("Modeling TCP Throughput: A Simple Model and its
//! Empirical Validation", SIGCOMM): adds retransmission timeouts. In the form
//! RFC 5348 (TFRC) section 3.1 uses, in bytes per second,
//!
//! ```text
//!                               s
//! X = -----------------------------------------------------------------
//!     R*sqrt(2*b*p/3) + t_RTO * (3*sqrt(3*b*p/8)) * p * (1 + 32*p^2)
//! ```
//!
//! with `s` the segment size, `R` the RTT, `b` segments per ACK (RFC 5348
//! recommends 1) and `t_RTO` the retransmission timeout (RFC 5348's default
//! is `4*R`). Optionally capped by the receive window, `W / R`, as in the
//! paper's full model.
//!
//! Both are approximations valid for small `p`; the answer is an `f64` in
//! bits per second, computed with `libm` (no std).

use crate::error::CalcError;
use crate::rate::BitsPerSecond;
use crate::size::Bytes;
use core::time::Duration;

/// The constant `C` of the Mathis formula.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MathisConstant {
    /// `sqrt(3/2)`: every segment acknowledged.
    Periodic,
    /// `sqrt(3/4)`: delayed ACKs, one ACK per two segments.
    DelayedAck,
    /// Any other positive constant (the paper's fits range 0.7 to 1.3).
    Custom(f64),
}

impl MathisConstant {
    /// The numeric value of `C`.
    pub fn value(self) -> f64 {
        match self {
            MathisConstant::Periodic => libm::sqrt(1.5),
            MathisConstant::DelayedAck => libm::sqrt(0.75),
            MathisConstant::Custom(c) => c,
        }
    }
}

fn check_common(mss: Bytes, rtt: Duration, p: f64) -> Result<f64, CalcError> {
    if mss.is_zero() {
        return Err(CalcError::ZeroMss);
    }
    if rtt.is_zero() {
        return Err(CalcError::ZeroRtt);
    }
    if !(p > 0.0 && p <= 1.0) {
        return Err(CalcError::LossOutOfRange { p });
    }
    Ok(rtt.as_secs_f64())
}

/// Mathis et al. 1997: `MSS * 8 / RTT * C / sqrt(p)`, bits per second.
///
/// ```
/// use bdp::{mathis, Bytes, MathisConstant};
/// use core::time::Duration;
/// let bps = mathis(Bytes::new(1460), Duration::from_millis(100), 0.01, MathisConstant::Periodic)?;
/// assert!((bps - 1_430_500.0).abs() < 100.0); // about 1.43 Mbit/s
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn mathis(mss: Bytes, rtt: Duration, p: f64, c: MathisConstant) -> Result<f64, CalcError> {
    let r = check_common(mss, rtt, p)?;
    let c = c.value();
    if !(c.is_finite() && c > 0.0) {
        return Err(CalcError::InvalidParameter { name: "C" });
    }
    Ok(mss.get() as f64 * 8.0 / r * c / libm::sqrt(p))
}

/// Parameters of the Padhye model beyond MSS, RTT and loss.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PadhyeParams {
    /// Segments acknowledged per ACK, `b` (RFC 5348: 1).
    pub b: u32,
    /// Retransmission timeout; `None` for RFC 5348's `4 * RTT`.
    pub t_rto: Option<Duration>,
    /// Receive window cap `W / RTT`; `None` for the uncapped RFC 5348 form.
    pub max_window: Option<Bytes>,
}

impl Default for PadhyeParams {
    fn default() -> Self {
        PadhyeParams {
            b: 1,
            t_rto: None,
            max_window: None,
        }
    }
}

/// Padhye et al. 1998 in RFC 5348's form, bits per second.
///
/// ```
/// use bdp::{padhye, Bytes, PadhyeParams};
/// use core::time::Duration;
/// let bps = padhye(Bytes::new(1460), Duration::from_millis(100), 0.01, PadhyeParams::default())?;
/// assert!(bps > 1.2e6 && bps < 1.43e6); // timeouts cost a little against Mathis
/// # Ok::<(), bdp::CalcError>(())
/// ```
pub fn padhye(mss: Bytes, rtt: Duration, p: f64, params: PadhyeParams) -> Result<f64, CalcError> {
    let r = check_common(mss, rtt, p)?;
    if params.b == 0 {
        return Err(CalcError::InvalidParameter { name: "b" });
    }
    let b = f64::from(params.b);
    let t_rto = match params.t_rto {
        Some(t) if t.is_zero() => return Err(CalcError::InvalidParameter { name: "t_RTO" }),
        Some(t) => t.as_secs_f64(),
        None => 4.0 * r,
    };
    let s = mss.get() as f64;
    let denominator = r * libm::sqrt(2.0 * b * p / 3.0)
        + t_rto * (3.0 * libm::sqrt(3.0 * b * p / 8.0)) * p * (1.0 + 32.0 * p * p);
    let mut bytes_per_sec = s / denominator;
    if let Some(w) = params.max_window {
        if w.is_zero() {
            return Err(CalcError::ZeroWindow);
        }
        bytes_per_sec = bytes_per_sec.min(w.get() as f64 / r);
    }
    Ok(bytes_per_sec * 8.0)
}

/// A model result as a [`BitsPerSecond`], rounded down; `None` if not finite or too large.
pub fn to_rate(bps: f64) -> Option<BitsPerSecond> {
    if (0.0..18_446_744_073_709_551_616.0).contains(&bps) {
        // In range and non-negative: the truncating cast is the floor.
        Some(BitsPerSecond::new(bps as u64))
    } else {
        None
    }
}
