//! The plain reference scheduler shared by the differential test
//! (`tests/reference.rs`) and the benchmark (`benches/wrr.rs`): a textbook
//! deficit round robin built from `VecDeque`s, with no limits, counters or
//! saturation tracking. A queue joins the tail of the round with one quantum,
//! serves while its deficit covers the head packet, otherwise gets another
//! quantum and passes the turn, and forgets its deficit when it empties. In
//! packet mode every packet costs 1, which makes it classic WRR.

use std::collections::VecDeque;

/// Reference DRR over packet lengths of type `L`.
pub struct ReferenceDrr<L> {
    queues: Vec<VecDeque<L>>,
    deficit: Vec<u64>,
    quantum: Vec<u64>,
    active: VecDeque<usize>,
    bytes: bool,
}

impl<L: Copy + Into<u64>> ReferenceDrr<L> {
    /// One queue per weight; quantum = weight x `unit` (the MTU in byte mode,
    /// 1 in packet mode); `capacity` preallocates each queue.
    pub fn new(weights: &[u32], unit: u64, bytes: bool, capacity: usize) -> Self {
        ReferenceDrr {
            queues: weights
                .iter()
                .map(|_| VecDeque::with_capacity(capacity))
                .collect(),
            deficit: vec![0; weights.len()],
            quantum: weights.iter().map(|&w| u64::from(w) * unit).collect(),
            active: VecDeque::with_capacity(weights.len()),
            bytes,
        }
    }

    /// Packets waiting in queue `q`.
    #[allow(dead_code)] // the benchmark does not ask
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].len()
    }

    /// Appends a packet to queue `q` (never refuses).
    #[inline(always)]
    pub fn enqueue(&mut self, q: usize, len: L) {
        if self.queues[q].is_empty() {
            self.active.push_back(q);
            self.deficit[q] = self.quantum[q];
        }
        self.queues[q].push_back(len);
    }

    /// The next packet and its queue, or `None` when every queue is empty.
    #[inline(always)]
    pub fn dequeue(&mut self) -> Option<(usize, L)> {
        loop {
            let q = *self.active.front()?;
            let len = *self.queues[q].front()?;
            let cost = if self.bytes { len.into() } else { 1 };
            if self.deficit[q] >= cost {
                self.deficit[q] -= cost;
                self.queues[q].pop_front();
                if self.queues[q].is_empty() {
                    self.active.pop_front();
                    self.deficit[q] = 0;
                }
                return Some((q, len));
            }
            self.deficit[q] += self.quantum[q];
            self.active.rotate_left(1);
        }
    }
}
