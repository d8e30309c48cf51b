//! Compact JSON for documents written once per connection: the bytes
//! `serde_json::to_writer` writes, produced faster.
//!
//! `analyze --json` writes about 1.6 KB per connection, most of it object
//! keys. `serde_json` runs every key through its string-escaping loop (a
//! table lookup per byte and four writes per key); on the many-connections
//! benchmark capture (100,351 connections) that was a third of the run
//! time. The keys `#[derive(Serialize)]` hands over are the Rust field
//! names (or their `rename`s): `&'static str` identifiers that never need
//! escaping, so this serializer copies them as they are. Everything else
//! keeps `serde_json`'s formatting: unsigned integers as plain digits,
//! signed ones through `itoa` (as `serde_json` does), strings that need
//! escaping and floats through `serde_json` itself.
//! Shapes the documents do not use (maps, tuple structs and variants,
//! struct variants) are refused and [`write()`] falls back to
//! `serde_json` for the whole value, so the output is the same either way
//! (a test compares the two on every capture the tests ship).
//!
//! Each key is written with the comma before it, its quotes and colon as
//! one copy of a fixed 32 bytes, cut back to its length: the field code is
//! inlined where the derived code names the key, so that copy is a
//! constant and a few vector moves, where copying the key itself is a
//! `memcpy` call of a length known only at run time (ten million of them
//! on the benchmark capture: 9% of `analyze`'s CPU). Unsigned integers
//! are written the same way: digits into a fixed 20-byte stretch, cut back
//! to their number.

use std::fmt;

use serde::ser::{self, Impossible, Serialize};

/// Appends the compact JSON of `value` to `out`, byte for byte what
/// `serde_json::to_writer` writes.
pub fn write<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let start = out.len();
    if value.serialize(Fast { out }).is_err() {
        out.truncate(start);
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
}

/// Longest key written as one fixed-size copy (with the comma before it,
/// its two quotes and its colon it fills [`PAD`] bytes); longer ones are
/// copied as they are.
const PADDED_KEY: usize = PAD - 4;
/// Bytes of a key's padded copy.
const PAD: usize = 32;

/// Appends `"key":` to `out`, after a comma unless the key is its
/// object's `first`. Inlined where the derived code names the key, so the
/// padded copy is a constant there and appending it a few vector moves.
#[inline(always)]
fn put_key(key: &'static str, first: bool, out: &mut Vec<u8>) {
    let k = key.as_bytes();
    if k.len() > PADDED_KEY {
        if !first {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(k);
        out.extend_from_slice(b"\":");
        return;
    }
    let mut pad = [0u8; PAD];
    pad[..2].copy_from_slice(b",\"");
    pad[2..k.len() + 2].copy_from_slice(k);
    pad[k.len() + 2..k.len() + 4].copy_from_slice(b"\":");
    // Fixed-size copies (the first key's without its comma), then the
    // length cut back to the key's.
    let end = out.len() + k.len() + 4 - usize::from(first);
    if first {
        out.extend_from_slice(&pad[1..]);
    } else {
        out.extend_from_slice(&pad);
    }
    out.truncate(end);
}

/// Appends the decimal digits of `v` (what `itoa` and `serde_json`
/// write), into a fixed 20-byte stretch cut back to the digits, so that
/// no copy of a length known only at run time is made.
fn put_u64(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    let n = v.ilog10() as usize + 1;
    let start = out.len();
    out.extend_from_slice(&[b'0'; 20]);
    let mut rest = v;
    for d in out[start..start + n].iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    out.truncate(start + n);
}

/// A shape this serializer leaves to `serde_json`.
#[derive(Debug)]
pub struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Unsupported
    }
}

type Result<T = ()> = std::result::Result<T, Unsupported>;

struct Fast<'a> {
    out: &'a mut Vec<u8>,
}

impl Fast<'_> {
    fn int(self, v: impl itoa::Integer) -> Result {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    /// Through `serde_json`: strings (escaping) and floats (`null` when not finite).
    fn json<T: Serialize + ?Sized>(self, v: &T) -> Result {
        serde_json::to_writer(&mut *self.out, v).map_err(|_| Unsupported)
    }
}

impl<'a> ser::Serializer for Fast<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Impossible<(), Unsupported>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Impossible<(), Unsupported>;
    type SerializeStruct = Struct<'a>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    fn serialize_bool(self, v: bool) -> Result {
        // Two copies of known length, not one of a length chosen at run time.
        if v {
            self.out.extend_from_slice(b"true");
        } else {
            self.out.extend_from_slice(b"false");
        }
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result {
        self.int(v)
    }
    fn serialize_i16(self, v: i16) -> Result {
        self.int(v)
    }
    fn serialize_i32(self, v: i32) -> Result {
        self.int(v)
    }
    fn serialize_i64(self, v: i64) -> Result {
        self.int(v)
    }
    fn serialize_i128(self, v: i128) -> Result {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result {
        put_u64(self.out, u64::from(v));
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Result {
        put_u64(self.out, u64::from(v));
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Result {
        put_u64(self.out, u64::from(v));
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result {
        put_u64(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result {
        self.int(v)
    }
    fn serialize_f32(self, v: f32) -> Result {
        self.json(&v)
    }
    fn serialize_f64(self, v: f64) -> Result {
        self.json(&v)
    }
    fn serialize_char(self, v: char) -> Result {
        self.json(&v)
    }
    fn serialize_str(self, v: &str) -> Result {
        // Most strings need no escaping: copied as they are, checked 16
        // bytes at a time; the others through `serde_json`.
        if plain(v) {
            self.out.reserve(v.len() + 2);
            self.out.push(b'"');
            self.out.extend_from_slice(v.as_bytes());
            self.out.push(b'"');
            Ok(())
        } else {
            self.json(v)
        }
    }
    /// Byte strings are not in the documents: `serde_json` writes them.
    fn serialize_bytes(self, v: &[u8]) -> Result {
        self.json(v)
    }
    fn serialize_none(self) -> Result {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result {
        Err(Unsupported)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'a>> {
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(Unsupported)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(Unsupported)
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Struct<'a>> {
        self.out.push(b'{');
        Ok(Struct {
            out: self.out,
            first: true,
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(Unsupported)
    }
}

struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        value.serialize(Fast { out: self.out })
    }
    fn end(self) -> Result {
        self.out.push(b']');
        Ok(())
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

struct Struct<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

/// A string `serde_json` writes unchanged between quotes: no quote,
/// backslash or control byte (a branch-free test per 16-byte chunk).
fn plain(s: &str) -> bool {
    s.as_bytes().chunks(16).all(|c| {
        c.iter()
            .fold(true, |ok, &b| ok & (b >= 0x20) & (b != b'"') & (b != b'\\'))
    })
}

impl ser::SerializeStruct for Struct<'_> {
    type Ok = ();
    type Error = Unsupported;
    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        // Derived keys are identifiers; checked in debug builds (the tests).
        debug_assert!(plain(key), "{key:?}");
        let first = std::mem::take(&mut self.first);
        put_key(key, first, self.out);
        value.serialize(Fast { out: self.out })
    }
    fn end(self) -> Result {
        self.out.push(b'}');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        ReceiveWindow,
        Other(u8),
    }

    #[derive(Serialize)]
    struct Inner {
        f: Option<f64>,
        g: f32,
        s: &'static str,
        kind: Kind,
        list: Vec<u16>,
        empty: Vec<u8>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
    }

    #[derive(Serialize)]
    struct Doc {
        id: u64,
        neg: i64,
        big: u128,
        b: bool,
        text: String,
        none: Option<u8>,
        inner: Inner,
        pair: (u8, char),
        unit: (),
        nested: Vec<Inner>,
    }

    fn inner(f: Option<f64>, kind: Kind) -> Inner {
        Inner {
            f,
            g: 0.1,
            s: "tab\there \"quoted\" \u{1} é",
            kind,
            list: vec![1, 65535],
            empty: Vec::new(),
            skipped: None,
        }
    }

    fn both<T: Serialize>(v: &T) -> (String, String) {
        let mut fast = Vec::new();
        super::write(v, &mut fast).unwrap();
        (
            String::from_utf8(fast).unwrap(),
            serde_json::to_string(v).unwrap(),
        )
    }

    #[test]
    fn writes_what_serde_json_writes() {
        for f in [
            Some(0.25),
            Some(1e-7),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(3.0),
            None,
        ] {
            let d = Doc {
                id: u64::MAX,
                neg: i64::MIN,
                big: u128::MAX,
                b: true,
                text: "line\nbreak \\ end".to_string(),
                none: None,
                inner: inner(f, Kind::ReceiveWindow),
                pair: (7, '"'),
                unit: (),
                nested: vec![
                    inner(None, Kind::ReceiveWindow),
                    inner(f, Kind::ReceiveWindow),
                ],
            };
            let (a, b) = both(&d);
            assert_eq!(a, b);
        }
        // Several documents after one another, and keys at and beyond
        // the padded length.
        #[derive(Serialize)]
        struct Keys {
            a_key_far_longer_than_the_cached_keys_are: u8,
            #[serde(rename = "exactly_twenty_eight_bytes_x")]
            at_limit: u8,
            #[serde(rename = "exactly_twenty_nine_bytes_xxx")]
            past_limit: u8,
            id: u8,
            i: u8,
        }
        for n in 0..3u8 {
            let k = Keys {
                a_key_far_longer_than_the_cached_keys_are: n,
                at_limit: n,
                past_limit: n,
                id: n,
                i: n,
            };
            let d = inner(Some(f64::from(n)), Kind::ReceiveWindow);
            let mut a = b"prefix".to_vec();
            super::write(&k, &mut a).unwrap();
            super::write(&d, &mut a).unwrap();
            let want = format!(
                "prefix{}{}",
                serde_json::to_string(&k).unwrap(),
                serde_json::to_string(&d).unwrap()
            );
            assert_eq!(String::from_utf8(a).unwrap(), want);
        }
        assert_eq!("exactly_twenty_eight_bytes_x".len(), super::PADDED_KEY);
        // A shape left to serde_json (newtype variant) gives the same bytes too.
        let d = vec![inner(Some(2.5), Kind::Other(3))];
        let (a, b) = both(&d);
        assert_eq!(a, b);
    }

    #[derive(Serialize)]
    struct Ints {
        a: u64,
        b: u32,
        c: u16,
        d: u8,
        e: Option<u64>,
        f: Vec<u64>,
    }

    proptest::proptest! {
        /// Every unsigned integer, each power of ten and its neighbours
        /// among them, is written as `serde_json` writes it.
        #[test]
        fn unsigned_integers_as_serde_json(
            a: u64, b: u32, c: u16, d: u8, e: Option<u64>,
            exp in 0u32..20, delta in -1i64..=1,
        ) {
            let p = 10u64.pow(exp).saturating_add_signed(delta);
            let v = Ints { a, b, c, d, e, f: vec![p, 0, 9, 10, u64::MAX, a % 1000] };
            let (x, y) = both(&v);
            proptest::prop_assert_eq!(x, y);
        }
    }
}
