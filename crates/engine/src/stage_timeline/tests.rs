use super::*;
use pgrush_stats::stages::{StageSpec, resolve};

/// Stages from their specs, for `clients` clients and `-R rate`.
fn stages(specs: &[&str], clients: u32, rate: f64) -> Vec<Stage> {
    let specs: Vec<StageSpec> = specs.iter().map(|s| StageSpec::parse(s).unwrap()).collect();
    resolve(&specs, clients, rate).unwrap()
}

const S: Micros = 1_000_000;

/// The cumulative intensity (arrivals of one thread) from `a` to `b`, by summing
/// the rate in small steps (the midpoint rule is exact for a linear rate).
fn mass(tl: &Timeline, a: Micros, b: Micros) -> f64 {
    let step = 1_000;
    let mut sum = 0.0;
    let mut t = a;
    while t < b {
        let dt = step.min(b - t);
        let mid = t as f64 + dt as f64 / 2.0;
        let seg = &tl.segments[tl.segment_index(t + dt / 2)];
        sum += seg.rate_at(mid).0 * dt as f64;
        t += dt;
    }
    sum
}

#[test]
fn a_constant_rate_is_the_draw_over_the_rate() {
    // 100 tps over 2 threads with a client each: 50 arrivals a second each, one per 20 ms.
    let tl = Timeline::new(&stages(&["10s,rate=100"], 2, 0.0), 0, 2, 1);
    assert_eq!(tl.next_arrival(S, 1.0), Arrival::At(S + 20_000));
    assert_eq!(tl.next_arrival(S, 2.5), Arrival::At(S + 50_000));
}

#[test]
fn the_inverse_of_a_ramp_gives_back_the_draw() {
    // 0 -> 200 tps over 4 s, then 400 tps: a quadratic, then a linear, piece.
    let tl = Timeline::new(
        &stages(&["4s,rate=0", "4s,rate=200,ramp", "4s,rate=400"], 1, 0.0),
        0,
        1,
        0,
    );
    for (from, draw) in [
        (4 * S, 1.0),
        (4 * S, 7.3),
        (5 * S + 1234, 0.2),
        (7 * S + 900_000, 30.0),
    ] {
        let Arrival::At(at) = tl.next_arrival(from, draw) else {
            panic!("no arrival");
        };
        assert!(at > from);
        let got = mass(&tl, from, at);
        // One µs of rounding at the arrival: at most 400e-6 arrivals.
        assert!(
            (got - draw).abs() < 1e-3,
            "from {from} draw {draw}: {got} at {at}"
        );
    }
    // The whole ramp holds 400 arrivals (half of 200 tps for 4 s).
    assert!((mass(&tl, 4 * S, 8 * S) - 400.0).abs() < 1e-6);
    assert_eq!(tl.next_arrival(4 * S, 400.0), Arrival::At(8 * S));
    // A ramp down to 0 ends at its end at the latest.
    let down = Timeline::new(
        &stages(&["2s,rate=100", "2s,rate=0,ramp", "2s,rate=50"], 1, 0.0),
        0,
        1,
        0,
    );
    assert_eq!(down.next_arrival(2 * S, 100.0), Arrival::At(4 * S));
}

#[test]
fn the_schedule_stops_at_a_closed_loop_stage() {
    let tl = Timeline::new(
        &stages(&["2s,rate=10", "2s,rate=0", "2s,rate=10"], 1, 0.0),
        0,
        1,
        0,
    );
    // 10 tps: 5 arrivals from 1.5 s would end at 2 s, the closed stage's start.
    assert_eq!(tl.next_arrival(S, 30.0), Arrival::ClosedFrom(2 * S));
    assert!(tl.closed_at(3 * S) && !tl.closed_at(S));
    assert_eq!(tl.open_since(5 * S), 4 * S);
    assert_eq!(tl.open_since(S), Micros::MIN);
    assert_eq!(tl.next_arrival(4 * S, 1.0), Arrival::At(4 * S + 100_000));
}

#[test]
fn instants_fall_in_their_stage() {
    let tl = Timeline::new(&stages(&["1s", "2s", "3s"], 1, 0.0), 10 * S, 1, 0);
    assert_eq!(tl.stage_at(5 * S), None);
    assert_eq!(tl.stage_at(10 * S), Some(0));
    assert_eq!(tl.stage_at(11 * S - 1), Some(0));
    assert_eq!(tl.stage_at(11 * S), Some(1));
    assert_eq!(tl.stage_at(13 * S), Some(2));
    assert_eq!(tl.stage_at(99 * S), Some(2));
}

#[test]
fn clients_activate_in_rank_order_along_a_ramp() {
    // 2 clients, then a ramp to 6 over 4 s (one more each second), then 1.
    let tl = Timeline::new(
        &stages(
            &["2s,clients=2", "4s,clients=6,ramp", "2s,clients=1"],
            8,
            0.0,
        ),
        0,
        1,
        0,
    );
    assert!(tl.active(1, S) && !tl.active(2, S));
    // The warm-up (before the origin) runs at the first stage's clients.
    assert!(tl.active(1, -S) && !tl.active(2, -S));
    assert_eq!(tl.next_active(2, S), Some(3 * S));
    assert_eq!(tl.next_active(5, 0), Some(6 * S));
    assert!(tl.active(4, 5 * S) && !tl.active(5, 5 * S));
    assert!(!tl.active(1, 7 * S) && tl.active(0, 7 * S));
    assert_eq!(tl.next_active(1, 7 * S), None);
    assert_eq!(tl.next_active(7, 0), None);
    assert_eq!(tl.next_active(0, 7 * S), Some(7 * S));
}

#[test]
fn a_thread_without_active_clients_has_no_share_of_the_rate() {
    // 2 threads, one client active for 2 s, then a ramp to 4 over 3 s (the second
    // client, thread 1's first, is active from 1/3 of the ramp's way).
    let st = stages(&["2s,clients=1,rate=100", "3s,clients=4,ramp"], 4, 0.0);
    let first = Timeline::new(&st, 0, 2, 0);
    let second = Timeline::new(&st, 0, 2, 1);
    // Thread 0 serves the whole rate while alone: 100 a second.
    assert_eq!(first.next_arrival(0, 1.0), Arrival::At(10_000));
    // Thread 1 has nothing before its client is active (3 s), then half the rate.
    assert_eq!(second.next_arrival(0, 1.0), Arrival::At(3 * S + 20_000));
    assert_eq!(first.next_arrival(4 * S, 1.0), Arrival::At(4 * S + 20_000));
    // The cut pieces keep their stage.
    assert_eq!(second.stage_at(3 * S), Some(1));
    assert_eq!(second.stage_at(5 * S - 1), Some(1));
    assert_eq!(second.stage_at(5 * S), Some(1));
    assert_eq!(first.stage_at(2 * S - 1), Some(0));
    assert!(second.active(1, 3 * S) && !second.active(1, 3 * S - 1));
}

#[test]
fn a_client_is_active_until_its_segment_ends_or_a_falling_ramp_drops_it() {
    // 4 clients for 2 s, a ramp down to 0 over 4 s (one fewer each second), 2 for 2 s.
    let tl = Timeline::new(
        &stages(
            &["2s,clients=4", "4s,clients=0,ramp", "2s,clients=2"],
            4,
            0.0,
        ),
        0,
        1,
        0,
    );
    // The warm-up segment ends at the origin, the first stage at 2 s.
    assert_eq!(tl.active_until(3, -S), 0);
    assert_eq!(tl.active_until(0, S), 2 * S);
    // In the ramp the count is rounded down: rank 3 (the fourth client) drops as it
    // starts, rank 2 at 3 s, rank 0 at 5 s.
    for rank in 0..3u32 {
        let until = tl.active_until(rank, 2 * S);
        assert!(tl.active(rank, until), "{rank}: {until}");
        assert!(!tl.active(rank, until + 1), "{rank}: {until}");
    }
    assert_eq!(tl.active_until(3, 2 * S), 2 * S);
    assert_eq!(tl.active_until(2, 2 * S), 3 * S);
    assert_eq!(tl.active_until(0, 2 * S), 5 * S);
    // The last stage, then the constant segment after it.
    assert_eq!(tl.active_until(1, 7 * S), 8 * S);
    assert_eq!(tl.active_until(1, 9 * S), Micros::MAX);
}
