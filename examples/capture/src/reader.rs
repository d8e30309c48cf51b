//! Streaming pcap / pcapng reader with a bounded buffer.
//!
//! One buffer is allocated when the reader is created: [`INITIAL_BUFFER`]
//! bytes (or the capacity, when smaller), doubled only when a record does
//! not fit, up to the capacity asked for. Captures of ordinary frames never
//! make it grow, so reading them touches 64 KiB of buffer, not the whole
//! capacity (peak RSS; and the buffer stays in the CPU caches). A record
//! (or pcapng block) larger than half of the capacity is reported as
//! [`CaptureError::RecordTooLarge`] as soon as its header is read; no
//! length field read from the file ever sizes an allocation beyond the
//! capacity. pcapng files may hold several sections, each with its own byte
//! order and interfaces; every interface has its own link type, timestamp
//! resolution (`if_tsresol`) and offset (`if_tsoffset`). Legacy pcap files
//! may use the microsecond or the nanosecond magic number, in either byte
//! order, and Kuznetzov's modified record header.
//!
//! The framing is checked here before any block is parsed: every pcapng
//! block's length is at least 12 bytes and at least what its type needs, a
//! multiple of 4, within the buffer limit and equal to the trailing copy, and
//! each section header names a byte order. (`pcap-parser` 0.16 and 0.17, used
//! as a streaming reader, subtract 12 from a Process Information Block's
//! length without checking it, which overflows on a length of 4; they check
//! no section header's trailing length, skip the obsolete Packet Block and
//! refuse big-endian modified pcap files.) So the buffering, the framing and
//! the packet records (legacy records; Enhanced, Simple and obsolete Packet
//! Blocks, their captured length checked against the block) are handled here,
//! and `pcap-parser` parses only complete, framed Interface Description
//! Blocks, for their options; every other block is skipped whole.
//!
//! Each record is returned as soon as its bytes have been read: one `read`
//! call per refill, never waiting for the buffer to fill, so a capture
//! arriving through a pipe (`tcpdump -U -w - | ...`) comes out packet by
//! packet.
//!
//! Packets come out as [`Record`]s numbered from 1 in file order, like
//! tcpdump's `--number` and Wireshark's `frame.number`.

use std::io::{self, Read};

use pcap_parser::pcapng::{
    parse_interfacedescriptionblock_be, parse_interfacedescriptionblock_le, OptionCode,
};

use super::error::{BlockLengthProblem, CaptureError};
use super::timestamp::Timestamp;

/// Default buffer capacity: 1 MiB, enough for 256 KiB snapshots and BIG TCP frames.
pub const DEFAULT_BUFFER_CAPACITY: usize = 1 << 20;
/// Smallest buffer capacity accepted by [`CaptureReader::with_capacity`].
pub const MIN_BUFFER_CAPACITY: usize = 4096;
/// The buffer's size until a record needs more: 64 KiB holds a few hundred
/// header-only records or a few full-size ones per read.
pub const INITIAL_BUFFER: usize = 64 * 1024;
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
/// Length of the legacy pcap file header.
const PCAP_HEADER_LEN: usize = 24;
/// Length of a legacy pcap record header (Kuznetzov's modified format: 24).
const PCAP_RECORD_HEADER_LEN: usize = 16;
/// Length of a record header in Kuznetzov's modified pcap format.
const PCAP_MODIFIED_RECORD_HEADER_LEN: usize = 24;
/// Microseconds per second.
const MICROS: u64 = 1_000_000;
/// Nanoseconds per second.
const NANOS: u64 = 1_000_000_000;

/// pcapng Section Header Block type (a palindrome: the same in both byte orders).
pub const SHB_TYPE: u32 = 0x0a0d_0d0a;
/// pcapng Interface Description Block type.
pub const IDB_TYPE: u32 = 1;
/// pcapng (obsolete) Packet Block type.
pub const PB_TYPE: u32 = 2;
/// pcapng Simple Packet Block type.
pub const SPB_TYPE: u32 = 3;
/// pcapng Name Resolution Block type.
pub const NRB_TYPE: u32 = 4;
/// pcapng Interface Statistics Block type.
pub const ISB_TYPE: u32 = 5;
/// pcapng Enhanced Packet Block type.
pub const EPB_TYPE: u32 = 6;
/// pcapng systemd Journal Export Block type.
pub const SJE_TYPE: u32 = 9;
/// pcapng Decryption Secrets Block type.
pub const DSB_TYPE: u32 = 0x0a;
/// pcapng Custom Block type (may be copied).
pub const CB_TYPE: u32 = 0x0bad;
/// pcapng Custom Block type (do not copy).
pub const DCB_TYPE: u32 = 0x4000_0bad;
/// Apple's Process Information Block type.
pub const PIB_TYPE: u32 = 0x8000_0001;
/// The byte-order magic of a section header, as a little-endian section stores it.
const BYTE_ORDER_MAGIC_LE: [u8; 4] = [0x4d, 0x3c, 0x2b, 0x1a];
/// The byte-order magic of a section header, as a big-endian section stores it.
const BYTE_ORDER_MAGIC_BE: [u8; 4] = [0x1a, 0x2b, 0x3c, 0x4d];
/// Block type, leading and trailing length: the 12 bytes every pcapng block has.
pub const BLOCK_OVERHEAD: u32 = 12;

/// The smallest length a pcapng block of this type can have: its fixed
/// fields plus the 12 bytes of type and both lengths.
pub fn min_block_len(block_type: u32) -> u32 {
    match block_type {
        // type, length, byte-order magic, versions, section length, length
        SHB_TYPE => 28,
        // link type, reserved, snap length
        IDB_TYPE => 20,
        // interface, drops, timestamp, captured and original length
        PB_TYPE | EPB_TYPE => 32,
        // original length
        SPB_TYPE => 16,
        // interface, timestamp
        ISB_TYPE => 24,
        // secrets type and length
        DSB_TYPE => 20,
        // private enterprise number
        CB_TYPE | DCB_TYPE => 16,
        // process id
        PIB_TYPE => 16,
        _ => BLOCK_OVERHEAD,
    }
}

/// Name of a pcapng block type, for messages.
pub fn block_name(block_type: u32) -> &'static str {
    match block_type {
        SHB_TYPE => "Section Header Block",
        IDB_TYPE => "Interface Description Block",
        PB_TYPE => "Packet Block (obsolete)",
        SPB_TYPE => "Simple Packet Block",
        NRB_TYPE => "Name Resolution Block",
        ISB_TYPE => "Interface Statistics Block",
        EPB_TYPE => "Enhanced Packet Block",
        SJE_TYPE => "systemd Journal Export Block",
        DSB_TYPE => "Decryption Secrets Block",
        CB_TYPE | DCB_TYPE => "Custom Block",
        PIB_TYPE => "Process Information Block",
        _ => "block of unknown type",
    }
}

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

/// The reader's one buffer: bytes `start..end` are read and not yet consumed.
struct Buffer {
    buf: Box<[u8]>,
    /// The size `buf` may grow to.
    capacity: usize,
    start: usize,
    end: usize,
    /// A read returned 0: the stream has ended.
    exhausted: bool,
}

impl Buffer {
    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Grows the buffer to `len` bytes (never beyond its capacity), keeping its contents.
    fn grow(&mut self, len: usize) {
        let len = len.min(self.capacity);
        if len > self.buf.len() {
            let mut v = std::mem::take(&mut self.buf).into_vec();
            v.resize(len, 0);
            self.buf = v.into_boxed_slice();
        }
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Moves the unread bytes to the front, then makes one read (retrying
    /// only on `Interrupted`) into the free space, so whatever has arrived is
    /// handed on at once. The number of bytes read; 0 when the stream ended
    /// or the buffer is full.
    fn refill<R: Read>(&mut self, reader: &mut R) -> io::Result<usize> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= self.capacity {
                return Ok(0);
            }
            self.grow(self.buf.len().saturating_mul(2));
        }
        loop {
            match reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.exhausted = true;
                    return Ok(0);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
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

/// What one step of the reader produced, owned so the borrow ends.
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

/// Why a pcapng block's framing is wrong (before offsets are attached).
enum FrameError {
    ByteOrder,
    Length {
        block_type: u32,
        length: u32,
        problem: BlockLengthProblem,
    },
    TooLarge,
}

/// The outer frame of one pcapng block, checked.
#[derive(Debug, Clone, Copy)]
struct BlockFrame {
    block_type: u32,
    len: usize,
    big_endian: bool,
}

fn u32_at(data: &[u8], at: usize, big_endian: bool) -> u32 {
    let mut b = [0u8; 4];
    if let Some(src) = data.get(at..at + 4) {
        b.copy_from_slice(src);
    }
    if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

fn u16_at(data: &[u8], at: usize, big_endian: bool) -> u16 {
    let mut b = [0u8; 2];
    if let Some(src) = data.get(at..at + 2) {
        b.copy_from_slice(src);
    }
    if big_endian {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    }
}

/// Checks the frame of the pcapng block at the start of `data`: `Ok(None)`
/// when more bytes are needed to decide (or to hold the whole block).
fn frame_block(
    data: &[u8],
    section_big_endian: bool,
    limit: usize,
) -> Result<Option<BlockFrame>, FrameError> {
    // Type and length decide everything but a section header's byte order,
    // which its next four bytes give.
    if data.len() < 8 {
        return Ok(None);
    }
    let (block_type, big_endian) = if data[..4] == PCAPNG_MAGIC {
        let Some(byte_order) = data.get(8..12) else {
            return Ok(None);
        };
        let big_endian = match byte_order {
            m if *m == BYTE_ORDER_MAGIC_LE => false,
            m if *m == BYTE_ORDER_MAGIC_BE => true,
            _ => return Err(FrameError::ByteOrder),
        };
        (SHB_TYPE, big_endian)
    } else {
        (u32_at(data, 0, section_big_endian), section_big_endian)
    };
    let length = u32_at(data, 4, big_endian);
    let length_error = |problem| FrameError::Length {
        block_type,
        length,
        problem,
    };
    let minimum = min_block_len(block_type);
    if length < minimum {
        return Err(length_error(BlockLengthProblem::BelowMinimum { minimum }));
    }
    if !length.is_multiple_of(4) {
        return Err(length_error(BlockLengthProblem::NotMultipleOf4));
    }
    let len = length as usize;
    if len > limit {
        return Err(FrameError::TooLarge);
    }
    if data.len() < len {
        return Ok(None);
    }
    let trailer = u32_at(data, len - 4, big_endian);
    if trailer != length {
        return Err(length_error(BlockLengthProblem::TrailerMismatch {
            trailer,
        }));
    }
    Ok(Some(BlockFrame {
        block_type,
        len,
        big_endian,
    }))
}

/// Reads until `buf` is full or the stream ends; the number of bytes read.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A streaming reader of pcap and pcapng files.
///
/// ```
/// use capture::CaptureReader;
/// // A pcap header (microsecond, little-endian, LINKTYPE_RAW) and no packets.
/// let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
/// file.extend_from_slice(&[0; 8]);
/// file.extend_from_slice(&65535u32.to_le_bytes());
/// file.extend_from_slice(&101u32.to_le_bytes());
/// let mut reader = CaptureReader::new(&file[..]).unwrap();
/// assert!(reader.next_record().unwrap().is_none());
/// ```
pub struct CaptureReader<R: Read> {
    reader: R,
    buffer: Buffer,
    format: CaptureFormat,
    interfaces: Vec<Interface>,
    /// Largest record or block accepted: half the buffer.
    limit: usize,
    /// Legacy pcap: the file's byte order.
    pcap_big_endian: bool,
    /// Legacy pcap: length of each record header (16, or 24 in the modified format).
    pcap_record_header: usize,
    /// pcapng: byte order of the current section.
    section_big_endian: bool,
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
    /// Records larger than half the capacity are refused.
    ///
    /// Reads the file header (the pcap header, or pcapng's first section
    /// header block) and nothing more.
    pub fn with_capacity(mut reader: R, capacity: usize) -> Result<Self, CaptureError> {
        let capacity = capacity.max(MIN_BUFFER_CAPACITY);
        let limit = capacity / 2;
        let io_error = |source| CaptureError::Io { offset: 0, source };
        let truncated = CaptureError::Truncated {
            offset: 0,
            frame: 1,
        };
        let mut buf = vec![0u8; capacity.min(INITIAL_BUFFER)].into_boxed_slice();
        let got = read_full(&mut reader, &mut buf[..4]).map_err(io_error)?;
        let mut magic = [0u8; 4];
        magic.copy_from_slice(&buf[..4]);
        if got == 0 {
            return Err(CaptureError::Empty);
        }
        if got < magic.len() {
            let prefix = &magic[..got];
            if PCAP_MAGICS.iter().any(|m| m.starts_with(prefix)) || PCAPNG_MAGIC.starts_with(prefix)
            {
                return Err(truncated);
            }
            return Err(CaptureError::NotACapture { magic });
        }
        let mut read_to =
            |buf: &mut Box<[u8]>, from: usize, to: usize| -> Result<(), CaptureError> {
                if to > buf.len() && to <= capacity {
                    // A first section header longer than the initial buffer
                    // (its length is within the limit: checked before).
                    let mut v = std::mem::take(buf).into_vec();
                    v.resize(to, 0);
                    *buf = v.into_boxed_slice();
                }
                if read_full(&mut reader, &mut buf[from..to]).map_err(io_error)? < to - from {
                    return Err(CaptureError::Truncated {
                        offset: 0,
                        frame: 1,
                    });
                }
                Ok(())
            };
        let mut interfaces = Vec::new();
        let (format, end) = if magic == PCAPNG_MAGIC {
            // The first section header is read whole and its frame checked;
            // `step` consumes it like any later one.
            read_to(&mut buf, 4, BLOCK_OVERHEAD as usize)?;
            let frame_error = |e| frame_error(e, 0, 1, limit);
            let head = &buf[..BLOCK_OVERHEAD as usize];
            let len = match frame_block(head, false, limit).map_err(frame_error)? {
                Some(frame) => frame.len,
                None => u32_at(head, 4, head[8..12] == BYTE_ORDER_MAGIC_BE) as usize,
            };
            read_to(&mut buf, BLOCK_OVERHEAD as usize, len)?;
            frame_block(&buf[..len], false, limit).map_err(frame_error)?;
            (CaptureFormat::PcapNg, len)
        } else if PCAP_MAGICS.contains(&magic) {
            read_to(&mut buf, 4, PCAP_HEADER_LEN)?;
            let be = magic[0] == 0xa1;
            let nanosecond = magic == PCAP_MAGICS[2] || magic == PCAP_MAGICS[3];
            interfaces.push(Interface {
                // The upper bits of the link-type field carry FCS information.
                linktype: u32_at(&buf, 20, be) & 0xffff,
                units_per_sec: if nanosecond { NANOS } else { MICROS },
                offset_secs: 0,
                snaplen: u32_at(&buf, 16, be),
            });
            (CaptureFormat::Pcap { nanosecond }, PCAP_HEADER_LEN)
        } else {
            return Err(CaptureError::NotACapture { magic });
        };
        let modified = magic == PCAP_MAGICS[4] || magic == PCAP_MAGICS[5];
        let mut this = CaptureReader {
            reader,
            buffer: Buffer {
                buf,
                capacity,
                start: 0,
                end,
                exhausted: false,
            },
            format,
            interfaces,
            limit,
            pcap_big_endian: magic[0] == 0xa1,
            pcap_record_header: if modified {
                PCAP_MODIFIED_RECORD_HEADER_LEN
            } else {
                PCAP_RECORD_HEADER_LEN
            },
            section_big_endian: false,
            pending: 0,
            offset: 0,
            frames: 0,
            done: false,
        };
        if let CaptureFormat::Pcap { .. } = format {
            this.consume(PCAP_HEADER_LEN);
        }
        Ok(this)
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
    /// Returns as soon as the record's bytes have been read; blocks only
    /// while they have not all arrived. After an error the reader is
    /// finished: later calls return `Ok(None)`.
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
                        .buffer
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

    /// True when the next call of [`next_record`](Self::next_record) can
    /// answer from the bytes already read, without waiting for input: the
    /// next packet record is wholly buffered (after any other blocks), or
    /// the answer is an error or the end of the stream.
    ///
    /// A tool writing through a buffer flushes it when this is false, so that
    /// what it has written appears before it waits for more packets: `tcpdump
    /// -U -w - | firewall-check dump -` then prints as packets arrive, while
    /// reading a file flushes about once per buffer.
    pub fn has_buffered_record(&self) -> bool {
        if self.done || self.buffer.exhausted {
            return true;
        }
        let data = self.buffer.data().get(self.pending..).unwrap_or(&[]);
        match self.format {
            CaptureFormat::Pcap { .. } => {
                let hdr = self.pcap_record_header;
                data.len() >= hdr && {
                    let caplen = u32_at(data, 8, self.pcap_big_endian) as usize;
                    caplen > self.limit - hdr || data.len() >= hdr + caplen
                }
            }
            CaptureFormat::PcapNg => {
                let mut rest = data;
                let mut big_endian = self.section_big_endian;
                loop {
                    match frame_block(rest, big_endian, self.limit) {
                        Err(_) => return true,
                        Ok(None) => return false,
                        Ok(Some(block)) => {
                            match block.block_type {
                                EPB_TYPE | SPB_TYPE | PB_TYPE => return true,
                                SHB_TYPE => big_endian = block.big_endian,
                                _ => {}
                            }
                            rest = &rest[block.len..];
                        }
                    }
                }
            }
        }
    }

    fn consume(&mut self, n: usize) {
        // No shift here: `refill` moves the unread tail to the front when the
        // buffer runs out, which copies one partial record per buffer instead
        // of the rest of the buffer after every record.
        self.buffer.consume(n);
        self.offset = self.offset.saturating_add(n as u64);
    }

    /// One read into the buffer. Called only when the bytes buffered do not
    /// hold the next record, so the end of the stream here is a truncation.
    fn refill(&mut self) -> Result<(), CaptureError> {
        if self.buffer.exhausted {
            return Err(self.truncated());
        }
        match self.buffer.refill(&mut self.reader) {
            Ok(0) if self.buffer.exhausted => {
                if self.buffer.data().is_empty() {
                    Ok(())
                } else {
                    Err(self.truncated())
                }
            }
            // The buffer is full and still does not hold the record (the
            // frame checks make this unreachable; kept as a guard).
            Ok(0) => Err(CaptureError::RecordTooLarge {
                offset: self.offset,
                frame: self.frames + 1,
                limit: self.limit,
            }),
            Ok(_) => Ok(()),
            Err(source) => Err(CaptureError::Io {
                offset: self.offset,
                source,
            }),
        }
    }

    fn truncated(&self) -> CaptureError {
        CaptureError::Truncated {
            offset: self.offset,
            frame: self.frames + 1,
        }
    }

    /// The next step over the buffered bytes, turned into an owned [`Step`].
    fn step(&mut self) -> Result<Step, CaptureError> {
        if self.buffer.data().is_empty() {
            return Ok(if self.buffer.exhausted {
                Step::Eof
            } else {
                Step::NeedMore
            });
        }
        match self.format {
            CaptureFormat::Pcap { .. } => self.step_pcap(),
            CaptureFormat::PcapNg => self.step_pcapng(),
        }
    }

    fn step_pcap(&mut self) -> Result<Step, CaptureError> {
        let data = self.buffer.data();
        let hdr = self.pcap_record_header;
        if data.len() < hdr {
            return Ok(Step::NeedMore);
        }
        let be = self.pcap_big_endian;
        let caplen = u32_at(data, 8, be) as usize;
        if caplen > self.limit - hdr {
            return Err(CaptureError::RecordTooLarge {
                offset: self.offset,
                frame: self.frames + 1,
                limit: self.limit,
            });
        }
        if data.len() < hdr + caplen {
            return Ok(Step::NeedMore);
        }
        // The constructor declared the file's one interface.
        let Some(&iface) = self.interfaces.first() else {
            return Err(CaptureError::Corrupt {
                offset: self.offset,
                frame: self.frames + 1,
                reason: "packet record before the file header",
            });
        };
        let ts = Timestamp::from_units(
            u64::from(u32_at(data, 4, be)),
            iface.units_per_sec,
            i64::from(u32_at(data, 0, be)),
        );
        Ok(Step::Packet {
            consumed: hdr + caplen,
            start: hdr,
            len: caplen,
            ts,
            iface,
            origlen: u32_at(data, 12, be),
        })
    }

    fn step_pcapng(&mut self) -> Result<Step, CaptureError> {
        let offset = self.offset;
        let frame = self.frames + 1;
        let corrupt = |reason| CaptureError::Corrupt {
            offset,
            frame,
            reason,
        };
        let data = self.buffer.data();
        let Some(block) = frame_block(data, self.section_big_endian, self.limit)
            .map_err(|e| frame_error(e, offset, frame, self.limit))?
        else {
            return Ok(Step::NeedMore);
        };
        let be = block.big_endian;
        let len = block.len;
        let unknown_interface = |interface: u32, declared: usize| CaptureError::UnknownInterface {
            offset,
            frame,
            interface,
            declared,
        };
        match block.block_type {
            EPB_TYPE | PB_TYPE => {
                // EPB: interface (4), timestamp (8), captured, original length.
                // PB: interface (2), drops (2), timestamp (8), captured, original length.
                let if_id = if block.block_type == EPB_TYPE {
                    u32_at(data, 8, be)
                } else {
                    u32::from(u16_at(data, 8, be))
                };
                let caplen = u32_at(data, 20, be) as usize;
                let origlen = u32_at(data, 24, be);
                if caplen > len - 32 {
                    return Err(corrupt(
                        "packet block's captured length runs past the end of the block",
                    ));
                }
                let Some(&iface) = self.interfaces.get(if_id as usize) else {
                    return Err(unknown_interface(if_id, self.interfaces.len()));
                };
                let units =
                    (u64::from(u32_at(data, 12, be)) << 32) | u64::from(u32_at(data, 16, be));
                let ts = Timestamp::from_units(units, iface.units_per_sec, iface.offset_secs);
                Ok(Step::Packet {
                    consumed: len,
                    start: 28,
                    len: caplen,
                    ts,
                    iface,
                    origlen,
                })
            }
            SPB_TYPE => {
                let Some(&iface) = self.interfaces.first() else {
                    return Err(unknown_interface(0, 0));
                };
                let origlen = u32_at(data, 8, be);
                // The captured length is implied: the original length, cut to
                // the interface's snap length and to the block.
                let mut caplen = (origlen as usize).min(len - 16);
                if iface.snaplen > 0 {
                    caplen = caplen.min(iface.snaplen as usize);
                }
                Ok(Step::Packet {
                    consumed: len,
                    start: 12,
                    len: caplen,
                    ts: None,
                    iface,
                    origlen,
                })
            }
            SHB_TYPE => {
                self.section_big_endian = be;
                self.interfaces.clear();
                Ok(Step::Skip(len))
            }
            IDB_TYPE => {
                if self.interfaces.len() >= MAX_INTERFACES {
                    return Err(CaptureError::TooManyInterfaces {
                        offset,
                        limit: MAX_INTERFACES,
                    });
                }
                let iface = interface_of(&data[..len], be).map_err(corrupt)?;
                self.interfaces.push(iface);
                Ok(Step::Skip(len))
            }
            // Name resolution, statistics, secrets, custom and unknown blocks
            // carry nothing the tools use: skipped whole, unparsed.
            _ => Ok(Step::Skip(len)),
        }
    }
}

/// The interface an Interface Description Block describes (`block`: the
/// whole block, its frame already checked, in the section's byte order
/// `be`); the error is what is wrong with its contents.
fn interface_of(block: &[u8], be: bool) -> Result<Interface, &'static str> {
    let parsed = if be {
        parse_interfacedescriptionblock_be(block)
    } else {
        parse_interfacedescriptionblock_le(block)
    };
    let idb = match parsed {
        Ok(([], idb)) => idb,
        _ => return Err("malformed interface description block"),
    };
    let Some(units_per_sec) = ts_resolution(idb.if_tsresol) else {
        return Err("invalid if_tsresol option");
    };
    // if_tsoffset is read here in the section's byte order
    // (pcap-parser 0.16 reads it little-endian in every section).
    let offset_secs = idb
        .options
        .iter()
        .rev()
        .find(|o| o.code == OptionCode::IfTsoffset)
        .and_then(|o| <[u8; 8]>::try_from(o.value.get(..8)?).ok())
        .map_or(0, |b| {
            if be {
                i64::from_be_bytes(b)
            } else {
                i64::from_le_bytes(b)
            }
        });
    Ok(Interface {
        linktype: (idb.linktype.0 as u32) & 0xffff,
        units_per_sec,
        offset_secs,
        snaplen: idb.snaplen,
    })
}

/// A framing problem as a [`CaptureError`] at `offset`.
fn frame_error(e: FrameError, offset: u64, frame: u64, limit: usize) -> CaptureError {
    match e {
        FrameError::ByteOrder => CaptureError::Corrupt {
            offset,
            frame,
            reason: "section header's byte-order magic is neither 1a2b3c4d nor 4d3c2b1a",
        },
        FrameError::Length {
            block_type,
            length,
            problem,
        } => CaptureError::BadBlockLength {
            offset,
            frame,
            block_type,
            length,
            problem,
        },
        FrameError::TooLarge => CaptureError::RecordTooLarge {
            offset,
            frame,
            limit,
        },
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

/// The tests' slow reader, shared with the conformance tests.
#[cfg(test)]
#[path = "../tests/support/trickle.rs"]
mod trickle;

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

    use super::trickle::Trickle;

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

    /// Decodes a hex string.
    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Every record of `file`, or the error that ended the stream.
    fn read_all(file: &[u8]) -> Result<Vec<(u64, Vec<u8>)>, CaptureError> {
        let mut reader = CaptureReader::with_capacity(file, MIN_BUFFER_CAPACITY)?;
        let mut out = Vec::new();
        while let Some(r) = reader.next_record()? {
            out.push((r.frame, r.data.to_vec()));
        }
        Ok(out)
    }

    /// One pcapng block: type, length, body (padded to 4 bytes), length.
    fn block(block_type: u32, body: &[u8], be: bool) -> Vec<u8> {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = (body.len() + 12) as u32;
        let w = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut b = w(block_type).to_vec();
        b.extend_from_slice(&w(len));
        b.extend_from_slice(&body);
        b.extend_from_slice(&w(len));
        b
    }

    /// A section header and one Ethernet interface (microseconds).
    fn shb_idb(be: bool) -> Vec<u8> {
        let bom: [u8; 4] = if be {
            [0x1a, 0x2b, 0x3c, 0x4d]
        } else {
            [0x4d, 0x3c, 0x2b, 0x1a]
        };
        let mut shb_body = bom.to_vec();
        let ver: [u8; 4] = if be { [0, 1, 0, 0] } else { [1, 0, 0, 0] };
        shb_body.extend_from_slice(&ver);
        shb_body.extend_from_slice(&[0xff; 8]);
        let mut f = block(SHB_TYPE, &shb_body, be);
        let mut idb = Vec::new();
        if be {
            idb.extend_from_slice(&1u16.to_be_bytes());
            idb.extend_from_slice(&[0, 0]);
            idb.extend_from_slice(&0u32.to_be_bytes());
        } else {
            idb.extend_from_slice(&1u16.to_le_bytes());
            idb.extend_from_slice(&[0, 0]);
            idb.extend_from_slice(&0u32.to_le_bytes());
        }
        f.extend(block(IDB_TYPE, &idb, be));
        f
    }

    /// An Enhanced Packet Block (interface 0) holding `data`.
    fn epb(data: &[u8], be: bool) -> Vec<u8> {
        let w = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut body = Vec::new();
        for v in [0, 1, 2, data.len() as u32, data.len() as u32] {
            body.extend_from_slice(&w(v));
        }
        body.extend_from_slice(data);
        block(EPB_TYPE, &body, be)
    }

    #[test]
    fn process_information_block_with_length_4_is_refused_before_parsing() {
        // Issue 12 section 5 (fuzz/regressions/capture_read/pib-length-4): a
        // Process Information Block whose length (4) is below the 12 bytes of
        // any block made pcap-parser 0.16 subtract with overflow. The fuzzed
        // file's section header also has a wrong trailing length: refused
        // there, at byte 0.
        let mut file =
            hex("0a0d0d0a1c0000004d3c2b1a01000000ffffff8cae99e58f338ab6a601000080040000000000cd");
        assert_eq!(file.len(), 39);
        assert!(matches!(
            read_all(&file),
            Err(CaptureError::BadBlockLength {
                offset: 0,
                block_type: SHB_TYPE,
                length: 28,
                problem: BlockLengthProblem::TrailerMismatch { .. },
                ..
            })
        ));
        // With the trailer mended, the Process Information Block at byte 28
        // is refused for its length.
        file[24..28].copy_from_slice(&28u32.to_le_bytes());
        match read_all(&file) {
            Err(CaptureError::BadBlockLength {
                offset: 28,
                frame: 1,
                block_type: PIB_TYPE,
                length: 4,
                problem: BlockLengthProblem::BelowMinimum { minimum: 16 },
            }) => {}
            other => panic!("expected BadBlockLength at byte 28, got {other:?}"),
        }
        let msg = read_all(&file).unwrap_err().to_string();
        assert!(
            msg.contains("byte 28") && msg.contains("Process Information Block"),
            "{msg}"
        );
    }

    #[test]
    fn every_block_length_below_its_minimum_is_refused() {
        for block_type in [
            IDB_TYPE, PB_TYPE, SPB_TYPE, NRB_TYPE, ISB_TYPE, EPB_TYPE, SJE_TYPE, DSB_TYPE, CB_TYPE,
            DCB_TYPE, PIB_TYPE, 0x1234,
        ] {
            let minimum = min_block_len(block_type);
            assert!(minimum >= BLOCK_OVERHEAD);
            for length in [0u32, 4, 8, minimum - 4] {
                if length >= minimum {
                    continue;
                }
                let mut file = shb_idb(false);
                let start = file.len() as u64;
                file.extend_from_slice(&block_type.to_le_bytes());
                file.extend_from_slice(&length.to_le_bytes());
                file.extend_from_slice(&[0; 64]);
                match read_all(&file) {
                    Err(CaptureError::BadBlockLength {
                        offset,
                        block_type: t,
                        length: l,
                        problem: BlockLengthProblem::BelowMinimum { minimum: m },
                        ..
                    }) => {
                        assert_eq!((offset, t, l, m), (start, block_type, length, minimum));
                    }
                    other => panic!("type {block_type:#x} length {length}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn length_not_multiple_of_4_and_trailer_mismatch_are_refused() {
        let mut file = shb_idb(true);
        let mut bad = epb(&[1, 2, 3, 4], true);
        bad[4..8].copy_from_slice(&37u32.to_be_bytes());
        file.extend_from_slice(&bad);
        assert!(matches!(
            read_all(&file),
            Err(CaptureError::BadBlockLength {
                length: 37,
                problem: BlockLengthProblem::NotMultipleOf4,
                ..
            })
        ));
        let mut file = shb_idb(false);
        let mut bad = epb(&[1, 2, 3, 4], false);
        let n = bad.len();
        bad[n - 4..].copy_from_slice(&100u32.to_le_bytes());
        file.extend_from_slice(&bad);
        assert!(matches!(
            read_all(&file),
            Err(CaptureError::BadBlockLength {
                length: 36,
                problem: BlockLengthProblem::TrailerMismatch { trailer: 100 },
                ..
            })
        ));
    }

    #[test]
    fn section_header_byte_order_must_be_one_of_two() {
        let mut file = shb_idb(false);
        file[8..12].copy_from_slice(&[1, 2, 3, 4]);
        assert!(matches!(
            CaptureReader::new(&file[..]),
            Err(CaptureError::Corrupt { offset: 0, .. })
        ));
        // A later section with a bad byte order: refused at its offset.
        let mut file = shb_idb(false);
        file.extend(epb(&[9; 5], false));
        let second = file.len() as u64;
        let mut next = shb_idb(true);
        next[8..12].copy_from_slice(&[0, 0, 0, 0]);
        file.extend(next);
        let mut reader = CaptureReader::new(&file[..]).unwrap();
        assert_eq!(reader.next_record().unwrap().unwrap().data, &[9; 5]);
        match reader.next_record() {
            Err(CaptureError::Corrupt { offset, .. }) => assert_eq!(offset, second),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sections_of_both_byte_orders_follow_each_other() {
        let mut file = shb_idb(false);
        file.extend(epb(b"little", false));
        file.extend(shb_idb(true));
        file.extend(epb(b"big-endian", true));
        file.extend(shb_idb(false));
        file.extend(epb(b"again", false));
        let records = read_all(&file).unwrap();
        let data: Vec<&[u8]> = records.iter().map(|(_, d)| &d[..]).collect();
        assert_eq!(data, [&b"little"[..], b"big-endian", b"again"]);
    }

    #[test]
    fn captured_length_past_the_block_is_corrupt() {
        let mut file = shb_idb(false);
        let mut bad = epb(&[7; 8], false);
        bad[20..24].copy_from_slice(&9u32.to_le_bytes());
        file.extend_from_slice(&bad);
        assert!(matches!(read_all(&file), Err(CaptureError::Corrupt { .. })));
    }

    #[test]
    fn oversized_block_is_refused_from_its_header_alone() {
        // Only the block header is there: the length alone decides, the
        // reader does not wait for (or read) the body.
        let mut file = shb_idb(false);
        file.extend_from_slice(&EPB_TYPE.to_le_bytes());
        file.extend_from_slice(&(1u32 << 20).to_le_bytes());
        file.extend_from_slice(&[0; 4]);
        assert!(matches!(
            read_all(&file),
            Err(CaptureError::RecordTooLarge { limit: 2048, .. })
        ));
        // The same for a legacy record header.
        let mut file = synthetic_pcap(0);
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&5000u32.to_le_bytes());
        file.extend_from_slice(&5000u32.to_le_bytes());
        assert!(matches!(
            read_all(&file),
            Err(CaptureError::RecordTooLarge { .. })
        ));
    }

    #[test]
    fn obsolete_packet_block_is_a_packet() {
        let mut file = shb_idb(true);
        let mut body = Vec::new();
        body.extend_from_slice(&0u16.to_be_bytes()); // interface
        body.extend_from_slice(&3u16.to_be_bytes()); // drops
        body.extend_from_slice(&0u32.to_be_bytes());
        body.extend_from_slice(&1_500_000u32.to_be_bytes());
        body.extend_from_slice(&3u32.to_be_bytes());
        body.extend_from_slice(&60u32.to_be_bytes());
        body.extend_from_slice(b"abc");
        file.extend(block(PB_TYPE, &body, true));
        let mut reader = CaptureReader::new(&file[..]).unwrap();
        let r = reader.next_record().unwrap().unwrap();
        assert_eq!(r.data, b"abc");
        assert_eq!(r.origlen, 60);
        assert!(r.is_truncated());
        assert_eq!(r.ts, Timestamp::from_units(1_500_000, MICROS, 0));
        assert!(reader.next_record().unwrap().is_none());
    }

    #[test]
    fn modified_big_endian_pcap_records_use_24_byte_headers() {
        let mut file = vec![0xa1, 0xb2, 0xcd, 0x34, 0, 2, 0, 4];
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65535u32.to_be_bytes());
        file.extend_from_slice(&101u32.to_be_bytes());
        for payload in [&b"first"[..], b"second"] {
            file.extend_from_slice(&7u32.to_be_bytes());
            file.extend_from_slice(&8u32.to_be_bytes());
            file.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            file.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            file.extend_from_slice(&[0; 8]); // ifindex, protocol, type, pad
            file.extend_from_slice(payload);
        }
        let records = read_all(&file).unwrap();
        assert_eq!(records, [(1, b"first".to_vec()), (2, b"second".to_vec())]);
    }

    /// A `Read` that hands out `chunk` bytes per call and counts its calls.
    struct Counted<'a> {
        data: &'a [u8],
        chunk: usize,
        reads: std::rc::Rc<std::cell::Cell<u32>>,
    }

    impl Read for Counted<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads.set(self.reads.get() + 1);
            let n = buf.len().min(self.chunk).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn has_buffered_record_says_exactly_when_the_next_call_reads() {
        let mut ng = shb_idb(false);
        for i in 0..200u32 {
            if i % 7 == 0 {
                ng.extend(block(NRB_TYPE, &[0; 8], i > 100));
            }
            if i == 100 {
                ng.extend(shb_idb(true));
            }
            let payload = vec![i as u8; 1 + (i as usize * 37) % 300];
            ng.extend(epb(&payload, i >= 100));
        }
        for file in [synthetic_pcap(300), ng] {
            for chunk in [1, 50, 333, 5000] {
                let reads = std::rc::Rc::new(std::cell::Cell::new(0));
                let source = Counted {
                    data: &file,
                    chunk,
                    reads: reads.clone(),
                };
                let mut reader = CaptureReader::with_capacity(source, MIN_BUFFER_CAPACITY).unwrap();
                let (mut without_read, mut with_read) = (0, 0);
                loop {
                    let buffered = reader.has_buffered_record();
                    let before = reads.get();
                    let more = reader.next_record().unwrap().is_some();
                    let did_read = reads.get() > before;
                    assert_eq!(
                        buffered,
                        !did_read,
                        "chunk {chunk}, at byte {}",
                        reader.offset()
                    );
                    if did_read {
                        with_read += 1;
                    } else {
                        without_read += 1;
                    }
                    if !more {
                        break;
                    }
                }
                assert!(with_read > 0, "chunk {chunk}");
                if chunk == 5000 {
                    // Several records per read: most come without one.
                    assert!(without_read > with_read, "chunk {chunk}");
                }
            }
        }
    }

    #[test]
    fn if_tsoffset_is_read_in_the_section_byte_order() {
        for be in [false, true] {
            let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
            let mut file = shb_idb(be);
            // Replace the IDB by one with if_tsoffset = 1,000,000,000 s.
            let idb_len = 20;
            file.truncate(file.len() - idb_len);
            let mut body = Vec::new();
            body.extend_from_slice(&w16(1));
            body.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
            body.extend_from_slice(&w16(14));
            body.extend_from_slice(&w16(8));
            let offset: i64 = 1_000_000_000;
            body.extend_from_slice(&if be {
                offset.to_be_bytes()
            } else {
                offset.to_le_bytes()
            });
            body.extend_from_slice(&[0; 4]); // opt_endofopt
            file.extend(block(IDB_TYPE, &body, be));
            file.extend(epb(b"x", be));
            let mut reader = CaptureReader::new(&file[..]).unwrap();
            let r = reader.next_record().unwrap().unwrap();
            // epb() stores timestamp units (high 1, low 2) in microseconds.
            let units = (1u64 << 32) | 2;
            assert_eq!(
                r.ts,
                Timestamp::from_units(units, MICROS, offset),
                "big-endian {be}"
            );
        }
    }

    #[test]
    fn block_longer_than_the_rest_of_the_file_is_truncation_at_its_start() {
        let mut file = shb_idb(false);
        file.extend(epb(b"whole", false));
        let start = file.len() as u64;
        let cut = epb(&[5; 40], false);
        file.extend_from_slice(&cut[..cut.len() - 10]);
        for chunk in [1, 7, 4096] {
            let source = Trickle { data: &file, chunk };
            let mut reader = CaptureReader::with_capacity(source, MIN_BUFFER_CAPACITY).unwrap();
            assert_eq!(reader.next_record().unwrap().unwrap().data, b"whole");
            match reader.next_record() {
                Err(CaptureError::Truncated { offset, frame: 2 }) => assert_eq!(offset, start),
                other => panic!("chunk {chunk}: {other:?}"),
            }
            assert!(
                reader.next_record().unwrap().is_none(),
                "finished after an error"
            );
        }
    }
}
