//! What the routers' quotes of one run show: how many quoted the whole
//! header, and which quoted only part of it (RFC 792: the first 8 TCP
//! bytes, ports and sequence number), so that a partial quote is never
//! counted as having seen what it does not hold.

use super::super::diff::Coverage;
use super::super::wire::IcmpError;

/// The quotes of one run, by how much they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteEvidence {
    /// Quotes of the whole TCP header (options included).
    pub full: usize,
    /// The partial quotes: (TTL, TCP bytes quoted), by TTL.
    pub partial: Vec<(u8, usize)>,
    /// The last hop (TTL) that quoted the whole header.
    pub last_full: Option<u8>,
    /// Each quote's TTL and coverage, by TTL.
    all: Vec<(u8, Coverage)>,
}

/// From which hop on the probe is unknown, after partial quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beyond {
    /// A hop after the partial ones quoted it in full: known throughout.
    Known,
    /// Unknown past the last hop that quoted it in full.
    Hop(u8),
    /// No hop quoted it in full.
    NoFullQuote,
}

impl QuoteEvidence {
    /// The evidence of `quotes` (by TTL).
    pub fn of(quotes: &[(u8, IcmpError)]) -> QuoteEvidence {
        let mut all: Vec<(u8, Coverage)> = quotes
            .iter()
            .map(|(t, e)| (*t, Coverage::of(&e.quote)))
            .collect();
        all.sort_by_key(|(t, _)| *t);
        let mut partial: Vec<(u8, usize)> = quotes
            .iter()
            .filter(|(_, e)| Coverage::of(&e.quote) != Coverage::Full)
            .map(|(t, e)| (*t, e.quote.quoted_len()))
            .collect();
        partial.sort_by_key(|(t, _)| *t);
        let full: Vec<u8> = all
            .iter()
            .filter(|(_, c)| *c == Coverage::Full)
            .map(|(t, _)| *t)
            .collect();
        QuoteEvidence {
            full: full.len(),
            partial,
            last_full: full.iter().max().copied(),
            all,
        }
    }

    /// The last hop whose quote shows what a test needing `needs` checks.
    pub fn last_covering(&self, needs: Coverage) -> Option<u8> {
        self.all
            .iter()
            .filter(|(_, c)| *c >= needs)
            .map(|(t, _)| *t)
            .max()
    }

    /// Whether the last hop that quoted the probe at all showed what the
    /// test checks (no quote at all: only the marks' tests, whose fields
    /// the answer's arrival does not show either, count as seen).
    pub fn covers_last(&self, needs: Coverage) -> bool {
        match self.all.last() {
            Some((_, c)) => *c >= needs,
            None => needs == Coverage::Partial,
        }
    }

    /// Past which hop the probe is unknown, when some hop quoted it in
    /// part (`None`: none did).
    pub fn beyond(&self) -> Option<Beyond> {
        let last = self.partial.last()?.0;
        Some(match self.last_full {
            Some(k) if k > last => Beyond::Known,
            Some(k) => Beyond::Hop(k),
            None => Beyond::NoFullQuote,
        })
    }

    /// The fewest TCP bytes a partial quote held.
    pub fn fewest_bytes(&self) -> usize {
        self.partial.iter().map(|(_, n)| *n).min().unwrap_or(0)
    }
}
