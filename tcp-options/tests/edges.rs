//! Public inputs at the edges of the integer types: each case overflowed
//! (a panic in debug builds) or wrote into a neighbouring field before the
//! fix it tests.

use tcp_options::{
    decode, AccEcn, ExpectedLength, Flags, OptionErrorReason, RawOptions, SackBlocks, TcpHeader,
};
use zerocopy::FromBytes;

#[test]
fn sack_block_index_near_usize_max() {
    let bytes = [0u8; 16];
    let b = SackBlocks::new(&bytes).unwrap();
    // i * 8 fits, i * 8 + 8 does not.
    assert_eq!(b.get(usize::MAX / 8), None);
    assert_eq!(b.get(usize::MAX), None);
    assert!(b.get(1).is_some());
    assert_eq!(b.get(2), None);
}

#[test]
fn accecn_field_index_near_usize_max() {
    let fields = [0, 0, 1, 0, 0, 2];
    let a = AccEcn::new(172, &fields).unwrap();
    assert_eq!(a.field(usize::MAX / 3), None);
    assert_eq!(a.field(usize::MAX), None);
    assert_eq!(a.field(1), Some(2));
}

#[test]
fn decode_of_more_than_a_length_byte_describes() {
    // 300 data bytes: no length byte describes 302; the report saturates
    // at 255 instead of wrapping to 46.
    let data = [0u8; 300];
    assert_eq!(
        decode(2, &data),
        Err(OptionErrorReason::WrongLength {
            length: 255,
            expected: ExpectedLength::Exactly(4)
        })
    );
    // 253 data bytes is the longest record: length 255 exactly.
    assert!(matches!(
        decode(8, &data[..253]),
        Err(OptionErrorReason::WrongLength { length: 255, .. })
    ));
    assert!(matches!(
        decode(8, &data[..252]),
        Err(OptionErrorReason::WrongLength { length: 254, .. })
    ));
}

#[test]
fn walks_of_blocks_longer_than_a_header_allows() {
    // 600 bytes of records of length 255: the walkers are public and take
    // any slice; they must step through without wrapping.
    let mut block = Vec::new();
    for _ in 0..2 {
        block.push(0x63);
        block.push(255);
        block.extend([0u8; 253]);
    }
    block.extend([0x02, 0xff, 0x00]); // overrun
    let items: Vec<_> = RawOptions::new(&block).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(items[1].as_ref().unwrap().offset, 255);
    let e = items[2].unwrap_err();
    assert_eq!(e.offset, 510);
    assert_eq!(
        e.reason,
        OptionErrorReason::Overrun {
            length: 255,
            available: 3
        }
    );
}

#[test]
fn raw_options_is_fused() {
    fn fused<I: core::iter::FusedIterator>(_: &I) {}
    let mut it = RawOptions::new(&[0x01, 0x02, 0x01]);
    fused(&it);
    assert!(it.next().unwrap().is_ok());
    assert!(it.next().unwrap().is_err());
    for _ in 0..3 {
        assert!(it.next().is_none());
    }
}

#[test]
fn set_flags_keeps_the_data_offset_and_reserved_bits() {
    let mut bytes = [0u8; 20];
    bytes[12] = 0x5e; // data offset 5, reserved bits 111, AE clear
    let (h, _) = TcpHeader::mut_from_prefix(&mut bytes).unwrap();
    h.set_flags(Flags::from_bits_retain(0xffff));
    assert_eq!(h.data_offset(), 5);
    assert_eq!(h.reserved(), 0b111);
    assert_eq!(h.flags(), Flags::all());
    h.set_flags(Flags::from_bits_retain(0xfe00));
    assert_eq!(h.flags(), Flags::empty());
    assert_eq!((h.data_offset(), h.reserved()), (5, 0b111));
    assert_eq!(&bytes[12..14], &[0x5e, 0x00]);
}
