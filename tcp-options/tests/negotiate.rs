//! Negotiation as Linux decides it, including the broken handshakes a
//! middlebox produces.

use tcp_options::{Handshake, OptionsBuilder, DEFAULT_MSS_IPV4};

fn syn(ws: Option<u8>) -> heapless::Vec<u8, 40> {
    let mut b = OptionsBuilder::new()
        .mss(1460)
        .sack_permitted()
        .timestamps(100, 0);
    b.window_scale = ws;
    b.build().unwrap()
}

fn synack(ws: Option<u8>) -> heapless::Vec<u8, 40> {
    let mut b = OptionsBuilder::new()
        .mss(1400)
        .sack_permitted()
        .timestamps(200, 100);
    b.window_scale = ws;
    b.build().unwrap()
}

#[test]
fn clean_handshake_agrees() {
    let (s, sa) = (syn(Some(7)), synack(Some(9)));
    let n = Handshake::observed(Some(&s), Some(&sa)).negotiate();
    let (c, v) = (n.client.unwrap(), n.server.unwrap());
    assert_eq!((c.snd_wscale, c.rcv_wscale), (9, Some(7)));
    assert_eq!((v.snd_wscale, v.rcv_wscale), (7, Some(9)));
    assert_eq!((c.peer_mss, v.peer_mss), (Some(1400), Some(1460)));
    assert_eq!((c.mss_offered, v.mss_offered), (Some(1460), Some(1400)));
    assert!(c.sack && v.sack && c.timestamps && v.timestamps);
    assert_eq!(n.window_scaling_mismatch(), Some(false));
    assert_eq!(n.window_shift_mismatch(), Some(false));
    assert_eq!(c.max_peer_window(), 65535 << 9);
}

/// The campus-firewall incident (DESIGN.md): Window Scale removed from the
/// SYN-ACK after the server sent it. The server believes scaling is on, the
/// client does not; the client reads the server's windows unscaled.
#[test]
fn window_scale_stripped_from_synack() {
    let s = syn(Some(7));
    let (sent, received) = (synack(Some(5)), synack(None));
    let n = Handshake {
        syn_sent: Some(&s),
        syn_received: Some(&s),
        synack_sent: Some(&sent),
        synack_received: Some(&received),
    }
    .negotiate();
    let (c, v) = (n.client.unwrap(), n.server.unwrap());
    assert!(v.window_scaling && !c.window_scaling);
    assert_eq!((c.snd_wscale, c.rcv_wscale), (0, Some(0)));
    assert_eq!((v.snd_wscale, v.rcv_wscale), (7, Some(5)));
    assert_eq!(n.window_scaling_mismatch(), Some(true));
    assert_eq!(n.window_shift_mismatch(), Some(true));
    // The client can never be told more than 64 KiB: 65535*8/0.010 s = 52.4 Mbit/s at 10 ms.
    assert_eq!(c.max_peer_window(), 65535);
}

/// Stripped from the SYN instead: the server never offers scaling, so both
/// ends agree it is off (slow, but consistent).
#[test]
fn window_scale_stripped_from_syn() {
    let (sent, received) = (syn(Some(7)), syn(None));
    let sa = synack(None);
    let n = Handshake {
        syn_sent: Some(&sent),
        syn_received: Some(&received),
        synack_sent: Some(&sa),
        synack_received: Some(&sa),
    }
    .negotiate();
    assert_eq!(n.window_scaling_mismatch(), Some(false));
    assert!(!n.client.unwrap().window_scaling && !n.server.unwrap().window_scaling);
    assert_eq!(n.window_shift_mismatch(), Some(false));
}

#[test]
fn missing_segments() {
    let s = syn(Some(7));
    let n = Handshake::observed(Some(&s), None).negotiate();
    assert!(n.client.is_none());
    let v = n.server.unwrap();
    assert!(v.window_scaling);
    assert_eq!(v.rcv_wscale, None, "the server's own shift is unknown");
    assert_eq!(n.window_scaling_mismatch(), None);
    let sa = synack(Some(2));
    let n = Handshake::observed(None, Some(&sa)).negotiate();
    assert!(n.server.is_none());
    assert_eq!(n.client.unwrap().snd_wscale, 2);
    assert_eq!(n.client.unwrap().rcv_wscale, None);
}

#[test]
fn defaults_clamps_and_no_options() {
    // No MSS in the SYN-ACK: the client falls back to 536 (RFC 9293).
    let s = syn(Some(15));
    let sa = [0x01, 0x03, 0x03, 0x0f];
    let n = Handshake::observed(Some(&s), Some(&sa)).negotiate();
    let (c, v) = (n.client.unwrap(), n.server.unwrap());
    assert_eq!(c.send_mss(DEFAULT_MSS_IPV4), 536);
    assert_eq!(v.send_mss(DEFAULT_MSS_IPV4), 1460);
    assert_eq!((c.snd_wscale, c.wscale_clamped_from), (14, Some(15)));
    assert_eq!(v.snd_wscale, 14);
    assert!(!c.sack && !c.timestamps, "the SYN-ACK offered neither");
    assert_eq!(n.sack_mismatch(), Some(true));
    assert_eq!(n.timestamps_mismatch(), Some(true));
    let n = Handshake::observed(Some(&[]), Some(&[])).negotiate();
    assert_eq!(n.client.unwrap().peer_mss, None);
    assert_eq!(n.window_scaling_mismatch(), Some(false));
}

/// RFC 7323 section 2.2: "both sides MUST send Window Scale options in
/// their <SYN> segments to enable window scaling in either direction". A
/// SYN without the option answered by a SYN-ACK with it: the client does
/// not scale (a Linux client sends none only with `tcp_window_scaling` 0,
/// and then `tcp_parse_options` ignores the SYN-ACK's), the server reads
/// the SYN alone, so both ends agree scaling is off.
#[test]
fn window_scale_answered_without_offer_is_off_for_both() {
    let (s, sa) = (syn(None), synack(Some(7)));
    let n = Handshake::observed(Some(&s), Some(&sa)).negotiate();
    let (c, v) = (n.client.unwrap(), n.server.unwrap());
    assert!(!c.window_scaling && !v.window_scaling);
    assert_eq!((c.snd_wscale, v.snd_wscale), (0, 0));
    assert_eq!(n.window_scaling_mismatch(), Some(false));
    assert_eq!(c.max_peer_window(), 65535);
}
