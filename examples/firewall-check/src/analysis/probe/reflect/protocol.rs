//! The control connection's messages: one JSON object per line each way,
//! as typed requests and replies (module docs of [`super`] list them).

use std::fmt;
use std::net::IpAddr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::super::error::Refusal;

/// The protocol's version (`hello`).
pub const VERSION: u32 = 1;

/// Bytes written as lower-case hex in JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hex(pub Vec<u8>);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Bytes of hex (`None` on odd length or a non-hex digit).
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hex, D::Error> {
        let s = String::deserialize(d)?;
        unhex(&s)
            .map(Hex)
            .ok_or_else(|| serde::de::Error::custom("hex needed"))
    }
}

/// A request of the prober's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The first request: the key.
    Hello {
        /// Protocol version.
        version: u32,
        /// The shared secret.
        #[serde(default)]
        key: String,
    },
    /// What to capture (empties the buffer).
    Watch {
        /// The prober's address.
        client: IpAddr,
        /// Its source ports, inclusive.
        ports: (u16, u16),
        /// The server's port.
        server_port: u16,
    },
    /// What was captured for a client port (and with `ack`, what was sent
    /// to a translated address acknowledging it).
    Report {
        /// The client port.
        port: u16,
        /// The acknowledgment number.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ack: Option<u32>,
    },
    /// The SYNs captured with this sequence number, from anywhere.
    ReportSeq {
        /// The sequence number.
        seq: u32,
    },
    /// Copies of the server's SYN-ACK.
    SendSynack(Craft),
    /// A data byte from the server's side.
    SendData(Craft),
    /// The end of the session.
    Bye,
}

/// What a crafted copy changes (`send_synack`, `send_data`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Craft {
    /// The client port of the connection.
    pub port: u16,
    /// The SYN-ACK's acknowledgment number (finds it wherever it went).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack: Option<u32>,
    /// The copies' identification (the TTL-limited ones `ident | ttl`).
    pub ident: u16,
    /// The copies' TTLs (64 and above: a full copy).
    pub ttls: Vec<u8>,
    /// The DS field (kept when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
    /// Flags besides SYN+ACK (the SYN-ACK's ECN flags kept when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_flags: Option<u16>,
    /// The option block (kept when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Hex>,
    /// Data (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Hex>,
    /// `send_data`: bytes past the server's first byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

/// Which way a captured packet went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    /// From the client to the server.
    In,
    /// From the server to the client.
    Out,
    /// An ICMP error quoting the connection.
    Icmp,
    /// Another SYN (a translated probe, found by its sequence number).
    Syn,
    /// Another SYN-ACK (to a translated address, found by its ack).
    Synack,
}

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Which way.
    pub dir: Dir,
    /// The IP packet (a TCP one cut after its headers).
    pub ip: Hex,
}

/// A reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Whether the request was served.
    pub ok: bool,
    /// `hello`: the protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// `report`, `report_seq`: the packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<Vec<Packet>>,
    /// `send_synack`, `send_data`: the full copy as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<Hex>,
    /// Why not, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why not, as a code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Refusal>,
}

impl Reply {
    /// A plain success.
    pub fn ok() -> Reply {
        Reply {
            ok: true,
            ..Reply::default()
        }
    }

    /// A refusal.
    pub fn refused(error: String, code: Option<Refusal>) -> Reply {
        Reply {
            ok: false,
            error: Some(error),
            code,
            ..Reply::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let b = [0u8, 1, 0xab, 0xff];
        assert_eq!(Hex(b.to_vec()).to_string(), "0001abff");
        assert_eq!(unhex("0001abff").unwrap(), b);
        assert_eq!(unhex("0g"), None);
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("é0"), None);
    }

    #[test]
    fn requests_are_the_documented_lines() {
        let r = Request::Report {
            port: 40000,
            ack: None,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"op":"report","port":40000}"#
        );
        let w: Request = serde_json::from_str(
            r#"{"op":"watch","client":"198.18.41.2","ports":[40000,40010],"server_port":5201}"#,
        )
        .unwrap();
        assert_eq!(
            w,
            Request::Watch {
                client: "198.18.41.2".parse().unwrap(),
                ports: (40000, 40010),
                server_port: 5201
            }
        );
        let h: Request = serde_json::from_str(r#"{"op":"hello","version":1}"#).unwrap();
        assert_eq!(
            h,
            Request::Hello {
                version: 1,
                key: String::new()
            }
        );
        let c: Request = serde_json::from_str(
            r#"{"op":"send_synack","port":1,"ident":2,"ttls":[1,64],"options":"0101"}"#,
        )
        .unwrap();
        let Request::SendSynack(c) = c else { panic!() };
        assert_eq!(c.options, Some(Hex(vec![1, 1])));
        assert!(serde_json::from_str::<Request>(
            r#"{"op":"send_synack","port":1,"ident":2,"ttls":[],"payload":"0g"}"#
        )
        .is_err());
        assert!(serde_json::from_str::<Request>(r#"{"op":"nope"}"#).is_err());
    }
}
