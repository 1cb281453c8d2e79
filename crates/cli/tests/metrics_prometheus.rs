//! `--metrics-listen`: a real Prometheus (Debian's `prometheus`, a private
//! configuration scraping the endpoint every second) scrapes a `-T 20` run; its query
//! API must give the run's tps (`rate(...[5s])`, within 10%) and its p99 (a histogram
//! quantile, within a bucket of the report's), every panel of the Grafana dashboard
//! (`deploy/grafana/pgrush.json`) must return data, and the endpoint answers 404
//! elsewhere and OpenMetrics when asked. Also: a bad address and a port in use end
//! the run before it starts, with status 1.

mod bench_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bench_common::{DB, Prog, Scratch, command, run};
use pgrush_stats::live::BUCKET_BOUNDS_US;

/// The run's rate target: a steady load, so that any 5 s window has the run's tps.
const RATE: f64 = 200.0;

/// A private Prometheus, stopped (and waited for) when dropped, even by a panic.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free TCP port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    pgrush_testkit::closed_port()
}

/// Starts Prometheus in `dir`, scraping `target` every second, and waits until it is ready.
fn start_prometheus(dir: &Path, target: u16) -> Prometheus {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
             scrape_configs:\n  - {{job_name: pgrush, static_configs: [{{targets: ['127.0.0.1:{target}']}}]}}\n"
        ),
    )
    .expect("write prometheus.yml");
    let port = free_port();
    let log = std::fs::File::create(dir.join("prometheus.log")).expect("log file");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--storage.tsdb.retention.time=1h")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start prometheus (scripts/install-deps installs it): {e}")
        });
    let prom = Prometheus { child, port };
    let deadline = Instant::now() + Duration::from_secs(15);
    while http_get(port, "/-/ready", None).is_none_or(|(status, _)| status != 200) {
        assert!(Instant::now() < deadline, "prometheus not ready after 15 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    prom
}

/// GET `path` on 127.0.0.1:`port`: status and body (`None`: no answer).
fn http_get(port: u16, path: &str, accept: Option<&str>) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// `%XX`-encodes a query parameter.
fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The result vector of an instant query at Unix time `at`.
fn query(prom: &Prometheus, expr: &str, at: f64) -> Vec<serde_json::Value> {
    let path = format!("/api/v1/query?query={}&time={at:.3}", encode(expr));
    let (status, body) = http_get(prom.port, &path, None).expect("prometheus answers");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("JSON answer");
    assert_eq!(status, 200, "{expr}: {body}");
    doc["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The value of a query that gives exactly one series.
fn scalar(prom: &Prometheus, expr: &str, at: f64) -> f64 {
    let r = query(prom, expr, at);
    assert_eq!(r.len(), 1, "{expr} at {at}: {r:?}");
    r[0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{expr}: {r:?}"))
}

/// Now, in Unix seconds.
fn unix_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs_f64()
}

/// The number after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> f64 {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{text}"));
    text[at + prefix.len()..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number after {prefix:?}"))
}

/// The bucket (index into the bounds, `len` for `+Inf`) a latency in seconds falls in.
fn bucket(seconds: f64) -> usize {
    let us = seconds * 1e6;
    BUCKET_BOUNDS_US.partition_point(|&b| (b as f64) < us - 1e-6)
}

/// Every panel query of the dashboard, with Grafana's variables filled in.
fn dashboard_queries() -> Vec<(String, String)> {
    let path = pgrush_testkit::repo_root().join("deploy/grafana/pgrush.json");
    let text = std::fs::read_to_string(&path).expect("the dashboard");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("dashboard JSON");
    let mut out = Vec::new();
    for panel in doc["panels"].as_array().expect("panels") {
        let title = panel["title"].as_str().unwrap_or("?").to_string();
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().expect("expr").to_string();
            let expr = expr
                .replace("$__rate_interval", "5s")
                .replace("$__interval", "1s")
                .replace("$__range", "20s")
                .replace("$job", "pgrush")
                .replace("$shard", ".*")
                .replace("$script", ".*");
            out.push((title.clone(), expr));
        }
    }
    assert!(out.len() >= 8, "too few panel queries: {out:?}");
    out
}

#[test]
fn prometheus_scrapes_the_run_and_every_dashboard_panel_has_data() {
    bench_common::cluster();
    let dir = Scratch::new(&[]);
    let port = free_port();
    let prom = start_prometheus(&dir.path, port);
    let started = unix_s();
    let rate = RATE.to_string();
    let listen = format!("127.0.0.1:{port}");
    let child = command(Prog::Pgrush, &dir.path, DB)
        .args(["-n", "-S", "-c", "2", "-j", "2", "-R", &rate, "-T", "20"])
        .args([
            "--percentiles=99",
            "--server-stats",
            "--metrics-listen",
            &listen,
        ])
        .args(["--metrics-linger", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgrush");
    // While it runs: the page in both formats, and a 404 elsewhere.
    std::thread::sleep(Duration::from_secs(3));
    let (status, text) = http_get(port, "/metrics", None).expect("the endpoint answers");
    assert_eq!(status, 200);
    assert!(
        text.contains("# TYPE pgrush_transactions_total counter"),
        "{text}"
    );
    assert!(
        text.contains("pgrush_machine_cpu_ratio{mode=\"user\""),
        "{text}"
    );
    let om = http_get(
        port,
        "/metrics",
        Some("application/openmetrics-text;version=1.0.0"),
    );
    assert!(om.is_some_and(|(s, t)| s == 200 && t.ends_with("# EOF\n")));
    assert_eq!(http_get(port, "/", None).map(|r| r.0), Some(404));
    let out = child.wait_with_output().expect("pgrush ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tps = number_after(&stdout, "tps = ");
    assert!((tps - RATE).abs() < RATE * 0.2, "a steady run: {tps}");

    // tps: the rate over two 5 s windows in the run's middle.
    let rates: Vec<f64> = [11.0, 17.0]
        .iter()
        .map(|t| {
            scalar(
                &prom,
                "sum(rate(pgrush_transactions_total[5s]))",
                started + t,
            )
        })
        .collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    assert!(
        (mean - tps).abs() <= tps * 0.1,
        "rate() {rates:?} against the report's {tps} tps"
    );
    // p99: the histogram's quantile over the whole run, from the buckets' counts as
    // the last scrape (during the linger) saw them: the same transactions as the
    // report's (a window of the run would be other transactions, whose p99 differs on
    // a loaded machine).
    let p99 = scalar(
        &prom,
        "histogram_quantile(0.99, sum by (le) (pgrush_latency_seconds_bucket))",
        unix_s(),
    );
    let reported = number_after(&stdout, "p99 = ") / 1000.0;
    assert!(
        bucket(p99).abs_diff(bucket(reported)) <= 1,
        "p99 {p99} s against the report's {reported} s"
    );
    // The scrape at the end (during the linger) has every transaction of the run.
    let processed = number_after(&stdout, "number of transactions actually processed: ");
    let last = scalar(&prom, "sum(pgrush_transactions_total)", unix_s());
    assert_eq!(last, processed);

    for (title, expr) in dashboard_queries() {
        let r = query(&prom, &expr, started + 15.0);
        assert!(!r.is_empty(), "panel {title:?}: no data for {expr}");
    }
}

#[test]
fn a_bad_address_or_a_port_in_use_ends_the_run_before_it_starts() {
    let dir = Scratch::new(&[]);
    let out = run(
        Prog::Pgrush,
        &dir.path,
        DB,
        &["-S", "-t", "1", "--metrics-listen", "nowhere"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "invalid metrics address: \"nowhere\" (HOST:PORT expected, e.g. 127.0.0.1:9187)"
        ),
        "{}",
        out.stderr
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let out = run(
        Prog::Pgrush,
        &dir.path,
        DB,
        &["-S", "-t", "1", "--metrics-listen", &addr],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "pgrush: error: could not listen for metrics on {addr}: "
        )),
        "{}",
        out.stderr
    );
    // Nothing ran: no banner, no report.
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}
