//! A client that read its result goes on into its next transaction in the same
//! turn (when nothing in the thread depends on the order clients start in), at
//! most once per turn.

use pgrush_script::{Value, load_script};
use pgrush_stats::QueryMode;

use super::{config, fake_ctx, server};
use crate::client::{Client, State, Turn, Wait};
use crate::config::EngineConfig;
use crate::plan::Plan;

/// Gives client 0 of `cfg` turns (the first with nothing to read, the others
/// readable) and returns, per turn, what it waited for after it and the
/// transactions ended so far.
fn turns(cfg: &EngineConfig, n: usize) -> Vec<(Turn, u64)> {
    let srv = server();
    let plan = Plan::new(cfg);
    let mut ctx = fake_ctx(cfg, &plan, &srv);
    let mut client: Client<crate::client::fake::FakeConn> =
        Client::new(0, cfg.variables.clone(), cfg.client_rngs[0], 1);
    assert!(client.connect_initially(&mut ctx).expect("register"));
    (0..n)
        .map(|k| {
            let turn = client.take_turn(&mut ctx, k > 0);
            (turn, ctx.stats.total.counters.total())
        })
        .collect()
}

#[test]
fn a_result_ends_the_transaction_and_the_next_one_starts_in_the_same_turn() {
    let srv = server();
    let cfg = config("select 1;\n", QueryMode::Simple, 1, 3);
    let plan = Plan::new(&cfg);
    assert!(plan.chain);
    let mut ctx = fake_ctx(&cfg, &plan, &srv);
    let mut client = Client::new(0, cfg.variables.clone(), cfg.client_rngs[0], 1);
    assert!(client.connect_initially(&mut ctx).expect("register"));
    assert_eq!(client.take_turn(&mut ctx, false), Turn::Ran(Wait::Socket));
    for sent in 2..=3 {
        assert_eq!(client.take_turn(&mut ctx, true), Turn::Ran(Wait::Socket));
        assert_eq!(client.state(), State::WaitResult);
        assert_eq!(srv.borrow().received_starting("Q").len(), sent);
        assert_eq!(ctx.stats.total.counters.successful, sent as u64 - 1);
    }
    assert_eq!(client.take_turn(&mut ctx, true), Turn::Ran(Wait::Done));
    assert_eq!(ctx.stats.total.counters.successful, 3);
}

#[test]
fn a_turn_chains_once_so_a_transaction_without_sql_yields() {
    // Odd transactions send a query, even ones only set a variable.
    let script = "\\set n :n + 1\n\\if :n % 2 = 1\nselect 1;\n\\endif\n";
    let mut cfg = config(script, QueryMode::Prepared, 1, 6);
    cfg.variables
        .put_value("startup", "n", Value::Int(0))
        .expect("n");
    let got = turns(&cfg, 6);
    let expected = [
        (Turn::Ran(Wait::Socket), 0),
        // Transaction 1 ends, 2 runs without waiting: the turn yields after it.
        (Turn::Ran(Wait::Now), 2),
        // Nothing was read: transaction 3 starts, no chaining.
        (Turn::Ran(Wait::Socket), 2),
        (Turn::Ran(Wait::Now), 4),
        (Turn::Ran(Wait::Socket), 4),
        (Turn::Ran(Wait::Done), 6),
    ];
    assert_eq!(got, expected);
}

#[test]
fn no_chaining_when_starting_a_transaction_draws_from_the_thread() {
    let base = config("select 1;\n", QueryMode::Simple, 1, 2);
    let mut two_scripts = base.clone();
    two_scripts
        .scripts
        .push(load_script("other.sql", "select 2;\n", 1).expect("script"));
    let mut throttled = base.clone();
    throttled.pacing.rate = 1e9;
    let mut reconnecting = base.clone();
    reconnecting.connect_per_tx = true;
    for (what, cfg) in [
        ("two scripts", &two_scripts),
        ("-R", &throttled),
        ("-C", &reconnecting),
    ] {
        assert!(!Plan::new(cfg).chain, "{what}");
    }
    // Two scripts: the result ends the transaction, and the client yields.
    let got = turns(&two_scripts, 3);
    assert_eq!(got[1], (Turn::Ran(Wait::Now), 1), "{got:?}");
}
