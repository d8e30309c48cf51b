//! `firewall-check reflect`: the far end of `probe --reflector`.
//!
//! It runs on the target's host. A prober connects to its control port
//! (TCP, one JSON object per line each way, [`protocol`]) and says which
//! connections to watch; the reflector captures them on every interface
//! (`AF_PACKET`, both directions, ICMP errors quoting them too,
//! [`capture`]) and, on request, sends crafted copies of the server's own
//! SYN-ACK (other options, DS byte, flags, TTL), so the server-to-client
//! direction is tested as the other one is ([`server`]; the prober's side
//! is [`control`]).
//!
//! The control connection is not open to anyone who reaches the port: the
//! first request must be `hello` with the reflector's key, a shared secret
//! (`reflect --key`, else the environment's `FIREWALL_CHECK_REFLECT_KEY`,
//! else a random one printed at start; the prober's `--reflector-key` or the
//! same variable). Anything else is refused and the connection closed.
//! And what a session can make the reflector send is bounded: crafted
//! SYN-ACKs go only to the peer of the control connection (a key holder
//! cannot aim them at a third host; so the control connection runs over
//! the probes' address family), at most 64 per request and 1024 per
//! session, paced 2 ms (at most 500 packets a second).
//!
//! Requests (`op`) and answers:
//! - `{"op":"hello","version":1,"key":"..."}` -> `{"ok":true,"version":1}`
//! - `{"op":"watch","client":"ADDR","ports":[LO,HI],"server_port":P}`:
//!   capture TCP between the client's ports LO..=HI and local port P, and
//!   ICMP errors quoting it (the buffer is emptied) -> `{"ok":true}`
//! - `{"op":"report","port":N,"ack":A?}` -> `{"ok":true,"packets":[{"dir":"in"|"out"|"icmp"|"synack","ip":HEX}]}`:
//!   what was captured for client port N (IP packets; TCP payload cut);
//!   with `ack`, also the SYN-ACKs to other addresses or ports and the ICMP
//!   errors quoting segments sent there that acknowledge A (a NAT's
//!   translation of the client: every SYN-ACK and every ICMP error quoting
//!   TCP is kept for this)
//! - `{"op":"report_seq","seq":S}` -> the same for SYNs with sequence
//!   number S arriving from any address or port (a NAT's translation);
//!   besides the watched connections every other arriving SYN is kept
//! - `{"op":"send_synack","port":N,"ack":A?,"ident":I,"ttls":[..],"tos":T?,"extra_flags":F?,"options":HEX?,"payload":HEX?}`:
//!   the last SYN-ACK the server sent to client port N, or with `ack` the
//!   last one acknowledging A wherever it went (a NAT's translated address
//!   and port: the copies go there too, and the NAT translates them back),
//!   refused unless its destination is this connection's peer, with the
//!   given DS byte, flags besides SYN+ACK and option block (each kept when
//!   absent) and data (as Fast Open allows, at most 512 bytes; none when
//!   absent), sent once per TTL (identification `I | ttl`, the TTL-64 copy
//!   `I`), paced 2 ms -> `{"ok":true,"sent":HEX}` (the TTL-64 copy)
//! - `{"op":"send_data", ...}`: the same fields plus `"offset":N?`; one data
//!   byte (PSH+ACK, no options) from the server's side of that connection,
//!   at sequence number ISN + 1 + N (the server's first byte, or N bytes past
//!   it), with the SYN-ACK's acknowledgment and window
//! - `{"op":"bye"}` ends the session.
//!
//! Errors are `{"ok":false,"error":"...","code":C?}`, the code one of
//! `no_synack` (no SYN-ACK of the server's captured to copy), `not_peer`,
//! `budget`, `bad_request`. Limits: at most 4096 packets buffered per
//! session (the oldest dropped), request lines of 64 KiB, 64 copies per
//! request, a session idle for 120 s is closed; sessions are served one at
//! a time.

pub mod capture;
pub mod control;
pub mod protocol;
pub mod server;

pub use control::Control;

use std::io::Read;
use std::net::SocketAddr;

use clap::Args;

use super::error::{NetError, ProbeError, UsageError};
use crate::{Failure, Outcome};

/// Command-line arguments of `reflect`.
#[derive(Debug, Clone, Args)]
pub struct ReflectArgs {
    /// The control port's address.
    #[arg(long, default_value = "0.0.0.0:7207")]
    pub listen: String,
    /// Serve one session, then exit.
    #[arg(long)]
    pub once: bool,
    /// The shared secret a prober must present (`probe --reflector-key`);
    /// default: the environment's FIREWALL_CHECK_REFLECT_KEY, else a random
    /// key printed at start.
    #[arg(long)]
    pub key: Option<String>,
}

/// The environment variable both sides read the key from.
pub const KEY_ENV: &str = "FIREWALL_CHECK_REFLECT_KEY";
/// Shortest key accepted, bytes.
pub const MIN_KEY_LEN: usize = 8;
/// Crafted packets one session may make the reflector send at most.
pub const MAX_SENT_PER_SESSION: usize = 1024;
/// Crafted packets one request may ask for at most.
pub const MAX_SENT_PER_REQUEST: usize = 64;
/// Data a crafted SYN-ACK may carry at most, bytes.
pub const MAX_SYNACK_PAYLOAD: usize = 512;

/// The receive buffer of both ends of the control connection, bytes: small
/// enough that Linux offers window scale 0 (`tcp_select_initial_window`
/// takes the shift from the window clamp, which a locked receive buffer
/// sets), so that the window fields mean the same whether or not the path
/// strips the option. The control connection crosses the path under test:
/// where a firewall strips window scale from SYN-ACKs (the campus case),
/// the prober read the reflector's window of 64 KiB, advertised with shift
/// 10, as 63 bytes, and each request waited for a delayed ACK (0.25 to 0.5
/// s; 18 s for the reverse DSCP map).
pub const CONTROL_RCVBUF: usize = 32 * 1024;

/// The key from the command line, else from [`KEY_ENV`] (`None`: neither).
pub fn key_from(arg: Option<&str>) -> Option<String> {
    arg.map(str::to_string)
        .or_else(|| std::env::var(KEY_ENV).ok())
        .filter(|k| !k.is_empty())
}

/// A random key: 16 bytes from the kernel's random source, as hex.
fn random_key() -> Result<String, NetError> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(NetError::Random)?;
    Ok(protocol::Hex(b.to_vec()).to_string())
}

/// Whether two keys are equal, in time that depends on their lengths only.
pub fn same_key(a: &[u8], b: &[u8]) -> bool {
    let mut d = usize::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        d |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    d == 0
}

/// Runs `firewall-check reflect`.
pub fn run(args: &ReflectArgs) -> Result<Outcome, Failure> {
    Ok(reflect_run(args)?)
}

/// [`run`] with its typed error.
fn reflect_run(args: &ReflectArgs) -> Result<Outcome, ProbeError> {
    let listen: SocketAddr = args.listen.parse().map_err(|source| UsageError::Listen {
        input: args.listen.clone(),
        source,
    })?;
    let key = match key_from(args.key.as_deref()) {
        Some(k) if k.len() < MIN_KEY_LEN => return Err(UsageError::ShortKey(MIN_KEY_LEN).into()),
        Some(k) => k,
        None => {
            let k = random_key()?;
            eprintln!("firewall-check reflect: key {k} (probe --reflector-key, or {KEY_ENV})");
            k
        }
    };
    server::serve(listen, &key, args.once)?;
    Ok(Outcome::Clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_whole() {
        assert!(same_key(b"lab-key-0123", b"lab-key-0123"));
        assert!(!same_key(b"lab-key-0123", b"lab-key-0124"));
        assert!(!same_key(b"lab-key-0123", b"lab-key-012"));
        assert!(!same_key(b"", b"lab-key-0123"));
        assert!(same_key(b"", b""));
        assert_eq!(random_key().unwrap().len(), 32);
        assert_ne!(random_key().unwrap(), random_key().unwrap());
    }
}
