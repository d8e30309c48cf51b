//! The verdict of a connection: what its figures mean, as typed parts
//! ([`VerdictPart`]) in the order they are read; the words are the output
//! stage's (`crate::output::analyze`).
//!
//! First the handshake (seen or not, window scaling as each end holds it,
//! the broken state and what shows it), then the segments a Linux kernel
//! drops, then per direction what limited the sender, a window the sender
//! read below the one advertised, data sent beyond the window, the Linux
//! settings that lift a window or buffer limit, and a window-limited
//! transfer against its ceiling.

use std::time::Duration;

use bdp::BitsPerSecond;

use crate::analysis::limits::{Limit, WindowEvidence};
use crate::conn::negotiation::LinuxDrop;
use crate::conn::{Direction, Endpoint};
use crate::finding::Confidence;

use super::mismatch::{MismatchEvidence, ScaledAfterAll};
use super::report::{ceiling_of, AdviceItem, ConnectionReport, CEILING_MAX_PERCENT};
use super::shift::ShiftInterval;
use super::state::{ConnState, SynAnswered};
use super::Settings;
pub use crate::finding::impact::Need;

/// The largest window without scaling.
pub const MAX_UNSCALED: u64 = 65_535;

/// The verdict of a connection: its parts, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict(pub Vec<VerdictPart>);

/// A window's ceiling at the RTT, and what the target needs there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtRtt {
    /// The RTT (`None`: unknown).
    pub rtt: Option<Duration>,
    /// The window's ceiling at it, bit/s.
    pub ceiling: Option<u64>,
    /// What the target rate needs at it.
    pub need: Option<Need>,
}

impl AtRtt {
    fn of(window: u64, rtt: Option<Duration>, target: BitsPerSecond) -> AtRtt {
        AtRtt {
            rtt,
            ceiling: ceiling_of(window, rtt),
            need: rtt.and_then(|r| Need::at(target, r)),
        }
    }
}

/// How a connection without a handshake reads its windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowsRead {
    /// With the shift `--assume-wscale` gives.
    Assumed(u8),
    /// Not at all, but the limits read them with the shift the capture pins.
    PinnedForLimits,
    /// Not at all.
    NotInterpreted,
}

/// The client's first flight went out under the SYN-ACK's own window,
/// never scaled: more achieved than the unscaled ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstFlight {
    /// Achieved, bit/s.
    pub achieved: u64,
    /// The SYN-ACK's window.
    pub synack_window: u16,
}

/// One part of a verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum VerdictPart {
    /// The rest of a connection evicted from the full table.
    Continues {
        /// The evicted connection's id.
        id: u64,
        /// `--max-connections`.
        capacity: usize,
    },
    /// The capture starts mid-connection.
    HandshakeNotSeen,
    /// What the capture shows of each endpoint's shift.
    InferredShifts(Vec<(Endpoint, ShiftInterval)>),
    /// Without the handshake, the capture shows the ends disagree.
    SeemsToDisagree(MismatchEvidence),
    /// How the windows are read without the handshake.
    Windows(WindowsRead),
    /// SYN-ACK not seen.
    SynAckNotSeen,
    /// SYN not seen.
    SynNotSeen,
    /// The client sent this many SYNs with different options, and the
    /// capture does not show which one the SYN-ACK answers.
    SynAnswerUnknown {
        /// SYNs with different options.
        syns: usize,
    },
    /// Scaling offered by the client, not answered; yet the capture shows
    /// more achieved server to client than 65,535 bytes allow.
    UnansweredAchievedMore {
        /// The RTT.
        rtt: Option<Duration>,
        /// The unscaled ceiling at it.
        ceiling: Option<u64>,
        /// Achieved server to client.
        achieved: Option<u64>,
        /// Bytes sent beyond the window the client advertised and accepted.
        accepted_beyond: Option<u64>,
    },
    /// What the target rate needs.
    Need(Need),
    /// Scaling offered by the client, not answered: its window is capped.
    UnansweredCapped(AtRtt),
    /// The broken state seen from the client's side.
    ServerScalesAnyway {
        /// The server's largest window field.
        largest_field: u16,
        /// Its SYN-ACK's window.
        synack_window: u16,
        /// What the client reads of them (bytes).
        client_reads: u64,
        /// Client to server ceiling.
        ceiling: Option<u64>,
        /// More achieved than that ceiling.
        first_flight: Option<FirstFlight>,
        /// The shift the server reads the client's fields with, and the
        /// bytes it believes.
        server_reads: Option<(u8, u64)>,
    },
    /// Without scaling, the server's window is capped too.
    ServerWindowCappedToo,
    /// Window scale in the SYN-ACK without the client's offer.
    AnsweredUnoffered,
    /// No scaling offered: both windows capped.
    NotOffered(AtRtt),
    /// The broken state seen from the server's side.
    ClientUnscaled {
        /// The client's shift.
        client: u8,
        /// The server's shift.
        server: u8,
        /// What shows it.
        evidence: Option<MismatchEvidence>,
        /// What the client reads of the server's fields (bytes).
        client_reads: u64,
        /// Client to server ceiling.
        ceiling: Option<u64>,
        /// More achieved than that ceiling.
        first_flight: Option<FirstFlight>,
        /// What the server believes the client offers (bytes).
        server_believes: u64,
    },
    /// The client's first window field alone would say it does not
    /// scale; the capture shows it does.
    UnscaledRuledOut(ScaledAfterAll),
    /// Window scaling on.
    ScalingOn {
        /// The client's shift.
        client: u8,
        /// The server's shift.
        server: u8,
    },
    /// A handshake segment Linux drops.
    LinuxDrop(LinuxDrop),
    /// The connection was evicted from the full table.
    Evicted {
        /// `--max-connections`.
        capacity: usize,
    },
    /// What limited a direction's sender, as shares of its busy time.
    LimitedBy {
        /// The direction.
        direction: Direction,
        /// Its limit.
        limit: Limit,
    },
    /// The sender read a window below the one advertised.
    WindowReadBelow {
        /// The direction.
        direction: Direction,
        /// The window it read, bytes (at least).
        window: u64,
        /// Its ceiling at the RTT.
        ceiling: Option<u64>,
        /// The largest window advertised, bytes.
        advertised: Option<u64>,
        /// What shows it.
        evidence: WindowEvidence,
    },
    /// Data sent beyond the window the receiver advertised.
    BeyondWindow {
        /// The direction.
        direction: Direction,
        /// Bytes beyond.
        bytes: u64,
        /// The receiver acknowledged them.
        accepted: bool,
    },
    /// The Linux settings that lift a window or buffer limit.
    Settings {
        /// The direction.
        direction: Direction,
        /// The target rate.
        target: BitsPerSecond,
        /// The settings.
        advice: Vec<AdviceItem>,
    },
    /// A window-limited direction.
    WindowLimited {
        /// The direction.
        direction: Direction,
        /// Achieved, bit/s.
        achieved: Option<u64>,
        /// Ceiling, bit/s.
        ceiling: Option<u64>,
        /// The largest window advertised, bytes.
        advertised: u64,
        /// What the target rate needs.
        need: Option<Need>,
        /// How sure (`DirectionReport::window_limited_confidence`).
        confidence: Option<Confidence>,
    },
}

/// The verdict of report `r` of connection state `st`.
pub(crate) fn verdict(r: &ConnectionReport, st: &ConnState, settings: &Settings) -> Verdict {
    let mut parts = Vec::new();
    if st.syn.is_none() && st.synack.is_none() {
        no_handshake(r, settings, &mut parts);
    } else if st.synack.is_none() {
        parts.push(VerdictPart::SynAckNotSeen);
    } else if st.syn.is_none() {
        parts.push(VerdictPart::SynNotSeen);
    } else {
        handshake(r, st, settings, &mut parts);
    }
    parts.extend(
        r.negotiated
            .linux_drops
            .iter()
            .cloned()
            .map(VerdictPart::LinuxDrop),
    );
    if r.evicted {
        parts.push(VerdictPart::Evicted {
            capacity: settings.capacity,
        });
    }
    for dir in [Direction::ClientToServer, Direction::ServerToClient] {
        direction(r, dir, settings, &mut parts);
    }
    Verdict(parts)
}

/// A connection whose SYN and SYN-ACK are both unseen.
fn no_handshake(r: &ConnectionReport, settings: &Settings, parts: &mut Vec<VerdictPart>) {
    match r.continues {
        Some(id) => parts.push(VerdictPart::Continues {
            id,
            capacity: settings.capacity,
        }),
        None => {
            parts.push(VerdictPart::HandshakeNotSeen);
            if let Some(inf) = &r.negotiated.wscale_inferred {
                let found: Vec<(Endpoint, ShiftInterval)> = [Endpoint::Client, Endpoint::Server]
                    .into_iter()
                    .filter_map(|e| inf.of(e).map(|i| (e, i)))
                    .collect();
                if !found.is_empty() {
                    parts.push(VerdictPart::InferredShifts(found));
                }
                if let Some(e) = &r.negotiated.wscale_mismatch_evidence {
                    parts.push(VerdictPart::SeemsToDisagree(e.clone()));
                }
            }
        }
    }
    let pinned = [
        &r.directions.client_to_server,
        &r.directions.server_to_client,
    ]
    .iter()
    .any(|d| d.limit.inferred_shift.is_some());
    parts.push(VerdictPart::Windows(match r.assumed_wscale {
        Some(a) => WindowsRead::Assumed(a),
        None if pinned => WindowsRead::PinnedForLimits,
        None => WindowsRead::NotInterpreted,
    }));
}

/// The first flight's throughput where it is above the ceiling.
fn first_flight(
    ceiling: Option<u64>,
    achieved: Option<u64>,
    st: &ConnState,
) -> Option<FirstFlight> {
    let c = ceiling?;
    achieved
        .filter(|t| u128::from(*t) * 100 > u128::from(c) * CEILING_MAX_PERCENT)
        .map(|achieved| FirstFlight {
            achieved,
            synack_window: st.synack.map_or(0, |s| s.window),
        })
}

/// A connection whose SYN and SYN-ACK were both seen.
fn handshake(
    r: &ConnectionReport,
    st: &ConnState,
    settings: &Settings,
    parts: &mut Vec<VerdictPart>,
) {
    let n = &r.negotiated;
    let target = settings.target_rate;
    let rtt = r.rtt;
    let c2s = &r.directions.client_to_server;
    let s2c = &r.directions.server_to_client;
    if let Some(SynAnswered::Unknown { syns }) = n.syn_answered {
        parts.push(VerdictPart::SynAnswerUnknown { syns });
        return;
    }
    match (n.wscale_offered.client, n.wscale_offered.server) {
        (Some(_), None) => {
            let contradicted = matches!(
                (s2c.throughput_bps, ceiling_of(MAX_UNSCALED, rtt)),
                (Some(t), Some(c)) if u128::from(t) * 100 > u128::from(c) * CEILING_MAX_PERCENT
            );
            if contradicted {
                parts.push(VerdictPart::UnansweredAchievedMore {
                    rtt,
                    ceiling: ceiling_of(MAX_UNSCALED, rtt),
                    achieved: s2c.throughput_bps,
                    accepted_beyond: match (s2c.beyond_window_bytes, s2c.beyond_window_accepted) {
                        (Some(b), Some(true)) if b > 0 => Some(b),
                        _ => None,
                    },
                });
                if let Some(need) = rtt.and_then(|rtt| Need::at(target, rtt)) {
                    parts.push(VerdictPart::Need(need));
                }
            } else {
                parts.push(VerdictPart::UnansweredCapped(AtRtt::of(
                    MAX_UNSCALED,
                    rtt,
                    target,
                )));
            }
            if n.wscale_mismatch {
                parts.push(VerdictPart::ServerScalesAnyway {
                    largest_field: c2s.max_window_field.unwrap_or(0),
                    synack_window: st.synack.map_or(0, |s| s.window),
                    client_reads: c2s.max_window_bytes.unwrap_or(0),
                    ceiling: c2s.ceiling_bps,
                    first_flight: first_flight(c2s.ceiling_bps, c2s.throughput_bps, st),
                    server_reads: n.wscale_offered.client.zip(s2c.max_window_field).map(
                        |(shift, field)| {
                            (shift, MismatchEvidence::client_largest_scaled(shift, field))
                        },
                    ),
                });
            } else {
                parts.push(VerdictPart::ServerWindowCappedToo);
            }
        }
        (None, Some(_)) => parts.push(VerdictPart::AnsweredUnoffered),
        (None, None) => parts.push(VerdictPart::NotOffered(AtRtt::of(
            MAX_UNSCALED,
            rtt,
            target,
        ))),
        (Some(c), Some(s)) if n.wscale_mismatch => parts.push(VerdictPart::ClientUnscaled {
            client: c,
            server: s,
            evidence: n.wscale_mismatch_evidence.clone(),
            client_reads: c2s.max_window_bytes.unwrap_or(0),
            ceiling: c2s.ceiling_bps,
            first_flight: first_flight(c2s.ceiling_bps, c2s.throughput_bps, st),
            server_believes: MismatchEvidence::client_largest_scaled(
                c,
                s2c.max_window_field.unwrap_or(0),
            ),
        }),
        (Some(c), Some(s)) => {
            parts.push(VerdictPart::ScalingOn {
                client: c,
                server: s,
            });
            if let Some(r) = n.wscale_unscaled_ruled_out {
                parts.push(VerdictPart::UnscaledRuledOut(r));
            }
        }
    }
}

/// What limited direction `dir`, and what the capture shows of its window.
fn direction(
    r: &ConnectionReport,
    dir: Direction,
    settings: &Settings,
    parts: &mut Vec<VerdictPart>,
) {
    let d = r.directions.of(dir);
    let l = &d.limit;
    if l.receive_window_fraction.is_some()
        && l.sender_fraction.is_some()
        && l.network_fraction.is_some()
    {
        parts.push(VerdictPart::LimitedBy {
            direction: dir,
            limit: l.clone(),
        });
    }
    if let (Some(w), Some(e)) = (l.window_read_inferred_bytes, l.receive_window_evidence) {
        if e.is_plateau() {
            parts.push(VerdictPart::WindowReadBelow {
                direction: dir,
                window: w,
                // The RTT as the JSON gives it (seconds), read back.
                ceiling: ceiling_of(w, r.rtt_s().map(Duration::from_secs_f64)),
                advertised: d.max_window_bytes,
                evidence: e,
            });
        }
    }
    if let (Some(b), Some(accepted)) = (d.beyond_window_bytes, d.beyond_window_accepted) {
        if b > 0 {
            parts.push(VerdictPart::BeyondWindow {
                direction: dir,
                bytes: b,
                accepted,
            });
        }
    }
    if !d.advice.is_empty() {
        parts.push(VerdictPart::Settings {
            direction: dir,
            target: settings.target_rate,
            advice: d.advice.clone(),
        });
    }
    let plateau = l
        .receive_window_evidence
        .as_ref()
        .is_some_and(WindowEvidence::is_plateau);
    if d.window_limited == Some(true) && !plateau {
        // The unscaled case already said what the target needs.
        let need = if r.negotiated.wscale.is_some() || r.assumed_wscale.is_some() {
            r.rtt.and_then(|rtt| Need::at(settings.target_rate, rtt))
        } else {
            None
        };
        parts.push(VerdictPart::WindowLimited {
            direction: dir,
            achieved: d.throughput_bps,
            ceiling: d.ceiling_bps,
            advertised: d.max_window_bytes.unwrap_or(0),
            need,
            confidence: d.window_limited_confidence,
        });
    }
}
