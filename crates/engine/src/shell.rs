//! Running `\shell` and `\setshell` command lines with `sh -c` (the command
//! line itself and the output rules come from `pgrush-script`).

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Runs `command` like C `system()`: true when it ran and exited with status 0.
pub fn system(command: &str) -> bool {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::inherit())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs `command` like `popen(command, "r")` and returns everything it printed on
/// stdout (`None` when it could not be started).
pub fn capture(command: &str) -> Option<Vec<u8>> {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut out = Vec::new();
    if let Some(mut so) = child.stdout.take() {
        let _ = so.read_to_end(&mut out);
    }
    let _ = child.wait();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_commands() {
        assert!(system("true"));
        assert!(!system("false"));
        assert!(!system("exit 3"));
        assert_eq!(capture("echo 42").as_deref(), Some(&b"42\n"[..]));
        assert_eq!(capture("true").as_deref(), Some(&b""[..]));
    }
}
