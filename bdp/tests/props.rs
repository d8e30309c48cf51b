//! Property tests: no panics, round trips, monotonicity, minimal shifts.

use bdp::link::{aal5_cells, AtmEncapsulation};
use bdp::{
    bdp, ceiling, linux_rcv_wscale, mathis, padhye, parse_duration, transfer_time, window_needed,
    window_scale_shift, BitsPerSecond, Bytes, CalcError, DurationDisplay, Link, MathisConstant,
    PadhyeParams, TcpIpHeaders, LINKS, MAX_WINDOW,
};
use core::time::Duration;
use proptest::prelude::*;

fn any_duration() -> impl Strategy<Value = Duration> {
    (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n))
}

fn small_duration() -> impl Strategy<Value = Duration> {
    (0u64..1_000_000_000_000).prop_map(Duration::from_nanos)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parsers_never_panic(s in ".{0,40}") {
        let _ = s.parse::<BitsPerSecond>();
        let _ = s.parse::<Bytes>();
        let _ = parse_duration(&s);
    }

    #[test]
    fn parsers_never_panic_on_unit_like_text(
        n in "[0-9]{0,25}(\\.[0-9]{0,25})?",
        sp in " {0,2}",
        u in "(k|K|M|m|G|g|T|t)?i?(B|b|bps|bit/s|Bps|B/s|byte|s|ms|us|ns|µs|min)?",
    ) {
        let s = format!("{n}{sp}{u}");
        let _ = s.parse::<BitsPerSecond>();
        let _ = s.parse::<Bytes>();
        let _ = parse_duration(&s);
    }

    #[test]
    fn rate_display_round_trips(v in any::<u64>()) {
        let r = BitsPerSecond::new(v);
        prop_assert_eq!(r.to_string().parse::<BitsPerSecond>(), Ok(r));
    }

    #[test]
    fn size_display_round_trips(v in any::<u64>()) {
        let b = Bytes::new(v);
        prop_assert_eq!(b.to_string().parse::<Bytes>(), Ok(b));
        prop_assert_eq!(b.si().to_string().parse::<Bytes>(), Ok(b));
        prop_assert_eq!(b.binary().to_string().parse::<Bytes>(), Ok(b));
    }

    #[test]
    fn duration_display_round_trips(d in any_duration()) {
        prop_assert_eq!(parse_duration(&DurationDisplay(d).to_string()), Ok(d));
    }

    #[test]
    fn rounded_display_never_panics(v in any::<u64>(), p in 0usize..30, d in any_duration()) {
        let _ = format!("{:.*}", p, BitsPerSecond::new(v));
        let _ = format!("{:.*}", p, Bytes::new(v).binary());
        let _ = format!("{:.*}", p, Bytes::new(v).si());
        let _ = format!("{:.*}", p, DurationDisplay(d));
    }

    #[test]
    fn shift_is_the_smallest_that_fits(w in 0u64..=MAX_WINDOW.get()) {
        let s = window_scale_shift(Bytes::new(w)).unwrap();
        prop_assert!(s <= 14);
        prop_assert!(65_535u64 << s >= w);
        if s > 0 {
            prop_assert!(65_535u64 << (s - 1) < w);
        }
        // Linux's rule never picks a larger shift, and at most one smaller.
        let l = linux_rcv_wscale(Bytes::new(w));
        prop_assert!(l <= s && s - l <= 1);
    }

    #[test]
    fn shift_above_the_limit_is_an_error(w in (MAX_WINDOW.get() + 1)..=u64::MAX) {
        let is_too_large = matches!(
            window_scale_shift(Bytes::new(w)),
            Err(CalcError::WindowTooLarge { .. })
        );
        prop_assert!(is_too_large);
    }

    #[test]
    fn more_rtt_never_lowers_the_needed_window(
        r in any::<u64>(), a in small_duration(), b in small_duration(),
    ) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let rate = BitsPerSecond::new(r);
        if let (Ok(x), Ok(y)) = (window_needed(rate, lo), window_needed(rate, hi)) {
            prop_assert!(x <= y);
        }
    }

    #[test]
    fn more_rate_never_lowers_the_needed_window(
        a in any::<u64>(), b in any::<u64>(), rtt in small_duration(),
    ) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        if let (Ok(x), Ok(y)) = (
            window_needed(BitsPerSecond::new(lo), rtt),
            window_needed(BitsPerSecond::new(hi), rtt),
        ) {
            prop_assert!(x <= y);
        }
    }

    #[test]
    fn needed_window_reaches_the_rate(r in 0u64..1_000_000_000_000_000u64 / 1000, rtt in small_duration()) {
        prop_assume!(!rtt.is_zero());
        let rate = BitsPerSecond::new(r);
        let w = bdp(rate, rtt).unwrap();
        // Rounded up, so its ceiling is at least the rate...
        prop_assert!(ceiling(w, rtt).unwrap() >= rate);
        // ...and one byte less falls short (unless the window is empty).
        if w.get() > 0 {
            prop_assert!(ceiling(Bytes::new(w.get() - 1), rtt).unwrap() < rate);
        }
    }

    #[test]
    fn calculations_never_panic(
        r in any::<u64>(), w in any::<u64>(), s in any::<u64>(), d in any_duration(), p in any::<f64>(),
    ) {
        let rate = BitsPerSecond::new(r);
        let _ = bdp(rate, d);
        let _ = ceiling(Bytes::new(w), d);
        let _ = transfer_time(Bytes::new(s), Some(rate), Some((Bytes::new(w), d)));
        let _ = transfer_time(Bytes::new(s), Some(rate), None);
        let _ = mathis(Bytes::new(w), d, p, MathisConstant::Periodic);
        let _ = padhye(Bytes::new(w), d, p, PadhyeParams { b: (r % 4) as u32, t_rto: Some(d), max_window: Some(Bytes::new(s)) });
        for link in LINKS {
            let _ = link.wire_bytes(Bytes::new(w));
            let _ = link.serialization_time(Bytes::new(w));
            let _ = link.ip_rate(Bytes::new(w));
            let _ = link.with_mtu(Bytes::new(s)).goodput(TcpIpHeaders::IPV6_TIMESTAMPS);
        }
        let _ = aal5_cells(w, AtmEncapsulation::LlcSnap);
    }

    #[test]
    fn transfer_time_is_the_slower_limit(
        s in 0u64..1_000_000_000_000, r in 1u64..1_000_000_000_000, w in 1u64..10_000_000_000,
        rtt in 1u64..10_000_000_000u64,
    ) {
        let rtt = Duration::from_nanos(rtt);
        let both = transfer_time(Bytes::new(s), Some(BitsPerSecond::new(r)), Some((Bytes::new(w), rtt))).unwrap();
        let by_rate = transfer_time(Bytes::new(s), Some(BitsPerSecond::new(r)), None).unwrap();
        let by_window = transfer_time(Bytes::new(s), None, Some((Bytes::new(w), rtt))).unwrap();
        prop_assert_eq!(both.time, by_rate.time.max(by_window.time));
    }

    #[test]
    fn loss_models_are_monotone_in_p(p1 in 1e-9f64..1.0, p2 in 1e-9f64..1.0) {
        let (lo, hi) = if p1 <= p2 { (p1, p2) } else { (p2, p1) };
        let mss = Bytes::new(1460);
        let rtt = Duration::from_millis(50);
        let m_lo = mathis(mss, rtt, lo, MathisConstant::Periodic).unwrap();
        let m_hi = mathis(mss, rtt, hi, MathisConstant::Periodic).unwrap();
        prop_assert!(m_lo >= m_hi);
        let x_lo = padhye(mss, rtt, lo, PadhyeParams::default()).unwrap();
        let x_hi = padhye(mss, rtt, hi, PadhyeParams::default()).unwrap();
        prop_assert!(x_lo >= x_hi);
        prop_assert!(x_lo <= m_lo * (1.0 + 1e-12));
    }

    #[test]
    fn goodput_decreases_with_headers(mtu in 73u64..10_000) {
        for link in LINKS {
            let l: Link = link.with_mtu(Bytes::new(mtu));
            let g4 = l.goodput(TcpIpHeaders::IPV4).unwrap();
            let g6ts = l.goodput(TcpIpHeaders::IPV6_TIMESTAMPS).unwrap();
            prop_assert!(g6ts <= g4);
            prop_assert!(g4 < l.payload_rate);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// `Rounded` keeps three significant digits: read back, a rate is
    /// within half a unit of the third digit of the value (0.5% of it,
    /// or 0.5 bit/s below 1 kbit/s), and at most three digits are shown
    /// below the largest unit.
    #[test]
    fn rounded_rates_read_back_within_half_a_digit(bps in any::<u64>()) {
        let text = bdp::Rounded(BitsPerSecond::new(bps)).to_string();
        let number: String = text.chars().take_while(|c| *c != ' ').collect();
        let back: BitsPerSecond = text.replace(' ', "").parse()
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let (v, b) = (bps as f64, back.get() as f64);
        prop_assert!((v - b).abs() <= v * 0.005 + 0.5, "{bps} -> {text}");
        let digits = number.chars().filter(char::is_ascii_digit).count();
        prop_assert!(digits <= 3 || text.ends_with("Tbit/s"), "{bps} -> {text}");
    }

    #[test]
    fn rounded_times_read_back_within_half_a_digit(d in small_duration()) {
        let text = bdp::Rounded(d).to_string();
        let back = parse_duration(&text.replace(' ', ""))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let (v, b) = (d.as_nanos() as f64, back.as_nanos() as f64);
        prop_assert!((v - b).abs() <= v * 0.005 + 0.5, "{d:?} -> {text}");
    }
}
