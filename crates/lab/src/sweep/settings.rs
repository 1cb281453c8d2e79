//! Server settings of `set:NAME` axes: applied with `ALTER SYSTEM SET` and a
//! configuration reload, or a restart when the setting needs one
//! (`pg_settings.pending_restart`) and pgrush controls the cluster; restored at the
//! end (the value `postgresql.auto.conf` had before the sweep, or `ALTER SYSTEM
//! RESET`). What to put back is also written to a journal file in the output
//! directory as soon as a setting changes, so that a sweep killed before it could
//! restore (SIGKILL, a crash) restores at its next invocation.

use super::error::SweepError;
use super::server::Server;
use pgrush_cluster::{Journal, quote_literal};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The journal's name in the output directory.
pub const JOURNAL_FILE: &str = "settings-to-restore.json";

/// How long a configuration reload may take to reach the sweep's session.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The settings a sweep changes, what they were, and what they are now.
#[derive(Debug)]
pub struct Settings {
    /// Where `previous` is kept until restored (`None`: nowhere).
    journal: Option<Journal>,
    /// Each changed setting's `postgresql.auto.conf` value before the sweep (`None`:
    /// it had none).
    previous: BTreeMap<String, Option<String>>,
    /// The values applied so far.
    applied: BTreeMap<String, String>,
}

impl Settings {
    /// Nothing changed yet, or, when `journal` names a journal left by an earlier
    /// invocation, what that one changed (restored by [`Settings::restore`]).
    pub fn new(journal: Option<&Path>) -> Settings {
        let journal = journal.map(Journal::at);
        let previous = journal.as_ref().and_then(Journal::read).unwrap_or_default();
        Settings {
            journal,
            previous,
            applied: BTreeMap::new(),
        }
    }

    /// True when something is to be restored.
    pub fn pending(&self) -> bool {
        !self.previous.is_empty()
    }

    /// Writes what to restore to the journal.
    fn write_journal(&self) -> Result<(), SweepError> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        journal
            .write(&self.previous)
            .map_err(|e| SweepError::Io(format!("{}: {e}", journal.path().display())))
    }

    /// Makes the server run with `wanted` (name, value) and returns each setting's
    /// value as a new session sees it (`current_setting`).
    pub fn apply(
        &mut self,
        server: &mut Server,
        wanted: &[(String, String)],
    ) -> Result<BTreeMap<String, String>, SweepError> {
        let mut changed = false;
        for (name, value) in wanted {
            if self.applied.get(name) == Some(value) {
                continue;
            }
            if !self.previous.contains_key(name) {
                let before = auto_conf_value(server, name)?;
                self.previous.insert(name.clone(), before);
                self.write_journal()?;
            }
            server.query(&format!(
                "ALTER SYSTEM SET {name} = {}",
                quote_literal(value)
            ))?;
            self.applied.insert(name.clone(), value.clone());
            changed = true;
        }
        if changed {
            reload(server)?;
        }
        wanted
            .iter()
            .map(|(name, _)| {
                let value = server.value(&format!(
                    "SELECT pg_catalog.current_setting({})",
                    quote_literal(name)
                ))?;
                Ok((name.clone(), value))
            })
            .collect()
    }

    /// Puts back what the sweep changed; returns the names restored.
    pub fn restore(&mut self, server: &mut Server) -> Result<Vec<String>, SweepError> {
        if self.previous.is_empty() {
            return Ok(Vec::new());
        }
        for (name, before) in &self.previous {
            match before {
                Some(value) => server.query(&format!(
                    "ALTER SYSTEM SET {name} = {}",
                    quote_literal(value)
                ))?,
                None => server.query(&format!("ALTER SYSTEM RESET {name}"))?,
            };
        }
        reload(server)?;
        let names = self.previous.keys().cloned().collect();
        self.previous.clear();
        self.applied.clear();
        if let Some(journal) = &self.journal {
            journal.remove();
        }
        Ok(names)
    }
}

/// The value `postgresql.auto.conf` sets for `name`, if any; also checks that the
/// setting exists.
fn auto_conf_value(server: &mut Server, name: &str) -> Result<Option<String>, SweepError> {
    let known = server.value(&format!(
        "SELECT count(*) FROM pg_catalog.pg_settings WHERE name = {}",
        quote_literal(name)
    ))?;
    if known != "1" {
        return Err(SweepError::UnknownSetting(name.to_string()));
    }
    let results = server.query(&format!(
        "SELECT setting FROM pg_catalog.pg_file_settings WHERE name = {} \
         AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1",
        quote_literal(name)
    ))?;
    Ok(results.last().and_then(|r| r.get(0, 0)).map(str::to_string))
}

/// Reloads the configuration and waits until the sweep's session has read it; then
/// restarts the server when a changed setting waits for a restart.
fn reload(server: &mut Server) -> Result<(), SweepError> {
    let before = server.value("SELECT pg_catalog.pg_conf_load_time()")?;
    server.query("SELECT pg_catalog.pg_reload_conf()")?;
    let check = format!(
        "SELECT pg_catalog.pg_conf_load_time() > {}::timestamptz",
        quote_literal(&before)
    );
    let started = Instant::now();
    while server.value(&check)? != "t" {
        if started.elapsed() > RELOAD_TIMEOUT {
            return Err(SweepError::ReloadTimeout(RELOAD_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pending = server
        .query("SELECT name FROM pg_catalog.pg_settings WHERE pending_restart ORDER BY name")?;
    let names: Vec<String> = pending
        .last()
        .map(|r| r.rows().iter().filter_map(|row| row[0].clone()).collect())
        .unwrap_or_default();
    if names.is_empty() {
        return Ok(());
    }
    if !server.can_restart() {
        return Err(SweepError::NeedsRestart(names.join(", ")));
    }
    server.restart()
}
