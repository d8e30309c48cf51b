//! What the analyses find: the one list of finding kinds ([`Kind`]) and how
//! sure a judgment is ([`Confidence`]).

pub mod confidence;
pub mod kind;

pub use confidence::Confidence;
pub use kind::{endpoint_json, nat_ends, nat_ends_text, Kind};
