//! Zero-copy TCP header and option parsing, building and in-place rewriting.
//!
//! This crate is being filled in (see the project issues): it will provide a
//! checked view of the TCP header, a typed option iterator with strict and
//! Linux-compatible policies, a negotiation summary, a canonical builder and
//! middlebox-style rewrites that keep the checksum valid.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
