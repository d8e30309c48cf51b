//! FDDI (LINKTYPE_FDDI 10; ANSI X3.139 MAC frame format): frame control
//! (1 byte), destination and source addresses (6 each), then, for LLC
//! frames (frame control 0x50-0x57: asynchronous LLC, and 0xd0-0xd7:
//! synchronous), an 802.2 LLC header ([`super::llc`]).

use super::{need, NotIp, Parsed, Payload, Skip};

/// FDDI MAC header length.
pub const HEADER_LEN: usize = 13;
/// The frame-format bits of the frame control byte (C L F F Z Z Z Z).
const FC_FORMAT_MASK: u8 = 0x30;
/// The frame format of LLC frames.
const FC_LLC: u8 = 0x10;

/// A decoded FDDI header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fddi {
    /// The frame control byte.
    pub frame_control: u8,
}

impl Fddi {
    /// Decodes the FDDI header at `at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Fddi>, Skip> {
        need("FDDI", data, at, HEADER_LEN)?;
        let fc = data[at];
        if fc & FC_FORMAT_MASK != FC_LLC {
            return Err(Skip::NotIp(NotIp::FddiFrame(fc)));
        }
        Ok(Parsed {
            header: Fddi { frame_control: fc },
            payload_at: at + HEADER_LEN,
            payload: Payload::Llc,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llc_frames_only() {
        let mut f = vec![0x50];
        f.extend_from_slice(&[0; 12]);
        assert_eq!(Fddi::parse(&f, 0).unwrap().payload, Payload::Llc);
        f[0] = 0x41; // SMT
        assert_eq!(Fddi::parse(&f, 0), Err(Skip::NotIp(NotIp::FddiFrame(0x41))));
    }
}
