//! What `pgrush ops` runs: the steps, the scales, the dump format and the workload.

use std::fmt;
use std::path::PathBuf;

use pgrush_init::InitConfig;
use pgrush_wire::conninfo::ConnectRequest;
use serde::{Deserialize, Serialize};

use crate::ops::error::OpsError;

/// One timed operation. The order of the variants is the order they run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// pgrush's own `-i`.
    Load,
    /// `pg_dump` of the loaded database.
    Dump,
    /// `pg_restore` of the dump into a fresh database, then a comparison.
    Restore,
    /// `REINDEX TABLE pgbench_accounts`, plain and `CONCURRENTLY`.
    Reindex,
    /// `pg_basebackup` to a directory.
    Basebackup,
    /// A workload, `SIGKILL` of the postmaster, and the restart's crash recovery.
    CrashRecovery,
    /// Point-in-time recovery of a base backup from a WAL archive.
    Pitr,
    /// A streaming standby promoted after a clean shutdown of the primary, under a
    /// workload of reconnecting clients.
    Switchover,
    /// A streaming standby promoted after `SIGKILL` of the primary's postmaster, under
    /// a workload of reconnecting clients.
    Failover,
}

impl StepKind {
    /// Every step, in running order.
    pub const ALL: [StepKind; 9] = [
        StepKind::Load,
        StepKind::Dump,
        StepKind::Restore,
        StepKind::Reindex,
        StepKind::Basebackup,
        StepKind::CrashRecovery,
        StepKind::Pitr,
        StepKind::Switchover,
        StepKind::Failover,
    ];

    /// The steps run when `--steps` is not given: all but the high-availability
    /// rehearsals (`switchover`, `failover`, the last two), which build a standby.
    pub const DEFAULT: &'static [StepKind] = StepKind::ALL.split_at(7).0;

    /// The name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Load => "load",
            StepKind::Dump => "dump",
            StepKind::Restore => "restore",
            StepKind::Reindex => "reindex",
            StepKind::Basebackup => "basebackup",
            StepKind::CrashRecovery => "crash-recovery",
            StepKind::Pitr => "pitr",
            StepKind::Switchover => "switchover",
            StepKind::Failover => "failover",
        }
    }

    /// Whether the step needs the server's files and process (a cluster pgrush controls).
    pub fn needs_control(self) -> bool {
        matches!(
            self,
            StepKind::CrashRecovery | StepKind::Pitr | StepKind::Switchover | StepKind::Failover
        )
    }

    /// Parses a comma-separated list (`load,dump,...`) into a sorted, de-duplicated set.
    /// `restore` brings in `dump` (it restores that dump); `load` always runs.
    pub fn parse_list(text: &str) -> Result<Vec<StepKind>, OpsError> {
        let mut steps = vec![StepKind::Load];
        for word in text.split(',').map(str::trim) {
            let step = StepKind::ALL
                .into_iter()
                .find(|s| s.name() == word)
                .ok_or_else(|| {
                    OpsError::Usage(format!(
                        "unknown step \"{word}\" (steps: {})",
                        StepKind::ALL.map(StepKind::name).join(",")
                    ))
                })?;
            steps.push(step);
            if step == StepKind::Restore {
                steps.push(StepKind::Dump);
            }
        }
        steps.sort();
        steps.dedup();
        Ok(steps)
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `pg_dump`'s output format (`--dump-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DumpFormat {
    /// `-Fc`: one compressed archive (the default).
    Custom,
    /// `-Fd`: a directory, written with `-j N`.
    Directory,
    /// `-Fp`: an SQL script, restored with `psql`.
    Plain,
    /// `-Ft`: a tar archive.
    Tar,
}

impl DumpFormat {
    /// Parses `custom`, `directory`, `plain` or `tar`.
    pub fn parse(text: &str) -> Result<DumpFormat, OpsError> {
        match text {
            "custom" | "c" => Ok(DumpFormat::Custom),
            "directory" | "d" => Ok(DumpFormat::Directory),
            "plain" | "p" => Ok(DumpFormat::Plain),
            "tar" | "t" => Ok(DumpFormat::Tar),
            _ => Err(OpsError::Usage(format!(
                "invalid dump format \"{text}\" (custom, directory, plain or tar)"
            ))),
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DumpFormat::Custom => "custom",
            DumpFormat::Directory => "directory",
            DumpFormat::Plain => "plain",
            DumpFormat::Tar => "tar",
        }
    }

    /// `pg_dump`'s `-F` letter.
    pub fn letter(self) -> &'static str {
        &self.name()[..1]
    }
}

/// Which server the steps run against.
#[derive(Debug, Clone)]
pub enum Target {
    /// A throwaway cluster from the local binaries (or `bin_dir`'s), removed at the end.
    Throwaway {
        /// PostgreSQL binaries to use instead of the discovered ones.
        bin_dir: Option<PathBuf>,
    },
    /// A server named by connection options: the steps that need the server's files
    /// and process are skipped.
    Server(ConnectRequest),
    /// An existing local cluster (`--pgdata DIR`): every step runs, in a scratch
    /// database; the cluster is handed back as found.
    DataDir(PathBuf),
}

/// Everything `pgrush ops` was asked to do.
#[derive(Debug, Clone)]
pub struct OpsConfig {
    /// Scales, run in the order given.
    pub scales: Vec<u32>,
    /// Steps (sorted; `load` always included).
    pub steps: Vec<StepKind>,
    /// `-j N`: parallel loading, `pg_dump -Fd -j`, `pg_restore -j`.
    pub jobs: u32,
    /// The dump format.
    pub dump_format: DumpFormat,
    /// How many times each scale's steps run.
    pub repeat: u32,
    /// How long each workload of crash-recovery and pitr runs, in seconds.
    pub workload_seconds: u32,
    /// Clients of those workloads.
    pub workload_clients: u32,
    /// The initialization settings (`scale` is replaced per scale, `jobs` by `jobs`).
    pub init: InitConfig,
    /// Where the server is.
    pub target: Target,
    /// The pgrush executable the workloads run (`-b tpcb-like -T N`).
    pub pgrush_exe: PathBuf,
    /// `--sync-standby`: the standby of switchover and failover is synchronous
    /// (`synchronous_standby_names = '*'`), so no commit the clients saw may be lost.
    pub sync_standby: bool,
}
