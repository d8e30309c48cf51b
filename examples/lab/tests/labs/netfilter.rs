//! `firewall-check rewrite` against the real kernel: the netfilter lab
//! (`netfilter-lab.sh`) sends 3,000 random TCP segments (SYNs with and
//! without MSS, data segments, malformed option blocks, bad data offsets,
//! random checksums) through a router namespace running the real iptables
//! TCPMSS and TCPOPTSTRIP targets, capturing both sides. `rewrite` of the
//! inside capture must equal the outside capture byte for byte: the same
//! packets (the ones the kernel dropped left out), and for each the IP
//! total length and every byte of the TCP segment (header, options,
//! checksum, payload). The run must also have exercised the interesting
//! paths (changes, MSS insertions, drops, odd-offset MSS rewrites).
//!
//! The seed of each run is in its notes and in every failure message;
//! `NFLAB_SEED=N` repeats one. Shared rows: the kernel's answer does not
//! depend on timing.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use capture::link::{decode_link, Network};
use capture::CaptureReader;
use lab::{Ctx, Req, Share};

const COUNT: u32 = 3000;
const SRC: [u8; 4] = [198, 18, 21, 2];
const DST: [u8; 4] = [198, 18, 22, 2];

/// One row: the lab's rules and the same edits as `rewrite` options.
pub struct Case {
    /// Mixed into the seed, so the rows differ.
    salt: u64,
    /// netfilter-lab.sh's rule arguments.
    lab: &'static [&'static str],
    /// `firewall-check rewrite`'s options for the same edits.
    rewrite: &'static [&'static str],
    share: Share,
    needs: &'static [Req],
}

lab::rows! {
    lab = crate::LABS;
    run = run_case;
    type = Case;
    set_mss_and_strip => Case {
        salt: 1,
        lab: &["--set-mss", "1300", "wscale,sack-permitted,timestamp,md5,99"],
        rewrite: &["--tcpmss", "1300", "--strip-options", "wscale,sack-permitted,timestamp,md5,99"],
        share: Share::Shared,
        needs: lab::prereq::NETFILTER_LAB,
    },
    /// The receiver's link has MTU 1400: the kernel clamps to 1360.
    clamp_to_pmtu_and_strip => Case {
        salt: 2,
        lab: &["--clamp-mss-to-pmtu", "mss,sack,30,0x63"],
        rewrite: &["--clamp-mss-to-pmtu", "1400", "--strip-options", "mss,sack,30,0x63"],
        share: Share::Shared,
        needs: lab::prereq::NETFILTER_LAB,
    },
}

fn seed(salt: u64) -> u64 {
    if let Some(s) = std::env::var("NFLAB_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return s;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (now ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 1_000_000_007
}

/// The IPv4 TCP packets from the sender to the receiver in a capture, as
/// IP packets cut at their total length.
fn packets(path: &Path) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = CaptureReader::new(file).expect("a capture");
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("readable capture") {
        let Ok(l) = decode_link(rec.linktype, rec.data) else {
            continue;
        };
        if l.network != Network::Ipv4 {
            continue;
        }
        let ip = &rec.data[l.offset..];
        assert!(
            !rec.is_truncated(),
            "{}: frame {} cut short",
            path.display(),
            rec.frame
        );
        if ip.len() < 20 || ip[9] != 6 || ip[12..16] != SRC || ip[16..20] != DST {
            continue;
        }
        let len = usize::from(u16::from_be_bytes([ip[2], ip[3]])).min(ip.len());
        out.push(ip[..len].to_vec());
    }
    out
}

fn tcp(ip: &[u8]) -> &[u8] {
    &ip[usize::from(ip[0] & 0x0f) * 4..]
}

fn tcp_checksum_ok(ip: &[u8]) -> bool {
    tcp_options::checksum::verify_ipv4(SRC, DST, tcp(ip))
}

fn run_case(ctx: &Ctx, c: &Case) {
    let name = ctx.name();
    let seed = seed(c.salt);
    lab::note!("seed {seed} (NFLAB_SEED={seed} repeats it)");
    let dir = ctx.netfilter_lab("run", COUNT, seed, c.lab);
    let (inside, outside, expected) = (
        dir.join("inside.pcap"),
        dir.join("outside.pcap"),
        dir.join("expected.pcap"),
    );
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("rewrite"),
        inside.as_os_str(),
        expected.as_os_str(),
    ];
    args.extend(c.rewrite.iter().map(OsStr::new));
    let rw = ctx.tools().firewall_check(args);
    assert!(
        rw.status.success(),
        "{name} (seed {seed}): rewrite failed: {}",
        String::from_utf8_lossy(&rw.stderr)
    );
    let sent = packets(&inside);
    let want = packets(&expected);
    let got = packets(&outside);
    assert_eq!(
        sent.len(),
        COUNT as usize,
        "{name} (seed {seed}): the inside capture lost packets"
    );
    assert_eq!(
        want.len(),
        got.len(),
        "{name} (seed {seed}): rewrite keeps {} packets, the kernel forwarded {}",
        want.len(),
        got.len()
    );
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(
            (&w[2..4], &w[4..6]),
            (&g[2..4], &g[4..6]),
            "{name} (seed {seed}): packet {i}: IP total length / ID"
        );
        assert!(
            tcp(w) == tcp(g),
            "{name} (seed {seed}): packet {i} (IP ID {}): TCP differs\n rewrite: {:02x?}\n kernel:  {:02x?}",
            u16::from_be_bytes([w[4], w[5]]),
            tcp(w),
            tcp(g)
        );
    }
    // The run must have exercised the interesting paths, or it proves little.
    let id = |p: &Vec<u8>| u16::from_be_bytes([p[4], p[5]]);
    let by_id: std::collections::HashMap<u16, &Vec<u8>> = sent.iter().map(|p| (id(p), p)).collect();
    let (mut changed, mut inserted, mut broke_checksum) = (0, 0, 0);
    for g in &got {
        let s = by_id[&id(g)];
        changed += usize::from(tcp(s) != tcp(g));
        inserted += usize::from(tcp(g).len() == tcp(s).len() + 4);
        broke_checksum += usize::from(tcp_checksum_ok(s) && !tcp_checksum_ok(g));
    }
    let dropped = sent.len() - got.len();
    lab::note!(
        "seed {seed}: {} sent, {dropped} dropped, {changed} changed, {inserted} MSS inserted, {broke_checksum} unaligned-MSS checksums",
        sent.len()
    );
    assert!(
        changed > COUNT as usize / 4,
        "{name} (seed {seed}): only {changed} changed"
    );
    assert!(
        inserted > 20,
        "{name} (seed {seed}): only {inserted} insertions"
    );
    assert!(dropped > 10, "{name} (seed {seed}): only {dropped} drops");
    assert!(
        broke_checksum > 0,
        "{name} (seed {seed}): no odd-offset MSS rewrite seen"
    );
}
