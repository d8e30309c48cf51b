//! `-i IFACE [-f BPF] [--count N] [--duration T] [-w FILE]`: reading live
//! traffic from a network interface instead of a capture file, for `dump`,
//! `analyze` and `compare`.
//!
//! The capture is `capture::live::LiveCapture` (libpcap, the `live` build
//! feature; a build without it refuses `-i` as a usage error). Its records
//! go down the same path as a file's ([`capture::RecordSource`]); with `-w`
//! each is also written to a pcap file as it is read ([`capture::Tee`]).
//! Ctrl-C ends the capture as `--count` and `--duration` do: what was read
//! is reported, with the packets the kernel dropped ([`capture::CaptureLoss`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use capture::writer::WriteError;
use capture::{CaptureError, CaptureLoss, LiveError, Next, Record, RecordSource};

use crate::CreateError;

/// Why a live capture could not run as asked, by stage: the command line,
/// opening the interface or the `-w` file, reading, finishing the file.
#[derive(Debug, thiserror::Error)]
pub enum LiveFailure {
    /// libpcap's refusal, or a build without live capture.
    #[error(transparent)]
    Capture(#[from] LiveError),
    /// `-i` given more than once where one interface is read.
    #[error("-i takes one interface here")]
    OneInterface,
    /// `compare -i` without two interfaces.
    #[error("-i must be given {0} times (one interface per capture)")]
    Interfaces(usize),
    /// `-w` not once per interface.
    #[error("-w must be given once per interface ({0})")]
    Files(usize),
    /// A live option without `-i`.
    #[error("{0} needs -i IFACE (--interface): it applies to live captures only")]
    NeedsInterface(&'static str),
    /// The `-w` file (or compare's temporary file) cannot be created.
    #[error(transparent)]
    Create(#[from] CreateError),
    /// The `-w` file could not be finished.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: capture::writer::WriteError,
    },
    /// Reading an interface failed (compare, which reads both first).
    #[error("{interface}: {source}")]
    Read {
        /// The interface.
        interface: String,
        /// Why.
        #[source]
        source: CaptureError,
    },
    /// A capture thread panicked (compare).
    #[error("a capture thread ended without a result")]
    Thread,
}

impl LiveFailure {
    /// True for a command line that asks for something impossible (exit
    /// status 2): `-i` in a build without live capture, a filter libpcap
    /// cannot compile, the live options misused. Opening an interface or a
    /// file, reading, writing: 1.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            LiveFailure::Capture(LiveError::NotBuilt | LiveError::Filter { .. })
                | LiveFailure::OneInterface
                | LiveFailure::Interfaces(_)
                | LiveFailure::Files(_)
                | LiveFailure::NeedsInterface(_)
        )
    }
}

/// The live-capture arguments (`compare` takes `-i` and `-w` twice, one
/// for each side of the middlebox).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LiveArgs {
    /// Capture live from this network interface instead of reading a file
    /// (root or CAP_NET_RAW; a build with the `live` feature). compare: give
    /// it twice, one interface on each side of the middlebox.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Vec<String>,
    /// With -i: a capture filter in libpcap's language, as tcpdump takes
    /// it (`tcp port 5201`).
    #[arg(short = 'f', long = "filter", value_name = "BPF")]
    pub filter: Option<String>,
    /// With -i: stop after N packets (on each interface).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// With -i: stop after this long (`30s`, `500ms`); otherwise at Ctrl-C.
    #[arg(long, value_name = "T", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// With -i: also write every packet captured to this pcap file
    /// (compare: once per interface, in the same order).
    #[arg(
        short = 'w',
        long = "write",
        value_name = "FILE",
        requires = "interface"
    )]
    pub write: Vec<PathBuf>,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = bdp::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("the duration must be above zero".to_string());
    }
    Ok(d)
}

impl LiveArgs {
    /// True when `-i` was given.
    pub fn is_live(&self) -> bool {
        !self.interface.is_empty()
    }

    /// Without `-i`: the live options are a usage error (they would be
    /// silently ignored for a file).
    pub fn check_file(&self) -> Result<(), LiveFailure> {
        let given = [
            (self.filter.is_some(), "-f"),
            (self.count.is_some(), "--count"),
            (self.duration.is_some(), "--duration"),
            (!self.write.is_empty(), "-w"),
        ];
        match given.iter().find(|(set, _)| *set) {
            Some((_, name)) => Err(LiveFailure::NeedsInterface(name)),
            None => Ok(()),
        }
    }

    /// Checks that `-i` (and `-w`) were given `n` times at most once each
    /// per interface, and that this build captures.
    pub fn check(&self, n: usize) -> Result<(), LiveFailure> {
        if !cfg!(feature = "live") {
            return Err(LiveError::NotBuilt.into());
        }
        if self.interface.len() != n {
            return Err(if n == 1 {
                LiveFailure::OneInterface
            } else {
                LiveFailure::Interfaces(n)
            });
        }
        if self.write.len() > n || (n > 1 && !self.write.is_empty() && self.write.len() != n) {
            return Err(LiveFailure::Files(n));
        }
        Ok(())
    }
}

/// The flag a Ctrl-C (SIGINT) sets: every live capture of the
/// process stops on it, and what was read is reported. A second one ends
/// the process at once (status 130). The handler is installed once; when
/// it cannot be (another handler is in place), Ctrl-C ends the process as
/// usual.
pub fn interrupted() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let on_signal = Arc::clone(&flag);
        let _ = ctrlc::set_handler(move || {
            if on_signal.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
        });
        flag
    })
    .clone()
}

/// How a live capture ended and what it lost: for the last line of the
/// report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEnd {
    /// The interface.
    pub interface: String,
    /// Packets read.
    pub frames: u64,
    /// `count`, `duration`, `interrupted` (Ctrl-C), or `error`.
    pub reason: &'static str,
    /// The kernel's counts; `None` when libpcap could not give them.
    pub loss: Option<CaptureLoss>,
}

impl LiveEnd {
    /// One line for people: the interface, the packets read, why it
    /// stopped, and the capture loss.
    pub fn text(&self) -> String {
        let loss = match self.loss {
            Some(l) => format!(
                "capture loss: {} packets dropped by the kernel, {} by the interface ({} received)",
                l.kernel_drops, l.interface_drops, l.received
            ),
            None => "capture loss: unknown (libpcap gave no statistics)".to_string(),
        };
        format!(
            "live capture on {}: {} packets, ended by {}; {loss}",
            self.interface,
            self.frames,
            match self.reason {
                "count" => "--count",
                "duration" => "--duration",
                "interrupted" => "Ctrl-C",
                other => other,
            }
        )
    }

    /// The JSON object: `interface`, `frames`, `reason`, `capture_loss`
    /// (`received`, `kernel_drops`, `interface_drops`, or `null`).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self.line(false, None, None, None)).unwrap_or_default()
    }

    /// The last JSON line of a live `dump` (`connections` `None`) or
    /// `analyze`: `{"type": "end", ...}` with [`LiveEnd::json`]'s fields,
    /// and last the capture's `summary` (segments by encapsulation, frames
    /// skipped by reason: `output::tunnel::json_summary`) when there is one.
    pub fn end_line(
        &self,
        schema_version: Option<u32>,
        connections: Option<usize>,
        summary: Option<serde_json::Value>,
    ) -> String {
        serde_json::to_string(&self.line(true, schema_version, connections, summary))
            .unwrap_or_default()
    }

    fn line(
        &self,
        end: bool,
        schema_version: Option<u32>,
        connections: Option<usize>,
        summary: Option<serde_json::Value>,
    ) -> EndLine<'_> {
        EndLine {
            schema_version,
            kind: end.then_some("end"),
            interface: &self.interface,
            frames: self.frames,
            reason: self.reason,
            connections,
            capture_loss: self.loss.map(|l| Loss {
                received: l.received,
                kernel_drops: l.kernel_drops,
                interface_drops: l.interface_drops,
            }),
            summary,
        }
    }
}

/// [`LiveEnd`] as JSON, fields in this order.
#[derive(serde::Serialize)]
struct EndLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<u32>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    interface: &'a str,
    frames: u64,
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    connections: Option<usize>,
    capture_loss: Option<Loss>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<serde_json::Value>,
}

/// The kernel's counts in JSON.
#[derive(serde::Serialize)]
struct Loss {
    received: u64,
    kernel_drops: u64,
    interface_drops: u64,
}

/// A live capture being read: the interface, and the `-w` file its packets
/// are also written to.
pub struct LiveSource {
    inner: imp::Source,
    interface: String,
    write: Option<PathBuf>,
}

impl LiveSource {
    /// Opens capture number `k` of the command line (`-i`, `-w`), stopping
    /// when `stop` is set.
    pub fn open(args: &LiveArgs, k: usize, stop: Arc<AtomicBool>) -> Result<Self, LiveFailure> {
        let Some(interface) = args.interface.get(k).cloned() else {
            return Err(LiveFailure::Interfaces(k + 1));
        };
        let write = args.write.get(k).cloned();
        let file = match &write {
            None => None,
            Some(path) => Some(BufWriter::new(crate::create_output(path)?)),
        };
        let inner = imp::open(args, &interface, stop, file)?;
        // As tcpdump says it: the capture is open, packets from now on are seen.
        eprintln!(
            "firewall-check: listening on {interface}, link type {}",
            imp::linktype(&inner)
        );
        Ok(LiveSource {
            inner,
            interface,
            write,
        })
    }

    /// The interface.
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// Ends the capture: writes out the `-w` file and says how it ended
    /// (`failed`: reading stopped on an error).
    pub fn finish(self, failed: bool) -> Result<LiveEnd, LiveFailure> {
        let write = self.write;
        let (frames, reason, loss) =
            imp::finish(self.inner, failed).map_err(|source| LiveFailure::Write {
                path: write.unwrap_or_default(),
                source,
            })?;
        Ok(LiveEnd {
            interface: self.interface,
            frames,
            reason,
            loss,
        })
    }
}

impl RecordSource for LiveSource {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        imp::next_record(&mut self.inner)
    }

    fn next_within(&mut self, wait: Duration) -> Result<Next<'_>, CaptureError> {
        imp::next_within(&mut self.inner, wait)
    }

    fn has_buffered_record(&self) -> bool {
        false
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        imp::loss(&mut self.inner)
    }
}

/// Flushes a `-w` file.
fn flush(w: BufWriter<File>) -> std::io::Result<()> {
    w.into_inner().map_err(|e| e.into_error())?.flush()
}

#[cfg(feature = "live")]
mod imp {
    use super::*;
    use capture::live::{EndReason, LiveCapture, LiveOptions};
    use capture::Tee;

    /// The capture, with or without its `-w` file.
    pub enum Source {
        Plain(LiveCapture),
        Kept(Box<Tee<LiveCapture, BufWriter<File>>>),
    }

    pub fn open(
        args: &LiveArgs,
        interface: &str,
        stop: Arc<AtomicBool>,
        file: Option<BufWriter<File>>,
    ) -> Result<Source, LiveError> {
        let cap = LiveCapture::open(LiveOptions {
            interface: interface.to_string(),
            filter: args.filter.clone(),
            snaplen: 0,
            promiscuous: false,
            count: args.count,
            duration: args.duration,
            stop: Some(stop),
        })?;
        Ok(match file {
            None => Source::Plain(cap),
            Some(f) => {
                let linktype = cap.linktype();
                Source::Kept(Box::new(Tee::new(cap, f, linktype)))
            }
        })
    }

    pub fn linktype(s: &Source) -> u32 {
        match s {
            Source::Plain(c) => c.linktype(),
            Source::Kept(t) => t.inner().linktype(),
        }
    }

    pub fn next_record(s: &mut Source) -> Result<Option<Record<'_>>, CaptureError> {
        match s {
            Source::Plain(c) => c.next_record(),
            Source::Kept(t) => t.next_record(),
        }
    }

    pub fn next_within(s: &mut Source, wait: Duration) -> Result<Next<'_>, CaptureError> {
        match s {
            Source::Plain(c) => c.next_within(wait),
            Source::Kept(t) => t.next_within(wait),
        }
    }

    pub fn loss(s: &mut Source) -> Option<CaptureLoss> {
        match s {
            Source::Plain(c) => c.loss(),
            Source::Kept(t) => t.loss(),
        }
    }

    fn reason(c: &LiveCapture, failed: bool) -> &'static str {
        match c.end_reason() {
            _ if failed => "error",
            Some(EndReason::Count) => "count",
            Some(EndReason::Duration) => "duration",
            Some(EndReason::Interrupted) | None => "interrupted",
        }
    }

    pub fn finish(
        s: Source,
        failed: bool,
    ) -> Result<(u64, &'static str, Option<CaptureLoss>), WriteError> {
        match s {
            Source::Plain(mut c) => Ok((c.frames(), reason(&c, failed), c.loss())),
            Source::Kept(mut t) => {
                let c = t.inner_mut();
                let (frames, why, loss) = (c.frames(), reason(c, failed), c.loss());
                let file = t.finish()?;
                flush(file)?;
                Ok((frames, why, loss))
            }
        }
    }
}

#[cfg(not(feature = "live"))]
mod imp {
    use super::*;

    /// No live capture in this build: no value of this type exists.
    pub enum Source {}

    pub fn open(
        _: &LiveArgs,
        _: &str,
        _: Arc<AtomicBool>,
        file: Option<BufWriter<File>>,
    ) -> Result<Source, LiveError> {
        if let Some(f) = file {
            let _ = flush(f);
        }
        Err(LiveError::NotBuilt)
    }

    pub fn linktype(s: &Source) -> u32 {
        match *s {}
    }

    pub fn next_record(s: &mut Source) -> Result<Option<Record<'_>>, CaptureError> {
        match *s {}
    }

    pub fn next_within(s: &mut Source, _: Duration) -> Result<Next<'_>, CaptureError> {
        match *s {}
    }

    pub fn loss(s: &mut Source) -> Option<CaptureLoss> {
        match *s {}
    }

    pub fn finish(
        s: Source,
        _: bool,
    ) -> Result<(u64, &'static str, Option<CaptureLoss>), WriteError> {
        match s {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_line_names_the_reason_and_the_drops() {
        let end = LiveEnd {
            interface: "veth0".into(),
            frames: 12,
            reason: "duration",
            loss: Some(CaptureLoss {
                received: 14,
                kernel_drops: 2,
                interface_drops: 0,
            }),
        };
        assert_eq!(
            end.text(),
            "live capture on veth0: 12 packets, ended by --duration; capture loss: 2 packets dropped by the kernel, 0 by the interface (14 received)"
        );
        let j = end.json();
        assert_eq!(j["capture_loss"]["kernel_drops"], 2);
        assert_eq!(j["reason"], "duration");
        let unknown = LiveEnd { loss: None, ..end };
        assert!(unknown.json()["capture_loss"].is_null());
        assert!(unknown.text().contains("unknown"));
    }

    #[test]
    fn check_counts_interfaces_and_files() {
        let args = |i: &[&str], w: &[&str]| LiveArgs {
            interface: i.iter().map(|s| s.to_string()).collect(),
            write: w.iter().map(PathBuf::from).collect(),
            ..LiveArgs::default()
        };
        let usage = |r: Result<(), LiveFailure>| r.is_err_and(|e| e.is_usage());
        if cfg!(feature = "live") {
            assert!(args(&["a"], &["x"]).check(1).is_ok());
            assert!(args(&["a", "b"], &[]).check(2).is_ok());
            assert!(usage(args(&["a", "b"], &[]).check(1)));
            assert!(usage(args(&["a", "b"], &["x"]).check(2)));
        } else {
            let e = args(&["a"], &[]).check(1).unwrap_err();
            assert!(e.to_string().contains("--features live"), "{e:?}");
            assert!(usage(Err(e)));
        }
    }
}
