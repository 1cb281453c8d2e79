//! A small inline SVG chart with logarithmic axes on both sides (time or size against
//! scale), in the look of the run report's charts.

use std::fmt::Write as _;

use pgrush_report::svg::{escape, push_axes, svg_open};

/// Colours of successive series (the run report's palette).
const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const W: f64 = 900.0;
const H: f64 = 380.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 84.0;

/// One line: `(x, y)` points, both positive.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points in x order; points that are not positive and finite are left out.
    pub points: Vec<(f64, f64)>,
}

/// A log-log chart.
#[derive(Debug, Clone)]
pub struct LogChart {
    /// Title.
    pub title: String,
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// How a y tick value is written (`1 s`, `10 MB`).
    pub y_unit: fn(f64) -> String,
    /// The lines.
    pub series: Vec<Series>,
}

/// The decades `[lo, hi]` (powers of ten) that hold every value.
fn decades(values: impl Iterator<Item = f64>) -> Option<(i32, i32)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v.log10());
        hi = hi.max(v.log10());
    }
    if !lo.is_finite() {
        return None;
    }
    let (lo, mut hi) = (lo.floor() as i32, hi.ceil() as i32);
    if hi <= lo {
        hi = lo + 1;
    }
    Some((lo, hi))
}

impl LogChart {
    fn usable(&self) -> Vec<Vec<(f64, f64)>> {
        self.series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .copied()
                    .filter(|(x, y)| *x > 0.0 && *y > 0.0 && x.is_finite() && y.is_finite())
                    .collect()
            })
            .collect()
    }

    /// The chart as an `<svg>` element ("no data" when nothing is positive).
    pub fn render(&self) -> String {
        let pts = self.usable();
        let mut s = String::with_capacity(4096);
        s.push_str(&svg_open(&self.title, W, H));
        let xs = decades(pts.iter().flatten().map(|p| p.0));
        let ys = decades(pts.iter().flatten().map(|p| p.1));
        let (Some(xs), Some(ys)) = (xs, ys) else {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text></svg>",
                W / 2.0,
                H / 2.0
            );
            return s;
        };
        let plot = Plot { xs, ys };
        plot.push_grid(&mut s, self.y_unit);
        self.push_labels(&mut s);
        for (i, (series, p)) in self.series.iter().zip(&pts).enumerate() {
            plot.push_series(&mut s, i, &series.name, p);
        }
        s.push_str("</svg>");
        s
    }

    fn push_labels(&self, s: &mut String) {
        let area = (LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
        push_axes(s, area, &self.x_label, &self.y_label);
    }
}

/// The decades shown on each axis.
struct Plot {
    xs: (i32, i32),
    ys: (i32, i32),
}

impl Plot {
    fn sx(&self, x: f64) -> f64 {
        let (lo, hi) = (f64::from(self.xs.0), f64::from(self.xs.1));
        LEFT + (x.log10() - lo) / (hi - lo) * (W - LEFT - RIGHT)
    }

    fn sy(&self, y: f64) -> f64 {
        let (lo, hi) = (f64::from(self.ys.0), f64::from(self.ys.1));
        let ph = H - TOP - BOTTOM;
        TOP + ph - (y.log10() - lo) / (hi - lo) * ph
    }

    /// Grid lines at 1, 2 and 5 of each decade; labels at the decades.
    fn push_grid(&self, s: &mut String, y_unit: fn(f64) -> String) {
        let bottom = H - BOTTOM;
        for d in self.ys.0..=self.ys.1 {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powi(d);
                if d == self.ys.1 && m > 1.0 {
                    break;
                }
                let y = self.sy(v);
                let _ = write!(
                    s,
                    "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\"/>",
                    W - RIGHT,
                    if m == 1.0 { "#c8c8c8" } else { "#eeeeee" }
                );
                if m == 1.0 {
                    let _ = write!(
                        s,
                        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
                        LEFT - 6.0,
                        y + 4.0,
                        escape(&y_unit(v))
                    );
                }
            }
        }
        for d in self.xs.0..=self.xs.1 {
            for m in [1.0, 2.0, 5.0] {
                if d == self.xs.1 && m > 1.0 {
                    break;
                }
                let v = m * 10f64.powi(d);
                let x = self.sx(v);
                let _ = write!(
                    s,
                    "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{bottom}\" stroke=\"#eeeeee\"/>\
                     <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{v}</text>",
                    bottom + 18.0
                );
            }
        }
    }

    fn push_series(&self, s: &mut String, i: usize, name: &str, p: &[(f64, f64)]) {
        let color = PALETTE[i % PALETTE.len()];
        for &(x, y) in p {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                self.sx(x),
                self.sy(y)
            );
        }
        if p.len() > 1 {
            let _ = write!(
                s,
                "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"{color}\" points=\""
            );
            for &(x, y) in p {
                let _ = write!(s, "{:.1},{:.1} ", self.sx(x), self.sy(y));
            }
            s.push_str("\"/>");
        }
        let lx = LEFT + 10.0 + (i % 5) as f64 * 160.0;
        let ly = H - 28.0 + (i / 5) as f64 * 14.0;
        let _ = write!(
            s,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{color}\"/>\
             <text x=\"{:.1}\" y=\"{ly:.1}\" font-size=\"11\">{}</text>",
            ly - 6.0,
            lx + 16.0,
            escape(name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(v: f64) -> String {
        format!("{v} s")
    }

    #[test]
    fn decades_cover_the_values() {
        assert_eq!(decades([1.0, 10.0].into_iter()), Some((0, 1)));
        assert_eq!(decades([0.05, 3.0].into_iter()), Some((-2, 1)));
        assert_eq!(decades([5.0].into_iter()), Some((0, 1)));
        assert_eq!(decades(std::iter::empty()), None);
    }

    #[test]
    fn renders_points_lines_and_no_data() {
        let chart = LogChart {
            title: "time <by> scale".into(),
            x_label: "scale".into(),
            y_label: "seconds".into(),
            y_unit: seconds,
            series: vec![Series {
                name: "load".into(),
                points: vec![(1.0, 0.2), (10.0, 2.5), (50.0, 0.0)],
            }],
        };
        let svg = chart.render();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("time &lt;by&gt; scale"));
        assert_eq!(svg.matches("<circle").count(), 2, "the zero is left out");
        assert!(svg.contains("<polyline"));
        assert!(svg.contains(">0.1 s<") && svg.contains(">10 s<"), "{svg}");
        let empty = LogChart {
            series: Vec::new(),
            ..chart
        };
        assert!(empty.render().contains("no data"));
    }
}
