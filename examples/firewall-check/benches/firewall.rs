//! Throughput of `firewall-check dump` (text and JSON) and `analyze`, engine
//! only: the capture is read from memory and the output goes to
//! `io::sink()`, so neither the disk nor the terminal is measured. The floor
//! in the same run is a bare walk over the capture's records with the same
//! reader and no decoding (`records_only`).
//!
//! The captures are the ones `bench/run` generates (`gen-capture` of
//! `tcp-perf-bench`, 200,000 segments: headers only as pcap and pcapng, full
//! payloads as pcap);
//! `FIREWALL_BENCH_CAPTURE` may list others. A missing capture is reported
//! on stderr and skipped. Criterion's throughput is
//! the number of segments, so its report reads as segments per second.

use capture::CaptureReader;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use firewall_check::output::dump::{dump, DumpFormat};
use std::hint::black_box;
use std::io::{self, Cursor};
use std::path::PathBuf;

/// The captures measured: (name, path). `FIREWALL_BENCH_CAPTURE` (a list of
/// paths separated by `:`) overrides the default, which is what `bench/run`
/// generates: headers only (snap length 128) as pcap and pcapng, and full
/// payloads as pcap.
fn captures() -> Vec<(String, PathBuf)> {
    if let Some(list) = std::env::var_os("FIREWALL_BENCH_CAPTURE") {
        return std::env::split_paths(&list)
            .map(|p| {
                let file = p.file_name().map(|n| n.to_string_lossy().into_owned());
                let file = file.unwrap_or_default();
                let name = file.strip_prefix("capture-").unwrap_or(&file).to_string();
                (name, p)
            })
            .collect();
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/out");
    [
        ("s128-pcap", "capture-200000-s128.pcap"),
        ("s128-pcapng", "capture-200000-s128.pcapng"),
        ("full-pcap", "capture-200000-full.pcap"),
    ]
    .into_iter()
    .map(|(name, file)| (name.to_string(), out.join(file)))
    .collect()
}

/// Records in the capture, read with the tools' own reader and nothing else.
fn walk_records(bytes: &[u8]) -> u64 {
    let Ok(mut reader) = CaptureReader::new(Cursor::new(bytes)) else {
        return 0;
    };
    let mut n = 0u64;
    let mut len = 0usize;
    while let Ok(Some(rec)) = reader.next_record() {
        n += 1;
        len = len.wrapping_add(rec.data.len());
    }
    black_box(len);
    n
}

fn bench(c: &mut Criterion) {
    for (name, path) in captures() {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!(
                    "firewall bench: {}: {e}; run bench/run first (its gen-capture writes them)",
                    path.display()
                );
                continue;
            }
        };
        // Throughput unit: the TCP segments dump finds in the capture.
        let segments = match dump(
            Cursor::new(&bytes[..]),
            &mut io::sink(),
            &mut io::sink(),
            DumpFormat::Json,
        ) {
            Ok(stats) => stats.segments,
            Err(e) => {
                eprintln!("firewall bench: {}: {e}", path.display());
                continue;
            }
        };
        let mut g = c.benchmark_group(format!("firewall-check/{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(segments));
        g.bench_function("records_only", |b| {
            b.iter(|| walk_records(black_box(&bytes)))
        });
        for (name, format) in [
            ("dump_text", DumpFormat::Text),
            ("dump_json", DumpFormat::Json),
        ] {
            g.bench_function(name, |b| {
                b.iter(|| {
                    dump(
                        Cursor::new(black_box(&bytes[..])),
                        &mut io::sink(),
                        &mut io::sink(),
                        format,
                    )
                    .map(|s| s.segments)
                    .ok()
                })
            });
        }
        let settings = Settings::default();
        for (name, format) in [
            ("analyze_text", AnalyzeFormat::Text),
            ("analyze_json", AnalyzeFormat::Json),
        ] {
            g.bench_function(name, |b| {
                b.iter(|| {
                    analyze(
                        Cursor::new(black_box(&bytes[..])),
                        &mut io::sink(),
                        format,
                        &settings,
                    )
                    .ok()
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
