//! `synack` and its twins (with the reflector): the server-to-client
//! direction.
//!
//! `synack` is the server's own SYN-ACK to a SYN of the prober's: the
//! reflector captures it as the server sent it and sends TTL-limited copies
//! of it, whose quotes it captures too; what reaches the prober is the far
//! end's view. Each SYN test has a twin, a crafted copy of the server's
//! SYN-ACK carrying the same option or mark, in the SYN-ACK's form where it
//! has one: Fast Open a cookie instead of the request (RFC 7413 section
//! 4.1.1), MP_CAPABLE with the sender's key (RFC 8684 section 3.1), an
//! ECN-setup SYN-ACK ECE only (RFC 3168 section 6.1.1), Fast Open's data in
//! the SYN becomes data in the SYN-ACK (RFC 7413 allows both).
//! `synack_accecn_setup` follows an AccECN-setup SYN, its flags those an
//! AccECN server answers that SYN with as the reflector captured it at the
//! server ([`accecn_answer`], RFC 9768).
//!
//! The reflector finds the server's SYN-ACK by its acknowledgment (the
//! SYN's sequence number + 1), wherever it went: behind a NAT the server
//! answers the translated address and port, the copies go there and the
//! NAT translates them back. Behind a SYN proxy the server sees nothing
//! until the prober's ACK completes the proxy's handshake; the proxy then
//! opens its own to the server (with the prober's sequence number, Linux
//! SYNPROXY) and keeps the server's SYN-ACK: the copies are sent after it,
//! through the proxy's sequence translation. Once the reflector has found
//! no SYN-ACK until the prober's ACK, the prober acknowledges every later
//! SYN-ACK at once ([`Prober::proxied`]).
//!
//! The twins run together ([`run_jobs`]): every handshake opened, every
//! request made, then one wait for all the copies and one for all the
//! quotes.

use std::time::{Duration, Instant};

use dscp::{DsField, Ecn};
use tcp_options::{Flags, MpCapable, OptionsBuilder};

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::error::{ControlError, ProbeError, Refusal};
use super::super::evaluate::Detail;
use super::super::prober::handshake::{SYN_OPTIONS, TSVAL};
use super::super::prober::{random_u32, Arrival, Prober};
use super::super::reflect::protocol::{Craft, Hex};
use super::super::reflect::Control;
use super::super::wire::{options, Answer, IpFields, Seen, Segment};
use super::fastopen_data::FASTOPEN_DATA;
use super::{FarEnd, Note, ReflectorRefusal, TestRun};
use crate::conn::Direction;
use crate::finding::Kind;

/// The server's own SYN-ACK's test.
pub const OWN: &str = "synack";

/// The twin that answers an AccECN-setup SYN.
pub const ACCECN: &str = "synack_accecn_setup";

/// The Fast Open cookie the crafted `synack_fastopen` and
/// `synack_fastopen_data` SYN-ACKs carry: 8 bytes (RFC 7413 section 4.1.1
/// allows 4 to 16). The prober never uses it: it only has to arrive.
pub const REVERSE_COOKIE: [u8; 8] = *b"fcpcooki";

/// The sender's key in the crafted `synack_mptcp` SYN-ACK's MP_CAPABLE
/// (RFC 8684 section 3.1: a SYN-ACK's carries one, a SYN's none).
pub const REVERSE_MPTCP_KEY: u64 = u64::from_be_bytes(*b"lab-key1");

/// The identification of the prober's SYNs and ACKs of the reverse tests.
const REVERSE_IDENT: u16 = 0x4000;

/// Pause between two passes over the reflector's capture.
const PASS_PAUSE: Duration = Duration::from_millis(20);

/// The server's own SYN-ACK.
pub fn own() -> TestSpec {
    TestSpec {
        name: OWN,
        what: "the server's own SYN-ACK",
        unit: Unit::SynAck,
        direction: Direction::ServerToClient,
        marks: Marks {
            window: 0,
            ..Marks::plain()
        },
        drop_kind: Kind::ProbeDropped,
        twin: None,
    }
}

/// The twin of a SYN test (`fastopen_data`'s included).
pub fn twin(t: &TestSpec) -> Option<TestSpec> {
    let mut r = TestSpec {
        name: t.twin?,
        unit: Unit::SynAck,
        direction: Direction::ServerToClient,
        twin: None,
        ..t.clone()
    };
    match t.name {
        // An ECN-setup SYN-ACK carries ECE only (RFC 3168 section 6.1.1).
        "ecn_setup" => r.marks.flags = Flags::ECE,
        "fastopen" => {
            r.marks.options = options(OptionsBuilder::new().fast_open(&REVERSE_COOKIE)).ok()?;
        }
        "fastopen_data" => {
            r.what = "a SYN-ACK with a Fast Open cookie and 64 bytes of data (RFC 7413)";
            r.marks.options = options(OptionsBuilder::new().fast_open(&REVERSE_COOKIE)).ok()?;
            r.marks.payload = FASTOPEN_DATA.to_vec();
        }
        "mptcp" => {
            let m = MpCapable {
                key: Some(REVERSE_MPTCP_KEY),
            };
            r.marks.options = options(OptionsBuilder::new().mp_capable(m)).ok()?;
        }
        _ => {}
    }
    Some(r)
}

/// What an AccECN server answers a SYN with (RFC 9768).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccEcnAnswer {
    /// The SYN arrived without AE, CWR or ECE: no ECN flag.
    NoSetup,
    /// The SYN arrived as an RFC 3168 setup (CWR+ECE): ECE.
    Rfc3168,
    /// An AccECN setup: AE, CWR and ECE feed back the SYN's IP-ECN field.
    AccEcn {
        /// The SYN's AE, CWR, ECE as it arrived.
        arrived: Flags,
        /// Its IP-ECN field as it arrived.
        ecn: Ecn,
        /// The SYN-ACK's.
        answer: Flags,
    },
}

impl AccEcnAnswer {
    /// The SYN-ACK's AE, CWR and ECE.
    pub fn flags(self) -> Flags {
        match self {
            AccEcnAnswer::NoSetup => Flags::empty(),
            AccEcnAnswer::Rfc3168 => Flags::ECE,
            AccEcnAnswer::AccEcn { answer, .. } => answer,
        }
    }
}

/// The ECN flags a server answers a SYN with, from the flags and the
/// IP-ECN field the SYN arrived with. RFC 9768: an AccECN server answers a
/// SYN with AE, CWR and ECE all set (and, section 3.1.3, any combination
/// but none and CWR+ECE, RFC 3168's setup) with the SYN's IP-ECN field fed
/// back in AE, CWR, ECE (Table 2, section 3.1.1): Not-ECT 0,1,0; ECT(1)
/// 0,1,1; ECT(0) 1,0,0; CE 1,1,0; an RFC 3168 setup gets ECE; a SYN
/// without them no ECN flag.
pub fn accecn_answer(syn_flags: Flags, ecn: Ecn) -> AccEcnAnswer {
    let setup = syn_flags & (Flags::AE | Flags::CWR | Flags::ECE);
    if setup.is_empty() {
        return AccEcnAnswer::NoSetup;
    }
    if setup == Flags::CWR | Flags::ECE {
        return AccEcnAnswer::Rfc3168;
    }
    let answer = match ecn {
        Ecn::NotEct => Flags::CWR,
        Ecn::Ect1 => Flags::CWR | Flags::ECE,
        Ecn::Ect0 => Flags::AE,
        Ecn::Ce => Flags::AE | Flags::CWR,
    };
    AccEcnAnswer::AccEcn {
        arrived: setup,
        ecn,
        answer,
    }
}

/// One reverse test in flight.
pub struct Job<'s> {
    /// Its spec (the marks the copies carry).
    spec: &'s TestSpec,
    sport: u16,
    isn: u32,
    /// The copies' identification.
    ident: u16,
    run: TestRun,
    /// The SYN-ACK that answered the prober's SYN.
    synack: Option<Seen>,
    /// The prober acknowledged it.
    acked: bool,
    /// ... because a SYN proxy answered the SYN: the copies go out after
    /// the proxy's handshake.
    for_proxy: bool,
    /// Still going (not ended by a note).
    live: bool,
}

impl<'s> Job<'s> {
    /// Opens the handshake of the reverse test `spec` (index `index`): a
    /// SYN with Linux's options and a timestamp (a SYN proxy keeps window
    /// scaling and SACK only with them: it encodes them in its timestamp
    /// cookie), AE+CWR+ECE for the AccECN twin.
    pub fn open(p: &mut Prober<'_>, index: u8, spec: &'s TestSpec) -> Result<Job<'s>, ProbeError> {
        let (sport, isn) = (p.io.port(), random_u32());
        let accecn = Flags::AE | Flags::CWR | Flags::ECE;
        let syn = Segment {
            seq: isn,
            flags: Flags::SYN
                | if spec.name == ACCECN {
                    accecn
                } else {
                    Flags::empty()
                },
            window: 64240,
            options: options(SYN_OPTIONS.timestamps(TSVAL, 0))?,
            ..Segment::new(sport, p.io.dport)
        };
        let sent =
            p.io.send_paced(IpFields::new(DsField::new(0), 64, REVERSE_IDENT), &syn)?;
        Ok(Job {
            spec,
            sport,
            isn,
            ident: 0x8000 | (u16::from(index) << 8),
            run: TestRun::new(sent, Direction::ServerToClient),
            synack: None,
            acked: false,
            for_proxy: false,
            live: true,
        })
    }

    fn own(&self) -> bool {
        self.spec.name == OWN
    }

    fn accecn(&self) -> bool {
        self.spec.name == ACCECN
    }

    fn ack(&self) -> u32 {
        self.isn.wrapping_add(1)
    }

    /// Ends the job with `note` (and our RST).
    fn end(&mut self, p: &Prober<'_>, note: Note) -> Result<(), ProbeError> {
        self.run.notes.push(note);
        self.live = false;
        p.send_rst(self.sport, self.ack())
    }

    /// Acknowledges the SYN-ACK because a SYN proxy answered it.
    fn acknowledge_proxy(&mut self, p: &Prober<'_>) -> Result<(), ProbeError> {
        self.for_proxy |= !self.acked;
        self.acknowledge(p)
    }

    /// Acknowledges the SYN-ACK (a SYN proxy then opens its own handshake
    /// with the server).
    fn acknowledge(&mut self, p: &Prober<'_>) -> Result<(), ProbeError> {
        if let (Some(s), false) = (&self.synack, self.acked) {
            p.send_ack(self.sport, self.ack(), s, REVERSE_IDENT, 502)?;
            self.acked = true;
        }
        Ok(())
    }

    /// The request for the reflector's copies.
    fn craft(&self, short: &[u8]) -> Craft {
        let m = &self.spec.marks;
        let mut ttls = short.to_vec();
        if self.own() {
            return Craft {
                port: self.sport,
                ack: Some(self.ack()),
                ident: self.ident,
                ttls,
                ..Craft::default()
            };
        }
        ttls.push(64);
        Craft {
            port: self.sport,
            ack: Some(self.ack()),
            ident: self.ident,
            ttls,
            tos: Some(m.ds.value()),
            extra_flags: Some(m.flags.bits()),
            options: Some(Hex(m.options.clone())),
            payload: (!m.payload.is_empty()).then(|| Hex(m.payload.clone())),
            offset: None,
        }
    }
}

/// Runs the server's own SYN-ACK and the twins among `specs` (the reverse
/// catalogue), filling `runs` by position.
pub fn run_all(
    p: &mut Prober<'_>,
    c: &mut Control,
    specs: &[TestSpec],
    runs: &mut [Option<TestRun>],
) -> Result<(), ProbeError> {
    let picked: Vec<usize> = (0..specs.len())
        .filter(|&i| specs[i].unit == Unit::SynAck)
        .collect();
    let pairs: Vec<(u8, &TestSpec)> = picked.iter().map(|&i| (i as u8, &specs[i])).collect();
    for (i, run) in picked.iter().zip(run_jobs(p, c, &pairs, false)?) {
        runs[*i] = Some(run);
    }
    Ok(())
}

/// Runs the reverse tests `tests` (index, spec) together (module docs);
/// with `full_only` the reflector sends the full copy alone (no
/// TTL-limited ones, no quotes to wait for). The runs, in order.
pub fn run_jobs(
    p: &mut Prober<'_>,
    c: &mut Control,
    tests: &[(u8, &TestSpec)],
    full_only: bool,
) -> Result<Vec<TestRun>, ProbeError> {
    let mut jobs = Vec::with_capacity(tests.len());
    for &(index, spec) in tests {
        jobs.push(Job::open(p, index, spec)?);
    }
    wait_synacks(p, &mut jobs)?;
    let short: Vec<u8> = if full_only {
        Vec::new()
    } else {
        p.path.short_ttls().collect()
    };
    for j in jobs.iter_mut().filter(|j| j.live) {
        request(p, c, j, &short)?;
    }
    wait_copies(p, &mut jobs);
    // A full copy that did not come is asked for once more (the full copy
    // only), as the forward tests send each copy twice at most.
    for j in jobs
        .iter_mut()
        .filter(|j| j.live && !j.own() && j.run.answer.is_none())
    {
        resend(p, c, j)?;
    }
    wait_copies(p, &mut jobs);
    if !full_only {
        collect_quotes(p, c, &mut jobs)?;
    }
    let len = p.path.len.unwrap_or(1);
    let mut out = Vec::with_capacity(jobs.len());
    for mut j in jobs {
        if j.live {
            if let Some((_, s)) = &j.run.answer {
                j.run.at_end = Some(FarEnd {
                    ttl: len,
                    address: p.io.src,
                    seen: s.clone(),
                });
            }
            // Close the server's half-open connection.
            p.send_rst(j.sport, j.ack())?;
        }
        p.io.forget(j.sport);
        out.push(j.run);
    }
    Ok(out)
}

/// Reads the SYN-ACKs answering the jobs' SYNs (one wait for all); behind
/// a SYN proxy acknowledges them at once. A job without one ends (the
/// AccECN twin says so).
fn wait_synacks(p: &mut Prober<'_>, jobs: &mut [Job<'_>]) -> Result<(), ProbeError> {
    let until = Instant::now() + p.io.timeout;
    let keys: Vec<(u16, u32)> = jobs.iter().map(|j| (j.sport, j.ack())).collect();
    // The SYN-ACK, or the RST that says nothing listens.
    let answer = |a: &Arrival| match &a.answer {
        Answer::Tcp(s) => {
            (s.has(Flags::SYN | Flags::ACK) || s.has(Flags::RST))
                && keys
                    .iter()
                    .any(|(port, ack)| s.dport() == *port && s.ack() == Some(*ack))
        }
        Answer::Icmp(_) => false,
    };
    let mut closed: Vec<u16> = Vec::new();
    loop {
        for a in p.io.take(answer) {
            let Answer::Tcp(s) = a.answer else { continue };
            if s.has(Flags::RST) {
                closed.push(s.dport());
            } else if let Some(j) = jobs
                .iter_mut()
                .find(|j| j.sport == s.dport() && j.synack.is_none())
            {
                j.synack = Some(s);
            }
        }
        let done = jobs
            .iter()
            .all(|j| j.synack.is_some() || closed.contains(&j.sport));
        if done || Instant::now() >= until {
            break;
        }
        p.io.wait(until, |inbox| inbox.iter().any(answer));
    }
    // No SYN-ACK: nothing to reflect, said why (an RST: nothing listens).
    for j in jobs.iter_mut() {
        match (&j.synack, j.accecn()) {
            // The AccECN twin acknowledges only if its SYN did not reach
            // the server ([`accecn_flags`]).
            (Some(_), false) if p.proxied => j.acknowledge_proxy(p)?,
            (Some(_), _) => {}
            (None, true) => {
                j.run.notes.push(Note::AccEcnNoSynAck);
                j.live = false;
            }
            (None, false) => {
                let closed = closed.contains(&j.sport);
                j.run.notes.push(if closed {
                    Note::PortClosed
                } else {
                    Note::NoSynAckToReflect
                });
                j.live = false;
            }
        }
    }
    Ok(())
}

/// The AccECN twin's flags: what an AccECN server answers its SYN with as
/// it arrived at the server (behind a SYN proxy it arrives only once the
/// prober has completed the proxy's handshake). `None`: ended with a note.
fn accecn_flags(
    p: &mut Prober<'_>,
    c: &mut Control,
    j: &mut Job<'_>,
) -> Result<Option<Flags>, ProbeError> {
    let mut arrived = poll_syn(p, c, j)?;
    let mut after_ack = j.acked;
    if arrived.is_none() && !j.acked {
        j.acknowledge(p)?;
        arrived = poll_syn(p, c, j)?;
        after_ack = true;
    }
    let Some(arrived) = arrived else {
        j.end(p, Note::AccEcnNotCaptured)?;
        return Ok(None);
    };
    let answer = accecn_answer(arrived.flags().unwrap_or(Flags::SYN), arrived.ds.ecn());
    j.run.notes.push(Note::AccEcn { after_ack, answer });
    Ok(Some(answer.flags()))
}

/// The job's SYN as the reflector captured it at the server, waiting up to
/// the timeout.
fn poll_syn(p: &Prober<'_>, c: &mut Control, j: &Job<'_>) -> Result<Option<Seen>, ProbeError> {
    let until = Instant::now() + p.io.timeout;
    loop {
        let found = c.arrived_syn(j.sport, j.isn, true)?;
        if found.is_some() || Instant::now() >= until {
            return Ok(found);
        }
        std::thread::sleep(PASS_PAUSE);
    }
}

/// Asks the reflector for the job's copies. No SYN-ACK of the server's to
/// copy: something on the path answered (a SYN proxy); the prober
/// completes that handshake (a proxy then opens its own to the server) and
/// asks again.
fn request(
    p: &mut Prober<'_>,
    c: &mut Control,
    j: &mut Job<'_>,
    short: &[u8],
) -> Result<(), ProbeError> {
    let mut craft = j.craft(short);
    if j.accecn() {
        match accecn_flags(p, c, j)? {
            Some(f) => craft.extra_flags = Some(f.bits()),
            None => return Ok(()),
        }
    } else if p.proxied {
        // A twin before found the proxy: no need to be refused first.
        j.acknowledge_proxy(p)?;
    }
    let sent = match c.send_synack(craft.clone()) {
        Err(e) if e.refusal() == Some(Refusal::NoSynack) && !j.acked => {
            j.acknowledge_proxy(p)?;
            p.proxied = true;
            c.send_synack(craft)
        }
        other => other,
    };
    let sent = match (sent, j.own()) {
        // What the server sent, as the reflector captured it (it found it
        // for the request: it is there).
        (Ok(_), true) => c.server_synack(j.sport, j.ack())?,
        (Ok(s), false) => s,
        (Err(e @ ControlError::Refused { .. }), _) => {
            let refusal = ReflectorRefusal {
                error: e.to_string(),
                code: e.refusal(),
            };
            return j.end(p, Note::Reflector(refusal));
        }
        (Err(e), _) => return Err(e.into()),
    };
    j.run.sent = sent.ok_or(ControlError::NothingSent {
        what: "SYN-ACK",
        port: j.sport,
    })?;
    if j.own() && j.for_proxy {
        let note = Note::ProxyKeepsSynAck {
            proxy_seq: j.synack.as_ref().map_or(0, Seen::seq),
            server_seq: j.run.sent.seq(),
        };
        return j.end(p, note);
    }
    if j.for_proxy {
        j.run.notes.insert(0, Note::SentAfterProxy);
    }
    if j.own() {
        let len = p.path.len.unwrap_or(1);
        j.run.answer = j.synack.clone().map(|s| (len, s));
    }
    Ok(())
}

/// Asks the reflector for the job's full copy once more.
fn resend(p: &Prober<'_>, c: &mut Control, j: &mut Job<'_>) -> Result<(), ProbeError> {
    let mut craft = j.craft(&[]);
    if let Some(f) = j.run.sent.flags().filter(|_| j.spec.name == ACCECN) {
        craft.extra_flags = Some((f & (Flags::AE | Flags::CWR | Flags::ECE)).bits());
    }
    match c.send_synack(craft) {
        Ok(_) => Ok(()),
        Err(e @ ControlError::Refused { .. }) => {
            let refusal = ReflectorRefusal {
                error: e.to_string(),
                code: e.refusal(),
            };
            j.end(p, Note::Reflector(refusal))
        }
        Err(e) => Err(e.into()),
    }
}

/// Reads the crafted full copies (by their identification), one wait for
/// all the jobs.
fn wait_copies(p: &mut Prober<'_>, jobs: &mut [Job<'_>]) {
    let len = p.path.len.unwrap_or(1);
    let until = Instant::now() + p.io.timeout;
    let keys: Vec<(u16, u32, u16)> = jobs
        .iter()
        .filter(|j| j.live && !j.own())
        .map(|j| (j.sport, j.ack(), j.ident))
        .collect();
    let copy = |a: &Arrival| match &a.answer {
        Answer::Tcp(s) => {
            s.has(Flags::SYN | Flags::ACK)
                && keys.iter().any(|(port, ack, ident)| {
                    s.dport() == *port && s.ack() == Some(*ack) && s.ident == *ident
                })
        }
        Answer::Icmp(_) => false,
    };
    loop {
        for a in p.io.take(copy) {
            let Answer::Tcp(s) = a.answer else { continue };
            if let Some(j) = jobs
                .iter_mut()
                .find(|j| j.sport == s.dport() && j.run.answer.is_none())
            {
                j.run.answer = Some((len, s));
            }
        }
        let done = jobs
            .iter()
            .filter(|j| j.live && !j.own())
            .all(|j| j.run.answer.is_some());
        if done || Instant::now() >= until {
            return;
        }
        p.io.wait(until, |inbox| inbox.iter().any(copy));
    }
}

/// The routers' quotes of each job's copies, from the reflector, until
/// each has one per hop before the target or the timeout (one wait for
/// all).
fn collect_quotes(p: &Prober<'_>, c: &mut Control, jobs: &mut [Job<'_>]) -> Result<(), ProbeError> {
    let want = p.path.short_ttls().len();
    let until = Instant::now() + p.io.timeout;
    loop {
        for j in jobs
            .iter_mut()
            .filter(|j| j.live && j.run.quotes.len() < want)
        {
            j.run.quotes = c.quotes(j.sport, j.ack(), j.ident, false)?;
        }
        let done = jobs
            .iter()
            .filter(|j| j.live)
            .all(|j| j.run.quotes.len() >= want);
        if done || Instant::now() >= until {
            return Ok(());
        }
        std::thread::sleep(PASS_PAUSE);
    }
}

/// `synack_fastopen_data`: how much of the SYN-ACK's data arrived.
pub fn judge(spec: &TestSpec, run: &TestRun, detail: &mut Vec<Detail>) {
    if spec.name != "synack_fastopen_data" {
        return;
    }
    let sent = run.sent.payload().map_or(0, <[u8]>::len);
    if let Some(o) = &run.at_end {
        let arrived = o.seen.payload().map_or(0, <[u8]>::len);
        detail.push(Detail::SynAckData { arrived, sent });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::catalogue::catalogue;

    /// RFC 9768 Table 2 (section 3.1.1): the SYN-ACK's AE, CWR and ECE for
    /// each IP-ECN field of an AccECN-setup SYN; and the other setups
    /// (section 3.1.3).
    #[test]
    fn accecn_synack_answers_the_syns_ip_ecn_field() {
        let all = Flags::AE | Flags::CWR | Flags::ECE;
        let f = |flags, ecn| accecn_answer(flags, ecn).flags();
        assert_eq!(f(all, Ecn::NotEct), Flags::CWR);
        assert_eq!(f(all, Ecn::Ect1), Flags::CWR | Flags::ECE);
        assert_eq!(f(all, Ecn::Ect0), Flags::AE);
        assert_eq!(f(all, Ecn::Ce), Flags::AE | Flags::CWR);
        // Any other combination but 000 and 011 is taken as AccECN.
        assert_eq!(f(Flags::AE, Ecn::Ect0), Flags::AE);
        assert_eq!(f(Flags::CWR | Flags::ECE, Ecn::NotEct), Flags::ECE);
        assert_eq!(f(Flags::empty(), Ecn::Ce), Flags::empty());
    }

    /// The SYN-ACK forms: a cookie, not a request; MP_CAPABLE with a key;
    /// ECE alone for the ECN setup; the exotic options as the SYN's.
    #[test]
    fn twins_carry_the_synack_form_of_their_option() {
        let all = catalogue();
        let rev = crate::analysis::probe::catalogue::reverse_catalogue(&all);
        let twin = |name: &str| rev.iter().find(|t| t.name == name).unwrap();
        assert_eq!(twin("synack_ecn_setup").marks.flags, Flags::ECE);
        for (fwd, back) in [
            ("exp253", "synack_exp253"),
            ("exp254", "synack_exp254"),
            ("unassigned", "synack_unassigned"),
            ("accecn0", "synack_accecn0"),
            ("accecn1", "synack_accecn1"),
        ] {
            let f = all.iter().find(|t| t.name == fwd).unwrap();
            assert_eq!(twin(back).marks.options, f.marks.options, "{back}");
        }
        for name in ["synack_fastopen", "synack_fastopen_data"] {
            let o = tcp_options::StrictOptions::new(&twin(name).marks.options)
                .filter_map(Result::ok)
                .find_map(|o| match o.option {
                    tcp_options::TcpOption::FastOpen(f) => Some(f.cookie.to_vec()),
                    _ => None,
                });
            assert_eq!(o.as_deref(), Some(&REVERSE_COOKIE[..]), "{name}");
        }
        assert_eq!(twin("synack_fastopen_data").marks.payload, FASTOPEN_DATA);
        assert!(twin("synack_fastopen").marks.payload.is_empty());
        // The bytes the probe sent before the builder wrote them.
        assert_eq!(
            twin("synack_mptcp").marks.options[..],
            *b"\x1e\x0c\x01\x01lab-key1"
        );
    }
}
