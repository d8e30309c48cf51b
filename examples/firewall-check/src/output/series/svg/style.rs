//! The plot's colours, its legend's words for the shaded phases, and how
//! numbers read on its axes and in its legends.

use plotters::style::RGBColor;

use super::thin::{IDLE, NETWORK, RWND, SENDER};

pub(super) const BLUE: RGBColor = RGBColor(0x1f, 0x5f, 0xb4);
pub(super) const GREEN: RGBColor = RGBColor(0x2c, 0x8c, 0x2c);
pub(super) const ORANGE: RGBColor = RGBColor(0xe0, 0x6c, 0x00);
pub(super) const PURPLE: RGBColor = RGBColor(0x8e, 0x3f, 0xb0);
pub(super) const GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);
const RWND_SHADE: RGBColor = RGBColor(0xf6, 0xc6, 0xc6);
const IDLE_SHADE: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const NETWORK_SHADE: RGBColor = RGBColor(0xd6, 0xe4, 0xf5);
const SENDER_SHADE: RGBColor = RGBColor(0xfa, 0xe8, 0xb8);

/// Legend text of the shaded phases.
const RWND_LABEL: &str = "sender limited by the receive window (as it reads it)";
const IDLE_LABEL: &str = "sender idle: nothing outstanding";
const NETWORK_LABEL: &str = "sender limited by the network (congestion window)";
const SENDER_LABEL: &str = "sender limited by itself (send buffer, application)";

/// The shaded phases, their colours and legend texts, in drawing order.
pub(super) const SHADES: [(usize, RGBColor, &str); 4] = [
    (RWND, RWND_SHADE, RWND_LABEL),
    (NETWORK, NETWORK_SHADE, NETWORK_LABEL),
    (SENDER, SENDER_SHADE, SENDER_LABEL),
    (IDLE, IDLE_SHADE, IDLE_LABEL),
];

/// A direction by its index: `client to server`, `server to client`.
pub(super) fn dir_name(i: usize) -> &'static str {
    if i == 0 {
        "client to server"
    } else {
        "server to client"
    }
}

/// The time axis's unit for a plot `t_max` seconds long: (units per
/// second, name).
pub(super) fn time_scale(t_max: f64) -> (f64, &'static str) {
    if t_max < 2.0 {
        (1e3, "ms")
    } else {
        (1.0, "s")
    }
}

/// A byte unit for an axis whose values reach `max`: (bytes per unit, name).
pub(super) fn byte_unit(max: f64) -> (f64, &'static str) {
    if max >= 5e6 {
        (1e6, "MB")
    } else if max >= 5e3 {
        (1e3, "kB")
    } else {
        (1.0, "bytes")
    }
}

/// A byte count for a legend: `67.1 MB`, `75,296 bytes`.
fn human_bytes(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1} MB", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1} kB", v / 1e3)
    } else {
        format!("{v:.0} bytes")
    }
}

/// " (above the plot: up to N)" when `max` passes the axis top.
pub(super) fn off_scale(max: f64, top: f64) -> String {
    if max > top {
        format!(" (above the plot: up to {})", human_bytes(max))
    } else {
        String::new()
    }
}

/// Axis labels with as many decimals as the range needs.
pub(super) fn tick(v: &f64, range: f64) -> String {
    if range >= 20.0 {
        format!("{v:.0}")
    } else if range >= 2.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
