//! Text in tcpdump's notation: [`core::fmt::Display`] for [`TcpOption`],
//! [`ParsedOption`] and [`Flags`], and [`OptionList`] for a whole block.
//!
//! The common options read exactly as tcpdump prints them (`mss 1460`,
//! `nop`, `wscale 7`, `sackOK`, `sack 1 {1000:2000}`, `TS val 1 ecr 0`,
//! `tfo cookiereq`, `exp-tfo cookie 0102...`, `unknown-99 0x0102`); SACK
//! edges are the absolute numbers on the wire (tcpdump's `-S`). Flags are
//! tcpdump's letters in brackets: `[S.]` for SYN+ACK, `[none]` when no flag
//! is set.
//!
//! ```
//! use tcp_options::{Flags, OptionList};
//! let syn = [0x02, 0x04, 0x05, 0xb4, 0x01, 0x03, 0x03, 0x07, 0x04, 0x02,
//!            0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 0];
//! assert_eq!(OptionList(&syn).to_string(),
//!            "mss 1460,nop,wscale 7,sackOK,TS val 1 ecr 0");
//! assert_eq!((Flags::SYN | Flags::ACK).to_string(), "[S.]");
//! ```

use core::fmt;

use crate::flags::Flags;
use crate::kind;
use crate::option::{ParsedOption, TcpOption};
use crate::walk::LinuxOptions;

fn hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    for b in bytes {
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

impl fmt::Display for TcpOption<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TcpOption::EndOfList => f.write_str("eol"),
            TcpOption::NoOperation => f.write_str("nop"),
            TcpOption::MaxSegmentSize(m) => write!(f, "mss {m}"),
            TcpOption::WindowScale(s) => write!(f, "wscale {s}"),
            TcpOption::SackPermitted => f.write_str("sackOK"),
            TcpOption::Sack(b) => {
                write!(f, "sack {} ", b.len())?;
                for blk in b.iter() {
                    write!(f, "{{{}:{}}}", blk.left, blk.right)?;
                }
                Ok(())
            }
            TcpOption::Timestamps(t) => write!(f, "TS val {} ecr {}", t.tsval, t.tsecr),
            TcpOption::Md5Signature(d) => {
                f.write_str("md5 ")?;
                hex(f, d)
            }
            TcpOption::UserTimeout(u) => {
                write!(f, "uto {}{}", u.timeout, if u.minutes { "m" } else { "s" })
            }
            TcpOption::TcpAo(a) => {
                write!(
                    f,
                    "tcp-ao keyid {} rnextkeyid {} mac 0x",
                    a.key_id, a.rnext_key_id
                )?;
                hex(f, a.mac)
            }
            TcpOption::Mptcp(m) => {
                write!(f, "mptcp {} ", m.data.len().saturating_add(2))?;
                match m.subtype_name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "subtype {}", m.subtype),
                }
            }
            TcpOption::FastOpen(o) => {
                let name = if o.kind == kind::FAST_OPEN {
                    "tfo"
                } else {
                    "exp-tfo"
                };
                if o.is_request() {
                    write!(f, "{name} cookiereq")
                } else {
                    write!(f, "{name} cookie ")?;
                    hex(f, o.cookie)
                }
            }
            TcpOption::AccEcn(a) => {
                write!(f, "accecn{}", if a.kind() == kind::ACCECN0 { 0 } else { 1 })?;
                for v in (0..a.field_count()).filter_map(|i| a.field(i)) {
                    write!(f, " {v}")?;
                }
                Ok(())
            }
            TcpOption::Experimental(e) => {
                match e.exid {
                    Some(x) => write!(f, "exp-{x:04x}")?,
                    None => f.write_str("exp")?,
                }
                if !e.data.is_empty() {
                    f.write_str(" 0x")?;
                    hex(f, e.data)?;
                }
                Ok(())
            }
            TcpOption::Unknown { kind, data } | TcpOption::Invalid { kind, data, .. } => {
                write!(f, "unknown-{kind}")?;
                if !data.is_empty() {
                    f.write_str(" 0x")?;
                    hex(f, data)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for ParsedOption<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.option, f)
    }
}

/// tcpdump's one-letter flag codes, in tcpdump's order.
const LETTERS: [(Flags, char); 9] = [
    (Flags::FIN, 'F'),
    (Flags::SYN, 'S'),
    (Flags::RST, 'R'),
    (Flags::PSH, 'P'),
    (Flags::ACK, '.'),
    (Flags::URG, 'U'),
    (Flags::ECE, 'E'),
    (Flags::CWR, 'W'),
    (Flags::AE, 'e'),
];

impl fmt::Display for Flags {
    /// `[S.]` for SYN+ACK, `[none]` for no flag (bits outside the nine
    /// flags are not shown). The alternate form `{:#}` leaves out the
    /// brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bracket = !f.alternate();
        if bracket {
            f.write_str("[")?;
        }
        if self.intersection(Flags::all()).is_empty() {
            f.write_str("none")?;
        }
        for (flag, c) in LETTERS {
            if self.contains(flag) {
                fmt::Write::write_char(f, c)?;
            }
        }
        if bracket {
            f.write_str("]")?;
        }
        Ok(())
    }
}

/// A whole option block in tcpdump's notation: the options of the
/// Linux-compatible walk ([`LinuxOptions`]) separated by commas, then
/// `[bad opt]` when the walk stopped at a framing error (as tcpdump ends
/// the list at an option whose length does not fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionList<'a>(pub &'a [u8]);

impl fmt::Display for OptionList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut it = LinuxOptions::new(self.0);
        let mut first = true;
        for o in it.by_ref() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            fmt::Display::fmt(&o.option, f)?;
        }
        if it.stopped().is_some() {
            if !first {
                f.write_str(",")?;
            }
            f.write_str("[bad opt]")?;
        }
        Ok(())
    }
}
