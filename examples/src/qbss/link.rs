//! The output link: its line rate, the payload rate left after physical framing, and
//! what each packet costs on the wire.
//!
//! An OC-3c is 155.52 Mbit/s on the line; SONET overhead leaves 149.76 Mbit/s of
//! payload (260 of 270 columns). ATM carries each IP packet in AAL5: 8 bytes of
//! LLC/SNAP encapsulation (RFC 2684) and an 8-byte trailer, padded up to a multiple of
//! 48 bytes and cut into 53-byte cells. A 1500-byte packet thus takes 32 cells (1696
//! bytes), and the goodput is 149.76 x 1500 / 1696 = 132.45 Mbit/s.

/// Physical framing of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No overhead: the rate is the IP rate.
    Raw,
    /// Ethernet: 14-byte header, 4-byte FCS, 64-byte minimum frame, 8-byte preamble and
    /// 12-byte gap (a 1500-byte packet takes 1538 bytes of line time).
    Ethernet,
    /// SONET/SDH payload carrying ATM cells (AAL5 with LLC/SNAP): the OC-n links.
    SonetAtm,
    /// ATM cells straight at the rate given (AAL5 with LLC/SNAP), no SONET overhead.
    Atm,
}

/// Bytes of an ATM cell.
pub const ATM_CELL: u64 = 53;
/// Payload bytes of an ATM cell.
pub const ATM_CELL_PAYLOAD: u64 = 48;
/// AAL5 trailer bytes.
pub const AAL5_TRAILER: u64 = 8;
/// LLC/SNAP encapsulation bytes (RFC 2684 routed PDUs).
pub const LLC_SNAP: u64 = 8;
/// Ethernet bytes per frame besides the IP packet: header 14, FCS 4, preamble 8, gap 12.
pub const ETHERNET_OVERHEAD: u64 = 38;
/// Smallest Ethernet frame (header to FCS).
pub const ETHERNET_MIN_FRAME: u64 = 64;

/// A link: name, line rate and framing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Name shown in reports ("OC-3 ATM").
    pub name: String,
    /// Line rate in bit/s.
    pub line_bps: u64,
    /// Framing.
    pub framing: Framing,
}

impl Link {
    /// The rate left for the framing's units (cells, frames) after physical overhead:
    /// SONET keeps 26/27 of the line (149.76 of 155.52 Mbit/s).
    pub fn payload_bps(&self) -> u64 {
        match self.framing {
            Framing::SonetAtm => self.line_bps / 27 * 26 + self.line_bps % 27 * 26 / 27,
            _ => self.line_bps,
        }
    }

    /// Bytes a packet of `ip_len` bytes takes at the payload rate.
    pub fn wire_bytes(&self, ip_len: u32) -> u64 {
        wire_bytes(self.framing, ip_len)
    }

    /// IP goodput in bit/s for back-to-back packets of `ip_len` bytes.
    pub fn goodput_bps(&self, ip_len: u32) -> u64 {
        let wire = self.wire_bytes(ip_len).max(1);
        (u128::from(self.payload_bps()) * u128::from(ip_len) / u128::from(wire)) as u64
    }
}

/// Bytes a packet of `ip_len` bytes takes on a link with `framing`.
pub fn wire_bytes(framing: Framing, ip_len: u32) -> u64 {
    let l = u64::from(ip_len);
    match framing {
        Framing::Raw => l,
        Framing::Ethernet => (l + 18).max(ETHERNET_MIN_FRAME) + 20,
        Framing::SonetAtm | Framing::Atm => {
            (l + LLC_SNAP + AAL5_TRAILER).div_ceil(ATM_CELL_PAYLOAD) * ATM_CELL
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oc3_atm_goodput() {
        // OC-3c: 155.52 Mbit/s line, 149.76 Mbit/s SONET payload (GR-253).
        let l = Link {
            name: "OC-3".into(),
            line_bps: 155_520_000,
            framing: Framing::SonetAtm,
        };
        assert_eq!(l.payload_bps(), 149_760_000);
        assert_eq!(l.wire_bytes(1500), 32 * 53);
        assert_eq!(l.goodput_bps(1500), 132_452_830);
    }

    #[test]
    fn ethernet_frame_is_1538_bytes() {
        // 1500-byte MTU: 1538 bytes of line time per frame (IEEE 802.3).
        assert_eq!(wire_bytes(Framing::Ethernet, 1500), 1538);
        assert_eq!(wire_bytes(Framing::Ethernet, 40), 84);
    }
}
