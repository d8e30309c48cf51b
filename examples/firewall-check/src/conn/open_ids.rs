//! The ids of the open connections, for the one question the tracker asks
//! of them: which is the oldest ([`crate::conn::tracker`] holds a finished
//! connection back while an earlier-started one is open).
//!
//! Ids are handed out in increasing order, so the set is a sorted queue:
//! adding is a push at the back, the oldest is the front, and removing one
//! is a binary search that marks it removed. Marked ids leave from the
//! front as the front is removed, and all at once when they outnumber the
//! others, so the queue holds at most about twice as many ids as are open,
//! and every operation costs amortised O(1) besides the O(log n) search.
//! (A `BTreeSet` did the same with a node allocation per few ids: 6% of
//! `analyze`'s CPU on the many-connections benchmark capture.)

use std::collections::VecDeque;

/// The high bit marks a removed id (ids are counters far below 2^63).
const REMOVED: u64 = 1 << 63;

/// A set of ids, added in increasing order. See the module documentation.
#[derive(Debug, Default, Clone)]
pub struct OpenIds {
    ids: VecDeque<u64>,
    removed: usize,
}

impl OpenIds {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `id`, which must be above every id added before; an id that is
    /// not (or that has the high bit set) is refused and `false` returned.
    pub fn push(&mut self, id: u64) -> bool {
        if id & REMOVED != 0 || self.ids.back().is_some_and(|&b| b & !REMOVED >= id) {
            return false;
        }
        self.ids.push_back(id);
        true
    }

    /// Removes `id`; `false` when it is not in the set.
    pub fn remove(&mut self, id: u64) -> bool {
        let Ok(i) = self.ids.binary_search_by_key(&id, |e| e & !REMOVED) else {
            return false;
        };
        if self.ids[i] & REMOVED != 0 {
            return false;
        }
        self.ids[i] |= REMOVED;
        self.removed += 1;
        while self.ids.front().is_some_and(|f| f & REMOVED != 0) {
            self.ids.pop_front();
            self.removed -= 1;
        }
        if self.removed > 32 && self.removed * 2 > self.ids.len() {
            self.ids.retain(|e| e & REMOVED == 0);
            self.removed = 0;
        }
        true
    }

    /// The smallest id in the set.
    pub fn first(&self) -> Option<u64> {
        // The front is never a removed id.
        self.ids.front().copied()
    }

    /// Ids in the set.
    pub fn len(&self) -> usize {
        self.ids.len() - self.removed
    }

    /// True when no id is in the set.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots held (ids in the set and removed ones not yet dropped).
    pub fn slots(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn oldest_open_id_is_first() {
        let mut s = OpenIds::new();
        for id in [3, 5, 9, 12] {
            assert!(s.push(id));
        }
        assert!(!s.push(12), "not above the last");
        assert!(!s.push(4));
        assert_eq!(s.first(), Some(3));
        assert!(s.remove(5));
        assert!(!s.remove(5), "already removed");
        assert!(!s.remove(6), "never added");
        assert_eq!(s.first(), Some(3));
        assert!(s.remove(3));
        assert_eq!(s.first(), Some(9));
        assert_eq!(s.len(), 2);
        assert!(s.remove(9) && s.remove(12));
        assert_eq!((s.first(), s.len(), s.slots()), (None, 0, 0));
        assert!(!s.push(REMOVED | 20));
    }

    #[test]
    fn one_long_lived_id_keeps_the_queue_small() {
        // Id 0 stays open while a million later ones open and close.
        let mut s = OpenIds::new();
        s.push(0);
        for id in 1..1_000_000u64 {
            s.push(id);
            assert!(s.remove(id));
            assert!(s.slots() <= 2 * s.len() + 34, "{} slots", s.slots());
        }
        assert_eq!((s.first(), s.len()), (Some(0), 1));
    }

    proptest! {
        /// The same answers as a `BTreeSet` on any sequence of pushes of
        /// new ids and removals.
        #[test]
        fn agrees_with_a_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..64), 0..400)) {
            let mut s = OpenIds::new();
            let mut model = BTreeSet::new();
            let mut next = 0u64;
            for (add, pick) in ops {
                if add {
                    prop_assert!(s.push(next));
                    model.insert(next);
                    next += 1 + pick % 3;
                } else {
                    let id = next.saturating_sub(pick);
                    prop_assert_eq!(s.remove(id), model.remove(&id));
                }
                prop_assert_eq!(s.first(), model.first().copied());
                prop_assert_eq!(s.len(), model.len());
                prop_assert!(s.slots() <= 2 * s.len() + 33);
            }
        }
    }
}
