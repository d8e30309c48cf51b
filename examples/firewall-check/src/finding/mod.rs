//! What the analyses find: the one [`Finding`] type (its [`Kind`], the
//! [`Direction`] of the packets, how sure it is ([`Confidence`]), what
//! shows it ([`Evidence`]) and what it costs ([`Impact`])), and the typed
//! values a finding shows before and after a middlebox ([`FieldValue`]).
//! Every word and the JSON of a finding are the output stage's
//! (`crate::output::finding`, `crate::output::impact`).

pub mod confidence;
pub mod evidence;
pub mod impact;
pub mod kind;
pub mod value;

pub use confidence::Confidence;
pub use evidence::{CaptureSide, Cause, Compared, Evidence, Frames, TunnelAction, TunnelPoint};
pub use impact::{Cost, Impact};
pub use kind::{endpoint_json, nat_ends, nat_ends_text, Kind};
pub use value::{Address, FieldValue, Party};

use crate::conn::Direction;

/// One thing found: what, in which direction, how sure, what shows it and
/// what it costs.
///
/// `compare`'s findings are [`Confidence::High`]: each rests on the same
/// packet seen on both sides of the middlebox (or, for packets seen on one
/// side only, on what the other capture's wire shows of them), so no other
/// behaviour of a stack or a middlebox gives the same two captures. The
/// exceptions are tunnel kinds that a router on the underlay, or a fixed
/// outer DSCP that happens to equal the inner one, could also explain
/// (medium; see `analysis::compare::report::confidence_of`).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What was found.
    pub kind: Kind,
    /// The direction of the affected packets.
    pub direction: Direction,
    /// How sure the finding is.
    pub confidence: Confidence,
    /// What shows it.
    pub evidence: Evidence,
    /// What it costs.
    pub impact: Impact,
}

impl Finding {
    /// The evidence of a `compare` finding; `None` for other evidence.
    pub fn compared(&self) -> Option<&Compared> {
        match &self.evidence {
            Evidence::Compared(c) => Some(c),
        }
    }

    /// True when the finding says the middlebox changed the traffic and is
    /// sure of it (what makes the exit status 3).
    pub fn is_sure_tampering(&self) -> bool {
        self.kind.is_tampering() && self.confidence == Confidence::High
    }
}
