//! Each test's detail, the notes of the runs and of the report, in words.

use std::fmt::{self, Display, Formatter};

use super::super::diff::FieldValue;
use super::super::error::Refusal;
use super::super::evaluate::{Beyond, Detail, Hops, Place, Quoted};
use super::super::tests::synack::AccEcnAnswer;
use super::super::tests::Note;
use super::{ecn_flag_names, field_json, ReportNote};

/// A test's detail: its parts joined with `; `.
pub fn joined(parts: &[Detail]) -> String {
    parts
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A value in a test's detail: as JSON (`7`, `"absent"`), a NAT's ends in
/// words (`source 198.18.43.1:40001`).
fn shown(v: &FieldValue) -> String {
    let j = field_json(v);
    crate::finding::nat_ends_text(&j).unwrap_or_else(|| j.to_string())
}

impl Display for Hops {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.probed_only {
            write!(f, "{} hops probed (--max-ttl)", self.count)
        } else {
            write!(f, "{} hops", self.count)
        }
    }
}

impl Display for Quoted {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let how = if self.unchanged {
            "quoted unchanged by"
        } else {
            "quoted by"
        };
        write!(f, "{how} {} of {}", self.full, self.hops)?;
        if self.partial > 0 {
            write!(f, " in full and {} in part", self.partial)?;
        }
        Ok(())
    }
}

impl Display for Place {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Place::Hop(t) => write!(f, "hop {t}"),
            Place::FarEndPast(m) => write!(f, "the far end, past hop {m} (the last probed)"),
            Place::Unknown => f.write_str("hop ?"),
        }
    }
}

impl Display for AccEcnAnswer {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            AccEcnAnswer::NoSetup => {
                f.write_str("the SYN arrived without AE, CWR or ECE: a server answers without ECN flags")
            }
            AccEcnAnswer::Rfc3168 => f.write_str(
                "the SYN arrived as an RFC 3168 ECN setup (CWR+ECE): an AccECN server answers ECE",
            ),
            AccEcnAnswer::AccEcn {
                arrived,
                ecn,
                answer,
            } => write!(
                f,
                "the AccECN-setup SYN arrived at the server with {} and IP-ECN {}: the SYN-ACK answers {} (RFC 9768)",
                ecn_flag_names(*arrived),
                ecn.name(),
                ecn_flag_names(*answer)
            ),
        }
    }
}

impl Display for Note {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Note::NoPath => f.write_str("no path to the target"),
            Note::PortClosed => f.write_str(
                "the target answered with RST: nothing listens on the port, so no test that needs a connection can run, and no probe is called dropped for it",
            ),
            Note::NoSynAck => f.write_str("the handshake got no SYN-ACK"),
            Note::NoSynAckToReflect => {
                f.write_str("the handshake got no SYN-ACK: nothing for the reflector to send")
            }
            Note::CookieRequestUnanswered => {
                f.write_str("the cookie request got no SYN-ACK: the data test did not run")
            }
            Note::NoCookie => f.write_str(
                "the server's SYN-ACK carried no Fast Open cookie (the server does not offer Fast Open, or the path removed the request or the cookie): the data test did not run",
            ),
            Note::InWindowByteUnacked => f.write_str("the in-window byte was not acknowledged"),
            Note::FlightUnacked { bytes } => write!(
                f,
                "a flight of {bytes} bytes inside the window was not acknowledged"
            ),
            Note::WindowDidNotGrow {
                scaled,
                field,
                shift,
                source,
                limit,
                sent,
            } => write!(
                f,
                "the server's window ({scaled} bytes: field {field}, shift {shift} from the {source}) did not grow past twice the unscaled window ({limit}) after {sent} bytes: nothing to test"
            ),
            Note::ServerUnscaled => f.write_str(
                "the server's SYN-ACK carried no window scale: the server does not scale the prober's window, no byte past the unscaled window is inside it; not tested",
            ),
            Note::Reflector(r) => match r.code {
                Some(Refusal::NoSynack) => write!(
                    f,
                    "{}: the server sent no SYN-ACK acknowledging the prober's SYN (to any address, even once the prober had acknowledged the SYN-ACK it got), so the reflector has none to send from; not tested",
                    r.error
                ),
                Some(Refusal::NotPeer) => write!(
                    f,
                    "{}: the server's SYN-ACK went to a translated address other than the control connection's source (a NAT that translates the probes and the control connection differently); not tested",
                    r.error
                ),
                _ => f.write_str(&r.error),
            },
            Note::AccEcnNoSynAck => f.write_str(
                "the AccECN-setup SYN got no SYN-ACK (see accecn_setup): nothing to answer it with; not tested",
            ),
            Note::AccEcnNotCaptured => f.write_str(
                "the reflector did not capture the AccECN-setup SYN at the server: no SYN to answer; not tested",
            ),
            Note::AccEcn { after_ack: true, answer } => write!(
                f,
                "a SYN reached the server only after the prober's ACK (a SYN proxy on the path answered the prober's and opened its own handshake); {answer}"
            ),
            Note::AccEcn { after_ack: false, answer } => answer.fmt(f),
            Note::ProxyKeepsSynAck {
                proxy_seq,
                server_seq,
            } => write!(
                f,
                "a SYN proxy on the path answered the handshake (its SYN-ACK, sequence number {proxy_seq}, came before the server had seen anything; the server answered only after the prober's ACK, sequence number {server_seq}, to the proxy, which keeps it): the server's own SYN-ACK never reaches the client; not tested"
            ),
            Note::SentAfterProxy => f.write_str(
                "sent after the handshake a SYN proxy on the path completed (the server answered the proxy only after the prober's ACK)",
            ),
        }
    }
}

/// The words of partial quotes: which hops, how much, and from which hop on
/// the rest of the probe is unknown.
fn partial(f: &mut Formatter<'_>, hops: &[u8], bytes: usize, beyond: Beyond) -> fmt::Result {
    let hops: Vec<String> = hops.iter().map(u8::to_string).collect();
    let what = if bytes < 20 {
        " (ports and sequence number: options, flags and window not quoted)"
    } else {
        " (options not quoted in full)"
    };
    write!(
        f,
        "hop(s) {} quoted only the first {bytes} TCP bytes{what}",
        hops.join(",")
    )?;
    match beyond {
        Beyond::Known => Ok(()),
        Beyond::Hop(k) => write!(f, ": unknown beyond hop {k}"),
        Beyond::NoFullQuote => f.write_str(": no hop quoted it in full"),
    }
}

impl Display for Detail {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Note(n) => n.fmt(f),
            Detail::TranslatedBack { before, after } => write!(
                f,
                "translated back by the NAT ({} -> {}): the client-to-server translation undone, not a finding",
                shown(before),
                shown(after)
            ),
            Detail::NeverAnswered => {
                f.write_str("the target never answered: no path length, nothing to compare")
            }
            Detail::ServerDidNotAnswer => f.write_str("the server did not answer the handshake"),
            Detail::Unreachable {
                icmp_type,
                code,
                from,
            } => write!(f, "answered by ICMP unreachable type {icmp_type} code {code} from {from}"),
            Detail::ReachedBeyond { address, max_ttl } => write!(
                f,
                "reached the target ({address}, more than {max_ttl} hops away) but no answer came back"
            ),
            Detail::Reached { ttl, address } => write!(
                f,
                "reached the target (hop {ttl}, {address}) but no answer came back"
            ),
            Detail::LastSeenAtFarEnd(a) => write!(f, "never arrived; last seen at the far end ({a})"),
            Detail::LastQuoted(t, a) => write!(f, "never arrived; last quoted by hop {t} ({a})"),
            Detail::NoHopQuoted => f.write_str("never arrived; no hop quoted it"),
            Detail::QuotedBy(q) => q.fmt(f),
            Detail::Changed {
                field,
                before,
                after,
                at,
            } => write!(f, "{field} {} -> {} at {at}", shown(before), shown(after)),
            Detail::NatNotLocated => f.write_str("NAT translates the routers' quotes back: not located"),
            Detail::ReceivedUnchanged(q) => write!(f, "{q} and received unchanged here"),
            Detail::CapturedUnchanged(q) => {
                write!(f, "{q} and captured unchanged at the target by the reflector")
            }
            Detail::NotCaptured(q, l) => write!(
                f,
                "{q}; answered, but the reflector did not capture it at the target (past hop {l} a SYN proxy answered it, or a NAT translated it beyond what the reflector finds)"
            ),
            Detail::NotVisiblePast(q, l) => {
                write!(f, "{q}; not visible past hop {l} without --reflector")
            }
            Detail::NoQuoteNotVisible => f.write_str("no hop quoted it; not visible without --reflector"),
            Detail::NoQuoteOfWhat(q) => write!(
                f,
                "{q}; no hop quoted what this test checks; not visible without --reflector"
            ),
            Detail::PartialQuotes {
                hops,
                bytes,
                beyond,
            } => partial(f, hops, *bytes, *beyond),
            Detail::TtlDecrement => f.write_str("every hop quoted TTL 1: each decrements TTL by one"),
            Detail::QuotedTtl { hop, ttl } => write!(f, "hop {hop} quoted TTL {ttl}"),
            Detail::FastOpenDataAcked { bytes } => write!(
                f,
                "the server's SYN-ACK acknowledged the {bytes} bytes of data in the SYN: they arrived"
            ),
            Detail::FastOpenDataNotTaken { bytes } => write!(
                f,
                "the reflector captured the {bytes} bytes of data at the target; the server's SYN-ACK acknowledged the SYN only (it did not take them)"
            ),
            Detail::FastOpenDataNotAcked => f.write_str(
                "the server's SYN-ACK acknowledged the SYN only: it did not take the data (its choice, or the cookie or the data did not reach it; not visible without --reflector)",
            ),
            Detail::FastOpenDataDropped { bytes } => write!(
                f,
                "a SYN with the server's Fast Open cookie and {bytes} bytes of data never arrives, while the cookie request without data was answered"
            ),
            Detail::SynAckData { arrived, sent } if arrived == sent => {
                write!(f, "the {sent} bytes of data in the SYN-ACK arrived here")
            }
            Detail::SynAckData { arrived, sent } => write!(
                f,
                "the SYN-ACK arrived here with {arrived} of its {sent} bytes of data"
            ),
            Detail::ServerByteArrived(o) => write!(
                f,
                "the server-side byte {} past the prober's acknowledged point (unscaled edge {}, scaled edge {}: the prober's window field {} shift {}) arrived here",
                o.offset, o.unscaled_edge, o.scaled_edge, o.ack_window, o.shift
            ),
            Detail::ByteAcked(o) => write!(
                f,
                "the byte {} past the acknowledged point (unscaled edge {}, scaled edge {}: window field {} shift {} from the {}) was acknowledged",
                o.offset, o.unscaled_edge, o.scaled_edge, o.ack_window, o.shift, o.shift_source
            ),
            Detail::MapUnchanged(n) => write!(f, "all {n} values seen unchanged"),
            Detail::Remarking(runs) => {
                let parts: Vec<String> = runs
                    .iter()
                    .map(|&(first, last, seen, hop)| {
                        let values = if last > first {
                            format!("{first}-{last}")
                        } else {
                            first.to_string()
                        };
                        let at = hop.map_or(String::new(), |h| format!(" at hop {h}"));
                        format!("{values}->{seen}{at}")
                    })
                    .collect();
                write!(f, "remarking map: {}", parts.join(", "))
            }
            Detail::MapUnseen(n) => write!(f, "{n} values seen by nobody"),
            Detail::MapUnlocated(n) => write!(
                f,
                "{n} changed values not located (the reflector's packet budget)"
            ),
        }
    }
}

impl Display for ReportNote {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ReportNote::RstSuppressed(table) => write!(
                f,
                "kernel RSTs from the probes' ports suppressed for the run by nftables table inet {table} (deleted on exit)"
            ),
            ReportNote::ReverseHops => {
                f.write_str("server_to_client hops count from the server: TTL 1 is the router next to it")
            }
            ReportNote::Beyond(m) => write!(
                f,
                "the target answered only copies with a full TTL: it is more than {m} hops away (--max-ttl {m}), its distance unknown; hops past {m} were not probed, and a change seen only at the far end is not placed on a hop"
            ),
            ReportNote::PortClosed(port) => write!(
                f,
                "the target answers SYNs to port {port} with RST: nothing listens there; the tests that need a connection did not run, and no probe is called dropped"
            ),
        }
    }
}
