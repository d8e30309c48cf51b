//! Running a lab script, and the network namespaces and files it leaves.
//!
//! Every script run gets a namespace prefix of its own in `LAB_NETNS`
//! (`lab<pid>-<n>`; the scripts name their namespaces `$LAB_NETNS-<role>`),
//! its output in files of its directory, and a deadline. After it ends, for
//! whatever reason (success, failure, timeout, a panic in the test that
//! started it), namespaces left with its prefix are deleted, the processes
//! in them killed first; one left after a successful run is a failure of the
//! script's own cleanup and fails the lab. Namespaces and directories of
//! earlier test processes that died (`lab<pid>-*`, `tcp-perf-lab-<pid>`)
//! are swept when a lab process starts.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::prereq::find_tool;

/// `examples/lab/NAME`, one of the lab scripts.
pub fn script_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The Python interpreter the scripts get in `LAB_PYTHON`: `python3`'s own
/// `sys.executable`, asked once. Where `python3` is a version manager's
/// shim (pyenv's is a bash script), each call through it costs a fifth of
/// a second on an idle machine and seconds on a loaded one: the QBSS lab's
/// senders then started seconds after the scenario's second 0.
pub fn python() -> Option<&'static Path> {
    static PY: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()?;
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        (out.status.success() && p.is_file()).then_some(p)
    })
    .as_deref()
}

/// The prefix of this process's namespaces: `lab<pid>-`.
pub fn netns_prefix() -> String {
    format!("lab{}-", std::process::id())
}

/// The names of the network namespaces (`ip netns list`).
pub fn list_netns() -> Vec<String> {
    let Some(ip) = find_tool("ip") else {
        return Vec::new();
    };
    let Ok(out) = Command::new(ip).args(["netns", "list"]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

/// Kills the processes in namespace `name`, then deletes it.
pub fn delete_netns(name: &str) {
    let Some(ip) = find_tool("ip") else {
        return;
    };
    if let Ok(out) = Command::new(&ip).args(["netns", "pids", name]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            let _ = Command::new("kill")
                .args(["-KILL", pid])
                .stderr(Stdio::null())
                .status();
        }
    }
    let _ = Command::new(ip)
        .args(["netns", "del", name])
        .stderr(Stdio::null())
        .status();
}

/// Deletes the namespaces whose names start with `prefix`; returns them.
pub fn sweep_prefix(prefix: &str) -> Vec<String> {
    let left: Vec<String> = list_netns()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect();
    for n in &left {
        delete_netns(n);
    }
    left
}

/// The pid in a name `<tag><pid>-...` (`lab1234-7-c`, `tcp-perf-lab-1234`).
fn owner_pid(name: &str, tag: &str) -> Option<u32> {
    let rest = name.strip_prefix(tag)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty()
        || !(rest[digits.len()..].is_empty() || rest[digits.len()..].starts_with('-'))
    {
        return None;
    }
    digits.parse().ok()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The file that marks a lab process's directory as kept: a lab failed in
/// it (its files are evidence) or `LAB_KEEP` was set.
pub const KEPT: &str = "KEPT";

/// Deletes namespaces and temporary directories left by lab processes that
/// are gone (killed, or stopped at a breakpoint and never resumed), but not
/// a directory marked [`KEPT`].
pub fn sweep_stale() {
    for n in list_netns() {
        if owner_pid(&n, "lab").is_some_and(|p| !alive(p)) {
            delete_netns(&n);
        }
    }
    if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // A failed lab's files (or LAB_KEEP's) stay until removed by hand.
            if owner_pid(&name, "tcp-perf-lab-").is_some_and(|p| !alive(p))
                && !e.path().join(KEPT).exists()
            {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Why a network namespace could not be made.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NetnsError {
    /// `ip` is not installed.
    #[error("the program ip (Debian package iproute2)")]
    NoIp,
    /// `ip` could not be started.
    #[error("cannot run ip: {0}")]
    Spawn(#[source] std::sync::Arc<std::io::Error>),
    /// `ip netns add` refused.
    #[error("network namespaces (ip netns add {name}: {stderr})")]
    Add {
        /// The namespace's name.
        name: String,
        /// What `ip` said.
        stderr: String,
    },
}

/// A network namespace made by the harness (not by a script), deleted when
/// dropped, also when the test panics.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates `lab<pid>-<tag>`.
    pub fn create(tag: &str) -> Result<Netns, NetnsError> {
        let name = format!("{}{tag}", netns_prefix());
        let ip = find_tool("ip").ok_or(NetnsError::NoIp)?;
        let out = Command::new(ip)
            .args(["netns", "add", &name])
            .output()
            .map_err(|e| NetnsError::Spawn(std::sync::Arc::new(e)))?;
        if !out.status.success() {
            return Err(NetnsError::Add {
                name,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(Netns { name })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip netns exec NAME PROGRAM`, to add arguments to.
    pub fn exec(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new(find_tool("ip").unwrap_or_else(|| "ip".into()));
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        delete_netns(&self.name);
    }
}

/// How a script run ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status (`None`: killed at its deadline).
    pub status: Option<ExitStatus>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
    /// Namespaces with its prefix that were still there after it ended
    /// (deleted since).
    pub left_netns: Vec<String>,
}

/// One run of a lab script: `bash examples/lab/NAME ARGS...`.
#[derive(Clone, Debug)]
pub struct Script {
    name: String,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    timeout: Duration,
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

impl Script {
    /// `examples/lab/NAME`, with a deadline of 120 s.
    pub fn new(name: &str) -> Script {
        Script {
            name: name.to_string(),
            args: Vec::new(),
            envs: Vec::new(),
            timeout: Duration::from_secs(120),
        }
    }

    /// One more argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Script {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    /// More arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Script {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// An environment variable for the script.
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Script {
        self.envs
            .push((k.as_ref().to_os_string(), v.as_ref().to_os_string()));
        self
    }

    /// Its deadline: after it the script gets SIGTERM (its trap cleans up),
    /// 10 s later SIGKILL, and its namespaces are deleted.
    pub fn timeout(mut self, d: Duration) -> Script {
        self.timeout = d;
        self
    }

    /// What the command line was, for messages.
    pub fn describe(&self) -> String {
        let mut s = self.name.clone();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }

    /// Runs it, its output kept in `log_dir` (`NAME.out`, `NAME.err`);
    /// returns how it ended, whatever that was.
    pub fn output(&self, log_dir: &Path) -> Finished {
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("{}{n}", netns_prefix());
        std::fs::create_dir_all(log_dir).expect("the log directory");
        let base = Path::new(&self.name)
            .file_name()
            .map_or_else(|| self.name.clone(), |b| b.to_string_lossy().into_owned());
        let out_path = log_dir.join(format!("{base}.out"));
        let err_path = log_dir.join(format!("{base}.err"));
        let start = Instant::now();
        let mut cmd = Command::new("bash");
        if let Some(py) = python() {
            cmd.env("LAB_PYTHON", py);
        }
        let mut child = cmd
            .arg(script_path(&self.name))
            .args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .env("LAB_NETNS", &prefix)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).expect("script output file"))
            .stderr(File::create(&err_path).expect("script error file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start bash {}: {e}", self.name));
        let mut timed_out = true;
        while start.elapsed() < self.timeout {
            match child.try_wait() {
                Ok(Some(_)) => {
                    timed_out = false;
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                // Not expected of a child of ours: treat it as the deadline.
                Err(_) => break,
            }
        }
        if timed_out {
            // Its trap runs once the command it waits for ends; then no mercy.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let grace = Instant::now();
            while grace.elapsed() < Duration::from_secs(10) {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
        }
        let waited = child.wait();
        let status = if timed_out { None } else { waited.ok() };
        let elapsed = start.elapsed();
        let left_netns = sweep_prefix(&format!("{prefix}-"));
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        crate::note!(
            "{} ({}) in {:.2} s",
            self.describe(),
            match status {
                Some(s) => s.to_string(),
                None => format!("killed after {} s", self.timeout.as_secs()),
            },
            elapsed.as_secs_f64()
        );
        Finished {
            status,
            stdout: read(&out_path),
            stderr: read(&err_path),
            elapsed,
            left_netns,
        }
    }

    /// Runs it and requires success: panics saying what happened otherwise
    /// (status 77 is the scripts' "cannot run here", with their reason).
    pub fn run(&self, log_dir: &Path) -> Finished {
        let f = self.output(log_dir);
        let what = self.describe();
        let tail = tail(&f.stderr, 40);
        match f.status.and_then(|s| s.code()) {
            None if f.status.is_none() => panic!(
                "{what}: no end after {} s: killed, its namespaces deleted ({}); stderr:\n{tail}",
                self.timeout.as_secs(),
                f.left_netns.join(" ")
            ),
            Some(0) => {}
            Some(77) => panic!("{what}: cannot run here: {}", f.stderr.trim()),
            _ => panic!(
                "{what} failed ({}); stderr:\n{tail}",
                f.status.map_or("killed".into(), |s| s.to_string())
            ),
        }
        assert!(
            f.left_netns.is_empty(),
            "{what}: its cleanup left namespaces behind (deleted now): {}",
            f.left_netns.join(" ")
        );
        f
    }
}

/// The last `n` lines of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners() {
        assert_eq!(owner_pid("lab1234-7-c", "lab"), Some(1234));
        assert_eq!(owner_pid("lab1234-check", "lab"), Some(1234));
        assert_eq!(owner_pid("lab1234", "lab"), Some(1234));
        assert_eq!(owner_pid("labx-1", "lab"), None);
        assert_eq!(owner_pid("lab12x", "lab"), None);
        assert_eq!(owner_pid("tpl1234r5-c", "lab"), None);
        assert_eq!(owner_pid("tcp-perf-lab-99", "tcp-perf-lab-"), Some(99));
    }

    #[test]
    fn a_failing_script_says_what_it_printed() {
        let dir = std::env::temp_dir().join(format!("tcp-perf-lab-test-{}", std::process::id()));
        // `lab.sh` without arguments is a usage error, no root needed.
        let f = Script::new("lab.sh").output(&dir);
        assert_eq!(f.status.and_then(|s| s.code()), Some(1));
        assert!(f.stderr.contains("usage"), "{}", f.stderr);
        let r = std::panic::catch_unwind(|| Script::new("lab.sh").arg("--nope").run(&dir));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert!(msg.starts_with("lab.sh --nope failed"), "{msg}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_script_past_its_deadline_is_killed() {
        let dir = std::env::temp_dir().join(format!("tcp-perf-lab-test2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("sleep.sh"), "sleep 30\n").unwrap();
        let mut s = Script::new("x").timeout(Duration::from_millis(300));
        // A script outside examples/lab, by absolute path.
        s.name = dir.join("sleep.sh").to_string_lossy().into_owned();
        let t = Instant::now();
        let f = s.output(&dir.join("log"));
        assert!(f.status.is_none());
        assert!(t.elapsed() < Duration::from_secs(12), "{:?}", t.elapsed());
        let _ = std::fs::remove_dir_all(dir);
    }
}
