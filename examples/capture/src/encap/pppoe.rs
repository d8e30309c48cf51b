//! PPPoE session stage (RFC 2516 section 4): a 6-byte header after the
//! Ethernet header (EtherType 0x8864), then a PPP protocol field.
//!
//! Version (4 bits, 1) and type (4 bits, 1), code (0 for session data), the
//! 16-bit session ID, the length of the PPP payload.

use super::{be16, need, Parsed, Payload, Skip};

/// PPPoE header length.
pub const HEADER_LEN: usize = 6;
/// EtherType of the PPPoE session stage.
pub const ETHERTYPE_SESSION: u16 = 0x8864;
/// EtherType of the PPPoE discovery stage (no user data).
pub const ETHERTYPE_DISCOVERY: u16 = 0x8863;
/// Offset of the code.
const CODE: usize = 1;
/// Offset of the session ID.
const SESSION: usize = 2;
/// The version and type byte of RFC 2516.
const VER_TYPE: u8 = 0x11;
/// Code of session data.
const CODE_SESSION_DATA: u8 = 0;

/// A decoded PPPoE session header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pppoe {
    /// The session ID.
    pub session: u16,
}

impl Pppoe {
    /// Decodes the PPPoE header at `at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Pppoe>, Skip> {
        need("PPPoE", data, at, HEADER_LEN)?;
        if data[at] != VER_TYPE || data[at + CODE] != CODE_SESSION_DATA {
            return Err(super::malformed(
                "PPPoE",
                at,
                "version/type not 1/1 or code not session data",
            ));
        }
        Ok(Parsed {
            header: Pppoe {
                session: be16(data, at + SESSION),
            },
            payload_at: at + HEADER_LEN,
            payload: Payload::Ppp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session() {
        let p = Pppoe::parse(&[0x11, 0, 0x12, 0x34, 0, 42, 0, 0x21], 0).unwrap();
        assert_eq!(p.header.session, 0x1234);
        assert_eq!((p.payload_at, p.payload), (6, Payload::Ppp));
        assert!(Pppoe::parse(&[0x11, 9, 0, 1, 0, 0], 0).is_err());
    }
}
