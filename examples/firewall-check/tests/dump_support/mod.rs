//! Test helpers shared by the dump and analyze tests: a tiny pcap / pcapng
//! writer, builders for IPv4 / IPv6 TCP segments with chosen options, and
//! cutting records out of a classic pcap (a capture without its handshake,
//! or one that dropped records).
#![allow(dead_code)]

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::process::Command;

use capture::writer::{Interface, PcapWriter, PcapngWriter, Resolution};
use capture::Timestamp;
use tcp_options::ip::PROTOCOL_TCP;
use tcp_options::{Flags, IpRepr, Ipv4Repr, Ipv6Repr, PacketRepr, TcpRepr};

/// IPv6 next header: Fragment.
const FRAGMENT: u8 = 44;

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
    /// The IPv4 identification.
    pub ident: u16,
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
            ident: 0x1234,
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
    pub fn ident(mut self, id: u16) -> Self {
        self.ident = id;
        self
    }
    pub fn tos(mut self, t: u8) -> Self {
        self.tos = t;
        self
    }

    /// The option block padded with zeros to a multiple of 4 bytes, and
    /// the payload (`a` repeated).
    fn parts(&self) -> (Vec<u8>, Vec<u8>) {
        let mut opts = self.options.clone();
        while !opts.len().is_multiple_of(4) {
            opts.push(0);
        }
        (opts, vec![0x61; self.payload])
    }

    /// The TCP part, through `tcp-options`' representation.
    fn repr<'a>(&self, options: &'a [u8], payload: &'a [u8]) -> TcpRepr<'a> {
        TcpRepr {
            seq_number: self.seq,
            ack_number: self.ack,
            flags: Flags::from_bits_retain(u16::from(self.flags)),
            window: self.window,
            options,
            payload,
            ..TcpRepr::new(self.sport, self.dport)
        }
    }

    /// TCP header (options padded with zeros to a multiple of 4) and
    /// payload; checksum 0.
    pub fn tcp_bytes(&self) -> Vec<u8> {
        let (opts, payload) = self.parts();
        let tcp = self.repr(&opts, &payload);
        let mut b = vec![0; tcp.buffer_len()];
        tcp.emit(&mut b, None)
            .expect("a TCP segment within the limits");
        b
    }

    fn emit(&self, ip: IpRepr<'_>, opts: &[u8], payload: &[u8]) -> Vec<u8> {
        let packet = PacketRepr {
            ip,
            tcp: self.repr(opts, payload),
        };
        let mut b = vec![0; packet.buffer_len()];
        packet.emit(&mut b).expect("a packet within the limits");
        b
    }

    /// IPv4 packet (identification 0x1234 unless set, DF, TTL 64), both
    /// checksums valid.
    pub fn ipv4(&self) -> Vec<u8> {
        let (opts, payload) = self.parts();
        let ip = Ipv4Repr {
            tos: self.tos,
            identification: self.ident,
            dont_fragment: true,
            ..Ipv4Repr::tcp(Ipv4Addr::from(self.src), Ipv4Addr::from(self.dst))
        };
        self.emit(IpRepr::V4(ip), &opts, &payload)
    }

    /// IPv6 packet (addresses 2001:db8::<last byte of the v4 address>)
    /// with the given extension headers before TCP (each `(type, body)`,
    /// the body's first byte set to the next header's type). The crates'
    /// representation refuses to build a fragment, so a Fragment header
    /// (type 44) in the list is spliced into the emitted packet instead.
    pub fn ipv6(&self, ext: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let (opts, payload) = self.parts();
        let addr = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            b[15] = a[3];
            Ipv6Addr::from(b)
        };
        let chain = |ext: &[(u8, Vec<u8>)]| -> (u8, Vec<u8>) {
            let mut bytes = Vec::new();
            for (i, (_, body)) in ext.iter().enumerate() {
                let mut b = body.clone();
                b[0] = ext.get(i + 1).map_or(PROTOCOL_TCP, |(nh, _)| *nh);
                bytes.extend_from_slice(&b);
            }
            (ext.first().map_or(PROTOCOL_TCP, |(nh, _)| *nh), bytes)
        };
        let frag = ext.iter().position(|(nh, _)| *nh == FRAGMENT);
        let built: Vec<(u8, Vec<u8>)> = match frag {
            Some(i) => ext[..i].iter().chain(&ext[i + 1..]).cloned().collect(),
            None => ext.to_vec(),
        };
        let (next_header, extension_headers) = chain(&built);
        let ip = Ipv6Repr {
            traffic_class: self.tos,
            next_header,
            extension_headers: &extension_headers,
            ..Ipv6Repr::tcp(addr(self.src), addr(self.dst))
        };
        let mut packet = self.emit(IpRepr::V6(ip), &opts, &payload);
        if let Some(i) = frag {
            // Splice the Fragment header in at its place, and fix the chain
            // and the payload length around it.
            let at = 40 + built[..i].iter().map(|(_, b)| b.len()).sum::<usize>();
            let mut f = ext[i].1.clone();
            f[0] = ext.get(i + 1).map_or(PROTOCOL_TCP, |(nh, _)| *nh);
            let before = if i == 0 { 6 } else { at - built[i - 1].1.len() };
            packet[before] = FRAGMENT;
            packet.splice(at..at, f.iter().copied());
            let plen = u16::try_from(packet.len() - 40).expect("a small packet");
            packet[4..6].copy_from_slice(&plen.to_be_bytes());
        }
        packet
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

/// A legacy pcap file (little-endian; nanosecond magic when `nanos`),
/// through the capture crate's writer.
pub fn pcap(linktype: u32, nanos: bool, pkts: &[Pkt]) -> Vec<u8> {
    let resolution = if nanos {
        Resolution::Nanos
    } else {
        Resolution::Micros
    };
    let mut w = PcapWriter::new(Vec::new(), linktype, resolution).expect("a Vec takes it");
    for p in pkts {
        let ts = Timestamp {
            secs: i64::try_from(p.ts_ns / 1_000_000_000).expect("a time after 1970"),
            nanos: (p.ts_ns % 1_000_000_000) as u32,
        };
        let origlen = u32::try_from(p.origlen).expect("a small packet");
        w.write(ts, &p.data, origlen)
            .expect("a record within the limits");
    }
    w.into_inner().expect("a Vec takes it")
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

/// A pcapng file with one or more sections, through the capture crate's
/// writer.
pub fn pcapng(sections: &[Section]) -> Vec<u8> {
    let mut w: Option<PcapngWriter<Vec<u8>>> = None;
    for s in sections {
        match w.as_mut() {
            None => w = Some(PcapngWriter::new(Vec::new()).expect("a Vec takes it")),
            Some(w) => w.section().expect("a Vec takes it"),
        }
        let w = w.as_mut().expect("started");
        for i in &s.ifaces {
            w.interface(Interface {
                linktype: i.linktype,
                tsresol: i.tsresol,
            })
            .expect("a Vec takes it");
        }
        for (ifid, p) in &s.pkts {
            let origlen = u32::try_from(p.origlen).expect("a small packet");
            w.packet(*ifid, p.ts_ns, &p.data, origlen)
                .expect("a record within the limits");
        }
    }
    match w {
        Some(w) => w.into_inner().expect("a Vec takes it"),
        None => Vec::new(),
    }
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
    capture::writer::without_records(file, dropped).expect("a readable capture")
}

/// `analyze --json` of a capture in memory, as one JSON document.
pub fn analyze_json(
    bytes: &[u8],
    settings: &firewall_check::analysis::analyze::Settings,
) -> serde_json::Value {
    use firewall_check::analysis::analyze::{analyze, AnalyzeFormat};
    let mut out = Vec::new();
    analyze(bytes, &mut out, AnalyzeFormat::Json, settings).expect("analyze");
    serde_json::from_slice(&out).expect("JSON")
}
