//! What a lab needs of the machine, checked once per process: each [`Req`]
//! is tried for real (a scratch network namespace for the netfilter targets,
//! `tc`, nftables and congestion controls), and a missing one is named with
//! how to get it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::run::{Netns, NetnsError};

/// One requirement the machine does not meet: what was tried, and how to
/// get it.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Unmet {
    /// Not running as root.
    #[error("root: the labs create network namespaces and netfilter rules (effective uid {})", uid.map_or("unknown".to_string(), |u| u.to_string()))]
    Root {
        /// The effective uid, when `/proc` tells it.
        uid: Option<u32>,
    },
    /// A program that is not installed.
    #[error("the program {tool} (not on PATH; Debian package {package})")]
    Tool {
        /// The program.
        tool: &'static str,
        /// The Debian package that has it.
        package: &'static str,
    },
    /// No scratch namespace to try the rest in.
    #[error(transparent)]
    Netns(#[from] NetnsError),
    /// iptables rules the scripts install that the kernel refused.
    #[error("iptables targets or matches the labs use (kernel modules xt_*/ip6t_*, or the nft backend's support for them): these rules failed in a scratch namespace: {}", failed.join("; "))]
    Iptables {
        /// Each refused rule, as a command line.
        failed: Vec<String>,
    },
    /// `nft add table`/`add chain` failed.
    #[error("nftables (nft add table/chain failed in a scratch namespace: kernel nf_tables)")]
    Nft,
    /// `tc qdisc add ... tbf` failed.
    #[error("the tbf qdisc (tc qdisc add ... tbf failed: kernel sch_tbf)")]
    Tbf,
    /// `ip link add ... type vxlan` failed.
    #[error("VXLAN devices (ip link add ... type vxlan failed in a scratch namespace: kernel vxlan module)")]
    Vxlan,
    /// `/dev/net/tun` does not open.
    #[error("TUN devices (/dev/net/tun: {0}; kernel tun module)")]
    Tun(#[source] Arc<io::Error>),
    /// `TCP_CONGESTION` refused a congestion control.
    #[error("TCP congestion control {0} (TCP_CONGESTION refused it: kernel module tcp_{0})")]
    Congestion(&'static str),
}

/// Every requirement of a [`check`] the machine does not meet; shown one a
/// line, each after `  - `.
#[derive(Clone, Debug)]
pub struct Missing(pub Vec<Unmet>);

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, u) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n  - ")?;
            }
            write!(f, "{u}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Missing {}

/// One thing a lab needs of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Req {
    /// Effective uid 0: namespaces, netfilter, raw sockets.
    Root,
    /// A program on `PATH` (or in `/usr/sbin`, `/sbin`).
    Tool(&'static str),
    /// `ip netns add` works.
    Netns,
    /// The iptables and ip6tables targets and matches `lab.sh` and
    /// `netfilter-lab.sh` use (TCPOPTSTRIP, TCPMSS, DSCP, TOS, NFQUEUE,
    /// SYNPROXY, CT, DNAT/SNAT, conntrack, statistic, length).
    Iptables,
    /// nftables tables in a namespace (`nft add table`).
    Nft,
    /// The `tbf` qdisc (`tc qdisc add ... tbf`).
    Tbf,
    /// VXLAN devices (`ip link add ... type vxlan`).
    Vxlan,
    /// TUN devices (`/dev/net/tun` opens read-write).
    Tun,
    /// A TCP congestion control a socket can ask for (`TCP_CONGESTION`;
    /// root may autoload its module).
    Congestion(&'static str),
}

impl core::fmt::Display for Req {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Req::Root => f.write_str("root"),
            Req::Tool(t) => write!(f, "{t}"),
            Req::Netns => f.write_str("network namespaces"),
            Req::Iptables => f.write_str("iptables targets"),
            Req::Nft => f.write_str("nftables"),
            Req::Tbf => f.write_str("tc tbf"),
            Req::Vxlan => f.write_str("VXLAN devices"),
            Req::Tun => f.write_str("TUN devices"),
            Req::Congestion(cc) => write!(f, "congestion control {cc}"),
        }
    }
}

/// What the firewall lab (`lab.sh`) needs for every case.
pub const LAB_SH: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("ip6tables"),
    Req::Tool("tcpdump"),
    Req::Tool("python3"),
    Req::Netns,
    Req::Iptables,
];

/// What the netfilter lab (`netfilter-lab.sh`) needs.
pub const NETFILTER_LAB: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("tcpdump"),
    Req::Netns,
    Req::Iptables,
];

/// What the encapsulation lab (`encap-lab.sh`) needs.
pub const ENCAP_LAB: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("ip6tables"),
    Req::Tool("tcpdump"),
    Req::Tool("ethtool"),
    Req::Tool("python3"),
    Req::Netns,
    Req::Iptables,
    Req::Vxlan,
];

/// What the QBSS lab (`qbss-lab.sh`) needs.
pub const QBSS_LAB: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("python3"),
    Req::Netns,
    Req::Tun,
];

/// What the probe lab (`probe-lab.sh`) needs.
pub const PROBE_LAB: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("ip6tables"),
    Req::Tool("nft"),
    Req::Tool("python3"),
    Req::Tool("setpriv"),
    Req::Tool("conntrack"),
    Req::Netns,
    Req::Iptables,
    Req::Nft,
];

/// The requirements of a lab script by its name (for callers that know only
/// the script, as `probe_lab.rs` does through `lab_support::ready`).
pub fn for_script(script: &str) -> &'static [Req] {
    match script {
        "lab.sh" => LAB_SH,
        "netfilter-lab.sh" => NETFILTER_LAB,
        "encap-lab.sh" => ENCAP_LAB,
        "qbss-lab.sh" => QBSS_LAB,
        "probe-lab.sh" => PROBE_LAB,
        _ => &[Req::Root, Req::Tool("ip"), Req::Netns],
    }
}

/// The Debian package that has `tool`.
fn package_of(tool: &'static str) -> &'static str {
    match tool {
        "ip" | "tc" => "iproute2",
        "iptables" | "ip6tables" => "iptables",
        "nft" => "nftables",
        "setpriv" | "chrt" => "util-linux",
        other => other,
    }
}

/// `tool` on `PATH`, or in the sbin directories a non-root `PATH` may lack.
pub fn find_tool(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// The effective uid, from `/proc/self/status`.
pub fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// Checked results, kept for the process.
static CHECKED: Mutex<Vec<(Req, Result<(), Unmet>)>> = Mutex::new(Vec::new());

/// Checks `reqs`; `Err` lists every one that is missing, each with what was
/// tried and how to get it. Results are kept for the process.
pub fn check(reqs: &[Req]) -> Result<(), Missing> {
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    let mut problems = Vec::new();
    let mut ns: Scratch = None;
    // Without root the namespace checks would fail for that reason alone:
    // say it once.
    let root_needed = reqs.iter().any(|&r| r == Req::Root || needs_root(r));
    let root_ok = !root_needed
        || cached(&mut checked, &mut ns, Req::Root)
            .map_err(|e| problems.push(e))
            .is_ok();
    for &r in reqs {
        if r == Req::Root || (needs_root(r) && !root_ok) {
            continue;
        }
        if let Err(e) = cached(&mut checked, &mut ns, r) {
            problems.push(e);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Missing(problems))
    }
}

fn needs_root(r: Req) -> bool {
    matches!(
        r,
        Req::Netns
            | Req::Iptables
            | Req::Nft
            | Req::Tbf
            | Req::Vxlan
            | Req::Tun
            | Req::Congestion(_)
    )
}

fn cached(
    checked: &mut Vec<(Req, Result<(), Unmet>)>,
    ns: &mut Scratch,
    r: Req,
) -> Result<(), Unmet> {
    if let Some((_, res)) = checked.iter().find(|(q, _)| *q == r) {
        return res.clone();
    }
    let res = check_one(r, ns);
    checked.push((r, res.clone()));
    res
}

fn check_one(r: Req, scratch_ns: &mut Scratch) -> Result<(), Unmet> {
    match r {
        Req::Root => match effective_uid() {
            Some(0) => Ok(()),
            uid => Err(Unmet::Root { uid }),
        },
        Req::Tool(t) => find_tool(t).map(|_| ()).ok_or(Unmet::Tool {
            tool: t,
            package: package_of(t),
        }),
        Req::Netns => scratch(scratch_ns).map(|_| ()),
        Req::Iptables => {
            let ns = scratch(scratch_ns)?;
            let failed: Vec<String> = IPTABLES_PROBES
                .iter()
                .filter(|(cmd, args)| !in_ns(&ns, cmd, args))
                .map(|(cmd, args)| format!("{cmd} {}", args.join(" ")))
                .collect();
            if failed.is_empty() {
                Ok(())
            } else {
                Err(Unmet::Iptables { failed })
            }
        }
        Req::Nft => {
            let ns = scratch(scratch_ns)?;
            if find_tool("nft").is_none() {
                return Err(Unmet::Tool {
                    tool: "nft",
                    package: package_of("nft"),
                });
            }
            let ok = in_ns(&ns, "nft", &["add", "table", "inet", "labcheck"])
                && in_ns(
                    &ns,
                    "nft",
                    &[
                        "add",
                        "chain",
                        "inet",
                        "labcheck",
                        "labfwd",
                        "{ type filter hook forward priority 0 ; }",
                    ],
                );
            let _ = in_ns(&ns, "nft", &["delete", "table", "inet", "labcheck"]);
            ok.then_some(()).ok_or(Unmet::Nft)
        }
        Req::Tbf => {
            let ns = scratch(scratch_ns)?;
            let ok = in_ns(
                &ns,
                "tc",
                &[
                    "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1mbit", "burst", "32kb",
                    "latency", "50ms",
                ],
            );
            let _ = in_ns(&ns, "tc", &["qdisc", "del", "dev", "lo", "root"]);
            ok.then_some(()).ok_or(Unmet::Tbf)
        }
        Req::Vxlan => {
            let ns = scratch(scratch_ns)?;
            let ok = in_ns(
                &ns,
                "ip",
                &[
                    "link",
                    "add",
                    "labvx",
                    "type",
                    "vxlan",
                    "id",
                    "1",
                    "local",
                    "198.18.32.1",
                    "remote",
                    "198.18.32.2",
                    "dstport",
                    "4789",
                ],
            );
            let _ = in_ns(&ns, "ip", &["link", "del", "labvx"]);
            ok.then_some(()).ok_or(Unmet::Vxlan)
        }
        Req::Tun => std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/net/tun")
            .map(|_| ())
            .map_err(|e| Unmet::Tun(Arc::new(e))),
        Req::Congestion(cc) => {
            let ns = scratch(scratch_ns)?;
            let code = format!(
                "import socket; s = socket.socket(); s.setsockopt(socket.IPPROTO_TCP, 13, b'{cc}')"
            );
            in_ns(&ns, "python3", &["-c", &code])
                .then_some(())
                .ok_or(Unmet::Congestion(cc))
        }
    }
}

/// The rules the lab scripts install, tried once in a scratch namespace.
const IPTABLES_PROBES: &[(&str, &[&str])] = &[
    (
        "iptables",
        &[
            "-t",
            "mangle",
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "-j",
            "TCPOPTSTRIP",
            "--strip-options",
            "wscale",
        ],
    ),
    (
        "iptables",
        &[
            "-t",
            "mangle",
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "--tcp-flags",
            "SYN,RST",
            "SYN",
            "-j",
            "TCPMSS",
            "--set-mss",
            "1200",
        ],
    ),
    (
        "iptables",
        &[
            "-t",
            "mangle",
            "-A",
            "FORWARD",
            "-j",
            "DSCP",
            "--set-dscp",
            "0",
        ],
    ),
    (
        "iptables",
        &[
            "-t",
            "mangle",
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "-j",
            "TOS",
            "--and-tos",
            "0xfc",
        ],
    ),
    (
        "iptables",
        &[
            "-t",
            "mangle",
            "-A",
            "POSTROUTING",
            "-p",
            "tcp",
            "-j",
            "NFQUEUE",
            "--queue-num",
            "7",
        ],
    ),
    (
        "iptables",
        &[
            "-t",
            "raw",
            "-A",
            "PREROUTING",
            "-p",
            "tcp",
            "--syn",
            "-j",
            "CT",
            "--notrack",
        ],
    ),
    (
        "iptables",
        &[
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "-m",
            "conntrack",
            "--ctstate",
            "INVALID,UNTRACKED",
            "-j",
            "SYNPROXY",
            "--sack-perm",
            "--timestamp",
            "--wscale",
            "7",
            "--mss",
            "1460",
        ],
    ),
    (
        "iptables",
        &[
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "-m",
            "length",
            "--length",
            "100:65535",
            "-m",
            "statistic",
            "--mode",
            "nth",
            "--every",
            "25",
            "--packet",
            "12",
            "-j",
            "DROP",
        ],
    ),
    (
        "iptables",
        &[
            "-t",
            "nat",
            "-A",
            "PREROUTING",
            "-p",
            "tcp",
            "-d",
            "198.19.0.80",
            "--dport",
            "80",
            "-j",
            "DNAT",
            "--to-destination",
            "198.18.2.2:5201",
        ],
    ),
    (
        "ip6tables",
        &[
            "-t",
            "mangle",
            "-A",
            "FORWARD",
            "-p",
            "tcp",
            "-j",
            "TCPOPTSTRIP",
            "--strip-options",
            "wscale",
        ],
    ),
    (
        "ip6tables",
        &[
            "-t",
            "mangle",
            "-A",
            "FORWARD",
            "-j",
            "DSCP",
            "--set-dscp",
            "0",
        ],
    ),
    (
        "ip6tables",
        &[
            "-t",
            "nat",
            "-A",
            "POSTROUTING",
            "-p",
            "tcp",
            "-j",
            "SNAT",
            "--to-source",
            "[2001:db8:2::1]:40000-40999",
        ],
    ),
];

/// The scratch namespace of one [`check`] call (deleted when it returns).
type Scratch = Option<Result<Netns, NetnsError>>;

fn scratch(s: &mut Scratch) -> Result<String, Unmet> {
    s.get_or_insert_with(|| Netns::create("check"))
        .as_ref()
        .map(|n| n.name().to_string())
        .map_err(|e| Unmet::Netns(e.clone()))
}

fn in_ns(ns: &str, cmd: &str, args: &[&str]) -> bool {
    let Some(ip) = find_tool("ip") else {
        return false;
    };
    let prog = find_tool(cmd).unwrap_or_else(|| Path::new(cmd).to_path_buf());
    Command::new(ip)
        .args(["netns", "exec", ns])
        .arg(prog)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_names_its_package() {
        let e = check_one(Req::Tool("no-such-tool-xyz"), &mut None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the program no-such-tool-xyz (not on PATH; Debian package no-such-tool-xyz)"
        );
        assert!(check_one(Req::Tool("sh"), &mut None).is_ok());
        assert!(package_of("nft") == "nftables" && package_of("ip6tables") == "iptables");
    }

    #[test]
    fn every_script_has_its_requirements() {
        for s in ["lab.sh", "netfilter-lab.sh", "qbss-lab.sh", "probe-lab.sh"] {
            assert!(for_script(s).contains(&Req::Root), "{s}");
            assert!(crate::run::script_path(s).is_file(), "{s}");
        }
    }

    #[test]
    fn without_root_the_namespace_checks_say_root_once() {
        if effective_uid() == Some(0) {
            return;
        }
        let e = check(&[Req::Root, Req::Netns, Req::Iptables, Req::Tun]).unwrap_err();
        assert_eq!(e.0.len(), 1, "{e:?}");
        assert!(matches!(e.0[0], Unmet::Root { .. }), "{e:?}");
        assert!(e.to_string().starts_with("root"), "{e}");
    }
}
