//! The Linux buffer model and slow start: golden figures naming their
//! sources (DESIGN.md's incidents, the kernel commits the model follows) and
//! properties of the exact arithmetic.

use bdp::linux::{
    advise, max_autotuned_window, plan, plan_window, AdviceList, LinuxHost, LinuxKernel, Setting,
    Side, WindowShare, ADVICE_CAPACITY, DEFAULT_SCALING_RATIO, EARLY_DEFAULT_SCALING_RATIO,
    MAX_BUFFER,
};
use bdp::{
    ceiling, transfer_time, transfer_time_slow_start, BitsPerSecond, Bytes, CalcError, Limit,
    MAX_WINDOW,
};
use core::time::Duration;
use proptest::prelude::*;

const GBIT: BitsPerSecond = BitsPerSecond::new(1_000_000_000);
const OC1: BitsPerSecond = BitsPerSecond::new(51_840_000);
const MS10: Duration = Duration::from_millis(10);
const MS550: Duration = Duration::from_millis(550);

fn k(s: &str) -> LinuxKernel {
    s.parse().unwrap()
}

fn settings(l: &AdviceList) -> Vec<(&'static str, u64)> {
    l.iter().map(|a| (a.setting.name(), a.value)).collect()
}

// ---- DESIGN.md incident 1: 1 Gbit/s at 10 ms ----

#[test]
fn campus_1g_10ms_needs_1_250_000_bytes_and_these_buffers() {
    // DESIGN.md incident 1: 1 Gbit/s at 10 ms needs a 1,250,000-byte window.
    // tcp_adv_win_scale = 1 (Linux 3.4 to 6.5): window = space - (space >> 1).
    let p = plan(GBIT, MS10, LinuxHost::new(k("5.15"))).unwrap();
    assert_eq!(p.window, Bytes::new(1_250_000));
    assert_eq!(p.receive_buffer, Bytes::new(2_499_999));
    assert_eq!(
        WindowShare::AdvWinScale(1).window_from_space(p.receive_buffer),
        Bytes::new(1_250_000)
    );
    // tcp_adv_win_scale = 2 (before 3.4): 3/4 of the buffer.
    let p = plan(GBIT, MS10, LinuxHost::new(k("3.2"))).unwrap();
    assert_eq!(p.receive_buffer, Bytes::new(1_666_666));
    // 6.6 and later: scaling ratio, planned at 128/256.
    let p = plan(GBIT, MS10, LinuxHost::new(k("6.8"))).unwrap();
    assert_eq!(p.receive_buffer, Bytes::new(2_500_000));
    assert_eq!(p.send_buffer, Bytes::new(2_500_000));
    assert_eq!(p.so_sndbuf, Bytes::new(1_250_000));
    // A measured ratio of 0.7 (179/256) needs less buffer: 1,787,710 bytes.
    let measured = LinuxHost::new(k("6.8")).with_share(WindowShare::ScalingRatio(179));
    let p = plan(GBIT, MS10, measured).unwrap();
    assert_eq!(p.receive_buffer, Bytes::new(1_787_710));
    assert!(
        WindowShare::ScalingRatio(179).window_from_space(Bytes::new(1_787_709))
            < Bytes::new(1_250_000)
    );
}

#[test]
fn window_scale_shift_follows_tcp_rmem_max() {
    // tcp_select_initial_window: shift from max(tcp_rmem[2], rmem_max): the
    // 6 MiB default gives 7; "tcp: increase tcp_rmem[2] to 32 MB" (6.16)
    // gives 10 (the selftest it broke expected 7 and saw 10).
    assert_eq!(
        plan(GBIT, MS10, LinuxHost::new(k("6.8")))
            .unwrap()
            .rcv_wscale,
        7
    );
    assert_eq!(
        plan(GBIT, MS10, LinuxHost::new(k("6.16")))
            .unwrap()
            .rcv_wscale,
        10
    );
    // A plan above the default raises the shift with it: 100 Gbit/s at 10 ms
    // needs 125,000,000 bytes of window, a 250,000,000-byte buffer: shift 12.
    let p = plan(
        BitsPerSecond::new(100_000_000_000),
        MS10,
        LinuxHost::new(k("6.8")),
    )
    .unwrap();
    assert_eq!(p.receive_buffer, Bytes::new(250_000_000));
    assert_eq!(p.rcv_wscale, 12);
    assert!(bdp::max_window(p.rcv_wscale).unwrap() >= p.window);
}

#[test]
fn campus_advice_for_an_unscaled_window() {
    // The campus download: stuck at 65,535 bytes, receiver on 6.8, target 1 Gbit/s.
    let a = advise(
        Side::Receiver,
        GBIT,
        MS10,
        Bytes::new(65_535),
        LinuxHost::new(k("6.8")),
    )
    .unwrap();
    assert_eq!(
        settings(&a),
        [
            ("net.ipv4.tcp_window_scaling", 1),
            ("net.ipv4.tcp_moderate_rcvbuf", 1),
            ("net.ipv4.tcp_rmem max", 2_500_000),
            // 6.6 to 6.9 hold SO_RCVBUF sockets to the early default ratio, 65/256.
            ("net.core.rmem_max", 2_461_539),
        ]
    );
    let scaling = a.get(Setting::TcpWindowScaling).unwrap().why.to_string();
    assert!(
        scaling.contains("1250000 bytes is above 65535"),
        "{scaling}"
    );
    assert!(scaling.contains("shift 7"), "{scaling}");
    // The default 6 MiB is enough: the advice says so instead of implying it is not.
    let rmem = a.get(Setting::TcpRmemMax).unwrap().why.to_string();
    assert!(
        rmem.contains("the default, 6291456 bytes, already allows it"),
        "{rmem}"
    );
    assert!(
        rmem.contains("50.0% of the buffer (scaling ratio 128/256)"),
        "{rmem}"
    );
    // The upload side, limited by the sender's buffer.
    let s = advise(
        Side::Sender,
        GBIT,
        MS10,
        Bytes::new(65_535),
        LinuxHost::new(k("6.8")),
    )
    .unwrap();
    assert_eq!(
        settings(&s),
        [
            ("net.ipv4.tcp_wmem max", 2_500_000),
            ("net.core.wmem_max", 1_250_000)
        ]
    );
    assert!(s.iter().all(|a| a.setting.side() == Side::Sender));
    assert!(a.iter().all(|a| a.setting.side() == Side::Receiver));
}

#[test]
fn no_advice_when_the_window_already_carries_the_target() {
    // 65,535 bytes at 10 ms carry 52.4 Mbit/s: 50 Mbit/s needs 62,500 bytes.
    let host = LinuxHost::default();
    let a = advise(
        Side::Receiver,
        BitsPerSecond::new(50_000_000),
        MS10,
        Bytes::new(65_535),
        host,
    )
    .unwrap();
    assert!(a.is_empty());
    // One byte short of the BDP: advice.
    let a = advise(Side::Receiver, GBIT, MS10, Bytes::new(1_249_999), host).unwrap();
    assert!(!a.is_empty());
    let a = advise(Side::Receiver, GBIT, MS10, Bytes::new(1_250_000), host).unwrap();
    assert!(a.is_empty());
}

// ---- DESIGN.md incident 2: the satellite path ----

#[test]
fn satellite_needs_3_5_mb_and_a_1_mib_cap_gives_15_mbit() {
    // DESIGN.md incident 2: RTT 0.55 s, OC-1 51.84 Mbit/s: a 3.5 MB BDP.
    let host = LinuxHost::new(k("5.15"));
    let p = plan(OC1, MS550, host).unwrap();
    assert_eq!(p.window, Bytes::new(3_564_000));
    // Half the buffer is window: tcp_rmem max >= 7,127,999, above the 6 MiB default.
    assert_eq!(p.receive_buffer, Bytes::new(7_127_999));
    let a = p.advice(Side::Receiver);
    let why = a.get(Setting::TcpRmemMax).unwrap().why.to_string();
    assert!(why.contains("the default is 6291456 bytes"), "{why}");
    // ...and the default cap gives 3 MiB of window: 45.8 Mbit/s, short of OC-1.
    let default_max = Bytes::new(k("5.15").default_tcp_rmem()[2]);
    let w = max_autotuned_window(default_max, host.share);
    assert_eq!(w, Bytes::new(3 << 20));
    assert_eq!(ceiling(w, MS550).unwrap().get(), 45_756_043);
    // DESIGN.md: the kernel's buffer memory capped the window at 1 MB, ~15 Mbit/s,
    // ~1/3 of OC-1. A 1 MiB window is a 1 MiB buffer advertised whole
    // (tcp_adv_win_scale = 0), or a 2 MiB one at the default share.
    let whole = max_autotuned_window(Bytes::new(1 << 20), WindowShare::AdvWinScale(0));
    let half = max_autotuned_window(Bytes::new(2 << 20), WindowShare::AdvWinScale(1));
    assert_eq!(whole, Bytes::new(1 << 20));
    assert_eq!(half, whole);
    let c = ceiling(whole, MS550).unwrap();
    assert_eq!(c.get(), 15_252_014);
    assert!((c.get() as f64 / OC1.get() as f64 - 0.294).abs() < 0.001);
    // The advice to lift that cap.
    let a = advise(Side::Receiver, OC1, MS550, whole, host).unwrap();
    assert_eq!(a.get(Setting::TcpRmemMax).unwrap().value, 7_127_999);
    assert_eq!(a.get(Setting::TcpWindowScaling).unwrap().value, 1);
}

#[test]
fn so_rcvbuf_on_6_6_is_held_to_the_early_default_ratio() {
    // "tcp: increase the default TCP scaling ratio" (Linux 6.10): on 6.6 an
    // SO_RCVBUF of 65,536 (a 131,072-byte buffer) gave a window of ~0.25 of
    // the buffer; 6.10 made it 50%.
    assert_eq!(
        k("6.6").so_rcvbuf_share(),
        WindowShare::ScalingRatio(EARLY_DEFAULT_SCALING_RATIO)
    );
    let w = k("6.6")
        .so_rcvbuf_share()
        .window_from_space(Bytes::new(131_072));
    assert_eq!(w, Bytes::new(33_280));
    assert_eq!(
        k("6.10").so_rcvbuf_share(),
        WindowShare::ScalingRatio(DEFAULT_SCALING_RATIO)
    );
    assert_eq!(
        k("6.10")
            .so_rcvbuf_share()
            .window_from_space(Bytes::new(131_072)),
        Bytes::new(65_536)
    );
    // Before 6.6 SO_RCVBUF sockets use tcp_adv_win_scale like the rest.
    assert_eq!(k("5.15").so_rcvbuf_share(), WindowShare::AdvWinScale(1));
}

#[test]
fn adv_win_scale_rule_both_signs() {
    // Documentation/networking/ip-sysctl.rst, tcp_adv_win_scale: overhead
    // bytes/2^s for s > 0, bytes - bytes/2^-s for s <= 0.
    let space = Bytes::new(1 << 20);
    let w = |s| WindowShare::AdvWinScale(s).window_from_space(space).get();
    assert_eq!(w(1), 1 << 19);
    assert_eq!(w(2), 786_432);
    assert_eq!(w(3), 917_504);
    assert_eq!(w(0), 1 << 20);
    assert_eq!(w(-1), 1 << 19);
    assert_eq!(w(-2), 1 << 18);
    assert_eq!(w(31), 1 << 20);
    assert_eq!(w(-31), 0);
    assert_eq!(
        WindowShare::AdvWinScale(2).to_string(),
        "75.0% of the buffer (tcp_adv_win_scale = 2)"
    );
    assert_eq!(
        WindowShare::AdvWinScale(-2).to_string(),
        "25.0% of the buffer (tcp_adv_win_scale = -2)"
    );
    assert_eq!(
        WindowShare::ScalingRatio(179).to_string(),
        "69.9% of the buffer (scaling ratio 179/256)"
    );
}

#[test]
fn kernel_versions() {
    assert_eq!(k("5.15.0-91-generic"), LinuxKernel::new(5, 15));
    assert_eq!(k(" 6.8 "), LinuxKernel::new(6, 8));
    assert_eq!(k("6.1.0"), LinuxKernel::new(6, 1));
    assert_eq!(k("4.19+"), LinuxKernel::new(4, 19));
    for bad in ["6", "", "x.1", "6.x", "6.8a", ".8", "6.", "99999999.1"] {
        assert!(bad.parse::<LinuxKernel>().is_err(), "{bad:?}");
    }
    assert_eq!(LinuxKernel::new(6, 8).to_string(), "6.8");
    assert!(!k("6.5").has_scaling_ratio());
    assert!(k("6.6").has_scaling_ratio());
    assert_eq!(k("3.3").window_share(), WindowShare::AdvWinScale(2));
    assert_eq!(k("3.4").window_share(), WindowShare::AdvWinScale(1));
    assert_eq!(k("4.19").default_tcp_rmem(), [4096, 87_380, 6 << 20]);
    assert_eq!(k("4.20").default_tcp_rmem(), [4096, 131_072, 6 << 20]);
    assert_eq!(k("6.16").default_tcp_rmem()[2], 32 << 20);
    assert_eq!(k("3.2").default_tcp_rmem()[2], 4 << 20);
}

#[test]
fn sysctl_commands_keep_the_default_min_and_default() {
    let p = plan(GBIT, MS10, LinuxHost::new(k("6.8"))).unwrap();
    let a = p.all_advice();
    let rmem = a.get(Setting::TcpRmemMax).unwrap();
    assert_eq!(
        rmem.command(k("6.8")).to_string(),
        "sysctl -w net.ipv4.tcp_rmem=\"4096 131072 2500000\""
    );
    let wmem = a.get(Setting::TcpWmemMax).unwrap();
    assert_eq!(
        wmem.command(k("6.8")).to_string(),
        "sysctl -w net.ipv4.tcp_wmem=\"4096 16384 2500000\""
    );
    let ws = a.get(Setting::TcpWindowScaling).unwrap();
    assert_eq!(
        ws.command(k("6.8")).to_string(),
        "sysctl -w net.ipv4.tcp_window_scaling=1"
    );
    assert!(rmem
        .to_string()
        .starts_with("net.ipv4.tcp_rmem max >= 2500000: "));
    assert!(ws
        .to_string()
        .starts_with("net.ipv4.tcp_window_scaling = 1: "));
    assert_eq!(a.len(), 6);
    assert!(a.len() <= ADVICE_CAPACITY);
}

#[test]
fn refusals() {
    let host = LinuxHost::default();
    assert_eq!(plan(GBIT, Duration::ZERO, host), Err(CalcError::ZeroRtt));
    assert_eq!(
        plan(BitsPerSecond::ZERO, MS10, host),
        Err(CalcError::ZeroRate)
    );
    assert_eq!(plan_window(Bytes::ZERO, host), Err(CalcError::ZeroWindow));
    // Beyond RFC 7323's largest window.
    assert!(matches!(
        plan_window(Bytes::new(MAX_WINDOW.get() + 1), host),
        Err(CalcError::WindowTooLarge { .. })
    ));
    // The largest window fits an int-sized buffer at 50%...
    let p = plan_window(MAX_WINDOW, host).unwrap();
    assert!(p.receive_buffer <= MAX_BUFFER);
    // ...but not at 25% (the send buffer, twice the window, still fits).
    assert!(matches!(
        plan_window(MAX_WINDOW, host.with_share(WindowShare::ScalingRatio(64))),
        Err(CalcError::SettingTooLarge {
            setting: "net.ipv4.tcp_rmem max",
            ..
        })
    ));
    let e = plan_window(MAX_WINDOW, host.with_share(WindowShare::ScalingRatio(64))).unwrap_err();
    assert!(
        e.to_string()
            .contains("above the largest the kernel accepts (2147483647)"),
        "{e}"
    );
    // On 6.8 SO_RCVBUF sockets (65/256) cannot reach the largest window:
    // the plan leaves rmem_max out rather than failing.
    let p = plan_window(MAX_WINDOW, LinuxHost::new(k("6.8"))).unwrap();
    assert_eq!(p.so_rcvbuf, None);
    assert!(p.advice(Side::Receiver).get(Setting::RmemMax).is_none());
    assert!(p.advice(Side::Receiver).get(Setting::TcpRmemMax).is_some());
    assert!(matches!(
        plan_window(
            Bytes::new(1000),
            host.with_share(WindowShare::ScalingRatio(0))
        ),
        Err(CalcError::SettingTooLarge {
            needed: u64::MAX,
            ..
        })
    ));
}

// ---- Slow start ----

#[test]
fn slow_start_is_most_of_a_short_transfer_at_550_ms() {
    // DESIGN.md incident 2's path, and an initial window of 10 segments
    // (RFC 6928) of 1460 bytes: 14,600, 29,200, ... doubling per 550 ms.
    let mss = Bytes::new(1460);
    // 8 MiB at OC-1 with no window limit: 8 rounds (14,600 x 255 = 3,723,000
    // bytes, 4.4 s) before the window reaches the 3,564,000-byte BDP.
    let t = transfer_time_slow_start(Bytes::new(8 << 20), mss, Some(OC1), None, MS550).unwrap();
    assert_eq!(t.slow_start_rounds, 8);
    assert_eq!(t.slow_start_bytes, Bytes::new(3_723_000));
    assert_eq!(t.slow_start_time, Duration::from_millis(4400));
    // The rest, 4,665,608 bytes, at 51.84 Mbit/s: 0.720001 s.
    let rest = transfer_time(Bytes::new(4_665_608), Some(OC1), None).unwrap();
    assert_eq!(t.time, Duration::from_millis(4400) + rest.time);
    let steady = transfer_time(Bytes::new(8 << 20), Some(OC1), None).unwrap();
    assert_eq!(steady.time.as_millis(), 1294);
    assert!(t.slow_start_time.as_secs_f64() / t.time.as_secs_f64() > 0.85);
    assert_eq!(t.limit, Limit::Rate);
    // With the 1 MiB window of the incident: 7 rounds, then 15.25 Mbit/s.
    let t = transfer_time_slow_start(
        Bytes::new(8 << 20),
        mss,
        Some(OC1),
        Some(Bytes::new(1 << 20)),
        MS550,
    )
    .unwrap();
    assert_eq!(t.slow_start_rounds, 7);
    assert_eq!(t.slow_start_bytes, Bytes::new(1_854_200));
    assert_eq!(t.limit, Limit::Window);
    assert_eq!(t.throughput.get(), 15_252_014);
    assert_eq!(t.time.as_millis(), 3850 + 3427);
    // 1 MB: six round trips, 3.3 s of a 3.31 s transfer (steady state: 0.154 s).
    let t = transfer_time_slow_start(Bytes::new(1_000_000), mss, Some(OC1), None, MS550).unwrap();
    assert_eq!(t.slow_start_rounds, 6);
    assert!(t.slow_start_time.as_secs_f64() / t.time.as_secs_f64() > 0.99);
}

#[test]
fn slow_start_on_the_campus_path() {
    // 100 MB at 1 Gbit/s, 10 ms: 7 rounds (to 1,868,800 >= 1,250,000), 70 ms
    // and 1,854,200 bytes, then 98,145,800 bytes at 1 Gbit/s (785.1664 ms).
    let t = transfer_time_slow_start(
        Bytes::new(100_000_000),
        Bytes::new(1460),
        Some(GBIT),
        None,
        MS10,
    )
    .unwrap();
    assert_eq!(t.slow_start_rounds, 7);
    assert_eq!(t.time, Duration::from_nanos(70_000_000 + 785_166_400));
    // The unscaled window: cwnd reaches 65,535 after 3 rounds (14,600..58,400).
    let t = transfer_time_slow_start(
        Bytes::new(100_000_000),
        Bytes::new(1460),
        Some(GBIT),
        Some(Bytes::new(65_535)),
        MS10,
    )
    .unwrap();
    assert_eq!(t.slow_start_rounds, 3);
    assert_eq!(t.limit, Limit::Window);
}

#[test]
fn slow_start_refusals() {
    let m = Bytes::new(1460);
    let s = Bytes::new(1_000_000);
    assert_eq!(
        transfer_time_slow_start(s, Bytes::ZERO, Some(GBIT), None, MS10),
        Err(CalcError::ZeroMss)
    );
    assert_eq!(
        transfer_time_slow_start(s, m, Some(GBIT), None, Duration::ZERO),
        Err(CalcError::ZeroRtt)
    );
    assert_eq!(
        transfer_time_slow_start(s, m, None, None, MS10),
        Err(CalcError::NoLimit)
    );
    assert_eq!(
        transfer_time_slow_start(s, m, Some(BitsPerSecond::ZERO), None, MS10),
        Err(CalcError::ZeroRate)
    );
    assert_eq!(
        transfer_time_slow_start(s, m, None, Some(Bytes::ZERO), MS10),
        Err(CalcError::ZeroWindow)
    );
    // Extremes end, with an answer or an overflow error, never a panic.
    let r = transfer_time_slow_start(
        Bytes::new(u64::MAX),
        Bytes::new(1),
        Some(BitsPerSecond::new(1)),
        None,
        Duration::MAX,
    );
    assert!(r.is_err());
    let r = transfer_time_slow_start(
        Bytes::new(u64::MAX),
        Bytes::new(u64::MAX),
        Some(BitsPerSecond::new(u64::MAX)),
        None,
        Duration::from_nanos(1),
    );
    assert!(r.is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// space_for_window is the exact inverse: the least buffer giving the window.
    #[test]
    fn space_for_window_is_least(w in 1u64..=1_073_725_440, s in -8i8..=8, r in 1u8..=255, ratio in any::<bool>()) {
        let share = if ratio { WindowShare::ScalingRatio(r) } else { WindowShare::AdvWinScale(s) };
        match share.space_for_window(Bytes::new(w), "x") {
            Ok(space) => {
                prop_assert!(share.window_from_space(space) >= Bytes::new(w));
                if space.get() > 0 {
                    prop_assert!(share.window_from_space(Bytes::new(space.get() - 1)) < Bytes::new(w));
                }
                prop_assert!(space <= MAX_BUFFER);
            }
            Err(CalcError::SettingTooLarge { .. }) => {
                prop_assert!(share.window_from_space(MAX_BUFFER) < Bytes::new(w));
            }
            Err(e) => prop_assert!(false, "{e:?}"),
        }
    }

    /// Slow start never beats the steady state and never makes a larger transfer faster.
    #[test]
    fn slow_start_bounds(size in 0u64..1u64 << 40, mss in 1u64..9000, rate in 1_000u64..100_000_000_000,
                         rtt_us in 1u64..2_000_000, win in proptest::option::of(1u64..1u64 << 30)) {
        let rtt = Duration::from_micros(rtt_us);
        let rate = BitsPerSecond::new(rate);
        let w = win.map(Bytes::new);
        let t = transfer_time_slow_start(Bytes::new(size), Bytes::new(mss), Some(rate), w, rtt).unwrap();
        let steady = transfer_time(Bytes::new(size), Some(rate), w.map(|w| (w, rtt))).unwrap();
        prop_assert!(t.time >= steady.time);
        prop_assert_eq!(t.throughput, steady.throughput);
        prop_assert!(t.slow_start_rounds <= 64);
        let bigger = transfer_time_slow_start(Bytes::new(size + 1), Bytes::new(mss), Some(rate), w, rtt).unwrap();
        prop_assert!(bigger.time >= t.time);
        if size <= mss * 10 {
            prop_assert_eq!(t.slow_start_rounds, 0);
            prop_assert_eq!(t.time, steady.time);
        }
    }

    /// advise never panics and is empty exactly when the limiting window carries the target.
    #[test]
    fn advise_total(rate in 1u64..1_000_000_000_000, rtt_us in 1u64..5_000_000, lim in any::<u64>(),
                    major in 2u16..8, minor in 0u16..40, sender in any::<bool>()) {
        let side = if sender { Side::Sender } else { Side::Receiver };
        let host = LinuxHost::new(LinuxKernel::new(major, minor));
        let rtt = Duration::from_micros(rtt_us);
        if let Ok(a) = advise(side, BitsPerSecond::new(rate), rtt, Bytes::new(lim), host) {
            let need = bdp::bdp(BitsPerSecond::new(rate), rtt).unwrap();
            prop_assert_eq!(a.is_empty(), need.get() <= lim);
            for x in &a {
                prop_assert_eq!(x.setting.side(), side);
                prop_assert!(!x.why.to_string().is_empty());
            }
        }
    }
}

// ---- The receiver's window growth (tcp_grow_window, __tcp_select_window) ----

/// A Linux-like receiver at `shift`: `rcv_ssthresh` grows by twice each
/// full segment received (`tcp_grow_window`), capped at `clamp` bytes; the
/// field is the window rounded up to the shift's unit and shifted
/// (`__tcp_select_window`, `tcp_select_window`), at most 65,535.
struct LinuxReceiver {
    shift: u8,
    mss: u32,
    window: u64,
    clamp: u64,
}

impl LinuxReceiver {
    fn field(&self) -> u16 {
        (self.window.min(self.clamp).div_ceil(1 << self.shift)).min(65_535) as u16
    }
    /// Receives `segments` full segments and acknowledges them.
    fn ack(&mut self, g: &mut bdp::linux::WindowGrowth, segments: u32) {
        let before = self.field();
        self.window = (self.window + 2 * u64::from(segments * self.mss)).min(self.clamp);
        g.ack(segments * self.mss, before, self.field(), self.mss);
    }
}

/// The largest MSS that still lets a window at `shift` grow over enough
/// ACKs of two segments before reaching 65,535 units.
fn mss_range(shift: u8) -> core::ops::RangeInclusive<u32> {
    536..=((65_535u64 << shift) / 90).clamp(536, 9000) as u32
}

fn receiver() -> impl Strategy<Value = (u8, u32, u64, Vec<u32>)> {
    (0u8..=14).prop_flat_map(|shift| {
        (
            Just(shift),
            mss_range(shift),
            2u64..=10,
            proptest::collection::vec(1u32..=2, 1500..1600),
        )
            .prop_map(|(s, mss, iw, acks)| (s, mss, iw * u64::from(mss), acks))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A Linux-like receiver at any shift, acknowledging one or two full
    /// segments at a time, is read back exactly.
    #[test]
    fn window_growth_reads_a_linux_receiver_back((shift, mss, start, acks) in receiver()) {
        let mut g = bdp::linux::WindowGrowth::new();
        let mut r = LinuxReceiver { shift, mss, window: start, clamp: 65_535u64 << shift };
        for n in acks {
            r.ack(&mut g, n);
        }
        prop_assert_eq!(g.shift(), Some(shift));
    }

    /// With noise between its ACKs (duplicate ACKs, a lowered field, a
    /// jump of the field as a drained buffer gives, a short segment), it is
    /// read back exactly or not at all: never as another shift.
    #[test]
    fn window_growth_with_noise_is_right_or_silent(
        (shift, mss, start, acks) in receiver(),
        noise in proptest::collection::vec((0usize..1600, 0u8..4, 1u16..2000), 0..40),
    ) {
        let mut g = bdp::linux::WindowGrowth::new();
        let mut r = LinuxReceiver { shift, mss, window: start, clamp: 65_535u64 << shift };
        for (i, n) in acks.into_iter().enumerate() {
            for &(_, kind, size) in noise.iter().filter(|(at, _, _)| *at == i) {
                let f = r.field();
                match kind {
                    0 => g.ack(0, f, f, mss),
                    1 => g.ack(mss, f, f.saturating_sub(size), mss),
                    2 => {
                        // Autotuning or a drained buffer: the window jumps.
                        r.window = (r.window + (u64::from(size) << shift)).min(r.clamp);
                        g.ack(mss * (1 + u32::from(size % 2)), f, r.field(), mss);
                    }
                    _ => {
                        // A short segment grows the window by 2 * advmss.
                        let len = 1 + u32::from(size) % (mss - 1);
                        r.window = (r.window + 2 * u64::from(mss)).min(r.clamp);
                        g.ack(len, f, r.field(), mss);
                    }
                }
            }
            r.ack(&mut g, n);
        }
        let read = g.shift();
        prop_assert!(read.is_none() || read == Some(shift), "read {:?} at shift {}", read, shift);
    }

    /// Steady steps whose rate is not 2 bytes per byte at any shift (its
    /// log2 at least 0.1 from a whole number) never read as a shift.
    #[test]
    fn window_growth_at_another_rate_reads_none(
        mss in 536u32..=9000,
        step in 1u16..=400,
        acks in 20usize..400,
    ) {
        let ratio = 2.0 * f64::from(mss) / f64::from(step);
        let frac = ratio.log2() - ratio.log2().floor();
        prop_assume!((0.1..=0.9).contains(&frac));
        let mut g = bdp::linux::WindowGrowth::new();
        let mut f: u16 = 10;
        for _ in 0..acks {
            let Some(next) = f.checked_add(step) else { break };
            g.ack(mss, f, next, mss);
            f = next;
        }
        prop_assert_eq!(g.shift(), None);
    }
}
