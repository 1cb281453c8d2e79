//! The frame every pgrush page shares (run, comparison, merged run, sweep, ops): one
//! style, and one small inline script that shows a chart's values under the pointer.
//! Everything is inline: the page fetches nothing.

use crate::svg::escape;
use std::fmt::Write as _;

/// The style of every page.
pub const STYLE: &str = "body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;background:#fafafa}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;background:#fff;margin:8px 0}\
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}th{background:#eef}\
pre{background:#fff;border:1px solid #ccc;padding:8px;overflow-x:auto}\
.warn{background:#fff3cd;border:1px solid #e0c36a;padding:8px}code{font-size:12px}\
svg.chart{display:block;background:#fff;border:1px solid #ccc;width:100%;height:auto;margin:8px 0;\
font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif}\
svg.chart text{fill:#222}svg.chart .guide{stroke:#555;stroke-dasharray:3 3}\
.tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #888;padding:4px 8px;\
font-size:12px;box-shadow:0 1px 4px rgba(0,0,0,.2);white-space:nowrap;z-index:10}\
.tip i{display:inline-block;width:10px;height:10px;margin-right:6px}";

/// Shows, while the pointer is over a chart, the x under it and each series' value
/// there (the values are the `data-x`/`data-v` lists of each series, `data-px` their
/// positions), with a vertical guide line.
const HOVER_SCRIPT: &str = "(function(){\
var tip=document.getElementById('tip');if(!tip)return;\
document.querySelectorAll('svg.chart').forEach(function(svg){\
var guide=svg.querySelector('.guide');var series=svg.querySelectorAll('[data-v]');\
if(!guide||!series.length)return;\
svg.addEventListener('mouseleave',function(){tip.hidden=true;guide.setAttribute('visibility','hidden');});\
svg.addEventListener('mousemove',function(e){\
var m=svg.getScreenCTM();if(!m)return;var p=svg.createSVGPoint();p.x=e.clientX;p.y=e.clientY;\
var x=p.matrixTransform(m.inverse()).x;var best=null;var rows=[];\
series.forEach(function(el){var px=el.getAttribute('data-px').split(' ').map(Number);\
var xs=el.getAttribute('data-x').split('|');var vs=el.getAttribute('data-v').split('|');\
var k=0;for(var i=1;i<px.length;i++){if(Math.abs(px[i]-x)<Math.abs(px[k]-x))k=i;}\
if(!px.length||isNaN(px[k]))return;var d=Math.abs(px[k]-x);\
if(best===null||d<best.d)best={d:d,px:px[k],x:xs[k]};\
rows.push([el.getAttribute('data-c'),el.getAttribute('data-name'),vs[k]]);});\
if(best===null)return;\
guide.setAttribute('x1',best.px);guide.setAttribute('x2',best.px);guide.setAttribute('visibility','visible');\
tip.textContent='';var h=document.createElement('div');h.textContent=svg.getAttribute('data-x-label')+': '+best.x;tip.appendChild(h);\
rows.forEach(function(r){var d=document.createElement('div');var i=document.createElement('i');i.style.background=r[0];\
d.appendChild(i);d.appendChild(document.createTextNode(r[1]+': '+r[2]));tip.appendChild(d);});\
tip.hidden=false;var w=tip.offsetWidth;\
tip.style.left=(e.clientX+16+w>window.innerWidth?e.clientX-16-w:e.clientX+16)+'px';tip.style.top=(e.clientY+12)+'px';});\
});})();";

/// Opens a self-contained page (doctype, head with the shared style, body) titled
/// `title` (escaped), with the title as its heading. Close it with [`page_end`].
pub fn page_start(s: &mut String, title: &str) {
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>",
        t = escape(title)
    );
}

/// Appends a table with id `id` whose first row and first column are headers, every
/// cell escaped (the sweep's cells, the capacity search's steps).
pub fn header_table(s: &mut String, id: &str, rows: &[Vec<String>]) {
    let _ = write!(s, "<table id=\"{}\">", escape(id));
    for (n, row) in rows.iter().enumerate() {
        s.push_str("<tr>");
        for (k, cell) in row.iter().enumerate() {
            let tag = if n == 0 || k == 0 { "th" } else { "td" };
            let _ = write!(s, "<{tag}>{}</{tag}>", escape(cell));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
}

/// Closes a page opened by [`page_start`]: the hover box, its script, the end tags and
/// a final newline.
pub fn page_end(s: &mut String) {
    s.push_str("<div id=\"tip\" class=\"tip\" hidden></div><script>");
    s.push_str(HOVER_SCRIPT);
    s.push_str("</script></body></html>\n");
}
