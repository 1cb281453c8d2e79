//! A small inline SVG chart with logarithmic axes on both sides (time or size against
//! scale), in the frame of the run report's charts (same size, legend, colours, hover).

use pgrush_report::svg::frame::{Frame, pens, push_line, value_text};

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
        let pens = pens(self.series.iter().map(|s| s.name.as_str()));
        let xs = decades(pts.iter().flatten().map(|p| p.0));
        let ys = decades(pts.iter().flatten().map(|p| p.1));
        let y_ticks: Vec<String> = ys
            .map(|(lo, hi)| (lo..=hi).map(|d| (self.y_unit)(10f64.powi(d))).collect())
            .unwrap_or_default();
        let frame = Frame::new(&self.title, &y_ticks, &pens);
        let mut s = String::with_capacity(4096);
        frame.open(&mut s, &self.title, &self.x_label, &self.y_label);
        let (Some(xs), Some(ys)) = (xs, ys) else {
            frame.push_no_data(&mut s);
            frame.push_axes(&mut s, &self.x_label, &self.y_label);
            frame.close(&mut s);
            return s;
        };
        let plot = Plot {
            xs,
            ys,
            frame: &frame,
        };
        plot.push_grid(&mut s, self.y_unit);
        frame.push_axes(&mut s, &self.x_label, &self.y_label);
        for (pen, p) in pens.iter().zip(&pts) {
            let at: Vec<(f64, f64)> = p.iter().map(|&(x, y)| (plot.sx(x), plot.sy(y))).collect();
            let x_text: Vec<String> = p.iter().map(|&(x, _)| value_text(x)).collect();
            let v_text: Vec<String> = p.iter().map(|&(_, y)| (self.y_unit)(y)).collect();
            push_line(&mut s, pen, &at, (&x_text, &v_text), true);
        }
        frame.push_legend(&mut s, &pens);
        frame.close(&mut s);
        s
    }
}

/// The decades shown on each axis, in a frame.
struct Plot<'a> {
    xs: (i32, i32),
    ys: (i32, i32),
    frame: &'a Frame,
}

impl Plot<'_> {
    fn sx(&self, x: f64) -> f64 {
        let (lo, hi) = (f64::from(self.xs.0), f64::from(self.xs.1));
        self.frame.left + (x.log10() - lo) / (hi - lo) * self.frame.pw
    }

    fn sy(&self, y: f64) -> f64 {
        let (lo, hi) = (f64::from(self.ys.0), f64::from(self.ys.1));
        self.frame.bottom() - (y.log10() - lo) / (hi - lo) * self.frame.ph
    }

    /// Grid lines at 1, 2 and 5 of each decade; labels at the decades (and at 2 and 5
    /// on an x axis of one decade).
    fn push_grid(&self, s: &mut String, y_unit: fn(f64) -> String) {
        for d in self.ys.0..=self.ys.1 {
            for m in [1.0, 2.0, 5.0] {
                if d == self.ys.1 && m > 1.0 {
                    break;
                }
                let v = m * 10f64.powi(d);
                let label = if m == 1.0 { y_unit(v) } else { String::new() };
                self.frame.push_y_tick(s, self.sy(v), &label, m == 1.0);
            }
        }
        let one_decade = self.xs.1 - self.xs.0 == 1;
        for d in self.xs.0..=self.xs.1 {
            for m in [1.0, 2.0, 5.0] {
                if d == self.xs.1 && m > 1.0 {
                    break;
                }
                let v = m * 10f64.powi(d);
                let label = if m == 1.0 || one_decade {
                    format!("{v}")
                } else {
                    String::new()
                };
                self.frame.push_x_tick(s, self.sx(v), &label, m == 1.0);
            }
        }
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
