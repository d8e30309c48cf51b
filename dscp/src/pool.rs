//! [`Pool`]: the three DSCP registry pools of RFC 2474 section 6.
//!
//! RFC 2474 splits the 64 code points by their low bits:
//!
//! | pool | pattern  | size | assignment policy |
//! |------|----------|------|-------------------|
//! | 1    | `xxxxx0` | 32   | Standards Action |
//! | 2    | `xxxx11` | 16   | Experimental or Local Use |
//! | 3    | `xxxx01` | 16   | Experimental or Local Use, opened to Standards Action by RFC 8436 (LE, RFC 8622, lives here) |

use core::fmt;

/// A DSCP registry pool (RFC 2474 section 6, RFC 8436).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pool {
    /// `xxxxx0`: standards action.
    Pool1,
    /// `xxxx11`: experimental or local use.
    Pool2,
    /// `xxxx01`: experimental or local use, and standards action since
    /// RFC 8436.
    Pool3,
}

impl Pool {
    /// The pool of a 6-bit value (only its two low bits matter).
    pub const fn of(value: u8) -> Pool {
        match value & 0b11 {
            0b01 => Pool::Pool3,
            0b11 => Pool::Pool2,
            _ => Pool::Pool1,
        }
    }

    /// The pool number: 1, 2 or 3.
    pub const fn number(self) -> u8 {
        match self {
            Pool::Pool1 => 1,
            Pool::Pool2 => 2,
            Pool::Pool3 => 3,
        }
    }

    /// True if the pool's code points are meant for experimental or local
    /// use only (pool 2).
    pub const fn is_local_use(self) -> bool {
        matches!(self, Pool::Pool2)
    }
}

impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pool {}", self.number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_sizes_match_rfc_2474() {
        // RFC 2474 section 6: pools of 32, 16 and 16 code points.
        let count = |p: Pool| (0..64u8).filter(|&v| Pool::of(v) == p).count();
        assert_eq!(count(Pool::Pool1), 32);
        assert_eq!(count(Pool::Pool2), 16);
        assert_eq!(count(Pool::Pool3), 16);
        assert_eq!(Pool::of(0b101110), Pool::Pool1);
        assert_eq!(Pool::of(0b000011), Pool::Pool2);
        assert_eq!(Pool::of(0b000001), Pool::Pool3);
    }
}
