//! `firewall-check dump` on generated captures: every link type, pcap and
//! pcapng (several sections and interfaces, per-interface resolution),
//! IPv6 extension headers, snap-length truncation, malformed options, and
//! hostile files (truncated, garbage, empty): output already produced is
//! kept, the error goes to stderr, the exit status is non-zero, no panic.

mod dump_support;

use dump_support::*;
use serde_json::Value;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 19, 0, 1];

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn syn() -> Seg {
    Seg::new(C, 40000, S, 80)
        .seq(1000)
        .flags(SYN)
        .win(64240)
        .opts(&linux_syn_options(1, 0, 7))
}

#[test]
fn json_fields_are_exactly_the_documented_ones() {
    let pkts = [Pkt::new(1_700_000_000_123_456_000, syn().tos(0x22).ipv4())];
    let path = temp_file("fields.pcap", &pcap(101, false, &pkts));
    let (code, out, err) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v = &json_lines(&out)[0];
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want = vec![
        "frame",
        "time",
        "src",
        "dst",
        "sport",
        "dport",
        "flags",
        "seq",
        "ack",
        "window",
        "dscp",
        "ecn",
        "options",
        "options_error",
    ];
    let mut got = keys.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(v["frame"], 1);
    assert!((v["time"].as_f64().unwrap() - 1_700_000_000.123456).abs() < 1e-6);
    assert_eq!(v["src"], "198.18.0.1");
    assert_eq!(v["dst"], "198.19.0.1");
    assert_eq!(v["flags"], serde_json::json!(["SYN"]));
    assert_eq!(v["window"], 64240);
    // TOS 0x22: DSCP 8 (CS1), ECN 2 (ECT(0)).
    assert_eq!(v["dscp"], 8);
    assert_eq!(v["ecn"], 2);
    // The Linux SYN layout (issue 3 golden vector): mss, sackOK, TS, nop, wscale.
    assert_eq!(
        v["options"],
        serde_json::json!([
            {"kind":2,"mss":1460},{"kind":4},{"kind":8,"tsval":1,"tsecr":0},
            {"kind":1},{"kind":3,"shift":7}
        ])
    );
    assert!(v["options_error"].is_null());
}

#[test]
fn malformed_options_listed_up_to_the_error() {
    // NOP, then MSS with length 3: strict error at offset 1, kind 2.
    let bad = Seg::new(C, 1, S, 2).opts(&[1, 2, 3, 0x05, 0, 0, 0, 0]);
    // Unknown kind 99 then SACK with a bad length 11.
    let bad2 = Seg::new(C, 1, S, 2).opts(&[99, 4, 0xab, 0xcd, 5, 11, 0, 0, 0, 0, 0, 0]);
    let pkts = [Pkt::new(1, bad.ipv4()), Pkt::new(2, bad2.ipv4())];
    let path = temp_file("bad.pcap", &pcap(101, false, &pkts));
    let (code, out, _) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v = json_lines(&out);
    assert_eq!(v[0]["options"], serde_json::json!([{"kind":1}]));
    assert_eq!(v[0]["options_error"]["offset"], 1);
    assert_eq!(v[0]["options_error"]["kind"], 2);
    assert!(v[0]["options_error"]["reason"]
        .as_str()
        .unwrap()
        .contains("length 3"));
    assert_eq!(
        v[1]["options"],
        serde_json::json!([{"kind":99,"data":"abcd"}])
    );
    assert_eq!(v[1]["options_error"]["offset"], 4);
    assert_eq!(v[1]["options_error"]["kind"], 5);
}

#[test]
fn every_link_type_and_ipv6_extension_headers() {
    let v4 = syn().ipv4();
    // Hop-by-hop (jumbo-free padding), routing, destination options, first fragment.
    let ext = vec![
        (0u8, vec![0, 0, 1, 4, 0, 0, 0, 0]),
        (43u8, vec![0, 0, 0, 0, 0, 0, 0, 0]),
        (60u8, vec![0, 0, 1, 4, 0, 0, 0, 0]),
        (44u8, vec![0, 0, 0, 1, 0, 0, 0, 9]),
    ];
    let v6 = syn().ipv6(&ext);
    let mut qinq = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    qinq.extend_from_slice(&[0x88, 0xa8, 0, 200, 0x81, 0x00, 0x07, 0xd1, 0x08, 0x00]);
    qinq.extend_from_slice(&v4);
    let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x86, 0xdd];
    sll.extend_from_slice(&v6);
    let mut sll2 = vec![
        0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
    ];
    sll2.extend_from_slice(&v4);
    let mut null_v6 = 30u32.to_le_bytes().to_vec(); // Darwin AF_INET6, host order
    null_v6.extend_from_slice(&v6);
    let mut loop_v4 = 2u32.to_be_bytes().to_vec();
    loop_v4.extend_from_slice(&v4);
    let cases: [(u32, Vec<u8>, &str); 9] = [
        (1, ethernet(0x0800, &v4), "198.18.0.1"),
        (1, qinq, "198.18.0.1"),
        (113, sll, "2001:db8::1"),
        (276, sll2, "198.18.0.1"),
        (0, null_v6, "2001:db8::1"),
        (108, loop_v4, "198.18.0.1"),
        (101, v6.clone(), "2001:db8::1"),
        (228, v4.clone(), "198.18.0.1"),
        (229, v6.clone(), "2001:db8::1"),
    ];
    for (linktype, frame, src) in cases {
        let path = temp_file(
            &format!("lt{linktype}.pcap"),
            &pcap(linktype, false, &[Pkt::new(5, frame)]),
        );
        let (code, out, err) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
        assert_eq!(code, 0, "linktype {linktype}: {err}");
        let v = json_lines(&out);
        assert_eq!(v.len(), 1, "linktype {linktype}: {out}");
        assert_eq!(v[0]["src"], src, "linktype {linktype}");
        assert_eq!(v[0]["options"][4]["shift"], 7, "linktype {linktype}");
    }
}

#[test]
fn non_first_fragment_and_non_tcp_are_skipped() {
    let frag = vec![(44u8, vec![0, 0, 0x00, 0x08, 0, 0, 0, 9])];
    let v6 = syn().ipv6(&frag);
    let mut udp = syn().ipv4();
    udp[9] = 17;
    let pkts = [Pkt::new(1, v6), Pkt::new(2, udp), Pkt::new(3, syn().ipv4())];
    let path = temp_file("frag.pcap", &pcap(101, false, &pkts));
    let (code, out, _) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v = json_lines(&out);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["frame"], 3, "frames are numbered over all records");
}

#[test]
fn pcapng_sections_interfaces_and_resolutions() {
    let a = Pkt::new(1_600_000_000_000_000_001, syn().ipv4());
    let b = Pkt::new(
        1_600_000_001_500_000_000,
        ethernet(0x0800, &syn().seq(7).ipv4()),
    );
    let c = Pkt::new(1_600_000_002_250_000_000, syn().seq(9).ipv4());
    let file = pcapng(&[
        Section {
            ifaces: vec![
                Iface {
                    linktype: 101,
                    tsresol: Some(9),
                },
                Iface {
                    linktype: 1,
                    tsresol: None,
                },
            ],
            pkts: vec![(0, a), (1, b)],
        },
        Section {
            ifaces: vec![Iface {
                linktype: 228,
                tsresol: Some(0x80 | 2),
            }],
            pkts: vec![(0, c)],
        },
    ]);
    let path = temp_file("multi.pcapng", &file);
    let (code, out, err) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v = json_lines(&out);
    assert_eq!(v.len(), 3);
    assert_eq!(v[1]["seq"], 7);
    assert_eq!(v[2]["seq"], 9);
    let text_time = |i: usize| {
        out.lines()
            .nth(i)
            .unwrap()
            .split("\"time\":")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(text_time(0), "1600000000.000000001");
    assert_eq!(text_time(1), "1600000001.500000000");
    assert_eq!(text_time(2), "1600000002.250000000");
}

#[test]
fn nanosecond_pcap_and_text_output() {
    let pkts = [Pkt::new(1_418_145_369_924_505_488, syn().ipv4())];
    let path = temp_file("nano.pcap", &pcap(101, true, &pkts));
    let (code, out, _) = run_cli(&["dump", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    // tcpdump's tcp-handshake-nano.out shows this instant as 2014-12-09 17:16:09.924505488.
    assert!(out.contains("2014-12-09 17:16:09.924505488"), "{out}");
    assert!(out.contains("198.18.0.1.40000 > 198.19.0.1.80: Flags [S], seq 1000, win 64240, options [mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7], length 0"), "{out}");
}

#[test]
fn snap_length_truncation_is_marked() {
    let data = syn().payload(100).ipv4();
    let cut_payload = Pkt::new(1, data.clone()).snap(data.len() - 50);
    let cut_options = Pkt::new(2, data.clone()).snap(20 + 20 + 9);
    let path = temp_file("snap.pcap", &pcap(101, false, &[cut_payload, cut_options]));
    let (code, out, _) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v = json_lines(&out);
    assert!(v[0]["options_error"].is_null());
    // Options cut after MSS and SACK-Permitted, inside the Timestamps option.
    assert_eq!(
        v[1]["options"],
        serde_json::json!([{"kind":2,"mss":1460},{"kind":4}])
    );
    assert_eq!(v[1]["options_error"]["offset"], 6);
    assert_eq!(v[1]["options_error"]["kind"], 8);
    assert!(v[1]["options_error"]["reason"]
        .as_str()
        .unwrap()
        .contains("snap length"));
    let (_, text, _) = run_cli(&["dump", path.to_str().unwrap()]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("[|tcp] (snap length: 50 of 100 payload bytes captured)"),
        "{text}"
    );
    assert!(
        lines[1].contains("[|tcp] (snap length: option block cut)"),
        "{text}"
    );
}

#[test]
fn truncated_capture_prints_what_was_read_then_fails() {
    let pkts: Vec<Pkt> = (0..3)
        .map(|i| Pkt::new(i, syn().seq(i as u32).ipv4()))
        .collect();
    let mut file = pcap(101, false, &pkts);
    file.truncate(file.len() - 10);
    let path = temp_file("trunc.pcap", &file);
    let (code, out, err) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert_eq!(
        json_lines(&out).len(),
        2,
        "the two complete records are printed"
    );
    assert!(err.contains("truncated"), "{err}");
    assert!(err.contains("frame 3"), "{err}");
}

#[test]
fn hostile_files_give_clear_errors() {
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("empty", Vec::new(), "empty"),
        ("garbage", b"GET / HTTP/1.1\r\n\r\n".to_vec(), "not a pcap"),
        (
            "short-header",
            vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0],
            "truncated",
        ),
        // A record claiming a 4 GB capture length: refused without allocating it.
        (
            "huge-record",
            {
                let mut f = pcap(101, false, &[]);
                f.extend_from_slice(&[
                    0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                ]);
                f.extend_from_slice(&[0x45; 64]);
                f
            },
            "frame 1",
        ),
        (
            "ng-bad-iface",
            {
                let mut f = pcapng(&[Section {
                    ifaces: vec![Iface {
                        linktype: 101,
                        tsresol: None,
                    }],
                    pkts: vec![(0, Pkt::new(1, syn().ipv4()))],
                }]);
                // Point the packet block at interface 5.
                let epb = f.len() - (28 + syn().ipv4().len() + 4);
                f[epb + 8] = 5;
                f
            },
            "interface 5",
        ),
    ];
    for (name, bytes, needle) in cases {
        let path = temp_file(name, &bytes);
        let (code, out, err) = run_cli(&["dump", "--json", path.to_str().unwrap()]);
        assert_ne!(code, 0, "{name}");
        assert!(out.is_empty(), "{name}: {out}");
        assert!(err.contains(needle), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let (code, _, err) = run_cli(&["dump", "/nonexistent/capture.pcap"]);
    assert_ne!(code, 0);
    assert!(err.contains("cannot open"), "{err}");
}
