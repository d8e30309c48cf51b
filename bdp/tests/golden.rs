//! Golden vectors: every figure names its source.

use bdp::link::{aal5_cells, OC3_ATM};
use bdp::{
    bdp, ceiling, linux_initial_rcv_wscale, linux_rcv_wscale, mathis, max_window, padhye,
    parse_duration, rfc6349, transfer_time, window_needed, window_scale_shift, AtmEncapsulation,
    BitsPerSecond, Bytes, CalcError, Framing, Limit, Link, MathisConstant, PadhyeParams,
    TcpIpHeaders,
};
use core::time::Duration;

fn rate(s: &str) -> BitsPerSecond {
    s.parse().unwrap()
}
fn size(s: &str) -> Bytes {
    s.parse().unwrap()
}
fn dur(s: &str) -> Duration {
    parse_duration(s).unwrap()
}

// ---- DESIGN.md incident 1: the campus firewall that broke window scaling ----

#[test]
fn campus_firewall_unscaled_window_ceiling() {
    // DESIGN.md incident 1 / issue 4: 65535 * 8 / 0.010 = 52,428,000 bit/s ("52.4 Mbit/s").
    let c = ceiling(size("65535"), dur("10ms")).unwrap();
    assert_eq!(c.get(), 52_428_000);
    assert_eq!(format!("{c:.1}"), "52.4 Mbit/s");
}

#[test]
fn campus_firewall_window_needed_for_1g() {
    // DESIGN.md incident 1: 1 Gbit/s at 10 ms needs a 1,250,000-byte window, shift 5.
    let w = window_needed(rate("1Gbps"), dur("10ms")).unwrap();
    assert_eq!(w, Bytes::new(1_250_000));
    assert_eq!(window_scale_shift(w).unwrap(), 5);
    // Linux's rule agrees here: ilog2(1,250,000) = 20, 20 - 15 = 5.
    assert_eq!(linux_rcv_wscale(w), 5);
    // The fix gave 5x inbound: 1 Gbit/s is ~19x the 52.4 Mbit/s ceiling, so 5x is plausible.
    let ratio = 1_000_000_000 / ceiling(size("65535"), dur("10ms")).unwrap().get();
    assert_eq!(ratio, 19);
}

// ---- DESIGN.md incident 2: the satellite link ----

#[test]
fn satellite_bdp_is_about_3_5_mb() {
    // DESIGN.md incident 2: RTT 0.55 s at OC-1 51.84 Mbit/s is "a 3.5 MB bandwidth-delay product".
    let b = bdp(rate("51.84Mbit/s"), dur("0.55s")).unwrap();
    assert_eq!(b, Bytes::new(3_564_000));
    assert_eq!(format!("{:.2}", b.si()), "3.56 MB");
    assert_eq!(format!("{:.2}", b.binary()), "3.40 MiB");
    assert_eq!(window_scale_shift(b).unwrap(), 6);
}

#[test]
fn satellite_default_4k_window_gives_60_kbit() {
    // Issue 4: "a 4 KB default window gives 60 kbit/s" (4 KiB: 4096 * 8 / 0.55 = 59,578 bit/s).
    let c = ceiling(size("4KiB"), dur("0.55s")).unwrap();
    assert_eq!(c.get(), 59_578);
    assert_eq!(format!("{c:.0}"), "60 kbit/s");
    // With SI kilobytes (4000 bytes) it is 58,181 bit/s: still "about 60 kbit/s".
    assert_eq!(ceiling(size("4KB"), dur("0.55s")).unwrap().get(), 58_181);
}

#[test]
fn satellite_1mib_cap_gives_15_mbit() {
    // DESIGN.md incident 2: a 1 MB cap gives ~15 Mbit/s, about 1/3 of OC-1.
    let c = ceiling(size("1MiB"), dur("0.55s")).unwrap();
    assert_eq!(c.get(), 15_252_014);
    assert_eq!(format!("{c:.0}"), "15 Mbit/s");
    let third = 51_840_000 / c.get();
    assert_eq!(third, 3);
}

#[test]
fn satellite_8mib_image_takes_4_4_s() {
    // Issue 4: "an 8 MiB image then takes 4.4 s" (8 round trips of a 1 MiB window).
    let t = transfer_time(
        size("8MiB"),
        Some(rate("51.84Mbps")),
        Some((size("1MiB"), dur("0.55s"))),
    )
    .unwrap();
    assert_eq!(t.time, Duration::from_millis(4400));
    assert_eq!(t.limit, Limit::Window);
    assert_eq!(t.throughput.get(), 15_252_014);
    // At the full OC-1 rate the same image would take 1.29 s (rate-limited).
    let fast = transfer_time(size("8MiB"), Some(rate("51.84Mbps")), None).unwrap();
    assert_eq!(fast.limit, Limit::Rate);
    assert_eq!(fast.time.as_millis(), 1294);
}

// ---- RFC 6349 ----

#[test]
fn rfc6349_t3_at_25ms_needs_138kb() {
    // RFC 6349 section 3.3.1: T3 (44.21 Mbit/s) at 25 ms RTT: BDP ~138 KB
    // (44,210,000 * 0.025 / 8 = 138,156.25, rounded up to whole bytes).
    let b = bdp(rate("44.21Mbps"), dur("25ms")).unwrap();
    assert_eq!(b, Bytes::new(138_157));
    assert_eq!(format!("{:.0}", b.si()), "138 KB");
    // The predefined T3's payload rate is that same 44.21 Mbit/s.
    let t3 = Link::by_name("t3").unwrap();
    assert_eq!(t3.payload_rate, rate("44.21Mbps"));
    assert_eq!(bdp(t3.payload_rate, dur("25ms")).unwrap(), b);
}

#[test]
fn rfc6349_bdp_rows_computed_like_its_table() {
    // Link speed x RTT / 8, rounded up, as RFC 6349 section 3.3.1 computes its
    // BDP table (T1 1.536 Mbit/s at 20 ms, 100 Mbit/s at 2 ms, 1 Gbit/s at 1 ms,
    // 10 Gbit/s at 0.05 ms).
    assert_eq!(bdp(rate("1.536Mbps"), dur("20ms")).unwrap().get(), 3_840);
    assert_eq!(bdp(rate("100Mbps"), dur("2ms")).unwrap().get(), 25_000);
    assert_eq!(bdp(rate("1Gbps"), dur("1ms")).unwrap().get(), 125_000);
    assert_eq!(bdp(rate("10Gbps"), dur("0.05ms")).unwrap().get(), 62_500);
}

#[test]
fn rfc6349_16kb_window_at_5ms_gives_25_6_mbit() {
    // RFC 6349 section 3.3.1: a 16 KB RWND on a 100 Mbit/s path with 5 ms RTT
    // caps TCP at 16,000 * 8 / 0.005 = 25.6 Mbit/s, whatever the link speed.
    let c = ceiling(size("16KB"), dur("5ms")).unwrap();
    assert_eq!(c, rate("25.6Mbit/s"));
    let t = transfer_time(
        size("100MB"),
        Some(rate("100Mbps")),
        Some((size("16KB"), dur("5ms"))),
    )
    .unwrap();
    assert_eq!(t.limit, Limit::Window);
    assert_eq!(t.time, Duration::from_millis(31_250));
}

#[test]
fn rfc6349_max_achievable_tcp_throughput_over_ethernet() {
    // RFC 6349 section 4.1.1: with a 1500-byte MTU an Ethernet frame costs
    // 1538 bytes of line time and carries 1460 bytes of TCP payload
    // (IPv4, no options): Fast Ethernet ~94.9 Mbit/s, GigE ~949 Mbit/s,
    // 10 GigE ~9.49 Gbit/s.
    let fe = Link::by_name("ethernet-100m").unwrap();
    assert_eq!(fe.wire_bytes(Bytes::new(1500)).unwrap(), Bytes::new(1538));
    assert_eq!(fe.goodput(TcpIpHeaders::IPV4).unwrap().get(), 94_928_478);
    let ge = Link::by_name("ethernet-1g").unwrap();
    assert_eq!(ge.goodput(TcpIpHeaders::IPV4).unwrap().get(), 949_284_785);
    let xge = Link::by_name("ethernet-10g").unwrap();
    assert_eq!(
        xge.goodput(TcpIpHeaders::IPV4).unwrap().get(),
        9_492_847_854
    );
}

#[test]
fn rfc6349_ideal_transfer_time_and_ratio() {
    // RFC 6349 section 4.1.2: ideal transfer time = size / maximum achievable
    // TCP throughput. 100 MB over Fast Ethernet's 94.9 Mbit/s: ~8.43 s.
    // (Figures computed from the section 4.1.1 framing; the RFC rounds.)
    let fe = Link::by_name("ethernet-100m").unwrap();
    let max = fe.goodput(TcpIpHeaders::IPV4).unwrap();
    let ideal = rfc6349::ideal_transfer_time(size("100MB"), max).unwrap();
    assert_eq!(ideal.as_millis(), 8427);
    // A measured 10 s transfer: ratio 10 / 8.427 = 1.187.
    let ratio = rfc6349::transfer_time_ratio(Duration::from_secs(10), ideal).unwrap();
    assert!((ratio - 1.1866).abs() < 0.0005, "{ratio}");
    assert!(rfc6349::transfer_time_ratio(ideal, Duration::ZERO).is_err());
}

#[test]
fn rfc6349_efficiency_and_buffer_delay() {
    // RFC 6349 sections 4.2 and 4.3 formulas, worked: 100,000 original bytes
    // and 2,000 retransmitted (102,000 transmitted) -> 98.04 %;
    // a 25 ms baseline RTT rising to 32 ms under load -> 28 % buffer delay.
    let e = rfc6349::tcp_efficiency(Bytes::new(102_000), Bytes::new(2_000)).unwrap();
    assert!((e - 98.0392).abs() < 0.0001, "{e}");
    let d = rfc6349::buffer_delay(dur("32ms"), dur("25ms")).unwrap();
    assert!((d - 28.0).abs() < 1e-9, "{d}");
    assert_eq!(
        rfc6349::tcp_efficiency(Bytes::new(10), Bytes::new(11)),
        Err(CalcError::RetransmittedExceedsTransmitted {
            transmitted: 10,
            retransmitted: 11
        })
    );
    assert_eq!(
        rfc6349::buffer_delay(dur("1ms"), Duration::ZERO),
        Err(CalcError::ZeroRtt)
    );
}

// ---- Loss models ----

#[test]
fn mathis_at_1460_100ms_1pct_is_1_43_mbit() {
    // Issue 4 (Mathis et al. 1997, C = sqrt(3/2)): MSS 1460, RTT 100 ms, p = 1% -> ~1.43 Mbit/s.
    let x = mathis(size("1460"), dur("100ms"), 0.01, MathisConstant::Periodic).unwrap();
    assert!((x - 1_430_502.0).abs() < 1.0, "{x}");
    // Delayed ACKs (b = 2, C = sqrt(3/4)): 1/sqrt(2) of that.
    let d = mathis(size("1460"), dur("100ms"), 0.01, MathisConstant::DelayedAck).unwrap();
    assert!((d - 1_011_517.7).abs() < 1.0, "{d}");
}

#[test]
fn padhye_rfc5348_form() {
    // RFC 5348 section 3.1 with b = 1, t_RTO = 4 R; value computed independently
    // (Python, float64): s = 1460, R = 0.1 s, p = 0.01 -> 1,312,040.5 bit/s.
    let x = padhye(size("1460"), dur("100ms"), 0.01, PadhyeParams::default()).unwrap();
    assert!((x - 1_312_040.5).abs() < 1.0, "{x}");
    // Timeouts only lower the rate: Padhye <= Mathis, and they agree as p -> 0.
    let m = mathis(size("1460"), dur("100ms"), 1e-7, MathisConstant::Periodic).unwrap();
    let p = padhye(size("1460"), dur("100ms"), 1e-7, PadhyeParams::default()).unwrap();
    assert!(p <= m && p / m > 0.999, "{p} {m}");
    // A window cap binds: 64 KiB / 100 ms = 5.24 Mbit/s at tiny loss.
    let capped = padhye(
        size("1460"),
        dur("100ms"),
        1e-7,
        PadhyeParams {
            max_window: Some(size("64KiB")),
            ..PadhyeParams::default()
        },
    )
    .unwrap();
    assert!((capped - 5_242_880.0).abs() < 1.0, "{capped}");
}

#[test]
fn loss_model_errors() {
    let mss = size("1460");
    let rtt = dur("100ms");
    for p in [0.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            mathis(mss, rtt, p, MathisConstant::Periodic),
            Err(CalcError::LossOutOfRange { .. })
        ));
        assert!(matches!(
            padhye(mss, rtt, p, PadhyeParams::default()),
            Err(CalcError::LossOutOfRange { .. })
        ));
    }
    assert_eq!(
        mathis(Bytes::ZERO, rtt, 0.01, MathisConstant::Periodic),
        Err(CalcError::ZeroMss)
    );
    assert_eq!(
        mathis(mss, Duration::ZERO, 0.01, MathisConstant::Periodic),
        Err(CalcError::ZeroRtt)
    );
    assert!(mathis(mss, rtt, 0.01, MathisConstant::Custom(f64::NAN)).is_err());
    let b0 = PadhyeParams {
        b: 0,
        ..PadhyeParams::default()
    };
    assert!(padhye(mss, rtt, 0.01, b0).is_err());
}

// ---- Window scaling ----

#[test]
fn window_scale_edges() {
    // RFC 7323 section 2.3: the shift is at most 14; 65535 << 14 = 1,073,725,440.
    assert_eq!(window_scale_shift(Bytes::new(0)).unwrap(), 0);
    assert_eq!(window_scale_shift(Bytes::new(65_535)).unwrap(), 0);
    assert_eq!(window_scale_shift(Bytes::new(65_536)).unwrap(), 1);
    assert_eq!(window_scale_shift(Bytes::new(131_070)).unwrap(), 1);
    assert_eq!(window_scale_shift(Bytes::new(131_071)).unwrap(), 2);
    assert_eq!(window_scale_shift(Bytes::new(1_073_725_440)).unwrap(), 14);
    assert_eq!(
        window_scale_shift(Bytes::new(1_073_725_441)),
        Err(CalcError::WindowTooLarge {
            window: 1_073_725_441,
            max: 1_073_725_440
        })
    );
    assert_eq!(max_window(14).unwrap(), Bytes::new(1_073_725_440));
    assert_eq!(max_window(0).unwrap(), Bytes::new(65_535));
    assert_eq!(max_window(15), Err(CalcError::ShiftTooLarge { shift: 15 }));
}

#[test]
fn linux_rule_side_by_side() {
    // Linux net/ipv4/tcp_output.c tcp_select_initial_window:
    // rcv_wscale = clamp(ilog2(space) - 15, 0, TCP_MAX_WSCALE = 14).
    assert_eq!(linux_rcv_wscale(Bytes::new(65_535)), 0);
    assert_eq!(linux_rcv_wscale(Bytes::new(65_536)), 1);
    // The edge where the rules differ: Linux picks 1 (131071 >> 1 = 65535),
    // the smallest sufficient shift is 2 (65535 << 1 = 131070 < 131071).
    assert_eq!(linux_rcv_wscale(Bytes::new(131_071)), 1);
    assert_eq!(window_scale_shift(Bytes::new(131_071)).unwrap(), 2);
    assert_eq!(linux_rcv_wscale(Bytes::new(u64::MAX)), 14);
    assert_eq!(linux_rcv_wscale(Bytes::ZERO), 0);
    // Default sysctls: tcp_rmem[2] = 6 MiB dominates: ilog2(6,291,456) = 22 -> 7.
    let s = linux_initial_rcv_wscale(
        Bytes::new(65_535),
        Bytes::new(6 * 1024 * 1024),
        Bytes::new(212_992),
        Bytes::ZERO,
    );
    assert_eq!(s, 7);
    // A window clamp of 64 KiB brings it down to 1.
    let clamped = linux_initial_rcv_wscale(
        Bytes::new(65_535),
        Bytes::new(6 * 1024 * 1024),
        Bytes::new(212_992),
        Bytes::new(65_536),
    );
    assert_eq!(clamped, 1);
}

#[test]
fn calc_errors() {
    assert_eq!(
        ceiling(size("64KiB"), Duration::ZERO),
        Err(CalcError::ZeroRtt)
    );
    assert_eq!(
        transfer_time(size("1MB"), None, None),
        Err(CalcError::NoLimit)
    );
    assert_eq!(
        transfer_time(size("1MB"), Some(BitsPerSecond::ZERO), None),
        Err(CalcError::ZeroRate)
    );
    assert_eq!(
        transfer_time(size("1MB"), None, Some((Bytes::ZERO, dur("1ms")))),
        Err(CalcError::ZeroWindow)
    );
    assert_eq!(
        transfer_time(size("1MB"), None, Some((size("1MB"), Duration::ZERO))),
        Err(CalcError::ZeroRtt)
    );
    // u64::MAX bit/s over u64::MAX seconds overflows u128: an error, not a wrap.
    assert!(matches!(
        bdp(BitsPerSecond::new(u64::MAX), Duration::MAX),
        Err(CalcError::Overflow { .. })
    ));
    // A BDP that fits u128 but not u64.
    assert!(matches!(
        bdp(BitsPerSecond::new(u64::MAX), Duration::from_secs(1000)),
        Err(CalcError::Overflow { .. })
    ));
    assert_eq!(bdp(rate("1Gbps"), Duration::ZERO).unwrap(), Bytes::ZERO);
}

// ---- Link framing ----

#[test]
fn ethernet_framing() {
    // IEEE 802.3: preamble+SFD 8, header 14, FCS 4, IFG 12 -> 1538 per 1500-byte packet.
    let eth = Framing::Ethernet { vlan_tags: 0 };
    assert_eq!(eth.wire_bytes(Bytes::new(1500)).unwrap(), Bytes::new(1538));
    // 802.1Q adds 4 bytes per tag.
    let vlan = Framing::Ethernet { vlan_tags: 1 };
    assert_eq!(vlan.wire_bytes(Bytes::new(1500)).unwrap(), Bytes::new(1542));
    // A 40-byte ACK is padded to the 64-byte minimum frame: 84 bytes of line time.
    assert_eq!(eth.wire_bytes(Bytes::new(40)).unwrap(), Bytes::new(84));
    // 1 Gbit/s with timestamps and IPv6: 1500 - 72 = 1428 bytes per 1538.
    let ge = Link::by_name("ETHERNET-1G").unwrap();
    assert_eq!(
        ge.goodput(TcpIpHeaders::IPV6_TIMESTAMPS).unwrap().get(),
        928_478_543
    );
    assert_eq!(
        ge.serialization_time(Bytes::new(1500)).unwrap(),
        Duration::from_nanos(12_304)
    );
}

#[test]
fn sonet_rates() {
    // ANSI T1.105 / ITU-T G.707: line N x 51.84 Mbit/s; STS-Nc payload 260N/3
    // columns x 9 rows x 8 bits x 8000 frames/s = N x 49.92 Mbit/s.
    let cases = [
        ("oc1", 51_840_000, 48_384_000),
        ("oc3", 155_520_000, 149_760_000),
        ("oc12", 622_080_000, 599_040_000),
        ("oc48", 2_488_320_000, 2_396_160_000),
        ("oc192", 9_953_280_000, 9_584_640_000),
    ];
    for (name, line, payload) in cases {
        let l = Link::by_name(name).unwrap();
        assert_eq!(l.line_rate.get(), line, "{name}");
        assert_eq!(l.payload_rate.get(), payload, "{name}");
    }
    // STS-1: SPE 87 columns = 50.112 Mbit/s; minus path overhead = 49.536;
    // minus two fixed-stuff columns = 48.384.
    assert_eq!(bdp::link::STS1_SPE.get(), 87 * 9 * 8 * 8000);
    assert_eq!(bdp::link::STS1_PAYLOAD.get(), 84 * 9 * 8 * 8000);
    // T1 and T3 (ANSI T1.107): 1.544 line / 1.536 payload; 44.736 / 44.210.
    let t1 = Link::by_name("t1").unwrap();
    assert_eq!(
        (t1.line_rate.get(), t1.payload_rate.get()),
        (1_544_000, 1_536_000)
    );
    let t3 = Link::by_name("t3").unwrap();
    assert_eq!(
        (t3.line_rate.get(), t3.payload_rate.get()),
        (44_736_000, 44_210_000)
    );
}

#[test]
fn atm_cell_tax() {
    // ITU-T I.363.5 AAL5 + RFC 2684 LLC/SNAP: 1500 + 8 + 8 = 1516 -> 32 cells -> 1696 bytes.
    assert_eq!(aal5_cells(1500, AtmEncapsulation::LlcSnap), 32);
    assert_eq!(
        OC3_ATM.wire_bytes(Bytes::new(1500)).unwrap(),
        Bytes::new(1696)
    );
    // A 40-byte pure ACK: 40 + 8 + 8 = 56 -> 2 cells (106 bytes); with VC-mux 48 -> 1 cell.
    assert_eq!(aal5_cells(40, AtmEncapsulation::LlcSnap), 2);
    assert_eq!(aal5_cells(40, AtmEncapsulation::VcMux), 1);
    assert_eq!(aal5_cells(0, AtmEncapsulation::VcMux), 1);
    // OC-3c ATM: 149.76 Mbit/s of cells, 1460 TCP bytes per 1696 -> 128.9 Mbit/s.
    assert_eq!(OC3_ATM.line_rate.get(), 155_520_000);
    assert_eq!(OC3_ATM.payload_rate.get(), 149_760_000);
    assert_eq!(
        OC3_ATM.goodput(TcpIpHeaders::IPV4).unwrap().get(),
        128_920_754
    );
    assert_eq!(
        OC3_ATM.ip_rate(Bytes::new(1500)).unwrap().get(),
        149_760_000 * 1500 / 1696
    );
    // A 40-byte ACK is two 53-byte cells: 848 bits at 149.76 Mbit/s = 5662.4 ns, rounded up.
    assert_eq!(
        OC3_ATM.serialization_time(Bytes::new(40)).unwrap(),
        Duration::from_nanos(5_663)
    );
}

#[test]
fn link_table_is_consistent() {
    for l in bdp::LINKS {
        assert!(l.payload_rate <= l.line_rate, "{}", l.name);
        assert_eq!(Link::by_name(l.name), Some(l));
        let g = l.goodput(TcpIpHeaders::IPV4).unwrap();
        assert!(g < l.payload_rate, "{}", l.name);
    }
    assert_eq!(Link::by_name("no-such-link"), None);
    // MTU too small for the headers.
    let tiny = OC3_ATM.with_mtu(Bytes::new(40));
    assert_eq!(
        tiny.goodput(TcpIpHeaders::IPV4),
        Err(CalcError::MtuTooSmall {
            mtu: 40,
            headers: 40
        })
    );
}
