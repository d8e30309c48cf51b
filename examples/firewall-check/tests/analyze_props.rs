//! Property test: what `firewall-check analyze` reports as negotiated is what
//! `tcp-options`' Linux model says each receiving kernel records, for random
//! SYN and SYN-ACK option blocks (duplicates, MSS 0, known kinds with wrong
//! lengths, unknown kinds, lengths of 0 and 1, lengths running past the
//! block), written into a real capture and read back through the whole tool.

mod dump_support;

use dump_support::*;
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use proptest::prelude::*;
use serde_json::Value;
use tcp_options::{LinuxRepr, ParseContext, SignatureBuild};

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 19, 0, 1];
const T0: u64 = 1_700_000_000 * 1_000_000_000;

/// One record of an option block, often malformed.
fn record() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(vec![1]),
        Just(vec![0]),
        any::<u16>().prop_map(|m| vec![2, 4, (m >> 8) as u8, m as u8]),
        Just(vec![2, 4, 0, 0]),
        (0u8..=20).prop_map(|s| vec![3, 3, s]),
        Just(vec![4, 2]),
        (any::<u32>(), any::<u32>()).prop_map(|(v, e)| {
            let mut o = vec![8, 10];
            o.extend(v.to_be_bytes());
            o.extend(e.to_be_bytes());
            o
        }),
        // A known kind with a wrong length, with filler.
        (prop::sample::select(vec![2u8, 3, 4, 8, 5]), 2u8..12).prop_map(|(k, l)| {
            let mut o = vec![k, l];
            o.extend(std::iter::repeat_n(0x11, usize::from(l) - 2));
            o
        }),
        // Any kind, any length byte (0 and 1 included), short filler.
        (any::<u8>(), any::<u8>(), 0usize..6).prop_map(|(k, l, n)| {
            let mut o = vec![k, l];
            o.extend(std::iter::repeat_n(0x22, n));
            o
        }),
    ]
}

/// An option block of 0-40 bytes, a multiple of 4 (the data offset counts words).
fn block() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(record(), 0..8).prop_map(|recs| {
        let mut b: Vec<u8> = recs.concat();
        b.truncate(40);
        while !b.len().is_multiple_of(4) {
            b.push(1);
        }
        b
    })
}

fn analyze_handshake(syn: &[u8], synack: &[u8]) -> Value {
    let c = Seg::new(C, 40000, S, 5001);
    let s = Seg::new(S, 5001, C, 40000);
    let pkts = vec![
        Pkt::new(
            T0,
            c.clone().seq(1000).flags(SYN).win(64240).opts(syn).ipv4(),
        ),
        Pkt::new(
            T0 + 1_000_000,
            s.clone()
                .seq(9000)
                .ack(1001)
                .flags(SYN | ACK)
                .win(65160)
                .opts(synack)
                .ipv4(),
        ),
        Pkt::new(
            T0 + 2_000_000,
            c.seq(1001).ack(9001).flags(ACK).win(502).ipv4(),
        ),
    ];
    let file = pcap(101, true, &pkts);
    let mut out = Vec::new();
    analyze(
        &file[..],
        &mut out,
        AnalyzeFormat::Json,
        &Settings::default(),
    )
    .expect("analyze");
    let v: Value = serde_json::from_slice(&out).expect("JSON");
    v["connections"][0]["negotiated"].clone()
}

fn opt_num<T: Into<u64>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, |n| Value::from(n.into()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn analyze_reports_what_linux_records(syn in block(), synack in block()) {
        let n = analyze_handshake(&syn, &synack);
        let ctx = ParseContext::handshake(true);
        // The server's kernel parses the SYN, the client's the SYN-ACK.
        let at_server = LinuxRepr::parse(&syn, ctx);
        let at_client = LinuxRepr::parse(&synack, ctx);
        prop_assert_eq!(&n["mss"]["client"], &opt_num(at_server.mss), "{}", n);
        prop_assert_eq!(&n["mss"]["server"], &opt_num(at_client.mss), "{}", n);
        prop_assert_eq!(&n["wscale_offered"]["client"], &opt_num(at_server.window_scale), "{}", n);
        prop_assert_eq!(&n["wscale_offered"]["server"], &opt_num(at_client.window_scale), "{}", n);
        prop_assert_eq!(
            &n["wscale_clamped_from"]["client"],
            &opt_num(at_server.window_scale_clamped_from)
        );
        prop_assert_eq!(
            n["sack"].as_bool(),
            Some(at_server.sack_permitted && at_client.sack_permitted)
        );
        prop_assert_eq!(
            n["timestamps"].as_bool(),
            Some(at_server.timestamps.is_some() && at_client.timestamps.is_some())
        );
        // The client scales exactly when the SYN-ACK its kernel parsed
        // carries window scale and its own SYN offered it (RFC 7323
        // section 2.2; a Linux client sends none only with
        // tcp_window_scaling 0, and then ignores the SYN-ACK's). Its later
        // window field, 502, is a scaled one, so no mismatch evidence
        // overrides it.
        prop_assert_eq!(
            n["wscale_on"]["client"].as_bool(),
            Some(at_client.window_scale.is_some() && at_server.window_scale.is_some())
        );
        // Drops: reported exactly when one of the two builds drops a segment.
        let drops = |b: &[u8]| {
            [SignatureBuild::TcpAo, SignatureBuild::Md5Only]
                .into_iter()
                .filter(|&k| {
                    LinuxRepr::parse(b, ctx.with_signature_build(k))
                        .drop_without_keys()
                        .is_some()
                })
                .count()
        };
        let reported = n["linux_drops"].as_array().expect("linux_drops");
        let expected = usize::from(drops(&syn) > 0) + usize::from(drops(&synack) > 0);
        prop_assert_eq!(reported.len(), expected, "{}", n);
        for d in reported {
            let seg = if d["segment"] == "syn" { &syn } else { &synack };
            prop_assert_eq!(d["builds"].as_array().map(Vec::len), Some(drops(seg)));
        }
    }
}

/// The three disagreements a new user found (issue: one model of each
/// connection), each now read as Linux reads it.
#[test]
fn the_reported_disagreements_read_as_linux() {
    // Two MSS options: Linux keeps the last accepted one.
    let n = analyze_handshake(&[2, 4, 0x05, 0xb4, 2, 4, 0x04, 0x00], &[]);
    assert_eq!(n["mss"]["client"], 1024);
    // An MSS of 0: ignored, as if absent.
    let n = analyze_handshake(&[2, 4, 0, 0], &[]);
    assert!(n["mss"]["client"].is_null(), "{n}");
    // `04 08 ...`: SACK-Permitted with length 8 is stepped over, the walk reads on.
    let n = analyze_handshake(
        &[4, 8, 0, 0, 0, 0, 0, 0, 2, 4, 0x05, 0xb4, 1, 3, 3, 7],
        &[3, 3, 7, 1],
    );
    assert_eq!(n["mss"]["client"], 1460);
    assert_eq!(n["wscale_offered"]["client"], 7);
    assert_eq!(n["sack"], false);
}
