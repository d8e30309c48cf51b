//! `lab-nfsend SRC DST COUNT SEED`: the netfilter lab's traffic
//! ([`lab::nfsend`]): COUNT random TCP segments from SRC to DST through a
//! raw IPv4 socket (`IPPROTO_RAW`, the IP header ours). Only the lab's own
//! addresses (198.18.0.0/15) are accepted; it sends nothing else.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::ExitCode;
use std::time::Duration;

use lab::nfsend::{packet, Rng};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

/// What went wrong, with the message for standard error.
#[derive(Debug, thiserror::Error)]
enum NfsendError {
    #[error("usage: lab-nfsend SRC DST COUNT SEED")]
    Usage,
    #[error("{what} {input:?}: {reason}")]
    Arg {
        what: &'static str,
        input: String,
        reason: String,
    },
    #[error("{0}: lab addresses only (198.18.0.0/15)")]
    NotLab(Ipv4Addr),
    #[error("cannot open a raw IPv4 socket (root or CAP_NET_RAW): {0}")]
    Socket(#[source] std::io::Error),
    #[error("sending packet {n} to {dst}: {source}")]
    Send {
        n: u32,
        dst: Ipv4Addr,
        #[source]
        source: std::io::Error,
    },
}

fn arg<T: std::str::FromStr>(what: &'static str, input: &str) -> Result<T, NfsendError>
where
    T::Err: std::fmt::Display,
{
    input.parse().map_err(|e: T::Err| NfsendError::Arg {
        what,
        input: input.to_string(),
        reason: e.to_string(),
    })
}

fn lab_address(a: Ipv4Addr) -> Result<Ipv4Addr, NfsendError> {
    match a.octets() {
        [198, 18 | 19, _, _] => Ok(a),
        _ => Err(NfsendError::NotLab(a)),
    }
}

fn run(args: &[String]) -> Result<(), NfsendError> {
    let [src, dst, count, seed] = args else {
        return Err(NfsendError::Usage);
    };
    let src = lab_address(arg("SRC", src)?)?;
    let dst = lab_address(arg("DST", dst)?)?;
    let count: u32 = arg("COUNT", count)?;
    let mut rng = Rng::new(arg("SEED", seed)?);
    // IPPROTO_RAW: the kernel takes our IP header (IP_HDRINCL implied).
    let sock = Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::from(255)))
        .map_err(NfsendError::Socket)?;
    let to = SockAddr::from(SocketAddrV4::new(dst, 0));
    for n in 0..count {
        let p = packet(&mut rng, n, src, dst);
        sock.send_to(&p, &to)
            .map_err(|source| NfsendError::Send { n, dst, source })?;
        if n % 200 == 199 {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lab-nfsend: {e}");
            ExitCode::FAILURE
        }
    }
}
