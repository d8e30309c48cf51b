//! The broken state: the two ends disagree about window scaling, because
//! its option was removed on the way. What in the capture shows it
//! ([`MismatchEvidence`]), seen from either side of the middlebox.
//!
//! Seen from the client's side, the SYN-ACK has no window scale yet the
//! server's later window fields are tiny next to its SYN-ACK window (below
//! 1/16 of it): the server scales anyway (`server_scales_anyway`). Seen
//! from the server's side, the SYN-ACK carries it yet the client's window
//! fields stay at unscaled sizes: its first one at least half its SYN
//! window, with a shift of 2 or more (`client_unscaled`). Without the
//! handshake, the edges the sender's data stops at and a Linux receiver's
//! window growth can show it too (`super::shift::infer_shift`).

use tcp_options::kind::MAX_WINDOW_SCALE;

use crate::conn::Endpoint;
use crate::finding::Confidence;

use super::state::ConnState;

/// The window field of a scaling server after the handshake is below this
/// fraction (1/16) of its SYN-ACK window.
const SCALED_WINDOW_DIVISOR: u32 = 16;
/// Far below (1/256 of the SYN-ACK window): certain.
const SURELY_SCALED_DIVISOR: u32 = 256;
/// A client's first window field read scaled above this (65,535 << 8 =
/// 16,776,960 bytes: Windows' largest auto-tuned window, "up to 16 MB",
/// and well above Linux's default `tcp_rmem` maximum of 6 MiB) is no
/// window a stack chose: the unscaled reading is certain. Below it (a
/// Windows host at shift 8 with a 1.5 MB window looks like a client that
/// does not scale with a 5,840-byte window), `medium`.
const SURELY_UNSCALED_BYTES: u64 = 65_535 << 8;
/// Fewest window-sized data segments that corroborate a client that reads
/// the server's fields unscaled.
const WINDOW_SIZED_SEGMENTS: u64 = 3;

/// How the window-scale mismatch shows in the capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MismatchEvidence {
    /// The SYN-ACK seen here has no window scale, yet the server's window
    /// fields are scaled: the option was removed between the server and
    /// this capture point.
    ServerScalesAnyway {
        /// The server's largest window field after the handshake.
        largest_field: u16,
        /// Its SYN-ACK's window.
        synack_window: u16,
    },
    /// The SYN-ACK seen here has window scale, yet the client's window
    /// fields are unscaled: it was removed between this capture point and
    /// the client.
    ClientUnscaled {
        /// The shift the client offered.
        shift: u8,
        /// Its first window field after the handshake.
        first_field: u16,
        /// Its largest one.
        largest_field: u16,
        /// Its SYN's window.
        syn_window: u16,
        /// Its uploads corroborate: segments no larger than the server's
        /// field read as bytes.
        window_sized: Option<WindowSized>,
    },
    /// No handshake: the sender's data kept stopping at the edge of one
    /// shift while the receiver's window grows as a Linux receiver's at
    /// another.
    SenderEdgeDiffers {
        /// The receiver (whose window fields are read).
        who: Endpoint,
        /// The shift of the edge the data stopped at.
        edge: u8,
        /// The Linux growth shift.
        growth: u8,
    },
    /// No handshake: the receiver's window grows as a Linux receiver's at
    /// one shift, yet the sender's data went past the edge it gives.
    FlightBeyondGrowth {
        /// The receiver.
        who: Endpoint,
        /// The Linux growth shift.
        growth: u8,
        /// The least shift the data needs.
        lo: u8,
    },
    /// No handshake: the receiver's fields sit at 65,535 while the
    /// sender's data goes past ACK + 65,535.
    UnscaledCap {
        /// The receiver.
        who: Endpoint,
        /// Its ACKs advertising 65,535.
        at_cap: u32,
        /// Its ACKs seen.
        acks: u32,
        /// The least shift the sender reads its fields with.
        lo: u8,
    },
}

/// A client's data segments that fit the server's window field read as
/// bytes ([`MismatchEvidence::ClientUnscaled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSized {
    /// Such segments.
    pub segments: u64,
    /// The client's data segments.
    pub data_segments: u64,
    /// The server's largest window field.
    pub server_largest_field: u16,
}

impl MismatchEvidence {
    /// The name in JSON (`kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            MismatchEvidence::ServerScalesAnyway { .. } => "server_scales_anyway",
            MismatchEvidence::ClientUnscaled { .. } => "client_unscaled",
            MismatchEvidence::SenderEdgeDiffers { .. } => "sender_edge_differs",
            MismatchEvidence::FlightBeyondGrowth { .. } => "flight_beyond_growth",
            MismatchEvidence::UnscaledCap { .. } => "unscaled_cap",
        }
    }

    /// How far the window fields are from what the other reading would
    /// give: `high` where they are far, `medium` where a stack that scales
    /// differently could look the same.
    pub fn confidence(&self) -> Confidence {
        match *self {
            MismatchEvidence::ServerScalesAnyway {
                largest_field,
                synack_window,
            } if u32::from(largest_field) * SURELY_SCALED_DIVISOR < u32::from(synack_window) => {
                Confidence::High
            }
            MismatchEvidence::ClientUnscaled {
                shift, first_field, ..
            } if Self::client_largest_scaled(shift, first_field) > SURELY_UNSCALED_BYTES => {
                Confidence::High
            }
            _ => Confidence::Medium,
        }
    }

    /// The bytes the client's largest field would mean read with the shift
    /// it offered ([`MismatchEvidence::ClientUnscaled`]).
    pub fn client_largest_scaled(shift: u8, largest_field: u16) -> u64 {
        u64::from(largest_field) << shift.min(MAX_WINDOW_SCALE)
    }
}

/// Why a client's first window field, at least half its SYN window, is no
/// evidence that it does not scale: the capture shows its windows scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaledAfterAll {
    /// The first field read with the offered shift is an exact multiple of
    /// an MSS of the connection while the field itself is not: the scaled
    /// reading is the window the stack chose. Windows sizes its receive
    /// window in whole segments and sends SYN window 8192 with shift 2 or
    /// 8 (its first field, e.g. 16,425 << 2 = 65,700 = 45 x 1,460, is far
    /// above half of 8,192); an unscaled field is the window itself, so a
    /// Linux client that does not scale sends a multiple (64,240 = 44 x
    /// 1,460) or an odd 65,535, neither of which this matches.
    MssMultiple {
        /// The first field.
        first_field: u16,
        /// The offered shift.
        shift: u8,
        /// The MSS its scaled reading is a multiple of.
        mss: u16,
    },
}

impl ScaledAfterAll {
    /// The name in JSON (`kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            ScaledAfterAll::MssMultiple { .. } => "mss_multiple",
        }
    }
}

/// What the client's first window field says about its scaling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientFields {
    /// Nothing (the rule does not apply).
    Silent,
    /// Unscaled: the shift it offered.
    Unscaled(u8),
    /// The field alone would say unscaled, the capture shows scaled.
    ScaledAfterAll(ScaledAfterAll),
}

/// Whether the client's windows show that it does not scale (see
/// [`client_unscaled_evidence`], which says why), and what rules it out.
///
/// Fooled by: a stack whose first window field after the handshake is near
/// its SYN window although it scales (Windows: SYN window 8192, shift 2,
/// first field 16,425). Ruled out when the field's scaled reading is an
/// exact multiple of an MSS and the field is not
/// ([`ScaledAfterAll::MssMultiple`]); the remaining cases with a shift
/// below 5 are `medium` (a hint, no exit 3). Not ruled out by the client
/// acknowledging data past its unscaled edges: a Linux receiver queues an
/// in-sequence segment whatever its end while its window is not zero, so
/// a client that does not scale does that too (the lab's `wscale_synack4`:
/// 166,145 bytes past).
pub(crate) fn client_fields(
    st: &ConnState,
    syn_ws: Option<u8>,
    synack_ws: Option<u8>,
) -> ClientFields {
    let (Some(shift), Some(_)) = (syn_ws, synack_ws) else {
        return ClientFields::Silent;
    };
    let (Some(syn), Some(first)) = (st.syn, st.c2s.first_window_field) else {
        return ClientFields::Silent;
    };
    let fires = shift >= 2 && syn.window >= 1024 && u32::from(first) * 2 >= u32::from(syn.window);
    if !fires {
        return ClientFields::Silent;
    }
    let scaled = u64::from(first) << shift.min(MAX_WINDOW_SCALE);
    let msses = [st.synack.and_then(|s| s.linux().mss), syn.linux().mss];
    let timestamps = [0u16, 12];
    for mss in msses.into_iter().flatten() {
        for ts in timestamps {
            let m = mss.saturating_sub(ts);
            if m >= 64 && scaled % u64::from(m) == 0 && first % m != 0 {
                return ClientFields::ScaledAfterAll(ScaledAfterAll::MssMultiple {
                    first_field: first,
                    shift,
                    mss: m,
                });
            }
        }
    }
    ClientFields::Unscaled(shift)
}

/// The client's windows after the handshake are unscaled although the
/// SYN-ACK seen here answered its window-scale offer: evidence that the
/// option was removed between this capture point and the client.
///
/// A Linux client that scales sends, in its first ACK, its receive window
/// shifted right by its own shift: about its SYN window over 2^shift. One
/// that does not scale sends about its SYN window. With a shift of 2 or more
/// the two readings are at least 4x apart; a first field of at least half
/// the SYN window is the unscaled reading (`high` confidence when the scaled
/// reading would exceed 16,776,960 bytes, see [`SURELY_UNSCALED_BYTES`],
/// `medium` below; never when [`client_fields`] rules it out). The client's uploads corroborate: a client
/// that reads the server's scaled fields as bytes never has more in flight
/// than the largest raw field.
pub(crate) fn client_unscaled_evidence(
    st: &ConnState,
    syn_ws: Option<u8>,
    synack_ws: Option<u8>,
) -> Option<MismatchEvidence> {
    let ClientFields::Unscaled(shift) = client_fields(st, syn_ws, synack_ws) else {
        return None;
    };
    let first = st.c2s.first_window_field?;
    Some(MismatchEvidence::ClientUnscaled {
        shift,
        first_field: first,
        largest_field: st.c2s.max_window_field.unwrap_or(first),
        syn_window: st.syn?.window,
        window_sized: (st.c2s.window_sized_segments >= WINDOW_SIZED_SEGMENTS).then(|| {
            WindowSized {
                segments: st.c2s.window_sized_segments,
                data_segments: st.c2s.data_segments,
                server_largest_field: st.s2c.max_window_field.unwrap_or(0),
            }
        }),
    })
}

/// The broken state seen from the client's side: the SYN offered scaling,
/// the SYN-ACK seen here did not answer, yet the server's windows after the
/// handshake look scaled (below 1/16 of its SYN-ACK window).
///
/// Fooled by: a server that does not scale and whose receive buffer stays
/// nearly full (its application does not read), advertising small windows
/// for the whole capture; RFC 1122's silly-window avoidance keeps a
/// nonzero window from dropping below a segment, so below 1/256 of the
/// SYN-ACK window (`high`) it is scaling, between 1/256 and 1/16 a hint
/// (`medium`). A server that only ever advertised a zero window shows
/// nothing (0 is 0 at any shift) and raises nothing.
pub(crate) fn server_scales_anyway(
    st: &ConnState,
    syn_ws: Option<u8>,
    synack_ws: Option<u8>,
) -> bool {
    syn_ws.is_some()
        && synack_ws.is_none()
        && match (st.synack.map(|s| s.window), st.s2c.max_window_field) {
            (Some(syn_win), Some(max)) => {
                max > 0
                    && syn_win >= 1024
                    && u32::from(max) * SCALED_WINDOW_DIVISOR < u32::from(syn_win)
            }
            _ => false,
        }
}

/// The evidence for [`server_scales_anyway`].
pub(crate) fn server_scaled_evidence(st: &ConnState) -> MismatchEvidence {
    MismatchEvidence::ServerScalesAnyway {
        largest_field: st.s2c.max_window_field.unwrap_or(0),
        synack_window: st.synack.map_or(0, |s| s.window),
    }
}
