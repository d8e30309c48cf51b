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

use capture::{CaptureError, CaptureLoss, LiveError, Next, Record, RecordSource};

use crate::Failure;

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
    pub fn check_file(&self) -> Result<(), Failure> {
        let given = [
            (self.filter.is_some(), "-f"),
            (self.count.is_some(), "--count"),
            (self.duration.is_some(), "--duration"),
            (!self.write.is_empty(), "-w"),
        ];
        match given.iter().find(|(set, _)| *set) {
            Some((_, name)) => Err(Failure::Usage(format!(
                "{name} needs -i IFACE (--interface): it applies to live captures only"
            ))),
            None => Ok(()),
        }
    }

    /// Checks that `-i` (and `-w`) were given `n` times at most once each
    /// per interface, and that this build captures.
    pub fn check(&self, n: usize) -> Result<(), Failure> {
        if !cfg!(feature = "live") {
            return Err(Failure::Usage(LiveError::NotBuilt.to_string()));
        }
        if self.interface.len() != n {
            return Err(Failure::Usage(if n == 1 {
                "-i takes one interface here".to_string()
            } else {
                format!("-i must be given {n} times (one interface per capture)")
            }));
        }
        if self.write.len() > n || (n > 1 && !self.write.is_empty() && self.write.len() != n) {
            return Err(Failure::Usage(format!(
                "-w must be given once per interface ({n})"
            )));
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
        serde_json::to_value(self.line(false, None, None)).unwrap_or_default()
    }

    /// The last JSON line of a live `dump` (`connections` `None`) or
    /// `analyze`: `{"type": "end", ...}` with [`LiveEnd::json`]'s fields.
    pub fn end_line(&self, schema_version: Option<u32>, connections: Option<usize>) -> String {
        serde_json::to_string(&self.line(true, schema_version, connections)).unwrap_or_default()
    }

    fn line(
        &self,
        end: bool,
        schema_version: Option<u32>,
        connections: Option<usize>,
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
    pub fn open(args: &LiveArgs, k: usize, stop: Arc<AtomicBool>) -> Result<Self, Failure> {
        let interface = args
            .interface
            .get(k)
            .cloned()
            .ok_or_else(|| Failure::Usage("-i IFACE is missing".to_string()))?;
        let write = args.write.get(k).cloned();
        let file = match &write {
            None => None,
            Some(path) => Some(BufWriter::new(File::create(path).map_err(|e| {
                Failure::Runtime(format!("cannot create {}: {e}", path.display()))
            })?)),
        };
        // No live capture in this build, or a filter libpcap cannot
        // compile: the command line's fault (status 2); an interface that
        // cannot be opened: the machine's (status 1), as for a file.
        let inner = imp::open(args, &interface, stop, file).map_err(|e| match e {
            LiveError::NotBuilt | LiveError::Filter { .. } => Failure::Usage(e.to_string()),
            e => Failure::Runtime(e.to_string()),
        })?;
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
    pub fn finish(self, failed: bool) -> Result<LiveEnd, Failure> {
        let write = self.write;
        let (frames, reason, loss) = imp::finish(self.inner, failed).map_err(|e| {
            let path = write.as_deref().unwrap_or(std::path::Path::new("-w"));
            Failure::Runtime(format!("{}: {e}", path.display()))
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
    ) -> Result<(u64, &'static str, Option<CaptureLoss>), String> {
        match s {
            Source::Plain(mut c) => Ok((c.frames(), reason(&c, failed), c.loss())),
            Source::Kept(mut t) => {
                let c = t.inner_mut();
                let (frames, why, loss) = (c.frames(), reason(c, failed), c.loss());
                let file = t.finish().map_err(|e| e.to_string())?;
                flush(file).map_err(|e| e.to_string())?;
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

    pub fn finish(s: Source, _: bool) -> Result<(u64, &'static str, Option<CaptureLoss>), String> {
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
        let usage = |r: Result<(), Failure>| matches!(r, Err(Failure::Usage(_)));
        if cfg!(feature = "live") {
            assert!(args(&["a"], &["x"]).check(1).is_ok());
            assert!(args(&["a", "b"], &[]).check(2).is_ok());
            assert!(usage(args(&["a", "b"], &[]).check(1)));
            assert!(usage(args(&["a", "b"], &["x"]).check(2)));
        } else {
            let e = args(&["a"], &[]).check(1).unwrap_err();
            assert!(e.message().contains("--features live"), "{e:?}");
            assert!(usage(Err(e)));
        }
    }
}
