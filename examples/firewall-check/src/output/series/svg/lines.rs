//! What a panel draws from the points: step lines reduced to what the
//! picture can show, and the shading of the sender's phases.

use plotters::prelude::*;

use super::legend::{Entry, Key};
use super::style::SHADES;
use super::thin::Point;
use super::{Chart, DrawResult};

/// `f` of every point as a step line (a value holds until the next point),
/// split where `f` is unknown, reduced to what `col`-wide columns show.
pub(super) fn steps(
    points: &[Point],
    tx: f64,
    col: f64,
    f: impl Fn(&Point) -> Option<f64>,
) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    for p in points {
        match f(p) {
            Some(v) => {
                if let Some(&(_, prev)) = run.last() {
                    run.push((p.t * tx, prev));
                }
                run.push((p.t * tx, v));
            }
            None => {
                if run.len() > 1 {
                    runs.push(simplify(&run, col));
                }
                run.clear();
            }
        }
    }
    if run.len() > 1 {
        runs.push(simplify(&run, col));
    }
    runs
}

/// Keeps, of the points falling in each `col`-wide column of x, the first,
/// the lowest, the highest and the last (in order), and of a level run only
/// its ends: the same picture at a column's resolution, with far fewer
/// points (the SVG stays small however many samples there are).
fn simplify(run: &[(f64, f64)], col: f64) -> Vec<(f64, f64)> {
    let column = |x: f64| if col > 0.0 { (x / col).floor() } else { x };
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(run.len().min(4096));
    let push = |p: (f64, f64), out: &mut Vec<(f64, f64)>| {
        let n = out.len();
        if n >= 1 && out[n - 1] == p {
            return;
        }
        if n >= 2 && out[n - 1].1 == p.1 && out[n - 2].1 == p.1 {
            out[n - 1] = p;
        } else {
            out.push(p);
        }
    };
    let mut i = 0;
    while i < run.len() {
        let c = column(run[i].0);
        let j = i + run[i..].iter().take_while(|p| column(p.0) == c).count();
        let g = &run[i..j];
        let (mut lo, mut hi) = (0, 0);
        for (k, p) in g.iter().enumerate() {
            if p.1 < g[lo].1 {
                lo = k;
            }
            if p.1 > g[hi].1 {
                hi = k;
            }
        }
        let mut keep = [0, lo, hi, g.len() - 1];
        keep.sort_unstable();
        for (n, &k) in keep.iter().enumerate() {
            if n == 0 || keep[n - 1] != k {
                push(g[k], &mut out);
            }
        }
        i = j;
    }
    out
}

/// Time intervals (scaled by `tx`) in phase `phase`, neighbours merged.
fn phase_runs(points: &[Point], tx: f64, phase: usize) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for w in points.windows(2) {
        if w[1].phase() == Some(phase) {
            let (a, b) = (w[0].t * tx, w[1].t * tx);
            match out.last_mut() {
                Some(last) if last.1 >= a => last.1 = b,
                _ => out.push((a, b)),
            }
        }
    }
    out
}

/// Shades what limited the sender (section 1 of `analyze`'s limit: the
/// receive window, the network, the sender) and its idle intervals over the
/// whole height.
pub(super) fn shade(
    chart: &mut Chart<'_, '_>,
    points: &[Point],
    tx: f64,
    y_max: f64,
) -> DrawResult {
    for (phase, colour, _) in SHADES {
        chart.draw_series(
            phase_runs(points, tx, phase)
                .into_iter()
                .map(|(a, b)| Rectangle::new([(a, 0.0), (b, y_max)], colour.filled())),
        )?;
    }
    Ok(())
}

/// Legend entries of the phases [`shade`] draws (only those present).
pub(super) fn shade_entries(points: &[Point]) -> Vec<Entry> {
    let mut v = Vec::new();
    for (phase, colour, label) in SHADES {
        if !phase_runs(points, 1.0, phase).is_empty() {
            v.push((Key::Shade(colour), label.to_string()));
        }
    }
    v
}

/// Draws step-line runs.
pub(super) fn lines(
    chart: &mut Chart<'_, '_>,
    runs: Vec<Vec<(f64, f64)>>,
    style: ShapeStyle,
    dashed: bool,
) -> DrawResult {
    for run in runs {
        if dashed {
            chart.draw_series(DashedLineSeries::new(run, 7, 5, style))?;
        } else {
            chart.draw_series(LineSeries::new(run, style))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplify_keeps_each_columns_extremes_and_ends() {
        // 100,000 points over 10 columns: a saw with one spike in column 7.
        let run: Vec<(f64, f64)> = (0..100_000)
            .map(|i| {
                let y = if i == 73_456 { 1e6 } else { (i % 7) as f64 };
                (i as f64 / 10_000.0, y)
            })
            .collect();
        let out = simplify(&run, 1.0);
        assert!(out.len() <= 40, "{} points", out.len());
        assert_eq!(out.first(), run.first());
        assert_eq!(out.last(), run.last());
        assert!(out.contains(&run[73_456]), "the spike survives");
        for c in 0..10 {
            let col: Vec<&(f64, f64)> = out.iter().filter(|p| p.0.floor() == c as f64).collect();
            let lo = col.iter().map(|p| p.1).fold(f64::MAX, f64::min);
            let hi = col.iter().map(|p| p.1).fold(f64::MIN, f64::max);
            assert_eq!(lo, 0.0, "column {c}");
            assert!(hi >= 6.0, "column {c}");
        }
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "in order");
        // A level run keeps only its ends.
        let flat: Vec<(f64, f64)> = (0..1000).map(|i| (f64::from(i), 5.0)).collect();
        assert_eq!(simplify(&flat, 1.0), vec![(0.0, 5.0), (999.0, 5.0)]);
    }
}
