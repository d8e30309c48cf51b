//! Where records go: a pcap or pcapng file written by
//! [`capture::writer`], each frame cut at the snap length, the bytes
//! counted (the sidecar's `bytes`, and the `--size` limit).
//!
//! pcap: microsecond timestamps, link type Ethernet, the writer's own
//! header (its snapshot length field says [`capture::writer::SNAPLEN`]; the
//! records are cut at the sink's snap length). pcapng: one section, one
//! Ethernet interface with `if_tsresol` 6 (microseconds), Enhanced Packet
//! Blocks.

use std::cell::Cell;
use std::io::{self, Write};
use std::rc::Rc;

use capture::link::LINKTYPE_ETHERNET;
use capture::writer::{Interface, PcapWriter, PcapngWriter, Resolution, WriteError};
use capture::Timestamp;

/// `if_tsresol` of microseconds (10^-6).
const TSRESOL_MICROS: u8 = 6;

/// A capture file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Classic pcap.
    Pcap,
    /// pcapng.
    Pcapng,
}

impl Format {
    /// The file extension and the sidecar's `format`: `pcap` or `pcapng`.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Pcap => "pcap",
            Format::Pcapng => "pcapng",
        }
    }
}

/// A writer that counts the bytes passed through it.
#[derive(Debug)]
struct Counted<W> {
    inner: W,
    bytes: Rc<Cell<u64>>,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[derive(Debug)]
enum Writer<W: Write> {
    Pcap(PcapWriter<Counted<W>>),
    Pcapng(PcapngWriter<Counted<W>>, u32),
}

/// One capture being written (module docs).
#[derive(Debug)]
pub struct CaptureSink<W: Write> {
    writer: Writer<W>,
    format: Format,
    snaplen: usize,
    bytes: Rc<Cell<u64>>,
}

impl<W: Write> CaptureSink<W> {
    /// Start a capture of `format` on `out` (the file header written),
    /// records cut at `snaplen` bytes.
    pub fn new(out: W, format: Format, snaplen: usize) -> io::Result<Self> {
        let bytes = Rc::new(Cell::new(0));
        let out = Counted {
            inner: out,
            bytes: Rc::clone(&bytes),
        };
        let writer = match format {
            Format::Pcap => {
                Writer::Pcap(PcapWriter::new(out, LINKTYPE_ETHERNET, Resolution::Micros)?)
            }
            Format::Pcapng => {
                let mut w = PcapngWriter::new(out)?;
                let id = w.interface(Interface {
                    linktype: LINKTYPE_ETHERNET as u16,
                    tsresol: Some(TSRESOL_MICROS),
                })?;
                Writer::Pcapng(w, id)
            }
        };
        Ok(CaptureSink {
            writer,
            format,
            snaplen,
            bytes,
        })
    }

    /// Its format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Bytes written so far (headers and records; buffered ones included).
    pub fn bytes(&self) -> u64 {
        self.bytes.get()
    }

    /// Write `frame`, captured `t_us` microseconds after the epoch, cut at
    /// the snap length (its whole length recorded as the original length).
    pub fn write(&mut self, t_us: u64, frame: &[u8]) -> Result<(), WriteError> {
        let data = &frame[..frame.len().min(self.snaplen)];
        let origlen =
            u32::try_from(frame.len()).map_err(|_| WriteError::TooLong { len: frame.len() })?;
        match &mut self.writer {
            Writer::Pcap(w) => {
                let ts = Timestamp {
                    secs: (t_us / 1_000_000) as i64,
                    nanos: (t_us % 1_000_000) as u32 * 1000,
                };
                w.write(ts, data, origlen)
            }
            Writer::Pcapng(w, id) => w.packet(*id, t_us.saturating_mul(1000), data, origlen),
        }
    }

    /// Flush; returns the output and the bytes written.
    pub fn finish(self) -> io::Result<(W, u64)> {
        let out = match self.writer {
            Writer::Pcap(w) => w.into_inner()?,
            Writer::Pcapng(w, _) => w.into_inner()?,
        };
        Ok((out.inner, self.bytes.get()))
    }
}
