//! What can go wrong while probing, each error saying what and where.
//!
//! [`UsageError`]: the command line asks for something impossible (exit
//! status 2). [`ProbeError`]: the run could not go on (exit status 1), from
//! the sockets ([`NetError`]), building a packet ([`WireError`]) or the
//! reflector's control connection ([`ControlError`]). The reflector's own
//! answers to a bad request are [`RequestError`]s, sent back in its reply.

use std::io;
use std::net::{IpAddr, SocketAddr};

/// The command line asks for something impossible.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// An address that does not resolve.
    #[error("{what} {input}: {source} (expected ADDRESS:PORT)")]
    Resolve {
        /// `target` or `reflector`.
        what: &'static str,
        /// As given.
        input: String,
        /// Why it does not resolve.
        #[source]
        source: io::Error,
    },
    /// An address that resolves to nothing.
    #[error("{what} {input}: no address")]
    NoAddress {
        /// `target` or `reflector`.
        what: &'static str,
        /// As given.
        input: String,
    },
    /// `--tests` naming no test.
    #[error("--tests {0:?}: no test named (see --list-tests)")]
    NoTestNamed(String),
    /// `--tests` naming a test that does not exist.
    #[error("unknown test {0:?} (see --list-tests)")]
    UnknownTest(String),
    /// `--reflector` without a key.
    #[error("--reflector needs the reflector's key: --reflector-key, or {env} (reflect prints one at start unless given one)")]
    NoReflectorKey {
        /// The environment variable read.
        env: &'static str,
    },
    /// `reflect --listen` that is not an address.
    #[error("--listen {input}: {source} (expected ADDRESS:PORT)")]
    Listen {
        /// As given.
        input: String,
        /// Why it is not one.
        #[source]
        source: std::net::AddrParseError,
    },
    /// A reflector key too short to be a secret.
    #[error("the key must have at least {0} bytes")]
    ShortKey(usize),
}

/// The sockets, the RST suppression rule.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// Raw sockets without the privilege.
    #[error("raw sockets need root or CAP_NET_RAW ({0}); run as root or grant the capability (setcap cap_net_raw,cap_net_admin+ep)")]
    NoPermission(#[source] io::Error),
    /// Another failure to open a raw or packet socket.
    #[error("cannot open a raw socket: {0}")]
    RawSocket(#[source] io::Error),
    /// A socket option refused (`IPV6_HDRINCL`, a read timeout).
    #[error("{option}: {source}")]
    SocketOption {
        /// The option.
        option: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `SO_MARK` refused.
    #[error("cannot mark the probe socket (SO_MARK needs CAP_NET_ADMIN): {0}")]
    Mark(#[source] io::Error),
    /// The UDP socket that finds the source address.
    #[error("cannot open a UDP socket: {0}")]
    Udp(#[source] io::Error),
    /// No route to the target.
    #[error("no route to {target}: {source}")]
    NoRoute {
        /// The target.
        target: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// No source address towards the target.
    #[error("no source address towards {target}: {source}")]
    NoSource {
        /// The target.
        target: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A packet could not be sent.
    #[error("sending a probe to {dst}: {source}")]
    Send {
        /// Its destination.
        dst: IpAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An IPv6 packet to send and no IPv6 raw socket.
    #[error("no IPv6 raw socket on this host")]
    NoIpv6,
    /// `nft` could not be started.
    #[error("cannot run nft (needed to keep the kernel from resetting the probes): {0}")]
    NftSpawn(#[source] io::Error),
    /// Talking to `nft` failed.
    #[error("nft: {0}")]
    NftIo(#[source] io::Error),
    /// `nft` refused the script; its standard error.
    #[error("nft failed: {0}")]
    Nft(String),
    /// The Ctrl-C handler.
    #[error("cannot install the Ctrl-C handler: {0}")]
    CtrlC(#[source] ctrlc::Error),
    /// The reflector's control port.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Accepting a control connection.
    #[error("accept: {0}")]
    Accept(#[source] io::Error),
    /// The random source for a key.
    #[error("cannot read /dev/urandom for a key: {0}")]
    Random(#[source] io::Error),
}

/// A packet that could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Source and destination of different families.
    #[error("{src} and {dst} are not of one address family")]
    Families {
        /// Source.
        src: IpAddr,
        /// Destination.
        dst: IpAddr,
    },
    /// The crate refused to write it.
    #[error("building a packet: {0}")]
    Emit(#[from] tcp_options::EmitError),
    /// An option block that cannot be written.
    #[error("building an option block: {0}")]
    Options(#[from] tcp_options::BuildError),
    /// A packet as built does not read back (never, unless the crate's
    /// writer and reader disagree).
    #[error("a built packet does not read back: {0}")]
    Reread(#[from] tcp_options::PacketError),
}

/// Why the reflector refused a request, as its reply names it (`code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// It captured no SYN-ACK of the server's to copy.
    NoSynack,
    /// The copies would go to another host than the control connection's peer.
    NotPeer,
    /// The session's or the request's packet budget.
    Budget,
    /// A malformed request.
    BadRequest,
}

/// A request the reflector refuses, and why (sent back as `error` and
/// `code`).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// No SYN-ACK of the server's to copy.
    #[error("no SYN-ACK from the server to port {port} captured")]
    NoSynAck {
        /// The client port asked for.
        port: u16,
    },
    /// Copies aimed at another host than the control connection's peer.
    #[error(
        "refused: the packets would go to {dst}, not to this control connection's peer {peer}"
    )]
    NotPeer {
        /// Where they would go.
        dst: IpAddr,
        /// The peer.
        peer: IpAddr,
    },
    /// More copies than one request may ask for.
    #[error("at most {0} copies per request")]
    TooManyCopies(usize),
    /// The session's budget spent.
    #[error("refused: at most {max} packets per session ({sent} sent)")]
    SessionBudget {
        /// The budget.
        max: usize,
        /// Sent so far.
        sent: usize,
    },
    /// A field missing or of the wrong type or range.
    #[error("{field}: {what}")]
    Field {
        /// The field.
        field: &'static str,
        /// What it must be.
        what: &'static str,
    },
    /// A payload over the limit.
    #[error("payload: {len} bytes, at most {max}")]
    PayloadTooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// An operation the reflector does not know.
    #[error("unknown op {0:?}")]
    UnknownOp(String),
    /// Another thread panicked holding the capture buffer.
    #[error("the capture buffer's lock is poisoned")]
    Lock,
    /// The copy could not be built.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The copy could not be sent.
    #[error(transparent)]
    Net(#[from] NetError),
}

impl RequestError {
    /// The code of the reply.
    pub fn refusal(&self) -> Refusal {
        match self {
            RequestError::NoSynAck { .. } => Refusal::NoSynack,
            RequestError::NotPeer { .. } => Refusal::NotPeer,
            RequestError::TooManyCopies(_) | RequestError::SessionBudget { .. } => Refusal::Budget,
            _ => Refusal::BadRequest,
        }
    }
}

/// The prober's side of the control connection.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The reflector is not reachable.
    #[error("cannot reach the reflector at {addr}: {source}")]
    Connect {
        /// Its address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Reading or writing the control connection.
    #[error("reflector: {0}")]
    Io(#[source] io::Error),
    /// A reply that is not JSON.
    #[error("reflector answered non-JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// Another protocol version.
    #[error("reflector speaks version {0}, not 1")]
    Version(String),
    /// The reflector refused the request: its message (quoted as JSON, as
    /// the reply carried it) and code.
    #[error("reflector: {}", serde_json::Value::from(message.as_str()))]
    Refused {
        /// Why, in its words.
        message: String,
        /// Why, as a code (`None` from a reflector that sends none).
        code: Option<Refusal>,
    },
    /// The reflector said it sent a copy but returned none.
    #[error("reflector: no {what} to port {port} captured or sent")]
    NothingSent {
        /// `SYN-ACK` or `data segment`.
        what: &'static str,
        /// The client port.
        port: u16,
    },
}

impl ControlError {
    /// The refusal's code, for a refusal.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            ControlError::Refused { code, .. } => *code,
            _ => None,
        }
    }
}

/// Why a probe run stopped.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The command line.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// Sockets and netfilter.
    #[error(transparent)]
    Net(#[from] NetError),
    /// Building a packet.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The reflector's control connection.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// Writing the JSON report.
    #[error("JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// Writing the report.
    #[error("writing the report: {0}")]
    Write(#[source] io::Error),
    /// Something the run's own logic rules out.
    #[error("internal error: {0}")]
    Internal(&'static str),
}
