//! An edit session on a whole IP packet: validate once, make several
//! edits, write back once.
//!
//! [`EditSession::open`] takes an IPv4 or IPv6 packet (IPv6 extension
//! headers are stepped over as in [`crate::netfilter::locate`]) in any
//! buffer that is `AsRef<[u8]> + AsMut<[u8]>`, checks the IP length, the
//! TCP header and that the option block is well formed (the strict policy),
//! and copies the option block into the session. The edits then work on
//! that copy and on the header fields:
//!
//! - [`EditSession::strip`]: options of the given kinds become NOPs;
//! - [`EditSession::set_window_scale`], [`EditSession::clamp_mss`];
//! - [`EditSession::set_window`], [`EditSession::add_to_seq`],
//!   [`EditSession::add_to_ack`] (the acknowledgment number and every
//!   SACK block edge);
//! - edits that change the header length: [`EditSession::insert_option`],
//!   [`EditSession::remove_option`], [`EditSession::repad`].
//!
//! [`EditSession::finish`] writes the header back, moves the payload when
//! the header length changed (the buffer needs the room: an insertion that
//! would not fit is refused when it is asked for), fixes the IPv4 total
//! length and header checksum or the IPv6 payload length, and makes **one**
//! incremental update of the TCP checksum for the whole session (RFC 1624
//! over the old and new header and the pseudo-header length; the payload
//! moves by whole 32-bit words, so its sum does not change). A checksum that
//! was valid stays valid; one that was wrong stays wrong by the same amount.
//! Dropping a session without `finish` leaves the packet as it was.
//!
//! Header-length edits lay the block out as: the options that were there
//! up to the last one that is not a NOP (NOPs between them kept, trailing
//! NOPs and EOL dropped), then the inserted ones, then EOL and zero bytes up
//! to the next 32-bit word.
//!
//! With the `bytes` feature, `EditSession::open_bytes` takes a
//! `bytes::BytesMut` and grows it as the header grows.
//!
//! ```
//! use tcp_options::session::EditSession;
//! use tcp_options::{checksum, kind};
//! // An IPv4 SYN: MSS 1460, NOP, Window Scale 7; 8 spare bytes after it.
//! let mut buf = [0u8; 56];
//! buf[..20].copy_from_slice(&[0x45, 0, 0, 48, 0, 0, 0x40, 0, 64, 6, 0, 0,
//!                             198, 18, 1, 2, 198, 19, 2, 2]);
//! buf[32] = 0x70; buf[33] = 0x02; // data offset 7, SYN
//! buf[40..48].copy_from_slice(&[2, 4, 0x05, 0xb4, 1, 3, 3, 7]);
//! checksum::fill_ipv4([198, 18, 1, 2], [198, 19, 2, 2], &mut buf[20..48]);
//!
//! let mut s = EditSession::open(&mut buf[..]).unwrap();
//! s.clamp_mss(1400);
//! s.strip(&[kind::WINDOW_SCALE]);
//! s.insert_option(kind::SACK_PERMITTED, &[]).unwrap();
//! s.insert_option(kind::TIMESTAMPS, &[0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
//! s.set_window(8192);
//! let len = s.finish();
//! assert_eq!(len, 56); // 20 + 20 + 16 bytes of options
//! assert_eq!(&buf[40..56], &[2, 4, 0x05, 0x78, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0]);
//! assert_eq!(buf[32] >> 4, 9);
//! assert!(checksum::verify_ipv4([198, 18, 1, 2], [198, 19, 2, 2], &buf[20..56]));
//! ```

use crate::checksum::{fold, sum, update_word};
use crate::header::{field, HEADER_LEN};
use crate::kind;
use crate::netfilter::{locate, IpFamily, NetfilterError};
use crate::walk::{decode, StrictOptions};
use crate::{OptionError, TcpHeader, TcpOption};
use zerocopy::IntoBytes;

/// Why a session cannot be opened or an edit cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum EditError {
    /// The bytes are not a whole IPv4/IPv6 TCP packet.
    #[error("not a TCP packet: {0}")]
    Packet(#[from] NetfilterError),
    /// A fragment other than the first: there is no TCP header.
    #[error("a fragment other than the first (offset {offset})")]
    Fragment {
        /// The fragment offset field.
        offset: u16,
    },
    /// The TCP header is invalid.
    #[error("invalid TCP header: {0}")]
    Header(#[from] crate::HeaderError),
    /// The option block is not well formed (strict policy).
    #[error("malformed options: {0}")]
    Options(#[from] OptionError),
    /// The options would need more than 40 bytes.
    #[error("options would need {needed} bytes, more than 40")]
    NoSpace {
        /// Bytes the block would take.
        needed: usize,
    },
    /// The buffer has no room for the longer header.
    #[error("the packet would need {needed} bytes, the buffer holds {available}")]
    NoRoom {
        /// Bytes the packet would take.
        needed: usize,
        /// Length of the buffer.
        available: usize,
    },
    /// The option to insert is not a valid record: EOL or NOP, more than
    /// 38 data bytes, or a length its kind does not allow (the session
    /// keeps the block well formed under the strict policy).
    #[error("option kind {kind} with {len} data bytes cannot be inserted")]
    BadOption {
        /// The kind.
        kind: u8,
        /// The data length.
        len: usize,
    },
    /// The option to change is not in the packet.
    #[error("no option of kind {kind}")]
    NotPresent {
        /// The kind looked for.
        kind: u8,
    },
}

/// A packet being edited (module docs).
#[derive(Debug)]
pub struct EditSession<B: AsRef<[u8]> + AsMut<[u8]>> {
    buf: B,
    family: IpFamily,
    tcp: usize,
    ip_len: usize,
    old_hdr_len: usize,
    fixed: TcpHeader,
    opts: [u8; kind::MAX_OPTIONS_LEN],
    opt_len: usize,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> EditSession<B> {
    /// Validate `buf` (module docs) and start a session. The packet is the
    /// IP length's worth of bytes at the start; the rest of the buffer is
    /// room for a longer header.
    pub fn open(buf: B) -> Result<Self, EditError> {
        let b = buf.as_ref();
        let at = locate(b)?;
        if at.fragment_offset != 0 {
            return Err(EditError::Fragment {
                offset: at.fragment_offset,
            });
        }
        let seg = b.get(at.tcp_offset..at.len).unwrap_or(&[]);
        let p = crate::TcpPacket::new_checked(seg)?;
        StrictOptions::validate(p.options())?;
        let fixed = *p.header();
        let mut opts = [0u8; kind::MAX_OPTIONS_LEN];
        let opt_len = p.options().len().min(kind::MAX_OPTIONS_LEN);
        if let Some(d) = opts.get_mut(..opt_len) {
            d.copy_from_slice(p.options().get(..opt_len).unwrap_or(&[]));
        }
        Ok(EditSession {
            family: at.family,
            tcp: at.tcp_offset,
            ip_len: at.len,
            old_hdr_len: HEADER_LEN + opt_len,
            fixed,
            opts,
            opt_len,
            buf,
        })
    }

    /// The option block as edited so far.
    pub fn options(&self) -> &[u8] {
        self.opts.get(..self.opt_len).unwrap_or(&[])
    }

    /// The fixed header as edited so far (the checksum field is the old one
    /// until [`EditSession::finish`]).
    pub fn header(&self) -> &TcpHeader {
        &self.fixed
    }

    /// The packet length after [`EditSession::finish`].
    pub fn packet_len(&self) -> usize {
        self.ip_len + HEADER_LEN + self.opt_len - self.old_hdr_len
    }

    fn records(&self) -> impl Iterator<Item = (usize, u8, usize)> + '_ {
        // (offset, kind, wire length) of each record; the block is well formed.
        StrictOptions::new(self.options())
            .filter_map(|o| o.ok())
            .map(|o| (o.offset, o.kind, o.wire_len()))
    }

    /// Overwrite every option whose kind is in `kinds` with NOPs (EOL and
    /// NOP are left alone); returns how many.
    pub fn strip(&mut self, kinds: &[u8]) -> usize {
        let mut n = 0;
        let mut spans = [(0usize, 0usize); kind::MAX_OPTIONS_LEN / 2];
        for (off, k, len) in self.records() {
            if k > kind::NOP && kinds.contains(&k) {
                if let Some(s) = spans.get_mut(n) {
                    *s = (off, len);
                    n += 1;
                }
            }
        }
        for &(off, len) in spans.iter().take(n) {
            if let Some(d) = self.opts.get_mut(off..off + len) {
                d.fill(kind::NOP);
            }
        }
        n
    }

    /// Set the shift of every Window Scale option; returns the old shift
    /// (of the last one).
    pub fn set_window_scale(&mut self, shift: u8) -> Result<u8, EditError> {
        let mut old = None;
        let mut at = [0usize; kind::MAX_OPTIONS_LEN / 3];
        let mut n = 0;
        for (off, k, len) in self.records() {
            if k == kind::WINDOW_SCALE && len == 3 {
                old = self.opts.get(off + 2).copied();
                if let Some(s) = at.get_mut(n) {
                    *s = off + 2;
                    n += 1;
                }
            }
        }
        let old = old.ok_or(EditError::NotPresent {
            kind: kind::WINDOW_SCALE,
        })?;
        for &a in at.iter().take(n) {
            if let Some(b) = self.opts.get_mut(a) {
                *b = shift;
            }
        }
        Ok(old)
    }

    /// Lower every MSS option above `max` to `max`; returns the last MSS
    /// before, `None` when there is none.
    pub fn clamp_mss(&mut self, max: u16) -> Option<u16> {
        let mut last = None;
        let mut at = [0usize; kind::MAX_OPTIONS_LEN / 4];
        let mut n = 0;
        for (off, k, len) in self.records() {
            if k == kind::MSS && len == 4 {
                let v = be16(&self.opts, off + 2);
                last = Some(v);
                if let (true, Some(s)) = (v > max, at.get_mut(n)) {
                    *s = off + 2;
                    n += 1;
                }
            }
        }
        for &a in at.iter().take(n) {
            if let Some(d) = self.opts.get_mut(a..a + 2) {
                d.copy_from_slice(&max.to_be_bytes());
            }
        }
        last
    }

    /// Set the window field; returns the old value.
    pub fn set_window(&mut self, window: u16) -> u16 {
        let old = self.fixed.window();
        self.fixed.set_window(window);
        old
    }

    /// Add `delta` (mod 2^32) to the sequence number; returns the new one.
    pub fn add_to_seq(&mut self, delta: u32) -> u32 {
        let new = self.fixed.seq_number().wrapping_add(delta);
        self.fixed.set_seq_number(new);
        new
    }

    /// Add `delta` (mod 2^32) to the acknowledgment number and both edges
    /// of every SACK block; returns how many blocks were changed.
    pub fn add_to_ack(&mut self, delta: u32) -> usize {
        let new = self.fixed.ack_number().wrapping_add(delta);
        self.fixed.set_ack_number(new);
        let mut edges = [0usize; kind::MAX_OPTIONS_LEN / 4];
        let mut n = 0;
        for (off, k, len) in self.records() {
            if k == kind::SACK {
                let mut e = off + 2;
                while e + 4 <= off + len {
                    if let Some(s) = edges.get_mut(n) {
                        *s = e;
                        n += 1;
                    }
                    e += 4;
                }
            }
        }
        for &e in edges.iter().take(n) {
            let v = be32(&self.opts, e).wrapping_add(delta);
            put(&mut self.opts, e, &v.to_be_bytes());
        }
        n / 2
    }

    /// Bytes the options take without trailing EOL, NOP and padding.
    fn meaningful_len(&self) -> usize {
        let mut end = 0;
        for (off, k, len) in self.records() {
            if k > kind::NOP {
                end = off + len;
            }
        }
        end
    }

    /// Lay out `self.opts[..content]` padded with EOL/zeros to a word,
    /// after checking it fits the block and the buffer.
    fn relayout(&mut self, content: usize) -> Result<(), EditError> {
        let padded = (content + 3) & !3;
        if padded > kind::MAX_OPTIONS_LEN {
            return Err(EditError::NoSpace { needed: padded });
        }
        let new_len = self.ip_len + HEADER_LEN + padded - self.old_hdr_len;
        let available = self.buf.as_ref().len();
        if new_len > available {
            return Err(EditError::NoRoom {
                needed: new_len,
                available,
            });
        }
        if let Some(d) = self.opts.get_mut(content..) {
            d.fill(0);
        }
        self.opt_len = padded;
        Ok(())
    }

    /// Append an option record (`kind`, then a length byte, then `data`)
    /// after the last option, then pad to a word (module docs). Refused,
    /// with nothing changed, when the block would exceed 40 bytes or the
    /// buffer is too short.
    pub fn insert_option(&mut self, kind: u8, data: &[u8]) -> Result<(), EditError> {
        let wire = data.len() + 2;
        if kind <= kind::NOP || wire > kind::MAX_OPTIONS_LEN || decode(kind, data).is_err() {
            return Err(EditError::BadOption {
                kind,
                len: data.len(),
            });
        }
        let at = self.meaningful_len();
        let content = at + wire;
        if content > kind::MAX_OPTIONS_LEN {
            return Err(EditError::NoSpace {
                needed: (content + 3) & !3,
            });
        }
        let saved = (self.opts, self.opt_len);
        if let Some(d) = self.opts.get_mut(at..content) {
            d[0] = kind;
            d[1] = wire as u8;
            d[2..].copy_from_slice(data);
        }
        if let Err(e) = self.relayout(content) {
            (self.opts, self.opt_len) = saved;
            return Err(e);
        }
        Ok(())
    }

    /// Remove every option of `kind` (the bytes, not NOP-filled), then pad
    /// to a word; returns how many were removed.
    pub fn remove_option(&mut self, kind: u8) -> usize {
        if kind <= kind::NOP {
            return 0;
        }
        let mut out = [0u8; kind::MAX_OPTIONS_LEN];
        let mut w = 0;
        let mut removed = 0;
        let end = self.meaningful_len();
        for (off, k, len) in self.records() {
            if off >= end {
                break;
            }
            if k == kind {
                removed += 1;
                continue;
            }
            if let (Some(d), Some(s)) = (out.get_mut(w..w + len), self.opts.get(off..off + len)) {
                d.copy_from_slice(s);
                w += len;
            }
        }
        if removed > 0 {
            self.opts = out;
            // Shorter than before: always fits.
            let _ = self.relayout(w);
        }
        removed
    }

    /// Drop every NOP and EOL and pad the remaining options to a word
    /// with EOL and zeros.
    pub fn repad(&mut self) {
        let mut out = [0u8; kind::MAX_OPTIONS_LEN];
        let mut w = 0;
        for (off, k, len) in self.records() {
            if k <= kind::NOP {
                continue;
            }
            if let (Some(d), Some(s)) = (out.get_mut(w..w + len), self.opts.get(off..off + len)) {
                d.copy_from_slice(s);
                w += len;
            }
        }
        self.opts = out;
        let _ = self.relayout(w);
    }

    /// Write everything back (module docs); returns the packet length.
    pub fn finish(self) -> usize {
        self.finish_inner().1
    }

    fn finish_inner(mut self) -> (B, usize) {
        let (tcp, ip_len, old_hdr) = (self.tcp, self.ip_len, self.old_hdr_len);
        let new_hdr = HEADER_LEN + self.opt_len;
        let new_len = self.packet_len();
        let old_tcp_len = ip_len - tcp;
        let new_tcp_len = new_len - tcp;
        // The data offset follows the option length (at most 15 words).
        let _ = self.fixed.set_data_offset((new_hdr / 4) as u8);
        let b = self.buf.as_mut();
        let Some(seg) = b.get(tcp..tcp + old_hdr) else {
            return (self.buf, ip_len);
        };
        let old_check = be16(seg, field::CHECKSUM.start);
        // Sum of the old header without its checksum field.
        let old_sum = sum(seg, 0) + u64::from(!old_check);
        let mut new_sum = sum(self.fixed.as_bytes(), 0) + sum(self.options(), 0);
        new_sum += u64::from(!self.fixed.checksum());
        let len_words = |l: usize| sum(&(l as u32).to_be_bytes(), 0);
        let acc = u64::from(!old_check)
            + u64::from(!fold(old_sum + len_words(old_tcp_len)))
            + new_sum
            + len_words(new_tcp_len);
        let check = !fold(acc);
        self.fixed.set_checksum(check);
        let b = self.buf.as_mut();
        if new_hdr != old_hdr {
            if let Some(region) = b.get_mut(tcp..new_len.max(ip_len)) {
                region.copy_within(old_hdr..old_tcp_len, new_hdr);
            }
        }
        put(b, tcp, self.fixed.as_bytes());
        if let Some(d) = b.get_mut(tcp + HEADER_LEN..tcp + new_hdr) {
            d.copy_from_slice(self.opts.get(..self.opt_len).unwrap_or(&[]));
        }
        if new_len != ip_len {
            match self.family {
                IpFamily::V4 => {
                    let old = be16(b, 2);
                    let new = new_len as u16;
                    let c = update_word(be16(b, 10), old, new);
                    put(b, 2, &new.to_be_bytes());
                    put(b, 10, &c.to_be_bytes());
                }
                IpFamily::V6 => {
                    put(b, 4, &((new_len - 40) as u16).to_be_bytes());
                }
            }
        }
        (self.buf, new_len)
    }
}

#[cfg(feature = "bytes")]
impl EditSession<bytes::BytesMut> {
    /// Start a session on a `BytesMut` holding one IP packet (bytes after
    /// its IP length are dropped); it grows as the header grows.
    pub fn open_bytes(mut packet: bytes::BytesMut) -> Result<Self, EditError> {
        let len = locate(&packet)?.len;
        packet.truncate(len);
        packet.resize(len + kind::MAX_OPTIONS_LEN, 0);
        EditSession::open(packet)
    }

    /// Write everything back and return the packet, cut to its new length.
    pub fn finish_bytes(self) -> bytes::BytesMut {
        let (mut b, len) = self.finish_inner();
        b.truncate(len);
        b
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some([x, y]) => u16::from_be_bytes([*x, *y]),
        _ => 0,
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some([a, b2, c, d]) => u32::from_be_bytes([*a, *b2, *c, *d]),
        _ => 0,
    }
}

fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(d) = b.get_mut(at..at + bytes.len()) {
        d.copy_from_slice(bytes);
    }
}

/// Decode the options of a session (for tests and tools): the records that
/// are not EOL or NOP, in order.
pub fn records(block: &[u8]) -> impl Iterator<Item = TcpOption<'_>> {
    StrictOptions::new(block)
        .filter_map(|o| o.ok())
        .filter_map(|o| {
            if o.kind <= kind::NOP {
                None
            } else {
                decode(o.kind, o.data).ok()
            }
        })
}
