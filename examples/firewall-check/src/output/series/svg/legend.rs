//! A panel's header: its title and its legend, laid out in rows above the
//! plot so that they hide nothing.

use plotters::prelude::*;

use super::{Area, DrawResult};

/// What a legend entry shows.
#[derive(Clone, Copy)]
pub(super) enum Key {
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A shaded box.
    Shade(RGBColor),
}

/// A legend entry: its key and its text.
pub(super) type Entry = (Key, String);

const TITLE_PX: u32 = 18;
const LEGEND_PX: u32 = 14;
const ROW_PX: u32 = 20;

/// Estimated width of `text` at `px` (sans-serif averages about 0.53 em).
fn text_width(text: &str, px: u32) -> i32 {
    (text.chars().count() as f64 * f64::from(px) * 0.53).ceil() as i32 + 1
}

/// Places legend entries in rows across `width`: (row, x) per entry.
fn layout(entries: &[Entry], width: i32) -> Vec<(u32, i32)> {
    let (mut row, mut x) = (0u32, 0i32);
    entries
        .iter()
        .map(|(_, label)| {
            let w = 28 + text_width(label, LEGEND_PX) + 22;
            if x > 0 && x + w > width {
                row += 1;
                x = 0;
            }
            let at = (row, x);
            x += w;
            at
        })
        .collect()
}

/// Height of a panel header: its title and the legend rows.
pub(super) fn header_height(entries: &[Entry], width: i32) -> u32 {
    let rows = layout(entries, width).last().map_or(0, |(r, _)| r + 1);
    TITLE_PX + 12 + rows * ROW_PX + 6
}

/// Draws a panel's title and its legend (outside the plot, hiding nothing).
pub(super) fn draw_header(area: &Area<'_>, title: &str, entries: &[Entry]) -> DrawResult {
    let (w, _) = area.dim_in_pixel();
    let left = 90i32;
    let title_w = text_width(title, TITLE_PX);
    area.draw(&Text::new(
        title.to_string(),
        ((w as i32 - title_w) / 2, 4),
        ("sans-serif", TITLE_PX).into_font(),
    ))?;
    let width = w as i32 - left - 20;
    for ((key, label), (row, x)) in entries.iter().zip(layout(entries, width)) {
        let x = left + x;
        let y = (TITLE_PX + 14 + row * ROW_PX) as i32 + (ROW_PX / 2) as i32;
        draw_key(area, *key, x, y)?;
        area.draw(&Text::new(
            label.clone(),
            (x + 30, y - (LEGEND_PX as i32) / 2 - 1),
            ("sans-serif", LEGEND_PX).into_font(),
        ))?;
    }
    Ok(())
}

/// Draws a legend key 24 pixels wide from `x`, centred on `y`.
fn draw_key(area: &Area<'_>, key: Key, x: i32, y: i32) -> DrawResult {
    match key {
        Key::Line(c) => {
            area.draw(&PathElement::new([(x, y), (x + 24, y)], c.stroke_width(3)))?;
        }
        Key::Dashed(c) => {
            for k in 0..3 {
                let a = x + k * 9;
                area.draw(&PathElement::new([(a, y), (a + 6, y)], c.stroke_width(3)))?;
            }
        }
        Key::Shade(c) => {
            area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], c.filled()))?;
        }
    }
    Ok(())
}
