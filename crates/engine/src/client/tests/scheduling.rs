//! The worker's scheduler with the fake server: client order, timers, the sweep
//! at the `-T` end, and a cost in proportion to the ready clients.

use pgrush_stats::QueryMode;

use super::{Delivery, Drive, config, run_driven, server};
use crate::client::State;

#[test]
fn ready_clients_take_their_turns_in_client_order() {
    let srv = server();
    let cfg = config("select :client_id;\n", QueryMode::Simple, 4, 3);
    let drive = Drive {
        delivery: Delivery::AllReversed,
        ..Drive::default()
    };
    let out = run_driven(&cfg, &srv, drive, |_| {});
    assert_eq!(out.counters().successful, 12);
    let round = ["Q select 0;", "Q select 1;", "Q select 2;", "Q select 3;"];
    assert_eq!(srv.borrow().received_starting("Q"), round.repeat(3));
}

#[test]
fn sleeping_clients_wake_in_deadline_order() {
    let srv = server();
    // Gaps of 250 ms: wide enough that a busy machine does not wake two at once.
    let script = "\\set d 250 * (3 - :client_id)\n\\sleep :d ms\nselect :client_id;\n";
    let out = run_driven(
        &config(script, QueryMode::Simple, 3, 1),
        &srv,
        Drive::default(),
        |_| {},
    );
    assert_eq!(out.counters().successful, 3);
    assert!(out.visited(State::Sleep));
    assert_eq!(
        srv.borrow().received_starting("Q"),
        ["Q select 2;", "Q select 1;", "Q select 0;"]
    );
}

#[test]
fn a_zero_sleep_does_not_wait() {
    let srv = server();
    let out = run_driven(
        &config("\\sleep 0\nselect 1;\n", QueryMode::Extended, 3, 2),
        &srv,
        Drive::default(),
        |_| {},
    );
    assert_eq!(out.counters().successful, 6);
}

#[test]
fn the_end_of_the_run_sweeps_every_throttled_client_once() {
    let srv = server();
    let mut cfg = config("select 1;\n", QueryMode::Simple, 5, 10);
    // One transaction in about 1000 s: every client waits for its slot.
    cfg.pacing.rate = 0.001;
    let drive = Drive {
        end_at_pass: Some(1),
        ..Drive::default()
    };
    let out = run_driven(&cfg, &srv, drive, |_| {});
    assert_eq!(out.counters().successful, 0);
    assert!(out.clients.iter().all(|c| c.state() == State::Finished));
    assert!(out.visited(State::Throttle));
    // The first pass (new clients) and the sweep: one check per client each.
    assert_eq!(out.checks, 10);
}

#[test]
fn reconnecting_clients_keep_their_turns() {
    let srv = server();
    let mut cfg = config("select 1;\n", QueryMode::Prepared, 3, 4);
    cfg.connect_per_tx = true;
    let drive = Drive {
        delivery: Delivery::OneAtATime,
        ..Drive::default()
    };
    let out = run_driven(&cfg, &srv, drive, |_| {});
    assert_eq!(out.counters().successful, 12);
    assert_eq!(srv.borrow().connects, 12);
    assert_eq!(out.registered, 0);
}

/// Readiness checks for `clients` clients running 3 transactions each, the
/// replies arriving one at a time.
fn checks_with_trickling_replies(clients: u32) -> u64 {
    let srv = server();
    let drive = Drive {
        delivery: Delivery::OneAtATime,
        ..Drive::default()
    };
    let cfg = config("select 1;\n", QueryMode::Simple, clients, 3);
    let out = run_driven(&cfg, &srv, drive, |_| {});
    assert_eq!(out.counters().successful, u64::from(clients) * 3);
    out.checks
}

#[test]
fn a_wake_up_costs_in_proportion_to_the_ready_clients() {
    // A loop over every client at each wake-up would check 10 times more clients
    // per wake-up with 10 times more clients: 100 times the checks.
    let small = checks_with_trickling_replies(100);
    let large = checks_with_trickling_replies(1000);
    let ratio = large as f64 / small as f64;
    assert!((9.0..=11.0).contains(&ratio), "{small} vs {large} checks");
    // And a few per transaction.
    assert!(large <= 1000 * 3 * 3, "{large} checks");
}
