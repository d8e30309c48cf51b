//! What each endpoint believes the three-way handshake negotiated.
//!
//! Linux decides from the handshake segments it *receives*, each parsed by
//! `tcp_parse_options` as a SYN outside an established connection (rules in
//! [`crate::linux`]):
//!
//! - The server (`tcp_conn_request` in net/ipv4/tcp_input.c, then
//!   `tcp_openreq_init`) decides from the SYN alone: window scaling is on
//!   when the SYN carried Window Scale (its send shift is the client's,
//!   clamped to 14); SACK when the SYN carried SACK-Permitted; timestamps
//!   when the SYN carried Timestamps; the MSS it may send is the SYN's MSS,
//!   or 536 (IPv4) / 1220 (IPv6) when absent or 0. Its SYN-ACK then offers
//!   only what the SYN offered (`tcp_synack_options`): Window Scale with its
//!   own shift only when scaling is on, SACK-Permitted and Timestamps
//!   likewise. The server does not look at the final ACK's options to
//!   revisit this. (Under a SYN flood with SYN cookies, a SYN without
//!   Timestamps loses Window Scale and SACK as well; not modelled.)
//! - The client (`tcp_rcv_synsent_state_process`) decides from the SYN-ACK:
//!   window scaling is on only when the SYN-ACK carries Window Scale (and
//!   its own SYN offered it: a client that sent none has
//!   `tcp_window_scaling` off and ignores the SYN-ACK's, as RFC 7323
//!   section 2.2 requires of any stack);
//!   otherwise both of its shifts become 0 (and its window is clamped to
//!   65535). SACK and timestamps follow the SYN-ACK's SACK-Permitted and
//!   Timestamps the same way; the MSS it may send is the SYN-ACK's.
//!
//! Both endpoints therefore end up with a feature on only when both
//! handshake segments carried it, as long as nothing edits them in flight.
//! What a Linux endpoint sends also depends on its settings: a client with
//! an MD5 key sends no Timestamps in its SYN (`tcp_syn_options`), and a
//! server with an MD5 or TCP-AO key turns timestamps off when SACK is on
//! and then sends no Timestamps in its SYN-ACK (`tcp_synack_options`).
//! [`Handshake`] decides the server from the SYN alone, so in that last case
//! it reports the server's timestamps as on and a timestamps mismatch; the
//! SYN-ACK as sent (no Timestamps, an MD5 or TCP-AO option) shows why.
//! Deciding from the SYN alone is what keeps a SYN-ACK edited before the
//! capture point visible as a mismatch when [`Handshake::observed`] is used.
//!
//! A middlebox that edits the segments in flight can leave the two ends
//! disagreeing. The classic case: Window Scale is removed from the SYN-ACK
//! after the server sent it. The server believes scaling is on; the client
//! believes it is off. Both directions go wrong:
//!
//! - the server advertises windows shifted right by its shift, and the
//!   client reads them unscaled, so it sees a window 2^shift times smaller
//!   than offered (never more than 65535 bytes);
//! - the client sends its windows unscaled, and the server multiplies them
//!   by the client's shift from the SYN, so it believes the client offers
//!   2^shift times more than it does.
//!
//! [`Handshake`] therefore takes each segment as sent and as received; when
//! you have one capture point, [`Handshake::observed`] uses the same bytes
//! for both.

use crate::flags::Flags;
use crate::kind;
use crate::linux::{FastOpenSeen, LinuxRepr, ParseContext};

/// The MSS a Linux sender assumes when the peer sent none (RFC 9293, IPv4).
pub const DEFAULT_MSS_IPV4: u16 = 536;
/// The MSS Linux assumes for IPv6 when the peer sent none (1280 - 60).
pub const DEFAULT_MSS_IPV6: u16 = 1220;

/// Option blocks of the handshake segments, each as sent and as received.
/// Any of them may be missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Handshake<'a> {
    /// Options of the SYN as the client sent it.
    pub syn_sent: Option<&'a [u8]>,
    /// Options of the SYN as the server received it.
    pub syn_received: Option<&'a [u8]>,
    /// Options of the SYN-ACK as the server sent it.
    pub synack_sent: Option<&'a [u8]>,
    /// Options of the SYN-ACK as the client received it.
    pub synack_received: Option<&'a [u8]>,
}

impl<'a> Handshake<'a> {
    /// One capture point: each segment is taken as both sent and received.
    pub fn observed(syn: Option<&'a [u8]>, synack: Option<&'a [u8]>) -> Self {
        Handshake {
            syn_sent: syn,
            syn_received: syn,
            synack_sent: synack,
            synack_received: synack,
        }
    }

    /// Decide what each endpoint believes, as Linux does.
    pub fn negotiate(&self) -> Negotiation<'a> {
        let ctx = ParseContext::handshake(true);
        let parse = |b: Option<&'a [u8]>| b.map(|b| LinuxRepr::parse(b, ctx));
        let syn_sent = parse(self.syn_sent);
        let syn_recv = parse(self.syn_received);
        let synack_sent = parse(self.synack_sent);
        let synack_recv = parse(self.synack_received);
        Negotiation::decide(
            syn_sent.as_ref(),
            syn_recv.as_ref(),
            synack_sent.as_ref(),
            synack_recv.as_ref(),
        )
    }
}

impl<'a> Negotiation<'a> {
    /// What [`Handshake::observed`] negotiates, from the two segments'
    /// blocks already parsed with [`ParseContext::handshake`]`(true)` (so a
    /// caller that needs the parsed blocks too walks each block once).
    ///
    /// ```
    /// use tcp_options::{Handshake, LinuxRepr, Negotiation, ParseContext};
    ///
    /// let syn = [2, 4, 0x05, 0xb4, 3, 3, 7, 1];
    /// let synack = [2, 4, 0x05, 0xa0];
    /// let ctx = ParseContext::handshake(true);
    /// let (a, b) = (LinuxRepr::parse(&syn, ctx), LinuxRepr::parse(&synack, ctx));
    /// assert_eq!(
    ///     Negotiation::observed(Some(&a), Some(&b)),
    ///     Handshake::observed(Some(&syn), Some(&synack)).negotiate()
    /// );
    /// ```
    pub fn observed(syn: Option<&LinuxRepr<'a>>, synack: Option<&LinuxRepr<'a>>) -> Self {
        Negotiation::decide(syn, syn, synack, synack)
    }

    fn decide(
        syn_sent: Option<&LinuxRepr<'a>>,
        syn_recv: Option<&LinuxRepr<'a>>,
        synack_sent: Option<&LinuxRepr<'a>>,
        synack_recv: Option<&LinuxRepr<'a>>,
    ) -> Self {
        Negotiation {
            client: synack_recv.map(|heard| EndpointView::decide(heard, syn_sent, true)),
            server: syn_recv.map(|heard| EndpointView::decide(heard, synack_sent, false)),
        }
    }
}

/// What one endpoint believes after the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointView<'a> {
    /// The MSS option this endpoint sent in its own SYN or SYN-ACK (`None`
    /// when it sent none or its segment is unknown).
    pub mss_offered: Option<u16>,
    /// The MSS option it received from the peer (`None`: absent or 0, so a
    /// default of 536 for IPv4 / 1220 for IPv6 applies).
    pub peer_mss: Option<u16>,
    /// Window scaling is on for this endpoint.
    pub window_scaling: bool,
    /// Shift it applies to window fields it receives (0 when off).
    pub snd_wscale: u8,
    /// Shift it applies to window fields it sends (0 when off); `None` when
    /// scaling is on but its own handshake segment is unknown.
    pub rcv_wscale: Option<u8>,
    /// The peer's shift as received when it exceeded 14 (used as 14).
    pub wscale_clamped_from: Option<u8>,
    /// SACK is on for this endpoint.
    pub sack: bool,
    /// Timestamps are on for this endpoint.
    pub timestamps: bool,
    /// Fast Open as seen in the peer's segment.
    pub peer_fast_open: Option<FastOpenSeen<'a>>,
}

impl<'a> EndpointView<'a> {
    /// `initiator`: this endpoint sent the SYN. An initiator whose own SYN
    /// (as sent) carried no Window Scale never scales, whatever the SYN-ACK
    /// carries: RFC 7323 section 2.2 ("both sides MUST send Window Scale
    /// options in their <SYN> segments to enable window scaling in either
    /// direction"), and Linux (`tcp_syn_options` always offers it unless
    /// `net.ipv4.tcp_window_scaling` is 0, and with it 0 `tcp_parse_options`
    /// ignores the SYN-ACK's). The server decides from the SYN alone (see
    /// the module docs).
    fn decide(heard: &LinuxRepr<'a>, own: Option<&LinuxRepr<'a>>, initiator: bool) -> Self {
        let unoffered = initiator && own.is_some_and(|o| o.window_scale.is_none());
        let window_scaling = heard.window_scale.is_some() && !unoffered;
        let rcv_wscale = if window_scaling {
            own.map(|o| o.window_scale.unwrap_or(0))
        } else {
            Some(0)
        };
        EndpointView {
            mss_offered: own.and_then(|o| o.mss),
            peer_mss: heard.mss,
            window_scaling,
            snd_wscale: if window_scaling {
                heard.window_scale.unwrap_or(0)
            } else {
                0
            },
            rcv_wscale,
            wscale_clamped_from: heard.window_scale_clamped_from,
            sack: heard.sack_permitted,
            timestamps: heard.timestamps.is_some(),
            peer_fast_open: heard.fast_open,
        }
    }

    /// The largest segment this endpoint will send: the peer's MSS, or
    /// `default` (see [`DEFAULT_MSS_IPV4`], [`DEFAULT_MSS_IPV6`]).
    pub fn send_mss(&self, default: u16) -> u16 {
        self.peer_mss.unwrap_or(default)
    }

    /// The largest window, in bytes, this endpoint can be told by its peer
    /// as it reads the field: `65535 << snd_wscale`.
    pub fn max_peer_window(&self) -> u32 {
        u32::from(u16::MAX) << self.snd_wscale.min(kind::MAX_WINDOW_SCALE)
    }
}

/// What client and server each believe; `None` for an endpoint whose
/// deciding segment (SYN-ACK for the client, SYN for the server) is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiation<'a> {
    /// The side that sent the SYN.
    pub client: Option<EndpointView<'a>>,
    /// The side that sent the SYN-ACK.
    pub server: Option<EndpointView<'a>>,
}

impl Negotiation<'_> {
    /// `Some(true)` when one endpoint believes window scaling is on and the
    /// other does not; `None` when either view is unknown.
    pub fn window_scaling_mismatch(&self) -> Option<bool> {
        Some(self.client?.window_scaling != self.server?.window_scaling)
    }

    /// `Some(true)` when the endpoints disagree on SACK.
    pub fn sack_mismatch(&self) -> Option<bool> {
        Some(self.client?.sack != self.server?.sack)
    }

    /// `Some(true)` when the endpoints disagree on timestamps.
    pub fn timestamps_mismatch(&self) -> Option<bool> {
        Some(self.client?.timestamps != self.server?.timestamps)
    }

    /// `Some(true)` when a window field sent in one direction is read with a
    /// different shift than the sender applied (either direction).
    pub fn window_shift_mismatch(&self) -> Option<bool> {
        let (c, s) = (self.client?, self.server?);
        let c_to_s = c.rcv_wscale.map(|r| r != s.snd_wscale);
        let s_to_c = s.rcv_wscale.map(|r| r != c.snd_wscale);
        match (c_to_s, s_to_c) {
            (Some(a), Some(b)) => Some(a || b),
            (Some(true), None) | (None, Some(true)) => Some(true),
            _ => None,
        }
    }
}

/// ECN as the three-way handshake set it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EcnMode {
    /// RFC 3168 ECN: SYN with ECE and CWR, SYN-ACK with ECE only.
    Classic,
    /// Accurate ECN (RFC 9768): SYN with AE, CWR and ECE, SYN-ACK with one
    /// of the three AccECN combinations of (AE, CWR, ECE): (0,1,0), (1,0,0),
    /// (1,1,0).
    AccEcn,
}

impl EcnMode {
    /// What the handshake's flags set up; `None` when ECN was not
    /// negotiated (or the SYN-ACK answered with a combination the SYN did
    /// not ask for). A SYN asking for AccECN answered by ECE alone falls
    /// back to classic ECN (RFC 9768 section 3.1.2).
    ///
    /// ```
    /// use tcp_options::{EcnMode, Flags};
    /// let syn = Flags::SYN | Flags::AE | Flags::CWR | Flags::ECE;
    /// let sa = Flags::SYN | Flags::ACK;
    /// assert_eq!(EcnMode::negotiated(syn, sa | Flags::CWR), Some(EcnMode::AccEcn));
    /// assert_eq!(EcnMode::negotiated(syn, sa | Flags::ECE), Some(EcnMode::Classic));
    /// assert_eq!(EcnMode::negotiated(syn, sa), None);
    /// ```
    pub fn negotiated(syn: Flags, synack: Flags) -> Option<EcnMode> {
        let requested_accecn = syn.contains(Flags::AE | Flags::CWR | Flags::ECE);
        let requested_classic = syn.contains(Flags::CWR | Flags::ECE);
        let answer = (
            synack.contains(Flags::AE),
            synack.contains(Flags::CWR),
            synack.contains(Flags::ECE),
        );
        match answer {
            (false, true, false) | (true, false, false) | (true, true, false)
                if requested_accecn =>
            {
                Some(EcnMode::AccEcn)
            }
            (false, false, true) if requested_classic => Some(EcnMode::Classic),
            _ => None,
        }
    }
}

#[cfg(test)]
mod ecn_tests {
    use super::*;

    /// The handshake combinations of RFC 3168 section 6.1.1 and RFC 9768
    /// section 3.1 (Table 2).
    #[test]
    fn ecn_modes() {
        let syn_classic = Flags::SYN | Flags::ECE | Flags::CWR;
        let syn_acc = syn_classic | Flags::AE;
        let sa = Flags::SYN | Flags::ACK;
        let n = EcnMode::negotiated;
        assert_eq!(n(syn_classic, sa | Flags::ECE), Some(EcnMode::Classic));
        assert_eq!(n(syn_acc, sa | Flags::ECE), Some(EcnMode::Classic));
        assert_eq!(n(syn_acc, sa | Flags::CWR), Some(EcnMode::AccEcn));
        assert_eq!(n(syn_acc, sa | Flags::AE), Some(EcnMode::AccEcn));
        assert_eq!(
            n(syn_acc, sa | Flags::AE | Flags::CWR),
            Some(EcnMode::AccEcn)
        );
        assert_eq!(n(syn_classic, sa | Flags::CWR), None);
        assert_eq!(n(Flags::SYN, sa | Flags::ECE), None);
        assert_eq!(n(syn_acc, sa), None);
        assert_eq!(n(syn_acc, sa | Flags::AE | Flags::CWR | Flags::ECE), None);
    }
}
