//! The tools under test, as the labs run them, and what the lab scripts
//! record of the kernel (`TCP_INFO`).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use serde::Deserialize;
use serde_json::Value;

/// Where the tools' binaries are: the lab crate's `lab-*` binaries, which
/// call each tool's own `main` (so the labs run exactly the tools' code).
/// Built by [`bins!`](crate::bins) in a test crate of this package, where
/// Cargo sets `CARGO_BIN_EXE_*`.
#[derive(Clone, Copy, Debug)]
pub struct Bins {
    /// `lab-firewall-check`.
    pub firewall_check: &'static str,
    /// `lab-qbss-model`.
    pub qbss_model: &'static str,
    /// `lab-qbss-router`.
    pub qbss_router: &'static str,
    /// `lab-nfsend`: the netfilter lab's random segments.
    pub nfsend: &'static str,
    /// `lab-quote8`: the probe lab's RFC 792 quoting router.
    pub quote8: &'static str,
}

/// The [`Bins`] of this package, for a test target of the lab crate.
#[macro_export]
macro_rules! bins {
    () => {
        $crate::Bins {
            firewall_check: env!("CARGO_BIN_EXE_lab-firewall-check"),
            qbss_model: env!("CARGO_BIN_EXE_lab-qbss-model"),
            qbss_router: env!("CARGO_BIN_EXE_lab-qbss-router"),
            nfsend: env!("CARGO_BIN_EXE_lab-nfsend"),
            quote8: env!("CARGO_BIN_EXE_lab-quote8"),
        }
    };
}

/// Runs the tools.
#[derive(Clone, Copy, Debug)]
pub struct Tools {
    bins: Bins,
}

impl Tools {
    /// The tools of `bins`.
    pub const fn new(bins: Bins) -> Tools {
        Tools { bins }
    }

    /// Their binaries.
    pub fn bins(&self) -> &Bins {
        &self.bins
    }

    /// `firewall-check ARGS...`, whatever its status.
    pub fn firewall_check<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> Output {
        Command::new(self.bins.firewall_check)
            .args(args)
            .output()
            .expect("run firewall-check")
    }

    /// `firewall-check ARGS... FILES...` with a JSON document on standard
    /// output and status 0 (nothing found) or 3 (findings): the document and
    /// the status. Anything else fails, with its standard error.
    pub fn firewall_check_json(&self, args: &[&str], files: &[&Path]) -> (Value, i32) {
        let out = Command::new(self.bins.firewall_check)
            .args(args)
            .args(files)
            .output()
            .expect("run firewall-check");
        let code = out.status.code().unwrap_or(-1);
        assert!(
            code == 0 || code == 3,
            "firewall-check {args:?} {files:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "firewall-check {args:?} {files:?}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        (v, code)
    }

    /// `firewall-check analyze --json ARGS CAPTURE`.
    pub fn analyze(&self, args: &[&str], capture: &Path) -> Value {
        let mut a = vec!["analyze", "--json"];
        a.extend_from_slice(args);
        self.firewall_check_json(&a, &[capture]).0
    }

    /// `firewall-check compare --json A B`: the document and the status.
    pub fn compare(&self, a: &Path, b: &Path) -> (Value, i32) {
        self.firewall_check_json(&["compare", "--json"], &[a, b])
    }
}

/// The `TCP_INFO` a lab endpoint recorded once everything it sent was
/// acknowledged (`xfer.py --info`): the kernel's own account of the
/// connection.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct TcpInfo {
    /// `tcpi_snd_wscale`: the shift it reads its peer's window fields with.
    pub snd_wscale: u64,
    /// `tcpi_rcv_wscale`: the shift it means its own window fields with.
    pub rcv_wscale: u64,
    /// `tcpi_busy_time`, µs.
    pub busy_us: u64,
    /// `tcpi_rwnd_limited`, µs.
    pub rwnd_limited_us: u64,
    /// `tcpi_sndbuf_limited`, µs.
    pub sndbuf_limited_us: u64,
    /// `tcpi_snd_mss`.
    pub snd_mss: u64,
    /// `tcpi_rtt`, µs.
    pub rtt_us: u64,
    /// `tcpi_min_rtt`, µs.
    pub min_rtt_us: u64,
    /// `tcpi_snd_cwnd`, segments.
    pub snd_cwnd: u64,
    /// `tcpi_total_retrans`.
    pub total_retrans: u64,
    /// `tcpi_bytes_acked`.
    pub bytes_acked: u64,
}

impl TcpInfo {
    /// Reads `path`; panics naming it when it is missing or not this shape.
    pub fn read(path: &Path) -> TcpInfo {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("TCP_INFO {}: {e}", path.display()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("TCP_INFO {}: {e}: {text}", path.display()))
    }

    /// The share of busy time the kernel counted limited by the receive
    /// window (`tcpi_rwnd_limited / tcpi_busy_time`).
    pub fn rwnd_share(&self) -> f64 {
        self.rwnd_limited_us as f64 / self.busy_us.max(1) as f64
    }

    /// The share of busy time the kernel counted limited by the send buffer.
    pub fn sndbuf_share(&self) -> f64 {
        self.sndbuf_limited_us as f64 / self.busy_us.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_as_xfer_py_writes_it() {
        let text = r#"{"unacked": 0, "snd_mss": 1448, "rtt_us": 468, "snd_cwnd": 84, "total_retrans": 1, "bytes_acked": 150001, "notsent_bytes": 0, "min_rtt_us": 8, "busy_us": 12000, "rwnd_limited_us": 3000, "sndbuf_limited_us": 0, "snd_wscale": 10, "rcv_wscale": 7}"#;
        let i: TcpInfo = serde_json::from_str(text).unwrap();
        assert_eq!((i.snd_wscale, i.rcv_wscale), (10, 7));
        assert_eq!(i.rwnd_share(), 0.25);
        assert_eq!(i.sndbuf_share(), 0.0);
    }
}
