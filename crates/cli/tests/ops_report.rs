//! `pgrush report` with `pgrush ops` results: two results side by side (logged against
//! unlogged tables), as text, Markdown, CSV and an HTML page.

mod ops_common;

use std::process::Command;

use ops_common::Sandbox;
use pgrush_testkit::run;

#[test]
fn report_compares_two_ops_results() {
    let sandbox = Sandbox::new();
    let a = sandbox.path().join("logged.json");
    let b = sandbox.path().join("unlogged.json");
    // Unlogged tables come back empty from crash recovery and PITR: the checks expect
    // that, and the steps after a crash load the tables again.
    let unlogged = [
        "--unlogged-tables",
        "--steps",
        "load,reindex,crash-recovery,pitr",
        "--workload-seconds",
        "1",
    ];
    for (file, extra) in [
        (&a, &["--steps", "load,reindex", "--repeat", "2"][..]),
        (&b, &unlogged[..]),
    ] {
        let mut args = vec!["--scale", "1", "--json"];
        args.push(file.to_str().unwrap());
        args.extend(extra);
        let out = run(&mut sandbox.command(None, &args));
        assert_eq!(out.code, 0, "{out:?}");
    }
    let report = |extra: &[&str]| {
        run(Command::new(env!("CARGO_BIN_EXE_pgrush"))
            .arg("report")
            .arg(&a)
            .arg(&b)
            .args(extra))
    };
    let out = report(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("A: ") && lines[0].ends_with("logged.json"));
    assert!(lines[1].starts_with("B: ") && lines[1].ends_with("unlogged.json"));
    assert!(
        lines[2].contains("A time") && lines[2].ends_with("B/A"),
        "{}",
        out.stdout
    );
    for step in ["load", "reindex", "reindex concurrently"] {
        let row = lines
            .iter()
            .find(|l| {
                l.split_whitespace()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .join(" ")
                    .starts_with(step)
                    && l.contains(" s ")
            })
            .unwrap_or_else(|| panic!("no {step} row in:\n{}", out.stdout));
        assert!(row.ends_with('x'), "ratio on {row}");
    }
    let second = lines
        .iter()
        .find(|l| l.contains("reindex concurrently #2"))
        .expect("second round's row");
    assert!(
        second.ends_with(" -"),
        "only A has a second round: {second}"
    );
    let rounds: Vec<u64> = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(&a).unwrap(),
    )
    .unwrap()["scales"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["round"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, vec![1, 1, 2, 2]);
    let crash = lines
        .iter()
        .find(|l| l.contains("crash-recovery"))
        .expect("crash-recovery row");
    assert!(crash.contains(" - "), "only B has it: {crash}");
    check_markdown_and_csv(&report, &a.display().to_string(), &b.display().to_string());
    let page = sandbox.path().join("cmp.html");
    let out = report(&["--html", page.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("comparison of 2 results") && html.contains("<svg"));
    assert!(html.contains("A load") && html.contains("B load"));
    // A document that is not an ops result among ops results is a clear error.
    let bad = sandbox.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"other\"}").unwrap();
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgrush"))
        .arg("report")
        .arg(&a)
        .arg(&bad));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("not a pgrush ops result"),
        "{}",
        out.stderr
    );
}

/// `--markdown` and `--csv` render the same comparison as the text table.
fn check_markdown_and_csv(report: &dyn Fn(&[&str]) -> pgrush_testkit::Output, a: &str, b: &str) {
    let out = report(&["--markdown"]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("| scale | step | {a} time | {a} size | {b} time | {b} size | B/A |")
    );
    assert_eq!(lines[1], "|---:|---|---:|---:|---:|---:|---:|");
    let load = lines
        .iter()
        .find(|l| l.starts_with("| 1 | load |"))
        .unwrap_or_else(|| panic!("no load row in:\n{}", out.stdout));
    assert!(load.ends_with("x |") && load.contains(" s | "), "{load}");
    let second = lines
        .iter()
        .find(|l| l.starts_with("| 1 | reindex concurrently #2 |"))
        .expect("second round's row");
    assert!(second.ends_with("| - | - | - |"), "only A has it: {second}");

    let out = report(&["--csv"]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("scale,step,{a} seconds,{a} bytes,{b} seconds,{b} bytes,B/A time")
    );
    let load: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("1,load,"))
        .expect("load row")
        .split(',')
        .collect();
    assert_eq!(load.len(), 7, "{load:?}");
    let number = |i: usize| {
        load[i]
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{load:?}"))
    };
    let (a_seconds, b_seconds) = (number(2), number(4));
    assert!(a_seconds > 0.0 && b_seconds > 0.0 && number(3) > 1e6);
    assert!(
        (number(6) - b_seconds / a_seconds).abs() < 0.01 * number(6),
        "{load:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("1,reindex concurrently #2,") && l.ends_with(",,,")),
        "only A has a second round:\n{}",
        out.stdout
    );
    assert_eq!(
        lines.len(),
        report(&[]).stdout.lines().count() - 2,
        "one CSV line per table row, plus the header"
    );
}
