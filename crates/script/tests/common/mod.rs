//! Shared helpers for the differential tests: one throwaway cluster per test binary,
//! pgbench 18 runs, and a small interpreter that executes a script's meta commands
//! with this crate (what the engine will do), producing pgbench's stderr lines.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use pgrush_cluster::Cluster;
use pgrush_script::{CommandKind, EvalContext, Script, Seeds, Variables, set_automatic_variables};
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};

/// The cluster shared by all tests of this binary.
pub fn cluster() -> &'static Cluster {
    pgrush_testkit::shared()
}

/// A temporary directory that lives as long as the test binary.
pub fn tmpdir() -> &'static std::path::Path {
    static D: OnceLock<tempfile::TempDir> = OnceLock::new();
    D.get_or_init(|| tempfile::tempdir().expect("tempdir"))
        .path()
}

/// Write `text` to a fresh file and return its path.
pub fn write_script(name: &str, text: &str) -> PathBuf {
    let p = tmpdir().join(name);
    std::fs::write(&p, text).expect("write script");
    p
}

/// Run pgbench 18 on `script` (file name `name`) with `args`; when `server` is false
/// it points at a socket directory that does not exist (enough for load errors).
pub fn pgbench18(name: &str, script: &str, args: &[&str], server: bool) -> Output {
    pgbench(Which::Pgbench18, name, script, args, server)
}

/// Like [`pgbench18`] with a chosen oracle.
pub fn pgbench(which: Which, name: &str, script: &str, args: &[&str], server: bool) -> Output {
    let path = write_script(name, script);
    let pgb = oracle::require(which);
    let mut cmd = pgb.command();
    cmd.current_dir(tmpdir());
    cmd.env_remove("PGBENCH_RANDOM_SEED");
    if server {
        for (k, v) in cluster().env() {
            cmd.env(k, v);
        }
    } else {
        cmd.env("PGHOST", "/nonexistent-pgrush-socket-dir");
    }
    cmd.args(["-n", "-t", "1"]);
    cmd.args(args);
    cmd.arg("-f").arg(path.file_name().expect("file name"));
    testkit::run(&mut cmd)
}

/// The stderr lines of interest: `debug(...)` output and error lines (without the
/// final `Run was aborted` line and informational lines).
pub fn interesting(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            (l.starts_with("debug(") || l.starts_with("pgbench: error: "))
                && !l.contains("Run was aborted")
        })
        .map(str::to_string)
        .collect()
}

/// Group lines into per-client sequences using marker lines: a script's first
/// command is `\set m debug(:client_id)` (it prints `...command=1): int K`), or an
/// abort line names the client.
pub fn by_client(lines: &[String], marker_command: usize) -> Vec<(i64, Vec<String>)> {
    let marker = format!(",command={marker_command}): int ");
    let mut out: Vec<(i64, Vec<String>)> = Vec::new();
    for l in lines {
        if l.starts_with("debug(") && l.contains(&marker) {
            let k: i64 = l
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(-1);
            out.push((k, Vec::new()));
            continue;
        }
        match out.last_mut() {
            Some((_, v)) => v.push(l.clone()),
            None => out.push((-1, vec![l.clone()])),
        }
    }
    out
}

/// Execute the meta commands of `script` for `nclients` clients (one thread,
/// round robin per transaction), as pgbench does with `-n -t ntx -j 1`.
/// Returns per-transaction (client, lines) in execution order.
pub fn simulate(
    script: &Script,
    nclients: usize,
    ntx: usize,
    seed: u64,
    defines: &[(&str, &str)],
) -> Vec<(i64, Vec<String>)> {
    let defined = |n: &str| defines.iter().any(|(k, _)| *k == n);
    let seeds = Seeds::plan(seed, nclients, 1, defined("default_seed"));
    let mut rngs = seeds.clients.clone();
    let mut vars: Vec<Variables> = (0..nclients)
        .map(|c| {
            let mut v = Variables::new();
            for (k, val) in defines {
                v.put_text("option", k, val).expect("define");
            }
            set_automatic_variables(&mut v, &defined, 1, c as i64, seeds.default_seed, seed);
            v
        })
        .collect();
    let mut alive = vec![true; nclients];
    let mut out = Vec::new();
    for _ in 0..ntx {
        for c in 0..nclients {
            if !alive[c] {
                continue;
            }
            let mut lines = Vec::new();
            if let Err(()) = run_tx(script, c, &mut vars[c], &mut rngs[c], &mut lines) {
                alive[c] = false;
            }
            out.push((c as i64, lines));
        }
    }
    out
}

fn run_tx(
    script: &Script,
    client: usize,
    vars: &mut Variables,
    rng: &mut pgrush_script::Prng,
    lines: &mut Vec<String>,
) -> Result<(), ()> {
    let cmds = &script.commands;
    let mut eval = |e: &pgrush_script::Expr,
                    i: usize,
                    name: &str,
                    lines: &mut Vec<String>,
                    vars: &Variables| {
        let mut dbg = Vec::new();
        let r = {
            let mut ctx = EvalContext {
                vars,
                rng: &mut *rng,
                script: 0,
                command: i,
                debug_out: &mut dbg,
            };
            e.eval(&mut ctx)
        };
        lines.extend(dbg);
        r.map_err(|e| {
            if let Some(m) = e.message() {
                lines.push(format!("pgbench: error: {}", String::from_utf8_lossy(&m)));
            }
            lines.push(format!(
                "pgbench: error: client {client} aborted in command {i} ({name}) of script 0; evaluation of meta-command failed"
            ));
        })
    };
    let mut i = 0;
    while i < cmds.len() {
        let cmd = &cmds[i];
        match &cmd.kind {
            CommandKind::Set { var, expr, .. } => {
                let v = eval(expr, i, "set", lines, vars)?;
                if let Err(e) = vars.put_value("set", &var.name, v) {
                    lines.push(format!("pgbench: error: {e}"));
                    lines.push(format!(
                        "pgbench: error: client {client} aborted in command {i} (set) of script 0; assignment of meta-command failed"
                    ));
                    return Err(());
                }
                i += 1;
            }
            CommandKind::If(e) => {
                if eval(e, i, "if", lines, vars)?.truth() {
                    i += 1;
                } else {
                    let mut j = cmd.cond.expect("jumps").next;
                    while let CommandKind::Elif(e2) = &cmds[j].kind {
                        if eval(e2, j, "elif", lines, vars)?.truth() {
                            break;
                        }
                        j = cmds[j].cond.expect("jumps").next;
                    }
                    i = j + 1;
                }
            }
            CommandKind::Elif(_) | CommandKind::Else => i = cmd.cond.expect("jumps").endif + 1,
            _ => i += 1,
        }
    }
    Ok(())
}

/// Flatten per-transaction simulation output into one line sequence.
pub fn flatten(sim: Vec<(i64, Vec<String>)>) -> Vec<String> {
    sim.into_iter().flat_map(|(_, l)| l).collect()
}
