//! Finding the same connection, and then the same packets, on both sides.
//!
//! Connections are paired on what survives a middlebox: the client's initial
//! sequence number (NAT and SYN proxies keep it), the timestamp values of the
//! SYN and SYN-ACK, the lengths and first bytes of data segments, the IPv4
//! identification of each segment, and, weakest, equal addresses and ports.
//! Every pairing score is symmetric and ties are broken on a key that does not
//! depend on which capture came first, so the result does not depend on the
//! order of the two files.
//!
//! Which capture is nearer the client is decided by the TTL / hop limit
//! (packets lose hops after crossing the middlebox), then by time.
//!
//! Inside a pair of connections, each direction is aligned packet by packet:
//! the sequence offset between the sides is taken from the SYN (or, mid-stream,
//! from the most common offset among data segments with equal payload), the
//! acknowledgment offset from the other direction's sequence offset, and the
//! packets are matched in order on (flags, translated seq, translated ack,
//! payload length), then again without the ack for what is left.

use std::collections::{HashMap, HashSet, VecDeque};

use super::conn::{Conn, Direction};
use super::packet::{Packet, ACK, FIN, RST, SYN};

/// Data segments per direction fingerprinted for connection matching.
const FINGERPRINTS: usize = 64;
/// IP identifications per direction used for connection matching.
const IDENTS: usize = 128;
/// Candidate connections scored per connection.
const MAX_CANDIDATES: usize = 64;
/// Smallest score accepted as a match.
pub const MIN_SCORE: u32 = 10;

/// Which part of a connection is seen, for the matching index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    ClientIsn(u32),
    SynTsval(u32, bool),
    Data(u32, u64),
    Tuple(std::net::IpAddr, u16, std::net::IpAddr, u16),
}

/// A short fingerprint of payload bytes (FNV-1a).
fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Packets of one direction, with `flipped` swapping the roles.
pub fn dir_of(c: &Conn, d: Direction, flipped: bool) -> &[usize] {
    if flipped {
        c.dir(d.reverse())
    } else {
        c.dir(d)
    }
}

/// What a connection offers for matching.
struct Summary {
    client_isn: Option<u32>,
    syn_tsval: [Option<u32>; 2],
    data: [HashMap<(u32, u64), u32>; 2],
    idents: [HashSet<(u32, u32)>; 2],
    tuple: (std::net::IpAddr, u16, std::net::IpAddr, u16),
}

fn summarize(c: &Conn, pk: &[Packet], flipped: bool) -> Summary {
    let mut s = Summary {
        client_isn: None,
        syn_tsval: [None, None],
        data: [HashMap::new(), HashMap::new()],
        idents: [HashSet::new(), HashSet::new()],
        tuple: if flipped {
            (c.server.0, c.server.1, c.client.0, c.client.1)
        } else {
            (c.client.0, c.client.1, c.server.0, c.server.1)
        },
    };
    for (k, d) in Direction::BOTH.into_iter().enumerate() {
        let mut seen_seq = HashSet::new();
        for &i in dir_of(c, d, flipped) {
            let p = &pk[i];
            if p.has(SYN) {
                if k == 0 && !p.has(ACK) && s.client_isn.is_none() {
                    s.client_isn = Some(p.seq);
                }
                if s.syn_tsval[k].is_none() {
                    s.syn_tsval[k] = p.timestamps().map(|t| t.0);
                }
            }
            if p.payload_len > 0 && s.data[k].len() < FINGERPRINTS && seen_seq.insert(p.seq) {
                *s.data[k]
                    .entry((p.payload_len, hash(&p.payload_head)))
                    .or_insert(0) += 1;
            }
            if let Some(id) = p.ident {
                if id != 0 && s.idents[k].len() < IDENTS {
                    s.idents[k].insert((id, p.payload_len));
                }
            }
        }
    }
    s
}

fn keys(s: &Summary) -> Vec<Key> {
    let mut k = Vec::new();
    if let Some(isn) = s.client_isn {
        k.push(Key::ClientIsn(isn));
    }
    for (i, t) in s.syn_tsval.iter().enumerate() {
        if let Some(v) = t {
            k.push(Key::SynTsval(*v, i == 0));
        }
    }
    for d in &s.data {
        let mut v: Vec<_> = d.keys().copied().collect();
        v.sort_unstable();
        k.extend(v.into_iter().take(8).map(|(l, h)| Key::Data(l, h)));
    }
    k.push(Key::Tuple(s.tuple.0, s.tuple.1, s.tuple.2, s.tuple.3));
    k
}

/// Symmetric pairing score and the evidence behind it.
fn score(x: &Summary, y: &Summary) -> (u32, Vec<String>) {
    let mut score = 0u32;
    let mut content = false;
    let mut why = Vec::new();
    if x.client_isn.is_some() && x.client_isn == y.client_isn {
        score += 40;
        content = true;
        why.push("client initial sequence number".to_string());
    }
    for (k, name) in [(0, "SYN"), (1, "SYN-ACK")] {
        if x.syn_tsval[k].is_some() && x.syn_tsval[k] == y.syn_tsval[k] {
            score += 25;
            content = true;
            why.push(format!("{name} timestamp value"));
        }
    }
    let mut common = 0u32;
    for k in 0..2 {
        for (fp, n) in &x.data[k] {
            if let Some(m) = y.data[k].get(fp) {
                common += (*n).min(*m);
            }
        }
    }
    if common >= 2 {
        score += (common * 2).min(60);
        content = true;
        why.push(format!("{common} data segments (length and first bytes)"));
    }
    let ids = (0..2)
        .map(|k| x.idents[k].intersection(&y.idents[k]).count() as u32)
        .sum::<u32>();
    if ids >= 3 {
        score += ids.min(30);
        content = true;
        why.push(format!("{ids} IP identifications"));
    }
    if x.tuple == y.tuple {
        score += 10;
        why.push("same addresses and ports".to_string());
    }
    if !content {
        // Equal addresses alone do not make two captures' connections one.
        return (0, why);
    }
    (score, why)
}

/// A connection of capture A paired with one of capture B.
#[derive(Debug, Clone)]
pub struct ConnPair {
    /// Index of the connection in capture A.
    pub a: usize,
    /// Index of the connection in capture B.
    pub b: usize,
    /// B's client and server are the other way round than A's.
    pub b_flipped: bool,
    /// Pairing score.
    pub score: u32,
    /// What matched.
    pub evidence: Vec<String>,
}

/// Pairs the connections of two captures (greedy, best score first).
pub fn pair_connections(ca: &[Conn], pa: &[Packet], cb: &[Conn], pb: &[Packet]) -> Vec<ConnPair> {
    let sa: Vec<Summary> = ca.iter().map(|c| summarize(c, pa, false)).collect();
    let sb: Vec<[Summary; 2]> = cb
        .iter()
        .map(|c| [summarize(c, pb, false), summarize(c, pb, true)])
        .collect();
    let mut index: HashMap<Key, Vec<(usize, bool)>> = HashMap::new();
    for (j, s) in sb.iter().enumerate() {
        for (f, sum) in s.iter().enumerate() {
            // A flipped view only for connections whose roles are guessed.
            if f == 1 && cb[j].handshake_seen {
                continue;
            }
            for k in keys(sum) {
                let v = index.entry(k).or_default();
                if v.len() < MAX_CANDIDATES {
                    v.push((j, f == 1));
                }
            }
        }
    }
    let mut cands: Vec<(u32, String, ConnPair)> = Vec::new();
    for (i, s) in sa.iter().enumerate() {
        let mut seen = HashSet::new();
        for k in keys(s) {
            for &(j, flipped) in index.get(&k).map(Vec::as_slice).unwrap_or(&[]) {
                if !seen.insert((j, flipped)) || seen.len() > MAX_CANDIDATES {
                    continue;
                }
                if flipped && ca[i].handshake_seen {
                    continue;
                }
                let (sc, why) = score(s, &sb[j][usize::from(flipped)]);
                if sc >= MIN_SCORE {
                    let la = format!(
                        "{}#{}",
                        ca[i].label(),
                        pa[ca[i]
                            .c2s
                            .first()
                            .or(ca[i].s2c.first())
                            .copied()
                            .unwrap_or(0)]
                        .frame
                    );
                    let lb = format!(
                        "{}#{}",
                        cb[j].label(),
                        pb[cb[j]
                            .c2s
                            .first()
                            .or(cb[j].s2c.first())
                            .copied()
                            .unwrap_or(0)]
                        .frame
                    );
                    let tie = if la <= lb {
                        format!("{la}|{lb}")
                    } else {
                        format!("{lb}|{la}")
                    };
                    cands.push((
                        sc,
                        tie,
                        ConnPair {
                            a: i,
                            b: j,
                            b_flipped: flipped,
                            score: sc,
                            evidence: why,
                        },
                    ));
                }
            }
        }
    }
    cands.sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
    let mut used_a = HashSet::new();
    let mut used_b = HashSet::new();
    let mut out = Vec::new();
    for (_, _, p) in cands {
        if used_a.contains(&p.a) || used_b.contains(&p.b) {
            continue;
        }
        used_a.insert(p.a);
        used_b.insert(p.b);
        out.push(p);
    }
    out
}

fn median(mut v: Vec<u8>) -> Option<u8> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[v.len() / 2])
}

/// Which capture of a pair is nearer the client: `Some(true)` for A,
/// `Some(false)` for B, `None` when neither TTL nor time tells; with what
/// decided it (`ttl`, `time`, `assumed`).
pub fn client_side_is_a(
    x: &Conn,
    pa: &[Packet],
    y: &Conn,
    pb: &[Packet],
    b_flipped: bool,
) -> (Option<bool>, &'static str) {
    let ttl = |c: &Conn, pk: &[Packet], d: Direction, flipped: bool| {
        median(dir_of(c, d, flipped).iter().map(|&i| pk[i].ttl).collect())
    };
    let mut votes = 0i32;
    if let (Some(a), Some(b)) = (
        ttl(x, pa, Direction::ClientToServer, false),
        ttl(y, pb, Direction::ClientToServer, b_flipped),
    ) {
        votes += (i32::from(a) - i32::from(b)).signum();
    }
    if let (Some(a), Some(b)) = (
        ttl(x, pa, Direction::ServerToClient, false),
        ttl(y, pb, Direction::ServerToClient, b_flipped),
    ) {
        votes -= (i32::from(a) - i32::from(b)).signum();
    }
    if votes != 0 {
        return (Some(votes > 0), "ttl");
    }
    // Same TTLs (a bridging firewall): the client's first packet is seen
    // first on the client's side, if the two clocks agree.
    let first = |c: &Conn, pk: &[Packet], flipped: bool| {
        dir_of(c, Direction::ClientToServer, flipped)
            .first()
            .and_then(|&i| pk[i].ts_ns)
    };
    match (first(x, pa, false), first(y, pb, b_flipped)) {
        (Some(a), Some(b)) if a != b => (Some(a < b), "time"),
        _ => (None, "assumed"),
    }
}

/// The sequence offset (after minus before) of one direction.
pub fn seq_offset(before: &[&Packet], after: &[&Packet]) -> u32 {
    let syn_b = before.iter().find(|p| p.has(SYN));
    let syn_a = after.iter().find(|p| p.has(SYN));
    if let (Some(b), Some(a)) = (syn_b, syn_a) {
        return a.seq.wrapping_sub(b.seq);
    }
    let mut by_fp: HashMap<(u32, u64), Vec<u32>> = HashMap::new();
    for p in after
        .iter()
        .filter(|p| p.payload_len > 0)
        .take(4 * FINGERPRINTS)
    {
        let v = by_fp
            .entry((p.payload_len, hash(&p.payload_head)))
            .or_default();
        if v.len() < 4 {
            v.push(p.seq);
        }
    }
    let mut votes: HashMap<u32, u32> = HashMap::new();
    for p in before
        .iter()
        .filter(|p| p.payload_len > 0)
        .take(4 * FINGERPRINTS)
    {
        if let Some(v) = by_fp.get(&(p.payload_len, hash(&p.payload_head))) {
            for s in v {
                *votes.entry(s.wrapping_sub(p.seq)).or_insert(0) += 1;
            }
        }
    }
    votes
        .into_iter()
        .max_by(|x, y| x.1.cmp(&y.1).then_with(|| y.0.cmp(&x.0)))
        .map(|(off, _)| off)
        .unwrap_or(0)
}

/// Result of aligning one direction.
#[derive(Debug, Clone, Default)]
pub struct Alignment {
    /// Matched (before index, after index) pairs, in order.
    pub matched: Vec<(usize, usize)>,
    /// Before-side packets with no counterpart.
    pub only_before: Vec<usize>,
    /// After-side packets with no counterpart.
    pub only_after: Vec<usize>,
}

type PacketKey = (u16, u32, u32, u32);

fn key(p: &Packet, off_seq: u32, off_ack: u32, with_ack: bool) -> PacketKey {
    let flags = (p.flags & (SYN | FIN | RST | ACK)).bits();
    let ack = if with_ack && p.has(ACK) {
        p.ack.wrapping_add(off_ack)
    } else {
        0
    };
    (flags, p.seq.wrapping_add(off_seq), ack, p.payload_len)
}

/// Matches packets of one direction in order (see the module docs).
pub fn align(before: &[&Packet], after: &[&Packet], off_seq: u32, off_ack: u32) -> Alignment {
    let mut b_done = vec![None::<usize>; before.len()];
    let mut a_done = vec![false; after.len()];
    for with_ack in [true, false] {
        let mut queues: HashMap<PacketKey, VecDeque<usize>> = HashMap::new();
        for (j, q) in after.iter().enumerate() {
            if !a_done[j] {
                queues
                    .entry(key(q, 0, 0, with_ack))
                    .or_default()
                    .push_back(j);
            }
        }
        for (i, p) in before.iter().enumerate() {
            if b_done[i].is_some() {
                continue;
            }
            if let Some(q) = queues.get_mut(&key(p, off_seq, off_ack, with_ack)) {
                if let Some(j) = q.pop_front() {
                    b_done[i] = Some(j);
                    a_done[j] = true;
                }
            }
        }
    }
    let mut out = Alignment::default();
    for (i, m) in b_done.iter().enumerate() {
        match m {
            Some(j) => out.matched.push((i, *j)),
            None => out.only_before.push(i),
        }
    }
    out.only_after = (0..after.len()).filter(|&j| !a_done[j]).collect();
    out
}
