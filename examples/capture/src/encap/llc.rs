//! IEEE 802.2 LLC and the SNAP header of RFC 1042, as found after an 802.3
//! length field, in FDDI frames and in Linux cooked captures of 802.2
//! frames.
//!
//! LLC: DSAP, SSAP, control (1 byte for unnumbered frames, 0x03 UI; 2 for
//! information and supervisory frames). SNAP (DSAP = SSAP = 0xaa, control
//! 0x03): a 3-byte OUI and a 2-byte protocol ID, an EtherType when the OUI
//! is 00-00-00 (RFC 1042) or 00-00-f8 (Cisco's 802.1H bridge tunnel). DSAP
//! 0x06 with a UI control byte carries IPv4 directly.

use super::{be16, need, NotIp, Parsed, Payload, Skip};

/// LLC header length for unnumbered frames.
pub const LLC_LEN: usize = 3;
/// SNAP header length (OUI and protocol ID).
pub const SNAP_LEN: usize = 5;
/// The SNAP service access point.
pub const SAP_SNAP: u8 = 0xaa;
/// The IP (DoD) service access point.
pub const SAP_IP: u8 = 0x06;
/// Control byte of an unnumbered-information frame.
pub const CONTROL_UI: u8 = 0x03;
/// OUIs whose protocol ID is an EtherType.
const OUI_ETHERTYPE: [[u8; 3]; 2] = [[0, 0, 0], [0, 0, 0xf8]];
/// Offset of the SSAP.
const SSAP: usize = 1;
/// Offset of the control byte.
const CONTROL: usize = 2;
/// Offset of the SNAP protocol ID (from the LLC header).
const SNAP_PID: usize = LLC_LEN + 3;

/// A decoded LLC / SNAP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Llc {
    /// Destination service access point.
    pub dsap: u8,
    /// The SNAP OUI, when there is a SNAP header.
    pub oui: Option<[u8; 3]>,
    /// The SNAP protocol ID.
    pub pid: Option<u16>,
}

impl Llc {
    /// Decodes the LLC (and SNAP) header at `at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Llc>, Skip> {
        need("LLC", data, at, LLC_LEN)?;
        let dsap = data[at];
        let ssap = data[at + SSAP];
        let control = data[at + CONTROL];
        if dsap == SAP_SNAP && ssap == SAP_SNAP && control == CONTROL_UI {
            need("SNAP", data, at, LLC_LEN + SNAP_LEN)?;
            let oui = [data[at + 3], data[at + 4], data[at + 5]];
            let pid = be16(data, at + SNAP_PID);
            if !OUI_ETHERTYPE.contains(&oui) {
                return Err(Skip::NotIp(NotIp::LlcSap(dsap)));
            }
            return Ok(Parsed {
                header: Llc {
                    dsap,
                    oui: Some(oui),
                    pid: Some(pid),
                },
                payload_at: at + LLC_LEN + SNAP_LEN,
                payload: Payload::EtherType(pid),
            });
        }
        if dsap == SAP_IP && ssap == SAP_IP && control == CONTROL_UI {
            return Ok(Parsed {
                header: Llc {
                    dsap,
                    oui: None,
                    pid: None,
                },
                payload_at: at + LLC_LEN,
                payload: Payload::Ipv4,
            });
        }
        Err(Skip::NotIp(NotIp::LlcSap(dsap)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snap_ip_and_others() {
        let snap = [0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00];
        let p = Llc::parse(&snap, 0).unwrap();
        assert_eq!(p.payload, Payload::EtherType(0x0800));
        assert_eq!(p.payload_at, 8);
        let stp = [0x42, 0x42, 0x03];
        assert_eq!(Llc::parse(&stp, 0), Err(Skip::NotIp(NotIp::LlcSap(0x42))));
        let cdp = [0xaa, 0xaa, 0x03, 0, 0, 0x0c, 0x20, 0x00];
        assert!(Llc::parse(&cdp, 0).is_err());
    }
}
