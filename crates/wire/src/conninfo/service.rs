//! Connection service files (`pg_service.conf`), read as libpq reads them.

use std::path::Path;

use super::env::Environment;
use super::error::ConninfoError;
use super::keywords::{OptionSet, index_of};
use super::store::bytes_to_string;
use pgrush_cconv::is_space;

/// The system configuration directory searched for `pg_service.conf` when
/// `PGSYSCONFDIR` is unset: Debian's libpq (and the PostgreSQL packages
/// pgbench ships in on Debian/Ubuntu) use `/etc/postgresql-common`.
pub const SYSCONFDIR: &str = "/etc/postgresql-common";

/// libpq reads service files with a 1024-byte line buffer; a line that
/// fills it (1023 bytes or more, newline included) is an error.
const LINE_LIMIT: usize = 1023;

/// If a service is named (`service` keyword or `PGSERVICE`), copies its
/// settings into `options` without overriding values already set.
pub(crate) fn apply_service(
    options: &mut OptionSet,
    env: &dyn Environment,
) -> Result<(), ConninfoError> {
    let service = match options.get("service") {
        Some(s) => s.to_string(),
        None => match env.var("PGSERVICE") {
            Some(s) => s,
            None => return Ok(()),
        },
    };

    let user_file = match env.var("PGSERVICEFILE") {
        Some(f) => Some(f),
        None => env
            .home_dir()
            .map(|h| format!("{}/.pg_service.conf", h.display()))
            .filter(|f| env.exists(Path::new(f))),
    };
    let found = match user_file {
        Some(file) => parse_service_file(&file, &service, options, env)?,
        None => false,
    };
    if found {
        return Ok(());
    }

    let sysconf = env
        .var("PGSYSCONFDIR")
        .unwrap_or_else(|| SYSCONFDIR.to_string());
    let file = format!("{sysconf}/pg_service.conf");
    if env.exists(Path::new(&file)) && parse_service_file(&file, &service, options, env)? {
        return Ok(());
    }
    Err(ConninfoError::ServiceNotFound(service))
}

/// Reads one service file; returns whether the service's section was found.
fn parse_service_file(
    file: &str,
    service: &str,
    options: &mut OptionSet,
    env: &dyn Environment,
) -> Result<bool, ConninfoError> {
    let contents = env
        .read_file(Path::new(file))
        .map_err(|_| ConninfoError::ServiceFileNotFound(file.to_string()))?;
    let data = &contents.data;
    let mut found = false;
    let mut line_no = 0;
    let mut pos = 0;
    while pos < data.len() {
        // One fgets() call: up to and including '\n', at most LINE_LIMIT bytes.
        let rest = &data[pos..];
        let mut len = rest
            .iter()
            .position(|&c| c == b'\n')
            .map_or(rest.len(), |i| i + 1);
        len = len.min(LINE_LIMIT);
        let chunk = &rest[..len];
        pos += len;
        line_no += 1;
        let chunk = chunk.split(|&c| c == 0).next().unwrap_or(&[]);
        if chunk.len() >= LINE_LIMIT {
            return Err(ConninfoError::ServiceLineTooLong {
                file: file.to_string(),
                line: line_no,
            });
        }
        let mut line = chunk;
        while let Some((&last, head)) = line.split_last() {
            if !is_space(last) {
                break;
            }
            line = head;
        }
        while let Some((&first, tail)) = line.split_first() {
            if !is_space(first) {
                break;
            }
            line = tail;
        }
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        if line[0] == b'[' {
            if found {
                return Ok(true);
            }
            let name = service.as_bytes();
            found = line.len() > name.len() + 1
                && &line[1..=name.len()] == name
                && line[name.len() + 1] == b']';
            continue;
        }
        if !found {
            continue;
        }
        let syntax = || ConninfoError::ServiceSyntax {
            file: file.to_string(),
            line: line_no,
        };
        let eq = line.iter().position(|&c| c == b'=').ok_or_else(syntax)?;
        let key = bytes_to_string(&line[..eq]);
        let value = bytes_to_string(&line[eq + 1..]);
        if key == "service" {
            return Err(ConninfoError::ServiceNested {
                file: file.to_string(),
                line: line_no,
            });
        }
        let index = index_of(&key).ok_or_else(syntax)?;
        if options.get_index(index).is_none() {
            options.set_index(index, value);
        }
    }
    Ok(found)
}
