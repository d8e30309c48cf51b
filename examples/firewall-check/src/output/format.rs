//! Formatting helpers shared by the subcommands: hex, UTC dates, a
//! JSON-string escaper, thousands separators, rates and milliseconds
//! (flags and options print through tcp-options' own tcpdump-notation
//! `Display`).

use std::fmt;
use std::io::{self, Write};

use capture::Timestamp;

/// Writes `bytes` as lowercase hex without separators.
pub fn write_hex<W: Write + ?Sized>(w: &mut W, bytes: &[u8]) -> io::Result<()> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 64];
    for chunk in bytes.chunks(32) {
        for (i, b) in chunk.iter().enumerate() {
            buf[2 * i] = DIGITS[usize::from(b >> 4)];
            buf[2 * i + 1] = DIGITS[usize::from(b & 0x0f)];
        }
        w.write_all(&buf[..chunk.len() * 2])?;
    }
    Ok(())
}

/// Writes `v` in decimal without going through `core::fmt` (the hot path of `dump --json`).
pub fn write_u64<W: Write + ?Sized>(w: &mut W, mut v: u64) -> io::Result<()> {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    w.write_all(&buf[i..])
}

/// `addr:port` as `SocketAddr`'s `Display` writes it, without going
/// through `core::fmt`: `analyze` writes two per connection, and on the
/// many-connections benchmark capture (100,351 connections) `Display` took
/// a tenth of the run time (IPv6 4.5%, IPv4 5%). IPv6 follows `Ipv6Addr`'s
/// `Display` (RFC 5952: lowercase hex, the longest run of two or more zero
/// groups, the first of equal runs, as `::`; IPv4-mapped addresses as
/// `::ffff:a.b.c.d`; a scope id after `%`); the tests compare the two.
pub fn socket_addr(a: std::net::SocketAddr) -> String {
    let mut s = String::with_capacity(48);
    match a {
        std::net::SocketAddr::V4(v4) => push_ipv4(&mut s, *v4.ip()),
        std::net::SocketAddr::V6(v6) => {
            s.push('[');
            let ip = v6.ip();
            if let Some(v4) = ip.to_ipv4_mapped() {
                s.push_str("::ffff:");
                push_ipv4(&mut s, v4);
            } else {
                let seg = ip.segments();
                // The longest run of zero groups (the first of equal ones).
                let (mut best, mut best_len, mut cur, mut cur_len) = (0, 0, 0, 0);
                for (i, g) in seg.iter().enumerate() {
                    if *g == 0 {
                        if cur_len == 0 {
                            cur = i;
                        }
                        cur_len += 1;
                        if cur_len > best_len {
                            (best, best_len) = (cur, cur_len);
                        }
                    } else {
                        cur_len = 0;
                    }
                }
                let groups = |s: &mut String, part: &[u16]| {
                    for (i, g) in part.iter().enumerate() {
                        if i > 0 {
                            s.push(':');
                        }
                        push_hex(s, *g);
                    }
                };
                if best_len > 1 {
                    groups(&mut s, &seg[..best]);
                    s.push_str("::");
                    groups(&mut s, &seg[best + best_len..]);
                } else {
                    groups(&mut s, &seg);
                }
            }
            if v6.scope_id() != 0 {
                s.push('%');
                s.push_str(itoa::Buffer::new().format(v6.scope_id()));
            }
            s.push(']');
        }
    }
    s.push(':');
    s.push_str(itoa::Buffer::new().format(a.port()));
    s
}

fn push_ipv4(s: &mut String, ip: std::net::Ipv4Addr) {
    let mut b = itoa::Buffer::new();
    for (i, octet) in ip.octets().into_iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(b.format(octet));
    }
}

/// `v` in lowercase hex without leading zeros, as `{:x}` writes it.
fn push_hex(s: &mut String, v: u16) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut started = false;
    for shift in [12u32, 8, 4, 0] {
        let d = usize::from((v >> shift) & 0xf);
        if d != 0 || started || shift == 0 {
            started = true;
            s.push(char::from(DIGITS[d]));
        }
    }
}

/// Writes `v` (below 10^9) as exactly nine decimal digits, zero-padded.
pub fn write_padded9<W: Write + ?Sized>(w: &mut W, mut v: u32) -> io::Result<()> {
    let mut buf = [b'0'; 9];
    for b in buf.iter_mut().rev() {
        *b = b'0' + (v % 10) as u8;
        v /= 10;
    }
    w.write_all(&buf)
}

/// Days since 1970-01-01 to a (year, month, day) civil date (proleptic
/// Gregorian; the algorithm of H. Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Displays a timestamp as `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` UTC.
pub struct UtcTime(pub Timestamp);

impl fmt::Display for UtcTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.secs;
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:09}",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60,
            self.0.nanos
        )
    }
}

/// Writes a `Display` value as a JSON string body (quotes not included),
/// escaping as RFC 8259 requires, without allocating.
pub fn write_json_str<W: Write + ?Sized>(w: &mut W, value: &dyn fmt::Display) -> io::Result<()> {
    struct Escaper<'a, W: Write + ?Sized> {
        w: &'a mut W,
        err: Option<io::Error>,
    }
    impl<W: Write + ?Sized> fmt::Write for Escaper<'_, W> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let mut start = 0;
            let bytes = s.as_bytes();
            for (i, &b) in bytes.iter().enumerate() {
                let esc: Option<&[u8]> = match b {
                    b'"' => Some(b"\\\""),
                    b'\\' => Some(b"\\\\"),
                    b'\n' => Some(b"\\n"),
                    b'\r' => Some(b"\\r"),
                    b'\t' => Some(b"\\t"),
                    0..=0x1f => None,
                    _ => continue,
                };
                let r = self.w.write_all(&bytes[start..i]).and_then(|()| match esc {
                    Some(e) => self.w.write_all(e),
                    None => write!(self.w, "\\u{:04x}", b),
                });
                if let Err(e) = r {
                    self.err = Some(e);
                    return Err(fmt::Error);
                }
                start = i + 1;
            }
            self.w.write_all(&bytes[start..]).map_err(|e| {
                self.err = Some(e);
                fmt::Error
            })
        }
    }
    let mut esc = Escaper { w, err: None };
    match fmt::write(&mut esc, format_args!("{value}")) {
        Ok(()) => Ok(()),
        Err(_) => Err(esc
            .err
            .unwrap_or_else(|| io::Error::other("formatting failed"))),
    }
}

/// Formats an integer with thousands separators: `1,250,000`.
pub struct Thousands(pub u64);

impl fmt::Display for Thousands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut digits = [0u8; 20];
        let mut n = self.0;
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for i in (0..len).rev() {
            fmt::Write::write_char(f, char::from(digits[i]))?;
            if i > 0 && i % 3 == 0 {
                fmt::Write::write_char(f, ',')?;
            }
        }
        Ok(())
    }
}

/// A rate the tools measured or computed (a throughput, a ceiling), as
/// every report prints it: three significant digits (`bdp::Rounded`:
/// `52.4 Mbit/s`, `57.3 kbit/s`, `4.43 Gbit/s`, `191 bit/s`). A rate the
/// user gave (`--target-rate`) is printed as given.
pub fn rate_text(bps: u64) -> String {
    bdp::Rounded(bdp::BitsPerSecond::new(bps)).to_string()
}

/// A time the tools measured or computed (an RTT), as every report prints
/// it: three significant digits (`bdp::Rounded`: `10.2 ms`, `127 ms`,
/// `67.1 us`).
pub fn duration_text(d: std::time::Duration) -> String {
    bdp::Rounded(d).to_string()
}

/// Bytes of one output line gathered on the stack ([`Staged`]).
const STAGED_LINE: usize = 512;

/// Gathers the many small writes of one output line in a buffer on the
/// stack and hands them to `out` in one write ([`Staged::finish`]).
///
/// Each small write is a bounds check and a copy of known length, inlined
/// at its call site, whatever the optimizer decides about `out`'s own
/// `write_all` (a `BufWriter`'s, called out of line, costs a call and a
/// `memcpy` per piece: about a tenth of `dump --json`). A line longer than
/// the buffer goes to `out` in pieces, in order; the bytes written are the
/// same either way.
pub(crate) struct Staged<'w, W: Write + ?Sized> {
    out: &'w mut W,
    len: usize,
    buf: [u8; STAGED_LINE],
}

impl<'w, W: Write + ?Sized> Staged<'w, W> {
    /// An empty line in front of `out`.
    #[inline(always)]
    pub(crate) fn new(out: &'w mut W) -> Self {
        Staged {
            out,
            len: 0,
            buf: [0; STAGED_LINE],
        }
    }

    /// Writes what is gathered to `out`.
    #[inline(always)]
    pub(crate) fn finish(self) -> io::Result<()> {
        self.out.write_all(&self.buf[..self.len])
    }

    /// The line outgrew the buffer: what is gathered goes to `out`, then `bytes`.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(&self.buf[..self.len])?;
        self.len = 0;
        match self.buf.get_mut(..bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = bytes.len();
                Ok(())
            }
            None => self.out.write_all(bytes),
        }
    }
}

impl<W: Write + ?Sized> Write for Staged<'_, W> {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline(always)]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let end = self.len + bytes.len();
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = end;
                Ok(())
            }
            None => self.spill(bytes),
        }
    }

    /// Nothing: the line goes to `out` at [`Staged::finish`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_escape() {
        let mut v = Vec::new();
        write_hex(&mut v, &[0x00, 0xab, 0x10]).unwrap();
        assert_eq!(v, b"00ab10");
        let mut v = Vec::new();
        write_json_str(&mut v, &"a\"b\\c\n\x01").unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "a\\\"b\\\\c\\n\\u0001");
    }

    #[test]
    fn decimal_writers() {
        let mut v = Vec::new();
        for n in [0u64, 7, 10, 65_535, u64::MAX] {
            v.clear();
            write_u64(&mut v, n).unwrap();
            assert_eq!(String::from_utf8(v.clone()).unwrap(), n.to_string());
        }
        v.clear();
        write_padded9(&mut v, 1_000).unwrap();
        assert_eq!(v, b"000001000");
    }

    #[test]
    fn rates_and_durations() {
        // One rule for every report (it used to be two: analyze printed
        // 57.3 kbit/s and 4.4 Gbit/s, compare 57 kbit/s and 4.43 Gbit/s).
        assert_eq!(rate_text(999), "999 bit/s");
        assert_eq!(rate_text(57_300), "57.3 kbit/s");
        // The campus incident (DESIGN.md): 65,535 bytes per 10 ms.
        assert_eq!(rate_text(52_428_000), "52.4 Mbit/s");
        assert_eq!(rate_text(4_430_000_000), "4.43 Gbit/s");
        assert_eq!(rate_text(1_250_000_000_000), "1.25 Tbit/s");
        assert_eq!(
            duration_text(std::time::Duration::from_micros(10_940)),
            "10.9 ms"
        );
        // The thousands separator agrees with the old string-based one.
        for n in [0u64, 7, 999, 1_000, 65_535, 1_250_000, u64::MAX] {
            let s = n.to_string();
            let mut old = String::new();
            for (i, c) in s.chars().enumerate() {
                if i > 0 && (s.len() - i).is_multiple_of(3) {
                    old.push(',');
                }
                old.push(c);
            }
            assert_eq!(Thousands(n).to_string(), old);
        }
    }

    #[test]
    fn utc_dates() {
        // tcpdump's dns_tcp.out shows 1591780863.720289 as 2020-06-10 09:21:03.720289.
        let t = Timestamp {
            secs: 1_591_780_863,
            nanos: 720_289_000,
        };
        assert_eq!(UtcTime(t).to_string(), "2020-06-10 09:21:03.720289000");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn socket_addresses_as_display_writes_them() {
        use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};
        for a in [
            "0.0.0.0:0",
            "192.0.2.1:80",
            "255.255.255.255:65535",
            "[2001:db8::1]:443",
            "[::ffff:1.2.3.4]:9",
            "[::1.2.3.4]:9",
            "[::]:1",
            "[::1]:1",
            "[fe80::1%3]:22",
        ] {
            let a: SocketAddr = a.parse().unwrap();
            assert_eq!(socket_addr(a), a.to_string());
        }
        // Every pattern of zero and non-zero groups, with values of every width.
        let values = [0x1u16, 0xab, 0xf00, 0xbeef, 0xffff, 0x10];
        for pattern in 0u32..256 {
            let mut seg = [0u16; 8];
            for (i, g) in seg.iter_mut().enumerate() {
                if pattern >> i & 1 == 1 {
                    *g = values[(i + pattern as usize) % values.len()];
                }
            }
            let ip = Ipv6Addr::from(seg);
            for a in [
                SocketAddr::V6(SocketAddrV6::new(ip, 443, 0, 0)),
                SocketAddr::V6(SocketAddrV6::new(ip, 0, 7, 0)),
            ] {
                assert_eq!(socket_addr(a), a.to_string(), "{seg:x?}");
            }
        }
    }
}
