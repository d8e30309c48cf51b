//! A `Read` that hands out at most `chunk` bytes per call: how a pipe or a
//! slow disk feeds the reader. Shared by the reader's unit tests
//! (`src/reader.rs`, through `#[path]`) and the conformance tests.

use std::io::{self, Read};

/// Hands out `data` at most `chunk` bytes per `read`.
pub struct Trickle<'a> {
    pub data: &'a [u8],
    pub chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}
