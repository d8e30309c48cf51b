//! The DS field (RFC 2474) / legacy TOS byte: DSCP, ECN, IP precedence.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
