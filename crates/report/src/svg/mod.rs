//! Inline SVG charts shared by every page (no dependencies): line charts with "nice"
//! ticks on a linear or percentile x axis ([`Chart`]), horizontal bars ([`bars`]), and
//! the frame they share ([`frame`]): full width, legend right of the plot, one colour
//! per series name ([`crate::palette`]), values on hover (the page's script).

pub mod bars;
pub mod frame;

pub use frame::escape;
use frame::{Frame, Pen, pens, push_line, value_text};
use std::fmt::Write as _;

/// How x values are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    /// Linear.
    Linear,
    /// x is a percentile (0..100) placed at `log10(1 / (1 - x/100))`, HdrHistogram's
    /// "percentile spectrum" axis (ticks at 0, 90, 99, 99.9, …).
    Percentile,
}

/// One line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points, in x order; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
}

/// A span of the x axis to shade (a checkpoint, an autovacuum run), with its label; a
/// mark whose `to` equals its `from` is an instant (a primary's end), drawn as a dashed
/// vertical line.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Short label shown at the top of the band.
    pub label: String,
    /// Start (x units).
    pub from: f64,
    /// End (x units).
    pub to: f64,
    /// Fill color.
    pub color: &'static str,
}

/// How the series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stacking {
    /// Independent lines.
    #[default]
    Lines,
    /// Cumulative series (each already includes the ones before it), the areas
    /// between consecutive series filled.
    Stacked,
}

/// A chart to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title drawn above the plot; empty for none (when the page heading says it).
    pub title: String,
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// x placement.
    pub x_scale: XScale,
    /// The lines.
    pub series: Vec<Series>,
}

/// Largest percentile the spectrum axis shows (99.9999 %).
const MAX_SPECTRUM_X: f64 = 6.0;

/// The x position of percentile `p` (0..100) on a percentile spectrum's axis:
/// `log10(1 / (1 - p/100))`, so 90 % is at 1, 99 % at 2, …; capped at 6 (99.9999 %).
pub fn percentile_pos(p: f64) -> f64 {
    let rest = 1.0 - (p / 100.0).clamp(0.0, 1.0);
    if rest <= 10f64.powf(-MAX_SPECTRUM_X) {
        MAX_SPECTRUM_X
    } else {
        (1.0 / rest).log10()
    }
}

/// The label of the percentile axis's tick at x position `k` (see [`percentile_pos`]):
/// `0%`, `90%`, `99%`, `99.9%`, …
pub fn percentile_tick_label(k: u32) -> String {
    match k {
        0 => "0%".to_string(),
        n => format!("{}%", 100.0 - 100.0 / 10f64.powi(n as i32)),
    }
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving about `target` ticks over `span`.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// The text of a tick of a linear axis with step `step`: thousands as `k`, millions as
/// `M`, billions as `G` (so that tick labels stay short and every plot starts at the same
/// left edge).
pub(crate) fn fmt_tick(v: f64, step: f64) -> String {
    for (unit, suffix) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if step >= unit {
            if v == 0.0 {
                return "0".to_string();
            }
            return format!("{}{suffix}", fmt_tick(v / unit, step / unit));
        }
    }
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

/// A percentile for the hover box (`99.9%`).
fn percentile_text(p: f64) -> String {
    let s = format!("{p:.4}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

impl Chart {
    fn x_pos(&self, x: f64) -> f64 {
        match self.x_scale {
            XScale::Linear => x,
            XScale::Percentile => percentile_pos(x),
        }
    }

    /// The chart as an `<svg>` element (a text message in it when there is no data).
    pub fn render(&self) -> String {
        self.render_with(&[], Stacking::Lines)
    }

    /// [`Chart::render`] with shaded spans of the x axis (linear axes) and stacking.
    pub fn render_with(&self, marks: &[Mark], stacking: Stacking) -> String {
        let pts = self.placed_points();
        let pens = pens(self.series.iter().map(|s| s.name.as_str()));
        let plot = Plot::fit(&pts, self.x_scale, stacking);
        let y_ticks = plot.as_ref().map(Plot::y_tick_labels).unwrap_or_default();
        let frame = Frame::new(&self.title, &y_ticks, &pens);
        let mut s = String::with_capacity(4096);
        frame.open(&mut s, &self.title, &self.x_label, &self.y_label);
        let Some(plot) = plot else {
            frame.push_no_data(&mut s);
            frame.push_axes(&mut s, &self.x_label, &self.y_label);
            frame.close(&mut s);
            return s;
        };
        let at = At {
            plot: &plot,
            frame: &frame,
        };
        at.push_y_grid(&mut s);
        match self.x_scale {
            XScale::Linear => at.push_linear_x_ticks(&mut s),
            XScale::Percentile => at.push_percentile_x_ticks(&mut s),
        }
        if self.x_scale == XScale::Linear {
            at.push_marks(&mut s, marks);
        }
        if stacking == Stacking::Stacked {
            at.push_stacked_areas(&mut s, &pts, &pens);
        }
        frame.push_axes(&mut s, &self.x_label, &self.y_label);
        self.push_series(&mut s, &at, &pts, &pens, stacking);
        frame.push_legend(&mut s, &pens);
        frame.close(&mut s);
        s
    }

    /// Each series' points as `(placed x, y, original x)`, non-finite points dropped.
    fn placed_points(&self) -> Vec<Vec<(f64, f64, f64)>> {
        self.series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .map(|&(x, y)| (self.x_pos(x), y, x))
                    .filter(|(x, y, _)| x.is_finite() && y.is_finite())
                    .collect()
            })
            .collect()
    }

    /// Each series as a polyline (a dot when it has one point) carrying its values for
    /// the hover box (a stacked series' own share, not the running total).
    fn push_series(
        &self,
        s: &mut String,
        at: &At,
        pts: &[Vec<(f64, f64, f64)>],
        pens: &[Pen],
        stacking: Stacking,
    ) {
        for (i, (p, pen)) in pts.iter().zip(pens).enumerate() {
            let below = match (stacking, i.checked_sub(1).and_then(|j| pts.get(j))) {
                (Stacking::Stacked, Some(prev)) if prev.len() == p.len() => Some(prev),
                _ => None,
            };
            let xs: Vec<String> = p
                .iter()
                .map(|&(_, _, x)| match self.x_scale {
                    XScale::Linear => value_text(x),
                    XScale::Percentile => percentile_text(x),
                })
                .collect();
            let vs: Vec<String> = p
                .iter()
                .enumerate()
                .map(|(k, &(_, y, _))| value_text(y - below.map_or(0.0, |b| b[k].1)))
                .collect();
            let svg_points: Vec<(f64, f64)> = p
                .iter()
                .map(|&(x, y, _)| (at.sx(x), at.sy(y.min(at.plot.y1))))
                .collect();
            push_line(s, pen, &svg_points, (&xs, &vs), false);
        }
    }
}

/// The plot area's data ranges: where data values land in the SVG.
struct Plot {
    /// Smallest x shown (placed).
    x0: f64,
    /// Largest x shown (placed).
    x1: f64,
    /// The x tick step (linear axes).
    xstep: f64,
    /// Largest y shown: a whole number of `ystep`s (the smallest is 0).
    y1: f64,
    /// The y tick step.
    ystep: f64,
}

/// A plot in its frame.
struct At<'a> {
    plot: &'a Plot,
    frame: &'a Frame,
}

/// About how many ticks every axis has, so that the tick spacing is alike in every
/// chart.
const X_TICKS: usize = 10;
const Y_TICKS: usize = 5;

impl Plot {
    /// The ranges that fit the placed points; `None` when there are none. A linear x
    /// axis starts at 0 (time since start) and ends on a tick; the stacked shares end at
    /// 100 %.
    fn fit(pts: &[Vec<(f64, f64, f64)>], x_scale: XScale, stacking: Stacking) -> Option<Self> {
        let all: Vec<&(f64, f64, f64)> = pts.iter().flatten().collect();
        if all.is_empty() {
            return None;
        }
        let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut y1 = f64::NEG_INFINITY;
        for &&(x, y, _) in &all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        let mut xstep = 1.0;
        match x_scale {
            XScale::Percentile => {
                x0 = 0.0;
                x1 = x1.ceil().max(1.0);
            }
            XScale::Linear => {
                x0 = x0.min(0.0);
                if x1 <= x0 {
                    x1 = x0 + 1.0;
                }
                xstep = nice_step(x1 - x0, X_TICKS);
                x1 = (x1 / xstep).ceil() * xstep;
            }
        }
        let (y1, ystep) = if stacking == Stacking::Stacked && y1 <= 100.5 {
            (100.0, 20.0)
        } else {
            // A series of zeros (no WAL in a read-only run) gets the axis 0 to 1, not
            // ticks of 0.0000000002.
            let y1 = if y1 > 0.0 { y1 } else { 1.0 };
            let ystep = nice_step(y1, Y_TICKS);
            (((y1 / ystep).ceil() * ystep).max(ystep), ystep)
        };
        Some(Plot {
            x0,
            x1,
            xstep,
            y1,
            ystep,
        })
    }

    /// The y ticks' values.
    fn y_ticks(&self) -> Vec<f64> {
        let n = (self.y1 / self.ystep).round() as u32;
        (0..=n).map(|k| f64::from(k) * self.ystep).collect()
    }

    /// The y ticks' labels.
    fn y_tick_labels(&self) -> Vec<String> {
        self.y_ticks()
            .into_iter()
            .map(|v| fmt_tick(v, self.ystep))
            .collect()
    }
}

/// The rows of mark labels at the top of a plot: where each row's last label ends.
#[derive(Default)]
struct LabelRows {
    ends: Vec<f64>,
}

impl LabelRows {
    /// Rows at most (further labels show on hover only).
    const MAX: usize = 4;
    /// A row's height (px; the labels are 10 px).
    const HEIGHT: f64 = 11.0;
    /// Space kept between two labels of a row (px).
    const GAP: f64 = 4.0;

    /// The first row where a label from `x` of `width` overlaps none before it (a new
    /// row when none does; None when every row is taken), now taken up to its end.
    fn place(&mut self, x: f64, width: f64) -> Option<usize> {
        let row = match self.ends.iter().position(|&end| end <= x) {
            Some(row) => row,
            None if self.ends.len() < Self::MAX => {
                self.ends.push(0.0);
                self.ends.len() - 1
            }
            None => return None,
        };
        self.ends[row] = x + width + Self::GAP;
        Some(row)
    }
}

impl At<'_> {
    /// The SVG x of a placed x value.
    fn sx(&self, x: f64) -> f64 {
        let p = self.plot;
        self.frame.left + (x - p.x0) / (p.x1 - p.x0) * self.frame.pw
    }

    /// The SVG y of a y value.
    fn sy(&self, y: f64) -> f64 {
        self.frame.bottom() - y / self.plot.y1 * self.frame.ph
    }

    /// The horizontal grid lines and the y tick labels.
    fn push_y_grid(&self, s: &mut String) {
        for v in self.plot.y_ticks() {
            let label = fmt_tick(v, self.plot.ystep);
            self.frame.push_y_tick(s, self.sy(v), &label, false);
        }
    }

    /// The x ticks of a linear axis, at "nice" steps.
    fn push_linear_x_ticks(&self, s: &mut String) {
        let p = self.plot;
        let n = ((p.x1 - p.x0) / p.xstep).round() as u32;
        let first = (p.x0 / p.xstep).ceil() * p.xstep;
        for k in 0..=n {
            let v = first + f64::from(k) * p.xstep;
            if v > p.x1 + p.xstep * 1e-6 {
                break;
            }
            self.frame
                .push_x_tick(s, self.sx(v), &fmt_tick(v, p.xstep), false);
        }
    }

    /// The x ticks of a percentile axis: 0 %, 90 %, 99 %, 99.9 %, …
    fn push_percentile_x_ticks(&self, s: &mut String) {
        for k in 0..=(self.plot.x1.round() as u32) {
            let label = percentile_tick_label(k);
            self.frame
                .push_x_tick(s, self.sx(f64::from(k)), &label, false);
        }
    }

    /// The shaded spans and the instants (dashed vertical lines), clipped to the plot.
    /// Each label, in its mark's colour on a white halo (readable across the lines),
    /// starts at its mark, in the first of a few rows where it overlaps no label before
    /// it, shortened to the room right of the mark (left out when there is hardly any
    /// room or no free row; it shows on hover).
    fn push_marks(&self, s: &mut String, marks: &[Mark]) {
        let mut rows = LabelRows::default();
        for m in marks {
            let instant = m.to == m.from;
            let from = m.from.max(self.plot.x0);
            let to = m.to.min(self.plot.x1);
            if to < from || (!instant && to == from) {
                continue;
            }
            let (x0, x1) = (self.sx(from), self.sx(to));
            let (t, b, c, l) = (
                self.frame.top,
                self.frame.bottom(),
                m.color,
                escape(&m.label),
            );
            if instant {
                let _ = write!(
                    s,
                    "<line x1=\"{x0:.1}\" y1=\"{t}\" x2=\"{x0:.1}\" y2=\"{b:.1}\" stroke=\"{c}\" \
                     stroke-width=\"1.5\" stroke-dasharray=\"5 3\"><title>{l}</title></line>"
                );
            } else {
                let _ = write!(
                    s,
                    "<rect x=\"{x0:.1}\" y=\"{t}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{c}\" \
                     fill-opacity=\"0.18\"><title>{l}</title></rect>",
                    (x1 - x0).max(1.0),
                    self.frame.ph,
                );
            }
            let room = self.frame.right() - x0 - 4.0;
            let chars = (room / frame::text_width("m", 10.0)).floor() as usize;
            if chars < 4 {
                continue;
            }
            let text = frame::shorten(&m.label, chars);
            let Some(row) = rows.place(x0 + 2.0, frame::text_width(&text, 10.0)) else {
                continue;
            };
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" style=\"fill:{c}\" \
                 stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
                x0 + 2.0,
                t + 10.0 + LabelRows::HEIGHT * row as f64,
                escape(&text),
            );
        }
    }

    /// The area under each cumulative series, above the one before it.
    fn push_stacked_areas(&self, s: &mut String, pts: &[Vec<(f64, f64, f64)>], pens: &[Pen]) {
        for (i, (p, pen)) in pts.iter().zip(pens).enumerate() {
            if p.len() < 2 {
                continue;
            }
            let below: Vec<(f64, f64)> = match i.checked_sub(1).and_then(|j| pts.get(j)) {
                Some(prev) if prev.len() == p.len() => {
                    prev.iter().map(|&(x, y, _)| (x, y)).collect()
                }
                _ => p.iter().map(|&(x, _, _)| (x, 0.0)).collect(),
            };
            // A colour an earlier layer has: a lighter shade of it.
            let _ = write!(
                s,
                "<polygon fill=\"{}\" fill-opacity=\"{}\" stroke=\"none\" points=\"",
                pen.colour,
                if pen.dash.is_some() { 0.12 } else { 0.35 }
            );
            let top = p.iter().map(|&(x, y, _)| (x, y));
            for (x, y) in top.chain(below.iter().rev().copied()) {
                let _ = write!(s, "{:.1},{:.1} ", self.sx(x), self.sy(y.min(self.plot.y1)));
            }
            s.push_str("\"/>");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_escape() {
        assert_eq!(nice_step(10.0, 5), 2.0);
        assert_eq!(nice_step(0.9, 5), 0.2);
        assert_eq!(nice_step(700.0, 8), 100.0);
        assert_eq!(nice_step(0.0, 5), 1.0);
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        assert!((percentile_pos(99.0) - 2.0).abs() < 1e-9);
        assert_eq!(percentile_pos(100.0), MAX_SPECTRUM_X);
        assert_eq!(percentile_tick_label(0), "0%");
        assert_eq!(percentile_tick_label(1), "90%");
        assert_eq!(percentile_tick_label(3), "99.9%");
        assert_eq!(fmt_tick(400_000.0, 200_000.0), "400k");
        assert_eq!(fmt_tick(1_500_000.0, 500_000.0), "1500k");
        assert_eq!(fmt_tick(3_000_000.0, 1_000_000.0), "3M");
        assert_eq!(fmt_tick(1500.0, 500.0), "1500");
        assert_eq!(fmt_tick(0.0, 0.2), "0.0");
        assert_eq!(fmt_tick(0.0, 2000.0), "0");
        assert_eq!(fmt_tick(0.4, 0.2), "0.4");
    }

    #[test]
    fn a_series_of_zeros_gets_a_plain_axis() {
        let zeros = vec![vec![(0.5, 0.0, 0.0), (1.5, 0.0, 0.0)]];
        let plot = Plot::fit(&zeros, XScale::Linear, Stacking::Lines);
        assert_eq!(plot.as_ref().map(|p| (p.y1, p.ystep)), Some((1.0, 0.2)));
        let small = vec![vec![(0.5, 0.00005, 0.0)]];
        let plot = Plot::fit(&small, XScale::Linear, Stacking::Lines);
        assert!(plot.is_some_and(|p| p.y1 >= 0.00005 && p.y1 < 0.0001));
    }

    #[test]
    fn renders_lines_and_empty() {
        let c = Chart {
            title: "tps <over> time".into(),
            x_label: "s".into(),
            y_label: "tps".into(),
            x_scale: XScale::Linear,
            series: vec![Series {
                name: "tps".into(),
                points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, f64::NAN)],
            }],
        };
        let svg = c.render();
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>"));
        assert!(svg.contains("<polyline"));
        assert!(svg.contains("tps &lt;over&gt; time"));
        assert!(!svg.contains("NaN"));
        let empty = Chart {
            series: vec![],
            ..c
        };
        assert!(empty.render().contains("no data"));
    }

    #[test]
    fn marks_shade_spans_draw_instants_and_keep_labels_apart() {
        let c = Chart {
            title: String::new(),
            x_label: "s".into(),
            y_label: "tps".into(),
            x_scale: XScale::Linear,
            series: vec![Series {
                name: "tps".into(),
                points: vec![(0.0, 10.0), (10.0, 20.0)],
            }],
        };
        let mark = |label: &str, from: f64, to: f64| Mark {
            label: label.into(),
            from,
            to,
            color: "#123456",
        };
        let svg = c.render_with(
            &[
                mark("outage 1", 2.0, 3.0),
                mark("primary down", 2.0, 2.0),
                mark("promoted", 2.1, 2.1),
                mark("backwards", 5.0, 4.0),
            ],
            Stacking::Lines,
        );
        assert_eq!(svg.matches("fill-opacity=\"0.18\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("stroke-dasharray=\"5 3\"").count(), 2, "{svg}");
        assert!(!svg.contains("backwards"), "{svg}");
        // Three labels close together: three rows.
        let ys: Vec<&str> = ["outage 1", "primary down", "promoted"]
            .iter()
            .map(|l| {
                let end = svg.find(&format!(">{l}</text>")).expect(l);
                let start = svg[..end].rfind(" y=\"").expect("y");
                &svg[start + 4..svg[start + 4..].find('"').unwrap() + start + 4]
            })
            .collect();
        assert!(ys[0] != ys[1] && ys[1] != ys[2] && ys[0] != ys[2], "{ys:?}");
    }
}
