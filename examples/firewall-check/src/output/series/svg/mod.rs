//! `series`' SVG: one connection as the picture a network engineer draws by
//! hand.
//!
//! For each direction that carried data, a sequence panel in the style of
//! Stevens and tcptrace: the sequence edge, the ACK and the window's right
//! edge (as the sender reads it, and as the receiver means it where that
//! differs) against time; below, for the direction with the most data,
//! bytes in flight beside the window the sender read, and the throughput
//! over one RTT. The background shows what limited the sender, as
//! `analyze`'s `limit` splits its time: the receive window red, the network
//! blue, the sender itself yellow; idle time grey.
//!
//! Memory: only the plotted connection's samples are kept ([`PlotData`]),
//! thinned to at most [`MAX_PLOT_POINTS`] (half per direction): when a
//! direction's buffer is full, every other point is dropped and from then
//! on only every second (fourth, ...) sample is kept. A kept point carries
//! how long the sender spent in each phase since the previous kept point,
//! so the shading keeps the phase that covered most of each thinned
//! interval. Each line is then reduced to what the picture can show (per
//! half-pixel column of time: the first, lowest, highest and last point),
//! so the SVG stays small.

use std::io;

use plotters::drawing::DrawingAreaErrorKind;
use plotters::prelude::*;

use crate::analysis::series::SeriesSample;

mod legend;
mod lines;
mod panels;
mod style;
mod thin;

use style::time_scale;
use thin::{Point, Thinned};

/// Most points the SVG keeps for its connection (half per direction).
pub const MAX_PLOT_POINTS: usize = 20_000;

/// SVG size in pixels.
pub const SIZE: (u32, u32) = (1200, 960);

/// Width of a panel's legend rows, pixels.
const LEGEND_WIDTH: i32 = SIZE.0 as i32 - 110;

/// Why the SVG could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum SvgError {
    /// The drawing library refused an element.
    #[error(transparent)]
    Draw(#[from] DrawingAreaErrorKind<io::Error>),
}

/// What drawing an element gives.
type DrawResult = Result<(), DrawingAreaErrorKind<io::Error>>;
type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;
type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The plotted connection's samples, per direction, thinned as they come.
#[derive(Debug)]
pub struct PlotData {
    connection: u64,
    dirs: [Thinned; 2],
    rtt_s: Option<f64>,
}

impl PlotData {
    /// Nothing yet of connection `connection` (numbered from 1).
    pub fn new(connection: u64) -> Self {
        PlotData {
            connection,
            dirs: Default::default(),
            rtt_s: None,
        }
    }

    /// Takes one of the connection's samples.
    pub fn push(&mut self, s: &SeriesSample) {
        self.dirs[s.direction.index()].push(s);
        if s.rtt_estimate_s.is_some() {
            self.rtt_s = s.rtt_estimate_s;
        }
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.dirs.iter().all(|d| d.seen == 0)
    }
}

/// Renders the plot to an SVG document of [`SIZE`].
pub fn render(p: &PlotData) -> Result<String, SvgError> {
    let mut out = String::new();
    draw(SVGBackend::with_string(&mut out, SIZE), p)?;
    Ok(out)
}

/// The time axis all panels share.
struct TimeAxis {
    /// Axis units per second.
    tx: f64,
    /// The axis's end, in its units.
    x_max: f64,
    /// Half a pixel column, in axis units: what lines are reduced to.
    col: f64,
    /// The axis's label.
    desc: String,
}

impl TimeAxis {
    /// The axis for the points' time span.
    fn of(dirs: &[Vec<Point>; 2]) -> Self {
        let t_max = dirs
            .iter()
            .flat_map(|d| d.last())
            .map(|q| q.t)
            .fold(0.0, f64::max)
            .max(1e-6);
        let (tx, t_unit) = time_scale(t_max);
        let x_max = t_max * tx * 1.02;
        TimeAxis {
            tx,
            x_max,
            // Twice the plot's horizontal resolution.
            col: x_max / (2.0 * f64::from(SIZE.0)),
            desc: format!("time since the connection's first segment ({t_unit})"),
        }
    }
}

/// The directions that get a sequence panel: those with data, the one with
/// the most first; with no data, the one with more samples (its ACKs).
fn panel_order(dirs: &[Vec<Point>; 2]) -> Vec<usize> {
    let carried = |i: usize| dirs[i].iter().map(|q| q.seq_end).max().unwrap_or(0);
    let mut order: Vec<usize> = (0..2).filter(|&i| carried(i) > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(carried(i)));
    if order.is_empty() {
        order.push(usize::from(dirs[1].len() > dirs[0].len()));
    }
    order
}

/// Where the panels split the height below the title: the sequence panels
/// above, the flight panel last.
fn panel_breaks(sequence_panels: usize) -> Vec<u32> {
    let h = SIZE.1 - 40;
    if sequence_panels == 2 {
        vec![h * 47 / 100, h * 70 / 100]
    } else {
        vec![h * 60 / 100]
    }
}

/// The plot's title: the connection and its RTT.
fn title(p: &PlotData) -> String {
    let rtt = p.rtt_s.map_or(String::from("RTT unknown"), |r| {
        format!("RTT {:.1} ms", r * 1e3)
    });
    format!("firewall-check series: connection {} ({rtt})", p.connection)
}

fn draw(backend: SVGBackend<'_>, p: &PlotData) -> DrawResult {
    let dirs: [Vec<Point>; 2] = [p.dirs[0].finish(), p.dirs[1].finish()];
    let order = panel_order(&dirs);
    let time = TimeAxis::of(&dirs);
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&title(p), ("sans-serif", 24))?;
    let areas = root.split_by_breakpoints::<u32, u32, _, _>([], panel_breaks(order.len()));
    for (area, &d) in areas.iter().zip(&order) {
        panels::sequence(area, d, &dirs[d], &time)?;
    }
    let main = order[0];
    panels::flight(&areas[order.len()], main, &dirs[main], &time)?;
    root.present()?;
    Ok(())
}
