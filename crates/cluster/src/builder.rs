//! Configuring a cluster before it starts: installation, location, authentication,
//! roles, TLS, settings and `pg_hba.conf` lines.

use std::path::{Path, PathBuf};

use crate::error::ClusterError;
use crate::install::PgInstall;
use crate::tls::ServerTls;

/// The bootstrap superuser of every cluster.
pub(crate) const SUPERUSER: &str = "postgres";

/// The authentication method written to `pg_hba.conf` for everyone but the local superuser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Auth {
    /// No password (`trust`).
    #[default]
    Trust,
    /// Clear-text password (`password`); passwords stored as SCRAM.
    Password,
    /// `md5` (passwords stored as MD5, `password_encryption = md5`).
    Md5,
    /// `scram-sha-256`.
    Scram,
}

impl Auth {
    /// The `pg_hba.conf` method name.
    pub fn hba_method(self) -> &'static str {
        match self {
            Auth::Trust => "trust",
            Auth::Password => "password",
            Auth::Md5 => "md5",
            Auth::Scram => "scram-sha-256",
        }
    }

    fn password_encryption(self) -> &'static str {
        match self {
            Auth::Md5 => "md5",
            _ => "scram-sha-256",
        }
    }
}

/// Configures a [`Cluster`](crate::Cluster) before starting it ([`ClusterBuilder::start`]).
#[derive(Debug, Clone, Default)]
pub struct ClusterBuilder {
    bin_dir: Option<PathBuf>,
    install: Option<PgInstall>,
    directory: Option<PathBuf>,
    auth: Auth,
    users: Vec<(String, String)>,
    tls: Option<ServerTls>,
    settings: Vec<(String, String)>,
    listen_ipv6: bool,
    hba: Vec<String>,
}

impl ClusterBuilder {
    /// Uses the PostgreSQL programs in `path` instead of discovering them.
    pub fn bin_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.bin_dir = Some(path.into());
        self.install = None;
        self
    }

    /// Uses this installation (e.g. from [`PgInstall::for_major`]) instead of
    /// discovering one.
    pub fn install(mut self, install: PgInstall) -> Self {
        self.install = Some(install);
        self.bin_dir = None;
        self
    }

    /// Keeps the cluster in `dir` (created if missing, else it must be empty) instead of
    /// a throwaway temp dir: dropping the [`Cluster`] then stops the server with a fast
    /// shutdown and keeps the files (the watchdog does the same if this process dies).
    /// The path should be short: the server's Unix socket lives in `dir/sock`, and
    /// socket paths are limited to about 100 bytes.
    pub fn directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.directory = Some(dir.into());
        self
    }

    /// The authentication method for every connection except the local superuser's.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Adds a login role (a superuser) with this password, stored per [`ClusterBuilder::auth`].
    /// Naming `postgres` sets the bootstrap superuser's password instead.
    pub fn user(mut self, name: impl Into<String>, password: impl Into<String>) -> Self {
        self.users.push((name.into(), password.into()));
        self
    }

    /// Turns on TLS (`ssl = on`) with this certificate and key; `hostssl` lines for
    /// `127.0.0.1` and `::1` are added to `pg_hba.conf`.
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Sets a `postgresql.conf` parameter (the value is quoted as needed).
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// Also listens on `::1`.
    pub fn listen_ipv6(mut self, on: bool) -> Self {
        self.listen_ipv6 = on;
        self
    }

    /// Adds `pg_hba.conf` lines, matched before the generated ones (but after the line
    /// giving the local superuser `trust`, which the cluster's own administration needs).
    pub fn hba<I, S>(mut self, lines: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hba.extend(lines.into_iter().map(Into::into));
        self
    }

    /// Checks the settings and `pg_hba.conf` lines, then finds the installation
    /// to start the cluster from.
    pub(crate) fn checked_install(&self) -> Result<PgInstall, ClusterError> {
        for (name, _) in &self.settings {
            check_setting_name(name)?;
        }
        check_hba_lines(&self.hba)?;
        match (&self.install, &self.bin_dir) {
            (Some(install), _) => Ok(install.clone()),
            (None, Some(dir)) => PgInstall::from_bin_dir(dir),
            (None, None) => PgInstall::discover(),
        }
    }

    /// The directory chosen with [`ClusterBuilder::directory`], if any.
    pub(crate) fn kept_directory(&self) -> Option<&Path> {
        self.directory.as_deref()
    }

    pub(crate) fn auth_method(&self) -> Auth {
        self.auth
    }

    pub(crate) fn custom_hba(&self) -> &[String] {
        &self.hba
    }

    pub(crate) fn server_tls(&self) -> Option<&ServerTls> {
        self.tls.as_ref()
    }

    /// SQL creating the extra roles (or setting the superuser's password).
    pub(crate) fn roles_sql(&self) -> String {
        let mut sql = String::new();
        for (name, password) in &self.users {
            let (verb, extra) = if name == SUPERUSER {
                ("ALTER ROLE", "")
            } else {
                ("CREATE ROLE", " LOGIN SUPERUSER")
            };
            sql.push_str(&format!(
                "{verb} {}{extra} PASSWORD {};\n",
                quote_ident(name),
                quote_literal(password)
            ));
        }
        sql
    }

    /// The lines appended to `postgresql.conf`; `tls` holds the TLS settings, if any.
    pub(crate) fn config_text(
        &self,
        socket_dir: &Path,
        major: u32,
        tls: &[(String, String)],
    ) -> String {
        let listen = if self.listen_ipv6 {
            "127.0.0.1,::1"
        } else {
            "127.0.0.1"
        };
        let mut settings: Vec<(String, String)> = vec![
            ("listen_addresses".into(), listen.into()),
            (
                "unix_socket_directories".into(),
                socket_dir.display().to_string(),
            ),
            ("unix_socket_permissions".into(), "0777".into()),
            ("fsync".into(), "off".into()),
            ("synchronous_commit".into(), "off".into()),
            ("full_page_writes".into(), "off".into()),
            ("shared_buffers".into(), "32MB".into()),
            ("max_connections".into(), "200".into()),
            ("logging_collector".into(), "off".into()),
            // Segments in the data dir go away with it, even after a server is killed
            // (POSIX segments in /dev/shm would stay behind).
            ("dynamic_shared_memory_type".into(), "mmap".into()),
            (
                "password_encryption".into(),
                self.auth.password_encryption().into(),
            ),
        ];
        if major >= 18 {
            settings.push(("md5_password_warnings".into(), "off".into()));
        }
        settings.extend(tls.iter().cloned());
        settings.extend(self.settings.iter().cloned());
        let mut text = String::from("\n# pgrush cluster\n");
        for (name, value) in settings {
            text.push_str(&setting_line(&name, &value));
        }
        text
    }
}

/// `name = 'value'` and a newline.
pub(crate) fn setting_line(name: &str, value: &str) -> String {
    format!("{name} = {}\n", quote_literal(value))
}

/// The whole `pg_hba.conf`: the superuser's local `trust`, the custom lines, then the
/// method for everyone over the socket, TLS (when on) and TCP.
pub(crate) fn hba_text(auth: Auth, custom: &[String], tls: bool) -> String {
    let method = auth.hba_method();
    let mut lines = vec![format!("local all {SUPERUSER} trust")];
    lines.extend(custom.iter().cloned());
    lines.push(format!("local all all {method}"));
    if tls {
        lines.push(format!("hostssl all all 127.0.0.1/32 {method}"));
        lines.push(format!("hostssl all all ::1/128 {method}"));
    }
    lines.push(format!("host all all 127.0.0.1/32 {method}"));
    lines.push(format!("host all all ::1/128 {method}"));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A setting name must be a plain (possibly dotted) identifier.
pub(crate) fn check_setting_name(name: &str) -> Result<(), ClusterError> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if plain {
        Ok(())
    } else {
        Err(ClusterError::Invalid(format!("setting name {name:?}")))
    }
}

/// `pg_hba.conf` lines must be single lines.
pub(crate) fn check_hba_lines(lines: &[String]) -> Result<(), ClusterError> {
    if lines.iter().any(|l| l.contains('\n')) {
        return Err(ClusterError::Invalid("pg_hba line with a newline".into()));
    }
    Ok(())
}

/// An SQL identifier, double-quoted.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An SQL string literal, single-quoted.
pub fn quote_literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hba_keeps_superuser_trust_first_then_custom_lines() {
        let custom = vec!["hostssl all certuser 127.0.0.1/32 cert".to_string()];
        let hba = hba_text(Auth::Md5, &custom, true);
        let lines: Vec<&str> = hba.lines().collect();
        assert_eq!(lines[0], "local all postgres trust");
        assert_eq!(lines[1], "hostssl all certuser 127.0.0.1/32 cert");
        assert_eq!(lines[2], "local all all md5");
        assert!(lines.contains(&"hostssl all all 127.0.0.1/32 md5"));
        assert_eq!(lines.last(), Some(&"host all all ::1/128 md5"));
        let plain = hba_text(Auth::Trust, &[], false);
        assert!(!plain.contains("hostssl"));
        assert!(plain.contains("host all all 127.0.0.1/32 trust\n"));
    }

    #[test]
    fn config_quotes_values_and_follows_options() {
        let b = ClusterBuilder::default()
            .auth(Auth::Md5)
            .listen_ipv6(true)
            .setting("search_path", "a'b");
        let tls = [
            ("ssl".to_string(), "on".to_string()),
            ("ssl_key_file".to_string(), "/t/server.key".to_string()),
        ];
        let conf = b.config_text(Path::new("/s"), 18, &tls);
        assert!(conf.contains("listen_addresses = '127.0.0.1,::1'\n"));
        assert!(conf.contains("unix_socket_directories = '/s'\n"));
        assert!(conf.contains("password_encryption = 'md5'\n"));
        assert!(conf.contains("md5_password_warnings = 'off'\n"));
        assert!(conf.contains("ssl = 'on'\n"));
        assert!(conf.contains("ssl_key_file = '/t/server.key'\n"));
        assert!(conf.contains("search_path = 'a''b'\n"));
        // Settings given to the builder come last, so they win.
        assert!(conf.ends_with("search_path = 'a''b'\n"));
        let old = ClusterBuilder::default().config_text(Path::new("/s"), 15, &[]);
        assert!(!old.contains("md5_password_warnings"));
        assert!(!old.contains("ssl"));
        assert!(old.contains("password_encryption = 'scram-sha-256'\n"));
    }

    #[test]
    fn roles_sql_quotes_names_and_passwords() {
        let b = ClusterBuilder::default()
            .user("al\"ice", "pa'ss")
            .user("postgres", "pw");
        assert_eq!(
            b.roles_sql(),
            "CREATE ROLE \"al\"\"ice\" LOGIN SUPERUSER PASSWORD 'pa''ss';\n\
             ALTER ROLE \"postgres\" PASSWORD 'pw';\n"
        );
    }

    #[test]
    fn setting_names_and_hba_lines_are_checked() {
        assert!(check_setting_name("work_mem").is_ok());
        assert!(check_setting_name("auto_explain.log_min_duration").is_ok());
        assert!(check_setting_name("bad name").is_err());
        assert!(check_setting_name("").is_err());
        assert!(check_hba_lines(&["a\nb".to_string()]).is_err());
        assert!(check_hba_lines(&["host all all 0.0.0.0/0 trust".to_string()]).is_ok());
    }
}
