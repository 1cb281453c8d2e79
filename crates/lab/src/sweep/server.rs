//! The server a sweep runs against: a throwaway cluster that pgrush starts (and can
//! restart), or a server given by the command line or the environment. Holds the
//! sweep's own setup connection (vacuum, checkpoint, settings, facts) and the
//! connection arguments of the child processes.

use super::error::SweepError;
use pgrush_cluster::Cluster;
use pgrush_wire::conninfo::{ConnectRequest, resolve};
use pgrush_wire::{Connection, QueryResult};

/// The server and the sweep's connection to it.
pub struct Server {
    /// How the setup connection is made.
    request: ConnectRequest,
    /// The setup connection, opened on first use and after a restart.
    conn: Option<Connection>,
    /// The throwaway cluster, when pgrush started one.
    cluster: Option<Cluster>,
    /// The connection arguments the child processes get.
    child_args: Vec<String>,
}

impl Server {
    /// Starts a throwaway cluster (as `pgrush demo` does); it is removed when the
    /// server is dropped.
    pub fn throwaway() -> Result<Server, SweepError> {
        let cluster = Cluster::builder()
            .setting("shared_buffers", "128MB")
            .start()
            .map_err(|e| SweepError::Cluster(e.to_string()))?;
        let host = cluster.socket_dir().display().to_string();
        let port = cluster.port().to_string();
        let user = cluster.superuser().to_string();
        let child_args = vec![
            format!("--host={host}"),
            format!("--port={port}"),
            format!("--username={user}"),
            "--dbname=postgres".to_string(),
        ];
        Ok(Server {
            request: ConnectRequest {
                dbname: Some("postgres".into()),
                host: Some(host),
                port: Some(port),
                user: Some(user),
                fallback_application_name: Some("pgrush sweep".into()),
                ..ConnectRequest::default()
            },
            conn: None,
            cluster: Some(cluster),
            child_args,
        })
    }

    /// A server given by `request` (what the children's `child_args` also name).
    pub fn given(request: ConnectRequest, child_args: Vec<String>) -> Server {
        Server {
            request,
            conn: None,
            cluster: None,
            child_args,
        }
    }

    /// A line saying which server this is.
    pub fn describe(&mut self) -> String {
        let version = self
            .value("SHOW server_version")
            .unwrap_or_else(|_| "?".into());
        match &self.cluster {
            Some(c) => format!(
                "a throwaway PostgreSQL {version} cluster from {} (socket {}, port {}), removed at the end",
                c.bin_dir().display(),
                c.socket_dir().display(),
                c.port()
            ),
            None => format!("PostgreSQL {version} as named by the command line or environment"),
        }
    }

    /// The connection arguments of the child processes.
    pub fn child_args(&self) -> &[String] {
        &self.child_args
    }

    /// True when pgrush controls the server and can restart it.
    pub fn can_restart(&self) -> bool {
        self.cluster.is_some()
    }

    /// Runs `sql` (one or more statements) on the setup connection, connecting first
    /// when needed.
    pub fn query(&mut self, sql: &str) -> Result<Vec<QueryResult>, SweepError> {
        if self.conn.is_none() {
            let params = resolve(&self.request).map_err(|e| SweepError::Connect(e.to_string()))?;
            let mut conn =
                Connection::connect(&params).map_err(|e| SweepError::Connect(e.to_string()))?;
            conn.set_notice_handler(Box::new(|_| {}));
            self.conn = Some(conn);
        }
        let conn = self.conn.as_mut().ok_or(SweepError::NotConnected)?;
        conn.simple_query(sql).map_err(|e| {
            let message = match &e {
                pgrush_wire::Error::Db(db) => db.libpq_message(Some(sql)),
                other => other.to_string(),
            };
            if !matches!(e, pgrush_wire::Error::Db(_)) {
                self.conn = None;
            }
            SweepError::Query {
                sql: sql.to_string(),
                message,
            }
        })
    }

    /// The first column of the first row of `sql`'s last result (empty when none).
    pub fn value(&mut self, sql: &str) -> Result<String, SweepError> {
        let results = self.query(sql)?;
        Ok(results
            .last()
            .and_then(|r| r.get(0, 0))
            .unwrap_or_default()
            .to_string())
    }

    /// Restarts the throwaway cluster (settings that need a restart); an error for a
    /// server pgrush does not control.
    pub fn restart(&mut self) -> Result<(), SweepError> {
        let cluster = self.cluster.as_ref().ok_or(SweepError::CannotRestart)?;
        if let Some(conn) = self.conn.take() {
            let _ = conn.close();
        }
        cluster
            .restart()
            .map_err(|e| SweepError::Cluster(e.to_string()))
    }
}
