//! TCP/IP header sizes per packet, and the MSS they leave in an MTU.
//!
//! IPv4 header 20 bytes (RFC 791, no options), IPv6 header 40 bytes
//! (RFC 8200, no extension headers), TCP header 20 bytes (RFC 9293), and the
//! timestamps option (RFC 7323) as Linux sends it on every segment: 10 bytes
//! padded with two NOPs to 12.

use crate::error::CalcError;
use crate::size::Bytes;

/// IPv4 header without options, bytes.
pub const IPV4_HEADER_LEN: u64 = 20;
/// IPv6 fixed header, bytes.
pub const IPV6_HEADER_LEN: u64 = 40;
/// TCP header without options, bytes.
pub const TCP_HEADER_LEN: u64 = 20;
/// The TCP timestamps option with its two NOPs of padding, bytes.
pub const TCP_TIMESTAMPS_LEN: u64 = 12;

/// The IP version of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IpVersion {
    /// IPv4 (20-byte header).
    #[default]
    V4,
    /// IPv6 (40-byte header).
    V6,
}

/// The TCP/IP headers carried by every full-sized data segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpIpHeaders {
    /// IP version.
    pub ip: IpVersion,
    /// Whether each segment carries the RFC 7323 timestamps option.
    pub timestamps: bool,
}

impl TcpIpHeaders {
    /// IPv4 + TCP, no options: 40 bytes.
    pub const IPV4: TcpIpHeaders = TcpIpHeaders {
        ip: IpVersion::V4,
        timestamps: false,
    };
    /// IPv4 + TCP with timestamps: 52 bytes.
    pub const IPV4_TIMESTAMPS: TcpIpHeaders = TcpIpHeaders {
        ip: IpVersion::V4,
        timestamps: true,
    };
    /// IPv6 + TCP, no options: 60 bytes.
    pub const IPV6: TcpIpHeaders = TcpIpHeaders {
        ip: IpVersion::V6,
        timestamps: false,
    };
    /// IPv6 + TCP with timestamps: 72 bytes.
    pub const IPV6_TIMESTAMPS: TcpIpHeaders = TcpIpHeaders {
        ip: IpVersion::V6,
        timestamps: true,
    };

    /// Header bytes per segment.
    pub const fn header_bytes(self) -> u64 {
        let ip = match self.ip {
            IpVersion::V4 => IPV4_HEADER_LEN,
            IpVersion::V6 => IPV6_HEADER_LEN,
        };
        ip + TCP_HEADER_LEN
            + if self.timestamps {
                TCP_TIMESTAMPS_LEN
            } else {
                0
            }
    }

    /// The data bytes one MTU-sized packet carries: `mtu - header_bytes()`.
    ///
    /// (With timestamps this is the effective send MSS, 12 bytes below the
    /// MSS option's value.) Errors if the MTU leaves no data byte.
    ///
    /// ```
    /// use bdp::{Bytes, TcpIpHeaders};
    /// assert_eq!(TcpIpHeaders::IPV4.mss(Bytes::new(1500))?, Bytes::new(1460));
    /// assert_eq!(TcpIpHeaders::IPV6_TIMESTAMPS.mss(Bytes::new(1500))?, Bytes::new(1428));
    /// # Ok::<(), bdp::CalcError>(())
    /// ```
    pub fn mss(self, mtu: Bytes) -> Result<Bytes, CalcError> {
        match mtu.get().checked_sub(self.header_bytes()) {
            Some(n) if n > 0 => Ok(Bytes::new(n)),
            _ => Err(CalcError::MtuTooSmall {
                mtu: mtu.get(),
                headers: self.header_bytes(),
            }),
        }
    }
}
