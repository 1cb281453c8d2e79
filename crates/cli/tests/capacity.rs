//! `pgrush capacity` against arithmetic: the script `SELECT pg_sleep(0.005)` run by four
//! clients (`-c 4 -j 2`) is four servers of 5 ms, whose capacity is 800 tps on any
//! machine. pg_sleep overshoots a little, a transaction has its round trip, and a busy
//! machine delays wake-ups, so the expected capacity is computed from the mean latency
//! `L` of a closed loop: four clients always busy end `4 / L` transactions a second
//! (Little's law; ≈ 780 tps for 5.13 ms on a quiet machine; this 2-core machine, shared
//! with other builds, measured 6 to 9 ms). `L` is measured before the search (its own
//! probe) and after it, as the load of a shared machine changes meanwhile.
//!
//! - `p99<200ms`: the reported sustainable rate lies from 15% below to 5% above that
//!   capacity (for an `L` between the two measurements).
//! - `p99<6ms` (on a busy machine, whose delays show in the p99 even at a low rate, over
//!   5.5 ms: 1.5 times that p99 and 1 ms): latency is the wait for a client plus a service time
//!   of at least 5 ms, so a p99 below `T` needs fewer than 1% of the waits above
//!   `T − 5 ms`. In an M/D/4 queue (Poisson arrivals, 4 servers of 5 ms; longer service
//!   times and pgrush's one Poisson stream per thread, two M/D/2 queues, only wait more)
//!   the share of such waits passes 1% at a rate computed here by simulating the queue;
//!   the reported rate must be below it, and above a sane floor.
//!
//! Also: bad SLOs and options, the gate's exit codes, the JSON document's fields, the
//! HTML page. The two searches run one after the other, with short steps.

use std::process::Command;
use std::sync::OnceLock;

use pgrush_testkit::{self as testkit, Output};
use serde_json::Value;

const DB: &str = "capacity";
const SLEEP: &str = "SELECT pg_sleep(0.005);\n";

/// A scratch directory with the script, the shared cluster with [`DB`] ready.
fn scratch() -> tempfile::TempDir {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        testkit::shared()
            .create_database(DB)
            .unwrap_or_else(|e| panic!("create database: {e}"));
    });
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("sleep.sql"), SLEEP).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// `pgrush capacity ARGS` in `dir` against [`DB`].
fn capacity(dir: &tempfile::TempDir, args: &[&str]) -> Output {
    let c = testkit::shared();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    cmd.arg("capacity")
        .args(args)
        .envs(c.env())
        .env("PGDATABASE", DB)
        .current_dir(dir.path());
    testkit::run(&mut cmd)
}

/// The workload and short steps: 2 s measured after 1 s of warm-up, at most 8 s.
const WORKLOAD: [&str; 11] = [
    "-n",
    "-f",
    "sleep.sql",
    "-c",
    "4",
    "-j",
    "2",
    "--step",
    "2",
    "--warmup",
    "1",
];

/// The capacity schema, checked in beside the run schema.
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-capacity.v1.schema.json"
));

/// The document `name` in `dir`, validated against [`SCHEMA`].
fn read_json(dir: &tempfile::TempDir, name: &str) -> Value {
    let text =
        std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or_else(|e| panic!("schema: {e}"));
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema: {e}"));
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name} against the schema: {errors:?}");
    doc
}

/// Both searches, one after the other in one test (each test runs in a process of its
/// own: two searches at once on a small machine would disturb each other).
#[test]
fn searches_find_the_arithmetic_of_four_servers_of_5ms() {
    p99_below_200ms_finds_the_four_servers_capacity();
    a_tight_p99_is_held_only_where_waits_are_short();
}

fn p99_below_200ms_finds_the_four_servers_capacity() {
    let dir = scratch();
    let mut args = WORKLOAD.to_vec();
    args.extend([
        "--max-step",
        "8",
        "--precision",
        "4",
        "--slo",
        "p99<200ms",
        "--json",
        "cap.json",
        "--html",
        "cap.html",
        "--assert",
        "capacity>=100",
        "--assert",
        "capacity>=100000",
    ]);
    let out = capacity(&dir, &args);
    // The second gate fails: exit status 3, both verdicts printed.
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("assertion passed: capacity >= 100 (measured "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("assertion FAILED: capacity >= 100000 (measured "),
        "{}",
        out.stdout
    );
    let doc = read_json(&dir, "cap.json");
    assert_eq!(doc["schema"], "pgrush-capacity/1");
    assert_eq!(doc["settings"]["slos"][0], "p99 < 200 ms");
    assert_eq!(doc["complete"], true, "{doc}");
    assert_eq!(doc["interrupted"], false);
    let good = doc["capacity_tps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{doc}"));
    let bad = doc["first_failing_tps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{doc}"));
    // Four clients always busy (the closed-loop probe) end 4 transactions per mean
    // latency (Little's law): 4 / (5 ms and what pg_sleep, the round trip and the
    // machine add). A shared machine's load changes during the search: the latency is
    // measured before it (the search's probe) and after it (the same closed loop), and
    // the capacity lies near 4 / latency for a latency between the two.
    let steps = doc["steps"].as_array().unwrap_or_else(|| panic!("{doc}"));
    let before_ms = doc["probe"]["latency_average_ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("no probe: {doc}"));
    let after_ms = closed_loop_latency_ms(&dir);
    for ms in [before_ms, after_ms] {
        assert!((5.0..15.0).contains(&ms), "service time {ms} ms");
    }
    // Below: near saturation (offered above 90% of 4 / latency) the queue of a busy
    // machine's 2 cores is a random walk over a step of a few seconds, and a step there
    // can end "not delivered" by chance (seen at 94-98% under a CI run beside a release
    // build): 15% below 4 / latency still fails a search that stops at half or misses a
    // doubling, 5% above fails one that reports more than the servers can do.
    let (low, high) = (
        4000.0 / before_ms.max(after_ms) * 0.85,
        4000.0 / before_ms.min(after_ms) * 1.05,
    );
    assert!(
        (low..=high).contains(&good),
        "capacity {good} tps, expected 4 / ({before_ms:.3} .. {after_ms:.3} ms) -15% .. +5%: \
         {low:.1} .. {high:.1}:\n{}",
        out.stdout
    );
    let held = steps
        .iter()
        .find(|s| s["offered_tps"].as_f64() == Some(good))
        .unwrap_or_else(|| panic!("no step at {good}: {doc}"));
    assert_eq!(held["held"], true, "{held}");
    assert!(bad > good && (bad - good) / good <= 0.04, "{good} {bad}");
    assert!(doc["first_failure"].is_string(), "{doc}");
    // Every step: the curve's fields, in running order.
    assert!(steps.len() >= 3, "{doc}");
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step"].as_u64(), Some(i as u64 + 1));
        for field in [
            "offered_tps",
            "delivered_tps",
            "latency_average_ms",
            "lag_average_ms",
            "p50_ms",
            "p99_ms",
            "p99_9_ms",
        ] {
            assert!(s[field].is_number(), "{field}: {s}");
        }
        assert!(
            s["held"].is_boolean() && s["slos"][0]["slo"] == "p99 < 200 ms",
            "{s}"
        );
    }
    // One progress line per step; the table, a row per step, no wider than 100 columns.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let step_lines = lines
        .iter()
        .filter(|l| l.starts_with("pgrush capacity: step "))
        .count();
    assert_eq!(step_lines, steps.len(), "{}", out.stdout);
    let table: Vec<&&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("latency (from the schedule) against offered rate"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(table.len(), steps.len() + 1, "{}", out.stdout);
    assert!(
        table.iter().all(|l| l.chars().count() <= 100),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("sustainable rate: "), "{}", out.stdout);
    println!("{}", out.stdout);
    let html = std::fs::read_to_string(dir.path().join("cap.html")).unwrap_or_default();
    assert!(html.contains("<svg") && html.contains("Latency against offered rate"));
}

/// The rate at which the fraction of M/D/`servers` waits above `limit_ms` (service time
/// `service_ms`, Poisson arrivals) reaches `share`: simulated, bisected.
fn md_rate_where_waits_exceed(servers: usize, service_ms: f64, limit_ms: f64, share: f64) -> f64 {
    let exceeding = |rate: f64| {
        // A fixed xorshift stream: the same arrivals at every rate, scaled.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut free = vec![0.0f64; servers];
        let (mut now, mut over) = (0.0f64, 0u32);
        const N: u32 = 400_000;
        for _ in 0..N {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            now += -(1.0 - u).ln() / rate * 1000.0;
            let (i, &first) = free
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .unwrap_or((0, &0.0));
            let start = now.max(first);
            if start - now > limit_ms {
                over += 1;
            }
            free[i] = start + service_ms;
        }
        f64::from(over) / f64::from(N)
    };
    let (mut low, mut high) = (1.0, servers as f64 * 1000.0 / service_ms);
    while high - low > 1.0 {
        let mid = (low + high) / 2.0;
        if exceeding(mid) > share {
            high = mid;
        } else {
            low = mid;
        }
    }
    low
}

/// The mean latency (ms) of the workload in a closed loop (each client busy all the
/// time), for 2 s after 1 s of warm-up.
fn closed_loop_latency_ms(dir: &tempfile::TempDir) -> f64 {
    let c = testkit::shared();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    cmd.args(&WORKLOAD[..7])
        .args(["--warmup", "1", "-T", "2", "--json", "after.json"])
        .envs(c.env())
        .env("PGDATABASE", DB)
        .current_dir(dir.path());
    let out = testkit::run(&mut cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = read_run(dir, "after.json");
    doc["latency"]["average_ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("no latency: {doc}"))
}

/// The p99 latency (ms) of the workload at a low rate (-R 40: waits are rare, this is
/// the service time and whatever the machine adds to it).
fn low_rate_p99_ms(dir: &tempfile::TempDir) -> f64 {
    let c = testkit::shared();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    cmd.args(&WORKLOAD[..7])
        .args(["-R", "40", "-T", "2", "--json", "low.json"])
        .envs(c.env())
        .env("PGDATABASE", DB)
        .current_dir(dir.path());
    let out = testkit::run(&mut cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = read_run(dir, "low.json");
    doc["latency"]["percentiles"]
        .as_array()
        .and_then(|list| list.iter().find(|p| p["p"].as_f64() == Some(99.0)))
        .and_then(|p| p["ms"].as_f64())
        .unwrap_or_else(|| panic!("no p99: {doc}"))
}

/// A run document (no schema check: it is not a capacity result).
fn read_run(dir: &tempfile::TempDir, name: &str) -> Value {
    let text =
        std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn a_tight_p99_is_held_only_where_waits_are_short() {
    let dir = scratch();
    // 6 ms on a quiet machine (a low-rate p99 within 5.5 ms); on a busy one, whose
    // delays to wake-ups show in the p99 even at a low rate, 1.5 times that p99 and 1 ms,
    // so that low rates can hold.
    let low_p99 = low_rate_p99_ms(&dir);
    let limit_ms = if low_p99 <= 5.5 {
        6.0
    } else {
        (low_p99 * 1.5 + 1.0).ceil()
    };
    let slo = format!("p99<{limit_ms}ms");
    let mut args = WORKLOAD.to_vec();
    args.extend([
        "--max-step",
        "6",
        "--precision",
        "25",
        "--start-rate",
        "160",
        "--slo",
        &slo,
        "--json",
        "cap.json",
        "--assert",
        "capacity>=10",
    ]);
    let out = capacity(&dir, &args);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("assertion passed: capacity >= 10"),
        "{}",
        out.stdout
    );
    let doc = read_json(&dir, "cap.json");
    // Every service time is at least 5 ms (pg_sleep sleeps at least that long), so the
    // waits are at least those of an M/D/4 queue of 5 ms, and a latency of T needs a
    // wait below T − 5 ms: where more than 1% of the M/D/4 waits exceed it, p99 < T fails.
    let bound = md_rate_where_waits_exceed(4, 5.0, limit_ms - 5.0, 0.01);
    let good = doc["capacity_tps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(
        good < bound,
        "reported {good} tps for {slo}, but more than 1% of the waits pass {} ms from {bound:.0} tps",
        limit_ms - 5.0
    );
    println!("{}", out.stdout);
    assert!(doc["probe"].is_null(), "--start-rate: no probe");
    assert_eq!(doc["steps"][0]["offered_tps"].as_f64(), Some(160.0));
    // Above a sane floor.
    assert!(good >= 20.0, "{good}\n{}", out.stdout);
}

#[test]
fn the_simulated_queue_matches_known_figures() {
    // One server of 1 ms at 500 tps (M/D/1, ρ = 0.5): P(wait > 0) = ρ.
    let r = md_rate_where_waits_exceed(1, 1.0, 0.0, 0.5);
    assert!((r - 500.0).abs() < 15.0, "{r}");
}

#[test]
fn slos_and_options_it_cannot_use_are_refused() {
    let dir = scratch();
    let refused = |args: &[&str], says: &str| {
        let out = capacity(&dir, args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    };
    refused(&["-n"], "give at least one --slo");
    refused(&["--slo", "q99<5ms"], "unknown metric \"q99\"");
    refused(&["--slo", "tps>=100"], "capacity>=N");
    refused(&["--slo", "p99>5ms"], "upper bound");
    refused(&["--slo", "p99<5ms", "-R", "100"], "--rate cannot be used");
    refused(
        &["--slo", "p99<5ms", "--assert", "capacity>=5ms"],
        "no unit",
    );
    refused(&["--slo", "p99<5ms", "--bogus"], "unrecognized option");
    // p99.999 needs 384 k transactions to show it holds; 50 tps for 10 s gives 500.
    refused(
        &[
            "--slo",
            "p99.999<1s",
            "--start-rate",
            "50",
            "--max-step",
            "10",
            "-f",
            "sleep.sql",
        ],
        "cannot be measured: a step needs at least 384",
    );
}

#[test]
fn ctrl_c_stops_the_search_with_the_bound_so_far() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::time::Duration;
    let dir = scratch();
    let c = testkit::shared();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    // Steps of 1 s without warm-up (a mean-latency SLO needs no count), from 100 tps.
    cmd.args(["capacity", "--slo", "latency-avg<1s", "--start-rate", "100"])
        .args(["--step", "1", "--warmup", "0", "--json", "cap.json"])
        .args(&WORKLOAD[..7])
        .envs(c.env())
        .env("PGDATABASE", DB)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
    let (tx, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    // The first step's line, then Ctrl-C while the second step runs.
    let first = loop {
        match lines.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.starts_with("pgrush capacity: step 1 at ") => break line,
            Ok(_) => {}
            Err(e) => panic!("no first step: {e}"),
        }
    };
    assert!(first.ends_with(": holds"), "{first}");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = reader.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("pgrush capacity: interrupted; the best bound so far: at least 100 tps"),
        "{stderr}"
    );
    assert!(
        stdout.contains("sustainable rate: at least 100 tps"),
        "{stdout}"
    );
    let doc = read_json(&dir, "cap.json");
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert_eq!(doc["complete"], false, "{doc}");
    assert_eq!(doc["capacity_tps"].as_f64(), Some(100.0), "{doc}");
    assert_eq!(doc["steps"].as_array().map(Vec::len), Some(1), "{doc}");
}
