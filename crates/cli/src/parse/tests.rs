//! Unit tests of the whole parser (messages, order of checks, stored values).

use super::*;
use pgrush_run::options::{PartitionMethod, ScriptSource, ScriptSpec, SeedChoice};
use pgrush_stats::QueryMode;

fn run_env(args: &[&str], env: &Env) -> (Result<Options, i32>, String) {
    let mut argv: Vec<OsString> = vec![OsString::from("/usr/bin/pgrush")];
    argv.extend(args.iter().map(OsString::from));
    let mut err = Vec::new();
    let r = parse_with(&argv, env, &mut err);
    (r, String::from_utf8_lossy(&err).into_owned())
}

fn run(args: &[&str]) -> (Result<Options, i32>, String) {
    run_env(args, &Env::default())
}

fn ok(args: &[&str]) -> Options {
    let (r, err) = run(args);
    assert_eq!(err, "", "unexpected messages for {args:?}");
    r.unwrap_or_else(|code| panic!("{args:?} failed with {code}"))
}

fn fails(args: &[&str]) -> String {
    let (r, err) = run(args);
    assert_eq!(r.err(), Some(1), "{args:?} should fail");
    err
}

#[test]
fn defaults() {
    let o = ok(&[]);
    assert_eq!(o.action, Action::Bench);
    assert_eq!(o.transactions, Some(10));
    assert_eq!(o.duration, None);
    assert_eq!(o.clients, 1);
    assert!(o.scripts.is_empty());
    assert_eq!(o.progname, "pgrush");
    assert_eq!(o.dbname, None);
}

#[test]
fn help_and_version_only_first() {
    assert_eq!(ok(&["--help"]).action, Action::Help);
    assert_eq!(ok(&["-?", "-c", "x"]).action, Action::Help);
    assert_eq!(ok(&["-V"]).action, Action::Version);
    assert_eq!(ok(&["--version"]).action, Action::Version);
    assert_eq!(
        fails(&["-n", "--help"]),
        "/usr/bin/pgrush: unrecognized option '--help'\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
    assert_eq!(
        fails(&["-n", "-?"]),
        "/usr/bin/pgrush: invalid option -- '?'\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
}

/// PostgreSQL 19's `--continue-on-error` is a pgbench option: `--con` (and `--co`,
/// `--c`) name it as much as `--connect`, as in pgbench 19.
#[test]
fn continue_on_error_makes_con_ambiguous() {
    for (typed, candidates) in [
        ("--con", "'--connect' '--continue-on-error'"),
        ("--co=x", "'--connect' '--continue-on-error'"),
        ("--c", "'--client' '--connect' '--continue-on-error'"),
    ] {
        assert_eq!(
            fails(&[typed]),
            format!(
                "/usr/bin/pgrush: option '{typed}' is ambiguous; possibilities: {candidates}\n\
                 pgrush: hint: Try \"pgrush --help\" for more information.\n"
            )
        );
    }
}

#[test]
fn combined_and_attached_values() {
    let o = ok(&[
        "-nt5",
        "-c4",
        "-j",
        "2",
        "--rate=10abc",
        "--prot",
        "prepared",
        "db",
    ]);
    assert!(o.no_vacuum);
    assert_eq!(o.transactions, Some(5));
    assert_eq!(o.clients, 4);
    assert_eq!(o.jobs, 2);
    assert_eq!(o.rate, 10.0);
    assert_eq!(o.query_mode, QueryMode::Prepared);
    assert_eq!(o.dbname.as_deref(), Some("db"));
}

#[test]
fn positional_and_dbname() {
    assert_eq!(ok(&["db", "-n"]).dbname.as_deref(), Some("db"));
    assert_eq!(ok(&["-d", "x"]).dbname.as_deref(), Some("x"));
    assert_eq!(ok(&["--", "-n"]).dbname.as_deref(), Some("-n"));
    assert_eq!(
        fails(&["-d", "x", "y"]),
        "pgrush: error: too many command-line arguments (first is \"y\")\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
    let posix = Env {
        posixly_correct: true,
        ..Env::default()
    };
    let (r, err) = run_env(&["db", "-c", "5"], &posix);
    assert_eq!(r.err(), Some(1));
    assert!(err.contains("(first is \"-c\")"), "{err}");
}

#[test]
fn int_ranges() {
    assert_eq!(
        fails(&["-c", "0"]),
        "pgrush: error: -c/--client must be in range 1..2147483647\n"
    );
    assert_eq!(
        fails(&["-c", "5x"]),
        "pgrush: error: invalid value \"5x\" for option -c/--client\n"
    );
    assert_eq!(ok(&["-c", " 2 "]).clients, 2);
    assert_eq!(
        fails(&["-F", "5"]),
        "pgrush: error: -F/--fillfactor must be in range 10..100\n"
    );
    assert_eq!(
        fails(&["--partitions=-1"]),
        "pgrush: error: --partitions must be in range 0..2147483647\n"
    );
}

#[test]
fn open_files_limit() {
    let env = Env {
        nofile_limit: Some(1024),
        ..Env::default()
    };
    let (r, err) = run_env(&["-c", "2000"], &env);
    assert_eq!(r.err(), Some(1));
    assert_eq!(
        err,
        "pgrush: error: need at least 2003 open files, but system limit is 1024\n\
         pgrush: hint: Reduce number of clients, or use limit/ulimit to increase the system limit.\n"
    );
    let (_, err) = run_env(&["-c", "2147483647"], &env);
    assert!(
        err.contains("need at least -2147483646 open files"),
        "{err}"
    );
    assert!(run_env(&["-c", "1021"], &env).0.is_ok());
}

#[test]
fn errors_come_in_option_order() {
    assert_eq!(
        fails(&["-M", "foo", "-c", "x"]),
        "pgrush: error: invalid query mode (-M): \"foo\"\n"
    );
    // The -t/-T conflict is found after the loop, so a later bad value wins.
    assert_eq!(
        fails(&["-t", "5", "-T", "5", "-c", "x"]),
        "pgrush: error: invalid value \"x\" for option -c/--client\n"
    );
    assert!(fails(&["-f", "/nonexistent/x.sql", "-c", "x"]).contains("could not open file"));
}

#[test]
fn script_selection() {
    let o = ok(&["-b", "se@2", "-S", "-N", "-b", "tpcb-like@ +3"]);
    assert_eq!(
        o.scripts,
        vec![
            ScriptSpec {
                source: ScriptSource::Builtin("select-only".into()),
                weight: 2,
                text: None
            },
            ScriptSpec {
                source: ScriptSource::Builtin("select-only".into()),
                weight: 1,
                text: None
            },
            ScriptSpec {
                source: ScriptSource::Builtin("simple-update".into()),
                weight: 1,
                text: None
            },
            ScriptSpec {
                source: ScriptSource::Builtin("tpcb-like".into()),
                weight: 3,
                text: None
            },
        ]
    );
    let err = fails(&["-b", "s"]);
    assert!(err.starts_with(
        "pgrush: error: ambiguous builtin name: 2 builtin scripts found for prefix \"s\"\n\
         Available builtin scripts:\n      tpcb-like: <builtin: TPC-B (sort of)>\n"
    ));
    assert_eq!(
        fails(&["-b", "se@x"]),
        "pgrush: error: invalid weight specification: @x\n"
    );
    assert_eq!(
        fails(&["-b", "se@99999999999"]),
        "pgrush: error: weight specification out of range (0 .. 2147483647): 99999999999\n"
    );
    assert_eq!(
        fails(&["-b", "se@0"]),
        "pgrush: error: total script weight must not be zero\n"
    );
    assert_eq!(ok(&["-b", "list", "-c", "x"]).action, Action::ListBuiltins);
    assert_eq!(
        ok(&["--show-script", "simple"]).action,
        Action::ShowScript("simple-update".into())
    );
}

#[test]
fn at_most_128_scripts() {
    let mut args = vec!["-S"; 128];
    assert_eq!(ok(&args).scripts.len(), 128);
    args.push("-N");
    assert_eq!(
        fails(&args),
        "pgrush: error: at most 128 SQL scripts are allowed\n"
    );
}

#[test]
fn script_files() {
    let dir = std::env::temp_dir().join(format!("pgrush-cli-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("one@x.sql");
    std::fs::write(&file, "select 1;\n").expect("write script");
    let with_weight = format!("{}@7", file.display());
    let o = ok(&["-f", &with_weight, "-f", "-"]);
    assert_eq!(o.scripts[0].weight, 7);
    assert_eq!(
        o.scripts[0].source,
        ScriptSource::File(file.display().to_string().into_bytes())
    );
    assert_eq!(o.scripts[1].source, ScriptSource::File(b"-".to_vec()));
    let dir_arg = dir.display().to_string();
    assert_eq!(
        fails(&["-f", &dir_arg]),
        format!("pgrush: error: could not read file \"{dir_arg}\": Is a directory\n")
    );
    assert_eq!(
        fails(&["-f", "/nonexistent/a.sql"]),
        "pgrush: error: could not open file \"/nonexistent/a.sql\": No such file or directory\n"
    );
    let empty = dir.join("empty.sql");
    std::fs::write(&empty, "").expect("write empty script");
    let empty_arg = empty.display().to_string();
    // Script contents are checked while reading options, before -t/-T conflicts.
    assert_eq!(
        fails(&["-f", &empty_arg, "-t", "1", "-T", "1"]),
        format!("pgrush: error: empty command list for script \"{empty_arg}\"\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn defines() {
    let o = ok(&["-D", "a=1=2", "-D", "_x9=y", "-D", "a=3"]);
    assert_eq!(
        o.defines,
        vec![
            ("a".into(), "1=2".into()),
            ("_x9".into(), "y".into()),
            ("a".into(), "3".into())
        ]
    );
    for bad in ["foo", "=1", "x="] {
        assert_eq!(
            fails(&["-D", bad]),
            format!("pgrush: error: invalid variable definition: \"{bad}\"\n")
        );
    }
    assert_eq!(
        fails(&["-D", "1x=2"]),
        "pgrush: error: option: invalid variable name: \"1x\"\n"
    );
}

#[test]
fn init_mode() {
    let o = ok(&["-i", "-n", "--foreign-keys", "-s", "3", "--partitions", "4"]);
    assert_eq!(o.action, Action::Init);
    assert_eq!(o.init_steps, "dtg pf");
    assert_eq!(o.partition_method, Some(PartitionMethod::Range));
    assert_eq!(o.scale, Some(3));
    let o = ok(&[
        "-i",
        "-I",
        "dtGvf",
        "--foreign-keys",
        "--partition-method=HASH",
        "--partitions=2",
    ]);
    assert_eq!(o.init_steps, "dtGvf");
    assert_eq!(o.partition_method, Some(PartitionMethod::Hash));
    assert_eq!(
        fails(&["-i", "-I", "dtx"]),
        "pgrush: error: unrecognized initialization step \"x\"\n\
         pgrush: detail: Allowed step characters are: \"dtgGvpf\".\n"
    );
    assert_eq!(
        fails(&["-I", ""]),
        "pgrush: error: no initialization steps specified\n"
    );
    assert_eq!(
        fails(&["-i", "-c", "5"]),
        "pgrush: error: some of the specified options cannot be used in initialization (-i) mode\n"
    );
    assert_eq!(
        fails(&["-q"]),
        "pgrush: error: some of the specified options cannot be used in benchmarking mode\n"
    );
    assert_eq!(
        fails(&["-i", "--partition-method=hash"]),
        "pgrush: error: --partition-method requires greater than zero --partitions\n"
    );
    // pgrush loads in parallel: `-j` is accepted with `-i` (pgbench refuses it).
    let init = ok(&["-i", "-j", "4", "-s", "2"]);
    assert_eq!(init.action, Action::Init);
    assert_eq!(init.jobs, 4);
    // Weight zero is not checked in init mode: the mode conflict is reported instead.
    assert!(fails(&["-i", "-b", "se@0"]).contains("initialization (-i) mode"));
}

#[test]
fn logging_checks() {
    let o = ok(&[
        "-l",
        "-T",
        "6",
        "--aggregate-interval",
        "3",
        "--log-prefix=p",
    ]);
    assert_eq!(o.aggregate_interval, 3);
    assert_eq!(o.transactions, None);
    assert_eq!(o.log_prefix.as_deref(), Some("p"));
    assert!(
        fails(&["--sampling-rate=0.5"]).contains("allowed only when logging transactions (-l)")
    );
    assert!(fails(&["-l", "--sampling-rate=2"]).contains("invalid sampling rate: \"2\""));
    assert!(
        fails(&["-l", "-T", "3", "--aggregate-interval=2"])
            .contains("duration (3) must be a multiple of aggregation interval (2)")
    );
    assert!(
        fails(&["-l", "-T", "3", "--aggregate-interval=5"]).contains(
            "number of seconds for aggregation (5) must not be higher than test duration (3)"
        )
    );
}

#[test]
fn tries_and_limits() {
    assert_eq!(ok(&["--max-tries=0", "-T", "5"]).max_tries, 0);
    assert_eq!(ok(&["--max-tries=abc", "-L", "5"]).latency_limit_us, 5000);
    assert!(
        fails(&["--max-tries=4294967296"]).contains("an unlimited number of transaction tries")
    );
    assert_eq!(
        fails(&["--max-tries=99999999999999999999"]),
        "pgrush: error: invalid number of maximum tries: \"99999999999999999999\"\n"
    );
    // -L 0.0001 is 0 µs, i.e. no limit, so unlimited tries need -T.
    assert!(fails(&["-L", "0.0001", "--max-tries=0"]).contains("unlimited number"));
    assert_eq!(
        fails(&["-L", "-1"]),
        "pgrush: error: invalid latency limit: \"-1\"\n"
    );
    assert_eq!(
        fails(&["-R", "0"]),
        "pgrush: error: invalid rate limit: \"0\"\n"
    );
    assert!(fails(&["--progress-timestamp"]).contains("allowed only under --progress"));
}

#[test]
fn random_seed() {
    let seeded = |args: &[&str], lines: &str| -> Options {
        let (r, err) = run(args);
        assert_eq!(err, lines, "messages for {args:?}");
        r.unwrap_or_else(|code| panic!("{args:?} failed with {code}"))
    };
    let o = seeded(
        &["--random-seed=-1"],
        "pgrush: setting random seed to 18446744073709551615\n",
    );
    assert_eq!(o.random_seed, SeedChoice::Value(u64::MAX));
    assert!(o.random_seed_explicit);
    assert!(!ok(&[]).random_seed_explicit);
    let (r, err) = run(&["--random-seed", "rand", "--random-seed=7"]);
    let o = r.expect("two seeds accepted");
    assert_eq!(o.random_seed, SeedChoice::Value(7));
    assert_eq!(o.seed_messages.len(), 2);
    assert_eq!(o.seed_messages[1], 7);
    assert_eq!(
        err,
        format!(
            "pgrush: setting random seed to {}\npgrush: setting random seed to 7\n",
            o.seed_messages[0]
        )
    );
    let (r, _) = run(&["--random-seed=time"]);
    let o = r.expect("time seed accepted");
    assert!(matches!(o.random_seed, SeedChoice::Value(v) if v == o.seed_messages[0]));
    assert_eq!(
        fails(&["--random-seed=5 "]),
        "pgrush: error: unrecognized random seed option \"5 \"\n\
         pgrush: detail: Expecting an unsigned integer, \"time\" or \"rand\".\n\
         pgrush: error: error while setting random seed from --random-seed option\n"
    );
    let env = Env {
        random_seed: Some(b"42".to_vec()),
        ..Env::default()
    };
    let (r, err) = run_env(&["-n", "--random-seed=3", "-t", "x"], &env);
    assert_eq!(r.err(), Some(1));
    assert_eq!(
        err,
        "pgrush: setting random seed to 42\n\
         pgrush: setting random seed to 3\n\
         pgrush: error: invalid value \"x\" for option -t/--transactions\n"
    );
    let (r, _) = run_env(&["-n"], &env);
    let o = r.expect("env seed accepted");
    assert_eq!(o.random_seed, SeedChoice::Value(42));
    assert_eq!(o.seed_messages, vec![42]);
    assert!(o.random_seed_explicit);
    let env = Env {
        random_seed: Some(b"x".to_vec()),
        ..Env::default()
    };
    let (r, err) = run_env(&["--help"], &env);
    assert_eq!(r.map(|o| o.action), Ok(Action::Help));
    assert_eq!(err, "");
    let (r, err) = run_env(&["-n"], &env);
    assert_eq!(r.err(), Some(1));
    assert!(err.ends_with(
        "pgrush: error: error while setting random seed from PGBENCH_RANDOM_SEED environment variable\n"
    ));
}

#[test]
fn long_option_extensions_do_not_shadow_pgbench_prefixes() {
    // pgrush's own options (`--report-latencies`, `--json`) never make a pgbench
    // abbreviation ambiguous.
    assert!(ok(&["--rep"]).report_per_command);
    assert_eq!(ok(&["--j", "2"]).jobs, 2);
    assert!(ok(&["--conn"]).connect_per_transaction);
    assert!(ok(&["--cont"]).continue_on_error);
    assert_eq!(
        fails(&["--pro=5"]),
        "/usr/bin/pgrush: option '--pro=5' is ambiguous; possibilities: '--progress' '--protocol' '--progress-timestamp'\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
}

#[test]
fn variable_names() {
    assert_eq!(ok(&["-D", "ä1=x"]).defines, vec![("ä1".into(), "x".into())]);
    assert_eq!(
        fails(&["-D", "a-b=1"]),
        "pgrush: error: option: invalid variable name: \"a-b\"\n"
    );
}

#[test]
fn non_utf8_arguments_are_echoed_raw() {
    use std::os::unix::ffi::OsStringExt;
    let argv = vec![
        OsString::from("pgrush"),
        OsString::from("-c"),
        OsString::from_vec(vec![b'1', 0xe9]),
    ];
    let mut err = Vec::new();
    assert_eq!(parse_with(&argv, &Env::default(), &mut err).err(), Some(1));
    assert_eq!(
        err,
        b"pgrush: error: invalid value \"1\xe9\" for option -c/--client\n".to_vec()
    );
    let argv = vec![
        OsString::from("pgrush"),
        OsString::from("-i"),
        OsString::from("-I"),
        OsString::from_vec(vec![b'd', 0xc3, 0xa9]),
    ];
    let mut err = Vec::new();
    assert_eq!(parse_with(&argv, &Env::default(), &mut err).err(), Some(1));
    assert!(err.starts_with(b"pgrush: error: unrecognized initialization step \"\xc3\"\n"));
}

#[test]
fn option_values_may_start_with_a_dash() {
    assert_eq!(ok(&["-t", "3", "--", "db"]).dbname.as_deref(), Some("db"));
    assert_eq!(
        fails(&["-t", "--", "db"]),
        "pgrush: error: invalid value \"--\" for option -t/--transactions\n"
    );
    assert_eq!(ok(&["-U", "-n"]).user.as_deref(), Some("-n"));
}

#[test]
fn pgrush_extension_options() {
    let o = ok(&[
        "--percentiles",
        "db",
        "--json=-",
        "--html",
        "r.html",
        "--no-warn",
    ]);
    assert_eq!(
        o.percentiles,
        Some(pgrush_report::PercentileList::default())
    );
    assert_eq!(o.dbname.as_deref(), Some("db"));
    assert_eq!(o.json.as_deref(), Some("-"));
    assert_eq!(o.html.as_deref(), Some("r.html"));
    assert!(o.no_warnings);
    let o = ok(&["--perc=99, 50"]);
    assert_eq!(
        o.percentiles.map(|p| p.values().to_vec()),
        Some(vec![50.0, 99.0])
    );
    assert_eq!(
        fails(&["--percentiles=abc"]),
        "pgrush: error: invalid --percentiles value \"abc\": must be a number greater than 0 and at most 100\n"
    );
    assert!(fails(&["--percentiles="]).contains("empty element"));
    assert!(fails(&["-i", "--json=x"]).contains("initialization (-i) mode"));
    assert_eq!(
        fails(&["--json"]),
        "/usr/bin/pgrush: option '--json' requires an argument\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
    // pgbench's own abbreviations keep their meaning.
    assert!(ok(&["--no"]).no_vacuum);
    assert_eq!(ok(&["--h", "x"]).host.as_deref(), Some("x"));
}

#[test]
fn assertions_are_kept_in_order_and_checked_against_every_option() {
    // The script, -R and -L may come after the assertions that need them.
    let o = ok(&[
        "--assert",
        "select-only:p99<5ms",
        "--assert=lag<2",
        "--assert",
        "late==0",
        "-S",
        "-R",
        "100",
        "-L",
        "50",
        "--junit=gate.xml",
    ]);
    let sources: Vec<&str> = o.assertions.iter().map(|a| a.source.as_str()).collect();
    assert_eq!(sources, ["select-only:p99<5ms", "lag<2", "late==0"]);
    assert_eq!(o.junit.as_deref(), Some("gate.xml"));
    // The default script answers to its builtin name and number.
    assert_eq!(ok(&["--assert", "tpcb-like:tps>1"]).assertions.len(), 1);
    assert_eq!(ok(&["--assert", "1:tps>1"]).assertions.len(), 1);
    assert_eq!(
        fails(&["--assert", "p99<5min", "-c", "x"]),
        "pgrush: error: invalid assertion \"p99<5min\": unknown unit \"min\" (known: ms, us, s, %)\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
    assert_eq!(
        fails(&["--assert", "2:tps>1", "-S"]),
        "pgrush: error: invalid assertion \"2:tps>1\": no script \"2\" in this run \
         (scripts: 1 (select-only, <builtin: select only>))\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
    assert!(fails(&["--assert", "late==0"]).contains("needs a latency limit (-L)"));
    assert!(fails(&["--junit", "x.xml"]).contains("--junit is allowed only with --assert"));
    assert!(
        fails(&["-i", "--assert", "tps>1"]).contains("cannot be used in initialization (-i) mode")
    );
}

#[test]
fn server_stats_interval() {
    use std::time::Duration;
    assert_eq!(
        ok(&["--server-stats"]).server_stats,
        Some(Duration::from_secs(1))
    );
    assert_eq!(
        ok(&["--server-stats=0.5"]).server_stats,
        Some(Duration::from_millis(500))
    );
    assert!(ok(&["--json=x.json", "--no-server-stats"]).no_server_stats);
    for bad in ["0", "abc", "-1", "inf", "5000"] {
        let err = fails(&[&format!("--server-stats={bad}")]);
        assert_eq!(
            err,
            format!(
                "pgrush: error: invalid server statistics interval: \"{bad}\" (seconds from 0.01 to 3600 expected)\n"
            )
        );
    }
}

#[test]
fn shards_come_from_the_option_or_the_launcher_and_rename_outputs() {
    use pgrush_run::shard::LauncherEnv;
    use pgrush_run::shard::identity::ShardSource;
    let launcher = |vars: &[(&'static str, &str)]| Env {
        launcher: LauncherEnv {
            vars: vars.iter().map(|(n, v)| (*n, v.to_string())).collect(),
        },
        ..Env::default()
    };
    let slurm = launcher(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "4")]);
    let (r, _) = run_env(&["--json=out/run.json", "--html=r{shard}.html"], &slurm);
    let o = r.expect("parses");
    let shard = o.shard.expect("a shard");
    assert_eq!(
        (shard.index, shard.count, shard.source),
        (2, 4, ShardSource::Slurm)
    );
    assert_eq!(o.json.as_deref(), Some("out/run.shard2.json"));
    assert_eq!(o.html.as_deref(), Some("r2.html"));
    let (r, _) = run_env(&["--shard=1/3"], &slurm);
    assert_eq!(
        r.expect("parses").shard.map(|s| (s.index, s.count)),
        Some((1, 3))
    );
    // Not sharded: nothing renamed.
    let (r, _) = run_env(&["--json=run.json"], &Env::default());
    let o = r.expect("parses");
    assert_eq!((o.shard, o.json.as_deref()), (None, Some("run.json")));
    let (r, err) = run_env(&["--shard=4/4"], &Env::default());
    assert_eq!(r.err(), Some(1));
    assert!(err.contains("the index must be below the count"), "{err}");
    let (r, err) = run_env(&[], &launcher(&[("JOB_COMPLETION_INDEX", "1")]));
    assert_eq!(r.err(), Some(1));
    assert!(err.contains("JOB_COMPLETION_INDEX is set"), "{err}");
    let (r, _) = run_env(&["--shards=2"], &launcher(&[("JOB_COMPLETION_INDEX", "1")]));
    assert_eq!(
        r.expect("parses").shard.map(|s| s.source),
        Some(ShardSource::Kubernetes)
    );
    let (r, err) = run_env(&["--shards=4"], &Env::default());
    assert_eq!(r.err(), Some(1));
    assert!(
        err.contains("--shards is allowed only with JOB_COMPLETION_INDEX"),
        "{err}"
    );
    // Sharding options are benchmarking options.
    let (r, _) = run_env(&["-i", "--shard=0/2"], &Env::default());
    assert_eq!(r.err(), Some(1));
}

#[test]
fn workload_option() {
    use pgrush_run::options::Workload;
    assert_eq!(ok(&[]).workload, Workload::Pgbench);
    let o = ok(&["-i", "--workload", "tpcc", "-s", "3", "-j", "2"]);
    assert_eq!(
        (o.workload, o.action, o.scale),
        (Workload::Tpcc, Action::Init, Some(3))
    );
    // The data seed of the TPC-C-like load; still refused with pgbench's -i.
    let (r, err) = run(&["-i", "--workload=tpcc", "--random-seed=9"]);
    assert_eq!(r.map(|o| o.random_seed), Ok(SeedChoice::Value(9)));
    assert_eq!(err, "pgrush: setting random seed to 9\n");
    assert!(
        fails(&["-i", "--random-seed=9"]).contains("cannot be used in initialization (-i) mode")
    );
    assert!(
        fails(&["-i", "--workload=tpcc", "--random-seed=9", "-c", "2"])
            .contains("cannot be used in initialization (-i) mode")
    );
    assert_eq!(
        fails(&["--workload", "tpcx"]),
        "pgrush: error: invalid workload: \"tpcx\"\npgrush: detail: Expecting \"pgbench\" or \"tpcc\".\n"
    );
    assert!(ok(&["--workload=tpcc", "--check"]).check);
    assert!(fails(&["--check"]).contains("--check is allowed only with --workload tpcc"));
    assert!(fails(&["--workload=tpcc", "-S"]).contains("cannot be used with --workload tpcc"));
    assert!(
        fails(&["-i", "--workload=tpcc", "--partitions=2"])
            .contains("--partitions cannot be used with --workload tpcc")
    );
}

#[test]
fn tpcc_think_option() {
    assert_eq!(ok(&["--workload=tpcc"]).tpcc_think, None);
    assert_eq!(
        ok(&["--workload=tpcc", "--tpcc-think"]).tpcc_think,
        Some(1.0)
    );
    let o = ok(&[
        "--workload=tpcc",
        "--tpcc-think=0.001",
        "--tpcc-mode=client",
    ]);
    assert_eq!(o.tpcc_think, Some(0.001));
    let scripts = o.scripts_to_run();
    let new_order = String::from_utf8(scripts[0].text.clone().unwrap()).unwrap();
    assert!(new_order.starts_with("\\sleep 18000 us\n"), "{new_order}");
    assert!(new_order.contains("random_exponential(0, 119999, 10)"));
    assert!(ok(&["--workload=tpcc"]).scripts_to_run()[0].text.is_none());
    assert_eq!(
        fails(&["--tpcc-think"]),
        "pgrush: error: --tpcc-think is allowed only with --workload tpcc\n"
    );
    for bad in ["0", "-1", "x", "nan", "inf", "1001", ""] {
        assert_eq!(
            fails(&["--workload=tpcc", &format!("--tpcc-think={bad}")]),
            format!(
                "pgrush: error: invalid --tpcc-think scale: \"{bad}\" (a number above 0 and at most 1000 expected)\n"
            )
        );
    }
    assert!(
        fails(&["-i", "--workload=tpcc", "--tpcc-think"])
            .contains("cannot be used in initialization (-i) mode")
    );
}

#[test]
fn tpcc_mode_option() {
    use pgrush_run::options::TpccMode;
    assert_eq!(ok(&["--workload=tpcc"]).tpcc_mode, None);
    let o = ok(&["--workload=tpcc", "--tpcc-mode", "client"]);
    assert_eq!(o.tpcc_mode, Some(TpccMode::Client));
    assert_eq!(
        o.scripts_to_run()
            .iter()
            .map(|s| format!("{:?}@{}", s.source, s.weight))
            .collect::<Vec<_>>(),
        [
            "Builtin(\"tpcc-client-new-order\")@45",
            "Builtin(\"tpcc-client-payment\")@43",
            "Builtin(\"tpcc-client-order-status\")@4",
            "Builtin(\"tpcc-client-delivery\")@4",
            "Builtin(\"tpcc-client-stock-level\")@4",
        ]
    );
    assert_eq!(
        ok(&["--tpcc-mode=procedures", "--workload=tpcc"]).tpcc_mode,
        Some(TpccMode::Procedures)
    );
    assert_eq!(
        fails(&["--tpcc-mode=client"]),
        "pgrush: error: --tpcc-mode is allowed only with --workload tpcc\n"
    );
    assert_eq!(
        fails(&["--workload=tpcc", "--tpcc-mode=stored"]),
        "pgrush: error: invalid TPC-C mode: \"stored\"\npgrush: detail: Expecting \"client\" or \"procedures\".\n"
    );
    assert!(
        fails(&["-i", "--workload=tpcc", "--tpcc-mode=client"])
            .contains("cannot be used in initialization (-i) mode")
    );
}
