//! `series`' output: the samples ([`crate::analysis::series`]) as CSV rows
//! ([`csv`]) and one connection as the picture a network engineer draws by
//! hand ([`svg`]).

pub mod csv;
pub mod svg;
