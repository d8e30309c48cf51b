//! `firewall-check rewrite`: apply netfilter's `TCPMSS` and `TCPOPTSTRIP`
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
//! nanosecond timestamps, the input's link type and timestamps.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;

use tcp_options::netfilter::{
    self, DropReason, MssChange, MssTarget, NetfilterError, StripSet, Verdict,
};

use capture::link::{decode_link, Network};
use capture::CaptureReader;

/// Command-line arguments of `firewall-check rewrite`.
#[derive(Debug, Clone, clap::Args)]
pub struct RewriteArgs {
    /// The capture to read (pcap or pcapng); `-` reads standard input.
    pub input: PathBuf,
    /// The pcap file to write; `-` writes standard output.
    pub output: PathBuf,
    /// `-j TCPMSS --set-mss N` on SYN segments.
    #[arg(long, value_name = "N", conflicts_with = "clamp_mss_to_pmtu")]
    pub tcpmss: Option<u16>,
    /// `-j TCPMSS --clamp-mss-to-pmtu` on SYN segments, with this path MTU
    /// (the smaller of the route's and the reverse route's).
    #[arg(long, value_name = "MTU")]
    pub clamp_mss_to_pmtu: Option<u32>,
    /// `-j TCPOPTSTRIP --strip-options LIST` on every segment: mss, wscale,
    /// sack-permitted, sack, timestamp, md5 or kind numbers, comma-separated.
    #[arg(long, value_name = "LIST")]
    pub strip_options: Option<String>,
}

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

/// Rewrite every record of `input` into a classic pcap on `output`.
pub fn rewrite<R: Read, W: Write>(
    input: R,
    output: W,
    rules: &Rules,
) -> Result<RewriteStats, String> {
    let mut reader = CaptureReader::new(input).map_err(|e| e.to_string())?;
    let mut out = BufWriter::new(output);
    let mut stats = RewriteStats::default();
    let mut linktype = None;
    while let Some(rec) = reader.next_record().map_err(|e| e.to_string())? {
        stats.packets += 1;
        match linktype {
            None => {
                write_header(&mut out, rec.linktype).map_err(|e| e.to_string())?;
                linktype = Some(rec.linktype);
            }
            Some(l) if l != rec.linktype => {
                return Err(format!(
                "frame {}: link type {} differs from the first record's {l}; a pcap file has one",
                rec.frame, rec.linktype
            ))
            }
            Some(_) => {}
        }
        let ip_at = match decode_link(rec.linktype, rec.data) {
            Ok(p) if matches!(p.network, Network::Ipv4 | Network::Ipv6) => Some(p.offset),
            _ => None,
        };
        let frame = match ip_at {
            Some(_) if rec.is_truncated() => {
                stats.truncated += 1;
                rec.data.to_vec()
            }
            Some(off) => {
                let (head, ip) = rec.data.split_at(off.min(rec.data.len()));
                let (new_ip, fate) = rewrite_ip(ip, rules);
                match fate {
                    PacketFate::Dropped(_) => {
                        stats.dropped += 1;
                        continue;
                    }
                    PacketFate::Rewritten => stats.rewritten += 1,
                    PacketFate::Unchanged => {}
                }
                let mut f = head.to_vec();
                f.extend_from_slice(&new_ip);
                f
            }
            None => rec.data.to_vec(),
        };
        let grown = frame.len() as i64 - rec.data.len() as i64;
        let origlen = (i64::from(rec.origlen) + grown).max(frame.len() as i64);
        let ts = rec.ts.unwrap_or_default();
        let (secs, nanos) = (u32::try_from(ts.secs).unwrap_or(0), ts.nanos);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&nanos.to_le_bytes());
        h[8..12].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(origlen as u32).to_le_bytes());
        out.write_all(&h).map_err(|e| e.to_string())?;
        out.write_all(&frame).map_err(|e| e.to_string())?;
    }
    if linktype.is_none() {
        // An empty capture still gives a readable file.
        write_header(&mut out, 1).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(stats)
}

/// The classic pcap file header: nanosecond magic, version 2.4, snap
/// length 262144, `linktype`.
fn write_header<W: Write>(w: &mut W, linktype: u32) -> io::Result<()> {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&262_144u32.to_le_bytes());
    h[20..24].copy_from_slice(&linktype.to_le_bytes());
    w.write_all(&h)
}

impl RewriteArgs {
    /// The rules these arguments ask for.
    pub fn rules(&self) -> Result<Rules, String> {
        let tcpmss = match (self.tcpmss, self.clamp_mss_to_pmtu) {
            (Some(n), None) => Some(MssTarget::Set(n)),
            (None, Some(mtu)) => Some(MssTarget::ClampToPmtu { mtu }),
            (None, None) => None,
            (Some(_), Some(_)) => {
                return Err("--tcpmss and --clamp-mss-to-pmtu exclude each other".into())
            }
        };
        let strip = match &self.strip_options {
            Some(list) => Some(StripSet::parse(list).map_err(|e| format!("--strip-options: {e}"))?),
            None => None,
        };
        if tcpmss.is_none() && strip.is_none() {
            return Err(
                "nothing to do: give --tcpmss, --clamp-mss-to-pmtu or --strip-options".into(),
            );
        }
        Ok(Rules { tcpmss, strip })
    }
}

/// Runs `rewrite` for the command line; a summary goes to standard error.
pub fn run(args: &RewriteArgs) -> Result<crate::Outcome, crate::Failure> {
    let rules = args.rules().map_err(crate::Failure::Usage)?;
    let input = crate::open_capture(&args.input)?;
    let output: Box<dyn Write> = if args.output.as_os_str() == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(
            File::create(&args.output)
                .map_err(|e| format!("cannot create {}: {e}", args.output.display()))?,
        )
    };
    let stats =
        rewrite(input, output, &rules).map_err(|e| format!("{}: {e}", args.input.display()))?;
    eprintln!(
        "rewrite: {} packets, {} rewritten, {} dropped, {} copied as they were (cut by the snap length)",
        stats.packets, stats.rewritten, stats.dropped, stats.truncated
    );
    Ok(crate::Outcome::Clean)
}
