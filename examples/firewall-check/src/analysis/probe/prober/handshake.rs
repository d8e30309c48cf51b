//! A connection for the tests that need one (marked data, the
//! out-of-window byte, the server-side tests), and the prober's own RSTs
//! and ACKs.
//!
//! The kernel owns no socket for the prober's ports, so it would answer
//! the server's SYN-ACK with an RST; the run's nftables table drops those
//! ([`super::super::net::RstGuard`]), and the prober ends each connection
//! with its own RST, marked so that the table lets it pass.

use dscp::DsField;
use tcp_options::{Flags, OptionsBuilder, TcpOption};

use super::super::error::ProbeError;
use super::super::tests::{Note, TestRun};
use super::super::wire::{options, IpFields, Seen, Segment};
use super::{random_u32, Prober};
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
        Ok((run, Some(Handshake { isn, synack, ack })))
    }
}
