//! `--help`, `--version`, `-b list` and `--show-script` output.
//!
//! The help text is pgbench 18.6's, byte for byte, with the program name
//! (basename of argv[0]) where pgbench prints its own name (the first two
//! lines; the other mentions of "pgbench" name tables and log files and stay).
//!
//! Options pgbench 18 does not have are listed in a separate section that
//! starts with [`EXTENSIONS_HEADER`] and ends with an empty line, just before
//! the bug-report lines; without it the text is pgbench's.
//!
//! Version line: `<progname> (PostgreSQL) 18.6 (pgrush X.Y.Z)`. Tools that
//! parse `pgbench -V` already cope with a trailing parenthesised vendor string
//! (Debian's pgbench prints `pgbench (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`),
//! and the third word is still the PostgreSQL version pgrush emulates.

use std::io::Write;

/// The PostgreSQL release whose pgbench pgrush reproduces.
pub const PG_VERSION: &str = "18.6";

/// Header of the section listing options pgbench 18 does not have.
pub const EXTENSIONS_HEADER: &str = "Options beyond pgbench 18 (pgrush):\n";

/// pgrush's own options (and PostgreSQL 19's `--continue-on-error`), shown in
/// their own section just before the bug-report lines.
const EXTENSIONS: &str =
    "  --continue-on-error      continue running after a failed SQL command (PostgreSQL 19)
  --html=FILE              write a self-contained HTML report of the run to FILE
  --json=FILE              write the run's results as JSON to FILE (\"-\": standard output)
  --no-warnings            do not print warnings about the run's meaningfulness
  --percentiles[=LIST]     print latency percentiles after the report
                           (default: 50,90,99,99.9,99.99)

";

/// pgbench 18's `--help` text for `progname`, plus the extensions section.
pub fn help_text(progname: &str) -> String {
    format!(
        r#"{progname} is a benchmarking tool for PostgreSQL.

Usage:
  {progname} [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         invokes initialization mode
  -I, --init-steps=[dtgGvpf]+ (default "dtgvp")
                           run selected initialization steps, in the specified order
                           d: drop any existing pgbench tables
                           t: create the tables used by the standard pgbench scenario
                           g: generate data, client-side
                           G: generate data, server-side
                           v: invoke VACUUM on the standard tables
                           p: create primary key indexes on the standard tables
                           f: create foreign keys between the standard tables
  -F, --fillfactor=NUM     set fill factor
  -n, --no-vacuum          do not run VACUUM during initialization
  -q, --quiet              quiet logging (one message each 5 seconds)
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between tables
  --index-tablespace=TABLESPACE
                           create indexes in the specified tablespace
  --partition-method=(range|hash)
                           partition pgbench_accounts with this method (default: range)
  --partitions=NUM         partition pgbench_accounts into NUM parts (default: 0)
  --tablespace=TABLESPACE  create tables in the specified tablespace
  --unlogged-tables        create tables as unlogged tables

Options to select what to run:
  -b, --builtin=NAME[@W]   add builtin script NAME weighted at W (default: 1)
                           (use "-b list" to list available scripts)
  -f, --file=FILENAME[@W]  add script FILENAME weighted at W (default: 1)
  -N, --skip-some-updates  skip updates of pgbench_tellers and pgbench_branches
                           (same as "-b simple-update")
  -S, --select-only        perform SELECT-only transactions
                           (same as "-b select-only")

Benchmarking options:
  -c, --client=NUM         number of concurrent database clients (default: 1)
  -C, --connect            establish new connection for each transaction
  -D, --define=VARNAME=VALUE
                           define variable for use by custom script
  -j, --jobs=NUM           number of threads (default: 1)
  -l, --log                write transaction times to log file
  -L, --latency-limit=NUM  count transactions lasting more than NUM ms as late
  -M, --protocol=simple|extended|prepared
                           protocol for submitting queries (default: simple)
  -n, --no-vacuum          do not run VACUUM before tests
  -P, --progress=NUM       show thread progress report every NUM seconds
  -r, --report-per-command report latencies, failures, and retries per command
  -R, --rate=NUM           target rate in transactions per second
  -s, --scale=NUM          report this scale factor in output
  -t, --transactions=NUM   number of transactions each client runs (default: 10)
  -T, --time=NUM           duration of benchmark test in seconds
  -v, --vacuum-all         vacuum all four standard tables before tests
  --aggregate-interval=NUM aggregate data over NUM seconds
  --exit-on-abort          exit when any client is aborted
  --failures-detailed      report the failures grouped by basic types
  --log-prefix=PREFIX      prefix for transaction time log file
                           (default: "pgbench_log")
  --max-tries=NUM          max number of tries to run transaction (default: 1)
  --progress-timestamp     use Unix epoch timestamps for progress
  --random-seed=SEED       set random seed ("time", "rand", integer)
  --sampling-rate=NUM      fraction of transactions to log (e.g., 0.01 for 1%)
  --show-script=NAME       show builtin script code, then exit
  --verbose-errors         print messages of all errors

Common options:
  --debug                  print debugging output
  -d, --dbname=DBNAME      database name to connect to
  -h, --host=HOSTNAME      database server host or socket directory
  -p, --port=PORT          database server port number
  -U, --username=USERNAME  connect as specified database user
  -V, --version            output version information, then exit
  -?, --help               show this help, then exit

{EXTENSIONS_HEADER}{EXTENSIONS}Report bugs to <pgsql-bugs@lists.postgresql.org>.
PostgreSQL home page: <https://www.postgresql.org/>
"#
    )
}

/// Prints pgbench 18's `--help` text adapted to `progname`; returns 0.
pub fn print_help(progname: &str) -> i32 {
    write_stdout(help_text(progname).as_bytes())
}

/// The `-V` line, including the newline.
pub fn version_text(progname: &str) -> String {
    format!(
        "{progname} (PostgreSQL) {PG_VERSION} (pgrush {})\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Prints the version line; returns 0.
pub fn print_version(progname: &str) -> i32 {
    write_stdout(version_text(progname).as_bytes())
}

/// `-b list`: the builtin list on stderr; returns 0.
pub fn print_builtin_list() -> i32 {
    let _ = std::io::stderr().write_all(pgrush_script::builtin_list_text().as_bytes());
    0
}

/// `--show-script=NAME` (NAME already resolved): the script on stderr; returns 0.
pub fn print_show_script(name: &str) -> i32 {
    match pgrush_script::show_script_text(name) {
        Ok(text) => {
            let _ = std::io::stderr().write_all(text.as_bytes());
            0
        }
        Err(_) => 1,
    }
}

fn write_stdout(bytes: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_uses_progname_and_keeps_other_names() {
        let text = help_text("pgrush");
        assert!(text.starts_with(
            "pgrush is a benchmarking tool for PostgreSQL.\n\nUsage:\n  pgrush [OPTION]... [DBNAME]\n"
        ));
        assert!(text.contains("(default: \"pgbench_log\")"));
        assert!(text.contains("d: drop any existing pgbench tables\n"));
        assert!(text.contains("  -I, --init-steps=[dtgGvpf]+ (default \"dtgvp\")\n"));
        assert!(text.ends_with("PostgreSQL home page: <https://www.postgresql.org/>\n"));
        let section = text.find(EXTENSIONS_HEADER).expect("extensions section");
        assert!(text[section + EXTENSIONS_HEADER.len()..].starts_with(EXTENSIONS));
        assert!(text[..section].ends_with("show this help, then exit\n\n"));
    }

    #[test]
    fn version_line_keeps_pgbench_shape() {
        let line = version_text("pgrush");
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&words[..3], &["pgrush", "(PostgreSQL)", "18.6"]);
        assert!(line.ends_with(")\n"));
    }
}
