//! `firewall-check` as scripts and shells use it: exit statuses, `-` for
//! standard input, output that appears as packets arrive on a pipe, and a
//! closed standard output (`| head`) that ends the tool quietly.

mod dump_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use dump_support::*;

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_firewall-check"))
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(name)
}

#[test]
fn help_states_the_exit_statuses() {
    for args in [
        &["--help"][..],
        &["analyze", "--help"],
        &["compare", "--help"],
    ] {
        let out = tool().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout);
        for line in [
            "0  done, nothing found",
            "1  runtime error",
            "2  usage error",
            "3  done with findings",
        ] {
            assert!(
                text.contains(line),
                "{args:?} --help lacks {line:?}:\n{text}"
            );
        }
    }
}

#[test]
fn exit_status_follows_what_was_found() {
    for (capture, status) in [
        // The campus capture (client side): a broken negotiation, status 3.
        ("campus-inside.pcap", 3),
        // A clean IPv6 transfer: nothing found, status 0.
        ("clean6-inside.pcap", 0),
    ] {
        let out = tool()
            .args(["analyze", "--json"])
            .arg(data(capture))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(status), "{out:?}");
    }
    // Usage errors: status 2.
    for args in [
        &["analyze", "--max-connections", "0", "x.pcap"][..],
        &["analyze", "--rtt", "0ms", "x.pcap"],
        &["dump"],
        &["frobnicate"],
    ] {
        let out = tool().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
    // A missing file: a runtime error, status 1.
    let out = tool()
        .args(["dump", "/nonexistent/capture.pcap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// One SYN as a pcap record (nanosecond pcap, Ethernet).
fn one_record_pcap() -> (Vec<u8>, Vec<u8>) {
    let seg = Seg::new([198, 18, 0, 1], 40000, [198, 19, 0, 1], 80)
        .seq(1)
        .flags(SYN)
        .opts(&[2, 4, 5, 0xb4]);
    let file = pcap(
        101,
        true,
        &[Pkt::new(1_700_000_000_000_000_000, seg.ipv4())],
    );
    // The 24-byte file header, then the record.
    (file[..24].to_vec(), file[24..].to_vec())
}

#[test]
fn dump_from_a_pipe_prints_each_segment_as_it_arrives() {
    let (header, record) = one_record_pcap();
    let mut child = tool()
        .args(["dump", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&header).unwrap();
    stdin.write_all(&record).unwrap();
    stdin.flush().unwrap();
    // The pipe stays open: the line must appear anyway.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(20));
    drop(stdin);
    let status = child.wait().unwrap();
    let line = line.expect("no output while the pipe was open");
    assert!(line.contains("198.18.0.1.40000 > 198.19.0.1.80"), "{line}");
    assert!(line.contains("[S]"), "{line}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_closed_stdout_ends_quietly_with_status_0() {
    // Many segments, so the writer meets the closed pipe.
    let pkts: Vec<Pkt> = (0..20_000u32)
        .map(|i| {
            let seg = Seg::new([198, 18, 0, 1], 40000, [198, 19, 0, 1], 80)
                .seq(i)
                .flags(ACK)
                .payload(10);
            Pkt::new(1_700_000_000_000_000_000 + u64::from(i), seg.ipv4())
        })
        .collect();
    let file = pcap(101, true, &pkts);
    for sub in ["dump", "analyze"] {
        let mut child = tool()
            .args([sub, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let bytes = file.clone();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
        // Read one byte, then close our end, as `head -c 1` does.
        let mut stdout = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        let _ = stdout.read(&mut one);
        drop(stdout);
        let _ = writer.join();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.to_lowercase().contains("broken pipe"), "{sub}: {err}");
        assert!(err.is_empty(), "{sub}: {err}");
    }
}

/// `probe`'s own usage errors, before it opens a socket or sends anything
/// (no root needed): an unknown test is named, an empty list and a
/// `--max-ttl` out of 1..=64 are refused; status 2 for each.
#[test]
fn probe_usage_errors_name_what_is_wrong() {
    for (args, wants) in [
        (
            &["--tests", "mss,no_such_test"][..],
            &["unknown test \"no_such_test\"", "--list-tests"][..],
        ),
        (&["--tests", " , "], &["no test named"]),
        (&["--max-ttl", "0"], &["--max-ttl", "0"]),
        (&["--max-ttl", "65"], &["--max-ttl", "65"]),
        (&["--max-ttl", "many"], &["--max-ttl", "many"]),
    ] {
        let out = tool()
            .args(["probe", "198.18.44.2:5201"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        for w in wants {
            assert!(err.contains(w), "{args:?}: {w:?} not in {err}");
        }
        assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
    }
    // --list-tests prints the names, `ttl` (the path) first; it needs no
    // root: nothing is sent.
    let out = tool()
        .args(["probe", "198.18.44.2:5201", "--list-tests"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.len() >= 20 && names[0] == "ttl", "{names:?}");
    assert!(names.iter().any(|n| n == "fastopen_data"), "{names:?}");
}

/// `-i` in a build without the `live` feature: a usage error (status 2)
/// that says why, for each command that reads captures.
#[cfg(not(feature = "live"))]
#[test]
fn interface_without_the_live_feature_is_a_usage_error_saying_so() {
    for args in [
        &["dump", "-i", "lo"][..],
        &["analyze", "-i", "lo", "--json", "--duration", "1s"],
        &["compare", "-i", "lo", "-i", "lo"],
    ] {
        let out = tool().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("this build has no live capture") && err.contains("--features live"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The live options need `-i`, and `-i` excludes a capture file, in any
/// build.
#[test]
fn live_options_without_interface_or_beside_a_file_are_usage_errors() {
    let capture = data("campus-inside.pcap");
    for args in [
        vec!["dump", "--count", "3"],
        vec!["analyze", "-w", "x.pcap"],
        vec!["dump", "-f", "tcp"],
        vec!["analyze", "--duration", "2s"],
    ] {
        let out = tool().args(&args).arg(&capture).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("needs -i IFACE"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = tool()
        .args(["compare", "--count", "3"])
        .arg(&capture)
        .arg(&capture)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--count needs -i IFACE"));
    let out = tool()
        .args(["dump", "-i", "lo"])
        .arg(&capture)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = tool()
        .args(["analyze", "-i", "lo", "--duration", "0s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
