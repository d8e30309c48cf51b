//! Exhaustive checks over all 256 DS-field bytes and all 64 DSCP values.

use dscp::{ipv4, ipv6, DsField, Dscp, DscpClassifier, Ecn, Precedence, PrecedenceClassifier, Tos};

#[test]
fn every_ds_byte_round_trips_through_its_parts() {
    for byte in 0..=255u8 {
        let field = DsField::new(byte);
        assert_eq!(field.value(), byte);
        assert_eq!(u8::from(field), byte);
        assert_eq!(DsField::from_parts(field.dscp(), field.ecn()), field);
        assert_eq!(field.dscp().value(), byte >> 2);
        assert_eq!(field.ecn().value(), byte & 0b11);
        assert_eq!(field.precedence().value(), byte >> 5);
        assert_eq!(field.precedence(), field.dscp().precedence());
        assert_eq!(field.tos(), Tos::new(byte));
        // Replacing one part keeps the other, for every replacement.
        for d in Dscp::all() {
            let f = field.with_dscp(d);
            assert_eq!((f.dscp(), f.ecn()), (d, field.ecn()));
        }
        for e in Ecn::ALL {
            let f = field.with_ecn(e);
            assert_eq!((f.dscp(), f.ecn()), (field.dscp(), e));
        }
        // Parsing the DSCP back from its display, in both forms.
        let d = field.dscp();
        assert_eq!(d.to_string().parse(), Ok(d));
        assert_eq!(format!("{d:#}").parse(), Ok(d));
    }
}

#[test]
fn every_ds_byte_in_an_ipv4_header() {
    // The example header 192.168.0.1 -> 192.168.0.199 (checksum 0xb861).
    let base: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];
    for byte in 0..=255u8 {
        let mut h = base;
        ipv4::set_ds_field(&mut h, DsField::new(byte)).unwrap();
        assert_eq!(ipv4::ds_field(&h), Ok(DsField::new(byte)));
        assert_eq!(ipv4::verify_checksum(&h), Ok(true), "byte {byte:#04x}");
        assert_eq!(ipv4::stored_checksum(&h), ipv4::compute_checksum(&h));
        // And back again restores the original header exactly.
        ipv4::set_ds_field(&mut h, DsField::new(0)).unwrap();
        assert_eq!(h, base, "byte {byte:#04x}");
    }
}

#[test]
fn every_ds_byte_in_an_ipv6_header() {
    let mut base = [0u8; 40];
    base[..4].copy_from_slice(&[0x60, 0x05, 0x43, 0x21]);
    for byte in 0..=255u8 {
        let mut h = base;
        ipv6::set_traffic_class(&mut h, DsField::new(byte)).unwrap();
        assert_eq!(ipv6::traffic_class(&h), Ok(DsField::new(byte)));
        assert_eq!(ipv6::flow_label(&h), Ok(0x54321));
        assert_eq!(h[0] >> 4, 6);
    }
}

#[test]
fn classifiers_ignore_ecn_on_every_byte() {
    let map = PrecedenceClassifier::juniper_qbss();
    let table = DscpClassifier::from_precedence(&map)
        .with(Dscp::LE, 1)
        .with(Dscp::EF, 2);
    for byte in 0..=255u8 {
        let field = DsField::new(byte);
        for e in Ecn::ALL {
            assert_eq!(map.classify(field.with_ecn(e)), map.classify(field));
            assert_eq!(table.classify(field.with_ecn(e)), table.classify(field));
        }
        assert_eq!(
            map.classify(field),
            map.queue(Precedence::from_tos_byte(byte))
        );
    }
    assert_eq!(table.classify_byte(0x04), 1); // LE, Not-ECT
    assert_eq!(table.classify_byte(0xba), 2); // EF, ECT(0)
}

#[test]
fn every_dscp_number_form_parses() {
    for d in Dscp::all() {
        let v = d.value();
        assert_eq!(v.to_string().parse(), Ok(d));
        assert_eq!(format!("0x{v:x}").parse(), Ok(d));
        assert_eq!(format!("0X{v:02X}").parse(), Ok(d));
        assert_eq!(format!("{v:06b}").parse(), Ok(d));
        assert_eq!(format!("0b{v:b}").parse(), Ok(d));
        assert_eq!(Dscp::try_from(v), Ok(d));
        assert_eq!(u8::from(d), v);
    }
    for v in 64..=255u8 {
        assert!(Dscp::new(v).is_err());
        assert!(v.to_string().parse::<Dscp>().is_err());
    }
}
