//! The command line: every flag as given, values still text (each is read,
//! and refused with its flag named, by [`crate::compute`]).

use clap::Parser;

/// Command-line arguments.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "bdp-calc",
    about = "TCP window calculator: bandwidth-delay product, window scaling, throughput ceilings, transfer times, loss-limited throughput",
    after_help = "Units: rates in bits per second (1Gbps, 155.52Mbit/s, 1.544Mbps, 10G); sizes in bytes \
(65535, 64KiB, 1MiB, 1.25MB, 4KB: KB = 1000, KiB = 1024); times with a unit (10ms, 0.55s, 25us).\n\n\
Examples:\n  bdp-calc --rate 1Gbps --rtt 10ms\n  bdp-calc --window 65535 --rtt 10ms\n  \
bdp-calc --size 8MiB --rate 51.84Mbps --window 1MiB --rtt 0.55s\n  bdp-calc --mss 1460 --rtt 100ms --loss 1%\n  \
bdp-calc --link oc3-atm --rtt 70ms --json\n  bdp-calc --rate 1Gbps --rtt 10ms --host linux --kernel 5.15\n  \
bdp-calc --size 8MiB --rate 51.84Mbps --rtt 0.55s\n\n\
Exit status: 0 done (also when standard output is closed early, as by `| head`); 1 runtime error \
(writing the output failed); 2 usage error (an unknown flag, a value that cannot be read, such as a \
zero RTT, or inputs that answer nothing)."
)]
pub struct Args {
    /// Path rate (bottleneck), e.g. 1Gbps, 155.52Mbit/s, 10G.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<String>,
    /// Round-trip time, e.g. 10ms, 0.55s.
    #[arg(long, value_name = "TIME")]
    pub rtt: Option<String>,
    /// TCP window (receive window or buffer), e.g. 65535, 64KiB, 1MiB.
    #[arg(long, value_name = "SIZE")]
    pub window: Option<String>,
    /// Amount of data to transfer, e.g. 8MiB, 100MB.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// TCP maximum segment size, e.g. 1460 (default with --link: MTU minus headers).
    #[arg(long, value_name = "SIZE")]
    pub mss: Option<String>,
    /// Packet loss probability: 0.01 or 1%.
    #[arg(long, value_name = "P")]
    pub loss: Option<String>,
    /// Padhye model: segments acknowledged per ACK (RFC 5348: 1).
    #[arg(long, value_name = "B", default_value_t = 1)]
    pub ack_every: u32,
    /// Padhye model: retransmission timeout (default 4 x RTT, as RFC 5348).
    #[arg(long, value_name = "TIME")]
    pub rto: Option<String>,
    /// A predefined link (see --list-links); its goodput is the rate when --rate is absent.
    #[arg(long, value_name = "NAME")]
    pub link: Option<String>,
    /// IP MTU for --link goodput (default 1500).
    #[arg(long, value_name = "SIZE")]
    pub mtu: Option<String>,
    /// Count IPv6 headers (40 bytes) instead of IPv4 (20) in goodput and MSS.
    #[arg(long)]
    pub ipv6: bool,
    /// Count the TCP timestamps option (12 bytes) in goodput and MSS.
    #[arg(long)]
    pub timestamps: bool,
    /// Print the settings a host needs for the BDP (or --window): only `linux`.
    #[arg(long, value_name = "OS", value_enum)]
    pub host: Option<Host>,
    /// With --host linux: the kernel version, e.g. 6.8 or 5.15.0-91-generic (default: the newest modelled, 6.16).
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// With --host linux on a kernel before 6.6: net.ipv4.tcp_adv_win_scale (-31..31; default 1).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub adv_win_scale: Option<i8>,
    /// With --host linux on 6.6 or later: the measured share of the receive buffer advertised as window, e.g. 0.7 or 70% (default 0.5).
    #[arg(long, value_name = "R")]
    pub scaling_ratio: Option<String>,
    /// List the predefined links and exit.
    #[arg(long)]
    pub list_links: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A host whose settings `--host` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Linux (`bdp`'s buffer model). (Not shown in `--help`: a documented
    /// value would turn its one-line list of values into a list with help.)
    #[value(help = None::<&str>)]
    Linux,
}
