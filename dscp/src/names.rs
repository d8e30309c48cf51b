//! The named DSCP code points and their short and long names.
//!
//! The IANA "Differentiated Services Field Codepoints" registry names 22
//! code points in pool 1 and two in pool 3 (pool 2 has none):
//!
//! | name        | binary | decimal | defined in |
//! |-------------|--------|---------|------------|
//! | CS0 - CS7   | `ccc000` | 0, 8, .., 56 | RFC 2474 (class selectors) |
//! | AFcd        | `cccdd0` | 8c + 2d | RFC 2597 (assured forwarding, class c 1-4, drop precedence d 1-3) |
//! | EF          | `101110` | 46 | RFC 3246 (expedited forwarding) |
//! | VOICE-ADMIT | `101100` | 44 | RFC 5865 (capacity-admitted traffic) |
//! | LE          | `000001` | 1  | RFC 8622 (lower effort, pool 3) |
//! | NQB         | `101101` | 45 | RFC 9956 (non-queue-building, pool 3) |
//!
//! The table below is the single source of names for `Display` and
//! `FromStr`; a 64-entry index built at compile time makes name lookup one
//! array access.

/// A named code point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    /// The 6-bit value.
    pub(crate) value: u8,
    /// Upper-case IANA name.
    pub(crate) short: &'static str,
    /// Long, human name.
    pub(crate) long: &'static str,
}

const fn e(value: u8, short: &'static str, long: &'static str) -> Entry {
    Entry { value, short, long }
}

/// Every named code point, ordered by value.
pub(crate) const ENTRIES: [Entry; 24] = [
    e(0, "CS0", "Class Selector 0"),
    e(1, "LE", "Lower Effort"),
    e(8, "CS1", "Class Selector 1"),
    e(10, "AF11", "Assured Forwarding 11"),
    e(12, "AF12", "Assured Forwarding 12"),
    e(14, "AF13", "Assured Forwarding 13"),
    e(16, "CS2", "Class Selector 2"),
    e(18, "AF21", "Assured Forwarding 21"),
    e(20, "AF22", "Assured Forwarding 22"),
    e(22, "AF23", "Assured Forwarding 23"),
    e(24, "CS3", "Class Selector 3"),
    e(26, "AF31", "Assured Forwarding 31"),
    e(28, "AF32", "Assured Forwarding 32"),
    e(30, "AF33", "Assured Forwarding 33"),
    e(32, "CS4", "Class Selector 4"),
    e(34, "AF41", "Assured Forwarding 41"),
    e(36, "AF42", "Assured Forwarding 42"),
    e(38, "AF43", "Assured Forwarding 43"),
    e(40, "CS5", "Class Selector 5"),
    e(44, "VOICE-ADMIT", "Voice Admit"),
    e(45, "NQB", "Non-Queue-Building"),
    e(46, "EF", "Expedited Forwarding"),
    e(48, "CS6", "Class Selector 6"),
    e(56, "CS7", "Class Selector 7"),
];

/// Marks a value with no name in [`INDEX`].
const NONE: u8 = u8::MAX;

/// For each of the 64 values, its position in [`ENTRIES`] or [`NONE`].
const INDEX: [u8; 64] = {
    let mut index = [NONE; 64];
    let mut i = 0;
    while i < ENTRIES.len() {
        index[ENTRIES[i].value as usize] = i as u8;
        i += 1;
    }
    index
};

/// The entry for a 6-bit value, if it is named. Values above 63 have none.
pub(crate) const fn lookup(value: u8) -> Option<&'static Entry> {
    if value as usize >= INDEX.len() {
        return None;
    }
    let i = INDEX[value as usize];
    if i == NONE {
        None
    } else {
        Some(&ENTRIES[i as usize])
    }
}

/// The value named by `name` (short or long, any ASCII case), if any.
/// `BE`, `DF` and `DEFAULT` name 0 as well (RFC 2474 default forwarding).
pub(crate) fn find(name: &str) -> Option<u8> {
    const ALIASES: [(&str, u8); 4] = [
        ("BE", 0),
        ("DF", 0),
        ("DEFAULT", 0),
        ("Default Forwarding", 0),
    ];
    ENTRIES
        .iter()
        .find(|e| e.short.eq_ignore_ascii_case(name) || e.long.eq_ignore_ascii_case(name))
        .map(|e| e.value)
        .or_else(|| {
            ALIASES
                .iter()
                .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
                .map(|&(_, v)| v)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_matches_entries() {
        let mut named = 0;
        for v in 0..64u8 {
            if let Some(entry) = lookup(v) {
                assert_eq!(entry.value, v);
                named += 1;
            }
        }
        assert_eq!(named, ENTRIES.len());
        assert!(lookup(64).is_none());
        assert!(lookup(255).is_none());
    }

    #[test]
    fn entries_are_sorted_and_unique() {
        for pair in ENTRIES.windows(2) {
            assert!(pair[0].value < pair[1].value, "{pair:?}");
        }
    }

    #[test]
    fn find_ignores_case() {
        assert_eq!(find("ef"), Some(46));
        assert_eq!(find("expedited FORWARDING"), Some(46));
        assert_eq!(find("Voice-Admit"), Some(44));
        assert_eq!(find("default"), Some(0));
        assert_eq!(find("cs8"), None);
        assert_eq!(find(""), None);
    }
}
