//! What the binary says about itself: the PostgreSQL release it reproduces, the
//! version line, and where bugs go. Every help text ends with [`bug_report_lines`].

/// The PostgreSQL release whose pgbench pgrush reproduces.
pub const PG_VERSION: &str = "18.6";

/// The project's repository, from the workspace's `Cargo.toml`.
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The project's home page, from the workspace's `Cargo.toml`.
pub const HOMEPAGE: &str = env!("CARGO_PKG_HOMEPAGE");

/// The `-V` line, including the newline: `<progname> (PostgreSQL) 18.6 (pgrush X.Y.Z)`.
pub fn version_text(progname: &str) -> String {
    format!(
        "{progname} (PostgreSQL) {PG_VERSION} (pgrush {})\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The last lines of every help text: where pgrush's bugs go (pgbench's help sends
/// them to PostgreSQL's list, which is not where a pgrush bug belongs).
pub fn bug_report_lines() -> String {
    format!("Report bugs to <{REPOSITORY}/issues>.\npgrush home page: <{HOMEPAGE}>\n")
}
