//! The capture reader against the pcapng format's reader conformance files
//! (`examples/corpus/pcapng-conformance/`, see its `PROVENANCE.md`): every
//! file, in both byte orders, is read to the end without an error and yields
//! as many packet records as its description counts Enhanced, Simple and
//! (obsolete) Packet Blocks. (tshark also counts custom blocks as frames; a
//! custom block carries no packet, and the reader skips it.) The same records
//! come out, byte for byte, when the file arrives a few bytes per read, as
//! through a pipe.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use capture::reader::MIN_BUFFER_CAPACITY;
use capture::{CaptureError, CaptureReader};

fn corpus_dir() -> PathBuf {
    std::env::var_os("TCP_PERF_PCAPNG_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/pcapng-conformance")
        })
}

/// Every `.pcapng` file under `dir`, sorted.
fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "pcapng") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Packet blocks the description counts: the `EPB`, `SPB` and `PB` lines of
/// its "Block counts" section (indented `KIND: N` lines).
fn expected_packets(description: &str) -> u64 {
    let mut lines = description.lines();
    assert!(
        lines.any(|l| l.starts_with("Block counts:")),
        "description without block counts"
    );
    let mut total = 0;
    for line in lines.skip_while(|l| l.trim().is_empty()) {
        if !line.starts_with(char::is_whitespace) {
            break;
        }
        let (kind, count) = line.trim().split_once(':').expect("KIND: N");
        let count: u64 = count.trim().parse().expect("a block count is a number");
        if matches!(kind, "EPB" | "SPB" | "PB") {
            total += count;
        }
    }
    total
}

mod support {
    pub mod trickle;
}
use support::trickle::Trickle;

/// Every record's (frame, origlen, captured bytes), or the reader's error.
fn records<R: Read>(reader: R) -> Result<Vec<(u64, u32, Vec<u8>)>, CaptureError> {
    let mut reader = CaptureReader::with_capacity(reader, MIN_BUFFER_CAPACITY)?;
    let mut out = Vec::new();
    while let Some(r) = reader.next_record()? {
        out.push((r.frame, r.origlen, r.data.to_vec()));
    }
    Ok(out)
}

#[test]
fn every_conformance_file_yields_its_packet_count() {
    let dir = corpus_dir();
    let files = captures(&dir);
    assert_eq!(
        files.len(),
        48,
        "expected the 48 conformance captures in {}",
        dir.display()
    );
    let (mut big, mut little, mut packets) = (0, 0, 0);
    for path in &files {
        let description = fs::read_to_string(path.with_extension("txt"))
            .unwrap_or_else(|e| panic!("{}: description: {e}", path.display()));
        let want = expected_packets(&description);
        let bytes = fs::read(path).expect("read capture");
        let got = records(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            got.len() as u64,
            want,
            "{}: packet records (EPB + SPB + PB in its description)",
            path.display()
        );
        let numbers: Vec<u64> = got.iter().map(|r| r.0).collect();
        assert_eq!(
            numbers,
            (1..=want).collect::<Vec<_>>(),
            "{}",
            path.display()
        );
        for (frame, origlen, data) in &got {
            assert!(
                data.len() as u64 <= u64::from(*origlen) || *origlen == 0,
                "{} frame {frame}: {} bytes captured of {origlen}",
                path.display(),
                data.len()
            );
        }
        // The same records when the bytes arrive 1, 3 or 7 at a time.
        for chunk in [1, 3, 7] {
            let trickled = records(Trickle {
                data: &bytes,
                chunk,
            })
            .unwrap_or_else(|e| panic!("{} in {chunk}-byte reads: {e}", path.display()));
            assert_eq!(trickled, got, "{} in {chunk}-byte reads", path.display());
        }
        packets += want;
        match path
            .parent()
            .and_then(|p| p.parent())
            .and_then(|p| p.file_name())
        {
            Some(n) if n == "output_be" => big += 1,
            Some(n) if n == "output_le" => little += 1,
            _ => panic!("{}: neither output_be nor output_le", path.display()),
        }
    }
    assert_eq!((big, little), (24, 24));
    assert!(packets > 0);
}

#[test]
fn description_counts_are_parsed() {
    let text = "Description: x\nCategory:    basic\n\nBlock counts:\n\tCB: 1\n\tEPB: 6\n\tIDB: 5\n\tPB: 2\n\tSPB: 3\n\nBlock sequence: SHB, IDB\n";
    assert_eq!(expected_packets(text), 11);
}
