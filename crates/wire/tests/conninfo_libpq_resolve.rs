//! `resolve` against libpq itself: for each case the process environment is
//! set up (variables, service files in a temp dir), then libpq's
//! `PQconnectStartParams` is given the keyword array pgbench passes (with
//! `expand_dbname`) and `PQconninfo` / `PQerrorMessage` are compared with
//! `resolve`'s parameters / error. Connections go to sockets in an empty temp
//! directory or to 127.0.0.1 port 1, so nothing is ever reached.
//!
//! This binary holds a single test because it changes the process environment.
//!
//! The libpq here (pq-sys, bundled) is built without GSSAPI, pgrush behaves as
//! a libpq built with it whose GSSAPI library is missing (the test points
//! `PGRUSH_GSSAPI_LIBRARY` at a library that does not exist): `gssencmode`
//! defaults to `prefer` instead of `disable`, and `gssencmode=require` is
//! refused with the loader's reason instead of `is not compiled in`.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pgrush_wire::conninfo::{ConnectRequest, lookup_password, resolve};

type Outcome = Result<BTreeMap<String, String>, String>;

struct Case {
    name: &'static str,
    env: &'static [(&'static str, &'static str)],
    /// (path under the temp dir, contents, permission bits)
    files: &'static [(&'static str, &'static str, u32)],
    req: ConnectRequest,
}

fn req(
    host: Option<&str>,
    port: Option<&str>,
    user: Option<&str>,
    dbname: Option<&str>,
    extra: &[(&str, &str)],
) -> ConnectRequest {
    ConnectRequest {
        host: host.map(Into::into),
        port: port.map(Into::into),
        user: user.map(Into::into),
        password: None,
        dbname: dbname.map(Into::into),
        fallback_application_name: Some("pgbench".into()),
        extra: extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn cstr(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: libpq returns NUL-terminated strings.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// pgbench's dbname default, which it computes before calling libpq.
fn pgbench_dbname(r: &ConnectRequest) -> Option<String> {
    r.dbname.clone().or_else(|| {
        ["PGDATABASE", "PGUSER"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
            .or_else(|| std::env::var("TEST_OS_USER").ok())
    })
}

fn libpq_resolve(r: &ConnectRequest) -> Outcome {
    let dbname = pgbench_dbname(r);
    let mut pairs: Vec<(String, Option<String>)> = vec![
        ("host".into(), r.host.clone()),
        ("port".into(), r.port.clone()),
        ("user".into(), r.user.clone()),
        ("password".into(), r.password.clone()),
        ("dbname".into(), dbname),
        (
            "fallback_application_name".into(),
            r.fallback_application_name.clone(),
        ),
    ];
    pairs.extend(r.extra.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
    let keys: Vec<CString> = pairs
        .iter()
        .map(|(k, _)| CString::new(k.as_str()).unwrap_or_default())
        .collect();
    let vals: Vec<Option<CString>> = pairs
        .iter()
        .map(|(_, v)| {
            v.as_ref()
                .map(|v| CString::new(v.as_str()).unwrap_or_default())
        })
        .collect();
    let mut kp: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
    let mut vp: Vec<*const c_char> = vals
        .iter()
        .map(|v| v.as_ref().map_or(std::ptr::null(), |v| v.as_ptr()))
        .collect();
    kp.push(std::ptr::null());
    vp.push(std::ptr::null());
    // SAFETY: NULL-terminated arrays of valid C strings (or NULL values).
    let conn = unsafe { pq_sys::PQconnectStartParams(kp.as_ptr(), vp.as_ptr(), 1) };
    assert!(!conn.is_null());
    // SAFETY: conn is live until PQfinish below.
    let status = unsafe { pq_sys::PQstatus(conn) };
    let message = cstr(unsafe { pq_sys::PQerrorMessage(conn) }).unwrap_or_default();
    let result = if status == pq_sys::ConnStatusType::CONNECTION_BAD
        && !message.starts_with("connection to server")
    {
        Err(message.trim_end_matches('\n').to_string())
    } else {
        let opts = unsafe { pq_sys::PQconninfo(conn) };
        let mut map = BTreeMap::new();

        let mut p = opts;
        // SAFETY: opts is a live, NULL-keyword-terminated array.
        unsafe {
            while !(*p).keyword.is_null() {
                if let (Some(k), Some(v)) = (cstr((*p).keyword), cstr((*p).val)) {
                    map.insert(k, v);
                }
                p = p.add(1);
            }
            pq_sys::PQconninfoFree(opts);
        }
        let single = ["host", "hostaddr"]
            .iter()
            .all(|k| map.get(*k).is_none_or(|v| !v.contains(',')));
        if single {
            // SAFETY: conn is live; PQpass returns a string owned by conn.
            let pass = cstr(unsafe { pq_sys::PQpass(conn) }).unwrap_or_default();
            map.insert("PQpass()".to_string(), pass);
        }
        Ok(map)
    };
    unsafe { pq_sys::PQfinish(conn) };
    result
}

fn our_resolve(r: &ConnectRequest) -> Outcome {
    let params = resolve(r).map_err(|e| e.to_string())?;
    let mut map: BTreeMap<String, String> = params.to_pairs().into_iter().collect();
    let passfile = params.passfile().filter(|_| params.password().is_none());
    if let Some(f) = passfile {
        map.entry("passfile".into())
            .or_insert_with(|| f.display().to_string());
    }
    if params.hosts().len() == 1 {
        let pass = match params.password() {
            Some(p) => p.to_string(),
            None => lookup_password(&params, &params.hosts()[0])
                .password
                .unwrap_or_default(),
        };
        map.insert("PQpass()".to_string(), pass);
    }
    map.entry("sslcertmode".into())
        .or_insert_with(|| params.sslcertmode().as_str().to_string());
    // Consistency of the typed getters with the raw values.
    if let Some(m) = map.get("sslmode") {
        assert_eq!(params.sslmode().as_str(), m);
    }
    assert_eq!(map.get("user").map(String::as_str), Some(params.user()));
    assert_eq!(map.get("dbname").map(String::as_str), Some(params.dbname()));
    Ok(map)
}

/// A GSSAPI library that does not exist.
const NO_GSSAPI: &str = "libpgrush-test-no-gssapi.so.2";

/// Whether a case sets `gssencmode` itself (else the defaults differ).
fn sets_gssencmode(case: &Case) -> bool {
    format!("{:?}", case.req).contains("gssencmode")
        || case.env.iter().any(|(k, _)| *k == "PGGSSENCMODE")
        || case
            .files
            .iter()
            .any(|(_, text, _)| text.contains("gssencmode"))
}

/// libpq's outcome as a libpq with GSSAPI support but without its library
/// would give it (see the module comment).
fn as_with_gssapi(case: &Case, libpq: Outcome) -> Outcome {
    match libpq {
        Ok(mut map) => {
            if !sets_gssencmode(case) && map.get("gssencmode").map(String::as_str) == Some("disable")
            {
                map.insert("gssencmode".into(), "prefer".into());
            }
            Ok(map)
        }
        Err(e) => Err(e.replace(
            "is not compiled in",
            &format!(
                "is not available: {NO_GSSAPI}: cannot open shared object file: No such file or directory"
            ),
        )),
    }
}

fn clear_pg_env() {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("PG"))
        .collect();
    for k in names {
        // SAFETY: this binary runs a single test on a single thread.
        unsafe { std::env::remove_var(k) };
    }
}

fn setup(case: &Case, dir: &Path) {
    clear_pg_env();
    let t = dir.display().to_string();
    std::fs::create_dir_all(dir.join("home")).unwrap_or_default();
    std::fs::create_dir_all(dir.join("sys")).unwrap_or_default();
    // SAFETY: single-threaded test binary.
    unsafe {
        std::env::set_var("HOME", dir.join("home"));
        std::env::set_var("PGSYSCONFDIR", dir.join("sys"));
        for (k, v) in case.env {
            std::env::set_var(k, v.replace("$T", &t));
        }
    }
    for (rel, content, mode) in case.files {
        let path = dir.join(rel);
        if content.is_empty() {
            std::fs::create_dir_all(&path).unwrap_or_default();
            continue;
        }
        std::fs::write(&path, content.replace("$T", &t)).unwrap_or_default();
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode));
    }
}

const SVC: &str = "# comment\n\n[one]\nhost=/svc/one\nport=6001\ndbname=svcdb\nuser=svcuser\n\n[two]\n  host=/svc/two  \napplication_name=two app\n[three]\nhost = bad\n[four]\nservice=one\n[five]\nnohost=1\n[six]\nhost\n";

const PGPASS: &str = "# comment\n$T/sock:5432:d:u1:pw-socket\nlocalhost:5432:d:u2:pw-localhost\nlocalhost:1:d:u2:pw-tcp\n127.0.0.1:1:u3:u3:pw-addr\n$T/sock:5:d\\\\b:we\\:ird:pw\\:esc\\\\aped\n*:*:*:anyone:pw-any\n";

fn cases() -> Vec<Case> {
    let mut v = vec![
        Case {
            name: "explicit",
            env: &[],
            files: &[],
            req: req(Some("$S"), Some("5433"), Some("alice"), Some("db1"), &[]),
        },
        Case {
            name: "env only",
            env: &[
                ("PGHOST", "$T/sock"),
                ("PGPORT", "7777"),
                ("PGUSER", "bob"),
                ("PGDATABASE", "envdb"),
                ("PGOPTIONS", "-c geqo=off"),
                ("PGAPPNAME", "app"),
                ("PGCONNECT_TIMEOUT", "3"),
                ("PGTARGETSESSIONATTRS", "read-write"),
                ("PGCLIENTENCODING", "LATIN1"),
            ],
            files: &[],
            req: req(None, None, None, None, &[]),
        },
        Case {
            name: "explicit beats env",
            env: &[
                ("PGHOST", "/envhost"),
                ("PGPORT", "7777"),
                ("PGUSER", "bob"),
            ],
            files: &[],
            req: req(Some("$S"), Some("5"), Some("carol"), Some("d"), &[]),
        },
        Case {
            name: "pgbench dbname from PGUSER",
            env: &[("PGUSER", "dave")],
            files: &[],
            req: req(Some("$S"), None, Some("erin"), None, &[]),
        },
        Case {
            name: "PGDATABASE conninfo expanded",
            env: &[("PGDATABASE", "port=7 dbname=x application_name=fromenv")],
            files: &[],
            req: req(Some("$S"), Some("5"), None, None, &[]),
        },
        Case {
            name: "dbname conninfo overrides -h -p -U",
            env: &[],
            files: &[],
            req: req(
                Some("/h"),
                Some("5"),
                Some("u"),
                Some("host=$T/x port=6 user=v dbname=real sslmode=disable"),
                &[],
            ),
        },
        Case {
            name: "dbname URI",
            env: &[],
            files: &[],
            req: req(
                Some("/h"),
                None,
                None,
                Some("postgresql://w@%2Ftmp%2Fnone:9/uridb?application_name=u%20ri"),
                &[],
            ),
        },
        Case {
            name: "dbname conninfo without dbname",
            env: &[("PGDATABASE", "fromenv")],
            files: &[],
            req: req(None, None, Some("u"), Some("host=$T/none"), &[]),
        },
        Case {
            name: "bad dbname conninfo",
            env: &[],
            files: &[],
            req: req(None, None, None, Some("host=x bogus=1"), &[]),
        },
        Case {
            name: "bad dbname URI",
            env: &[],
            files: &[],
            req: req(None, None, None, Some("postgresql://[::1"), &[]),
        },
        Case {
            name: "unknown extra keyword",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[("nosuch", "1")]),
        },
        Case {
            name: "empty extra ignored",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[("nosuch", "")]),
        },
        Case {
            name: "extra after dbname",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("port=1"),
                &[("port", "2"), ("sslmode", "disable")],
            ),
        },
        Case {
            name: "service via PGSERVICEFILE",
            env: &[("PGSERVICEFILE", "$T/svc.conf"), ("PGSERVICE", "one")],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service keyword in dbname",
            env: &[("PGSERVICEFILE", "$T/svc.conf")],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(None, Some("9"), None, Some("service=two"), &[]),
        },
        Case {
            name: "service loses to explicit and beats env",
            env: &[
                ("PGSERVICEFILE", "$T/svc.conf"),
                ("PGSERVICE", "one"),
                ("PGPORT", "1234"),
                ("PGAPPNAME", "envapp"),
            ],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(Some("$S"), None, Some("x"), Some("d"), &[]),
        },
        Case {
            name: "service in home file",
            env: &[("PGSERVICE", "two")],
            files: &[("home/.pg_service.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service in sysconf file",
            env: &[("PGSERVICE", "one")],
            files: &[("sys/pg_service.conf", SVC, 0o600)],
            req: req(None, None, None, None, &[]),
        },
        Case {
            name: "home file lacks service, sysconf has it",
            env: &[("PGSERVICE", "one")],
            files: &[
                ("home/.pg_service.conf", "[other]\nport=1\n", 0o600),
                ("sys/pg_service.conf", SVC, 0o600),
            ],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service not found",
            env: &[("PGSERVICE", "missing")],
            files: &[("sys/pg_service.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service file missing",
            env: &[("PGSERVICE", "one"), ("PGSERVICEFILE", "$T/nope.conf")],
            files: &[],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service syntax error",
            env: &[("PGSERVICE", "three"), ("PGSERVICEFILE", "$T/svc.conf")],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service nested",
            env: &[("PGSERVICE", "four"), ("PGSERVICEFILE", "$T/svc.conf")],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service unknown keyword",
            env: &[("PGSERVICE", "five"), ("PGSERVICEFILE", "$T/svc.conf")],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "service line without =",
            env: &[("PGSERVICE", "six"), ("PGSERVICEFILE", "$T/svc.conf")],
            files: &[("svc.conf", SVC, 0o600)],
            req: req(None, None, None, Some("d"), &[]),
        },
        Case {
            name: "PGREQUIRESSL",
            env: &[("PGREQUIRESSL", "1")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "PGSSLMODE beats PGREQUIRESSL",
            env: &[("PGREQUIRESSL", "1"), ("PGSSLMODE", "allow")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "sslrootcert=system upgrades default",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("sslrootcert=system"), &[]),
        },
        Case {
            name: "sslrootcert=system with require",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("sslrootcert=system sslmode=require"),
                &[],
            ),
        },
        Case {
            name: "invalid sslmode",
            env: &[("PGSSLMODE", "sometimes")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "direct with prefer",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("sslnegotiation=direct"), &[]),
        },
        Case {
            name: "direct with require",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("sslnegotiation=direct sslmode=require"),
                &[],
            ),
        },
        Case {
            name: "bad sslnegotiation",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("sslnegotiation=fast"), &[]),
        },
        Case {
            name: "ssl range",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=tlsv1.2"),
                &[],
            ),
        },
        Case {
            name: "bad ssl version",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("ssl_max_protocol_version=TLSv2"),
                &[],
            ),
        },
        Case {
            name: "bad sslcertmode",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("sslcertmode=always"), &[]),
        },
        Case {
            name: "gssencmode require",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("gssencmode=require"), &[]),
        },
        Case {
            name: "bad gssencmode",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("gssencmode=maybe"), &[]),
        },
        Case {
            name: "bad channel_binding",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("channel_binding=yes"), &[]),
        },
        Case {
            name: "bad target_session_attrs",
            env: &[("PGTARGETSESSIONATTRS", "master")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "bad load_balance_hosts",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("load_balance_hosts=yes"), &[]),
        },
        Case {
            name: "protocol range",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("min_protocol_version=latest max_protocol_version=3.0"),
                &[],
            ),
        },
        Case {
            name: "bad protocol version",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("min_protocol_version=3.1"),
                &[],
            ),
        },
        Case {
            name: "require_auth mixed",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("require_auth=md5,!password"),
                &[],
            ),
        },
        Case {
            name: "require_auth duplicate",
            env: &[("PGREQUIREAUTH", "scram-sha-256,scram-sha-256")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "require_auth bad",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("require_auth=cert"), &[]),
        },
        Case {
            name: "scram key bad",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("scram_client_key=!!!!"), &[]),
        },
        Case {
            name: "scram key short",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("scram_server_key=AAAA"), &[]),
        },
        Case {
            name: "scram key ok",
            env: &[],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("scram_client_key=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
                &[],
            ),
        },
        Case {
            name: "ports mismatch",
            env: &[],
            files: &[],
            req: req(Some("$T/a,$T/b,$T/c"), Some("1,2"), None, Some("d"), &[]),
        },
        Case {
            name: "one port many hosts",
            env: &[],
            files: &[],
            req: req(Some("$T/a,$T/b"), Some("5"), None, Some("d"), &[]),
        },
        Case {
            name: "hostaddr mismatch",
            env: &[],
            files: &[],
            req: req(
                Some("a,b,c"),
                None,
                None,
                Some("hostaddr=127.0.0.1,127.0.0.1 port=1"),
                &[],
            ),
        },
        Case {
            name: "hostaddr with hosts",
            env: &[("PGHOSTADDR", "127.0.0.1,127.0.0.1")],
            files: &[],
            req: req(Some("a,b"), Some("1"), None, Some("d"), &[]),
        },
        Case {
            name: "empty strings skipped",
            env: &[("PGPORT", "4444")],
            files: &[],
            req: req(Some("$S"), Some(""), Some(""), Some("d"), &[]),
        },
        Case {
            name: "empty conninfo values kept",
            env: &[("PGPORT", "4444"), ("PGAPPNAME", "envapp")],
            files: &[],
            req: req(
                Some("$S"),
                None,
                None,
                Some("port='' application_name='' dbname=d"),
                &[],
            ),
        },
        Case {
            name: "passfile from env",
            env: &[("PGPASSFILE", "$T/pw")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "password suppresses passfile",
            env: &[("PGPASSWORD", "secret")],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "requiressl in dbname",
            env: &[],
            files: &[],
            req: req(Some("$S"), None, None, Some("requiressl=1"), &[]),
        },
        Case {
            name: "many env vars",
            env: &[
                ("PGSSLCERT", "/c.crt"),
                ("PGSSLKEY", "/c.key"),
                ("PGSSLROOTCERT", "/r.crt"),
                ("PGSSLCRL", "/r.crl"),
                ("PGSSLSNI", "0"),
                ("PGREQUIREPEER", "pg"),
                ("PGKRBSRVNAME", "k"),
                ("PGGSSLIB", "gssapi"),
                ("PGSSLCOMPRESSION", "1"),
                ("PGCHANNELBINDING", "disable"),
                ("PGLOADBALANCEHOSTS", "random"),
                ("PGMINPROTOCOLVERSION", "3.2"),
                ("PGSSLNEGOTIATION", "postgres"),
                ("PGSSLCERTMODE", "disable"),
                ("PGGSSENCMODE", "disable"),
            ],
            files: &[],
            req: req(Some("$S"), None, None, Some("d"), &[]),
        },
        Case {
            name: "pgpass socket dir",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(Some("$S"), None, Some("u1"), Some("d"), &[]),
        },
        Case {
            name: "pgpass default host is localhost",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(None, None, Some("u2"), Some("d"), &[]),
        },
        Case {
            name: "pgpass tcp localhost",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(
                Some("localhost"),
                Some("1"),
                Some("u2"),
                Some("d"),
                &[("hostaddr", "127.0.0.1")],
            ),
        },
        Case {
            name: "pgpass hostaddr only",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(None, Some("1"), Some("u3"), Some("hostaddr=127.0.0.1"), &[]),
        },
        Case {
            name: "pgpass escapes",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(Some("$S"), Some("5"), Some("we:ird"), Some("d\\b"), &[]),
        },
        Case {
            name: "pgpass wildcard",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(Some("$S"), Some("9"), Some("anyone"), Some("x"), &[]),
        },
        Case {
            name: "pgpass no match",
            env: &[],
            files: &[("home/.pgpass", "h:1:d:u:p\n", 0o600)],
            req: req(Some("$S"), None, Some("zed"), Some("d"), &[]),
        },
        Case {
            name: "pgpass world readable",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o644)],
            req: req(Some("$S"), None, Some("u1"), Some("d"), &[]),
        },
        Case {
            name: "pgpass group readable",
            env: &[],
            files: &[("home/.pgpass", PGPASS, 0o640)],
            req: req(Some("$S"), None, Some("u1"), Some("d"), &[]),
        },
        Case {
            name: "pgpass is a directory",
            env: &[("PGPASSFILE", "$T/pwdir")],
            files: &[("pwdir", "", 0o700)],
            req: req(Some("$S"), None, Some("u1"), Some("d"), &[]),
        },
        Case {
            name: "pgpass via PGPASSFILE",
            env: &[("PGPASSFILE", "$T/pw")],
            files: &[("pw", PGPASS, 0o400)],
            req: req(Some("$S"), None, Some("u1"), Some("d"), &[]),
        },
        Case {
            name: "pgpass via passfile keyword",
            env: &[],
            files: &[("pw", PGPASS, 0o600)],
            req: req(
                Some("$S"),
                None,
                Some("u1"),
                Some("passfile=$T/pw dbname=d"),
                &[],
            ),
        },
        Case {
            name: "pgpass not used with password",
            env: &[("PGPASSWORD", "given")],
            files: &[("home/.pgpass", PGPASS, 0o600)],
            req: req(Some("$S"), None, Some("u1"), Some("d"), &[]),
        },
        Case {
            name: "pgpass CRLF and trailing fields",
            env: &[],
            files: &[("home/.pgpass", "*:*:*:crlf:pw\\:x:ignored\r\n", 0o600)],
            req: req(Some("$S"), None, Some("crlf"), Some("d"), &[]),
        },
    ];
    // Service-file lines at the 1024-byte buffer boundary.
    for (name, len) in [
        ("service line of 1022 bytes", 1017),
        ("service line of 1021 bytes", 1016),
    ] {
        let text: &'static str = Box::leak(
            format!("[long]\napplication_name={}\n", "a".repeat(len - 12)).into_boxed_str(),
        );
        let files: &'static [(&'static str, &'static str, u32)] =
            Box::leak(vec![("svc.conf", text, 0o600)].into_boxed_slice());
        v.push(Case {
            name,
            env: &[("PGSERVICEFILE", "$T/svc.conf"), ("PGSERVICE", "long")],
            files,
            req: req(None, None, None, Some("d"), &[]),
        });
    }
    v
}

#[test]
fn resolve_matches_libpq() {
    let user = std::process::Command::new("id")
        .arg("-un")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut failures = Vec::new();
    let cases = cases();
    let mut errors = 0;
    for case in &cases {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        setup(case, dir.path());
        // SAFETY: single-threaded test binary.
        unsafe { std::env::set_var("TEST_OS_USER", &user) };
        let t = dir.path().display().to_string();
        let sub = |o: &Option<String>| {
            o.as_ref()
                .map(|v| v.replace("$S", &format!("{t}/sock")).replace("$T", &t))
        };
        let mut r = case.req.clone();
        r.host = sub(&r.host);
        r.dbname = sub(&r.dbname);
        r.extra = r
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), v.replace("$T", &t)))
            .collect();
        // SAFETY: single-threaded test binary.
        unsafe { std::env::set_var("PGRUSH_GSSAPI_LIBRARY", NO_GSSAPI) };
        let expected = as_with_gssapi(case, libpq_resolve(&r));
        let got = our_resolve(&r);
        if expected.is_err() {
            errors += 1;
        }
        if std::env::var("CONNINFO_DEBUG").is_ok() {
            eprintln!("{}: {:?}", case.name, expected);
        }
        if got != expected {
            failures.push(format!(
                "case {:?}\n  libpq:  {expected:?}\n  pgrush: {got:?}",
                case.name
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(errors >= 25, "only {errors} error cases");
}
