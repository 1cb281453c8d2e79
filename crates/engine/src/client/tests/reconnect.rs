//! `--reconnect`: a lost connection fails the transaction, the client opens a new
//! connection (preparing its statements again) and goes on; it gives up after the
//! timeout without one.

use pgrush_stats::QueryMode;

use super::{config, run, server};
use crate::client::State;

#[test]
fn a_lost_connection_fails_the_transaction_and_the_client_goes_on() {
    for fatal in [true, false] {
        for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
            let label = format!("fatal {fatal} {mode:?}");
            let srv = server();
            srv.borrow_mut().end_session("select 2", fatal);
            // Every transaction loses its connection at its second command.
            let mut cfg = config("select 1;\nselect 2;\n", mode, 1, 3);
            cfg.errors.reconnect_timeout_us = Some(1_000_000);
            let out = run(&cfg, &srv);
            assert_eq!(out.client().state, State::Finished, "{label}");
            assert_eq!(out.counters().connection_failures, 3, "{label}");
            assert_eq!(out.counters().successful, 0, "{label}");
            assert!(out.visited(State::Reconnect), "{label}");
            assert!(!out.visited(State::WaitRollbackResult), "{label}");
            // One connection per transaction: the first, then one after each loss
            // but the last (the run ended).
            assert_eq!(srv.borrow().connects, 3, "{label}");
            if mode == QueryMode::Prepared {
                // Each new connection prepares its statements again.
                let parses = srv.borrow().received_starting("P P_1").len();
                assert_eq!(parses, 3, "{label}: {:?}", srv.borrow().received);
            }
            // One outage, still open at the end (no success after it).
            assert_eq!(out.stats.outages.len(), 1, "{label}");
            let outage = &out.stats.outages[0];
            assert_eq!((outage.failures, outage.end_us), (3, None), "{label}");
            let code = fatal.then(|| "57P01".to_string());
            assert_eq!(outage.sqlstate, code, "{label}");
        }
    }
}

#[test]
fn a_success_ends_the_outage() {
    let srv = server();
    srv.borrow_mut().end_session("select 2", true);
    let mut cfg = config(
        "\\set k :k + 1\n\\if :k = 1\nselect 2;\n\\endif\nselect 1;\n",
        QueryMode::Simple,
        1,
        3,
    );
    cfg.variables
        .put_value("startup", "k", pgrush_script::Value::Int(0))
        .expect("k");
    cfg.errors.reconnect_timeout_us = Some(1_000_000);
    let out = run(&cfg, &srv);
    assert_eq!(out.client().state, State::Finished);
    assert_eq!(out.counters().connection_failures, 1);
    assert_eq!(out.counters().successful, 2);
    let outage = &out.stats.outages[0];
    let end = outage.end_us.expect("closed by the first success");
    assert!(end >= outage.start_us);
}

#[test]
fn no_connection_within_the_timeout_aborts() {
    let srv = server();
    srv.borrow_mut().end_session("select 2", true);
    srv.borrow_mut().refuse_connects_after = Some(1);
    let mut cfg = config("select 2;\n", QueryMode::Simple, 1, 3);
    cfg.errors.reconnect_timeout_us = Some(50_000);
    let out = run(&cfg, &srv);
    assert_eq!(out.client().state, State::Aborted);
    assert_eq!(out.counters().connection_failures, 1);
    // Attempts after 0, 10, 30 ms (the backoff doubles), then the timeout.
    assert_eq!(srv.borrow().connects, 1);
    assert_eq!(out.stats.outages.len(), 1);
}
