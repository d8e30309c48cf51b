//! The plot's panels: a direction's sequence and window edges, and the
//! main direction's bytes in flight and throughput.

use plotters::prelude::*;

use super::legend::{draw_header, header_height, Entry, Key};
use super::lines::{lines, shade, shade_entries, steps};
use super::style::{byte_unit, dir_name, off_scale, tick, BLUE, GREEN, GREY, ORANGE, PURPLE};
use super::thin::Point;
use super::{Area, Chart, DrawResult, TimeAxis, LEGEND_WIDTH};

/// The largest window a 16-bit field gives without scaling, bytes.
const UNSCALED_MAX: f64 = 65_535.0;

/// A vertical axis in bytes: its top, and the unit its labels use.
struct ByteAxis {
    /// The top, bytes.
    top: f64,
    /// Bytes per unit.
    unit: f64,
    /// The unit's name.
    unit_name: &'static str,
}

impl ByteAxis {
    fn new(top: f64) -> Self {
        let (unit, unit_name) = byte_unit(top);
        ByteAxis {
            top,
            unit,
            unit_name,
        }
    }

    /// The top in the axis's unit.
    fn max(&self) -> f64 {
        self.top / self.unit
    }

    /// `v` bytes in the axis's unit; `None` above the top.
    fn on_scale(&self, v: u64) -> Option<f64> {
        ((v as f64) <= self.top).then_some(v as f64 / self.unit)
    }
}

/// The mesh of a panel: both axes' labels and ticks, no light grid.
fn mesh(chart: &mut Chart<'_, '_>, time: &TimeAxis, y_desc: String, y_max: f64) -> DrawResult {
    let x_max = time.x_max;
    chart
        .configure_mesh()
        .x_desc(time.desc.as_str())
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| tick(v, x_max))
        .y_label_formatter(&|v| tick(v, y_max))
        .draw()
}

/// The highest edge `ack + f` of the points, bytes.
fn edge_max(pts: &[Point], f: fn(&Point) -> Option<u64>) -> f64 {
    pts.iter()
        .filter_map(|q| f(q).map(|w| q.ack + w))
        .max()
        .unwrap_or(0) as f64
}

/// The sequence panel's axis: the sequence edge and the ACK, and the
/// window edges unless they pass 3x the sequence edge (they would flatten
/// the data; the legend says how high they go).
fn sequence_axis(seq_max: f64, read_max: f64, meant_max: f64) -> ByteAxis {
    let cap = (3.0 * seq_max).max(1.0);
    let top = [seq_max, read_max, meant_max]
        .into_iter()
        .filter(|v| *v <= cap)
        .fold(seq_max, f64::max)
        .max(1.0)
        * 1.06;
    ByteAxis::new(top)
}

/// The sequence panel's legend.
fn sequence_legend(pts: &[Point], top: f64, read_max: f64, meant: Option<f64>) -> Vec<Entry> {
    let mut entries = vec![
        (
            Key::Line(BLUE),
            "sequence edge (highest byte sent)".to_string(),
        ),
        (Key::Line(GREEN), "ACK".to_string()),
        (
            Key::Line(ORANGE),
            format!(
                "window edge as the sender reads it (ACK + window){}",
                off_scale(read_max, top)
            ),
        ),
    ];
    if let Some(meant_max) = meant {
        entries.push((
            Key::Dashed(PURPLE),
            format!(
                "window edge as the receiver means it{}",
                off_scale(meant_max, top)
            ),
        ));
    }
    entries.extend(shade_entries(pts));
    entries
}

/// Direction `d`'s sequence panel in `area`: the sequence edge, the ACK
/// and the window's right edge (as the sender reads it, and as the receiver
/// means it where that differs) against time, over the shaded phases.
pub(super) fn sequence(area: &Area<'_>, d: usize, pts: &[Point], time: &TimeAxis) -> DrawResult {
    let seq_max = pts.iter().map(|q| q.seq_end.max(q.ack)).max().unwrap_or(0) as f64;
    let read_max = edge_max(pts, |q| q.window_read);
    let meant_max = edge_max(pts, |q| q.window);
    let axis = sequence_axis(seq_max, read_max, meant_max);
    let y_max = axis.max();
    let differs = pts
        .iter()
        .any(|q| q.window.is_some() && q.window != q.window_read);
    let entries = sequence_legend(pts, axis.top, read_max, differs.then_some(meant_max));
    let (header, body) = area.split_vertically(header_height(&entries, LEGEND_WIDTH));
    draw_header(
        &header,
        &format!("{}: sequence and window edges", dir_name(d)),
        &entries,
    )?;
    let mut chart = ChartBuilder::on(&body)
        .margin_left(10)
        .margin_right(90)
        .margin_bottom(6)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..time.x_max, 0.0..y_max)?;
    let y_desc = format!("sequence offset ({})", axis.unit_name);
    mesh(&mut chart, time, y_desc, y_max)?;
    shade(&mut chart, pts, time.tx, y_max)?;
    let line = |f: &dyn Fn(&Point) -> Option<u64>| {
        steps(pts, time.tx, time.col, |q| {
            f(q).and_then(|v| axis.on_scale(v))
        })
    };
    lines(
        &mut chart,
        line(&|q| Some(q.ack)),
        GREEN.stroke_width(2),
        false,
    )?;
    lines(
        &mut chart,
        line(&|q| Some(q.seq_end)),
        BLUE.stroke_width(2),
        false,
    )?;
    // The window edges last: where the sender is at the edge, the edge shows.
    if differs {
        let meant = line(&|q| q.window.map(|w| q.ack + w));
        lines(&mut chart, meant, PURPLE.stroke_width(2), true)?;
    }
    let read = line(&|q| q.window_read.map(|w| q.ack + w));
    lines(&mut chart, read, ORANGE.stroke_width(2), false)
}

/// The flight panel's axes: bytes in flight, and the window the sender
/// read unless it passes 3x the flight; throughput on the right, Mbit/s.
fn flight_axes(pts: &[Point]) -> (ByteAxis, f64, f64) {
    let flight_max = pts.iter().map(|q| q.in_flight).max().unwrap_or(0) as f64;
    let win_max = pts.iter().filter_map(|q| q.window_read).max().unwrap_or(0) as f64;
    let cap = (3.0 * flight_max).max(1.0);
    let top = if win_max <= cap {
        flight_max.max(win_max)
    } else {
        flight_max
    }
    .max(1.0)
        * 1.1;
    let thr_max = pts
        .iter()
        .filter_map(|q| q.throughput_bps)
        .max()
        .unwrap_or(0) as f64
        / 1e6;
    let thr_top = (thr_max * 1.1).max(0.001);
    (ByteAxis::new(top), win_max, thr_top)
}

/// The flight panel's legend.
fn flight_legend(pts: &[Point], top: f64, win_max: f64, unscaled: bool) -> Vec<Entry> {
    let mut entries = vec![
        (Key::Line(BLUE), "bytes in flight".to_string()),
        (
            Key::Dashed(ORANGE),
            format!(
                "receive window as the sender reads it{}",
                off_scale(win_max, top)
            ),
        ),
        (
            Key::Line(GREEN),
            "throughput over one RTT (right axis)".to_string(),
        ),
    ];
    if unscaled {
        entries.push((
            Key::Dashed(GREY),
            "65,535 bytes: the largest window without window scaling".to_string(),
        ));
    }
    entries.extend(shade_entries(pts));
    entries
}

/// Direction `d`'s flight panel in `area`: bytes in flight beside the
/// window the sender read (and the largest unscaled window, where it
/// fits), the throughput over one RTT on the right axis, over the shaded
/// phases.
pub(super) fn flight(area: &Area<'_>, d: usize, pts: &[Point], time: &TimeAxis) -> DrawResult {
    let (axis, win_max, thr_top) = flight_axes(pts);
    let y_max = axis.max();
    // The largest window without window scaling (RFC 7323), where it fits.
    let unscaled = (UNSCALED_MAX <= axis.top).then_some(UNSCALED_MAX / axis.unit);
    let entries = flight_legend(pts, axis.top, win_max, unscaled.is_some());
    let (header, body) = area.split_vertically(header_height(&entries, LEGEND_WIDTH));
    draw_header(
        &header,
        &format!(
            "{}: bytes in flight and throughput over one RTT",
            dir_name(d)
        ),
        &entries,
    )?;
    let x_max = time.x_max;
    let mut chart = ChartBuilder::on(&body)
        .margin_left(10)
        .margin_right(10)
        .margin_bottom(6)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .right_y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?
        .set_secondary_coord(0.0..x_max, 0.0..thr_top);
    let y_desc = format!("bytes in flight ({})", axis.unit_name);
    mesh(&mut chart, time, y_desc, y_max)?;
    chart
        .configure_secondary_axes()
        .y_desc("throughput (Mbit/s)")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .y_label_formatter(&|v| tick(v, thr_top))
        .draw()?;
    shade(&mut chart, pts, time.tx, y_max)?;
    if let Some(y) = unscaled {
        chart.draw_series(DashedLineSeries::new(
            [(0.0, y), (x_max, y)],
            3,
            4,
            GREY.stroke_width(1),
        ))?;
    }
    let (tx, col) = (time.tx, time.col);
    let in_flight = steps(pts, tx, col, |q| axis.on_scale(q.in_flight));
    lines(&mut chart, in_flight, BLUE.stroke_width(2), false)?;
    let read = steps(pts, tx, col, |q| {
        q.window_read.and_then(|w| axis.on_scale(w))
    });
    lines(&mut chart, read, ORANGE.stroke_width(2), true)?;
    for run in steps(pts, tx, col, |q| q.throughput_bps.map(|b| b as f64 / 1e6)) {
        chart.draw_secondary_series(LineSeries::new(run, GREEN.stroke_width(2)))?;
    }
    Ok(())
}
