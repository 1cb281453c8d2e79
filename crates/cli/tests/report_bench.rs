//! Reports beyond pgbench end to end: a real benchmark run with `--percentiles`, `--json`, `--html` and
//! the warnings, against a sandbox cluster.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use pgrush_cluster::Cluster;
use pgrush_report::document::{RunDocument, SERVER_SETTINGS};
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};
use serde_json::Value;

const DB: &str = "report_extras";
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

fn cluster() -> &'static Cluster {
    static READY: OnceLock<()> = OnceLock::new();
    let c = pgrush_testkit::shared();
    READY.get_or_init(|| {
        c.create_database(DB)
            .unwrap_or_else(|e| panic!("create database: {e}"));
        let out = testkit::run(
            oracle::require(Which::Pgbench18)
                .command()
                .args(["-i", "-s", "1", "-q", DB])
                .envs(c.env()),
        );
        assert_eq!(out.code, 0, "pgbench -i failed: {}", out.stderr);
    });
    c
}

fn pgrush(args: &[&str], dir: &Path) -> Output {
    testkit::run(
        Command::new(env!("CARGO_BIN_EXE_pgrush"))
            .args(args)
            .envs(cluster().env())
            .current_dir(dir),
    )
}

fn schema_errors(instance: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or(Value::Null);
    let validator =
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("invalid schema: {e}"));
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The `run.json` written in `dir`, valid against the schema, read back.
fn checked_document(dir: &Path) -> RunDocument {
    let json = std::fs::read_to_string(dir.join("run.json")).unwrap_or_default();
    let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    let errs = schema_errors(&value);
    assert!(errs.is_empty(), "{errs:#?}");
    RunDocument::from_json(&json).unwrap_or_else(|e| panic!("{e}"))
}

/// The `ms` values of a `… percentiles: p50 = 1.234 ms, p90 = …` line.
fn values(line: &str) -> Vec<f64> {
    line.split(" = ")
        .skip(1)
        .filter_map(|part| part.split(' ').next()?.parse().ok())
        .collect()
}

#[test]
fn json_html_and_percentiles() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = pgrush(
        &[
            "-n",
            "-t",
            "30",
            "-c",
            "2",
            "-j",
            "2",
            "-P",
            "1",
            "-r",
            "--percentiles",
            "--json=run.json",
            "--html=run.html",
            DB,
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = checked_document(dir.path());

    // stdout: the banner, pgbench's report (also saved in the JSON), then the percentiles.
    let (head, tail) = out
        .stdout
        .split_once("latency percentiles: ")
        .unwrap_or_else(|| panic!("no percentiles in\n{}", out.stdout));
    let (banner, report) = head.split_once('\n').unwrap_or_default();
    assert!(banner.starts_with("pgrush (18.6"), "{banner}");
    assert_eq!(report, doc.report_text);
    let mut lines = tail.lines();
    let total = values(lines.next().unwrap_or_default());
    assert_eq!(total.len(), 5, "{tail}");
    assert!(total[0] > 0.0, "latencies were not measured: {tail}");
    assert!(total.windows(2).all(|w| w[0] <= w[1]), "{total:?}");
    assert_eq!(
        lines.next(),
        Some("statement latency percentiles in milliseconds (p50, p90, p99, p99.9, p99.99):")
    );
    let per_command: Vec<&str> = lines.collect();
    assert_eq!(per_command.len(), 11, "{tail}");
    assert!(per_command[10].ends_with(" END;"));
    // Every command has its percentiles (per-command histograms are kept with -r and
    // --percentiles/--json/--html).
    assert!(
        per_command.iter().all(|l| l
            .split_whitespace()
            .take(5)
            .all(|t| t.parse::<f64>().is_ok())),
        "{tail}"
    );

    // The document's content.
    let r = &doc.results;
    assert_eq!(r.transactions.processed, 60);
    assert_eq!(r.expected_transactions, Some(60));
    assert_eq!(doc.config.clients, 2);
    assert_eq!(doc.config.progress_s, Some(1));
    let lat = doc.latency.as_ref().unwrap_or_else(|| panic!("no latency"));
    assert_eq!(lat.count, 60);
    assert_eq!(lat.percentiles.len(), 5);
    assert!((lat.percentiles[0].ms - total[0]).abs() < 1e-9);
    assert_eq!(lat.histogram().len(), 60);
    let server = doc.server.as_ref().unwrap_or_else(|| panic!("no server"));
    assert_eq!(server.version_num, cluster().version_num());
    for name in SERVER_SETTINGS {
        assert!(server.settings.contains_key(name), "{name} missing");
    }
    assert!(doc.command_line.iter().any(|a| a == "--percentiles"));
    assert!(doc.client.cpus >= 1);
    assert_eq!(doc.scripts[0].commands.len(), 11);
    assert_eq!(doc.scripts[0].commands[10].executions, 60);
    let end = doc.scripts[0].commands[10].latency.as_ref();
    assert_eq!(end.map(|d| d.histogram().len()), Some(60));
    let ts = doc
        .time_series
        .as_ref()
        .unwrap_or_else(|| panic!("no time series"));
    assert_eq!(ts.interval_s, 1.0);
    let in_series: u64 = ts.intervals.iter().map(|i| i.transactions.processed).sum();
    assert_eq!(in_series, 60);
    // Warnings (the run is short, 2 clients on scale 1) on stderr and in the document.
    assert!(
        out.stderr.contains("pgrush: warning: the run lasted only "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("pgrush: warning: tpcb-like with more clients (2) than the scale factor (1)")
    );
    assert!(doc.warnings.len() >= 2);

    let html = std::fs::read_to_string(dir.path().join("run.html")).unwrap_or_default();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // tps, latency over time, the slowest statements' average and p99 over time (-r),
    // the percentile spectrum, then the server's waits, WAL and hit ratio (--html
    // samples the server by default), the client machine's CPU and run queue.
    assert_eq!(html.matches("<svg").count(), 10);
    assert!(doc.server_stats.is_some());
    assert!(html.contains("UPDATE pgbench_branches SET bbalance"));
}

#[test]
fn json_on_stdout_without_warnings() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = pgrush(
        &[
            "-n",
            "-t",
            "5",
            "-S",
            "--json=-",
            "--html=page.html",
            "--no-warnings",
            DB,
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // stdout is the document alone; the text report went to stderr.
    let value: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", out.stdout));
    assert!(schema_errors(&value).is_empty());
    assert_eq!(value["results"]["transactions"]["processed"], 5);
    // Latencies are measured without -P/-R/-L too, and the series has 1 s intervals.
    let p50 = value["latency"]["percentiles"][0]["ms"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(p50 > 0.0, "{}", value["latency"]);
    assert_eq!(value["time_series"]["interval_s"], 1.0);
    assert_eq!(
        value["config"]["transaction_type"],
        "<builtin: select only>"
    );
    assert!(
        out.stderr
            .contains("transaction type: <builtin: select only>")
    );
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    // --no-warnings holds everywhere: no warning in the document nor on the page
    // (the run lasted well under the few seconds that draw one).
    assert_eq!(value["warnings"], serde_json::json!([]));
    let page = std::fs::read_to_string(dir.path().join("page.html"))
        .unwrap_or_else(|e| panic!("no page: {e}"));
    assert!(page.contains("Throughput over time"));
    assert!(
        !page.contains("class=\"warn\""),
        "a warnings box on the page"
    );
}

#[test]
fn default_output_has_no_extras() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = pgrush(&["-n", "-t", "5", "-c", "2", DB], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("percentiles"));
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    assert!(out.stdout.starts_with("pgrush (18.6"));
}

#[test]
fn unwritable_json_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = pgrush(
        &["-n", "-t", "2", "--json=no/such/dir/run.json", DB],
        dir.path(),
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            == "pgrush: error: could not write file \"no/such/dir/run.json\": No such file or directory\n",
        "{}",
        out.stderr
    );
    // Found before the run starts: nothing ran.
    assert_eq!(out.stdout, "");
}

#[test]
fn more_threads_than_cpus_warning() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = (cpus + 1).to_string();
    let out = pgrush(
        &[
            "-n",
            "-t",
            "1",
            "-S",
            "-c",
            &n,
            "-j",
            &n,
            "--percentiles=50",
            DB,
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = format!(
        "pgrush: warning: more threads ({n}) than CPUs ({cpus}) on the client; the client may be the bottleneck\n"
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    // select-only is not tpcb-like: no contention warning.
    assert!(!out.stderr.contains("tpcb-like"));
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("latency percentiles: p50 = "))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.ends_with(" ms") && !line.contains(','), "{line}");
}

#[test]
fn autovacuum_during_a_tpcb_like_run_is_reported() {
    // A cluster whose autovacuum visits every second and acts on any change.
    let mut builder = Cluster::builder();
    for (name, value) in [
        ("autovacuum_naptime", "1"),
        ("autovacuum_vacuum_threshold", "1"),
        ("autovacuum_vacuum_scale_factor", "0"),
        ("autovacuum_analyze_threshold", "1"),
        ("autovacuum_analyze_scale_factor", "0"),
    ] {
        builder = builder.setting(name, value);
    }
    let c = builder
        .start()
        .unwrap_or_else(|e| panic!("cannot start a cluster: {e}"));
    let init = testkit::run(
        oracle::require(Which::Pgbench18)
            .command()
            .args(["-i", "-q", "postgres"])
            .envs(c.env()),
    );
    assert_eq!(init.code, 0, "{}", init.stderr);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let warning = "pgrush: warning: autovacuum ran on the pgbench tables during the run";
    // Autovacuum's timing is not under the test's control: allow a few runs.
    let mut stderr = String::new();
    for _ in 0..3 {
        let out = testkit::run(
            Command::new(env!("CARGO_BIN_EXE_pgrush"))
                .args(["-n", "-T", "3", "--percentiles", "postgres"])
                .envs(c.env())
                .current_dir(dir.path()),
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        stderr = out.stderr;
        if stderr.contains(warning) {
            break;
        }
    }
    assert!(stderr.contains(warning), "{stderr}");
}

/// A latency (ms) within a fixed service time and a loose ceiling for a busy machine.
fn near(ms: f64, fixed_ms: f64) -> bool {
    ms >= fixed_ms && ms < fixed_ms * 1.5
}

#[test]
fn per_script_and_per_command_figures_in_every_interval() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("slow.sql"), "\\sleep 50 ms\nSELECT 1;\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("fast.sql"), "\\sleep 20 ms\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let out = pgrush(
        &[
            "-n",
            "-t",
            "30",
            "-c",
            "2",
            "-j",
            "2",
            "-P",
            "1",
            "-r",
            "--random-seed=7",
            "-f",
            "slow.sql",
            "-f",
            "fast.sql",
            "--json=run.json",
            "--html=run.html",
            DB,
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = checked_document(dir.path());
    let ts = doc
        .time_series
        .as_ref()
        .unwrap_or_else(|| panic!("no time series"));
    // 60 transactions of 20 or 50 ms on 2 clients: more than one 1 s interval.
    assert!(ts.intervals.len() >= 2, "{} intervals", ts.intervals.len());
    let (mut per_script, mut sleeps) = ([0u64; 2], 0u64);
    for iv in &ts.intervals {
        // The scripts' counts add up to the interval's.
        let counted: u64 = iv.scripts.iter().map(|s| s.transactions.total()).sum();
        assert_eq!(counted, iv.transactions.total(), "{iv:?}");
        for s in &iv.scripts {
            per_script[s.script as usize] += s.transactions.processed;
            let fixed = if s.script == 0 { 50.0 } else { 20.0 };
            let avg = s.latency.latency_average_ms.unwrap_or_default();
            assert!(avg >= fixed, "script {} average {avg} ms", s.script);
        }
        // `\sleep 50 ms` takes 50 ms (the percentiles have 2 significant digits).
        for c in iv
            .commands
            .iter()
            .filter(|c| (c.script, c.command) == (0, 0))
        {
            sleeps += c.executions;
            let avg = c.latency.latency_average_ms.unwrap_or_default();
            assert!(near(avg, 50.0), "\\sleep 50 ms averaged {avg} ms");
            let p50 = c.latency.percentile_ms(50.0).unwrap_or_default();
            assert!(near(p50, 49.5), "\\sleep 50 ms p50 {p50} ms");
        }
        let fast = iv.commands.iter().find(|c| (c.script, c.command) == (1, 0));
        if let Some(c) = fast {
            let avg = c.latency.latency_average_ms.unwrap_or_default();
            assert!(near(avg, 20.0), "\\sleep 20 ms averaged {avg} ms");
        }
    }
    assert_eq!(per_script[0], doc.scripts[0].transactions.processed);
    assert_eq!(per_script[1], doc.scripts[1].transactions.processed);
    assert_eq!(per_script[0] + per_script[1], 60);
    assert!(per_script[0] > 0 && per_script[1] > 0, "{per_script:?}");
    assert_eq!(sleeps, doc.scripts[0].commands[0].executions);
    assert_eq!(sleeps, per_script[0]);

    let html = std::fs::read_to_string(dir.path().join("run.html")).unwrap_or_default();
    let section = html
        .split_once("<h2>Statements over time</h2>")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no statements section"));
    assert!(section.contains("Statement latency over time: average"));
    assert!(section.contains("Script latency over time: p99"));
    assert!(section.contains("1.1 \\sleep 50 ms"));
    assert!(section.contains("<code>\\sleep 20 ms</code>"));
}

/// The client machine's own load: one reading per interval edge of the time series, so
/// one machine interval per client interval with the same start, plausible shares, and
/// the server on the same machine over the Unix socket.
#[test]
fn client_machine_series_beside_the_time_series() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = pgrush(
        &[
            "-n",
            "-S",
            "-T",
            "3",
            "-P",
            "1",
            "--no-server-stats",
            "--json=run.json",
            "--html=page.html",
            DB,
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = checked_document(dir.path());
    let series = doc
        .time_series
        .as_ref()
        .unwrap_or_else(|| panic!("no series"));
    let machine = doc.machine.as_ref().unwrap_or_else(|| panic!("no machine"));
    assert!(machine.same_machine_as_server, "over a Unix socket");
    assert!(machine.cores >= 1 && machine.interval_s == 1.0);
    let machine_starts: Vec<f64> = machine.intervals.iter().map(|i| i.start_s).collect();
    let client_starts: Vec<f64> = series.intervals.iter().map(|i| i.start_s).collect();
    assert_eq!(machine_starts, client_starts);
    assert!(machine.intervals.len() >= 3, "{:?}", machine.intervals);
    for i in machine.intervals.iter().filter(|i| i.duration_s >= 0.5) {
        let kinds = [
            i.cpu_user_pct,
            i.cpu_system_pct,
            i.cpu_iowait_pct,
            i.cpu_steal_pct,
            i.busiest_core_pct,
        ];
        assert!(kinds.iter().all(|v| (0.0..=100.0).contains(v)), "{i:?}");
        let sum = i.cpu_user_pct + i.cpu_system_pct + i.cpu_iowait_pct + i.cpu_steal_pct;
        assert!(sum <= 100.0 + 1e-9, "{i:?}");
        // The benchmark itself runs here: the machine was not idle, and switched.
        assert!(
            i.busy_pct() > 0.0 && i.context_switches_per_s > 0.0,
            "{i:?}"
        );
    }
    let page = std::fs::read_to_string(dir.path().join("page.html"))
        .unwrap_or_else(|e| panic!("no page: {e}"));
    assert!(page.contains("Client machine: CPU"));
    assert!(page.contains("same machine as the server"));
}
