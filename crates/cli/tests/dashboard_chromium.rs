//! `--dashboard`: a real headless Chromium opens the live page of a `-T 10` run twice,
//! 2.5 s apart (its charts must have grown: the intervals drawn, counted in
//! each chart's `data-points`), then, once the run has ended, the page again: it is
//! then the run's report, with the tps the text report printed. The command line on
//! the page has its password redacted; `--metrics-listen` at the same address is served
//! by the same listener. Also: an address other machines can reach is
//! refused without `--dashboard-bind-any`, and warned about with it.

mod bench_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bench_common::{DB, Prog, Scratch, command, run};
use pgrush_testkit::chromium;

/// GET `path` on 127.0.0.1:`port`: status and body (`None`: no answer).
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// Polls `path` until `done` holds for its body, for at most `limit`.
fn wait_for(port: u16, path: &str, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + limit;
    loop {
        if let Some((200, body)) = http_get(port, path)
            && done(&body)
        {
            return body;
        }
        assert!(Instant::now() < deadline, "{path}: not ready in {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The `data-points` of the chart in section `id` of a DOM dump.
fn points(dom: &str, id: &str) -> usize {
    let at = dom
        .find(&format!("id=\"chart-{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}: {dom}"));
    let rest = &dom[at..];
    let n = rest
        .find("data-points=\"")
        .unwrap_or_else(|| panic!("no data-points in chart {id}"));
    let v = &rest[n + 13..];
    v[..v.find('"').unwrap_or(0)].parse().unwrap_or(0)
}

#[test]
fn the_live_page_grows_then_becomes_the_report() {
    bench_common::cluster();
    let dir = Scratch::new(&[]);
    let port = pgrush_testkit::closed_port();
    let addr = format!("127.0.0.1:{port}");
    let child = command(Prog::Pgrush, &dir.path, DB)
        .args(["-n", "-S", "-c", "2", "-j", "2", "-R", "200", "-T", "10"])
        .args(["--dashboard", &addr, "--metrics-linger", "5"])
        .args(["--metrics-listen", &addr])
        .arg("--define=PGPASSWORD=sekrit")
        .arg(format!("dbname={DB} password=sekrit"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgrush");
    let url = format!("http://{addr}/");
    // Two intervals closed, then the page twice, 2.5 s apart (Chromium takes seconds to
    // start on a loaded machine: the two run side by side).
    wait_for(
        port,
        "/data.json?since=2&generation=0",
        Duration::from_secs(10),
        |b| b.contains("\"t_s\""),
    );
    // One listener for both: `/metrics` at the same address.
    let metrics = http_get(port, "/metrics").expect("the endpoint answers");
    assert!(metrics.0 == 200 && metrics.1.contains("pgrush_transactions_total"));
    let (first, second) = std::thread::scope(|s| {
        let first = s.spawn(|| chromium::dump_dom_url(&url));
        std::thread::sleep(Duration::from_millis(2500));
        let second = chromium::dump_dom_url(&url);
        (first.join().expect("first dump"), second)
    });
    for dom in [&first, &second] {
        assert!(
            dom.contains("<h1>pgrush: live run</h1>"),
            "not the live page: {dom}"
        );
    }
    assert!(first.contains("PGPASSWORD=***") && first.contains("password=***"));
    assert!(!first.contains("sekrit"), "{first}");
    for chart in ["tps", "latency", "scripts", "failures", "machine"] {
        let (a, b) = (points(&first, chart), points(&second, chart));
        assert!(a >= 2 && b > a, "chart {chart}: {a} then {b} intervals");
    }
    // Served by the server sampler (implied, as by --html) once it has read.
    assert!(points(&second, "wal") >= 1, "{second}");
    // The end: the report, at the same address.
    wait_for(port, "/data.json?since=0", Duration::from_secs(15), |b| {
        b.contains("\"finished\":true")
    });
    let report = chromium::dump_dom_url(&url);
    let out = child.wait_with_output().expect("pgrush ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tps_line = stdout
        .lines()
        .find(|l| l.starts_with("tps = "))
        .unwrap_or_else(|| panic!("no tps line: {stdout}"));
    assert!(
        report.contains(tps_line),
        "{tps_line} not in the report page"
    );
    assert!(!report.contains("pgrush: live run"));
}

#[test]
fn other_machines_need_the_explicit_flag() {
    let dir = Scratch::new(&[]);
    let out = run(
        Prog::Pgrush,
        &dir.path,
        DB,
        &["-S", "-t", "1", "--dashboard", "0.0.0.0:0"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "pgrush: error: --dashboard 0.0.0.0:0 is not a loopback address: other machines could open the page; give --dashboard-bind-any to allow it"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("transaction type"), "nothing ran");
    let out = run(
        Prog::Pgrush,
        &dir.path,
        DB,
        &[
            "-S",
            "-t",
            "1",
            "--dashboard",
            "0.0.0.0:0",
            "--dashboard-bind-any",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "pgrush: warning: the dashboard on 0.0.0.0:0 can be opened from other machines"
        ),
        "{}",
        out.stderr
    );
}
