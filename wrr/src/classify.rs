//! Classify, then enqueue, in one call (feature `dscp`): a `dscp` crate
//! classifier table maps a packet's DS field to a queue index.
//!
//! A router's behaviour-aggregate classifier picks the output queue from
//! the DS field; [`Scheduler::enqueue_classified`] does that and offers the
//! packet to the queue in one step. A table entry past the last queue is a
//! refusal like any other ([`RefuseReason::NoSuchQueue`](crate::RefuseReason::NoSuchQueue)),
//! so nothing is lost silently.
//!
//! ```
//! use dscp::{DsField, PrecedenceClassifier};
//! use wrr::{Config, Fairness, Saturation, Scheduler};
//!
//! // The QBSS profile behind the Juniper precedence map.
//! let c = Config::new([98, 1, 0, 1], Fairness::Bytes { mtu: 1500 }, Saturation::Forced);
//! let mut port: Scheduler<u32, 4, 64> = Scheduler::new(c)?;
//! let map = PrecedenceClassifier::juniper_qbss();
//! // TOS 0x20 (precedence 001, CS1) is QBSS: queue 1.
//! assert_eq!(port.enqueue_classified(&map, DsField::new(0x20), 1500), Ok(1));
//! // Precedence 011 goes to premium, weight 0: refused and handed back.
//! let refused = port.enqueue_classified(&map, DsField::new(0x60), 1500).unwrap_err();
//! assert_eq!((refused.queue, refused.packet), (2, 1500));
//! # Ok::<(), wrr::ConfigError>(())
//! ```

use dscp::{DsField, DscpClassifier, PrecedenceClassifier};

use crate::packet::PacketLen;
use crate::refused::Refused;
use crate::scheduler::Scheduler;

/// A table from a DS field to a queue index.
///
/// Implemented for the `dscp` crate's [`DscpClassifier`] and
/// [`PrecedenceClassifier`]; implement it for any other rule.
pub trait Classifier {
    /// The queue a packet with this DS field goes to.
    fn queue_of(&self, field: DsField) -> usize;
}

impl Classifier for DscpClassifier {
    #[inline(always)]
    fn queue_of(&self, field: DsField) -> usize {
        usize::from(self.classify(field))
    }
}

impl Classifier for PrecedenceClassifier {
    #[inline(always)]
    fn queue_of(&self, field: DsField) -> usize {
        usize::from(self.classify(field))
    }
}

impl<C: Classifier + ?Sized> Classifier for &C {
    #[inline(always)]
    fn queue_of(&self, field: DsField) -> usize {
        (**self).queue_of(field)
    }
}

impl<P: PacketLen, const N: usize, const CAP: usize> Scheduler<P, N, CAP> {
    /// Classifies a packet by its DS field and offers it to that queue;
    /// returns the queue it joined. A refusal is as for
    /// [`Scheduler::enqueue`], with the queue the classifier chose. O(1).
    #[inline]
    pub fn enqueue_classified<C: Classifier + ?Sized>(
        &mut self,
        classifier: &C,
        field: DsField,
        packet: P,
    ) -> Result<usize, Refused<P>> {
        let queue = classifier.queue_of(field);
        self.enqueue(queue, packet).map(|()| queue)
    }
}
