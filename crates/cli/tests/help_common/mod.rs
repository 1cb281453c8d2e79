//! Reading pgrush's help texts in tests: the subcommands `pgrush --help` lists and the
//! long options a help text shows.
// Each test binary uses what it needs.
#![allow(dead_code)]

/// The subcommands a `pgrush --help` text lists: the word after `pgrush ` on each line
/// of its "Subcommands" section.
pub fn listed_subcommands(help: &str) -> Vec<String> {
    let start = help
        .find("Subcommands (pgrush only):\n")
        .expect("subcommand section");
    help[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.strip_prefix("  pgrush "))
        .filter_map(|rest| rest.split(' ').next())
        .map(str::to_string)
        .collect()
}

/// The long options of a help text: each line that starts (after its indentation)
/// with `-` gives the spellings before its first two spaces.
pub fn long_options(help: &str) -> Vec<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|text| text.starts_with('-'))
        .flat_map(|text| text.split("  ").next().unwrap_or("").split(", "))
        .filter_map(|spelling| spelling.strip_prefix("--"))
        .map(|long| long[..long.find(['=', '[', ' ']).unwrap_or(long.len())].to_string())
        .collect()
}
