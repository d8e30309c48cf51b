//! The owned copy of one segment that `compare` keeps while it aligns the
//! two captures, built from the shared [`TcpRecord`]. Its IP layer is the
//! capture crate's own [`IpInfo`], kept whole: addresses, TOS byte, TTL,
//! identification and DF have that one home.
//!
//! Options are kept twice, each for its question:
//!
//! - [`Packet::options`]: the option records as on the wire (tcp-options'
//!   raw record walk, NOP and EOL left out), to say which bytes the
//!   middlebox changed;
//! - [`Packet::linux`]: what the receiving Linux kernel takes from them
//!   ([`tcp_options::LinuxRepr`]: last duplicate wins, MSS 0 ignored, a known
//!   option of the wrong length stepped over, a shift above 14 clamped), to
//!   say what an endpoint negotiated.

use tcp_options::{Flags, LinuxRepr, ParseContext, RawOptions};

use crate::decode::{TcpRecord, Truncation};
use capture::{IpInfo, IpVersion, OuterIp};

/// Payload bytes kept per packet to recognise the same segment on both sides.
pub const PAYLOAD_HEAD: usize = 24;

/// A TCP option other than NOP and EOL, as carried on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpOpt {
    /// Option kind.
    pub kind: u8,
    /// Option data (after kind and length).
    pub data: Vec<u8>,
}

/// What the receiving Linux kernel takes from a segment's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinuxView {
    /// MSS from a SYN (`None` when absent, 0 or ignored).
    pub mss: Option<u16>,
    /// Window-scale shift from a SYN, after clamping to 14.
    pub wscale: Option<u8>,
    /// SACK-permitted on a SYN.
    pub sack_permitted: bool,
    /// TSval and TSecr.
    pub timestamps: Option<(u32, u32)>,
}

/// One TCP segment of a capture.
#[derive(Debug, Clone)]
pub struct Packet {
    /// 1-based record number in the capture file.
    pub frame: u64,
    /// Capture time in nanoseconds since the epoch, if recorded.
    pub ts_ns: Option<i128>,
    /// Its capture's clock when it was read: [`Packet::ts_ns`], or the
    /// later time a record before it in the file carried (a capture whose
    /// times go back). The comparison merges the two captures and waits
    /// for a counterpart by this clock, which never goes back.
    pub at: Option<i128>,
    /// The IP layer, as the capture crate decoded it.
    pub ip: IpInfo,
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
    /// Option records other than NOP/EOL, in order, as on the wire.
    pub options: Vec<TcpOpt>,
    /// False when the snap length cut the option block short or its
    /// framing broke (a length below 2, an overrun).
    pub options_complete: bool,
    /// What Linux takes from the options.
    pub linux: LinuxView,
    /// Payload length on the wire.
    pub payload_len: u32,
    /// The first captured payload bytes (at most [`PAYLOAD_HEAD`]).
    pub payload_head: Vec<u8>,
    /// The IP header that encapsulates this one, for a segment captured
    /// inside a tunnel (`None` on a plain link): its TOS byte, the tunnel
    /// and its overhead.
    pub outer: Option<OuterIp>,
}

impl Packet {
    /// The owned copy of `rec`.
    pub fn from_record(rec: &TcpRecord<'_>) -> Packet {
        let mut options = Vec::new();
        let mut framing_ok = true;
        for o in RawOptions::new(rec.options) {
            match o {
                Ok(o) if o.kind == tcp_options::kind::NOP || o.kind == tcp_options::kind::EOL => {}
                Ok(o) => options.push(TcpOpt {
                    kind: o.kind,
                    data: o.data.to_vec(),
                }),
                Err(_) => framing_ok = false,
            }
        }
        let syn = rec.flags.contains(Flags::SYN);
        let repr = LinuxRepr::parse(rec.options, ParseContext::handshake(syn));
        let ts_ns = rec
            .ts
            .map(|t| i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos));
        Packet {
            frame: rec.frame,
            ts_ns,
            at: ts_ns,
            ip: rec.ip,
            sport: rec.src_port,
            dport: rec.dst_port,
            seq: rec.seq,
            ack: rec.ack,
            flags: rec.flags,
            window: rec.window,
            options,
            options_complete: framing_ok && rec.truncation != Truncation::Options,
            linux: LinuxView {
                mss: repr.mss,
                wscale: repr.window_scale,
                sack_permitted: repr.sack_permitted,
                timestamps: repr.timestamps.map(|t| (t.tsval, t.tsecr)),
            },
            payload_len: u32::try_from(rec.payload_len).unwrap_or(u32::MAX),
            payload_head: rec.payload[..rec.payload.len().min(PAYLOAD_HEAD)].to_vec(),
            outer: if rec.tunnels.is_empty() {
                None
            } else {
                rec.tcp_offset
                    .checked_sub(rec.ip.header_len)
                    .and_then(|at| rec.tunnels.outer_ip(at))
            },
        }
    }

    /// IPv6 rather than IPv4.
    pub fn v6(&self) -> bool {
        self.ip.version == IpVersion::V6
    }
    /// The IPv4 identification (`None` over IPv6, whose fragment
    /// identification is not the sender's per-packet counter).
    pub fn ident(&self) -> Option<u32> {
        match self.ip.version {
            IpVersion::V4 => self.ip.ident,
            IpVersion::V6 => None,
        }
    }
    /// True if all of `f` are set.
    pub fn has(&self, f: Flags) -> bool {
        self.flags.contains(f)
    }
    /// The records of `kind`, in order.
    pub fn records(&self, kind: u8) -> impl Iterator<Item = &TcpOpt> + '_ {
        self.options.iter().filter(move |o| o.kind == kind)
    }
    /// True when an option of `kind` is on the wire.
    pub fn carries(&self, kind: u8) -> bool {
        self.options.iter().any(|o| o.kind == kind)
    }
    /// The window-scale shift the receiver takes from a SYN.
    pub fn wscale(&self) -> Option<u8> {
        self.linux.wscale
    }
    /// The MSS the receiver takes from a SYN.
    pub fn mss(&self) -> Option<u16> {
        self.linux.mss
    }
    /// TSval and TSecr the receiver takes.
    pub fn timestamps(&self) -> Option<(u32, u32)> {
        self.linux.timestamps
    }
    /// A pure SYN (no ACK).
    pub fn is_syn(&self) -> bool {
        self.has(Flags::SYN) && !self.has(Flags::ACK)
    }
    /// A SYN-ACK.
    pub fn is_syn_ack(&self) -> bool {
        self.has(Flags::SYN | Flags::ACK)
    }
    /// True when `self` and `other` were seen on two sides of an
    /// encapsulation point: one in a tunnel and the other bare, or in two
    /// different tunnels (kind or overhead).
    pub fn crosses_tunnel(&self, other: &Packet) -> bool {
        let id = |p: &Packet| p.outer.map(|o| (o.kind, o.overhead, o.v6));
        id(self) != id(other)
    }

    /// Sequence space the segment occupies: payload plus one for SYN and FIN.
    pub fn seq_len(&self) -> u32 {
        let mut n = self.payload_len;
        if self.has(Flags::SYN) {
            n = n.wrapping_add(1);
        }
        if self.has(Flags::FIN) {
            n = n.wrapping_add(1);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn rec(options: &[u8], flags: Flags) -> TcpRecord<'_> {
        TcpRecord {
            frame: 1,
            ts: None,
            ip: IpInfo {
                version: IpVersion::V4,
                src: IpAddr::V4(Ipv4Addr::new(198, 18, 1, 2)),
                dst: IpAddr::V4(Ipv4Addr::new(198, 18, 2, 2)),
                tos: 0,
                ttl: 64,
                ident: Some(7),
                df: true,
                flow_label: None,
                header_len: 20,
            },
            src_port: 1000,
            dst_port: 80,
            seq: 1,
            ack: 0,
            flags,
            window: 100,
            urgent: 0,
            checksum: 0,
            header_len: 20 + options.len(),
            options,
            payload_len: 0,
            payload: &[],
            truncation: Truncation::None,
            tcp: &[],
            tcp_offset: 0,
            tunnels: capture::Tunnels::empty(&[]),
        }
    }

    #[test]
    fn wire_records_and_the_kernels_view_are_both_kept() {
        // MSS 1460, MSS 0 (Linux ignores it and keeps 1460), a window scale
        // with a wrong length (stepped over), then window scale 20 (clamped).
        let block = [2, 4, 0x05, 0xb4, 2, 4, 0, 0, 3, 4, 7, 0, 3, 3, 20, 0];
        let p = Packet::from_record(&rec(&block, Flags::SYN));
        assert_eq!(
            p.options.iter().map(|o| o.kind).collect::<Vec<_>>(),
            [2, 2, 3, 3]
        );
        assert!(p.options_complete);
        assert_eq!(p.mss(), Some(1460));
        assert_eq!(p.wscale(), Some(14));
        // A length of 1 breaks the framing: what came before is kept.
        let p = Packet::from_record(&rec(&[2, 4, 5, 0xb4, 30, 1, 0, 0], Flags::SYN));
        assert_eq!(p.options.len(), 1);
        assert!(!p.options_complete);
        // MSS means nothing outside a SYN.
        let p = Packet::from_record(&rec(&[2, 4, 5, 0xb4], Flags::ACK));
        assert_eq!(p.mss(), None);
        assert!(p.carries(2));
    }
}
