//! Property tests of `dump --json`: any well-formed segment written into a
//! capture comes back with every field as built (addresses, ports, flags,
//! sequence numbers, window, DSCP/ECN, each option in wire order), over
//! every supported encapsulation; and arbitrary frame bytes under any link
//! type never make the decoder panic.

mod dump_support;

use capture::decode_tcp;
use dump_support::*;
use firewall_check::decode::decode_packet;
use firewall_check::output::dump::{dump, DumpFormat};
use proptest::prelude::*;
use serde_json::{json, Value};

/// One well-formed option: its bytes and its expected JSON.
fn option() -> impl Strategy<Value = (Vec<u8>, Value)> {
    prop_oneof![
        Just((vec![1], json!({"kind": 1}))),
        any::<u16>().prop_map(|m| {
            let b = m.to_be_bytes();
            (vec![2, 4, b[0], b[1]], json!({"kind": 2, "mss": m}))
        }),
        (0u8..=255).prop_map(|s| (vec![3, 3, s], json!({"kind": 3, "shift": s}))),
        Just((vec![4, 2], json!({"kind": 4}))),
        (any::<u32>(), any::<u32>()).prop_map(|(v, e)| {
            let mut o = vec![8, 10];
            o.extend_from_slice(&v.to_be_bytes());
            o.extend_from_slice(&e.to_be_bytes());
            (o, json!({"kind": 8, "tsval": v, "tsecr": e}))
        }),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 1..=3).prop_map(|blocks| {
            let mut o = vec![5, (2 + 8 * blocks.len()) as u8];
            for (l, r) in &blocks {
                o.extend_from_slice(&l.to_be_bytes());
                o.extend_from_slice(&r.to_be_bytes());
            }
            let b: Vec<Value> = blocks.iter().map(|(l, r)| json!([l, r])).collect();
            (o, json!({"kind": 5, "blocks": b}))
        }),
        // Kinds nobody assigned are kept with their data.
        (
            prop_oneof![Just(9u8), Just(77u8), Just(200u8)],
            proptest::collection::vec(any::<u8>(), 0..6)
        )
            .prop_map(|(k, data)| {
                let mut o = vec![k, (2 + data.len()) as u8];
                o.extend_from_slice(&data);
                let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
                (o, json!({"kind": k, "data": hex}))
            }),
    ]
}

/// Options that fit in 40 bytes with room for EOL padding.
fn options() -> impl Strategy<Value = Vec<(Vec<u8>, Value)>> {
    proptest::collection::vec(option(), 0..8).prop_map(|mut v| {
        while v.iter().map(|(b, _)| b.len()).sum::<usize>() > 36 {
            v.pop();
        }
        v
    })
}

fn flag_names(f: u8) -> Vec<&'static str> {
    ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"]
        .iter()
        .enumerate()
        .filter(|(i, _)| f & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn fields_round_trip(
        sport in any::<u16>(), dport in any::<u16>(), seq in any::<u32>(), ack in any::<u32>(),
        flags in any::<u8>(), window in any::<u16>(), tos in any::<u8>(),
        opts in options(), payload in 0usize..64, encap in 0usize..5, v6 in any::<bool>(),
    ) {
        let mut block = Vec::new();
        let mut want = Vec::new();
        for (b, j) in &opts {
            block.extend_from_slice(b);
            want.push(j.clone());
        }
        if block.len() % 4 != 0 {
            // Padding starts with EOL, which is listed; the zeros after it are not.
            block.push(0);
            want.push(json!({"kind": 0}));
        }
        let seg = Seg::new([198, 18, 0, 7], sport, [198, 19, 0, 9], dport)
            .seq(seq).ack(ack).flags(flags).win(window).tos(tos).opts(&block).payload(payload);
        let ip = if v6 { seg.ipv6(&[]) } else { seg.ipv4() };
        let ethertype = if v6 { 0x86dd } else { 0x0800 };
        let (linktype, frame) = match encap {
            0 => (1, ethernet(ethertype, &ip)),
            1 => {
                let mut f = vec![0u8; 12];
                f.extend_from_slice(&[0x81, 0x00, 0, 5]);
                f.extend_from_slice(&ethertype.to_be_bytes());
                f.extend_from_slice(&ip);
                (1, f)
            }
            2 => {
                let mut f = vec![0u8; 14];
                f.extend_from_slice(&ethertype.to_be_bytes());
                f.extend_from_slice(&ip);
                (113, f)
            }
            3 => (101, ip),
            _ => {
                let mut f = if v6 { 24u32 } else { 2u32 }.to_le_bytes().to_vec();
                f.extend_from_slice(&ip);
                (0, f)
            }
        };
        let file = pcap(linktype, true, &[Pkt::new(42_000_000_123, frame)]);
        let mut out = Vec::new();
        dump(&file[..], &mut out, &mut std::io::sink(), DumpFormat::Json).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let (src, dst) = if v6 { ("2001:db8::7", "2001:db8::9") } else { ("198.18.0.7", "198.19.0.9") };
        prop_assert_eq!(&v["src"], src);
        prop_assert_eq!(&v["dst"], dst);
        prop_assert_eq!(&v["sport"], sport);
        prop_assert_eq!(&v["dport"], dport);
        prop_assert_eq!(&v["seq"], seq);
        prop_assert_eq!(&v["ack"], ack);
        prop_assert_eq!(&v["window"], window);
        prop_assert_eq!(&v["dscp"], tos >> 2);
        prop_assert_eq!(&v["ecn"], tos & 3);
        prop_assert_eq!(&v["flags"], &json!(flag_names(flags)));
        prop_assert_eq!(&v["options"], &Value::Array(want));
        prop_assert!(v["options_error"].is_null());
        prop_assert_eq!(&v["time"].to_string(), "42.000000123");
    }

    #[test]
    fn arbitrary_frames_never_panic(
        linktype in prop_oneof![Just(0u32), Just(1), Just(12), Just(14), Just(101), Just(108), Just(113), Just(228), Just(229), Just(276)],
        frame in proptest::collection::vec(any::<u8>(), 0..200),
        origlen in any::<u32>(),
    ) {
        let seg = decode_tcp(linktype, &frame, origlen);
        if let Ok(Some(s)) = seg {
            prop_assert!(s.tcp.len() <= frame.len());
        }
        let file = pcap(linktype, false, &[Pkt { ts_ns: 1, data: frame.clone(), origlen: origlen as usize }]);
        let mut reader = capture::CaptureReader::new(&file[..]).unwrap();
        let rec = reader.next_record().unwrap().unwrap();
        if let Ok(Some(r)) = decode_packet(&rec) {
            let _ = r.options_problem();
            prop_assert!(r.options.len() <= 40);
        }
    }
}
