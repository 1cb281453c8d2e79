//! `pgrush ops`: operations timings (load, dump, restore, reindex, base backup, crash
//! recovery, point-in-time recovery) at each scale, through `pgrush_lab`.
//!
//! The ops options (`--scale`, `--steps`, `--dump-format`, `--repeat`, `--json`,
//! `--workload-seconds`, `--workload-clients`) are taken out first; the rest is an
//! ordinary `pgrush -i` command line (init options, `-j`, connection options, DBNAME),
//! parsed by the pgbench parser. Without connection options the steps run on a
//! throwaway cluster from the local binaries; `--pgdata DIR` names an existing local
//! cluster instead.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use pgrush_lab::ops::{DumpFormat, OpsConfig, OpsDocument, StepKind, StepResult, Target, text};

use pgrush_run::options::Action;
use pgrush_run::{Failure, Line};

use crate::subcommand::{Found, Invocation, Operands, Opt, Subcommand, positive};

/// `pgrush ops`: its options and `--help` (every other option is pgbench's, for `-i`).
pub const COMMAND: Subcommand = Subcommand {
    name: "ops",
    args: "",
    summary: "time load, dump, restore, reindex, backups, recovery",
    about: "\
pgrush ops times the operations around a database at each scale.

Usage:
  pgrush ops [--scale 1,10,100] [--steps STEP,...] [-j N] [--dump-format FORMAT]
             [--repeat N] [--json FILE] [--html FILE] [init options]
             [--pgdata DIR | connection options | DBNAME]

For each scale: load (pgrush -i), then each step, each timed, with sizes and rates:
  load            -i's own step times, rows/s, table/index/total sizes, WAL written
  dump            pg_dump (-Fd -j N for the directory format): time, size, MB/s
  restore         pg_restore -j N into a fresh database; checks the copy equals
                  the original (row counts and a checksum per table)
  reindex         REINDEX TABLE pgbench_accounts, then REINDEX ... CONCURRENTLY
  basebackup      pg_basebackup -D DIR: time, size, MB/s
  crash-recovery  tpcb-like workload with checkpoints held off, SIGKILL of the
                  postmaster, restart timed; WAL replayed; checks no commit is lost
  pitr            WAL archive, base backup, workload, restore point, workload;
                  recovery of the backup to the restore point timed and checked
Not run unless named in --steps (each builds a streaming standby, pg_basebackup -R):
  switchover      tpcb-like workload with --reconnect through host=primary,standby
                  target_session_attrs=read-write; clean shutdown of the primary,
                  standby promoted; the clients' outage, shutdown and promotion
                  timed; checks no commit the clients saw is lost (counted with an
                  asynchronous standby, none allowed with --sync-standby); then the
                  old primary rejoins as a standby (pg_rewind if it diverged),
                  timed, and is promoted back
  failover        the same with SIGKILL of the primary's postmaster
Without connection options (-h, -p, -U, DBNAME) the steps run on a throwaway
cluster from the local PostgreSQL binaries (PGRUSH_PG_BIN chooses them), removed
at the end; it runs with fsync, synchronous_commit and full_page_writes on,
shared_buffers 128MB, archive_mode and wal_log_hints on. Against another
server crash-recovery and pitr are skipped. With --pgdata DIR every step runs on
that existing local cluster, in a scratch database pgrush_ops dropped at the
end; the server is restarted so that pgrush is its parent (its output on the
file it wrote to, e.g. pg_ctl -l FILE), and is left as it was found (running or
stopped, its configuration files restored); a run killed outright is handed back
by the next one (from the journal DIR/pgrush-adopted.json). pg_dump,
pg_restore and pg_basebackup must match the server's major version. Warning:
the load replaces the pgbench_* tables of the database used.

",
    options: &[
        Opt::valued(None, "scale", "LIST", &["scales, in order (default 1,10)"]),
        Opt::valued(
            None,
            "steps",
            "LIST",
            &[
                "steps (default all but switchover and failover;",
                "load always runs, restore adds dump)",
            ],
        ),
        Opt::valued(
            None,
            "dump-format",
            "custom|directory|plain|tar",
            &["pg_dump's format (default custom)"],
        ),
        Opt::valued(
            None,
            "repeat",
            "N",
            &["run each scale's steps N times (default 1)"],
        ),
        Opt::valued(
            None,
            "json",
            "FILE",
            &["write the results as JSON (rewritten after each", "step)"],
        ),
        Opt::valued(
            None,
            "html",
            "FILE",
            &["write an HTML page: times and sizes against scale"],
        ),
        Opt::valued(
            None,
            "workload-seconds",
            "N",
            &[
                "length of the crash-recovery, pitr, switchover",
                "and failover workloads (default 10)",
            ],
        ),
        Opt::valued(
            None,
            "workload-clients",
            "N",
            &["clients of those workloads (default 4)"],
        ),
        Opt::flag(
            None,
            "sync-standby",
            &["switchover, failover: a synchronous standby"],
        ),
        Opt::valued(
            None,
            "pgdata",
            "DIR",
            &["run every step on the existing local cluster in DIR"],
        ),
        Opt::valued(
            Some('j'),
            "jobs",
            "N",
            &[
                "parallel loading, pg_dump -Fd -j, pg_restore -j",
                "(default 1)",
            ],
        )
        .of_pgbench(),
        Opt::valued(
            Some('F'),
            "fillfactor",
            "NUM",
            &["initialization options, as for pgrush -i"],
        )
        .of_pgbench(),
        Opt::valued(
            Some('I'),
            "init-steps",
            "STEPS",
            &["(the load step's steps)"],
        )
        .of_pgbench(),
        Opt::flag(
            None,
            "foreign-keys",
            &["create foreign keys between the tables"],
        )
        .of_pgbench(),
        Opt::flag(None, "unlogged-tables", &["create the tables unlogged"]).of_pgbench(),
        Opt::valued(
            None,
            "partitions",
            "NUM",
            &["partition pgbench_accounts into NUM parts"],
        )
        .of_pgbench(),
        Opt::valued(
            None,
            "partition-method",
            "(range|hash)",
            &["how to partition it"],
        )
        .of_pgbench(),
        Opt::valued(
            None,
            "tablespace",
            "TABLESPACE",
            &["tablespace of the tables"],
        )
        .of_pgbench(),
        Opt::valued(
            None,
            "index-tablespace",
            "TABLESPACE",
            &["tablespace of the indexes"],
        )
        .of_pgbench(),
        Opt::HOST.of_pgbench(),
        Opt::PORT.of_pgbench(),
        Opt::USERNAME.of_pgbench(),
        Opt::HELP,
    ],
    notes: "",
    operands: Operands::Files,
    pgbench_options: true,
    run,
};

/// The ops-only options, taken out of the command line.
#[derive(Debug, Clone, PartialEq)]
struct OpsArgs {
    scales: Vec<u32>,
    steps: Vec<StepKind>,
    dump_format: DumpFormat,
    repeat: u32,
    json: Option<String>,
    html: Option<String>,
    workload_seconds: u32,
    workload_clients: u32,
    /// `--sync-standby`.
    sync_standby: bool,
    /// `--pgdata DIR`: an existing local cluster.
    pgdata: Option<PathBuf>,
    /// Everything else: a `-i` command line.
    rest: Vec<OsString>,
}

impl Default for OpsArgs {
    fn default() -> Self {
        OpsArgs {
            scales: vec![1, 10],
            steps: StepKind::DEFAULT.to_vec(),
            dump_format: DumpFormat::Custom,
            repeat: 1,
            json: None,
            html: None,
            workload_seconds: 10,
            workload_clients: 4,
            sync_standby: false,
            pgdata: None,
            rest: Vec::new(),
        }
    }
}

/// Reads the command line with the ops table; `Ok(None)` asks for `--help`.
fn parse(args: &[OsString]) -> Result<Option<OpsArgs>, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return Ok(None);
    };
    let mut out = OpsArgs {
        rest: scan.pgbench_args().map(|h| h.text.into()).collect(),
        ..OpsArgs::default()
    };
    out.rest.extend(scan.operands.iter().map(OsString::from));
    for (found, value) in &scan.options {
        if let Found::Own(opt) = found {
            apply(&mut out, opt.long, value.as_deref().unwrap_or_default())?;
        }
    }
    Ok(Some(out))
}

fn apply(out: &mut OpsArgs, name: &str, value: &str) -> Result<(), Failure> {
    let positive = |v: &str| positive(&COMMAND, name, v);
    let usage = |e: &dyn std::fmt::Display| COMMAND.usage(e.to_string());
    match name {
        "scale" => {
            out.scales = value.split(',').map(positive).collect::<Result<_, _>>()?;
        }
        "steps" => out.steps = StepKind::parse_list(value).map_err(|e| usage(&e))?,
        "dump-format" => out.dump_format = DumpFormat::parse(value).map_err(|e| usage(&e))?,
        "repeat" => out.repeat = positive(value)?,
        "json" => out.json = Some(value.to_string()),
        "html" => out.html = Some(value.to_string()),
        "workload-seconds" => out.workload_seconds = positive(value)?,
        "pgdata" => out.pgdata = Some(PathBuf::from(value)),
        "sync-standby" => out.sync_standby = true,
        _ => out.workload_clients = positive(value)?,
    }
    Ok(())
}

/// The lab configuration: the ops options plus the `-i` command line in `rest`.
fn config(ops: &OpsArgs, progname: &str) -> Result<OpsConfig, Failure> {
    let mut argv: Vec<OsString> = vec![progname.into(), "-i".into()];
    argv.extend(ops.rest.iter().cloned());
    let opts = crate::parse::parse_command_line(&argv)?;
    if opts.action != Action::Init {
        return Err(COMMAND.usage("unexpected option"));
    }
    if opts.workload != pgrush_run::options::Workload::Pgbench {
        return Err(COMMAND.usage("ops measures pgbench's tables only (no --workload)"));
    }
    let init = crate::init_cmd::config(&opts)
        .map_err(|e| Failure::exit(1).then(Line::Verbatim(e.render(progname))))?;
    let named = opts.host.is_some() || opts.port.is_some() || opts.dbname.is_some();
    let target = match &ops.pgdata {
        Some(_) if named || opts.user.is_some() => {
            return Err(COMMAND.usage(
                "--pgdata cannot be combined with -h, -p, -U or DBNAME \
                 (the cluster's own port and socket are used, as its superuser)",
            ));
        }
        Some(dir) => Target::DataDir(dir.clone()),
        None if named => Target::Server(opts.connect_request()),
        None => Target::Throwaway { bin_dir: None },
    };
    let pgrush_exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("pgrush"));
    Ok(OpsConfig {
        scales: ops.scales.clone(),
        steps: ops.steps.clone(),
        jobs: opts.jobs.max(1),
        dump_format: ops.dump_format,
        repeat: ops.repeat,
        workload_seconds: ops.workload_seconds,
        workload_clients: ops.workload_clients,
        init,
        target,
        pgrush_exe,
        sync_standby: ops.sync_standby,
    })
}

/// Writes the document to `path` (through a temporary file, so a reader never sees
/// half of it).
fn write_json(path: &str, doc: &OpsDocument) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(doc).map_err(std::io::Error::other)?;
    pgrush_run::output_file::write_atomically(std::path::Path::new(path), (text + "\n").as_bytes())
}

/// Runs `pgrush ops`.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(ops) = parse(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let cfg = config(&ops, &inv.prog)?;
    pgrush_lab::ops::interrupt::install();
    let mut printed_header = false;
    let mut write_failed = None;
    let mut on_step = |doc: &OpsDocument, result: Option<&StepResult>| {
        if !printed_header {
            println!(
                "{}",
                text::table(&OpsDocument {
                    scales: Vec::new(),
                    stopped: None,
                    ..doc.clone()
                })
                .trim_end()
            );
            printed_header = true;
        }
        if let Some(result) = result {
            let scale = doc.scales.last().map_or(0, |s| s.scale);
            for row in text::rows_of(scale, result) {
                println!("{}", text::row_line(&row));
            }
        }
        if let Some(path) = &ops.json
            && let Err(e) = write_json(path, doc)
        {
            write_failed = Some(format!("cannot write {path}: {e}"));
        }
        if let Some(path) = &ops.html
            && let Err(e) = pgrush_run::output_file::write_atomically(
                std::path::Path::new(path),
                pgrush_lab::ops::html::render(doc).as_bytes(),
            )
        {
            write_failed = Some(format!("cannot write {path}: {e}"));
        }
    };
    let outcome = pgrush_lab::ops::run(&cfg, &mut on_step);
    let mut errors = Vec::new();
    if let Some(msg) = write_failed {
        errors.push(format!("ops: {msg}"));
    }
    if let Some(e) = outcome.error {
        errors.push(format!("ops: {e}"));
    }
    let failed_checks = outcome
        .document
        .iter()
        .flat_map(|d| &d.scales)
        .flat_map(|s| &s.steps)
        .filter(|r| r.check.as_ref().is_some_and(|c| !c.passed))
        .count();
    if failed_checks > 0 {
        errors.push(format!("ops: {failed_checks} check(s) failed"));
    }
    if errors.is_empty() {
        return Ok(0);
    }
    Err(errors
        .into_iter()
        .fold(Failure::exit(1), |f, e| f.then(Line::Error(e.into_bytes()))))
}

/// `pgrush report A.json B.json [--html FILE | --markdown | --csv]` when the files are
/// ops results: the side-by-side table (as text, Markdown or CSV) or page. `None` when
/// the first file is not an ops result (then `pgrush report` treats the files as runs).
pub fn report(
    files: &[String],
    html: Option<&str>,
    format: pgrush_report::compare::Format,
) -> Option<Result<i32, Failure>> {
    if !pgrush_report::assertion::ops::is_ops_file(files.first()?) {
        return None;
    }
    let mut docs = Vec::with_capacity(files.len());
    for file in files {
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str::<OpsDocument>(&text).map_err(|e| {
                    format!(
                        "not a pgrush ops result (schema {}): {e}",
                        pgrush_lab::ops::SCHEMA
                    )
                })
            });
        match parsed {
            Ok(doc) => docs.push((file.clone(), doc)),
            Err(e) => return Some(Err(Failure::error(format!("report: {file}: {e}")))),
        }
    }
    let (path, text) = match html {
        Some(path) => {
            let page = match docs.as_slice() {
                [(_, only)] => pgrush_lab::ops::html::render(only),
                _ => pgrush_lab::ops::html::render_comparison(&docs),
            };
            (path, page)
        }
        None => (
            "-",
            pgrush_lab::ops::compare::Comparison::build(&docs).render_as(format),
        ),
    };
    let written = if path == "-" {
        std::io::stdout().write_all(text.as_bytes())
    } else {
        pgrush_run::output_file::write_atomically(std::path::Path::new(path), text.as_bytes())
    };
    Some(
        written
            .map(|()| 0)
            .map_err(|e| Failure::error(format!("report: cannot write {path}: {e}"))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn run_args(list: &[&str]) -> OpsArgs {
        match parse(&args(list)) {
            Ok(Some(a)) => a,
            other => panic!("{list:?}: {other:?}"),
        }
    }

    #[test]
    fn ops_options_are_taken_out_and_the_rest_kept() {
        let a = run_args(&[
            "--scale",
            "1,2",
            "--steps=dump,restore",
            "-j",
            "2",
            "--repeat",
            "3",
            "--dump-format",
            "directory",
            "--json=o.json",
            "--unlogged-tables",
            "--html",
            "o.html",
            "--workload-seconds",
            "2",
            "--pgdata",
            "/srv/pg",
            "bench",
        ]);
        assert_eq!(a.scales, vec![1, 2]);
        assert_eq!(
            a.steps,
            vec![StepKind::Load, StepKind::Dump, StepKind::Restore]
        );
        assert_eq!(a.repeat, 3);
        assert_eq!(a.dump_format, DumpFormat::Directory);
        assert_eq!(a.json.as_deref(), Some("o.json"));
        assert_eq!(a.html.as_deref(), Some("o.html"));
        assert_eq!(a.workload_seconds, 2);
        assert_eq!(a.pgdata, Some(PathBuf::from("/srv/pg")));
        assert_eq!(a.rest, args(&["--jobs=2", "--unlogged-tables", "bench"]));
        assert_eq!(run_args(&[]), OpsArgs::default());
        assert!(matches!(parse(&args(&["--help"])), Ok(None)));
    }

    #[test]
    fn another_workload_is_refused() {
        let failure = config(&run_args(&["--workload=tpcc"]), "pgrush").unwrap_err();
        assert_eq!(failure.status(), 1);
        assert_eq!(
            failure.lines().first(),
            Some(&Line::Error(
                b"ops measures pgbench's tables only (no --workload)".to_vec()
            ))
        );
    }

    #[test]
    fn bad_ops_options_are_refused() {
        for bad in [
            &["--scale", "1,x"][..],
            &["--scale", "0"],
            &["--steps", "load,backup"],
            &["--dump-format", "zip"],
            &["--repeat"],
            &["--bogus"],
        ] {
            let failure = parse(&args(bad)).unwrap_err();
            assert_eq!(failure.status(), 1, "{bad:?}");
            assert_eq!(
                failure.lines().last(),
                Some(&Line::TryHelp(Some("ops".to_string()))),
                "{bad:?}"
            );
        }
    }
}
