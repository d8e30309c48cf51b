//! `lab-quote8 QUEUE_NUM READY_FILE [delay=MS]`: make a Linux router quote
//! like an RFC 792 one ([`lab::quote8`]), for the probe lab.
//!
//! Run in a router's namespace, it binds NFQUEUE queue QUEUE_NUM (the
//! OUTPUT rules `probe-lab.sh` adds send the router's own ICMP and ICMPv6
//! time-exceeded messages there), writes READY_FILE once bound, and then,
//! until killed, accepts every message with its quote cut to the IP header
//! and 8 bytes of TCP ([`lab::quote8::cut`]); every other packet is
//! accepted unchanged. Each message cut is counted on standard error
//! (`quote8: cut N`).
//!
//! With `delay=MS` it cuts nothing: it holds each message MS milliseconds,
//! then accepts it unchanged (`quote8: delayed N`): a router whose ICMP
//! errors come late, as a real router's slow path can make them come.

use std::collections::VecDeque;
use std::io;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nfq::{Queue, Verdict};

/// What went wrong, with the message for standard error.
#[derive(Debug, thiserror::Error)]
enum Quote8Error {
    #[error("usage: lab-quote8 QUEUE_NUM READY_FILE [delay=MS]")]
    Usage,
    #[error("queue number {0:?}: not a number 0-65535")]
    Queue(String),
    #[error("unknown mode {0:?} (delay=MS)")]
    Mode(String),
    #[error("cannot open a netfilter queue socket: {0}")]
    Open(#[source] io::Error),
    #[error("binding queue {queue}: {source}")]
    Bind {
        queue: u16,
        #[source]
        source: io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Ready {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("reading the queue: {0}")]
    Recv(#[source] io::Error),
    #[error("giving a verdict: {0}")]
    Verdict(#[source] io::Error),
}

/// How long a held message waits, at most, past its time (delay mode
/// polls the queue).
const POLL: Duration = Duration::from_millis(1);

fn run(args: &[String]) -> Result<(), Quote8Error> {
    let (queue, ready, mode) = match args {
        [q, r] => (q, r, None),
        [q, r, m] => (q, r, Some(m)),
        _ => return Err(Quote8Error::Usage),
    };
    let queue: u16 = queue
        .parse()
        .map_err(|_| Quote8Error::Queue(queue.clone()))?;
    let delay = match mode {
        None => None,
        Some(m) => Some(
            m.strip_prefix("delay=")
                .and_then(|ms| ms.parse().ok())
                .map(Duration::from_millis)
                .ok_or_else(|| Quote8Error::Mode(m.clone()))?,
        ),
    };
    let mut q = Queue::open().map_err(Quote8Error::Open)?;
    q.bind(queue)
        .map_err(|source| Quote8Error::Bind { queue, source })?;
    std::fs::write(ready, "ready\n").map_err(|source| Quote8Error::Ready {
        path: ready.clone(),
        source,
    })?;
    match delay {
        None => cut_all(&mut q),
        Some(d) => delay_all(&mut q, d),
    }
}

/// Accepts every message, time-exceeded ones cut.
fn cut_all(q: &mut Queue) -> Result<(), Quote8Error> {
    let mut cut = 0u64;
    loop {
        let mut msg = q.recv().map_err(Quote8Error::Recv)?;
        if let Some(new) = lab::quote8::cut(msg.get_payload()) {
            msg.set_payload(new);
            cut += 1;
            eprintln!("quote8: cut {cut}");
        }
        msg.set_verdict(Verdict::Accept);
        q.verdict(msg).map_err(Quote8Error::Verdict)?;
    }
}

/// Holds every message `delay`, then accepts it unchanged.
fn delay_all(q: &mut Queue, delay: Duration) -> Result<(), Quote8Error> {
    q.set_nonblocking(true);
    let mut held = VecDeque::new();
    let mut count = 0u64;
    loop {
        let now = Instant::now();
        while held.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, mut msg)) = held.pop_front() {
                nfq::Message::set_verdict(&mut msg, Verdict::Accept);
                q.verdict(msg).map_err(Quote8Error::Verdict)?;
            }
        }
        match q.recv() {
            Ok(msg) => {
                held.push_back((Instant::now() + delay, msg));
                count += 1;
                eprintln!("quote8: delayed {count}");
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) => return Err(Quote8Error::Recv(e)),
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quote8: {e}");
            ExitCode::FAILURE
        }
    }
}
