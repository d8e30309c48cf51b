//! The capture reader on a real pipe: each record comes out as soon as its
//! bytes have arrived. A child process writes a capture header and one
//! record, then sleeps with the pipe open; the record must be yielded while
//! the child still holds the pipe (long before end of file). A timeout
//! bounds the wait; nothing here asserts a speed.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use capture::CaptureReader;

/// How long the test waits for the record before failing.
const TIMEOUT: Duration = Duration::from_secs(20);

/// A child that writes `bytes` to its stdout, then sleeps for a minute
/// with the pipe open; the file it copies is removed once it has exited.
fn writer_child(bytes: &[u8]) -> (Child, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!(
        "capture-pipe-{}-{}.bin",
        std::process::id(),
        bytes.len()
    ));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
    let child = Command::new("sh")
        .arg("-c")
        .arg("cat \"$1\"; exec sleep 60")
        .arg("sh")
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn sh");
    (child, path)
}

/// What the reader thread saw.
#[derive(Debug)]
enum Seen {
    Record {
        frame: u64,
        data: Vec<u8>,
        buffered_after: bool,
    },
    End,
    Error(String),
}

/// Reads the child's stdout on a thread, reporting each record (and
/// whether another was already buffered) as it comes.
fn watch(child: &mut Child) -> mpsc::Receiver<Seen> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = match CaptureReader::new(stdout) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Seen::Error(e.to_string()));
                return;
            }
        };
        loop {
            let seen = match reader.next_record() {
                Ok(Some(r)) => {
                    let (frame, data) = (r.frame, r.data.to_vec());
                    Seen::Record {
                        frame,
                        data,
                        buffered_after: reader.has_buffered_record(),
                    }
                }
                Ok(None) => Seen::End,
                Err(e) => Seen::Error(e.to_string()),
            };
            let last = !matches!(seen, Seen::Record { .. });
            if tx.send(seen).is_err() || last {
                return;
            }
        }
    });
    rx
}

fn check_first_record_before_eof(file: &[u8], payload: &[u8]) {
    let (mut child, path) = writer_child(file);
    let rx = watch(&mut child);
    let seen = rx.recv_timeout(TIMEOUT);
    // The child is still sleeping with the pipe open: no end of file yet.
    let still_writing = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_file(&path);
    match seen {
        Ok(Seen::Record {
            frame,
            data,
            buffered_after,
        }) => {
            assert_eq!(frame, 1);
            assert_eq!(data, payload);
            assert!(
                !buffered_after,
                "nothing more has arrived: the next call must wait (a writer flushes here)"
            );
        }
        Ok(Seen::Error(e)) => panic!("reader error before record 1: {e}"),
        other => panic!("expected record 1 within {TIMEOUT:?}, got {other:?}"),
    }
    assert!(
        still_writing,
        "the child ended before the record was seen; the test proves nothing"
    );
    // Killing the writer closes the pipe: a clean end of file.
    match rx.recv_timeout(TIMEOUT) {
        Ok(Seen::End) => {}
        Ok(Seen::Error(e)) => panic!("reader error instead of the end: {e}"),
        other => panic!("expected the end of the capture, got {other:?}"),
    }
}

#[test]
fn pcap_record_arrives_before_the_writer_closes_the_pipe() {
    // Little-endian microsecond pcap, LINKTYPE_RAW, then one 40-byte record.
    let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&262_144u32.to_le_bytes());
    file.extend_from_slice(&101u32.to_le_bytes());
    let payload: Vec<u8> = (0..40).collect();
    file.extend_from_slice(&1u32.to_le_bytes());
    file.extend_from_slice(&2u32.to_le_bytes());
    file.extend_from_slice(&40u32.to_le_bytes());
    file.extend_from_slice(&40u32.to_le_bytes());
    file.extend_from_slice(&payload);
    check_first_record_before_eof(&file, &payload);
}

#[test]
fn pcapng_record_arrives_before_the_writer_closes_the_pipe() {
    let le = |v: u32| v.to_le_bytes();
    // Section header (28 bytes), interface description (20), one EPB (32 + 40).
    let mut file = vec![0x0a, 0x0d, 0x0d, 0x0a];
    file.extend_from_slice(&le(28));
    file.extend_from_slice(&[0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0]);
    file.extend_from_slice(&[0xff; 8]);
    file.extend_from_slice(&le(28));
    file.extend_from_slice(&le(1));
    file.extend_from_slice(&le(20));
    file.extend_from_slice(&[101, 0, 0, 0]);
    file.extend_from_slice(&le(0));
    file.extend_from_slice(&le(20));
    let payload: Vec<u8> = (100..140).collect();
    file.extend_from_slice(&le(6));
    file.extend_from_slice(&le(72));
    for v in [0, 0, 1, 40, 40] {
        file.extend_from_slice(&le(v));
    }
    file.extend_from_slice(&payload);
    file.extend_from_slice(&le(72));
    check_first_record_before_eof(&file, &payload);
}
