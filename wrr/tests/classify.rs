//! Classify-then-enqueue with the `dscp` crate's tables (feature `dscp`).
#![cfg(feature = "dscp")]

use dscp::{DsField, Dscp, DscpClassifier, Ecn, PrecedenceClassifier};
use wrr::{Classifier, Config, Fairness, RefuseReason, Saturation, Scheduler};

#[test]
fn every_ds_byte_lands_in_the_queue_of_its_table() {
    // The QBSS deployment: Juniper precedence map, profile 98/1/0/1.
    let c = Config::new([98, 1, 0, 1], Fairness::Packets, Saturation::Forced);
    let map = PrecedenceClassifier::juniper_qbss();
    for byte in 0..=255u8 {
        let mut s: Scheduler<u16, 4, 4> = Scheduler::new(c).unwrap();
        let field = DsField::new(byte);
        let expected = usize::from(map.classify_byte(byte));
        match s.enqueue_classified(&map, field, u16::from(byte)) {
            Ok(q) => {
                assert_eq!(q, expected);
                assert_eq!(s.queue_len(q), 1);
            }
            Err(r) => {
                // Only premium (precedence 011, weight 0) is refused.
                assert_eq!(
                    (r.queue, r.reason, r.packet),
                    (2, RefuseReason::NotServed, u16::from(byte))
                );
                assert_eq!(byte >> 5, 0b011);
            }
        }
    }
}

#[test]
fn ecn_never_moves_a_packet_and_unknown_queues_are_refused() {
    const TABLE: DscpClassifier = DscpClassifier::uniform(0)
        .with(Dscp::EF, 1)
        .with(Dscp::LE, 7); // past the last queue
    let c = Config::new([1, 1], Fairness::Packets, Saturation::WorkConserving);
    let mut s: Scheduler<u32, 2, 16> = Scheduler::new(c).unwrap();
    for ecn in Ecn::ALL {
        let q = s
            .enqueue_classified(&TABLE, DsField::from_parts(Dscp::EF, ecn), 1)
            .unwrap();
        assert_eq!(q, 1);
        let r = s
            .enqueue_classified(&TABLE, DsField::from_parts(Dscp::LE, ecn), 2)
            .unwrap_err();
        assert_eq!((r.queue, r.reason), (7, RefuseReason::NoSuchQueue));
    }
    assert_eq!(s.queue_len(1), 4);
    assert_eq!(s.unknown_queue_stats().dropped_packets, 4);
    // Any rule can be a classifier.
    struct Ect1ToQueue0;
    impl Classifier for Ect1ToQueue0 {
        fn queue_of(&self, field: DsField) -> usize {
            usize::from(field.ecn() != Ecn::Ect1)
        }
    }
    let l4s = DsField::from_parts(Dscp::CS0, Ecn::Ect1);
    assert_eq!(s.enqueue_classified(&Ect1ToQueue0, l4s, 3), Ok(0));
}
