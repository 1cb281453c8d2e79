//! What `pgrush -i` is asked to do: steps, scale, table layout options, parallelism.

use crate::error::InitError;

/// The number of branches per scale unit.
pub const NBRANCHES: i64 = 1;
/// The number of tellers per scale unit.
pub const NTELLERS: i64 = 10;
/// The number of accounts per scale unit.
pub const NACCOUNTS: i64 = 100_000;
/// From this scale on, account ids are `bigint` (pgbench's `SCALE_32BIT_THRESHOLD`).
pub const SCALE_32BIT_THRESHOLD: i64 = 20_000;

/// One initialization step (a character of `-I`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `d`: drop the pgbench tables.
    Drop,
    /// `t`: create the tables (and partitions).
    CreateTables,
    /// `g`: generate data on the client and COPY it in.
    ClientGenerate,
    /// `G`: generate data with `insert ... select generate_series` on the server.
    ServerGenerate,
    /// `v`: vacuum analyze the tables.
    Vacuum,
    /// `p`: create the primary keys.
    PrimaryKeys,
    /// `f`: create the foreign keys.
    ForeignKeys,
}

impl Step {
    /// The step for a `-I` character; `None` for a blank (ignored).
    pub fn from_char(c: char) -> Result<Option<Step>, InitError> {
        Ok(Some(match c {
            'd' => Step::Drop,
            't' => Step::CreateTables,
            'g' => Step::ClientGenerate,
            'G' => Step::ServerGenerate,
            'v' => Step::Vacuum,
            'p' => Step::PrimaryKeys,
            'f' => Step::ForeignKeys,
            ' ' => return Ok(None),
            other => return Err(InitError::UnknownStep(other)),
        }))
    }

    /// The name used in pgbench's `done in ... (<op> %.2f s, ...)` summary.
    pub fn op_name(self) -> &'static str {
        match self {
            Step::Drop => "drop tables",
            Step::CreateTables => "create tables",
            Step::ClientGenerate => "client-side generate",
            Step::ServerGenerate => "server-side generate",
            Step::Vacuum => "vacuum",
            Step::PrimaryKeys => "primary keys",
            Step::ForeignKeys => "foreign keys",
        }
    }
}

/// Parses a `-I` string (already adjusted for `-n` and `--foreign-keys`) into steps,
/// keeping order and repeats and skipping blanks.
pub fn parse_steps(steps: &str) -> Result<Vec<Step>, InitError> {
    let mut out = Vec::new();
    for c in steps.chars() {
        if let Some(step) = Step::from_char(c)? {
            out.push(step);
        }
    }
    Ok(out)
}

/// How pgbench_accounts is partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitioning {
    /// An ordinary table.
    None,
    /// `--partition-method=range` with this many partitions.
    Range(u32),
    /// `--partition-method=hash` with this many partitions.
    Hash(u32),
}

impl Partitioning {
    /// The number of partitions (0 when not partitioned).
    pub fn count(self) -> u32 {
        match self {
            Partitioning::None => 0,
            Partitioning::Range(n) | Partitioning::Hash(n) => n,
        }
    }

    /// The method keyword used in `partition by <method> (aid)`.
    pub fn method(self) -> Option<&'static str> {
        match self {
            Partitioning::None => None,
            Partitioning::Range(_) => Some("range"),
            Partitioning::Hash(_) => Some("hash"),
        }
    }
}

/// Everything the initialization needs besides the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitConfig {
    /// The steps to run, in order.
    pub steps: Vec<Step>,
    /// `-s` scale factor (1 by default).
    pub scale: i64,
    /// `-F` fillfactor (100 by default).
    pub fillfactor: u32,
    /// `-q`: progress every 5 seconds instead of every 100000 rows.
    pub quiet: bool,
    /// `--tablespace`.
    pub tablespace: Option<String>,
    /// `--index-tablespace`.
    pub index_tablespace: Option<String>,
    /// `--partition-method` / `--partitions`.
    pub partitioning: Partitioning,
    /// `--unlogged-tables`.
    pub unlogged: bool,
    /// `-j`: the number of connections used for loading (1 = exactly pgbench's statements).
    pub jobs: u32,
}

impl Default for InitConfig {
    fn default() -> Self {
        InitConfig {
            steps: vec![
                Step::Drop,
                Step::CreateTables,
                Step::ClientGenerate,
                Step::Vacuum,
                Step::PrimaryKeys,
            ],
            scale: 1,
            fillfactor: 100,
            quiet: false,
            tablespace: None,
            index_tablespace: None,
            partitioning: Partitioning::None,
            unlogged: false,
            jobs: 1,
        }
    }
}

impl InitConfig {
    /// Rows in pgbench_branches.
    pub fn branches(&self) -> i64 {
        NBRANCHES * self.scale
    }

    /// Rows in pgbench_tellers.
    pub fn tellers(&self) -> i64 {
        NTELLERS * self.scale
    }

    /// Rows in pgbench_accounts.
    pub fn accounts(&self) -> i64 {
        NACCOUNTS * self.scale
    }

    /// True when account ids are `bigint`.
    pub fn big_ids(&self) -> bool {
        self.scale >= SCALE_32BIT_THRESHOLD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_keep_order_repeats_and_skip_blanks() {
        let steps = parse_steps(" d t gG  vv p f").unwrap();
        assert_eq!(
            steps,
            vec![
                Step::Drop,
                Step::CreateTables,
                Step::ClientGenerate,
                Step::ServerGenerate,
                Step::Vacuum,
                Step::Vacuum,
                Step::PrimaryKeys,
                Step::ForeignKeys
            ]
        );
        assert!(parse_steps("   ").unwrap().is_empty());
    }

    #[test]
    fn unknown_step_is_rejected() {
        match parse_steps("dtx") {
            Err(InitError::UnknownStep('x')) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn counts_follow_scale() {
        let cfg = InitConfig {
            scale: 3,
            ..InitConfig::default()
        };
        assert_eq!(
            (cfg.branches(), cfg.tellers(), cfg.accounts()),
            (3, 30, 300_000)
        );
        assert!(!cfg.big_ids());
        let big = InitConfig {
            scale: 20_000,
            ..InitConfig::default()
        };
        assert!(big.big_ids());
    }
}
