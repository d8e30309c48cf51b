//! Live capture from a network interface through libpcap (the `pcap`
//! crate), the `live` feature: building it needs libpcap's development
//! files (`apt-get install libpcap-dev`); running it needs root or
//! `CAP_NET_RAW`.
//!
//! [`LiveCapture`] is a [`RecordSource`]: its records are numbered from 1
//! and carry the interface's link type (as a `LINKTYPE_` value, the one a
//! capture file would hold), nanosecond timestamps and the original length,
//! exactly as a file reader's, and go down the same decode.
//!
//! It stops after [`LiveOptions::count`] packets, after
//! [`LiveOptions::duration`], or when [`LiveOptions::stop`] is set (a
//! Ctrl-C handler). The handle is non-blocking; an empty read sleeps
//! [`IDLE_SLEEP`] before the next, so a quiet interface still stops on time.
//! It is not in libpcap's immediate mode: on Linux that mode uses a ring of
//! fixed slots of the snap length each (32 slots of 256 KiB in an 8 MiB
//! buffer), which a transfer on a veth overran, the kernel dropping half of
//! the packets in the lab; without it the ring holds variable-sized
//! packets in blocks (TPACKET_V3), and a block is handed over when full or
//! after [`READ_TIMEOUT_MS`], so a packet is seen at most that late. Each packet is copied once into a buffer
//! the capture keeps (no allocation per packet once it has grown).
//! [`RecordSource::loss`] gives libpcap's statistics: the packets the
//! kernel dropped because the capture did not keep up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pcap::{Active, Capture, Precision};

use crate::error::CaptureError;
use crate::link::{LINKTYPE_RAW, LINKTYPE_RAW_12, LINKTYPE_RAW_14};
use crate::reader::Record;
use crate::source::{CaptureLoss, LiveError, Next, RecordSource};
use crate::timestamp::Timestamp;

/// libpcap's read timeout: the longest a packet waits in a kernel block
/// before the capture sees it.
pub const READ_TIMEOUT_MS: i32 = 100;
/// How long an empty read waits before the next.
pub const IDLE_SLEEP: Duration = Duration::from_millis(2);
/// Default snap length: whole frames, BIG TCP and GRO included.
pub const DEFAULT_SNAPLEN: u32 = 262_144;
/// libpcap's kernel buffer: 8 MiB (libpcap's default is 2 MiB, which a
/// gigabit transfer of full frames fills in 16 ms).
pub const KERNEL_BUFFER: i32 = 8 << 20;
/// Nanoseconds per second.
const NANOS: u64 = 1_000_000_000;

/// How to capture.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    /// The interface (`eth0`, `any`, ...).
    pub interface: String,
    /// A capture filter in libpcap's language (`tcp port 443`).
    pub filter: Option<String>,
    /// Bytes kept of each packet (0: [`DEFAULT_SNAPLEN`]).
    pub snaplen: u32,
    /// Put the interface in promiscuous mode.
    pub promiscuous: bool,
    /// Stop after this many packets.
    pub count: Option<u64>,
    /// Stop after this long (from [`LiveCapture::open`]).
    pub duration: Option<Duration>,
    /// Stop when this becomes true (looked at between packets and at least
    /// every [`IDLE_SLEEP`] while none arrive).
    pub stop: Option<Arc<AtomicBool>>,
}

/// How long an ending capture still reads the packets that arrived before
/// its end: a kernel block is handed over within [`READ_TIMEOUT_MS`].
pub const DRAIN: Duration = Duration::from_millis(READ_TIMEOUT_MS as u64 + 50);

/// Whether [`LiveCapture::wait`] goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The capture runs.
    No,
    /// It is over once the packets from before its end are read.
    Draining,
    /// It is over.
    Now,
}

/// Why a live capture ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// `count` packets were read.
    Count,
    /// `duration` passed.
    Duration,
    /// `stop` was set (Ctrl-C).
    Interrupted,
}

/// A live capture on one interface.
pub struct LiveCapture {
    cap: Capture<Active>,
    options: LiveOptions,
    linktype: u32,
    snaplen: u32,
    frames: u64,
    deadline: Option<Instant>,
    ended: Option<EndReason>,
    /// Ending (duration or stop): until when packets that arrived before
    /// the end are still handed over, and that end's time.
    draining: Option<(Instant, Timestamp)>,
    /// The last packet's bytes.
    buf: Vec<u8>,
}

/// The `LINKTYPE_` value of a libpcap `DLT_` value: they differ only for
/// raw IP (`DLT_RAW` is 12 or 14 by platform, `LINKTYPE_RAW` 101).
pub fn linktype_of_dlt(dlt: i32) -> u32 {
    match u32::try_from(dlt) {
        Ok(LINKTYPE_RAW_12 | LINKTYPE_RAW_14) => LINKTYPE_RAW,
        Ok(v) => v,
        Err(_) => u32::MAX,
    }
}

impl LiveCapture {
    /// Opens and activates the capture (nanosecond timestamps,
    /// non-blocking, [`READ_TIMEOUT_MS`]) and applies the filter.
    pub fn open(options: LiveOptions) -> Result<Self, LiveError> {
        let interface = options.interface.clone();
        let open_error = |e: pcap::Error| LiveError::Open {
            interface: interface.clone(),
            message: e.to_string(),
        };
        let snaplen = if options.snaplen == 0 {
            DEFAULT_SNAPLEN
        } else {
            options.snaplen
        };
        let mut cap = Capture::from_device(options.interface.as_str())
            .map_err(open_error)?
            .snaplen(i32::try_from(snaplen).unwrap_or(i32::MAX))
            .promisc(options.promiscuous)
            .timeout(READ_TIMEOUT_MS)
            .buffer_size(KERNEL_BUFFER)
            .precision(Precision::Nano)
            .open()
            .and_then(|c| c.setnonblock())
            .map_err(open_error)?;
        if let Some(filter) = &options.filter {
            cap.filter(filter, true).map_err(|e| LiveError::Filter {
                interface: interface.clone(),
                filter: filter.clone(),
                message: e.to_string(),
            })?;
        }
        let linktype = linktype_of_dlt(cap.get_datalink().0);
        let deadline = options.duration.map(|d| Instant::now() + d);
        Ok(LiveCapture {
            cap,
            options,
            linktype,
            snaplen,
            frames: 0,
            deadline,
            ended: None,
            draining: None,
            buf: Vec::new(),
        })
    }

    /// The interface's link type (`LINKTYPE_` value).
    pub fn linktype(&self) -> u32 {
        self.linktype
    }

    /// The interface captured on.
    pub fn interface(&self) -> &str {
        &self.options.interface
    }

    /// Packet records returned so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Why the capture ended (or is ending); `None` while it runs (or
    /// after an error).
    pub fn end_reason(&self) -> Option<EndReason> {
        self.ended
    }

    /// Whether the capture is over: `count` packets read; or, once the
    /// duration has passed or `stop` is set, the packets that arrived
    /// before that moment handed over (they may still sit in a kernel
    /// block for [`READ_TIMEOUT_MS`]), later ones left out.
    fn check_end(&mut self) -> Ending {
        if self.options.count.is_some_and(|n| self.frames >= n) {
            self.ended.get_or_insert(EndReason::Count);
            self.draining = None;
            return Ending::Now;
        }
        if let Some((until, _)) = self.draining {
            return if Instant::now() >= until {
                self.draining = None;
                Ending::Now
            } else {
                Ending::Draining
            };
        }
        if self.ended.is_some() {
            return Ending::Now;
        }
        let reason = if self
            .options
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            EndReason::Interrupted
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            EndReason::Duration
        } else {
            return Ending::No;
        };
        self.ended = Some(reason);
        self.draining = Some((Instant::now() + DRAIN, Timestamp::now()));
        Ending::Draining
    }

    /// Waits for the next packet, until `until` at most, and copies it
    /// into the buffer.
    fn wait(&mut self, until: Option<Instant>) -> Result<Waited, CaptureError> {
        loop {
            if self.check_end() == Ending::Now {
                return Ok(Waited::End);
            }
            match self.cap.next_packet() {
                Ok(p) => {
                    // Nanosecond precision: `tv_usec` holds nanoseconds.
                    // `time_t` is 32 bits on some platforms.
                    #[allow(clippy::useless_conversion)]
                    let secs = i64::from(p.header.ts.tv_sec);
                    let nanos = u64::try_from(p.header.ts.tv_usec).unwrap_or(0);
                    let ts = Timestamp::from_fraction(secs, nanos.min(NANOS - 1), NANOS);
                    if let (Some((_, stop)), Some(t)) = (self.draining, ts) {
                        if t.nanos_since(&stop).is_some_and(|n| n > 0) {
                            // Arrived after the capture was asked to end.
                            continue;
                        }
                    }
                    self.buf.clear();
                    self.buf.extend_from_slice(p.data);
                    // The original length is at least what was captured.
                    let origlen = p.header.len.max(u32::try_from(p.data.len()).unwrap_or(0));
                    return Ok(Waited::Packet(ts, origlen));
                }
                Err(pcap::Error::TimeoutExpired) => {
                    if self.draining.is_none() && until.is_some_and(|u| Instant::now() >= u) {
                        return Ok(Waited::Idle);
                    }
                    std::thread::sleep(IDLE_SLEEP);
                }
                Err(pcap::Error::NoMorePackets) => return Ok(Waited::End),
                Err(e) => {
                    return Err(CaptureError::Live(LiveError::Read {
                        interface: self.options.interface.clone(),
                        message: e.to_string(),
                    }))
                }
            }
        }
    }

    fn record(&mut self, ts: Option<Timestamp>, origlen: u32) -> Record<'_> {
        self.frames += 1;
        Record {
            frame: self.frames,
            ts,
            linktype: self.linktype,
            origlen,
            snaplen: self.snaplen,
            data: &self.buf,
        }
    }
}

/// What a wait for a packet gave.
enum Waited {
    /// A packet, in the buffer: its time and original length.
    Packet(Option<Timestamp>, u32),
    /// None within the time asked.
    Idle,
    /// The capture is done.
    End,
}

impl RecordSource for LiveCapture {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        match self.wait(None)? {
            Waited::Packet(ts, origlen) => Ok(Some(self.record(ts, origlen))),
            Waited::Idle | Waited::End => Ok(None),
        }
    }

    fn next_within(&mut self, wait: Duration) -> Result<Next<'_>, CaptureError> {
        let until = Instant::now().checked_add(wait);
        match self.wait(until)? {
            Waited::Packet(ts, origlen) => Ok(Next::Record(self.record(ts, origlen))),
            Waited::Idle => Ok(Next::Idle),
            Waited::End => Ok(Next::End),
        }
    }

    fn has_buffered_record(&self) -> bool {
        // libpcap does not say whether a packet waits: every packet is
        // shown as it arrives.
        false
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        let s = self.cap.stats().ok()?;
        Some(CaptureLoss {
            received: u64::from(s.received),
            kernel_drops: u64::from(s.dropped),
            interface_drops: u64::from(s.if_dropped),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ip_dlts_become_linktype_raw() {
        assert_eq!(linktype_of_dlt(12), LINKTYPE_RAW);
        assert_eq!(linktype_of_dlt(14), LINKTYPE_RAW);
        assert_eq!(linktype_of_dlt(1), 1);
        assert_eq!(linktype_of_dlt(113), 113);
        assert_eq!(linktype_of_dlt(-1), u32::MAX);
    }

    #[test]
    fn a_missing_interface_is_an_open_error_naming_it() {
        let err = match LiveCapture::open(LiveOptions {
            interface: "no-such-if0".into(),
            ..LiveOptions::default()
        }) {
            Ok(_) => panic!("an interface that does not exist opened"),
            Err(e) => e,
        };
        assert!(
            matches!(&err, LiveError::Open { interface, .. } if interface == "no-such-if0"),
            "{err:?}"
        );
    }

    /// The loopback interface (root): a count of 0 ends at once, a
    /// duration ends on a quiet interface, a bad filter is refused.
    #[test]
    fn loopback_ends_by_count_duration_and_refuses_a_bad_filter() {
        let open = |o: LiveOptions| LiveCapture::open(o);
        let base = LiveOptions {
            interface: "lo".into(),
            filter: Some("tcp port 9".into()),
            ..LiveOptions::default()
        };
        let mut cap = match open(base.clone()) {
            Ok(c) => c,
            // Not root: nothing more to check here (the lab runs as root).
            Err(LiveError::Open { message, .. }) if message.contains("ermission") => return,
            Err(e) => panic!("{e}"),
        };
        drop(cap);
        cap = open(LiveOptions {
            count: Some(0),
            ..base.clone()
        })
        .unwrap();
        assert!(cap.next_record().unwrap().is_none());
        assert_eq!(cap.end_reason(), Some(EndReason::Count));
        let started = Instant::now();
        let mut cap = open(LiveOptions {
            duration: Some(Duration::from_millis(150)),
            filter: Some("tcp port 9 and host 198.18.255.254".into()),
            ..base.clone()
        })
        .unwrap();
        assert!(matches!(
            cap.next_within(Duration::from_millis(20)).unwrap(),
            Next::Idle
        ));
        assert_eq!(cap.end_reason(), None, "idle is not the end");
        assert!(cap.next_record().unwrap().is_none());
        assert_eq!(cap.end_reason(), Some(EndReason::Duration));
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(150) && took < Duration::from_secs(3),
            "{took:?}"
        );
        assert_eq!(cap.loss().map(|l| l.kernel_drops), Some(0));
        let stop = Arc::new(AtomicBool::new(true));
        let mut cap = open(LiveOptions {
            stop: Some(stop),
            ..base.clone()
        })
        .unwrap();
        assert!(cap.next_record().unwrap().is_none());
        assert_eq!(cap.end_reason(), Some(EndReason::Interrupted));
        let err = match open(LiveOptions {
            filter: Some("tcp port".into()),
            ..base
        }) {
            Ok(_) => panic!("a bad filter was accepted"),
            Err(e) => e,
        };
        assert!(matches!(err, LiveError::Filter { .. }), "{err:?}");
    }
}
