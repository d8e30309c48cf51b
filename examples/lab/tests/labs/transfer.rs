//! Bulk transfers held to the sender's own kernel: what limited each one
//! (`analyze`'s `limit`), the shift it infers without the handshake, the
//! advice it gives, and the time series `series` draws.
//!
//! For each row `lab.sh` runs a real Linux transfer through a ~10 ms path
//! and records the sender's `TCP_INFO` chrono counters when its data is
//! acknowledged (`server.tcpinfo.json` for the download,
//! `client.tcpinfo.json` for the upload). Then:
//!
//! - **limit** (every row): `limit.kind` of either capture is the kernel's
//!   dominant limit: `receive_window` where `tcpi_rwnd_limited` dominates
//!   `tcpi_busy_time`, `sender` where `tcpi_sndbuf_limited` does; where
//!   neither does, `network`, or `sender` when the application left the
//!   sender idle most of the transfer (the kernel does not count idle time
//!   at all); `limit.receive_window_fraction` is within 0.15 of
//!   `tcpi_rwnd_limited / tcpi_busy_time`;
//! - **inferred shift**: cut after the handshake, each capture infers the
//!   shift the server's kernel read the client's window fields with, as one
//!   value, or shows the mismatch where the two kernels disagree;
//! - **series** (`rcvbuf_small4`, `wscale_synack4`): the plot's data holds
//!   together the way TCP does. A sender never sends more than a segment
//!   past the highest right edge of the receive window it has been offered
//!   (RFC 9293 section 3.8.6: a shrunk window does not take back what was
//!   offered); where the kernel counted the receive window, the sequence
//!   edge reaches the window edge; all data is acknowledged at the end; the
//!   RTT samples sit on the path's 10 ms; the shading is analyze's split;
//!   the SVG is well-formed, with its legend, and the window on scale.
//!
//! Exclusive rows: they measure time, so they run alone.

use std::path::Path;

use lab::{CaseRun, Ctx, Req, Share};
use serde_json::Value;

use crate::common::{
    cut_after_handshake, kernel_kind, kernel_shares, without_records, BOTH, C2S, S2C,
};

/// One row: a lab.sh run and the checks of its result.
pub struct Case {
    case: &'static str,
    args: &'static [&'static str],
    checks: &'static [fn(&CaseRun)],
    share: Share,
    needs: &'static [Req],
}

const BASE: Case = Case {
    case: "",
    args: &[],
    checks: &[],
    share: Share::Exclusive,
    needs: lab::prereq::LAB_SH,
};

/// lab.sh's requirements and more.
const WITH_NFT: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("tcpdump"),
    Req::Tool("python3"),
    Req::Tool("nft"),
    Req::Netns,
    Req::Iptables,
    Req::Nft,
];
const WITH_TBF: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("tcpdump"),
    Req::Tool("python3"),
    Req::Tool("tc"),
    Req::Netns,
    Req::Iptables,
    Req::Tbf,
];
const WITH_BBR: &[Req] = &[
    Req::Root,
    Req::Tool("ip"),
    Req::Tool("iptables"),
    Req::Tool("tcpdump"),
    Req::Tool("python3"),
    Req::Netns,
    Req::Iptables,
    Req::Congestion("bbr"),
];

impl Case {
    /// lab.sh's case.
    pub fn case(&self) -> &'static str {
        self.case
    }
}

/// lab.sh's `--server-sndbuf`: a send buffer that holds the whole download
/// (SO_SNDBUF 4 MB, doubled by the kernel), so the download's sender always
/// has data, however late a loaded host runs the application. Without it,
/// under a load average of 10 to 19, the application now and then left the
/// socket short: rounds the capture rightly shows as the sender's, which the
/// kernel counts as neither the window's nor the send buffer's (a
/// wscale-synack4 download read `sender` 0.5001 to `network` 0.4999; a
/// window-rewrite4 round fell below the plateau). The rows about the sender
/// itself (`sndbuf_small4`, `slow_app4`) keep the case's own.
const FULL_SNDBUF: [&str; 2] = ["--server-sndbuf", "4194304"];

lab::rows! {
    lab = crate::LABS;
    run = run_case;
    type = Case;
    /// The receiver's buffer too small for the path: the server's kernel
    /// counts nearly all its time limited by the receive window.
    rcvbuf_small4 => Case {
        case: "rcvbuf-small4",
        args: &["--delay-ms", "10", "--bytes", "2000000", FULL_SNDBUF[0], FULL_SNDBUF[1]],
        checks: &[limit_download, inferred_single, advice_rmem, series_rcvbuf],
        ..BASE
    },
    /// The window field rewritten on the way (nftables `tcp window set 20`),
    /// at 40 ms. The client's side finds that window from the flight's
    /// plateau: the same byte in flight 16 rounds in a row, no round
    /// delayed by half an RTT over the path's least. Two things broke such
    /// runs on a loaded 2-core host at 10 ms (the client's capture gave 0.78
    /// to 0.85 of the busy time to the receive window where the server's
    /// kernel counted 0.97, 4 of 35 runs): the lab's path (its softirq
    /// work, not the delayer, which kept within 0.7 ms of its schedule)
    /// stretched rounds by up to 19 ms, more than half of 10 ms; and the
    /// server application, run late, left the socket short of a window's
    /// data now and then, a round below the plateau. With the full send
    /// buffer and 40 ms (20 ms for the path's jitter): 0.98 to 0.99 against
    /// the kernel's 0.98 in 20 runs under the same load.
    window_rewrite4 => Case {
        case: "window-rewrite4",
        args: &["--delay-ms", "40", "--bytes", "2000000", FULL_SNDBUF[0], FULL_SNDBUF[1]],
        checks: &[limit_download, window_rewritten],
        needs: WITH_NFT,
        ..BASE
    },
    /// The same rewritten window without TCP timestamps (the client's
    /// namespace offers none): the server's side still reads the window
    /// the receiver advertised; the client's side, where the loop alone
    /// dates the flight, finds that window's plateau or none, never
    /// another (`analysis/limits.rs`).
    window_rewrite_no_timestamps4 => Case {
        case: "window-rewrite4",
        args: &[
            "--delay-ms", "40", "--bytes", "2000000", "--no-timestamps",
            FULL_SNDBUF[0], FULL_SNDBUF[1],
        ],
        checks: &[rewritten_without_timestamps],
        needs: WITH_NFT,
        ..BASE
    },
    /// A writer of whole segments (14,480 bytes: 10 of 1,448) pausing
    /// 8 ms at 10 ms: two chunks in flight by turns, never idle, each
    /// leaving long after the newest ACK its sender had read. Read as a
    /// rewritten window of 28,960 bytes from both sides before the
    /// plateau's answer rule.
    pause_whole_segments4 => Case {
        case: "pause4",
        args: &[
            "--delay-ms", "10", "--bytes", "3000000", "--chunk-bytes", "14480",
            "--pause-ms", "8",
        ],
        checks: &[writer_not_a_window],
        ..BASE
    },
    /// The same writer idle between chunks: pausing 48 ms at 40 ms, so
    /// that nothing is outstanding for about a fifth of each round (7 to 10
    /// ms of 40.6), between the plateau's idle rule (an eighth, 5 ms) and
    /// its answer rule (a quarter): only the idle rule tells this writer
    /// from a rewritten window of 14,480 bytes. At 10 ms a 12 ms pause did
    /// too, by hand, but its idle time sat on the rule's edge (1.2 to 1.6
    /// ms against 1.35): a CI run whose loaded machine stretched the round
    /// to 10.8 ms left 1.25 ms, and the client's side read a window.
    pause_whole_segments_idle4 => Case {
        case: "pause4",
        args: &[
            "--delay-ms", "40", "--bytes", "1500000", "--chunk-bytes", "14480",
            "--pause-ms", "48",
        ],
        checks: &[writer_not_a_window],
        ..BASE
    },
    /// A 20 Mbit/s bottleneck (tbf): the network limits.
    tbf4 => Case {
        case: "tbf4",
        args: &["--delay-ms", "10", "--bytes", "2000000", FULL_SNDBUF[0], FULL_SNDBUF[1]],
        checks: &[limit_download, inferred_single],
        needs: WITH_TBF,
        ..BASE
    },
    /// The server's send buffer (BBR books the time as sndbuf-limited).
    sndbuf_small4 => Case {
        case: "sndbuf-small4",
        args: &["--delay-ms", "10", "--bytes", "2000000"],
        checks: &[limit_download, inferred_single, advice_wmem],
        needs: WITH_BBR,
        ..BASE
    },
    /// The application writes 16 KB every 30 ms.
    slow_app4 => Case {
        case: "slow-app4",
        args: &["--delay-ms", "10", "--bytes", "1000000"],
        checks: &[limit_download, inferred_single],
        ..BASE
    },
    /// Window scaling stripped from the SYN-ACK: the download is not limited
    /// by the window (the server reads the client's fields scaled, the
    /// client accepts more than it advertises), the upload is, almost
    /// entirely.
    wscale_synack4 => Case {
        case: "wscale-synack4",
        args: &[
            "--delay-ms", "10", "--bytes", "2000000", "--up-bytes", "16000",
            FULL_SNDBUF[0], FULL_SNDBUF[1],
        ],
        checks: &[limit_download, limit_upload, inferred_single, beyond_window, series_wscale],
        ..BASE
    },
    /// A Linux receiver at the top of its shift's range never advertises
    /// 65,535 (30 MB at 20 ms).
    receiver_at_the_top_of_its_shift => Case {
        case: "clean4",
        args: &[
            "--bytes", "30000000", "--up-bytes", "1000", "--client-rmem-max", "8388480",
            "--delay-ms", "20", "--snaplen", "96",
        ],
        checks: &[top_of_shift],
        ..BASE
    },
}

fn run_case(ctx: &Ctx, c: &Case) {
    let run = ctx.lab_sh(c.case, c.args);
    for check in c.checks {
        check(&run);
    }
}

fn analyze(run: &CaseRun, capture: &Path) -> Value {
    run.tools().analyze(&[], capture)
}

fn limit_download(run: &CaseRun) {
    for side in BOTH {
        check_limit(run, S2C, "server", &run.capture(side));
    }
}

fn limit_upload(run: &CaseRun) {
    for side in BOTH {
        check_limit(run, C2S, "client", &run.capture(side));
    }
}

/// One capture's `limit` of `direction` against the kernel of `sender`.
fn check_limit(run: &CaseRun, direction: &str, sender: &str, capture: &Path) {
    let case = &run.case;
    let shares = kernel_shares(run, sender);
    let (k_rwnd, k_snd, k_neither) = shares;
    let side = capture.file_name().unwrap().to_string_lossy();
    let v = analyze(run, capture);
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1, "{case} {side}: {v}");
    let d = &conns[0]["directions"][direction];
    let l = &d["limit"];
    let kind = l["kind"].as_str().unwrap();
    let what = format!(
        "{case}, {side} capture, {direction}: kernel rwnd {k_rwnd:.2} sndbuf {k_snd:.2} neither {k_neither:.2}; analyze {l}"
    );
    lab::note!(
        "{case}, {side}, {direction}: kernel rwnd {k_rwnd:.2} sndbuf {k_snd:.2}; analyze {kind}, rwnd {:.3} sender {:.3} network {:.3}",
        l["receive_window_fraction"].as_f64().unwrap_or(-1.0),
        l["sender_fraction"].as_f64().unwrap_or(-1.0),
        l["network_fraction"].as_f64().unwrap_or(-1.0)
    );
    let expected = kernel_kind(shares, l["idle_fraction"].as_f64().unwrap_or(0.0));
    assert_eq!(kind, expected, "{what}");
    // A window the capture does not show is claimed only where the kernel
    // counted the receive window.
    if l["receive_window_evidence"]["kind"] == "flight_plateau" {
        assert!(k_rwnd >= 0.5, "{what}");
    }
    let rw = l["receive_window_fraction"].as_f64().expect(&what);
    assert!((rw - k_rwnd).abs() <= 0.15, "{what}");
    // No claim contradicts the capture: window-limited only within the ceiling.
    if d["window_limited"] == true {
        assert!(
            d["throughput_bps"].as_u64().unwrap() <= d["ceiling_bps"].as_u64().unwrap(),
            "{what}"
        );
    }
}

/// Cut after the handshake, each capture of a bulk download (at least 1 MB
/// over a 10 ms path: 50 round trips of busy time and more, the kernel
/// says) must infer the shift the server's kernel read the client's window
/// fields with, as one value: its window growth, or the server's data
/// stopping at the edge of that shift, names it. Where the two kernels
/// disagree (the client means one shift, the server reads another) there
/// is no one shift to infer: each capture must then show the mismatch.
fn inferred_single(run: &CaseRun) {
    let case = &run.case;
    let (meant, read) = (
        run.tcpinfo("client").rcv_wscale,
        run.tcpinfo("server").snd_wscale,
    );
    if meant != read {
        lab::note!(
            "{case}: the client means shift {meant} and the server reads {read} (TCP_INFO): the ends disagree, no one shift to infer"
        );
        return inferred_mismatch(run, read);
    }
    for side in BOTH {
        let cut = cut_after_handshake(&run.capture(side));
        let v = analyze(run, &cut);
        let n = &v["connections"][0]["negotiated"];
        let inf = &n["wscale_inferred"]["client"];
        let what = format!(
            "{case}, {side} capture cut after the handshake: the server's kernel read the client's fields with shift {read}; inferred {inf}"
        );
        lab::note!("{what}");
        assert_eq!(
            (inf["min"].as_u64(), inf["max"].as_u64()),
            (Some(read), Some(read)),
            "{what}"
        );
        let (bmin, bmax) = (
            inf["bounds"]["min"].as_u64().expect(&what),
            inf["bounds"]["max"].as_u64().expect(&what),
        );
        assert!((bmin..=bmax).contains(&read), "{what}");
        assert_eq!(n["wscale_mismatch"], false, "{what}");
        // The download's limit, with the shift the capture pinned and the
        // RTT of its timestamps: held to the kernel as the whole capture is.
        let l = &v["connections"][0]["directions"][S2C]["limit"];
        assert_eq!(l["inferred_shift"].as_u64(), Some(read), "{what}: {l}");
        check_limit(run, S2C, "server", &cut);
    }
}

/// Cut after the handshake, a capture of a transfer whose ends disagree
/// about scaling (the client means 0, the server reads `read`) must say so
/// from either side (`wscale_mismatch`, from the client's fields capped at
/// 65,535 while the server's data goes past them), and each interval must
/// hold the shift the peer reads with.
fn inferred_mismatch(run: &CaseRun, read: u64) {
    let client_reads = run.tcpinfo("client").snd_wscale;
    for side in BOTH {
        let v = analyze(run, &cut_after_handshake(&run.capture(side)));
        let n = &v["connections"][0]["negotiated"];
        let what = format!(
            "{}, {side} capture cut after the handshake: the server reads the client's fields with shift {read}, the client the server's with {client_reads}; negotiated {n}",
            run.case
        );
        assert_eq!(n["wscale_mismatch"], true, "{what}");
        assert_eq!(
            n["wscale_mismatch_evidence"]["kind"], "unscaled_cap",
            "{what}"
        );
        let inf = &n["wscale_inferred"];
        let holds = |i: &Value, shift: u64| {
            i.is_null()
                || (i["min"].as_u64().unwrap()..=i["max"].as_u64().unwrap()).contains(&shift)
        };
        assert!(!inf["client"].is_null(), "{what}");
        assert!(holds(&inf["client"], read), "{what}");
        assert!(holds(&inf["server"], client_reads), "{what}");
    }
}

/// What to change: the receiver's buffer (bdp's Linux model).
fn advice_rmem(run: &CaseRun) {
    let v = analyze(run, &run.outside());
    let advice = &v["connections"][0]["directions"][S2C]["advice"];
    assert!(
        advice
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["setting"] == "net.ipv4.tcp_rmem max"
                && a["host"] == "receiver"
                && a["value"].as_u64().unwrap() > 1_000_000),
        "{advice}"
    );
}

fn advice_wmem(run: &CaseRun) {
    let v = analyze(run, &run.inside());
    let advice = &v["connections"][0]["directions"][S2C]["advice"];
    assert!(
        advice
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["setting"] == "net.ipv4.tcp_wmem max" && a["host"] == "sender"),
        "{advice}"
    );
}

/// The server's capture shows the small window the server reads. The
/// client's shows the client's own, larger fields; there the rewrite shows
/// as the server's flight stopping at one value, to the byte, far below the
/// advertised window (the plateau): the client's side names the window the
/// server read. The client's side infers the shift from the client's
/// growing fields; the server's side sees only the rewritten field, 20,
/// never changing, and the server's data stopping at its edge read with
/// shift 10 (the sender edge names it).
fn window_rewritten(run: &CaseRun) {
    // The middlebox writes 20 into the field; the server reads it with the
    // client's shift, 10: a window of 20,480 bytes.
    let read = 20u64 << 10;
    let v = analyze(run, &run.inside());
    let l = &v["connections"][0]["directions"][S2C]["limit"];
    assert_eq!(
        l["receive_window_evidence"]["kind"], "flight_plateau",
        "{l}"
    );
    assert_eq!(l["receive_window_evidence"]["confidence"], "medium", "{l}");
    let w = l["window_read_inferred_bytes"]
        .as_u64()
        .expect("inferred window");
    assert!(w <= read && read < w + 1448, "{l}");
    let v = analyze(run, &run.outside());
    let l = &v["connections"][0]["directions"][S2C]["limit"];
    assert_eq!(
        l["receive_window_evidence"]["kind"], "advertised_window",
        "{l}"
    );
    inferred_single(run);
    let cut = cut_after_handshake(&run.outside());
    let inf = &analyze(run, &cut)["connections"][0]["negotiated"]["wscale_inferred"]["client"];
    assert_eq!(inf["basis"], "sender_edge", "{inf}");
}

/// `window_rewrite_no_timestamps4`: the kernel counted the receive
/// window; the capture has no timestamps; the server's side reads it from
/// the advertised window (high). The client's side, dating the flight by
/// the loop alone, finds the plateau of the window the server read (20 <<
/// 10 bytes, full segments of 1,460 below it) or none: never another
/// window.
fn rewritten_without_timestamps(run: &CaseRun) {
    let (k_rwnd, _, _) = kernel_shares(run, "server");
    assert!(k_rwnd > 0.8, "the kernel's receive-window share {k_rwnd}");
    let v = analyze(run, &run.outside());
    let n = &v["connections"][0]["negotiated"];
    assert_eq!(n["timestamps"], false, "{n}");
    let l = &v["connections"][0]["directions"][S2C]["limit"];
    assert_eq!(l["kind"], "receive_window", "{l}");
    assert_eq!(
        l["receive_window_evidence"]["kind"], "advertised_window",
        "{l}"
    );
    assert_eq!(l["confidence"], "high", "{l}");
    let v = analyze(run, &run.inside());
    let l = &v["connections"][0]["directions"][S2C]["limit"];
    lab::note!("client side without timestamps: {l}");
    if let Some(w) = l["window_read_inferred_bytes"].as_u64() {
        let read = 20u64 << 10;
        assert!(w <= read && read < w + 1460, "{l}");
        assert_eq!(
            l["receive_window_evidence"]["kind"], "flight_plateau",
            "{l}"
        );
        assert_eq!(l["kind"], "receive_window", "{l}");
    } else {
        assert!(l["receive_window_evidence"].is_null(), "{l}");
    }
}

/// A writer pausing between chunks of whole segments: the kernel counted
/// no receive window and no send buffer; from both sides analyze names the
/// sender and infers no window (no window field "rewritten on the way").
fn writer_not_a_window(run: &CaseRun) {
    let (k_rwnd, k_snd, _) = kernel_shares(run, "server");
    assert!(
        k_rwnd < 0.05 && k_snd < 0.05,
        "kernel rwnd {k_rwnd} sndbuf {k_snd}"
    );
    for side in BOTH {
        let v = analyze(run, &run.capture(side));
        let l = &v["connections"][0]["directions"][S2C]["limit"];
        assert_eq!(l["kind"], "sender", "{side}: {l}");
        assert!(l["window_read_inferred_bytes"].is_null(), "{side}: {l}");
        assert!(l["receive_window_evidence"].is_null(), "{side}: {l}");
    }
}

/// Data beyond the client's unscaled window, and the client took it; the
/// upload window-limited.
fn beyond_window(run: &CaseRun) {
    for side in BOTH {
        let v = analyze(run, &run.capture(side));
        let down = &v["connections"][0]["directions"][S2C];
        assert!(
            down["beyond_window_bytes"].as_u64().unwrap() > 100_000,
            "{side}: {down}"
        );
        assert_eq!(down["beyond_window_accepted"], true, "{side}: {down}");
        assert_eq!(down["window_limited"], false, "{side}: {down}");
        let up = &v["connections"][0]["directions"][C2S];
        assert_eq!(up["window_limited"], true, "{side}: {up}");
    }
}

/// What `unscaled_cap` assumes of Linux (docs/json.md): a receiver that
/// scales never advertises 65,535, so fields stuck there mean one that does
/// not. Linux takes its shift from the largest buffer the socket may ever
/// have (`tcp_select_initial_window`: the smallest shift that fits the
/// larger of `tcp_rmem[2]` and `net.core.rmem_max` in 16 bits), and its
/// window is a fraction of the buffer (`tcp_win_from_space`, the scaling
/// ratio of payload to buffer memory). The edge of that rule: the client's
/// `tcp_rmem` max is 8,388,480 bytes, 65,535 << 7, the top of shift 7's
/// range (above this machine's `rmem_max` of 4 MiB), and a 30 MB download
/// at 20 ms grows its window to megabytes (to about 5.3 MB, field 41,500,
/// within its first 10 MB on the 2-core lab machine; 150 MB, as this test
/// once sent, grew it no further). Its fields stay far below 65,535, and
/// the capture cut after the handshake shows no mismatch.
fn top_of_shift(run: &CaseRun) {
    let info = run.tcpinfo("client");
    assert_eq!(
        info.rcv_wscale, 7,
        "the client's shift from tcp_rmem max 8,388,480 (a net.core.rmem_max above it would raise it): {info:?}"
    );
    for side in BOTH {
        let path = run.capture(side);
        let whole = analyze(run, &path);
        let conns = whole["connections"].as_array().expect("connections");
        assert_eq!(conns.len(), 1, "{whole}");
        // The client's fields: the receive window of the download.
        let d = &conns[0]["directions"][S2C];
        let field = d["max_window_field"].as_u64().expect("window fields");
        lab::note!(
            "{side}: the client's largest window field {field} (<< 7: {} bytes)",
            field << 7
        );
        assert!(field < 65_535, "{side}: {d}");
        assert!(
            field << 7 > 1 << 20,
            "{side}: the window never grew past 1 MiB, the edge was not approached: {d}"
        );
        // What the capture shows of the download and what it missed of
        // what the client acknowledged add up to the 30 MB sent (tcpdump
        // may drop records here too: then `bytes` alone falls short). The
        // data shown once lies between `bytes` less every retransmission
        // and `bytes`: a capture after a loss (the path under load drops
        // now and then) shows a retransmission without its original. A
        // run with 46 losses before the client's capture: 29,933,392 and
        // 30,000,000.
        let download = 30_000_000u64;
        let accounts = |d: &Value| {
            let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k}: {d}"));
            let (lo, hi) = (
                n("bytes") - n("retransmitted_bytes") + n("capture_missed_bytes"),
                n("bytes") + n("capture_missed_bytes"),
            );
            lo <= download + download / 1000 && hi + download / 1000 >= download
        };
        assert!(
            accounts(d),
            "{side}: bytes shown and missed do not account for the {download} sent: {d}"
        );
        let partial = analyze(run, &cut_after_handshake(&path));
        let n = &partial["connections"][0]["negotiated"];
        assert_eq!(n["wscale_mismatch"], false, "{side} cut: {n}");
        assert!(n["wscale_mismatch_evidence"].is_null(), "{side} cut: {n}");
        // A capture that also dropped bursts of records (a CI run's tcpdump
        // did: the data then ran past shift 8's edges of the ACKs the
        // capture kept, and analyze claimed a mismatch). A burst is at most
        // a quarter of the records the capture holds, so that records
        // remain after each: a lab capture that tcpdump's kernel ring
        // already thinned (a CI run's client side held 15,700 of about
        // 30,000) would otherwise lose its whole tail to two bursts that
        // overlap, and with it every ACK past them.
        let records = conns[0]["last_frame"].as_u64().expect("last frame") as usize;
        for burst in [2_000, 6_000] {
            let burst = burst.min(records / 4);
            let (a, b) = (records / 3, 2 * records / 3);
            let cut = without_records(&path, &format!("burst{burst}"), |i| {
                i < 3 || (a..a + burst).contains(&i) || (b..b + burst).contains(&i)
            });
            let partial = analyze(run, &cut);
            let n = &partial["connections"][0]["negotiated"];
            assert_eq!(
                n["wscale_mismatch"], false,
                "{side} cut, bursts of {burst} dropped: {n}"
            );
            // The bursts' data is counted as missed, not lost.
            let cd = &partial["connections"][0]["directions"][S2C];
            assert!(
                cd["capture_missed_bytes"].as_u64().unwrap()
                    > d["capture_missed_bytes"].as_u64().unwrap(),
                "{side} cut, bursts of {burst} dropped: {cd}"
            );
            assert!(
                accounts(cd),
                "{side} cut, bursts of {burst} dropped: bytes shown and missed do not account for the {download} sent: {cd}"
            );
            assert_eq!(
                n["wscale_inferred"]["client"]["min"], 7,
                "{side} cut, bursts of {burst} dropped: {n}"
            );
        }
    }
}

// --- series -------------------------------------------------------------

/// The lab's MSS 1460 less 12 bytes of timestamps.
const SEGMENT: u64 = 1448;

/// One CSV row of `series`.
struct Row {
    direction: String,
    seq_end: u64,
    ack: u64,
    window_read: Option<u64>,
    rtt: Option<f64>,
    time_s: f64,
    limit: String,
}

fn series(run: &CaseRun, capture: &Path) -> Vec<Row> {
    let out = run.tools().firewall_check([Path::new("series"), capture]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("time_s,connection,direction,seq_end,ack,window_bytes,window_read_bytes,in_flight_bytes,throughput_bps,rtt_s,limit")
    );
    lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            assert_eq!(c.len(), 11, "{l}");
            assert_eq!(c[1], "1", "one connection: {l}");
            Row {
                direction: c[2].to_string(),
                seq_end: c[3].parse().expect(l),
                ack: c[4].parse().expect(l),
                window_read: (!c[6].is_empty()).then(|| c[6].parse().expect(l)),
                rtt: (!c[9].is_empty()).then(|| c[9].parse().expect(l)),
                time_s: c[0].parse().expect(l),
                limit: c[10].to_string(),
            }
        })
        .collect()
}

/// The shading the plot draws is `analyze`'s split: the time from each row
/// of `direction` to the next, summed by `limit`, gives the JSON limit's
/// fractions of the busy time (to 0.02), on the capture `capture`.
fn check_limit_split(run: &CaseRun, what: &str, capture: &Path, rows: &[Row], direction: &str) {
    let doc = analyze(run, capture);
    let l = &doc["connections"][0]["directions"][direction]["limit"];
    assert_ne!(l["kind"], "none", "{what}: {l}");
    let mine: Vec<&Row> = rows.iter().filter(|r| r.direction == direction).collect();
    let mut time = std::collections::BTreeMap::<&str, f64>::new();
    for w in mine.windows(2) {
        *time.entry(w[0].limit.as_str()).or_default() += w[1].time_s - w[0].time_s;
    }
    let get = |k: &str| time.get(k).copied().unwrap_or(0.0);
    assert_eq!(get("busy"), 0.0, "{what}: undecided time {time:?}");
    let busy = get("receive_window") + get("sender") + get("network");
    for (label, field) in [
        ("receive_window", "receive_window_fraction"),
        ("sender", "sender_fraction"),
        ("network", "network_fraction"),
    ] {
        let (got, want) = (get(label) / busy, l[field].as_f64().unwrap());
        assert!(
            (got - want).abs() <= 0.02,
            "{what}: {label} {got:.3} of the plotted busy time, {want:.3} in the analysis"
        );
    }
}

/// The RTT samples of `direction` against the lab's 10 ms path: many of
/// them, none well below the path's delay (the shipped campus capture,
/// taken by this lab, has samples down to 9.3 ms beside a 10.1 ms
/// handshake), their median within a few milliseconds of it (delayed ACKs
/// and the queue only add to some).
fn check_rtt_samples(what: &str, rows: &[Row], direction: &str) {
    let mut v: Vec<f64> = rows
        .iter()
        .filter(|r| r.direction == direction)
        .filter_map(|r| r.rtt)
        .collect();
    assert!(v.len() >= 50, "{what}: {} RTT samples", v.len());
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    lab::note!(
        "{what}: {} RTT samples, lowest {:.4} s, median {median:.4} s",
        v.len(),
        v[0]
    );
    assert!(
        v[0] >= 0.008,
        "{what}: RTT sample {} s well below the path's 10 ms",
        v[0]
    );
    assert!(median < 0.015, "{what}: median RTT sample {median} s");
}

/// Checks the sender-side capture of `direction`: never a segment past the
/// highest edge offered; returns how many rows had the sequence edge within
/// a segment of it (the sender at the window's edge). Data sent before the
/// first window after the handshake went under the handshake's window,
/// which the series does not show (so the check starts there).
fn check_edges(what: &str, rows: &[Row], direction: &str) -> usize {
    let mut edge: Option<u64> = None;
    let mut at_edge = 0;
    for r in rows.iter().filter(|r| r.direction == direction) {
        let Some(w) = r.window_read else {
            continue;
        };
        let e = edge.get_or_insert(r.seq_end);
        *e = (*e).max(r.ack + w);
        assert!(
            r.seq_end <= *e + SEGMENT,
            "{what}: sequence edge {} past the highest window edge {e} (ACK {}, window {w})",
            r.seq_end,
            r.ack
        );
        // At the edge of the window in force now (the handshake's own
        // window may have allowed more earlier).
        if r.seq_end + SEGMENT >= r.ack + w && r.seq_end > r.ack {
            at_edge += 1;
        }
    }
    assert!(edge.is_some(), "{what}: no window seen");
    at_edge
}

fn all_acknowledged(what: &str, rows: &[Row], direction: &str, bytes: u64) {
    let last = rows
        .iter()
        .rev()
        .find(|r| r.direction == direction)
        .unwrap_or_else(|| panic!("{what}: no {direction} rows"));
    // One more for the FIN.
    assert_eq!((last.seq_end, last.ack), (bytes + 1, bytes + 1), "{what}");
}

fn svg(run: &CaseRun, what: &str, capture: &Path) -> String {
    let path = capture.with_extension("svg");
    let out = run
        .tools()
        .firewall_check([Path::new("series"), capture, Path::new("--svg"), &path]);
    assert_eq!(out.status.code(), Some(0), "{what}: {out:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
        "{what}"
    );
    for label in [
        "sequence edge (highest byte sent)",
        "window edge as the sender reads it",
        "bytes in flight",
        "throughput over one RTT",
    ] {
        assert!(text.contains(label), "{what}: SVG lacks {label:?}");
    }
    text
}

/// The receiver's buffer too small: the server's data runs up to the window
/// edge and never past it; the window that limited the download is drawn,
/// not off the plot.
fn series_rcvbuf(run: &CaseRun) {
    let k = run.tcpinfo("server").rwnd_share();
    assert!(k > 0.5, "the lab case is window-limited: kernel {k:.2}");
    let outside = series(run, &run.outside());
    let at_edge = check_edges("rcvbuf-small4 outside", &outside, S2C);
    assert!(
        at_edge > 100,
        "the server at the window's edge {at_edge} times"
    );
    for (side, rows) in [
        ("outside", &outside),
        ("inside", &series(run, &run.inside())),
    ] {
        all_acknowledged(side, rows, S2C, 2_000_000);
        check_rtt_samples(side, rows, S2C);
        check_limit_split(run, side, &run.capture(side), rows, S2C);
    }
    let text = svg(run, "rcvbuf-small4 outside", &run.outside());
    // The legends of its panels have no "above the plot" note.
    for legend in [
        "window edge as the sender reads it (ACK + window)\n</text>",
        "receive window as the sender reads it\n</text>",
    ] {
        assert!(text.contains(legend), "{legend:?} on scale");
    }
}

/// Window scaling stripped from the SYN-ACK: the client reads the server's
/// scaled fields as bytes (a window below one segment) and its upload
/// creeps at the window's edge, as its kernel counts; the download is not
/// held by the window the server reads.
fn series_wscale(run: &CaseRun) {
    let k_up = run.tcpinfo("client").rwnd_share();
    assert!(k_up > 0.5, "upload window-limited: kernel {k_up:.2}");
    let inside = series(run, &run.inside());
    let outside = series(run, &run.outside());
    let at_edge = check_edges("wscale-synack4 inside", &inside, C2S);
    assert!(
        at_edge > 5,
        "the client at the window's edge {at_edge} times"
    );
    // After the handshake's own (unscaled) window, the server's scaled
    // fields read as a window below one segment.
    let up_window = inside
        .iter()
        .filter(|r| r.direction == C2S)
        .filter_map(|r| r.window_read)
        .skip_while(|w| *w >= SEGMENT)
        .max()
        .unwrap();
    assert!(
        up_window < SEGMENT,
        "the client read {up_window} bytes at most"
    );
    check_edges("wscale-synack4 outside", &outside, S2C);
    for (side, rows) in [("inside", &inside), ("outside", &outside)] {
        all_acknowledged(side, rows, C2S, 16_000);
        all_acknowledged(side, rows, S2C, 2_000_000);
        for direction in [C2S, S2C] {
            check_limit_split(run, side, &run.capture(side), rows, direction);
        }
    }
    svg(run, "wscale-synack4 inside", &run.inside());
    svg(run, "wscale-synack4 outside", &run.outside());
}
