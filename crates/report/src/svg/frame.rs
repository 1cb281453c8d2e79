//! The frame every chart of every page shares: the full-width `<svg>` element, its
//! optional title, the plot area sized so that the y tick labels and the legend (at the
//! right of the plot, one entry a line) always fit, the axes with their titles, the
//! legend, and the series drawn with the data the hover script reads.

use crate::palette::{REPEATED_COLOUR_DASH, series_colour, series_dash};
use std::fmt::Write as _;

/// Width of every chart (the page scales it to its own width).
pub const WIDTH: f64 = 1300.0;
/// Height of every plot area.
const PLOT_HEIGHT: f64 = 300.0;
/// Room below the plot: tick labels and the x axis title.
const BOTTOM: f64 = 52.0;
/// Room between the plot and the legend: half the last x tick label ("99.9999%").
const RIGHT_GAP: f64 = 48.0;
/// Width of the band left of the y tick labels that holds the rotated y axis title.
const Y_TITLE_BAND: f64 = 30.0;
/// Height of one legend line.
const LEGEND_LINE: f64 = 18.0;
/// Width of the legend column: the same in every chart, so that every plot of a page
/// has the same width and its ticks the same spacing (longer names end in "…").
const LEGEND_W: f64 = 250.0;
/// Smallest left edge of the plot (wider y tick labels move it right).
const LEFT_MIN: f64 = 90.0;
/// Font size of tick labels and legend entries.
pub const SMALL_FONT: f64 = 12.0;

/// A conservative estimate of the width of `text` at `font_px` (sans-serif), so that
/// laid-out text never overflows its box.
pub fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars()
        .map(|c| {
            if c.is_ascii_uppercase() || c == 'm' || c == 'w' || c == '%' {
                0.86
            } else if c == ' ' || c == '.' || c == ',' || c == ':' || c == 'i' || c == 'l' {
                0.36
            } else {
                0.64
            }
        })
        .sum::<f64>()
        * font_px
}

/// `text` cut at a word boundary to at most `max` characters, with "…" when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let cut = match head.rfind(' ') {
        Some(i) if i >= head.len() / 2 => &head[..i],
        _ => head.as_str(),
    };
    // Nor a dangling operator or comma before the ellipsis ("tbalance =…").
    let word = cut.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == ')'));
    format!("{}…", if word.is_empty() { cut } else { word })
}

/// `text` shortened (at a word, with "…") to fit `width` px at the small font.
pub fn fit(text: &str, width: f64) -> String {
    let mut max = text.chars().count();
    let mut shown = text.to_string();
    while max > 4 && text_width(&shown, SMALL_FONT) > width {
        max -= 1;
        shown = shorten(text, max);
    }
    shown
}

/// One legend entry and the way its series is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Pen {
    /// The series name.
    pub name: String,
    /// Its colour ([`series_colour`]).
    pub colour: &'static str,
    /// Its dash pattern, if any.
    pub dash: Option<&'static str>,
}

/// The pens of a chart's series: each name's colour, dashed when it is the average or
/// when an earlier series of the chart has the same colour.
pub fn pens<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Pen> {
    let mut out: Vec<Pen> = Vec::new();
    for name in names {
        let colour = series_colour(name);
        let repeated = out.iter().any(|p| p.colour == colour);
        out.push(Pen {
            name: name.to_string(),
            colour,
            dash: series_dash(name).or(repeated.then_some(REPEATED_COLOUR_DASH)),
        });
    }
    out
}

/// Where a chart's parts go.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Left edge of the plot.
    pub left: f64,
    /// Top edge of the plot.
    pub top: f64,
    /// Plot width.
    pub pw: f64,
    /// Plot height.
    pub ph: f64,
    /// Height of the whole chart.
    pub height: f64,
    /// Left edge of the legend.
    legend_x: f64,
}

impl Frame {
    /// The frame of a chart with a title (none when empty), these y tick labels and
    /// these legend names.
    pub fn new(title: &str, y_ticks: &[String], legend: &[Pen]) -> Self {
        let widest_tick = y_ticks
            .iter()
            .map(|t| text_width(t, SMALL_FONT))
            .fold(0.0, f64::max);
        let left = (Y_TITLE_BAND + widest_tick + 10.0).ceil().max(LEFT_MIN);
        let top = if title.is_empty() { 16.0 } else { 40.0 };
        let pw = (WIDTH - left - RIGHT_GAP - LEGEND_W).floor();
        let legend_h = legend.len() as f64 * LEGEND_LINE + 8.0;
        Frame {
            left,
            top,
            pw,
            ph: PLOT_HEIGHT,
            height: (top + PLOT_HEIGHT + BOTTOM).max(top + legend_h),
            legend_x: left + pw + RIGHT_GAP,
        }
    }

    /// The bottom edge of the plot.
    pub fn bottom(&self) -> f64 {
        self.top + self.ph
    }

    /// The right edge of the plot.
    pub fn right(&self) -> f64 {
        self.left + self.pw
    }

    /// The opening `<svg class="chart">` (full width, white) with the title when there
    /// is one; `x_label` names the x of the hover box.
    pub fn open(&self, s: &mut String, title: &str, x_label: &str, y_label: &str) {
        let aria = if title.is_empty() { y_label } else { title };
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {WIDTH} {h}\" \
             width=\"{WIDTH}\" height=\"{h}\" role=\"img\" aria-label=\"{a}\" data-x-label=\"{x}\">\
             <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{h}\" fill=\"#ffffff\"/>",
            h = self.height,
            a = escape(aria),
            x = escape(x_label)
        );
        if !title.is_empty() {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{}</text>",
                WIDTH / 2.0,
                escape(title)
            );
        }
    }

    /// A "no data" message in place of the plot.
    pub fn push_no_data(&self, s: &mut String) {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#666\">no data</text>",
            self.left + self.pw / 2.0,
            self.top + self.ph / 2.0
        );
    }

    /// The axes (left and bottom edges of the plot) and their titles.
    pub fn push_axes(&self, s: &mut String, x_label: &str, y_label: &str) {
        let (b, cy) = (self.bottom(), self.top + self.ph / 2.0);
        let _ = write!(
            s,
            "<line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b:.1}\" stroke=\"#333\"/>\
             <line x1=\"{l}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"#333\"/>\
             <text x=\"{cx:.1}\" y=\"{xl:.1}\" text-anchor=\"middle\" font-size=\"13\">{xlab}</text>\
             <text x=\"16\" y=\"{cy:.1}\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 16 {cy:.1})\">{ylab}</text>",
            l = self.left,
            t = self.top,
            r = self.right(),
            cx = self.left + self.pw / 2.0,
            xl = b + 42.0,
            xlab = escape(x_label),
            ylab = escape(&shorten(y_label, 48))
        );
    }

    /// A horizontal grid line at `y` with its tick label.
    pub fn push_y_tick(&self, s: &mut String, y: f64, label: &str, strong: bool) {
        let _ = write!(
            s,
            "<line x1=\"{l}\" y1=\"{y:.1}\" x2=\"{r:.1}\" y2=\"{y:.1}\" stroke=\"{c}\"/>",
            l = self.left,
            r = self.right(),
            c = if strong { "#d0d0d0" } else { "#eeeeee" }
        );
        if !label.is_empty() {
            let _ = write!(
                s,
                "<text class=\"yt\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"{SMALL_FONT}\">{}</text>",
                self.left - 6.0,
                y + 4.0,
                escape(label)
            );
        }
    }

    /// A vertical grid line at `x` with its tick label below the plot.
    pub fn push_x_tick(&self, s: &mut String, x: f64, label: &str, strong: bool) {
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{t}\" x2=\"{x:.1}\" y2=\"{b:.1}\" stroke=\"{c}\"/>",
            t = self.top,
            b = self.bottom(),
            c = if strong { "#d0d0d0" } else { "#eeeeee" }
        );
        if !label.is_empty() {
            let _ = write!(
                s,
                "<text class=\"xt\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"{SMALL_FONT}\">{}</text>",
                self.bottom() + 18.0,
                escape(label)
            );
        }
    }

    /// The legend, right of the plot: one line per pen, its line style and its name.
    pub fn push_legend(&self, s: &mut String, pens: &[Pen]) {
        for (i, pen) in pens.iter().enumerate() {
            let y = self.top + 10.0 + i as f64 * LEGEND_LINE;
            let shown = fit(&pen.name, LEGEND_W - 32.0);
            let _ = write!(
                s,
                "<g class=\"legend\"><line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{x2:.1}\" y2=\"{y:.1}\" \
                 stroke=\"{c}\" stroke-width=\"3\"{d}/><text x=\"{tx:.1}\" y=\"{ty:.1}\" \
                 font-size=\"{SMALL_FONT}\">{t}{full}</text></g>",
                x = self.legend_x,
                x2 = self.legend_x + 18.0,
                c = pen.colour,
                d = dash_attr(pen.dash),
                tx = self.legend_x + 24.0,
                ty = y + 4.0,
                t = escape(&shown),
                full = if shown == pen.name {
                    String::new()
                } else {
                    format!("<title>{}</title>", escape(&pen.name))
                }
            );
        }
    }

    /// Ends the chart: the hover guide line and `</svg>`.
    pub fn close(&self, s: &mut String) {
        let _ = write!(
            s,
            "<line class=\"guide\" x1=\"0\" y1=\"{t}\" x2=\"0\" y2=\"{b:.1}\" visibility=\"hidden\"/></svg>",
            t = self.top,
            b = self.bottom()
        );
    }
}

/// ` stroke-dasharray="…"` for a dash pattern, nothing for a solid line.
pub fn dash_attr(dash: Option<&str>) -> String {
    dash.map(|d| format!(" stroke-dasharray=\"{d}\""))
        .unwrap_or_default()
}

/// One series drawn at its SVG positions `points`, with the text of each point's x and
/// value for the hover box: a polyline (dots too when `dots`; a dot when one point).
pub fn push_line(
    s: &mut String,
    pen: &Pen,
    points: &[(f64, f64)],
    hover: (&[String], &[String]),
    dots: bool,
) {
    if points.is_empty() {
        return;
    }
    let px: Vec<String> = points.iter().map(|p| format!("{:.1}", p.0)).collect();
    let data = format!(
        " data-name=\"{}\" data-c=\"{}\" data-px=\"{}\" data-x=\"{}\" data-v=\"{}\"",
        escape(&pen.name),
        pen.colour,
        px.join(" "),
        escape(&hover.0.join("|")),
        escape(&hover.1.join("|"))
    );
    let _ = write!(s, "<g class=\"series\"{data}>");
    if points.len() > 1 {
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"{}\"{} points=\"",
            pen.colour,
            dash_attr(pen.dash)
        );
        for &(x, y) in points {
            let _ = write!(s, "{x:.1},{y:.1} ");
        }
        s.push_str("\"/>");
    }
    if dots || points.len() == 1 {
        for &(x, y) in points {
            let _ = write!(
                s,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{}\"/>",
                pen.colour
            );
        }
    }
    s.push_str("</g>");
}

/// A value for the hover box: four significant digits, no exponent.
pub fn value_text(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.digits$}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_at_words_with_an_ellipsis() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(
            shorten(
                "UPDATE pgbench_tellers SET tbalance = tbalance + :delta",
                30
            ),
            "UPDATE pgbench_tellers SET…"
        );
        assert_eq!(shorten("abcdefghijkl", 5), "abcd…");
    }

    #[test]
    fn repeated_colours_are_dashed() {
        let p = pens(["p99", "failures/s", "average"]);
        assert_eq!(p[0].colour, p[1].colour);
        assert_eq!(p[0].dash, None);
        assert_eq!(p[1].dash, Some(REPEATED_COLOUR_DASH));
        assert_eq!(p[2].dash, Some("7 4"));
        assert_eq!(value_text(1234.5678), "1235");
        assert_eq!(value_text(0.012345), "0.01235");
    }
}
