//! MPLS label stacks (RFC 3032 section 2.1) and what follows the bottom of
//! the stack.
//!
//! Each label stack entry is 4 bytes: label (20 bits), traffic class (3),
//! bottom of stack S (1), TTL (8). After the entry with S set the payload is
//! not labelled, so its first nibble decides (RFC 4385 section 2): 4 is
//! IPv4, 6 is IPv6, 0 is the pseudowire control word (4 bytes: a flags,
//! fragment, length and sequence number word) before an Ethernet frame
//! (RFC 4448), 1 is the pseudowire associated channel (OAM, not user
//! traffic); anything else is taken for an Ethernet pseudowire without a
//! control word.

use super::{need, NotIp, Parsed, Payload, Skip};

/// Length of one label stack entry.
pub const ENTRY_LEN: usize = 4;
/// Length of the pseudowire control word.
pub const CONTROL_WORD_LEN: usize = 4;
/// The bottom-of-stack bit in the third byte of an entry.
const BOTTOM: u8 = 0x01;
/// At most this many labels are followed.
pub const MAX_LABELS: usize = 16;
/// First nibble of the pseudowire control word.
const NIBBLE_CONTROL_WORD: u8 = 0;
/// First nibble of the pseudowire associated channel header.
const NIBBLE_CHANNEL: u8 = 1;

/// A decoded label stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MplsHeader {
    /// Number of label stack entries.
    pub depth: usize,
    /// Whether a pseudowire control word follows the stack.
    pub control_word: bool,
}

impl MplsHeader {
    /// Decodes the label stack at `at` and the payload after it.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<MplsHeader>, Skip> {
        let mut depth = 0;
        loop {
            let entry = at + depth * ENTRY_LEN;
            need("MPLS", data, entry, ENTRY_LEN)?;
            depth += 1;
            if data[entry + 2] & BOTTOM != 0 {
                break;
            }
            if depth >= MAX_LABELS {
                return Err(super::malformed(
                    "MPLS",
                    at,
                    "more than 16 labels without a bottom of stack",
                ));
            }
        }
        let after = at + depth * ENTRY_LEN;
        need("MPLS payload", data, after, 1)?;
        let (payload, payload_at, control_word) = match data[after] >> 4 {
            4 => (Payload::Ipv4, after, false),
            6 => (Payload::Ipv6, after, false),
            NIBBLE_CONTROL_WORD => {
                need("MPLS control word", data, after, CONTROL_WORD_LEN)?;
                (Payload::Ethernet, after + CONTROL_WORD_LEN, true)
            }
            NIBBLE_CHANNEL => return Err(Skip::NotIp(NotIp::MplsChannel)),
            _ => (Payload::Ethernet, after, false),
        };
        Ok(Parsed {
            header: MplsHeader {
                depth,
                control_word,
            },
            payload_at,
            payload,
        })
    }
}

/// One label stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Label {
    /// The label value (20 bits).
    pub label: u32,
    /// Traffic class (3 bits).
    pub tc: u8,
    /// Time to live.
    pub ttl: u8,
}

/// The entries of a label stack, top first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Labels<'a> {
    stack: &'a [u8],
}

impl<'a> Labels<'a> {
    /// The stack held in `stack` (a multiple of 4 bytes).
    pub fn new(stack: &'a [u8]) -> Self {
        Labels { stack }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.stack.len() / ENTRY_LEN
    }

    /// True for an empty stack.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, top first.
    pub fn iter(&self) -> impl Iterator<Item = Label> + 'a {
        self.stack.chunks_exact(ENTRY_LEN).map(|e| Label {
            label: u32::from_be_bytes([0, e[0], e[1], e[2]]) >> 4,
            tc: (e[2] >> 1) & 0x07,
            ttl: e[3],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_labels_then_control_word() {
        // Labels 100 and 200 (bottom), control word, then an Ethernet frame.
        let mut f = vec![0x00, 0x06, 0x40, 64, 0x00, 0x0c, 0x81, 64];
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(&[0xaa; 14]);
        let p = MplsHeader::parse(&f, 0).unwrap();
        assert_eq!(p.header.depth, 2);
        assert!(p.header.control_word);
        assert_eq!(p.payload_at, 12);
        let labels: Vec<u32> = Labels::new(&f[..8]).iter().map(|l| l.label).collect();
        assert_eq!(labels, [100, 200]);
    }

    #[test]
    fn ip_after_the_stack_and_endless_stacks() {
        let f = [0x00, 0x01, 0x01, 64, 0x45];
        assert_eq!(MplsHeader::parse(&f, 0).unwrap().payload, Payload::Ipv4);
        let endless = [0u8; 80];
        assert!(MplsHeader::parse(&endless, 0).is_err());
        let channel = [0x00, 0x01, 0x01, 64, 0x10, 0, 0, 0];
        assert_eq!(
            MplsHeader::parse(&channel, 0),
            Err(Skip::NotIp(NotIp::MplsChannel))
        );
    }
}
