//! One capture, loaded for comparison: every TCP segment with the fields a
//! middlebox may change, in capture order.
//!
//! Loading is forgiving where honesty allows: a record that does not decode
//! is counted and skipped; a file that breaks off mid-way keeps the packets
//! read so far and says where it stopped. Only a file that is not a capture
//! at all is an error.

use std::io::Read;
use std::net::IpAddr;

use tcp_options::{Flags, LinuxOptions, TcpOption};

use super::super::packet::{decode_packet, Truncation};
use crate::capture::{CaptureError, CaptureReader, IpVersion};

// TCP flags, under the short names this module's users match on.
/// TCP FIN flag.
pub const FIN: Flags = Flags::FIN;
/// TCP SYN flag.
pub const SYN: Flags = Flags::SYN;
/// TCP RST flag.
pub const RST: Flags = Flags::RST;
/// TCP ACK flag.
pub const ACK: Flags = Flags::ACK;
/// TCP ECE flag.
pub const ECE: Flags = Flags::ECE;
/// TCP CWR flag.
pub const CWR: Flags = Flags::CWR;

// Option kinds, under the short names this module's users match on.
pub use tcp_options::kind::{
    EOL as KIND_EOL, MSS as KIND_MSS, NOP as KIND_NOP, SACK as KIND_SACK,
    SACK_PERMITTED as KIND_SACK_PERMITTED, TIMESTAMPS as KIND_TIMESTAMPS,
    WINDOW_SCALE as KIND_WSCALE,
};

/// Payload bytes kept per packet to recognise the same segment on both sides.
pub const PAYLOAD_HEAD: usize = 24;
/// Packets kept per capture; beyond it the load stops with a warning.
pub const MAX_PACKETS: usize = 2_000_000;

/// A TCP option other than NOP and EOL, as carried on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpOpt {
    /// Option kind.
    pub kind: u8,
    /// Option data (after kind and length).
    pub data: Vec<u8>,
}

/// One TCP segment of a capture.
#[derive(Debug, Clone)]
pub struct Packet {
    /// 1-based record number in the capture file.
    pub frame: u64,
    /// Capture time in nanoseconds since the epoch, if recorded.
    pub ts_ns: Option<i128>,
    /// IPv6 rather than IPv4.
    pub v6: bool,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// TOS byte / traffic class.
    pub tos: u8,
    /// TTL / hop limit.
    pub ttl: u8,
    /// IPv4 identification.
    pub ident: Option<u32>,
    /// IPv4 Don't Fragment.
    pub df: bool,
    /// TCP source port.
    pub sport: u16,
    /// TCP destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// TCP flags.
    pub flags: Flags,
    /// Raw window field.
    pub window: u16,
    /// Options other than NOP/EOL, in order.
    pub options: Vec<TcpOpt>,
    /// False when the snap length cut the option block short.
    pub options_complete: bool,
    /// Payload length on the wire.
    pub payload_len: u32,
    /// The first captured payload bytes (at most [`PAYLOAD_HEAD`]).
    pub payload_head: Vec<u8>,
}

impl Packet {
    /// True if all of `f` are set.
    pub fn has(&self, f: Flags) -> bool {
        self.flags.contains(f)
    }
    /// The first option of `kind`.
    pub fn option(&self, kind: u8) -> Option<&TcpOpt> {
        self.options.iter().find(|o| o.kind == kind)
    }
    /// The first option of `kind`, decoded by `tcp-options` (`None` when
    /// absent or malformed).
    fn decoded(&self, kind: u8) -> Option<TcpOption<'_>> {
        self.option(kind)
            .and_then(|o| tcp_options::decode(o.kind, &o.data).ok())
    }
    /// The window-scale shift announced (the raw value on the wire), if any.
    pub fn wscale(&self) -> Option<u8> {
        match self.decoded(KIND_WSCALE)? {
            TcpOption::WindowScale(s) => Some(s),
            _ => None,
        }
    }
    /// The MSS announced, if any.
    pub fn mss(&self) -> Option<u16> {
        match self.decoded(KIND_MSS)? {
            TcpOption::MaxSegmentSize(m) => Some(m),
            _ => None,
        }
    }
    /// TSval and TSecr, if a well-formed timestamps option is present.
    pub fn timestamps(&self) -> Option<(u32, u32)> {
        match self.decoded(KIND_TIMESTAMPS)? {
            TcpOption::Timestamps(t) => Some((t.tsval, t.tsecr)),
            _ => None,
        }
    }
    /// A pure SYN (no ACK).
    pub fn is_syn(&self) -> bool {
        self.has(SYN) && !self.has(ACK)
    }
    /// A SYN-ACK.
    pub fn is_syn_ack(&self) -> bool {
        self.has(SYN | ACK)
    }
}

/// A capture loaded for comparison.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The TCP segments, in capture order.
    pub packets: Vec<Packet>,
    /// Packet records read.
    pub records: u64,
    /// Records that held something other than TCP.
    pub non_tcp: u64,
    /// Records that could not be decoded (corrupt or too short to hold a TCP header).
    pub undecodable: u64,
    /// Problems that made the result partial, in words.
    pub warnings: Vec<String>,
}

/// Walks a TCP option block the way Linux does (`tcp-options`'
/// [`LinuxOptions`]: stop at EOL, skip NOP, stop silently at a length below
/// 2 or one running past the block). Returns the options other than NOP and
/// EOL, and whether the walk reached the end cleanly.
pub fn walk_options(block: &[u8]) -> (Vec<TcpOpt>, bool) {
    let mut walk = LinuxOptions::new(block);
    let out = walk
        .by_ref()
        .filter(|o| !matches!(o.option, TcpOption::NoOperation | TcpOption::EndOfList))
        .map(|o| TcpOpt {
            kind: o.kind,
            data: o.data.to_vec(),
        })
        .collect();
    (out, walk.stopped().is_none())
}

/// Reads a whole capture from `input`.
///
/// Errors only when `input` is not a pcap/pcapng capture at all; a capture
/// that breaks off later gives the packets before the break and a warning.
pub fn load<R: Read>(input: R) -> Result<Loaded, CaptureError> {
    let mut reader = CaptureReader::new(input)?;
    let mut out = Loaded::default();
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.warnings.push(format!(
                    "{e}; using the {} packet records before it",
                    out.records
                ));
                break;
            }
        };
        out.records += 1;
        if out.packets.len() >= MAX_PACKETS {
            out.warnings.push(format!(
                "stopped after {MAX_PACKETS} TCP packets (the rest of the file is not compared)"
            ));
            break;
        }
        let seg = match decode_packet(&record) {
            Ok(Some(s)) => s,
            Ok(None) => {
                out.non_tcp += 1;
                continue;
            }
            Err(_) => {
                out.undecodable += 1;
                continue;
            }
        };
        let (options, clean) = walk_options(seg.options);
        let payload_len = u32::try_from(seg.payload_len).unwrap_or(u32::MAX);
        out.packets.push(Packet {
            frame: record.frame,
            ts_ns: record
                .ts
                .map(|t| i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos)),
            v6: seg.ip.version == IpVersion::V6,
            src: seg.ip.src,
            dst: seg.ip.dst,
            tos: seg.ip.tos,
            ttl: seg.ip.ttl,
            ident: if seg.ip.version == IpVersion::V4 {
                seg.ip.ident
            } else {
                None
            },
            df: seg.ip.df,
            sport: seg.src_port,
            dport: seg.dst_port,
            seq: seg.seq,
            ack: seg.ack,
            flags: seg.flags,
            window: seg.window,
            options,
            options_complete: clean && seg.truncation != Truncation::Options,
            payload_len,
            payload_head: seg.payload[..seg.payload.len().min(PAYLOAD_HEAD)].to_vec(),
        });
    }
    if out.undecodable > 0 {
        out.warnings.push(format!(
            "{} packet record(s) could not be decoded and were skipped",
            out.undecodable
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_walk_like_linux() {
        // MSS 1460, SACK-permitted, timestamps, NOP, wscale 7 (a Linux SYN).
        let block = [
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        let (opts, clean) = walk_options(&block);
        assert!(clean);
        let kinds: Vec<u8> = opts.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, vec![2, 4, 8, 3]);
        assert_eq!(opts[3].data, vec![7]);
        // A length of 1 stops the walk, keeping what came before.
        let (opts, clean) = walk_options(&[2, 4, 5, 0xb4, 30, 1, 0, 0]);
        assert_eq!(opts.len(), 1);
        assert!(!clean);
        // An option running past the block stops the walk.
        let (opts, clean) = walk_options(&[8, 10, 0]);
        assert!(opts.is_empty());
        assert!(!clean);
    }

    #[test]
    fn not_a_capture_is_an_error() {
        assert!(load(&b"hello world, not a capture"[..]).is_err());
        assert!(load(&b""[..]).is_err());
    }
}
