//! The probe lab's runner and the checks its tests share: running
//! `probe-lab.sh` ([`Lab`]), reading each case's run ([`CaseRun`]), the
//! checks every run gets ([`check_run`]) and the helpers that find and
//! locate findings and tests in a run's JSON.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::lab_support;

mod scenarios;

/// r2, the middlebox: its address towards the client and its TTL.
pub const R2: (&str, u64) = ("198.18.42.2", 2);

/// The lab script.
pub const SCRIPT: &str = "probe-lab.sh";

/// The probe's wait for a round of copies in the lab, ms.
pub const TIMEOUT_MS: &str = "600";

/// Whether the lab can run here (skips with a message, or fails under
/// TCP_PERF_LAB_REQUIRED=1).
pub fn available() -> bool {
    lab_support::ready(SCRIPT, "the probe lab")
}

/// One lab (or pair of labs) at a time per test binary: the labs share the
/// machine's CPUs.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LAB: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LAB.lock().unwrap_or_else(|e| e.into_inner())
}

/// The main case lists' pause between packets to one hop, ms (the lab's
/// routers do not limit their ICMP rate; one run, `--max-ttl`, keeps the
/// default 5 ms).
pub const FAST_PACE: &[&str] = &["--pace-ms", "1"];

/// A probe run of one case.
pub struct CaseRun {
    pub name: String,
    pub v6: bool,
    pub reflect: bool,
    pub status: i32,
    pub json: Value,
    pub err: String,
    pub tables: String,
    /// The text report of a second run (PROBE_LAB_TEXT) and its status.
    pub text: Option<(i32, String)>,
}

/// How to run the lab.
#[derive(Clone, Default)]
pub struct Lab<'a> {
    pub v6: bool,
    pub reflect: bool,
    /// Cases run a second time without `--json`.
    pub text: &'a [&'a str],
    /// `PROBE_LAB_PARTIAL`: the router that quotes 8 bytes.
    pub partial: Option<&'a str>,
    /// `PROBE_LAB_DELAY`: the router whose quotes come late, and how late
    /// (`r3:300`).
    pub delay: Option<&'a str>,
    /// More probe arguments.
    pub args: &'a [&'a str],
}

impl Lab<'_> {
    /// Runs `cases` in one lab (one at a time per test binary: the labs
    /// share the machine's CPUs); the runs, in order.
    pub fn run(&self, tag: &str, cases: &[&str]) -> Vec<CaseRun> {
        let _guard = one_at_a_time();
        self.run_unlocked(tag, cases)
    }

    /// Runs two labs at once (their own namespaces; the probe's runs are
    /// mostly waiting, so two share the machine's two cores): the runs of
    /// each, in order.
    pub fn run_two(
        (a, tag_a, cases_a): (&Lab<'_>, &str, &[&str]),
        (b, tag_b, cases_b): (&Lab<'_>, &str, &[&str]),
    ) -> (Vec<CaseRun>, Vec<CaseRun>) {
        let _guard = one_at_a_time();
        std::thread::scope(|s| {
            let first = s.spawn(|| a.run_unlocked(tag_a, cases_a));
            let second = b.run_unlocked(tag_b, cases_b);
            (first.join().expect("the first lab"), second)
        })
    }

    fn run_unlocked(&self, tag: &str, cases: &[&str]) -> Vec<CaseRun> {
        let dir = std::env::temp_dir().join(format!("probe-lab-{tag}-{}", std::process::id()));
        let out = Command::new("bash")
            .env("PROBE_LAB_REFLECT", if self.reflect { "1" } else { "0" })
            .env("PROBE_LAB_FAMILY", if self.v6 { "6" } else { "4" })
            .env("PROBE_LAB_TEXT", self.text.join(","))
            .env("PROBE_LAB_PARTIAL", self.partial.unwrap_or(""))
            .env("PROBE_LAB_DELAY", self.delay.unwrap_or(""))
            .env("LAB_QUOTE8", env!("CARGO_BIN_EXE_lab-quote8"))
            .arg(lab_support::script(SCRIPT))
            .arg(&dir)
            .arg(env!("CARGO_BIN_EXE_lab-firewall-check"))
            .arg(cases.join(","))
            .arg("--")
            .args(["--timeout-ms", TIMEOUT_MS])
            .args(self.args)
            .output()
            .expect("run the lab");
        assert!(
            out.status.success(),
            "probe-lab.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let runs = cases.iter().map(|c| self.read(&dir, c)).collect();
        let log = std::fs::read_to_string(dir.join("quote8.log")).unwrap_or_default();
        if self.partial.is_some() {
            assert!(log.contains("quote8: cut"), "lab-quote8 cut nothing: {log}");
        }
        if self.delay.is_some() {
            assert!(
                log.contains("quote8: delayed"),
                "lab-quote8 held nothing: {log}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        runs
    }

    fn read(&self, dir: &Path, c: &str) -> CaseRun {
        let read = |ext: &str| {
            std::fs::read_to_string(dir.join(format!("{c}.{ext}")))
                .unwrap_or_else(|e| panic!("{c}.{ext}: {e}"))
        };
        let err = read("err");
        let json: Value = serde_json::from_str(&read("json"))
            .unwrap_or_else(|e| panic!("{c}: not JSON ({e}); stderr: {err}"));
        CaseRun {
            name: c.to_string(),
            v6: self.v6,
            reflect: self.reflect,
            status: read("status").trim().parse().expect("status"),
            json,
            err,
            tables: read("tables"),
            text: self.text.contains(&c).then(|| {
                (
                    read("txt.status").trim().parse().expect("text status"),
                    read("txt"),
                )
            }),
        }
    }
}

/// The lab address `v4` in the run's family: 198.18.X.Y is 2001:db8:X::Y.
pub fn addr(r: &CaseRun, v4: &str) -> String {
    if !r.v6 {
        return v4.to_string();
    }
    let p: Vec<&str> = v4.split('.').collect();
    format!("2001:db8:{}::{}", p[2], p[3])
}

/// Every run's JSON validates against docs/json-schema/probe.json, which
/// is closed: an undocumented field does not pass.
pub fn assert_schema(r: &CaseRun) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/json-schema/probe.json");
    let text = std::fs::read_to_string(&path).expect("docs/json-schema/probe.json");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator
        .iter_errors(&r.json)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:#?}", r.name);
    let mut extra = r.json.clone();
    extra["undocumented"] = Value::Bool(true);
    assert!(
        !validator.is_valid(&extra),
        "{}: the schema accepts any field",
        r.name
    );
}

/// Standard error holds the progress lines only, one per phase, the last
/// one with every test done.
pub fn assert_progress_only(r: &CaseRun) {
    let lines: Vec<&str> = r.err.lines().collect();
    assert!(!lines.is_empty(), "{}: no progress on stderr", r.name);
    for l in &lines {
        assert!(l.starts_with("probe: "), "{}: stderr {:?}", r.name, r.err);
    }
    let n = r.json["tests"].as_array().map_or(0, Vec::len);
    let done = format!("probe: {n}/{n} tests");
    assert!(
        lines.iter().any(|l| l.starts_with(&done)),
        "{}: no {done:?} in {:?}",
        r.name,
        r.err
    );
}

/// The path of the main line: r1, r2, r3, the target; a SYN proxy at r2
/// answers one hop early; a NAT at r2 makes the routers from r2 on answer
/// from the virtual address.
pub fn expected_path(r: &CaseRun) -> Vec<(u64, String)> {
    let p: Vec<(u64, &str)> = match r.name.as_str() {
        "synproxy_fwd" | "synproxy_nft" => {
            vec![(1, "198.18.41.1"), (2, "198.18.42.2"), (3, "198.18.44.2")]
        }
        "nat" | "dnat_pre" => vec![
            (1, "198.18.41.1"),
            (2, "198.18.45.80"),
            (3, "198.18.45.80"),
            (4, "198.18.45.80"),
        ],
        _ => vec![
            (1, "198.18.41.1"),
            (2, "198.18.42.2"),
            (3, "198.18.43.2"),
            (4, "198.18.44.2"),
        ],
    };
    p.into_iter().map(|(t, a)| (t, addr(r, a))).collect()
}

pub fn path_of(r: &CaseRun) -> Vec<(u64, String)> {
    r.json["path"]
        .as_array()
        .expect("path")
        .iter()
        .map(|h| {
            let a = h["address"].as_str().unwrap().to_string();
            (h["ttl"].as_u64().unwrap(), a)
        })
        .collect()
}

/// What every run of the main line must show: the schema, the progress
/// on stderr and nothing else there, the path, the RST suppression gone,
/// r2 between `after_hop` and `hop` of every located finding, the TTL
/// decrement reported (never a finding), exit status 3 with findings and 0
/// without.
pub fn check_run(r: &CaseRun) {
    assert_schema(r);
    assert_progress_only(r);
    if r.text.is_some() {
        assert_text_agrees(r);
    }
    assert_eq!(r.json["schema_version"], 1, "{}", r.name);
    assert_eq!(path_of(r), expected_path(r), "{}: path", r.name);
    assert!(
        !r.tables.contains("firewall_check_probe"),
        "{}: the RST suppression table outlived the probe: {}",
        r.name,
        r.tables
    );
    let findings = r.json["findings"].as_array().expect("findings");
    for f in findings {
        if let (Some(a), Some(h)) = (f["after_hop"]["ttl"].as_u64(), f["hop"]["ttl"].as_u64()) {
            assert!(
                a <= R2.1 && R2.1 <= h,
                "{}: r2 not between after_hop and hop: {f}",
                r.name
            );
        }
    }
    let ttl = &r.json["tests"][0];
    assert_eq!(ttl["name"], "ttl");
    assert!(
        ttl["detail"]
            .as_str()
            .unwrap_or("")
            .contains("each decrements TTL by one"),
        "{}: {ttl}",
        r.name
    );
    let want = if findings.is_empty() { 0 } else { 3 };
    assert_eq!(r.status, want, "{}: exit status; stderr {}", r.name, r.err);
}

/// A JSON value as the text report writes it: strings bare, DSCP as
/// `name (value)`, a NAT's ends as `source A:P, destination B:Q`, `null` as
/// `not seen`; `None` for the other objects.
pub fn plain(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some("not seen".into()),
        Value::Object(m) if m.contains_key("src") || m.contains_key("dst") => {
            let text = |key: &str, word: &str| {
                end(v, key).map(|(a, p)| {
                    let a: std::net::IpAddr = a.parse().unwrap();
                    format!("{word} {}", std::net::SocketAddr::new(a, p as u16))
                })
            };
            let parts: Vec<String> = [text("src", "source"), text("dst", "destination")]
                .into_iter()
                .flatten()
                .collect();
            Some(parts.join(", "))
        }
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Object(m) if m.contains_key("name") => {
            Some(format!("{} ({})", m["name"].as_str()?, m.get("value")?))
        }
        _ => None,
    }
}

/// Digits masked: the text and the JSON come from two runs, whose measured
/// RTTs (and the ceilings computed from them) differ, so do the rates'
/// unit prefixes (526.4 Mbit/s in one, 2.26 Gbit/s in the other).
pub fn masked(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() || c == '.' || c == ',' {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    for unit in [" kbit/s", " Mbit/s", " Gbit/s", " Tbit/s"] {
        out = out.replace(unit, " bit/s");
    }
    out
}

/// The text report (a second run of the case, PROBE_LAB_TEXT) says what
/// the JSON says: the same exit status and path; one line per finding, in
/// the JSON's order, naming where (hop and after hop, TTL and address), the
/// direction, what changed (kind, option kind, before -> after) and what
/// it costs (the impact, its numbers from the run's own RTT); and every
/// test with its result.
pub fn assert_text_agrees(r: &CaseRun) {
    let (status, text) = r
        .text
        .as_ref()
        .unwrap_or_else(|| panic!("{}: no text run", r.name));
    assert_eq!(*status, r.status, "{}: text run's status\n{text}", r.name);
    let lines: Vec<&str> = text.lines().collect();
    let path_at = lines
        .iter()
        .position(|l| l.starts_with("path:"))
        .unwrap_or_else(|| panic!("{}: no path line\n{text}", r.name));
    let path: String = path_of(r)
        .iter()
        .map(|(t, a)| format!(" {t}:{a}"))
        .collect();
    assert_eq!(lines[path_at], format!("path:{path}"), "{}", r.name);
    let tests_at = lines
        .iter()
        .position(|l| *l == "tests:")
        .unwrap_or_else(|| panic!("{}: no tests line\n{text}", r.name));
    let finding_lines = &lines[path_at + 1..tests_at];
    let findings = r.json["findings"].as_array().unwrap();
    if findings.is_empty() {
        assert_eq!(
            finding_lines,
            ["no findings: nothing on the path changed the probes"],
            "{}",
            r.name
        );
    } else {
        assert_eq!(finding_lines.len(), findings.len(), "{}:\n{text}", r.name);
    }
    let hop = |h: &Value| format!("hop {} ({})", h["ttl"], h["address"].as_str().unwrap());
    for (line, f) in finding_lines.iter().zip(findings) {
        let at = match (f["hop"].is_null(), f["after_hop"].is_null()) {
            (false, false) => format!("{}, after {}", hop(&f["hop"]), hop(&f["after_hop"])),
            (false, true) => hop(&f["hop"]),
            (true, false) => format!("after {}", hop(&f["after_hop"])),
            (true, true) => "somewhere on the path".into(),
        };
        let dir = f["direction"].as_str().unwrap().replace('_', " ");
        assert!(
            line.starts_with(&format!("{at}, {dir}: ")),
            "{}: {line:?} for {f}",
            r.name
        );
        if let Some(k) = f["option_kind"].as_u64() {
            assert!(line.contains(&format!("(kind {k}): ")), "{line:?} for {f}");
        }
        if let (Some(b), Some(a)) = (plain(&f["before"]), plain(&f["after"])) {
            assert!(
                masked(line).contains(&masked(&format!(": {b} -> {a}; "))),
                "{line:?} for {f}"
            );
        }
        let cost = f["impact"]["summary"].as_str().unwrap();
        assert!(!cost.is_empty(), "{f}");
        assert!(
            masked(line).ends_with(&masked(&format!("; {cost}"))),
            "{}: {line:?} for {f}",
            r.name
        );
    }
    let test_lines = &lines[tests_at + 1..];
    for t in r.json["tests"].as_array().unwrap() {
        let (name, result) = (t["name"].as_str().unwrap(), t["result"].as_str().unwrap());
        assert!(
            test_lines.iter().any(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some(name) && w.next() == Some(result)
            }),
            "{}: test {name} {result} not in the text\n{text}",
            r.name
        );
    }
}

/// The findings of `kind` the run gives `dir`.
pub fn findings_dir<'a>(r: &'a CaseRun, kind: &str, dir: &str) -> Vec<&'a Value> {
    r.json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == kind && f["direction"] == dir)
        .collect()
}

/// The client-to-server findings of `kind`.
pub fn findings<'a>(r: &'a CaseRun, kind: &str) -> Vec<&'a Value> {
    findings_dir(r, kind, "client_to_server")
}

/// The one client-to-server finding of `kind`.
pub fn one<'a>(r: &'a CaseRun, kind: &str) -> &'a Value {
    let f = findings(r, kind);
    assert_eq!(
        f.len(),
        1,
        "{}: expected one {kind} finding, got {}",
        r.name,
        serde_json::to_string_pretty(&r.json["findings"]).unwrap()
    );
    f[0]
}

/// The one server-to-client finding of `kind`.
pub fn one_reverse<'a>(r: &'a CaseRun, kind: &str) -> &'a Value {
    let f = findings_dir(r, kind, "server_to_client");
    assert_eq!(
        f.len(),
        1,
        "{}: expected one server_to_client {kind} finding, got {}",
        r.name,
        serde_json::to_string_pretty(&r.json["findings"]).unwrap()
    );
    f[0]
}

/// The hop at TTL `t` counted from the client (`client_to_server`: the
/// run's own path, r2 at TTL 2) or from the server (r3, r2, r1, then the
/// prober), its address towards the sender.
pub fn router(r: &CaseRun, dir: &str, t: u64) -> String {
    if dir == "client_to_server" {
        let p = path_of(r);
        let a = p.iter().find(|(x, _)| *x == t).map(|(_, a)| a.clone());
        let a = a.unwrap_or_else(|| panic!("{}: no hop {t} in {p:?}", r.name));
        if t == R2.1 {
            assert_eq!(a, addr(r, R2.0), "{}: r2's address", r.name);
        }
        return a;
    }
    let a = match t {
        1 => "198.18.44.1",
        2 => "198.18.43.1",
        3 => "198.18.42.1",
        _ => "198.18.41.2",
    };
    addr(r, a)
}

/// The finding is at TTL `hop`, after TTL `hop - 1`, each named by its
/// address (from the server for `server_to_client`), r2 between them.
pub fn located(r: &CaseRun, f: &Value, hop: u64) {
    let dir = f["direction"].as_str().unwrap_or("");
    let h = f["hop"]["ttl"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: no hop in {f}", r.name));
    let a = f["after_hop"]["ttl"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: no after_hop in {f}", r.name));
    assert_eq!((a, h), (hop - 1, hop), "{}: {f}", r.name);
    assert!(a <= R2.1 && R2.1 <= h, "{}: r2 not between: {f}", r.name);
    assert_eq!(f["hop"]["address"], router(r, dir, h), "{}: {f}", r.name);
    assert_eq!(
        f["after_hop"]["address"],
        router(r, dir, a),
        "{}: {f}",
        r.name
    );
}

/// A test of the run, by name and direction.
pub fn test<'a>(r: &'a CaseRun, name: &str) -> &'a Value {
    r.json["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{}: no test {name}", r.name))
}

pub fn test_result<'a>(r: &'a CaseRun, name: &str) -> &'a str {
    test(r, name)["result"].as_str().unwrap_or("")
}

pub fn test_detail<'a>(r: &'a CaseRun, name: &str) -> &'a str {
    test(r, name)["detail"].as_str().unwrap_or("")
}

/// The probe's own detail of test `name` in `r` contains every one of `parts`.
pub fn detail_has(r: &CaseRun, name: &str, parts: &[&str]) {
    let d = test_detail(r, name);
    for p in parts {
        assert!(d.contains(p), "{}: {name}: {p:?} not in {d:?}", r.name);
    }
}

/// One end (`src` or `dst`) of a `nat` finding's `before` or `after`
/// (`{"src": {"addr", "port"}, "dst": ...}`, only the rewritten ends) as
/// `(address, port)`; `None` when that end is not a key (not rewritten).
pub fn end(v: &Value, key: &str) -> Option<(String, u64)> {
    let obj = v.as_object().unwrap_or_else(|| panic!("not nat ends: {v}"));
    assert!(
        !obj.is_empty() && obj.keys().all(|k| k == "src" || k == "dst"),
        "not nat ends: {v}"
    );
    let e = obj.get(key)?;
    let addr = e["addr"].as_str().unwrap_or_else(|| panic!("no addr: {v}"));
    let port = e["port"].as_u64().unwrap_or_else(|| panic!("no port: {v}"));
    Some((addr.to_string(), port))
}

/// Every server-to-client test ran (none `unknown`) but `except`.
pub fn reverse_all_ran(r: &CaseRun, except: &[&str]) {
    for t in r.json["tests"].as_array().expect("tests") {
        let name = t["name"].as_str().unwrap_or("");
        if t["direction"] == "server_to_client" && !except.contains(&name) {
            assert_ne!(t["result"], "unknown", "{}: {t}", r.name);
        }
    }
}

/// A DSCP map (`dscp_map` or `reverse_dscp_map`): 64 entries, each value as
/// `want` maps it, the changed ones located at `at` (hop `at`, after hop
/// `at - 1`), the others with no hop; its test's result and detail agree.
pub fn check_map(r: &CaseRun, key: &str, want: impl Fn(u64) -> u64, at: u64) {
    let map = r.json[key]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no {key}", r.name));
    assert_eq!(map.len(), 64, "{}", r.name);
    let mut changed = 0;
    for (i, e) in map.iter().enumerate() {
        let sent = e["sent"].as_u64().unwrap();
        assert_eq!(sent, i as u64, "{}: {e}", r.name);
        assert_eq!(e["seen"], want(sent), "{}: {e}", r.name);
        if want(sent) == sent {
            assert!(
                e["hop"].is_null() && e["after_hop"].is_null(),
                "{}: {e}",
                r.name
            );
            continue;
        }
        changed += 1;
        assert_eq!(
            (e["after_hop"]["ttl"].as_u64(), e["hop"]["ttl"].as_u64()),
            (Some(at - 1), Some(at)),
            "{}: {e}",
            r.name
        );
    }
    let name = if key == "dscp_map" {
        "dscp_all"
    } else {
        "reverse_dscp_all"
    };
    let (result, detail) = (test_result(r, name), test_detail(r, name));
    if changed == 0 {
        assert_eq!(result, "unchanged", "{}: {detail}", r.name);
        assert!(
            detail.contains("all 64 values seen unchanged"),
            "{}: {detail}",
            r.name
        );
    } else {
        assert_eq!(result, "modified", "{}: {detail}", r.name);
        assert!(
            detail.starts_with("remarking map: "),
            "{}: {detail}",
            r.name
        );
        assert!(
            detail.contains(&format!(" at hop {at}")),
            "{}: {detail}",
            r.name
        );
    }
}

/// Only these kinds, nothing else; exit status 3 with findings, 0 without.
pub fn only_kinds(r: &CaseRun, kinds: &[&str]) {
    for f in r.json["findings"].as_array().expect("findings") {
        let k = f["kind"].as_str().unwrap_or("");
        assert!(kinds.contains(&k), "{}: unexpected finding {f}", r.name);
    }
    let findings = !r.json["findings"].as_array().unwrap().is_empty();
    assert_eq!(
        r.status,
        if findings { 3 } else { 0 },
        "{}: exit status; stderr {}",
        r.name,
        r.err
    );
}
