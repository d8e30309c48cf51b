//! Connections: which segment belongs to which connection and direction,
//! and what each endpoint holds of the handshake.
//!
//! - [`direction`]: [`Direction`] and [`Endpoint`], the two ways and ends.
//! - [`tracker`]: the connection table ([`tracker::ConnTracker`]), client
//!   and server, eviction, closing; [`open_ids`] keeps the open ones in order.
//! - [`negotiation`]: the SYN and SYN-ACK as each endpoint's Linux kernel
//!   reads them (`tcp-options`' Linux model).
//! - [`missed`]: the bytes a receiver acknowledged that the capture never
//!   showed.

pub mod direction;
pub mod missed;
pub mod negotiation;
pub mod open_ids;
pub mod tracker;

pub use direction::{Direction, Endpoint};
