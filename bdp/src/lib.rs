//! TCP window math with units that cannot be mixed up.
//!
//! A rate is a [`BitsPerSecond`] (alias [`Rate`]), a size is a [`Bytes`], a
//! time is a [`core::time::Duration`]; each reads and writes text with exact
//! SI (powers of 1000) and binary (powers of 1024) prefixes and never goes
//! through floating point. On top of them:
//!
//! - [`bdp`] / [`window_needed`], [`window_scale_shift`] (smallest shift that
//!   fits) next to [`linux_rcv_wscale`] (what Linux announces), [`max_window`],
//!   [`ceiling`] and [`transfer_time`], exact in integers and checked for
//!   overflow (module [`window`]);
//! - loss-limited throughput, [`mathis`] and [`padhye`] (module [`loss`]);
//! - RFC 6349 metrics (module [`rfc6349`]);
//! - link framing and goodput: Ethernet, SONET/SDH, ATM AAL5, T1/T3
//!   (module [`link`]), with TCP/IP header sizes ([`TcpIpHeaders`]);
//! - the Linux settings that let a host reach a window (`tcp_rmem`/`tcp_wmem`
//!   maxima, `rmem_max`/`wmem_max`, the share of the buffer advertised as
//!   window) and [`linux::advise`], what lifts a window or buffer limit
//!   (module [`linux`]);
//! - transfer time with slow start from an initial window of 10 segments,
//!   [`transfer_time_slow_start`] (module [`slow_start`]).
//!
//! The crate is `no_std`, allocates nothing and has no `unsafe`. Every error
//! is a typed value: [`ParseError`] for text, [`CalcError`] for arithmetic.
//!
//! # Example: the campus firewall that disabled window scaling
//!
//! ```
//! use bdp::{bdp, ceiling, parse_duration, window_scale_shift, BitsPerSecond, Bytes};
//!
//! let rtt = parse_duration("10ms")?;
//! // Without window scaling the window is at most 65535 bytes...
//! let capped = ceiling("65535".parse::<Bytes>()?, rtt)?;
//! assert_eq!(capped.get(), 52_428_000);
//! assert_eq!(capped.to_string(), "52.428 Mbit/s");
//! // ...while 1 Gbit/s at 10 ms needs 1,250,000 bytes, window-scale shift 5.
//! let needed = bdp("1Gbps".parse::<BitsPerSecond>()?, rtt)?;
//! assert_eq!(needed, Bytes::new(1_250_000));
//! assert_eq!(window_scale_shift(needed)?, 5);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod duration;
mod error;
mod headers;
pub mod link;
pub mod linux;
pub mod loss;
mod rate;
pub mod rfc6349;
mod rounded;
mod size;
pub mod slow_start;
mod text;
pub mod window;

pub use duration::{parse_duration, DurationDisplay};
pub use error::{CalcError, ParseError, Quantity};
pub use headers::{
    IpVersion, TcpIpHeaders, IPV4_HEADER_LEN, IPV6_HEADER_LEN, TCP_HEADER_LEN, TCP_TIMESTAMPS_LEN,
};
pub use link::{AtmEncapsulation, Framing, Link, LINKS};
pub use loss::{mathis, padhye, MathisConstant, PadhyeParams};
pub use rate::{BitsPerSecond, Rate};
pub use rounded::Rounded;
pub use size::{BinaryBytes, Bytes, SiBytes};
pub use slow_start::{transfer_time_slow_start, SlowStartTransfer};
pub use window::{
    bdp, ceiling, linux_initial_rcv_wscale, linux_rcv_wscale, max_window, transfer_time,
    window_needed, window_scale_shift, Limit, Transfer, MAX_UNSCALED_WINDOW, MAX_WINDOW,
    MAX_WINDOW_SCALE,
};

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
