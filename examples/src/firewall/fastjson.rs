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
//! keeps `serde_json`'s own formatting: integers through `itoa` (as
//! `serde_json` does), strings and floats through `serde_json` itself.
//! Shapes the documents do not use (maps, tuple structs and variants,
//! struct variants, byte strings) are refused and [`write()`] falls back to
//! `serde_json` for the whole value, so the output is the same either way
//! (a test compares the two on every capture the tests ship).

use std::fmt;

use serde::ser::{self, Impossible, Serialize};

/// Appends the compact JSON of `value` to `out`, byte for byte what
/// `serde_json::to_writer` writes.
pub fn write<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let start = out.len();
    if value.serialize(Fast(out)).is_err() {
        out.truncate(start);
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
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

struct Fast<'a>(&'a mut Vec<u8>);

impl Fast<'_> {
    fn int(self, v: impl itoa::Integer) -> Result {
        self.0
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    /// Through `serde_json`: strings (escaping) and floats (`null` when not finite).
    fn json<T: Serialize + ?Sized>(self, v: &T) -> Result {
        serde_json::to_writer(&mut *self.0, v).map_err(|_| Unsupported)
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
        self.0.extend_from_slice(if v { b"true" } else { b"false" });
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
        self.int(v)
    }
    fn serialize_u16(self, v: u16) -> Result {
        self.int(v)
    }
    fn serialize_u32(self, v: u32) -> Result {
        self.int(v)
    }
    fn serialize_u64(self, v: u64) -> Result {
        self.int(v)
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
            self.0.reserve(v.len() + 2);
            self.0.push(b'"');
            self.0.extend_from_slice(v.as_bytes());
            self.0.push(b'"');
            Ok(())
        } else {
            self.json(v)
        }
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result {
        self.0.extend_from_slice(b"null");
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
        self.json(variant)
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
        self.0.push(b'[');
        Ok(Seq {
            out: self.0,
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
        self.0.push(b'{');
        Ok(Struct {
            out: self.0,
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
        value.serialize(Fast(self.out))
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
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        // Derived keys are identifiers; checked in debug builds (the tests).
        debug_assert!(plain(key), "{key:?}");
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        value.serialize(Fast(self.out))
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
        // A shape left to serde_json (newtype variant) gives the same bytes too.
        let d = vec![inner(Some(2.5), Kind::Other(3))];
        let (a, b) = both(&d);
        assert_eq!(a, b);
    }
}
