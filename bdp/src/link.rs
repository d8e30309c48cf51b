//! Links and their framing: how many bits a packet really costs.
//!
//! A link has a *line rate* (what the interface signals) and a *payload rate*
//! (what is left for packets after the physical layer's own overhead). The
//! [`Framing`] then adds a per-packet cost on top of each IP packet:
//!
//! - **Ethernet** (IEEE 802.3): preamble and SFD 8, header 14, FCS 4 and the
//!   inter-frame gap 12 bytes: 38 bytes per frame, so a 1500-byte packet
//!   occupies 1538 bytes of line time. Each 802.1Q tag adds 4. Frames are
//!   padded to the 64-byte minimum (header to FCS). Line rate = payload rate.
//! - **SONET/SDH** (ANSI T1.105, ITU-T G.707): an STS-N frame is 90N columns
//!   by 9 rows, 8000 frames/s, so the line rate is N x 51.84 Mbit/s. Section
//!   and line overhead take 3N columns; of the 87N-column SPE, one column is
//!   path overhead and N/3 - 1 columns are fixed stuff in a concatenated
//!   STS-Nc, leaving 260N/3 columns: N x 49.92 Mbit/s (OC-3c 149.76, OC-12c
//!   599.04, OC-48c 2396.16, OC-192c 9584.64). An STS-1 SPE is 50.112 Mbit/s;
//!   without its path overhead column (49.536) and its two fixed-stuff
//!   columns, 48.384 Mbit/s carry packets (or ATM cells).
//! - **ATM** cell tax (ITU-T I.363.5 AAL5, RFC 2684): the packet, plus 8 bytes
//!   of LLC/SNAP header when that encapsulation is used, plus the 8-byte AAL5
//!   trailer, is padded to a multiple of 48 bytes and sent as 53-byte cells.
//!   A 1500-byte packet with LLC/SNAP becomes 32 cells, 1696 bytes.
//! - **HDLC-like** byte framing: PPP over SONET (RFC 2615, RFC 1662: flag,
//!   address, control, 2-byte protocol, 4-byte FCS: 9 bytes with one shared
//!   flag) and PPP or Cisco HDLC on T1/E1/T3 (16-bit FCS: 7 bytes). Byte
//!   stuffing depends on the data and is not counted.
//!
//! T1 (DS1) signals 1.544 Mbit/s of which the 8 kbit/s framing bit leaves
//! 1.536 Mbit/s; E1 2.048 Mbit/s with timeslot 0 for framing leaves 1.984;
//! T3 (DS3) signals 44.736 Mbit/s of which C-bit parity framing leaves
//! 44.210 Mbit/s (the T3 figure RFC 6349 uses).
//!
//! Goodput is the TCP payload rate of back-to-back full-MTU segments:
//! `payload_rate * mss / wire_bytes(mtu)`, rounded down.

use crate::duration::{duration_from_nanos, NANOS_PER_SEC};
use crate::error::CalcError;
use crate::headers::TcpIpHeaders;
use crate::rate::BitsPerSecond;
use crate::size::Bytes;
use core::time::Duration;

/// Ethernet preamble (7) and start-of-frame delimiter (1), bytes.
pub const ETHERNET_PREAMBLE_SFD_LEN: u64 = 8;
/// Ethernet II header: destination, source, EtherType, bytes.
pub const ETHERNET_HEADER_LEN: u64 = 14;
/// Ethernet frame check sequence, bytes.
pub const ETHERNET_FCS_LEN: u64 = 4;
/// Minimum inter-frame gap (96 bit times), bytes.
pub const ETHERNET_IFG_LEN: u64 = 12;
/// One IEEE 802.1Q tag, bytes.
pub const VLAN_TAG_LEN: u64 = 4;
/// Minimum Ethernet frame from header to FCS, bytes.
pub const ETHERNET_MIN_FRAME_LEN: u64 = 64;
/// ATM cell, bytes.
pub const ATM_CELL_LEN: u64 = 53;
/// ATM cell payload, bytes.
pub const ATM_CELL_PAYLOAD_LEN: u64 = 48;
/// AAL5 CPCS-PDU trailer, bytes.
pub const AAL5_TRAILER_LEN: u64 = 8;
/// RFC 2684 LLC/SNAP header for routed IP, bytes.
pub const LLC_SNAP_LEN: u64 = 8;
/// PPP in HDLC-like framing with a 32-bit FCS (RFC 2615 packet over SONET), bytes per packet.
pub const POS_OVERHEAD_LEN: u8 = 9;
/// PPP or Cisco HDLC with a 16-bit FCS (T1/E1/T3), bytes per packet.
pub const HDLC16_OVERHEAD_LEN: u8 = 7;

/// How IP packets are carried in AAL5 (RFC 2684).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtmEncapsulation {
    /// VC multiplexing: no header in the AAL5 payload.
    VcMux,
    /// LLC/SNAP: an 8-byte header before the packet.
    LlcSnap,
}

impl AtmEncapsulation {
    /// Header bytes this encapsulation adds to each packet.
    pub const fn header_len(self) -> u64 {
        match self {
            AtmEncapsulation::VcMux => 0,
            AtmEncapsulation::LlcSnap => LLC_SNAP_LEN,
        }
    }
}

/// The per-packet cost of a link layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Ethernet with this many 802.1Q tags (0 for an untagged frame).
    Ethernet {
        /// Number of 4-byte VLAN tags.
        vlan_tags: u8,
    },
    /// ATM AAL5 cells.
    Aal5 {
        /// Encapsulation of the IP packet in the AAL5 payload.
        encapsulation: AtmEncapsulation,
    },
    /// HDLC-like byte framing with a fixed overhead per packet.
    Hdlc {
        /// Bytes added to each packet (flag, address, control, protocol, FCS).
        overhead: u8,
    },
}

/// Number of AAL5 cells for a packet of `packet_len` bytes.
///
/// ```
/// use bdp::link::{aal5_cells, AtmEncapsulation};
/// // 1500 + 8 (LLC/SNAP) + 8 (trailer) = 1516 -> padded to 1536 = 32 cells.
/// assert_eq!(aal5_cells(1500, AtmEncapsulation::LlcSnap), 32);
/// // 40 + 8 = 48: exactly one cell with VC multiplexing.
/// assert_eq!(aal5_cells(40, AtmEncapsulation::VcMux), 1);
/// ```
pub const fn aal5_cells(packet_len: u64, encapsulation: AtmEncapsulation) -> u64 {
    // packet_len <= u64::MAX; the sum is done in u128 so it cannot wrap.
    let pdu = packet_len as u128 + encapsulation.header_len() as u128 + AAL5_TRAILER_LEN as u128;
    let cells = pdu.div_ceil(ATM_CELL_PAYLOAD_LEN as u128);
    cells as u64
}

impl Framing {
    /// Bytes of channel capacity one IP packet of `packet` bytes occupies,
    /// framing included.
    pub fn wire_bytes(self, packet: Bytes) -> Result<Bytes, CalcError> {
        let len = packet.get();
        const OVERFLOW: CalcError = CalcError::Overflow {
            what: "bytes on the wire",
        };
        let wire = match self {
            Framing::Ethernet { vlan_tags } => {
                let tags = u64::from(vlan_tags) * VLAN_TAG_LEN;
                let frame = len
                    .checked_add(ETHERNET_HEADER_LEN + ETHERNET_FCS_LEN + tags)
                    .ok_or(OVERFLOW)?
                    .max(ETHERNET_MIN_FRAME_LEN);
                frame
                    .checked_add(ETHERNET_PREAMBLE_SFD_LEN + ETHERNET_IFG_LEN)
                    .ok_or(OVERFLOW)?
            }
            Framing::Aal5 { encapsulation } => aal5_cells(len, encapsulation)
                .checked_mul(ATM_CELL_LEN)
                .ok_or(OVERFLOW)?,
            Framing::Hdlc { overhead } => len.checked_add(u64::from(overhead)).ok_or(OVERFLOW)?,
        };
        Ok(Bytes::new(wire))
    }
}

/// A link: its rates, its framing and its usual IP MTU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// Short name, as accepted by [`Link::by_name`] (`oc3-atm`).
    pub name: &'static str,
    /// One line for people.
    pub description: &'static str,
    /// The rate the interface signals.
    pub line_rate: BitsPerSecond,
    /// The rate left for framed packets after physical-layer overhead.
    pub payload_rate: BitsPerSecond,
    /// Per-packet framing.
    pub framing: Framing,
    /// IP MTU used for goodput.
    pub mtu: Bytes,
}

impl Link {
    /// A link from its parts.
    pub const fn new(
        name: &'static str,
        description: &'static str,
        line_rate: BitsPerSecond,
        payload_rate: BitsPerSecond,
        framing: Framing,
        mtu: Bytes,
    ) -> Self {
        Link {
            name,
            description,
            line_rate,
            payload_rate,
            framing,
            mtu,
        }
    }

    /// The same link with another IP MTU (jumbo frames, a tunnel).
    pub const fn with_mtu(self, mtu: Bytes) -> Self {
        Link { mtu, ..self }
    }

    /// The same link with another framing (a VLAN tag, VC-mux instead of LLC/SNAP).
    pub const fn with_framing(self, framing: Framing) -> Self {
        Link { framing, ..self }
    }

    /// A predefined link by name, ignoring ASCII case (see [`LINKS`]).
    pub fn by_name(name: &str) -> Option<Link> {
        LINKS
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name.trim()))
            .copied()
    }

    /// Bytes of payload-rate capacity one IP packet occupies.
    pub fn wire_bytes(&self, packet: Bytes) -> Result<Bytes, CalcError> {
        self.framing.wire_bytes(packet)
    }

    /// How long one IP packet of `packet` bytes occupies the link, framing
    /// included, at the payload rate; rounded up to the nanosecond.
    pub fn serialization_time(&self, packet: Bytes) -> Result<Duration, CalcError> {
        if self.payload_rate.is_zero() {
            return Err(CalcError::ZeroRate);
        }
        let bits = self.wire_bytes(packet)?.bits();
        let nanos = (bits * NANOS_PER_SEC).div_ceil(u128::from(self.payload_rate.get()));
        duration_from_nanos(nanos).ok_or(CalcError::Overflow {
            what: "serialization time",
        })
    }

    /// IP-layer rate of back-to-back packets of `packet` bytes, rounded down.
    pub fn ip_rate(&self, packet: Bytes) -> Result<BitsPerSecond, CalcError> {
        if packet.is_zero() {
            return Err(CalcError::ZeroSize { what: "packet" });
        }
        let wire = self.wire_bytes(packet)?;
        ratio_rate(self.payload_rate, packet, wire)
    }

    /// TCP payload rate of back-to-back full-MTU segments with `headers`,
    /// rounded down: the most a single TCP flow can move over this link.
    ///
    /// ```
    /// use bdp::{Link, TcpIpHeaders};
    /// let gige = Link::by_name("ethernet-1g").unwrap();
    /// // 1e9 * 1460 / 1538
    /// assert_eq!(gige.goodput(TcpIpHeaders::IPV4)?.get(), 949_284_785);
    /// # Ok::<(), bdp::CalcError>(())
    /// ```
    pub fn goodput(&self, headers: TcpIpHeaders) -> Result<BitsPerSecond, CalcError> {
        let mss = headers.mss(self.mtu)?;
        let wire = self.wire_bytes(self.mtu)?;
        ratio_rate(self.payload_rate, mss, wire)
    }
}

/// `rate * part / whole`, rounded down.
fn ratio_rate(rate: BitsPerSecond, part: Bytes, whole: Bytes) -> Result<BitsPerSecond, CalcError> {
    if whole.is_zero() {
        return Err(CalcError::ZeroSize { what: "frame" });
    }
    let v = u128::from(rate.get()) * u128::from(part.get()) / u128::from(whole.get());
    u64::try_from(v)
        .map(BitsPerSecond::new)
        .map_err(|_| CalcError::Overflow { what: "rate" })
}

const fn mbps_milli(milli_mbit: u64) -> BitsPerSecond {
    BitsPerSecond::new(milli_mbit * 1_000)
}

const ETH: Framing = Framing::Ethernet { vlan_tags: 0 };
const POS: Framing = Framing::Hdlc {
    overhead: POS_OVERHEAD_LEN,
};
const HDLC16: Framing = Framing::Hdlc {
    overhead: HDLC16_OVERHEAD_LEN,
};
const ATM: Framing = Framing::Aal5 {
    encapsulation: AtmEncapsulation::LlcSnap,
};
const MTU_1500: Bytes = Bytes::new(1500);

/// SONET STS-Nc line rate: N x 51.84 Mbit/s.
const fn sonet_line(n: u64) -> BitsPerSecond {
    BitsPerSecond::new(n * 51_840_000)
}

/// SONET STS-Nc packet payload (N a multiple of 3): N x 49.92 Mbit/s.
const fn sonet_payload(n: u64) -> BitsPerSecond {
    BitsPerSecond::new(n * 49_920_000)
}

/// STS-1 payload available to packets: 84 of 87 SPE columns.
pub const STS1_PAYLOAD: BitsPerSecond = BitsPerSecond::new(48_384_000);
/// STS-1 synchronous payload envelope, path overhead included.
pub const STS1_SPE: BitsPerSecond = BitsPerSecond::new(50_112_000);

/// Every predefined link. All use an IP MTU of 1500 bytes, the path MTU
/// a TCP flow between Ethernet-attached hosts sees; [`Link::with_mtu`] changes it.
#[rustfmt::skip]
pub const LINKS: [Link; 19] = [
    Link::new("ethernet-10m", "10 Mbit/s Ethernet", BitsPerSecond::new(10_000_000), BitsPerSecond::new(10_000_000), ETH, MTU_1500),
    Link::new("ethernet-100m", "100 Mbit/s Fast Ethernet", BitsPerSecond::new(100_000_000), BitsPerSecond::new(100_000_000), ETH, MTU_1500),
    Link::new("ethernet-1g", "1 Gbit/s Ethernet", BitsPerSecond::new(1_000_000_000), BitsPerSecond::new(1_000_000_000), ETH, MTU_1500),
    Link::new("ethernet-10g", "10 Gbit/s Ethernet", BitsPerSecond::new(10_000_000_000), BitsPerSecond::new(10_000_000_000), ETH, MTU_1500),
    Link::new("ethernet-25g", "25 Gbit/s Ethernet", BitsPerSecond::new(25_000_000_000), BitsPerSecond::new(25_000_000_000), ETH, MTU_1500),
    Link::new("ethernet-40g", "40 Gbit/s Ethernet", BitsPerSecond::new(40_000_000_000), BitsPerSecond::new(40_000_000_000), ETH, MTU_1500),
    Link::new("ethernet-100g", "100 Gbit/s Ethernet", BitsPerSecond::new(100_000_000_000), BitsPerSecond::new(100_000_000_000), ETH, MTU_1500),
    Link::new("t1", "T1/DS1 with PPP/HDLC", mbps_milli(1_544), mbps_milli(1_536), HDLC16, MTU_1500),
    Link::new("e1", "E1 with PPP/HDLC", mbps_milli(2_048), mbps_milli(1_984), HDLC16, MTU_1500),
    Link::new("t3", "T3/DS3 (C-bit) with PPP/HDLC", mbps_milli(44_736), mbps_milli(44_210), HDLC16, MTU_1500),
    Link::new("oc1", "OC-1/STS-1 packet over SONET", sonet_line(1), STS1_PAYLOAD, POS, MTU_1500),
    Link::new("oc3", "OC-3c/STM-1 packet over SONET", sonet_line(3), sonet_payload(3), POS, MTU_1500),
    Link::new("oc3-atm", "OC-3c/STM-1 ATM, AAL5 LLC/SNAP", sonet_line(3), sonet_payload(3), ATM, MTU_1500),
    Link::new("oc12", "OC-12c/STM-4 packet over SONET", sonet_line(12), sonet_payload(12), POS, MTU_1500),
    Link::new("oc12-atm", "OC-12c/STM-4 ATM, AAL5 LLC/SNAP", sonet_line(12), sonet_payload(12), ATM, MTU_1500),
    Link::new("oc48", "OC-48c/STM-16 packet over SONET", sonet_line(48), sonet_payload(48), POS, MTU_1500),
    Link::new("oc192", "OC-192c/STM-64 packet over SONET", sonet_line(192), sonet_payload(192), POS, MTU_1500),
    Link::new("oc768", "OC-768c/STM-256 packet over SONET", sonet_line(768), sonet_payload(768), POS, MTU_1500),
    Link::new("oc1-atm", "OC-1/STS-1 ATM, AAL5 LLC/SNAP", sonet_line(1), STS1_PAYLOAD, ATM, MTU_1500),
];

/// 100 Mbit/s Fast Ethernet (`ethernet-100m`).
pub const ETHERNET_100M: Link = LINKS[1];
/// 1 Gbit/s Ethernet (`ethernet-1g`).
pub const ETHERNET_1G: Link = LINKS[2];
/// 10 Gbit/s Ethernet (`ethernet-10g`).
pub const ETHERNET_10G: Link = LINKS[3];
/// T3/DS3 (`t3`).
pub const T3: Link = LINKS[9];
/// OC-3c packet over SONET (`oc3`).
pub const OC3_POS: Link = LINKS[11];
/// OC-3c ATM with AAL5 LLC/SNAP (`oc3-atm`): 155.52 Mbit/s line, 149.76 Mbit/s for cells.
pub const OC3_ATM: Link = LINKS[12];
