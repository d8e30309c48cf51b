//! A connection for the tests that need one (marked data, the
//! out-of-window byte, the server-side tests), and the prober's own RSTs
//! and ACKs.
//!
//! The kernel owns no socket for the prober's ports, so it would answer
//! the server's SYN-ACK with an RST; the run's nftables table drops those
//! ([`super::super::net::RstGuard`]), and the prober ends each connection
//! with its own RST, marked so that the table lets it pass.

use std::time::Instant;

use dscp::DsField;
use tcp_options::{Flags, OptionsBuilder, TcpOption};

use super::super::error::ProbeError;
use super::super::tests::{Note, TestRun};
use super::super::wire::{options, Answer, IpFields, Seen, Segment};
use super::{random_u32, Arrival, Prober};
use crate::conn::Direction;

/// What [`Prober::handshake`] opened.
#[derive(Debug, Clone)]
pub struct Handshake {
    /// The prober's initial sequence number.
    pub isn: u32,
    /// The SYN-ACK as received.
    pub synack: Seen,
    /// The prober's ACK as sent (sequence number ISN + 1): the template of
    /// the data segments.
    pub ack: Segment,
}

/// The prober's TSval in the SYNs that carry timestamps.
pub const TSVAL: u32 = 0x1234_5678;

/// The SYN of the handshakes the data tests open: MSS, SACK-permitted,
/// window scale 7.
pub const SYN_OPTIONS: OptionsBuilder<'static> = OptionsBuilder::new()
    .mss(1460)
    .sack_permitted()
    .window_scale(7);

/// The identification of the prober's RSTs.
const RST_IDENT: u16 = 0x40ff;

/// The TSval of a segment's Timestamps option, if it has one.
pub fn tsval(s: &Seen) -> Option<u32> {
    tcp_options::LinuxOptions::new(s.options()?).find_map(|o| match o.option {
        TcpOption::Timestamps(t) => Some(t.tsval),
        _ => None,
    })
}

impl Prober<'_> {
    /// Our own RST from `sport` at sequence number `seq` (marked: it
    /// passes the suppression rule).
    pub fn send_rst(&self, sport: u16, seq: u32) -> Result<(), ProbeError> {
        let rst = Segment {
            seq,
            flags: Flags::RST,
            ..Segment::new(sport, self.io.dport)
        };
        self.io
            .send(IpFields::new(DsField::new(0), 64, RST_IDENT), &rst)
            .map(|_| ())
    }

    /// The prober's ACK of `synack` (its sequence number `seq`, the ISN +
    /// 1), echoing the SYN-ACK's timestamp when it has one.
    pub fn send_ack(
        &self,
        sport: u16,
        seq: u32,
        synack: &Seen,
        ident: u16,
        window: u16,
    ) -> Result<Segment, ProbeError> {
        let echo = tsval(synack);
        let seg = Segment {
            seq,
            ack: synack.seq().wrapping_add(1),
            flags: Flags::ACK,
            window,
            options: match echo {
                Some(e) => options(OptionsBuilder::new().timestamps(TSVAL.wrapping_add(1), e))?,
                None => Vec::new(),
            },
            ..Segment::new(sport, self.io.dport)
        };
        self.io
            .send(IpFields::new(DsField::new(0), 64, ident), &seg)?;
        Ok(seg)
    }

    /// The target's answer to the SYN from `sport` with sequence number
    /// `isn`: its SYN-ACK, or the RST that says nothing listens there;
    /// waited for up to the timeout.
    pub fn wait_synack(&mut self, sport: u16, isn: u32) -> Result<Seen, Note> {
        let answer = self.io.wait_tcp(sport, |s| {
            s.ack() == Some(isn.wrapping_add(1))
                && (s.has(Flags::SYN | Flags::ACK) || s.has(Flags::RST))
        });
        match answer {
            Some((_, s)) if s.has(Flags::SYN) => Ok(s),
            Some(_) => Err(Note::PortClosed),
            None => Err(Note::NoSynAck),
        }
    }

    /// A handshake for the tests that need a connection: a SYN from `sport`
    /// with `opts`, the target's SYN-ACK, the prober's ACK with the window
    /// field `window` (its timestamp echoed: a SYN proxy reads the options
    /// it agreed on from it). The run's `sent` is the SYN; its notes say
    /// why there is no [`Handshake`].
    pub fn handshake(
        &mut self,
        sport: u16,
        ident: u16,
        direction: Direction,
        opts: OptionsBuilder<'_>,
        window: u16,
    ) -> Result<(TestRun, Option<Handshake>), ProbeError> {
        let isn = random_u32();
        let syn = Segment {
            seq: isn,
            flags: Flags::SYN,
            window: 64240,
            options: options(opts)?,
            ..Segment::new(sport, self.io.dport)
        };
        let ip = IpFields::new(DsField::new(0), 64, ident);
        if self.path.len.is_none() {
            let mut run = TestRun::new(self.io.build(ip, &syn)?, direction);
            run.notes.push(Note::NoPath);
            return Ok((run, None));
        }
        let mut run = TestRun::new(self.io.send(ip, &syn)?, direction);
        let synack = match self.wait_synack(sport, isn) {
            Ok(s) => s,
            Err(note) => {
                run.notes.push(note);
                return Ok((run, None));
            }
        };
        let ack = self.send_ack(sport, isn.wrapping_add(1), &synack, ident, window)?;
        if window_closed(&synack) {
            self.await_open_window(sport, isn);
        }
        Ok((run, Some(Handshake { isn, synack, ack })))
    }

    /// Waits, up to the timeout, for the segment that opens a window the
    /// SYN-ACK kept shut ([`window_closed`], [`opens_window`]): the data
    /// tests send nothing before it, as a TCP sends no data into a zero
    /// window (RFC 9293 section 3.8.6.1). The update is taken from the
    /// inbox; whether it came is returned.
    ///
    /// Linux SYNPROXY (net/netfilter/nf_synproxy_core.c) answers the SYN
    /// itself with window 0 and opens its own handshake with the server
    /// only when the prober's ACK carries a valid cookie; once the server's
    /// SYN-ACK is back it acknowledges the server and sends the prober an
    /// ACK with the server's window. A segment of the prober's that reaches
    /// the proxy before that finds the proxy's connection still SYN_SENT in
    /// conntrack, where the client's ACK is invalid: it goes to the
    /// SYNPROXY target, which takes it for the handshake's ACK again, sends
    /// the server another SYN and drops the segment, data and all. Data
    /// sent right after the ACK raced the proxy's handshake with the
    /// server: in the probe lab, with the server's SYN-ACK held 40 ms on
    /// the way, `out_of_window` (one in-window byte, sent once) lost its
    /// byte in 3 runs of 3, and the marked data tests needed their
    /// retransmission. Without an update in the timeout the data goes
    /// anyway: reaching the proxy still without a connection, it makes the
    /// proxy send its SYN again.
    pub fn await_open_window(&mut self, sport: u16, isn: u32) -> bool {
        let update = |a: &Arrival| match &a.answer {
            Answer::Tcp(s) => s.dport() == sport && opens_window(s, isn),
            Answer::Icmp(_) => false,
        };
        self.io.wait(Instant::now() + self.io.timeout, |inbox| {
            inbox.iter().any(update)
        });
        !self.io.take(update).is_empty()
    }
}

/// Whether `synack` offered no window: Linux SYNPROXY's SYN-ACK (and that
/// of SYN proxies like it) does until the server has answered the proxy;
/// a server's own SYN-ACK never does.
pub fn window_closed(synack: &Seen) -> bool {
    synack.window() == Some(0)
}

/// Whether `s`, from the target, opens the window of the connection whose
/// ISN is `isn` before any data: it acknowledges the SYN (ISN + 1, nothing
/// more), is no SYN or RST, and offers a window.
pub fn opens_window(s: &Seen, isn: u32) -> bool {
    s.ack() == Some(isn.wrapping_add(1))
        && !s.has(Flags::SYN)
        && !s.has(Flags::RST)
        && s.window().is_some_and(|w| w > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::wire::packet;
    use std::net::{IpAddr, Ipv4Addr};

    const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2));
    const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2));

    /// A segment from the server to the prober's port 40001.
    fn from_server(seq: u32, ack: u32, flags: Flags, window: u16) -> Seen {
        let seg = Segment {
            seq,
            ack,
            flags,
            window,
            ..Segment::new(5201, 40001)
        };
        let p = packet(SERVER, CLIENT, IpFields::new(DsField::new(0), 63, 0), &seg).unwrap();
        Seen::parse(&p).unwrap()
    }

    /// The lab's SYN proxy (Linux SYNPROXY on r2): its SYN-ACK offers
    /// window 0; once the server has answered the proxy's own SYN, the
    /// proxy's ACK acknowledges the SYN again with the server's window
    /// (64240). Only that ACK lets the data go; the SYN-ACK itself, a
    /// segment acknowledging more or something else, an RST or an ACK
    /// still offering no window do not.
    #[test]
    fn a_syn_proxy_s_window_opens_with_its_ack_after_the_server_s_handshake() {
        let isn = 0xffff_ffff; // ISN + 1 wraps
        let cookie = 0x1234_5678;
        let synack = from_server(cookie, 0, Flags::SYN | Flags::ACK, 0);
        assert!(window_closed(&synack));
        assert!(!opens_window(&synack, isn));
        let update = from_server(cookie.wrapping_add(1), 0, Flags::ACK, 64240);
        assert!(opens_window(&update, isn));
        assert!(!opens_window(
            &from_server(cookie + 1, 1, Flags::ACK, 64240),
            isn
        ));
        assert!(!opens_window(
            &from_server(cookie + 1, 5, Flags::ACK, 64240),
            isn
        ));
        assert!(!opens_window(
            &from_server(cookie + 1, 0, Flags::ACK, 0),
            isn
        ));
        assert!(!opens_window(
            &from_server(cookie + 1, 0, Flags::RST | Flags::ACK, 64240),
            isn
        ));
        // A server's own SYN-ACK offers a window: nothing to wait for.
        let own = from_server(cookie, 0, Flags::SYN | Flags::ACK, 64240);
        assert!(!window_closed(&own));
    }
}
