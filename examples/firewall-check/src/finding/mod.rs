//! What the analyses find: the one list of finding kinds ([`Kind`]), how
//! sure a judgment is ([`Confidence`]), and the typed values a finding
//! shows before and after the middlebox ([`FieldValue`]).

pub mod confidence;
pub mod kind;
pub mod value;

pub use confidence::Confidence;
pub use kind::{endpoint_json, nat_ends, nat_ends_text, Kind};
pub use value::{Address, FieldValue, Party};
