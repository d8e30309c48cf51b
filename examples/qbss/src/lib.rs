//! `qbss-model`, a packet-level simulation of a scavenger-service (QBSS) deployment,
//! and `qbss-router`, the same scenario forwarding real packets.
//!
//! The TransPAC engineers tested the QBone Scavenger Service on a borrowed Juniper M5
//! with UDP streams marked by their TOS byte, a precedence map putting them into output
//! queues and a weighted-round-robin profile (best effort 98, QBSS 1, premium 0, network
//! control 1). This crate reruns that test bench in software with the real classifier
//! ([`dscp`]) and scheduler ([`wrr`]) crates:
//!
//! * [`scenario`]: the TOML scenario format and its validation;
//! * [`presets`]: the scenarios of `examples/scenarios/`, built in;
//! * [`sim`]: the discrete-event engine; [`event`], [`time`]: its clock and event queue;
//! * [`source`] (constant-bit-rate UDP), [`tcp`] (NewReno or [`cubic`]): the traffic;
//! * [`vc`]: the virtual-circuit policer or shaper; [`classify`]: DS field to queue;
//!   [`sched`]: the `wrr` scheduler; [`link`]: line rate and framing;
//! * [`stats`], [`report`], [`plot`]: per-second figures, text / JSON / CSV, SVG;
//!   [`measured`]: a lab run's figures read back as a run;
//! * [`options`]: the command-line options both tools share (the scenario file or
//!   preset, `--scale`) and the loading of the scenario from them; [`cli`]: the
//!   `qbss-model` command line; [`router`]: `qbss-router`, the same scenario in a
//!   real dataplane, and its command line ([`router::cli`]).
//!
//! ```
//! use qbss::{presets, scenario::Scenario, sim};
//!
//! let sc = Scenario::from_toml(presets::find("premium-weight-0").unwrap().toml).unwrap();
//! let res = sim::run(&sc).unwrap();
//! let premium = sc.streams.iter().position(|s| s.name == "premium").unwrap();
//! // Weight 0: the premium queue is never served, every packet is a drop.
//! assert_eq!(res.intervals.total(premium, 0, 30).packets, 0);
//! assert_eq!(res.intervals.total(premium, 0, 30).drops, res.totals[premium].sent);
//! ```

pub mod classify;
pub mod cli;
pub mod cubic;
pub mod event;
pub mod link;
pub mod measured;
pub mod options;
pub mod packet;
pub mod plot;
pub mod presets;
pub mod report;
pub mod router;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod source;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod vc;

pub use packet::Packet;
pub use scenario::{Scenario, ScenarioError};
