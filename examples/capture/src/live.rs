//! Live capture from a network interface through libpcap (the `pcap`
//! crate; the `live` feature, which needs libpcap's development files to
//! build: `apt-get install libpcap-dev`).
//!
//! [`LiveCapture`] is a [`RecordSource`]: its records are numbered from 1
//! and carry the interface's link type, nanosecond timestamps and the
//! original length, like a file's, and go down the same decode. It stops
//! after `count` packets, after `duration`, or when `stop` is set (a Ctrl-C
//! handler): the handle is non-blocking (libpcap on Linux ignores the read
//! timeout in immediate mode), and an empty read sleeps [`IDLE_SLEEP`]
//! before the next, so a quiet interface stops on time. Each packet is
//! copied once into a buffer the capture keeps (no allocation per packet
//! once it has grown to the snap length). [`RecordSource::loss`] gives
//! libpcap's statistics: the packets the kernel dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pcap::{Active, Capture, Precision};

use crate::error::CaptureError;
use crate::reader::Record;
use crate::source::{CaptureLoss, LiveError, RecordSource};
use crate::timestamp::Timestamp;

/// libpcap's read timeout (ms), for platforms that honour it.
pub const POLL_INTERVAL_MS: i32 = 100;
/// How long an empty read waits before the next.
pub const IDLE_SLEEP: Duration = Duration::from_millis(2);
/// Default snap length: whole frames, BIG TCP included.
pub const DEFAULT_SNAPLEN: u32 = 262_144;
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
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop when this becomes true (checked at least every [`IDLE_SLEEP`]).
    pub stop: Option<Arc<AtomicBool>>,
}

/// A live capture on one interface.
pub struct LiveCapture {
    cap: Capture<Active>,
    options: LiveOptions,
    linktype: u32,
    snaplen: u32,
    frames: u64,
    deadline: Option<Instant>,
    /// The last packet's bytes.
    buf: Vec<u8>,
}

impl LiveCapture {
    /// Opens and activates the capture (immediate mode, nanosecond
    /// timestamps) and applies the filter.
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
            .immediate_mode(true)
            .timeout(POLL_INTERVAL_MS)
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
        let linktype = u32::try_from(cap.get_datalink().0).unwrap_or(0);
        let deadline = options.duration.map(|d| Instant::now() + d);
        Ok(LiveCapture {
            cap,
            options,
            linktype,
            snaplen,
            frames: 0,
            deadline,
            buf: Vec::new(),
        })
    }

    /// The interface's link type (LINKTYPE_ value).
    pub fn linktype(&self) -> u32 {
        self.linktype
    }

    /// Packet records returned so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    fn done(&self) -> bool {
        self.options.count.is_some_and(|n| self.frames >= n)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .options
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Waits for the next packet and copies it into the buffer: its
    /// timestamp and original length, or `None` when the capture is done.
    fn wait(&mut self) -> Result<Option<(Option<Timestamp>, u32)>, CaptureError> {
        loop {
            if self.done() {
                return Ok(None);
            }
            match self.cap.next_packet() {
                Ok(p) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(p.data);
                    let secs = i64::from(p.header.ts.tv_sec);
                    let nanos = u64::try_from(p.header.ts.tv_usec).unwrap_or(0);
                    let ts = Timestamp::from_fraction(secs, nanos, NANOS);
                    return Ok(Some((ts, p.header.len)));
                }
                Err(pcap::Error::TimeoutExpired) => std::thread::sleep(IDLE_SLEEP),
                Err(pcap::Error::NoMorePackets) => return Ok(None),
                Err(e) => {
                    return Err(CaptureError::Live(LiveError::Read {
                        interface: self.options.interface.clone(),
                        message: e.to_string(),
                    }))
                }
            }
        }
    }
}

impl RecordSource for LiveCapture {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        let Some((ts, origlen)) = self.wait()? else {
            return Ok(None);
        };
        self.frames += 1;
        Ok(Some(Record {
            frame: self.frames,
            ts,
            linktype: self.linktype,
            origlen,
            snaplen: self.snaplen,
            data: &self.buf,
        }))
    }

    fn has_buffered_record(&self) -> bool {
        // libpcap does not say; every packet is shown as it arrives.
        false
    }

    fn loss(&mut self) -> Option<CaptureLoss> {
        let s = self.cap.stats().ok()?;
        Some(CaptureLoss {
            received: u64::from(s.received),
            kernel_drops: u64::from(s.dropped),
            interface_drops: Some(u64::from(s.if_dropped)),
        })
    }
}
