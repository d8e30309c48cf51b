//! `firewall-check rewrite`: its command line (the iptables rules it
//! stands for), and the run that ties the capture, netfilter's edits
//! ([`crate::analysis::rewrite`]) and the output file together.

use std::io::{self, Write};
use std::path::PathBuf;

use tcp_options::netfilter::{MssTarget, StripListError, StripSet};

use crate::analysis::rewrite::{rewrite, RewriteError, Rules};
use crate::{Failure, Outcome};

/// Command-line arguments of `firewall-check rewrite`.
#[derive(Debug, Clone, clap::Args)]
pub struct RewriteArgs {
    /// The capture to read (pcap or pcapng); `-` reads standard input.
    pub input: PathBuf,
    /// The pcap file to write; `-` writes standard output.
    pub output: PathBuf,
    /// `-j TCPMSS --set-mss N` on SYN segments.
    #[arg(long, value_name = "N", conflicts_with = "clamp_mss_to_pmtu")]
    pub tcpmss: Option<u16>,
    /// `-j TCPMSS --clamp-mss-to-pmtu` on SYN segments, with this path MTU
    /// (the smaller of the route's and the reverse route's).
    #[arg(long, value_name = "MTU")]
    pub clamp_mss_to_pmtu: Option<u32>,
    /// `-j TCPOPTSTRIP --strip-options LIST` on every segment: mss, wscale,
    /// sack-permitted, sack, timestamp, md5 or kind numbers, comma-separated.
    #[arg(long, value_name = "LIST")]
    pub strip_options: Option<String>,
}

/// Why the arguments give no rules to apply.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// Two TCPMSS rules.
    #[error("--tcpmss and --clamp-mss-to-pmtu exclude each other")]
    TwoMssRules,
    /// A `--strip-options` list that does not parse.
    #[error("--strip-options: {0}")]
    StripOptions(#[from] StripListError),
    /// No rule at all.
    #[error("nothing to do: give --tcpmss, --clamp-mss-to-pmtu or --strip-options")]
    Nothing,
}

impl RewriteArgs {
    /// The rules these arguments ask for.
    pub fn rules(&self) -> Result<Rules, RulesError> {
        let tcpmss = match (self.tcpmss, self.clamp_mss_to_pmtu) {
            (Some(n), None) => Some(MssTarget::Set(n)),
            (None, Some(mtu)) => Some(MssTarget::ClampToPmtu { mtu }),
            (None, None) => None,
            (Some(_), Some(_)) => return Err(RulesError::TwoMssRules),
        };
        let strip = match &self.strip_options {
            Some(list) => Some(StripSet::parse(list)?),
            None => None,
        };
        if tcpmss.is_none() && strip.is_none() {
            return Err(RulesError::Nothing);
        }
        Ok(Rules { tcpmss, strip })
    }
}

/// Why `rewrite` failed, by stage.
#[derive(Debug, thiserror::Error)]
pub enum RewriteFailure {
    /// The arguments give no rules to apply (a usage error).
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// The capture cannot be opened.
    #[error(transparent)]
    Open(#[from] crate::OpenError),
    /// The output file cannot be created.
    #[error(transparent)]
    Create(#[from] crate::CreateError),
    /// Reading the capture or writing the pcap failed (the records before
    /// were written).
    #[error("{}: {source}", path.display())]
    Rewrite {
        /// The capture read.
        path: PathBuf,
        /// Why.
        #[source]
        source: RewriteError,
    },
}

/// Runs `rewrite` for the command line; a summary goes to standard error.
pub fn run(args: &RewriteArgs) -> Result<Outcome, Failure> {
    Ok(rewrite_run(args)?)
}

/// [`run`] with its typed error.
fn rewrite_run(args: &RewriteArgs) -> Result<Outcome, RewriteFailure> {
    let rules = args.rules()?;
    let input = crate::open_capture(&args.input)?;
    let output: Box<dyn Write> = if args.output.as_os_str() == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(crate::create_output(&args.output)?)
    };
    let stats = rewrite(input, output, &rules).map_err(|source| RewriteFailure::Rewrite {
        path: args.input.clone(),
        source,
    })?;
    eprintln!(
        "rewrite: {} packets, {} rewritten, {} dropped, {} copied as they were (cut by the snap length)",
        stats.packets, stats.rewritten, stats.dropped, stats.truncated
    );
    Ok(Outcome::Clean)
}
