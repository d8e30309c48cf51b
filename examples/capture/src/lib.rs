//! Reading packet captures: pcap/pcapng records, link layers, IPv4/IPv6 down to the TCP segment.
//!
//! The layers, one per file:
//!
//! - [`reader`]: the streaming pcap / pcapng reader ([`CaptureReader`]) with a
//!   fixed buffer, yielding numbered [`Record`]s with their link type and
//!   nanosecond [`Timestamp`].
//! - [`link`]: Ethernet (VLAN / QinQ), Linux SLL / SLL2, raw IP, BSD loopback,
//!   IP over InfiniBand.
//! - [`ipv4`], [`ipv6`]: IP headers; IPv6 extension headers are walked to the
//!   upper layer (jumbograms and fragments understood).
//! - [`source`]: [`RecordSource`], the one reading path of the tools: a
//!   file or pipe ([`CaptureReader`]) or, with the `live` feature, a network
//!   interface (`live::LiveCapture`, libpcap through the `pcap` crate);
//!   [`CaptureLoss`], what a live capture lost; [`Tee`], `-w`.
//! - [`writer`]: the one pcap / pcapng writer (tests, `rewrite`, the labs,
//!   the bench generator), and copying a capture without chosen records.
//! - [`encap`]: tunnels and provider encapsulations, one decoder per format
//!   (GRE, ERSPAN, NVGRE, VXLAN, Geneve, GTP-U, L2TP, IP in IP, MPLS,
//!   PPPoE, PPP, Cisco HDLC, 802.1ah, LLC/SNAP, FDDI, NFLOG), the typed
//!   layers a segment was carried in ([`encap::Tunnels`]) and why a frame gave no
//!   segment ([`encap::Skip`]).
//! - [`decode`]: the bounded walk from the link layer through any stack of
//!   those to TCP.
//! - [`segment`]: the whole path, [`decode_segment`] (through tunnels) and
//!   [`decode_tcp`] (plain links only), giving a [`TcpSegment`]: the IP
//!   facts, the captured TCP bytes, marked when the snap length cut them
//!   short, and the layers it was carried in.
//! - [`tally`]: counts of segments by encapsulation and of frames skipped
//!   by reason, for the tools' summaries.
//!
//! ```
//! use capture::{decode_tcp, link::LINKTYPE_RAW};
//! let mut pkt = vec![0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1];
//! pkt.extend_from_slice(&[0u8; 20]);
//! let seg = decode_tcp(LINKTYPE_RAW, &pkt, 40).unwrap().unwrap();
//! assert_eq!(seg.tcp.len(), 20);
//! assert!(!seg.is_truncated());
//! ```

pub mod decode;
pub mod encap;
pub mod error;
pub mod ipv4;
pub mod ipv6;
pub mod link;
#[cfg(feature = "live")]
pub mod live;
pub mod reader;
pub mod segment;
pub mod source;
pub mod tally;
pub mod timestamp;
pub mod writer;

pub use encap::{EncapKind, OuterIp, Skip, Tunnels};
pub use error::{BlockLengthProblem, CaptureError, DecodeError};
pub use reader::{CaptureFormat, CaptureReader, Record};
pub use segment::{decode_segment, decode_tcp, IpInfo, IpVersion, TcpSegment};
pub use source::{CaptureLoss, LiveError, Next, RecordSource, Tee};
pub use timestamp::Timestamp;
