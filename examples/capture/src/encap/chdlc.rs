//! Cisco HDLC (LINKTYPE_C_HDLC 104, and 205 with a direction byte first):
//! address (0x0f unicast, 0x8f broadcast), control (0x00), then a 16-bit
//! protocol that is an EtherType.

use super::{be16, need, Payload, Skip};

/// C-HDLC header length.
pub const HEADER_LEN: usize = 4;
/// Offset of the protocol field.
const PROTOCOL: usize = 2;
/// Unicast address byte.
pub const ADDRESS_UNICAST: u8 = 0x0f;
/// Broadcast address byte.
pub const ADDRESS_BROADCAST: u8 = 0x8f;

/// Decodes the C-HDLC header at `at`: the EtherType it names and where its payload starts.
pub fn parse(data: &[u8], at: usize) -> Result<(Payload, usize), Skip> {
    need("C-HDLC", data, at, HEADER_LEN)?;
    Ok((
        Payload::EtherType(be16(data, at + PROTOCOL)),
        at + HEADER_LEN,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethertype() {
        assert_eq!(
            parse(&[0x0f, 0, 0x86, 0xdd, 0x60], 0),
            Ok((Payload::EtherType(0x86dd), 4))
        );
        assert!(parse(&[0x0f, 0, 0x08], 0).is_err());
    }
}
