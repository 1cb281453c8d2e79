//! `--target`: each script's statements go to its target's connection; a client
//! opens one connection per target at its start (per transaction under `-C`), and
//! with `--reconnect` a lost one is opened again alone, its statements prepared again.

use pgrush_script::load_script;
use pgrush_stats::QueryMode;
use pgrush_wire::conninfo::{ConnectRequest, resolve};

use super::{config, run, server};
use crate::client::State;
use crate::config::{EngineConfig, Targets};

/// Two scripts, `select 1` on the run's server and `select 2` on target 1.
fn two_targets(mode: QueryMode, tx: u32) -> EngineConfig {
    let mut cfg = config("select 1;\n", mode, 1, tx);
    cfg.scripts
        .push(load_script("other.sql", "select 2;\n", 1).expect("script"));
    let other = resolve(&ConnectRequest {
        dbname: Some("fake".to_string()),
        host: Some("/elsewhere".to_string()),
        ..ConnectRequest::default()
    })
    .expect("conninfo");
    cfg.targets = Targets {
        servers: vec![other],
        of_script: vec![0, 1],
    };
    cfg
}

/// Every line received with `prefix` came on `target`'s connections; how many.
fn lines_on(srv: &super::FakeServer, prefix: &str, target: usize) -> usize {
    let lines: Vec<usize> = srv
        .received
        .iter()
        .zip(&srv.received_on)
        .filter(|(line, _)| line.starts_with(prefix))
        .map(|(_, &on)| on)
        .collect();
    assert!(lines.iter().all(|&on| on == target), "{prefix}: {lines:?}");
    lines.len()
}

#[test]
fn each_script_runs_on_its_targets_connection() {
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let srv = server();
        let out = run(&two_targets(mode, 40), &srv);
        assert_eq!(out.client().state, State::Finished, "{mode:?}");
        assert_eq!(out.counters().successful, 40, "{mode:?}");
        let s = srv.borrow();
        assert_eq!(s.connect_targets, [0, 1], "{mode:?}");
        let (on0, on1) = match mode {
            QueryMode::Simple => (lines_on(&s, "Q select 1", 0), lines_on(&s, "Q select 2", 1)),
            QueryMode::Extended => (
                lines_on(&s, "P  select 1", 0),
                lines_on(&s, "P  select 2", 1),
            ),
            QueryMode::Prepared => (lines_on(&s, "B P_0", 0), lines_on(&s, "B P_1", 1)),
        };
        assert_eq!(on0 + on1, 40, "{mode:?}");
        assert!(on0 > 0 && on1 > 0, "{mode:?}: {on0} {on1}");
        if mode == QueryMode::Prepared {
            // Each statement is prepared once, on its own connection.
            assert_eq!(lines_on(&s, "P P_0", 0), 1);
            assert_eq!(lines_on(&s, "P P_1", 1), 1);
        }
        // Both connections closed at the end, none left registered.
        assert_eq!(s.closes, 2, "{mode:?}");
        assert_eq!(out.registered, 0, "{mode:?}");
    }
}

#[test]
fn per_transaction_connections_open_the_transactions_target() {
    let srv = server();
    let mut cfg = two_targets(QueryMode::Simple, 30);
    cfg.connect_per_tx = true;
    let out = run(&cfg, &srv);
    assert_eq!(out.counters().successful, 30);
    let s = srv.borrow();
    assert_eq!(s.connects, 30);
    let on1 = s.connect_targets.iter().filter(|&&t| t == 1).count();
    assert_eq!(on1, lines_on(&s, "Q select 2", 1));
    assert_eq!(30 - on1, lines_on(&s, "Q select 1", 0));
}

#[test]
fn a_lost_target_connection_reconnects_alone_and_prepares_again() {
    let srv = server();
    srv.borrow_mut().end_session("select 2", true);
    let mut cfg = two_targets(QueryMode::Prepared, 30);
    cfg.errors.reconnect_timeout_us = Some(1_000_000);
    let out = run(&cfg, &srv);
    assert_eq!(out.client().state, State::Finished);
    let s = srv.borrow();
    let twos = lines_on(&s, "B P_1", 1) as u64;
    assert!(twos > 1, "{twos}");
    assert_eq!(out.counters().connection_failures, twos);
    assert_eq!(out.counters().successful, 30 - twos);
    // The run's connection was opened once; target 1's after each loss of it (but
    // when the run ended first), each preparing P_1 again and never P_0.
    assert_eq!(s.connect_targets.iter().filter(|&&t| t == 0).count(), 1);
    assert_eq!(lines_on(&s, "P P_0", 0), 1);
    let reopened = s.connect_targets.iter().filter(|&&t| t == 1).count();
    assert_eq!(lines_on(&s, "P P_1", 1), reopened);
}
