//! The TCP control bits.

bitflags::bitflags! {
    /// The nine TCP control bits, as the low 9 bits of the 16-bit word that
    /// also holds the data offset (RFC 9293 section 3.1, RFC 3168 for ECE and
    /// CWR, RFC 9768 for AE, formerly the RFC 3540 NS bit).
    ///
    /// Reserved bits are not flags; [`crate::TcpHeader::reserved`] returns them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub struct Flags: u16 {
        /// No more data from sender.
        const FIN = 0x001;
        /// Synchronize sequence numbers.
        const SYN = 0x002;
        /// Reset the connection.
        const RST = 0x004;
        /// Push function.
        const PSH = 0x008;
        /// Acknowledgment field is significant.
        const ACK = 0x010;
        /// Urgent pointer field is significant.
        const URG = 0x020;
        /// ECN-Echo (RFC 3168).
        const ECE = 0x040;
        /// Congestion Window Reduced (RFC 3168).
        const CWR = 0x080;
        /// Accurate ECN bit (RFC 9768; the former NS bit of RFC 3540).
        const AE = 0x100;
    }
}

impl Flags {
    /// Every flag with its upper-case name, in bit order (FIN first).
    pub const NAMED: [(Flags, &'static str); 9] = [
        (Flags::FIN, "FIN"),
        (Flags::SYN, "SYN"),
        (Flags::RST, "RST"),
        (Flags::PSH, "PSH"),
        (Flags::ACK, "ACK"),
        (Flags::URG, "URG"),
        (Flags::ECE, "ECE"),
        (Flags::CWR, "CWR"),
        (Flags::AE, "AE"),
    ];

    /// Names of the set flags, in bit order (FIN first).
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMED
            .into_iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, n)| n)
    }
}
