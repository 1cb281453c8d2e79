//! Words of a completion script that every shell writes the same way.

use super::spec::CommandSpec;

/// `word` as one shell word that survives quote removal in bash, zsh and
/// fish alike: characters other than letters, digits and `-_.,/@=+%` are
/// backslash-escaped (`-?` becomes `-\?`, so no glob sees it).
pub(crate) fn shell_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for ch in word.chars() {
        if !(ch.is_ascii_alphanumeric() || "-_.,/@=+%".contains(ch)) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// `text` inside single quotes for bash and zsh (`'` becomes `'\''`).
pub(crate) fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The subcommand names as shell words, space-separated.
pub(crate) fn subcommand_words(spec: &CommandSpec) -> String {
    let names: Vec<String> = spec
        .subcommands
        .iter()
        .map(|sub| shell_word(&sub.name))
        .collect();
    names.join(" ")
}

/// A subcommand name as part of a shell function name (`-` becomes `_`).
pub(crate) fn function_suffix(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_escape_globs_and_quotes() {
        assert_eq!(shell_word("-?"), r"-\?");
        assert_eq!(shell_word("--client"), "--client");
        assert_eq!(shell_word("a b'c"), r"a\ b\'c");
        assert_eq!(single_quoted("it's"), r"'it'\''s'");
        assert_eq!(function_suffix("report-x"), "report_x");
    }
}
