//! The netfilter lab's traffic (`lab-nfsend`, run by `netfilter-lab.sh`):
//! random IPv4 TCP segments from the sender to the receiver, for the real
//! TCPMSS and TCPOPTSTRIP targets to edit and `firewall-check rewrite` to
//! match byte for byte.
//!
//! The mix: SYNs (with and without an MSS option, with and without
//! payload), SYN-ACKs, SYN+RST, data segments, random flags; option blocks
//! of well-formed options at every alignment and malformed records (length
//! 0 or 1, a known kind with a wrong length, overruns, bytes after EOL,
//! random bytes); a few data offsets past the packet or below 5 words;
//! checksums correct or random (0xffff included).
//!
//! Each packet is written by [`tcp_options::PacketRepr::emit`] (IPv4
//! header with identification `n + 1` and DF, TCP header, options,
//! payload, checksums); the deliberate faults (a wrong data offset, the
//! reserved bits, a wrong checksum) are then applied to the emitted bytes
//! through the crate's header view and pseudo-header. The same seed gives
//! the same packets.

use std::net::Ipv4Addr;

use tcp_options::header::field;
use tcp_options::{
    Flags, IpRepr, Ipv4Repr, PacketRepr, PseudoHeader, TcpHeader, TcpRepr, MAX_HEADER_LEN,
};
use zerocopy::FromBytes;

/// The largest packet [`packet`] builds: IP header, TCP header with 40
/// bytes of options, at most 59 bytes of payload.
pub const MAX_PACKET: usize = 20 + MAX_HEADER_LEN + 64;

/// A small seeded generator (SplitMix64): the same seed gives the same
/// packets on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator for `seed`.
    pub const fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..hi` (`lo` when the range is empty).
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        match hi.checked_sub(lo) {
            Some(n) if n > 0 => lo + self.next_u64() % n,
            _ => lo,
        }
    }

    fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    fn u16(&mut self) -> u16 {
        self.next_u64() as u16
    }

    fn u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    /// One of `items` (the default value for an empty slice).
    fn pick<T: Copy + Default>(&mut self, items: &[T]) -> T {
        let i = self.range(0, items.len() as u64) as usize;
        items.get(i).copied().unwrap_or_default()
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
}

/// One option record, well-formed or not.
fn option(r: &mut Rng) -> Vec<u8> {
    let k = r.unit();
    let mut out = Vec::new();
    if k < 0.12 {
        let any = r.u16();
        let mss = r.pick(&[536, 1200, 1360, 1400, 1460, 8960, 65535, 0, any]);
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    } else if k < 0.22 {
        out.extend_from_slice(&[3, 3, r.range(0, 16) as u8]);
    } else if k < 0.30 {
        out.extend_from_slice(&[4, 2]);
    } else if k < 0.40 {
        out.extend_from_slice(&[8, 10]);
        out.extend_from_slice(&r.u32().to_be_bytes());
        out.extend_from_slice(&r.u32().to_be_bytes());
    } else if k < 0.46 {
        let n = r.range(1, 4) as usize;
        out.extend_from_slice(&[5, (2 + 8 * n) as u8]);
        out.extend(r.bytes(8 * n));
    } else if k < 0.50 {
        out.extend_from_slice(&[19, 18]);
        out.extend(r.bytes(16));
    } else if k < 0.60 {
        out.extend(std::iter::repeat_n(1, r.range(1, 4) as usize));
    } else if k < 0.64 {
        out.push(0);
    } else if k < 0.72 {
        // Malformed framing: length 0 or 1.
        out.extend_from_slice(&[r.pick(&[2, 3, 4, 8, 30, 99]), r.pick(&[0, 1])]);
    } else if k < 0.78 {
        // A known kind with a wrong length.
        let kind = r.pick(&[2, 3, 4, 5, 8, 19]);
        let len = r.range(2, 12) as u8;
        out.extend_from_slice(&[kind, len]);
        out.extend(r.bytes(usize::from(len) - 2));
    } else if k < 0.84 {
        // Overrun: a length larger than what follows.
        out.extend_from_slice(&[r.pick(&[2, 3, 8, 99]), r.range(12, 60) as u8]);
    } else if k < 0.92 {
        // Unknown and other kinds.
        let kind = r.pick(&[28, 29, 30, 34, 99, 172, 253, 254]);
        let len = r.range(2, 10) as u8;
        out.extend_from_slice(&[kind, len]);
        out.extend(r.bytes(usize::from(len) - 2));
    } else {
        let n = r.range(1, 6) as usize;
        out.extend(r.bytes(n));
    }
    out
}

/// An option block: whole 32-bit words, at most 40 bytes.
fn options(r: &mut Rng) -> Vec<u8> {
    if r.unit() < 0.1 {
        return Vec::new();
    }
    let mut block = Vec::new();
    for _ in 0..r.range(1, 7) {
        block.extend(option(r));
    }
    block.truncate(r.pick(&[40, 40, 40, 36, 20, 8, 4]));
    let pad = (4 - block.len() % 4) % 4;
    if r.unit() < 0.8 {
        let b = r.pick(&[0, 1]);
        block.extend(std::iter::repeat_n(b, pad));
    } else {
        block.extend(r.bytes(pad));
    }
    block
}

/// Packet `n` (from 0) from `src` to `dst`: its bytes.
pub fn packet(r: &mut Rng, n: u32, src: Ipv4Addr, dst: Ipv4Addr) -> Vec<u8> {
    let k = r.unit();
    let flags = if k < 0.45 {
        Flags::SYN
    } else if k < 0.55 {
        Flags::SYN | Flags::ACK
    } else if k < 0.60 {
        Flags::SYN | Flags::RST
    } else if k < 0.63 {
        Flags::from_bits_truncate(u16::from(r.byte()))
    } else {
        Flags::PSH | Flags::ACK
    };
    let mut opts = options(r);
    if flags.contains(Flags::SYN) && r.unit() < 0.3 {
        // No MSS option: TCPMSS inserts one (when there is no payload).
        let nop_wscale: &[u8] = &[1, 3, 3, 7];
        let sack_ts: &[u8] = &[4, 2, 1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
        opts = r.pick(&[&[][..], nop_wscale, sack_ts]).to_vec();
    }
    let payload = if !flags.contains(Flags::SYN) || r.unit() < 0.2 {
        let n = r.range(0, 60) as usize;
        r.bytes(n)
    } else {
        Vec::new()
    };
    let header_words = 5 + opts.len() / 4;
    let bad_offset = (r.unit() < 0.03).then(|| {
        let past = header_words + 1 + payload.len() / 4;
        r.pick(&[0, 3, 4, 15, past]).min(15) as u8
    });
    let reserved = (r.unit() < 0.05).then(|| r.range(0, 16) as u8);
    let src_port = r.range(1024, 65536) as u16;
    let any_port = r.range(1, 65536) as u16;
    let dst_port = r.pick(&[22, 80, 443, 5201, any_port]);
    let seq_number = r.u32();
    let ack_number = if flags.contains(Flags::ACK) {
        r.u32()
    } else {
        0
    };
    let window = r.u16();
    let repr = PacketRepr {
        ip: IpRepr::V4(Ipv4Repr {
            identification: (n.wrapping_add(1) & 0xffff) as u16,
            ..Ipv4Repr::tcp(src, dst)
        }),
        tcp: TcpRepr {
            seq_number,
            ack_number,
            flags,
            window,
            options: &opts,
            payload: &payload,
            ..TcpRepr::new(src_port, dst_port)
        },
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    // Options of whole words up to 40 bytes and a short payload: emit
    // cannot refuse; an empty packet would be caught by the lab's count.
    let Ok(len) = repr.emit(&mut buf) else {
        return Vec::new();
    };
    buf.truncate(len);
    let ihl = repr.ip.header_len();
    let good_checksum = r.unit() < 0.85;
    let any_checksum = r.u16();
    let bad_checksum = r.pick(&[0xffff, 0, any_checksum]);
    let segment = &mut buf[ihl..];
    if let Ok((h, _)) = TcpHeader::mut_from_prefix(segment) {
        if let Some(words) = bad_offset {
            // At most 15: set_data_offset accepts it.
            let _ = h.set_data_offset(words);
        }
        if !good_checksum {
            h.set_checksum(bad_checksum);
        }
    }
    if let (Some(bits), Some(b)) = (reserved, segment.get_mut(field::DATA_OFFSET)) {
        // The three reserved bits and AE: TcpRepr writes the reserved bits
        // as zero, so the fault is applied to the emitted byte.
        *b = (*b & 0xf0) | bits;
    }
    if good_checksum {
        PseudoHeader::V4 { src, dst }.fill(segment);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: Ipv4Addr = Ipv4Addr::new(198, 18, 21, 2);
    const DST: Ipv4Addr = Ipv4Addr::new(198, 18, 22, 2);

    #[test]
    fn the_mix_has_what_the_lab_needs() {
        let mut r = Rng::new(7);
        let (mut syn_no_mss, mut bad_sum, mut bad_offset, mut parsed) = (0, 0, 0, 0);
        for n in 0..3000 {
            let p = packet(&mut r, n, SRC, DST);
            assert!(
                p.len() >= 40 && p.len() <= MAX_PACKET,
                "packet {n}: {p:02x?}"
            );
            assert_eq!(u16::from_be_bytes([p[4], p[5]]), (n + 1) as u16, "IP ID");
            assert_eq!(usize::from(u16::from_be_bytes([p[2], p[3]])), p.len());
            assert!(tcp_options::checksum::verify_ipv4_header(&p[..20]));
            let seg = &p[20..];
            bad_sum += usize::from(!PseudoHeader::V4 { src: SRC, dst: DST }.verify(seg));
            match PacketRepr::parse(&p) {
                Ok(rp) => {
                    parsed += 1;
                    let syn = rp.tcp.flags.contains(Flags::SYN);
                    let mss = rp.tcp.options.first() == Some(&2);
                    syn_no_mss += usize::from(syn && !mss && rp.tcp.payload.is_empty());
                }
                Err(_) => bad_offset += 1,
            }
        }
        assert!((300..600).contains(&bad_sum), "{bad_sum} bad checksums");
        assert!((20..200).contains(&bad_offset), "{bad_offset} bad offsets");
        assert!(parsed > 2500, "{parsed} parsed");
        assert!(syn_no_mss > 300, "{syn_no_mss} SYNs without MSS");
    }

    #[test]
    fn a_seed_gives_the_same_packets() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let mut c = Rng::new(43);
        let pa: Vec<_> = (0..50).map(|n| packet(&mut a, n, SRC, DST)).collect();
        let pb: Vec<_> = (0..50).map(|n| packet(&mut b, n, SRC, DST)).collect();
        let pc: Vec<_> = (0..50).map(|n| packet(&mut c, n, SRC, DST)).collect();
        assert_eq!(pa, pb);
        assert_ne!(pa, pc);
    }
}
