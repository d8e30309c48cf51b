//! Classifiers: fixed tables from a DS-field marking to an output queue.
//!
//! A router's behaviour-aggregate classifier looks at a packet's DS field
//! and picks the output queue (forwarding class) it is served from. Two
//! kinds of table are common:
//!
//! - [`PrecedenceClassifier`]: 8 entries, indexed by the upper three bits of
//!   the byte (IP precedence). Older equipment, and the Juniper
//!   `precedence-map` of the QBSS deployment, classify this way; every DSCP
//!   then lands in the queue of its precedence, so EF (101110) is treated
//!   as precedence 5.
//! - [`DscpClassifier`]: 64 entries, indexed by the DSCP.
//!
//! Classification is one array index: the input cannot be out of range
//! because a `Dscp` is at most 63 and a `Precedence` at most 7, and the ECN
//! bits are dropped before indexing, so ECN marking never moves a packet to
//! another queue. Both tables are `const`-constructible, so a classifier can
//! live in flash on an embedded target:
//!
//! ```
//! use dscp::{Dscp, DscpClassifier};
//!
//! const VOICE_FIRST: DscpClassifier = DscpClassifier::uniform(1)
//!     .with(Dscp::EF, 0)
//!     .with(Dscp::VOICE_ADMIT, 0)
//!     .with(Dscp::LE, 2);
//! assert_eq!(VOICE_FIRST.queue(Dscp::EF), 0);
//! assert_eq!(VOICE_FIRST.queue(Dscp::AF41), 1);
//! assert_eq!(VOICE_FIRST.classify_byte(0x05), 2); // LE with ECT(1)
//! ```

use crate::ds_field::DsField;
use crate::dscp::Dscp;
use crate::precedence::Precedence;

/// Queue numbers of the Juniper QBSS deployment's forwarding classes.
///
/// The TransPAC routers used a four-queue weighted-round-robin profile:
/// best effort (weight 98), QBSS (weight 1), premium (weight 0, i.e. no
/// service) and network control (weight 1).
pub mod qbss {
    /// Queue 0: best effort.
    pub const BEST_EFFORT: u8 = 0;
    /// Queue 1: QBone Scavenger Service, precedence 001 (TOS 0x20, CS1).
    pub const SCAVENGER: u8 = 1;
    /// Queue 2: premium, precedence 011.
    pub const PREMIUM: u8 = 2;
    /// Queue 3: network control, precedence 110 and 111.
    pub const NETWORK_CONTROL: u8 = 3;
}

/// A table from IP precedence (8 entries) to a queue index.
///
/// ```
/// use dscp::{DsField, Precedence, PrecedenceClassifier};
///
/// let map = PrecedenceClassifier::juniper_qbss();
/// // A QBSS sender marks TOS 0x20: precedence 001, queue 1.
/// assert_eq!(map.classify_byte(0x20), 1);
/// assert_eq!(map.queue(Precedence::Flash), 2);
/// assert_eq!(map.classify(DsField::new(0xb8)), 0); // EF reads as precedence 5
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrecedenceClassifier {
    queues: [u8; 8],
}

impl PrecedenceClassifier {
    /// A classifier from its table: `queues[p]` is the queue of precedence `p`.
    pub const fn new(queues: [u8; 8]) -> Self {
        PrecedenceClassifier { queues }
    }

    /// Every precedence to `queue`.
    pub const fn uniform(queue: u8) -> Self {
        PrecedenceClassifier { queues: [queue; 8] }
    }

    /// The Juniper precedence map of the QBSS deployment: precedence 000,
    /// 010, 100 and 101 to queue 0 (best effort); 001 to queue 1 (QBSS);
    /// 011 to queue 2 (premium); 110 and 111 to queue 3 (network control).
    pub const fn juniper_qbss() -> Self {
        use qbss::*;
        PrecedenceClassifier::new([
            BEST_EFFORT,     // 000 routine
            SCAVENGER,       // 001 priority: QBSS
            BEST_EFFORT,     // 010 immediate
            PREMIUM,         // 011 flash
            BEST_EFFORT,     // 100 flash override
            BEST_EFFORT,     // 101 critic/ecp
            NETWORK_CONTROL, // 110 internetwork control
            NETWORK_CONTROL, // 111 network control
        ])
    }

    /// This table with `precedence` sent to `queue`; usable in `const`.
    pub const fn with(mut self, precedence: Precedence, queue: u8) -> Self {
        self.queues[precedence.value() as usize] = queue;
        self
    }

    /// Sends `precedence` to `queue`.
    pub fn set(&mut self, precedence: Precedence, queue: u8) {
        self.queues[usize::from(precedence.value())] = queue;
    }

    /// The queue of a precedence.
    pub const fn queue(&self, precedence: Precedence) -> u8 {
        self.queues[precedence.value() as usize]
    }

    /// The queue of a packet's DS field.
    pub const fn classify(&self, field: DsField) -> u8 {
        self.queue(field.precedence())
    }

    /// The queue of a packet's TOS / DS-field byte.
    pub const fn classify_byte(&self, byte: u8) -> u8 {
        self.queue(Precedence::from_tos_byte(byte))
    }

    /// The table, indexed by precedence value.
    pub const fn table(&self) -> &[u8; 8] {
        &self.queues
    }

    /// One more than the highest queue index used: how many queues a
    /// scheduler behind this classifier needs.
    pub const fn queue_count(&self) -> usize {
        max_plus_one(&self.queues)
    }
}

impl Default for PrecedenceClassifier {
    /// Everything to queue 0.
    fn default() -> Self {
        Self::uniform(0)
    }
}

/// A table from DSCP (64 entries) to a queue index.
///
/// ```
/// use dscp::{Dscp, DscpClassifier, PrecedenceClassifier};
///
/// // The QBSS precedence map, expanded to a DSCP table.
/// let table = DscpClassifier::from_precedence(&PrecedenceClassifier::juniper_qbss());
/// assert_eq!(table.queue(Dscp::CS1), 1);
/// assert_eq!(table.queue(Dscp::AF11), 1); // precedence 001 as well
/// // LE (000001) reads as precedence 000: a precedence map does not see it.
/// assert_eq!(table.queue(Dscp::LE), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DscpClassifier {
    queues: [u8; 64],
}

impl DscpClassifier {
    /// A classifier from its table: `queues[d]` is the queue of DSCP `d`.
    pub const fn new(queues: [u8; 64]) -> Self {
        DscpClassifier { queues }
    }

    /// Every DSCP to `queue`.
    pub const fn uniform(queue: u8) -> Self {
        DscpClassifier {
            queues: [queue; 64],
        }
    }

    /// The DSCP table that behaves like a precedence map: each DSCP goes to
    /// the queue of its upper three bits.
    pub const fn from_precedence(map: &PrecedenceClassifier) -> Self {
        let mut queues = [0u8; 64];
        let mut d = 0;
        while d < 64 {
            queues[d] = map.queues[d >> 3];
            d += 1;
        }
        DscpClassifier { queues }
    }

    /// This table with `dscp` sent to `queue`; usable in `const`.
    pub const fn with(mut self, dscp: Dscp, queue: u8) -> Self {
        self.queues[dscp.value() as usize] = queue;
        self
    }

    /// Sends `dscp` to `queue`.
    pub fn set(&mut self, dscp: Dscp, queue: u8) {
        self.queues[usize::from(dscp.value())] = queue;
    }

    /// The queue of a DSCP.
    pub const fn queue(&self, dscp: Dscp) -> u8 {
        self.queues[dscp.value() as usize]
    }

    /// The queue of a packet's DS field (ECN ignored).
    pub const fn classify(&self, field: DsField) -> u8 {
        self.queue(field.dscp())
    }

    /// The queue of a packet's TOS / DS-field byte (ECN ignored).
    pub const fn classify_byte(&self, byte: u8) -> u8 {
        self.classify(DsField::new(byte))
    }

    /// The table, indexed by DSCP value.
    pub const fn table(&self) -> &[u8; 64] {
        &self.queues
    }

    /// One more than the highest queue index used.
    pub const fn queue_count(&self) -> usize {
        max_plus_one(&self.queues)
    }
}

impl Default for DscpClassifier {
    /// Everything to queue 0.
    fn default() -> Self {
        Self::uniform(0)
    }
}

impl From<PrecedenceClassifier> for DscpClassifier {
    fn from(map: PrecedenceClassifier) -> Self {
        DscpClassifier::from_precedence(&map)
    }
}

const fn max_plus_one(queues: &[u8]) -> usize {
    let mut max = 0;
    let mut i = 0;
    while i < queues.len() {
        if queues[i] > max {
            max = queues[i];
        }
        i += 1;
    }
    max as usize + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn juniper_qbss_map_matches_the_deployment() {
        // The TransPAC QBSS precedence map (see DESIGN.md, incident 3):
        // 000, 010, 100, 101 -> 0; 001 -> 1; 011 -> 2; 110, 111 -> 3.
        let map = PrecedenceClassifier::juniper_qbss();
        let expected = [
            (0b000, 0),
            (0b001, 1),
            (0b010, 0),
            (0b011, 2),
            (0b100, 0),
            (0b101, 0),
            (0b110, 3),
            (0b111, 3),
        ];
        for (p, q) in expected {
            assert_eq!(
                map.queue(Precedence::new(p).unwrap()),
                q,
                "precedence {p:03b}"
            );
        }
        assert_eq!(map.queue_count(), 4);
        // QBSS traffic: TOS byte 0x20 (precedence 001, DSCP CS1).
        assert_eq!(map.classify_byte(0x20), qbss::SCAVENGER);
    }

    #[test]
    fn ecn_never_changes_the_queue() {
        let map = PrecedenceClassifier::juniper_qbss();
        let table = DscpClassifier::from_precedence(&map).with(Dscp::LE, 7);
        for byte in 0..=255u8 {
            let base = byte & DsField::DSCP_MASK;
            assert_eq!(map.classify_byte(byte), map.classify_byte(base));
            assert_eq!(table.classify_byte(byte), table.classify_byte(base));
        }
    }

    #[test]
    fn expanded_table_agrees_with_precedence_map_on_every_byte() {
        let map = PrecedenceClassifier::juniper_qbss();
        let table = DscpClassifier::from(map);
        for byte in 0..=255u8 {
            assert_eq!(
                table.classify_byte(byte),
                map.classify_byte(byte),
                "{byte:#04x}"
            );
        }
    }

    #[test]
    fn const_builders_and_setters_agree() {
        const T: DscpClassifier = DscpClassifier::uniform(3).with(Dscp::EF, 0);
        let mut u = DscpClassifier::uniform(3);
        u.set(Dscp::EF, 0);
        assert_eq!(T, u);
        assert_eq!(T.table().iter().filter(|&&q| q == 0).count(), 1);

        const P: PrecedenceClassifier =
            PrecedenceClassifier::uniform(0).with(Precedence::Priority, 1);
        let mut p = PrecedenceClassifier::default();
        p.set(Precedence::Priority, 1);
        assert_eq!(P, p);
        assert_eq!(P.queue_count(), 2);
    }
}
