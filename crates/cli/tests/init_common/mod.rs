//! Shared helpers of the `init_*` tests: one PostgreSQL 18 cluster per test binary (with
//! statement logging), running pgbench 18 and pgrush, and fingerprints of a database.

#![allow(dead_code)]

use pgrush_cluster::{Cluster, ClusterError};
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output, mask_numbers};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

/// The cluster of this test binary: PostgreSQL 18 (pgbench 18's own build) logging every
/// statement with the database name as line prefix, autovacuum off.
pub fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(|| {
        let pgbench = oracle::require(Which::Pgbench18);
        let bin = pgbench
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Cluster::builder()
            .bin_dir(bin)
            .setting("log_statement", "all")
            .setting("log_line_prefix", "[%d] <%p> ")
            .setting("max_wal_size", "2GB")
            // No autovacuum: an automatic analyze running next to a load holds a snapshot
            // that keeps the `v` step from marking fresh pages all-visible, and its log
            // lines would count as an extra backend of the database.
            .setting("autovacuum", "off")
            .start()
            .unwrap_or_else(|e| panic!("cannot start the sandbox cluster: {e}"))
    })
}

/// A fresh, empty database with a unique name starting with `tag`.
pub fn new_db(tag: &str) -> String {
    let n = NEXT_DB.fetch_add(1, Ordering::SeqCst);
    let name = format!("{tag}_{}_{n}", std::process::id());
    cluster()
        .create_database(&name)
        .unwrap_or_else(|e| panic!("create database {name}: {e}"));
    name
}

fn with_env(mut cmd: Command) -> Command {
    testkit::clear_pg_env(&mut cmd);
    cmd.envs(cluster().env());
    cmd
}

/// pgbench 18 set up to reach this binary's cluster.
pub fn pgbench_command() -> Command {
    with_env(oracle::require(Which::Pgbench18).command())
}

/// pgrush set up to reach this binary's cluster.
pub fn pgrush_command() -> Command {
    // `with_env` also clears the `PGRUSH_INIT_*` switches of the caller's environment.
    with_env(Command::new(env!("CARGO_BIN_EXE_pgrush")))
}

/// A client program of the cluster's PostgreSQL build (`psql`, `pg_dump`) with the
/// connection options for `db`.
pub fn client_command(program: &str, db: &str) -> Command {
    let c = cluster();
    let mut cmd = c.install().command(program);
    testkit::clear_pg_env(&mut cmd);
    cmd.arg("-h")
        .arg(c.socket_dir())
        .args(["-p", &c.port().to_string(), "-U", c.superuser(), db]);
    cmd
}

/// Runs pgbench 18 with `args` and then the database name.
pub fn pgbench(args: &[&str], db: &str) -> Output {
    let mut cmd = pgbench_command();
    cmd.args(args).arg(db);
    testkit::run(&mut cmd)
}

/// Runs pgrush with `args` and then the database name.
pub fn pgrush(args: &[&str], db: &str) -> Output {
    pgrush_env(args, db, &[])
}

/// Runs pgrush with `args`, then the database name, and extra environment variables.
pub fn pgrush_env(args: &[&str], db: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = pgrush_command();
    cmd.envs(env.iter().copied());
    cmd.args(args).arg(db);
    testkit::run(&mut cmd)
}

/// The number of pgbench_accounts rows stored on pages not marked all-visible.
pub fn rows_on_not_all_visible_pages(db: &str) -> String {
    cluster()
        .psql_db(
            db,
            "create extension if not exists pg_visibility;
             select count(*) from pgbench_accounts a
             join pg_visibility_map('pgbench_accounts') v on v.blkno = (a.ctid::text::point)[0]::bigint
             where not v.all_visible",
        )
        .unwrap_or_else(|e| format!("error: {e}"))
}

/// pgbench's stderr with timings masked and its program name replaced by pgrush's.
pub fn normalize(stderr: &str) -> String {
    mask_numbers(&stderr.replace("pgbench: ", "pgrush: "))
}

/// `pg_dump --schema-only` of `db`, without the random `\restrict` key lines.
pub fn schema(db: &str) -> String {
    let mut cmd = client_command("pg_dump", db);
    cmd.args(["--schema-only", "--no-owner"]);
    let out = testkit::run(&mut cmd);
    assert_eq!(out.code, 0, "pg_dump failed: {}", out.stderr);
    out.stdout
        .lines()
        .filter(|l| !l.starts_with("\\restrict") && !l.starts_with("\\unrestrict"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Row count and checksum of every pgbench table (`missing` when a table does not exist).
pub fn contents(db: &str) -> Vec<String> {
    ["pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"]
        .iter()
        .map(|t| {
            let sql = format!(
                "select count(*) || ' ' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '-') from {t} t"
            );
            match cluster().psql_db(db, &sql) {
                Ok(v) => format!("{t}: {v}"),
                Err(ClusterError::Command { .. }) => format!("{t}: missing"),
                Err(e) => panic!("checksum of {t}: {e}"),
            }
        })
        .collect()
}

/// True when every pgbench heap page is marked all-visible (after a vacuum).
pub fn all_visible(db: &str) -> String {
    cluster()
        .psql_db(
            db,
            "select coalesce(bool_and(relallvisible = relpages), true) from pg_class where relname like 'pgbench%' and relkind = 'r'",
        )
        .unwrap_or_else(|e| format!("error: {e}"))
}

/// The statements the server logged for database `db`, in order (multi-line entries
/// joined), each with the backend's process id.
pub fn logged_entries(db: &str) -> Vec<(String, String)> {
    let log = cluster().log_contents();
    let prefix = format!("[{db}] <");
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_entry = false;
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix(&prefix) {
            let (pid, text) = rest.split_once("> ").unwrap_or(("", rest));
            out.push((pid.to_string(), text.to_string()));
            in_entry = true;
        } else if line.starts_with('[') {
            in_entry = false;
        } else if in_entry && let Some(last) = out.last_mut() {
            last.1.push('\n');
            last.1.push_str(line);
        }
    }
    out
}

/// The statements the server logged for database `db`, in order.
///
/// Connection-level lines that depend on when the client hung up (a client that quits
/// while COPY data is in flight may or may not make the server log a reset) are left out.
pub fn logged_statements(db: &str) -> Vec<String> {
    logged_entries(db)
        .into_iter()
        .map(|e| e.1)
        .filter(|text| !is_disconnect_noise(text))
        .collect()
}

fn is_disconnect_noise(text: &str) -> bool {
    text.starts_with("LOG:  could not receive data from client")
        || text.starts_with("LOG:  unexpected EOF on client connection")
        || text.starts_with("FATAL:  connection to client lost")
}

/// How many server processes ran statements in database `db`.
pub fn backends(db: &str) -> usize {
    let mut pids: Vec<String> = logged_entries(db).into_iter().map(|e| e.0).collect();
    pids.sort();
    pids.dedup();
    pids.len()
}
