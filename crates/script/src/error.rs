//! Error types. Every `Display` is pgbench's message text without the
//! `pgbench: error: ` prefix (the CLI/engine adds `pgrush: error: `).

use std::borrow::Cow;
use std::io::Write;

use thiserror::Error;

/// Text of script bytes for `Display` (bytes that are not UTF-8 replaced).
fn lossy(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Errors whose text may carry script bytes that are not UTF-8 (a Latin-1 script
/// line, a `-D` value, shell output). pgbench prints those bytes as they are;
/// `Display` replaces invalid sequences, [`RawMessage::to_bytes`] does not.
pub trait RawMessage: std::fmt::Display {
    /// Appends the exact message bytes (same text as `Display`, raw bytes kept).
    fn write_raw(&self, out: &mut Vec<u8>);

    /// The exact message bytes.
    fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.write_raw(&mut v);
        v
    }
}

/// Appends `Display` text (for variants without raw bytes).
fn display_into(e: &dyn std::fmt::Display, out: &mut Vec<u8>) {
    let _ = write!(out, "{e}");
}

/// A run-time expression evaluation failure (the client aborts).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EvalError {
    /// `undefined variable "x"`.
    #[error("undefined variable \"{}\"", lossy(.0))]
    UndefinedVariable(Vec<u8>),
    /// `cannot coerce <type> to <type>`.
    #[error("cannot coerce {from} to {to}")]
    Coerce {
        /// Source type name.
        from: &'static str,
        /// Target type name.
        to: &'static str,
    },
    /// `double to int overflow for %f`.
    #[error("double to int overflow for {0}")]
    DoubleToInt(String),
    /// Integer arithmetic overflow (`bigint add out of range`, ...; the operation word).
    #[error("bigint {0} out of range")]
    BigintOverflow(&'static str),
    /// `division by zero`.
    #[error("division by zero")]
    DivisionByZero,
    /// `empty range given to random`.
    #[error("empty range given to random")]
    EmptyRange,
    /// `random range is too large`.
    #[error("random range is too large")]
    RangeTooLarge,
    /// `gaussian parameter must be at least 2.000000 (not %f)`.
    #[error("gaussian parameter must be at least 2.000000 (not {0})")]
    Gaussian(String),
    /// `zipfian parameter must be in range [1.001, 1000] (not %f)`.
    #[error("zipfian parameter must be in range [1.001, 1000] (not {0})")]
    Zipfian(String),
    /// `exponential parameter must be greater than zero (not %f)`.
    #[error("exponential parameter must be greater than zero (not {0})")]
    Exponential(String),
    /// `permute size parameter must be greater than zero`.
    #[error("permute size parameter must be greater than zero")]
    PermuteSize,
    /// `too many function arguments, maximum is 16`.
    #[error("too many function arguments, maximum is 16")]
    TooManyArguments,
    /// `malformed variable "%s" value: "%s"`.
    #[error("malformed variable \"{}\" value: \"{}\"", lossy(name), lossy(value))]
    MalformedVariable {
        /// Variable name.
        name: Vec<u8>,
        /// Its text.
        value: Vec<u8>,
    },
    /// `value "%s" is out of range for type bigint`.
    #[error("value \"{0}\" is out of range for type bigint")]
    BigintRange(String),
    /// `invalid input syntax for type bigint: "%s"`.
    #[error("invalid input syntax for type bigint: \"{0}\"")]
    BigintSyntax(String),
    /// A failure pgbench reports without a message (a variable holding an empty string).
    #[error("")]
    Silent,
}

impl EvalError {
    /// The message to print (exact bytes), or `None` when pgbench prints nothing
    /// for this failure.
    pub fn message(&self) -> Option<Vec<u8>> {
        match self {
            EvalError::Silent => None,
            e => Some(e.to_bytes()),
        }
    }
}

impl RawMessage for EvalError {
    fn write_raw(&self, out: &mut Vec<u8>) {
        match self {
            EvalError::UndefinedVariable(name) => {
                out.extend_from_slice(b"undefined variable \"");
                out.extend_from_slice(name);
                out.push(b'"');
            }
            EvalError::MalformedVariable { name, value } => {
                out.extend_from_slice(b"malformed variable \"");
                out.extend_from_slice(name);
                out.extend_from_slice(b"\" value: \"");
                out.extend_from_slice(value);
                out.push(b'"');
            }
            e => display_into(e, out),
        }
    }
}

/// Creating or naming a variable failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VarError {
    /// `<context>: invalid variable name: "<name>"`.
    #[error("{context}: invalid variable name: \"{}\"", lossy(name))]
    InvalidName {
        /// `option`, `set`, `gset`, `aset`, `setshell`, `startup`.
        context: String,
        /// The rejected name.
        name: Vec<u8>,
    },
    /// `invalid variable definition: "<arg>"` (`-D` without `=`, name or value).
    #[error("invalid variable definition: \"{}\"", lossy(.0))]
    InvalidDefinition(Vec<u8>),
}

impl VarError {
    /// The same error reported under `context` (pgbench names `\set`'s invalid
    /// variable by the command word as written, `SET` or `Set`).
    pub fn in_context(self, context: &str) -> VarError {
        match self {
            VarError::InvalidName { name, .. } => VarError::InvalidName {
                context: context.to_string(),
                name,
            },
            e => e,
        }
    }
}

impl RawMessage for VarError {
    fn write_raw(&self, out: &mut Vec<u8>) {
        match self {
            VarError::InvalidName { context, name } => {
                out.extend_from_slice(context.as_bytes());
                out.extend_from_slice(b": invalid variable name: \"");
                out.extend_from_slice(name);
                out.push(b'"');
            }
            VarError::InvalidDefinition(arg) => {
                out.extend_from_slice(b"invalid variable definition: \"");
                out.extend_from_slice(arg);
                out.push(b'"');
            }
        }
    }
}

/// A failure of `\sleep`, `\shell` or `\setshell` at run time (`execution of
/// meta-command failed`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MetaError {
    /// `<cmd>: undefined variable "<name>"` (`\sleep` shows the name without colon,
    /// the shell commands with it).
    #[error("{}: undefined variable \"{}\"", lossy(cmd), lossy(name))]
    UndefinedVariable {
        /// The command word pgbench names (`sleep` or the shell program).
        cmd: Vec<u8>,
        /// The variable as pgbench shows it.
        name: Vec<u8>,
    },
    /// `<cmd>: invalid sleep time "<value>" for variable "<name>"`.
    #[error(
        "{}: invalid sleep time \"{}\" for variable \"{}\"",
        lossy(cmd),
        lossy(value),
        lossy(name)
    )]
    InvalidSleepTime {
        /// The command word.
        cmd: Vec<u8>,
        /// The variable's text.
        value: Vec<u8>,
        /// The variable name.
        name: Vec<u8>,
    },
    /// `<cmd>: shell command is too long`.
    #[error("{}: shell command is too long", lossy(.0))]
    ShellTooLong(Vec<u8>),
    /// `<cmd>: could not launch shell command`.
    #[error("{}: could not launch shell command", lossy(.0))]
    CouldNotLaunch(Vec<u8>),
    /// `<cmd>: could not read result of shell command`.
    #[error("{}: could not read result of shell command", lossy(.0))]
    CouldNotRead(Vec<u8>),
    /// `<cmd>: shell command must return an integer (not "<output>")`.
    #[error(
        "{}: shell command must return an integer (not \"{}\")",
        lossy(cmd),
        lossy(output)
    )]
    NotAnInteger {
        /// The shell program word.
        cmd: Vec<u8>,
        /// The raw first line read (newline included).
        output: Vec<u8>,
    },
    /// The result could not be stored (`setshell: invalid variable name: ...`).
    #[error(transparent)]
    Var(#[from] VarError),
}

impl RawMessage for MetaError {
    fn write_raw(&self, out: &mut Vec<u8>) {
        let parts: [&[u8]; 7] = match self {
            MetaError::UndefinedVariable { cmd, name } => {
                [cmd, b": undefined variable \"", name, b"\"", b"", b"", b""]
            }
            MetaError::InvalidSleepTime { cmd, value, name } => [
                cmd,
                b": invalid sleep time \"",
                value,
                b"\" for variable \"",
                name,
                b"\"",
                b"",
            ],
            MetaError::ShellTooLong(cmd) => {
                [cmd, b": shell command is too long", b"", b"", b"", b"", b""]
            }
            MetaError::CouldNotLaunch(cmd) => [
                cmd,
                b": could not launch shell command",
                b"",
                b"",
                b"",
                b"",
                b"",
            ],
            MetaError::CouldNotRead(cmd) => [
                cmd,
                b": could not read result of shell command",
                b"",
                b"",
                b"",
                b"",
                b"",
            ],
            MetaError::NotAnInteger { cmd, output } => [
                cmd,
                b": shell command must return an integer (not \"",
                output,
                b"\")",
                b"",
                b"",
                b"",
            ],
            MetaError::Var(e) => return e.write_raw(out),
        };
        for p in parts {
            out.extend_from_slice(p);
        }
    }
}

/// `-b NAME` / `--show-script=NAME` lookup failure. The CLI prints `error: <this>`
/// and then [`crate::builtin_list_text`] on stderr, exit 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BuiltinError {
    /// `no builtin script found for name "x"`.
    #[error("no builtin script found for name \"{0}\"")]
    NotFound(String),
    /// `ambiguous builtin name: N builtin scripts found for prefix "x"`.
    #[error("ambiguous builtin name: {count} builtin scripts found for prefix \"{prefix}\"")]
    Ambiguous {
        /// Number of matches.
        count: usize,
        /// The prefix given.
        prefix: String,
    },
}

/// `NAME@WEIGHT` parsing failure (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WeightError {
    /// `invalid weight specification: @x` (the text from the last `@`).
    #[error("invalid weight specification: {0}")]
    Invalid(String),
    /// `weight specification out of range (0 .. 2147483647): N`.
    #[error("weight specification out of range (0 .. 2147483647): {0}")]
    OutOfRange(i64),
}

/// A script could not be loaded (exit 1).
///
/// `Display` renders pgbench's complete text: the first line without the
/// `pgbench: error: ` prefix, then (for syntax errors with a known line) the
/// command's full text and the caret line `<column spaces>^ error found here`.
/// The CLI must print `pgrush: error: ` followed by this text's exact bytes
/// ([`RawMessage::to_bytes`]: an echoed script line keeps its bytes) and a newline,
/// then exit 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LoadError {
    /// `<source>:<line>: <msg>[ (<detail>)][ at column N][ in command "<cmd>"]` plus
    /// optional echoed line and caret.
    #[error("{0}")]
    Syntax(Box<SyntaxError>),
    /// `condition error in script "<source>" command <n>: <msg>`.
    #[error(
        "condition error in script \"{}\" command {command}: {message}",
        lossy(source_name)
    )]
    Condition {
        /// Script description (bytes: a file name as given).
        source_name: Vec<u8>,
        /// 1-based command number.
        command: usize,
        /// e.g. `\else after \else`.
        message: String,
    },
    /// `empty command list for script "<source>"`.
    #[error("empty command list for script \"{}\"", lossy(.0))]
    Empty(Vec<u8>),
    /// `statement has too many arguments (maximum is 255): <sql>` (only extended and
    /// prepared modes; see [`crate::Script::check_parameters`]).
    #[error("statement has too many arguments (maximum is 255): {}", lossy(.0))]
    TooManyArguments(Vec<u8>),
}

impl RawMessage for LoadError {
    fn write_raw(&self, out: &mut Vec<u8>) {
        match self {
            LoadError::Syntax(e) => e.write_raw(out),
            LoadError::TooManyArguments(sql) => {
                out.extend_from_slice(b"statement has too many arguments (maximum is 255): ");
                out.extend_from_slice(sql);
            }
            LoadError::Condition {
                source_name,
                command,
                message,
            } => {
                out.extend_from_slice(b"condition error in script \"");
                out.extend_from_slice(source_name);
                let _ = write!(out, "\" command {command}: {message}");
            }
            LoadError::Empty(source_name) => {
                out.extend_from_slice(b"empty command list for script \"");
                out.extend_from_slice(source_name);
                out.push(b'"');
            }
        }
    }
}

/// A located script syntax error (see [`LoadError::Syntax`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Script description (file name, `-`, builtin description).
    pub source_name: Vec<u8>,
    /// 1-based line of the backslash.
    pub line: usize,
    /// The message.
    pub message: String,
    /// Parenthesized detail (script bytes).
    pub detail: Option<Vec<u8>>,
    /// Meta command name as written (script bytes).
    pub command: Option<Vec<u8>>,
    /// The command text echoed under the message (the script's bytes).
    pub text: Option<Vec<u8>>,
    /// 0-based caret column relative to the backslash.
    pub column: Option<usize>,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.to_bytes()))
    }
}

impl std::error::Error for SyntaxError {}

impl RawMessage for SyntaxError {
    fn write_raw(&self, s: &mut Vec<u8>) {
        s.extend_from_slice(&self.source_name);
        let _ = write!(s, ":{}: {}", self.line, self.message);
        if let Some(d) = &self.detail {
            s.extend_from_slice(b" (");
            s.extend_from_slice(d);
            s.push(b')');
        }
        if let (Some(c), None) = (self.column, &self.text) {
            let _ = write!(s, " at column {}", c + 1);
        }
        if let Some(c) = &self.command {
            s.extend_from_slice(b" in command \"");
            s.extend_from_slice(c);
            s.push(b'"');
        }
        if let Some(t) = &self.text {
            s.push(b'\n');
            s.extend_from_slice(t);
            if let Some(c) = self.column {
                s.push(b'\n');
                s.resize(s.len() + c, b' ');
                s.extend_from_slice(b"^ error found here");
            }
        }
    }
}
