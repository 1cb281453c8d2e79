//! Which shard this process is: `--shard INDEX/COUNT`, else a launcher's environment
//! (Slurm, Open MPI, PMI, a Kubernetes Indexed Job), checked in that order.

use std::fmt;

/// Where the shard identity came from (the JSON document's `shard.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardSource {
    /// `--shard INDEX/COUNT`.
    Option,
    /// `SLURM_PROCID` / `SLURM_NTASKS`.
    Slurm,
    /// `OMPI_COMM_WORLD_RANK` / `OMPI_COMM_WORLD_SIZE`, or `PMI_RANK` / `PMI_SIZE`.
    Mpi,
    /// `JOB_COMPLETION_INDEX` with `--shards N` or `PGRUSH_SHARDS`.
    Kubernetes,
}

impl ShardSource {
    /// The name recorded in the run document.
    pub fn name(self) -> &'static str {
        match self {
            ShardSource::Option => "option",
            ShardSource::Slurm => "slurm",
            ShardSource::Mpi => "mpi",
            ShardSource::Kubernetes => "kubernetes",
        }
    }
}

/// One shard of a benchmark: `index` in `0..count`, `count >= 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardIdentity {
    /// This shard's index, from 0.
    pub index: u32,
    /// The number of shards.
    pub count: u32,
    /// Where it came from.
    pub source: ShardSource,
}

impl ShardIdentity {
    /// The global id of this shard's first client with `clients` clients a shard.
    pub fn first_client(&self, clients: u32) -> u32 {
        self.index.saturating_mul(clients)
    }
}

/// Why the shard identity cannot be known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// `--shard` is not `INDEX/COUNT`.
    #[error("invalid shard \"{0}\" (expecting INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 2/4)")]
    Syntax(String),
    /// The index is not below the count.
    #[error("invalid shard \"{given}\": the index must be below the count (0 to {last})")]
    IndexTooLarge {
        /// As given.
        given: String,
        /// The largest valid index.
        last: u32,
    },
    /// `--shards` or `PGRUSH_SHARDS` is not a positive integer.
    #[error("invalid number of shards {what}: \"{value}\" (expecting an integer from 1)")]
    Count {
        /// `(--shards)` or `(PGRUSH_SHARDS)`.
        what: &'static str,
        /// As given.
        value: String,
    },
    /// A launcher's variable is not a number.
    #[error("invalid {name}=\"{value}\" in the environment (expecting a non-negative integer)")]
    Variable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A launcher's rank is not below its size.
    #[error("{rank_name}={rank} is not below {size_name}={size} in the environment")]
    RankTooLarge {
        /// The rank variable.
        rank_name: &'static str,
        /// Its value.
        rank: u32,
        /// The size variable.
        size_name: &'static str,
        /// Its value.
        size: u32,
    },
    /// A rank variable without its size variable.
    #[error("{rank_name} is set but {size_name} is not: the number of shards is unknown")]
    MissingSize {
        /// The rank variable.
        rank_name: &'static str,
        /// The size variable.
        size_name: &'static str,
    },
    /// `JOB_COMPLETION_INDEX` without a count.
    #[error(
        "JOB_COMPLETION_INDEX is set but the number of shards is unknown: give --shards N or set PGRUSH_SHARDS"
    )]
    KubernetesCount,
}

/// The launcher variables the shard detection reads (raw values, as set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LauncherEnv {
    /// Every variable of [`LAUNCHER_VARIABLES`] that is set, with its value.
    pub vars: Vec<(&'static str, String)>,
}

/// The variables read, rank then size, in the order they are checked.
pub const LAUNCHER_VARIABLES: [(&str, &str, ShardSource); 4] = [
    ("SLURM_PROCID", "SLURM_NTASKS", ShardSource::Slurm),
    (
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        ShardSource::Mpi,
    ),
    ("PMI_RANK", "PMI_SIZE", ShardSource::Mpi),
    (
        "JOB_COMPLETION_INDEX",
        "PGRUSH_SHARDS",
        ShardSource::Kubernetes,
    ),
];

impl LauncherEnv {
    /// Reads the launcher variables of this process.
    pub fn from_process() -> LauncherEnv {
        let mut vars = Vec::new();
        for (rank, size, _) in LAUNCHER_VARIABLES {
            for name in [rank, size] {
                if let Some(v) = std::env::var_os(name) {
                    vars.push((name, v.to_string_lossy().into_owned()));
                }
            }
        }
        LauncherEnv { vars }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for ShardIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `--shard INDEX/COUNT` (a count of 1 is accepted: not sharded).
pub fn parse_shard_option(value: &str) -> Result<(u32, u32), ShardError> {
    let syntax = || ShardError::Syntax(value.to_string());
    let (index, count) = value.split_once('/').ok_or_else(syntax)?;
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|_| !s.trim().starts_with('+'))
    };
    let (index, count) = (
        number(index).ok_or_else(syntax)?,
        number(count).ok_or_else(syntax)?,
    );
    if count == 0 {
        return Err(syntax());
    }
    if index >= count {
        return Err(ShardError::IndexTooLarge {
            given: value.to_string(),
            last: count - 1,
        });
    }
    Ok((index, count))
}

/// Parses a shard count (`--shards N`, `PGRUSH_SHARDS`): an integer from 1.
pub fn parse_shard_count(what: &'static str, value: &str) -> Result<u32, ShardError> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| ShardError::Count {
            what,
            value: value.to_string(),
        })
}

/// The shard identity: `--shard` when given, else the first launcher whose rank
/// variable is set. `None` when nothing says this is a shard, or the count is 1.
pub fn resolve(
    option: Option<(u32, u32)>,
    shards_option: Option<u32>,
    env: &LauncherEnv,
) -> Result<Option<ShardIdentity>, ShardError> {
    let found = match option {
        Some((index, count)) => Some((index, count, ShardSource::Option)),
        None => from_environment(shards_option, env)?,
    };
    Ok(found
        .filter(|&(_, count, _)| count > 1)
        .map(|(index, count, source)| ShardIdentity {
            index,
            count,
            source,
        }))
}

fn from_environment(
    shards_option: Option<u32>,
    env: &LauncherEnv,
) -> Result<Option<(u32, u32, ShardSource)>, ShardError> {
    for (rank_name, size_name, source) in LAUNCHER_VARIABLES {
        let Some(rank) = env.get(rank_name) else {
            continue;
        };
        let rank = variable(rank_name, rank)?;
        let size = match (source, shards_option, env.get(size_name)) {
            (ShardSource::Kubernetes, Some(n), _) => n,
            (ShardSource::Kubernetes, None, Some(v)) => parse_shard_count("(PGRUSH_SHARDS)", v)?,
            (ShardSource::Kubernetes, None, None) => return Err(ShardError::KubernetesCount),
            (_, _, Some(v)) => variable(size_name, v)?,
            (_, _, None) => {
                return Err(ShardError::MissingSize {
                    rank_name,
                    size_name,
                });
            }
        };
        if rank >= size {
            return Err(ShardError::RankTooLarge {
                rank_name,
                rank,
                size_name,
                size,
            });
        }
        return Ok(Some((rank, size, source)));
    }
    Ok(None)
}

fn variable(name: &'static str, value: &str) -> Result<u32, ShardError> {
    value
        .trim()
        .parse::<u32>()
        .map_err(|_| ShardError::Variable {
            name,
            value: value.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&'static str, &str)]) -> LauncherEnv {
        LauncherEnv {
            vars: pairs.iter().map(|(n, v)| (*n, v.to_string())).collect(),
        }
    }

    #[test]
    fn the_option_is_index_slash_count() {
        assert_eq!(parse_shard_option("2/4"), Ok((2, 4)));
        assert_eq!(parse_shard_option("0/1"), Ok((0, 1)));
        for bad in ["x", "2", "2/", "/4", "-1/4", "+1/4", "1/0", "1/4/2", "a/b"] {
            assert!(
                matches!(parse_shard_option(bad), Err(ShardError::Syntax(_))),
                "{bad}"
            );
        }
        let err = parse_shard_option("4/4").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid shard \"4/4\": the index must be below the count (0 to 3)"
        );
    }

    #[test]
    fn launchers_are_checked_in_order_and_the_option_wins() {
        let all = env(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "3"),
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "5"),
        ]);
        let slurm = resolve(None, None, &all).unwrap().unwrap();
        assert_eq!(
            (slurm.index, slurm.count, slurm.source),
            (1, 3, ShardSource::Slurm)
        );
        let mpi = resolve(None, None, &env(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")]));
        assert_eq!(mpi.unwrap().unwrap().source, ShardSource::Mpi);
        let option = resolve(Some((0, 2)), None, &all).unwrap().unwrap();
        assert_eq!(
            (option.index, option.count, option.source),
            (0, 2, ShardSource::Option)
        );
        assert_eq!(resolve(None, None, &env(&[])), Ok(None));
        // A count of 1 is a run of its own.
        let single = env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")]);
        assert_eq!(resolve(None, None, &single), Ok(None));
    }

    #[test]
    fn kubernetes_needs_a_count() {
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(resolve(None, None, &k8s), Err(ShardError::KubernetesCount));
        let by_option = resolve(None, Some(4), &k8s).unwrap().unwrap();
        assert_eq!((by_option.index, by_option.count), (3, 4));
        let by_env = env(&[("JOB_COMPLETION_INDEX", "1"), ("PGRUSH_SHARDS", "2")]);
        assert_eq!(
            resolve(None, None, &by_env).unwrap().unwrap().source,
            ShardSource::Kubernetes
        );
        assert!(matches!(
            resolve(None, Some(3), &k8s),
            Err(ShardError::RankTooLarge { .. })
        ));
        assert!(matches!(
            resolve(
                None,
                None,
                &env(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "2")])
            ),
            Err(ShardError::Variable { .. })
        ));
        assert!(parse_shard_count("(--shards)", "0").is_err());
    }
}
