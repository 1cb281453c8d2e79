//! `scripts/build-static --dev`: pgrush links statically against musl, so
//! the binary runs on any x86-64 Linux. The dev profile keeps the build short
//! (about 2 minutes from nothing on 2 cores; the release build is measured in
//! docs/packaging.md). Needs the musl target and musl-gcc
//! (`scripts/install-deps`).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn static_build_has_no_shared_libraries() {
    let root = pgrush_testkit::repo_root();
    // A target directory of its own: the one this test was built in may be locked by cargo.
    let target_dir = root.join("target/static-check");
    let out = Command::new(root.join("scripts/build-static"))
        .arg("--dev")
        .env("CARGO_TARGET_DIR", &target_dir)
        // Linking statically is what is checked: no debug info, no incremental cache to write.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .expect("run scripts/build-static");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "build-static: {}\n{stderr}",
        out.status
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let binary = PathBuf::from(stdout.lines().last().expect("the binary's path"));
    assert!(binary.starts_with(&target_dir), "{binary:?}");

    let ldd = Command::new("ldd").arg(&binary).output().expect("run ldd");
    let says = String::from_utf8_lossy(&ldd.stdout) + String::from_utf8_lossy(&ldd.stderr);
    assert!(
        says.contains("not a dynamic executable") || says.contains("statically linked"),
        "ldd: {says}"
    );
    assert!(!says.contains("libc.so"), "ldd: {says}");

    // It runs, with no environment at all.
    let version = Command::new(&binary)
        .arg("--version")
        .env_clear()
        .output()
        .expect("run the static binary");
    let text = String::from_utf8_lossy(&version.stdout);
    assert!(text.starts_with("pgrush (PostgreSQL) "), "{text}");
}
