//! Arbitrary packets and edit sequences through the edit session: never a
//! panic; a refused open changes nothing; after `finish` the packet's TCP
//! header is valid, the options are well formed, and when the input's TCP
//! checksum was valid (IPv4) it still is.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tcp_options::session::EditSession;
use tcp_options::{checksum, netfilter, StrictOptions, TcpPacket};

#[derive(Debug, Arbitrary)]
enum Edit {
    Strip(Vec<u8>),
    SetWindowScale(u8),
    ClampMss(u16),
    SetWindow(u16),
    Seq(u32),
    Ack(u32),
    Insert(u8, Vec<u8>),
    Remove(u8),
    Repad,
}

#[derive(Debug, Arbitrary)]
struct Input {
    room: u8,
    edits: Vec<Edit>,
    packet: Vec<u8>,
}

fn tcp_ok_v4(p: &[u8]) -> Option<bool> {
    let at = netfilter::locate(p).ok()?;
    if p.first()? >> 4 != 4 {
        return None;
    }
    let src: [u8; 4] = p.get(12..16)?.try_into().ok()?;
    let dst: [u8; 4] = p.get(16..20)?.try_into().ok()?;
    Some(checksum::verify_ipv4(
        src,
        dst,
        p.get(at.tcp_offset..at.len)?,
    ))
}

fuzz_target!(|input: Input| {
    let mut buf = input.packet.clone();
    buf.extend(std::iter::repeat_n(0, usize::from(input.room % 48)));
    let before = buf.clone();
    let was_ok = tcp_ok_v4(&buf);
    let mut s = match EditSession::open(&mut buf[..]) {
        Ok(s) => s,
        Err(_) => {
            assert_eq!(buf, before);
            return;
        }
    };
    for e in input.edits.iter().take(16) {
        match e {
            Edit::Strip(k) => {
                let _ = s.strip(k);
            }
            Edit::SetWindowScale(x) => {
                let _ = s.set_window_scale(*x);
            }
            Edit::ClampMss(m) => {
                let _ = s.clamp_mss(*m);
            }
            Edit::SetWindow(w) => {
                let _ = s.set_window(*w);
            }
            Edit::Seq(d) => {
                let _ = s.add_to_seq(*d);
            }
            Edit::Ack(d) => {
                let _ = s.add_to_ack(*d);
            }
            Edit::Insert(k, d) => {
                let _ = s.insert_option(*k, d);
            }
            Edit::Remove(k) => {
                let _ = s.remove_option(*k);
            }
            Edit::Repad => s.repad(),
        }
        assert!(StrictOptions::validate(s.options()).is_ok());
    }
    let len = s.finish();
    let out = &buf[..len];
    let at = netfilter::locate(out).expect("still an IP TCP packet");
    assert_eq!(at.len, len);
    let seg = &out[at.tcp_offset..at.len];
    let p = TcpPacket::new_checked(seg).expect("valid TCP header");
    assert!(StrictOptions::validate(p.options()).is_ok());
    if was_ok == Some(true) {
        assert_eq!(tcp_ok_v4(out), Some(true));
    }
});
