//! Streaming pcap / pcapng reader with a fixed-size buffer.
//!
//! The file is read through `pcap-parser` in streaming mode: one buffer of a
//! fixed capacity is allocated when the reader is created and never grows.
//! A record (or pcapng block) larger than about half of that buffer is
//! reported as [`CaptureError::RecordTooLarge`]; no length field read from the
//! file ever sizes an allocation. pcapng files may hold several sections, each
//! with its own interfaces; every interface has its own link type, timestamp
//! resolution (`if_tsresol`) and offset (`if_tsoffset`). Legacy pcap files
//! may use the microsecond or the nanosecond magic number, in either byte
//! order.
//!
//! Packets come out as [`Record`]s numbered from 1 in file order, like
//! tcpdump's `--number` and Wireshark's `frame.number`.

use std::cell::RefCell;
use std::io::{self, Cursor, Read};
use std::rc::Rc;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{LegacyPcapReader, PcapBlockOwned, PcapError, PcapNGReader};

use super::error::CaptureError;
use super::timestamp::Timestamp;

/// Default buffer capacity: 1 MiB, enough for 256 KiB snapshots and BIG TCP frames.
pub const DEFAULT_BUFFER_CAPACITY: usize = 1 << 20;
/// Smallest buffer capacity accepted by [`CaptureReader::with_capacity`].
pub const MIN_BUFFER_CAPACITY: usize = 4096;
/// At most this many interfaces are tracked per pcapng section.
pub const MAX_INTERFACES: usize = 1024;

/// pcapng Section Header Block type, the first four bytes of a pcapng file.
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
/// Legacy pcap magic numbers (microsecond, nanosecond; both byte orders; Kuznetzov's modified).
const PCAP_MAGICS: [[u8; 4]; 6] = [
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xcd, 0x34],
    [0x34, 0xcd, 0xb2, 0xa1],
];
/// Microseconds per second.
const MICROS: u64 = 1_000_000;
/// Nanoseconds per second.
const NANOS: u64 = 1_000_000_000;

/// The container format of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Legacy pcap; `nanosecond` when the file uses the nanosecond magic.
    Pcap {
        /// Timestamps count nanoseconds rather than microseconds.
        nanosecond: bool,
    },
    /// pcapng.
    PcapNg,
}

/// One packet record of the capture.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// 1-based index of the packet record in the file.
    pub frame: u64,
    /// When the packet was captured; `None` for a pcapng Simple Packet Block.
    pub ts: Option<Timestamp>,
    /// LINKTYPE_ value of the interface the packet was captured on.
    pub linktype: u32,
    /// Length of the packet on the wire.
    pub origlen: u32,
    /// Snapshot length of the interface (0 when unknown).
    pub snaplen: u32,
    /// The captured bytes (at most `origlen`, possibly fewer: snap-length truncation).
    pub data: &'a [u8],
}

impl Record<'_> {
    /// True when fewer bytes were captured than were on the wire.
    pub fn is_truncated(&self) -> bool {
        (self.data.len() as u64) < u64::from(self.origlen)
    }
}

/// A `Read` adapter that fills the whole buffer unless the stream ends, and keeps
/// the last I/O error so it can be reported with its cause (`pcap-parser` drops it).
struct FillRead<R> {
    inner: R,
    error: Rc<RefCell<Option<io::Error>>>,
}

impl<R: Read> Read for FillRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let kind = e.kind();
                    *self.error.borrow_mut() = Some(e);
                    if filled > 0 {
                        return Ok(filled);
                    }
                    return Err(kind.into());
                }
            }
        }
        Ok(filled)
    }
}

type Source<R> = FillRead<io::Chain<Cursor<[u8; 4]>, R>>;

enum Inner<R: Read> {
    Pcap(LegacyPcapReader<Source<R>>),
    PcapNg(PcapNGReader<Source<R>>),
}

impl<R: Read> Inner<R> {
    fn it(&mut self) -> &mut dyn PcapReaderIterator {
        match self {
            Inner::Pcap(r) => r,
            Inner::PcapNg(r) => r,
        }
    }
    fn data(&self) -> &[u8] {
        match self {
            Inner::Pcap(r) => r.data(),
            Inner::PcapNg(r) => r.data(),
        }
    }
}

/// Link type and timestamp parameters of one pcapng interface (or of a pcap file).
#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: u32,
    units_per_sec: u64,
    offset_secs: i64,
    snaplen: u32,
}

/// What one step of the underlying reader produced, owned so the borrow ends.
enum Step {
    Skip(usize),
    Packet {
        consumed: usize,
        start: usize,
        len: usize,
        ts: Option<Timestamp>,
        iface: Interface,
        origlen: u32,
    },
    NeedMore,
    Eof,
}

/// A streaming reader of pcap and pcapng files.
///
/// ```
/// use examples::capture::CaptureReader;
/// // A pcap header (microsecond, little-endian, LINKTYPE_RAW) and no packets.
/// let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
/// file.extend_from_slice(&[0; 8]);
/// file.extend_from_slice(&65535u32.to_le_bytes());
/// file.extend_from_slice(&101u32.to_le_bytes());
/// let mut reader = CaptureReader::new(&file[..]).unwrap();
/// assert!(reader.next_record().unwrap().is_none());
/// ```
pub struct CaptureReader<R: Read> {
    inner: Inner<R>,
    format: CaptureFormat,
    error: Rc<RefCell<Option<io::Error>>>,
    interfaces: Vec<Interface>,
    capacity: usize,
    /// Bytes of the current record still to be consumed before the next step.
    pending: usize,
    /// Bytes of the file consumed so far.
    offset: u64,
    /// Packet records returned so far.
    frames: u64,
    done: bool,
}

impl<R: Read> CaptureReader<R> {
    /// A reader with the default 1 MiB buffer.
    pub fn new(reader: R) -> Result<Self, CaptureError> {
        Self::with_capacity(reader, DEFAULT_BUFFER_CAPACITY)
    }

    /// A reader with a buffer of `capacity` bytes (at least [`MIN_BUFFER_CAPACITY`]).
    /// Records larger than about half the capacity are refused.
    pub fn with_capacity(mut reader: R, capacity: usize) -> Result<Self, CaptureError> {
        let capacity = capacity.max(MIN_BUFFER_CAPACITY);
        let mut magic = [0u8; 4];
        let mut got = 0;
        while got < magic.len() {
            match reader.read(&mut magic[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => return Err(CaptureError::Io { offset: 0, source }),
            }
        }
        if got == 0 {
            return Err(CaptureError::Empty);
        }
        if got < magic.len() {
            let prefix = &magic[..got];
            if PCAP_MAGICS.iter().any(|m| m.starts_with(prefix)) || PCAPNG_MAGIC.starts_with(prefix)
            {
                return Err(CaptureError::Truncated {
                    offset: 0,
                    frame: 1,
                });
            }
            return Err(CaptureError::NotACapture { magic });
        }
        let error = Rc::new(RefCell::new(None));
        let source = FillRead {
            inner: Cursor::new(magic).chain(reader),
            error: Rc::clone(&error),
        };
        let header_error =
            |e: PcapError<&'static [u8]>, error: &Rc<RefCell<Option<io::Error>>>| match e {
                PcapError::ReadError => CaptureError::Io {
                    offset: 0,
                    source: error
                        .borrow_mut()
                        .take()
                        .unwrap_or_else(|| io::Error::other("read failed")),
                },
                PcapError::Incomplete(_) | PcapError::UnexpectedEof | PcapError::Eof => {
                    CaptureError::Truncated {
                        offset: 0,
                        frame: 1,
                    }
                }
                _ => CaptureError::Corrupt {
                    offset: 0,
                    frame: 1,
                    reason: "malformed file header",
                },
            };
        let (inner, format) = if magic == PCAPNG_MAGIC {
            let r = PcapNGReader::new(capacity, source).map_err(|e| header_error(e, &error))?;
            (Inner::PcapNg(r), CaptureFormat::PcapNg)
        } else if PCAP_MAGICS.contains(&magic) {
            let nanosecond = magic == PCAP_MAGICS[2] || magic == PCAP_MAGICS[3];
            let r = LegacyPcapReader::new(capacity, source).map_err(|e| header_error(e, &error))?;
            (Inner::Pcap(r), CaptureFormat::Pcap { nanosecond })
        } else {
            return Err(CaptureError::NotACapture { magic });
        };
        Ok(CaptureReader {
            inner,
            format,
            error,
            interfaces: Vec::new(),
            capacity,
            pending: 0,
            offset: 0,
            frames: 0,
            done: false,
        })
    }

    /// The container format.
    pub fn format(&self) -> CaptureFormat {
        self.format
    }

    /// Bytes of the file consumed so far (up to the start of the last record returned).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next packet record, `Ok(None)` at the end of the file.
    ///
    /// After an error the reader is finished: later calls return `Ok(None)`.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        if self.pending > 0 {
            self.consume(self.pending);
            self.pending = 0;
        }
        loop {
            let step = match self.step() {
                Ok(step) => step,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            match step {
                Step::Skip(n) => self.consume(n),
                Step::NeedMore => {
                    if let Err(e) = self.refill() {
                        self.done = true;
                        return Err(e);
                    }
                }
                Step::Eof => {
                    self.done = true;
                    return Ok(None);
                }
                Step::Packet {
                    consumed,
                    start,
                    len,
                    ts,
                    iface,
                    origlen,
                } => {
                    self.pending = consumed;
                    self.frames += 1;
                    let frame = self.frames;
                    let data = self
                        .inner
                        .data()
                        .get(start..)
                        .and_then(|d| d.get(..len))
                        .unwrap_or(&[]);
                    return Ok(Some(Record {
                        frame,
                        ts,
                        linktype: iface.linktype,
                        origlen,
                        snaplen: iface.snaplen,
                        data,
                    }));
                }
            }
        }
    }

    fn consume(&mut self, n: usize) {
        // No shift here: `refill` moves the unread tail to the front when the
        // buffer runs out, which copies one partial record per buffer instead
        // of half the buffer every time the read position passes its middle.
        self.inner.it().consume_noshift(n);
        self.offset = self.offset.saturating_add(n as u64);
    }

    fn refill(&mut self) -> Result<(), CaptureError> {
        let before = self.inner.data().len();
        let it = self.inner.it();
        let exhausted_before = it.reader_exhausted();
        if it.refill().is_err() {
            return Err(self.io_error());
        }
        let after = self.inner.data().len();
        if after == before && !self.inner.it().reader_exhausted() {
            // The buffer is full and the parser still cannot tell the record size.
            return Err(CaptureError::RecordTooLarge {
                offset: self.offset,
                frame: self.frames + 1,
                limit: self.capacity / 2,
            });
        }
        if after == before && exhausted_before {
            return Err(self.truncated());
        }
        Ok(())
    }

    fn io_error(&self) -> CaptureError {
        CaptureError::Io {
            offset: self.offset,
            source: self
                .error
                .borrow_mut()
                .take()
                .unwrap_or_else(|| io::Error::other("read failed")),
        }
    }

    fn truncated(&self) -> CaptureError {
        CaptureError::Truncated {
            offset: self.offset,
            frame: self.frames + 1,
        }
    }

    /// One call of the underlying parser, turned into an owned [`Step`].
    fn step(&mut self) -> Result<Step, CaptureError> {
        let base = self.inner.data().as_ptr() as usize;
        let offset = self.offset;
        let frame = self.frames + 1;
        let limit = self.capacity / 2;
        let format = self.format;
        let corrupt = |reason| CaptureError::Corrupt {
            offset,
            frame,
            reason,
        };
        let interfaces = &mut self.interfaces;
        let result = match &mut self.inner {
            Inner::Pcap(r) => r.next(),
            Inner::PcapNg(r) => r.next(),
        };
        let (consumed, block) = match result {
            Ok(ok) => ok,
            Err(PcapError::Eof) => return Ok(Step::Eof),
            Err(PcapError::Incomplete(_)) => return Ok(Step::NeedMore),
            Err(PcapError::UnexpectedEof) => return Err(CaptureError::Truncated { offset, frame }),
            Err(PcapError::BufferTooSmall) => {
                return Err(CaptureError::RecordTooLarge {
                    offset,
                    frame,
                    limit,
                })
            }
            Err(PcapError::ReadError) => {
                return Err(CaptureError::Io {
                    offset,
                    source: self
                        .error
                        .borrow_mut()
                        .take()
                        .unwrap_or_else(|| io::Error::other("read failed")),
                })
            }
            Err(PcapError::HeaderNotRecognized) => return Err(corrupt("header not recognized")),
            Err(PcapError::NomError(..)) | Err(PcapError::OwnedNomError(..)) => {
                return Err(corrupt("malformed block or record"))
            }
        };
        let packet = |data: &[u8], len: usize, ts, iface: Interface, origlen: u32| {
            let start = (data.as_ptr() as usize).wrapping_sub(base);
            Step::Packet {
                consumed,
                start,
                len: len.min(data.len()),
                ts,
                iface,
                origlen,
            }
        };
        let step = match block {
            PcapBlockOwned::LegacyHeader(h) => {
                let units = match format {
                    CaptureFormat::Pcap { nanosecond: true } => NANOS,
                    _ => MICROS,
                };
                interfaces.clear();
                interfaces.push(Interface {
                    // The upper bits of the link-type field carry FCS information.
                    linktype: (h.network.0 as u32) & 0xffff,
                    units_per_sec: units,
                    offset_secs: 0,
                    snaplen: h.snaplen,
                });
                Step::Skip(consumed)
            }
            PcapBlockOwned::Legacy(b) => {
                let Some(&iface) = interfaces.first() else {
                    return Err(corrupt("packet record before the file header"));
                };
                let ts = Timestamp::from_units(
                    u64::from(b.ts_usec),
                    iface.units_per_sec,
                    i64::from(b.ts_sec),
                );
                packet(b.data, b.caplen as usize, ts, iface, b.origlen)
            }
            PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                interfaces.clear();
                Step::Skip(consumed)
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                if interfaces.len() >= MAX_INTERFACES {
                    return Err(CaptureError::TooManyInterfaces {
                        offset,
                        limit: MAX_INTERFACES,
                    });
                }
                let Some(units_per_sec) = ts_resolution(idb.if_tsresol) else {
                    return Err(corrupt("invalid if_tsresol option"));
                };
                interfaces.push(Interface {
                    linktype: (idb.linktype.0 as u32) & 0xffff,
                    units_per_sec,
                    offset_secs: idb.if_tsoffset,
                    snaplen: idb.snaplen,
                });
                Step::Skip(consumed)
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                let Some(&iface) = interfaces.get(epb.if_id as usize) else {
                    return Err(CaptureError::UnknownInterface {
                        offset,
                        frame,
                        interface: epb.if_id,
                        declared: interfaces.len(),
                    });
                };
                let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                let ts = Timestamp::from_units(units, iface.units_per_sec, iface.offset_secs);
                packet(epb.data, epb.caplen as usize, ts, iface, epb.origlen)
            }
            PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                let Some(&iface) = interfaces.first() else {
                    return Err(CaptureError::UnknownInterface {
                        offset,
                        frame,
                        interface: 0,
                        declared: 0,
                    });
                };
                let mut len = spb.origlen as usize;
                if iface.snaplen > 0 {
                    len = len.min(iface.snaplen as usize);
                }
                packet(spb.data, len, None, iface, spb.origlen)
            }
            PcapBlockOwned::NG(_) => Step::Skip(consumed),
        };
        Ok(step)
    }
}

/// Units per second of a pcapng `if_tsresol` value: `10^n` when the top bit
/// is clear, `2^(n & 0x7f)` when it is set; `None` when that does not fit a
/// `u64` or is zero. (Computed here because `pcap-parser` 0.16 rejects every
/// power-of-two resolution: it range-checks the byte with the flag bit still set.)
pub fn ts_resolution(if_tsresol: u8) -> Option<u64> {
    let n = u32::from(if_tsresol & 0x7f);
    if if_tsresol & 0x80 == 0 {
        10u64.checked_pow(n)
    } else {
        1u64.checked_shl(n).filter(|_| n < 64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsresol_decimal_and_binary() {
        assert_eq!(ts_resolution(6), Some(1_000_000));
        assert_eq!(ts_resolution(9), Some(1_000_000_000));
        assert_eq!(ts_resolution(0x80 | 2), Some(4));
        assert_eq!(ts_resolution(0x80 | 63), Some(1 << 63));
        assert_eq!(ts_resolution(0x80 | 64), None);
        assert_eq!(ts_resolution(20), None);
    }

    /// A `Read` that hands out at most `chunk` bytes per call.
    struct Trickle<'a> {
        data: &'a [u8],
        chunk: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.chunk).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// A pcap file (LINKTYPE_RAW, microseconds) of `count` records whose
    /// lengths cycle through 1..=1500 bytes, each filled with its own index.
    fn synthetic_pcap(count: u32) -> Vec<u8> {
        let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&101u32.to_le_bytes());
        for i in 0..count {
            let len = 1 + (i * 611) % 1500;
            file.extend_from_slice(&i.to_le_bytes());
            file.extend_from_slice(&(i % 1_000_000).to_le_bytes());
            file.extend_from_slice(&len.to_le_bytes());
            file.extend_from_slice(&len.to_le_bytes());
            file.extend(std::iter::repeat_n(i as u8, len as usize));
        }
        file
    }

    #[test]
    fn records_across_many_refills_come_out_whole_and_in_order() {
        // 3,000 records (2.3 MB) through the smallest buffer, fed in odd-sized
        // reads: every record boundary position relative to a refill occurs.
        let file = synthetic_pcap(3000);
        for (capacity, chunk) in [
            (MIN_BUFFER_CAPACITY, 1000),
            (MIN_BUFFER_CAPACITY, 7),
            (1 << 16, 4093),
        ] {
            let source = Trickle { data: &file, chunk };
            let mut reader = CaptureReader::with_capacity(source, capacity).unwrap();
            let mut i = 0u32;
            while let Some(r) = reader.next_record().unwrap() {
                let len = 1 + (i * 611) % 1500;
                assert_eq!(r.frame, u64::from(i) + 1);
                assert_eq!(
                    r.origlen, len,
                    "record {i}, capacity {capacity}, chunk {chunk}"
                );
                assert_eq!(r.data.len(), len as usize);
                assert!(r.data.iter().all(|&b| b == i as u8), "record {i} corrupted");
                i += 1;
            }
            assert_eq!(i, 3000, "capacity {capacity}, chunk {chunk}");
        }
    }

    #[test]
    fn empty_and_garbage_are_errors() {
        assert!(matches!(
            CaptureReader::new(&[][..]),
            Err(CaptureError::Empty)
        ));
        assert!(matches!(
            CaptureReader::new(&b"hello world"[..]),
            Err(CaptureError::NotACapture { .. })
        ));
        assert!(matches!(
            CaptureReader::new(&[0x0a, 0x0d][..]),
            Err(CaptureError::Truncated { .. })
        ));
    }
}
