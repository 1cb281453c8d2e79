//! Establishing a connection: host list, address resolution, sockets, GSSAPI and SSL
//! negotiation, startup, authentication, target_session_attrs — with libpq's
//! accumulated messages.

mod failure;
mod gssenc;
mod net;
mod startup;

use failure::{Failure, Next};
pub(crate) use net::connect_unix;
use net::{Addr, open_socket, prefix, resolve};
use startup::{Encryption, attempt};

use crate::config::{ConnectConfig, Endpoint, GssEncMode, SslMode, TargetSessionAttrs};
use crate::conn::Connection;
use crate::error::ConnectError;

/// Checks `target_session_attrs`; returns the mismatch message.
fn check_session(conn: &mut Connection, want: TargetSessionAttrs) -> Result<(), Failure> {
    if want == TargetSessionAttrs::Any {
        return Ok(());
    }
    let standby = match conn.parameter("in_hot_standby") {
        Some(v) => v == "on",
        None => query_bool(conn, "SELECT pg_catalog.pg_is_in_recovery()")?,
    };
    let read_only = |conn: &mut Connection| -> Result<bool, Failure> {
        match (
            conn.parameter("default_transaction_read_only"),
            conn.parameter("in_hot_standby"),
        ) {
            (Some(v), Some(_)) => Ok(v == "on" || standby),
            _ => query_bool(conn, "SHOW transaction_read_only"),
        }
    };
    let problem = match want {
        TargetSessionAttrs::ReadWrite => read_only(conn)?.then_some("session is read-only"),
        TargetSessionAttrs::ReadOnly => (!read_only(conn)?).then_some("session is not read-only"),
        TargetSessionAttrs::Primary => standby.then_some("server is in hot standby mode"),
        TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => {
            (!standby).then_some("server is not in hot standby mode")
        }
        TargetSessionAttrs::Any => None,
    };
    match problem {
        Some(p) => Err(Failure::new(p, Next::OtherHost)),
        None => Ok(()),
    }
}

fn query_bool(conn: &mut Connection, sql: &str) -> Result<bool, Failure> {
    let results = conn
        .simple_query(sql)
        .map_err(|e| Failure::new(e.libpq_message(Some(sql)), Next::OtherHost))?;
    let v = results
        .first()
        .and_then(|r| r.get(0, 0))
        .unwrap_or("")
        .to_string();
    Ok(v == "on" || v == "t")
}

/// Random order for `load_balance_hosts=random` (identity when off).
struct Shuffler(Option<u64>);

impl Shuffler {
    fn new(on: bool) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        Shuffler(on.then_some(seed | 1))
    }

    fn next(&mut self, bound: usize) -> usize {
        let Some(x) = self.0.as_mut() else {
            return 0;
        };
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        (*x % bound as u64) as usize
    }

    /// Fisher-Yates.
    fn shuffle<T>(&mut self, items: &mut [T]) {
        if self.0.is_none() {
            return;
        }
        for i in (1..items.len()).rev() {
            let j = self.next(i + 1);
            items.swap(i, j);
        }
    }
}

/// The accumulated outcome of failed attempts, as libpq keeps it.
#[derive(Default)]
struct Failures {
    /// The error text so far (libpq's `PQerrorMessage`).
    text: String,
    /// The last SQLSTATE the server sent.
    sqlstate: Option<String>,
    /// Whether some server asked for a password that was not supplied.
    needs_password: bool,
    /// Whether some server was reached at all.
    server_reached: bool,
}

impl Failures {
    /// Adds one failed attempt at the address whose prefix is `pre`.
    fn record(&mut self, pre: &str, failure: &Failure, pgpass_file: Option<&str>) {
        if failure.prefixed {
            self.text.push_str(pre);
        }
        self.text.push_str(&failure.text);
        self.server_reached |= failure.reached;
        if failure.text.starts_with(crate::auth::NO_PASSWORD) {
            self.needs_password = true;
        }
        if failure.sqlstate.as_deref() == Some("28P01")
            && let Some(file) = pgpass_file
        {
            self.text
                .push_str(&format!("password retrieved from file \"{file}\"\n"));
        }
        if failure.sqlstate.is_some() {
            self.sqlstate = failure.sqlstate.clone();
        }
    }

    fn into_error(self) -> ConnectError {
        ConnectError::new(self.text, self.sqlstate)
            .with_needs_password(self.needs_password)
            .with_server_reached(self.server_reached)
    }
}

impl Connection {
    /// Connects with fully resolved settings (see [`ConnectConfig`]). The error text is
    /// libpq's `PQerrorMessage` for the same attempt, every failed host included.
    pub fn connect_config(cfg: &ConnectConfig) -> Result<Connection, ConnectError> {
        let mut failures = Failures::default();
        let passes = match cfg.target_session_attrs {
            TargetSessionAttrs::PreferStandby => {
                vec![TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            other => vec![other],
        };
        let mut endpoints: Vec<&Endpoint> = cfg.endpoints.iter().collect();
        let mut rng = Shuffler::new(cfg.load_balance);
        rng.shuffle(&mut endpoints);
        for want in passes {
            for &ep in &endpoints {
                if ep.valid_port().is_none() {
                    failures
                        .text
                        .push_str(&format!("invalid port number: \"{}\"\n", ep.port));
                    continue;
                }
                let mut addrs = match resolve(ep) {
                    Ok(a) => a,
                    Err(msg) => {
                        failures.text.push_str(&msg);
                        failures.text.push('\n');
                        continue;
                    }
                };
                rng.shuffle(&mut addrs);
                let (password, pgpass_file) = match (&cfg.password, &ep.pgpass) {
                    (Some(p), _) => (Some(p.as_str()), None),
                    (None, Some((p, file))) => (Some(p.as_str()), Some(file.as_str())),
                    (None, None) => (None, None),
                };
                'addr: for addr in &addrs {
                    let pre = prefix(ep, addr);
                    if let Some(msg) = &cfg.invalid_connect_timeout {
                        // A Unix socket that cannot be reached fails first, as in libpq
                        // (whose TCP connects are always still in progress here).
                        if let (Addr::Unix(_), Err(f)) = (addr, open_socket(addr, None, &cfg.tcp)) {
                            failures.text.push_str(&pre);
                            failures.text.push_str(&f.text);
                            continue 'addr;
                        }
                        failures.text.push_str(&pre);
                        failures.text.push_str(msg);
                        failures.text.push('\n');
                        return Err(ConnectError::new(failures.text, failures.sqlstate)
                            .with_server_reached(true));
                    }
                    let mut try_tls = !matches!(cfg.tls.mode, SslMode::Disable | SslMode::Allow);
                    let mut try_gss = cfg.gss.enc_mode != GssEncMode::Disable;
                    let mut retried = false;
                    loop {
                        let choice = Encryption { try_tls, try_gss };
                        let failure = match attempt(cfg, ep, addr, choice, password) {
                            Ok(mut conn) => match check_session(&mut conn, want) {
                                Ok(()) => return Ok(conn),
                                Err(f) => {
                                    let _ = conn.close();
                                    f
                                }
                            },
                            Err(f) => f,
                        };
                        failures.record(&pre, &failure, pgpass_file);
                        match failure.next {
                            Next::Stop => return Err(failures.into_error()),
                            Next::OtherAddr => continue 'addr,
                            Next::OtherHost => break 'addr,
                            Next::RetryPlain | Next::RetryTls if retried => {
                                return Err(failures.into_error());
                            }
                            // One retry without GSSAPI, besides the TLS retry.
                            Next::RetryWithoutGss => {
                                try_gss = false;
                                continue;
                            }
                            Next::RetryPlain => try_tls = false,
                            Next::RetryTls => try_tls = true,
                        }
                        retried = true;
                    }
                }
            }
        }
        Err(failures.into_error())
    }
}
