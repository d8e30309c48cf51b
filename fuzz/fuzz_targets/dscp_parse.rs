//! `FromStr` for `Dscp`, `Precedence` and `Ecn` on arbitrary UTF-8 never
//! panics, and whatever parses round-trips through `Display` (short and,
//! for DSCP, long `{:#}` names).
#![no_main]

use dscp::{Dscp, Ecn, Precedence};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    match text.parse::<Dscp>() {
        Ok(d) => {
            assert!(d.value() <= 63);
            assert_eq!(d.to_string().parse::<Dscp>(), Ok(d), "{text:?}");
            assert_eq!(format!("{d:#}").parse::<Dscp>(), Ok(d), "{text:?}");
        }
        // Every refusal says why.
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Ok(p) = text.parse::<Precedence>() {
        assert_eq!(p.to_string().parse::<Precedence>(), Ok(p), "{text:?}");
        assert_eq!(format!("{p:#}").parse::<Precedence>(), Ok(p), "{text:?}");
    }
    if let Ok(e) = text.parse::<Ecn>() {
        assert_eq!(e.to_string().parse::<Ecn>(), Ok(e), "{text:?}");
    }
});
