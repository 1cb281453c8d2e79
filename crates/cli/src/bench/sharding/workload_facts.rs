//! The workload digest of a sharded run: the facts every shard must agree on.

use pgrush_wire::Connection;

use crate::options::{Options, SeedChoice};
use crate::shard::workload::{WorkloadDigest, WorkloadKey};

/// The digest of everything every shard must agree on: scripts and weights, the
/// workload options, the shard count, the server's identity and the database.
pub fn workload_key(
    opts: &Options,
    scripts: &[(Vec<u8>, u32, Vec<u8>)],
    con: &mut Connection,
) -> WorkloadKey {
    let mut d = WorkloadDigest::new();
    for (name, weight, text) in scripts {
        d.add("script", name)
            .add("weight", &weight.to_le_bytes())
            .add("text", text);
    }
    let limit = match opts.duration {
        Some(t) => format!("T{t}"),
        None => format!("t{}", opts.transactions.unwrap_or(10)),
    };
    let seed = match (opts.random_seed_explicit, opts.random_seed) {
        (true, SeedChoice::Value(v)) => v.to_string(),
        _ => "time".to_string(),
    };
    d.add("clients", opts.clients.to_string().as_bytes())
        .add("jobs", opts.jobs.to_string().as_bytes())
        .add("limit", limit.as_bytes())
        .add("rate", opts.rate.to_string().as_bytes())
        .add(
            "latency_limit",
            opts.latency_limit_us.to_string().as_bytes(),
        )
        .add("protocol", format!("{:?}", opts.query_mode).as_bytes())
        .add("max_tries", opts.max_tries.to_string().as_bytes())
        .add("random_seed", seed.as_bytes())
        .add("connect", &[u8::from(opts.connect_per_transaction)]);
    for (name, value) in &opts.defines {
        d.add("define", name).add("value", value);
    }
    if let Some(shard) = opts.shard {
        d.add("shards", shard.count.to_string().as_bytes());
    }
    d.add("server", server_identity(con).as_bytes())
        .add("database", con.db().as_bytes());
    d.finish()
}

/// The server's `system_identifier`; where `pg_control_system()` is not allowed, its
/// start time (both are the same whichever address a shard connects to).
fn server_identity(con: &mut Connection) -> String {
    const QUERIES: [&str; 2] = [
        "select 'system ' || system_identifier from pg_catalog.pg_control_system()",
        "select 'started ' || pg_catalog.pg_postmaster_start_time()",
    ];
    QUERIES
        .iter()
        .find_map(|sql| {
            let results = con.simple_query(sql).ok()?;
            results.first()?.get(0, 0).map(str::to_string)
        })
        .unwrap_or_default()
}
