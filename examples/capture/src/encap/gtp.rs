//! GTP-U, the GPRS Tunnelling Protocol for user plane (3GPP TS 29.281
//! section 5).
//!
//! An 8-byte header: version (3 bits, 1), protocol type (1), a spare bit,
//! E (extension header), S (sequence number), PN (N-PDU number); the
//! message type (255: G-PDU, a user packet); the length; the 32-bit Tunnel
//! Endpoint Identifier. When E, S or PN is set, 4 more bytes follow:
//! sequence number (16), N-PDU number (8), next extension header type (8).
//! Each extension header gives its length in 4-byte units in its first byte
//! and the next type in its last; type 0 ends the chain. A G-PDU carries an
//! IP packet.

use super::{be32, need, NotIp, Parsed, Payload, Skip, Unsupported};

/// The mandatory header's length.
pub const HEADER_LEN: usize = 8;
/// Length of the optional sequence / N-PDU / next-type word.
const OPTIONAL_LEN: usize = 4;
/// Offset of the message type.
const MESSAGE_TYPE: usize = 1;
/// Offset of the TEID.
const TEID: usize = 4;
/// Offset of the next extension header type (in the optional word).
const NEXT_EXT: usize = 11;
/// Flags E, S and PN.
const FLAGS_OPTIONAL: u8 = 0x07;
/// Shift of the version bits.
const VERSION_SHIFT: u8 = 5;
/// GTP version 1.
const VERSION_1: u8 = 1;
/// Message type of a G-PDU.
pub const G_PDU: u8 = 0xff;
/// At most this many extension headers are followed.
pub const MAX_EXTENSIONS: usize = 16;

/// A decoded GTP-U header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GtpU {
    /// The Tunnel Endpoint Identifier.
    pub teid: u32,
    /// The sequence number, when the S flag is set.
    pub seq: Option<u16>,
}

impl GtpU {
    /// Decodes the GTP-U header (and its extension headers) at `at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<GtpU>, Skip> {
        need("GTP-U", data, at, HEADER_LEN)?;
        let flags = data[at];
        let version = flags >> VERSION_SHIFT;
        if version != VERSION_1 {
            return Err(Skip::Unsupported(Unsupported::GtpVersion(version)));
        }
        let message = data[at + MESSAGE_TYPE];
        if message != G_PDU {
            return Err(Skip::NotIp(NotIp::GtpMessage(message)));
        }
        let teid = be32(data, at + TEID);
        let mut len = HEADER_LEN;
        let mut seq = None;
        if flags & FLAGS_OPTIONAL != 0 {
            need("GTP-U", data, at, HEADER_LEN + OPTIONAL_LEN)?;
            if flags & 0x02 != 0 {
                seq = Some(u16::from_be_bytes([data[at + 8], data[at + 9]]));
            }
            len += OPTIONAL_LEN;
            let mut next = if flags & 0x04 != 0 {
                data[at + NEXT_EXT]
            } else {
                0
            };
            let mut count = 0;
            while next != 0 {
                count += 1;
                if count > MAX_EXTENSIONS {
                    return Err(super::malformed(
                        "GTP-U extension header",
                        at + len,
                        "more than 16 extension headers",
                    ));
                }
                need("GTP-U extension header", data, at + len, 1)?;
                let ext_len = usize::from(data[at + len]) * 4;
                if ext_len == 0 {
                    return Err(super::malformed(
                        "GTP-U extension header",
                        at + len,
                        "extension header length 0",
                    ));
                }
                need("GTP-U extension header", data, at + len, ext_len)?;
                next = data[at + len + ext_len - 1];
                len += ext_len;
            }
        }
        Ok(Parsed {
            header: GtpU { teid, seq },
            payload_at: at + len,
            payload: Payload::Ip,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teid_sequence_and_extensions() {
        let plain = [0x30, 0xff, 0, 40, 0, 0, 0x12, 0x34];
        let p = GtpU::parse(&plain, 0).unwrap();
        assert_eq!((p.header.teid, p.payload_at), (0x1234, 8));
        // S and E: sequence 9, one PDU session container (type 0x85, 4 bytes).
        let ext = [
            0x36, 0xff, 0, 48, 0, 0, 0, 1, 0, 9, 0, 0x85, 1, 0x10, 0x01, 0,
        ];
        let p = GtpU::parse(&ext, 0).unwrap();
        assert_eq!(p.header.seq, Some(9));
        assert_eq!(p.payload_at, 16);
        let mut zero = ext;
        zero[12] = 0;
        assert!(GtpU::parse(&zero, 0).is_err());
        assert_eq!(
            GtpU::parse(&[0x30, 1, 0, 0, 0, 0, 0, 0], 0),
            Err(Skip::NotIp(NotIp::GtpMessage(1)))
        );
    }
}
