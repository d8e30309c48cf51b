//! What the commands conclude from the connections.
//!
//! - [`analyze`]: one capture, per connection: negotiation, limits, verdict.
//! - [`limits`]: what limited each direction's sender, as `TCP_INFO` splits
//!   it; [`limit_log`]: its input kept for a replay once the shift is known.
//! - [`series`]: the same over time.
//! - [`compare`]: two captures from the two sides of a middlebox.
//! - [`probe`]: the path tested actively, hop by hop, and its reflector.
//! - [`rewrite`]: netfilter's TCPMSS / TCPOPTSTRIP applied to a capture.

pub mod analyze;
pub mod compare;
pub mod limit_log;
pub mod limits;
pub mod probe;
pub mod rewrite;
pub mod series;
