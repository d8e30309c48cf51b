//! Reading and writing rates, sizes and durations.

use bdp::{parse_duration, BitsPerSecond, Bytes, DurationDisplay, ParseError, Quantity};
use core::time::Duration;

fn rate(s: &str) -> Result<u64, ParseError> {
    s.parse::<BitsPerSecond>().map(BitsPerSecond::get)
}
fn size(s: &str) -> Result<u64, ParseError> {
    s.parse::<Bytes>().map(Bytes::get)
}

#[test]
fn rates_from_the_issue() {
    // Issue 4's examples: 1Gbps, 155.52Mbit/s, 1.544Mbps, 10G.
    assert_eq!(rate("1Gbps"), Ok(1_000_000_000));
    assert_eq!(rate("155.52Mbit/s"), Ok(155_520_000));
    assert_eq!(rate("1.544Mbps"), Ok(1_544_000));
    assert_eq!(rate("10G"), Ok(10_000_000_000));
    assert_eq!(rate("100kbit/s"), Ok(100_000));
    assert_eq!(rate("100 kbps"), Ok(100_000));
    assert_eq!(rate("1000000"), Ok(1_000_000));
    assert_eq!(rate("1000000 bit/s"), Ok(1_000_000));
    assert_eq!(rate("44.736 Mb/s"), Ok(44_736_000));
    assert_eq!(rate("10mbps"), Ok(10_000_000));
    assert_eq!(rate("1Kibit/s"), Ok(1024));
    assert_eq!(rate("  2.5 Gbit/s  "), Ok(2_500_000_000));
    assert_eq!(rate("0"), Ok(0));
    assert_eq!(rate("1.000Mbps"), Ok(1_000_000));
}

#[test]
fn rate_errors() {
    const R: Quantity = Quantity::Rate;
    assert_eq!(rate(""), Err(ParseError::Empty { kind: R }));
    assert_eq!(rate("   "), Err(ParseError::Empty { kind: R }));
    assert_eq!(rate("-1Mbps"), Err(ParseError::Negative { kind: R, at: 0 }));
    assert_eq!(
        rate("Mbps"),
        Err(ParseError::ExpectedNumber { kind: R, at: 0 })
    );
    assert_eq!(
        rate("."),
        Err(ParseError::ExpectedNumber { kind: R, at: 0 })
    );
    assert_eq!(
        rate("10 furlongs"),
        Err(ParseError::UnknownUnit { kind: R, at: 3 })
    );
    assert_eq!(
        rate("1.2.3Mbps"),
        Err(ParseError::UnknownUnit { kind: R, at: 3 })
    );
    assert_eq!(rate("10MB/s"), Err(ParseError::BytesForBits { at: 2 }));
    assert_eq!(rate("10MBps"), Err(ParseError::BytesForBits { at: 2 }));
    assert_eq!(rate("0.5"), Err(ParseError::Inexact { kind: R }));
    assert_eq!(rate("1.0000001Mbps"), Err(ParseError::Inexact { kind: R }));
    assert_eq!(
        rate("18446744073709551616"),
        Err(ParseError::Overflow { kind: R })
    );
    assert_eq!(rate("20000000Tbps"), Err(ParseError::Overflow { kind: R }));
    assert_eq!(
        rate("9999999999999999999999999999999999999999999"),
        Err(ParseError::Overflow { kind: R })
    );
    // Fractions far below a bit: inexact, not a panic on 10^n overflow.
    assert_eq!(
        rate("0.00000000000000000000000000000000000000000001"),
        Err(ParseError::Inexact { kind: R })
    );
    assert_eq!(rate("1Ki"), Err(ParseError::UnknownUnit { kind: R, at: 1 }));
}

#[test]
fn rate_display_is_exact_and_round_trips() {
    let cases = [
        (0, "0 bit/s"),
        (1, "1 bit/s"),
        (999, "999 bit/s"),
        (1_000, "1 kbit/s"),
        (52_428_000, "52.428 Mbit/s"),
        (155_520_000, "155.52 Mbit/s"),
        (1_544_000, "1.544 Mbit/s"),
        (10_000_000_000, "10 Gbit/s"),
        (u64::MAX, "18446744.073709551615 Tbit/s"),
    ];
    for (v, text) in cases {
        let r = BitsPerSecond::new(v);
        assert_eq!(r.to_string(), text);
        assert_eq!(text.parse::<BitsPerSecond>(), Ok(r));
    }
    assert_eq!(
        format!("{:.2}", BitsPerSecond::new(15_252_014)),
        "15.25 Mbit/s"
    );
    assert_eq!(format!("{:.0}", BitsPerSecond::new(59_578)), "60 kbit/s");
    assert_eq!(
        format!("{:.1}", BitsPerSecond::new(999_950)),
        "1000.0 kbit/s"
    );
    assert_eq!(
        format!("{:>14}", BitsPerSecond::new(1_000)),
        "      1 kbit/s"
    );
}

#[test]
fn sizes_from_the_issue() {
    // Issue 4's examples: 65535, 64KiB, 1MiB, 1.25MB, 4KB (SI 1000, binary 1024, exact).
    assert_eq!(size("65535"), Ok(65_535));
    assert_eq!(size("64KiB"), Ok(65_536));
    assert_eq!(size("1MiB"), Ok(1_048_576));
    assert_eq!(size("1.25MB"), Ok(1_250_000));
    assert_eq!(size("4KB"), Ok(4_000));
    assert_eq!(size("4kB"), Ok(4_000));
    assert_eq!(size("1.5KiB"), Ok(1_536));
    assert_eq!(size("8 MiB"), Ok(8 << 20));
    assert_eq!(size("3 bytes"), Ok(3));
    assert_eq!(size("1GiB"), Ok(1 << 30));
    assert_eq!(size("1TB"), Ok(1_000_000_000_000));
    assert_eq!(size("1.073741824GB"), Ok(1 << 30));
}

#[test]
fn size_errors() {
    const S: Quantity = Quantity::Size;
    assert_eq!(size("64K"), Err(ParseError::AmbiguousPrefix { at: 2 }));
    assert_eq!(size("64Kb"), Err(ParseError::BitsForBytes { at: 2 }));
    assert_eq!(size("1Mbit"), Err(ParseError::BitsForBytes { at: 1 }));
    assert_eq!(size("1.5"), Err(ParseError::Inexact { kind: S }));
    assert_eq!(size("1.0001KB"), Err(ParseError::Inexact { kind: S }));
    assert_eq!(size("0.1KiB"), Err(ParseError::Inexact { kind: S }));
    assert_eq!(size("-64KiB"), Err(ParseError::Negative { kind: S, at: 0 }));
    assert_eq!(
        size("17179869184GiB"),
        Err(ParseError::Overflow { kind: S })
    );
    assert_eq!(
        size("12 parsecs"),
        Err(ParseError::UnknownUnit { kind: S, at: 3 })
    );
}

#[test]
fn size_display() {
    assert_eq!(Bytes::new(65_536).to_string(), "64 KiB");
    assert_eq!(Bytes::new(65_535).to_string(), "65535 B");
    assert_eq!(Bytes::new(1_250_000).to_string(), "1250000 B");
    assert_eq!(Bytes::new(0).to_string(), "0 B");
    assert_eq!(Bytes::new(1_250_000).si().to_string(), "1.25 MB");
    assert_eq!(
        Bytes::new(1_250_000).binary().to_string(),
        "1.1920928955078125 MiB"
    );
    assert_eq!(format!("{:.2}", Bytes::new(3_564_000).binary()), "3.40 MiB");
    assert_eq!(format!("{:.1}", Bytes::new(138_157).si()), "138.2 KB");
    for v in [
        0u64,
        1,
        65_535,
        65_536,
        1_250_000,
        u64::MAX,
        1 << 40,
        3 << 20,
    ] {
        let b = Bytes::new(v);
        assert_eq!(b.to_string().parse::<Bytes>(), Ok(b), "{v}");
        assert_eq!(b.si().to_string().parse::<Bytes>(), Ok(b), "{v}");
        assert_eq!(b.binary().to_string().parse::<Bytes>(), Ok(b), "{v}");
    }
}

#[test]
fn durations_from_the_issue() {
    // Issue 4's examples: 10ms, 0.55s, 550ms, 25us.
    assert_eq!(parse_duration("10ms"), Ok(Duration::from_millis(10)));
    assert_eq!(parse_duration("0.55s"), Ok(Duration::from_millis(550)));
    assert_eq!(parse_duration("550ms"), Ok(Duration::from_millis(550)));
    assert_eq!(parse_duration("25us"), Ok(Duration::from_micros(25)));
    assert_eq!(parse_duration("25µs"), Ok(Duration::from_micros(25)));
    assert_eq!(parse_duration("7ns"), Ok(Duration::from_nanos(7)));
    assert_eq!(parse_duration("1.5 min"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("0.05ms"), Ok(Duration::from_micros(50)));
}

#[test]
fn duration_errors() {
    const D: Quantity = Quantity::Duration;
    assert_eq!(
        parse_duration("1.5ns"),
        Err(ParseError::Inexact { kind: D })
    );
    assert_eq!(
        parse_duration("0.55"),
        Err(ParseError::MissingUnit { at: 4 })
    );
    assert_eq!(
        parse_duration("10 fortnights"),
        Err(ParseError::UnknownUnit { kind: D, at: 3 })
    );
    assert_eq!(
        parse_duration("-10ms"),
        Err(ParseError::Negative { kind: D, at: 0 })
    );
    assert_eq!(
        parse_duration("18446744073709551616s"),
        Err(ParseError::Overflow { kind: D })
    );
}

#[test]
fn duration_display_round_trips() {
    let cases = [
        (Duration::from_millis(550), "550 ms"),
        (Duration::from_millis(4400), "4.4 s"),
        (Duration::from_micros(25), "25 us"),
        (Duration::from_nanos(1), "1 ns"),
        (Duration::ZERO, "0 ns"),
        (Duration::MAX, "18446744073709551615.999999999 s"),
    ];
    for (d, text) in cases {
        assert_eq!(DurationDisplay(d).to_string(), text);
        assert_eq!(parse_duration(text), Ok(d));
    }
    assert_eq!(
        format!(
            "{:.3}",
            DurationDisplay(Duration::from_nanos(8_427_397_309))
        ),
        "8.427 s"
    );
}

#[test]
fn errors_say_why() {
    let e = "10MB/s".parse::<BitsPerSecond>().unwrap_err();
    assert!(e.to_string().contains("bits per second"), "{e}");
    let e = "64K".parse::<Bytes>().unwrap_err();
    assert!(e.to_string().contains("KiB"), "{e}");
    let e = parse_duration("1.5ns").unwrap_err();
    assert_eq!(
        e.to_string(),
        "duration is not a whole number of nanoseconds"
    );
}
