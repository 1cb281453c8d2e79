//! `pgrush ops` on a real small file system: a 700 MB tmpfs, mounted in a private
//! mount namespace (`unshare --mount`, so nothing outside sees it) as the directory
//! where the throwaway cluster, its dumps and backups live (`PGRUSH_SANDBOX_DIR`).
//! Scale 1 fits; scale 20 does not: the run stops before it with a clear message,
//! keeps scale 1's results, and leaves nothing on the tmpfs but the cached `initdb`
//! template. Needs root (CI runs as root); without it the test fails and says so.

mod ops_common;

use std::path::Path;
use std::process::Command;

use ops_common::{Sandbox, errors_of, processes_using, steps_of};
use pgrush_testkit::run;

/// The tmpfs's size.
const TMPFS_SIZE: &str = "700m";

/// Runs, in a private mount namespace: mount a tmpfs on `mount_point`, `pgrush ops
/// ARGS` with its clusters there, then lists what is left on the tmpfs into `left`.
fn ops_on_tmpfs(sandbox: &Sandbox, mount_point: &Path, left: &Path, args: &[&str]) -> Command {
    const SCRIPT: &str = r#"dir=$1; left=$2; shift 2
mount -t tmpfs -o "size=$TMPFS_SIZE" pgrush-ops-test "$dir" || exit 97
"$@"; status=$?
ls -A "$dir" > "$left"
exit $status"#;
    let mut inner = sandbox.command(None, args);
    inner.env("PGRUSH_SANDBOX_DIR", mount_point);
    let mut cmd = pgrush_testkit::in_private_mount_namespace(SCRIPT);
    cmd.arg(mount_point)
        .arg(left)
        .arg(inner.get_program())
        .args(inner.get_args())
        .env("TMPFS_SIZE", TMPFS_SIZE);
    for (name, value) in inner.get_envs() {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    cmd
}

#[test]
fn a_full_tmpfs_stops_before_the_scale_that_does_not_fit_and_keeps_the_smaller_ones() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "this test mounts a tmpfs in a private mount namespace and needs root (CI runs as \
         root): run it as root"
    );
    let sandbox = Sandbox::new();
    let mount_point = sandbox.path().join("small-disk");
    std::fs::create_dir(&mount_point).unwrap();
    let left = sandbox.path().join("left.txt");
    let json = sandbox.json_path();
    let out = run(&mut ops_on_tmpfs(
        &sandbox,
        &mount_point,
        &left,
        &[
            "--scale",
            "1,20",
            "--steps",
            "load,dump",
            "--json",
            json.to_str().unwrap(),
        ],
    ));
    assert_ne!(out.code, 97, "cannot mount a tmpfs: {}", out.stderr);
    assert_eq!(out.code, 1, "{out:?}");
    let errors = errors_of(&out.stderr);
    let message = errors.trim_end();
    assert!(
        message.starts_with("pgrush: error: ops: scale 20 needs about ")
            && message.contains(&format!("MB of disk in {}/", mount_point.display()))
            && message.ends_with(
                "MB are free; stopping before it (the smaller scales' results are kept)"
            ),
        "{message}"
    );
    let free_mb: u64 = message
        .split(" but only ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("free MB in the message");
    assert!(free_mb < 700, "the tmpfs was measured: {free_mb} MB free");
    let doc = sandbox.document();
    assert_eq!(doc["scales"].as_array().map(Vec::len), Some(1));
    let names: Vec<String> = steps_of(&doc, 1)
        .iter()
        .filter_map(|s| s["step"].as_str().map(str::to_string))
        .collect();
    assert_eq!(names, ["load", "dump"]);
    assert!(doc["stopped"].as_str().unwrap().contains("needs about"));
    let left = std::fs::read_to_string(&left).expect("listing of the tmpfs");
    let left: Vec<&str> = left
        .lines()
        .filter(|name| !name.starts_with("pgrush-initdb-"))
        .collect();
    assert_eq!(left, Vec::<&str>::new(), "left on the tmpfs");
    assert_eq!(processes_using(&mount_point), Vec::<String>::new());
}
