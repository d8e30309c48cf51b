//! `decode::decode_counted` (the plain-link decoder first, the walk through
//! tunnels for the rest) against `decode::decode_tunneled` (the walk for
//! every record), record by record, on every capture the repository
//! ships: the tunnel captures, the tcpdump and pcapng conformance corpora
//! and the samples. Same record or the same reason for none, and the
//! counts of the first equal a count made from the second.

use std::path::{Path, PathBuf};

use capture::tally::Tally;
use capture::CaptureReader;
use firewall_check::decode::{decode_counted, decode_tunneled};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "pcap" || e == "pcapng")
        {
            out.push(path);
        }
    }
}

#[test]
fn the_fast_path_gives_what_the_walk_gives() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    files(&root.join("corpus"), &mut paths);
    files(&root.join("data"), &mut paths);
    paths.sort();
    assert!(paths.len() > 50, "only {} captures", paths.len());
    let (mut records, mut tunneled, mut plain, mut skipped) = (0u64, 0u64, 0u64, 0u64);
    for path in &paths {
        let Ok(file) = std::fs::File::open(path) else {
            continue;
        };
        let Ok(mut reader) = CaptureReader::new(file) else {
            continue;
        };
        let (mut fast, mut slow) = (Tally::default(), Tally::default());
        while let Ok(Some(record)) = reader.next_record() {
            records += 1;
            let at = format!("{} frame {}", path.display(), record.frame);
            let a = decode_counted(&record, &mut fast);
            let b = decode_tunneled(&record);
            match (&a, &b) {
                (Ok(x), Ok(y)) => {
                    assert_eq!(
                        (x.ip, x.src_port, x.dst_port, x.seq, x.ack, x.flags, x.window),
                        (y.ip, y.src_port, y.dst_port, y.seq, y.ack, y.flags, y.window),
                        "{at}"
                    );
                    assert_eq!(
                        (x.tcp, x.options, x.payload_len),
                        (y.tcp, y.options, y.payload_len),
                        "{at}"
                    );
                    assert_eq!(
                        (x.tcp_offset, x.truncation),
                        (y.tcp_offset, y.truncation),
                        "{at}"
                    );
                    assert_eq!(x.tunnels, y.tunnels, "{at}");
                    if y.tunnels.is_empty() {
                        plain += 1;
                    } else {
                        tunneled += 1;
                    }
                    slow.segment(&y.tunnels);
                }
                (Err(x), Err(y)) => {
                    assert_eq!(x, y, "{at}");
                    skipped += 1;
                    slow.skip(y.cause());
                }
                _ => panic!("{at}: {a:?} but {b:?}"),
            }
        }
        assert_eq!(fast, slow, "{}", path.display());
    }
    // Every kind of record was met.
    assert!(
        plain > 1000 && tunneled > 100 && skipped > 10,
        "{records}: {plain} {tunneled} {skipped}"
    );
}
