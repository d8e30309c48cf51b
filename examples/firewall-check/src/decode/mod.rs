//! The per-packet record every `firewall-check` subcommand works from.
//!
//! [`decode_packet`] turns a capture [`Record`] into a [`TcpRecord`]: frame
//! number, time, the IP facts, the fixed TCP header fields, the option block
//! as captured, the payload length on the wire, and what the snap length cut
//! off. The record borrows from the reader's buffer and allocates nothing.
//! It reads plain links only (a segment in a tunnel is not a record there;
//! kept for callers that want plain links only); [`decode_tunneled`], which
//! `dump`, `analyze`, `series` and `compare` read with, also goes through
//! tunnels and encapsulations, gives
//! the layers in [`TcpRecord::tunnels`], and says why a frame gave no
//! record ([`Unrecorded`], counted with [`Unrecorded::cause`]).
//!
//! Option problems are found with `tcp-options`' strict policy and
//! summarised as one [`OptionsProblem`]: the first malformation, or the point
//! where the snap length cut the option block.

use std::fmt;

use tcp_options::header::field::DATA_OFFSET;
use tcp_options::{Flags, OptionErrorReason, StrictOptions, TcpPacket, HEADER_LEN};

use capture::tally::{Cause, Tally};
use capture::{decode_segment, decode_tcp, DecodeError, IpInfo, Record, Skip, TcpSegment};
use capture::{Timestamp, Tunnels};

/// What the snap length cut off a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truncation {
    /// Nothing: the whole segment was captured.
    None,
    /// Part of the payload is missing; the header is complete.
    Payload,
    /// Part of the option block is missing (and so all of the payload).
    Options,
}

/// The first problem in a segment's option block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionsProblem {
    /// Offset in the option block (add 20 for the offset in the TCP header).
    pub offset: usize,
    /// Kind of the offending option; `None` when the snap length cut the
    /// block between two options.
    pub kind: Option<u8>,
    /// What is wrong.
    pub reason: ProblemReason,
}

/// Why an option block is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemReason {
    /// A strict-policy malformation (tcp-options' reason).
    Malformed(OptionErrorReason),
    /// The capture's snap length cut the option block at this offset.
    SnapLength,
}

impl fmt::Display for ProblemReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemReason::Malformed(r) => write!(f, "{r}"),
            ProblemReason::SnapLength => f.write_str("option block cut short by the snap length"),
        }
    }
}

/// Why a frame that carries TCP gave no [`TcpRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// Link or IP layer problem.
    #[error("frame {frame}: {source}")]
    Decode {
        /// Frame number.
        frame: u64,
        /// The decoding error.
        source: DecodeError,
    },
    /// Fewer than 20 TCP bytes captured.
    #[error("frame {frame}: TCP header truncated: {captured} of 20 bytes captured{}", if *.snap { " (snap length)" } else { "" })]
    TcpTruncated {
        /// Frame number.
        frame: u64,
        /// TCP bytes captured.
        captured: usize,
        /// Whether the packet was longer on the wire (snap-length cut) rather than malformed.
        snap: bool,
    },
    /// TCP data offset below 5 words.
    #[error("frame {frame}: TCP data offset {data_offset} is below the minimum of 5 words")]
    BadDataOffset {
        /// Frame number.
        frame: u64,
        /// The field.
        data_offset: u8,
    },
    /// TCP data offset beyond the segment length on the wire.
    #[error("frame {frame}: TCP data offset {data_offset} ({} bytes) runs past the {wire_len}-byte segment", usize::from(*.data_offset) * 4)]
    DataOffsetOverrun {
        /// Frame number.
        frame: u64,
        /// The field.
        data_offset: u8,
        /// TCP length on the wire.
        wire_len: usize,
    },
}

/// One TCP segment, decoded: the record `dump` prints and `analyze` /
/// `compare` track connections with.
#[derive(Debug, Clone, Copy)]
pub struct TcpRecord<'a> {
    /// 1-based record number in the capture.
    pub frame: u64,
    /// Capture time (`None` for pcapng Simple Packet Blocks).
    pub ts: Option<Timestamp>,
    /// IP layer facts (addresses, DS field, TTL, IP ID, DF).
    pub ip: IpInfo,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (meaningful with ACK).
    pub ack: u32,
    /// Control bits.
    pub flags: Flags,
    /// The raw 16-bit window field.
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Checksum field.
    pub checksum: u16,
    /// TCP header length from the data offset.
    pub header_len: usize,
    /// The option block as captured (shorter than `header_len - 20` when cut).
    pub options: &'a [u8],
    /// Payload bytes on the wire.
    pub payload_len: usize,
    /// The captured payload (may be shorter than `payload_len`).
    pub payload: &'a [u8],
    /// What the snap length cut off.
    pub truncation: Truncation,
    /// The whole captured TCP segment, header first.
    pub tcp: &'a [u8],
    /// Offset of the TCP header in the frame.
    pub tcp_offset: usize,
    /// The tunnels and encapsulations the segment was carried in, outermost
    /// first: empty on a plain link, and always from [`decode_packet`].
    pub tunnels: Tunnels<'a>,
}

impl<'a> TcpRecord<'a> {
    /// Strict-policy iterator over the captured options.
    pub fn options_strict(&self) -> StrictOptions<'a> {
        StrictOptions::new(self.options)
    }

    /// The first problem in the option block: the first strict-policy
    /// error (warnings about bytes after EOL included), or, when the snap
    /// length cut the block, the point where it was cut.
    pub fn options_problem(&self) -> Option<OptionsProblem> {
        let err = self.options_strict().find_map(Result::err);
        if self.truncation == Truncation::Options {
            return Some(match err {
                Some(e)
                    if !matches!(
                        e.reason,
                        OptionErrorReason::Overrun { .. } | OptionErrorReason::LengthMissing
                    ) =>
                {
                    OptionsProblem {
                        offset: e.offset,
                        kind: Some(e.kind),
                        reason: ProblemReason::Malformed(e.reason),
                    }
                }
                Some(e) => OptionsProblem {
                    offset: e.offset,
                    kind: Some(e.kind),
                    reason: ProblemReason::SnapLength,
                },
                None => OptionsProblem {
                    offset: self.options.len(),
                    kind: None,
                    reason: ProblemReason::SnapLength,
                },
            });
        }
        err.map(|e| OptionsProblem {
            offset: e.offset,
            kind: Some(e.kind),
            reason: ProblemReason::Malformed(e.reason),
        })
    }

    /// Sequence space the segment occupies: payload plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u32 {
        let mut n = self.payload_len as u32;
        if self.flags.contains(Flags::SYN) {
            n = n.wrapping_add(1);
        }
        if self.flags.contains(Flags::FIN) {
            n = n.wrapping_add(1);
        }
        n
    }
}

/// Decodes a capture record down to a [`TcpRecord`]; `Ok(None)` when the
/// frame carries no TCP header on a plain link (another protocol, a later
/// IP fragment, a tunnel).
#[inline]
pub fn decode_packet<'a>(record: &Record<'a>) -> Result<Option<TcpRecord<'a>>, PacketError> {
    let frame = record.frame;
    match decode_tcp(record.linktype, record.data, record.origlen) {
        Ok(Some(seg)) => from_segment(record, seg).map(Some),
        Ok(None) => Ok(None),
        Err(source) => Err(PacketError::Decode { frame, source }),
    }
}

/// Why a record gave no [`TcpRecord`] in [`decode_tunneled`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrecorded {
    /// No TCP segment was reached, for this reason (never
    /// [`Skip::Decode`]: a cut or malformed header is [`Unrecorded::Bad`]).
    Skipped(Skip),
    /// A header that should hold TCP is cut or malformed: the link, IP or
    /// tunnel header, or the TCP header itself.
    Bad(PacketError),
}

impl Unrecorded {
    /// What the frame is counted under.
    pub fn cause(&self) -> Cause {
        match self {
            Unrecorded::Skipped(s) => Cause::from(s),
            Unrecorded::Bad(PacketError::Decode { source, .. }) => {
                Cause::from(&Skip::Decode(*source))
            }
            Unrecorded::Bad(PacketError::TcpTruncated { .. }) => Cause::Truncated("TCP"),
            Unrecorded::Bad(
                PacketError::BadDataOffset { .. } | PacketError::DataOffsetOverrun { .. },
            ) => Cause::Malformed("TCP"),
        }
    }
}

/// Decodes a capture record through any tunnels and encapsulations down to
/// a [`TcpRecord`] whose [`tunnels`](TcpRecord::tunnels) say what carried it.
pub fn decode_tunneled<'a>(record: &Record<'a>) -> Result<TcpRecord<'a>, Unrecorded> {
    let frame = record.frame;
    match decode_segment(record.linktype, record.data, record.origlen) {
        Ok(seg) => from_segment(record, seg).map_err(Unrecorded::Bad),
        Err(Skip::Decode(source)) => Err(Unrecorded::Bad(PacketError::Decode { frame, source })),
        Err(skip) => Err(Unrecorded::Skipped(skip)),
    }
}

/// [`decode_tunneled`] for the commands that read whole captures, counted
/// in `tally` (segments per encapsulation, records without one by cause),
/// with the common case first: a segment on a plain link goes through the
/// plain-link decoder ([`decode_packet`], which gives the same record for
/// it) and costs what it did before tunnels were read; any other record
/// (a tunnel, another protocol, a bad header) is decoded again through
/// tunnels, out of line.
#[inline]
pub fn decode_counted<'a>(
    record: &Record<'a>,
    tally: &mut Tally,
) -> Result<TcpRecord<'a>, Unrecorded> {
    if let Ok(Some(rec)) = decode_packet(record) {
        tally.segment(&rec.tunnels);
        return Ok(rec);
    }
    decode_counted_rest(record, tally)
}

/// [`decode_counted`] for a record that is not a plain-link segment.
#[cold]
#[inline(never)]
fn decode_counted_rest<'a>(
    record: &Record<'a>,
    tally: &mut Tally,
) -> Result<TcpRecord<'a>, Unrecorded> {
    match decode_tunneled(record) {
        Ok(rec) => {
            tally.segment(&rec.tunnels);
            Ok(rec)
        }
        Err(why) => {
            tally.skip(why.cause());
            Err(why)
        }
    }
}

/// The record of a decoded segment: the TCP header's fields.
#[inline(always)]
fn from_segment<'a>(
    record: &Record<'a>,
    seg: TcpSegment<'a>,
) -> Result<TcpRecord<'a>, PacketError> {
    let frame = record.frame;
    let tcp = seg.tcp;
    if tcp.len() < HEADER_LEN {
        return Err(PacketError::TcpTruncated {
            frame,
            captured: tcp.len(),
            snap: seg.is_truncated(),
        });
    }
    // The fixed header is whole; the option block may be cut by the snap
    // length, so view a copy of the 20 fixed bytes with the data offset set
    // to 5 and take the real data offset from the original byte.
    let mut fixed = [0u8; HEADER_LEN];
    fixed.copy_from_slice(&tcp[..HEADER_LEN]);
    let data_offset = fixed[DATA_OFFSET] >> 4;
    if data_offset < 5 {
        return Err(PacketError::BadDataOffset { frame, data_offset });
    }
    fixed[DATA_OFFSET] = (fixed[DATA_OFFSET] & 0x0f) | (5 << 4);
    let Ok(view) = TcpPacket::new_checked(&fixed) else {
        return Err(PacketError::BadDataOffset { frame, data_offset });
    };
    let header = view.header();
    let header_len = usize::from(data_offset) * 4;
    if header_len > seg.wire_len {
        return Err(PacketError::DataOffsetOverrun {
            frame,
            data_offset,
            wire_len: seg.wire_len,
        });
    }
    let options = &tcp[HEADER_LEN..tcp.len().min(header_len)];
    let payload = tcp.get(header_len..).unwrap_or(&[]);
    let truncation = if tcp.len() < header_len {
        Truncation::Options
    } else if seg.is_truncated() {
        Truncation::Payload
    } else {
        Truncation::None
    };
    Ok(TcpRecord {
        frame,
        ts: record.ts,
        ip: seg.ip,
        src_port: header.src_port(),
        dst_port: header.dst_port(),
        seq: header.seq_number(),
        ack: header.ack_number(),
        flags: header.flags(),
        window: header.window(),
        urgent: header.urgent_pointer(),
        checksum: header.checksum(),
        header_len,
        options,
        payload_len: seg.wire_len - header_len,
        payload,
        truncation,
        tcp,
        tcp_offset: seg.tcp_offset,
        tunnels: seg.tunnels,
    })
}
