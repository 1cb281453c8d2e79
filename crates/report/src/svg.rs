//! Minimal inline SVG line charts (no dependencies, no scripts): axes with "nice" ticks,
//! one polyline per series, a legend. Used by the HTML report.

use std::fmt::Write as _;

/// Colours of successive series.
pub const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

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

/// A span of the x axis to shade (a checkpoint, an autovacuum run), with its label.
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
    /// Title above the plot.
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

const W: f64 = 900.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 70.0;
/// Largest percentile the spectrum axis shows (99.9999 %).
const MAX_SPECTRUM_X: f64 = 6.0;

/// The opening of a chart: the `<svg>` element of `width` x `height` px, a white
/// background and the centred, escaped `title` (the caller closes it with `</svg>`).
pub fn svg_open(title: &str, width: f64, height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{t}\">\
         <rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\
         <text x=\"{cx}\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{t}</text>",
        t = escape(title),
        cx = width / 2.0
    )
}

/// Writes a chart's two axes (left and bottom edges of the plot area, given as `(left,
/// top, width, height)`) and their labels: the x label centred below, the y label rotated
/// along the left edge.
pub fn push_axes(s: &mut String, area: (f64, f64, f64, f64), x_label: &str, y_label: &str) {
    let (left, top, pw, ph) = area;
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{b:.1}\" stroke=\"#333\"/>\
         <line x1=\"{left}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"#333\"/>\
         <text x=\"{cx:.1}\" y=\"{xl:.1}\" text-anchor=\"middle\" font-size=\"12\">{xlab}</text>\
         <text x=\"16\" y=\"{cy:.1}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 16 {cy:.1})\">{ylab}</text>",
        b = top + ph,
        r = left + pw,
        cx = left + pw / 2.0,
        xl = top + ph + 36.0,
        cy = top + ph / 2.0,
        xlab = escape(x_label),
        ylab = escape(y_label)
    );
}

/// Escapes text for HTML/SVG content and attribute values.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            _ => s.push(c),
        }
    }
    s
}

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

fn fmt_tick(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
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
        let mut s = String::with_capacity(4096);
        s.push_str(&svg_open(&self.title, W, H));
        let Some(plot) = Plot::fit(&pts, self.x_scale) else {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text></svg>",
                W / 2.0,
                H / 2.0
            );
            return s;
        };
        plot.push_y_grid(&mut s);
        match self.x_scale {
            XScale::Linear => plot.push_linear_x_ticks(&mut s),
            XScale::Percentile => plot.push_percentile_x_ticks(&mut s),
        }
        if self.x_scale == XScale::Linear {
            plot.push_marks(&mut s, marks);
        }
        if stacking == Stacking::Stacked {
            push_stacked_areas(&mut s, &plot, &pts);
        }
        self.push_axes(&mut s, &plot);
        self.push_series(&mut s, &plot, &pts);
        s.push_str("</svg>");
        s
    }

    /// Each series' points with x placed on the axis, non-finite points dropped.
    fn placed_points(&self) -> Vec<Vec<(f64, f64)>> {
        self.series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .map(|&(x, y)| (self.x_pos(x), y))
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .collect()
            })
            .collect()
    }

    /// The two axes and their labels.
    fn push_axes(&self, s: &mut String, plot: &Plot) {
        push_axes(
            s,
            (LEFT, TOP, plot.pw, plot.ph),
            &self.x_label,
            &self.y_label,
        );
    }

    /// Each series as a polyline (a dot when it has one point), and its legend entry.
    fn push_series(&self, s: &mut String, plot: &Plot, pts: &[Vec<(f64, f64)>]) {
        for (i, (series, p)) in self.series.iter().zip(pts).enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            if p.len() == 1 {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                    plot.sx(p[0].0),
                    plot.sy(p[0].1)
                );
            } else if !p.is_empty() {
                s.push_str("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"");
                s.push_str(color);
                s.push_str("\" points=\"");
                for &(x, y) in p {
                    let _ = write!(s, "{:.1},{:.1} ", plot.sx(x), plot.sy(y));
                }
                s.push_str("\"/>");
            }
            let lx = LEFT + 10.0 + (i % 6) as f64 * 140.0;
            let ly = H - 14.0 - (i / 6) as f64 * 14.0;
            let _ = write!(
                s,
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{color}\"/>\
                 <text x=\"{:.1}\" y=\"{ly:.1}\" font-size=\"11\">{}</text>",
                ly - 6.0,
                lx + 16.0,
                escape(&series.name)
            );
        }
    }
}

/// The plot area's data ranges and size: where data values land in the SVG.
struct Plot {
    /// Smallest x shown (placed).
    x0: f64,
    /// Largest x shown (placed).
    x1: f64,
    /// Smallest y shown (always 0).
    y0: f64,
    /// Largest y shown: a whole number of `ystep`s.
    y1: f64,
    /// The y tick step.
    ystep: f64,
    /// Plot width.
    pw: f64,
    /// Plot height.
    ph: f64,
}

/// The area under each cumulative series, above the one before it.
fn push_stacked_areas(s: &mut String, plot: &Plot, pts: &[Vec<(f64, f64)>]) {
    for (i, p) in pts.iter().enumerate() {
        if p.len() < 2 {
            continue;
        }
        let below: Vec<(f64, f64)> = match i.checked_sub(1).and_then(|j| pts.get(j)) {
            Some(prev) if prev.len() == p.len() => prev.clone(),
            _ => p.iter().map(|&(x, _)| (x, 0.0)).collect(),
        };
        let _ = write!(
            s,
            "<polygon fill=\"{}\" fill-opacity=\"0.35\" stroke=\"none\" points=\"",
            PALETTE[i % PALETTE.len()]
        );
        for &(x, y) in p.iter().chain(below.iter().rev()) {
            let _ = write!(s, "{:.1},{:.1} ", plot.sx(x), plot.sy(y));
        }
        s.push_str("\"/>");
    }
}

impl Plot {
    /// The shaded spans, clipped to the plot.
    fn push_marks(&self, s: &mut String, marks: &[Mark]) {
        for m in marks {
            let from = m.from.max(self.x0);
            let to = m.to.min(self.x1);
            if to <= from {
                continue;
            }
            let (x0, x1) = (self.sx(from), self.sx(to));
            let _ = write!(
                s,
                "<rect x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{c}\" \
                 fill-opacity=\"0.18\"><title>{t}</title></rect>\
                 <text x=\"{x0:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"{c}\">{t}</text>",
                (x1 - x0).max(1.0),
                self.ph,
                TOP + 10.0,
                c = m.color,
                t = escape(&m.label)
            );
        }
    }

    /// The ranges that fit the placed points; `None` when there are none.
    fn fit(pts: &[Vec<(f64, f64)>], x_scale: XScale) -> Option<Self> {
        let all: Vec<&(f64, f64)> = pts.iter().flatten().collect();
        if all.is_empty() {
            return None;
        }
        let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut y1 = f64::NEG_INFINITY;
        for &&(x, y) in &all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        if x_scale == XScale::Percentile {
            x0 = 0.0;
            x1 = x1.ceil().max(1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let ystep = nice_step(y1.max(1e-9), 5);
        Some(Plot {
            x0,
            x1,
            y0: 0.0,
            y1: ((y1 / ystep).ceil() * ystep).max(ystep),
            ystep,
            pw: W - LEFT - RIGHT,
            ph: H - TOP - BOTTOM,
        })
    }

    /// The SVG x of a placed x value.
    fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * self.pw
    }

    /// The SVG y of a y value.
    fn sy(&self, y: f64) -> f64 {
        TOP + self.ph - (y - self.y0) / (self.y1 - self.y0) * self.ph
    }

    /// The horizontal grid lines and the y tick labels.
    fn push_y_grid(&self, s: &mut String) {
        let mut v = self.y0;
        while v <= self.y1 + self.ystep * 1e-6 {
            let y = self.sy(v);
            let _ = write!(
                s,
                "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e0e0e0\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
                LEFT + self.pw,
                LEFT - 6.0,
                y + 4.0,
                fmt_tick(v, self.ystep)
            );
            v += self.ystep;
        }
    }

    /// The x ticks of a linear axis, at "nice" steps.
    fn push_linear_x_ticks(&self, s: &mut String) {
        let ph = self.ph;
        let xstep = nice_step(self.x1 - self.x0, 8);
        let mut v = (self.x0 / xstep).ceil() * xstep;
        while v <= self.x1 + xstep * 1e-6 {
            let x = self.sx(v);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
                TOP + ph,
                TOP + ph + 5.0,
                TOP + ph + 18.0,
                fmt_tick(v, xstep)
            );
            v += xstep;
        }
    }

    /// The x ticks (full-height grid lines) of a percentile axis: 0 %, 90 %, 99 %, 99.9 %, …
    fn push_percentile_x_ticks(&self, s: &mut String) {
        let ph = self.ph;
        let mut k = 0.0;
        while k <= self.x1 + 1e-9 {
            let label = percentile_tick_label(k as u32);
            let x = self.sx(k);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e0e0e0\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{label}</text>",
                TOP,
                TOP + ph + 5.0,
                TOP + ph + 18.0
            );
            k += 1.0;
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
}
