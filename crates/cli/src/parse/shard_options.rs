//! The sharding options (`--shard`, `--shards`, `--shard-timeout`, `--start-at`) and
//! the shard identity and file names settled once every option is known.

use super::apply::{State, int_option};
use super::diag::Diag;
use pgrush_run::options::Options;
use pgrush_run::shard::identity::{self, LauncherEnv};
use pgrush_run::shard::{paths, start_time};

fn fatal<T>(diag: &mut Diag<'_>, msg: &str) -> Result<T, i32> {
    diag.error(msg.as_bytes());
    Err(1)
}

fn text(value: Option<&[u8]>) -> String {
    String::from_utf8_lossy(value.unwrap_or_default()).into_owned()
}

/// `--shard INDEX/COUNT`.
pub fn shard(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    match identity::parse_shard_option(&text(value)) {
        Ok(pair) => {
            st.opts.shard_option = Some(pair);
            Ok(())
        }
        Err(e) => fatal(diag, &e.to_string()),
    }
}

/// `--shards N` (the count for a Kubernetes Indexed Job).
pub fn shards(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    match identity::parse_shard_count("(--shards)", &text(value)) {
        Ok(n) => {
            st.opts.shards_option = Some(n);
            Ok(())
        }
        Err(e) => fatal(diag, &e.to_string()),
    }
}

/// `--shard-timeout SECONDS` (from 1).
pub fn shard_timeout(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.shard_timeout_s = int_option(value.unwrap_or_default(), "--shard-timeout", 1, diag)?;
    Ok(())
}

/// `--start-at TIME` (RFC 3339 or Unix seconds; whether it lies ahead is checked
/// against the server's clock before the run).
pub fn start_at(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let given = text(value);
    match start_time::parse(&given) {
        Ok(us) => {
            st.opts.start_at = Some((given, us));
            Ok(())
        }
        Err(e) => fatal(diag, &e.to_string()),
    }
}

/// After the option loop (benchmarking mode): the shard identity from the options
/// and the launcher's environment, and the shard's output file names.
pub fn settle(opts: &mut Options, env: &LauncherEnv, diag: &mut Diag<'_>) -> Result<(), i32> {
    let found = identity::resolve(opts.shard_option, opts.shards_option, env);
    opts.shard = match found {
        Ok(found) => found,
        Err(e) => return fatal(diag, &e.to_string()),
    };
    let Some(shard) = opts.shard else {
        if opts.shards_option.is_some_and(|n| n > 1) {
            return fatal(
                diag,
                "--shards is allowed only with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); elsewhere give --shard INDEX/COUNT",
            );
        }
        if opts.start_at.is_some() {
            return fatal(
                diag,
                "--start-at is allowed only in a sharded run (--shard INDEX/COUNT or a launcher's environment)",
            );
        }
        return Ok(());
    };
    for path in [&mut opts.json, &mut opts.html].into_iter().flatten() {
        *path = paths::output_path(path, shard.index);
    }
    if let Some(prefix) = &mut opts.log_prefix {
        *prefix = paths::log_prefix(prefix, shard.index);
    }
    Ok(())
}
