//! The value of a field before or after a middlebox, as a finding carries
//! it: typed, so that the analyses compare and compute with it and the
//! output stage alone writes it as JSON or words
//! (`crate::output::finding`).

use std::net::IpAddr;

use tcp_options::Flags;

/// One end of a packet's address pair, as a `nat` finding gives it: the
/// port is `None` when the copy that showed the address did not show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address {
    /// The IP address.
    pub addr: IpAddr,
    /// The port, when known.
    pub port: Option<u16>,
}

/// Who built a SYN-ACK of a proxied handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Party {
    /// The server.
    Server,
    /// The middlebox that answered for it.
    Middlebox,
}

impl Party {
    /// `server` or `middlebox`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Party::Server => "server",
            Party::Middlebox => "middlebox",
        }
    }
}

/// A field's value before or after the middlebox.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldValue {
    /// Nothing to show.
    None,
    /// The packet is not in this capture.
    Missing,
    /// The option or field is not there.
    Absent,
    /// A window-scale shift.
    Shift(u8),
    /// An MSS, bytes.
    Mss(u16),
    /// An option that is there without a value.
    Present,
    /// The timestamps option.
    Timestamps {
        /// TSval, ticks.
        tsval: u32,
        /// TSecr, ticks.
        tsecr: u32,
    },
    /// Any option's bytes.
    Option {
        /// Its kind.
        kind: u8,
        /// Its data.
        data: Vec<u8>,
    },
    /// A sequence number.
    Seq(u32),
    /// An acknowledgment number.
    Ack(u32),
    /// The raw window field.
    Window(u16),
    /// A DSCP (6 bits).
    Dscp(u8),
    /// The IP ECN field (2 bits).
    Ecn(u8),
    /// The TCP ECE and CWR flags.
    EcnFlags {
        /// ECE set.
        ece: bool,
        /// CWR set.
        cwr: bool,
    },
    /// A segment in a few fields.
    Segment {
        /// Its flags.
        flags: Flags,
        /// Its sequence number.
        seq: u32,
        /// Its payload, bytes.
        payload_len: usize,
    },
    /// A SYN-ACK of a proxied handshake as one party built it.
    SynAck {
        /// Who built it.
        from: Party,
        /// Its ISN.
        isn: u32,
        /// Its window field.
        window: u16,
        /// Its MSS.
        mss: Option<u16>,
        /// Its window-scale shift.
        shift: Option<u8>,
    },
    /// The ends a NAT rewrote (only the rewritten ones).
    Endpoints {
        /// The source, when rewritten.
        src: Option<Address>,
        /// The destination, when rewritten.
        dst: Option<Address>,
    },
}

impl FieldValue {
    /// The value as a number, where it is one (impacts compute with it).
    pub fn number(&self) -> Option<u64> {
        match *self {
            FieldValue::Shift(s) => Some(u64::from(s)),
            FieldValue::Mss(m) | FieldValue::Window(m) => Some(u64::from(m)),
            FieldValue::Seq(n) | FieldValue::Ack(n) => Some(u64::from(n)),
            FieldValue::Dscp(v) | FieldValue::Ecn(v) => Some(u64::from(v)),
            _ => None,
        }
    }

    /// The TCP ECE and CWR flags of `f`.
    pub fn ecn_flags(f: Flags) -> FieldValue {
        FieldValue::EcnFlags {
            ece: f.contains(Flags::ECE),
            cwr: f.contains(Flags::CWR),
        }
    }
}
