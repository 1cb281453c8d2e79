//! The identity of a sharded benchmark: a SHA-256 digest of what every shard must
//! agree on (scripts, workload options, server, shard count). Its first bits key the
//! start barrier; with the agreed start instant it gives the `benchmark_id`. [`workload_key`]
//! collects the facts of a run.

use pgrush_wire::Connection;
use sha2::{Digest, Sha256};

use pgrush_stats::RunLimit;

use crate::options::SeedChoice;
use crate::plan::RunPlan;

/// Collects the workload's facts, each one labelled and length-prefixed so that no
/// two different lists digest alike.
#[derive(Clone, Default)]
pub struct WorkloadDigest {
    hasher: Sha256,
}

impl WorkloadDigest {
    /// An empty digest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one fact.
    pub fn add(&mut self, label: &str, value: &[u8]) -> &mut Self {
        for part in [label.as_bytes(), value] {
            self.hasher.update((part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
        self
    }

    /// The finished workload key (32 bytes).
    pub fn finish(&self) -> WorkloadKey {
        WorkloadKey(self.hasher.clone().finalize().into())
    }
}

/// The digest of a workload (without the start instant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadKey([u8; 32]);

impl WorkloadKey {
    /// The barrier's advisory lock key: 31 bits of the digest (positive, so that it
    /// reads the same as an `oid` in `pg_locks`).
    pub fn barrier_key(&self) -> i32 {
        let b = self.0;
        (u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff) as i32
    }

    /// The `benchmark_id`: hex SHA-256 of the key and the agreed start (server Unix µs).
    pub fn benchmark_id(&self, start_server_us: i64) -> String {
        let mut h = Sha256::new();
        h.update(self.0);
        h.update(start_server_us.to_le_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The digest of everything every shard must agree on: scripts and weights, the
/// workload options, the shard count, the server's identity and the database.
pub fn workload_key(
    plan: &RunPlan,
    scripts: &[(Vec<u8>, u32, Vec<u8>)],
    con: &mut Connection,
) -> WorkloadKey {
    let mut d = WorkloadDigest::new();
    for (name, weight, text) in scripts {
        d.add("script", name)
            .add("weight", &weight.to_le_bytes())
            .add("text", text);
    }
    let opts = &plan.options;
    let limit = match plan.limit {
        RunLimit::Duration(t) => format!("T{t}"),
        RunLimit::Transactions(n) => format!("t{n}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_facts_equal_keys() {
        let key = |facts: &[(&str, &[u8])]| {
            let mut d = WorkloadDigest::new();
            for (l, v) in facts {
                d.add(l, v);
            }
            d.finish()
        };
        let a = key(&[("clients", b"2"), ("script", b"select 1")]);
        assert_eq!(a, key(&[("clients", b"2"), ("script", b"select 1")]));
        assert_ne!(a, key(&[("clients", b"3"), ("script", b"select 1")]));
        // Length prefixes: moving a byte between facts changes the key.
        assert_ne!(key(&[("a", b"bc")]), key(&[("ab", b"c")]));
        assert!(a.barrier_key() >= 0);
        let id = a.benchmark_id(5);
        assert_eq!(id.len(), 64);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_ne!(id, a.benchmark_id(6));
    }
}
