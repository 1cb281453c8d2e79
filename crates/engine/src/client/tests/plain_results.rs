//! The fast path of reading plain results (`ClientConn::next_plain`) against the
//! general path (`next_message` one message at a time): the same scripts against the
//! same fake server, once with the fast path and once with the fake declining it,
//! must leave the same counters, client states, transaction status, query numbers
//! and requests, including where the fast path hands over (errors, retries,
//! `\gset`/`\aset`, pipelines, failed preparations).

use pgrush_stats::{QueryMode, TxCounters};
use pgrush_wire::TransactionStatus;

use super::{FakeServer, config, run, server};
use crate::client::{ErrStatus, State};
use crate::config::EngineConfig;

/// What a run left that the way of reading results could change.
#[derive(Debug, PartialEq)]
struct Summary {
    counters: TxCounters,
    /// Per client: final state, error status, transaction status, query number,
    /// every state it went through.
    clients: Vec<(State, ErrStatus, TransactionStatus, u32, Vec<State>)>,
    /// What the server received.
    received: Vec<String>,
}

/// Runs `script` (2 clients, 3 transactions each) with the fast path and without;
/// checks that both leave the same summary and returns it with the number of times
/// the fast path consumed messages.
fn both_ways(
    script: &str,
    mode: QueryMode,
    setup: impl Fn(&mut FakeServer),
    tune: impl Fn(&mut EngineConfig),
) -> (Summary, u32) {
    let [fast, general] = [false, true].map(|general_only| {
        let srv = server();
        setup(&mut srv.borrow_mut());
        srv.borrow_mut().general_only = general_only;
        let mut cfg = config(script, mode, 2, 3);
        tune(&mut cfg);
        let out = run(&cfg, &srv);
        let clients = out
            .clients
            .iter()
            .map(|c| {
                let trace = c.trace.clone();
                (c.state, c.estatus, c.tx_status, c.read.qrynum, trace)
            })
            .collect();
        let srv = srv.borrow();
        let summary = Summary {
            counters: *out.counters(),
            clients,
            received: srv.received.clone(),
        };
        (summary, srv.plain_reads)
    });
    assert_eq!(general.1, 0, "{script}: the general run took the fast path");
    assert_eq!(fast.0, general.0, "{script} in {mode:?}");
    fast
}

const MODES: [QueryMode; 3] = [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared];

#[test]
fn rows_and_transaction_blocks_read_alike() {
    let script = "begin;\nselect rows;\nselect 1;\nend;\n";
    for mode in MODES {
        let (summary, fast_reads) = both_ways(
            script,
            mode,
            |s| s.rows("rows", vec!["a", "b"], vec![vec![Some("1"), None]; 3]),
            |_| {},
        );
        assert_eq!(summary.counters.successful, 6, "{mode:?}");
        assert!(
            fast_reads >= 24,
            "{mode:?}: fast path used {fast_reads} times"
        );
    }
}

#[test]
fn gset_and_aset_commands_read_alike() {
    let script = "select one \\gset p_\nselect 1;\nselect all \\aset\nselect :p_a;\n";
    for mode in MODES {
        let (summary, fast_reads) = both_ways(
            script,
            mode,
            |s| {
                s.rows("one", vec!["a"], vec![vec![Some("7")]]);
                s.rows("all", vec!["b"], vec![vec![Some("1")], vec![Some("2")]]);
            },
            |_| {},
        );
        assert_eq!(summary.counters.successful, 6, "{mode:?}");
        assert!(fast_reads > 0, "{mode:?}");
        // The variable `\gset` stored reached the next command (the fake records
        // the parameters of the simple protocol only).
        let stored = summary.received.iter().any(|l| l.contains("select 7"));
        assert!(
            stored || mode != QueryMode::Simple,
            "{:?}",
            summary.received
        );
    }
}

#[test]
fn errors_retries_and_aborts_read_alike() {
    for mode in MODES {
        let (summary, _) = both_ways(
            "begin;\nupdate t set x = 1;\nend;\n",
            mode,
            |s| s.fail("update", "40001", Some(2)),
            |c| c.errors.max_tries = 3,
        );
        assert_eq!(summary.counters.retries, 2, "{mode:?}");

        let (summary, _) = both_ways(
            "select 1;\nselect 2;\n",
            mode,
            |s| s.fail("select 2", "42P01", None),
            |_| {},
        );
        assert!(summary.clients.iter().all(|c| c.0 == State::Aborted));

        let (summary, _) = both_ways(
            "select 1;\nselect 2;\n",
            mode,
            |s| s.fail("select 2", "42P01", Some(1)),
            |c| c.errors.continue_on_error = true,
        );
        assert_eq!(summary.counters.other_failures, 1, "{mode:?}");
    }
}

#[test]
fn pipelines_and_failed_preparations_read_alike() {
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        let (summary, _) = both_ways(
            "\\startpipeline\nselect 1;\nselect rows;\n\\endpipeline\nselect 2;\n",
            mode,
            |s| s.rows("rows", vec!["a"], vec![vec![Some("1")]]),
            |_| {},
        );
        assert_eq!(summary.counters.successful, 6, "{mode:?}");
    }
    let (summary, _) = both_ways(
        "select 1;\nselect junk;\n",
        QueryMode::Prepared,
        |s| s.bad_syntax = Some(b"junk".to_vec()),
        |_| {},
    );
    assert!(summary.clients.iter().all(|c| c.0 == State::Aborted));
}
