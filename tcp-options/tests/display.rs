//! tcpdump's notation for options, option blocks and flags. The expected
//! strings are what tcpdump 4.99 prints for the same bytes (print-tcp.c:
//! `mss %u`, `wscale %u`, `sackOK`, `sack %u {%u:%u}`, `TS val %u ecr %u`,
//! `tfo cookiereq`, `exp-tfo`, `unknown-%u`; flag letters `FSRP.UEWe`).

use tcp_options::{Flags, LinuxOptions, OptionList, StrictOptions, TcpOption};

fn texts(block: &[u8]) -> Vec<String> {
    StrictOptions::new(block)
        .map(|o| o.unwrap().to_string())
        .collect()
}

#[test]
fn linux_syn_reads_as_tcpdump_prints_it() {
    // Linux's SYN layout (tcp_options_write): tcpdump prints
    // "mss 1460,sackOK,TS val 2216520466 ecr 0,nop,wscale 7".
    let syn = [
        0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x84, 0x1d, 0x6b, 0x12, 0, 0, 0, 0, 0x01,
        0x03, 0x03, 0x07,
    ];
    assert_eq!(
        OptionList(&syn).to_string(),
        "mss 1460,sackOK,TS val 2216520466 ecr 0,nop,wscale 7"
    );
    assert_eq!(texts(&syn)[4], "wscale 7");
}

#[test]
fn each_kind() {
    let sack = [
        0x05, 0x12, 0, 0, 0x03, 0xe8, 0, 0, 0x07, 0xd0, 0, 0, 0x0b, 0xb8, 0, 0, 0x0f, 0xa0,
    ];
    assert_eq!(texts(&sack), ["sack 2 {1000:2000}{3000:4000}"]);
    assert_eq!(texts(&[0x22, 0x02]), ["tfo cookiereq"]);
    assert_eq!(texts(&[0x22, 0x06, 1, 2, 3, 4]), ["tfo cookie 01020304"]);
    assert_eq!(texts(&[0xfe, 0x04, 0xf9, 0x89]), ["exp-tfo cookiereq"]);
    assert_eq!(texts(&[0xfd, 0x05, 0x12, 0x34, 0xab]), ["exp-1234 0xab"]);
    assert_eq!(texts(&[0x63, 0x04, 0x01, 0x02]), ["unknown-99 0x0102"]);
    assert_eq!(texts(&[0x1c, 0x04, 0x80, 0x05]), ["uto 5m"]);
    assert_eq!(
        texts(&[0x1d, 0x06, 0x07, 0x08, 0xaa, 0xbb]),
        ["tcp-ao keyid 7 rnextkeyid 8 mac 0xaabb"]
    );
    assert_eq!(texts(&[0x1e, 0x04, 0x20, 0x00]), ["mptcp 4 DSS"]);
    assert_eq!(texts(&[0xac, 0x05, 0, 0, 9]), ["accecn0 9"]);
    let mut md5 = vec![0x13, 18];
    md5.extend(0..16u8);
    assert_eq!(texts(&md5), ["md5 000102030405060708090a0b0c0d0e0f"]);
    assert_eq!(texts(&[0x01, 0x00]), ["nop", "eol"]);
    // A wrong-length known kind under the Linux walk.
    let inv: Vec<String> = LinuxOptions::new(&[0x02, 0x03, 0x05])
        .map(|o| o.to_string())
        .collect();
    assert_eq!(inv, ["unknown-2 0x05"]);
    assert_eq!(TcpOption::MaxSegmentSize(536).to_string(), "mss 536");
}

#[test]
fn broken_block_ends_with_bad_opt() {
    assert_eq!(
        OptionList(&[0x01, 0x03, 0x09, 0x07]).to_string(),
        "nop,[bad opt]"
    );
    assert_eq!(OptionList(&[0x02, 0x01]).to_string(), "[bad opt]");
    assert_eq!(OptionList(&[]).to_string(), "");
}

#[test]
fn flags_as_tcpdump_letters() {
    assert_eq!((Flags::SYN | Flags::ACK).to_string(), "[S.]");
    assert_eq!(Flags::SYN.to_string(), "[S]");
    assert_eq!((Flags::FIN | Flags::PSH | Flags::ACK).to_string(), "[FP.]");
    assert_eq!(Flags::all().to_string(), "[FSRP.UEWe]");
    assert_eq!(Flags::empty().to_string(), "[none]");
    assert_eq!(format!("{:#}", Flags::RST | Flags::ACK), "R.");
    // Unknown bits are not flags.
    assert_eq!(Flags::from_bits_retain(0x0e00).to_string(), "[none]");
}
