//! The throughput-against-time plot, drawn as SVG with `plotters`: one line per stream
//! (per-second figures drawn as steps), the link's (or the VC's) goodput as a dashed
//! reference line,
//! like the graphs the TransPAC engineers published.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::report::{link_goodput, vc_goodput};
use super::scenario::Scenario;
use super::sim::RunResult;

/// Line colours, in stream order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Plot size in pixels.
pub const SIZE: (u32, u32) = (960, 540);

/// Why the plot could not be drawn (`plotters`' own error: a backend failure or
/// a layout it cannot draw).
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Drawing on the SVG backend failed.
    #[error("{0}")]
    Draw(#[from] DrawingAreaErrorKind<std::io::Error>),
}

/// Renders the plot to an SVG document.
pub fn svg(sc: &Scenario, res: &RunResult) -> Result<String, PlotError> {
    let mut out = String::new();
    draw(SVGBackend::with_string(&mut out, SIZE), sc, res)?;
    Ok(out)
}

/// The chart plotters draws on: seconds across, Mbit/s up.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A stream's received Mbit/s in second `i`.
fn mbps(res: &RunResult, i: usize, k: usize) -> f64 {
    res.intervals.cell(i, k).bytes as f64 * 8.0 / 1e6
}

/// The line the streams share: the VC's goodput if there is a VC (at most the
/// link's), else the link's; in Mbit/s, with its name.
fn reference(sc: &Scenario) -> (f64, &'static str) {
    let link = link_goodput(sc) as f64;
    match vc_goodput(sc) {
        Some(vc) => (vc.min(link) / 1e6, "VC goodput"),
        None => (link / 1e6, "link goodput"),
    }
}

fn draw(backend: SVGBackend<'_>, sc: &Scenario, res: &RunResult) -> Result<(), PlotError> {
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let n = res.intervals.len();
    let (goodput, what) = reference(sc);
    let peak = (0..sc.streams.len())
        .flat_map(|k| (0..n).map(move |i| (i, k)))
        .map(|(i, k)| mbps(res, i, k))
        .fold(goodput, f64::max);
    let y_max = nice_ceiling(peak * 1.3);
    let x_max = sc.duration_s as f64;
    let title = format!("qbss-model: {} ({})", sc.name, sc.link.name);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("received throughput (Mbit/s)")
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .x_labels(13)
        .y_labels(10)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    let grey = RGBColor(0x70, 0x70, 0x70);
    chart
        .draw_series(DashedLineSeries::new(
            [(0.0, goodput), (x_max, goodput)],
            8,
            5,
            grey.stroke_width(1),
        ))?
        .label(format!("{what} {goodput:.2} Mbit/s"))
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], grey.stroke_width(1)));
    draw_streams(&mut chart, sc, res)?;
    label_squeezed(&mut chart, sc, res, (goodput, what), y_max)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    root.present()?;
    Ok(())
}

/// One line per stream, its per-second figures drawn as steps.
fn draw_streams(chart: &mut Chart, sc: &Scenario, res: &RunResult) -> Result<(), PlotError> {
    let n = res.intervals.len();
    let count = sc.streams.len() as u32;
    for (k, s) in sc.streams.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        // Earlier streams are drawn wider, so a line hidden under a later one with the
        // same figures still shows as a border.
        let width = 2 + 2 * (count - 1 - (k as u32).min(count - 1)).min(3);
        let points: Vec<(f64, f64)> = (0..n)
            .flat_map(|i| {
                let v = mbps(res, i, k);
                [(i as f64, v), (i as f64 + 1.0, v)]
            })
            .collect();
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(width)))?
            .label(format!(
                "{} ({}, queue {})",
                s.name,
                dscp::DsField::new(s.ds).dscp(),
                sc.classifier.queue(s.ds)
            ))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(3)));
    }
    Ok(())
}

/// A stream squeezed close to the axis (the QBSS share under WRR) would be
/// invisible at this scale: its longest such run of at least 3 s is labelled
/// with its mean rate and its share of the `reference` line.
fn label_squeezed(
    chart: &mut Chart,
    sc: &Scenario,
    res: &RunResult,
    (goodput, what): (f64, &str),
    y_max: f64,
) -> Result<(), PlotError> {
    for (k, s) in sc.streams.iter().enumerate() {
        let rates: Vec<f64> = (0..res.intervals.len()).map(|i| mbps(res, i, k)).collect();
        let (from, to) = longest_run(&rates, |v| v > 0.0 && v < 0.05 * y_max);
        if to - from < 3 {
            continue;
        }
        let mean = res.intervals.total(k, from, to).bytes as f64 * 8.0 / 1e6 / (to - from) as f64;
        let text = format!(
            "{}: {:.2} Mbit/s ({:.1}% of {what})",
            s.name,
            mean,
            100.0 * mean / goodput
        );
        let colour = PALETTE[k % PALETTE.len()];
        chart.draw_series(std::iter::once(Text::new(
            text,
            (from as f64 + 0.5, mean + 0.06 * y_max),
            ("sans-serif", 16).into_font().color(&colour),
        )))?;
    }
    Ok(())
}

/// The longest run of consecutive values that are `low`, as `(first, past the
/// last)`; the first of equally long runs; `(0, 0)` when there is none.
fn longest_run(values: &[f64], low: impl Fn(f64) -> bool) -> (usize, usize) {
    let (mut best, mut run_start) = ((0, 0), None);
    // A value that is not low after the last closes a run that reaches the end.
    let lows = values.iter().map(|&v| low(v)).chain([false]);
    for (i, is_low) in lows.enumerate() {
        match (is_low, run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(a)) => {
                if i - a > best.1 - best.0 {
                    best = (a, i);
                }
                run_start = None;
            }
            _ => {}
        }
    }
    best
}

/// The smallest of 1, 2, 2.5, 5 x 10^k at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_low_run_is_found_first_and_whole() {
        let low = |v: f64| v > 0.0 && v < 1.0;
        assert_eq!(longest_run(&[], low), (0, 0));
        assert_eq!(longest_run(&[5.0, 5.0], low), (0, 0));
        assert_eq!(longest_run(&[0.5, 0.5, 5.0, 0.5, 0.5], low), (0, 2));
        assert_eq!(longest_run(&[5.0, 0.5, 0.0, 0.5, 0.5, 0.5], low), (3, 6));
        assert_eq!(longest_run(&[0.5; 4], low), (0, 4));
    }

    #[test]
    fn the_ceiling_is_a_round_number_at_or_above() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(f64::NAN), 1.0);
        assert_eq!(nice_ceiling(1.3), 2.0);
        assert_eq!(nice_ceiling(2.1), 2.5);
        assert_eq!(nice_ceiling(172.0), 200.0);
        assert_eq!(nice_ceiling(210.0), 250.0);
        assert_eq!(nice_ceiling(500.0), 500.0);
    }
}
