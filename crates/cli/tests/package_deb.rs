//! `scripts/package-deb`: the Debian package built from the test's own
//! (debug) binary installs with `dpkg -i` into an empty directory tree, and
//! the installed pgrush runs and finds its man pages and completions where
//! man, bash-completion, zsh and fish look. Needs dpkg-deb and groff
//! (`scripts/install-deps`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PGRUSH: &str = env!("CARGO_BIN_EXE_pgrush");

fn checked(command: &mut Command) -> Output {
    let out = command.output().expect("spawn");
    assert!(
        out.status.success(),
        "{command:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Builds the package into `out`; returns the .deb's path.
fn build_package(out: &Path) -> PathBuf {
    let script = pgrush_testkit::repo_root().join("scripts/package-deb");
    let built = checked(Command::new(script).args([
        "--binary",
        PGRUSH,
        "--out",
        out.to_str().expect("utf-8"),
        "--fast",
    ]));
    let stdout = String::from_utf8(built.stdout).expect("utf-8");
    let deb = PathBuf::from(stdout.lines().last().expect("the .deb's path"));
    assert!(deb.starts_with(out) && deb.exists(), "{deb:?}");
    deb
}

/// An empty dpkg database under `root`.
fn empty_dpkg_root(root: &Path) {
    for dir in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    }
    std::fs::write(root.join("var/lib/dpkg/status"), "").expect("status");
}

#[test]
fn package_installs_into_an_empty_tree_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deb = build_package(dir.path());
    let fields = checked(Command::new("dpkg-deb").arg("--field").arg(&deb));
    let fields = String::from_utf8(fields.stdout).expect("utf-8");
    assert!(fields.contains("Package: pgrush\n"), "{fields}");
    let version = format!("Version: {}-1\n", env!("CARGO_PKG_VERSION"));
    assert!(fields.contains(&version), "{fields}");
    assert!(fields.contains("Depends: libc6"), "{fields}");

    let root = dir.path().join("root");
    empty_dpkg_root(&root);
    // The tree has no libc6 package and no PATH programs of its own.
    checked(Command::new("dpkg").args([
        &format!("--root={}", root.display()),
        "--force-not-root",
        "--force-depends",
        "--force-bad-path",
        "--install",
        deb.to_str().expect("utf-8"),
    ]));
    let status = checked(Command::new("dpkg").args([
        &format!("--root={}", root.display()),
        "--status",
        "pgrush",
    ]));
    let status = String::from_utf8(status.stdout).expect("utf-8");
    assert!(status.contains("Status: install ok installed"), "{status}");

    let installed = checked(Command::new(root.join("usr/bin/pgrush")).arg("--version"));
    let version = String::from_utf8(installed.stdout).expect("utf-8");
    assert!(
        version.starts_with("pgrush (PostgreSQL) 18.6 (pgrush "),
        "{version}"
    );

    let files = checked(Command::new("dpkg").args([
        &format!("--root={}", root.display()),
        "--listfiles",
        "pgrush",
    ]));
    let files = String::from_utf8(files.stdout).expect("utf-8");
    for page in pages() {
        let path = format!("/usr/share/man/man1/{page}.1.gz");
        assert!(
            files.lines().any(|l| l == path),
            "{path} not installed:\n{files}"
        );
        let unzipped = checked(Command::new("gzip").arg("-dc").arg(root.join(&path[1..])));
        let text = String::from_utf8(unzipped.stdout).expect("utf-8");
        assert!(
            text.contains(&format!(".TH {} 1 ", page.to_uppercase())),
            "{page}"
        );
    }
    for (shell, path) in [
        ("bash", "usr/share/bash-completion/completions/pgrush"),
        ("zsh", "usr/share/zsh/vendor-completions/_pgrush"),
        ("fish", "usr/share/fish/vendor_completions.d/pgrush.fish"),
    ] {
        let script = std::fs::read(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let expected = checked(Command::new(PGRUSH).args(["completions", shell])).stdout;
        assert_eq!(script, expected, "{path}");
    }
    assert!(
        !files.contains("pg_test_timing") && !files.contains("/usr/bin/pgbench"),
        "no link may shadow PostgreSQL's programs:\n{files}"
    );
}

/// The man pages `pgrush man --list` names.
fn pages() -> Vec<String> {
    let out = checked(Command::new(PGRUSH).args(["man", "--list"]));
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}
