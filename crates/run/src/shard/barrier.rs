//! The start barrier, through the database under test only.
//!
//! Each shard takes the session advisory lock (workload key, shard index) on a
//! connection it keeps until its run ends (a second process with the same index is
//! refused). Shard 0 polls `pg_locks` until every index holds its lock, picks the
//! start instant on the server's clock and publishes it as its connection's
//! `application_name` (`pgrush-start KEY START_US`), which every session can read in
//! `pg_stat_activity`; the other shards poll for it. Both waits have a timeout.

use std::time::{Duration, Instant};

use pgrush_wire::Connection;

/// How often the shards look at the server while they wait.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Why the barrier did not give a start instant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierError {
    /// A query failed.
    #[error("start barrier: {0}")]
    Query(String),
    /// Another session holds this shard's lock.
    #[error(
        "shard {index} of this benchmark is already running (another session holds its barrier lock)"
    )]
    Duplicate {
        /// The shard index.
        index: u32,
    },
    /// Shard 0 waited in vain for these shards.
    #[error("shards never arrived: {} (waited {timeout_s} s)", list(.missing))]
    NeverArrived {
        /// The missing indexes.
        missing: Vec<u32>,
        /// The timeout.
        timeout_s: u32,
    },
    /// A non-zero shard never saw shard 0's start instant.
    #[error(
        "shard 0 never published the start (waited {timeout_s} s): is shard 0 running with the same options against the same database?"
    )]
    NoStart {
        /// The timeout.
        timeout_s: u32,
    },
}

fn list(indexes: &[u32]) -> String {
    indexes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `application_name` prefix shard 0 publishes under for barrier `key`.
fn start_prefix(key: i32) -> String {
    format!("pgrush-start {key} ")
}

fn query(con: &mut Connection, sql: &str) -> Result<Vec<Vec<String>>, BarrierError> {
    let results = con
        .simple_query(sql)
        .map_err(|e| BarrierError::Query(e.to_string().trim_end().to_string()))?;
    let Some(r) = results.last() else {
        return Ok(Vec::new());
    };
    Ok(r.rows()
        .iter()
        .map(|row| row.iter().map(|v| v.clone().unwrap_or_default()).collect())
        .collect())
}

/// Arrives: takes the lock (key, index) for the rest of the session.
pub fn arrive(con: &mut Connection, key: i32, index: u32) -> Result<(), BarrierError> {
    let rows = query(
        con,
        &format!("select pg_catalog.pg_try_advisory_lock({key}, {index})"),
    )?;
    match rows.first().and_then(|r| r.first()).map(String::as_str) {
        Some("t") => Ok(()),
        _ => Err(BarrierError::Duplicate { index }),
    }
}

/// The shard indexes whose lock is held now.
fn arrived(con: &mut Connection, key: i32) -> Result<Vec<u32>, BarrierError> {
    let sql = format!(
        "select objid from pg_catalog.pg_locks where locktype = 'advisory' and granted \
         and objsubid = 2 and classid = {key}::oid and database = \
         (select oid from pg_catalog.pg_database where datname = pg_catalog.current_database())"
    );
    Ok(query(con, &sql)?
        .iter()
        .filter_map(|r| r.first()?.parse().ok())
        .collect())
}

/// The indexes in `0..count` missing from `present`.
pub fn missing(present: &[u32], count: u32) -> Vec<u32> {
    (0..count).filter(|i| !present.contains(i)).collect()
}

/// Shard 0: waits until all `count` shards arrived, then publishes the start
/// instant (server clock now + `margin_us`) and returns it (server Unix µs).
pub fn lead(
    con: &mut Connection,
    key: i32,
    count: u32,
    timeout_s: u32,
    margin_us: i64,
) -> Result<i64, BarrierError> {
    let deadline = Instant::now() + Duration::from_secs(u64::from(timeout_s));
    loop {
        let absent = missing(&arrived(con, key)?, count);
        if absent.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            return Err(BarrierError::NeverArrived {
                missing: absent,
                timeout_s,
            });
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    let now = super::clock_offset::server_now_us(con).map_err(BarrierError::Query)?;
    let start = now + margin_us;
    query(
        con,
        &format!("set application_name = '{}{start}'", start_prefix(key)),
    )?;
    Ok(start)
}

/// Other shards: waits for shard 0's start instant (server Unix µs), ignoring
/// instants already past (a finished benchmark's).
pub fn follow(con: &mut Connection, key: i32, timeout_s: u32) -> Result<i64, BarrierError> {
    let deadline = Instant::now() + Duration::from_secs(u64::from(timeout_s));
    let prefix = start_prefix(key);
    let sql = format!(
        "select a.application_name, {} from pg_catalog.pg_stat_activity a \
         where a.application_name like '{prefix}%'",
        super::clock_offset::SERVER_NOW_SQL.trim_start_matches("select ")
    );
    loop {
        for row in query(con, &sql)? {
            let start = row[0]
                .strip_prefix(&prefix)
                .and_then(|s| s.parse::<i64>().ok());
            let now = row.get(1).and_then(|s| s.parse::<i64>().ok());
            if let (Some(start), Some(now)) = (start, now)
                && start > now
            {
                return Ok(start);
            }
        }
        if Instant::now() >= deadline {
            return Err(BarrierError::NoStart { timeout_s });
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_shards_are_named_in_order() {
        assert_eq!(missing(&[2, 0], 4), vec![1, 3]);
        assert_eq!(missing(&[0, 1, 2], 3), Vec::<u32>::new());
        let e = BarrierError::NeverArrived {
            missing: vec![1, 3],
            timeout_s: 3,
        };
        assert_eq!(e.to_string(), "shards never arrived: 1, 3 (waited 3 s)");
    }
}
