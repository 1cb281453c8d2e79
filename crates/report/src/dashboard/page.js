(function(){
'use strict';
var D=JSON.parse(document.getElementById('dash-data').textContent);
var rows=[];var colours={};var scripts=[];
var SVG='http://www.w3.org/2000/svg';
function pick(o,names){var r={};names.forEach(function(n){if(o&&o[n]!=null)r[n]=o[n];});return r;}
var charts=[
{id:'tps',title:'Transactions per second',y:'tps',get:function(i){return {tps:i.tps};}},
{id:'latency',title:'Latency (ms; percentiles: bucket upper bounds)',y:'ms',get:function(i){return pick(i.latency_ms,['average','p50','p90','p99','max']);}},
{id:'scripts',title:'Latency per script (ms, average)',y:'ms',get:function(i){var o={};scripts.forEach(function(n,k){var v=i.script_avg_ms[k];if(v!=null)o[n]=v;});return o;}},
{id:'failures',title:'Failures and retries per second',y:'per second',get:function(i){var o={};for(var k in i.failures_per_s)o[k]=i.failures_per_s[k];o.retries=i.retries_per_s;return o;}},
{id:'waits',title:'Server: the benchmark\u2019s backends by wait event',y:'backends',server:true,get:function(i){return i.server?i.server.waits:{};}},
{id:'wal',title:'Server: WAL written and checkpoints since the start',y:'MB / checkpoints',server:true,get:function(i){return i.server?{'WAL MB':i.server.wal_mb,checkpoints:i.server.checkpoints}:{};}},
{id:'machine',title:'Client machine: CPU (%)',y:'share of all cores (%)',machine:true,get:function(i){var m=i.machine;return m?{user:m.cpu_user_pct,system:m.cpu_system_pct,iowait:m.cpu_iowait_pct,steal:m.cpu_steal_pct,'busiest core':m.busiest_core_pct}:{};}}
];
function el(tag,attrs,parent,svg){var e=svg?document.createElementNS(SVG,tag):document.createElement(tag);for(var k in attrs)e.setAttribute(k,attrs[k]);if(parent)parent.appendChild(e);return e;}
function step(max){var raw=max/4;var p=Math.pow(10,Math.floor(Math.log10(raw)));var m=raw/p;return (m<=1?1:m<=2?2:m<=5?5:10)*p;}
function ticks(max){var s=step(max),t=[];for(var v=0;v<=max*1.0001;v+=s)t.push(Math.round(v/s)*s);return t;}
function tfmt(v){return String(+v.toPrecision(6));}
function fmt(v){if(v===0||!isFinite(v))return String(v);var d=Math.max(0,Math.min(6,3-Math.floor(Math.log10(Math.abs(v)))));return v.toFixed(d);}
var box=document.getElementById('charts');
charts.forEach(function(c){c.section=el('section',{id:'chart-'+c.id},box);var h=el('h2',{},c.section);h.textContent=c.title;
c.svg=el('svg',{'class':'chart',viewBox:'0 0 1300 370','data-points':'0','data-x-label':'time since start (s)'},c.section,true);});
function draw(c){
var names=[];var have=0;
rows.forEach(function(r){var v=c.get(r);var any=false;for(var n in v){any=true;if(names.indexOf(n)<0)names.push(n);}if(any)have++;});
c.svg.setAttribute('data-points',String(have));
c.section.hidden=(c.server||c.machine)&&have===0;
while(c.svg.firstChild)c.svg.removeChild(c.svg.firstChild);
var L=80,R=1060,T=20,B=320;var x1=rows.length?rows[rows.length-1].t_s:1;var ymax=0;
rows.forEach(function(r){var v=c.get(r);for(var n in v)ymax=Math.max(ymax,v[n]);});
if(ymax<=0)ymax=1;var ys=step(ymax);ymax=Math.ceil(ymax*1.0001/ys)*ys;
function px(x){return L+(R-L)*x/Math.max(x1,1e-9);}function py(y){return B-(B-T)*y/ymax;}
el('line',{x1:L,y1:B,x2:R,y2:B,stroke:'#888'},c.svg,true);el('line',{x1:L,y1:T,x2:L,y2:B,stroke:'#888'},c.svg,true);
ticks(ymax).forEach(function(v){var t=el('text',{x:L-6,y:py(v)+4,'text-anchor':'end','font-size':'13'},c.svg,true);t.textContent=tfmt(v);
el('line',{x1:L,y1:py(v),x2:R,y2:py(v),stroke:'#eee'},c.svg,true);});
ticks(x1).forEach(function(v){var t=el('text',{x:px(v),y:B+18,'text-anchor':'middle','font-size':'13'},c.svg,true);t.textContent=tfmt(v);});
var xl=el('text',{x:(L+R)/2,y:B+40,'text-anchor':'middle','font-size':'13'},c.svg,true);xl.textContent='time since start (s)';
var yl=el('text',{x:16,y:(T+B)/2,'text-anchor':'middle','font-size':'13',transform:'rotate(-90 16 '+(T+B)/2+')'},c.svg,true);yl.textContent=c.y;
names.forEach(function(n,k){var pts=[];rows.forEach(function(r){var v=c.get(r)[n];if(v!=null)pts.push(px(r.t_s).toFixed(1)+','+py(v).toFixed(1));});
var col=colours[n]||'#1f77b4';
el('polyline',{points:pts.join(' '),fill:'none',stroke:col,'stroke-width':'2','data-name':n,'stroke-dasharray':n==='average'?'7 4':'none'},c.svg,true);
el('rect',{x:1080,y:T+20*k,width:12,height:12,fill:col},c.svg,true);
var lt=el('text',{x:1098,y:T+20*k+11,'font-size':'13'},c.svg,true);lt.textContent=n.length>28?n.slice(0,27)+'\u2026':n;});
}
function latest(){var t=document.getElementById('latest');t.textContent='';if(!rows.length)return;var r=rows[rows.length-1];
var f=0;for(var k in r.failures_per_s)f+=r.failures_per_s[k];
var cells=[['time (s)',fmt(r.t_s)],['stage',r.stage===0?'warm-up':String(r.stage)],['clients connected',String(r.clients_connected)],['tps',fmt(r.tps)],
['p50 (ms)',r.latency_ms?fmt(r.latency_ms.p50):'-'],['p99 (ms)',r.latency_ms?fmt(r.latency_ms.p99):'-'],['failures/s',fmt(f)]];
var h=el('tr',{},t);var d=el('tr',{},t);cells.forEach(function(c){el('th',{},h).textContent=c[0];var td=el('td',{'class':'n'},d);td.textContent=c[1];});
document.getElementById('status').textContent='running: '+rows.length+' intervals so far, updated every second';}
function take(d){for(var k in d.colours)colours[k]=d.colours[k];scripts=d.scripts;
// From d.first on the answer replaces what the page holds: the last interval while it grows, everything after a merge (a new generation).
rows.length=Math.min(rows.length,d.first);d.intervals.forEach(function(r){rows.push(r);});D.next=d.next;D.generation=d.generation;
charts.forEach(draw);latest();}
function poll(){fetch('data.json?since='+D.next+'&generation='+D.generation,{cache:'no-store'}).then(function(r){return r.json();}).then(function(d){
if(d.finished){location.reload();return;}take(d);setTimeout(poll,1000);}).catch(function(){
document.getElementById('status').textContent='the dashboard no longer answers: the run has ended (see --metrics-linger)';});}
take(D);if(D.finished){location.reload();}else{setTimeout(poll,1000);}
})();
