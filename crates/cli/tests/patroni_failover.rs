//! A real HA manager: one etcd and two PostgreSQL 15 members managed by Patroni
//! (synchronous mode, `deploy/patroni/member.yml`), `pgrush --reconnect` through the
//! multi-host conninfo asking for the read-write member, and the leader's postmaster
//! killed during the run. The run goes on on the new leader, the outage window it
//! reports contains Patroni's own failover (from the old leader's "Primary crashed"
//! to the new leader's timeline switch, `GET /history`), no commit a client saw is
//! missing, and the report names the servers before and after.
//!
//! Patroni, etcd and python3-etcd must be installed (`scripts/install-deps`): the
//! test fails, naming the packages, when they are not.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pgrush_testkit::patroni::{Patroni, SUPERUSER};

/// Each transaction inserts one row numbered by its client and its number in that
/// client's run (`k` counts the client's transactions, as the `-l` log's second
/// column does).
const SCRIPT: &str = "\\set k :k + 1\ninsert into acked (client, k) values (:client_id, :k);\n";

/// Seconds since the epoch.
fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// `psql -Atc sql` through the conninfo (the read-write member).
fn psql(ha: &Patroni, sql: &str) -> String {
    let mut cmd = Command::new("/usr/lib/postgresql/15/bin/psql");
    pgrush_testkit::clear_pg_env(&mut cmd);
    let out = cmd
        .args([&ha.conninfo(), "-X", "-v", "ON_ERROR_STOP=1", "-Atc", sql])
        .env("PGPASSWORD", SUPERUSER.1)
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The time (s since the epoch) of the first line of a Patroni log (`TZ=UTC`:
/// `YYYY-MM-DD HH:MM:SS,mmm INFO: ...`) that contains `what`.
fn log_time(log: &str, what: &str) -> f64 {
    let format = time::format_description::parse_borrowed::<2>(
        "[year]-[month]-[day] [hour]:[minute]:[second],[subsecond]",
    )
    .expect("format");
    let line = log
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no {what:?} in the log:\n{log}"));
    let stamp = line.get(..23).expect("a timestamp");
    let t = time::PrimitiveDateTime::parse(stamp, &format)
        .unwrap_or_else(|e| panic!("{stamp}: {e}"))
        .assume_utc();
    t.unix_timestamp_nanos() as f64 / 1e9
}

/// When the timeline of member `i` began (s since the epoch): the last entry of its
/// REST API's `/history` (`[timeline, lsn, reason, timestamp, new leader]`).
fn timeline_switch(ha: &Patroni, i: usize) -> f64 {
    let (code, body) = ha.members[i].api("/history").expect("/history answers");
    assert_eq!(code, 200, "{body}");
    let history: serde_json::Value = serde_json::from_str(&body).expect("/history is JSON");
    let last = history.as_array().and_then(|h| h.last()).expect("an entry");
    let stamp = last[3].as_str().expect("a timestamp");
    let t = time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{stamp}: {e}"));
    t.unix_timestamp_nanos() as f64 / 1e9
}

/// One line of the `-l` log.
struct LogLine {
    client: u32,
    /// The client's transaction number (its `k`).
    tx: u64,
    /// Committed (else: a connection failure).
    committed: bool,
    /// When it ended, s since the epoch.
    end: f64,
}

/// The `-l` logs of the run in `dir`.
fn read_log(dir: &std::path::Path) -> Vec<LogLine> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the run dir").flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .starts_with("pgbench_log")
        {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("read a log");
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let committed = f[2] != "connection";
            assert!(
                !committed || f[2].parse::<u64>().is_ok(),
                "unexpected log line {line}"
            );
            lines.push(LogLine {
                client: f[0].parse().unwrap(),
                tx: f[1].parse().unwrap(),
                committed,
                end: f[4].parse::<f64>().unwrap() + f[5].parse::<f64>().unwrap() / 1e6,
            });
        }
    }
    lines
}

/// The outage window the `-l` log shows (s since the epoch): from the first
/// connection failure to the last client's first commit after its first failure.
fn log_window(log: &[LogLine]) -> (f64, f64) {
    let failed = log.iter().filter(|l| !l.committed);
    let start = failed.clone().map(|l| l.end).fold(f64::INFINITY, f64::min);
    let end = failed
        .map(|f| {
            log.iter()
                .filter(|l| l.client == f.client && l.committed && l.tx > f.tx)
                .map(|l| l.end)
                .fold(f64::INFINITY, f64::min)
        })
        .fold(f64::NEG_INFINITY, f64::max);
    (start, end)
}

#[test]
fn a_patroni_failover_under_reconnecting_clients_loses_no_synchronous_commit() {
    let ha = Patroni::start();
    let leader = ha.wait_for_sync_leader(Duration::from_secs(90));
    let new_leader = 1 - leader;
    psql(
        &ha,
        "create table acked (client int, k int, primary key (client, k))",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("insert.sql"), SCRIPT).expect("write the script");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    let child = cmd
        .current_dir(dir.path())
        .env("PGPASSWORD", SUPERUSER.1)
        .args(["-n", "-c", "2", "-j", "2", "-T", "10", "--reconnect=30"])
        .args(["-D", "k=0", "-f", "insert.sql", "-l", "--failures-detailed"])
        .args([
            "--json",
            "run.json",
            "--html",
            "run.html",
            "--no-server-stats",
        ])
        .arg(ha.conninfo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pgrush starts");
    std::thread::sleep(Duration::from_millis(2500));
    let killed = unix_s(ha.kill_postmaster(leader));
    let out = child.wait_with_output().expect("pgrush ends");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{stderr}\n{}",
        ha.logs()
    );
    ha.wait_for_leader(new_leader, Duration::from_secs(30));

    // Patroni's failover: the old leader saw its primary crashed, then the new
    // leader's timeline began.
    let crashed = log_time(&ha.members[leader].log(), "Primary crashed. Failing over.");
    let switched = timeline_switch(&ha, new_leader);
    assert!(killed < crashed && crashed < switched, "{}", ha.logs());

    // One outage window, as long as the log shows, around Patroni's failover.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    let windows = doc["outages"]["windows"].as_array().expect("windows");
    assert_eq!(windows.len(), 1, "{windows:?}\n{stdout}");
    let w = &windows[0];
    assert_eq!(w["open"], false, "{w}");
    let log = read_log(dir.path());
    let (start, end) = log_window(&log);
    let context = format!(
        "killed {killed:.3}, window {start:.3}..{end:.3}, Patroni: crash seen {crashed:.3}, \
         timeline switched {switched:.3}\n{stdout}"
    );
    let length = w["end_s"].as_f64().unwrap() - w["start_s"].as_f64().unwrap();
    assert!(
        (length - (end - start)).abs() < 0.02,
        "{length} s\n{context}"
    );
    // The clients lose their connections with the postmaster (10 ms for the clocks
    // read at slightly different moments), before Patroni notices...
    assert!(killed - 0.01 <= start && start <= crashed, "{context}");
    // ... and commit again once the new timeline began: within the backoff's cap
    // (1 s) and a connection and a transaction on a busy machine (1 s).
    assert!(switched <= end && end <= switched + 2.0, "{context}");

    // The run went on on the new leader: commits after the window.
    let failures = log.iter().filter(|l| !l.committed).count();
    let after = log.iter().filter(|l| l.committed && l.end > end).count();
    assert!(after > 0, "no commit after the window\n{context}");

    // No commit a client saw is missing on the new leader; rows no client saw
    // committed are at most the transactions in flight when the connections were
    // lost (or the run ended).
    let rows: BTreeSet<(u32, u64)> = psql(&ha, "select client, k from acked")
        .lines()
        .map(|l| {
            let (c, k) = l.split_once('|').expect("client|k");
            (c.parse().unwrap(), k.parse().unwrap())
        })
        .collect();
    let seen: BTreeSet<(u32, u64)> = log
        .iter()
        .filter(|l| l.committed)
        .map(|l| (l.client, l.tx))
        .collect();
    let lost: Vec<_> = seen.difference(&rows).collect();
    assert!(
        lost.is_empty(),
        "committed but missing: {lost:?}\n{context}"
    );
    let unseen = rows.difference(&seen).count();
    assert!(
        unseen <= failures + 2,
        "{unseen} rows no client saw committed"
    );

    // Each client was on the old leader before and on the new one after, both
    // primaries of one system.
    let port = |i: usize| ha.members[i].pg_port.to_string();
    for c in doc["outages"]["clients"].as_array().expect("clients") {
        assert_eq!(c["before"]["port"], port(leader), "{c}");
        assert_eq!(c["after"]["port"], port(new_leader), "{c}");
        assert_eq!(c["before"]["in_recovery"], false, "{c}");
        assert_eq!(c["after"]["in_recovery"], false, "{c}");
        assert_eq!(
            c["before"]["system_identifier"], c["after"]["system_identifier"],
            "{c}"
        );
    }
    let system = doc["outages"]["clients"][0]["before"]["system_identifier"]
        .as_str()
        .expect("a system identifier");
    let on = |i: usize| format!("127.0.0.1:{} (primary), system {system}", port(i));
    let servers = format!(
        "   servers: {} -> {} (2 client outages)",
        on(leader),
        on(new_leader)
    );
    assert!(stdout.contains(&servers), "{stdout}");
    let page = std::fs::read_to_string(dir.path().join("run.html")).expect("the page");
    let servers = format!("{} → {} (2 client outages)", on(leader), on(new_leader));
    assert!(page.contains(&servers), "{servers}");
    // The minute before and after the window had commits (the run's intervals).
    for stretch in ["before", "after"] {
        let tps = w[stretch]["tps"].as_f64().unwrap_or(0.0);
        assert!(tps > 0.0, "{stretch}: {w}");
    }
    eprintln!(
        "after the kill: Patroni saw the crash at +{:.2} s, the new timeline began at +{:.2} s; \
         the clients' outage window: +{:.2} to +{:.2} s",
        crashed - killed,
        switched - killed,
        start - killed,
        end - killed
    );
}
