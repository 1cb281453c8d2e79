//! A cached, freshly initialized data directory, copied for each new cluster.
//!
//! `initdb` costs seconds on a small machine; copying its result costs a fraction of
//! that. The template is made once per PostgreSQL build and server account, in the temp
//! dir, and published with an atomic rename so concurrent test processes share it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::account::Account;
use crate::error::ClusterError;
use crate::install::{FileLock, PgInstall, build_key, fnv};
use crate::process::clear_pg_env;
use crate::process::run_checked;

/// `initdb`'s options (part of the template's cache key). 1 MB WAL segments keep the
/// template, and so each copy of it, small.
const INITDB_ARGS: &[&str] = &[
    "-A",
    "trust",
    "-U",
    "postgres",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
    "--wal-segsize=1",
];

/// Fills `dest` (which must not exist) with a fresh data directory for `server`.
pub(crate) fn instantiate(
    server: &PgInstall,
    account: Option<Account>,
    dest: &Path,
) -> Result<(), ClusterError> {
    let template = template_dir(server, account)?;
    run_checked(Command::new("cp").arg("-a").arg(&template).arg(dest), "cp")?;
    Ok(())
}

/// The template for `server`, made now if missing.
fn template_dir(server: &PgInstall, account: Option<Account>) -> Result<PathBuf, ClusterError> {
    let uid = account.map_or(u32::MAX, |a| a.uid);
    let key = fnv(&[
        &build_key(&server.program("postgres"))?.to_le_bytes(),
        &uid.to_le_bytes(),
        INITDB_ARGS.join(" ").as_bytes(),
    ]);
    let tmp = crate::install::work_dir();
    let dest = tmp.join(format!("pgrush-initdb-{key:016x}"));
    if dest.join("PG_VERSION").exists() {
        return Ok(dest);
    }
    let _lock = FileLock::acquire(&tmp.join(format!("pgrush-initdb-{key:016x}.lock")))?;
    if dest.join("PG_VERSION").exists() {
        return Ok(dest);
    }
    let staging = tempfile::Builder::new()
        .prefix("pgrush-initdb-staging-")
        .tempdir_in(&tmp)
        .map_err(|e| ClusterError::io("create a temp dir", e))?;
    if let Some(acct) = account {
        acct.chown(staging.path())?;
    }
    let data = staging.path().join("data");
    let mut cmd = server.command("initdb");
    cmd.arg("-D")
        .arg(&data)
        .args(INITDB_ARGS)
        .current_dir(staging.path());
    clear_pg_env(&mut cmd);
    if let Some(acct) = account {
        acct.apply(&mut cmd);
    }
    run_checked(&mut cmd, "initdb")?;
    if std::fs::rename(&data, &dest).is_err() && !dest.join("PG_VERSION").exists() {
        return Err(ClusterError::Invalid(format!(
            "cannot publish the initdb template {}",
            dest.display()
        )));
    }
    Ok(dest)
}
