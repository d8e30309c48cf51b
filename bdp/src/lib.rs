//! TCP window math: bandwidth-delay product, window scaling and throughput models.
//!
//! This crate is being filled in (see the project issues).
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
