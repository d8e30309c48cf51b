//! `dump` against tcpdump's own TCP test captures and expected outputs
//! (`examples/corpus/tcpdump/`, a copy of the shared corpus taken from the
//! tcpdump project's `tests/`, see its `PROVENANCE.md`): every capture is read without a panic, and on every segment
//! tcpdump decodes cleanly the option list of `dump --json` agrees with
//! tcpdump's `options [...]`, kind by kind and value by value.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;

use firewall_check::output::dump::{dump, DumpFormat};
use serde_json::Value;

mod dump_support;

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TCP_PERF_TCPDUMP_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/tcpdump"));
    if dir.join("TESTLIST").is_file() {
        return Some(dir);
    }
    assert!(
        !dump_support::required(),
        "tcpdump corpus not found at {} (TCP_PERF_LAB_REQUIRED=1)",
        dir.display()
    );
    eprintln!("skipping: tcpdump corpus not found at {}", dir.display());
    None
}

/// Runs `dump --json` on a capture: (JSON objects by frame, capture error if any).
fn dump_json(path: &std::path::Path) -> (BTreeMap<u64, Value>, Option<String>) {
    let mut out = Vec::new();
    let mut diag = Vec::new();
    let file = File::open(path).expect("open capture");
    let err = dump(file, &mut out, &mut diag, DumpFormat::Json)
        .err()
        .map(|e| e.to_string());
    let text = String::from_utf8(out).expect("UTF-8 output");
    let mut by_frame = BTreeMap::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("every line is one JSON object");
        if v.get("summary").is_some() {
            // The counts at the end (frames that could not be opened).
            continue;
        }
        let frame = v["frame"].as_u64().expect("frame number");
        by_frame.insert(frame, v);
    }
    (by_frame, err)
}

#[test]
fn every_corpus_capture_is_read_without_panic() {
    let Some(dir) = corpus_dir() else { return };
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("read corpus dir") {
        let path = entry.expect("dir entry").path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext != "pcap" && ext != "pcapng" {
            continue;
        }
        files += 1;
        for format in [DumpFormat::Json, DumpFormat::Text] {
            let mut out = Vec::new();
            let mut diag = Vec::new();
            let result = dump(
                File::open(&path).expect("open"),
                &mut out,
                &mut diag,
                format,
            );
            // Every capture in the corpus is a complete file: no read error.
            assert!(result.is_ok(), "{}: {:?}", path.display(), result.err());
        }
    }
    // 27 captures in the corpus as shipped (tcpdump commit 39b50f76).
    assert!(
        files >= 27,
        "only {files} captures found in {}",
        dir.display()
    );
}

/// One option as tcpdump prints it, reduced to what can be compared.
#[derive(Debug, PartialEq)]
enum Expected {
    /// Kind only (nop, eol, sackOK, ...).
    Kind(u64),
    /// Kind and the option length byte (mptcp prints it).
    KindLen(u64, u64),
    Mss(u64),
    Wscale(u64),
    Ts(u64, u64),
    Sack(Vec<(u64, u64)>),
    /// Experimental Fast Open (kind 254, ExID 0xF989): the cookie, empty for a request.
    ExpTfo(String),
    /// Experimental kind 254 with the ExID tcpdump names (exp-acc0 is 0xACC0).
    ExpExid(u64),
    Unknown(u64, String),
}

/// Splits at commas outside `{}`, `[]`, `()`.
fn split_top(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

fn parse_tcpdump_option(item: &str) -> Expected {
    let words: Vec<&str> = item.split_whitespace().collect();
    let num = |i: usize| -> u64 {
        words[i]
            .parse()
            .unwrap_or_else(|_| panic!("number in {item:?}"))
    };
    match words[0] {
        "nop" => Expected::Kind(1),
        "eol" => Expected::Kind(0),
        "sackOK" => Expected::Kind(4),
        "mss" => Expected::Mss(num(1)),
        "wscale" => Expected::Wscale(num(1)),
        "TS" => Expected::Ts(num(2), num(4)),
        "sack" => {
            let blocks = item
                .split('{')
                .skip(1)
                .map(|b| {
                    let b = b.trim_end_matches('}');
                    let (l, r) = b.split_once(':').expect("l:r");
                    (l.parse().expect("left"), r.parse().expect("right"))
                })
                .collect();
            Expected::Sack(blocks)
        }
        "mptcp" => Expected::KindLen(30, num(1)),
        "md5" => Expected::Kind(19),
        "tcp-ao" => Expected::Kind(29),
        "exp-tfo" => Expected::ExpTfo(if words[1] == "cookiereq" {
            String::new()
        } else {
            words[2].to_string()
        }),
        w if w.starts_with("exp-acc") => {
            Expected::ExpExid(u64::from_str_radix(&w[4..], 16).expect("exid"))
        }
        w if w.starts_with("unknown-") => Expected::Unknown(
            w[8..].parse().expect("kind"),
            words
                .get(1)
                .map_or(String::new(), |h| h.trim_start_matches("0x").to_string()),
        ),
        other => panic!("tcpdump option {other:?} not understood by this test: {item:?}"),
    }
}

fn matches(expected: &Expected, got: &Value) -> bool {
    let kind = got["kind"].as_u64().unwrap_or(999);
    let data_len = got["data"].as_str().map(|d| d.len() as u64 / 2);
    match expected {
        Expected::Kind(k) => kind == *k,
        Expected::KindLen(k, len) => kind == *k && data_len.map(|d| d + 2) == Some(*len),
        Expected::Mss(m) => kind == 2 && got["mss"].as_u64() == Some(*m),
        Expected::Wscale(s) => kind == 3 && got["shift"].as_u64() == Some(*s),
        Expected::Ts(v, e) => {
            kind == 8 && got["tsval"].as_u64() == Some(*v) && got["tsecr"].as_u64() == Some(*e)
        }
        Expected::Sack(blocks) => {
            kind == 5
                && got["blocks"].as_array().is_some_and(|a| {
                    a.len() == blocks.len()
                        && a.iter().zip(blocks).all(|(b, (l, r))| {
                            b[0].as_u64() == Some(*l) && b[1].as_u64() == Some(*r)
                        })
                })
        }
        Expected::ExpTfo(cookie) => {
            kind == 254
                && got["exid"].as_u64() == Some(0xf989)
                && got["cookie"].as_str() == Some(cookie.as_str())
        }
        Expected::ExpExid(x) => kind == 254 && got["exid"].as_u64() == Some(*x),
        Expected::Unknown(k, hex) => kind == *k && got["data"].as_str() == Some(hex.as_str()),
    }
}

/// tcpdump's records in a `.out` file: frame number -> the record's text
/// (continuation lines of `-v` output joined).
fn records(out: &str) -> BTreeMap<u64, String> {
    let mut map = BTreeMap::new();
    let mut current: Option<u64> = None;
    for line in out.lines() {
        let trimmed = line.trim_start();
        let starts_record = line.starts_with(' ')
            && trimmed
                .split_once("  ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if starts_record && line.len() - trimmed.len() <= 5 {
            let (n, rest) = trimmed.split_once("  ").unwrap_or(("", ""));
            let n: u64 = n.parse().expect("frame number");
            map.insert(n, rest.to_string());
            current = Some(n);
        } else if let Some(n) = current {
            if let Some(r) = map.get_mut(&n) {
                r.push(' ');
                r.push_str(trimmed);
            }
        }
    }
    map
}

/// The text inside `options [` ... matching `]`.
fn options_text(record: &str) -> Option<&str> {
    let start = record.find("options [")? + "options [".len();
    let mut depth = 1;
    for (i, c) in record[start..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&record[start..start + i]);
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn option_lists_agree_with_tcpdump_expected_output() {
    let Some(dir) = corpus_dir() else { return };
    let testlist = std::fs::read_to_string(dir.join("TESTLIST")).expect("TESTLIST");
    let mut compared_segments = 0;
    let mut compared_options = 0;
    let mut files = 0;
    let mut skipped_unclean = 0;
    let mut distinct = std::collections::BTreeSet::new();
    for line in testlist.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 3 {
            continue;
        }
        let (capture, expected) = (fields[1], fields[2]);
        let flags = &fields[3..];
        // Quiet (-q) and time-format runs print no options; skip/count runs
        // are subsets of the full ones.
        if flags
            .iter()
            .any(|f| !matches!(*f, "-v" | "-vv" | "-vvv" | "-e"))
        {
            continue;
        }
        let out = std::fs::read_to_string(dir.join(expected)).expect("expected output");
        let (ours, err) = dump_json(&dir.join(capture));
        assert!(err.is_none(), "{capture}: {err:?}");
        files += 1;
        for (frame, record) in records(&out) {
            if !record.contains("Flags [") {
                continue;
            }
            // Segments tcpdump does not decode cleanly: truncated or bad options.
            if record.contains("[|tcp]") || record.contains("bad opt") || record.contains("[bad") {
                skipped_unclean += 1;
                continue;
            }
            let got = ours.get(&frame).unwrap_or_else(|| {
                panic!("{expected} frame {frame}: tcpdump shows a TCP segment, dump does not")
            });
            let got_opts = got["options"].as_array().expect("options array");
            assert!(
                got["options_error"].is_null(),
                "{expected} frame {frame}: tcpdump decodes cleanly, dump reports {}",
                got["options_error"]
            );
            let want: Vec<Expected> = options_text(&record)
                .map(|t| {
                    split_top(t)
                        .iter()
                        .map(|i| parse_tcpdump_option(i.trim()))
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(
                want.len(),
                got_opts.len(),
                "{expected} frame {frame}: tcpdump {want:?}, dump {got_opts:?}"
            );
            for (w, g) in want.iter().zip(got_opts) {
                assert!(
                    matches(w, g),
                    "{expected} frame {frame}: tcpdump {w:?}, dump {g}"
                );
                compared_options += 1;
            }
            compared_segments += 1;
            distinct.insert((capture.to_string(), frame));
        }
    }
    eprintln!(
        "compared {compared_segments} segments ({} distinct, {compared_options} options) in {files} expected outputs; {skipped_unclean} segments tcpdump marks truncated/bad skipped",
        distinct.len()
    );
    assert!(
        distinct.len() >= 50,
        "only {} distinct segments compared",
        distinct.len()
    );
    assert!(files >= 20, "only {files} expected outputs used");
    assert!(
        compared_segments >= 100,
        "only {compared_segments} segments compared"
    );
    assert!(
        compared_options >= 200,
        "only {compared_options} options compared"
    );
}

#[test]
fn tcpdump_marked_segments_are_flagged_by_dump() {
    let Some(dir) = corpus_dir() else { return };
    // tcp-auth-heapoverflow: tcpdump prints "tcp-ao ... [|tcp]"; mptcp-dss-oobr:
    // "mptcp 3 dss[bad opt]". dump must not present these option blocks as clean.
    let (ao, _) = dump_json(&dir.join("tcp-auth-heapoverflow.pcap"));
    let e = &ao[&1]["options_error"];
    assert_eq!(e["kind"].as_u64(), Some(29), "{e}");
    let (hv, _) = dump_json(&dir.join("heapoverflow-tcp_print.pcap"));
    assert_eq!(hv[&1]["options_error"]["kind"].as_u64(), Some(48));
    // tcp_header_heapoverflow: the TCP header itself is cut: no JSON line.
    let (hdr, _) = dump_json(&dir.join("tcp_header_heapoverflow.pcap"));
    assert!(hdr.is_empty());
}
