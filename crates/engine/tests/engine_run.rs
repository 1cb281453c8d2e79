//! The engine on a real server, without the CLI: counts, per-command stats,
//! aborts, retries and the three query modes.

use pgrush_engine::{
    EngineConfig, EngineError, ErrorPolicy, LogConfig, Output, Pacing, QueryMode, RunLimit,
    RunOutcome,
};
use pgrush_script::{Seeds, Value, Variables, load_script};
use pgrush_stats::{RunConfig, RunSummary, ScriptInfo};
use pgrush_wire::conninfo::{ConnectRequest, resolve};

fn config(scripts: &[(&str, &str)], clients: u32, threads: u32, tx: u32) -> EngineConfig {
    let cluster = pgrush_testkit::shared();
    let params = resolve(&ConnectRequest {
        dbname: Some("postgres".to_string()),
        host: Some(cluster.socket_dir().to_string_lossy().into_owned()),
        port: Some(cluster.port().to_string()),
        user: Some(cluster.superuser().to_string()),
        password: None,
        fallback_application_name: Some("pgrush-test".to_string()),
        extra: Vec::new(),
    })
    .expect("conninfo");
    let scripts = scripts
        .iter()
        .map(|(name, text)| load_script(name, text, 1).expect("script"))
        .collect();
    let seeds = Seeds::plan(42, clients as usize, threads as usize, false);
    let mut variables = Variables::new();
    let _ = variables.put_value("startup", "scale", Value::Int(1));
    EngineConfig {
        conn: params,
        scripts,
        clients,
        threads,
        limit: RunLimit::Transactions(tx),
        query_mode: QueryMode::Simple,
        connect_per_tx: false,
        pacing: Pacing::default(),
        errors: ErrorPolicy::default(),
        output: Output {
            report_per_command: true,
            ..Output::new("pgrush")
        },
        variables,
        client_rngs: seeds.clients,
        thread_rngs: seeds.threads,
        handle_signals: false,
        placement: Default::default(),
        stages: Vec::new(),
        script_choice: Default::default(),
        targets: Default::default(),
    }
}

fn run(cfg: &EngineConfig) -> RunOutcome {
    let summary = RunSummary::empty(
        RunConfig {
            scale: 1,
            partitioning: None,
            query_mode: cfg.query_mode,
            clients: cfg.clients,
            threads: cfg.threads,
            max_tries: cfg.errors.max_tries,
            limit: RunLimit::Transactions(10),
            rate: None,
            latency_limit_us: None,
            progress_s: None,
            connect_per_tx: cfg.connect_per_tx,
            failures_detailed: false,
            per_command: true,
            continue_on_error: false,
            warmup_s: None,
            reconnect: false,
        },
        cfg.scripts
            .iter()
            .map(|s| ScriptInfo {
                desc: s.desc.clone(),
                weight: s.weight,
                commands: s.commands.iter().map(|c| c.first_line.clone()).collect(),
            })
            .collect(),
    );
    pgrush_engine::run(cfg, &summary.layout()).expect("run")
}

#[test]
fn counts_every_transaction_in_each_mode() {
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let mut cfg = config(
            &[(
                "two.sql",
                "\\set x random(1, 10)\nselect :x;\nselect :client_id;\n",
            )],
            3,
            2,
            7,
        );
        cfg.query_mode = mode;
        let out = run(&cfg);
        assert!(!out.aborted, "{mode:?}");
        assert!(!out.interrupted);
        assert_eq!(out.stats.total.counters.successful, 21, "{mode:?}");
        let cmds = &out.stats.scripts[0].commands;
        assert_eq!(cmds.len(), 3);
        for c in cmds {
            assert_eq!(c.latency.count, 21, "{mode:?}");
        }
        assert!(out.bench_duration_us > 0);
        // The per-interval series (one HDR histogram per second) holds every transaction.
        let series = out.stats.series.as_ref().expect("time series");
        let intervals = series.intervals();
        let total: u64 = intervals.iter().map(|i| i.counters.successful).sum();
        let in_hists: u64 = intervals.iter().map(|i| i.latency_hist.len()).sum();
        assert_eq!((total, in_hists), (21, 21), "{mode:?}");
    }
}

#[test]
fn aborted_clients_leave_the_others_running() {
    let cfg = config(
        &[(
            "ab.sql",
            "\\if :client_id = 1\nselect 1/0;\n\\endif\nselect 1;\n",
        )],
        3,
        1,
        4,
    );
    let out = run(&cfg);
    assert!(out.aborted);
    assert_eq!(out.stats.total.counters.successful, 8);
}

#[test]
fn failures_are_retried_then_counted() {
    let mut cfg = config(
        &[(
            "f.sql",
            "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40P01'; END $$;\n",
        )],
        1,
        1,
        3,
    );
    cfg.errors.max_tries = 3;
    let out = run(&cfg);
    assert!(!out.aborted);
    let c = &out.stats.total.counters;
    assert_eq!(c.successful, 0);
    assert_eq!(c.deadlock_failures, 3);
    assert_eq!(c.retried, 3);
    assert_eq!(c.retries, 6);
    assert_eq!(out.stats.scripts[0].commands[0].failures, 3);
    assert_eq!(out.stats.scripts[0].commands[0].retries, 6);
}

/// The variables each client ends with come back in client order: a counter each
/// transaction adds to, and the client's id, over three clients on two threads.
#[test]
fn each_client_hands_back_its_variables() {
    let mut cfg = config(&[("count.sql", "\\set n :n + 1\nselect 1;\n")], 3, 2, 4);
    let _ = cfg.variables.put_value("startup", "n", Value::Int(10));
    let out = run(&cfg);
    let ended: Vec<(i64, i64)> = out
        .client_variables
        .iter()
        .map(|v| {
            let int = |name: &str| match v.get_by_name(name).map(|x| x.typed(name.as_bytes())) {
                Some(Ok(Value::Int(i))) => i,
                other => panic!("{name}: {other:?}"),
            };
            (int("client_id"), int("n"))
        })
        .collect();
    assert_eq!(ended, [(0, 14), (1, 14), (2, 14)]);
}

#[test]
fn reconnecting_per_transaction_measures_connections() {
    let mut cfg = config(&[("one.sql", "select 1;\n")], 2, 2, 3);
    cfg.connect_per_tx = true;
    let out = run(&cfg);
    assert!(!out.aborted);
    assert_eq!(out.stats.total.counters.successful, 6);
    assert!(out.stats.conn_time_us > 0);
}

#[test]
fn bad_configuration_is_rejected() {
    let mut cfg = config(&[("one.sql", "select 1;\n")], 2, 1, 1);
    cfg.client_rngs.truncate(1);
    let summary_layout = pgrush_stats::StatsLayout::default();
    assert!(pgrush_engine::run(&cfg, &summary_layout).is_err());
}

#[test]
fn a_failed_initial_connection_is_returned_and_stops_every_thread() {
    // Four clients on two threads: the threads meet at their barriers even though
    // they fail (no thread waits forever), and the first failure is the run's
    // (whichever thread gets there first: the other one then stops connecting).
    let mut cfg = config(&[("one.sql", "select 1;\n")], 4, 2, 1);
    cfg.conn = resolve(&ConnectRequest {
        dbname: Some("postgres".to_string()),
        host: Some("/nonexistent-pgrush-socket-dir".to_string()),
        port: Some("1".to_string()),
        user: Some("nobody".to_string()),
        ..ConnectRequest::default()
    })
    .expect("conninfo");
    let layout = pgrush_stats::StatsLayout::default();
    match pgrush_engine::run(&cfg, &layout) {
        Err(e @ EngineError::Connection { client }) => {
            assert!(client == 0 || client == 2, "{client}");
            assert_eq!(
                e.to_string(),
                format!("could not create connection for client {client}")
            );
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
}

#[test]
fn an_unwritable_log_is_returned() {
    let mut cfg = config(&[("one.sql", "select 1;\n")], 2, 2, 1);
    cfg.output.log = Some(LogConfig {
        prefix: "/nonexistent-pgrush-dir/log".to_string(),
        pid: 42,
        sampling_rate: 0.0,
        aggregate_interval: 0,
    });
    let layout = pgrush_stats::StatsLayout::default();
    match pgrush_engine::run(&cfg, &layout) {
        Err(e @ EngineError::LogFile { .. }) => assert_eq!(
            e.to_string(),
            "could not open logfile \"/nonexistent-pgrush-dir/log.42\": No such file or directory"
        ),
        other => panic!("expected a log file error, got {other:?}"),
    }
}

#[test]
fn sql_the_connection_refuses_aborts_the_client_instead_of_hanging() {
    // The wire crate refuses SQL holding a NUL byte (scripts built by other means
    // than the loader could hold one): the client aborts, the others go on.
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        let mut cfg = config(&[("nul.sql", "select 1;\nselect 2;\nselect 3;\n")], 2, 1, 2);
        cfg.query_mode = mode;
        if let pgrush_script::CommandKind::Sql(sql) = &mut cfg.scripts[0].commands[1].kind {
            sql.extended_text = b"select 2\0 junk;".to_vec();
        }
        let out = run(&cfg);
        assert!(out.aborted, "{mode:?}");
        assert_eq!(out.stats.total.counters.successful, 0, "{mode:?}");
    }
}

#[test]
fn a_shard_measures_from_the_agreed_start_with_global_client_ids() {
    // Clients 5 and 6 of a bigger benchmark: only client 5 aborts.
    let mut cfg = config(
        &[(
            "ids.sql",
            "\\if :client_id = 5\nselect 1/0;\n\\endif\nselect :client_id;\n",
        )],
        2,
        1,
        4,
    );
    let now_us = pgrush_stats::wall_clock::unix_time_us();
    let start = now_us + 700_000;
    cfg.placement = pgrush_engine::Placement {
        first_client: 5,
        start_at_unix_us: Some(start),
    };
    let out = run(&cfg);
    assert!(out.aborted);
    assert_eq!(out.stats.total.counters.successful, 4);
    let late_us = out.measured_start_unix_us - start;
    assert!(
        (0..50_000).contains(&late_us),
        "started {late_us} µs after the agreed start"
    );
    // Neither the connections nor the benchmark include the wait for the start.
    assert!(
        out.initial_connection_us < 600_000,
        "{}",
        out.initial_connection_us
    );
    assert!(out.bench_duration_us < 600_000, "{}", out.bench_duration_us);
}
