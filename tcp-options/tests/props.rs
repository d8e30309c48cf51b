//! Property tests: round trips, checksum invariants, policies on arbitrary
//! bytes. Failing seeds are kept in `tests/regressions/props.txt`.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use tcp_options::{
    checksum, rewrite, LinuxOptions, LinuxRepr, OptionsBuilder, ParseContext, SackBlock,
    SignatureBuild, StrictOptions, TcpOption, TcpPacket, Timestamps,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/regressions/props.txt",
        ))),
        ..ProptestConfig::default()
    }
}

#[derive(Debug, Clone)]
struct Opts {
    md5: Option<[u8; 16]>,
    mss: Option<u16>,
    ts: Option<(u32, u32)>,
    sack_perm: bool,
    ws: Option<u8>,
    blocks: Vec<SackBlock>,
    tfo: Option<Vec<u8>>,
}

impl Opts {
    fn builder(&self) -> OptionsBuilder<'_> {
        OptionsBuilder {
            md5: self.md5,
            mss: self.mss,
            timestamps: self.ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
            sack_permitted: self.sack_perm,
            window_scale: self.ws,
            sack_blocks: &self.blocks,
            fast_open: self.tfo.as_deref(),
            mp_capable: None,
            accecn: None,
            other: None,
        }
    }
}

fn opts() -> impl Strategy<Value = Opts> {
    let block = (any::<u32>(), any::<u32>()).prop_map(|(left, right)| SackBlock { left, right });
    let cookie = prop_oneof![
        Just(Vec::new()),
        (2usize..=8).prop_flat_map(|half| proptest::collection::vec(any::<u8>(), half * 2)),
    ];
    (
        proptest::option::weighted(0.2, any::<[u8; 16]>()),
        proptest::option::of(any::<u16>()),
        proptest::option::of((any::<u32>(), any::<u32>())),
        any::<bool>(),
        proptest::option::of(any::<u8>()),
        proptest::collection::vec(block, 0..=4),
        proptest::option::weighted(0.3, cookie),
    )
        .prop_map(|(md5, mss, ts, sack_perm, ws, blocks, tfo)| Opts {
            md5,
            mss,
            ts,
            sack_perm,
            ws,
            blocks,
            tfo,
        })
}

/// A segment with the given options (padded to a word), header fields and payload.
fn segment(opts: &[u8], fields: (u32, u32, u16, u8), payload: &[u8]) -> Vec<u8> {
    let mut o = opts.to_vec();
    o.truncate(40);
    while o.len() % 4 != 0 {
        o.push(0);
    }
    let (seq, ack, win, flags) = fields;
    let mut s = Vec::new();
    s.extend_from_slice(&40000u16.to_be_bytes());
    s.extend_from_slice(&443u16.to_be_bytes());
    s.extend_from_slice(&seq.to_be_bytes());
    s.extend_from_slice(&ack.to_be_bytes());
    s.push((((20 + o.len()) / 4) as u8) << 4);
    s.push(flags);
    s.extend_from_slice(&win.to_be_bytes());
    s.extend_from_slice(&[0, 0, 0, 0]);
    s.extend_from_slice(&o);
    s.extend_from_slice(payload);
    s
}

#[derive(Debug, Clone)]
enum Op {
    Strip(Vec<u8>),
    SetWs(u8),
    RemoveWs,
    ClampMss(u16),
    Window(u16),
    Seq(u32),
    Ack(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(Op::Strip),
        proptest::collection::vec(
            prop_oneof![
                Just(2u8),
                Just(3),
                Just(4),
                Just(5),
                Just(8),
                Just(19),
                Just(34)
            ],
            1..3
        )
        .prop_map(Op::Strip),
        any::<u8>().prop_map(Op::SetWs),
        Just(Op::RemoveWs),
        any::<u16>().prop_map(Op::ClampMss),
        any::<u16>().prop_map(Op::Window),
        any::<u32>().prop_map(Op::Seq),
        any::<u32>().prop_map(Op::Ack),
    ]
}

fn apply(op: &Op, s: &mut [u8]) -> bool {
    match op {
        Op::Strip(k) => rewrite::strip_options(s, k).is_ok(),
        Op::SetWs(v) => rewrite::set_window_scale(s, *v).is_ok(),
        Op::RemoveWs => rewrite::remove_window_scale(s).is_ok(),
        Op::ClampMss(m) => rewrite::clamp_mss(s, *m).is_ok(),
        Op::Window(w) => rewrite::set_window(s, *w).is_ok(),
        Op::Seq(d) => rewrite::add_to_seq(s, *d).is_ok(),
        Op::Ack(d) => rewrite::add_to_ack(s, *d).is_ok(),
    }
}

const SRC: [u8; 4] = [198, 18, 0, 1];
const DST: [u8; 4] = [198, 19, 0, 9];

proptest! {
    #![proptest_config(config())]

    /// Build, then parse with both policies: every field comes back.
    #[test]
    fn build_then_parse_round_trips(o in opts()) {
        let b = o.builder();
        let built = match b.build() {
            Ok(v) => v,
            Err(_) => {
                // Only refused when it really does not fit (or cookie invalid: never generated).
                prop_assert!(b.len().is_err());
                return Ok(());
            }
        };
        prop_assert_eq!(built.len() % 4, 0);
        prop_assert!(built.len() <= 40);
        let parsed: Vec<TcpOption> = StrictOptions::new(&built)
            .map(|r| r.map(|p| p.option))
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(parsed.iter().find_map(|p| match p { TcpOption::MaxSegmentSize(m) => Some(*m), _ => None }), o.mss);
        prop_assert_eq!(parsed.iter().find_map(|p| match p { TcpOption::WindowScale(m) => Some(*m), _ => None }), o.ws);
        prop_assert_eq!(parsed.contains(&TcpOption::SackPermitted), o.sack_perm);
        prop_assert_eq!(parsed.iter().find_map(|p| match p { TcpOption::Timestamps(t) => Some((t.tsval, t.tsecr)), _ => None }), o.ts);
        let blocks: Vec<SackBlock> = parsed.iter().find_map(|p| match p { TcpOption::Sack(b) => Some(b.iter().collect()), _ => None }).unwrap_or_default();
        prop_assert_eq!(&blocks, &o.blocks);
        prop_assert_eq!(parsed.iter().find_map(|p| match p { TcpOption::FastOpen(f) => Some(f.cookie.to_vec()), _ => None }), o.tfo.clone());
        prop_assert_eq!(parsed.iter().find_map(|p| match p { TcpOption::Md5Signature(d) => Some(**d), _ => None }), o.md5);
        // The Linux view of the same block, on a SYN.
        let r = LinuxRepr::parse(&built, ParseContext::handshake(true));
        prop_assert_eq!(r.mss, o.mss.filter(|m| *m != 0));
        prop_assert_eq!(r.window_scale, o.ws.map(|w| w.min(14)));
        prop_assert_eq!(r.sack_permitted, o.sack_perm);
        prop_assert_eq!(r.stopped, None);
        prop_assert_eq!(r.skipped, 0);
    }

    /// A build's drop decision from its signature walk alone is the one
    /// of the block parsed in that build, on arbitrary bytes and on blocks
    /// that hold MD5 (19) and TCP-AO (29) records of any length.
    #[test]
    fn signature_drop_from_the_walk_alone(
        block in proptest::collection::vec(any::<u8>(), 0..48),
        sig in proptest::collection::vec(
            (prop_oneof![Just(19u8), Just(29u8), Just(1u8)], 0u8..24, 0usize..40),
            0..3,
        ),
    ) {
        let mut block = block;
        for (kind, len, at) in sig {
            let at = at.min(block.len());
            block.splice(at..at, [kind, len]);
        }
        block.truncate(40);
        for build in SignatureBuild::ALL {
            let ctx = ParseContext::handshake(true).with_signature_build(build);
            prop_assert_eq!(
                build.drop_without_keys(&block),
                LinuxRepr::parse(&block, ctx).drop_without_keys(),
                "{:?} {:02x?}", build, block
            );
        }
    }

    /// Strict and Linux on arbitrary bytes: no panic, offsets in order and
    /// in range, and where strict finds no error the two agree.
    #[test]
    fn policies_on_arbitrary_bytes(block in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut last = None;
        let mut strict = Vec::new();
        let mut clean = true;
        for item in StrictOptions::new(&block) {
            match item {
                Ok(p) => {
                    prop_assert!(last.is_none_or(|l| p.offset > l));
                    prop_assert!(p.offset + p.wire_len() <= block.len());
                    prop_assert_eq!(p.kind, p.option.kind());
                    last = Some(p.offset);
                    strict.push(p);
                }
                Err(e) => {
                    prop_assert!(e.offset < block.len());
                    clean = e.is_warning();
                }
            }
        }
        let mut linux_it = LinuxOptions::new(&block);
        let linux: Vec<_> = linux_it.by_ref().collect();
        for p in &linux {
            prop_assert!(p.offset + p.wire_len() <= block.len());
        }
        if clean {
            prop_assert_eq!(&linux, &strict);
            prop_assert_eq!(linux_it.stopped(), None);
        } else {
            // Linux never stops before strict's error and shares its prefix.
            prop_assert!(linux.len() >= strict.len());
            prop_assert_eq!(&linux[..strict.len()], &strict[..]);
        }
        for syn in [false, true] {
            let r = LinuxRepr::parse(&block, ParseContext::handshake(syn));
            if let Some(w) = r.window_scale { prop_assert!(w <= 14); }
            prop_assert_eq!(r.stopped, linux_it.stopped());
            if !syn { prop_assert_eq!(r.mss, None); }
        }
    }

    /// Every rewrite keeps a valid checksum valid, and the incremental result
    /// equals a full recomputation, on built and on arbitrary option blocks.
    #[test]
    fn rewrites_keep_checksum(
        o in opts(),
        raw in proptest::collection::vec(any::<u8>(), 0..40),
        use_raw in any::<bool>(),
        fields in (any::<u32>(), any::<u32>(), any::<u16>(), any::<u8>()),
        payload in proptest::collection::vec(any::<u8>(), 0..9),
        ops in proptest::collection::vec(op(), 1..4),
    ) {
        let built = o.builder().build().unwrap_or_default();
        let opts: &[u8] = if use_raw { &raw } else { &built };
        let mut s = segment(opts, fields, &payload);
        prop_assert!(checksum::fill_ipv4(SRC, DST, &mut s));
        for op in &ops {
            let before = s.clone();
            let ok = apply(op, &mut s);
            if !ok { prop_assert_eq!(&s, &before, "error leaves the segment unchanged"); }
            prop_assert_eq!(checksum::ipv4(SRC, DST, &s), Some(u16::from_be_bytes([s[16], s[17]])));
            // The header is still valid.
            prop_assert!(TcpPacket::new_checked(&s).is_ok());
        }
    }

    /// Nothing panics on arbitrary segments, whatever the operation.
    #[test]
    fn nothing_panics(seg in proptest::collection::vec(any::<u8>(), 0..80), ops in proptest::collection::vec(op(), 1..3)) {
        if let Ok(p) = TcpPacket::new_checked(&seg) {
            prop_assert!(p.header().data_offset() >= 5);
            prop_assert_eq!(20 + p.options().len() + p.payload().len(), seg.len());
            let _ = p.linux_repr(ParseContext::established(true, true));
        }
        let mut s = seg.clone();
        for op in &ops {
            let valid_header = TcpPacket::new_checked(&s).is_ok();
            let ok = apply(op, &mut s);
            if matches!(op, Op::SetWs(_)) {
                // May also fail for lack of a Window Scale option.
                prop_assert!(!ok || valid_header);
            } else {
                prop_assert_eq!(ok, valid_header);
            }
        }
        let _ = checksum::ipv4(SRC, DST, &seg);
        let _ = checksum::verify_ipv6([0; 16], [1; 16], &seg);
    }
}
