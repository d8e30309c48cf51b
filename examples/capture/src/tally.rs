//! Counts for a tool's summary: segments by the encapsulations they were
//! carried in, frames skipped by reason.
//!
//! Segments are counted in a fixed table; a skipped frame is counted under
//! its [`Cause`] (the reason with its detail: which link type, which
//! EtherType, which header was cut), in a map that grows only with the
//! number of distinct causes, not with the number of frames.

use std::collections::BTreeMap;

use crate::encap::{EncapKind, NotIp, Skip, SkipReason, Tunnels, Unsupported};
use crate::error::DecodeError;

/// A skip reason with its detail and without its offsets: what frames are
/// counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// This link type is not decoded.
    LinkType(u32),
    /// This encapsulation is not decoded.
    Unsupported(Unsupported),
    /// The frame carries this instead of IP.
    NotIp(NotIp),
    /// The IP packet carries this protocol instead of TCP.
    NotTcp(u8),
    /// A later IP fragment.
    Fragment,
    /// This header was cut short.
    Truncated(&'static str),
    /// This header has an impossible field.
    Malformed(&'static str),
    /// Too many nested layers.
    TooDeep,
}

impl Cause {
    /// The group this cause is counted in.
    pub fn reason(&self) -> SkipReason {
        match self {
            Cause::LinkType(_) => SkipReason::LinkType,
            Cause::Unsupported(_) => SkipReason::Encapsulation,
            Cause::NotIp(_) => SkipReason::NotIp,
            Cause::NotTcp(_) => SkipReason::NotTcp,
            Cause::Fragment => SkipReason::Fragment,
            Cause::Truncated(_) => SkipReason::Truncated,
            Cause::Malformed(_) => SkipReason::Malformed,
            Cause::TooDeep => SkipReason::TooDeep,
        }
    }
}

impl From<&Skip> for Cause {
    fn from(s: &Skip) -> Cause {
        match *s {
            Skip::LinkType(t) => Cause::LinkType(t),
            Skip::Unsupported(u) => Cause::Unsupported(u),
            Skip::NotIp(n) => Cause::NotIp(n),
            Skip::NotTcp(p) => Cause::NotTcp(p),
            Skip::Fragment => Cause::Fragment,
            Skip::Decode(DecodeError::Truncated { layer, .. }) => Cause::Truncated(layer),
            Skip::Decode(DecodeError::Malformed { layer, .. }) => Cause::Malformed(layer),
            Skip::TooDeep => Cause::TooDeep,
        }
    }
}

/// Segments by encapsulation and skipped frames by cause.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    segments: u64,
    plain: u64,
    by_kind: [u64; EncapKind::ALL.len()],
    skipped: BTreeMap<Cause, u64>,
}

impl Tally {
    /// Counts a segment carried in `tunnels`: once as a segment, and once
    /// under each kind of layer it passed (a segment in VXLAN in GRE counts
    /// for both; twice through GRE counts once for GRE).
    #[inline]
    pub fn segment(&mut self, tunnels: &Tunnels<'_>) {
        self.segments += 1;
        if tunnels.is_empty() {
            self.plain += 1;
        } else {
            self.layers(tunnels);
        }
    }

    #[cold]
    #[inline(never)]
    fn layers(&mut self, tunnels: &Tunnels<'_>) {
        let mut seen = [false; EncapKind::ALL.len()];
        for kind in tunnels.kinds() {
            let i = kind.index();
            if !seen[i] {
                seen[i] = true;
                self.by_kind[i] += 1;
            }
        }
    }

    /// Counts a frame skipped for `cause`.
    pub fn skip(&mut self, cause: Cause) {
        *self.skipped.entry(cause).or_insert(0) += 1;
    }

    /// Segments counted.
    pub fn segments(&self) -> u64 {
        self.segments
    }

    /// Segments on a plain link (no layer).
    pub fn plain(&self) -> u64 {
        self.plain
    }

    /// Segments carried in a tunnel or encapsulation.
    pub fn encapsulated(&self) -> u64 {
        self.segments - self.plain
    }

    /// Per kind of layer, the segments that passed one, in
    /// [`EncapKind::ALL`] order; kinds with none left out.
    pub fn by_encapsulation(&self) -> impl Iterator<Item = (EncapKind, u64)> + '_ {
        EncapKind::ALL
            .iter()
            .zip(self.by_kind)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (*k, n))
    }

    /// Skipped frames per cause, in [`Cause`] order.
    pub fn skipped(&self) -> impl Iterator<Item = (Cause, u64)> + '_ {
        self.skipped.iter().map(|(c, n)| (*c, *n))
    }

    /// Frames skipped, all causes.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    /// Frames skipped for a reason that may hide TCP the decoder could not
    /// reach ([`SkipReason::is_unopened`]).
    pub fn unopened(&self) -> u64 {
        self.skipped()
            .filter(|(c, _)| c.reason().is_unopened())
            .map(|(_, n)| n)
            .sum()
    }

    /// Skipped frames per reason, in [`SkipReason`] order, reasons with none left out.
    pub fn by_reason(&self) -> BTreeMap<SkipReason, u64> {
        let mut m = BTreeMap::new();
        for (c, n) in self.skipped() {
            *m.entry(c.reason()).or_insert(0) += n;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::LINKTYPE_RAW;
    use crate::segment::decode_segment;

    #[test]
    fn counts_by_kind_and_cause() {
        let mut t = Tally::default();
        t.segment(&Tunnels::empty(&[]));
        let mut gre = vec![
            0x45, 0, 0, 64, 0, 1, 0, 0, 64, 47, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
        ];
        gre.extend_from_slice(&[0, 0, 0x08, 0x00]);
        gre.extend_from_slice(&[
            0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 198, 19, 0, 1, 198, 19, 0, 2,
        ]);
        gre.extend_from_slice(&[0; 20]);
        let seg = decode_segment(LINKTYPE_RAW, &gre, 64).unwrap();
        t.segment(&seg.tunnels);
        t.skip(Cause::LinkType(147));
        t.skip(Cause::LinkType(147));
        t.skip(Cause::NotTcp(17));
        assert_eq!((t.segments(), t.plain(), t.encapsulated()), (2, 1, 1));
        assert_eq!(
            t.by_encapsulation().collect::<Vec<_>>(),
            [(EncapKind::Gre, 1)]
        );
        assert_eq!(t.skipped_total(), 3);
        assert_eq!(t.unopened(), 2);
        assert_eq!(t.by_reason()[&SkipReason::LinkType], 2);
    }
}
