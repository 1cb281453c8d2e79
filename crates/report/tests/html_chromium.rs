//! The HTML report is self-contained and renders in headless Chromium: the screenshot is
//! not blank and the console shows no message (the inline hover script runs cleanly). Chromium is required (CI installs it).

mod common;

use common::Shape;
use flate2::read::ZlibDecoder;
use pgrush_testkit::chromium;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;

/// Runs headless Chromium on `page`, returning (console lines, decoded screenshot).
fn render(page: &Path, dir: &Path) -> (Vec<String>, Image) {
    let png = dir.join("shot.png");
    let profile = dir.join("profile");
    let mut child = chromium::headless_command(&profile)
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2000",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("stderr.log")).unwrap_or_else(|e| panic!("{e}")),
        ))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start chromium: {e}"));
    chromium::wait_for(&mut child);
    let log = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot: {e}\n{log}"));
    (console, decode_png(&bytes))
}

/// An RGB(A) 8-bit image.
struct Image {
    width: usize,
    height: usize,
    /// Pixels as RGB triples.
    rgb: Vec<[u8; 3]>,
}

impl Image {
    fn non_white_fraction(&self) -> f64 {
        let n = self
            .rgb
            .iter()
            .filter(|p| p.iter().any(|&c| c < 235))
            .count();
        n as f64 / self.rgb.len().max(1) as f64
    }

    fn distinct_colours(&self) -> usize {
        let mut v: Vec<[u8; 3]> = self.rgb.clone();
        v.sort_unstable();
        v.dedup();
        v.len()
    }
}

fn decode_png(data: &[u8]) -> Image {
    assert_eq!(&data[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut pos = 8;
    let (mut width, mut height, mut color_type) = (0usize, 0usize, 0u8);
    let mut idat = Vec::new();
    while pos + 8 <= data.len() {
        let len =
            u32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]) as usize;
        let kind = &data[pos + 4..pos + 8];
        let body = &data[pos + 8..pos + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes([body[0], body[1], body[2], body[3]]) as usize;
                height = u32::from_be_bytes([body[4], body[5], body[6], body[7]]) as usize;
                assert_eq!(body[8], 8, "bit depth");
                color_type = body[9];
                assert_eq!(body[12], 0, "interlaced PNG");
            }
            b"IDAT" => idat.extend_from_slice(body),
            _ => {}
        }
        pos += 12 + len;
    }
    let bpp = match color_type {
        2 => 3,
        6 => 4,
        other => panic!("unsupported PNG colour type {other}"),
    };
    let mut raw = Vec::new();
    ZlibDecoder::new(idat.as_slice())
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("bad PNG data: {e}"));
    let stride = width * bpp;
    assert_eq!(raw.len(), height * (stride + 1), "PNG size");
    let mut prev = vec![0u8; stride];
    let mut rgb = Vec::with_capacity(width * height);
    for y in 0..height {
        let filter = raw[y * (stride + 1)];
        let mut line = raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)].to_vec();
        for i in 0..stride {
            let a = if i >= bpp { line[i - bpp] } else { 0 };
            let b = prev[i];
            let c = if i >= bpp { prev[i - bpp] } else { 0 };
            let add = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("bad PNG filter {f}"),
            };
            line[i] = line[i].wrapping_add(add);
        }
        for px in line.chunks(bpp) {
            rgb.push([px[0], px[1], px[2]]);
        }
        prev = line;
    }
    Image { width, height, rgb }
}

fn html_for_test() -> String {
    let doc = common::document(&Shape {
        scripts: 2,
        rate: Some(100.0),
        failures: true,
        ..Shape::default()
    });
    pgrush_report::html::render(&doc)
}

#[test]
fn html_is_self_contained() {
    let html = html_for_test();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    // One inline script (values on hover); nothing loaded from anywhere.
    assert_eq!(html.matches("<script>").count(), 1);
    for forbidden in [
        "<script ", "src=", "href=", "url(", "@import", "https://", "<link",
    ] {
        assert!(!html.contains(forbidden), "{forbidden} in the page");
    }
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_ns.contains("http://"));
    // Throughput, latency over time, each script's average and p99 latency over time,
    // the spectrum.
    assert_eq!(html.matches("<svg").count(), 5, "five charts");
    assert!(html.matches("<polyline").count() >= 4);
    for needle in [
        "Throughput over time",
        "Latency percentiles over time",
        "Statements over time",
        "Script latency over time: p99",
        "percentile spectrum",
        "Per-command latencies",
        "shared_buffers",
        "128MB",
        "transactions actually processed",
        "latency p99.9",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid; -- 1",
        "the run lasted only 2.5 s; &lt;test&gt;",
        "transaction type: multiple scripts",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
}

#[test]
fn renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let page = dir.path().join("run.html");
    std::fs::write(&page, html_for_test()).unwrap_or_else(|e| panic!("{e}"));
    let shot_dir = dir.path().join("real");
    std::fs::create_dir(&shot_dir).unwrap_or_else(|e| panic!("{e}"));
    let (console, img) = render(&page, &shot_dir);
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert_eq!((img.width, img.height), (1200, 2000));
    let ink = img.non_white_fraction();
    assert!(ink > 0.03, "screenshot nearly blank: {ink}");
    assert!(img.distinct_colours() > 20, "too few colours");

    // Control: a nearly empty page that logs to the console is caught by both checks.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><p>.</p><script>console.error('control')</script></body></html>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let control_dir = dir.path().join("control");
    std::fs::create_dir(&control_dir).unwrap_or_else(|e| panic!("{e}"));
    let (console, img) = render(&control, &control_dir);
    assert!(
        console.iter().any(|l| l.contains("control")),
        "console capture does not work: {console:?}"
    );
    assert!(img.non_white_fraction() < 0.01);
}
