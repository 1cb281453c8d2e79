//! The command line: the subset of pgbench's options that `bench/compare` passes.

use std::time::Duration;

use crate::error::FloorError;

/// How statements reach the server (pgbench's `-M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryMode {
    /// One Query message per statement, the parameters written into the SQL text.
    Simple,
    /// Statements prepared once per connection; per statement one Bind/Execute/Sync.
    Prepared,
}

impl QueryMode {
    /// The name pgbench prints in its report.
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// The built-in script run (pgbench's `-S` or `-b tpcb-like`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// `-S`: one SELECT on pgbench_accounts by a random aid.
    SelectOnly,
    /// `-b tpcb-like` (the default): BEGIN, three UPDATEs, a SELECT, an INSERT, END.
    TpcbLike,
    /// `-b tpcc-client-new-order`: pgrush's TPC-C-like New-Order in client mode (its
    /// statements, simple mode only), on the tables of `pgrush -i --workload tpcc`.
    TpccClientNewOrder,
}

impl Script {
    /// The name pgbench prints after `transaction type: `.
    pub fn name(self) -> &'static str {
        match self {
            Script::SelectOnly => "<builtin: select only>",
            Script::TpcbLike => "<builtin: TPC-B (sort of)>",
            Script::TpccClientNewOrder => "<builtin: TPC-C New-Order (client)>",
        }
    }

    /// The table whose row count is the scale (pgbench's branches, TPC-C's warehouses).
    pub fn scale_table(self) -> &'static str {
        match self {
            Script::SelectOnly | Script::TpcbLike => "pgbench_branches",
            Script::TpccClientNewOrder => "warehouse",
        }
    }
}

/// How a thread waits for its sockets (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    /// One `mio::Poll` (epoll) per thread; per round trip a `write` and a `read`.
    Epoll,
    /// One io_uring per thread: a multishot receive per client, and one submission per
    /// loop pass for the sends of all ready clients.
    Uring,
}

/// When the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `-T`: after this long (transactions in flight at the end are not counted).
    Duration(Duration),
    /// `-t`: after this many transactions per client.
    TransactionsPerClient(u64),
}

/// Where and as whom to connect; empty fields fall back to `PG*` variables, then defaults.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// Host name, or a directory holding the Unix socket when it starts with `/`.
    pub host: Option<String>,
    /// Server port.
    pub port: Option<u16>,
    /// User name.
    pub user: Option<String>,
    /// Database name.
    pub dbname: Option<String>,
}

/// Everything the command line says.
#[derive(Debug, Clone)]
pub struct Options {
    /// Clients (connections), `-c`.
    pub clients: usize,
    /// Threads, `-j` (at most `clients`).
    pub threads: usize,
    /// `-T` or `-t`.
    pub limit: Limit,
    /// `-M`.
    pub mode: QueryMode,
    /// `-S` or `-b`.
    pub script: Script,
    /// Connection settings.
    pub connection: Connection,
    /// `--io`.
    pub io: IoMode,
    /// `--describe`: prepared mode sends Describe of the portal with each Bind.
    pub describe: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            clients: 1,
            threads: 1,
            limit: Limit::TransactionsPerClient(10),
            mode: QueryMode::Simple,
            script: Script::TpcbLike,
            connection: Connection::default(),
            io: IoMode::Epoll,
            describe: false,
        }
    }
}

/// The usage text of `--help`.
pub const USAGE: &str = "\
pgrush-floor: the least work a PostgreSQL client can do per pgbench transaction.

Usage: pgrush-floor [OPTION]... [DBNAME]
       pgrush-floor init [OPTION]... [DBNAME]   (the -i floor: pgrush-floor init --help)

  -c NUM          number of clients (default 1)
  -j NUM          number of threads (default 1)
  -T SECONDS      run for this long
  -t NUM          transactions per client (default 10)
  -M simple|prepared   query mode (default simple)
  -S              select-only script
  -b NAME         built-in script: tpcb-like (default), select-only, or
                  tpcc-client-new-order (pgrush's TPC-C-like New-Order in client
                  mode, simple mode only, on pgrush -i --workload tpcc's tables)
  -n              accepted and ignored (the floor never vacuums)
  -h HOST         server host or Unix socket directory (default $PGHOST, /tmp)
  -p PORT         server port (default $PGPORT, 5432)
  -U USER         user name (default $PGUSER, $USER)
  -d DBNAME       database name (default $PGDATABASE, the user name)
  --io epoll|uring     how a thread waits for its sockets (default epoll); uring
                  falls back to epoll, with a notice, where io_uring is refused
  --describe      prepared mode: send Describe of the portal between Bind and
                  Execute, as libpq's PQsendQueryPrepared (so pgbench and pgrush)
                  does, so that the server does the same work per transaction
  --help          show this help and exit

Authentication must be trust: the floor sends no password.";

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run a benchmark.
    Run(Options),
    /// Print the usage and exit.
    Help,
}

/// Parses the arguments after the program name.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, FloorError> {
    let mut opts = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--help" {
            return Ok(Parsed::Help);
        }
        if arg == "--describe" {
            opts.describe = true;
            continue;
        }
        if let Some(value) = arg.strip_prefix("--io") {
            let value = match value.strip_prefix('=') {
                Some(v) => v.to_string(),
                None if value.is_empty() => args
                    .next()
                    .ok_or_else(|| FloorError::Usage("option --io needs a value".into()))?,
                None => return Err(FloorError::Usage(format!("unknown option {arg}"))),
            };
            opts.io = match value.as_str() {
                "epoll" => IoMode::Epoll,
                "uring" => IoMode::Uring,
                _ => return Err(invalid("-io", &value, "epoll or uring")),
            };
            continue;
        }
        let Some(flag) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            opts.connection.dbname = Some(arg);
            continue;
        };
        let (name, attached) = flag.split_at(1);
        if name == "n" || name == "S" {
            if name == "S" {
                opts.script = Script::SelectOnly;
            }
            if !attached.is_empty() {
                return Err(FloorError::Usage(format!("unexpected value after -{name}")));
            }
            continue;
        }
        let value = if attached.is_empty() {
            args.next()
                .ok_or_else(|| FloorError::Usage(format!("option -{name} needs a value")))?
        } else {
            attached.to_string()
        };
        apply(&mut opts, name, &value)?;
    }
    if opts.threads > opts.clients {
        opts.threads = opts.clients;
    }
    if opts.script == Script::TpccClientNewOrder && opts.mode != QueryMode::Simple {
        return Err(FloorError::Usage(
            "-b tpcc-client-new-order runs in simple mode only".into(),
        ));
    }
    Ok(Parsed::Run(opts))
}

/// Applies one option that takes a value.
fn apply(opts: &mut Options, name: &str, value: &str) -> Result<(), FloorError> {
    match name {
        "c" => opts.clients = positive(name, value)? as usize,
        "j" => opts.threads = positive(name, value)? as usize,
        "T" => opts.limit = Limit::Duration(Duration::from_secs(positive(name, value)?)),
        "t" => opts.limit = Limit::TransactionsPerClient(positive(name, value)?),
        "M" => {
            opts.mode = match value {
                "simple" => QueryMode::Simple,
                "prepared" => QueryMode::Prepared,
                _ => return Err(invalid(name, value, "simple or prepared")),
            }
        }
        "b" => {
            opts.script = match value {
                "tpcb-like" => Script::TpcbLike,
                "select-only" => Script::SelectOnly,
                "tpcc-client-new-order" => Script::TpccClientNewOrder,
                _ => {
                    return Err(invalid(
                        name,
                        value,
                        "tpcb-like, select-only or tpcc-client-new-order",
                    ));
                }
            }
        }
        "h" => opts.connection.host = Some(value.to_string()),
        "p" => {
            let port = value
                .parse::<u16>()
                .map_err(|_| invalid(name, value, "a port number"))?;
            opts.connection.port = Some(port);
        }
        "U" => opts.connection.user = Some(value.to_string()),
        "d" => opts.connection.dbname = Some(value.to_string()),
        _ => return Err(FloorError::Usage(format!("unknown option -{name}"))),
    }
    Ok(())
}

fn positive(name: &str, value: &str) -> Result<u64, FloorError> {
    match value.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(name, value, "a positive integer")),
    }
}

fn invalid(name: &str, value: &str, want: &str) -> FloorError {
    FloorError::Usage(format!(
        "invalid value \"{value}\" for -{name}: want {want}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, FloorError> {
        match parse(args.iter().map(|s| s.to_string()))? {
            Parsed::Run(o) => Ok(o),
            Parsed::Help => panic!("help"),
        }
    }

    #[test]
    fn compare_options_are_understood() {
        let o = run(&[
            "-S", "-M", "prepared", "-c", "4", "-j", "2", "-n", "-T", "5", "db",
        ])
        .unwrap();
        assert_eq!(o.script, Script::SelectOnly);
        assert_eq!(o.mode, QueryMode::Prepared);
        assert_eq!((o.clients, o.threads), (4, 2));
        assert_eq!(o.limit, Limit::Duration(Duration::from_secs(5)));
        assert_eq!(o.connection.dbname.as_deref(), Some("db"));
        assert_eq!(o.io, IoMode::Epoll);
        assert!(!o.describe);
        assert!(run(&["--describe", "-M", "prepared"]).unwrap().describe);
        let o = run(&["-b", "tpcc-client-new-order", "-c", "2"]).unwrap();
        assert_eq!(o.script, Script::TpccClientNewOrder);
    }

    #[test]
    fn io_mode_both_spellings() {
        assert_eq!(run(&["--io", "uring"]).unwrap().io, IoMode::Uring);
        assert_eq!(run(&["--io=epoll"]).unwrap().io, IoMode::Epoll);
    }

    #[test]
    fn attached_values_and_thread_cap() {
        let o = run(&["-c2", "-j8", "-t100", "-p5433", "-h/tmp/s"]).unwrap();
        assert_eq!((o.clients, o.threads), (2, 2));
        assert_eq!(o.limit, Limit::TransactionsPerClient(100));
        assert_eq!(o.connection.port, Some(5433));
        assert_eq!(o.connection.host.as_deref(), Some("/tmp/s"));
    }

    #[test]
    fn bad_input_is_an_error() {
        for bad in [
            &["-c", "0"][..],
            &["-M", "extended"],
            &["-x", "1"],
            &["-c"],
            &["-p", "x"],
            &["--io", "select"],
            &["--io"],
            &["--iox"],
            &["-b", "tpcc-client-new-order", "-M", "prepared"],
        ] {
            assert!(matches!(run(bad), Err(FloorError::Usage(_))), "{bad:?}");
        }
    }
}
