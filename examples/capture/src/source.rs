//! Where records come from: the one reading path of the tools.
//!
//! A [`RecordSource`] yields numbered [`Record`]s, each with its link type,
//! timestamp and original length, whatever it reads: a capture file or a
//! pipe ([`CaptureReader`]), or, with the `live` feature, a network
//! interface (`crate::live::LiveCapture`, libpcap through the `pcap`
//! crate). The tools take any of them and send the records down the same
//! decode. [`Tee`] keeps what a source yields in a capture file as it goes
//! (`-w`), through [`crate::writer`].
//!
//! A live source also says what it lost ([`RecordSource::loss`]): the
//! packets the kernel dropped for want of room in the capture buffer, which
//! the network delivered and the capture did not see.

use std::io::{Read, Write};
use std::time::Duration;

use thiserror::Error;

use crate::error::CaptureError;
use crate::reader::{CaptureReader, Record};
use crate::writer::{PcapWriter, Resolution, WriteError};

/// What a live capture lost, as the kernel counted it (libpcap's
/// `pcap_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaptureLoss {
    /// Packets the capture received (`ps_recv`; on Linux, those that
    /// passed the filter, dropped ones included).
    pub received: u64,
    /// Packets the kernel dropped for want of room in the capture buffer
    /// (`ps_drop`): the capture missed them, the network did not.
    pub kernel_drops: u64,
    /// Packets the interface or its driver dropped (`ps_ifdrop`).
    pub interface_drops: u64,
}

/// What [`RecordSource::next_within`] found.
#[derive(Debug)]
pub enum Next<'a> {
    /// A record.
    Record(Record<'a>),
    /// None arrived within the time given; the source goes on.
    Idle,
    /// The source has ended.
    End,
}

/// A source of capture records.
pub trait RecordSource {
    /// The next record, `Ok(None)` at the end: of the file, or of a live
    /// capture (its count, its duration, or an interruption). After an
    /// error the source is finished.
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError>;

    /// The next record, waiting for it at most about `wait` (a live
    /// capture; a tool that has something to do while the interface is
    /// quiet, such as reporting connections that closed, asks this way).
    /// A file or pipe never answers [`Next::Idle`]: it waits as
    /// [`next_record`](Self::next_record) does.
    fn next_within(&mut self, wait: Duration) -> Result<Next<'_>, CaptureError> {
        let _ = wait;
        Ok(match self.next_record()? {
            Some(r) => Next::Record(r),
            None => Next::End,
        })
    }

    /// True when the next call of [`next_record`](Self::next_record) can
    /// answer without waiting for input; a tool writing through a buffer
    /// flushes it when this is false.
    fn has_buffered_record(&self) -> bool;

    /// What the capture lost as the kernel counted it; `None` for a file
    /// or pipe, whose loss (if any) happened when it was written.
    fn loss(&mut self) -> Option<CaptureLoss> {
        None
    }
}

impl<R: Read> RecordSource for CaptureReader<R> {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        CaptureReader::next_record(self)
    }

    fn has_buffered_record(&self) -> bool {
        CaptureReader::has_buffered_record(self)
    }
}

impl<S: RecordSource + ?Sized> RecordSource for &mut S {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        (**self).next_record()
    }

    fn next_within(&mut self, wait: Duration) -> Result<Next<'_>, CaptureError> {
        (**self).next_within(wait)
    }

    fn has_buffered_record(&self) -> bool {
        (**self).has_buffered_record()
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        (**self).loss()
    }
}

impl<S: RecordSource + ?Sized> RecordSource for Box<S> {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        (**self).next_record()
    }

    fn next_within(&mut self, wait: Duration) -> Result<Next<'_>, CaptureError> {
        (**self).next_within(wait)
    }

    fn has_buffered_record(&self) -> bool {
        (**self).has_buffered_record()
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        (**self).loss()
    }
}

/// Why a live capture could not be opened or read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LiveError {
    /// This build has no live capture.
    #[error("this build has no live capture (-i): build with `--features live` (needs libpcap-dev), or capture with tcpdump -w and read the file")]
    NotBuilt,
    /// libpcap could not open or activate the interface.
    #[error("cannot capture on {interface}: {message}")]
    Open {
        /// The interface.
        interface: String,
        /// libpcap's message.
        message: String,
    },
    /// libpcap refused the capture filter.
    #[error("capture filter {filter:?} on {interface}: {message}")]
    Filter {
        /// The interface.
        interface: String,
        /// The filter expression.
        filter: String,
        /// libpcap's message.
        message: String,
    },
    /// A read from the interface failed.
    #[error("reading from {interface}: {message}")]
    Read {
        /// The interface.
        interface: String,
        /// libpcap's message.
        message: String,
    },
}

/// A source whose records are also written to a pcap file (nanosecond
/// timestamps) as they are read: `-w FILE`.
///
/// The file has one link type, the first record's; a record of another
/// link type (a pcapng file with several interfaces) ends the reading with
/// [`CaptureError::Write`]. A record without a timestamp (pcapng Simple
/// Packet Block) is written at time 0.
pub struct Tee<S, W: Write> {
    inner: S,
    file: TeeFile<W>,
}

/// The file a [`Tee`] writes.
struct TeeFile<W: Write> {
    /// The output until the first record (or the end) writes its header.
    out: Option<W>,
    writer: Option<PcapWriter<W>>,
    linktype: u32,
    /// The first write error; the source then ends.
    failed: bool,
}

impl<W: Write> TeeFile<W> {
    /// Writes `rec` (the file's header with the first record).
    fn keep(&mut self, rec: &Record<'_>) -> Result<(), CaptureError> {
        let result = self.write(rec);
        if result.is_err() {
            self.failed = true;
        }
        result.map_err(|e| CaptureError::Write(Box::new(e)))
    }

    fn write(&mut self, rec: &Record<'_>) -> Result<(), WriteError> {
        if let Some(out) = self.out.take() {
            self.linktype = rec.linktype;
            self.writer = Some(PcapWriter::new(out, rec.linktype, Resolution::Nanos)?);
        }
        if rec.linktype != self.linktype {
            return Err(WriteError::LinkType {
                frame: rec.frame,
                linktype: rec.linktype,
                first: self.linktype,
            });
        }
        match self.writer.as_mut() {
            Some(w) => w.write(rec.ts.unwrap_or_default(), rec.data, rec.origlen),
            None => Ok(()),
        }
    }
}

impl<S: RecordSource, W: Write> Tee<S, W> {
    /// Wraps `inner`; the pcap header goes to `out` with the first record
    /// (or at [`finish`](Self::finish) when there is none, with `linktype`).
    pub fn new(inner: S, out: W, linktype: u32) -> Self {
        Tee {
            inner,
            file: TeeFile {
                out: Some(out),
                writer: None,
                linktype,
                failed: false,
            },
        }
    }

    /// The wrapped source.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The wrapped source, to change.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Ends the file (a header-only one when no record came), flushes it
    /// and returns the output.
    pub fn finish(mut self) -> Result<W, WriteError> {
        if let Some(out) = self.file.out.take() {
            self.file.writer = Some(PcapWriter::new(out, self.file.linktype, Resolution::Nanos)?);
        }
        match self.file.writer.take() {
            Some(w) => Ok(w.into_inner()?),
            None => Err(WriteError::Io(std::io::Error::other(
                "the capture file's header could not be written",
            ))),
        }
    }
}

impl<S: RecordSource, W: Write> RecordSource for Tee<S, W> {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        if self.file.failed {
            return Ok(None);
        }
        let rec = self.inner.next_record()?;
        if let Some(r) = &rec {
            self.file.keep(r)?;
        }
        Ok(rec)
    }

    fn next_within(&mut self, wait: Duration) -> Result<Next<'_>, CaptureError> {
        if self.file.failed {
            return Ok(Next::End);
        }
        let next = self.inner.next_within(wait)?;
        if let Next::Record(r) = &next {
            self.file.keep(r)?;
        }
        Ok(next)
    }

    fn has_buffered_record(&self) -> bool {
        self.inner.has_buffered_record()
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        self.inner.loss()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    fn file(records: &[(u32, &[u8])]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), 101, Resolution::Nanos).unwrap();
        for (i, (origlen, data)) in records.iter().enumerate() {
            let ts = Timestamp {
                secs: 10 + i as i64,
                nanos: 7,
            };
            w.write(ts, data, *origlen).unwrap();
        }
        w.into_inner().unwrap()
    }

    #[test]
    fn tee_writes_the_same_records_it_yields() {
        let original = file(&[(40, &[0x45, 0, 0, 40]), (20, &[0x45; 20])]);
        let reader = CaptureReader::new(&original[..]).unwrap();
        let mut tee = Tee::new(reader, Vec::new(), 0);
        let mut seen = Vec::new();
        while let Some(r) = tee.next_record().unwrap() {
            seen.push((r.frame, r.ts, r.origlen, r.data.to_vec()));
        }
        assert_eq!(tee.loss(), None);
        let copy = tee.finish().unwrap();
        assert_eq!(copy, original, "the tee's file is the file it read");
        let mut again = CaptureReader::new(&copy[..]).unwrap();
        let mut reread = Vec::new();
        while let Some(r) = RecordSource::next_record(&mut again).unwrap() {
            reread.push((r.frame, r.ts, r.origlen, r.data.to_vec()));
        }
        assert_eq!(seen, reread);
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn tee_without_records_writes_a_header_with_the_given_link_type() {
        let empty = file(&[]);
        let reader = CaptureReader::new(&empty[..]).unwrap();
        let mut tee = Tee::new(reader, Vec::new(), 1);
        assert!(tee.next_record().unwrap().is_none());
        let out = tee.finish().unwrap();
        assert_eq!(out.len(), 24);
        assert_eq!(u32::from_le_bytes([out[20], out[21], out[22], out[23]]), 1);
    }

    #[test]
    fn tee_refuses_a_second_link_type() {
        let mut w = crate::writer::PcapngWriter::new(Vec::new()).unwrap();
        let iface = |linktype| crate::writer::Interface {
            linktype,
            tsresol: None,
        };
        let a = w.interface(iface(101)).unwrap();
        let b = w.interface(iface(1)).unwrap();
        w.packet(a, 1_000_000_000, &[0x45; 20], 20).unwrap();
        w.packet(b, 1_000_000_000, &[0; 14], 14).unwrap();
        let file = w.into_inner().unwrap();
        let reader = CaptureReader::new(&file[..]).unwrap();
        let mut tee = Tee::new(reader, Vec::new(), 0);
        assert!(tee.next_record().unwrap().is_some());
        let err = tee.next_record().unwrap_err();
        assert!(err.to_string().contains("link type 1 "), "{err}");
        assert!(
            tee.next_record().unwrap().is_none(),
            "ended after the error"
        );
    }
}
