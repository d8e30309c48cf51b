//! What Linux records from a segment's options.
//!
//! The rules below were checked against the kernel sources (mainline 6.x,
//! with the AccECN work of 6.18 noted where it matters); each names the
//! function it comes from.
//!
//! # The walk of `tcp_parse_options` (net/ipv4/tcp_input.c)
//!
//! Linux walks the option block once, front to back, keeping a count of the
//! bytes left:
//!
//! 1. EOL (0) ends the walk. NOP (1) takes one byte.
//! 2. Any other kind needs a length byte: if only one byte is left, the walk
//!    ends silently. A length below 2 ("silly option") ends the walk
//!    silently. A length larger than the bytes left ends the walk silently
//!    (partial options are not parsed). Options read before that point keep
//!    their effect.
//! 3. A kind whose length Linux checks (MSS 4, Window Scale 3, SACK-Permitted
//!    2, Timestamps 10, SACK 2 + 8n) but that has another length is stepped
//!    over using its length byte; nothing is recorded ([`LinuxRepr::skipped`]
//!    counts these).
//! 4. Every accepted option overwrites what an earlier one of the same kind
//!    recorded, so the last duplicate wins; an option that is not accepted
//!    (an MSS of 0, an odd-length Fast Open) leaves the earlier value alone.
//! 5. MSS (length 4), Window Scale (length 3) and SACK-Permitted (length 2)
//!    count only on a segment with SYN set that is not parsed on an
//!    established connection (`estab` is 0 for the SYN at a listener and
//!    the SYN-ACK at a client). An MSS of 0 is ignored; a non-zero MSS is
//!    lowered to the socket's `TCP_MAXSEG` setting (`user_mss`) when that is
//!    set and smaller (not modelled here: [`LinuxRepr::mss`] is the value on
//!    the wire). Window Scale and SACK-Permitted also require their sysctls
//!    (`tcp_window_scaling`, `tcp_sack`, on by default).
//! 6. A window-scale shift above 14 (`TCP_MAX_WSCALE`) is logged ("illegal
//!    window scaling value", rate limited) and used as 14; scaling is still
//!    on.
//! 7. Timestamps (exactly length 10) count on any segment, SYN or not: on an
//!    established connection only if timestamps were negotiated, otherwise
//!    whenever the `tcp_timestamps` sysctl is on. (On an established
//!    connection the kernel first tries a fast path for the common
//!    `01 01 08 0a` layout; the result is the same.)
//! 8. SACK counts when its length is at least 10 and 2 more than a multiple
//!    of 8, and SACK is on for the connection, or SACK-Permitted appeared
//!    earlier in the same SYN. Linux only remembers where the option is (the
//!    last one wins) and reads the blocks later.
//! 9. Fast Open: kind 34, or kind 254 whose first two data bytes are the ExID
//!    0xF989 (`tcp_parse_fastopen_option`). It counts only on a SYN (SYN or
//!    SYN-ACK) and only where the caller asked for it: an odd cookie length
//!    is ignored, an empty cookie is a request, a cookie of 4..=16 bytes is
//!    kept, any other even length is recorded as invalid. A kind-254 option
//!    with the Fast Open ExID is never "unknown", even off a SYN.
//! 10. AccECN (kinds 172 and 174, Linux 6.18 and later): the position of the
//!     last one is kept whatever its length and whether or not SYN is set.
//!     When it is processed (`tcp_accecn_process_option`), only whole 3-byte
//!     counter fields are read, at most three; a trailing partial field is
//!     ignored.
//! 11. MD5 (19) and, since Linux 6.10, TCP-AO (29) are stepped over quietly:
//!     they are checked by a separate walk (below); earlier kernels with
//!     TCP-AO marked kind 29 unknown. Every other kind (User Timeout, MPTCP,
//!     which the MPTCP code reads in a walk of its own, kind 253, kind 254
//!     without the Fast Open ExID, any unassigned kind) sets the "saw
//!     unknown" bit (`saw_unknown`, which wakes BPF option parsers) and is
//!     stepped over.
//!     (Kind 254 with the 32-bit SMC-R ExID on a SYN is taken by SMC instead
//!     when SMC is in use on the host; not modelled.)
//!
//! # The signature walk of `tcp_do_parse_auth_options` (net/ipv4/tcp_input.c)
//!
//! A kernel built with TCP MD5 or TCP-AO support walks the block a second
//! time for every segment to a listening or connected socket
//! (`tcp_inbound_hash`), and **drops the segment** if this walk fails, even
//! when the connection uses no signature:
//!
//! - The walk continues only while at least 5 bytes are left (18 on a kernel
//!   with MD5 support but no TCP-AO); EOL ends it; NOP takes one byte.
//! - A length below 2 or running past the block is an error (not a silent
//!   stop as in `tcp_parse_options`).
//! - MD5 must have length 18; TCP-AO must have length 5 or more (a MAC of at
//!   least one byte).
//! - A second signature option (MD5 or TCP-AO) after the first is an error.
//!
//! A kernel built with neither (`CONFIG_TCP_MD5SIG` and `CONFIG_TCP_AO`
//! both unset) has no such walk and drops nothing here.
//!
//! Which of the three the kernel is is [`SignatureBuild`], carried in
//! [`ParseContext::signature_build`] (default [`SignatureBuild::TcpAo`]).
//! [`SignatureBuild::auth_options`] performs the walk of that build;
//! [`LinuxRepr::parse`] runs it and reports a failure in
//! [`LinuxRepr::auth_error`].
//!
//! # Signed segments to a socket without keys (`tcp_inbound_hash`)
//!
//! After a successful walk, a segment that carries a signature option is
//! checked against the socket's keys. On a socket with no key at all (the
//! common case: nothing configured), a kernel with MD5 support drops a
//! segment carrying an MD5 option (`SKB_DROP_REASON_TCP_MD5UNEXPECTED`), and
//! a kernel with TCP-AO support drops one carrying a TCP-AO option
//! (`SKB_DROP_REASON_TCP_AOUNEXPECTED`); a kernel without TCP-AO lets a
//! TCP-AO option through. [`LinuxRepr::drop_without_keys`] answers this.
//!
//! [`crate::LinuxOptions`] is the iterator form of rules 1-3; [`LinuxRepr`]
//! applies all of them and is what the kernel would keep.

use crate::error::{AuthOptionError, OptionError};
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
    /// Which signature options the kernel was built to check (default
    /// [`SignatureBuild::TcpAo`]).
    pub signature_build: SignatureBuild,
}

/// Which TCP signature options a Linux kernel was built with: this decides
/// the signature walk ([`crate::linux`] module docs) and so which malformed
/// blocks it drops.
///
/// ```
/// use tcp_options::{LinuxRepr, ParseContext, SignatureBuild};
/// // MD5 (18 bytes) then a TCP-AO option (6 bytes): two signature options.
/// let mut block = vec![0x13, 18];
/// block.extend([0u8; 16]);
/// block.extend([0x1d, 6, 1, 1, 0xaa, 0xbb]);
/// let ctx = ParseContext::handshake(true);
/// // A TCP-AO kernel reads on while 5 bytes are left, finds the second one, drops.
/// assert!(LinuxRepr::parse(&block, ctx).auth_error.is_some());
/// // An MD5-only kernel stops when fewer than 18 bytes are left: no error.
/// let md5 = ctx.with_signature_build(SignatureBuild::Md5Only);
/// assert!(LinuxRepr::parse(&block, md5).auth_error.is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SignatureBuild {
    /// `CONFIG_TCP_AO=y` (Linux 6.7 and later; distribution kernels build
    /// MD5 too): the walk reads records while 5 bytes are left, and both
    /// MD5 and TCP-AO options are checked against the socket's keys.
    #[default]
    TcpAo,
    /// `CONFIG_TCP_MD5SIG=y` without `CONFIG_TCP_AO` (every kernel before
    /// 6.7 with MD5, and later ones built so): the walk reads records only
    /// while 18 bytes are left; a TCP-AO option is found but never checked.
    Md5Only,
    /// Neither: no signature walk, nothing dropped for signature options.
    Neither,
}

impl SignatureBuild {
    /// The three builds, TCP-AO first.
    pub const ALL: [SignatureBuild; 3] = [
        SignatureBuild::TcpAo,
        SignatureBuild::Md5Only,
        SignatureBuild::Neither,
    ];

    /// The kernel configuration this build stands for, for people.
    pub const fn name(self) -> &'static str {
        match self {
            SignatureBuild::TcpAo => "CONFIG_TCP_AO",
            SignatureBuild::Md5Only => "CONFIG_TCP_MD5SIG without CONFIG_TCP_AO",
            SignatureBuild::Neither => "neither CONFIG_TCP_MD5SIG nor CONFIG_TCP_AO",
        }
    }

    /// Bytes that must be left in the block for the signature walk to read
    /// another record; `None` when the build has no such walk.
    pub const fn walk_min_left(self) -> Option<usize> {
        match self {
            SignatureBuild::TcpAo => Some(AUTH_WALK_MIN_LEFT_AO),
            SignatureBuild::Md5Only => Some(AUTH_WALK_MIN_LEFT_MD5),
            SignatureBuild::Neither => None,
        }
    }

    /// Whether an MD5 option is checked against the socket's keys (a socket
    /// without keys drops the segment).
    pub const fn checks_md5(self) -> bool {
        matches!(self, SignatureBuild::TcpAo | SignatureBuild::Md5Only)
    }

    /// Whether a TCP-AO option is checked against the socket's keys.
    pub const fn checks_tcp_ao(self) -> bool {
        matches!(self, SignatureBuild::TcpAo)
    }

    /// This build's signature walk over `block` (module docs): an error
    /// means the kernel drops the segment. [`SignatureBuild::Neither`]
    /// always finds nothing.
    pub fn auth_options(self, block: &[u8]) -> Result<AuthOptions<'_>, AuthOptionError> {
        match self.walk_min_left() {
            Some(min_left) => auth_walk(block, min_left),
            None => Ok(AuthOptions::default()),
        }
    }

    /// Whether a kernel of this build drops a segment with option block
    /// `block` on a socket with no MD5 or TCP-AO key: what
    /// [`LinuxRepr::drop_without_keys`] answers for a block parsed in this
    /// build, from the signature walk alone (the other walk has no part in
    /// it).
    ///
    /// ```
    /// use tcp_options::{SignatureBuild, SignatureDrop};
    /// // A TCP-AO option (kind 29, length 6): only a TCP-AO build checks it.
    /// let ao = [29, 6, 1, 1, 0xaa, 0xbb];
    /// assert_eq!(SignatureBuild::TcpAo.drop_without_keys(&ao), Some(SignatureDrop::AoUnexpected));
    /// assert_eq!(SignatureBuild::Md5Only.drop_without_keys(&ao), None);
    /// assert_eq!(SignatureBuild::Neither.drop_without_keys(&ao), None);
    /// ```
    pub fn drop_without_keys(self, block: &[u8]) -> Option<SignatureDrop> {
        match self.auth_options(block) {
            Ok(found) => self.drop_for(None, found.md5.is_some(), found.tcp_ao.is_some()),
            Err(e) => self.drop_for(Some(e), false, false),
        }
    }

    /// The drop rule, once: a failed walk drops whatever the keys; else an
    /// option this build checks, with no key on the socket.
    const fn drop_for(
        self,
        walk: Option<AuthOptionError>,
        md5: bool,
        ao: bool,
    ) -> Option<SignatureDrop> {
        if let Some(e) = walk {
            return Some(SignatureDrop::Walk(e));
        }
        if md5 && self.checks_md5() {
            return Some(SignatureDrop::Md5Unexpected);
        }
        if ao && self.checks_tcp_ao() {
            return Some(SignatureDrop::AoUnexpected);
        }
        None
    }
}

/// Why a kernel drops a segment because of its signature options, on a
/// socket with no MD5 or TCP-AO key ([`LinuxRepr::drop_without_keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum SignatureDrop {
    /// The signature walk failed (`SKB_DROP_REASON_TCP_AUTH_HDR`); dropped
    /// whatever keys the socket has.
    #[error("malformed signature options: {0}")]
    Walk(AuthOptionError),
    /// An MD5 option the socket has no key for
    /// (`SKB_DROP_REASON_TCP_MD5UNEXPECTED`).
    #[error("MD5 signature option but the socket has no MD5 key")]
    Md5Unexpected,
    /// A TCP-AO option the socket has no key for
    /// (`SKB_DROP_REASON_TCP_AOUNEXPECTED`).
    #[error("TCP-AO option but the socket has no TCP-AO key")]
    AoUnexpected,
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
            signature_build: SignatureBuild::TcpAo,
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
            signature_build: SignatureBuild::TcpAo,
        }
    }

    /// The same context with the SYN bit set as given.
    pub const fn with_syn(mut self, syn: bool) -> Self {
        self.syn = syn;
        self
    }

    /// The same context for a kernel of this signature build.
    pub const fn with_signature_build(mut self, build: SignatureBuild) -> Self {
        self.signature_build = build;
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
    /// The MD5 digest Linux would check, from the signature walk
    /// ([`auth_options`]); `None` when there is none or the walk failed.
    pub md5: Option<&'a [u8; 16]>,
    /// The TCP-AO option Linux would check, from the signature walk;
    /// `None` when there is none or the walk failed.
    pub tcp_ao: Option<TcpAo<'a>>,
    /// Why the signature walk failed: Linux drops such a segment (module
    /// docs; the walk is the one of [`ParseContext::signature_build`]).
    pub auth_error: Option<AuthOptionError>,
    /// The kernel build the segment was parsed for (from the context).
    pub signature_build: SignatureBuild,
    /// The last AccECN option, of any length, with the whole 3-byte counter
    /// fields Linux reads from it (at most three).
    pub accecn: Option<AccEcn<'a>>,
    /// A kind Linux's walk does not handle was stepped over (`saw_unknown`).
    pub saw_unknown: bool,
    /// Options of a kind whose length Linux checks (MSS, Window Scale,
    /// SACK-Permitted, Timestamps, SACK) skipped because of a wrong length.
    pub skipped: u8,
    /// Where the walk ended silently before the block's end, and why.
    pub stopped: Option<OptionError>,
}

impl<'a> LinuxRepr<'a> {
    /// Apply Linux's rules (module docs) to `block` in context `ctx`.
    pub fn parse(block: &'a [u8], ctx: ParseContext) -> Self {
        let mut r = LinuxRepr::default();
        let syn_ok = ctx.syn && !ctx.established;
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
                (
                    kind::MSS
                    | kind::WINDOW_SCALE
                    | kind::TIMESTAMPS
                    | kind::SACK_PERMITTED
                    | kind::SACK,
                    _,
                ) => r.skipped = r.skipped.saturating_add(1),
                (kind::ACCECN0 | kind::ACCECN1, _) => {
                    // Whole counter fields only, at most three.
                    let whole = (data.len() / usize::from(kind::ACCECN_FIELD_LEN)
                        * usize::from(kind::ACCECN_FIELD_LEN))
                    .min(3 * usize::from(kind::ACCECN_FIELD_LEN));
                    r.accecn = data.get(..whole).and_then(|f| AccEcn::new(kind, f));
                }
                (kind::FAST_OPEN, d) => {
                    if ctx.syn {
                        r.fast_open_from(data.len(), d.ok());
                    }
                }
                (kind::EXPERIMENTAL_2, d) => {
                    // Linux's experimental Fast Open: ExID 0xF989, length >= 4.
                    if be16_prefix(data) == Some(kind::EXID_FAST_OPEN) {
                        if ctx.syn {
                            r.fast_open_from(data.len().saturating_sub(2), d.ok());
                        }
                    } else {
                        r.saw_unknown = true;
                    }
                }
                (kind::MD5_SIGNATURE | kind::TCP_AO, _) => {}
                _ => r.saw_unknown = true,
            }
        }
        r.signature_build = ctx.signature_build;
        match ctx.signature_build.auth_options(block) {
            Ok(found) => {
                r.md5 = found.md5;
                r.tcp_ao = found.tcp_ao;
            }
            Err(e) => r.auth_error = Some(e),
        }
        r
    }

    /// Whether a kernel of [`LinuxRepr::signature_build`] drops this
    /// segment for its signature options on a socket that has no MD5 or
    /// TCP-AO key (module docs), and why; `None` when it passes.
    ///
    /// ```
    /// use tcp_options::{LinuxRepr, ParseContext, SignatureBuild, SignatureDrop};
    /// let ao = [0x1d, 0x06, 0x01, 0x01, 0xaa, 0xbb, 0x01, 0x01]; // TCP-AO, 2-byte MAC
    /// let ctx = ParseContext::handshake(true);
    /// let drop = |b| LinuxRepr::parse(&ao, ctx.with_signature_build(b)).drop_without_keys();
    /// assert_eq!(drop(SignatureBuild::TcpAo), Some(SignatureDrop::AoUnexpected));
    /// assert_eq!(drop(SignatureBuild::Md5Only), None);
    /// assert_eq!(drop(SignatureBuild::Neither), None);
    /// ```
    pub fn drop_without_keys(&self) -> Option<SignatureDrop> {
        self.signature_build
            .drop_for(self.auth_error, self.md5.is_some(), self.tcp_ao.is_some())
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

/// The signature options found by Linux's second walk (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AuthOptions<'a> {
    /// The MD5 digest (kind 19, length 18).
    pub md5: Option<&'a [u8; 16]>,
    /// The TCP-AO option (kind 29, length 5 or more).
    pub tcp_ao: Option<TcpAo<'a>>,
}

/// Bytes that must be left for Linux's signature walk to read another
/// record, on a kernel with TCP-AO support (the 4-byte TCP-AO header plus
/// one MAC byte).
pub const AUTH_WALK_MIN_LEFT_AO: usize = 5;
/// The same on a kernel with MD5 support but no TCP-AO (one MD5 option).
pub const AUTH_WALK_MIN_LEFT_MD5: usize = kind::MD5_SIGNATURE_LEN as usize;

/// Linux's walk for signature options (`tcp_do_parse_auth_options`, rules in
/// the module docs). `tcp_ao_configured` selects a kernel built with TCP-AO
/// support (it looks at records while 5 bytes are left) or with MD5 only
/// (18 bytes). An error means Linux drops the segment.
/// [`SignatureBuild::auth_options`] is the same with the third build
/// (neither) included.
///
/// ```
/// use tcp_options::{auth_options, AuthOptionError};
/// // A window-scale record whose length (9) runs past the block: Linux's
/// // main walk stops quietly, but the signature walk rejects the segment.
/// let block = [0x01, 0x03, 0x09, 0x07, 0x00, 0x00];
/// assert!(matches!(auth_options(&block, true), Err(AuthOptionError::Framing { offset: 1, .. })));
/// ```
pub fn auth_options(
    block: &[u8],
    tcp_ao_configured: bool,
) -> Result<AuthOptions<'_>, AuthOptionError> {
    let build = if tcp_ao_configured {
        SignatureBuild::TcpAo
    } else {
        SignatureBuild::Md5Only
    };
    build.auth_options(block)
}

fn auth_walk(block: &[u8], min_left: usize) -> Result<AuthOptions<'_>, AuthOptionError> {
    let mut found = AuthOptions::default();
    let mut pos = 0;
    while block.len().saturating_sub(pos) >= min_left {
        let offset = pos;
        let (kind, data) = match step(block, pos) {
            Step::Single(kind::NOP) => {
                pos += 1;
                continue;
            }
            Step::End | Step::Single(_) => break,
            Step::Broken(kind, reason) => {
                return Err(AuthOptionError::Framing {
                    offset,
                    kind,
                    reason,
                })
            }
            Step::Record(kind, data) => (kind, data),
        };
        let length = block.get(offset + 1).copied().unwrap_or(0);
        let duplicate = found.md5.is_some() || found.tcp_ao.is_some();
        match (kind, data) {
            (kind::MD5_SIGNATURE, _) => {
                let Ok(digest) = <&[u8; 16]>::try_from(data) else {
                    return Err(AuthOptionError::Md5Length { offset, length });
                };
                if duplicate {
                    return Err(AuthOptionError::Duplicate { offset, kind });
                }
                found.md5 = Some(digest);
            }
            (kind::TCP_AO, [key_id, rnext_key_id, mac @ ..]) if !mac.is_empty() => {
                if duplicate {
                    return Err(AuthOptionError::Duplicate { offset, kind });
                }
                found.tcp_ao = Some(TcpAo {
                    key_id: *key_id,
                    rnext_key_id: *rnext_key_id,
                    mac,
                });
            }
            (kind::TCP_AO, _) => return Err(AuthOptionError::AoTooShort { offset, length }),
            _ => {}
        }
        pos += 2 + data.len();
    }
    Ok(found)
}
