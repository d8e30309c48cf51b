//! Arbitrary bytes as a capture file through the streaming reader, the
//! link/IP/TCP decoder on plain links and through tunnels and
//! encapsulations (each layer read back, from the frame and from its owned
//! copy, and its identity), dump's writers (segments, layers, counts) and
//! analyze: never a panic, never a hang, allocation bounded by the
//! reader's fixed buffer.
#![no_main]

use std::io;

use capture::tally::Tally;
use capture::CaptureReader;
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use firewall_check::decode::{decode_packet, decode_tunneled};
use firewall_check::output::dump::{dump, write_json, write_text, DumpFormat};
use firewall_check::output::tunnel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = CaptureReader::with_capacity(data, 64 * 1024) {
        let mut sink = io::sink();
        let mut records = 0u64;
        let mut tally = Tally::default();
        while let Ok(Some(record)) = reader.next_record() {
            records += 1;
            assert!(
                records <= data.len() as u64,
                "more records than input bytes"
            );
            let plain = decode_packet(&record);
            if let Ok(Some(seg)) = plain {
                let _ = seg.options_problem();
                let _ = write_json(&mut sink, &seg);
                let _ = write_text(&mut sink, &seg);
            }
            match decode_tunneled(&record) {
                Ok(seg) => {
                    tally.segment(&seg.tunnels);
                    // A plain-link segment is the same either way.
                    if seg.tunnels.is_empty() {
                        if let Ok(Some(p)) = plain {
                            assert_eq!((p.seq, p.tcp), (seg.seq, seg.tcp));
                        }
                    }
                    assert!(seg.tunnels.len() <= capture::encap::MAX_LAYERS);
                    assert_eq!(seg.tunnels.iter().count(), seg.tunnels.len());
                    let key = seg.tunnels.key();
                    assert_eq!(key.parts().len(), seg.tunnels.len());
                    let end = seg.tcp_offset + seg.header_len.min(seg.tcp.len());
                    let owned = seg.tunnels.to_owned_prefix(end);
                    assert_eq!(owned.tunnels(), seg.tunnels);
                    let _ = tunnel::write_text(&mut sink, &seg.tunnels);
                    let _ = tunnel::write_json(&mut sink, &seg.tunnels);
                    let _ = tunnel::write_text_layers(&mut sink, &owned.tunnels());
                }
                Err(why) => tally.skip(why.cause()),
            }
        }
        assert_eq!(tally.segments() + tally.skipped_total(), records);
        let _ = tunnel::write_text_summary(&mut sink, records, &tally);
        let _ = tunnel::write_json_summary(&mut sink, records, &tally);
        let _ = tunnel::write_text_warning(&mut sink, records, &tally);
    }
    let _ = dump(data, &mut io::sink(), &mut io::sink(), DumpFormat::Json);
    let settings = Settings {
        capacity: 8,
        buffer_capacity: 64 * 1024,
        ..Settings::default()
    };
    let _ = analyze(data, &mut io::sink(), AnalyzeFormat::Json, &settings);
});
