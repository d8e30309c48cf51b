//! L2TP version 2 (RFC 2661), over UDP port 1701 (section 8.1): the data
//! messages, which carry PPP frames.
//!
//! The header (section 3.1): a 16-bit word of flags and version — T
//! (0x8000: a control message), L (0x4000: the Length field is present),
//! S (0x0800: Ns and Nr are present), O (0x0200: the Offset Size field is
//! present), P (0x0100: priority), the version in the low 4 bits (2) —
//! then Length (16 bits) if L, Tunnel ID (16), Session ID (16), Ns (16) and
//! Nr (16) if S, and Offset Size (16) if O, followed by that many bytes of
//! padding. The payload of a data message is a PPP frame (sections 1 and
//! 3), whose HDLC-like address and control bytes may come first (RFC 1662
//! section 3.1).
//!
//! Tunnel and session IDs have local significance only: each message
//! carries the IDs its recipient assigned (section 3.1), so the two
//! directions of one session carry different IDs.
//!
//! Control messages (T set) carry no user data ([`NotIp::L2tpControl`]).
//! Any other version on the port (L2F's 1, L2TPv3's 3, RFC 3931) is not
//! decoded ([`Unsupported::L2tpVersion`]).

use super::{be16, malformed, need, ppp, NotIp, Parsed, Payload, Skip, Unsupported};

/// Length of the flags and version word.
const FLAGS_LEN: usize = 2;
/// Length of each 16-bit field after it.
const FIELD_LEN: usize = 2;
/// T: a control message.
pub const FLAG_TYPE: u16 = 0x8000;
/// L: the Length field is present.
pub const FLAG_LENGTH: u16 = 0x4000;
/// S: the Ns and Nr fields are present.
pub const FLAG_SEQUENCE: u16 = 0x0800;
/// O: the Offset Size field is present.
pub const FLAG_OFFSET: u16 = 0x0200;
/// P: priority (data messages).
pub const FLAG_PRIORITY: u16 = 0x0100;
/// The version bits.
const VERSION_MASK: u16 = 0x000f;
/// L2TP version 2.
pub const VERSION_2: u8 = 2;

/// A decoded L2TPv2 data message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2tp {
    /// The Tunnel ID (the recipient's).
    pub tunnel_id: u16,
    /// The Session ID (the recipient's).
    pub session_id: u16,
    /// Ns, when the S flag is set.
    pub ns: Option<u16>,
    /// Nr, when the S flag is set.
    pub nr: Option<u16>,
}

impl L2tp {
    /// Decodes the L2TP header at `at` and the HDLC-like address and
    /// control bytes of the PPP frame after it, when present.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<L2tp>, Skip> {
        need("L2TP", data, at, FLAGS_LEN)?;
        let flags = be16(data, at);
        // The mask keeps the version below 16.
        let version = (flags & VERSION_MASK) as u8;
        if version != VERSION_2 {
            return Err(Skip::Unsupported(Unsupported::L2tpVersion(version)));
        }
        if flags & FLAG_TYPE != 0 {
            return Err(Skip::NotIp(NotIp::L2tpControl));
        }
        let mut len = FLAGS_LEN;
        let length_at = (flags & FLAG_LENGTH != 0).then(|| {
            len += FIELD_LEN;
            at + FLAGS_LEN
        });
        let ids_at = at + len;
        len += 2 * FIELD_LEN;
        let seq_at = (flags & FLAG_SEQUENCE != 0).then(|| {
            len += 2 * FIELD_LEN;
            at + len - 2 * FIELD_LEN
        });
        let offset_at = (flags & FLAG_OFFSET != 0).then(|| {
            len += FIELD_LEN;
            at + len - FIELD_LEN
        });
        need("L2TP", data, at, len)?;
        let header_len = len;
        if let Some(o) = offset_at {
            let pad = usize::from(be16(data, o));
            need("L2TP offset padding", data, at + len, pad)?;
            len += pad;
        }
        if let Some(l) = length_at {
            if usize::from(be16(data, l)) < header_len {
                return Err(malformed("L2TP", at, "Length shorter than the L2TP header"));
            }
        }
        let header = L2tp {
            tunnel_id: be16(data, ids_at),
            session_id: be16(data, ids_at + FIELD_LEN),
            ns: seq_at.map(|s| be16(data, s)),
            nr: seq_at.map(|s| be16(data, s + FIELD_LEN)),
        };
        Ok(Parsed {
            header,
            payload_at: ppp::skip_hdlc(data, at + len),
            payload: Payload::Ppp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data message header with these flags (version 2 added), tunnel 5,
    /// session 7, Length 0x40, Ns 1, Nr 2, an offset pad of `pad` bytes,
    /// then HDLC address and control and PPP's IPv4 protocol.
    fn message(flags: u16, pad: u16) -> Vec<u8> {
        let mut m = (flags | 2).to_be_bytes().to_vec();
        if flags & FLAG_LENGTH != 0 {
            m.extend_from_slice(&0x40u16.to_be_bytes());
        }
        m.extend_from_slice(&[0, 5, 0, 7]);
        if flags & FLAG_SEQUENCE != 0 {
            m.extend_from_slice(&[0, 1, 0, 2]);
        }
        if flags & FLAG_OFFSET != 0 {
            m.extend_from_slice(&pad.to_be_bytes());
            m.extend(std::iter::repeat_n(0xee, usize::from(pad)));
        }
        m.extend_from_slice(&[0xff, 0x03, 0x00, 0x21]);
        m
    }

    #[test]
    fn every_flag_combination() {
        for bits in 0..16u16 {
            let mut flags = 0;
            for (i, f) in [FLAG_LENGTH, FLAG_SEQUENCE, FLAG_OFFSET, FLAG_PRIORITY]
                .iter()
                .enumerate()
            {
                if bits & (1 << i) != 0 {
                    flags |= f;
                }
            }
            let m = message(flags, 3);
            let p = L2tp::parse(&m, 0).unwrap_or_else(|e| panic!("{flags:#06x}: {e}"));
            assert_eq!((p.header.tunnel_id, p.header.session_id), (5, 7));
            let seq = flags & FLAG_SEQUENCE != 0;
            assert_eq!(p.header.ns, seq.then_some(1));
            assert_eq!(p.header.nr, seq.then_some(2));
            assert_eq!(p.payload, Payload::Ppp);
            // After the header, the padding and the address and control bytes.
            assert_eq!(p.payload_at, m.len() - 2, "{flags:#06x}");
            assert_eq!(
                ppp::protocol(&m, p.payload_at),
                Ok((Payload::Ipv4, m.len()))
            );
        }
    }

    #[test]
    fn without_address_and_control() {
        let m = [0x00, 0x02, 0, 5, 0, 7, 0x00, 0x57];
        let p = L2tp::parse(&m, 0).unwrap();
        assert_eq!(p.payload_at, 6);
    }

    #[test]
    fn offset_padding() {
        let m = message(FLAG_OFFSET, 0);
        assert_eq!(L2tp::parse(&m, 0).unwrap().payload_at, 10);
        let m = message(FLAG_OFFSET | FLAG_SEQUENCE, 9);
        assert_eq!(
            L2tp::parse(&m, 0).unwrap().payload_at,
            2 + 4 + 4 + 2 + 9 + 2
        );
    }

    #[test]
    fn truncated_at_each_field() {
        let flags = FLAG_LENGTH | FLAG_SEQUENCE | FLAG_OFFSET;
        let m = message(flags, 4);
        // Flags 2, Length 2, IDs 4, Ns and Nr 4, Offset Size 2, padding 4.
        let header = 2 + 2 + 4 + 4 + 2 + 4;
        for cut in 0..header {
            let e = L2tp::parse(&m[..cut], 0).unwrap_err();
            assert!(
                matches!(e, Skip::Decode(crate::error::DecodeError::Truncated { .. })),
                "{cut}: {e:?}"
            );
        }
        // The PPP frame's bytes are not the L2TP header's.
        assert!(L2tp::parse(&m[..header], 0).is_ok());
        // At an offset into the frame.
        let mut framed = vec![0u8; 30];
        framed.extend_from_slice(&m);
        assert_eq!(
            L2tp::parse(&framed, 30).unwrap().payload_at,
            30 + header + 2
        );
        assert!(L2tp::parse(&framed[..40], 30).is_err());
    }

    #[test]
    fn control_messages_and_other_versions() {
        // A control message: T, L and S set (section 3.1), version 2.
        let control = [0xc8, 0x02, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            L2tp::parse(&control, 0),
            Err(Skip::NotIp(NotIp::L2tpControl))
        );
        // L2TPv3 over UDP (RFC 3931): version 3; L2F: version 1.
        let v3 = [0x00, 0x03, 0, 0, 0, 0, 0, 1];
        assert_eq!(
            L2tp::parse(&v3, 0),
            Err(Skip::Unsupported(Unsupported::L2tpVersion(3)))
        );
        let mut v3_control = v3;
        v3_control[0] = 0xc8;
        assert_eq!(
            L2tp::parse(&v3_control, 0),
            Err(Skip::Unsupported(Unsupported::L2tpVersion(3)))
        );
        assert_eq!(
            L2tp::parse(&[0x00, 0x01, 0, 0], 0),
            Err(Skip::Unsupported(Unsupported::L2tpVersion(1)))
        );
    }

    #[test]
    fn a_length_shorter_than_the_header_is_malformed() {
        let mut m = message(FLAG_LENGTH, 0);
        m[3] = 5;
        assert!(matches!(
            L2tp::parse(&m, 0),
            Err(Skip::Decode(crate::error::DecodeError::Malformed { .. }))
        ));
    }

    #[test]
    fn no_panic_on_any_short_input() {
        for first in [0x00u8, 0x40, 0x08, 0x02, 0x4a, 0xff] {
            for second in [0x02u8, 0x03, 0xff] {
                for len in 0..24 {
                    let mut m = vec![first, second];
                    m.extend(std::iter::repeat_n(0xff, len));
                    let _ = L2tp::parse(&m, 0);
                    let _ = L2tp::parse(&m, m.len());
                    let _ = L2tp::parse(&m, m.len() + 5);
                }
            }
        }
    }
}
