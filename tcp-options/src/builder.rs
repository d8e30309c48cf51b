//! Writing an option block in Linux's canonical layout.
//!
//! Linux (`tcp_options_write` in net/ipv4/tcp_output.c) writes whole 32-bit
//! words, padding with NOPs, in this order:
//!
//! | option | words on the wire |
//! |--------|-------------------|
//! | MD5 signature | `01 01 13 12` + 16-byte digest |
//! | MSS | `02 04 <mss>` |
//! | Timestamps with SACK-Permitted | `04 02 08 0a <tsval> <tsecr>` |
//! | Timestamps alone | `01 01 08 0a <tsval> <tsecr>` |
//! | SACK-Permitted without Timestamps | `01 01 04 02` |
//! | Window Scale | `01 03 03 <shift>` |
//! | SACK blocks | `01 01 05 <len>` + 8 bytes per block |
//! | Fast Open | `22 <len> <cookie>` (+ `01 01` when the length is 2 mod 4) |
//! | AccECN (the builder's layout, last) | NOPs to a word boundary, then `ac <len> <counters>` or `ae <len> <counters>` |
//!
//! so a Linux SYN reads `02 04 05 b4 04 02 08 0a <TSval> <TSecr> 01 03 03 07`.
//!
//! Checked against `tcp_options_write`. Linux writes a TCP-AO option in the
//! MD5 slot instead of MD5 (never both), and after Fast Open the SMC, MPTCP
//! and BPF options; since 6.18 an AccECN option follows Timestamps and may
//! take the place of the NOPs before SACK-Permitted or Window Scale. The
//! builder writes none of those but AccECN, and that one last, after as many
//! NOPs as bring the block to a whole number of words (RFC 9768 section
//! 3.2.3 lets the option go anywhere; a receiver reads it wherever it is). Linux omits an MSS of 0; the builder writes
//! the value it is given. Linux fits as many SACK blocks as space allows
//! (`tcp_established_options`: 4, or 3 next to Timestamps); the builder
//! refuses more than fit.
//! The builder never writes more than 40 bytes: it computes the length first
//! and returns [`BuildError::TooLong`] without writing anything.

use crate::error::BuildError;
use crate::kind;
use crate::option::{SackBlock, Timestamps};

/// An Accurate ECN option to write (RFC 9768 section 3.2.3): kind 172
/// (AccECN0) carries the 24-bit byte counters EE0B, ECEB, EE1B in that
/// order, kind 174 (AccECN1) EE1B, ECEB, EE0B; `fields` says how many of
/// them, in the kind's order (length 2, 5, 8 or 11 bytes).
///
/// ```
/// use tcp_options::{AccEcnCounters, OptionsBuilder};
/// let c = AccEcnCounters { order1: false, ee0b: 1, eceb: 2, ee1b: 3, fields: 2 };
/// let opts = OptionsBuilder::new().accecn(c).build().unwrap();
/// assert_eq!(&opts[..], &[172, 8, 0, 0, 1, 0, 0, 2]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccEcnCounters {
    /// Kind 174 (order 1) instead of 172 (order 0).
    pub order1: bool,
    /// Bytes received with ECT(0); only the low 24 bits are written (the
    /// counters wrap at 2^24).
    pub ee0b: u32,
    /// Bytes received with CE (low 24 bits).
    pub eceb: u32,
    /// Bytes received with ECT(1) (low 24 bits).
    pub ee1b: u32,
    /// Counter fields written, 0 to 3.
    pub fields: u8,
}

impl AccEcnCounters {
    /// The kind byte: 172 or 174.
    pub const fn kind(&self) -> u8 {
        if self.order1 {
            kind::ACCECN1
        } else {
            kind::ACCECN0
        }
    }

    /// The counters in the kind's wire order.
    pub const fn in_order(&self) -> [u32; 3] {
        if self.order1 {
            [self.ee1b, self.eceb, self.ee0b]
        } else {
            [self.ee0b, self.eceb, self.ee1b]
        }
    }
}

/// MPTCP's MP_CAPABLE, version 1 with flag H (RFC 8684 section 3.1): in a
/// SYN without a key (4 bytes), in a SYN-ACK with the sender's key (12).
///
/// ```
/// use tcp_options::{MpCapable, OptionsBuilder};
/// let syn = OptionsBuilder::new().mp_capable(MpCapable { key: None }).build().unwrap();
/// assert_eq!(&syn[..], &[30, 4, 0x01, 0x01]);
/// let synack = OptionsBuilder::new().mp_capable(MpCapable { key: Some(7) }).build().unwrap();
/// assert_eq!(&synack[..4], &[30, 12, 0x01, 0x01]);
/// assert_eq!(&synack[4..], &7u64.to_be_bytes());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MpCapable {
    /// The sender's key (a SYN-ACK's, or a third ACK's); `None` in a SYN.
    pub key: Option<u64>,
}

/// Options to write; set fields directly or with the chained setters.
///
/// ```
/// use tcp_options::OptionsBuilder;
/// let opts = OptionsBuilder::new()
///     .mss(1460)
///     .sack_permitted()
///     .timestamps(1, 0)
///     .window_scale(7)
///     .build()
///     .unwrap();
/// assert_eq!(&opts[..8], &[0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a]);
/// assert_eq!(&opts[16..], &[0x01, 0x03, 0x03, 0x07]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OptionsBuilder<'a> {
    /// MD5 signature digest (RFC 2385).
    pub md5: Option<[u8; 16]>,
    /// Maximum segment size.
    pub mss: Option<u16>,
    /// Timestamps.
    pub timestamps: Option<Timestamps>,
    /// SACK-Permitted.
    pub sack_permitted: bool,
    /// Window-scale shift (written as given, even above 14).
    pub window_scale: Option<u8>,
    /// SACK blocks (at most 4, and at most 3 next to Timestamps).
    pub sack_blocks: &'a [SackBlock],
    /// Fast Open (kind 34): `Some(&[])` is a cookie request.
    pub fast_open: Option<&'a [u8]>,
    /// MPTCP MP_CAPABLE (kind 30), written after Fast Open.
    pub mp_capable: Option<MpCapable>,
    /// Accurate ECN (kind 172 or 174), written after the others.
    pub accecn: Option<AccEcnCounters>,
    /// Any other option as (kind, data), written last as given, then NOPs
    /// to a whole word: an experimental option (kind 253 or 254, its RFC
    /// 6994 ExID the first data bytes), an unassigned kind. At most 38
    /// data bytes.
    pub other: Option<(u8, &'a [u8])>,
}

impl<'a> OptionsBuilder<'a> {
    /// No options.
    pub const fn new() -> Self {
        OptionsBuilder {
            md5: None,
            mss: None,
            timestamps: None,
            sack_permitted: false,
            window_scale: None,
            sack_blocks: &[],
            fast_open: None,
            mp_capable: None,
            accecn: None,
            other: None,
        }
    }
    /// Add an MSS option.
    pub const fn mss(mut self, mss: u16) -> Self {
        self.mss = Some(mss);
        self
    }
    /// Add a Window Scale option.
    pub const fn window_scale(mut self, shift: u8) -> Self {
        self.window_scale = Some(shift);
        self
    }
    /// Add SACK-Permitted.
    pub const fn sack_permitted(mut self) -> Self {
        self.sack_permitted = true;
        self
    }
    /// Add Timestamps.
    pub const fn timestamps(mut self, tsval: u32, tsecr: u32) -> Self {
        self.timestamps = Some(Timestamps { tsval, tsecr });
        self
    }
    /// Add an MD5 signature with this digest.
    pub const fn md5(mut self, digest: [u8; 16]) -> Self {
        self.md5 = Some(digest);
        self
    }
    /// Add SACK blocks.
    pub const fn sack_blocks(mut self, blocks: &'a [SackBlock]) -> Self {
        self.sack_blocks = blocks;
        self
    }
    /// Add Fast Open: an empty cookie is a request.
    pub const fn fast_open(mut self, cookie: &'a [u8]) -> Self {
        self.fast_open = Some(cookie);
        self
    }

    /// Add MPTCP's MP_CAPABLE (RFC 8684).
    pub const fn mp_capable(mut self, m: MpCapable) -> Self {
        self.mp_capable = Some(m);
        self
    }

    /// Add an Accurate ECN option (RFC 9768).
    pub const fn accecn(mut self, counters: AccEcnCounters) -> Self {
        self.accecn = Some(counters);
        self
    }

    /// Add any other option (the field [`OptionsBuilder::other`]): kind
    /// and data, written last as given.
    ///
    /// ```
    /// use tcp_options::OptionsBuilder;
    /// // Experimental option 253 with the RFC 6994 ExID 0x1234 and two bytes.
    /// let opts = OptionsBuilder::new().other(253, &[0x12, 0x34, 0xab, 0xcd]).build().unwrap();
    /// assert_eq!(&opts[..], &[253, 6, 0x12, 0x34, 0xab, 0xcd, 1, 1]);
    /// ```
    pub const fn other(mut self, kind: u8, data: &'a [u8]) -> Self {
        self.other = Some((kind, data));
        self
    }

    /// Bytes the options take (a multiple of 4), or why they cannot be written.
    pub fn len(&self) -> Result<usize, BuildError> {
        if self.sack_blocks.len() > kind::SACK_MAX_BLOCKS {
            return Err(BuildError::TooManySackBlocks {
                count: self.sack_blocks.len(),
            });
        }
        let mut n = 0usize;
        if self.md5.is_some() {
            n += 20;
        }
        if self.mss.is_some() {
            n += 4;
        }
        if self.timestamps.is_some() {
            n += 12;
        } else if self.sack_permitted {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4;
        }
        if !self.sack_blocks.is_empty() {
            n += 4 + 8 * self.sack_blocks.len();
        }
        if let Some(cookie) = self.fast_open {
            let l = cookie.len();
            let valid = l == 0
                || (l % 2 == 0
                    && (kind::FAST_OPEN_COOKIE_MIN..=kind::FAST_OPEN_COOKIE_MAX).contains(&l));
            if !valid {
                return Err(BuildError::InvalidFastOpenCookie { len: l });
            }
            n += (2 + l + 3) & !3;
        }
        if let Some(m) = self.mp_capable {
            n += usize::from(mp_capable_len(m));
        }
        if let Some(a) = self.accecn {
            if a.fields > 3 {
                return Err(BuildError::TooManyAccEcnFields { fields: a.fields });
            }
            n += (usize::from(kind::ACCECN_BASE_LEN + kind::ACCECN_FIELD_LEN * a.fields) + 3) & !3;
        }
        if let Some((_, data)) = self.other {
            // Checked against 40 below: the length byte then fits.
            n = n.saturating_add((2 + data.len() + 3) & !3);
        }
        if n > kind::MAX_OPTIONS_LEN {
            return Err(BuildError::TooLong { needed: n });
        }
        Ok(n)
    }

    /// Whether no option is set.
    pub fn is_empty(&self) -> bool {
        *self == OptionsBuilder::new()
    }

    /// Write the options to the start of `buf`; returns the bytes written.
    /// Nothing is written on error.
    pub fn write(&self, buf: &mut [u8]) -> Result<usize, BuildError> {
        let n = self.len()?;
        let available = buf.len();
        let Some(out) = buf.get_mut(..n) else {
            return Err(BuildError::BufferTooSmall {
                needed: n,
                available,
            });
        };
        let mut w = Writer { out, pos: 0 };
        if let Some(d) = &self.md5 {
            w.put(&[
                kind::NOP,
                kind::NOP,
                kind::MD5_SIGNATURE,
                kind::MD5_SIGNATURE_LEN,
            ]);
            w.put(d);
        }
        if let Some(mss) = self.mss {
            w.put(&[kind::MSS, kind::MSS_LEN]);
            w.put(&mss.to_be_bytes());
        }
        if let Some(ts) = self.timestamps {
            if self.sack_permitted {
                w.put(&[kind::SACK_PERMITTED, kind::SACK_PERMITTED_LEN]);
            } else {
                w.put(&[kind::NOP, kind::NOP]);
            }
            w.put(&[kind::TIMESTAMPS, kind::TIMESTAMPS_LEN]);
            w.put(&ts.tsval.to_be_bytes());
            w.put(&ts.tsecr.to_be_bytes());
        } else if self.sack_permitted {
            w.put(&[
                kind::NOP,
                kind::NOP,
                kind::SACK_PERMITTED,
                kind::SACK_PERMITTED_LEN,
            ]);
        }
        if let Some(s) = self.window_scale {
            w.put(&[kind::NOP, kind::WINDOW_SCALE, kind::WINDOW_SCALE_LEN, s]);
        }
        if !self.sack_blocks.is_empty() {
            // At most 4 blocks (checked in len): 2 + 32 fits in a byte.
            let len = kind::SACK_BASE_LEN + kind::SACK_BLOCK_LEN * self.sack_blocks.len() as u8;
            w.put(&[kind::NOP, kind::NOP, kind::SACK, len]);
            for b in self.sack_blocks {
                w.put(&b.left.to_be_bytes());
                w.put(&b.right.to_be_bytes());
            }
        }
        if let Some(cookie) = self.fast_open {
            // At most 16 bytes (checked in len).
            let len = kind::FAST_OPEN_BASE_LEN + cookie.len() as u8;
            w.put(&[kind::FAST_OPEN, len]);
            w.put(cookie);
            if len & 3 == 2 {
                w.put(&[kind::NOP, kind::NOP]);
            }
        }
        if let Some(m) = self.mp_capable {
            w.put(&[
                kind::MPTCP,
                mp_capable_len(m),
                kind::MP_CAPABLE_V1,
                kind::MP_CAPABLE_FLAG_H,
            ]);
            if let Some(key) = m.key {
                w.put(&key.to_be_bytes());
            }
        }
        if let Some(a) = self.accecn {
            // At most 3 fields (checked in len): 2 + 9 fits in a byte.
            let len = kind::ACCECN_BASE_LEN + kind::ACCECN_FIELD_LEN * a.fields;
            for _ in 0..(4 - len % 4) % 4 {
                w.put(&[kind::NOP]);
            }
            w.put(&[a.kind(), len]);
            for c in a.in_order().iter().take(usize::from(a.fields)) {
                w.put(&c.to_be_bytes()[1..]);
            }
        }
        if let Some((k, data)) = self.other {
            // At most 38 data bytes (the total was checked against 40).
            let len = 2 + data.len();
            w.put(&[k, len as u8]);
            w.put(data);
            for _ in 0..(4 - len % 4) % 4 {
                w.put(&[kind::NOP]);
            }
        }
        Ok(w.pos)
    }

    /// Build into a fixed-capacity vector.
    pub fn build(&self) -> Result<heapless::Vec<u8, 40>, BuildError> {
        let mut buf = [0u8; kind::MAX_OPTIONS_LEN];
        let n = self.write(&mut buf)?;
        let mut v = heapless::Vec::new();
        // n <= 40 == capacity, so this cannot fail.
        v.extend_from_slice(buf.get(..n).unwrap_or(&[]))
            .map_err(|_| BuildError::TooLong { needed: n })?;
        Ok(v)
    }
}

struct Writer<'b> {
    out: &'b mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        if let Some(dst) = self.out.get_mut(self.pos..end) {
            dst.copy_from_slice(bytes);
            self.pos = end;
        }
    }
}

/// MP_CAPABLE's length: 4 without a key, 12 with one (both multiples of 4).
const fn mp_capable_len(m: MpCapable) -> u8 {
    if m.key.is_some() {
        kind::MP_CAPABLE_KEY_LEN
    } else {
        kind::MP_CAPABLE_SYN_LEN
    }
}
