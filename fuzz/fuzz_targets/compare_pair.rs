//! Two arbitrary captures through `firewall-check compare`: never a panic or a hang.
//!
//! The input is split in two at the position named by its first two bytes;
//! each half is given to the comparison as a capture file.
#![no_main]

use firewall_check::analysis::compare::{compare_readers, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let split = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let rest = &data[2..];
    let (a, b) = rest.split_at(split.min(rest.len()));
    if let Ok(report) = compare_readers(a, "a", b, "b", &Options::default()) {
        // Every finding is compare's and refers to a reported connection.
        for f in &report.findings {
            let c = f.compared().expect("compare evidence");
            assert!(c.connection >= 1 && c.connection <= report.connections.len());
        }
        let _ = firewall_check::output::compare::render_text(&report);
        let _ = firewall_check::output::compare::report_json(&report);
    }
});
