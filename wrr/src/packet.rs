//! The one thing the scheduler needs to know about a packet: its length.

/// Anything the scheduler can queue: it reports its length in bytes.
///
/// The length is read when a packet is offered and again when it leaves, so
/// it must not change while the packet is queued (a value that does change
/// cannot make the scheduler panic, it only makes its byte counters wrong).
///
/// Implemented for plain lengths (`u16`, `u32`, `u64`, `usize`: the value *is*
/// the length, handy for models and tests), for byte slices and arrays, for
/// references to any `PacketLen`, and, with the `bytes` feature, for
/// `bytes::Bytes` and `bytes::BytesMut`.
pub trait PacketLen {
    /// Length of the packet in bytes, as counted against byte limits and,
    /// in [`Fairness::Bytes`](crate::Fairness::Bytes) mode, against deficits.
    fn packet_len(&self) -> usize;
}

impl PacketLen for u16 {
    fn packet_len(&self) -> usize {
        usize::from(*self)
    }
}

impl PacketLen for u32 {
    fn packet_len(&self) -> usize {
        usize::try_from(*self).unwrap_or(usize::MAX)
    }
}

impl PacketLen for u64 {
    fn packet_len(&self) -> usize {
        usize::try_from(*self).unwrap_or(usize::MAX)
    }
}

impl PacketLen for usize {
    fn packet_len(&self) -> usize {
        *self
    }
}

impl PacketLen for [u8] {
    fn packet_len(&self) -> usize {
        self.len()
    }
}

impl<const M: usize> PacketLen for [u8; M] {
    fn packet_len(&self) -> usize {
        M
    }
}

impl<T: PacketLen + ?Sized> PacketLen for &T {
    fn packet_len(&self) -> usize {
        (**self).packet_len()
    }
}

impl<T: PacketLen + ?Sized> PacketLen for &mut T {
    fn packet_len(&self) -> usize {
        (**self).packet_len()
    }
}

#[cfg(feature = "bytes")]
impl PacketLen for bytes::Bytes {
    fn packet_len(&self) -> usize {
        self.len()
    }
}

#[cfg(feature = "bytes")]
impl PacketLen for bytes::BytesMut {
    fn packet_len(&self) -> usize {
        self.len()
    }
}

#[cfg(test)]
mod tests {
    use super::PacketLen;

    #[test]
    fn plain_lengths_are_their_value() {
        assert_eq!(1500u16.packet_len(), 1500);
        assert_eq!(9000u32.packet_len(), 9000);
        assert_eq!(64u64.packet_len(), 64);
        assert_eq!(40usize.packet_len(), 40);
    }

    #[test]
    fn slices_arrays_and_references() {
        let frame = [0u8; 60];
        assert_eq!(frame.packet_len(), 60);
        assert_eq!(frame[..20].packet_len(), 20);
        assert_eq!((&&frame).packet_len(), 60);
        let mut n = 7u32;
        let r: &mut u32 = &mut n;
        assert_eq!(PacketLen::packet_len(&r), 7);
    }

    #[cfg(feature = "bytes")]
    #[test]
    fn bytes_buffers() {
        let b = bytes::Bytes::from_static(&[1, 2, 3]);
        assert_eq!(b.packet_len(), 3);
        let m = bytes::BytesMut::zeroed(1500);
        assert_eq!(m.packet_len(), 1500);
    }
}
