//! The edit session: any sequence of edits leaves a valid packet (IP length
//! fields, IPv4 header checksum, TCP checksum) whose options read back as a
//! model of the edits says, for IPv4 and IPv6, on fixed buffers and on
//! `bytes::BytesMut`.

use proptest::prelude::*;
use tcp_options::session::{records, EditError, EditSession};
use tcp_options::{checksum, kind, OptionsBuilder, SackBlock, TcpOption, TcpPacket};

const S4: [u8; 4] = [198, 18, 1, 2];
const D4: [u8; 4] = [198, 19, 2, 2];
const S6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const D6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn packet(v6: bool, opts: &[u8], payload: &[u8], seq: u32, ack: u32) -> Vec<u8> {
    let doff = (5 + opts.len() / 4) as u8;
    let mut t = Vec::new();
    t.extend([0x9c, 0x40, 0x01, 0xbb]);
    t.extend(seq.to_be_bytes());
    t.extend(ack.to_be_bytes());
    t.extend([doff << 4, 0x12, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend(opts);
    t.extend(payload);
    let mut p = if v6 {
        assert!(checksum::fill_ipv6(S6, D6, &mut t));
        let mut p = vec![0x60, 0, 0, 0];
        p.extend((t.len() as u16).to_be_bytes());
        p.extend([6, 64]);
        p.extend(S6);
        p.extend(D6);
        p
    } else {
        assert!(checksum::fill_ipv4(S4, D4, &mut t));
        let mut p = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0];
        p.extend(S4);
        p.extend(D4);
        p[2..4].copy_from_slice(&((20 + t.len()) as u16).to_be_bytes());
        let c = !checksum::fold(checksum::sum(&p, 0));
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    };
    p.extend(t);
    p
}

/// Whether `p` (exactly one packet) is valid: lengths, IP and TCP checksums.
fn valid(p: &[u8]) -> Result<(), String> {
    if p[0] >> 4 == 4 {
        let ihl = usize::from(p[0] & 15) * 4;
        if usize::from(u16::from_be_bytes([p[2], p[3]])) != p.len() {
            return Err("IPv4 total length".into());
        }
        if !checksum::fold(checksum::sum(&p[..ihl], 0)) != 0 {
            return Err("IPv4 header checksum".into());
        }
        TcpPacket::new_checked(&p[ihl..]).map_err(|e| e.to_string())?;
        if !checksum::verify_ipv4(S4, D4, &p[ihl..]) {
            return Err("TCP checksum".into());
        }
    } else {
        if usize::from(u16::from_be_bytes([p[4], p[5]])) + 40 != p.len() {
            return Err("IPv6 payload length".into());
        }
        TcpPacket::new_checked(&p[40..]).map_err(|e| e.to_string())?;
        if !checksum::verify_ipv6(S6, D6, &p[40..]) {
            return Err("TCP checksum".into());
        }
    }
    Ok(())
}

fn tcp(p: &[u8]) -> &[u8] {
    if p[0] >> 4 == 4 {
        &p[usize::from(p[0] & 15) * 4..]
    } else {
        &p[40..]
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Strip(Vec<u8>),
    SetWscale(u8),
    ClampMss(u16),
    SetWindow(u16),
    Seq(u32),
    Ack(u32),
    Insert(u8, Vec<u8>),
    Remove(u8),
    Repad,
}

fn edit() -> impl Strategy<Value = Edit> {
    let k = prop_oneof![
        Just(2u8),
        Just(3),
        Just(4),
        Just(5),
        Just(8),
        Just(30),
        Just(99)
    ];
    prop_oneof![
        proptest::collection::vec(k.clone(), 0..3).prop_map(Edit::Strip),
        (0u8..16).prop_map(Edit::SetWscale),
        any::<u16>().prop_map(Edit::ClampMss),
        any::<u16>().prop_map(Edit::SetWindow),
        any::<u32>().prop_map(Edit::Seq),
        any::<u32>().prop_map(Edit::Ack),
        (
            prop_oneof![Just(4u8), Just(30), Just(99), Just(253)],
            proptest::collection::vec(any::<u8>(), 0..12)
        )
            .prop_map(|(k, d)| Edit::Insert(k, d)),
        k.prop_map(Edit::Remove),
        Just(Edit::Repad),
    ]
}

/// What the options should read back as: (kind, data) of each record.
type Model = Vec<(u8, Vec<u8>)>;

fn read_back(block: &[u8]) -> Model {
    tcp_options::StrictOptions::new(block)
        .map(|o| o.expect("well formed after any edit"))
        .filter(|o| o.kind > kind::NOP)
        .map(|o| (o.kind, o.data.to_vec()))
        .collect()
}

fn apply<B: AsRef<[u8]> + AsMut<[u8]>>(
    s: &mut EditSession<B>,
    e: &Edit,
    model: &mut Model,
    fields: &mut (u32, u32, u16),
) -> bool {
    let mut no_room = false;
    match e {
        Edit::Strip(kinds) => {
            let n = s.strip(kinds);
            let before = model.len();
            model.retain(|(k, _)| !kinds.contains(k));
            assert_eq!(n, before - model.len());
        }
        Edit::SetWscale(sh) => {
            let had = model.iter().any(|(k, d)| *k == 3 && d.len() == 1);
            assert_eq!(s.set_window_scale(*sh).is_ok(), had);
            for (k, d) in model.iter_mut() {
                if *k == 3 && d.len() == 1 {
                    d[0] = *sh;
                }
            }
        }
        Edit::ClampMss(m) => {
            s.clamp_mss(*m);
            for (k, d) in model.iter_mut() {
                if *k == 2 && d.len() == 2 && u16::from_be_bytes([d[0], d[1]]) > *m {
                    d.copy_from_slice(&m.to_be_bytes());
                }
            }
        }
        Edit::SetWindow(w) => {
            s.set_window(*w);
            fields.2 = *w;
        }
        Edit::Seq(d) => {
            assert_eq!(s.add_to_seq(*d), fields.0.wrapping_add(*d));
            fields.0 = fields.0.wrapping_add(*d);
        }
        Edit::Ack(delta) => {
            s.add_to_ack(*delta);
            fields.1 = fields.1.wrapping_add(*delta);
            for (k, d) in model.iter_mut() {
                if *k == 5 {
                    for c in d.chunks_exact_mut(4) {
                        let v = u32::from_be_bytes([c[0], c[1], c[2], c[3]]).wrapping_add(*delta);
                        c.copy_from_slice(&v.to_be_bytes());
                    }
                }
            }
        }
        Edit::Insert(k, d) => {
            let before = s.options().to_vec();
            match s.insert_option(*k, d) {
                Ok(()) => model.push((*k, d.clone())),
                Err(EditError::NoSpace { .. }) => {
                    assert_eq!(s.options(), &before[..], "a refused insert changes nothing")
                }
                Err(EditError::NoRoom { .. }) => {
                    no_room = true;
                    assert_eq!(s.options(), &before[..], "a refused insert changes nothing")
                }
                Err(EditError::BadOption { .. }) => {
                    assert!(tcp_options::decode(*k, d).is_err(), "{k} {d:?} refused");
                    assert_eq!(s.options(), &before[..]);
                }
                Err(e) => panic!("{e}"),
            }
        }
        Edit::Remove(k) => {
            let n = s.remove_option(*k);
            let before = model.len();
            model.retain(|(kk, _)| kk != k);
            assert_eq!(n, before - model.len());
        }
        Edit::Repad => s.repad(),
    }
    assert_eq!(read_back(s.options()), *model, "after {e:?}");
    assert_eq!(s.options().len() % 4, 0);
    no_room
}

fn opts_strategy() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(0u8..15),
        any::<bool>(),
        proptest::option::of((any::<u32>(), any::<u32>())),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..3),
    )
        .prop_map(|(mss, ws, sp, ts, sack)| {
            let blocks: Vec<SackBlock> = sack
                .iter()
                .map(|&(left, right)| SackBlock { left, right })
                .collect();
            let mut b = OptionsBuilder::new();
            if let Some(m) = mss {
                b = b.mss(m);
            }
            if let Some(w) = ws {
                b = b.window_scale(w);
            }
            if sp {
                b = b.sack_permitted();
            }
            if let Some((v, e)) = ts {
                b = b.timestamps(v, e);
            }
            let b = b.sack_blocks(&blocks);
            b.build().map(|v| v.to_vec()).unwrap_or_default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_edits_leave_a_valid_packet(
        v6 in any::<bool>(),
        opts in opts_strategy(),
        payload in proptest::collection::vec(any::<u8>(), 0..40),
        seq in any::<u32>(),
        ack in any::<u32>(),
        edits in proptest::collection::vec(edit(), 1..8),
        room in 0usize..=40,
    ) {
        let p = packet(v6, &opts, &payload, seq, ack);
        let len = p.len();
        let mut buf = p.clone();
        buf.extend(std::iter::repeat_n(0xee, room));
        let mut model = read_back(&opts);
        let mut fields = (seq, ack, 0xffffu16);
        let mut s = EditSession::open(&mut buf[..]).unwrap();
        let mut no_room = false;
        for e in &edits {
            no_room |= apply(&mut s, e, &mut model, &mut fields);
        }
        let opt_len = s.options().len();
        let new_len = s.finish();
        prop_assert!(new_len <= len + room);
        let out = &buf[..new_len];
        if let Err(why) = valid(out) {
            prop_assert!(false, "{why}: {edits:?}");
        }
        let t = TcpPacket::new_checked(tcp(out)).unwrap();
        prop_assert_eq!(read_back(t.options()), model.clone());
        prop_assert_eq!(t.options().len(), opt_len);
        prop_assert_eq!(t.payload(), &payload[..]);
        let h = t.header();
        prop_assert_eq!((h.seq_number(), h.ack_number(), h.window()), fields);

        // The same edits on a BytesMut give the same packet.
        let mut model2 = read_back(&opts);
        let mut fields2 = (seq, ack, 0xffffu16);
        let mut s = EditSession::open_bytes(bytes::BytesMut::from(&p[..])).unwrap();
        for e in &edits {
            prop_assert!(!apply(&mut s, e, &mut model2, &mut fields2), "BytesMut has room");
        }
        let b = s.finish_bytes();
        if no_room {
            // The fixed buffer refused an insertion the BytesMut took.
            prop_assert!(valid(&b).is_ok());
        } else {
            prop_assert_eq!(&b[..], out);
        }
    }

    /// Opening arbitrary bytes never panics; a refused open changes nothing.
    #[test]
    fn open_arbitrary_bytes(mut buf in proptest::collection::vec(any::<u8>(), 0..100)) {
        let before = buf.clone();
        match EditSession::open(&mut buf[..]) {
            Ok(mut s) => {
                s.strip(&[3]);
                let _ = s.insert_option(99, &[1, 2]);
                s.repad();
                let _ = s.finish();
            }
            Err(_) => prop_assert_eq!(buf, before),
        }
    }
}

#[test]
fn dropping_a_session_changes_nothing() {
    let p = packet(false, &[2, 4, 5, 0xb4], b"x", 1, 2);
    let mut buf = p.clone();
    buf.extend([0; 8]);
    {
        let mut s = EditSession::open(&mut buf[..]).unwrap();
        s.clamp_mss(100);
        s.insert_option(4, &[]).unwrap();
        // Not finished: the session ends here.
    }
    assert_eq!(&buf[..p.len()], &p[..]);
}

#[test]
fn refusals() {
    let p = packet(false, &[1; 36], &[], 1, 2);
    let mut buf = p.clone();
    buf.extend([0; 8]);
    let mut s = EditSession::open(&mut buf[..]).unwrap();
    // Interior NOPs are kept: 36 NOPs... are all trailing, so they go.
    s.insert_option(8, &[0; 8]).unwrap();
    assert_eq!(s.options().len(), 12);
    assert!(matches!(
        s.insert_option(99, &[0; 30]),
        Err(EditError::NoSpace { needed: 44 })
    ));
    assert!(matches!(
        s.insert_option(1, &[]),
        Err(EditError::BadOption { kind: 1, .. })
    ));
    // No room in the buffer for a longer header.
    let p = packet(false, &[], b"data", 1, 2);
    let mut buf = p.clone();
    let mut s = EditSession::open(&mut buf[..]).unwrap();
    assert_eq!(
        s.insert_option(4, &[]),
        Err(EditError::NoRoom {
            needed: 48,
            available: 44
        })
    );
    // A malformed block is refused at open.
    let p = packet(false, &[2, 3, 0, 0], &[], 1, 2);
    let mut buf = p.clone();
    assert!(matches!(
        EditSession::open(&mut buf[..]),
        Err(EditError::Options(_))
    ));
    assert_eq!(
        records(&[2, 4, 5, 0xb4, 1, 0]).collect::<Vec<_>>(),
        [TcpOption::MaxSegmentSize(1460)]
    );
}
