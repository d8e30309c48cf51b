//! Option kind numbers and lengths, as assigned by IANA ("TCP Option Kind
//! Numbers") and the RFCs named beside each constant.
//!
//! A `*_LEN` constant is the value of the option's length byte, which counts
//! the kind and length bytes themselves.

/// End of Option List (RFC 9293). One byte, no length.
pub const EOL: u8 = 0;
/// No-Operation (RFC 9293). One byte, no length; used as padding.
pub const NOP: u8 = 1;
/// Maximum Segment Size (RFC 9293).
pub const MSS: u8 = 2;
/// Window Scale (RFC 7323).
pub const WINDOW_SCALE: u8 = 3;
/// SACK-Permitted (RFC 2018).
pub const SACK_PERMITTED: u8 = 4;
/// SACK (RFC 2018).
pub const SACK: u8 = 5;
/// Timestamps (RFC 7323).
pub const TIMESTAMPS: u8 = 8;
/// TCP MD5 Signature (RFC 2385).
pub const MD5_SIGNATURE: u8 = 19;
/// User Timeout (RFC 5482).
pub const USER_TIMEOUT: u8 = 28;
/// TCP Authentication Option (RFC 5925).
pub const TCP_AO: u8 = 29;
/// Multipath TCP (RFC 8684).
pub const MPTCP: u8 = 30;
/// TCP Fast Open cookie (RFC 7413).
pub const FAST_OPEN: u8 = 34;
/// Accurate ECN, order 0 (RFC 9768).
pub const ACCECN0: u8 = 172;
/// Accurate ECN, order 1 (RFC 9768).
pub const ACCECN1: u8 = 174;
/// RFC 3692-style experiment 1 (RFC 4727, ExID per RFC 6994).
pub const EXPERIMENTAL_1: u8 = 253;
/// RFC 3692-style experiment 2 (RFC 4727, ExID per RFC 6994).
pub const EXPERIMENTAL_2: u8 = 254;

/// Length of the MSS option.
pub const MSS_LEN: u8 = 4;
/// Length of the Window Scale option.
pub const WINDOW_SCALE_LEN: u8 = 3;
/// Length of the SACK-Permitted option.
pub const SACK_PERMITTED_LEN: u8 = 2;
/// Length of the SACK option without blocks (each block adds [`SACK_BLOCK_LEN`]).
pub const SACK_BASE_LEN: u8 = 2;
/// Bytes per SACK block (left and right edge, 32 bits each).
pub const SACK_BLOCK_LEN: u8 = 8;
/// Most SACK blocks that fit in a 40-byte option block.
pub const SACK_MAX_BLOCKS: usize = 4;
/// Length of the Timestamps option.
pub const TIMESTAMPS_LEN: u8 = 10;
/// Length of the MD5 Signature option (16-byte digest).
pub const MD5_SIGNATURE_LEN: u8 = 18;
/// Length of the User Timeout option.
pub const USER_TIMEOUT_LEN: u8 = 4;
/// Smallest TCP-AO option: kind, length, KeyID, RNextKeyID (MAC may follow).
pub const TCP_AO_MIN_LEN: u8 = 4;
/// Smallest MPTCP option that carries its subtype nibble.
pub const MPTCP_MIN_LEN: u8 = 3;
/// MP_CAPABLE in a SYN: kind, length, subtype/version, flags (RFC 8684
/// section 3.1).
pub const MP_CAPABLE_SYN_LEN: u8 = 4;
/// MP_CAPABLE with the sender's 64-bit key, as a SYN-ACK carries it.
pub const MP_CAPABLE_KEY_LEN: u8 = 12;
/// MP_CAPABLE's version byte: subtype 0 (high nibble), version 1.
pub const MP_CAPABLE_V1: u8 = 0x01;
/// MP_CAPABLE's flag H: HMAC-SHA256, the one algorithm RFC 8684 defines.
pub const MP_CAPABLE_FLAG_H: u8 = 0x01;
/// Length of a Fast Open cookie request (no cookie).
pub const FAST_OPEN_BASE_LEN: u8 = 2;
/// Shortest Fast Open cookie in bytes (RFC 7413).
pub const FAST_OPEN_COOKIE_MIN: usize = 4;
/// Longest Fast Open cookie in bytes (RFC 7413).
pub const FAST_OPEN_COOKIE_MAX: usize = 16;
/// Length of an AccECN option without counter fields.
pub const ACCECN_BASE_LEN: u8 = 2;
/// Bytes per AccECN counter field (24 bits).
pub const ACCECN_FIELD_LEN: u8 = 3;
/// Length of an experimental option that carries a 16-bit ExID (RFC 6994).
pub const EXPERIMENTAL_EXID_LEN: u8 = 4;
/// The RFC 6994 ExID Linux uses for Fast Open on kind 254 before kind 34 existed.
pub const EXID_FAST_OPEN: u16 = 0xF989;

/// Largest window-scale shift RFC 7323 allows; Linux uses larger values as 14.
pub const MAX_WINDOW_SCALE: u8 = 14;
/// Most bytes of options a TCP header can carry (data offset 15 words).
pub const MAX_OPTIONS_LEN: usize = 40;

/// A short name for an option kind (`"mss"`, `"wscale"`, `"sackOK"`, ...), as
/// tcpdump prints them; `None` for kinds this crate does not know.
pub fn name(kind: u8) -> Option<&'static str> {
    Some(match kind {
        EOL => "eol",
        NOP => "nop",
        MSS => "mss",
        WINDOW_SCALE => "wscale",
        SACK_PERMITTED => "sackOK",
        SACK => "sack",
        TIMESTAMPS => "TS",
        MD5_SIGNATURE => "md5",
        USER_TIMEOUT => "uto",
        TCP_AO => "tcp-ao",
        MPTCP => "mptcp",
        FAST_OPEN => "tfo",
        ACCECN0 => "accecn0",
        ACCECN1 => "accecn1",
        EXPERIMENTAL_1 | EXPERIMENTAL_2 => "exp",
        _ => return None,
    })
}
