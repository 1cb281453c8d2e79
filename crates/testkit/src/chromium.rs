//! Headless Chromium for the tests that open pgrush's HTML reports as a person would.
//!
//! Chromium is required, not optional: `scripts/install-deps` installs Debian's
//! `chromium`; `PGRUSH_CHROMIUM` names another binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Chromium run may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The Chromium binary: `PGRUSH_CHROMIUM`, else `chromium`, `chromium-browser` or
/// `google-chrome` on `PATH`. Panics with an install hint when there is none.
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("PGRUSH_CHROMIUM") {
        return PathBuf::from(p);
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "Chromium is required for the HTML rendering tests (apt-get install -y chromium, \
         or set PGRUSH_CHROMIUM)"
    );
}

/// A headless Chromium command with the flags a closed network and a root user need,
/// and a fresh profile in `profile_dir`.
pub fn headless_command(profile_dir: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile_dir.display()))
    .stdin(Stdio::null());
    cmd
}

/// Opens `page` in headless Chromium and returns the document as Chromium rendered it
/// (`--dump-dom`). Panics when Chromium fails or takes longer than two minutes.
pub fn dump_dom(page: &Path) -> String {
    dump_dom_in_window(page, None)
}

/// [`dump_dom`] in a window of `(width, height)` px (Chromium's default when `None`), for
/// pages whose layout the caller measures.
pub fn dump_dom_in_window(page: &Path, window: Option<(u32, u32)>) -> String {
    dump_dom_of(&format!("file://{}", page.display()), window)
}

/// [`dump_dom`] of a page served over HTTP (`http://127.0.0.1:PORT/`).
pub fn dump_dom_url(url: &str) -> String {
    dump_dom_of(url, None)
}

/// The document at `url` as Chromium rendered it, in a window of `window` px.
fn dump_dom_of(url: &str, window: Option<(u32, u32)>) -> String {
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let out = profile.path().join("dom.html");
    let mut cmd = headless_command(profile.path());
    if let Some((w, h)) = window {
        cmd.arg(format!("--window-size={w},{h}"));
    }
    let mut child = cmd
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::from(
            std::fs::File::create(&out).unwrap_or_else(|e| panic!("{e}")),
        ))
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start chromium: {e}"));
    wait_for(&mut child);
    std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("no DOM from chromium: {e}"))
}

/// Waits for a Chromium child, panicking when it fails or outlives [`RUN_LIMIT`].
pub fn wait_for(child: &mut std::process::Child) {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                assert!(status.success(), "chromium failed: {status}");
                return;
            }
            Ok(None) if start.elapsed() < RUN_LIMIT => {
                std::thread::sleep(Duration::from_millis(100));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish in {} s", RUN_LIMIT.as_secs());
            }
        }
    }
}
