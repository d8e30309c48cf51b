//! `rewrite`'s reasoning: apply netfilter's `TCPMSS` and `TCPOPTSTRIP`
//! targets to the TCP segments of a capture, as these iptables rules would
//! on a router (in this order):
//!
//! ```text
//! iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss N
//!                                        (or --clamp-mss-to-pmtu, path MTU given)
//! iptables -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options LIST
//! ```
//!
//! Each packet is rewritten with `tcp_options::netfilter`, byte for byte as
//! the kernel modules do it; a packet the kernel would drop is left out of
//! the output; every other packet (not IP, not TCP, cut short by the snap
//! length) is copied as it was. The output is a classic pcap file with
//! nanosecond timestamps, the input's link type and timestamps (0 s for a
//! record without one, or with one a classic pcap's unsigned 32-bit
//! seconds cannot hold), written by the one capture writer
//! ([`PcapWriter`]). The command line is [`crate::cli::rewrite`].

use std::borrow::Cow;
use std::io::{self, BufWriter, Read, Write};

use tcp_options::netfilter::{
    self, DropReason, MssChange, MssTarget, NetfilterError, StripSet, Verdict,
};

use capture::link::{decode_link, Network, LINKTYPE_ETHERNET};
use capture::writer::{PcapWriter, Resolution, WriteError};
use capture::{CaptureError, CaptureReader, Record, Timestamp};

/// The rules to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// The TCPMSS rule, if any.
    pub tcpmss: Option<MssTarget>,
    /// The TCPOPTSTRIP rule's kinds, if any.
    pub strip: Option<StripSet>,
}

/// What happened to one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFate {
    /// Copied unchanged: not IP/TCP, cut short, or no rule changed it.
    Unchanged,
    /// Rewritten by at least one rule.
    Rewritten,
    /// The kernel would drop it.
    Dropped(DropReason),
}

/// Counts of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RewriteStats {
    /// Packet records read.
    pub packets: u64,
    /// Packets rewritten.
    pub rewritten: u64,
    /// Packets dropped.
    pub dropped: u64,
    /// Packets copied unchanged because the snap length cut them.
    pub truncated: u64,
}

/// Apply `rules` to one IP packet (`ip` starts at the IP header; bytes
/// after the IP length are kept as they were). Returns the new bytes.
pub fn rewrite_ip(ip: &[u8], rules: &Rules) -> (Vec<u8>, PacketFate) {
    let mut buf = Vec::with_capacity(ip.len() + 4);
    buf.extend_from_slice(ip);
    let Ok(at) = netfilter::locate(&buf) else {
        return (buf, PacketFate::Unchanged);
    };
    let trailer = ip.get(at.len..).unwrap_or(&[]).to_vec();
    buf.truncate(at.len);
    buf.extend_from_slice(&[0; 4]);
    let mut len = at.len;
    let mut changed = false;
    if let Some(target) = rules.tcpmss {
        match netfilter::syn_match(&buf[..len]) {
            Ok(Verdict::Drop(d)) => return (ip.to_vec(), PacketFate::Dropped(d)),
            Ok(Verdict::Accept(true)) => match netfilter::tcpmss(&mut buf, target) {
                Ok(Verdict::Drop(d)) => return (ip.to_vec(), PacketFate::Dropped(d)),
                Ok(Verdict::Accept(MssChange::Kept(_))) => {}
                Ok(Verdict::Accept(MssChange::Lowered { .. })) => changed = true,
                Ok(Verdict::Accept(MssChange::Inserted { len: l, .. })) => {
                    len = l;
                    changed = true;
                }
                Err(NetfilterError::NoRoom { .. }) | Err(_) => {}
            },
            Ok(Verdict::Accept(false)) | Err(_) => {}
        }
    }
    if let Some(set) = &rules.strip {
        match netfilter::tcpoptstrip(&mut buf[..len], set) {
            Ok(Verdict::Drop(d)) => return (ip.to_vec(), PacketFate::Dropped(d)),
            Ok(Verdict::Accept(n)) => changed |= n > 0,
            Err(_) => {}
        }
    }
    buf.truncate(len);
    buf.extend_from_slice(&trailer);
    let fate = if changed {
        PacketFate::Rewritten
    } else {
        PacketFate::Unchanged
    };
    (buf, fate)
}

/// Why a rewrite stopped.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// The capture could not be read (further); the records before were
    /// written.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// Writing the output failed.
    #[error(transparent)]
    Write(#[from] io::Error),
    /// The pcap writer refused a record: one of a second link type (a
    /// classic pcap has one), or one too long for a pcap record.
    #[error(transparent)]
    Record(WriteError),
}

impl From<WriteError> for RewriteError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Io(e) => RewriteError::Write(e),
            e => RewriteError::Record(e),
        }
    }
}

/// Rewrite every record of `input` into a classic pcap on `output`: its
/// link type the first record's (Ethernet for an empty capture, which
/// still gives a readable file).
///
/// On an error, the records before it have been written.
pub fn rewrite<R: Read, W: Write>(
    input: R,
    output: W,
    rules: &Rules,
) -> Result<RewriteStats, RewriteError> {
    let mut reader = CaptureReader::new(input)?;
    let mut stats = RewriteStats::default();
    let out = BufWriter::new(output);
    let Some(first) = reader.next_record()? else {
        PcapWriter::new(out, LINKTYPE_ETHERNET, Resolution::Nanos)?.into_inner()?;
        return Ok(stats);
    };
    let linktype = first.linktype;
    let mut pcap = PcapWriter::new(out, linktype, Resolution::Nanos)?;
    write_record(&mut pcap, &first, rules, &mut stats)?;
    while let Some(rec) = reader.next_record()? {
        if rec.linktype != linktype {
            return Err(WriteError::LinkType {
                frame: rec.frame,
                linktype: rec.linktype,
                first: linktype,
            }
            .into());
        }
        write_record(&mut pcap, &rec, rules, &mut stats)?;
    }
    pcap.into_inner()?;
    Ok(stats)
}

/// Applies the rules to one record and writes it, unless the kernel would
/// drop it. Records that are not IP, and IP packets the snap length cut,
/// are copied as they were.
fn write_record<W: Write>(
    pcap: &mut PcapWriter<W>,
    rec: &Record<'_>,
    rules: &Rules,
    stats: &mut RewriteStats,
) -> Result<(), RewriteError> {
    stats.packets += 1;
    let ip_at = match decode_link(rec.linktype, rec.data) {
        Ok(p) if matches!(p.network, Network::Ipv4 | Network::Ipv6) => Some(p.offset),
        _ => None,
    };
    let frame: Cow<'_, [u8]> = match ip_at {
        Some(_) if rec.is_truncated() => {
            stats.truncated += 1;
            Cow::Borrowed(rec.data)
        }
        Some(off) => {
            let (head, ip) = rec.data.split_at(off.min(rec.data.len()));
            let (new_ip, fate) = rewrite_ip(ip, rules);
            match fate {
                PacketFate::Dropped(_) => {
                    stats.dropped += 1;
                    return Ok(());
                }
                PacketFate::Rewritten => stats.rewritten += 1,
                PacketFate::Unchanged => {}
            }
            let mut f = Vec::with_capacity(head.len() + new_ip.len());
            f.extend_from_slice(head);
            f.extend_from_slice(&new_ip);
            Cow::Owned(f)
        }
        None => Cow::Borrowed(rec.data),
    };
    // What the rules added or took away was on the wire too.
    let grown = frame.len() as i64 - rec.data.len() as i64;
    let origlen = (i64::from(rec.origlen) + grown).max(frame.len() as i64);
    let origlen = u32::try_from(origlen).unwrap_or(u32::MAX);
    pcap.write(pcap_time(rec.ts), &frame, origlen)?;
    Ok(())
}

/// The time a record is written with: its own, `0 s` where it has none (a
/// pcapng Simple Packet Block) or where a classic pcap's unsigned 32-bit
/// seconds cannot hold it (before 1970, after 2106).
fn pcap_time(ts: Option<Timestamp>) -> Timestamp {
    let ts = ts.unwrap_or_default();
    if u32::try_from(ts.secs).is_ok() {
        ts
    } else {
        Timestamp { secs: 0, ..ts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capture::writer::{Interface, PcapngWriter};

    fn rules() -> Rules {
        Rules {
            tcpmss: Some(MssTarget::Set(1000)),
            strip: None,
        }
    }

    #[test]
    fn an_empty_capture_gives_an_ethernet_header_of_nanoseconds() {
        let input = PcapWriter::new(Vec::new(), 101, Resolution::Micros)
            .and_then(PcapWriter::into_inner)
            .unwrap();
        let mut out = Vec::new();
        let stats = rewrite(&input[..], &mut out, &rules()).unwrap();
        assert_eq!(stats, RewriteStats::default());
        // Nanosecond magic, version 2.4, zone and sigfigs 0, snap length
        // 262144, link type 1: the header rewrite always wrote.
        let header: [u8; 24] = [
            0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0,
        ];
        assert_eq!(out, header);
    }

    #[test]
    fn a_time_a_pcap_cannot_hold_is_written_as_zero_seconds() {
        // Raw IP (101), not TCP: copied as it was.
        let packet = [
            0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let id = w
            .interface(Interface {
                linktype: 101,
                tsresol: Some(9),
            })
            .unwrap();
        // 2106-02-07 and after do not fit 32-bit seconds.
        let late = (u64::from(u32::MAX) + 1) * 1_000_000_000 + 7;
        w.packet(id, late, &packet, 20).unwrap();
        w.packet(id, 1_000_000_000 + 9, &packet, 20).unwrap();
        let input = w.into_inner().unwrap();
        let mut out = Vec::new();
        let stats = rewrite(&input[..], &mut out, &rules()).unwrap();
        assert_eq!(stats.packets, 2);
        let mut r = CaptureReader::new(&out[..]).unwrap();
        let times: Vec<_> =
            std::iter::from_fn(|| r.next_record().unwrap().map(|rec| rec.ts)).collect();
        assert_eq!(
            times,
            [
                Some(Timestamp { secs: 0, nanos: 7 }),
                Some(Timestamp { secs: 1, nanos: 9 })
            ]
        );
    }
}
