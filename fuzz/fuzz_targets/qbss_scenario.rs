//! The `qbss-model` scenario parser on arbitrary input: never panics; an accepted
//! scenario is within the documented bounds (and scales without panicking), and a
//! refused one names a line inside the input.
#![no_main]

use qbss::scenario::{Scenario, MAX_DURATION_S, MAX_STREAMS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Scenario::from_toml(text) {
        Ok(sc) => {
            assert!((1..=MAX_DURATION_S).contains(&sc.duration_s));
            assert!(!sc.streams.is_empty() && sc.streams.len() <= MAX_STREAMS);
            for s in &sc.streams {
                assert!(s.stop_ns > s.start_ns);
            }
            // Scaling divides the rates or is refused; it never panics.
            if let Ok(small) = sc.scaled(10.0) {
                assert!(small.link.payload_bps <= sc.link.payload_bps);
            }
        }
        Err(e) => {
            let lines = text.lines().count().max(1);
            assert!(
                e.line >= 1 && e.line <= lines + 1,
                "line {} of {lines}",
                e.line
            );
            assert!(!e.message.is_empty());
        }
    }
});
