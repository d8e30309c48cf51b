//! Property tests: text round trips and header rewrites.

use dscp::checksum::ones_complement_sum;
use dscp::{ipv4, ipv6, DsField, Dscp, Ecn, Precedence};
use proptest::prelude::*;

fn any_dscp() -> impl Strategy<Value = Dscp> {
    (0u8..64).prop_map(|v| Dscp::new(v).unwrap())
}

fn any_ecn() -> impl Strategy<Value = Ecn> {
    (0u8..4).prop_map(|v| Ecn::new(v).unwrap())
}

/// A whole IPv4 header (IHL 5 to 15) with random contents and a valid
/// checksum, possibly followed by payload bytes.
fn valid_ipv4() -> impl Strategy<Value = Vec<u8>> {
    (5u8..=15, 0usize..8).prop_flat_map(|(ihl, extra)| {
        prop::collection::vec(any::<u8>(), usize::from(ihl) * 4 + extra).prop_map(move |mut h| {
            h[0] = 0x40 | ihl;
            ipv4::fill_checksum(&mut h).unwrap();
            h
        })
    })
}

/// Like [`valid_ipv4`] but the checksum field is left random.
fn any_checksum_ipv4() -> impl Strategy<Value = Vec<u8>> {
    (5u8..=15).prop_flat_map(|ihl| {
        prop::collection::vec(any::<u8>(), usize::from(ihl) * 4).prop_map(move |mut h| {
            h[0] = 0x40 | ihl;
            h
        })
    })
}

/// Flips the ASCII case of some characters of `s`.
fn recase(s: &str, flips: &[bool]) -> String {
    s.chars()
        .zip(flips.iter().chain(std::iter::repeat(&false)))
        .map(|(c, &flip)| {
            if flip {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            } else {
                c
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn display_parses_back(d in any_dscp()) {
        prop_assert_eq!(d.to_string().parse::<Dscp>(), Ok(d));
        prop_assert_eq!(format!("{d:#}").parse::<Dscp>(), Ok(d));
    }

    #[test]
    fn names_parse_in_any_case(d in any_dscp(), flips in prop::collection::vec(any::<bool>(), 24)) {
        let short = recase(&d.to_string(), &flips);
        let long = recase(&format!("{d:#}"), &flips);
        prop_assert_eq!(short.parse::<Dscp>(), Ok(d));
        prop_assert_eq!(long.parse::<Dscp>(), Ok(d));
    }

    #[test]
    fn whatever_parses_round_trips(s in "\\PC{0,24}") {
        if let Ok(d) = s.parse::<Dscp>() {
            prop_assert_eq!(d.to_string().parse::<Dscp>(), Ok(d));
            prop_assert_eq!(format!("{d:#}").parse::<Dscp>(), Ok(d));
        }
        if let Ok(p) = s.parse::<Precedence>() {
            prop_assert_eq!(p.to_string().parse::<Precedence>(), Ok(p));
        }
        if let Ok(e) = s.parse::<Ecn>() {
            prop_assert_eq!(e.to_string().parse::<Ecn>(), Ok(e));
        }
    }

    #[test]
    fn number_like_text_parses_or_says_why(s in "(0[xXbB])?[0-9a-fA-F]{0,12}") {
        match s.parse::<Dscp>() {
            Ok(d) => prop_assert!(d.value() <= 63),
            // Every error has a message naming the problem.
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn surrounding_space_is_always_refused(d in any_dscp(), left in any::<bool>()) {
        let s = if left { format!(" {d}") } else { format!("{d} ") };
        let refused = matches!(
            s.parse::<Dscp>(),
            Err(dscp::ParseDscpError::SurroundingWhitespace { .. })
        );
        prop_assert!(refused, "{:?} was not refused for its whitespace", s);
    }

    #[test]
    fn ipv4_set_dscp_keeps_ecn_and_a_valid_checksum(h in valid_ipv4(), d in any_dscp()) {
        let before = h.clone();
        let mut h = h;
        let ecn = ipv4::ecn(&h).unwrap();
        ipv4::set_dscp(&mut h, d).unwrap();
        prop_assert_eq!(ipv4::dscp(&h), Ok(d));
        prop_assert_eq!(ipv4::ecn(&h), Ok(ecn));
        prop_assert_eq!(ipv4::verify_checksum(&h), Ok(true));
        // The incremental result equals a full recomputation bit for bit.
        prop_assert_eq!(ipv4::stored_checksum(&h), ipv4::compute_checksum(&h));
        // Only byte 1 and the checksum changed.
        for (i, (a, b)) in before.iter().zip(&h).enumerate() {
            if i != 1 && !(10..12).contains(&i) {
                prop_assert_eq!(a, b, "byte {}", i);
            }
        }
    }

    #[test]
    fn ipv4_set_ecn_keeps_dscp_and_a_valid_checksum(h in valid_ipv4(), e in any_ecn()) {
        let mut h = h;
        let d = ipv4::dscp(&h).unwrap();
        ipv4::set_ecn(&mut h, e).unwrap();
        prop_assert_eq!(ipv4::ecn(&h), Ok(e));
        prop_assert_eq!(ipv4::dscp(&h), Ok(d));
        prop_assert_eq!(ipv4::verify_checksum(&h), Ok(true));
        prop_assert_eq!(ipv4::stored_checksum(&h), ipv4::compute_checksum(&h));
    }

    #[test]
    fn ipv4_rewrite_preserves_the_header_sum(h in any_checksum_ipv4(), f in any::<u8>()) {
        // Valid or not, the one's complement sum over the header is
        // unchanged: a rewrite neither repairs nor hides a bad checksum.
        let mut h = h;
        let sum = ones_complement_sum(&h);
        ipv4::set_ds_field(&mut h, DsField::new(f)).unwrap();
        prop_assert_eq!(ones_complement_sum(&h), sum);
    }

    #[test]
    fn ipv4_functions_never_panic(buf in prop::collection::vec(any::<u8>(), 0..72), d in any_dscp()) {
        let mut b = buf.clone();
        let valid_before = ipv4::verify_checksum(&b);
        match ipv4::set_dscp(&mut b, d) {
            Ok(()) => {
                prop_assert_eq!(ipv4::verify_checksum(&b), valid_before);
                prop_assert_eq!(ipv4::dscp(&b), Ok(d));
            }
            Err(_) => prop_assert_eq!(&b, &buf),
        }
        let _ = ipv4::compute_checksum(&b);
        let _ = ipv4::stored_checksum(&b);
    }

    #[test]
    fn ipv6_rewrite_leaves_version_and_flow_label(
        rest in prop::collection::vec(any::<u8>(), 40..64),
        d in any_dscp(),
        e in any_ecn(),
    ) {
        let mut h = rest;
        h[0] = 0x60 | (h[0] & 0x0f);
        let before = h.clone();
        let label = ipv6::flow_label(&h).unwrap();
        let old = ipv6::traffic_class(&h).unwrap();
        ipv6::set_dscp(&mut h, d).unwrap();
        prop_assert_eq!(ipv6::traffic_class(&h), Ok(old.with_dscp(d)));
        ipv6::set_ecn(&mut h, e).unwrap();
        prop_assert_eq!(ipv6::traffic_class(&h), Ok(DsField::from_parts(d, e)));
        prop_assert_eq!(ipv6::flow_label(&h), Ok(label));
        prop_assert_eq!(h[0] >> 4, 6);
        prop_assert_eq!(&h[2..], &before[2..]);
        prop_assert_eq!(h[1] & 0x0f, before[1] & 0x0f);
    }

    #[test]
    fn ipv6_functions_never_panic(buf in prop::collection::vec(any::<u8>(), 0..48), e in any_ecn()) {
        let mut b = buf.clone();
        if ipv6::set_ecn(&mut b, e).is_err() {
            prop_assert_eq!(&b, &buf);
        } else {
            prop_assert_eq!(ipv6::ecn(&b), Ok(e));
        }
    }
}
