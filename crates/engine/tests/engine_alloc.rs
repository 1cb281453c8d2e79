//! The lean client: once connections and buffers are warm, a transaction
//! allocates nothing. Measured with a counting global allocator as the
//! difference between a short and a long run of the same configuration.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use pgrush_engine::{EngineConfig, ErrorPolicy, Output, Pacing, QueryMode, RunLimit};
use pgrush_script::{Seeds, Value, Variables, load_script};
use pgrush_stats::StatsLayout;
use pgrush_wire::conninfo::{ConnectRequest, resolve};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: delegates to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn config(mode: QueryMode, tx: u32, log_prefix: Option<String>) -> EngineConfig {
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
    let script = load_script(
        "alloc.sql",
        "\\set x random(1, 1000)\nselect :x, :client_id;\nselect :x + 1 as y \\gset\n",
        1,
    )
    .expect("script");
    let seeds = Seeds::plan(7, 2, 1, false);
    let mut variables = Variables::new();
    let _ = variables.put_value("startup", "scale", Value::Int(1));
    EngineConfig {
        conn: params,
        scripts: vec![script],
        clients: 2,
        threads: 1,
        limit: RunLimit::Transactions(tx),
        query_mode: mode,
        connect_per_tx: false,
        pacing: Pacing::default(),
        errors: ErrorPolicy::default(),
        output: Output {
            report_per_command: true,
            log: log_prefix.map(|prefix| pgrush_engine::LogConfig {
                prefix,
                pid: std::process::id(),
                sampling_rate: 0.0,
                aggregate_interval: 0,
            }),
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

fn allocations(mode: QueryMode, tx: u32, log_prefix: Option<String>) -> u64 {
    let cfg = config(mode, tx, log_prefix);
    let layout = StatsLayout {
        commands_per_script: vec![3],
        latency_limit_us: None,
        throttled: false,
        per_command: true,
        command_histograms: true,
        time_series: true,
    };
    let before = ALLOCS.load(Ordering::Relaxed);
    let out = pgrush_engine::run(&cfg, &layout).expect("run");
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(out.stats.total.counters.successful, 2 * u64::from(tx));
    after - before
}

#[test]
fn transactions_do_not_allocate_once_warm() {
    // Start the shared cluster before measuring.
    let _ = pgrush_testkit::shared();
    let dir = std::env::temp_dir().join(format!("pgrush-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("log dir");
    let prefix = dir.join("log").to_string_lossy().into_owned();
    for (mode, log) in [
        (QueryMode::Simple, None),
        (QueryMode::Extended, None),
        (QueryMode::Prepared, None),
        (QueryMode::Prepared, Some(prefix)),
    ] {
        let short = allocations(mode, 20, log.clone());
        let long = allocations(mode, 520, log.clone());
        // 1000 more transactions; allow a little slack for a new time-series
        // interval or a buffer growing once.
        assert!(
            long.saturating_sub(short) < 50,
            "{mode:?} (log {log:?}): {short} allocations for 40 tx, {long} for 1040 tx"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
