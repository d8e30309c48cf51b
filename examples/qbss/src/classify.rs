//! The classifier: DS field to output queue, a `dscp` crate table.

use dscp::{DscpClassifier, PrecedenceClassifier};

/// What a classifier table is indexed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassifierKind {
    /// IP precedence (8 entries), as the Juniper `precedence-map`.
    Precedence,
    /// DSCP (64 entries).
    Dscp,
}

impl ClassifierKind {
    /// Entries of a table of this kind.
    pub fn entries(self) -> usize {
        match self {
            ClassifierKind::Precedence => 8,
            ClassifierKind::Dscp => 64,
        }
    }

    /// What one entry stands for.
    pub fn name(self) -> &'static str {
        match self {
            ClassifierKind::Precedence => "precedence",
            ClassifierKind::Dscp => "DSCP",
        }
    }
}

/// A behaviour-aggregate classifier: the `dscp` crate's precedence or DSCP table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classifier {
    /// By precedence.
    Precedence(PrecedenceClassifier),
    /// By DSCP.
    Dscp(DscpClassifier),
}

impl Classifier {
    /// The Juniper precedence-map of the TransPAC QBSS deployment.
    pub fn juniper_qbss() -> Self {
        Classifier::Precedence(PrecedenceClassifier::juniper_qbss())
    }

    /// A table of `kind` (the slice has `kind.entries()` queue numbers; missing
    /// entries map to queue 0).
    pub fn from_table(kind: ClassifierKind, table: &[u8]) -> Self {
        match kind {
            ClassifierKind::Precedence => {
                let mut t = [0u8; 8];
                t.iter_mut().zip(table).for_each(|(d, s)| *d = *s);
                Classifier::Precedence(PrecedenceClassifier::new(t))
            }
            ClassifierKind::Dscp => {
                let mut t = [0u8; 64];
                t.iter_mut().zip(table).for_each(|(d, s)| *d = *s);
                Classifier::Dscp(DscpClassifier::new(t))
            }
        }
    }

    /// The queue of a packet with DS field `ds`.
    #[inline]
    pub fn queue(&self, ds: u8) -> u8 {
        match self {
            Classifier::Precedence(c) => c.classify_byte(ds),
            Classifier::Dscp(c) => c.classify_byte(ds),
        }
    }

    /// The highest queue the table uses.
    pub fn max_queue(&self) -> Option<u8> {
        match self {
            Classifier::Precedence(c) => c.table().iter().copied().max(),
            Classifier::Dscp(c) => c.table().iter().copied().max(),
        }
    }
}
