//! Horizontal bar charts in the frame's look (the sweep's cells, the ops steps of one
//! or two scales): a label column sized to the longest label (long labels end in "…",
//! whole on hover), one bar per value with an optional interval whisker, the value's
//! text right of the bar, a value axis with its title, and one colour per series name.

use super::frame::{Pen, SMALL_FONT, WIDTH, pens, shorten, text_width};
use super::{escape, fmt_tick, nice_step};
use std::fmt::Write as _;

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The text left of the bar.
    pub label: String,
    /// The series it belongs to: its colour and legend entry.
    pub series: String,
    /// Its length.
    pub value: f64,
    /// An interval drawn as a whisker, if any.
    pub interval: Option<(f64, f64)>,
    /// The value as written right of the bar.
    pub text: String,
}

/// A bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// The value axis title.
    pub value_label: String,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
    /// A gap after every `group` bars (0: none).
    pub group: usize,
    /// Whether to show a legend of the series (when the labels do not name them).
    pub legend: bool,
}

const BAR: f64 = 18.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 52.0;
/// Longest legend entry shown whole.
const LEGEND_CHARS: usize = 40;
/// Longest label shown whole.
const LABEL_CHARS: usize = 56;

impl BarChart {
    /// The chart as an `<svg class="chart">` element.
    pub fn render(&self) -> String {
        let labels: Vec<String> = self
            .bars
            .iter()
            .map(|b| shorten(&b.label, LABEL_CHARS))
            .collect();
        let label_w = labels
            .iter()
            .map(|l| text_width(l, SMALL_FONT))
            .fold(0.0, f64::max)
            + 16.0;
        let text_w = self
            .bars
            .iter()
            .map(|b| text_width(&b.text, SMALL_FONT))
            .fold(0.0, f64::max)
            + 16.0;
        let mut names: Vec<&str> = Vec::new();
        for b in &self.bars {
            if !names.contains(&b.series.as_str()) {
                names.push(&b.series);
            }
        }
        let pens = pens(names.iter().copied());
        let legend_w = if self.legend {
            pens.iter()
                .map(|p| 34.0 + text_width(&shorten(&p.name, LEGEND_CHARS), SMALL_FONT))
                .fold(0.0, f64::max)
        } else {
            0.0
        };
        let max = self
            .bars
            .iter()
            .map(|b| b.interval.map_or(b.value, |(_, hi)| hi.max(b.value)))
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max);
        let step = nice_step(max.max(f64::MIN_POSITIVE), 8);
        let top_value = ((max / step).ceil() * step).max(step);
        let pw = (WIDTH - label_w - text_w - legend_w - 8.0).max(200.0);
        let gaps = self
            .bars
            .len()
            .saturating_sub(1)
            .checked_div(self.group)
            .unwrap_or(0);
        let ph = self.bars.len() as f64 * BAR + gaps as f64 * BAR / 2.0;
        let legend_h = pens.len() as f64 * 18.0 + 8.0;
        let height = (TOP + ph + BOTTOM).max(if self.legend { TOP + legend_h } else { 0.0 });
        let sx = |v: f64| label_w + v.max(0.0) / top_value * pw;
        let mut s = String::with_capacity(4096);
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {WIDTH} {height}\" \
             width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{a}\">\
             <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>",
            a = escape(&self.value_label)
        );
        let n = (top_value / step).round() as u32;
        for k in 0..=n {
            let v = f64::from(k) * step;
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{b:.1}\" stroke=\"#eeeeee\"/>\
                 <text x=\"{x:.1}\" y=\"{ty:.1}\" text-anchor=\"middle\" font-size=\"{SMALL_FONT}\">{t}</text>",
                x = sx(v),
                b = TOP + ph,
                ty = TOP + ph + 18.0,
                t = fmt_tick(v, step)
            );
        }
        let mut y = TOP;
        for (i, (bar, label)) in self.bars.iter().zip(&labels).enumerate() {
            if i > 0 && self.group > 0 && i % self.group == 0 {
                y += BAR / 2.0;
            }
            let pen = pens.iter().find(|p| p.name == bar.series);
            // A colour an earlier series has: a lighter shade of it.
            let colour = pen.map_or("#1f77b4", |p| p.colour);
            let shade = pen.is_some_and(|p| p.dash.is_some());
            push_bar(&mut s, bar, label, (colour, shade), (y, &sx));
            y += BAR;
        }
        let _ = write!(
            s,
            "<line x1=\"{l}\" y1=\"{TOP}\" x2=\"{l}\" y2=\"{b:.1}\" stroke=\"#333\"/>\
             <line x1=\"{l}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"#333\"/>\
             <text x=\"{cx:.1}\" y=\"{xl:.1}\" text-anchor=\"middle\" font-size=\"13\">{t}</text>",
            l = label_w,
            b = TOP + ph,
            r = label_w + pw,
            cx = label_w + pw / 2.0,
            xl = TOP + ph + 42.0,
            t = escape(&self.value_label)
        );
        if self.legend {
            push_legend(&mut s, &pens, WIDTH - legend_w + 8.0);
        }
        s.push_str("</svg>");
        s
    }
}

/// The legend: one swatch and name per series, in a column from `x`.
fn push_legend(s: &mut String, pens: &[Pen], x: f64) {
    for (i, p) in pens.iter().enumerate() {
        let ly = TOP + 10.0 + i as f64 * 18.0;
        let _ = write!(
            s,
            "<g class=\"legend\"><rect x=\"{x:.1}\" y=\"{:.1}\" width=\"14\" height=\"10\" fill=\"{}\"{}/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{SMALL_FONT}\">{}</text></g>",
            ly - 5.0,
            p.colour,
            opacity(p.dash.is_some()),
            x + 20.0,
            ly + 4.0,
            escape(&shorten(&p.name, LEGEND_CHARS))
        );
    }
}

/// One bar at the top `y`, with its label, whisker, value text and hover title.
fn push_bar(
    s: &mut String,
    bar: &Bar,
    label: &str,
    (colour, shade): (&str, bool),
    at: (f64, &dyn Fn(f64) -> f64),
) {
    let (y, sx) = at;
    let x0 = sx(0.0);
    let end = sx(bar.value);
    let mid = y + BAR / 2.0;
    let _ = write!(
        s,
        "<g class=\"bar\"><title>{full}: {text}</title>\
         <text x=\"{lx:.1}\" y=\"{ty:.1}\" text-anchor=\"end\" font-size=\"{SMALL_FONT}\">{label}</text>\
         <rect x=\"{x0:.1}\" y=\"{ry:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{colour}\"{o}/>",
        full = escape(&bar.label),
        text = escape(&bar.text),
        lx = x0 - 8.0,
        ty = mid + 4.0,
        label = escape(label),
        ry = y + 2.0,
        w = (end - x0).max(0.0),
        h = BAR - 4.0,
        o = opacity(shade)
    );
    let mut right = end;
    if let Some((lo, hi)) = bar.interval {
        let _ = write!(
            s,
            "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{mid:.1}\" y2=\"{mid:.1}\" stroke=\"#222\"/>",
            sx(lo),
            sx(hi)
        );
        right = right.max(sx(hi));
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{SMALL_FONT}\" fill=\"#444\">{}</text></g>",
        right + 6.0,
        mid + 4.0,
        escape(&bar.text)
    );
}

/// The lighter shade of a repeated colour.
fn opacity(shade: bool) -> &'static str {
    if shade { " fill-opacity=\"0.5\"" } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_bound() {
        let chart = BarChart {
            value_label: "tps".into(),
            bars: vec![
                Bar {
                    label: "a<b".into(),
                    series: "a".into(),
                    value: 50.0,
                    interval: Some((40.0, 100.0)),
                    text: "50 [40, 100]".into(),
                },
                Bar {
                    label: "c".into(),
                    series: "c".into(),
                    value: 25.0,
                    interval: None,
                    text: "25".into(),
                },
            ],
            group: 0,
            legend: false,
        };
        let svg = chart.render();
        assert!(svg.contains(">a&lt;b</text>"), "{svg}");
        assert!(svg.contains("50 [40, 100]</text>"));
        assert_eq!(svg.matches("<rect ").count(), 3, "background and two bars");
        assert!(
            svg.contains(">100</text>"),
            "the axis ends at the upper bound"
        );
    }
}
