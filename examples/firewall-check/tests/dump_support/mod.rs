//! Test helpers shared by the dump and analyze tests: a tiny pcap / pcapng
//! writer, builders for IPv4 / IPv6 TCP segments with chosen options, and
//! cutting records out of a classic pcap (a capture without its handshake,
//! or one that dropped records).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// TCP flag bits.
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// A TCP segment to build.
#[derive(Clone, Debug)]
pub struct Seg {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub options: Vec<u8>,
    pub payload: usize,
    pub tos: u8,
}

impl Seg {
    pub fn new(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Self {
        Seg {
            src,
            dst,
            sport,
            dport,
            seq: 0,
            ack: 0,
            flags: ACK,
            window: 65535,
            options: Vec::new(),
            payload: 0,
            tos: 0,
        }
    }
    pub fn seq(mut self, seq: u32) -> Self {
        self.seq = seq;
        self
    }
    pub fn ack(mut self, ack: u32) -> Self {
        self.ack = ack;
        self
    }
    pub fn flags(mut self, f: u8) -> Self {
        self.flags = f;
        self
    }
    pub fn win(mut self, w: u16) -> Self {
        self.window = w;
        self
    }
    pub fn opts(mut self, o: &[u8]) -> Self {
        self.options = o.to_vec();
        self
    }
    pub fn payload(mut self, n: usize) -> Self {
        self.payload = n;
        self
    }
    pub fn tos(mut self, t: u8) -> Self {
        self.tos = t;
        self
    }

    /// TCP header (options padded with zeros to a multiple of 4) and payload.
    pub fn tcp_bytes(&self) -> Vec<u8> {
        let mut opts = self.options.clone();
        while !opts.len().is_multiple_of(4) {
            opts.push(0);
        }
        let doff = (20 + opts.len()) / 4;
        let mut t = Vec::new();
        t.extend_from_slice(&self.sport.to_be_bytes());
        t.extend_from_slice(&self.dport.to_be_bytes());
        t.extend_from_slice(&self.seq.to_be_bytes());
        t.extend_from_slice(&self.ack.to_be_bytes());
        t.push((doff as u8) << 4);
        t.push(self.flags);
        t.extend_from_slice(&self.window.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 0]);
        t.extend_from_slice(&opts);
        t.extend(std::iter::repeat_n(0x61, self.payload));
        t
    }

    /// IPv4 packet with a valid header checksum (TCP checksum left 0).
    pub fn ipv4(&self) -> Vec<u8> {
        let tcp = self.tcp_bytes();
        let total = (20 + tcp.len()) as u16;
        let mut ip = vec![0x45, self.tos];
        ip.extend_from_slice(&total.to_be_bytes());
        ip.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, 6, 0, 0]);
        ip.extend_from_slice(&self.src);
        ip.extend_from_slice(&self.dst);
        let mut sum: u32 = 0;
        for c in ip.chunks(2) {
            sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        let ck = !(sum as u16);
        ip[10..12].copy_from_slice(&ck.to_be_bytes());
        ip.extend_from_slice(&tcp);
        ip
    }

    /// IPv6 packet (addresses 2001:db8::<last byte of the v4 address>) with
    /// the given extension headers before TCP.
    pub fn ipv6(&self, ext: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let tcp = self.tcp_bytes();
        let ext_len: usize = ext.iter().map(|(_, b)| b.len()).sum();
        let first = ext.first().map_or(6, |(nh, _)| *nh);
        let mut ip = vec![0x60 | (self.tos >> 4), self.tos << 4, 0, 0];
        ip.extend_from_slice(&((ext_len + tcp.len()) as u16).to_be_bytes());
        ip.push(first);
        ip.push(64);
        for a in [self.src, self.dst] {
            ip.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            ip.extend_from_slice(&[0; 11]);
            ip.push(a[3]);
        }
        for (i, (_, body)) in ext.iter().enumerate() {
            let next = ext.get(i + 1).map_or(6, |(nh, _)| *nh);
            let mut b = body.clone();
            b[0] = next;
            ip.extend_from_slice(&b);
        }
        ip.extend_from_slice(&tcp);
        ip
    }
}

/// Ethernet II frame around an IP packet.
pub fn ethernet(ethertype: u16, ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

/// One captured packet: time in nanoseconds since the epoch, bytes, original length.
#[derive(Clone, Debug)]
pub struct Pkt {
    pub ts_ns: u64,
    pub data: Vec<u8>,
    pub origlen: usize,
}

impl Pkt {
    pub fn new(ts_ns: u64, data: Vec<u8>) -> Self {
        let origlen = data.len();
        Pkt {
            ts_ns,
            data,
            origlen,
        }
    }
    /// Cut the captured bytes to `snap` (origlen unchanged).
    pub fn snap(mut self, snap: usize) -> Self {
        self.data.truncate(snap);
        self
    }
}

/// A legacy pcap file (little-endian; nanosecond magic when `nanos`).
pub fn pcap(linktype: u32, nanos: bool, pkts: &[Pkt]) -> Vec<u8> {
    let mut f = Vec::new();
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    f.extend_from_slice(&magic.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&262_144u32.to_le_bytes());
    f.extend_from_slice(&linktype.to_le_bytes());
    for p in pkts {
        let secs = (p.ts_ns / 1_000_000_000) as u32;
        let frac = if nanos {
            (p.ts_ns % 1_000_000_000) as u32
        } else {
            ((p.ts_ns % 1_000_000_000) / 1000) as u32
        };
        f.extend_from_slice(&secs.to_le_bytes());
        f.extend_from_slice(&frac.to_le_bytes());
        f.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
        f.extend_from_slice(&(p.origlen as u32).to_le_bytes());
        f.extend_from_slice(&p.data);
    }
    f
}

fn ng_block(f: &mut Vec<u8>, block_type: u32, body: &[u8]) {
    let mut body = body.to_vec();
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
    let len = (12 + body.len()) as u32;
    f.extend_from_slice(&block_type.to_le_bytes());
    f.extend_from_slice(&len.to_le_bytes());
    f.extend_from_slice(&body);
    f.extend_from_slice(&len.to_le_bytes());
}

/// A pcapng interface: link type and `if_tsresol` (None: default microseconds).
#[derive(Clone, Copy, Debug)]
pub struct Iface {
    pub linktype: u16,
    pub tsresol: Option<u8>,
}

/// A pcapng section: its interfaces and packets (interface index, packet).
pub struct Section {
    pub ifaces: Vec<Iface>,
    pub pkts: Vec<(u32, Pkt)>,
}

/// A pcapng file with one or more sections.
pub fn pcapng(sections: &[Section]) -> Vec<u8> {
    let mut f = Vec::new();
    for s in sections {
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        ng_block(&mut f, 0x0a0d_0d0a, &shb);
        for i in &s.ifaces {
            let mut idb = Vec::new();
            idb.extend_from_slice(&i.linktype.to_le_bytes());
            idb.extend_from_slice(&0u16.to_le_bytes());
            idb.extend_from_slice(&0u32.to_le_bytes());
            if let Some(r) = i.tsresol {
                idb.extend_from_slice(&9u16.to_le_bytes());
                idb.extend_from_slice(&1u16.to_le_bytes());
                idb.extend_from_slice(&[r, 0, 0, 0]);
                idb.extend_from_slice(&[0, 0, 0, 0]);
            }
            ng_block(&mut f, 1, &idb);
        }
        for (ifid, p) in &s.pkts {
            let units_per_sec: u64 = match s.ifaces[*ifid as usize].tsresol {
                None => 1_000_000,
                Some(r) if r & 0x80 == 0 => 10u64.pow(u32::from(r)),
                Some(r) => 1 << (r & 0x7f),
            };
            let ts = (u128::from(p.ts_ns) * u128::from(units_per_sec) / 1_000_000_000) as u64;
            let mut epb = Vec::new();
            epb.extend_from_slice(&ifid.to_le_bytes());
            epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(ts as u32).to_le_bytes());
            epb.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(p.origlen as u32).to_le_bytes());
            epb.extend_from_slice(&p.data);
            ng_block(&mut f, 6, &epb);
        }
    }
    f
}

/// Runs `firewall-check` with `args`; returns (exit code, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_firewall-check"))
        .args(args)
        .output()
        .expect("run firewall-check");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `bytes` to a fresh file in the target's temporary directory.
pub fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firewall-check-tests");
    std::fs::create_dir_all(&dir).expect("create temp dir");
    let p = dir.join(format!("{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).expect("write temp file");
    p
}

/// The Linux SYN option layout: MSS 1460, SACK-Permitted, Timestamps, NOP, Window Scale.
pub fn linux_syn_options(tsval: u32, tsecr: u32, wscale: u8) -> Vec<u8> {
    let mut o = vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10];
    o.extend_from_slice(&tsval.to_be_bytes());
    o.extend_from_slice(&tsecr.to_be_bytes());
    o.extend_from_slice(&[1, 3, 3, wscale]);
    o
}

/// NOP NOP Timestamps.
pub fn ts_options(tsval: u32, tsecr: u32) -> Vec<u8> {
    let mut o = vec![1, 1, 8, 10];
    o.extend_from_slice(&tsval.to_be_bytes());
    o.extend_from_slice(&tsecr.to_be_bytes());
    o
}

/// Whether tests that need an external tool must fail rather than skip.
pub fn required() -> bool {
    std::env::var("TCP_PERF_LAB_REQUIRED").is_ok_and(|v| v == "1")
}

/// A classic pcap without its first `n` records.
pub fn drop_first_records(file: &[u8], n: usize) -> Vec<u8> {
    drop_records(file, |i| i < n)
}

/// A classic pcap without the records whose index `dropped` holds (a
/// capture tool that dropped bursts of them, as tcpdump's "packets dropped
/// by kernel").
pub fn drop_records(file: &[u8], dropped: impl Fn(usize) -> bool) -> Vec<u8> {
    let le = matches!(
        file.get(..4),
        Some([0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1])
    );
    let mut out = file[..24].to_vec();
    let mut pos = 24;
    let mut i = 0;
    while pos + 16 <= file.len() {
        let b = [file[pos + 8], file[pos + 9], file[pos + 10], file[pos + 11]];
        let incl = if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        } as usize;
        let end = (pos + 16 + incl).min(file.len());
        if !dropped(i) {
            out.extend_from_slice(&file[pos..end]);
        }
        pos = end;
        i += 1;
    }
    out
}
