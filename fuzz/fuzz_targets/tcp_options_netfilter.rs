//! Arbitrary bytes through the netfilter targets: never a panic; an error
//! or a drop leaves the buffer unchanged; an accepted TCPMSS/TCPOPTSTRIP
//! keeps the IP length consistent and a valid IPv4 header checksum valid.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tcp_options::checksum;
use tcp_options::netfilter::{
    locate, syn_match, tcpmss, tcpoptstrip, MssChange, MssTarget, StripSet, Verdict,
};

#[derive(Debug, Arbitrary)]
struct Input {
    set_mss: Option<u16>,
    mtu: u32,
    strip: Vec<u8>,
    packet: Vec<u8>,
}

fn ipv4_header_ok(p: &[u8]) -> bool {
    let ihl = usize::from(p[0] & 0x0f) * 4;
    !checksum::fold(checksum::sum(&p[..ihl], 0)) == 0
}

fuzz_target!(|input: Input| {
    let mut buf = input.packet.clone();
    buf.extend_from_slice(&[0; 4]);
    let before = buf.clone();
    let _ = syn_match(&buf);
    let target = match input.set_mss {
        Some(m) => MssTarget::Set(m),
        None => MssTarget::ClampToPmtu { mtu: input.mtu },
    };
    let v4_ok_before = locate(&buf).is_ok() && buf[0] >> 4 == 4 && ipv4_header_ok(&buf);
    match tcpmss(&mut buf, target) {
        Ok(Verdict::Accept(MssChange::Inserted { len, .. })) => {
            let at = locate(&buf).expect("still a TCP packet");
            assert_eq!(at.len, len);
            if v4_ok_before {
                assert!(ipv4_header_ok(&buf));
            }
        }
        Ok(Verdict::Accept(_)) => {}
        Ok(Verdict::Drop(_)) | Err(_) => assert_eq!(buf, before),
    }
    let kept = buf.clone();
    match tcpoptstrip(&mut buf, &StripSet::from_kinds(&input.strip)) {
        Ok(Verdict::Accept(0)) | Ok(Verdict::Drop(_)) | Err(_) => assert_eq!(buf, kept),
        Ok(Verdict::Accept(_)) => assert_eq!(buf.len(), kept.len()),
    }
});
