//! The ECN functions of `dscp` on arbitrary input: RFC 3168 marking of an
//! IPv4 or IPv6 header (never panics; a failure or a Not-ECT/CE packet
//! leaves the buffer untouched; ECT becomes CE with the rest of the header
//! and the checksum's validity kept) and RFC 6040 tunnelling (every inner
//! and outer DS byte gives a decision; a packet that enters in normal mode
//! and is not marked leaves as it entered; a CE mark inside the tunnel
//! reaches an ECN-capable inner header).
#![no_main]

use dscp::tunnel::{decapsulate, decapsulate_field, encapsulate, Decapsulation, EncapsulationMode};
use dscp::{ipv4, ipv6, CongestionAction, DsField, Ecn};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u8, u8, bool, &[u8])| {
    let (inner, outer, fix_checksum, bytes) = input;

    // RFC 6040.
    let (inner_f, outer_f) = (DsField::new(inner), DsField::new(outer));
    let d = decapsulate(inner_f.ecn(), outer_f.ecn());
    match decapsulate_field(inner_f, outer_f) {
        Some(f) => {
            assert_eq!(f.dscp(), inner_f.dscp());
            assert_eq!(Some(f.ecn()), d.ecn());
        }
        None => assert_eq!(d, Decapsulation::Drop),
    }
    for mode in [EncapsulationMode::Normal, EncapsulationMode::Compatibility] {
        let o = encapsulate(inner_f.ecn(), mode);
        if mode == EncapsulationMode::Normal {
            assert_eq!(
                decapsulate(inner_f.ecn(), o),
                Decapsulation::Forward(inner_f.ecn())
            );
            if inner_f.ecn() != Ecn::NotEct {
                assert_eq!(
                    decapsulate(inner_f.ecn(), Ecn::Ce),
                    Decapsulation::Forward(Ecn::Ce)
                );
            }
        } else {
            assert_eq!(o, Ecn::NotEct);
        }
    }
    assert_eq!(
        Ecn::from_low_bits(inner).is_l4s(),
        matches!(inner & 3, 0b01 | 0b11)
    );

    // RFC 3168 marking, IPv4.
    let mut buf = bytes.to_vec();
    if fix_checksum {
        let _ = ipv4::fill_checksum(&mut buf);
    }
    let before = buf.clone();
    let valid = ipv4::verify_checksum(&buf);
    match ipv4::mark_congestion(&mut buf) {
        Ok(CongestionAction::MarkCe) => {
            let old = ipv4::ds_field(&before).unwrap();
            assert!(old.ecn().is_ect());
            assert_eq!(ipv4::ds_field(&buf), Ok(old.with_ecn(Ecn::Ce)));
            assert_eq!(ipv4::verify_checksum(&buf), valid);
            assert_eq!(buf[..1], before[..1]);
            assert_eq!(buf[2..10], before[2..10]);
            assert_eq!(buf[12..], before[12..]);
        }
        Ok(action) => {
            assert_eq!(buf, before);
            let ecn = ipv4::ecn(&buf).unwrap();
            assert_eq!(action, ecn.on_congestion());
            assert!(!ecn.is_ect());
        }
        Err(e) => {
            assert_eq!(buf, before);
            assert_eq!(ipv4::ds_field(&buf), Err(e));
        }
    }

    // IPv6.
    let mut buf = bytes.to_vec();
    match ipv6::mark_congestion(&mut buf) {
        Ok(CongestionAction::MarkCe) => {
            let old = ipv6::traffic_class(bytes).unwrap();
            assert_eq!(ipv6::traffic_class(&buf), Ok(old.with_ecn(Ecn::Ce)));
            assert_eq!(ipv6::flow_label(&buf), ipv6::flow_label(bytes));
            assert_eq!(buf[2..], bytes[2..]);
        }
        Ok(_) | Err(_) => assert_eq!(buf, bytes),
    }
});
