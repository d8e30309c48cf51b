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
//!
//! Each key is copied with its quotes and colon from a small cache of
//! padded copies (`Keys`), keyed by the address of the `&'static str`:
//! a copy of a fixed 32 bytes is a few vector moves, where copying the key
//! itself is a `memcpy` call of a length known only at run time (ten
//! million of them on the benchmark capture: 9% of `analyze`'s CPU).

use std::fmt;

use serde::ser::{self, Impossible, Serialize};

/// Appends the compact JSON of `value` to `out`, byte for byte what
/// `serde_json::to_writer` writes.
pub fn write<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> serde_json::Result<()> {
    Writer::new().write(value, out)
}

/// A writer that keeps its key cache from one document to the next: the
/// way to write many documents of the same shapes.
#[derive(Debug, Default)]
pub struct Writer {
    keys: Keys,
}

impl Writer {
    /// A writer with an empty key cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`write()`], with this writer's cache.
    pub fn write<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        let start = out.len();
        if value
            .serialize(Fast {
                out,
                keys: &mut self.keys,
            })
            .is_err()
        {
            out.truncate(start);
            serde_json::to_writer(&mut *out, value)?;
        }
        Ok(())
    }
}

/// Longest key copied through the cache (with its two quotes and colon it
/// fills [`PAD`] bytes); longer ones are copied as they are.
const CACHED_KEY: usize = PAD - 3;
/// Bytes of a cache entry's padded copy.
const PAD: usize = 32;
/// Cache entries (direct mapped): more than the distinct keys of the
/// documents this writes; a collision only costs the plain copy.
const ENTRIES: usize = 256;

/// `"key":` padded to [`PAD`] bytes, for the `&'static str` at `addr`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    addr: usize,
    len: usize,
    bytes: [u8; PAD],
}

/// The key cache (12 KB, allocated with the writer).
#[derive(Debug)]
struct Keys(Box<[Entry; ENTRIES]>);

impl Default for Keys {
    fn default() -> Self {
        Keys(Box::new(
            [Entry {
                addr: 0,
                len: 0,
                bytes: [0; PAD],
            }; ENTRIES],
        ))
    }
}

impl Keys {
    /// Appends `"key":` to `out`.
    fn put(&mut self, key: &'static str, out: &mut Vec<u8>) {
        let k = key.as_bytes();
        let addr = k.as_ptr() as usize;
        if k.len() > CACHED_KEY {
            out.push(b'"');
            out.extend_from_slice(k);
            out.extend_from_slice(b"\":");
            return;
        }
        let e = &mut self.0[(addr ^ (addr >> 8)) % ENTRIES];
        if e.addr != addr || e.len != k.len() {
            e.addr = addr;
            e.len = k.len();
            e.bytes = [0; PAD];
            e.bytes[0] = b'"';
            e.bytes[1..=k.len()].copy_from_slice(k);
            e.bytes[k.len() + 1..k.len() + 3].copy_from_slice(b"\":");
        }
        let end = out.len() + k.len() + 3;
        out.extend_from_slice(&e.bytes);
        out.truncate(end);
    }
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
    keys: &'a mut Keys,
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
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
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
            self.out.reserve(v.len() + 2);
            self.out.push(b'"');
            self.out.extend_from_slice(v.as_bytes());
            self.out.push(b'"');
            Ok(())
        } else {
            self.json(v)
        }
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result {
        Err(Unsupported)
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
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            keys: self.keys,
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
            keys: self.keys,
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
    keys: &'a mut Keys,
    first: bool,
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        value.serialize(Fast {
            out: self.out,
            keys: self.keys,
        })
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
    keys: &'a mut Keys,
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
        self.keys.put(key, self.out);
        value.serialize(Fast {
            out: self.out,
            keys: self.keys,
        })
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
        // One writer for many documents (its key cache filled by the
        // first), and keys beyond the cached length.
        #[derive(Serialize)]
        struct Keys {
            a_key_far_longer_than_the_cached_keys_are: u8,
            #[serde(rename = "exactly_twenty_nine_bytes_xxx")]
            at_limit: u8,
            #[serde(rename = "exactly_thirty_bytes_long_xxxx")]
            past_limit: u8,
            id: u8,
            i: u8,
        }
        let mut w = super::Writer::new();
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
            w.write(&k, &mut a).unwrap();
            w.write(&d, &mut a).unwrap();
            let want = format!(
                "prefix{}{}",
                serde_json::to_string(&k).unwrap(),
                serde_json::to_string(&d).unwrap()
            );
            assert_eq!(String::from_utf8(a).unwrap(), want);
        }
        // A shape left to serde_json (newtype variant) gives the same bytes too.
        let d = vec![inner(Some(2.5), Kind::Other(3))];
        let (a, b) = both(&d);
        assert_eq!(a, b);
    }
}
