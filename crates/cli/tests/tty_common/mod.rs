//! Running a command with a terminal as its standard output and error: `script` gives
//! it a pseudo-terminal and copies what it writes there (`\r` and escapes included).

#![allow(dead_code)]

use std::process::{Command, Stdio};

/// `arg` quoted for `sh`.
fn quoted(arg: &std::ffi::OsStr) -> String {
    format!("'{}'", arg.to_string_lossy().replace('\'', r"'\''"))
}

/// Runs `cmd` (its program, arguments, environment and directory) on a
/// pseudo-terminal; returns its exit status and what it wrote there.
pub fn run_in_a_terminal(cmd: &Command) -> (i32, String) {
    let line: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(quoted)
        .collect();
    let mut script = Command::new("script");
    script
        .args(["-qfec", &line.join(" "), "/dev/null"])
        .stdin(Stdio::null());
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => script.env(name, v),
            None => script.env_remove(name),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        script.current_dir(dir);
    }
    let out = script
        .output()
        .unwrap_or_else(|e| panic!("cannot run script (util-linux): {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
