//! The one list of finding kinds: what `compare` and `probe` can report
//! about a middlebox (and about the captures themselves), each kind with its
//! JSON name, its title, its usual causes and whether it is tampering. The
//! last three are seen only by active probing (`probe`).
//!
//! Adding a kind is one edit: a variant here and its row in [`Kind::ALL`]
//! and the three `match`es below (the compiler points at each).

use std::net::IpAddr;

use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The handshake was answered by the middlebox, not the server.
    HandshakeProxied,
    /// Addresses or ports were translated.
    Nat,
    /// The window-scale option was removed.
    WscaleStripped,
    /// The window-scale shift was changed.
    WscaleChanged,
    /// A window-scale option was added.
    WscaleAdded,
    /// The SACK-permitted option was removed.
    SackpermStripped,
    /// The timestamps option was removed.
    TimestampsStripped,
    /// Timestamp values were rewritten.
    TimestampsChanged,
    /// The MSS was lowered.
    MssClamped,
    /// The MSS was changed (not lowered).
    MssChanged,
    /// Another option was removed.
    OptionStripped,
    /// Another option was added.
    OptionAdded,
    /// Another option's bytes were rewritten.
    OptionChanged,
    /// Sequence numbers were rewritten.
    SeqRewritten,
    /// Acknowledgment numbers were rewritten.
    AckRewritten,
    /// The window field was rewritten.
    WindowRewritten,
    /// The DSCP was rewritten.
    DscpChanged,
    /// The ECN field or the ECE/CWR flags were rewritten.
    EcnChanged,
    /// The MSS was lowered where the packets entered or left a tunnel
    /// (the captures are on the two sides of an encapsulation point).
    TunnelMssClamped,
    /// The encapsulating box copied the inner DSCP to the outer header.
    TunnelDscpCopied,
    /// The encapsulating box did not copy the inner DSCP to the outer
    /// header (the outer DSCP is another, usually fixed, value).
    TunnelDscpNotCopied,
    /// The encapsulating box did not copy an ECN-capable inner ECN field
    /// to the outer header: outer Not-ECT, RFC 6040's compatibility mode.
    TunnelEcnNotCopied,
    /// The ECN field at encapsulation or decapsulation is neither what RFC
    /// 6040's normal mode nor its compatibility mode gives.
    TunnelEcnNonstandard,
    /// A CE mark on the outer header was not carried to the inner header
    /// at decapsulation (RFC 6040 Figure 4): the congestion signal is lost.
    TunnelCeNotPropagated,
    /// Packets crossed the middlebox's entry side and not its exit side.
    PacketDropped,
    /// Packets appeared on the exit side that the sender never sent.
    PacketInjected,
    /// Frames missing from one capture although they crossed its wire (the
    /// receiver acknowledged their bytes there), or outside the time span
    /// of one capture: a gap in the capture, not in the traffic.
    CaptureLoss,
    /// Probing only: the probe (or a probe carrying a given option or mark)
    /// never arrives.
    ProbeDropped,
    /// Probing only: a SYN asking for ECN (ECE+CWR, or AccECN's AE) never arrives.
    EcnSetupDropped,
    /// Probing only: a segment beyond the unscaled window edge (inside the
    /// scaled one) is dropped.
    OutOfWindowDropped,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 30] = [
        Kind::HandshakeProxied,
        Kind::Nat,
        Kind::WscaleStripped,
        Kind::WscaleChanged,
        Kind::WscaleAdded,
        Kind::SackpermStripped,
        Kind::TimestampsStripped,
        Kind::TimestampsChanged,
        Kind::MssClamped,
        Kind::MssChanged,
        Kind::OptionStripped,
        Kind::OptionAdded,
        Kind::OptionChanged,
        Kind::SeqRewritten,
        Kind::AckRewritten,
        Kind::WindowRewritten,
        Kind::DscpChanged,
        Kind::EcnChanged,
        Kind::TunnelMssClamped,
        Kind::TunnelDscpCopied,
        Kind::TunnelDscpNotCopied,
        Kind::TunnelEcnNotCopied,
        Kind::TunnelEcnNonstandard,
        Kind::TunnelCeNotPropagated,
        Kind::PacketDropped,
        Kind::PacketInjected,
        Kind::CaptureLoss,
        Kind::ProbeDropped,
        Kind::EcnSetupDropped,
        Kind::OutOfWindowDropped,
    ];

    /// The kinds `compare` can report (all but the probing-only ones).
    pub const COMPARE: [Kind; 27] = {
        let mut out = [Kind::CaptureLoss; 27];
        let mut i = 0;
        while i < 27 {
            out[i] = Kind::ALL[i];
            i += 1;
        }
        out
    };

    /// The name in JSON (`kind`), stable across versions.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::HandshakeProxied => "handshake_proxied",
            Kind::Nat => "nat",
            Kind::WscaleStripped => "wscale_stripped",
            Kind::WscaleChanged => "wscale_changed",
            Kind::WscaleAdded => "wscale_added",
            Kind::SackpermStripped => "sackperm_stripped",
            Kind::TimestampsStripped => "timestamps_stripped",
            Kind::TimestampsChanged => "timestamps_changed",
            Kind::MssClamped => "mss_clamped",
            Kind::MssChanged => "mss_changed",
            Kind::OptionStripped => "option_stripped",
            Kind::OptionAdded => "option_added",
            Kind::OptionChanged => "option_changed",
            Kind::SeqRewritten => "seq_rewritten",
            Kind::AckRewritten => "ack_rewritten",
            Kind::WindowRewritten => "window_rewritten",
            Kind::DscpChanged => "dscp_changed",
            Kind::EcnChanged => "ecn_changed",
            Kind::TunnelMssClamped => "tunnel_mss_clamped",
            Kind::TunnelDscpCopied => "tunnel_dscp_copied",
            Kind::TunnelDscpNotCopied => "tunnel_dscp_not_copied",
            Kind::TunnelEcnNotCopied => "tunnel_ecn_not_copied",
            Kind::TunnelEcnNonstandard => "tunnel_ecn_nonstandard",
            Kind::TunnelCeNotPropagated => "tunnel_ce_not_propagated",
            Kind::PacketDropped => "packet_dropped",
            Kind::PacketInjected => "packet_injected",
            Kind::CaptureLoss => "capture_loss",
            Kind::ProbeDropped => "probe_dropped",
            Kind::EcnSetupDropped => "ecn_setup_dropped",
            Kind::OutOfWindowDropped => "out_of_window_dropped",
        }
    }

    /// The kind named `s` in JSON.
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// What it means, in a few words (the text report's title).
    pub const fn title(self) -> &'static str {
        match self {
            Kind::HandshakeProxied => "handshake answered by the middlebox",
            Kind::Nat => "addresses/ports translated",
            Kind::WscaleStripped => "window-scale option removed",
            Kind::WscaleChanged => "window-scale shift changed",
            Kind::WscaleAdded => "window-scale option added",
            Kind::SackpermStripped => "SACK-permitted option removed",
            Kind::TimestampsStripped => "timestamps option removed",
            Kind::TimestampsChanged => "timestamp values rewritten",
            Kind::MssClamped => "MSS lowered",
            Kind::MssChanged => "MSS changed",
            Kind::OptionStripped => "option removed",
            Kind::OptionAdded => "option added",
            Kind::OptionChanged => "option rewritten",
            Kind::SeqRewritten => "sequence numbers rewritten",
            Kind::AckRewritten => "acknowledgment numbers rewritten",
            Kind::WindowRewritten => "window field rewritten",
            Kind::DscpChanged => "DSCP rewritten",
            Kind::EcnChanged => "ECN rewritten",
            Kind::TunnelMssClamped => "MSS lowered at a tunnel's edge",
            Kind::TunnelDscpCopied => "DSCP copied to the tunnel's outer header",
            Kind::TunnelDscpNotCopied => "DSCP not copied to the tunnel's outer header",
            Kind::TunnelEcnNotCopied => {
                "ECN not copied to the tunnel's outer header (RFC 6040 compatibility mode)"
            }
            Kind::TunnelEcnNonstandard => "tunnel ECN handling outside RFC 6040",
            Kind::TunnelCeNotPropagated => {
                "CE mark on the tunnel's outer header lost at decapsulation"
            }
            Kind::PacketDropped => "packets missing after the middlebox",
            Kind::PacketInjected => "packets the sender never sent",
            Kind::CaptureLoss => "frames missing from one capture (not from the wire)",
            Kind::ProbeDropped => "probe dropped",
            Kind::EcnSetupDropped => "ECN-setup SYN dropped",
            Kind::OutOfWindowDropped => {
                "segment beyond the unscaled window dropped (TCP sequence checking)"
            }
        }
    }

    /// The usual causes, in the terms vendors use.
    pub const fn cause(self) -> &'static str {
        match self {
            Kind::WscaleStripped | Kind::WscaleChanged | Kind::WscaleAdded => {
                "TCP normalization on a stateful firewall: window-scale enforcement or \"TCP sequence checking\" (e.g. Cisco ASA tcp-map \"tcp-options window-scale clear\", netfilter TCPOPTSTRIP)"
            }
            Kind::SackpermStripped => {
                "option scrubbing by a firewall or load balancer (e.g. Cisco ASA tcp-map \"tcp-options selective-ack clear\", netfilter TCPOPTSTRIP)"
            }
            Kind::TimestampsStripped => {
                "option scrubbing by a firewall (e.g. Cisco ASA tcp-map \"tcp-options timestamp clear\", netfilter TCPOPTSTRIP), often to hide host uptime"
            }
            Kind::TimestampsChanged => {
                "timestamp translation by a SYN proxy or a sequence-randomizing firewall or load balancer"
            }
            Kind::MssClamped | Kind::MssChanged => {
                "MSS clamping at a tunnel, PPPoE or VPN edge (Cisco \"ip tcp adjust-mss\", Juniper \"tcp-mss\", netfilter TCPMSS)"
            }
            Kind::SeqRewritten | Kind::AckRewritten => {
                "initial sequence number randomization on a firewall (Cisco ASA/PIX \"random-sequence-number\"), or a SYN proxy translating sequence numbers"
            }
            Kind::WindowRewritten => {
                "window clamping by a traffic shaper or WAN optimizer (TCP rate control), or a proxy translating windows"
            }
            Kind::DscpChanged => {
                "DSCP bleaching or re-marking at a QoS trust boundary (a policy setting DSCP default or a class, an untrusted port)"
            }
            Kind::EcnChanged => {
                "ECN bleaching by a router or firewall that clears or rewrites the ECN bits"
            }
            Kind::TunnelMssClamped => {
                "MSS clamping for the tunnel's overhead at its ingress or egress (Linux iptables TCPMSS --clamp-mss-to-pmtu on the tunnel, Cisco \"ip tcp adjust-mss\" on a tunnel interface, Juniper \"tcp-mss\" on GRE/IPsec); standard, so that segments fit the tunnel's MTU unfragmented"
            }
            Kind::TunnelDscpCopied => {
                "the tunnel copies the inner DS field to the outer header (Linux ip tunnel \"tos inherit\", Cisco GRE's default), so that the underlay queues the packets by their own class"
            }
            Kind::TunnelDscpNotCopied => {
                "the tunnel writes a fixed outer DSCP (Linux ip tunnel \"tos 0\", the default for Linux GRE, IPIP and VXLAN; \"tos N\"), so the underlay queues every packet of the tunnel alike; or a router on the underlay between the tunnel's ingress and the capture re-marked the outer header"
            }
            Kind::TunnelEcnNotCopied => {
                "a tunnel ingress in RFC 6040 compatibility mode (or RFC 3168's limited functionality, or an RFC 2003 tunnel that sets the outer ECN field to Not-ECT): congestion inside the tunnel is signalled by drops, not marks; or a router on the underlay cleared the outer ECN field"
            }
            Kind::TunnelEcnNonstandard => {
                "a tunnel endpoint that handles ECN neither per RFC 6040's normal nor its compatibility mode (an ECN-capable outer header for a Not-ECT inner one, or an inner ECN field rebuilt otherwise than Figure 4 of RFC 6040 gives)"
            }
            Kind::TunnelCeNotPropagated => {
                "a tunnel egress that ignores the outer ECN field at decapsulation (RFC 2003/2784 era code, a VPN or tunnel offload that does not implement RFC 6040), or a router on the underlay that cleared the mark after the capture: the sender never learns of the congestion inside the tunnel"
            }
            Kind::Nat => {
                "network address and port translation: destination NAT (port forwarding, a load balancer VIP) rewrites the destination of the client's packets, source NAT/PAT (masquerading) their source; the replies are translated back"
            }
            Kind::HandshakeProxied => {
                "SYN-cookie / SYN proxy DDoS protection (netfilter SYNPROXY, F5 \"SYN Check\", FortiGate or SRX SYN proxy, Check Point SYNDefender)"
            }
            Kind::PacketDropped => {
                "packets dropped by the middlebox: invalid-state filtering, policing or congestion"
            }
            Kind::PacketInjected => {
                "packets originated by the middlebox: RST injection, proxy ACKs or keepalives"
            }
            Kind::CaptureLoss => {
                "the capture, not the network: tcpdump's buffer overflowed (see its \"packets dropped by kernel\" count), a SPAN/mirror port dropped under load, or the two captures did not run over the same time span"
            }
            Kind::OptionStripped | Kind::OptionAdded | Kind::OptionChanged => {
                "TCP option scrubbing or normalization by a firewall, IDS/IPS or WAN optimizer"
            }
            Kind::ProbeDropped => {
                "a firewall, IDS/IPS or router filter dropping packets that carry an option, flag or mark it does not allow"
            }
            Kind::EcnSetupDropped => {
                "an old firewall or load balancer dropping SYNs with the ECE/CWR (or AE) flags set (ECN blackholing)"
            }
            Kind::OutOfWindowDropped => {
                "stateful window tracking (\"TCP sequence checking\": Cisco ASA, netfilter conntrack with nf_conntrack_tcp_be_liberal=0) that did not see the window scale the hosts agreed on"
            }
        }
    }

    /// True when the kind is a change the middlebox made to the traffic
    /// (exit status 3); false for what is about the captures themselves
    /// ([`Kind::CaptureLoss`]).
    /// The tunnel kinds other than [`Kind::TunnelCeNotPropagated`] name
    /// what an encapsulating box does by standard or by configuration, not
    /// a fault: they do not make the exit status 3 either.
    pub const fn is_tampering(self) -> bool {
        !matches!(
            self,
            Kind::CaptureLoss
                | Kind::TunnelMssClamped
                | Kind::TunnelDscpCopied
                | Kind::TunnelDscpNotCopied
                | Kind::TunnelEcnNotCopied
                | Kind::TunnelEcnNonstandard
        )
    }

    /// True for the kinds about an encapsulation point (`tunnel_*`): their
    /// findings carry the tunnel's evidence and their own confidence.
    pub const fn is_tunnel(self) -> bool {
        matches!(
            self,
            Kind::TunnelMssClamped
                | Kind::TunnelDscpCopied
                | Kind::TunnelDscpNotCopied
                | Kind::TunnelEcnNotCopied
                | Kind::TunnelEcnNonstandard
                | Kind::TunnelCeNotPropagated
        )
    }

    /// True for kinds whose before/after values vary from packet to packet
    /// (the text report then says how many distinct values there were).
    pub const fn has_values(self) -> bool {
        matches!(
            self,
            Kind::WindowRewritten
                | Kind::DscpChanged
                | Kind::EcnChanged
                | Kind::TunnelMssClamped
                | Kind::TunnelDscpCopied
                | Kind::TunnelDscpNotCopied
                | Kind::TunnelEcnNotCopied
                | Kind::TunnelEcnNonstandard
                | Kind::TunnelCeNotPropagated
                | Kind::MssClamped
                | Kind::MssChanged
                | Kind::WscaleChanged
                | Kind::OptionChanged
        )
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One end of a connection as a `nat` finding gives it:
/// `{"addr": "198.18.1.2", "port": 33000}`; `port` is `null` when the copy
/// that showed the address did not show the port.
pub fn endpoint_json(addr: IpAddr, port: Option<u16>) -> Value {
    json!({"addr": addr.to_string(), "port": port})
}

/// The `before` or `after` of a `nat` finding, in `compare` and `probe`
/// alike: `{"src": endpoint, "dst": endpoint}` with only the rewritten
/// ends as keys (`dst` for destination NAT, `src` for source NAT).
pub fn nat_ends(src: Option<(IpAddr, Option<u16>)>, dst: Option<(IpAddr, Option<u16>)>) -> Value {
    let mut obj = Map::new();
    if let Some((a, p)) = src {
        obj.insert("src".into(), endpoint_json(a, p));
    }
    if let Some((a, p)) = dst {
        obj.insert("dst".into(), endpoint_json(a, p));
    }
    Value::Object(obj)
}

/// [`nat_ends`] in words: `source 198.18.43.1:40001, destination
/// 198.18.44.2:5201`; `None` when `v` is not of that shape.
pub fn nat_ends_text(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    if m.is_empty() || m.keys().any(|k| k != "src" && k != "dst") {
        return None;
    }
    let end = |key: &str, word: &str| -> Option<Option<String>> {
        let Some(e) = m.get(key) else {
            return Some(None);
        };
        let addr: IpAddr = e.get("addr")?.as_str()?.parse().ok()?;
        let text = match e.get("port").and_then(Value::as_u64) {
            Some(p) => std::net::SocketAddr::new(addr, u16::try_from(p).ok()?).to_string(),
            None => addr.to_string(),
        };
        Some(Some(format!("{word} {text}")))
    };
    let parts: Vec<String> = [end("src", "source")?, end("dst", "destination")?]
        .into_iter()
        .flatten()
        .collect();
    Some(parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.as_str()), Some(k));
            assert!(!k.title().is_empty() && !k.cause().is_empty());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
        // ALL is in declaration (report) order.
        assert!(Kind::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(!Kind::CaptureLoss.is_tampering());
        assert!(Kind::PacketDropped.is_tampering());
    }

    #[test]
    fn nat_ends_keep_only_the_rewritten_ends() {
        let v4: IpAddr = "198.18.43.1".parse().unwrap();
        let v6: IpAddr = "2001:db8:44::2".parse().unwrap();
        let dnat = nat_ends(None, Some((v6, Some(5201))));
        assert_eq!(
            dnat,
            json!({"dst": {"addr": "2001:db8:44::2", "port": 5201}})
        );
        assert_eq!(
            nat_ends_text(&dnat).as_deref(),
            Some("destination [2001:db8:44::2]:5201")
        );
        let both = nat_ends(Some((v4, Some(40001))), Some((v4, None)));
        assert_eq!(both["dst"]["port"], Value::Null);
        assert_eq!(
            nat_ends_text(&both).as_deref(),
            Some("source 198.18.43.1:40001, destination 198.18.43.1")
        );
        // Other shapes are not ends.
        assert_eq!(nat_ends_text(&json!({"shift": 7})), None);
        assert_eq!(nat_ends_text(&json!({})), None);
        assert_eq!(
            nat_ends_text(&json!({"src": {"addr": "x", "port": 1}})),
            None
        );
    }
}
