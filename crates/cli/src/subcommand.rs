//! A subcommand's command line as data: its option table ([`Opt`]), read by the
//! main command's getopt (`parse::getopt`, glibc's `getopt_long` behaviour), and
//! its `--help` text, generated from the same table (as are the completions and
//! the man pages). Usage errors are [`Failure`] values in one voice for every
//! subcommand: glibc's line or `<prog>: error: <msg>`, then
//! `<prog>: hint: Try "<prog> NAME --help" for more information.`, exit status 1.

use std::ffi::OsString;

use pgrush_run::{Failure, Line};

use crate::about::bug_report_lines;
use crate::parse::getopt::{Getopt, HasArg, LongOpt, ShortOpt};
use crate::parse::table::{self, Mode, OptionDef};

/// The column where `--help` descriptions start (as in pgbench's help).
const DESCRIPTION_COLUMN: usize = 27;

/// One option of a subcommand's table.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// The short letter, if any.
    pub short: Option<char>,
    /// The long name without `--`.
    pub long: &'static str,
    /// Whether it takes a value.
    pub arg: HasArg,
    /// The value's name as `--help` writes it (`FILE`, `custom|directory`).
    pub value_name: Option<&'static str>,
    /// The `--help` description, one entry per line.
    pub help: &'static [&'static str],
    /// A pgbench option the subcommand hands on to pgbench's parser: listed here
    /// for `--help`, read with pgbench's own table.
    pub pgbench: bool,
}

impl Opt {
    /// An option without a value.
    pub const fn flag(
        short: Option<char>,
        long: &'static str,
        help: &'static [&'static str],
    ) -> Opt {
        Opt {
            short,
            long,
            arg: HasArg::No,
            value_name: None,
            help,
            pgbench: false,
        }
    }

    /// An option that needs a value named `value_name`.
    pub const fn valued(
        short: Option<char>,
        long: &'static str,
        value_name: &'static str,
        help: &'static [&'static str],
    ) -> Opt {
        Opt {
            short,
            long,
            arg: HasArg::Required,
            value_name: Some(value_name),
            help,
            pgbench: false,
        }
    }

    /// The same option, marked as pgbench's (handed on to pgbench's parser).
    pub const fn of_pgbench(self) -> Opt {
        Opt {
            pgbench: true,
            ..self
        }
    }

    /// `-h, --host=HOSTNAME`, as pgbench describes it.
    pub const HOST: Opt = Opt::valued(
        Some('h'),
        "host",
        "HOSTNAME",
        &["database server host or socket directory"],
    );

    /// `-p, --port=PORT`, as pgbench describes it.
    pub const PORT: Opt = Opt::valued(Some('p'), "port", "PORT", &["database server port number"]);

    /// `-U, --username=USERNAME`, as pgbench describes it.
    pub const USERNAME: Opt = Opt::valued(
        Some('U'),
        "username",
        "USERNAME",
        &["connect as specified database user"],
    );

    /// `-?, --help`: in every subcommand's table.
    pub const HELP: Opt = Opt::flag(Some('?'), "help", &["show this help, then exit"]);

    /// The synopsis `--help` prints: `-j, --jobs=N`, `--markdown`.
    pub fn synopsis(&self) -> String {
        let mut text = String::new();
        if let Some(short) = self.short {
            text.push_str(&format!("-{short}, "));
        }
        text.push_str("--");
        text.push_str(self.long);
        if let (HasArg::Required, Some(name)) = (self.arg, self.value_name) {
            text.push('=');
            text.push_str(name);
        }
        text
    }
}

/// What a subcommand takes after its options, for the completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// File names (or nothing: the shells then offer files, which does no harm).
    Files,
    /// One of these words.
    Words(&'static [&'static str]),
    /// The name of a subcommand.
    Subcommands,
}

/// Who ran the binary: the names messages use.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// argv[0] as typed (glibc's getopt lines).
    pub argv0: String,
    /// Its base name (pgbench's logging prefix, the `Try "<prog> ... --help"` hint).
    pub prog: String,
    /// Every subcommand (for those that describe the others: completions, man).
    pub subcommands: &'static [&'static Subcommand],
}

/// Runs a subcommand: its arguments (after its name) in, the exit status or a failure out.
pub type RunFn = fn(&Invocation, &[OsString]) -> Result<i32, Failure>;

/// One subcommand: `pgrush NAME ...`.
#[derive(Debug, Clone, Copy)]
pub struct Subcommand {
    /// The word after `pgrush`.
    pub name: &'static str,
    /// Its arguments as `pgrush --help` lists them (` RUN.json`).
    pub args: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Its `--help` before the options: what it does and its `Usage:` block
    /// (`{prog}` stands for the program's name).
    pub about: &'static str,
    /// Its option table, in `--help` order.
    pub options: &'static [Opt],
    /// Its `--help` after the options (may be empty).
    pub notes: &'static str,
    /// What follows the options.
    pub operands: Operands,
    /// True when every option of pgbench's table is read too (and handed on): the
    /// subcommand's own options override pgbench's of the same spelling.
    pub pgbench_options: bool,
    /// Runs it.
    pub run: RunFn,
}

impl Subcommand {
    /// Its `--help` text for the program named `prog`, ending with the bug-report lines.
    pub fn help_text(&self, prog: &str) -> String {
        let mut text = self.about.replace("{prog}", prog);
        text.push_str("Options:\n");
        let indent = " ".repeat(DESCRIPTION_COLUMN);
        for opt in self.options {
            let synopsis = opt.synopsis();
            text.push_str("  ");
            text.push_str(&synopsis);
            let mut lines = opt.help.iter();
            match (DESCRIPTION_COLUMN - 2).checked_sub(synopsis.len()) {
                Some(pad) if pad > 0 => {
                    if let Some(first) = lines.next() {
                        text.push_str(&" ".repeat(pad));
                        text.push_str(first);
                    }
                }
                _ => {}
            }
            text.push('\n');
            for line in lines {
                text.push_str(&indent);
                text.push_str(line);
                text.push('\n');
            }
        }
        text.push('\n');
        if !self.notes.is_empty() {
            text.push_str(&self.notes.replace("{prog}", prog));
            text.push('\n');
        }
        text.push_str(&bug_report_lines());
        text
    }

    /// Prints its `--help` text on stdout; exit status 0.
    pub fn print_help(&self, prog: &str) -> Result<i32, Failure> {
        write_stdout(self.help_text(prog).as_bytes())
    }

    /// A usage error of this subcommand: `<prog>: error: <msg>` and the hint to read
    /// its `--help`; exit status 1.
    pub fn usage(&self, msg: impl AsRef<[u8]>) -> Failure {
        Failure::usage(Some(self.name), msg)
    }

    /// Reads `args` with the subcommand's table (and, when it hands options on,
    /// pgbench's): `Ok(None)` when `--help` was asked for.
    pub fn scan(&self, args: &[OsString]) -> Result<Option<Scan>, Failure> {
        let raw: Vec<Vec<u8>> = args.iter().map(|a| a.as_encoded_bytes().to_vec()).collect();
        let (shorts, longs) = self.getopt_tables();
        let posixly_correct = std::env::var_os("POSIXLY_CORRECT").is_some();
        let mut getopt = Getopt::new(&raw, &shorts, &longs, posixly_correct);
        let mut scan = Scan::default();
        while let Some(found) = getopt.next_opt() {
            let found = found.map_err(|e| {
                Failure::exit(1)
                    .then(Line::Getopt(e.message()))
                    .then(Line::TryHelp(Some(self.name.to_string())))
            })?;
            if let Found::Own(opt) = found.id
                && opt.long == "help"
            {
                return Ok(None);
            }
            let value = found.arg.map(|v| String::from_utf8_lossy(v).into_owned());
            scan.options.push((found.id, value));
        }
        scan.operands = getopt
            .positional()
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        Ok(Some(scan))
    }

    /// getopt's tables: the subcommand's own options (pgrush's, so pgbench's win an
    /// abbreviation), then, when it hands options on, pgbench's that it does not
    /// spell itself.
    fn getopt_tables(&self) -> (Vec<ShortOpt<Found>>, Vec<LongOpt<Found>>) {
        let own = self.options.iter().filter(|o| !o.pgbench);
        let mut shorts: Vec<ShortOpt<Found>> = own
            .clone()
            .filter_map(|o| {
                Some(ShortOpt {
                    ch: u8::try_from(o.short?).ok()?,
                    has_arg: o.arg,
                    id: Found::Own(o),
                })
            })
            .collect();
        let mut longs: Vec<LongOpt<Found>> = own
            .map(|o| LongOpt {
                name: o.long,
                has_arg: o.arg,
                id: Found::Own(o),
                extension: true,
            })
            .collect();
        if self.pgbench_options {
            for s in table::short_options() {
                if !shorts.iter().any(|own| own.ch == s.ch) {
                    shorts.push(ShortOpt {
                        ch: s.ch,
                        has_arg: s.has_arg,
                        id: Found::Pgbench(s.id),
                    });
                }
            }
            for l in table::long_options() {
                if !longs.iter().any(|own| own.name == l.name) {
                    longs.push(LongOpt {
                        name: l.name,
                        has_arg: l.has_arg,
                        id: Found::Pgbench(l.id),
                        extension: l.extension,
                    });
                }
            }
        }
        (shorts, longs)
    }
}

/// An option getopt recognised.
#[derive(Clone, Copy)]
pub enum Found {
    /// One of the subcommand's own options.
    Own(&'static Opt),
    /// A pgbench option, handed on.
    Pgbench(&'static OptionDef),
}

impl std::fmt::Debug for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::Own(opt) => write!(f, "Own(--{})", opt.long),
            Found::Pgbench(def) => write!(f, "Pgbench(--{})", def.long),
        }
    }
}

impl Found {
    /// The long name.
    pub fn long(&self) -> &'static str {
        match self {
            Found::Own(opt) => opt.long,
            Found::Pgbench(def) => def.long,
        }
    }
}

/// A command line read with a subcommand's table.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The options in order, each with its value.
    pub options: Vec<(Found, Option<String>)>,
    /// The other arguments, in order.
    pub operands: Vec<String>,
}

impl Scan {
    /// The pgbench options handed on, in order.
    pub fn pgbench_args(&self) -> impl Iterator<Item = HandedOn> + '_ {
        self.options
            .iter()
            .filter_map(|(found, value)| match found {
                Found::Pgbench(def) => Some(HandedOn {
                    long: def.long,
                    mode: def.mode,
                    text: match value {
                        Some(v) => format!("--{}={v}", def.long),
                        None => format!("--{}", def.long),
                    },
                }),
                Found::Own(_) => None,
            })
    }
}

/// A pgbench option a subcommand hands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOn {
    /// Its long name.
    pub long: &'static str,
    /// The mode pgbench's table gives it.
    pub mode: Mode,
    /// The option as one argument: `--long=value` (or `--long`).
    pub text: String,
}

/// A positive integer option value, or a usage error of `sub` naming the option.
pub fn positive(sub: &Subcommand, long: &str, value: &str) -> Result<u32, Failure> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            sub.usage(format!(
                "invalid value \"{value}\" for --{long}: a positive integer is needed"
            ))
        })
}

/// Writes `bytes` to standard output: exit status 0, or a failure saying why not.
pub fn write_stdout(bytes: &[u8]) -> Result<i32, Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(0),
        Err(err) => Err(Failure::error(format!(
            "could not write to standard output: {err}"
        ))),
    }
}
