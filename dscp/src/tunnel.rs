//! ECN through IP-in-IP tunnels (RFC 6040, updated by RFC 9601 for tunnels
//! with a shim header).
//!
//! At the tunnel ingress the outer header's ECN field is built from the
//! inner one ([`encapsulate`]); at the egress the inner header's ECN field
//! is rebuilt from both ([`decapsulate`]), so that a CE mark applied to
//! the outer header inside the tunnel reaches the receiver.
//!
//! Encapsulation, RFC 6040 Figure 3:
//!
//! | inner (arriving) | outer, normal mode | outer, compatibility mode |
//! |------------------|--------------------|---------------------------|
//! | Not-ECT          | Not-ECT            | Not-ECT |
//! | ECT(0)           | ECT(0)             | Not-ECT |
//! | ECT(1)           | ECT(1)             | Not-ECT |
//! | CE               | ECT(0)             | Not-ECT |
//!
//! Decapsulation, RFC 6040 Figure 4 (rows: arriving inner, columns:
//! arriving outer; `(!!!)`: a combination no compliant tunnel produces,
//! which the egress SHOULD log; `(!)`: MAY log):
//!
//! | inner \ outer | Not-ECT | ECT(0)       | ECT(1)       | CE           |
//! |---------------|---------|--------------|--------------|--------------|
//! | Not-ECT       | Not-ECT | Not-ECT (!!!)| Not-ECT (!!!)| drop (!!!)   |
//! | ECT(0)        | ECT(0)  | ECT(0)       | ECT(1)       | CE           |
//! | ECT(1)        | ECT(1)  | ECT(1) (!)   | ECT(1)       | CE           |
//! | CE            | CE      | CE           | CE (!!!)     | CE           |
//!
//! ```
//! use dscp::tunnel::{decapsulate, encapsulate, Decapsulation, EncapsulationMode};
//! use dscp::Ecn;
//!
//! // An ECT(0) packet enters the tunnel; a router inside marks the outer
//! // header CE; the egress carries the mark to the inner header.
//! let outer = encapsulate(Ecn::Ect0, EncapsulationMode::Normal);
//! assert_eq!(outer, Ecn::Ect0);
//! assert_eq!(decapsulate(Ecn::Ect0, Ecn::Ce), Decapsulation::Forward(Ecn::Ce));
//! // A Not-ECT packet whose outer header says CE cannot carry the mark:
//! // it is dropped, as the congested router would have dropped it.
//! assert_eq!(decapsulate(Ecn::NotEct, Ecn::Ce), Decapsulation::Drop);
//! ```

use crate::ds_field::DsField;
use crate::ecn::Ecn;

/// How the tunnel ingress builds the outer ECN field (RFC 6040 section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EncapsulationMode {
    /// Copy the inner ECN field, except that CE becomes ECT(0) (the outer
    /// header must not claim congestion the tunnel did not see; the inner
    /// header keeps the CE mark). The mode RFC 6040 requires by default.
    #[default]
    Normal,
    /// Outer Not-ECT whatever the inner field: for an egress that does not
    /// understand ECN (RFC 6040 section 4.1, compatibility mode).
    Compatibility,
}

/// The outer header's ECN field for a packet whose (inner) ECN field is
/// `inner` (RFC 6040 section 4.1, Figure 3).
pub const fn encapsulate(inner: Ecn, mode: EncapsulationMode) -> Ecn {
    match (mode, inner) {
        (EncapsulationMode::Compatibility, _) => Ecn::NotEct,
        (EncapsulationMode::Normal, Ecn::Ce) => Ecn::Ect0,
        (EncapsulationMode::Normal, other) => other,
    }
}

/// The outer DS field for an inner DS field: the outer DSCP is the
/// tunnel's choice, the ECN field comes from [`encapsulate`].
pub const fn encapsulate_field(
    inner: DsField,
    outer_dscp: crate::Dscp,
    mode: EncapsulationMode,
) -> DsField {
    DsField::from_parts(outer_dscp, encapsulate(inner.ecn(), mode))
}

/// How unexpected an arriving combination of inner and outer ECN is
/// (RFC 6040 section 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unexpected {
    /// `(!!!)`: currently unused; the egress SHOULD log it and MAY raise
    /// an alarm (it suggests a broken or malicious tunnel).
    ShouldLog,
    /// `(!)`: inner ECT(1) under outer ECT(0); the egress MAY log it.
    MayLog,
}

/// What the tunnel egress does with a packet (RFC 6040 section 4.2,
/// Figure 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decapsulation {
    /// Forward with this ECN field in the (inner) header.
    Forward(Ecn),
    /// Forward with this ECN field, and report the combination.
    ForwardUnexpected {
        /// The outgoing ECN field.
        ecn: Ecn,
        /// How loudly to report it.
        report: Unexpected,
    },
    /// Drop the packet: inner Not-ECT, outer CE. The transport cannot see
    /// a CE mark, so the congestion signal is the drop (`(!!!)`: also log).
    Drop,
}

impl Decapsulation {
    /// The outgoing ECN field, `None` for a drop.
    pub const fn ecn(self) -> Option<Ecn> {
        match self {
            Decapsulation::Forward(ecn) | Decapsulation::ForwardUnexpected { ecn, .. } => Some(ecn),
            Decapsulation::Drop => None,
        }
    }
}

/// The tunnel egress's decision for an arriving inner and outer ECN field
/// (RFC 6040 section 4.2, Figure 4, in full).
pub const fn decapsulate(inner: Ecn, outer: Ecn) -> Decapsulation {
    use Ecn::{Ce, Ect0, Ect1, NotEct};
    match (inner, outer) {
        (NotEct, NotEct) => Decapsulation::Forward(NotEct),
        (NotEct, Ect0 | Ect1) => Decapsulation::ForwardUnexpected {
            ecn: NotEct,
            report: Unexpected::ShouldLog,
        },
        (NotEct, Ce) => Decapsulation::Drop,
        (Ect0, NotEct | Ect0) => Decapsulation::Forward(Ect0),
        (Ect0, Ect1) => Decapsulation::Forward(Ect1),
        (Ect1, NotEct | Ect1) => Decapsulation::Forward(Ect1),
        (Ect1, Ect0) => Decapsulation::ForwardUnexpected {
            ecn: Ect1,
            report: Unexpected::MayLog,
        },
        (Ect0 | Ect1, Ce) => Decapsulation::Forward(Ce),
        (Ce, Ect1) => Decapsulation::ForwardUnexpected {
            ecn: Ce,
            report: Unexpected::ShouldLog,
        },
        (Ce, NotEct | Ect0 | Ce) => Decapsulation::Forward(Ce),
    }
}

/// The inner DS field after decapsulation: its DSCP kept, its ECN field
/// from [`decapsulate`]; `None` when the packet is to be dropped. (Whether
/// to also copy the outer DSCP is a tunnel's DSCP policy, not ECN's.)
pub const fn decapsulate_field(inner: DsField, outer: DsField) -> Option<DsField> {
    match decapsulate(inner.ecn(), outer.ecn()).ecn() {
        Some(ecn) => Some(inner.with_ecn(ecn)),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ecn::{Ce, Ect0, Ect1, NotEct};

    #[test]
    fn rfc6040_figure3_encapsulation() {
        // RFC 6040 Figure 3: (arriving, outer in compatibility mode,
        // outer in normal mode).
        let figure3 = [
            (NotEct, NotEct, NotEct),
            (Ect0, NotEct, Ect0),
            (Ect1, NotEct, Ect1),
            (Ce, NotEct, Ect0),
        ];
        for (inner, compat, normal) in figure3 {
            assert_eq!(encapsulate(inner, EncapsulationMode::Compatibility), compat);
            assert_eq!(encapsulate(inner, EncapsulationMode::Normal), normal);
        }
        assert_eq!(EncapsulationMode::default(), EncapsulationMode::Normal);
    }

    #[test]
    fn rfc6040_figure4_decapsulation_in_full() {
        // RFC 6040 Figure 4, row by row (arriving inner), columns in the
        // figure's order: outer Not-ECT, ECT(0), ECT(1), CE. `None` is
        // <drop>; the flag is (!!!) "S" or (!) "M".
        const S: Option<Unexpected> = Some(Unexpected::ShouldLog);
        const M: Option<Unexpected> = Some(Unexpected::MayLog);
        type Cell = (Option<Ecn>, Option<Unexpected>);
        let figure4: [(Ecn, [Cell; 4]); 4] = [
            (
                NotEct,
                [
                    (Some(NotEct), None),
                    (Some(NotEct), S),
                    (Some(NotEct), S),
                    (None, S),
                ],
            ),
            (
                Ect0,
                [
                    (Some(Ect0), None),
                    (Some(Ect0), None),
                    (Some(Ect1), None),
                    (Some(Ce), None),
                ],
            ),
            (
                Ect1,
                [
                    (Some(Ect1), None),
                    (Some(Ect1), M),
                    (Some(Ect1), None),
                    (Some(Ce), None),
                ],
            ),
            (
                Ce,
                [
                    (Some(Ce), None),
                    (Some(Ce), None),
                    (Some(Ce), S),
                    (Some(Ce), None),
                ],
            ),
        ];
        let columns = [NotEct, Ect0, Ect1, Ce];
        for (inner, row) in figure4 {
            for (outer, (ecn, flag)) in columns.into_iter().zip(row) {
                let d = decapsulate(inner, outer);
                assert_eq!(d.ecn(), ecn, "inner {inner} outer {outer}");
                let report = match d {
                    Decapsulation::ForwardUnexpected { report, .. } => Some(report),
                    // The drop cell is marked (!!!) in the figure.
                    Decapsulation::Drop => Some(Unexpected::ShouldLog),
                    Decapsulation::Forward(_) => None,
                };
                assert_eq!(report, flag, "inner {inner} outer {outer}");
            }
        }
    }

    #[test]
    fn a_mark_inside_the_tunnel_reaches_the_inner_header() {
        // Every ECN-capable packet, encapsulated in normal mode, marked CE
        // by a router inside the tunnel, leaves the egress CE; unmarked,
        // it leaves as it entered (a CE packet stays CE).
        for inner in Ecn::ALL {
            let outer = encapsulate(inner, EncapsulationMode::Normal);
            let unmarked = decapsulate(inner, outer);
            assert_eq!(unmarked, Decapsulation::Forward(inner), "{inner}");
            let marked = match outer.on_congestion() {
                crate::CongestionAction::MarkCe | crate::CongestionAction::AlreadyCe => Ce,
                crate::CongestionAction::Drop => continue,
            };
            assert_eq!(
                decapsulate(inner, marked),
                Decapsulation::Forward(Ce),
                "{inner}"
            );
        }
    }

    #[test]
    fn fields_keep_the_inner_dscp() {
        let inner = DsField::from_parts(crate::Dscp::EF, Ect1);
        let outer = encapsulate_field(inner, crate::Dscp::CS0, EncapsulationMode::Normal);
        assert_eq!(outer, DsField::from_parts(crate::Dscp::CS0, Ect1));
        let marked = outer.with_ecn(Ce);
        assert_eq!(
            decapsulate_field(inner, marked),
            Some(DsField::from_parts(crate::Dscp::EF, Ce))
        );
        let plain = DsField::from_parts(crate::Dscp::AF11, NotEct);
        assert_eq!(decapsulate_field(plain, marked), None);
    }
}
