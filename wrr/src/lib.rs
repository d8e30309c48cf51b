//! A weighted-round-robin / deficit-round-robin packet scheduler with
//! explicit saturation semantics: `no_std`, no allocation, no `unsafe`,
//! O(1) enqueue and dequeue whatever the number of queues, the weights and
//! the packet sizes.
//!
//! It is the reference model of the router behaviour in the TransPAC QBSS
//! (QBone Scavenger Service) story, and small enough to embed in a dataplane:
//! a Juniper WRR profile gave best effort weight 98, QBSS weight 1, premium
//! weight 0 ("receives no servicing") and network control weight 1; WRR was
//! applied only while the circuit was saturated unless `transmit-buffers`
//! forced it.
//!
//! # API overview
//!
//! * [`Scheduler<P, N, CAP>`](Scheduler): `N` FIFO queues of at most `CAP`
//!   packets of type `P: `[`PacketLen`] (plain lengths `u16`/`u32`/`u64`/`usize`,
//!   byte slices and arrays, references, and `bytes::Bytes`/`BytesMut` with the
//!   `bytes` feature).
//!   * [`enqueue(queue, packet)`](Scheduler::enqueue) returns
//!     `Err(`[`Refused`]` { packet, queue, reason })` when the packet is not
//!     taken: nothing is lost silently.
//!   * [`dequeue()`](Scheduler::dequeue) / [`dequeue_indexed()`](Scheduler::dequeue_indexed)
//!     give the next packet (and its queue); `None` only when every queue is empty.
//!   * [`stats(queue)`](Scheduler::stats) / [`totals()`](Scheduler::totals):
//!     [`QueueStats`] (enqueued, dequeued, dropped packets and bytes; current
//!     and peak backlog).
//!   * [`peek()`](Scheduler::peek) shows the packet the next dequeue sends
//!     and [`dequeue_if(|packet| ...)`](Scheduler::dequeue_if) sends it only
//!     if a shaper or a parent scheduler says yes.
//!   * [`reconfigure`](Scheduler::reconfigure), [`set_class`](Scheduler::set_class),
//!     [`set_limit`](Scheduler::set_limit) at run time; [`drop_head`](Scheduler::drop_head),
//!     [`peek_queue`](Scheduler::peek_queue), [`phase`](Scheduler::phase).
//!   * With the `dscp` feature, `enqueue_classified`
//!     maps a packet's DS field through a `dscp` classifier table to a queue
//!     and enqueues it, in one call (see the `classify` module).
//!   * [`Timed<P>`](Timed) packets carry their enqueue time:
//!     [`enqueue_at`](Scheduler::enqueue_at) / [`dequeue_at`](Scheduler::dequeue_at)
//!     give each packet's sojourn time, for a CoDel- or PIE-style AQM on top.
//!   * [`Scheduler::new`] is a `const fn`: a scheduler can be built at
//!     compile time into a `static`, never on the stack.
//! * [`Config<N>`](Config): one [`QueueConfig`] per queue ([`Class`] and
//!   [`Limit`]), a [`Fairness`] and a [`Saturation`].
//!   * [`Class::Weighted(w)`](Class::Weighted): `w` shares; **weight 0 = never
//!     served**, arrivals refused ([`RefuseReason::NotServed`]).
//!   * [`Class::Scavenger(w)`](Class::Scavenger): a true scavenger (LE) tier,
//!     served only when every other queue is empty.
//!   * [`Class::Priority`]: at most one strict-priority queue ahead of all.
//!   * [`Fairness::Bytes { mtu }`](Fairness::Bytes): deficit round robin,
//!     quantum = weight x mtu; [`Fairness::Packets`]: classic WRR.
//!   * [`Saturation::WorkConserving`], [`Saturation::Forced`] (WRR on every
//!     packet) and [`Saturation::WhenSaturated`]`(`[`Threshold`]`)`: global
//!     arrival order until the total backlog reaches the threshold, WRR until
//!     it drains below the low mark.
//!
//! The algorithm, its O(1) argument and its fairness bound are written out in
//! the [`scheduler`] module documentation.
//!
//! # Example: the QBSS profile squeezes a backlogged scavenger queue to ~1%
//!
//! ```
//! use wrr::{Config, Fairness, RefuseReason, Saturation, Scheduler};
//!
//! // Queue 0 best effort 98, queue 1 QBSS 1, queue 2 premium 0, queue 3 network control 1.
//! let config = Config::new([98, 1, 0, 1], Fairness::Bytes { mtu: 1500 }, Saturation::Forced);
//! let mut link: Scheduler<u32, 4, 64> = Scheduler::new(config).unwrap();
//!
//! // Premium traffic is refused and handed back.
//! let refused = link.enqueue(2, 1500).unwrap_err();
//! assert_eq!((refused.packet, refused.reason), (1500, RefuseReason::NotServed));
//!
//! // Best effort and QBSS both keep their queues full; send 10,000 packets.
//! let mut sent = [0u64; 4];
//! for _ in 0..10_000 {
//!     for queue in [0, 1] {
//!         while link.enqueue(queue, 1500).is_ok() {}
//!     }
//!     let (queue, bytes) = link.dequeue_indexed().unwrap();
//!     sent[queue] += u64::from(bytes);
//! }
//! let total: u64 = sent.iter().sum();
//! let qbss_share = sent[1] as f64 / total as f64;
//! // Weight 1 of 98 + 1 backlogged: 1/99 = 1.01%.
//! assert!((0.009..0.012).contains(&qbss_share), "QBSS got {qbss_share}");
//! assert_eq!(sent[2], 0);
//!
//! // Once best effort leaves, QBSS reclaims the whole link.
//! while link.queue_len(0) > 0 {
//!     link.drop_head(0);
//! }
//! assert!((0..100).all(|_| {
//!     link.enqueue(1, 1500).ok();
//!     link.dequeue_indexed().map(|(q, _)| q) == Some(1)
//! }));
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "dscp")]
pub mod classify;
mod config;
mod packet;
mod refused;
pub mod scheduler;
mod stats;
mod timed;

#[cfg(feature = "dscp")]
pub use classify::Classifier;
pub use config::{
    BacklogUnit, Class, Config, ConfigError, Fairness, Limit, QueueConfig, Saturation, Threshold,
};
pub use packet::PacketLen;
pub use refused::{RefuseReason, Refused};
pub use scheduler::{Phase, Scheduler};
pub use stats::QueueStats;
pub use timed::{Departure, Timed};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
