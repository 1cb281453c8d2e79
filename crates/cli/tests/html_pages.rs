//! Every HTML page (run, comparison, merged-style run with server statistics and the client
//! machine's load, sweep, ops) as headless Chromium lays it out: a measuring script added to
//! the page writes what a reader would see into the DOM (`--dump-dom`): text outside its
//! chart, text over text, each series' colour, the stacked waits axis, the chart widths,
//! chart titles that repeat their heading, the x ticks and the hover box. Chromium is
//! required (`scripts/install-deps`).

#[path = "../../report/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;

use pgrush_lab::ops::{Details, OpsDocument, OpsSettings, ScaleResult, StepKind, StepResult};
use pgrush_lab::sweep::SweepSummary;
use pgrush_report::document::RunDocument;
use pgrush_report::machine::{MachineDoc, MachineIntervalDoc};
use pgrush_stats::server::{ServerInterval, ServerTimeline, WaitShare};
use serde_json::{Value, json};

/// Measures the laid-out page and writes the result as JSON into `<pre id="measure">`.
/// It reads plain SVG, not pgrush's own markup: a legend entry is a start-anchored text
/// right after its swatch (a small rect or a line), a y tick an end-anchored number, an x
/// tick a centred number or percentage, a chart title a bold text.
const MEASURE: &str = r#"<script>(function(){
var out={outside:[],overlaps:[],colours:{},charts:[],repeats:[],hover:null};
function inside(r,b){return r.left>=b.left-0.5&&r.right<=b.right+0.5&&r.top>=b.top-0.5&&r.bottom<=b.bottom+0.5;}
function meet(a,b){return a.left<b.right-1&&b.left<a.right-1&&a.top<b.bottom-1&&b.top<a.bottom-1;}
function anchor(t){return t.getAttribute('text-anchor')||'start';}
function numeric(t){return /^-?[0-9.]+%?$/.test(t.textContent.trim());}
var width=document.body.clientWidth;
document.querySelectorAll('svg').forEach(function(svg,ci){
  var box=svg.getBoundingClientRect();
  var texts=[].slice.call(svg.querySelectorAll('text')).filter(function(t){return t.getBoundingClientRect().width>0;});
  texts.forEach(function(t){if(!inside(t.getBoundingClientRect(),box))out.outside.push(ci+': '+t.textContent);});
  for(var i=0;i<texts.length;i++)for(var j=i+1;j<texts.length;j++){
    if(meet(texts[i].getBoundingClientRect(),texts[j].getBoundingClientRect()))out.overlaps.push(ci+': '+texts[i].textContent+' / '+texts[j].textContent);}
  texts.forEach(function(t){
    var sw=t.previousElementSibling;if(anchor(t)!=='start'||!sw||t.closest('g.bar'))return;
    var cs=getComputedStyle(sw);var c=null;
    if(sw.tagName==='rect'&&sw.getBBox().height<=12)c=cs.fill;
    if(sw.tagName==='line'&&sw.getAttribute('y1')===sw.getAttribute('y2'))c=cs.stroke;
    if(c)(out.colours[t.textContent]=out.colours[t.textContent]||[]).push(c+'|'+cs.strokeDasharray);});
  var xt=texts.filter(function(t){return anchor(t)==='middle'&&numeric(t);}).map(function(t){return [t.textContent,t.getBoundingClientRect().left];});
  var yt=texts.filter(function(t){return anchor(t)==='end'&&numeric(t);}).map(function(t){return t.textContent;});
  out.charts.push({label:svg.getAttribute('aria-label'),width:box.width/width,xt:xt,yt:yt});
  var title=svg.querySelector('text[font-weight="bold"]');var prev=svg.previousElementSibling;
  if(title&&prev&&prev.tagName==='H2'&&prev.textContent.trim()===title.textContent.trim())out.repeats.push(title.textContent);
});
var lat=[].filter.call(document.querySelectorAll('svg'),function(s){return /latency \(ms\)/.test(s.textContent)&&/time since start/.test(s.textContent);})[0];
if(lat){var b=lat.getBoundingClientRect();
  lat.dispatchEvent(new MouseEvent('mousemove',{clientX:b.left+b.width*0.4,clientY:b.top+b.height/2,bubbles:true}));
  var tip=document.getElementById('tip');out.hover=tip&&!tip.hidden?tip.innerText:null;}
var pre=document.createElement('pre');pre.id='measure';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();</script>"#;

/// The page's `<style>` element.
fn style(html: &str) -> &str {
    let start = html.find("<style>").expect("<style>");
    let end = html.find("</style>").expect("</style>");
    &html[start..end]
}

/// The style of the run page, which every page shares.
fn run_page_style() -> String {
    style(&run_page(&[("CPU", 1.0)]).1).to_string()
}

/// What the measuring script saw on a page.
struct Measured {
    json: Value,
}

impl Measured {
    /// Lays `html` out in Chromium (with the measuring script) and reads the result.
    /// `PGRUSH_KEEP_PAGES=DIR` keeps each page (without the script) in `DIR` to look at.
    fn page(name: &str, html: &str) -> Self {
        if let Some(keep) = std::env::var_os("PGRUSH_KEEP_PAGES") {
            let path = std::path::Path::new(&keep).join(format!("{name}.html"));
            std::fs::write(&path, html).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let page = dir.path().join(format!("{name}.html"));
        let body_end = html.rfind("</body>").expect("</body>");
        let measured = format!("{}{MEASURE}{}", &html[..body_end], &html[body_end..]);
        std::fs::write(&page, measured).unwrap_or_else(|e| panic!("{e}"));
        let dom = pgrush_testkit::chromium::dump_dom_in_window(&page, Some((1400, 2000)));
        let start = dom.find("<pre id=\"measure\">").expect("measurements") + 18;
        let end = start + dom[start..].find("</pre>").expect("</pre>");
        let text = dom[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        Measured { json }
    }

    fn list(&self, key: &str) -> Vec<String> {
        self.json[key]
            .as_array()
            .map(|a| a.iter().map(|v| v.to_string()).collect())
            .unwrap_or_default()
    }

    /// Each series name's colours (and dash patterns) on the page.
    fn colours(&self) -> BTreeMap<String, Vec<String>> {
        serde_json::from_value(self.json["colours"].clone()).expect("colours")
    }

    fn charts(&self) -> Vec<Value> {
        self.json["charts"].as_array().cloned().unwrap_or_default()
    }

    /// The readable layout: no text outside its chart or over other text, no chart
    /// title that repeats its heading, line charts the page's width.
    fn assert_readable(&self, page: &str) {
        assert_eq!(
            self.list("outside"),
            Vec::<String>::new(),
            "{page}: text outside its chart"
        );
        assert_eq!(
            self.list("overlaps"),
            Vec::<String>::new(),
            "{page}: text over text"
        );
        assert_eq!(
            self.list("repeats"),
            Vec::<String>::new(),
            "{page}: title repeats heading"
        );
        for c in self.charts() {
            let w = c["width"].as_f64().unwrap_or(0.0);
            assert!(
                w > 0.95,
                "{page}: chart {} is {w:.2} of the page width",
                c["label"]
            );
        }
        for (name, colours) in self.colours() {
            // The colour, not the dash (which tells apart two series of one colour).
            let colours: Vec<&str> = colours.iter().filter_map(|c| c.split('|').next()).collect();
            assert!(
                colours.windows(2).all(|w| w[0] == w[1]),
                "{page}: {name} in several colours: {colours:?}"
            );
        }
    }
}

/// A server timeline whose waits (in this order of size) share the backends' time.
fn timeline(waits: &[(&str, f64)]) -> ServerTimeline {
    let intervals = (0..3)
        .map(|k| ServerInterval {
            start_s: f64::from(k),
            duration_s: 1.0,
            waits: waits.iter().map(|&(w, v)| (w.to_string(), v)).collect(),
            wal_bytes: 1_000_000 * (u64::from(k as u32) + 1),
            ..ServerInterval::default()
        })
        .collect();
    ServerTimeline {
        interval_s: 1.0,
        wait_sample_s: 0.1,
        intervals,
        waits: waits
            .iter()
            .map(|&(w, share)| WaitShare {
                wait: w.to_string(),
                share,
            })
            .collect(),
        ..ServerTimeline::default()
    }
}

/// Three seconds of the client machine, the server on it.
fn machine() -> MachineDoc {
    let intervals = (0..3)
        .map(|k| MachineIntervalDoc {
            start_s: f64::from(k),
            duration_s: 1.0,
            cpu_user_pct: 40.0 + 10.0 * f64::from(k),
            cpu_system_pct: 20.0,
            cpu_iowait_pct: 2.0,
            cpu_steal_pct: 5.0,
            busiest_core_pct: 90.0,
            run_queue: 3 + k as u64,
            context_switches_per_s: 20_000.0,
            net_in_bytes_per_s: 0.0,
            net_out_bytes_per_s: 0.0,
            loopback_bytes_per_s: 1e6,
        })
        .collect();
    MachineDoc {
        same_machine_as_server: true,
        cores: 2,
        interval_s: 1.0,
        intervals,
        server_machine: String::new(),
    }
}

fn run_page(waits: &[(&str, f64)]) -> (RunDocument, String) {
    // Enough transactions for the percentile spectrum to reach 99.9999 %.
    let mut doc = common::document(&common::Shape {
        scripts: 2,
        transactions: 2_000_000,
        ..common::Shape::default()
    });
    doc.server_stats = Some(timeline(waits));
    doc.machine = Some(machine());
    let html = pgrush_report::html::render(&doc);
    (doc, html)
}

#[test]
fn run_pages_are_readable_and_agree_on_colours() {
    // The shares sum to 100 % (their running total in floating point to a hair over it);
    // the waits come in another order on the second page.
    let a = [
        ("Client:ClientRead", 0.55),
        ("CPU", 0.14),
        ("LWLock:LockManager", 0.12),
        ("LWLock:MultiXactOffsetSLRU", 0.11),
        ("IO:SomeRareWait", 0.05),
        ("Lock:transactionid", 0.03),
    ];
    let b = [
        ("Lock:transactionid", 0.4),
        ("IO:SomeRareWait", 0.3),
        ("Client:ClientRead", 0.2),
        ("LWLock:LockManager", 0.1),
    ];
    let (doc_a, html_a) = run_page(&a);
    let (doc_b, html_b) = run_page(&b);
    let first = Measured::page("a", &html_a);
    let second = Measured::page("b", &html_b);
    first.assert_readable("run page a");
    second.assert_readable("run page b");
    let (ca, cb) = (first.colours(), second.colours());
    let mut shared = 0;
    for (name, colours) in &ca {
        if let Some(other) = cb.get(name) {
            // The colour, not the dash (which tells apart two series of one colour).
            let colour = |c: &str| c.split('|').next().unwrap_or_default().to_string();
            assert_eq!(
                colour(&colours[0]),
                colour(&other[0]),
                "{name} differs between two pages"
            );
            shared += 1;
        }
    }
    assert!(shared >= 8, "{ca:?} / {cb:?}");
    // The average is dashed, never mistaken for a percentile.
    assert!(ca["p90"][0].ends_with("|none"), "{:?}", ca["p90"]);
    assert!(!ca["average"][0].ends_with("|none"), "{:?}", ca["average"]);
    // The stacked shares' axis ends at 100 %.
    let waits = first
        .charts()
        .into_iter()
        .find(|c| c["label"] == "Where the benchmark's backends spent their time")
        .expect("the waits chart");
    assert_eq!(
        waits["yt"].as_array().and_then(|t| t.last()),
        Some(&json!("100")),
        "{waits}"
    );
    // Every time chart has the same x ticks at the same places.
    let charts = first.charts();
    let timed: Vec<&Value> = charts
        .iter()
        .filter(|c| {
            c["xt"].as_array().is_some_and(|t| {
                t.first().and_then(|f| f[0].as_str()?.parse::<f64>().ok()) == Some(0.0)
            })
        })
        .collect();
    assert!(timed.len() >= 4, "{charts:?}");
    let same_ticks = |a: &Value, b: &Value| {
        let (a, b) = (a.as_array().expect("ticks"), b.as_array().expect("ticks"));
        a.len() == b.len()
            && a.iter().zip(b).all(|(a, b)| {
                a[0] == b[0]
                    && (a[1].as_f64().unwrap_or(0.0) - b[1].as_f64().unwrap_or(9.0)).abs() < 0.5
            })
    };
    assert!(
        timed
            .windows(2)
            .all(|w| same_ticks(&w[0]["xt"], &w[1]["xt"])),
        "{timed:?}"
    );
    // The spectrum's axis reaches 99.9999 %, whole inside its chart (checked above).
    let spectrum = charts.last().expect("the spectrum");
    assert_eq!(
        spectrum["xt"]
            .as_array()
            .and_then(|t| t.last())
            .map(|t| &t[0]),
        Some(&json!("99.9999%"))
    );
    let hover = first.json["hover"].as_str().unwrap_or_default();
    assert!(
        hover.contains("time since start (s): ")
            && hover.contains("p90: ")
            && hover.contains("average: "),
        "hover box: {hover:?}"
    );
    // Self-contained: nothing is fetched.
    for html in [&html_a, &html_b] {
        for forbidden in ["src=", "href=", "url(", "@import", "https://", "<link"] {
            assert!(!html.contains(forbidden), "{forbidden} in the page");
        }
    }
    let comparison = pgrush_report::html::render_comparison(&[
        ("a.json".into(), doc_a),
        ("b.json".into(), doc_b),
    ]);
    Measured::page("comparison", &comparison).assert_readable("comparison page");
}

fn sweep_summary() -> SweepSummary {
    let statements = |k: f64| {
        json!([
            {"script": "1", "text": "\\set delta random(-5000, 5000)", "latency_ms": {"estimate": 0.001 * k, "low": 0.001, "high": 0.002 * k}},
            {"script": "1", "text": "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;", "latency_ms": {"estimate": 0.9 * k, "low": 0.8, "high": 1.1 * k}},
            {"script": "1", "text": "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);", "latency_ms": {"estimate": 0.2 * k, "low": 0.1, "high": 0.3 * k}}
        ])
    };
    let spectrum = |k: f64| json!([{"p": 0.0001, "ms": 0.5 * k}, {"p": 90.0, "ms": 1.0 * k}, {"p": 99.0, "ms": 2.0 * k}, {"p": 99.9999, "ms": 9.0 * k}]);
    let cell = |i: u32, label: &str| {
        let k = f64::from(i);
        json!({"values": [label], "label": label, "runs": [],
               "tps": {"estimate": 900.0 * k, "low": 850.0 * k, "high": 1000.0 * k},
               "latency_average_ms": {"estimate": 1.0, "low": 0.9, "high": 1.1},
               "latency_percentiles": [], "statements": statements(k), "latency_spectrum": spectrum(k)})
    };
    serde_json::from_value(json!({
        "format": "pgrush-sweep", "format_version": 1, "seed": 7,
        "axes": [{"name": "clients", "values": ["1", "2", "4"]}],
        "repeats": 3, "warmup_s": 1,
        "cells": [cell(1, "clients=1 unlogged=off"), cell(2, "clients=2 unlogged=off"), cell(3, "clients=4 unlogged=on")],
        "comparisons": [], "untested": false
    }))
    .unwrap_or_else(|e| panic!("sweep summary: {e}"))
}

#[test]
fn sweep_page_is_readable_in_the_shared_style() {
    let html = pgrush_lab::sweep::html::render(&sweep_summary());
    let m = Measured::page("sweep", &html);
    m.assert_readable("sweep page");
    assert_eq!(style(&html), run_page_style(), "the shared style");
    // Long statements end in an ellipsis at a word, never mid-word.
    assert!(
        html.contains(">UPDATE pgbench_tellers SET tbalance… [1]</text>"),
        "{html}"
    );
    assert!(!html.contains(">UPDATE pgbench_tellers SET tbalance + [1]<"));
    // The spectrum has axis titles.
    assert!(html.contains(">percentile</text>") && html.contains(">latency (ms)</text>"));
}

fn ops_document(scales: &[u32]) -> OpsDocument {
    let step = |step: StepKind, seconds: f64, bytes: u64| StepResult {
        step,
        round: 1,
        seconds,
        bytes: Some(bytes),
        bytes_per_second: None,
        check: None,
        skipped: None,
        details: Details::None,
    };
    OpsDocument {
        schema: pgrush_lab::ops::SCHEMA.into(),
        pgrush_version: "0".into(),
        server_version: "18.1".into(),
        server_version_num: 180_001,
        target: "throwaway".into(),
        started_at: "2026-11-23T20:00:00.000Z".into(),
        settings: OpsSettings {
            scales: scales.to_vec(),
            steps: Vec::new(),
            jobs: 1,
            dump_format: "custom".into(),
            repeat: 1,
            workload_seconds: 1,
            fillfactor: 100,
            unlogged_tables: false,
            partitions: 0,
            init_steps: "dtgvp".into(),
        },
        scales: scales
            .iter()
            .map(|&scale| {
                let s = f64::from(scale);
                let b = u64::from(scale) * 15_000_000;
                ScaleResult {
                    scale,
                    estimated_bytes: 0,
                    free_bytes: 0,
                    steps: vec![
                        step(StepKind::Load, 0.8 * s, b),
                        step(StepKind::Dump, 0.3 * s, b / 5),
                        step(StepKind::Restore, 1.1 * s, b),
                        step(StepKind::Basebackup, 0.4 * s, b),
                    ],
                }
            })
            .collect(),
        stopped: None,
    }
}

#[test]
fn ops_pages_draw_bars_below_three_scales_and_lines_from_three() {
    let one = pgrush_lab::ops::html::render(&ops_document(&[1]));
    let m = Measured::page("ops1", &one);
    m.assert_readable("ops page, one scale");
    assert!(
        one.contains("<g class=\"bar\">") && !one.contains("<polyline"),
        "bars per step"
    );
    let three = pgrush_lab::ops::html::render(&ops_document(&[1, 10, 100]));
    Measured::page("ops3", &three).assert_readable("ops page, three scales");
    assert!(three.contains("<polyline") && !three.contains("<g class=\"bar\">"));
    let cmp = pgrush_lab::ops::html::render_comparison(&[
        ("a.json".into(), ops_document(&[1, 10])),
        ("b.json".into(), ops_document(&[1, 10])),
    ]);
    Measured::page("ops-cmp", &cmp).assert_readable("ops comparison page");
    for page in [&one, &three, &cmp] {
        assert_eq!(style(page), run_page_style(), "the shared style");
    }
}
