//! Arbitrary bytes as a capture file through the streaming reader, the
//! link/IP/TCP decoder, dump's writers and analyze: never a panic, never a
//! hang, allocation bounded by the reader's fixed buffer.
#![no_main]

use std::io;

use capture::CaptureReader;
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use firewall_check::output::dump::{write_json, write_text};
use firewall_check::decode::decode_packet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = CaptureReader::with_capacity(data, 64 * 1024) {
        let mut sink = io::sink();
        let mut records = 0u64;
        while let Ok(Some(record)) = reader.next_record() {
            records += 1;
            assert!(
                records <= data.len() as u64,
                "more records than input bytes"
            );
            if let Ok(Some(seg)) = decode_packet(&record) {
                let _ = seg.options_problem();
                let _ = write_json(&mut sink, &seg);
                let _ = write_text(&mut sink, &seg);
            }
        }
    }
    let settings = Settings {
        capacity: 8,
        buffer_capacity: 64 * 1024,
        ..Settings::default()
    };
    let _ = analyze(data, &mut io::sink(), AnalyzeFormat::Json, &settings);
});
