//! Error types. Every `Display` is pgbench's message text without the
//! `pgbench: error: ` prefix (the CLI/engine adds `pgrush: error: `).

use thiserror::Error;

/// A run-time expression evaluation failure (the client aborts).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EvalError {
    /// `undefined variable "x"`.
    #[error("undefined variable \"{0}\"")]
    UndefinedVariable(String),
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
    #[error("malformed variable \"{name}\" value: \"{value}\"")]
    MalformedVariable {
        /// Variable name.
        name: String,
        /// Its text.
        value: String,
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
    /// The message to print, or `None` when pgbench prints nothing for this failure.
    pub fn message(&self) -> Option<String> {
        match self {
            EvalError::Silent => None,
            e => Some(e.to_string()),
        }
    }
}

/// Creating or naming a variable failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VarError {
    /// `<context>: invalid variable name: "<name>"`.
    #[error("{context}: invalid variable name: \"{name}\"")]
    InvalidName {
        /// `option`, `set`, `gset`, `aset`, `setshell`, `startup`.
        context: String,
        /// The rejected name.
        name: String,
    },
    /// `invalid variable definition: "<arg>"` (`-D` without `=`, name or value).
    #[error("invalid variable definition: \"{0}\"")]
    InvalidDefinition(String),
}

/// A failure of `\sleep`, `\shell` or `\setshell` at run time (`execution of
/// meta-command failed`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MetaError {
    /// `<cmd>: undefined variable "<name>"` (`\sleep` shows the name without colon,
    /// the shell commands with it).
    #[error("{cmd}: undefined variable \"{name}\"")]
    UndefinedVariable {
        /// The command word pgbench names (`sleep` or the shell program).
        cmd: String,
        /// The variable as pgbench shows it.
        name: String,
    },
    /// `<cmd>: invalid sleep time "<value>" for variable "<name>"`.
    #[error("{cmd}: invalid sleep time \"{value}\" for variable \"{name}\"")]
    InvalidSleepTime {
        /// The command word.
        cmd: String,
        /// The variable's text.
        value: String,
        /// The variable name.
        name: String,
    },
    /// `<cmd>: shell command is too long`.
    #[error("{0}: shell command is too long")]
    ShellTooLong(String),
    /// `<cmd>: could not launch shell command`.
    #[error("{0}: could not launch shell command")]
    CouldNotLaunch(String),
    /// `<cmd>: could not read result of shell command`.
    #[error("{0}: could not read result of shell command")]
    CouldNotRead(String),
    /// `<cmd>: shell command must return an integer (not "<output>")`.
    #[error("{cmd}: shell command must return an integer (not \"{output}\")")]
    NotAnInteger {
        /// The shell program word.
        cmd: String,
        /// The raw first line read (newline included).
        output: String,
    },
    /// The result could not be stored (`setshell: invalid variable name: ...`).
    #[error(transparent)]
    Var(#[from] VarError),
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
/// The CLI must print `pgrush: error: ` followed by this text and a newline
/// (i.e. `eprintln!("pgrush: error: {err}")`), then exit 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LoadError {
    /// `<source>:<line>: <msg>[ (<detail>)][ at column N][ in command "<cmd>"]` plus
    /// optional echoed line and caret.
    #[error("{0}")]
    Syntax(Box<SyntaxError>),
    /// `condition error in script "<source>" command <n>: <msg>`.
    #[error("condition error in script \"{source_name}\" command {command}: {message}")]
    Condition {
        /// Script description.
        source_name: String,
        /// 1-based command number.
        command: usize,
        /// e.g. `\else after \else`.
        message: String,
    },
    /// `empty command list for script "<source>"`.
    #[error("empty command list for script \"{0}\"")]
    Empty(String),
    /// `statement has too many arguments (maximum is 255): <sql>` (only extended and
    /// prepared modes; see [`crate::Script::check_parameters`]).
    #[error("statement has too many arguments (maximum is 255): {0}")]
    TooManyArguments(String),
}

/// A located script syntax error (see [`LoadError::Syntax`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Script description (file name, `-`, builtin description).
    pub source_name: String,
    /// 1-based line of the backslash.
    pub line: usize,
    /// The message.
    pub message: String,
    /// Parenthesized detail.
    pub detail: Option<String>,
    /// Meta command name as written.
    pub command: Option<String>,
    /// The command text echoed under the message.
    pub text: Option<String>,
    /// 0-based caret column relative to the backslash.
    pub column: Option<usize>,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&render_syntax(self))
    }
}

fn render_syntax(e: &SyntaxError) -> String {
    let (source, line, message) = (&e.source_name, e.line, &e.message);
    let (detail, command, text, column) = (
        e.detail.as_deref(),
        e.command.as_deref(),
        e.text.as_deref(),
        e.column,
    );
    let mut s = format!("{source}:{line}: {message}");
    if let Some(d) = detail {
        s.push_str(&format!(" ({d})"));
    }
    if let (Some(c), None) = (column, text) {
        s.push_str(&format!(" at column {}", c + 1));
    }
    if let Some(c) = command {
        s.push_str(&format!(" in command \"{c}\""));
    }
    if let Some(t) = text {
        s.push('\n');
        s.push_str(t);
        if let Some(c) = column {
            s.push('\n');
            s.push_str(&" ".repeat(c));
            s.push_str("^ error found here");
        }
    }
    s
}
