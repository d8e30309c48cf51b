//! A finding's values as JSON and as words: the one place
//! [`FieldValue`]s are written (`compare` and `probe` alike;
//! `docs/json.md` gives the shapes), and a [`Finding`]'s JSON, by its
//! evidence.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::{json, Map, Value};
use tcp_options::Flags;

use crate::finding::value::{Address, FieldValue};
use crate::finding::{CaptureSide, Cause, Evidence, Finding, Frames, Kind};

impl Serialize for Finding {
    /// The fields of its evidence's report: `compare`'s finding object for
    /// [`Evidence::Compared`] (`crate::output::compare`).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.evidence {
            Evidence::Compared(c) => crate::output::compare::serialize_finding(self, c, s),
        }
    }
}

impl Serialize for Frames {
    /// `{"client_side": [..], "server_side": [..]}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Frames", 2)?;
        st.serialize_field("client_side", &self.client_side)?;
        st.serialize_field("server_side", &self.server_side)?;
        st.end()
    }
}

/// `client_side` or `server_side`, as JSON names a capture of `compare`.
pub fn capture_side_name(side: CaptureSide) -> &'static str {
    match side {
        CaptureSide::ClientSide => "client_side",
        CaptureSide::ServerSide => "server_side",
    }
}

/// The usual cause of a finding of `kind`, in vendors' terms.
pub fn cause_text(kind: Kind, cause: Cause) -> &'static str {
    match cause {
        Cause::Usual => kind.cause(),
        Cause::SynProxy => SYN_PROXY_CAUSE,
    }
}

/// The cause of the kinds a SYN proxy causes by itself once it has
/// answered the handshake.
const SYN_PROXY_CAUSE: &str = "the SYN proxy that answered the handshake: it announced its own configured options (e.g. SYNPROXY --wscale/--mss) and translates sequence numbers and timestamps for the rest of the connection; its options must match the server's";

/// The flag letters of a segment as the reports show them: `S`, `F`, `R`,
/// `P` and `.` for ACK, in that order.
pub fn flag_letters(flags: Flags) -> String {
    let mut f = String::new();
    for (bit, c) in [
        (Flags::SYN, 'S'),
        (Flags::FIN, 'F'),
        (Flags::RST, 'R'),
        (Flags::PSH, 'P'),
        (Flags::ACK, '.'),
    ] {
        if flags.contains(bit) {
            f.push(c);
        }
    }
    f
}

/// One end of an address pair: `{"addr": "198.18.1.2", "port": 33000}`
/// (`port` null when unknown).
pub fn address_json(a: &Address) -> Value {
    json!({"addr": a.addr.to_string(), "port": a.port})
}

/// The rewritten ends of a `nat` finding: `{"src": end, "dst": end}` with
/// only the rewritten ones as keys.
pub fn endpoints_json(src: Option<&Address>, dst: Option<&Address>) -> Value {
    let mut obj = Map::new();
    if let Some(a) = src {
        obj.insert("src".into(), address_json(a));
    }
    if let Some(a) = dst {
        obj.insert("dst".into(), address_json(a));
    }
    Value::Object(obj)
}

/// One end in words: `198.18.43.1:40001`, `[2001:db8::2]:5201`, or the
/// address alone without a port.
fn address_text(a: &Address) -> String {
    match a.port {
        Some(p) => std::net::SocketAddr::new(a.addr, p).to_string(),
        None => a.addr.to_string(),
    }
}

/// The rewritten ends in words: `source 198.18.43.1:40001, destination
/// 198.18.44.2:5201`.
pub fn endpoints_text(src: Option<&Address>, dst: Option<&Address>) -> String {
    let parts: Vec<String> = [
        src.map(|a| format!("source {}", address_text(a))),
        dst.map(|a| format!("destination {}", address_text(a))),
    ]
    .into_iter()
    .flatten()
    .collect();
    parts.join(", ")
}

/// The value as JSON (`null` where it is absent).
pub fn value_json(v: &FieldValue) -> Value {
    match v {
        FieldValue::None | FieldValue::Missing | FieldValue::Absent => Value::Null,
        FieldValue::Shift(s) => json!({ "shift": s }),
        FieldValue::Mss(m) => json!({ "mss_bytes": m }),
        FieldValue::Present => json!({ "present": true }),
        FieldValue::Timestamps { tsval, tsecr } => {
            json!({ "tsval_ticks": tsval, "tsecr_ticks": tsecr })
        }
        FieldValue::Option { kind, data } => {
            json!({ "option_kind": kind, "data_hex": hex(data) })
        }
        FieldValue::Seq(n) => json!({ "seq_number": n }),
        FieldValue::Ack(n) => json!({ "ack_number": n }),
        FieldValue::Window(w) => json!({ "window_field": w }),
        FieldValue::Dscp(d) => json!({ "dscp": d, "name": dscp_name(*d) }),
        FieldValue::Ecn(e) => json!({ "ecn": e, "name": ecn_name(*e) }),
        FieldValue::EcnFlags { ece, cwr } => json!({ "ece": ece, "cwr": cwr }),
        FieldValue::Segment {
            flags,
            seq,
            payload_len,
        } => {
            json!({ "flags": flag_letters(*flags), "seq_number": seq, "payload_bytes": payload_len })
        }
        FieldValue::SynAck {
            from,
            isn,
            window,
            mss,
            shift,
        } => json!({
            "from": from.as_str(),
            "isn": isn,
            "window_field": window,
            "mss_bytes": mss,
            "shift": shift,
        }),
        FieldValue::Endpoints { src, dst } => endpoints_json(src.as_ref(), dst.as_ref()),
    }
}

/// The value in words, as the text reports show it.
pub fn value_text(v: &FieldValue) -> String {
    match v {
        FieldValue::None => String::new(),
        FieldValue::Missing => "missing".to_string(),
        FieldValue::Absent => "absent".to_string(),
        FieldValue::Shift(s) => format!("shift {s}"),
        FieldValue::Mss(m) => m.to_string(),
        FieldValue::Present => "present".to_string(),
        FieldValue::Timestamps { tsval, tsecr } => format!("TSval {tsval} TSecr {tsecr}"),
        FieldValue::Option { kind, data } => format!("kind {kind}: {}", hex(data)),
        FieldValue::Seq(n) | FieldValue::Ack(n) => n.to_string(),
        FieldValue::Window(w) => w.to_string(),
        FieldValue::Dscp(d) => match dscp_name(*d) {
            Some(n) => format!("{n} ({d})"),
            None => d.to_string(),
        },
        FieldValue::Ecn(e) => ecn_name(*e).to_string(),
        FieldValue::EcnFlags { ece, cwr } => match (ece, cwr) {
            (false, false) => "TCP flags without ECE/CWR".to_string(),
            (true, false) => "TCP flags ECE".to_string(),
            (false, true) => "TCP flags CWR".to_string(),
            (true, true) => "TCP flags ECE+CWR".to_string(),
        },
        FieldValue::Segment {
            flags,
            seq,
            payload_len,
        } => format!("[{}] seq {seq} len {payload_len}", flag_letters(*flags)),
        FieldValue::SynAck {
            from,
            isn,
            window,
            mss,
            shift,
        } => format!(
            "{} SYN-ACK ISN {isn} window {window}{}{}",
            from.as_str(),
            mss.map(|m| format!(" mss {m}")).unwrap_or_default(),
            shift.map(|w| format!(" wscale {w}")).unwrap_or_default()
        ),
        FieldValue::Endpoints { src, dst } => endpoints_text(src.as_ref(), dst.as_ref()),
    }
}

/// Lower-case hex of `data`.
fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// A DSCP's upper-case name (`AF11`), `None` for unnamed values.
pub fn dscp_name(v: u8) -> Option<String> {
    dscp::Dscp::new(v)
        .ok()
        .and_then(|d| d.name())
        .map(str::to_uppercase)
}

/// The ECN field's name (`ECT(0)`), `?` for a value above 3.
fn ecn_name(v: u8) -> &'static str {
    dscp::Ecn::new(v).map(|e| e.name()).unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::value::Party;

    #[test]
    fn values_read_as_the_json_docs_give_them() {
        assert_eq!(value_json(&FieldValue::Shift(7)), json!({"shift": 7}));
        assert_eq!(
            value_json(&FieldValue::Dscp(10)),
            json!({"dscp": 10, "name": "AF11"})
        );
        assert_eq!(value_text(&FieldValue::Dscp(10)), "AF11 (10)");
        assert_eq!(value_text(&FieldValue::Dscp(3)), "3");
        assert_eq!(
            value_json(&FieldValue::Option {
                kind: 30,
                data: vec![0x10, 0xab]
            }),
            json!({"option_kind": 30, "data_hex": "10ab"})
        );
        assert_eq!(value_json(&FieldValue::Absent), Value::Null);
        assert_eq!(value_text(&FieldValue::Absent), "absent");
        let s = FieldValue::SynAck {
            from: Party::Middlebox,
            isn: 5,
            window: 512,
            mss: Some(1460),
            shift: None,
        };
        assert_eq!(
            value_text(&s),
            "middlebox SYN-ACK ISN 5 window 512 mss 1460"
        );
        assert_eq!(value_json(&s)["shift"], Value::Null);
    }

    #[test]
    fn endpoints_keep_only_the_rewritten_ends() {
        let v6 = Address {
            addr: "2001:db8:44::2".parse().unwrap(),
            port: Some(5201),
        };
        let v4 = Address {
            addr: "198.18.43.1".parse().unwrap(),
            port: None,
        };
        let dnat = FieldValue::Endpoints {
            src: None,
            dst: Some(v6),
        };
        assert_eq!(
            value_json(&dnat),
            json!({"dst": {"addr": "2001:db8:44::2", "port": 5201}})
        );
        assert_eq!(value_text(&dnat), "destination [2001:db8:44::2]:5201");
        let both = FieldValue::Endpoints {
            src: Some(Address {
                port: Some(40001),
                ..v4
            }),
            dst: Some(v4),
        };
        assert_eq!(value_json(&both)["dst"]["port"], Value::Null);
        assert_eq!(
            value_text(&both),
            "source 198.18.43.1:40001, destination 198.18.43.1"
        );
    }
}
