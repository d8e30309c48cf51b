//! The IANA "Differentiated Services Field Codepoints (DSCP)" registry, as a
//! golden table. Every row is checked against the crate's constants, names,
//! parsing, display, precedence and pool; and every code point that is not
//! in the registry must have no name.
//!
//! Sources: the registry itself (pool 1 and pool 3), RFC 2474 (class
//! selectors, pools), RFC 2597 (assured forwarding), RFC 3246 (expedited
//! forwarding), RFC 5865 (VOICE-ADMIT), RFC 8622 (LE), RFC 9956 (NQB).

use dscp::{Dscp, Pool, Precedence};

struct Row {
    name: &'static str,
    bits: &'static str,
    constant: Dscp,
    long: &'static str,
    rfc: u16,
    pool: u8,
}

const fn row(
    name: &'static str,
    bits: &'static str,
    constant: Dscp,
    long: &'static str,
    rfc: u16,
    pool: u8,
) -> Row {
    Row {
        name,
        bits,
        constant,
        long,
        rfc,
        pool,
    }
}

/// The registry, in its own order, with the defining RFC of each entry.
const REGISTRY: [Row; 24] = [
    // Pool 1, class selectors: RFC 2474 section 4.2.2.
    row("CS0", "000000", Dscp::CS0, "Class Selector 0", 2474, 1),
    row("CS1", "001000", Dscp::CS1, "Class Selector 1", 2474, 1),
    row("CS2", "010000", Dscp::CS2, "Class Selector 2", 2474, 1),
    row("CS3", "011000", Dscp::CS3, "Class Selector 3", 2474, 1),
    row("CS4", "100000", Dscp::CS4, "Class Selector 4", 2474, 1),
    row("CS5", "101000", Dscp::CS5, "Class Selector 5", 2474, 1),
    row("CS6", "110000", Dscp::CS6, "Class Selector 6", 2474, 1),
    row("CS7", "111000", Dscp::CS7, "Class Selector 7", 2474, 1),
    // Pool 1, assured forwarding: RFC 2597 section 6.
    row(
        "AF11",
        "001010",
        Dscp::AF11,
        "Assured Forwarding 11",
        2597,
        1,
    ),
    row(
        "AF12",
        "001100",
        Dscp::AF12,
        "Assured Forwarding 12",
        2597,
        1,
    ),
    row(
        "AF13",
        "001110",
        Dscp::AF13,
        "Assured Forwarding 13",
        2597,
        1,
    ),
    row(
        "AF21",
        "010010",
        Dscp::AF21,
        "Assured Forwarding 21",
        2597,
        1,
    ),
    row(
        "AF22",
        "010100",
        Dscp::AF22,
        "Assured Forwarding 22",
        2597,
        1,
    ),
    row(
        "AF23",
        "010110",
        Dscp::AF23,
        "Assured Forwarding 23",
        2597,
        1,
    ),
    row(
        "AF31",
        "011010",
        Dscp::AF31,
        "Assured Forwarding 31",
        2597,
        1,
    ),
    row(
        "AF32",
        "011100",
        Dscp::AF32,
        "Assured Forwarding 32",
        2597,
        1,
    ),
    row(
        "AF33",
        "011110",
        Dscp::AF33,
        "Assured Forwarding 33",
        2597,
        1,
    ),
    row(
        "AF41",
        "100010",
        Dscp::AF41,
        "Assured Forwarding 41",
        2597,
        1,
    ),
    row(
        "AF42",
        "100100",
        Dscp::AF42,
        "Assured Forwarding 42",
        2597,
        1,
    ),
    row(
        "AF43",
        "100110",
        Dscp::AF43,
        "Assured Forwarding 43",
        2597,
        1,
    ),
    // Pool 1, expedited forwarding: RFC 3246 section 5.
    row("EF", "101110", Dscp::EF, "Expedited Forwarding", 3246, 1),
    // Pool 1, capacity-admitted traffic: RFC 5865 section 4.
    row(
        "VOICE-ADMIT",
        "101100",
        Dscp::VOICE_ADMIT,
        "Voice Admit",
        5865,
        1,
    ),
    // Pool 3, lower effort: RFC 8622 section 4 (pool 3 opened by RFC 8436).
    row("LE", "000001", Dscp::LE, "Lower Effort", 8622, 3),
    // Pool 3, non-queue-building: RFC 9956 (draft-ietf-tsvwg-nqb),
    // published April 2026, whose IANA section assigns 45 from pool 3.
    row("NQB", "101101", Dscp::NQB, "Non-Queue-Building", 9956, 3),
];

fn bits(row: &Row) -> u8 {
    u8::from_str_radix(row.bits, 2).unwrap()
}

#[test]
fn every_registry_entry_matches_the_crate() {
    for r in &REGISTRY {
        let value = bits(r);
        assert_eq!(r.constant.value(), value, "{} constant", r.name);
        assert_eq!(Dscp::new(value), Ok(r.constant), "{}", r.name);
        assert_eq!(r.constant.name(), Some(r.name), "{} short name", r.name);
        assert_eq!(r.constant.long_name(), Some(r.long), "{} long name", r.name);
        assert_eq!(r.constant.to_string(), r.name);
        assert_eq!(format!("{:#}", r.constant), r.long);
        assert_eq!(r.constant.pool().number(), r.pool, "{} pool", r.name);
        // Parsing: the name in any case, the long name, the bits, the number.
        assert_eq!(r.name.parse(), Ok(r.constant));
        assert_eq!(r.name.to_lowercase().parse(), Ok(r.constant));
        assert_eq!(r.long.parse(), Ok(r.constant));
        assert_eq!(r.long.to_uppercase().parse(), Ok(r.constant));
        assert_eq!(r.bits.parse(), Ok(r.constant));
        assert_eq!(value.to_string().parse(), Ok(r.constant));
        assert_eq!(format!("{value:#x}").parse(), Ok(r.constant));
        assert_eq!(format!("{value:#b}").parse(), Ok(r.constant));
        // The precedence a legacy router sees is the upper three bits.
        assert_eq!(r.constant.precedence().value(), value >> 3, "{}", r.name);
    }
}

#[test]
fn rfc_specific_structure() {
    for r in &REGISTRY {
        match r.rfc {
            // RFC 2474: class selectors are xxx000 and equal to the
            // precedence they stand for.
            2474 => {
                assert!(r.constant.is_class_selector());
                let p = Precedence::new(bits(r) >> 3).unwrap();
                assert_eq!(p.class_selector(), r.constant);
            }
            // RFC 2597: AFcd = class c in the upper three bits, drop
            // precedence d in the next two, last bit 0.
            2597 => {
                let c = r.name.as_bytes()[2] - b'0';
                let d = r.name.as_bytes()[3] - b'0';
                assert_eq!(bits(r), (c << 3) | (d << 1));
                assert_eq!(Dscp::assured_forwarding(c, d), Some(r.constant));
                assert_eq!(r.constant.af_class_and_drop(), Some((c, d)));
            }
            3246 => assert_eq!(r.constant, Dscp::EF),
            5865 => assert_eq!(r.constant.value(), 44),
            8622 => {
                assert_eq!(r.constant.value(), 1);
                assert_eq!(r.constant.pool(), Pool::Pool3);
            }
            9956 => {
                assert_eq!(r.constant.value(), 45);
                assert_eq!(r.constant.pool(), Pool::Pool3);
                // 101101 reads as precedence 5, as EF does.
                assert_eq!(r.constant.precedence(), Dscp::EF.precedence());
            }
            other => panic!("unexpected RFC {other}"),
        }
    }
}

#[test]
fn nothing_outside_the_registry_has_a_name() {
    let mut named = 0;
    for d in Dscp::all() {
        let in_registry = REGISTRY.iter().any(|r| r.constant == d);
        assert_eq!(d.name().is_some(), in_registry, "{}", d.value());
        assert_eq!(d.long_name().is_some(), in_registry, "{}", d.value());
        if in_registry {
            named += 1;
        } else {
            // Unnamed code points print as decimal, in both forms.
            assert_eq!(d.to_string(), d.value().to_string());
            assert_eq!(format!("{d:#}"), d.value().to_string());
        }
    }
    assert_eq!(named, 24);
    // Pool 2 (xxxx11) has no assignments.
    assert!(REGISTRY.iter().all(|r| r.constant.pool() != Pool::Pool2));
}

#[test]
fn default_forwarding_aliases() {
    // RFC 2474 section 4.1: the default PHB code point is 000000.
    for alias in [
        "be",
        "BE",
        "df",
        "DF",
        "default",
        "Default",
        "Default Forwarding",
    ] {
        assert_eq!(alias.parse(), Ok(Dscp::CS0), "{alias}");
    }
    assert_eq!(Dscp::DF, Dscp::CS0);
    assert_eq!(Dscp::default(), Dscp::CS0);
    assert_eq!("voice-admit".parse(), Ok(Dscp::VOICE_ADMIT));
}
