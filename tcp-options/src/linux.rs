//! What Linux records from a segment's options.
//!
//! # The rules of Linux `tcp_parse_options` (net/ipv4/tcp_input.c)
//!
//! Linux walks the option block once, front to back, keeping a running
//! count of the bytes left:
//!
//! 1. EOL (0) ends the walk. NOP (1) takes one byte.
//! 2. Any other kind needs a length byte: if only one byte is left, the walk
//!    ends silently. A length below 2 ("silly option") ends the walk
//!    silently. A length larger than the bytes left ends the walk silently
//!    (partial options are not parsed). Options read before that point keep
//!    their effect.
//! 3. A known kind whose length is not the one expected is skipped: its
//!    length byte is still used to step over it, nothing is recorded.
//! 4. Each option overwrites what an earlier one of the same kind recorded,
//!    so the last duplicate wins.
//! 5. MSS (length 4), Window Scale (length 3) and SACK-Permitted (length 2)
//!    count only on a SYN segment that is not processed as part of an
//!    established connection. An MSS of 0 is ignored. Window scaling, SACK
//!    and timestamps also require their sysctls (`tcp_window_scaling`,
//!    `tcp_sack`, `tcp_timestamps`, all on by default).
//! 6. A window-scale shift above 14 is logged ("Illegal window scaling
//!    value") and used as 14 (RFC 7323 section 2.3).
//! 7. Timestamps (length 10) are recorded on an established connection only
//!    if timestamps were negotiated, otherwise whenever the sysctl allows.
//! 8. A SACK option counts only when its length is 2 + 8n (n >= 1) and SACK
//!    was negotiated; Linux remembers where it is and reads the blocks later.
//! 9. Fast Open (kind 34, or kind 254 with the ExID 0xF989 and length at
//!    least 4) counts only on a SYN: an odd cookie length is ignored, an empty
//!    cookie is a request, a cookie of 4..=16 bytes is kept, any other even
//!    length is recorded as an invalid cookie.
//! 10. MD5 (kind 19) is looked up by a separate walk that stops at the first
//!     kind 19 and accepts it only with length 18.
//! 11. Kinds Linux does not handle (User Timeout, MPTCP in this walk, any
//!     unassigned kind) set a "saw unknown" bit and are stepped over.
//!
//! [`crate::LinuxOptions`] is the iterator form of rules 1-3; [`LinuxRepr`]
//! applies all of them and is what the kernel would keep.

use crate::error::OptionError;
use crate::kind;
use crate::option::{AccEcn, SackBlocks, TcpAo, TcpOption, Timestamps};
use crate::walk::{step, Step};

/// The connection state Linux parses a segment in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParseContext {
    /// The segment has SYN set.
    pub syn: bool,
    /// Parsed on an established connection (`estab` in Linux).
    pub established: bool,
    /// SACK was negotiated (SACK blocks are recorded only then, or when the
    /// same SYN carries SACK-Permitted).
    pub sack_ok: bool,
    /// Timestamps were negotiated (used when `established`).
    pub tstamp_ok: bool,
    /// sysctl `net.ipv4.tcp_window_scaling` (default on).
    pub sysctl_window_scaling: bool,
    /// sysctl `net.ipv4.tcp_timestamps` (default on).
    pub sysctl_timestamps: bool,
    /// sysctl `net.ipv4.tcp_sack` (default on).
    pub sysctl_sack: bool,
}

impl ParseContext {
    /// A segment of the three-way handshake (`syn` tells whether SYN is set),
    /// default sysctls.
    pub const fn handshake(syn: bool) -> Self {
        ParseContext {
            syn,
            established: false,
            sack_ok: false,
            tstamp_ok: false,
            sysctl_window_scaling: true,
            sysctl_timestamps: true,
            sysctl_sack: true,
        }
    }

    /// A segment on an established connection that negotiated SACK and/or
    /// timestamps, default sysctls.
    pub const fn established(sack_ok: bool, tstamp_ok: bool) -> Self {
        ParseContext {
            syn: false,
            established: true,
            sack_ok,
            tstamp_ok,
            sysctl_window_scaling: true,
            sysctl_timestamps: true,
            sysctl_sack: true,
        }
    }

    /// The same context with the SYN bit set as given.
    pub const fn with_syn(mut self, syn: bool) -> Self {
        self.syn = syn;
        self
    }
}

impl Default for ParseContext {
    fn default() -> Self {
        ParseContext::handshake(false)
    }
}

/// What Linux keeps from a Fast Open option on a SYN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FastOpenSeen<'a> {
    /// An empty option: a cookie request.
    Request,
    /// A cookie of 4..=16 bytes.
    Cookie(&'a [u8]),
    /// An even length outside 4..=16 (Linux records length -1).
    Invalid,
}

/// The options of one segment as Linux would record them (the parsed `Repr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinuxRepr<'a> {
    /// MSS from a SYN (`mss_clamp`); `None` when absent, ignored or 0.
    pub mss: Option<u16>,
    /// Window-scale shift from a SYN after clamping to 14 (`snd_wscale`);
    /// `Some` means window scaling is on (`wscale_ok`).
    pub window_scale: Option<u8>,
    /// The shift as received, when it was above 14 and clamped.
    pub window_scale_clamped_from: Option<u8>,
    /// SACK-Permitted seen on a SYN (`sack_ok`).
    pub sack_permitted: bool,
    /// Timestamps recorded (`saw_tstamp`, `rcv_tsval`, `rcv_tsecr`).
    pub timestamps: Option<Timestamps>,
    /// SACK blocks Linux would read, and the option's offset in the block.
    pub sack: Option<(usize, SackBlocks<'a>)>,
    /// Fast Open on a SYN.
    pub fast_open: Option<FastOpenSeen<'a>>,
    /// The MD5 digest Linux would check (first kind 19, only if length 18).
    pub md5: Option<&'a [u8; 16]>,
    /// The last TCP-AO option with a valid length.
    pub tcp_ao: Option<TcpAo<'a>>,
    /// The last AccECN option with a valid length.
    pub accecn: Option<AccEcn<'a>>,
    /// A kind Linux's walk does not handle was stepped over.
    pub saw_unknown: bool,
    /// Known options skipped because of a wrong length.
    pub skipped: u8,
    /// Where the walk ended silently before the block's end, and why.
    pub stopped: Option<OptionError>,
}

impl<'a> LinuxRepr<'a> {
    /// Apply Linux's rules (module docs) to `block` in context `ctx`.
    pub fn parse(block: &'a [u8], ctx: ParseContext) -> Self {
        let mut r = LinuxRepr::default();
        let syn_ok = ctx.syn && !ctx.established;
        let mut md5_seen = false;
        let mut pos = 0;
        loop {
            let offset = pos;
            let (kind, data) = match step(block, pos) {
                Step::End => break,
                Step::Single(kind::NOP) => {
                    pos += 1;
                    continue;
                }
                Step::Single(_) => break,
                Step::Broken(kind, reason) => {
                    r.stopped = Some(OptionError {
                        offset,
                        kind,
                        reason,
                    });
                    break;
                }
                Step::Record(kind, data) => (kind, data),
            };
            pos += 2 + data.len();
            let decoded = crate::walk::decode(kind, data);
            if decoded.is_err() {
                r.skipped = r.skipped.saturating_add(1);
            }
            match (kind, decoded) {
                (kind::MSS, Ok(TcpOption::MaxSegmentSize(mss))) => {
                    if syn_ok && mss != 0 {
                        r.mss = Some(mss);
                    }
                }
                (kind::WINDOW_SCALE, Ok(TcpOption::WindowScale(s))) => {
                    if syn_ok && ctx.sysctl_window_scaling {
                        if s > kind::MAX_WINDOW_SCALE {
                            r.window_scale = Some(kind::MAX_WINDOW_SCALE);
                            r.window_scale_clamped_from = Some(s);
                        } else {
                            r.window_scale = Some(s);
                            r.window_scale_clamped_from = None;
                        }
                    }
                }
                (kind::TIMESTAMPS, Ok(TcpOption::Timestamps(ts))) => {
                    let allowed = if ctx.established {
                        ctx.tstamp_ok
                    } else {
                        ctx.sysctl_timestamps
                    };
                    if allowed {
                        r.timestamps = Some(ts);
                    }
                }
                (kind::SACK_PERMITTED, Ok(_)) => {
                    if syn_ok && ctx.sysctl_sack {
                        r.sack_permitted = true;
                    }
                }
                (kind::SACK, Ok(TcpOption::Sack(blocks))) => {
                    if ctx.sack_ok || r.sack_permitted {
                        r.sack = Some((offset, blocks));
                    }
                }
                (kind::MD5_SIGNATURE, d) => {
                    if !md5_seen {
                        md5_seen = true;
                        if let Ok(TcpOption::Md5Signature(digest)) = d {
                            r.md5 = Some(digest);
                        }
                    }
                }
                (kind::TCP_AO, Ok(TcpOption::TcpAo(ao))) => r.tcp_ao = Some(ao),
                (kind::ACCECN0 | kind::ACCECN1, Ok(TcpOption::AccEcn(a))) => r.accecn = Some(a),
                (kind::FAST_OPEN, d) => {
                    if ctx.syn {
                        r.fast_open_from(data.len(), d.ok());
                    }
                }
                (kind::EXPERIMENTAL_2, d) => {
                    // Linux's experimental Fast Open: ExID 0xF989, length >= 4.
                    if ctx.syn && be16_prefix(data) == Some(kind::EXID_FAST_OPEN) {
                        r.fast_open_from(data.len() - 2, d.ok());
                    }
                }
                (kind::EXPERIMENTAL_1, _) => {}
                (kind::MSS | kind::WINDOW_SCALE | kind::TIMESTAMPS | kind::SACK_PERMITTED, _)
                | (kind::SACK | kind::TCP_AO | kind::ACCECN0 | kind::ACCECN1, _) => {}
                _ => r.saw_unknown = true,
            }
        }
        r
    }

    fn fast_open_from(&mut self, cookie_len: usize, decoded: Option<TcpOption<'a>>) {
        if cookie_len % 2 == 1 {
            return;
        }
        self.fast_open = Some(match decoded {
            Some(TcpOption::FastOpen(f)) if f.cookie.is_empty() => FastOpenSeen::Request,
            Some(TcpOption::FastOpen(f)) => FastOpenSeen::Cookie(f.cookie),
            _ => FastOpenSeen::Invalid,
        });
    }
}

fn be16_prefix(d: &[u8]) -> Option<u16> {
    match d {
        [a, b, ..] => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    }
}
