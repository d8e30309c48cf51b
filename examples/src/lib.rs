//! Shared code of the tools built from the workspace crates.
//!
//! Each tool has one module here; the binaries in `src/bin/` are thin wrappers
//! around them, so tests, benchmarks and fuzz targets can reach the same code.

pub mod bdp_calc;
pub mod capture;
pub mod firewall;
pub mod qbss;
