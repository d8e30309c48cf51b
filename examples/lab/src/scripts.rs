//! The lab scripts as a row runs them: each in a fresh directory of the
//! row's, with what it leaves (captures, the endpoints' `TCP_INFO`, the
//! QBSS lab's figures) as typed results.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::run::Script;
use crate::sched::Ctx;
use crate::tools::{TcpInfo, Tools};

/// One `lab.sh CASE DIR ARGS...` run: a real TCP transfer through the
/// case's middlebox rules, captured on both sides.
#[derive(Clone, Debug)]
pub struct CaseRun {
    /// Its directory.
    pub dir: PathBuf,
    /// The case.
    pub case: String,
    /// The script's arguments after the directory.
    pub args: Vec<String>,
    tools: Tools,
}

impl CaseRun {
    /// The client side's capture (`inside.pcap`).
    pub fn inside(&self) -> PathBuf {
        self.dir.join("inside.pcap")
    }

    /// The server side's capture (`outside.pcap`).
    pub fn outside(&self) -> PathBuf {
        self.dir.join("outside.pcap")
    }

    /// The capture of `side` (`"inside"` or `"outside"`).
    pub fn capture(&self, side: &str) -> PathBuf {
        self.dir.join(format!("{side}.pcap"))
    }

    /// A file of the run.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The `TCP_INFO` of `who` (`"client"` or `"server"`), recorded once
    /// everything it sent was acknowledged.
    pub fn tcpinfo(&self, who: &str) -> TcpInfo {
        TcpInfo::read(&self.dir.join(format!("{who}.tcpinfo.json")))
    }

    /// The tools under test.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }
}

/// One `qbss-lab.sh PRESET DIR --scale F` run: the model's figures and the
/// measured ones.
#[derive(Clone, Debug)]
pub struct QbssRun {
    /// Its directory.
    pub dir: PathBuf,
    /// `qbss-model --json --scale F` of the scenario.
    pub model: Value,
    /// What the receivers measured and the router counted, in the model's shape.
    pub measured: Value,
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Ctx {
    /// Runs `lab.sh CASE DIR ARGS...` (deadline 120 s) in a fresh directory.
    pub fn lab_sh(&self, case: &str, args: &[&str]) -> CaseRun {
        self.transfer_script("lab.sh", case, args)
    }

    /// Runs `encap-lab.sh CASE DIR ARGS...` (deadline 120 s) in a fresh
    /// directory: its captures are `inside.pcap` (bare, the client's link)
    /// and `underlay.pcap` (encapsulated, the first router's underlay).
    pub fn encap_lab(&self, case: &str, args: &[&str]) -> CaseRun {
        self.transfer_script("encap-lab.sh", case, args)
    }

    /// Runs a transfer script (`lab.sh`, `encap-lab.sh`: `SCRIPT CASE DIR
    /// ARGS...`) in a fresh directory and returns its run.
    fn transfer_script(&self, script: &str, case: &str, args: &[&str]) -> CaseRun {
        let dir = self.fresh_dir(case);
        Script::new(script).arg(case).arg(&dir).args(args).run(&dir);
        CaseRun {
            dir,
            case: case.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            tools: *self.tools(),
        }
    }

    /// Runs `qbss-lab.sh PRESET DIR --scale F` (deadline 150 s) with the
    /// lab's `qbss-model` and `qbss-router`.
    pub fn qbss_lab(&self, preset: &str, scale: f64) -> QbssRun {
        let dir = self.fresh_dir(preset);
        let bins = self.tools().bins();
        let f = Script::new("qbss-lab.sh")
            .arg(preset)
            .arg(&dir)
            .arg("--scale")
            .arg(scale.to_string())
            .env("QBSS_MODEL", bins.qbss_model)
            .env("QBSS_ROUTER", bins.qbss_router)
            .timeout(Duration::from_secs(150))
            .output(&dir);
        if f.status.is_none_or(|s| !s.success()) || !f.left_netns.is_empty() {
            panic!(
                "qbss-lab.sh {preset} failed ({:?}); left namespaces: {:?}\n{}\n{}\nrouter: {}",
                f.status,
                f.left_netns,
                f.stdout,
                f.stderr,
                std::fs::read_to_string(dir.join("router.txt")).unwrap_or_default()
            );
        }
        QbssRun {
            model: read_json(&dir.join("model.json")),
            measured: read_json(&dir.join("measured.json")),
            dir,
        }
    }

    /// Runs `netfilter-lab.sh DIR COUNT SEED ARGS...` (deadline 120 s);
    /// returns its directory (`inside.pcap`, `outside.pcap`).
    pub fn netfilter_lab(&self, tag: &str, count: u32, seed: u64, args: &[&str]) -> PathBuf {
        let dir = self.fresh_dir(tag);
        Script::new("netfilter-lab.sh")
            .env("LAB_NFSEND", self.tools().bins().nfsend)
            .arg(&dir)
            .arg(count.to_string())
            .arg(seed.to_string())
            .args(args)
            .run(&dir);
        dir
    }
}
