//! Writing captures: the one pcap and pcapng writer of the tools, their
//! tests, the labs and the bench generator.
//!
//! - [`PcapWriter`]: a classic pcap file (little-endian, version 2.4,
//!   microsecond or nanosecond timestamps, one link type).
//! - [`PcapngWriter`]: a pcapng file, one or more sections, each with its
//!   interfaces (link type, `if_tsresol`) and Enhanced Packet Blocks.
//! - [`copy_records`]: a capture (pcap or pcapng) copied record by record
//!   into a classic pcap, keeping the records a predicate chooses: a capture
//!   without its handshake, or one that lost records as tcpdump's "packets
//!   dropped by kernel" does.
//!
//! ```
//! use capture::writer::{PcapWriter, Resolution};
//! use capture::{CaptureReader, Timestamp};
//!
//! let mut w = PcapWriter::new(Vec::new(), 101, Resolution::Nanos).unwrap();
//! let at = Timestamp { secs: 1, nanos: 5 };
//! w.write(at, &[0x45, 0, 0, 20], 40).unwrap();
//! let file = w.into_inner().unwrap();
//!
//! let mut r = CaptureReader::new(&file[..]).unwrap();
//! let rec = r.next_record().unwrap().unwrap();
//! assert_eq!((rec.ts, rec.linktype, rec.origlen), (Some(at), 101, 40));
//! assert!(rec.is_truncated());
//! ```

use std::io::{self, Read, Write};

use crate::{CaptureError, CaptureFormat, CaptureReader, Record, Timestamp};

/// The snapshot length written in a classic pcap header.
pub const SNAPLEN: u32 = 262_144;
/// pcap's microsecond magic number.
pub const PCAP_MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// pcap's nanosecond magic number.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// pcapng block types, as the reader knows them.
use crate::reader::{EPB_TYPE as EPB, IDB_TYPE as IDB, SHB_TYPE as SHB};
/// pcapng byte-order magic.
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
/// pcapng option code `if_tsresol`.
const IF_TSRESOL: u16 = 9;

/// Timestamp resolution of a classic pcap file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Microseconds (the classic magic number); nanoseconds are cut.
    Micros,
    /// Nanoseconds (the nanosecond magic number).
    Nanos,
}

/// Why a record could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The output failed.
    #[error("writing the capture: {0}")]
    Io(#[from] io::Error),
    /// A classic pcap holds unsigned 32-bit seconds.
    #[error("timestamp {secs} s does not fit a pcap record (0 to 4294967295 s)")]
    Timestamp {
        /// The timestamp's seconds.
        secs: i64,
    },
    /// A record's captured length does not fit 32 bits.
    #[error("a record of {len} bytes is too long for a capture file")]
    TooLong {
        /// The captured length.
        len: usize,
    },
    /// A pcapng packet names an interface its section does not have.
    #[error("interface {id} is not described in this section ({count} interfaces)")]
    NoInterface {
        /// The interface id asked for.
        id: u32,
        /// Interfaces described so far.
        count: usize,
    },
    /// A classic pcap has one link type; a record of another cannot be copied.
    #[error("frame {frame}: link type {linktype} differs from the first record's {first}; a pcap file has one")]
    LinkType {
        /// The record's frame number.
        frame: u64,
        /// Its link type.
        linktype: u32,
        /// The file's link type.
        first: u32,
    },
    /// Reading the capture to copy failed.
    #[error(transparent)]
    Read(#[from] CaptureError),
}

fn len32(len: usize) -> Result<u32, WriteError> {
    u32::try_from(len).map_err(|_| WriteError::TooLong { len })
}

/// A classic pcap file being written.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    resolution: Resolution,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header (link type `linktype`, snapshot length
    /// [`SNAPLEN`]) and returns the writer.
    pub fn new(mut out: W, linktype: u32, resolution: Resolution) -> io::Result<Self> {
        let magic = match resolution {
            Resolution::Micros => PCAP_MAGIC_MICROS,
            Resolution::Nanos => PCAP_MAGIC_NANOS,
        };
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&magic.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&linktype.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, resolution })
    }

    /// Writes one record: captured at `ts`, the bytes `data`, `origlen`
    /// bytes on the wire (at least `data.len()`; a smaller value is raised
    /// to it).
    pub fn write(&mut self, ts: Timestamp, data: &[u8], origlen: u32) -> Result<(), WriteError> {
        let secs = u32::try_from(ts.secs).map_err(|_| WriteError::Timestamp { secs: ts.secs })?;
        let frac = match self.resolution {
            Resolution::Micros => ts.nanos / 1000,
            Resolution::Nanos => ts.nanos,
        };
        let caplen = len32(data.len())?;
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&caplen.to_le_bytes());
        h[12..16].copy_from_slice(&origlen.max(caplen).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)?;
        Ok(())
    }

    /// Flushes and gives the output back.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// An interface of a pcapng section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interface {
    /// Its `LINKTYPE_` value (16 bits in pcapng).
    pub linktype: u16,
    /// Its `if_tsresol` option as written (`None`: not written, meaning
    /// microseconds): below 0x80 a power of ten, else a power of two.
    pub tsresol: Option<u8>,
}

impl Interface {
    /// Timestamp units per second of this interface.
    fn units_per_sec(&self) -> u128 {
        match self.tsresol {
            None => 1_000_000,
            Some(r) if r & 0x80 == 0 => 10u128.saturating_pow(u32::from(r)),
            Some(r) => 1u128.checked_shl(u32::from(r & 0x7f)).unwrap_or(u128::MAX),
        }
    }
}

/// A pcapng file being written (little-endian).
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    interfaces: Vec<Interface>,
}

impl<W: Write> PcapngWriter<W> {
    /// Starts a file with its first section.
    pub fn new(out: W) -> io::Result<Self> {
        let mut w = PcapngWriter {
            out,
            interfaces: Vec::new(),
        };
        w.section()?;
        Ok(w)
    }

    fn block(&mut self, block_type: u32, body: &[u8]) -> io::Result<()> {
        let pad = (4 - body.len() % 4) % 4;
        let len = u32::try_from(12 + body.len() + pad)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pcapng block too long"))?;
        self.out.write_all(&block_type.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(body)?;
        self.out.write_all(&[0; 3][..pad])?;
        self.out.write_all(&len.to_le_bytes())
    }

    /// Starts a new section (its interfaces are described anew).
    pub fn section(&mut self) -> io::Result<()> {
        let mut shb = Vec::with_capacity(16);
        shb.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        self.interfaces.clear();
        self.block(SHB, &shb)
    }

    /// Describes an interface of the current section; returns its id.
    pub fn interface(&mut self, iface: Interface) -> io::Result<u32> {
        let mut idb = Vec::with_capacity(20);
        idb.extend_from_slice(&iface.linktype.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&0u32.to_le_bytes());
        if let Some(r) = iface.tsresol {
            idb.extend_from_slice(&IF_TSRESOL.to_le_bytes());
            idb.extend_from_slice(&1u16.to_le_bytes());
            idb.extend_from_slice(&[r, 0, 0, 0]);
            idb.extend_from_slice(&[0, 0, 0, 0]);
        }
        self.block(IDB, &idb)?;
        self.interfaces.push(iface);
        Ok(u32::try_from(self.interfaces.len() - 1).unwrap_or(u32::MAX))
    }

    /// Writes an Enhanced Packet Block on interface `id`: captured at
    /// `nanos` nanoseconds since the epoch (in the interface's resolution,
    /// cut), the bytes `data`, `origlen` bytes on the wire.
    pub fn packet(
        &mut self,
        id: u32,
        nanos: u64,
        data: &[u8],
        origlen: u32,
    ) -> Result<(), WriteError> {
        let iface = *self
            .interfaces
            .get(id as usize)
            .ok_or(WriteError::NoInterface {
                id,
                count: self.interfaces.len(),
            })?;
        let units = u128::from(nanos) * iface.units_per_sec() / 1_000_000_000;
        let units = u64::try_from(units).unwrap_or(u64::MAX);
        let caplen = len32(data.len())?;
        let mut epb = Vec::with_capacity(20 + data.len());
        epb.extend_from_slice(&id.to_le_bytes());
        epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(units as u32).to_le_bytes());
        epb.extend_from_slice(&caplen.to_le_bytes());
        epb.extend_from_slice(&origlen.to_le_bytes());
        epb.extend_from_slice(data);
        self.block(EPB, &epb)?;
        Ok(())
    }

    /// Flushes and gives the output back.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Copies the records of the capture `input` (pcap or pcapng) for which
/// `keep` is true into a classic pcap on `output`, in the input's
/// resolution (nanoseconds for pcapng), records without a timestamp at 0.
/// Returns the number of records kept. Every record must have the first
/// record's link type; an empty capture gives a header of link type 1.
pub fn copy_records<R: Read, W: Write>(
    input: R,
    output: W,
    mut keep: impl FnMut(&Record<'_>) -> bool,
) -> Result<u64, WriteError> {
    let mut reader = CaptureReader::new(input)?;
    let resolution = match reader.format() {
        CaptureFormat::Pcap { nanosecond: false } => Resolution::Micros,
        _ => Resolution::Nanos,
    };
    let mut out = Some(output);
    let mut writer: Option<(PcapWriter<W>, u32)> = None;
    let mut kept = 0;
    while let Some(rec) = reader.next_record()? {
        if let Some((_, first)) = &writer {
            if rec.linktype != *first {
                return Err(WriteError::LinkType {
                    frame: rec.frame,
                    linktype: rec.linktype,
                    first: *first,
                });
            }
        }
        if !keep(&rec) {
            continue;
        }
        if writer.is_none() {
            let w = PcapWriter::new(out.take().expect("one writer"), rec.linktype, resolution)?;
            writer = Some((w, rec.linktype));
        }
        if let Some((w, _)) = writer.as_mut() {
            w.write(rec.ts.unwrap_or_default(), rec.data, rec.origlen)?;
            kept += 1;
        }
    }
    match (writer, out) {
        (Some((w, _)), _) => {
            w.into_inner()?;
        }
        (None, Some(o)) => {
            PcapWriter::new(o, 1, resolution)?.into_inner()?;
        }
        (None, None) => {}
    }
    Ok(kept)
}

/// [`copy_records`] between byte buffers: the capture `file` without the
/// records whose 0-based index `dropped` holds.
pub fn without_records(
    file: &[u8],
    dropped: impl Fn(usize) -> bool,
) -> Result<Vec<u8>, WriteError> {
    let mut i = 0;
    let mut out = Vec::with_capacity(file.len());
    copy_records(file, &mut out, |_| {
        let keep = !dropped(i);
        i += 1;
        keep
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(file: &[u8]) -> Vec<(Option<Timestamp>, u32, u32, Vec<u8>)> {
        let mut r = CaptureReader::new(file).unwrap();
        let mut v = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            v.push((rec.ts, rec.linktype, rec.origlen, rec.data.to_vec()));
        }
        v
    }

    #[test]
    fn pcap_records_read_back_in_both_resolutions() {
        for (res, nanos) in [(Resolution::Micros, 123_000), (Resolution::Nanos, 123_456)] {
            let mut w = PcapWriter::new(Vec::new(), 1, res).unwrap();
            w.write(
                Timestamp {
                    secs: 7,
                    nanos: 123_456,
                },
                &[1, 2, 3],
                60,
            )
            .unwrap();
            w.write(Timestamp { secs: 8, nanos: 0 }, &[4], 0).unwrap();
            let got = records(&w.into_inner().unwrap());
            assert_eq!(
                got,
                vec![
                    (Some(Timestamp { secs: 7, nanos }), 1, 60, vec![1, 2, 3]),
                    (Some(Timestamp { secs: 8, nanos: 0 }), 1, 1, vec![4]),
                ]
            );
        }
    }

    #[test]
    fn a_timestamp_before_1970_is_refused() {
        let mut w = PcapWriter::new(Vec::new(), 1, Resolution::Nanos).unwrap();
        let e = w
            .write(Timestamp { secs: -1, nanos: 0 }, &[], 0)
            .unwrap_err();
        assert!(matches!(e, WriteError::Timestamp { secs: -1 }), "{e}");
    }

    #[test]
    fn pcapng_sections_and_resolutions_read_back() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let a = w
            .interface(Interface {
                linktype: 1,
                tsresol: None,
            })
            .unwrap();
        let b = w
            .interface(Interface {
                linktype: 101,
                tsresol: Some(9),
            })
            .unwrap();
        w.packet(a, 1_500_000_000, &[1, 2, 3, 4, 5], 5).unwrap();
        w.packet(b, 2_000_000_001, &[9], 9).unwrap();
        w.section().unwrap();
        assert!(matches!(
            w.packet(1, 0, &[], 0),
            Err(WriteError::NoInterface { id: 1, count: 0 })
        ));
        let c = w
            .interface(Interface {
                linktype: 228,
                tsresol: Some(0x80 | 20),
            })
            .unwrap();
        w.packet(c, 3_000_000_000, &[7, 7], 2).unwrap();
        let got = records(&w.into_inner().unwrap());
        assert_eq!(
            got,
            vec![
                (
                    Some(Timestamp {
                        secs: 1,
                        nanos: 500_000_000
                    }),
                    1,
                    5,
                    vec![1, 2, 3, 4, 5]
                ),
                (Some(Timestamp { secs: 2, nanos: 1 }), 101, 9, vec![9]),
                (Some(Timestamp { secs: 3, nanos: 0 }), 228, 2, vec![7, 7]),
            ]
        );
    }

    #[test]
    fn copying_drops_the_chosen_records_and_keeps_the_rest_as_they_were() {
        let mut w = PcapWriter::new(Vec::new(), 1, Resolution::Micros).unwrap();
        for i in 0..5u8 {
            w.write(
                Timestamp {
                    secs: i64::from(i),
                    nanos: 1000,
                },
                &[i; 3],
                3,
            )
            .unwrap();
        }
        let file = w.into_inner().unwrap();
        let cut = without_records(&file, |i| i == 0 || i == 3).unwrap();
        let got: Vec<u8> = records(&cut).iter().map(|r| r.3[0]).collect();
        assert_eq!(got, [1, 2, 4]);
        assert_eq!(without_records(&file, |_| false).unwrap(), file);
    }

    #[test]
    fn copying_refuses_a_second_link_type() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        for linktype in [1, 101] {
            let id = w
                .interface(Interface {
                    linktype,
                    tsresol: None,
                })
                .unwrap();
            w.packet(id, 0, &[0], 1).unwrap();
        }
        let file = w.into_inner().unwrap();
        let e = without_records(&file, |_| false).unwrap_err();
        assert!(
            matches!(
                e,
                WriteError::LinkType {
                    frame: 2,
                    linktype: 101,
                    first: 1
                }
            ),
            "{e}"
        );
    }
}
