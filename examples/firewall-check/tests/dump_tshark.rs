//! `dump --json` against Wireshark's dissection (tshark) of crafted
//! segments: on well-formed option blocks both must list the same kinds in
//! the same order with the same MSS, shift, timestamps and SACK blocks; on
//! malformed blocks dump must report an `options_error` where tshark flags
//! the segment too. Needs tshark: skipped with a message when it is missing,
//! a failure when TCP_PERF_LAB_REQUIRED=1.

mod dump_support;

use std::process::Command;

use dump_support::*;
use serde_json::Value;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 19, 0, 1];

fn tshark_available() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !required(),
            "tshark is required (TCP_PERF_LAB_REQUIRED=1) but not installed"
        );
        eprintln!("skipping: tshark not installed (apt-get install tshark)");
    }
    ok
}

fn sack(blocks: &[(u32, u32)]) -> Vec<u8> {
    let mut o = vec![1, 1, 5, (2 + 8 * blocks.len()) as u8];
    for (l, r) in blocks {
        o.extend_from_slice(&l.to_be_bytes());
        o.extend_from_slice(&r.to_be_bytes());
    }
    o
}

/// Well-formed option blocks of many kinds.
fn well_formed() -> Vec<Seg> {
    let base = || Seg::new(C, 40000, S, 80).seq(5000).ack(9000);
    let mut ts_sack = ts_options(123_456, 654_321);
    ts_sack.extend(sack(&[(1000, 2000), (3000, 4000), (5000, 6000)]));
    let mut md5 = vec![19, 18];
    md5.extend(1..=16u8);
    md5.extend_from_slice(&[1, 1]);
    vec![
        base().flags(SYN).ack(0).opts(&linux_syn_options(1, 0, 7)),
        base()
            .flags(SYN | ACK)
            .opts(&[2, 4, 0x05, 0x78, 1, 3, 3, 9, 4, 2, 0, 0]),
        base().opts(&ts_sack),
        base().opts(&sack(&[(10, 20), (30, 40), (50, 60), (70, 80)])),
        base().opts(&md5),
        base().opts(&[28, 4, 0x80, 0x0a]),
        base()
            .flags(SYN)
            .opts(&[34, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1]),
        base().flags(SYN).opts(&[34, 2, 1, 1]),
        base().opts(&[30, 4, 0x00, 0x81]),
        base().opts(&[99, 6, 0xde, 0xad, 0xbe, 0xef]),
        base().opts(&[2, 4, 0x02, 0x18, 0, 0, 0, 0]),
    ]
}

fn dump_json(path: &str) -> Vec<Value> {
    let (code, out, err) = run_cli(&["dump", "--json", path]);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// tshark's fields of the frames of `path` (after `options`, such as a
/// display filter), every occurrence of each field joined by commas, one
/// row per frame.
fn tshark_fields(path: &str, options: &[&str], fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-r", path, "-o", "tcp.relative_sequence_numbers:FALSE"]);
    cmd.args(options);
    cmd.args(["-T", "fields"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    cmd.args([
        "-E",
        "separator=|",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

/// The option fields compared, as (option kind, dump field, tshark column
/// in `option_lists_agree_with_tshark`).
const OPTION_FIELDS: [(u64, &str, usize); 4] = [
    (2, "mss", 2),
    (3, "shift", 3),
    (8, "tsval", 4),
    (8, "tsecr", 5),
];

#[test]
fn option_lists_agree_with_tshark() {
    if !tshark_available() {
        return;
    }
    let segs = well_formed();
    let pkts: Vec<Pkt> = segs
        .iter()
        .enumerate()
        .map(|(i, s)| Pkt::new(1_000_000_000 * (i as u64 + 1), ethernet(0x0800, &s.ipv4())))
        .collect();
    let path = temp_file("tshark.pcap", &pcap(1, false, &pkts));
    let path = path.to_str().unwrap();
    let ours = dump_json(path);
    let theirs = tshark_fields(
        path,
        &[],
        &[
            "frame.number",
            "tcp.option_kind",
            "tcp.options.mss_val",
            "tcp.options.wscale.shift",
            "tcp.options.timestamp.tsval",
            "tcp.options.timestamp.tsecr",
            "tcp.options.sack_le",
            "tcp.options.sack_re",
        ],
    );
    assert_eq!(ours.len(), segs.len());
    assert_eq!(theirs.len(), segs.len());
    let mut compared = 0;
    for (o, t) in ours.iter().zip(&theirs) {
        let frame = o["frame"].as_u64().unwrap();
        assert_eq!(t[0].parse::<u64>().unwrap(), frame);
        assert!(
            o["options_error"].is_null(),
            "frame {frame}: {}",
            o["options_error"]
        );
        let opts = o["options"].as_array().unwrap();
        // Both list NOP and EOL records. tshark also lists every zero byte
        // after the EOL as another EOL; dump stops at the EOL (what follows
        // is padding), so tshark's list is cut after its first EOL.
        let kinds: Vec<u64> = opts.iter().map(|x| x["kind"].as_u64().unwrap()).collect();
        let mut want = nums(&t[1]);
        if let Some(eol) = want.iter().position(|k| *k == 0) {
            want.truncate(eol + 1);
        }
        assert_eq!(kinds, want, "frame {frame}: option kinds");
        let pick = |k: u64, field: &str| -> Vec<u64> {
            opts.iter()
                .filter(|x| x["kind"] == k)
                .filter_map(|x| x[field].as_u64())
                .collect()
        };
        for (kind, field, column) in OPTION_FIELDS {
            assert_eq!(
                pick(kind, field),
                nums(&t[column]),
                "frame {frame}: {field}"
            );
        }
        let blocks: Vec<(u64, u64)> = opts
            .iter()
            .filter(|x| x["kind"] == 5)
            .flat_map(|x| x["blocks"].as_array().unwrap().clone())
            .map(|b| (b[0].as_u64().unwrap(), b[1].as_u64().unwrap()))
            .collect();
        let tb: Vec<(u64, u64)> = nums(&t[6]).into_iter().zip(nums(&t[7])).collect();
        assert_eq!(blocks, tb, "frame {frame}: sack blocks");
        compared += kinds.len();
    }
    assert!(compared >= 30, "only {compared} options compared");
}

#[test]
fn malformed_blocks_are_flagged_by_both() {
    if !tshark_available() {
        return;
    }
    let base = || Seg::new(C, 40000, S, 80).seq(1).ack(1);
    let malformed: Vec<Vec<u8>> = vec![
        vec![2, 3, 5, 0],                          // MSS with length 3
        vec![3, 4, 7, 0],                          // window scale with length 4
        vec![8, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],  // timestamps with length 9
        vec![5, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0], // SACK with length 11
        vec![1, 1, 99, 1],                         // length below 2
        vec![1, 1, 1, 99, 40, 0, 0, 0],            // runs past the block
        vec![1, 1, 1, 2],                          // length byte missing
    ];
    let pkts: Vec<Pkt> = malformed
        .iter()
        .enumerate()
        .map(|(i, o)| Pkt::new(i as u64 + 1, ethernet(0x0800, &base().opts(o).ipv4())))
        .collect();
    let path = temp_file("tshark-bad.pcap", &pcap(1, false, &pkts));
    let path = path.to_str().unwrap();
    let ours = dump_json(path);
    let theirs = tshark_fields(path, &[], &["frame.number", "_ws.expert.message"]);
    assert_eq!(ours.len(), malformed.len());
    for (o, t) in ours.iter().zip(&theirs) {
        let frame = o["frame"].as_u64().unwrap();
        assert!(
            !o["options_error"].is_null(),
            "frame {frame}: dump missed the malformation"
        );
        let expert = t.get(1).map_or("", String::as_str).to_lowercase();
        assert!(
            expert.contains("option") || expert.contains("malformed") || expert.contains("length"),
            "frame {frame}: tshark did not flag it: {expert:?}"
        );
    }
}

/// The encapsulation captures (`examples/corpus/encap/`, built by its
/// `make_captures.py`) and the extra tshark arguments each needs: the
/// pseudowire of `mpls.pcap` carries a control word, which Wireshark's
/// heuristic takes for the start of an Ethernet header unless told (as an
/// operator who knows the pseudowire would).
const ENCAP_CAPTURES: [(&str, &[&str]); 25] = [
    ("gre", &[]),
    ("pptp", &[]),
    ("nvgre", &[]),
    ("erspan", &[]),
    ("vxlan", &[]),
    ("geneve", &[]),
    ("gtpu", &[]),
    ("l2tp", &[]),
    ("ipip", &[]),
    ("mpls", &["-d", "mpls.label==16,pwethcw"]),
    ("pppoe-qinq", &[]),
    ("ppp", &[]),
    ("chdlc", &[]),
    ("chdlc-on-ppp", &[]),
    ("pbb", &[]),
    ("llc-snap", &[]),
    ("fddi", &[]),
    ("nflog", &[]),
    ("vxlan-in-gre", &[]),
    ("mpls-in-gre6", &[]),
    ("gtp-in-vxlan-qinq", &[]),
    ("fabricpath", &[]),
    ("ipoib", &[]),
    ("vntag", &[]),
    ("etag", &[]),
];

/// The captures of [`ENCAP_CAPTURES`] on a plain link: their segments have
/// no `tunnels`.
const PLAIN_LINK_CAPTURES: [&str; 1] = ["ipoib"];

/// A number as tshark prints it: decimal or 0x-prefixed hex.
fn tshark_num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).expect("hex"),
        None => s.parse().expect("number"),
    }
}

/// The last value of a comma-joined occurrence list.
fn last(s: &str) -> &str {
    s.rsplit(',').next().unwrap_or("")
}

/// dump's flag names as tshark's tcp.flags bits.
fn flag_bits(flags: &Value) -> u64 {
    let bit = |name: &str| match name {
        "FIN" => 0x01,
        "SYN" => 0x02,
        "RST" => 0x04,
        "PSH" => 0x08,
        "ACK" => 0x10,
        "URG" => 0x20,
        "ECE" => 0x40,
        "CWR" => 0x80,
        "AE" => 0x100,
        other => panic!("flag {other}"),
    };
    flags
        .as_array()
        .unwrap()
        .iter()
        .map(|f| bit(f.as_str().unwrap()))
        .sum()
}

/// The ids of dump's layers of `kind` (the `field` of each), in order. A
/// GRE key is NVGRE's VSID and FlowID too, as tshark shows it; FabricPath's
/// `switch_id` is its destination and source switch ids, in the order of
/// tshark's two `cfp.swid`.
fn layer_ids(o: &Value, kind: &str, field: &str) -> Vec<u64> {
    o["tunnels"]
        .as_array()
        .map(|ls| {
            ls.iter()
                .filter(|l| l["kind"] == kind || (kind == "gre" && l["kind"] == "nvgre"))
                .flat_map(|l| match &l[field] {
                    _ if l["kind"] == "nvgre" => {
                        let (vsid, flow) = (l["vsid"].as_u64(), l["flow_id"].as_u64());
                        vec![(vsid.unwrap() << 8) | flow.unwrap()]
                    }
                    _ if l["kind"] == "fabricpath" && field == "switch_id" => {
                        let (dst, src) = (l["dst_switch_id"].as_u64(), l["src_switch_id"].as_u64());
                        vec![dst.unwrap(), src.unwrap()]
                    }
                    Value::Array(a) => a.iter().filter_map(Value::as_u64).collect(),
                    v => v.as_u64().into_iter().collect::<Vec<_>>(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The encapsulation fields compared, as (dump kind, dump field, tshark field).
const ID_FIELDS: [(&str, &str, &str); 20] = [
    ("gre", "key", "gre.key"),
    ("vxlan", "vni", "vxlan.vni"),
    ("geneve", "vni", "geneve.vni"),
    ("gtp_u", "teid", "gtp.teid"),
    ("l2tp", "tunnel_id", "l2tp.tunnel"),
    ("l2tp", "session_id", "l2tp.session"),
    ("mpls", "labels", "mpls.label"),
    ("pppoe", "session", "pppoe.session_id"),
    ("erspan", "session", "erspan.spanid"),
    ("pbb", "isid", "ieee8021ah.isid"),
    ("nflog", "group", "nflog.res_id"),
    ("fabricpath", "ftag", "cfp.ftag"),
    ("fabricpath", "ttl", "cfp.ttl"),
    ("fabricpath", "switch_id", "cfp.swid"),
    ("vntag", "dst_vif", "vntag.dst"),
    ("vntag", "src_vif", "vntag.src"),
    ("etag", "ecid_base", "etag.ecid_base"),
    ("etag", "ecid_ext", "etag.ecid_ext"),
    ("etag", "ingress_ecid_base", "etag.iecid_base"),
    ("etag", "ingress_ecid_ext", "etag.iecid_ext"),
];

#[test]
fn encapsulated_segments_agree_with_tshark_frame_by_frame() {
    if !tshark_available() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/encap");
    let mut base = vec![
        "frame.number",
        "frame.protocols",
        "ip.src",
        "ip.dst",
        "ipv6.src",
        "ipv6.dst",
        "tcp.srcport",
        "tcp.dstport",
        "tcp.seq_raw",
        "tcp.ack_raw",
        "tcp.flags",
        "tcp.window_size_value",
    ];
    let first_id = base.len();
    base.extend(ID_FIELDS.iter().map(|(_, _, t)| *t));
    for (name, extra) in ENCAP_CAPTURES {
        let path = dir.join(format!("{name}.pcap"));
        let path = path.to_str().unwrap();
        let ours: Vec<Value> = dump_json(path)
            .into_iter()
            .filter(|v| v.get("summary").is_none())
            .collect();
        let theirs = tshark_fields(path, &[extra, &["-Y", "tcp"]].concat(), &base);
        assert!(!ours.is_empty(), "{name}: no segment");
        assert_eq!(ours.len(), theirs.len(), "{name}: segments, dump vs tshark");
        for (o, t) in ours.iter().zip(&theirs) {
            let frame = o["frame"].as_u64().unwrap();
            let at = format!("{name} frame {frame}");
            assert_eq!(tshark_num(&t[0]), frame, "{at}: frame number");
            if PLAIN_LINK_CAPTURES.contains(&name) {
                assert!(o.get("tunnels").is_none(), "{at}: tunnels in {o}");
            } else {
                assert!(o["tunnels"].is_array(), "{at}: no tunnels in {o}");
            }
            // The innermost IP header carries the TCP: the last ip or ipv6
            // in tshark's protocol list, the last occurrence of its fields.
            let protocols: Vec<&str> = t[1].split(':').collect();
            let v6 = protocols.iter().rposition(|p| *p == "ipv6")
                > protocols.iter().rposition(|p| *p == "ip");
            let (src, dst) = if v6 { (&t[4], &t[5]) } else { (&t[2], &t[3]) };
            assert_eq!(o["src"], last(src), "{at}: src");
            assert_eq!(o["dst"], last(dst), "{at}: dst");
            let fields = [
                ("sport", &t[6]),
                ("dport", &t[7]),
                ("seq", &t[8]),
                ("ack", &t[9]),
                ("window", &t[11]),
            ];
            for (field, theirs) in fields {
                assert_eq!(
                    o[field].as_u64(),
                    Some(tshark_num(last(theirs))),
                    "{at}: {field}"
                );
            }
            assert_eq!(
                flag_bits(&o["flags"]),
                tshark_num(last(&t[10])),
                "{at}: flags"
            );
            for (i, (kind, field, tfield)) in ID_FIELDS.iter().enumerate() {
                let want = nums(&t[first_id + i]);
                assert_eq!(layer_ids(o, kind, field), want, "{at}: {tfield}");
            }
        }
    }
}

/// Comma-joined decimal or hex numbers.
fn nums(s: &str) -> Vec<u64> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(tshark_num)
        .collect()
}
