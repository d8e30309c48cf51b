//! What the network sends back to `firewall-check probe`, through its
//! decoders: the packets its raw sockets read (TCP answers and ICMP /
//! ICMPv6 errors with their quotes, RFC 4884 extensions and 8-byte quotes
//! included) and the comparison of each quote with the probe as sent. Never
//! a panic; a quote says what it holds; every located change is shown by
//! the observer it names, and the observer before it saw that field.
//!
//! Input: a 2-byte big-endian length and the probe as sent (an IPv4 or
//! IPv6 packet), then records of a TTL byte, a 2-byte length and a packet
//! as read from the socket.
#![no_main]

use firewall_check::analysis::probe::diff::{diff, locate, Coverage, Observation};
use firewall_check::analysis::probe::wire::{parse_answer, Answer, Seen};
use libfuzzer_sys::fuzz_target;

/// The next length-prefixed chunk of `data`, if whole.
fn chunk<'a>(data: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, rest) = data.split_first_chunk::<2>()?;
    let len = usize::from(u16::from_be_bytes(*len));
    let (c, rest) = rest.split_at_checked(len)?;
    *data = rest;
    Some(c)
}

/// The accessors agree with each other and never reach past the bytes seen.
fn check_seen(s: &Seen) {
    let _ = (s.sport(), s.dport(), s.seq(), s.ack(), s.flags(), s.window());
    assert!(s.quoted_len() >= 8, "a segment seen without its ports and sequence number");
    if let Some(opts) = s.options() {
        let len = s.header_len().expect("options without a header length");
        assert_eq!(opts.len() + 20, len);
        assert!(s.quoted_len() >= len);
    }
    if let Some(p) = s.payload() {
        assert_eq!(p.len() + s.header_len().unwrap(), s.quoted_len());
    }
}

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    let Some(sent) = chunk(&mut rest).and_then(|p| Seen::parse(p).ok()) else {
        return;
    };
    check_seen(&sent);
    let mut quotes: Vec<(u8, firewall_check::analysis::probe::wire::IcmpError)> = Vec::new();
    while let Some((&ttl, tail)) = rest.split_first() {
        rest = tail;
        let Some(packet) = chunk(&mut rest) else {
            break;
        };
        match parse_answer(packet) {
            Some(Answer::Tcp(seen)) => {
                check_seen(&seen);
                let _ = diff(&sent, &seen);
            }
            Some(Answer::Icmp(e)) => {
                check_seen(&e.quote);
                quotes.push((ttl, e));
            }
            None => {}
        }
    }
    quotes.sort_by_key(|(t, _)| *t);
    let path: Vec<Observation<'_>> = quotes
        .iter()
        .map(|(ttl, e)| Observation {
            ttl: *ttl,
            address: e.from,
            seen: &e.quote,
            sent: &sent,
        })
        .collect();
    for l in locate(&path) {
        let (ttl, address) = l.hop.expect("a located change without its hop");
        // An observer with that TTL and address (a TTL may repeat) saw the field.
        assert!(
            path.iter()
                .filter(|o| o.ttl == ttl && o.address == address)
                .any(|o| Coverage::of(o.seen).shows(l.change.field)),
            "{} located at an observer that did not see it",
            l.change.field
        );
        if let Some((before, _)) = l.after_hop {
            assert!(before <= ttl, "after_hop {before} beyond hop {ttl}");
        }
    }
});
