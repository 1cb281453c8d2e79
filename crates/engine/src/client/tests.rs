//! The state machine against the scripted fake server (`fake.rs`): every state,
//! aborts, retries, pipelines, `\if` skipping, and refused sends.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use pgrush_script::{Seeds, Value, Variables, load_script};
use pgrush_stats::{QueryMode, RunLimit, StatsLayout, ThreadStats, TxCounters};
use pgrush_wire::conninfo::{ConnectRequest, resolve};

use super::fake::{FakeConn, FakeNetwork, FakeServer};
use super::{Client, ErrStatus, State, Turn, Wait};
use crate::clock::{Clock, LazyNow};
use crate::config::{EngineConfig, ErrorPolicy, Output, Pacing};
use crate::context::ThreadCtx;
use crate::plan::Plan;
use crate::worker::sched::Scheduler;

/// A configuration for `clients` clients running `script` `tx` times each.
fn config(script: &str, mode: QueryMode, clients: u32, tx: u32) -> EngineConfig {
    let conn = resolve(&ConnectRequest {
        dbname: Some("fake".to_string()),
        host: Some("/nonexistent".to_string()),
        port: Some("5432".to_string()),
        user: Some("fake".to_string()),
        ..ConnectRequest::default()
    })
    .expect("conninfo");
    let seeds = Seeds::plan(7, clients as usize, 1, false);
    let mut variables = Variables::new();
    variables
        .put_value("startup", "scale", Value::Int(1))
        .expect("scale");
    EngineConfig {
        conn,
        scripts: vec![load_script("fake.sql", script, 1).expect("script")],
        clients,
        threads: 1,
        limit: RunLimit::Transactions(tx),
        query_mode: mode,
        connect_per_tx: false,
        pacing: Pacing::default(),
        errors: ErrorPolicy::default(),
        output: Output {
            report_per_command: true,
            ..Output::new("pgrush-test")
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

/// What a run against the fake left behind.
struct Outcome {
    clients: Vec<Client<FakeConn>>,
    stats: ThreadStats,
    /// Tokens still registered at the end.
    registered: usize,
    /// The scheduler's readiness checks.
    checks: u64,
}

impl Outcome {
    fn counters(&self) -> &TxCounters {
        &self.stats.total.counters
    }

    fn client(&self) -> &Client<FakeConn> {
        &self.clients[0]
    }

    /// Whether client 0 went through `state`.
    fn visited(&self, state: State) -> bool {
        self.client().trace.contains(&state)
    }
}

/// Runs every client to its end as the worker would, with the fake answering at
/// once. A client that waits for its socket while nothing will ever arrive hangs:
/// the test fails instead.
fn run(cfg: &EngineConfig, server: &Rc<RefCell<FakeServer>>) -> Outcome {
    run_with(cfg, server, |_| {})
}

fn run_with(
    cfg: &EngineConfig,
    server: &Rc<RefCell<FakeServer>>,
    before: impl FnOnce(&mut ThreadCtx<'_, FakeNetwork>),
) -> Outcome {
    run_driven(cfg, server, Drive::default(), before)
}

/// The context of thread 0 of `cfg` over the fake `server`, with statistics laid out
/// for `cfg`'s scripts (per command, with histograms).
fn fake_ctx<'a>(
    cfg: &'a EngineConfig,
    plan: &'a Plan<'a>,
    server: &Rc<RefCell<FakeServer>>,
) -> ThreadCtx<'a, FakeNetwork> {
    let layout = StatsLayout {
        commands_per_script: cfg.scripts.iter().map(|s| s.commands.len()).collect(),
        latency_limit_us: (cfg.pacing.latency_limit_us > 0)
            .then_some(cfg.pacing.latency_limit_us as f64),
        throttled: cfg.pacing.rate > 0.0,
        per_command: true,
        command_histograms: true,
        time_series: true,
    };
    let clock = Clock::new();
    let mut ctx = ThreadCtx::new(
        cfg,
        plan,
        clock,
        ThreadStats::new(&layout),
        cfg.thread_rngs[0],
        None,
        FakeNetwork::new(server),
    );
    ctx.throttle_trigger = clock.now();
    ctx
}

/// [`run_with`], driven as `drive` says.
fn run_driven(
    cfg: &EngineConfig,
    server: &Rc<RefCell<FakeServer>>,
    drive: Drive,
    before: impl FnOnce(&mut ThreadCtx<'_, FakeNetwork>),
) -> Outcome {
    let plan = Plan::new(cfg);
    run_planned(cfg, &plan, server, drive, before)
}

/// [`run_driven`] with the run's `plan` given.
fn run_planned(
    cfg: &EngineConfig,
    plan: &Plan<'_>,
    server: &Rc<RefCell<FakeServer>>,
    drive: Drive,
    before: impl FnOnce(&mut ThreadCtx<'_, FakeNetwork>),
) -> Outcome {
    let mut ctx = fake_ctx(cfg, plan, server);
    before(&mut ctx);
    let mut clients: Vec<Client<FakeConn>> = (0..cfg.clients)
        .map(|id| {
            let mut vars = cfg.variables.clone();
            vars.put_value("startup", "client_id", Value::Int(i64::from(id)))
                .expect("client_id");
            Client::new(
                id,
                vars,
                cfg.client_rngs[id as usize],
                plan.stmt_names.len(),
            )
        })
        .collect();
    if !cfg.connect_per_tx {
        for c in &mut clients {
            assert!(c.connect_initially(&mut ctx).expect("register"));
        }
    }
    let mut sched = Scheduler::new(clients.len());
    drive_clients(&mut sched, &mut clients, &mut ctx, drive);
    let registered = ctx.net.registered;
    Outcome {
        clients,
        stats: ctx.stats,
        registered,
        checks: sched.checks(),
    }
}

/// How the fake "poll" hands over socket events.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Delivery {
    /// Every pending event in the next pass.
    #[default]
    All,
    /// Every pending event, the last first (the poll's order is not the clients').
    AllReversed,
    /// One event per pass: the replies trickle in.
    OneAtATime,
}

/// How [`drive_clients`] runs the loop.
#[derive(Clone, Copy, Default)]
struct Drive {
    delivery: Delivery,
    /// The pass at which the run's time is over (as the `-T` end).
    end_at_pass: Option<usize>,
}

/// Drives the clients as the worker's loop does, with its [`Scheduler`]: polls only
/// when no client can go on at once; the fake answers at once, so a client that
/// waits for its socket with something to read (or output pending: the fake's
/// socket is always writable) gets an event. With no event, no client to run at
/// once and no deadline, the loop would sleep forever: the test fails instead.
fn drive_clients(
    sched: &mut Scheduler,
    clients: &mut [Client<FakeConn>],
    ctx: &mut ThreadCtx<'_, FakeNetwork>,
    drive: Drive,
) {
    let mut remaining = clients.len();
    let mut events: VecDeque<usize> = VecDeque::new();
    let mut in_events = vec![false; clients.len()];
    let mut swept = false;
    for pass in 0..10_000_000 {
        if remaining == 0 {
            return;
        }
        if drive.end_at_pass == Some(pass) {
            ctx.timer_exceeded = true;
        }
        let sweep = ctx.timer_exceeded && !swept;
        if !sched.has_run_now() && !sweep {
            let n = match drive.delivery {
                Delivery::OneAtATime => 1,
                _ => events.len(),
            };
            if drive.delivery == Delivery::AllReversed {
                events.make_contiguous().reverse();
            }
            if events.is_empty() {
                match sched.next_deadline() {
                    Some(t) => {
                        let wait = (t - ctx.clock.now()).max(0) as u64;
                        std::thread::sleep(Duration::from_micros(wait));
                    }
                    None => {
                        let waiting: Vec<(u32, State)> =
                            clients.iter().map(|c| (c.id, c.state)).collect();
                        panic!("clients wait for replies that never come: {waiting:?}");
                    }
                }
            }
            for i in events.drain(..n.min(events.len())) {
                in_events[i] = false;
                sched.socket_event(i, true, true);
            }
        }
        let mut now = LazyNow::new();
        swept |= sweep;
        sched.begin_pass(&mut now, &ctx.clock, sweep);
        sched.run_ready(clients, ctx, &mut now, |_| {
            remaining -= 1;
            true
        });
        for &i in sched.ready() {
            let c = &clients[i as usize];
            let pending = c.out_pending || c.conn.as_ref().is_some_and(FakeConn::readable);
            if c.wait() == Wait::Socket && pending && !in_events[i as usize] {
                in_events[i as usize] = true;
                events.push_back(i as usize);
            }
        }
        sched.end_pass();
    }
    panic!("the clients did not finish");
}

fn server() -> Rc<RefCell<FakeServer>> {
    FakeServer::new()
}

#[test]
fn transitions_are_checked() {
    use State::*;
    assert!(ChooseScript.may_become(StartTx));
    assert!(StartCommand.may_become(WaitResult));
    assert!(WaitResult.may_become(WaitResult));
    assert!(!StartCommand.may_become(StartCommand));
    assert!(!EndTx.may_become(StartCommand));
    assert!(!Finished.may_become(ChooseScript));
    assert!(Aborted.may_become(Aborted));
    // Only the waiting states (and SkipCommand, which walks the script) stay.
    let all = [
        ChooseScript,
        PrepareThrottle,
        Throttle,
        StartTx,
        StartCommand,
        SkipCommand,
        WaitResult,
        Sleep,
        EndCommand,
        Error,
        WaitRollbackResult,
        Retry,
        Failure,
        EndTx,
        Aborted,
        Finished,
    ];
    let staying: Vec<State> = all.into_iter().filter(|s| s.may_become(*s)).collect();
    assert_eq!(
        staying,
        [
            ChooseScript,
            Throttle,
            SkipCommand,
            WaitResult,
            Sleep,
            WaitRollbackResult,
            Aborted,
            Finished
        ]
    );
}

#[test]
fn sqlstates_decide_retries() {
    assert_eq!(ErrStatus::from_sqlstate(b"40001"), ErrStatus::Serialization);
    assert_eq!(ErrStatus::from_sqlstate(b"40P01"), ErrStatus::Deadlock);
    assert_eq!(ErrStatus::from_sqlstate(b"42P01"), ErrStatus::Other);
    assert!(ErrStatus::Deadlock.retryable());
    assert!(!ErrStatus::Other.retryable());
    assert!(!ErrStatus::MetaCommand.retryable());
}

#[test]
fn a_transaction_walks_the_states_in_every_mode() {
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let srv = server();
        let out = run(&config("select 1;\nselect 2;\n", mode, 2, 3), &srv);
        assert_eq!(out.counters().successful, 6, "{mode:?}");
        assert_eq!(out.counters().failed(), 0);
        for c in &out.clients {
            assert_eq!(c.state, State::Finished);
            assert_eq!(c.tx_count, 3);
        }
        let trace = &out.client().trace;
        use State::*;
        assert_eq!(
            &trace[..8],
            [
                StartTx,
                StartCommand,
                WaitResult,
                EndCommand,
                StartCommand,
                WaitResult,
                EndCommand,
                StartCommand
            ],
            "{mode:?}"
        );
        assert_eq!(trace[8..10], [EndTx, ChooseScript]);
        assert_eq!(*trace.last().expect("trace"), Finished);
        // Every command's latency was recorded (-r).
        let commands = &out.stats.scripts[0].commands;
        assert_eq!(commands[0].latency.count, 6);
        assert_eq!(commands[1].latency.count, 6);
        let srv = srv.borrow();
        match mode {
            QueryMode::Simple => {
                assert_eq!(srv.received_starting("Q select 1").len(), 6);
                assert!(srv.received_starting("P").is_empty());
            }
            QueryMode::Extended => {
                assert_eq!(srv.received_starting("P  select 1").len(), 6);
                assert_eq!(srv.received_starting("S").len(), 12);
            }
            QueryMode::Prepared => {
                // Prepared once per connection (two clients), executed every time.
                assert_eq!(srv.received_starting("P P_0 select 1").len(), 2);
                assert_eq!(srv.received_starting("P P_1 select 2").len(), 2);
                assert_eq!(srv.received_starting("B P_0").len(), 6);
            }
        }
        // Every connection was closed and deregistered at the end.
        assert_eq!(srv.closes, 2);
        assert_eq!(out.registered, 0);
    }
}

#[test]
fn gset_and_aset_store_variables() {
    let srv = server();
    srv.borrow_mut()
        .rows("select 42", vec!["x", "n"], vec![vec![Some("42"), None]]);
    srv.borrow_mut()
        .rows("select 7", vec!["a", "b"], vec![vec![Some("7"), Some("8")]]);
    let script = "select 42 as x, null as n \\gset p_\n\
                  select 7 as a, 8 as b \\aset\n\
                  select :p_x + :a + :b, ':p_n';\n";
    let out = run(&config(script, QueryMode::Simple, 1, 1), &srv);
    assert_eq!(out.counters().successful, 1);
    assert_eq!(
        srv.borrow().received_starting("Q select 42 + 7 + 8"),
        ["Q select 42 + 7 + 8, '';"]
    );
}

#[test]
fn gset_without_exactly_one_row_aborts() {
    let srv = server();
    srv.borrow_mut().rows(
        "select x",
        vec!["x"],
        vec![vec![Some("1")], vec![Some("2")]],
    );
    let out = run(
        &config("select x \\gset\n", QueryMode::Extended, 1, 3),
        &srv,
    );
    assert_eq!(out.client().state, State::Aborted);
    assert_eq!(out.client().estatus, ErrStatus::MetaCommand);
    assert_eq!(out.counters().successful, 0);
}

#[test]
fn inactive_if_branches_are_skipped() {
    let script = "\\if 0\n\
                  select 'if';\n\
                  \\if 1\n\
                  select 'nested';\n\
                  \\endif\n\
                  \\elif 1\n\
                  select 'elif';\n\
                  \\else\n\
                  select 'else';\n\
                  \\endif\n\
                  \\if 1\n\
                  select 'second';\n\
                  \\else\n\
                  select 'second else';\n\
                  \\endif\n";
    let srv = server();
    let out = run(&config(script, QueryMode::Simple, 1, 2), &srv);
    assert_eq!(out.counters().successful, 2);
    let queries = srv.borrow().received_starting("Q");
    assert_eq!(
        queries,
        [
            "Q select 'elif';",
            "Q select 'second';",
            "Q select 'elif';",
            "Q select 'second';"
        ]
    );
    assert!(out.visited(State::SkipCommand));
    assert!(out.client().cond.is_empty());
}

#[test]
fn sleep_waits_for_its_deadline() {
    let srv = server();
    let started = std::time::Instant::now();
    let out = run(
        &config("\\sleep 2 ms\nselect 1;\n", QueryMode::Simple, 1, 2),
        &srv,
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(4));
    assert_eq!(out.counters().successful, 2);
    assert!(out.visited(State::Sleep));
}

#[test]
fn throttling_schedules_and_skips_late_transactions() {
    let srv = server();
    let mut cfg = config("select 1;\n", QueryMode::Simple, 1, 5);
    cfg.pacing.rate = 1000.0;
    let out = run(&cfg, &srv);
    assert_eq!(out.counters().successful, 5);
    assert!(out.visited(State::PrepareThrottle));
    assert!(out.visited(State::Throttle));

    // With -L, slots already later than the limit are skipped (not run).
    let srv = server();
    let mut cfg = config("select 1;\n", QueryMode::Simple, 1, 5);
    cfg.pacing.rate = 1000.0;
    cfg.pacing.latency_limit_us = 1000;
    let out = run_with(&cfg, &srv, |ctx| ctx.throttle_trigger -= 1_000_000);
    assert_eq!(out.counters().skipped + out.counters().successful, 5);
    assert!(out.counters().skipped > 0);
}

#[test]
fn timer_exceeded_finishes_at_the_next_script() {
    let srv = server();
    let mut cfg = config("select 1;\n", QueryMode::Simple, 1, 1);
    cfg.limit = RunLimit::Duration(1);
    let out = run_with(&cfg, &srv, |ctx| ctx.timer_exceeded = true);
    assert_eq!(out.client().trace, [State::Finished, State::Finished]);
    assert_eq!(out.counters().total(), 0);
}

#[test]
fn serialization_failures_are_retried_up_to_max_tries() {
    let srv = server();
    srv.borrow_mut().fail("update", "40001", Some(2));
    let mut cfg = config(
        "begin;\nupdate t set x = 1;\nend;\n",
        QueryMode::Extended,
        1,
        1,
    );
    cfg.errors.max_tries = 3;
    cfg.errors.verbose_errors = true;
    let out = run(&cfg, &srv);
    let c = out.counters();
    assert_eq!((c.successful, c.retried, c.retries), (1, 1, 2));
    assert!(out.visited(State::Error));
    assert!(out.visited(State::WaitRollbackResult));
    assert!(out.visited(State::Retry));
    assert!(!out.visited(State::Failure));
    // The failed block was rolled back each time, then the whole transaction rerun.
    let srv = srv.borrow();
    assert_eq!(srv.received_starting("Q ROLLBACK").len(), 2);
    assert_eq!(srv.received_starting("P  begin").len(), 3);
    assert_eq!(out.stats.scripts[0].commands[1].retries, 2);
}

#[test]
fn deadlocks_fail_the_transaction_after_the_last_try() {
    let srv = server();
    srv.borrow_mut().fail("select", "40P01", None);
    let mut cfg = config("select 1;\n", QueryMode::Simple, 1, 2);
    cfg.errors.max_tries = 2;
    let out = run(&cfg, &srv);
    let c = out.counters();
    assert_eq!((c.successful, c.deadlock_failures), (0, 2));
    assert_eq!((c.retried, c.retries), (2, 2));
    // Outside a transaction block there is nothing to roll back.
    assert!(!out.visited(State::WaitRollbackResult));
    assert!(out.visited(State::Failure));
    assert_eq!(out.client().state, State::Finished);
    assert_eq!(out.stats.scripts[0].commands[0].failures, 2);
}

#[test]
fn other_sql_errors_abort_unless_continue_on_error() {
    let srv = server();
    srv.borrow_mut().fail("select", "42P01", None);
    let out = run(
        &config("select 1;\nselect 2;\n", QueryMode::Prepared, 1, 3),
        &srv,
    );
    assert_eq!(out.client().state, State::Aborted);
    assert_eq!(out.client().estatus, ErrStatus::Other);
    assert_eq!(out.counters().total(), 0);
    assert_eq!(srv.borrow().closes, 1);

    let srv = server();
    srv.borrow_mut().fail("select 2", "42P01", None);
    let mut cfg = config("select 1;\nselect 2;\n", QueryMode::Simple, 1, 3);
    cfg.errors.continue_on_error = true;
    let out = run(&cfg, &srv);
    assert_eq!(out.counters().other_failures, 3);
    assert_eq!(out.client().state, State::Finished);
}

#[test]
fn a_lost_connection_aborts_even_with_continue_on_error() {
    // A FATAL error (the server ends the session) or a socket that closes: the
    // client aborts at once, no failure counted, nothing more sent (pgbench 19).
    for fatal in [true, false] {
        for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
            let srv = server();
            srv.borrow_mut().end_session("select 2", fatal);
            let mut cfg = config("select 1;\nselect 2;\n", mode, 1, 3);
            cfg.errors.continue_on_error = true;
            let out = run(&cfg, &srv);
            let label = format!("fatal {fatal} {mode:?}");
            assert_eq!(out.client().state, State::Aborted, "{label}");
            assert_eq!(out.client().estatus, ErrStatus::ConnectionLost, "{label}");
            assert_eq!(out.counters().total(), 0, "{label}");
            assert!(!out.visited(State::Error), "{label}");
            assert_eq!(srv.borrow().received_starting("Q ROLLBACK").len(), 0);
            let statements = srv
                .borrow()
                .received
                .iter()
                .filter(|l| l.starts_with("Q ") || l.starts_with("E"))
                .count();
            assert_eq!(statements, 2, "{label}: {:?}", srv.borrow().received);
        }
    }
}

#[test]
fn a_failed_meta_command_aborts() {
    let srv = server();
    let out = run(
        &config("\\set x 1 / 0\nselect 1;\n", QueryMode::Simple, 1, 1),
        &srv,
    );
    assert_eq!(out.client().state, State::Aborted);
    assert_eq!(out.client().estatus, ErrStatus::MetaCommand);
    assert!(srv.borrow().received_starting("Q").is_empty());
}

#[test]
fn an_open_transaction_block_at_the_end_aborts() {
    let srv = server();
    let out = run(
        &config("begin;\nselect 1;\n", QueryMode::Simple, 1, 2),
        &srv,
    );
    assert_eq!(out.client().state, State::Aborted);
    // The transaction itself was counted before the check, as pgbench does.
    assert_eq!(out.counters().successful, 1);
}

#[test]
fn pipelines_send_everything_before_reading() {
    let script =
        "\\startpipeline\nselect 1;\nselect 2;\n\\syncpipeline\nselect 3;\n\\endpipeline\n";
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        let srv = server();
        let out = run(&config(script, mode, 1, 2), &srv);
        assert_eq!(out.counters().successful, 2, "{mode:?}");
        let received = srv.borrow().received.clone();
        let first_sync = received.iter().position(|l| l == "S").expect("sync");
        match mode {
            QueryMode::Extended => {
                // One write: three executions, the \syncpipeline Sync and the final one.
                assert_eq!(received.iter().filter(|l| *l == "E").count(), 6);
                assert_eq!(received.iter().filter(|l| *l == "S").count(), 4);
                assert!(received[..first_sync].iter().filter(|l| *l == "E").count() == 2);
            }
            _ => {
                // Statements are prepared (with their own Sync each) before the pipeline.
                assert_eq!(received[0], "P P_0 select 1;");
                assert_eq!(received[1], "S");
                assert_eq!(srv.borrow().received_starting("P ").len(), 3);
            }
        }
        assert!(!out.visited(State::Aborted));
    }
}

#[test]
fn pipeline_misuse_aborts() {
    for (script, mode) in [
        (
            "\\startpipeline\nselect 1;\n\\endpipeline\n",
            QueryMode::Simple,
        ),
        ("\\startpipeline\nselect 1;\n", QueryMode::Extended),
        ("\\endpipeline\n", QueryMode::Extended),
        (
            "\\startpipeline\nselect 1 as x \\gset\n\\endpipeline\n",
            QueryMode::Extended,
        ),
        (
            "\\startpipeline\n\\startpipeline\n\\endpipeline\n",
            QueryMode::Extended,
        ),
    ] {
        let srv = server();
        let out = run(&config(script, mode, 1, 1), &srv);
        assert_eq!(out.client().state, State::Aborted, "{script:?} {mode:?}");
    }
}

#[test]
fn an_error_in_a_pipeline_aborts_after_reading_every_result() {
    let srv = server();
    srv.borrow_mut().fail("select 2", "42P01", None);
    let script = "\\startpipeline\nselect 1;\nselect 2;\nselect 3;\n\\endpipeline\nselect 4;\n";
    let out = run(&config(script, QueryMode::Extended, 1, 1), &srv);
    assert_eq!(out.client().state, State::Aborted);
    assert!(srv.borrow().received_starting("P  select 4").is_empty());
}

#[test]
fn a_refused_send_aborts_the_client_in_every_mode() {
    // The wire crate refuses SQL holding a NUL byte; the client must abort
    // instead of waiting for a reply to a message that was never sent.
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let srv = server();
        srv.borrow_mut().refuse_sql_containing("junk");
        let out = run(
            &config("select 1;\nselect 2 junk;\nselect 3;\n", mode, 1, 2),
            &srv,
        );
        assert_eq!(out.client().state, State::Aborted, "{mode:?}");
        assert_eq!(out.client().command, 1);
        assert_eq!(out.counters().total(), 0);
        let srv = srv.borrow();
        // Nothing of the refused command (nor of a later one) reached the server.
        assert!(!srv.received.iter().any(|l| l.contains("select 3")));
        assert!(!srv.received.iter().any(|l| l.contains("P_1")), "{mode:?}");
        assert_eq!(srv.closes, 1);
    }
}

#[test]
fn a_refused_preparation_in_a_pipeline_aborts() {
    let srv = server();
    srv.borrow_mut().refuse_sql_containing("junk");
    let script = "\\startpipeline\nselect 1;\nselect junk;\n\\endpipeline\n";
    let out = run(&config(script, QueryMode::Prepared, 1, 1), &srv);
    assert_eq!(out.client().state, State::Aborted);
    assert_eq!(out.client().command, 0);
    assert!(srv.borrow().received_starting("E").is_empty());
}

#[test]
fn a_dead_socket_aborts() {
    let srv = server();
    srv.borrow_mut().flush_fails = true;
    let out = run(&config("select 1;\n", QueryMode::Simple, 1, 1), &srv);
    assert_eq!(out.client().state, State::Aborted);
    assert!(out.visited(State::StartCommand));
}

#[test]
fn connect_per_transaction_reconnects_and_aborts_when_refused() {
    let srv = server();
    let mut cfg = config("select 1;\n", QueryMode::Prepared, 1, 3);
    cfg.connect_per_tx = true;
    let out = run(&cfg, &srv);
    assert_eq!(out.counters().successful, 3);
    {
        let srv = srv.borrow();
        assert_eq!((srv.connects, srv.closes), (3, 3));
        // A new connection prepares again.
        assert_eq!(srv.received_starting("P P_0").len(), 3);
    }
    assert!(out.stats.conn_time_us < 10_000_000);

    let srv = server();
    srv.borrow_mut().refuse_connects_after = Some(1);
    let out = run(&cfg, &srv);
    assert_eq!(out.counters().successful, 1);
    assert_eq!(out.client().state, State::Aborted);
}

#[test]
fn interrupting_cancels_and_closes() {
    let srv = server();
    let cfg = config("select 1;\n", QueryMode::Simple, 1, 1);
    let plan = Plan::new(&cfg);
    let mut ctx = fake_ctx(&cfg, &plan, &srv);
    let mut client: Client<FakeConn> = Client::new(0, cfg.variables.clone(), cfg.client_rngs[0], 1);
    assert!(client.connect_initially(&mut ctx).expect("register"));
    let mut now = LazyNow::new();
    assert_eq!(client.advance(&mut ctx, &mut now), Wait::Socket);
    assert_eq!(client.state(), State::WaitResult);
    client.interrupt(&mut ctx, &mut now);
    assert!(client.done());
    assert_eq!(client.wait(), Wait::Done);
    assert_eq!(srv.borrow().received[1..], ["cancel", "close"]);
    assert_eq!(ctx.net.registered, 0);
}

#[test]
fn pending_output_is_written_when_the_socket_is_writable() {
    let srv = server();
    srv.borrow_mut().stalled_flushes = 2;
    let cfg = config("select 1;\n", QueryMode::Extended, 1, 2);
    let plan = Plan::new(&cfg);
    let mut ctx = fake_ctx(&cfg, &plan, &srv);
    let mut client: Client<FakeConn> = Client::new(0, cfg.variables.clone(), cfg.client_rngs[0], 1);
    assert!(client.connect_initially(&mut ctx).expect("register"));
    // The first send stays in the buffer: the client waits for its socket.
    assert_eq!(client.take_turn(&mut ctx, false), Turn::Ran(Wait::Socket));
    assert!(client.out_pending);
    assert!(srv.borrow().received.is_empty());
    // Writable, nothing to read: only the output moves (and stalls once more).
    assert!(client.is_due(&mut LazyNow::new(), &ctx.clock, false, false, true));
    assert_eq!(client.take_turn(&mut ctx, false), Turn::Flushed);
    assert!(client.out_pending);
    assert_eq!(client.take_turn(&mut ctx, false), Turn::Flushed);
    assert!(!client.out_pending);
    assert_eq!(srv.borrow().received_starting("S").len(), 1);
    // Not writable-due any more; readable now.
    assert!(!client.is_due(&mut LazyNow::new(), &ctx.clock, false, false, true));
    // The result ends the first transaction; the second starts in the same turn.
    assert_eq!(client.take_turn(&mut ctx, true), Turn::Ran(Wait::Socket));
    assert_eq!(client.state(), State::WaitResult);
    assert_eq!(ctx.stats.total.counters.successful, 1);
    assert_eq!(srv.borrow().received_starting("S").len(), 2);
}

#[test]
fn stalled_output_still_completes_a_run() {
    let srv = server();
    srv.borrow_mut().stalled_flushes = 5;
    let out = run(
        &config("select 1;\nselect 2;\n", QueryMode::Prepared, 2, 3),
        &srv,
    );
    assert_eq!(out.counters().successful, 6);
}

mod chaining;
mod express;
mod plain_results;
mod reconnect;
mod scheduling;
mod targets;

#[test]
fn a_refused_preparation_is_read_before_the_execution_is_sent() {
    let srv = server();
    srv.borrow_mut().bad_syntax = Some(b"junk".to_vec());
    let out = run(
        &config("select 1;\nselect junk;\n", QueryMode::Prepared, 1, 2),
        &srv,
    );
    // As pgbench: the refusal is only logged, the execution then fails.
    assert_eq!(out.client().state, State::Aborted);
    assert_eq!(out.client().command, 1);
    assert_eq!(out.counters().successful, 0);
    let received = srv.borrow().received.clone();
    let from = received
        .iter()
        .position(|r| r.starts_with("P P_1"))
        .expect("P_1 prepared");
    assert_eq!(received[from + 1..from + 3], ["S", "B P_1"]);
}
