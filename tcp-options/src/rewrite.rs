//! In-place rewrites that middleboxes perform, each keeping the TCP checksum
//! valid by the RFC 1624 incremental update (see [`crate::checksum`]).
//!
//! Every function takes the TCP segment (header and payload, no IP header),
//! checks the header like [`crate::TcpPacket::new_checked`], and either
//! returns an error having changed nothing, or makes the change and updates
//! the checksum field. The pseudo-header does not change, so the IP
//! addresses are not needed; a segment whose checksum was valid stays valid.
//!
//! Options are found with the Linux-compatible walk of `tcp_parse_options`
//! (a malformed tail is not touched), which is how Linux itself sees the
//! block. It is **not** how netfilter sees it: the TCPMSS and TCPOPTSTRIP
//! modules walk with their own `optlen()`, which steps one byte past a
//! length byte of 0 (and past EOL) and carries on, and TCPMSS inserts an
//! MSS option into a SYN that has none. For what those targets do, byte
//! for byte, use [`crate::netfilter`].
//!
//! - [`strip_options`]: overwrite every option of the given kinds with NOPs
//!   (as TCPOPTSTRIP does to the options the Linux walk finds), whatever
//!   its length.
//! - [`set_window_scale`], [`remove_window_scale`]: change the shift of, or
//!   strip, a well-formed Window Scale option.
//! - [`clamp_mss`]: lower every well-formed MSS option above a maximum
//!   (TCPMSS lowers only the first and inserts one when there is none; see
//!   [`crate::netfilter::tcpmss`]).
//! - [`set_window`]: rewrite the window field.
//! - [`add_to_seq`], [`add_to_ack`]: add an offset (mod 2^32, as sequence
//!   numbers wrap by definition) to the sequence number, or to the
//!   acknowledgment number and every SACK block edge, as a firewall that
//!   randomizes initial sequence numbers must.

use crate::checksum::Incremental;
use crate::error::{HeaderError, RewriteError};
use crate::header::{field, TcpPacket, HEADER_LEN};
use crate::kind;
use crate::option::TcpOption;
use crate::walk::LinuxOptions;

/// Check the header; returns the header length.
fn header_len(segment: &[u8]) -> Result<usize, HeaderError> {
    Ok(HEADER_LEN + TcpPacket::new_checked(segment)?.options().len())
}

fn options(segment: &[u8], hlen: usize) -> LinuxOptions<'_> {
    LinuxOptions::new(segment.get(HEADER_LEN..hlen).unwrap_or(&[]))
}

/// Overwrite every option whose kind is in `kinds` with NOPs. EOL and NOP
/// in `kinds` are ignored. Returns how many options were stripped (0 is not
/// an error).
pub fn strip_options(segment: &mut [u8], kinds: &[u8]) -> Result<usize, RewriteError> {
    let hlen = header_len(segment)?;
    let mut spans = [(0usize, 0usize); kind::MAX_OPTIONS_LEN / 2];
    let mut n = 0;
    for o in options(segment, hlen) {
        if o.kind > kind::NOP && kinds.contains(&o.kind) {
            if let Some(s) = spans.get_mut(n) {
                *s = (HEADER_LEN + o.offset, o.wire_len());
                n += 1;
            }
        }
    }
    let mut inc = Incremental::new(segment);
    const NOPS: [u8; kind::MAX_OPTIONS_LEN] = [kind::NOP; kind::MAX_OPTIONS_LEN];
    for &(at, len) in spans.iter().take(n) {
        inc.write(at, NOPS.get(..len).unwrap_or(&[]));
    }
    inc.finish();
    Ok(n)
}

/// Set the shift of the Window Scale option; returns the old shift.
/// Every well-formed Window Scale option is changed (Linux uses the last).
pub fn set_window_scale(segment: &mut [u8], shift: u8) -> Result<u8, RewriteError> {
    let hlen = header_len(segment)?;
    let mut at = [0usize; kind::MAX_OPTIONS_LEN / 3];
    let mut n = 0;
    let mut old = None;
    for o in options(segment, hlen) {
        if let TcpOption::WindowScale(s) = o.option {
            old = Some(s);
            if let Some(slot) = at.get_mut(n) {
                *slot = HEADER_LEN + o.offset + 2;
                n += 1;
            }
        }
    }
    let Some(old) = old else {
        return Err(RewriteError::NotPresent {
            kind: kind::WINDOW_SCALE,
        });
    };
    let mut inc = Incremental::new(segment);
    for &a in at.iter().take(n) {
        inc.write(a, &[shift]);
    }
    inc.finish();
    Ok(old)
}

/// Strip Window Scale options (NOP-fill), as the campus firewall in the
/// design notes effectively did. Returns whether one was present.
pub fn remove_window_scale(segment: &mut [u8]) -> Result<bool, RewriteError> {
    Ok(strip_options(segment, &[kind::WINDOW_SCALE])? > 0)
}

/// Lower every well-formed MSS option above `max` to `max`. Returns the
/// MSS Linux would have used before (the last one), `None` if there is none
/// (not an error; nothing is inserted here, unlike netfilter's TCPMSS,
/// which inserts an MSS option into a SYN without one: see
/// [`crate::netfilter::tcpmss`]).
pub fn clamp_mss(segment: &mut [u8], max: u16) -> Result<Option<u16>, RewriteError> {
    let hlen = header_len(segment)?;
    let mut at = [0usize; kind::MAX_OPTIONS_LEN / 4];
    let mut n = 0;
    let mut old = None;
    for o in options(segment, hlen) {
        if let TcpOption::MaxSegmentSize(m) = o.option {
            old = Some(m);
            if let (true, Some(slot)) = (m > max, at.get_mut(n)) {
                *slot = HEADER_LEN + o.offset + 2;
                n += 1;
            }
        }
    }
    if n > 0 {
        let mut inc = Incremental::new(segment);
        for &a in at.iter().take(n) {
            inc.write(a, &max.to_be_bytes());
        }
        inc.finish();
    }
    Ok(old)
}

/// Rewrite the window field; returns the old value.
pub fn set_window(segment: &mut [u8], window: u16) -> Result<u16, RewriteError> {
    let p = TcpPacket::new_checked(segment)?;
    let old = p.header().window();
    let mut inc = Incremental::new(segment);
    inc.write(field::WINDOW.start, &window.to_be_bytes());
    inc.finish();
    Ok(old)
}

/// Add `delta` (mod 2^32) to the sequence number; returns the new value.
pub fn add_to_seq(segment: &mut [u8], delta: u32) -> Result<u32, RewriteError> {
    let p = TcpPacket::new_checked(segment)?;
    let new = p.header().seq_number().wrapping_add(delta);
    let mut inc = Incremental::new(segment);
    inc.write(field::SEQ_NUM.start, &new.to_be_bytes());
    inc.finish();
    Ok(new)
}

/// Add `delta` (mod 2^32) to the acknowledgment number and to both edges of
/// every well-formed SACK block; returns how many SACK blocks were changed.
pub fn add_to_ack(segment: &mut [u8], delta: u32) -> Result<usize, RewriteError> {
    let hlen = header_len(segment)?;
    let p = TcpPacket::new_checked(segment)?;
    let ack = p.header().ack_number().wrapping_add(delta);
    // (offset of block, new left, new right)
    let mut blocks = [(0usize, 0u32, 0u32); kind::MAX_OPTIONS_LEN / 8];
    let mut n = 0;
    for o in options(segment, hlen) {
        if let TcpOption::Sack(b) = o.option {
            for (i, blk) in b.iter().enumerate() {
                if let Some(slot) = blocks.get_mut(n) {
                    *slot = (
                        HEADER_LEN + o.offset + 2 + 8 * i,
                        blk.left.wrapping_add(delta),
                        blk.right.wrapping_add(delta),
                    );
                    n += 1;
                }
            }
        }
    }
    let mut inc = Incremental::new(segment);
    inc.write(field::ACK_NUM.start, &ack.to_be_bytes());
    for &(at, l, r) in blocks.iter().take(n) {
        inc.write(at, &l.to_be_bytes());
        inc.write(at + 4, &r.to_be_bytes());
    }
    inc.finish();
    Ok(n)
}
