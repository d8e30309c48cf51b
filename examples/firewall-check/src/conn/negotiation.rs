//! What each endpoint's kernel holds after the handshake, read from a capture.
//!
//! This is the one place `firewall-check` interprets handshake options, and
//! it interprets nothing itself: every option block goes through
//! `tcp-options`' Linux model.
//!
//! - Each endpoint decides from the handshake segment it *receives*: the
//!   server (the listener) from the SYN, the client from the SYN-ACK, each
//!   parsed by [`tcp_options::LinuxRepr`] exactly as `tcp_parse_options`
//!   does (the last accepted duplicate wins, an MSS of 0 is ignored, a known
//!   kind with a wrong length is stepped over and the walk reads on, a shift
//!   above 14 is used as 14). [`tcp_options::Handshake`] turns the two into
//!   what each side believes.
//! - A handshake segment whose option block makes Linux drop it (the
//!   signature-option walk of `tcp_inbound_hash`, or an MD5 / TCP-AO option
//!   for a socket without keys) is reported per kernel build
//!   ([`SignatureBuild::TcpAo`], [`SignatureBuild::Md5Only`]).
//! - ECN: RFC 3168 (SYN with ECE and CWR, SYN-ACK with ECE only) or
//!   Accurate ECN (RFC 9768: SYN with AE, CWR and ECE; a SYN-ACK with one of
//!   the AccECN flag combinations).
//!
//! One capture point sees each handshake segment on one side of any
//! middlebox only; whether the far end really received what the capture
//! shows is decided later from the windows each side sends
//! (`analyze`'s mismatch evidence).

use serde::Serialize;
use tcp_options::{Flags, LinuxRepr, Negotiation, ParseContext, SignatureBuild, SignatureDrop};

/// Most option bytes a TCP header can hold.
pub const MAX_OPTIONS: usize = 40;

/// An option block copied out of the capture buffer (40 bytes at most).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionBytes {
    bytes: [u8; MAX_OPTIONS],
    len: u8,
}

impl OptionBytes {
    /// Copies the first 40 bytes of `block`.
    pub fn copy(block: &[u8]) -> Self {
        let len = block.len().min(MAX_OPTIONS);
        let mut bytes = [0u8; MAX_OPTIONS];
        bytes[..len].copy_from_slice(&block[..len]);
        OptionBytes {
            bytes,
            len: len as u8,
        }
    }

    /// The block.
    pub fn get(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// A handshake segment as captured: what the receiving kernel decides from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeSegment {
    /// The option block.
    pub options: OptionBytes,
    /// Control bits.
    pub flags: Flags,
    /// The (never scaled) window field.
    pub window: u16,
    /// Frame number in the capture.
    pub frame: u64,
}

impl HandshakeSegment {
    /// Copies what the negotiation needs from a segment.
    pub fn new(options: &[u8], flags: Flags, window: u16, frame: u64) -> Self {
        HandshakeSegment {
            options: OptionBytes::copy(options),
            flags,
            window,
            frame,
        }
    }

    /// The block as the receiving Linux kernel records it (a handshake
    /// segment outside an established connection, default sysctls).
    pub fn linux(&self) -> LinuxRepr<'_> {
        LinuxRepr::parse(self.options.get(), ParseContext::handshake(true))
    }
}

/// Which handshake segment a [`LinuxDrop`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HandshakeKind {
    /// The client's SYN, dropped by the server's kernel.
    Syn,
    /// The server's SYN-ACK, dropped by the client's kernel.
    SynAck,
}

/// A handshake segment Linux drops for its signature options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinuxDrop {
    /// The SYN or the SYN-ACK.
    pub segment: HandshakeKind,
    /// Frame of the segment in the capture.
    pub frame: u64,
    /// Kernel builds that drop it: [`SignatureBuild::TcpAo`]
    /// (`CONFIG_TCP_AO`, Linux 6.7 and later) and/or
    /// [`SignatureBuild::Md5Only`] (`CONFIG_TCP_MD5SIG` without TCP-AO).
    pub builds: Vec<SignatureBuild>,
    /// Why (the first build's reason; the builds can differ).
    pub reason: SignatureDrop,
    /// True when the drop is for an MD5 / TCP-AO option the listening
    /// socket has no key for (a socket with the key accepts it); false when
    /// the option block itself is malformed (dropped whatever the keys).
    pub only_without_keys: bool,
}

impl LinuxDrop {
    /// `high` when the block is dropped whatever the keys (malformed);
    /// `medium` when only a socket without the MD5 / TCP-AO key drops it:
    /// a session configured with the key (BGP with TCP-MD5) accepts it, and
    /// the capture cannot show the keys.
    pub fn confidence(&self) -> crate::finding::Confidence {
        if self.only_without_keys {
            crate::finding::Confidence::Medium
        } else {
            crate::finding::Confidence::High
        }
    }
}

/// Whether a Linux kernel of either signature build drops `seg`.
pub fn linux_drop(seg: &HandshakeSegment, which: HandshakeKind) -> Option<LinuxDrop> {
    linux_drop_parsed(seg, &seg.linux(), which)
}

/// [`linux_drop`] given `seg`'s block as [`HandshakeSegment::linux`]
/// parsed it (the TCP-AO build's reading: the walk is not made again).
pub fn linux_drop_parsed(
    seg: &HandshakeSegment,
    parsed: &LinuxRepr<'_>,
    which: HandshakeKind,
) -> Option<LinuxDrop> {
    let mut builds = Vec::new();
    let mut first: Option<SignatureDrop> = None;
    for b in [SignatureBuild::TcpAo, SignatureBuild::Md5Only] {
        // The other build's answer needs only its signature walk.
        let drop = if b == parsed.signature_build {
            parsed.drop_without_keys()
        } else {
            b.drop_without_keys(seg.options.get())
        };
        if let Some(d) = drop {
            builds.push(b);
            first.get_or_insert(d);
        }
    }
    let d = first?;
    Some(LinuxDrop {
        segment: which,
        frame: seg.frame,
        builds,
        reason: d,
        only_without_keys: !matches!(d, SignatureDrop::Walk(_)),
    })
}

/// ECN as the handshake set it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// RFC 3168 ECN.
    Classic,
    /// Accurate ECN (RFC 9768).
    Accecn,
}

/// ECN from the handshake's flags, as `tcp-options` decides it
/// ([`tcp_options::EcnMode::negotiated`]); `None`: not negotiated.
pub fn ecn_mode(syn: Flags, synack: Flags) -> Option<EcnMode> {
    tcp_options::EcnMode::negotiated(syn, synack).map(|m| match m {
        tcp_options::EcnMode::Classic => EcnMode::Classic,
        tcp_options::EcnMode::AccEcn => EcnMode::Accecn,
    })
}

/// What each endpoint holds, per the crate's Linux model.
#[derive(Debug, Clone, Copy)]
pub struct Held<'a> {
    /// The client's SYN as the server's kernel records it.
    pub syn: Option<LinuxRepr<'a>>,
    /// The server's SYN-ACK as the client's kernel records it.
    pub synack: Option<LinuxRepr<'a>>,
    /// What each side believes ([`tcp_options::Negotiation::observed`]).
    pub negotiation: Negotiation<'a>,
}

/// Reads a handshake seen at one capture point.
pub fn held<'a>(
    syn: Option<&'a HandshakeSegment>,
    synack: Option<&'a HandshakeSegment>,
) -> Held<'a> {
    // Each block walked once: the negotiation decides from the same readings.
    let syn = syn.map(HandshakeSegment::linux);
    let synack = synack.map(HandshakeSegment::linux);
    Held {
        syn,
        synack,
        negotiation: Negotiation::observed(syn.as_ref(), synack.as_ref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(block: &[u8], flags: Flags) -> HandshakeSegment {
        HandshakeSegment::new(block, flags, 64240, 1)
    }

    #[test]
    fn the_last_accepted_mss_wins_and_zero_is_ignored() {
        // MSS 1460, MSS 0 (ignored), MSS 1200 (kept), as tcp_parse_options.
        let block = [2, 4, 0x05, 0xb4, 2, 4, 0, 0, 2, 4, 0x04, 0xb0];
        let s = seg(&block, Flags::SYN);
        assert_eq!(s.linux().mss, Some(1200));
        let block = [2, 4, 0x05, 0xb4, 2, 4, 0, 0];
        assert_eq!(seg(&block, Flags::SYN).linux().mss, Some(1460));
    }

    #[test]
    fn a_wrong_length_known_kind_is_stepped_over() {
        // `04 08 ...`: SACK-Permitted with length 8 is skipped; wscale after it counts.
        let block = [4, 8, 0, 0, 0, 0, 0, 0, 3, 3, 7, 1];
        let s = seg(&block, Flags::SYN);
        let r = s.linux();
        assert!(!r.sack_permitted);
        assert_eq!(r.window_scale, Some(7));
    }

    #[test]
    fn a_syn_with_two_signature_options_is_dropped_by_tcp_ao_kernels_only() {
        let mut block = vec![19, 18];
        block.extend([0u8; 16]);
        block.extend([29, 6, 1, 1, 0xaa, 0xbb]);
        let d = linux_drop(&seg(&block, Flags::SYN), HandshakeKind::Syn).expect("dropped");
        // TCP-AO: a second signature option; MD5 only: the walk stops
        // before it, but the MD5 option has no key on the listener.
        assert_eq!(
            d.builds,
            vec![SignatureBuild::TcpAo, SignatureBuild::Md5Only]
        );
        assert!(!d.only_without_keys, "{d:?}");
        assert_eq!((d.segment, d.frame), (HandshakeKind::Syn, 1));
        // A clean block is not dropped.
        assert_eq!(
            linux_drop(&seg(&[2, 4, 5, 0xb4], Flags::SYN), HandshakeKind::Syn),
            None
        );
    }

    #[test]
    fn ecn_modes_map_the_crates_decision() {
        // The rule itself is tcp-options' (EcnMode::negotiated, tested there).
        let syn_acc = Flags::SYN | Flags::ECE | Flags::CWR | Flags::AE;
        let sa = Flags::SYN | Flags::ACK;
        assert_eq!(ecn_mode(syn_acc, sa | Flags::ECE), Some(EcnMode::Classic));
        assert_eq!(ecn_mode(syn_acc, sa | Flags::CWR), Some(EcnMode::Accecn));
        assert_eq!(ecn_mode(syn_acc, sa), None);
    }
}
