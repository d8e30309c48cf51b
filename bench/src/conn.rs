//! One connection's fixed facts, drawn when it is created; both traffic
//! shapes start from them.
//!
//! The draws, in this order, each from the generator ([`crate::Rng`]):
//!
//! | fact | draw | mix |
//! |------|------|-----|
//! | family | uniform in [0, 1) below 0.4 | 40% IPv6, 60% IPv4 |
//! | client port | 1024 + uniform 0..60000 | |
//! | server port | 5001 + uniform 0..10 | (the SYN scan redraws it: 1..=65535) |
//! | DS field | uniform in [0, 1) | 60% 0x00 (best effort), 15% 0x20 (CS1, QBSS/LE-like), 15% 0x02 (ECT(0)), 10% 0x88 (AF41) |
//! | client ISN, server ISN | 32 random bits each | |
//! | option layout | uniform in [0, 1) | 70% [`Layout::Linux`], 20% [`Layout::Windows`], 10% [`Layout::LinuxNoWindowScale`] |
//! | exchanges | uniform 5..200 | data/ACK exchanges before the close (long flows) |
//! | IPv4 identification | 16 random bits | the first packet sends it plus one |
//! | client and server timestamp base | 31 random bits each | TSval = base + milliseconds of capture time |
//! | RTT class | one of 0.5, 2, 10, 40, 150 ms, equally likely | drawn and kept as the Python generator did; as there, it does not shape the timing (records are spaced 1-19 us apart whatever the connection) |
//!
//! The rest follows from those: addresses and MACs from the connection's
//! index (client 198.18.x.y or 2001:db8:1::idx+1, server 198.19.0.n or
//! 2001:db8:2::n with n = idx mod 50 + 1), MSS 1460 (IPv4) or 1440 (IPv6),
//! window-scale shift 7 ([`Layout::LinuxNoWindowScale`]: none is
//! negotiated), SYN window 64800 (Windows 64240), SYN-ACK window 65160,
//! timestamps on every segment unless the layout is Windows', SACK
//! permitted always.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rand::RngExt;
use tcp_options::kind::MAX_OPTIONS_LEN;
use tcp_options::{OptionsBuilder, SackBlock};

use crate::error::GenError;
use crate::Rng;

/// Share of connections over IPv6.
pub const IPV6_SHARE: f64 = 0.4;
/// DS field of best effort.
pub const DS_BEST_EFFORT: u8 = 0x00;
/// DS field CS1 (precedence 1, TOS 0x20): the QBSS / lower-effort class.
pub const DS_CS1: u8 = 0x20;
/// DS field with ECN ECT(0) and DSCP 0.
pub const DS_ECT0: u8 = 0x02;
/// DS field AF41 (DSCP 34).
pub const DS_AF41: u8 = 0x88;
/// The DS mix: each field with the cumulative share below which a draw
/// picks it.
pub const DS_MIX: [(f64, u8); 4] = [
    (0.6, DS_BEST_EFFORT),
    (0.75, DS_CS1),
    (0.9, DS_ECT0),
    (1.0, DS_AF41),
];
/// The layout mix, cumulative as [`DS_MIX`].
pub const LAYOUT_MIX: [(f64, Layout); 3] = [
    (0.7, Layout::Linux),
    (0.9, Layout::Windows),
    (1.0, Layout::LinuxNoWindowScale),
];
/// The RTT classes, in microseconds.
pub const RTT_CLASSES_US: [u32; 5] = [500, 2_000, 10_000, 40_000, 150_000];
/// Window-scale shift the hosts offer.
pub const WINDOW_SCALE: u8 = 7;
/// MSS over IPv4 (Ethernet MTU 1500).
pub const MSS_V4: u16 = 1460;
/// MSS over IPv6 as the generator has always written it.
pub const MSS_V6: u16 = 1440;
/// Window of a Linux client's SYN.
pub const SYN_WINDOW_LINUX: u16 = 64800;
/// Window of a Windows client's SYN.
pub const SYN_WINDOW_WINDOWS: u16 = 64240;
/// Window of the server's SYN-ACK.
pub const SYN_ACK_WINDOW: u16 = 65160;
/// MAC address of the server side.
pub const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0x01, 0, 0x01];

/// How a host lays out its SYN options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Linux: MSS, SACK-Permitted, Timestamps, NOP, Window Scale
    /// ([`OptionsBuilder`]'s own layout).
    Linux,
    /// Windows: MSS, NOP, Window Scale, NOP, NOP, SACK-Permitted; no
    /// timestamps.
    Windows,
    /// Linux's layout with the Window Scale option replaced by NOPs, as a
    /// middlebox strips it (the campus firewall of the design notes):
    /// written with [`tcp_options::rewrite::remove_window_scale`].
    LinuxNoWindowScale,
}

/// One side of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// MAC address.
    pub mac: [u8; 6],
    /// IP address.
    pub addr: IpAddr,
    /// TCP port.
    pub port: u16,
}

/// A connection's fixed facts (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// Its index: the order of creation, from 0.
    pub index: u64,
    /// The client (sends the SYN).
    pub client: Endpoint,
    /// The server.
    pub server: Endpoint,
    /// The DS field of every packet (IPv4 TOS byte or IPv6 traffic class).
    pub ds_field: u8,
    /// The client's initial sequence number.
    pub client_isn: u32,
    /// The server's initial sequence number.
    pub server_isn: u32,
    /// Its SYN option layout (both sides use it).
    pub layout: Layout,
    /// MSS both sides announce.
    pub mss: u16,
    /// Window-scale shift in effect (0 when none was negotiated).
    pub window_scale: u8,
    /// Window of the client's SYN.
    pub client_window: u16,
    /// Window of the server's SYN-ACK.
    pub server_window: u16,
    /// Data/ACK exchanges before the close (long flows).
    pub exchanges: u32,
    /// IPv4 identification of the last packet sent (either side).
    pub ip_id: u16,
    /// Client timestamp base.
    pub ts_client: u32,
    /// Server timestamp base.
    pub ts_server: u32,
    /// The RTT class drawn (module docs: it shapes nothing).
    pub rtt_us: u32,
}

/// The first entry of a cumulative mix whose bound is above `r`.
fn pick<T: Copy>(mix: &[(f64, T)], r: f64) -> T {
    mix.iter()
        .find(|(bound, _)| r < *bound)
        .or(mix.last())
        .map(|(_, v)| *v)
        .expect("a mix is not empty")
}

impl Connection {
    /// Draw connection number `index` (module docs).
    pub fn draw(rng: &mut Rng, index: u64) -> Self {
        let ipv6 = rng.random::<f64>() < IPV6_SHARE;
        let (client_addr, server_addr) = addresses(ipv6, index);
        let client_port = 1024 + rng.random_range(0..60000u16);
        let server_port = 5001 + rng.random_range(0..10u16);
        let ds_field = pick(&DS_MIX, rng.random::<f64>());
        let client_isn = rng.random::<u32>();
        let server_isn = rng.random::<u32>();
        let layout = pick(&LAYOUT_MIX, rng.random::<f64>());
        let exchanges = rng.random_range(5..200u32);
        let ip_id = rng.random::<u16>();
        let ts_client = rng.random::<u32>() >> 1;
        let ts_server = rng.random::<u32>() >> 1;
        let rtt_us = RTT_CLASSES_US[rng.random_range(0..RTT_CLASSES_US.len())];
        let [.., hi, lo] = (index as u16).to_be_bytes();
        Connection {
            index,
            client: Endpoint {
                mac: [0x02, 0, 0, 0, hi, lo],
                addr: client_addr,
                port: client_port,
            },
            server: Endpoint {
                mac: SERVER_MAC,
                addr: server_addr,
                port: server_port,
            },
            ds_field,
            client_isn,
            server_isn,
            layout,
            mss: if ipv6 { MSS_V6 } else { MSS_V4 },
            window_scale: match layout {
                Layout::LinuxNoWindowScale => 0,
                _ => WINDOW_SCALE,
            },
            client_window: match layout {
                Layout::Windows => SYN_WINDOW_WINDOWS,
                _ => SYN_WINDOW_LINUX,
            },
            server_window: SYN_ACK_WINDOW,
            exchanges,
            ip_id,
            ts_client,
            ts_server,
            rtt_us,
        }
    }

    /// Over IPv6.
    pub fn is_ipv6(&self) -> bool {
        self.client.addr.is_ipv6()
    }

    /// Whether every segment carries timestamps (not in Windows' layout).
    pub fn timestamps(&self) -> bool {
        self.layout != Layout::Windows
    }

    /// The options of a SYN or SYN-ACK in the connection's layout, with
    /// these timestamp values. [`Layout::LinuxNoWindowScale`] gets Linux's
    /// block, Window Scale included: the frame strips it
    /// ([`crate::frame::Segment::strip_window_scale`]), as the middlebox
    /// would.
    pub fn syn_options(&self, tsval: u32, tsecr: u32) -> Result<OptionBlock, GenError> {
        let mut block = OptionBlock::new();
        match self.layout {
            Layout::Linux | Layout::LinuxNoWindowScale => block.push(
                &OptionsBuilder::new()
                    .mss(self.mss)
                    .sack_permitted()
                    .timestamps(tsval, tsecr)
                    .window_scale(WINDOW_SCALE),
            )?,
            Layout::Windows => {
                // MSS, NOP, WS (the builder's order without timestamps and
                // SACK-Permitted), then NOP, NOP, SACK-Permitted.
                block.push(
                    &OptionsBuilder::new()
                        .mss(self.mss)
                        .window_scale(WINDOW_SCALE),
                )?;
                block.push(&OptionsBuilder::new().sack_permitted())?;
            }
        }
        Ok(block)
    }

    /// The options of a segment after the handshake: timestamps when the
    /// layout has them, and these SACK blocks (at most 3).
    pub fn data_options(
        &self,
        tsval: u32,
        tsecr: u32,
        sack: &[SackBlock],
    ) -> Result<OptionBlock, GenError> {
        let mut b = OptionsBuilder::new().sack_blocks(sack);
        if self.timestamps() {
            b = b.timestamps(tsval, tsecr);
        }
        let mut block = OptionBlock::new();
        block.push(&b)?;
        Ok(block)
    }
}

/// An option block of at most 40 bytes, written by
/// [`OptionsBuilder::write`], one builder after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionBlock {
    bytes: [u8; MAX_OPTIONS_LEN],
    len: usize,
}

impl OptionBlock {
    /// No options.
    pub const fn new() -> Self {
        OptionBlock {
            bytes: [0; MAX_OPTIONS_LEN],
            len: 0,
        }
    }

    /// Append what `builder` writes (whole 32-bit words); an error if the
    /// block would pass 40 bytes.
    pub fn push(&mut self, builder: &OptionsBuilder<'_>) -> Result<(), GenError> {
        let rest = self.bytes.get_mut(self.len..).unwrap_or_default();
        self.len += builder.write(rest)?;
        Ok(())
    }

    /// The block as on the wire.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Default for OptionBlock {
    fn default() -> Self {
        OptionBlock::new()
    }
}

/// Client and server addresses of connection `index`.
fn addresses(ipv6: bool, index: u64) -> (IpAddr, IpAddr) {
    let server_n = (index % 50 + 1) as u16;
    if ipv6 {
        let c = (index + 1) as u32;
        let client = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, (c >> 16) as u16, c as u16);
        let server = Ipv6Addr::new(0x2001, 0xdb8, 2, 0, 0, 0, 0, server_n);
        (IpAddr::V6(client), IpAddr::V6(server))
    } else {
        let [.., hi, lo] = (index as u16).to_be_bytes();
        let client = Ipv4Addr::new(198, 18, hi, lo);
        let server = Ipv4Addr::new(198, 19, 0, server_n as u8);
        (IpAddr::V4(client), IpAddr::V4(server))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_layout(layout: Layout) -> Connection {
        let mut c = Connection::draw(&mut crate::rng(1), 0);
        c.layout = layout;
        c.mss = MSS_V4;
        c
    }

    /// The SYN layouts byte for byte, as the Python generator packed them
    /// (Linux's is `tcp_options_write`'s; Windows' as Windows 10 sends it).
    #[test]
    fn syn_layouts() {
        let ts = [0, 0, 0, 9, 0, 0, 0, 3];
        let linux = with_layout(Layout::Linux).syn_options(9, 3).unwrap();
        let mut want = vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10];
        want.extend_from_slice(&ts);
        want.extend_from_slice(&[1, 3, 3, 7]);
        assert_eq!(linux.as_slice(), want);
        let windows = with_layout(Layout::Windows).syn_options(9, 3).unwrap();
        assert_eq!(
            windows.as_slice(),
            [2, 4, 0x05, 0xb4, 1, 3, 3, 7, 1, 1, 4, 2]
        );
        // Stripped later, by the frame.
        let nows = with_layout(Layout::LinuxNoWindowScale)
            .syn_options(9, 3)
            .unwrap();
        assert_eq!(nows, linux);
    }

    #[test]
    fn data_options_follow_the_layout() {
        let blocks = [SackBlock {
            left: 10,
            right: 20,
        }];
        let linux = with_layout(Layout::Linux)
            .data_options(9, 3, &blocks)
            .unwrap();
        assert_eq!(
            linux.as_slice(),
            [1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 3, 1, 1, 5, 10, 0, 0, 0, 10, 0, 0, 0, 20]
        );
        let windows = with_layout(Layout::Windows);
        assert!(windows
            .data_options(9, 3, &[])
            .unwrap()
            .as_slice()
            .is_empty());
        assert_eq!(
            windows.data_options(9, 3, &blocks).unwrap().as_slice(),
            [1, 1, 5, 10, 0, 0, 0, 10, 0, 0, 0, 20]
        );
    }

    #[test]
    fn addresses_follow_the_index() {
        assert_eq!(
            addresses(false, 4700),
            (
                "198.18.18.92".parse().unwrap(),
                "198.19.0.1".parse().unwrap()
            )
        );
        assert_eq!(
            addresses(true, 0x1_0000),
            (
                "2001:db8:1::1:1".parse().unwrap(),
                "2001:db8:2::25".parse().unwrap()
            )
        );
    }
}
