//! A capture through `analyze` (text and JSON) and `series` under the
//! settings a user can give: an assumed window-scale shift (which replays
//! the limit log of connections without a handshake), a fixed RTT, a small
//! connection table. `capture_read` runs `analyze` with the defaults only.
//! Never a panic or a hang; `series` gives at most one sample per segment
//! and direction read, and both tools agree on the number of connections.
//!
//! Input: a settings byte (bit 0: an RTT, bits 1-4: the assumed shift, 15
//! meaning none), an RTT byte (milliseconds, 0 meaning 0.1 ms), a table
//! size byte (1 to 8 connections), then the capture.
#![no_main]

use std::io;
use std::time::Duration;

use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use firewall_check::analysis::series::series;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[flags, rtt, table], capture)) = data.split_first_chunk::<3>() else {
        return;
    };
    let shift = (flags >> 1) & 15;
    let settings = Settings {
        rtt: (flags & 1 == 1).then(|| match rtt {
            0 => Duration::from_micros(100),
            ms => Duration::from_millis(u64::from(ms)),
        }),
        assume_wscale: (shift != 15).then_some(shift.min(14)),
        capacity: usize::from(table % 8) + 1,
        buffer_capacity: 64 * 1024,
        ..Settings::default()
    };
    let text = analyze(capture, &mut io::sink(), AnalyzeFormat::Text, &settings);
    let json = analyze(capture, &mut io::sink(), AnalyzeFormat::Json, &settings);
    match (&text, &json) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "text and JSON summaries differ"),
        (Err(_), Err(_)) => {}
        _ => panic!("text and JSON disagree on whether the capture reads"),
    }
    let mut samples = 0u64;
    let _ = series(capture, &settings, |_| true, |_| samples += 1);
    // A sample needs a segment of at least 40 bytes of IP and TCP.
    assert!(samples <= capture.len() as u64 / 20, "{samples} samples");
});
