//! The express lane: which runs have one, and that a run through it leaves
//! exactly what the general machine leaves (states entered, variables,
//! generators, counters, what the server received), failures and fallbacks
//! included.

use std::cell::RefCell;
use std::rc::Rc;

use pgrush_script::{Value, VarValue, load_script};
use pgrush_stats::QueryMode;

use super::{Drive, Outcome, config, run_planned, server};
use crate::client::State;
use crate::client::fake::FakeServer;
use crate::config::EngineConfig;
use crate::plan::Plan;

/// `script` without `-r` (which the express lane leaves to the general machine).
fn plain_config(script: &str, mode: QueryMode, clients: u32, tx: u32) -> EngineConfig {
    let mut cfg = config(script, mode, clients, tx);
    cfg.output.report_per_command = false;
    cfg
}

#[test]
fn a_run_has_an_express_script_only_when_nothing_needs_the_general_machine() {
    let select = "\\set aid random(1, 100000 * :scale)\nselect :aid;\n";
    let has = |cfg: &EngineConfig| Plan::new(cfg).express.is_some();
    let base = plain_config(select, QueryMode::Prepared, 1, 1);
    assert!(has(&base));
    for mode in [QueryMode::Simple, QueryMode::Extended] {
        assert!(has(&plain_config(select, mode, 1, 1)));
    }
    let steps = Plan::new(&base).express.expect("express").steps.len();
    assert_eq!(steps, 2);

    let mut changed: Vec<(&str, EngineConfig)> = Vec::new();
    let mut with = |what, edit: &dyn Fn(&mut EngineConfig)| {
        let mut cfg = base.clone();
        edit(&mut cfg);
        changed.push((what, cfg));
    };
    with("-r", &|c| c.output.report_per_command = true);
    with("--debug", &|c| c.output.debug = true);
    with("-R", &|c| c.pacing.rate = 100.0);
    with("-C", &|c| c.connect_per_tx = true);
    with("two scripts", &|c| {
        let other = load_script("other.sql", "select 2;\n", 1).expect("script");
        c.scripts.push(other);
    });
    for (what, script) in [
        ("\\gset", "select 1 as x \\gset\n"),
        ("\\aset", "select 1 as x \\aset\n"),
        ("\\if", "\\if 1\nselect 1;\n\\endif\n"),
        ("\\sleep", "\\sleep 1 us\nselect 1;\n"),
        ("pipeline", "\\startpipeline\nselect 1;\n\\endpipeline\n"),
        ("\\shell", "\\shell true\nselect 1;\n"),
        ("no SQL", "\\set x 1\n"),
    ] {
        with(what, &move |c| {
            c.scripts = vec![load_script("s.sql", script, 1).expect("script")];
        });
    }
    for (what, cfg) in &changed {
        assert!(!has(cfg), "{what}");
    }
}

/// Runs `cfg` against a fresh fake (prepared by `arrange`) with the express
/// lane and without it; asserts that the run went through the express lane and
/// that both left the same behind. Returns the express run's outcome.
fn same_with_and_without_express(
    cfg: &EngineConfig,
    drive: Drive,
    arrange: impl Fn(&mut FakeServer),
) -> Outcome {
    let run = |express: bool| {
        let srv = server();
        arrange(&mut srv.borrow_mut());
        let mut plan = Plan::new(cfg);
        assert!(plan.express.is_some(), "the run has an express script");
        if !express {
            plan.express = None;
        }
        let out = run_planned(cfg, &plan, &srv, drive, |_| {});
        (out, srv)
    };
    let (fast, fast_srv) = run(true);
    let (general, general_srv) = run(false);
    assert_same(&fast, &general, &fast_srv, &general_srv);
    fast
}

fn assert_same(
    a: &Outcome,
    b: &Outcome,
    a_srv: &Rc<RefCell<FakeServer>>,
    b_srv: &Rc<RefCell<FakeServer>>,
) {
    assert_eq!(a.clients.len(), b.clients.len());
    for (x, y) in a.clients.iter().zip(&b.clients) {
        assert_eq!(x.trace, y.trace, "states of client {}", x.id);
        assert_eq!(x.state, y.state);
        assert_eq!(x.estatus, y.estatus);
        assert_eq!(
            (x.tx_count, x.tries, x.command),
            (y.tx_count, y.tries, y.command)
        );
        assert_eq!((x.rng, x.saved_rng), (y.rng, y.saved_rng));
        assert_eq!(x.vars, y.vars);
        assert_eq!(x.tx_status, y.tx_status);
    }
    assert_eq!(a.stats.total.counters, b.stats.total.counters);
    assert_eq!(a.stats.total.latency.count, b.stats.total.latency.count);
    for (x, y) in a.stats.scripts[0]
        .commands
        .iter()
        .zip(&b.stats.scripts[0].commands)
    {
        assert_eq!((x.retries, x.failures), (y.retries, y.failures));
    }
    assert_eq!(a_srv.borrow().received, b_srv.borrow().received);
    assert_eq!(a_srv.borrow().closes, b_srv.borrow().closes);
}

#[test]
fn select_only_transactions_are_the_general_machines_in_every_mode() {
    let script = "\\set aid random(1, 100000 * :scale)\nselect abalance from t where aid = :aid;\n";
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let out = same_with_and_without_express(
            &plain_config(script, mode, 3, 5),
            Drive::default(),
            |_| {},
        );
        assert_eq!(out.stats.total.counters.successful, 15);
        assert!(out.clients.iter().all(|c| c.state == State::Finished));
    }
}

#[test]
fn several_commands_and_sets_between_them_are_the_general_machines() {
    let script = "\\set a random(1, 10)\nselect :a;\n\\set b :a * 2 + :client_id\n\
                  \\set c random(1, :b)\nupdate t set x = :b where y = :c;\nselect :c;\n";
    for mode in [QueryMode::Simple, QueryMode::Prepared] {
        let out = same_with_and_without_express(
            &plain_config(script, mode, 2, 4),
            Drive::default(),
            |_| {},
        );
        assert_eq!(out.stats.total.counters.successful, 8);
    }
}

#[test]
fn retried_and_failed_transactions_are_the_general_machines() {
    let block = "begin;\nupdate t set x = 1;\nselect 1;\nend;\n";
    let mut cfg = plain_config(block, QueryMode::Extended, 1, 3);
    cfg.errors.max_tries = 3;
    let out = same_with_and_without_express(&cfg, Drive::default(), |s| {
        s.fail("update", "40001", Some(2));
    });
    assert_eq!(out.stats.total.counters.retries, 2);
    assert!(out.visited(State::Retry));

    let mut cfg = plain_config("select 1;\nselect 2;\n", QueryMode::Simple, 2, 2);
    cfg.errors.max_tries = 2;
    let out = same_with_and_without_express(&cfg, Drive::default(), |s| {
        s.fail("select 2", "40P01", None);
    });
    assert_eq!(out.stats.total.counters.deadlock_failures, 4);
    assert!(out.visited(State::Failure));
}

#[test]
fn errors_that_abort_or_continue_are_the_general_machines() {
    let script = "select 1;\nselect 2;\n";
    let out = same_with_and_without_express(
        &plain_config(script, QueryMode::Prepared, 1, 3),
        Drive::default(),
        |s| s.fail("select 2", "42P01", None),
    );
    assert_eq!(out.client().state, State::Aborted);

    let mut cfg = plain_config(script, QueryMode::Simple, 1, 3);
    cfg.errors.continue_on_error = true;
    let out = same_with_and_without_express(&cfg, Drive::default(), |s| {
        s.fail("select 2", "42P01", None);
    });
    assert_eq!(out.stats.total.counters.other_failures, 3);
}

#[test]
fn a_set_that_fails_after_a_result_aborts_as_in_the_general_machine() {
    // The first transaction reads a result, then its `\set` divides by zero
    // (left to the general evaluator) or overflows (the compiled form gives up).
    for set in ["\\set x 1 / (:n - 1)", "\\set x 9223372036854775807 + :n"] {
        let script = format!("\\set n 1\nselect 1;\n{set}\nselect :x;\n");
        let out = same_with_and_without_express(
            &plain_config(&script, QueryMode::Prepared, 1, 2),
            Drive::default(),
            |_| {},
        );
        assert_eq!(out.client().state, State::Aborted, "{set}");
        assert!(out.visited(State::EndCommand));
    }
}

#[test]
fn an_open_block_a_refused_send_and_the_end_of_the_run_are_the_general_machines() {
    let open = plain_config("select 1;\nbegin;\n", QueryMode::Simple, 1, 2);
    let out = same_with_and_without_express(&open, Drive::default(), |_| {});
    assert_eq!(out.client().state, State::Aborted);

    let refused = plain_config("select 1;\nselect 'x';\n", QueryMode::Simple, 1, 2);
    let out = same_with_and_without_express(&refused, Drive::default(), |s| {
        s.refuse_sql_containing("'x'");
    });
    assert_eq!(out.client().state, State::Aborted);

    let mut timed = plain_config(
        "\\set a random(1, 9)\nselect :a;\n",
        QueryMode::Prepared,
        3,
        1,
    );
    timed.limit = pgrush_stats::RunLimit::Duration(60);
    let drive = Drive {
        end_at_pass: Some(7),
        ..Drive::default()
    };
    let out = same_with_and_without_express(&timed, drive, |_| {});
    assert!(out.clients.iter().all(|c| c.state == State::Finished));
    assert!(out.stats.total.counters.successful > 0);
}

#[test]
fn variables_set_before_the_run_are_read_as_in_the_general_machine() {
    let mut cfg = plain_config("select :v;\n\\set v :v + 1\n", QueryMode::Prepared, 2, 4);
    cfg.variables
        .put_value("startup", "v", Value::Int(40))
        .expect("v");
    let out = same_with_and_without_express(&cfg, Drive::default(), |_| {});
    let v = out.clients[0].vars.get_by_name(b"v");
    assert_eq!(v, Some(&VarValue::Value(Value::Int(44))));
}
