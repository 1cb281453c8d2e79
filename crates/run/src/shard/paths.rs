//! Output file names of a shard: `{shard}` is replaced by the index; without it,
//! `.shard<INDEX>` goes before the extension (`run.json` -> `run.shard2.json`).

/// The placeholder replaced by the shard index.
pub const PLACEHOLDER: &str = "{shard}";

/// The `--json`/`--html` path of shard `index` (`-`, standard output, is kept).
pub fn output_path(path: &str, index: u32) -> String {
    if path == "-" {
        return path.to_string();
    }
    if path.contains(PLACEHOLDER) {
        return path.replace(PLACEHOLDER, &index.to_string());
    }
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let name = &path[name_start..];
    // A leading dot starts a hidden name, not an extension.
    match name.rfind('.').filter(|&dot| dot > 0) {
        Some(dot) => {
            let at = name_start + dot;
            format!("{}.shard{index}{}", &path[..at], &path[at..])
        }
        None => format!("{path}.shard{index}"),
    }
}

/// The `-l` prefix of shard `index`: `{shard}` replaced; otherwise unchanged
/// (pgbench's names `PREFIX.PID[.TID]` already differ per process).
pub fn log_prefix(prefix: &str, index: u32) -> String {
    prefix.replace(PLACEHOLDER, &index.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_paths() {
        assert_eq!(output_path("run.json", 2), "run.shard2.json");
        assert_eq!(output_path("out/run.v1.html", 0), "out/run.v1.shard0.html");
        assert_eq!(output_path("out.d/run", 3), "out.d/run.shard3");
        assert_eq!(output_path(".hidden", 1), ".hidden.shard1");
        assert_eq!(output_path("r-{shard}.json", 7), "r-7.json");
        assert_eq!(output_path("-", 1), "-");
        assert_eq!(log_prefix("log{shard}", 2), "log2");
        assert_eq!(log_prefix("pgbench_log", 2), "pgbench_log");
    }
}
