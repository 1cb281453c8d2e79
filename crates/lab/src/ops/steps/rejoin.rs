//! After a switchover: the old primary rejoins as a standby of the promoted one
//! (`standby.signal` and a `primary_conninfo` to it; `pg_rewind` first when it does
//! not stream as it is), timed until the new primary sees it streaming. Then the
//! roles go back (the promoted standby stopped, the old primary promoted again), so
//! that the next steps run where they ran before.

use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, ShutdownMode};

use crate::ops::error::OpsError;
use crate::ops::program::{run_timed, wait_until};
use crate::ops::server::Server;

/// How long the old primary may take to stream from the new one.
const STREAM_LIMIT: Duration = Duration::from_secs(10);

/// How the old primary rejoined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rejoin {
    /// Seconds from its start as a standby (its rewind included) to streaming.
    pub seconds: f64,
    /// Whether it needed `pg_rewind`.
    pub rewound: bool,
}

/// Rejoins the stopped `old` as a standby of `new`, times it, then promotes `old`
/// again (with `new` stopped).
pub(crate) fn rejoin_and_restore(
    server: &Server,
    old: &Cluster,
    new: &Cluster,
) -> Result<Rejoin, OpsError> {
    let source = conninfo_to(new, old)?;
    // The promoted standby got its own cluster's `pg_hba.conf`: allow the old
    // primary's replication connection, as the primary's does.
    new.set_hba(["local replication all trust"])?;
    new.reload()?;
    let start = Instant::now();
    follow(old, &source)?;
    let mut rewound = false;
    if old.start_server().is_err() || wait_streaming(new).is_err() {
        let log = old.log_contents();
        if !log.contains("is not a child of this server's history") {
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            return Err(OpsError::Unexpected(format!(
                "the old primary did not stream from the new one within {} s; its log ends:\n{}",
                STREAM_LIMIT.as_secs(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )));
        }
        old.stop(ShutdownMode::Fast)?;
        let mut cmd = server.tools.command("pg_rewind");
        as_owner_of(&mut cmd, old.data_dir());
        cmd.arg("--target-pgdata")
            .arg(old.data_dir())
            .arg(format!("--source-server={source}"));
        run_timed(cmd, "pg_rewind")?;
        rewound = true;
        follow(old, &source)?;
        old.start_server()?;
        wait_streaming(new)?;
    }
    let rejoin = Rejoin {
        seconds: start.elapsed().as_secs_f64(),
        rewound,
    };
    new.stop(ShutdownMode::Fast)?;
    old.psql("SELECT pg_promote(true, 60)")?;
    old.write_setting("primary_conninfo", "")?;
    Ok(rejoin)
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

/// As root, makes `cmd` run as the owner of `dir` (`pg_rewind` refuses root, and
/// the files it writes must stay the server's).
fn as_owner_of(cmd: &mut std::process::Command, dir: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0
        && let Ok(meta) = std::fs::metadata(dir)
    {
        cmd.uid(meta.uid()).gid(meta.gid());
    }
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

/// Waits until `primary` has a streaming standby.
fn wait_streaming(primary: &Cluster) -> Result<(), OpsError> {
    wait_until(
        (STREAM_LIMIT, Duration::from_millis(50)),
        || {
            Ok(primary
                .psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")?
                .trim()
                == "1")
        },
        || {
            format!(
                "the old primary did not stream from the new one within {} s",
                STREAM_LIMIT.as_secs()
            )
        },
    )
}
