//! `firewall-check series`: the CSV of each connection's state over time and
//! the SVG plot, on the shipped lab captures (examples/data/README.md: the
//! campus case, window scaling stripped from the server's SYN-ACK, about
//! 10 ms RTT, 4,000 bytes up and 150,000 bytes down).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const HEADER: &str = "time_s,connection,direction,seq_end,ack,window_bytes,window_read_bytes,in_flight_bytes,throughput_bps,rtt_s,limit";

/// Largest TCP payload in the campus captures (MSS 1460 less 12 bytes of timestamps).
const SEGMENT: u64 = 1448;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(name)
}

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_firewall-check"))
}

fn run(args: &[&str]) -> Output {
    tool().args(args).output().expect("run firewall-check")
}

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("series-tests");
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir.join(format!("{}-{name}", std::process::id()))
}

/// One parsed CSV row.
#[derive(Debug, Clone)]
struct Row {
    time_s: f64,
    connection: u64,
    direction: String,
    seq_end: u64,
    ack: u64,
    window_bytes: Option<u64>,
    window_read_bytes: Option<u64>,
    in_flight_bytes: u64,
    throughput_bps: Option<u64>,
    rtt_s: Option<f64>,
    limit: String,
}

fn parse_csv(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER), "header");
    lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            assert_eq!(c.len(), 11, "row {l:?}");
            let opt = |s: &str| (!s.is_empty()).then(|| s.parse::<u64>().expect(l));
            Row {
                time_s: c[0].parse().expect(l),
                connection: c[1].parse().expect(l),
                direction: c[2].to_string(),
                seq_end: c[3].parse().expect(l),
                ack: c[4].parse().expect(l),
                window_bytes: opt(c[5]),
                window_read_bytes: opt(c[6]),
                in_flight_bytes: c[7].parse().expect(l),
                throughput_bps: opt(c[8]),
                rtt_s: (!c[9].is_empty()).then(|| c[9].parse().expect(l)),
                limit: c[10].to_string(),
            }
        })
        .collect()
}

fn csv_of(capture: &str, extra: &[&str]) -> Vec<Row> {
    let path = data(capture);
    let mut args = vec!["series", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    parse_csv(&String::from_utf8(out.stdout).unwrap())
}

/// The campus capture followed by the nat capture's records: two connections.
fn two_connections() -> PathBuf {
    let a = std::fs::read(data("campus-inside.pcap")).unwrap();
    let b = std::fs::read(data("nat-inside.pcap")).unwrap();
    assert_eq!(
        a[..24],
        b[..24],
        "same pcap header, so records can be joined"
    );
    let p = temp("two.pcap");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(&a).unwrap();
    f.write_all(&b[24..]).unwrap();
    p
}

#[test]
fn csv_rows_of_the_campus_capture_hold_together() {
    for capture in ["campus-inside.pcap", "campus-outside.pcap"] {
        let rows = csv_of(capture, &[]);
        assert!(rows.len() > 200, "{capture}: {} rows", rows.len());
        // RTT samples of the download: the lab path's 10 ms (the
        // handshake measured 10.07 ms), one per advance of the client's ACK.
        let samples = rows
            .iter()
            .filter(|r| r.direction == "server_to_client" && r.rtt_s.is_some())
            .count();
        assert!(samples >= 40, "{capture}: {samples} RTT samples");
        let mut last_t = [0.0f64; 2];
        for r in &rows {
            assert_eq!(r.connection, 1, "{capture}: {r:?}");
            let d = match r.direction.as_str() {
                "client_to_server" => 0,
                "server_to_client" => 1,
                other => panic!("{capture}: direction {other:?}"),
            };
            assert!(r.time_s >= last_t[d], "{capture}: time goes back at {r:?}");
            last_t[d] = r.time_s;
            assert!(r.ack <= r.seq_end, "{capture}: ACK beyond the data: {r:?}");
            assert!(
                ["", "receive_window", "network", "sender", "idle"].contains(&r.limit.as_str()),
                "{capture}: {r:?}"
            );
            // The handshake measured about 10 ms (examples/data/README.md):
            // so does every RTT sample.
            if let Some(rtt) = r.rtt_s {
                assert!((0.008..0.015).contains(&rtt), "{capture}: {r:?}");
            }
            // The lab's path is far below 1 Gbit/s (about 50 Mbit/s at best here).
            assert!(
                r.throughput_bps.unwrap_or(0) < 200_000_000,
                "{capture}: {r:?}"
            );
            // The server's data never runs more than a segment past the
            // window as the server reads it.
            if d == 1 {
                if let Some(w) = r.window_read_bytes {
                    assert!(
                        r.in_flight_bytes <= w + SEGMENT,
                        "{capture}: in flight above the window read: {r:?}"
                    );
                }
            }
        }
        let last = |dir: &str| rows.iter().rev().find(|r| r.direction == dir).unwrap();
        // All data acknowledged at the end: 4,000 bytes up, 150,000 down (+1 for the FIN).
        let up = last("client_to_server");
        let down = last("server_to_client");
        assert_eq!((up.seq_end, up.ack), (4001, 4001), "{capture}");
        assert_eq!((down.seq_end, down.ack), (150_001, 150_001), "{capture}");
        let peak = rows.iter().filter_map(|r| r.throughput_bps).max().unwrap();
        assert!(peak > 20_000_000, "{capture}: peak {peak} bit/s");
    }
}

#[test]
fn the_campus_case_shows_in_the_windows() {
    // Client side: the SYN-ACK arrived without window scaling, so the client
    // scales nothing and reads the server's window fields as bytes; the
    // server scales its fields (its SYN-ACK had the option before the
    // firewall stripped it), so the client reads a window below one segment
    // and its upload waits on the receive window.
    let rows = csv_of("campus-inside.pcap", &[]);
    let up: Vec<&Row> = rows
        .iter()
        .filter(|r| r.direction == "client_to_server" && r.ack > 0)
        .collect();
    assert!(!up.is_empty());
    for r in &up {
        let w = r.window_read_bytes.expect("window known");
        assert!(w < SEGMENT, "window as the client reads it: {r:?}");
        // The server scales its fields, by a shift this capture never saw
        // (the firewall removed it before the client's side): what it means
        // is unknown here, once its scaled windows have shown.
        if r.window_bytes.is_some() {
            assert_eq!(r.window_bytes, r.window_read_bytes, "{r:?}");
        }
        assert_eq!(r.limit, "receive_window", "{r:?}");
    }
    // Server side: the server sent more than 65,535 bytes unacknowledged,
    // beyond any window the client can mean without scaling (it never saw
    // the server's window scale option, as the client-side capture shows).
    let rows = csv_of("campus-outside.pcap", &[]);
    let flight = rows
        .iter()
        .filter(|r| r.direction == "server_to_client")
        .map(|r| r.in_flight_bytes)
        .max()
        .unwrap();
    assert!(flight > 65_535, "most in flight {flight}");
    // ... while the window as the server reads it is larger still.
    let read_min = rows
        .iter()
        .filter(|r| r.direction == "server_to_client")
        .filter_map(|r| r.window_read_bytes)
        .min()
        .unwrap();
    assert!(read_min > flight, "window read {read_min}, flight {flight}");
}

#[test]
fn standard_input_and_a_csv_file_give_the_same_rows() {
    let path = data("campus-inside.pcap");
    let direct = run(&["series", path.to_str().unwrap()]);
    assert_eq!(direct.status.code(), Some(0));
    let mut child = tool()
        .args(["series", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&path).unwrap())
        .unwrap();
    let piped = child.wait_with_output().unwrap();
    assert_eq!(piped.status.code(), Some(0));
    assert_eq!(piped.stdout, direct.stdout);
    let file = temp("rows.csv");
    let out = run(&[
        "series",
        path.to_str().unwrap(),
        "--csv",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "CSV went to the file, not stdout");
    assert_eq!(std::fs::read(&file).unwrap(), direct.stdout);
}

#[test]
fn connection_selects_one_connection() {
    let two = two_connections();
    let all = run(&["series", two.to_str().unwrap()]);
    assert_eq!(all.status.code(), Some(0), "{all:?}");
    let all = parse_csv(&String::from_utf8(all.stdout).unwrap());
    let count = |rows: &[Row], c: u64| rows.iter().filter(|r| r.connection == c).count();
    assert!(count(&all, 1) > 0 && count(&all, 2) > 0);
    assert_eq!(count(&all, 1) + count(&all, 2), all.len());
    for c in [1, 2] {
        let out = run(&[
            "series",
            two.to_str().unwrap(),
            "--connection",
            &c.to_string(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let rows = parse_csv(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(rows.len(), count(&all, c), "connection {c}");
        assert!(rows.iter().all(|r| r.connection == c));
    }
    // The first connection alone reads as the campus capture does.
    let one = run(&["series", two.to_str().unwrap(), "--connection", "1"]);
    let campus = run(&["series", data("campus-inside.pcap").to_str().unwrap()]);
    assert_eq!(one.stdout, campus.stdout);
    // No third connection: status 1, said on stderr.
    let out = run(&["series", two.to_str().unwrap(), "--connection", "3"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("connection 3"));
}

/// Checks that `svg` is well-formed XML as far as elements go: every start
/// tag closed in order, one root, nothing after it.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = svg.trim();
    let mut roots = 0;
    while let Some(i) = rest.find('<') {
        assert!(
            !(stack.is_empty() && roots > 0 && !rest[..i].trim().is_empty()),
            "text after the root"
        );
        rest = &rest[i..];
        let end = rest.find('>').expect("unclosed tag");
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name.trim()), "mismatched </{name}>");
            continue;
        }
        let name = tag.split_whitespace().next().expect("empty tag");
        let name = name.trim_end_matches('/');
        if stack.is_empty() {
            roots += 1;
            assert_eq!(roots, 1, "a second root element <{name}>");
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
        // Quotes balanced in the attributes.
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "attribute quotes in <{tag}>"
        );
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    assert!(rest.trim().is_empty(), "text after the root");
}

#[test]
fn svg_of_the_campus_capture() {
    let path = data("campus-inside.pcap");
    let svg = temp("campus.svg");
    let out = run(&[
        "series",
        path.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "no CSV without --csv");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("plotting connection 1"), "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg"));
    assert_well_formed(&text);
    for label in [
        "connection 1",
        "server to client: sequence and window edges",
        "client to server: sequence and window edges",
        "sequence edge (highest byte sent)",
        "ACK",
        "window edge as the sender reads it",
        "bytes in flight",
        "throughput over one RTT",
        // The upload waited on a window below one segment (see above).
        "sender limited by the receive window",
        "time since the connection",
        "sequence offset (kB)",
        "throughput (Mbit/s)",
    ] {
        assert!(text.contains(label), "SVG lacks {label:?}");
    }
    // Both at once: the CSV to its file, the SVG to its.
    let csv = temp("campus-both.csv");
    let svg2 = temp("campus-both.svg");
    let out = run(&[
        "series",
        path.to_str().unwrap(),
        "--connection",
        "1",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg2.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "the connection was given: nothing to say"
    );
    let rows = parse_csv(&std::fs::read_to_string(&csv).unwrap());
    assert!(rows.len() > 200);
    assert_eq!(std::fs::read_to_string(&svg2).unwrap(), text);
}

#[test]
fn svg_picks_the_connection_with_the_most_data() {
    let two = two_connections();
    let svg = temp("two.svg");
    let out = run(&[
        "series",
        two.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // campus: 154,000 bytes; nat: 40,000.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("plotting connection 1 of 2"), "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("connection 1 ("));
    let out = run(&[
        "series",
        two.to_str().unwrap(),
        "--connection",
        "2",
        "--svg",
        "-",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_well_formed(&text);
    assert!(text.contains("connection 2 ("));
}

#[test]
fn errors_and_usage() {
    // A file that cannot be opened: status 1.
    let out = run(&["series", "/nonexistent/capture.pcap"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/capture.pcap"));
    // Not a capture: status 1.
    let junk = temp("junk.pcap");
    std::fs::write(&junk, b"this is not a capture file at all").unwrap();
    let out = run(&["series", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // A capture cut in the middle of a record: the rows before it, then status 1.
    let bytes = std::fs::read(data("campus-inside.pcap")).unwrap();
    let cut = temp("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 7]).unwrap();
    let out = run(&["series", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let rows = parse_csv(&String::from_utf8(out.stdout).unwrap());
    assert!(rows.len() > 50, "{} rows before the cut", rows.len());
    // Connections are numbered from 1: --connection 0 is a usage error.
    let path = data("campus-inside.pcap");
    let p = path.to_str().unwrap();
    for args in [
        &["series", p, "--connection", "0"][..],
        &["series", p, "--connection", "x"],
        // Standard input can be read once: the SVG needs its connection named.
        &["series", "-", "--svg", "/dev/null"],
        &["series", p, "--csv", "-", "--svg", "-"],
        &["series", p, "--max-connections", "0"],
    ] {
        let out = tool().args(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
    // --help names the CSV columns and the exit statuses.
    let out = run(&["series", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for col in HEADER.split(',') {
        assert!(help.contains(col), "--help lacks {col}");
    }
    assert!(help.contains("2  usage error"));
}

/// The `limit` column is `analyze`'s split of the sender's time, row by
/// row: on every capture shipped in `examples/data/`, the time from each
/// row to the next of its direction, summed by label, gives the JSON
/// `limit`'s receive-window, sender and network fractions of the busy time
/// (to 0.01), and no row is left undecided (`busy`).
#[test]
fn csv_limit_time_adds_up_to_the_analysis_fractions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
    let mut checked = 0;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".pcap"))
        .collect();
    names.sort();
    for name in &names {
        let rows = csv_of(name, &[]);
        let out = run(&["analyze", "--json", data(name).to_str().unwrap()]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for dir_name in ["client_to_server", "server_to_client"] {
            let l = &doc["connections"][0]["directions"][dir_name]["limit"];
            let mine: Vec<&Row> = rows.iter().filter(|r| r.direction == dir_name).collect();
            assert!(
                mine.iter().all(|r| r.limit != "busy"),
                "{name} {dir_name}: undecided rows"
            );
            if l["kind"] == "none" {
                continue;
            }
            let mut time = std::collections::BTreeMap::<&str, f64>::new();
            for w in mine.windows(2) {
                *time.entry(w[0].limit.as_str()).or_default() += w[1].time_s - w[0].time_s;
            }
            let get = |k: &str| time.get(k).copied().unwrap_or(0.0);
            let busy = get("receive_window") + get("sender") + get("network");
            assert!(busy > 0.0, "{name} {dir_name}: {time:?}");
            for (label, field) in [
                ("receive_window", "receive_window_fraction"),
                ("sender", "sender_fraction"),
                ("network", "network_fraction"),
            ] {
                let want = l[field].as_f64().unwrap();
                let got = get(label) / busy;
                assert!(
                    (got - want).abs() <= 0.01,
                    "{name} {dir_name}: {label} {got:.3} in the CSV, {want:.3} in the analysis"
                );
            }
            checked += 1;
        }
    }
    // Every shipped capture has at least one direction with a verdict.
    assert!(
        checked >= names.len(),
        "{checked} directions for {} captures",
        names.len()
    );
}

/// Time spent under each label, by the rows of one direction (a row lasts
/// to the next), as fractions of the busy time.
fn label_fractions(rows: &[Row], direction: &str) -> std::collections::BTreeMap<String, f64> {
    let mine: Vec<&Row> = rows.iter().filter(|r| r.direction == direction).collect();
    let mut time = std::collections::BTreeMap::<String, f64>::new();
    for w in mine.windows(2) {
        *time.entry(w[0].limit.clone()).or_default() += w[1].time_s - w[0].time_s;
    }
    let busy: f64 = ["receive_window", "sender", "network"]
        .iter()
        .map(|k| time.get(*k).copied().unwrap_or(0.0))
        .sum();
    time.retain(|k, _| k != "idle" && !k.is_empty());
    time.values_mut().for_each(|v| *v /= busy);
    time
}

/// The bulk samples cut after their handshakes (their first three
/// records). Streaming, the shift and the RTT are unknown when the rows are
/// written: from standard input no row claims a limit (a tracker reading
/// the client's fields of ~1,000 units unscaled had labelled every row
/// `receive_window`, while `analyze` finds the download limited by the
/// network), nor with only one of `--assume-wscale` and `--rtt`. From a
/// file, a first pass learns what `analyze` infers (shift 10 from the
/// capture, the timestamps' RTT), and the rows split the download's busy
/// time as `analyze` does, to 0.01: all the network's inside, 0.82
/// network and 0.18 sender outside. With both flags given, the rows are
/// labelled from standard input too.
#[test]
fn a_capture_without_its_handshake_claims_no_limit_it_cannot_know() {
    for side in ["inside", "outside"] {
        let full = std::fs::read(data(&format!("bulk-{side}.pcap"))).unwrap();
        let mut cut = full[..24].to_vec();
        let mut pos = 24;
        let mut records = 0;
        while pos + 16 <= full.len() {
            let incl = u32::from_le_bytes(full[pos + 8..pos + 12].try_into().unwrap()) as usize;
            if records >= 3 {
                cut.extend_from_slice(&full[pos..pos + 16 + incl]);
            }
            pos += 16 + incl;
            records += 1;
        }
        let path = temp(&format!("bulk-{side}-cut.pcap"));
        std::fs::write(&path, &cut).unwrap();
        let file = path.to_str().unwrap();
        let rows = |stdin: bool, extra: &[&str]| {
            let mut cmd = tool();
            cmd.args(["series", if stdin { "-" } else { file }])
                .args(extra)
                .stdout(Stdio::piped());
            let out = if stdin {
                cmd.stdin(std::fs::File::open(&path).unwrap())
                    .output()
                    .unwrap()
            } else {
                cmd.output().unwrap()
            };
            assert_eq!(out.status.code(), Some(0), "{side} {extra:?}: {out:?}");
            parse_csv(&String::from_utf8(out.stdout).unwrap())
        };
        for extra in [&[][..], &["--assume-wscale", "10"], &["--rtt", "10.7ms"]] {
            let r = rows(true, extra);
            assert!(r.len() > 1000, "{side} {extra:?}: {} rows", r.len());
            assert!(r.iter().all(|x| x.limit.is_empty()), "{side} {extra:?}");
        }
        let out = run(&["analyze", "--json", file]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let limit = &doc["connections"][0]["directions"]["server_to_client"]["limit"];
        assert_eq!(limit["inferred_shift"], 10, "{side}: {limit}");
        let got = label_fractions(&rows(false, &[]), "server_to_client");
        for (label, field) in [
            ("receive_window", "receive_window_fraction"),
            ("sender", "sender_fraction"),
            ("network", "network_fraction"),
        ] {
            let want = limit[field].as_f64().unwrap();
            let mine = got.get(label).copied().unwrap_or(0.0);
            assert!(
                (mine - want).abs() <= 0.01,
                "{side}: {label} {mine:.3} in the CSV, {want:.3} in the analysis ({got:?})"
            );
        }
        assert!(
            got.get("network").copied().unwrap_or(0.0) > 0.8,
            "{side}: {got:?}"
        );
        // The SVG of the connection with the most data (found in a pass of
        // its own) is the one drawn when it is named.
        let svg = |extra: &[&str]| {
            let out = run(&[&["series", file, "--svg", "-"][..], extra].concat());
            assert_eq!(out.status.code(), Some(0), "{side} svg {extra:?}: {out:?}");
            out.stdout
        };
        assert!(
            svg(&[]) == svg(&["--connection", "1"]),
            "{side}: the SVGs differ"
        );
        // A pipe given by name is read once, as standard input is (a second
        // pass would wait for a writer that never comes: timeout).
        let fifo = temp(&format!("bulk-{side}-cut.fifo"));
        let _ = std::fs::remove_file(&fifo);
        assert!(Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let writer = {
            let (fifo, cut) = (fifo.clone(), cut.clone());
            std::thread::spawn(move || std::fs::write(fifo, cut))
        };
        let out = Command::new("timeout")
            .arg("20")
            .arg(env!("CARGO_BIN_EXE_firewall-check"))
            .arg("series")
            .arg(&fifo)
            .output()
            .unwrap();
        writer.join().unwrap().unwrap();
        assert_eq!(out.status.code(), Some(0), "{side} fifo: {out:?}");
        let piped = parse_csv(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(piped.len(), rows(true, &[]).len(), "{side} fifo");
        assert!(piped.iter().all(|x| x.limit.is_empty()), "{side} fifo");
        let _ = std::fs::remove_file(&fifo);
        let given = rows(true, &["--assume-wscale", "10", "--rtt", "10.7ms"]);
        let down: Vec<&Row> = given
            .iter()
            .filter(|x| x.direction == "server_to_client")
            .collect();
        assert!(
            down.iter().any(|x| x.limit == "network"),
            "{side}: labelled"
        );
        assert!(down.iter().all(|x| x.limit != "receive_window"), "{side}");
        let _ = std::fs::remove_file(path);
    }
}
