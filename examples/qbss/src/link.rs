//! The output link: its line rate, the payload rate left after physical framing, and
//! what each packet costs on the wire, from the `bdp` crate's link framing.
//!
//! An OC-3c is 155.52 Mbit/s on the line; SONET overhead leaves 149.76 Mbit/s of
//! payload. ATM carries each IP packet in AAL5: 8 bytes of LLC/SNAP encapsulation
//! (RFC 2684) and an 8-byte trailer, padded up to a multiple of 48 bytes and cut into
//! 53-byte cells. A 1500-byte packet thus takes 32 cells (1696 bytes), and the goodput
//! is 149.76 x 1500 / 1696 = 132.45 Mbit/s ([`bdp::link`] has the arithmetic).

use bdp::{Bytes, Framing};

/// No per-packet overhead: HDLC-like framing of 0 bytes.
pub const RAW: Framing = Framing::Hdlc { overhead: 0 };

/// A link: name, rates and framing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Name shown in reports ("OC-3 ATM").
    pub name: String,
    /// Line rate in bit/s.
    pub line_bps: u64,
    /// Rate left for framed packets (cells, frames) after physical overhead, bit/s.
    pub payload_bps: u64,
    /// Per-packet framing.
    pub framing: Framing,
}

impl Link {
    /// The link named `kind` in [`bdp::LINKS`] (`oc3-atm`, `ethernet-10g`, ...), shown as `name`.
    pub fn by_name(kind: &str, name: Option<String>) -> Option<Link> {
        let l = bdp::Link::by_name(kind)?;
        Some(Link {
            name: name.unwrap_or_else(|| l.description.to_string()),
            line_bps: l.line_rate.get(),
            payload_bps: l.payload_rate.get(),
            framing: l.framing,
        })
    }

    /// The rate left for the framing's units after physical overhead.
    pub fn payload_bps(&self) -> u64 {
        self.payload_bps
    }

    /// Bytes a packet of `ip_len` bytes takes at the payload rate.
    pub fn wire_bytes(&self, ip_len: u32) -> u64 {
        wire_bytes(self.framing, ip_len)
    }

    /// IP goodput in bit/s for back-to-back packets of `ip_len` bytes.
    pub fn goodput_bps(&self, ip_len: u32) -> u64 {
        let wire = self.wire_bytes(ip_len).max(1);
        (u128::from(self.payload_bps) * u128::from(ip_len) / u128::from(wire)) as u64
    }
}

/// Bytes a packet of `ip_len` bytes takes on a link with `framing`.
pub fn wire_bytes(framing: Framing, ip_len: u32) -> u64 {
    // A u32 length plus at most a few dozen bytes of framing cannot overflow u64.
    framing
        .wire_bytes(Bytes::new(u64::from(ip_len)))
        .map_or(u64::MAX, |b| b.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oc3_atm_goodput() {
        // OC-3c: 155.52 Mbit/s line, 149.76 Mbit/s SONET payload (GR-253); AAL5
        // LLC/SNAP puts a 1500-byte packet in 32 cells.
        let l = Link::by_name("oc3-atm", Some("OC-3 ATM".into())).unwrap();
        assert_eq!((l.line_bps, l.payload_bps()), (155_520_000, 149_760_000));
        assert_eq!(l.wire_bytes(1500), 32 * 53);
        assert_eq!(l.goodput_bps(1500), 132_452_830);
    }

    #[test]
    fn ethernet_frame_is_1538_bytes_and_raw_is_the_packet() {
        // 1500-byte MTU: 1538 bytes of line time per frame (IEEE 802.3).
        assert_eq!(wire_bytes(Framing::Ethernet { vlan_tags: 0 }, 1500), 1538);
        assert_eq!(wire_bytes(Framing::Ethernet { vlan_tags: 0 }, 40), 84);
        assert_eq!(wire_bytes(RAW, 1500), 1500);
    }
}
