//! `-i IFACE [-f BPF] [--count N] [--duration T] [-w FILE]`: capturing from
//! a network interface instead of reading a file, for `dump` (and, through
//! the same arguments and source, the other readers of captures).
//!
//! The capture is `capture::live::LiveCapture` (libpcap, the `live` build
//! feature); its records go down the same path as a file's
//! ([`capture::RecordSource`]). With `-w` every record is also written to a
//! pcap file (nanosecond timestamps) as it is read. Ctrl-C ends the capture
//! like `--count` or `--duration` do: what was read is reported, with the
//! packets the kernel dropped.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use capture::writer::{PcapWriter, Resolution};
use capture::{CaptureError, CaptureLoss, Record, RecordSource};

/// The live-capture arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LiveArgs {
    /// Capture from this network interface instead of reading a file
    /// (root or CAP_NET_RAW; a build with the `live` feature).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    /// Capture filter in libpcap's language, as tcpdump takes it (`tcp port 443`).
    #[arg(
        short = 'f',
        long = "filter",
        value_name = "BPF",
        requires = "interface"
    )]
    pub filter: Option<String>,
    /// Stop after N packets.
    #[arg(long, value_name = "N", requires = "interface")]
    pub count: Option<u64>,
    /// Stop after this long (`30s`, `500ms`, `2min`).
    #[arg(long, value_name = "T", requires = "interface", value_parser = duration)]
    pub duration: Option<Duration>,
    /// Also write every captured packet to this pcap file.
    #[arg(short = 'w', long = "write", value_name = "FILE", requires = "interface")]
    pub write: Option<PathBuf>,
}

fn duration(s: &str) -> Result<Duration, String> {
    bdp::parse_duration(s).map_err(|e| e.to_string())
}

/// A live capture, and the file its packets are also written to.
pub struct LiveSource {
    inner: Box<dyn RecordSource>,
    writer: Option<(PathBuf, PcapWriter<std::io::BufWriter<std::fs::File>>)>,
    /// The first write error: the capture ends there.
    error: Option<String>,
}

impl LiveArgs {
    /// Opens the capture on the interface (`stop` ends it when set) and the
    /// `-w` file.
    pub fn open(&self, interface: &str, stop: Arc<AtomicBool>) -> Result<LiveSource, String> {
        let (inner, linktype) = open_capture(self, interface, stop)?;
        let writer = match &self.write {
            None => None,
            Some(path) => {
                let file = std::fs::File::create(path)
                    .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                let w = PcapWriter::new(std::io::BufWriter::new(file), linktype, Resolution::Nanos)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Some((path.clone(), w))
            }
        };
        Ok(LiveSource {
            inner,
            writer,
            error: None,
        })
    }
}

#[cfg(feature = "live")]
fn open_capture(
    args: &LiveArgs,
    interface: &str,
    stop: Arc<AtomicBool>,
) -> Result<(Box<dyn RecordSource>, u32), String> {
    use capture::live::{LiveCapture, LiveOptions};
    let cap = LiveCapture::open(LiveOptions {
        interface: interface.to_string(),
        filter: args.filter.clone(),
        snaplen: 0,
        promiscuous: false,
        count: args.count,
        duration: args.duration,
        stop: Some(stop),
    })
    .map_err(|e| e.to_string())?;
    let linktype = cap.linktype();
    Ok((Box::new(cap), linktype))
}

#[cfg(not(feature = "live"))]
fn open_capture(
    _: &LiveArgs,
    _: &str,
    _: Arc<AtomicBool>,
) -> Result<(Box<dyn RecordSource>, u32), String> {
    Err(capture::LiveError::NotBuilt.to_string())
}

impl LiveSource {
    /// Flushes the `-w` file; the first error writing it, if any.
    pub fn finish(self) -> Result<(), String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Some((path, w)) = self.writer {
            use std::io::Write;
            w.into_inner()
                .and_then(|mut b| b.flush())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }
}

impl RecordSource for LiveSource {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        if self.error.is_some() {
            return Ok(None);
        }
        let record = self.inner.next_record()?;
        if let (Some(r), Some((path, w))) = (&record, &mut self.writer) {
            let ts = r.ts.unwrap_or_default();
            if let Err(e) = w.write(ts, r.data, r.origlen) {
                self.error = Some(format!("{}: {e}", path.display()));
            }
        }
        Ok(record)
    }

    fn has_buffered_record(&self) -> bool {
        self.inner.has_buffered_record()
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        self.inner.loss()
    }
}
