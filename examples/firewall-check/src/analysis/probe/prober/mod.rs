//! The prober: what every test uses to send and receive.
//!
//! - [`io`]: the raw socket, the run's source ports, the inbox every
//!   packet of the run lands in (decoded once), waiting for what a test
//!   needs.
//! - [`sweep`]: many SYN tests at once, each copy TTL-limited or full,
//!   one wait for all of them ([`Prober::sweep`]).
//! - [`handshake`]: a connection for the tests that need one, our RSTs
//!   and ACKs.
//! - [`far_end`]: the reflector's capture of the forward probes.
//!
//! [`Path`] is what the path walk ([`super::tests::path`]) found: every
//! later test sends its TTL-limited copies up to the hop before the target
//! and waits only for the routers that answered the walk.

pub mod far_end;
pub mod handshake;
pub mod io;
pub mod sweep;

pub use super::report::progress::Progress;
pub use handshake::Handshake;
pub use io::{Arrival, Io};
pub use sweep::Flight;

use std::net::IpAddr;
use std::time::Duration;

/// What the path walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path {
    /// TTL at which the target answers (with `beyond`, `--max-ttl` + 1:
    /// the end of the probed hops, not the target's distance).
    pub len: Option<u8>,
    /// The target answered only a full copy: it is more than `--max-ttl`
    /// hops away, its distance unknown.
    pub beyond: bool,
    /// The routers that quoted the walk, by TTL.
    pub hops: Vec<(u8, IpAddr)>,
    /// SYN to SYN-ACK time of the copy that reached the target.
    pub rtt: Option<Duration>,
}

impl Path {
    /// The TTLs of the copies that stop short of the target: 1 to the hop
    /// before it (to `--max-ttl` when it is further).
    pub fn short_ttls(&self) -> std::ops::Range<u8> {
        1..self.len.unwrap_or(1)
    }

    /// Whether the router at `ttl` answered the walk (a router that did
    /// not is not waited for).
    pub fn answers(&self, ttl: u8) -> bool {
        self.hops.iter().any(|(t, _)| *t == ttl)
    }

    /// A hop as reported: the far end's observation (at the path's
    /// length) is no hop when the target is beyond `--max-ttl` (its TTL is
    /// not known).
    pub fn placed(&self, h: Option<(u8, IpAddr)>) -> Option<(u8, IpAddr)> {
        h.filter(|(t, _)| !(self.beyond && Some(*t) == self.len))
    }
}

/// The prober's state for one run.
pub struct Prober<'a> {
    /// Sockets, ports, inbox.
    pub io: Io<'a>,
    /// The path.
    pub path: Path,
    /// Largest TTL of the TTL-limited copies.
    pub max_ttl: u8,
    /// A SYN proxy answers the handshakes (learned from a reverse test:
    /// the reflector saw no SYN-ACK of the server's until the prober
    /// acknowledged the proxy's); later handshakes are completed at once.
    pub proxied: bool,
    /// The forward DSCP map (`dscp_all`).
    pub dscp_map: Vec<crate::analysis::probe::report::DscpMapEntry>,
    /// The server-to-client DSCP map (`reverse_dscp_all`).
    pub reverse_dscp_map: Vec<crate::analysis::probe::report::DscpMapEntry>,
    /// Changed values of the reverse map left unlocated (the reflector's
    /// packet budget).
    pub reverse_dscp_unlocated: usize,
    /// Progress on standard error.
    pub progress: Progress,
    /// This run's salt of the tests' identifications ([`Prober::tag`]).
    salt: u8,
}

impl<'a> Prober<'a> {
    /// A prober over `io`, copies up to `max_ttl`.
    pub fn new(io: Io<'a>, max_ttl: u8, progress: Progress) -> Prober<'a> {
        Prober {
            io,
            path: Path::default(),
            max_ttl,
            proxied: false,
            dscp_map: Vec::new(),
            reverse_dscp_map: Vec::new(),
            reverse_dscp_unlocated: 0,
            progress,
            salt: (random_u32() & 0x7f) as u8,
        }
    }

    /// The identification byte of the test at position `i`: its position
    /// salted for the run, so that a quote of another run's copy (a late
    /// ICMP error of the run before, to a source port this run reuses)
    /// does not name a test of this one.
    pub fn tag(&self, i: usize) -> u8 {
        (i as u8 ^ self.salt) & 0x7f
    }
}

/// The identification of a test's copy: the test's index, the copy's TTL
/// (a quote carries it back: the TTL of the copy it quotes).
pub fn ident(index: u8, ttl: u8) -> u16 {
    (u16::from(index) << 8) | u16::from(ttl)
}

/// The TTL a quote's identification names, whatever the test (0: not a
/// TTL-limited copy).
pub fn ttl_in(ident: u16) -> u8 {
    ident.to_be_bytes()[1]
}

/// The TTL a quote's identification names for the test `index`, if it is
/// one of that test's copies.
pub fn ttl_of(index: u8, ident: u16) -> Option<u8> {
    let [i, t] = ident.to_be_bytes();
    (i == index && t != 0).then_some(t)
}

/// A cheap random number from the clock and the process id (ports and
/// sequence numbers only need to differ between runs and tests).
pub fn random_u32() -> u32 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let x =
        n ^ (u64::from(std::process::id()) << 32) ^ COUNTER.fetch_add(0x9e37, Ordering::Relaxed);
    let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifications_carry_the_copy_s_ttl() {
        assert_eq!(ident(3, 2), 0x0302);
        assert_eq!(ttl_of(3, 0x0302), Some(2));
        assert_eq!(ttl_of(4, 0x0302), None);
        assert_eq!(ttl_of(3, 0x0300), None);
        let a: Vec<u32> = (0..100).map(|_| random_u32()).collect();
        let mut b = a.clone();
        b.sort_unstable();
        b.dedup();
        assert_eq!(a.len(), b.len());
    }
}
