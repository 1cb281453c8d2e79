//! `pgrush sweep`: every cell runs with its settings (table persistence and options,
//! client count, server settings, read back from the run documents and from what the
//! sweep recorded), a second invocation resumes, Ctrl-C keeps finished runs and
//! restores the server's settings, and settings that need a restart restart pgrush's
//! own cluster.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgrush_cluster::Cluster;
use pgrush_testkit::{Output, run};
use serde_json::Value;

/// `pgrush sweep ARGS` without the caller's `PG*` variables.
fn sweep(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    cmd.arg("sweep").args(args);
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd
}

fn assert_ok(out: &Output) {
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The sweep schema, checked in beside the run schema.
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-sweep.v1.schema.json"
));

fn assert_valid(summary: &Value) {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema is valid");
    let errors: Vec<String> = validator
        .iter_errors(summary)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The value of `axis` in `cell` of a summary.
fn axis_value<'a>(summary: &'a Value, cell: &'a Value, axis: &str) -> &'a str {
    let k = summary["axes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|a| a["name"] == axis)
        .unwrap_or_else(|| panic!("no axis {axis}"));
    cell["values"][k].as_str().unwrap()
}

/// The finished run documents in `dir`.
fn documents(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut docs: Vec<_> = std::fs::read_dir(dir.join("runs"))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    name.ends_with(".json") && !name.ends_with(".facts.json")
                })
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    docs
}

#[test]
fn two_by_two_sweep_on_a_throwaway_cluster_runs_every_cell_then_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let json = dir.path().join("summary.json");
    let (out_s, json_s) = (out_dir.to_str().unwrap(), json.to_str().unwrap());
    let args = [
        "--vary",
        "unlogged=off,on",
        "--vary",
        "clients=1,2",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--seed",
        "3",
        "--out",
        out_s,
        "--json",
        json_s,
        "-s",
        "1",
        "-F",
        "90",
        "-t",
        "50",
    ];
    let out = run(&mut sweep(&args));
    assert_ok(&out);
    assert!(
        out.stdout.contains("order seed 3 (--seed 3"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("throwaway PostgreSQL"),
        "{}",
        out.stdout
    );
    // Off a terminal: one line per run, with the time left once a run has been timed
    // (`-t`: the first run is); the last says none.
    let run_line = |k: usize| {
        let prefix = format!("pgrush sweep: [{k}/8] cell ");
        out.stdout
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no line of run {k}:\n{}", out.stdout))
    };
    for k in 1..8 {
        let line = run_line(k);
        assert!(
            line.contains(" tps; about ") && line.ends_with(" left"),
            "{line}"
        );
    }
    assert!(run_line(8).ends_with(" tps"), "{}", run_line(8));
    assert!(!out.stdout.contains('\r') && !out.stderr.contains('\r'));
    let table_line = |label: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row:\n{}", out.stdout))
            .to_string()
    };
    assert!(
        out.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("cell 1") && l.ends_with("cell 4")),
        "{}",
        out.stdout
    );
    assert_eq!(
        table_line("clients").split_whitespace().collect::<Vec<_>>(),
        ["clients", "1", "2", "1", "2"]
    );
    assert!(table_line("tps ").contains('['), "{}", out.stdout);
    assert!(out.stdout.contains("clients 1 -> 2 (unlogged=off): tps x"));

    let summary = read_json(&json);
    assert_eq!(summary["format"], "pgrush-sweep");
    assert_valid(&summary);
    let cells = summary["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for cell in cells {
        let unlogged = axis_value(&summary, cell, "unlogged");
        let clients: u64 = axis_value(&summary, cell, "clients").parse().unwrap();
        let runs = cell["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{cell}");
        for record in runs {
            assert_eq!(record["clients"], clients);
            let doc = read_json(&out_dir.join(record["document"].as_str().unwrap()));
            assert_eq!(doc["config"]["clients"], clients, "{}", record["document"]);
            assert_eq!(doc["format"], "pgrush-run");
            assert_eq!(doc["results"]["transactions"]["processed"], 50 * clients);
            let tables = record["tables"].as_array().unwrap();
            let accounts = tables
                .iter()
                .find(|t| t["table"] == "pgbench_accounts")
                .expect("pgbench_accounts recorded");
            let persistence = if unlogged == "on" { "u" } else { "p" };
            assert_eq!(accounts["persistence"], persistence, "{cell}");
            assert_eq!(accounts["options"], "fillfactor=90");
        }
        assert!(cell["tps"]["low"].as_f64().unwrap() <= cell["tps"]["high"].as_f64().unwrap());
        assert!(!cell["statements"].as_array().unwrap().is_empty());
    }
    assert_eq!(summary["comparisons"].as_array().unwrap().len(), 4);

    // The same command again: nothing runs, the documents stay as they were.
    let docs = documents(&out_dir);
    assert_eq!(docs.len(), 8);
    let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let before: Vec<_> = docs.iter().map(|p| modified(p)).collect();
    let again = run(&mut sweep(&args));
    assert_ok(&again);
    assert!(
        again.stdout.contains("all 8 runs are already done"),
        "{}",
        again.stdout
    );
    assert!(!again.stdout.contains("throwaway PostgreSQL"));
    let after: Vec<_> = docs.iter().map(|p| modified(p)).collect();
    assert_eq!(before, after);
    assert_eq!(read_json(&json)["cells"], summary["cells"]);

    // pgrush report DIR renders the saved sweep: the same table and comparisons.
    let html = dir.path().join("sweep.html");
    let report = run(Command::new(env!("CARGO_BIN_EXE_pgrush")).args([
        "report",
        out_s,
        "--html",
        html.to_str().unwrap(),
    ]));
    assert_ok(&report);
    assert!(report.stdout.len() > 200 && out.stdout.ends_with(&report.stdout));
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("<g class=\"bar\">").count(),
        4 + 4 * 11,
        "a tps bar per cell, a bar per statement and cell: {page}"
    );
    assert!(page.contains("unlogged=on clients=2"));
    assert_eq!(
        page.matches("<polyline ").count(),
        4,
        "one spectrum per cell"
    );

    let csv = run(Command::new(env!("CARGO_BIN_EXE_pgrush")).args(["report", out_s, "--csv"]));
    assert_ok(&csv);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines[0], ",cell 1,cell 2,cell 3,cell 4");
    assert_eq!(lines[1], "unlogged,off,off,on,on");
    assert!(lines[4].starts_with("tps,\""), "{}", csv.stdout);
    let markdown =
        run(Command::new(env!("CARGO_BIN_EXE_pgrush")).args(["report", out_s, "--markdown"]));
    assert_ok(&markdown);
    assert!(
        markdown
            .stdout
            .starts_with("|  | cell 1 | cell 2 | cell 3 | cell 4 |\n| --- |")
    );
    assert!(
        markdown
            .stdout
            .contains("\n- clients 1 -> 2 (unlogged=off): tps x")
    );

    // Another sweep in the same directory is refused.
    let mut other = args.to_vec();
    other[5] = "3";
    let refused = run(&mut sweep(&other));
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("holds a different sweep (the repeats differ)"),
        "{}",
        refused.stderr
    );
}

/// Starts `pgrush sweep ARGS`, sends it `signal` once `runs` run documents exist in
/// `out_dir`, and waits for it.
fn start_and_signal(
    args: &[&str],
    out_dir: &Path,
    runs: usize,
    signal: libc::c_int,
) -> std::process::Output {
    let child = sweep(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while documents(out_dir).len() < runs {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no run finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    child.wait_with_output().unwrap()
}

/// The connection arguments of a test cluster.
fn conn_args(cluster: &Cluster) -> Vec<String> {
    vec![
        "-h".into(),
        cluster.socket_dir().display().to_string(),
        "-p".into(),
        cluster.port().to_string(),
        "-U".into(),
        cluster.superuser().to_string(),
        "postgres".into(),
    ]
}

#[test]
fn setting_axis_is_applied_restored_after_ctrl_c_and_resumed() {
    let cluster = Cluster::builder().start().expect("test cluster");
    // A value of our own in postgresql.auto.conf, which the sweep must put back.
    cluster.alter_system("synchronous_commit", "local").unwrap();
    cluster.reload().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let conn = conn_args(&cluster);
    let mut args: Vec<&str> = vec![
        "--vary",
        "set:synchronous_commit=on,off",
        "--repeat",
        "3",
        "--warmup",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
        "-s",
        "1",
        "-T",
        "1",
    ];
    args.extend(conn.iter().map(String::as_str));

    // Killed outright after its first run: no chance to restore, but a journal says
    // what to put back.
    let killed = start_and_signal(&args, &out_dir, 1, libc::SIGKILL);
    assert_eq!(killed.status.code(), None);
    assert_ne!(cluster.show("synchronous_commit").unwrap(), "local");
    assert!(out_dir.join("settings-to-restore.json").is_file());
    // The run the killed sweep left behind ends by itself (-T 1).
    std::thread::sleep(Duration::from_millis(1500));

    // Ctrl-C after one more run: the finished runs stay, the settings are restored
    // (to the value before the first, killed, invocation).
    let interrupted = start_and_signal(&args, &out_dir, 2, libc::SIGINT);
    let stderr = String::from_utf8_lossy(&interrupted.stderr);
    assert_eq!(interrupted.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("interrupted; the finished runs are kept"),
        "{stderr}"
    );
    assert_eq!(cluster.show("synchronous_commit").unwrap(), "local");
    assert!(!out_dir.join("settings-to-restore.json").exists());
    let kept = documents(&out_dir).len();
    assert!((2..6).contains(&kept), "{kept} runs kept");

    let out = run(&mut sweep(&args));
    assert_ok(&out);
    assert!(
        out.stdout
            .contains(&format!("resuming: {kept} runs done, {} to go", 6 - kept)),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("restored settings: synchronous_commit"));
    assert_eq!(cluster.show("synchronous_commit").unwrap(), "local");
    let plan = read_json(&out_dir.join("sweep.json"));
    for step in plan["steps"].as_array().unwrap() {
        let cell = step["cell"].as_u64().unwrap() as usize;
        let wanted = plan["cells"][cell]["values"][0].as_str().unwrap();
        let name = format!(
            "runs/cell-{:02}-repeat-{}.json",
            cell + 1,
            step["repeat"].as_u64().unwrap()
        );
        let doc = read_json(&out_dir.join(&name));
        assert_eq!(
            doc["server"]["settings"]["synchronous_commit"], wanted,
            "{name}"
        );
    }

    // A setting that needs a restart cannot be changed on a server pgrush did not start.
    let mut restart: Vec<&str> = vec![
        "--vary",
        "set:max_connections=90,91",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--out",
    ];
    let restart_dir = dir.path().join("restart");
    restart.push(restart_dir.to_str().unwrap());
    restart.extend(["-s", "1", "-T", "1"]);
    restart.extend(conn.iter().map(String::as_str));
    let refused = run(&mut sweep(&restart));
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("setting max_connections needs a server restart"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        cluster
            .psql("SELECT count(*) FROM pg_settings WHERE pending_restart")
            .unwrap(),
        "0"
    );
}

#[test]
fn restart_settings_restart_the_throwaway_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let json = dir.path().join("summary.json");
    let out = run(&mut sweep(&[
        "--json",
        json.to_str().unwrap(),
        "--vary",
        "set:shared_buffers=16MB,24MB",
        "--repeat",
        "1",
        "--warmup",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
        "-s",
        "1",
        "-T",
        "1",
    ]));
    assert_ok(&out);
    assert!(
        out.stdout.contains("differences below are untested"),
        "{}",
        out.stdout
    );
    let summary = read_json(&json);
    assert_valid(&summary);
    assert_eq!(summary["untested"], true);
    assert_eq!(summary["comparisons"][0]["verdict"], "untested");
    let plan = read_json(&out_dir.join("sweep.json"));
    for (cell, wanted) in ["16MB", "24MB"].iter().enumerate() {
        let doc = read_json(&out_dir.join(format!("runs/cell-{:02}-repeat-1.json", cell + 1)));
        assert_eq!(doc["server"]["settings"]["shared_buffers"], *wanted);
        assert_eq!(plan["cells"][cell]["values"][0], *wanted);
    }
    let log = std::fs::read_to_string(out_dir.join("sweep.log")).unwrap();
    assert!(log.contains("warm-up"), "{log}");
    // The warm-up is the measured run's own (`--warmup`), not a run of its own.
    let runs: Vec<&str> = log.lines().filter(|l| l.starts_with("$ pgrush ")).collect();
    let measured: Vec<&&str> = runs.iter().filter(|l| l.contains("--json=")).collect();
    assert_eq!(measured.len(), 2, "{log}");
    assert!(measured.iter().all(|l| l.contains(" --warmup=1")), "{log}");
    assert!(
        !runs
            .iter()
            .any(|l| l.contains("--time=1") && !l.contains("--json=")),
        "{log}"
    );
}

#[test]
fn bad_sweeps_are_refused_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "give at least one --vary"),
        (&["--vary", "colour=red"], "unknown axis \"colour\""),
        (
            &["--vary", "clients=1,2", "-c", "4"],
            "--vary clients conflicts with --client",
        ),
        (
            &["--vary", "clients=1,2", "-i"],
            "the sweep initializes the tables itself",
        ),
        (
            &["--vary", "clients=1,2", "--repeat", "x"],
            "invalid repeat count",
        ),
    ];
    for (args, message) in cases {
        let out = run(&mut sweep(args));
        assert_eq!(out.code, 1, "{args:?}");
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
    }
    let help = run(&mut sweep(&["--help"]));
    assert_ok(&help);
    assert!(help.stdout.contains("--vary AXIS=V1,V2"));
    for line in help.stdout.lines() {
        assert!(line.chars().count() < 80, "help line too long: {line:?}");
    }
    // pgbench's own checks apply to the options passed through.
    let out = run(&mut sweep(&["--vary", "clients=1,2", "-T", "1", "-t", "5"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("specify either a number of transactions"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_directory_of_other_files_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("mine");
    std::fs::create_dir_all(out_dir.join("runs")).unwrap();
    let files = [
        ("notes.txt", "my notes\n"),
        ("sweep.log", "my log\n"),
        ("runs/cell-01-repeat-1.json", "{\"mine\": true}\n"),
    ];
    for (name, text) in files {
        std::fs::write(out_dir.join(name), text).unwrap();
    }
    let out = run(&mut sweep(&[
        "--vary",
        "clients=1,2",
        "--out",
        out_dir.to_str().unwrap(),
        "-t",
        "5",
    ]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "pgrush: error: sweep: output directory \"{}\" is not empty and holds no sweep \
             (no sweep.json): choose a new or empty directory with --out\n",
            out_dir.display()
        )
    );
    for (name, text) in files {
        assert_eq!(std::fs::read_to_string(out_dir.join(name)).unwrap(), text);
    }
    let mut left: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["notes.txt", "runs", "sweep.log"], "nothing written");
}

#[test]
fn a_role_without_checkpoint_rights_still_sweeps_with_a_warning() {
    let cluster = Cluster::builder().start().expect("test cluster");
    cluster.psql("CREATE ROLE bench LOGIN").unwrap();
    cluster.create_database("benchdb").unwrap();
    cluster
        .psql("ALTER DATABASE benchdb OWNER TO bench")
        .unwrap();
    cluster
        .psql_db("benchdb", "ALTER SCHEMA public OWNER TO bench")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let (socket, port) = (
        cluster.socket_dir().display().to_string(),
        cluster.port().to_string(),
    );
    let out = run(&mut sweep(&[
        "--vary",
        "clients=1,2",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
        "-s",
        "1",
        "-t",
        "10",
        "-h",
        &socket,
        "-p",
        &port,
        "-U",
        "bench",
        "benchdb",
    ]));
    assert_ok(&out);
    let warnings = out
        .stdout
        .lines()
        .filter(|l| l.contains("warning: CHECKPOINT"))
        .count();
    assert_eq!(warnings, 1, "{}", out.stdout);
    assert!(out.stdout.contains("must be superuser"), "{}", out.stdout);
    assert_eq!(documents(&out_dir).len(), 2);
}
