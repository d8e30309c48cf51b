//! `firewall-check dump|analyze|compare -i`: live capture through libpcap
//! on real interfaces, during real transfers (the lab crate's `live`
//! feature, which builds `lab-firewall-check` with live capture; it needs
//! libpcap-dev, so the plain lab command leaves this suite out).
//!
//! Three namespaces made by the test (and deleted by it, also when it
//! fails): a client, a router and a server, joined by two veth pairs
//! (198.18.71.0/24, 198.18.72.0/24). While `analyze -i`, `dump -i` (both
//! on the client's interface, with `-w`) and `compare -i -i` (on the
//! router's two interfaces; these two for a fixed `--duration`) capture, the client
//! sends 2,000,000 bytes, opens a connection it keeps open, waits, and
//! sends 1,000,000 bytes more; `analyze` runs until Ctrl-C (SIGINT). Then:
//!
//! - `analyze --json` wrote one JSON line per connection: the first
//!   transfer's as soon as it closed (before the second transfer began),
//!   the second's closed too, the one still open at Ctrl-C marked `open`,
//!   and an `end` line (ended by Ctrl-C, the kernel's drop counts);
//!   the byte counts are the bytes sent;
//! - its `-w` file, read again by `analyze`, gives the same reports;
//! - `dump -i --json` printed exactly what `dump` prints of its own `-w`
//!   file, then its `end` line;
//! - `compare -i -i` matched the three connections across the router and
//!   found nothing changed, with an end per interface.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lab::{Ctx, Netns, Req, Share};
use serde_json::Value;

/// One row: how long the captures run.
pub struct Case {
    duration_s: u64,
    share: Share,
    needs: &'static [Req],
}

const NEEDS: &[Req] = &[Req::Root, Req::Tool("ip"), Req::Tool("python3"), Req::Netns];

lab::rows! {
    lab = crate::LABS;
    run = run_case;
    type = Case;
    /// Exclusive: the first report must come out while the capture runs,
    /// within a few seconds.
    transfers => Case { duration_s: 9, share: Share::Exclusive, needs: NEEDS },
}

const CLIENT: &str = "198.18.71.2";
const SERVER: &str = "198.18.72.2";
const PORT: u16 = 5201;
const FIRST: u64 = 2_000_000;
const SECOND: u64 = 1_000_000;
const KEPT_OPEN: u64 = 1_000;

/// `ip ARGS` (in the root namespace), which must succeed.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ip netns exec NS sysctl -qw SETTING`.
fn sysctl(ns: &Netns, setting: &str) {
    let out = ns
        .exec("sysctl")
        .args(["-qw", setting])
        .output()
        .expect("run sysctl");
    assert!(out.status.success(), "sysctl {setting}: {out:?}");
}

/// `ip -n NS ARGS` (ARGS split at white space), which must succeed.
fn ip_in(ns: &Netns, args: &str) {
    let mut all = vec!["-n", ns.name()];
    all.extend(args.split_whitespace());
    ip(&all);
}

/// The three namespaces, joined and addressed.
fn topology() -> [Netns; 3] {
    let make = |tag: &str| Netns::create(tag).unwrap_or_else(|e| panic!("{e}"));
    let (c, r, s) = (make("live-c"), make("live-r"), make("live-s"));
    for ns in [&c, &r, &s] {
        ip_in(ns, "link set lo up");
    }
    let router = r.name();
    ip_in(
        &c,
        &format!("link add c0 type veth peer name r0 netns {router}"),
    );
    ip_in(
        &s,
        &format!("link add s0 type veth peer name r1 netns {router}"),
    );
    for (ns, dev) in [(&c, "c0"), (&r, "r0"), (&r, "r1"), (&s, "s0")] {
        // Wire-sized packets in the captures, as a NIC would show them.
        let _ = Command::new("ip")
            .args(["-n", ns.name(), "link", "set", dev])
            .args(["gso_max_size", "1500", "gso_max_segs", "1"])
            .output();
        ip_in(ns, &format!("link set {dev} up"));
    }
    ip_in(&c, &format!("addr add {CLIENT}/24 dev c0"));
    ip_in(&r, "addr add 198.18.71.1/24 dev r0");
    ip_in(&r, "addr add 198.18.72.1/24 dev r1");
    ip_in(&s, &format!("addr add {SERVER}/24 dev s0"));
    ip_in(&c, "route add 198.18.0.0/15 via 198.18.71.1");
    ip_in(&s, "route add 198.18.0.0/15 via 198.18.72.1");
    sysctl(&r, "net.ipv4.ip_forward=1");
    [c, r, s]
}

fn python() -> &'static OsStr {
    lab::run::python().map_or(OsStr::new("python3"), Path::as_os_str)
}

/// The server: every connection read to its end, then closed.
const SERVER_PY: &str = r#"
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(8)
print("ready", flush=True)
def drain(c):
    while c.recv(65536):
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=drain, args=(c,), daemon=True).start()
"#;

/// The client: N bytes, then close and wait for the server's close; with
/// `hold`, N bytes and then sleep (the connection stays open).
const CLIENT_PY: &str = r#"
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
c.sendall(b"x" * int(sys.argv[3]))
if sys.argv[4] == "hold":
    print("sent", flush=True)
    time.sleep(60)
c.shutdown(socket.SHUT_WR)
while c.recv(65536):
    pass
c.close()
"#;

/// A tool running in a namespace: its standard output and error come in
/// line by line, each with the time it arrived.
struct Running {
    child: Child,
    out: mpsc::Receiver<(Instant, String)>,
    err: mpsc::Receiver<String>,
}

fn spawn(mut cmd: Command) -> Running {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (tx, out) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send((Instant::now(), line));
        }
    });
    let (tx, err) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Running { child, out, err }
}

impl Running {
    /// Waits until standard error has said `listening on` `n` times.
    fn wait_listening(&mut self, n: usize, what: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        while seen
            .iter()
            .filter(|l: &&String| l.contains("listening on"))
            .count()
            < n
        {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.err.recv_timeout(left) {
                Ok(line) => seen.push(line),
                Err(_) => panic!("{what} did not start capturing: {seen:?}"),
            }
        }
        seen
    }

    /// Waits for the exit; the status, the output lines with their arrival
    /// times, and standard error.
    fn finish(mut self, what: &str) -> (Option<i32>, Vec<(Instant, String)>, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("{what} did not end after its --duration or Ctrl-C");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // The readers end with the pipes.
        std::thread::sleep(Duration::from_millis(100));
        let out: Vec<(Instant, String)> = self.out.try_iter().collect();
        let err: Vec<String> = self.err.try_iter().collect();
        (status.code(), out, err.join("\n"))
    }
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// The connection line whose report has this `id`.
fn by_id(conns: &[(Instant, Value)], id: u64) -> &(Instant, Value) {
    conns
        .iter()
        .find(|(_, l)| l["connection"]["id"] == id)
        .unwrap_or_else(|| panic!("no connection {id} among {conns:?}"))
}

/// Payload bytes the client sent, each once, as the capture counted them.
fn client_sent(line: &Value) -> u64 {
    let d = &line["connection"]["directions"]["client_to_server"];
    let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k} in {d}"));
    n("bytes") - n("retransmitted_bytes")
}

fn run_case(ctx: &Ctx, c: &Case) {
    let tool = ctx.tools().bins().firewall_check;
    let [cns, rns, sns] = topology();
    check_usage_errors(&cns, tool);
    let mut server = start_server(&sns);
    let caps = start_captures(ctx.dir(), tool, c, &cns, &rns);
    let mut transfers = run_transfers(&cns, c, caps.started);
    let Captures {
        analyze,
        dump,
        compare,
        analyze_w,
        dump_w,
        ..
    } = caps;
    let (conns, drops) = check_analyze_live(analyze, transfers.second_started);
    let _ = transfers.held.child.kill();
    let _ = transfers.held.child.wait();
    check_analyze_file(ctx, &analyze_w, &conns);
    check_dump(ctx, dump, &dump_w, drops);
    check_compare(compare);

    let _ = server.child.kill();
    let _ = server.child.wait();
    drop((cns, rns, sns));
}

/// The command line's mistakes: status 2 with libpcap's reason; an
/// interface that does not exist: status 1.
fn check_usage_errors(cns: &Netns, tool: &str) {
    for (args, code, says) in [
        (
            &["dump", "-i", "c0", "-f", "tcp port"][..],
            2,
            "can't parse filter expression",
        ),
        (
            &["analyze", "-i", "nosuch0", "--count", "1"],
            1,
            "cannot capture on nosuch0",
        ),
    ] {
        let out = cns.exec(tool).args(args).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The server in its namespace, once it says it is ready.
fn start_server(sns: &Netns) -> Running {
    let server = spawn({
        let mut cmd = sns.exec(python());
        cmd.args(["-c", SERVER_PY, SERVER, &PORT.to_string()]);
        cmd
    });
    let ready = server.out.recv_timeout(Duration::from_secs(20));
    assert!(
        matches!(&ready, Ok((_, l)) if l == "ready"),
        "server: {ready:?}"
    );
    server
}

/// The three live captures, each capturing, and their `-w` files.
struct Captures {
    analyze: Running,
    dump: Running,
    compare: Running,
    analyze_w: PathBuf,
    dump_w: PathBuf,
    /// When all three were capturing.
    started: Instant,
}

/// Starts `analyze -i` and `dump -i` on the client's interface and
/// `compare -i -i` on the router's two, and waits until all capture.
fn start_captures(dir: &Path, tool: &str, c: &Case, cns: &Netns, rns: &Netns) -> Captures {
    let duration = format!("{}s", c.duration_s);
    let filter = format!("tcp port {PORT}");
    let analyze_w = dir.join("analyze-live.pcap");
    let dump_w = dir.join("dump-live.pcap");
    let live = |ns: &Netns, args: &[&str], timed: bool| {
        let mut cmd = ns.exec(tool);
        cmd.args(args).args(["-f", &filter, "--json"]);
        if timed {
            cmd.args(["--duration", &duration]);
        }
        spawn(cmd)
    };
    // analyze runs until Ctrl-C (SIGINT), the others for --duration.
    let analyze_args = [
        "analyze",
        "-i",
        "c0",
        "-w",
        analyze_w.to_str().expect("path"),
    ];
    let mut analyze = live(cns, &analyze_args, false);
    let dump_args = ["dump", "-i", "c0", "-w", dump_w.to_str().expect("path")];
    let mut dump = live(cns, &dump_args, true);
    let mut compare = live(rns, &["compare", "-i", "r0", "-i", "r1"], true);
    analyze.wait_listening(1, "analyze -i");
    dump.wait_listening(1, "dump -i");
    compare.wait_listening(2, "compare -i -i");
    Captures {
        analyze,
        dump,
        compare,
        analyze_w,
        dump_w,
        started: Instant::now(),
    }
}

/// The transfers done: the connection still held open, and when the
/// second transfer began.
struct Transfers {
    held: Running,
    second_started: Instant,
}

/// The first transfer, the connection held open, a pause, the second
/// transfer; all within the captures' duration.
fn run_transfers(cns: &Netns, c: &Case, started: Instant) -> Transfers {
    let duration = format!("{}s", c.duration_s);
    let client = |bytes: u64, how: &str| {
        let mut cmd = cns.exec(python());
        cmd.args([
            "-c",
            CLIENT_PY,
            SERVER,
            &PORT.to_string(),
            &bytes.to_string(),
            how,
        ]);
        cmd
    };
    let out = client(FIRST, "close").output().expect("client");
    assert!(out.status.success(), "first transfer: {out:?}");
    let held = spawn(client(KEPT_OPEN, "hold"));
    let sent = held.out.recv_timeout(Duration::from_secs(10));
    assert!(
        matches!(&sent, Ok((_, l)) if l == "sent"),
        "held connection: {sent:?}"
    );
    // Past the linger of a closed connection (1 s) and a tick.
    std::thread::sleep(Duration::from_millis(2500));
    let second_started = Instant::now();
    let out = client(SECOND, "close").output().expect("client");
    assert!(out.status.success(), "second transfer: {out:?}");
    assert!(
        started.elapsed() < Duration::from_secs(c.duration_s - 1),
        "the transfers took {:?}, past the captures' {duration}",
        started.elapsed()
    );
    Transfers {
        held,
        second_started,
    }
}

/// analyze -i --json: JSON lines as connections close, then at Ctrl-C
/// the open one and the end. The connection lines with their arrival
/// times, and the kernel's drop count.
fn check_analyze_live(
    mut analyze: Running,
    second_started: Instant,
) -> (Vec<(Instant, Value)>, u64) {
    assert!(
        analyze.child.try_wait().expect("wait").is_none(),
        "analyze -i ended before Ctrl-C"
    );
    let pid = analyze.child.id().to_string();
    let kill = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    assert!(kill.success());
    let (status, lines, err) = analyze.finish("analyze -i");
    assert!(
        matches!(status, Some(0 | 3)),
        "analyze -i: {status:?} {err}"
    );
    let lines: Vec<(Instant, Value)> = lines.iter().map(|(t, l)| (*t, json(l))).collect();
    let (conns, rest): (Vec<_>, Vec<_>) = lines
        .iter()
        .cloned()
        .partition(|(_, l)| l["type"] == "connection");
    assert_eq!(conns.len(), 3, "three connections: {lines:?}");
    assert_eq!(rest.len(), 1, "one end line: {lines:?}");
    let drops = check_analyze_end(&lines, &rest[0].1);
    check_analyze_connections(&conns, second_started, drops);
    (conns, drops)
}

/// analyze -i's `end` line: last, ended by Ctrl-C, with the kernel's
/// counts; its drop count.
fn check_analyze_end(lines: &[(Instant, Value)], end: &Value) -> u64 {
    assert_eq!(
        lines.last().map(|l| &l.1),
        Some(end),
        "the end line is last"
    );
    assert_eq!(end["type"], "end");
    assert_eq!(end["schema_version"], 2);
    assert_eq!(end["interface"], "c0");
    assert_eq!(end["reason"], "interrupted");
    assert_eq!(end["connections"], 3);
    let frames = end["frames"].as_u64().expect("frames");
    let loss = &end["capture_loss"];
    let drops = loss["kernel_drops"].as_u64().expect("kernel_drops");
    assert!(loss["interface_drops"].is_u64(), "{loss}");
    assert!(
        loss["received"].as_u64().expect("received") >= frames,
        "the kernel received at least what was read: {end}"
    );
    lab::note!("analyze -i: {frames} frames, {drops} dropped by the kernel");
    drops
}

/// analyze -i's three connection lines: each when it should come, open
/// or closed, with the bytes the client sent.
fn check_analyze_connections(conns: &[(Instant, Value)], second_started: Instant, drops: u64) {
    // In order of first appearance: the first transfer, the connection
    // held open, the second transfer.
    let (first_at, first) = by_id(conns, 1);
    assert_eq!(first["open"], false, "{first}");
    assert!(
        *first_at < second_started,
        "the first transfer's report came {:?} after the second transfer started: not as it closed",
        first_at.duration_since(second_started)
    );
    let (_, second) = by_id(conns, 3);
    assert_eq!(second["open"], false, "{second}");
    let (held_at, open) = by_id(conns, 2);
    assert_eq!(open["open"], true, "{open}");
    if drops == 0 {
        assert_eq!(
            [client_sent(first), client_sent(open), client_sent(second)],
            [FIRST, KEPT_OPEN, SECOND],
            "the bytes the client sent"
        );
    } else {
        lab::note!("the kernel dropped {drops} packets: byte counts not compared");
    }
    assert!(
        *held_at > second_started,
        "the open connection is reported at the end"
    );
    for (_, l) in conns {
        assert_eq!(l["schema_version"], 2);
        assert_eq!(l["connection"]["server"], format!("{SERVER}:{PORT}"));
        assert_eq!(l["connection"]["handshake_seen"], true, "{l}");
    }
}

/// The -w file read again: the same reports.
fn check_analyze_file(ctx: &Ctx, analyze_w: &Path, conns: &[(Instant, Value)]) {
    let again = ctx.tools().firewall_check([
        OsStr::new("analyze"),
        OsStr::new("--json"),
        analyze_w.as_os_str(),
    ]);
    assert!(matches!(again.status.code(), Some(0 | 3)), "{again:?}");
    let doc = json(&String::from_utf8_lossy(&again.stdout));
    let mut live_reports: Vec<Value> = conns.iter().map(|(_, l)| l["connection"].clone()).collect();
    live_reports.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(
        doc["connections"].as_array().expect("connections"),
        &live_reports,
        "analyze of the -w file differs from what analyze -i reported"
    );
}

/// dump -i --json: what dump prints of its -w file, then the end line.
fn check_dump(ctx: &Ctx, dump: Running, dump_w: &Path, drops: u64) {
    let (status, lines, err) = dump.finish("dump -i");
    assert_eq!(status, Some(0), "dump -i: {err}");
    let mut lines: Vec<String> = lines.into_iter().map(|(_, l)| l).collect();
    let end = json(&lines.pop().expect("an end line"));
    assert_eq!(end["type"], "end", "{end}");
    assert_eq!(end["reason"], "duration");
    assert!(end["capture_loss"]["kernel_drops"].is_u64(), "{end}");
    assert_eq!(
        end["frames"].as_u64(),
        Some(lines.len() as u64),
        "every frame is TCP (the filter)"
    );
    let from_file =
        ctx.tools()
            .firewall_check([OsStr::new("dump"), OsStr::new("--json"), dump_w.as_os_str()]);
    assert_eq!(from_file.status.code(), Some(0), "{from_file:?}");
    let file_lines: Vec<String> = String::from_utf8_lossy(&from_file.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert!(
        lines.len() > 100,
        "the transfers' segments: {}",
        lines.len()
    );
    assert_eq!(lines, file_lines, "dump -i and dump of its -w file differ");
    if drops == 0 {
        let syns = lines
            .iter()
            .filter(|l| l.contains("\"flags\":[\"SYN\"]"))
            .count();
        assert_eq!(syns, 3, "the three SYNs");
    }
}

/// compare -i -i across the router: the three connections, nothing changed.
fn check_compare(compare: Running) {
    let (status, lines, err) = compare.finish("compare -i -i");
    let text: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let doc = json(&text);
    assert_eq!(status, Some(0), "compare -i -i: {err}\n{text}");
    assert_eq!(
        doc["connections"].as_array().map(Vec::len),
        Some(3),
        "{text}"
    );
    assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0), "{text}");
    let ends = doc["live"].as_array().expect("live");
    assert_eq!(ends.len(), 2);
    for (e, iface) in ends.iter().zip(["r0", "r1"]) {
        assert_eq!(e["interface"], iface);
        assert_eq!(e["reason"], "duration");
        assert!(e["capture_loss"]["kernel_drops"].is_u64(), "{e}");
    }
    assert_eq!(doc["captures"][0]["path"], "r0");
}
