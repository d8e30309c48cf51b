//! `ipv4::set_dscp`/`set_ecn` and their IPv6 counterparts on arbitrary
//! bytes never panic; a failed rewrite leaves the buffer untouched; a
//! successful one sets what was asked, keeps the other half of the DS
//! field, and keeps an IPv4 checksum exactly as valid (or invalid) as it
//! was.
#![no_main]

use dscp::{ipv4, ipv6, Dscp, Ecn};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u8, bool, &[u8])| {
    let (choice, fix_checksum, bytes) = input;
    let dscp = Dscp::new(choice & 0x3f).unwrap();
    let ecn = Ecn::from_low_bits(choice >> 6);
    let mut owned = bytes.to_vec();
    if fix_checksum {
        // Random bytes almost never carry a valid checksum: make one so
        // that the "stays valid" path is exercised.
        let _ = ipv4::fill_checksum(&mut owned);
    }
    let bytes = owned.as_slice();
    let mut buf = bytes.to_vec();

    // IPv4.
    let valid = ipv4::verify_checksum(&buf);
    // A checksum equal to a full recomputation (not the other
    // representation of zero, 0xffff) stays equal to one.
    let canonical =
        ipv4::stored_checksum(&buf).is_ok_and(|c| Ok(c) == ipv4::compute_checksum(&buf));
    let old = ipv4::ds_field(&buf);
    match ipv4::set_dscp(&mut buf, dscp) {
        Ok(()) => {
            let old = old.unwrap();
            assert_eq!(ipv4::dscp(&buf), Ok(dscp));
            assert_eq!(ipv4::ecn(&buf), Ok(old.ecn()));
            assert_eq!(ipv4::verify_checksum(&buf), valid);
            if canonical {
                assert_eq!(ipv4::stored_checksum(&buf), ipv4::compute_checksum(&buf));
            }
        }
        Err(_) => {
            assert!(old.is_err());
            assert_eq!(buf, bytes);
        }
    }
    let before = buf.clone();
    let old = ipv4::ds_field(&buf);
    match ipv4::set_ecn(&mut buf, ecn) {
        Ok(()) => {
            assert_eq!(ipv4::ecn(&buf), Ok(ecn));
            assert_eq!(ipv4::dscp(&buf), Ok(old.unwrap().dscp()));
            assert_eq!(ipv4::verify_checksum(&buf), valid);
        }
        Err(_) => assert_eq!(buf, before),
    }

    // IPv6.
    let mut buf = bytes.to_vec();
    let label = ipv6::flow_label(&buf);
    match (ipv6::set_dscp(&mut buf, dscp), ipv6::set_ecn(&mut buf, ecn)) {
        (Ok(()), Ok(())) => {
            assert_eq!(ipv6::dscp(&buf), Ok(dscp));
            assert_eq!(ipv6::ecn(&buf), Ok(ecn));
            assert_eq!(ipv6::flow_label(&buf), label);
            assert_eq!(buf[0] >> 4, 6);
            assert_eq!(buf[2..], bytes[2..]);
        }
        (Err(_), Err(_)) => assert_eq!(buf, bytes),
        other => panic!("IPv6 rewrites disagree on validity: {other:?}"),
    }
});
