//! A weighted-round-robin / deficit-round-robin scheduler with explicit saturation semantics.
//!
//! This crate is being filled in (see the project issues).
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
