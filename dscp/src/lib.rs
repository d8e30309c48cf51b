//! The DS field of IPv4 and IPv6: DSCP, ECN, IP precedence, TOS, names,
//! classifier tables and in-place header rewrites.
//!
//! The second byte of an IPv4 header started life as the RFC 791 "type of
//! service" byte (precedence and D/T/R bits, revised by RFC 1349), became
//! the Differentiated Services field of RFC 2474 (a 6-bit code point), and
//! gave its two low bits to ECN (RFC 3168). IPv6 calls the same byte the
//! traffic class. This crate models each reading of that byte without
//! losing bits:
//!
//! | type | bits | source |
//! |------|------|--------|
//! | [`DsField`] | the whole byte | RFC 2474, RFC 3168 |
//! | [`Dscp`] | upper 6 | RFC 2474; names from RFC 2597, 3246, 5865, 8622 |
//! | [`Ecn`] | lower 2 | RFC 3168 |
//! | [`Precedence`] | upper 3 | RFC 791 |
//! | [`Tos`], [`TosFlags`] | the whole byte, legacy layout | RFC 1349 |
//!
//! On top of these: [`PrecedenceClassifier`] and [`DscpClassifier`] map a
//! marking to an output queue (the Juniper precedence map of the QBSS
//! scavenger deployment is [`PrecedenceClassifier::juniper_qbss`]), and
//! [`ipv4`] and [`ipv6`] read and rewrite the field in a header in place,
//! keeping the IPv4 checksum valid by the RFC 1624 incremental update.
//!
//! The crate is `no_std`, needs no allocator, has no `unsafe`, and no input
//! makes a public function panic.
//!
//! # Example
//!
//! A QBSS (scavenger) sender marks its packets with precedence 001, TOS
//! byte 0x20, which is DSCP CS1. Which queue does a router put them in,
//! and what does remarking them to LE (RFC 8622) change?
//!
//! ```
//! use dscp::{ipv4, Dscp, DsField, Ecn, Precedence, PrecedenceClassifier};
//!
//! let qbss: Dscp = "cs1".parse()?;
//! assert_eq!(qbss.precedence(), Precedence::Priority);
//! assert_eq!(DsField::from_parts(qbss, Ecn::NotEct).value(), 0x20);
//! assert_eq!(format!("{qbss} = {qbss:#}"), "CS1 = Class Selector 1");
//!
//! // The Juniper precedence map sends precedence 001 to queue 1.
//! let map = PrecedenceClassifier::juniper_qbss();
//! assert_eq!(map.classify_byte(0x20), 1);
//!
//! // Remark an ECN-capable packet to LE in its IPv4 header: ECN is kept
//! // and the checksum stays valid.
//! let mut header = [
//!     0x45, 0x22, 0x00, 0x54, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x01,
//!     0x00, 0x00, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02,
//! ];
//! ipv4::fill_checksum(&mut header)?;
//! ipv4::set_dscp(&mut header, Dscp::LE)?;
//! assert_eq!(ipv4::ds_field(&header)?, DsField::from_parts(Dscp::LE, Ecn::Ect0));
//! assert!(ipv4::verify_checksum(&header)?);
//!
//! // A precedence map cannot see LE: 000001 reads as precedence 000.
//! assert_eq!(map.classify_byte(header[1]), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `cargo run -p dscp --example classify` prints the whole precedence
//! table with the QBSS queues.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod checksum;
pub mod classifier;
mod ds_field;
mod dscp;
mod ecn;
mod error;
pub mod ipv4;
pub mod ipv6;
mod names;
mod number;
mod pool;
mod precedence;
mod tos;
pub mod tunnel;

pub use crate::classifier::{DscpClassifier, PrecedenceClassifier};
pub use crate::ds_field::DsField;
pub use crate::dscp::Dscp;
pub use crate::ecn::{CongestionAction, Ecn};
pub use crate::error::{
    HeaderError, IpVersion, ParseDscpError, ParseEcnError, ParsePrecedenceError, Radix, ReadError,
    ValueError, WriteError,
};
pub use crate::pool::Pool;
pub use crate::precedence::Precedence;
pub use crate::tos::{Tos, TosFlags};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
