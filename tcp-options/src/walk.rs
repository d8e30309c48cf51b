//! The option-record walker and the two parse policies.
//!
//! One generic walker reads records (kind, length, data, offset); a small
//! decoder per kind turns a record into a [`TcpOption`]. The policies differ
//! only in what they do with a malformed record:
//!
//! | malformation                         | [`StrictOptions`]            | [`LinuxOptions`]                 |
//! |--------------------------------------|------------------------------|----------------------------------|
//! | kind byte last in block (no length)  | error `LengthMissing`, stop  | stop silently                    |
//! | length 0 or 1                        | error `LengthTooSmall`, stop | stop silently                    |
//! | length runs past the block           | error `Overrun`, stop        | stop silently                    |
//! | known kind, length not allowed       | error `WrongLength`, stop    | yield [`TcpOption::Invalid`], go on |
//! | non-zero bytes after EOL             | EOL, then warning `NonZeroAfterEol` | EOL, stop                 |
//!
//! An unknown kind is never an error: it is yielded as
//! [`TcpOption::Unknown`] and iteration continues.

use crate::error::{ExpectedLength, OptionError, OptionErrorReason};
use crate::kind;
use crate::option::{
    AccEcn, Experimental, FastOpen, Mptcp, ParsedOption, SackBlocks, TcpAo, TcpOption, Timestamps,
    UserTimeout,
};

#[inline(always)]
fn wrong(data: &[u8], expected: ExpectedLength) -> OptionErrorReason {
    OptionErrorReason::WrongLength {
        // From a walk, data is at most 253 bytes (its length came from a
        // length byte); `decode` called with more reports 255.
        length: u8::try_from(data.len().saturating_add(2)).unwrap_or(u8::MAX),
        expected,
    }
}

#[inline(always)]
fn fast_open_cookie_ok(len: usize) -> bool {
    len == 0
        || (len % 2 == 0
            && (kind::FAST_OPEN_COOKIE_MIN..=kind::FAST_OPEN_COOKIE_MAX).contains(&len))
}

/// Decode the record `kind` with `data` (the bytes after the length byte).
///
/// EOL and NOP are not records; pass them only with empty data. A
/// [`OptionErrorReason::WrongLength`] carries the length byte `data` implies
/// (`data.len() + 2`), or 255 when `data` is longer than a length byte can
/// describe (more than 253 bytes).
#[inline(always)]
pub fn decode(kind: u8, data: &[u8]) -> Result<TcpOption<'_>, OptionErrorReason> {
    use ExpectedLength::Exactly;
    // The kinds of ordinary traffic are decoded inline; the rest out of line.
    match kind {
        kind::MSS => match *data {
            [a, b] => Ok(TcpOption::MaxSegmentSize(u16::from_be_bytes([a, b]))),
            _ => Err(wrong(data, Exactly(kind::MSS_LEN))),
        },
        kind::WINDOW_SCALE => match *data {
            [s] => Ok(TcpOption::WindowScale(s)),
            _ => Err(wrong(data, Exactly(kind::WINDOW_SCALE_LEN))),
        },
        kind::SACK_PERMITTED => match data {
            [] => Ok(TcpOption::SackPermitted),
            _ => Err(wrong(data, Exactly(kind::SACK_PERMITTED_LEN))),
        },
        kind::SACK => match SackBlocks::new(data) {
            Some(b) => Ok(TcpOption::Sack(b)),
            None => Err(wrong(data, ExpectedLength::SackBlocks)),
        },
        kind::TIMESTAMPS => match *data {
            [a0, a1, a2, a3, b0, b1, b2, b3] => Ok(TcpOption::Timestamps(Timestamps {
                tsval: u32::from_be_bytes([a0, a1, a2, a3]),
                tsecr: u32::from_be_bytes([b0, b1, b2, b3]),
            })),
            _ => Err(wrong(data, Exactly(kind::TIMESTAMPS_LEN))),
        },
        _ => decode_other(kind, data),
    }
}

#[inline(never)]
fn decode_other(kind: u8, data: &[u8]) -> Result<TcpOption<'_>, OptionErrorReason> {
    use ExpectedLength::{AtLeast, Exactly};
    match kind {
        kind::EOL => Ok(TcpOption::EndOfList),
        kind::NOP => Ok(TcpOption::NoOperation),
        kind::MD5_SIGNATURE => match <&[u8; 16]>::try_from(data) {
            Ok(d) => Ok(TcpOption::Md5Signature(d)),
            Err(_) => Err(wrong(data, Exactly(kind::MD5_SIGNATURE_LEN))),
        },
        kind::USER_TIMEOUT => match *data {
            [a, b] => Ok(TcpOption::UserTimeout(UserTimeout {
                minutes: a & 0x80 != 0,
                timeout: u16::from_be_bytes([a & 0x7f, b]),
            })),
            _ => Err(wrong(data, Exactly(kind::USER_TIMEOUT_LEN))),
        },
        kind::TCP_AO => match data {
            [key_id, rnext_key_id, mac @ ..] => Ok(TcpOption::TcpAo(TcpAo {
                key_id: *key_id,
                rnext_key_id: *rnext_key_id,
                mac,
            })),
            _ => Err(wrong(data, AtLeast(kind::TCP_AO_MIN_LEN))),
        },
        kind::MPTCP => match data {
            [first, ..] => Ok(TcpOption::Mptcp(Mptcp {
                subtype: first >> 4,
                data,
            })),
            _ => Err(wrong(data, AtLeast(kind::MPTCP_MIN_LEN))),
        },
        kind::FAST_OPEN => {
            if fast_open_cookie_ok(data.len()) {
                Ok(TcpOption::FastOpen(FastOpen {
                    kind: kind::FAST_OPEN,
                    cookie: data,
                }))
            } else {
                Err(wrong(data, ExpectedLength::FastOpen))
            }
        }
        kind::ACCECN0 | kind::ACCECN1 => match AccEcn::new(kind, data) {
            Some(a) => Ok(TcpOption::AccEcn(a)),
            None => Err(wrong(data, ExpectedLength::AccEcn)),
        },
        kind::EXPERIMENTAL_1 | kind::EXPERIMENTAL_2 => match data {
            [a, b, rest @ ..] => {
                let exid = u16::from_be_bytes([*a, *b]);
                if kind == kind::EXPERIMENTAL_2
                    && exid == kind::EXID_FAST_OPEN
                    && fast_open_cookie_ok(rest.len())
                {
                    Ok(TcpOption::FastOpen(FastOpen { kind, cookie: rest }))
                } else {
                    Ok(TcpOption::Experimental(Experimental {
                        kind,
                        exid: Some(exid),
                        data: rest,
                    }))
                }
            }
            _ => Ok(TcpOption::Experimental(Experimental {
                kind,
                exid: None,
                data,
            })),
        },
        _ => Ok(TcpOption::Unknown { kind, data }),
    }
}

/// One step of the generic walker.
pub(crate) enum Step<'a> {
    /// EOL or NOP at this offset.
    Single(u8),
    /// A record: kind and data (the bytes after the length byte).
    Record(u8, &'a [u8]),
    /// The block ends here.
    End,
    /// A framing error (length missing, too small, overrun).
    Broken(u8, OptionErrorReason),
}

/// Read the record at `pos`; on success the record takes `wire_len` bytes.
#[inline(always)]
pub(crate) fn step(block: &[u8], pos: usize) -> Step<'_> {
    let Some(&kind) = block.get(pos) else {
        return Step::End;
    };
    if kind <= kind::NOP {
        return Step::Single(kind);
    }
    let Some(&len) = block.get(pos + 1) else {
        return Step::Broken(kind, OptionErrorReason::LengthMissing);
    };
    if len < 2 {
        return Step::Broken(kind, OptionErrorReason::LengthTooSmall { length: len });
    }
    match block.get(pos + 2..pos + usize::from(len)) {
        Some(data) => Step::Record(kind, data),
        None => Step::Broken(
            kind,
            OptionErrorReason::Overrun {
                length: len,
                available: block.len() - pos,
            },
        ),
    }
}

/// A raw option record as the generic walker sees it, before decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawOption<'a> {
    /// Offset of the kind byte in the option block.
    pub offset: usize,
    /// The kind byte.
    pub kind: u8,
    /// The bytes after the length byte (empty for EOL and NOP).
    pub data: &'a [u8],
}

/// The generic record walker: yields every record (EOL and NOP included)
/// without decoding; stops after EOL; a framing error (no length byte,
/// length below 2, overrun) is yielded once and ends the walk.
#[derive(Debug, Clone)]
pub struct RawOptions<'a> {
    block: &'a [u8],
    pos: usize,
}

impl<'a> RawOptions<'a> {
    /// Walk `block` (the bytes after the fixed 20-byte header).
    pub fn new(block: &'a [u8]) -> Self {
        RawOptions { block, pos: 0 }
    }
}

impl<'a> Iterator for RawOptions<'a> {
    type Item = Result<RawOption<'a>, OptionError>;
    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.pos;
        match step(self.block, offset) {
            Step::End => None,
            Step::Single(kind) => {
                self.pos = if kind == kind::EOL {
                    self.block.len()
                } else {
                    offset + 1
                };
                Some(Ok(RawOption {
                    offset,
                    kind,
                    data: &[],
                }))
            }
            Step::Record(kind, data) => {
                self.pos = offset + 2 + data.len();
                Some(Ok(RawOption { offset, kind, data }))
            }
            Step::Broken(kind, reason) => {
                self.pos = self.block.len();
                Some(Err(OptionError {
                    offset,
                    kind,
                    reason,
                }))
            }
        }
    }
}

/// Options under the strict policy: every malformation is an
/// [`OptionError`] with offset, kind and reason, after which iteration ends.
///
/// Non-zero bytes after EOL are yielded as a last `Err` whose
/// [`OptionError::is_warning`] is true; everything before it was complete.
///
/// ```
/// use tcp_options::{StrictOptions, OptionErrorReason, TcpOption};
/// let block = [0x01, 0x02, 0x03, 0x05, 0xb4]; // NOP, then MSS with length 3
/// let mut it = StrictOptions::new(&block);
/// assert_eq!(it.next().unwrap().unwrap().option, TcpOption::NoOperation);
/// let err = it.next().unwrap().unwrap_err();
/// assert_eq!((err.offset, err.kind), (1, 2));
/// assert!(matches!(err.reason, OptionErrorReason::WrongLength { length: 3, .. }));
/// assert!(it.next().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct StrictOptions<'a> {
    block: &'a [u8],
    pos: usize,
    pending: Option<OptionError>,
}

impl<'a> StrictOptions<'a> {
    /// Iterate `block` (the bytes after the fixed 20-byte header).
    #[inline]
    pub fn new(block: &'a [u8]) -> Self {
        StrictOptions {
            block,
            pos: 0,
            pending: None,
        }
    }

    /// Check the whole block: `Ok(())` when it is well formed (a trailing
    /// non-zero-after-EOL warning counts as an error here), else the first error.
    pub fn validate(block: &'a [u8]) -> Result<(), OptionError> {
        for item in StrictOptions::new(block) {
            item?;
        }
        Ok(())
    }
}

/// The framing error at `offset` (only called where there is one).
#[cold]
#[inline(never)]
fn framing_error(block: &[u8], offset: usize, kind: u8) -> OptionError {
    let reason = match step(block, offset) {
        Step::Broken(_, reason) => reason,
        // Not reached: the caller saw a framing error at this offset.
        _ => OptionErrorReason::LengthMissing,
    };
    OptionError {
        offset,
        kind,
        reason,
    }
}

/// The warning for non-zero bytes after the EOL at `offset`, if any.
#[cold]
#[inline(never)]
fn after_eol(block: &[u8], offset: usize) -> Option<OptionError> {
    let rest = block.get(offset + 1..).unwrap_or(&[]);
    let i = rest.iter().position(|b| *b != 0)?;
    Some(OptionError {
        offset: offset + 1 + i,
        kind: rest.get(i).copied().unwrap_or(0),
        reason: OptionErrorReason::NonZeroAfterEol {
            count: rest.iter().filter(|b| **b != 0).count(),
        },
    })
}

impl<'a> Iterator for StrictOptions<'a> {
    type Item = Result<ParsedOption<'a>, OptionError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.pos;
        let block = self.block;
        let Some(&kind) = block.get(offset) else {
            return self.pending.take().map(Err);
        };
        if kind == kind::NOP {
            self.pos = offset + 1;
            return Some(Ok(ParsedOption {
                offset,
                kind,
                data: &[],
                option: TcpOption::NoOperation,
            }));
        }
        if kind == kind::EOL {
            self.pending = after_eol(block, offset);
            self.pos = block.len();
            return Some(Ok(ParsedOption {
                offset,
                kind,
                data: &[],
                option: TcpOption::EndOfList,
            }));
        }
        let len = match block.get(offset + 1) {
            Some(&l) if l >= 2 => usize::from(l),
            _ => {
                self.pos = block.len();
                return Some(Err(framing_error(block, offset, kind)));
            }
        };
        let Some(data) = block.get(offset + 2..offset + len) else {
            self.pos = block.len();
            return Some(Err(framing_error(block, offset, kind)));
        };
        match decode(kind, data) {
            Ok(option) => {
                self.pos = offset + len;
                Some(Ok(ParsedOption {
                    offset,
                    kind,
                    data,
                    option,
                }))
            }
            Err(reason) => {
                self.pos = block.len();
                Some(Err(OptionError {
                    offset,
                    kind,
                    reason,
                }))
            }
        }
    }
}

impl core::iter::FusedIterator for RawOptions<'_> {}

impl core::iter::FusedIterator for StrictOptions<'_> {}

/// Options under the Linux-compatible policy: never an error.
///
/// Follows the walk of Linux `tcp_parse_options` (see [`crate::linux`]):
/// iteration stops silently at EOL, at a kind byte without a length byte, at
/// a length below 2 and at an option that runs past the block; a known kind
/// of the wrong length is yielded as [`TcpOption::Invalid`] and skipped over.
/// After iteration, [`LinuxOptions::stopped`] tells where and why it stopped
/// early, for diagnostics.
#[derive(Debug, Clone)]
pub struct LinuxOptions<'a> {
    block: &'a [u8],
    pos: usize,
    stopped: Option<OptionError>,
}

impl<'a> LinuxOptions<'a> {
    /// Iterate `block` (the bytes after the fixed 20-byte header).
    #[inline]
    pub fn new(block: &'a [u8]) -> Self {
        LinuxOptions {
            block,
            pos: 0,
            stopped: None,
        }
    }

    /// Where the walk stopped silently before the end of the block (a framing
    /// error Linux does not report), once iteration has reached it.
    pub fn stopped(&self) -> Option<OptionError> {
        self.stopped
    }
}

impl<'a> Iterator for LinuxOptions<'a> {
    type Item = ParsedOption<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.pos;
        let block = self.block;
        let &kind = block.get(offset)?;
        if kind == kind::NOP {
            self.pos = offset + 1;
            return Some(ParsedOption {
                offset,
                kind,
                data: &[],
                option: TcpOption::NoOperation,
            });
        }
        if kind == kind::EOL {
            self.pos = block.len();
            return Some(ParsedOption {
                offset,
                kind,
                data: &[],
                option: TcpOption::EndOfList,
            });
        }
        let len = match block.get(offset + 1) {
            Some(&l) if l >= 2 => usize::from(l),
            _ => {
                self.pos = block.len();
                self.stopped = Some(framing_error(block, offset, kind));
                return None;
            }
        };
        let Some(data) = block.get(offset + 2..offset + len) else {
            self.pos = block.len();
            self.stopped = Some(framing_error(block, offset, kind));
            return None;
        };
        self.pos = offset + len;
        let option = match decode(kind, data) {
            Ok(o) => o,
            Err(reason) => TcpOption::Invalid { kind, data, reason },
        };
        Some(ParsedOption {
            offset,
            kind,
            data,
            option,
        })
    }
}

impl core::iter::FusedIterator for LinuxOptions<'_> {}
