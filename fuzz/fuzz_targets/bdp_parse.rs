//! Every `bdp` text parser on arbitrary strings: no panic, and whatever
//! parses prints back to text that parses to the same value.

#![no_main]

use bdp::{parse_duration, BitsPerSecond, Bytes, DurationDisplay, Link};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = core::str::from_utf8(data) else {
        return;
    };

    if let Ok(r) = s.parse::<BitsPerSecond>() {
        let shown = r.to_string();
        assert_eq!(
            shown.parse::<BitsPerSecond>(),
            Ok(r),
            "rate {s:?} -> {shown:?}"
        );
        let _ = format!("{r:.3}");
    }

    if let Ok(b) = s.parse::<Bytes>() {
        for shown in [b.to_string(), b.si().to_string(), b.binary().to_string()] {
            assert_eq!(shown.parse::<Bytes>(), Ok(b), "size {s:?} -> {shown:?}");
        }
        let _ = format!("{:.2} {:.2}", b.si(), b.binary());
    }

    if let Ok(d) = parse_duration(s) {
        let shown = DurationDisplay(d).to_string();
        assert_eq!(parse_duration(&shown), Ok(d), "duration {s:?} -> {shown:?}");
        let _ = format!("{:.3}", DurationDisplay(d));
    }

    if let Some(link) = Link::by_name(s) {
        assert!(link.name.eq_ignore_ascii_case(s.trim()));
    }

    let _ = bdp_calc::parse_loss(s);
});
