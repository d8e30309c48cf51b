//! `dump` allocates nothing per packet: the number of heap allocations for
//! a 2,000-segment capture equals the number for a 20-segment one (a counting
//! global allocator; output to `io::sink()` so only the engine is counted).
//! Only the allocations of the thread that runs `dump` are counted: the test
//! harness's own threads allocate when they please (a CI run under load
//! counted 2 more for one of the captures).

mod dump_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io;

use dump_support::*;
use firewall_check::output::dump::{dump, DumpFormat};

struct Counting;

thread_local! {
    // Const-initialized and without a destructor: safe to touch from the
    // allocator itself.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter any more.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn capture(n: u32, ng: bool) -> Vec<u8> {
    let mut sack_ts = ts_options(7, 9);
    sack_ts.extend_from_slice(&[1, 1, 5, 18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4]);
    let pkts: Vec<Pkt> = (0..n)
        .map(|i| {
            let seg = Seg::new([198, 18, 0, 1], 40000, [198, 19, 0, 1], 80)
                .seq(i * 100)
                .payload(100);
            let seg = match i % 3 {
                0 => seg.opts(&linux_syn_options(i, 0, 7)),
                1 => seg.opts(&sack_ts),
                _ => seg.opts(&[1, 2, 3, 5, 0, 0, 0, 0]), // malformed: error path too
            };
            let ip = if i % 2 == 0 {
                seg.ipv4()
            } else {
                seg.ipv6(&[])
            };
            Pkt::new(
                u64::from(i) * 1_000_000,
                ethernet(if i % 2 == 0 { 0x0800 } else { 0x86dd }, &ip),
            )
        })
        .collect();
    if ng {
        pcapng(&[Section {
            ifaces: vec![Iface {
                linktype: 1,
                tsresol: Some(9),
            }],
            pkts: pkts.into_iter().map(|p| (0, p)).collect(),
        }])
    } else {
        pcap(1, false, &pkts)
    }
}

fn allocations_for(file: &[u8], format: DumpFormat) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    let stats = dump(file, &mut io::sink(), &mut io::sink(), format).expect("dump");
    let after = ALLOCATIONS.with(Cell::get);
    assert!(stats.segments > 0);
    after - before
}

#[test]
fn allocations_do_not_grow_with_the_number_of_packets() {
    for ng in [false, true] {
        for format in [DumpFormat::Json, DumpFormat::Text] {
            let small = capture(20, ng);
            let large = capture(2_000, ng);
            let a = allocations_for(&small, format);
            let b = allocations_for(&large, format);
            // The reader's buffers: the counter sees this thread's allocations.
            assert!(a > 0, "pcapng {ng}, {format:?}: no allocation counted");
            assert_eq!(
                a, b,
                "pcapng {ng}, {format:?}: {a} allocations for 20 packets, {b} for 2,000"
            );
        }
    }
}
