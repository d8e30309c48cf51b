//! Finding the same connection, and then the same packets, on both sides.
//!
//! Connections are paired on what survives a middlebox: the client's initial
//! sequence number (NAT and SYN proxies keep it), the timestamp values of the
//! SYN and SYN-ACK, the lengths and first bytes of data segments, the IPv4
//! identification of each segment, and, weakest, equal addresses and ports.
//! Evidence is gathered as the segments stream in ([`Evidence`]): each
//! [`Key`] a connection shows is looked up among the other capture's
//! connections that are still unpaired, and a pair is made as soon as its
//! [`Score`] reaches [`MIN_SCORE`] with at least one piece of content
//! evidence. Every weight is symmetric, so the result does not depend on the
//! order of the two files.
//!
//! Inside a pair, each direction is aligned packet by packet on
//! [`packet_key`]: flags, sequence number translated by the direction's
//! offset (from the SYNs, or mid-stream from the first data segment seen on
//! both sides with the same length and first bytes), acknowledgment number
//! translated by the other direction's offset, and payload length; then,
//! for what is left, without the acknowledgment number. Among waiting
//! packets with the same key (an original and its retransmission), one that
//! differs in an identifier the direction has always kept across the
//! middlebox (IPv4 identification, TSval) is never taken: it is another
//! copy, whose counterpart is still to come.

use std::hash::{Hash, Hasher};

use tcp_options::Flags;

use super::packet::Packet;
use super::report::MatchedOn;
use crate::conn::tracker::Direction;

/// Data segments per direction fingerprinted for connection matching.
pub const FINGERPRINTS: usize = 64;
/// IP identifications per direction used for connection matching.
pub const IDENTS: usize = 128;
/// Candidate connections kept per key and per connection.
pub const MAX_CANDIDATES: usize = 64;
/// Smallest score accepted as a match.
pub const MIN_SCORE: u32 = 10;

/// What a connection shows that its counterpart in the other capture shows too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// The client's initial sequence number.
    ClientIsn(u32),
    /// TSval of the SYN (client to server) or SYN-ACK.
    SynTsval(u32, Direction),
    /// A data segment: direction, payload length, fingerprint of its first bytes.
    Data(Direction, u32, u64),
    /// An IPv4 identification with the payload length.
    Ident(Direction, u32, u32),
}

/// A short fingerprint of payload bytes (std's default hasher with its
/// fixed keys: the same within a run, which is all matching needs).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// The matching keys of one segment, in direction `d`, each with the
/// segment's sequence number; `counts` are the data and identification
/// keys already taken from this connection.
pub fn keys_of(p: &Packet, d: Direction, counts: &mut Evidence, out: &mut Vec<(Key, u32)>) {
    let k = usize::from(d == Direction::ServerToClient);
    if p.is_syn() && d == Direction::ClientToServer && !counts.isn {
        counts.isn = true;
        out.push((Key::ClientIsn(p.seq), p.seq));
    }
    if p.has(Flags::SYN) && !counts.syn_ts[k] {
        counts.syn_ts[k] = true;
        if let Some((v, _)) = p.timestamps() {
            out.push((Key::SynTsval(v, d), p.seq));
        }
    }
    if p.payload_len > 0 && counts.data[k] < FINGERPRINTS {
        counts.data[k] += 1;
        out.push((
            Key::Data(d, p.payload_len, fingerprint(&p.payload_head)),
            p.seq,
        ));
    }
    if let Some(id) = p.ident() {
        if id != 0 && counts.idents[k] < IDENTS {
            counts.idents[k] += 1;
            out.push((Key::Ident(d, id, p.payload_len), p.seq));
        }
    }
}

/// How many keys of each sort a connection has offered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Evidence {
    isn: bool,
    syn_ts: [bool; 2],
    data: [usize; 2],
    idents: [usize; 2],
}

/// The evidence two connections share so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    /// Same client initial sequence number.
    pub isn: bool,
    /// Same SYN / SYN-ACK timestamp value.
    pub syn_ts: [bool; 2],
    /// Data segments with the same length and first bytes.
    pub data: u32,
    /// IP identifications in common.
    pub idents: u32,
    /// Same addresses and ports.
    pub tuple: bool,
    /// Per direction, the sequence offset (capture 1 minus capture 0) the
    /// first data or identification match showed: later ones count only
    /// when they agree (the same segment on both sides), so that repeated
    /// payloads and chance IP ID collisions in unrelated connections do
    /// not add up.
    pub delta: [Option<u32>; 2],
}

impl Score {
    /// Counts one key both connections showed; `delta` is the sequence
    /// offset between the two segments that showed it (capture 1 minus
    /// capture 0).
    pub fn add(&mut self, k: &Key, delta: u32) {
        let consistent = |s: &mut Score, d: &Direction| {
            let slot = &mut s.delta[usize::from(*d == Direction::ServerToClient)];
            match slot {
                None => {
                    *slot = Some(delta);
                    true
                }
                Some(x) => *x == delta,
            }
        };
        match k {
            Key::ClientIsn(_) => self.isn = true,
            Key::SynTsval(_, d) => self.syn_ts[usize::from(*d == Direction::ServerToClient)] = true,
            Key::Data(d, ..) => {
                if consistent(self, d) {
                    self.data += 1;
                }
            }
            Key::Ident(d, ..) => {
                if consistent(self, d) {
                    self.idents += 1;
                }
            }
        }
    }

    /// The pairing score, 0 without content evidence (equal addresses
    /// alone do not make two captures' connections one).
    pub fn value(&self) -> u32 {
        let mut score = 0;
        let mut content = false;
        if self.isn {
            score += 40;
            content = true;
        }
        for s in self.syn_ts {
            if s {
                score += 25;
                content = true;
            }
        }
        if self.data >= 2 {
            score += (self.data * 2).min(60);
            content = true;
        }
        if self.idents >= 3 {
            score += self.idents.min(30);
            content = true;
        }
        if self.tuple {
            score += 10;
        }
        if content {
            score
        } else {
            0
        }
    }

    /// What matched.
    pub fn matched_on(&self) -> Vec<MatchedOn> {
        let mut why = Vec::new();
        if self.isn {
            why.push(MatchedOn::ClientIsn);
        }
        if self.syn_ts[0] {
            why.push(MatchedOn::SynTsval);
        }
        if self.syn_ts[1] {
            why.push(MatchedOn::SynAckTsval);
        }
        if self.data >= 2 {
            why.push(MatchedOn::DataSegments(self.data));
        }
        if self.idents >= 3 {
            why.push(MatchedOn::IpIdentifications(self.idents));
        }
        if self.tuple {
            why.push(MatchedOn::SameAddresses);
        }
        why
    }
}

/// What packets are aligned on: flags, translated seq, translated ack, length.
pub type PacketKey = (u16, u32, u32, u32);

/// The alignment key of `p`, translated by `off_seq` / `off_ack`; the
/// acknowledgment number is left out when `with_ack` is false.
pub fn packet_key(p: &Packet, off_seq: u32, off_ack: u32, with_ack: bool) -> PacketKey {
    let flags = (p.flags & (Flags::SYN | Flags::FIN | Flags::RST | Flags::ACK)).bits();
    let ack = if with_ack && p.has(Flags::ACK) {
        p.ack.wrapping_add(off_ack)
    } else {
        0
    };
    (flags, p.seq.wrapping_add(off_seq), ack, p.payload_len)
}

/// Sequence ranges a capture saw carried in one direction, kept as a few
/// merged half-open intervals relative to the first sequence number seen
/// (so wrapping is handled by unwrapping into 64 bits).
#[derive(Debug, Clone, Default)]
pub struct Carried {
    base: Option<u32>,
    last: u64,
    ranges: Vec<(u64, u64)>,
}

/// Intervals kept per direction and capture; beyond it the lowest go.
const MAX_RANGES: usize = 64;

impl Carried {
    fn unwrap(&self, seq: u32) -> Option<u64> {
        let base = self.base?;
        let rel = u64::from(seq.wrapping_sub(base));
        // The candidate nearest to the last value seen.
        let epoch = self.last & !0xffff_ffff;
        let cands = [
            epoch.wrapping_sub(1 << 32).wrapping_add(rel),
            epoch + rel,
            epoch + (1 << 32) + rel,
        ];
        cands
            .into_iter()
            .filter(|c| *c < (1 << 62))
            .min_by_key(|c| c.abs_diff(self.last))
    }

    /// Records `len` bytes of sequence space from `seq`.
    pub fn insert(&mut self, seq: u32, len: u32) {
        if len == 0 {
            return;
        }
        if self.base.is_none() {
            // Leave room below for late retransmissions of earlier bytes.
            self.base = Some(seq.wrapping_sub(1 << 30));
            self.last = 1 << 30;
        }
        let Some(s) = self.unwrap(seq) else {
            return;
        };
        let e = s + u64::from(len);
        self.last = self.last.max(e);
        let mut merged = (s, e);
        self.ranges.retain(|&(a, b)| {
            if a <= merged.1 && merged.0 <= b {
                merged = (merged.0.min(a), merged.1.max(b));
                false
            } else {
                true
            }
        });
        let at = self.ranges.partition_point(|r| r.0 < merged.0);
        self.ranges.insert(at, merged);
        if self.ranges.len() > MAX_RANGES {
            self.ranges.remove(0);
        }
    }

    /// True when bytes up to `seq + len` or beyond were carried (the
    /// highest carried reaches the end of `[seq, seq + len)`).
    pub fn reaches(&self, seq: u32, len: u32) -> bool {
        self.unwrap(seq)
            .is_some_and(|s| self.base.is_some() && s + u64::from(len) <= self.last)
    }

    /// True when `[seq, seq + len)` was carried.
    pub fn covers(&self, seq: u32, len: u32) -> bool {
        let Some(s) = self.unwrap(seq) else {
            return false;
        };
        let e = s + u64::from(len);
        self.ranges.iter().any(|&(a, b)| a <= s && e <= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcp_options::seq::seq_ge;

    #[test]
    fn carried_ranges_merge_and_wrap() {
        let mut c = Carried::default();
        c.insert(u32::MAX - 99, 100);
        c.insert(0, 100);
        assert!(c.covers(u32::MAX - 50, 150));
        assert!(!c.covers(100, 1));
        c.insert(200, 100);
        assert!(!c.covers(50, 200), "a hole at 100..200");
        c.insert(100, 100);
        assert!(c.covers(50, 200));
    }

    #[test]
    fn score_needs_content() {
        let mut s = Score {
            tuple: true,
            ..Score::default()
        };
        assert_eq!(s.value(), 0);
        s.add(&Key::ClientIsn(5), 0);
        assert_eq!(s.value(), 50);
        // Data matches count only at one consistent offset.
        let d = Direction::ClientToServer;
        for (n, delta) in [(1, 7), (2, 9), (3, 7), (4, 7)] {
            s.add(&Key::Data(d, n, 0), delta);
        }
        assert_eq!(s.data, 3);
        assert_eq!(s.value(), 56);
        assert!(seq_ge(5, u32::MAX - 5));
        assert!(!seq_ge(u32::MAX - 5, 5));
    }
}
