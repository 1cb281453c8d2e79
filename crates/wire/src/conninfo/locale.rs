//! `client_encoding=auto`: the encoding of the locale's character set.

use super::env::Environment;

/// The server encoding name for the locale's character set (what libpq's
/// `client_encoding=auto` picks): from `LC_ALL`, `LC_CTYPE` or `LANG`;
/// `SQL_ASCII` for the C/POSIX locale; empty when unknown.
pub(crate) fn encoding_from_locale(env: &dyn Environment) -> &'static str {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|v| env.var(v).filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "C".to_string());
    if locale == "C" || locale == "POSIX" {
        return "SQL_ASCII";
    }
    let codeset = locale
        .split_once('.')
        .map(|(_, c)| c.split('@').next().unwrap_or(c))
        .unwrap_or("ISO-8859-1");
    let norm: String = codeset
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match norm.as_str() {
        "utf8" => "UTF8",
        "ansix341968" | "ascii" | "usascii" => "SQL_ASCII",
        "iso88591" => "LATIN1",
        "iso88592" => "LATIN2",
        "iso88593" => "LATIN3",
        "iso88594" => "LATIN4",
        "iso88595" => "ISO_8859_5",
        "iso88596" => "ISO_8859_6",
        "iso88597" => "ISO_8859_7",
        "iso88598" => "ISO_8859_8",
        "iso88599" => "LATIN5",
        "iso885910" => "LATIN6",
        "iso885913" => "LATIN7",
        "iso885914" => "LATIN8",
        "iso885915" => "LATIN9",
        "iso885916" => "LATIN10",
        "koi8r" => "KOI8R",
        "koi8u" => "KOI8U",
        "cp1250" => "WIN1250",
        "cp1251" => "WIN1251",
        "cp1252" => "WIN1252",
        "eucjp" => "EUC_JP",
        "euckr" => "EUC_KR",
        "euccn" => "EUC_CN",
        "euctw" => "EUC_TW",
        "gb18030" => "GB18030",
        "gbk" => "GBK",
        "big5" => "BIG5",
        "sjis" | "shiftjis" => "SJIS",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::PathBuf;

    struct Vars(HashMap<&'static str, &'static str>);

    impl Environment for Vars {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
        fn passwd_home(&self) -> Option<PathBuf> {
            None
        }
        fn os_user_name(&self) -> Result<String, String> {
            Err(String::new())
        }
    }

    fn enc(vars: &[(&'static str, &'static str)]) -> &'static str {
        encoding_from_locale(&Vars(vars.iter().copied().collect()))
    }

    #[test]
    fn locale_precedence_and_names() {
        assert_eq!(enc(&[]), "SQL_ASCII");
        assert_eq!(enc(&[("LANG", "en_US.UTF-8")]), "UTF8");
        assert_eq!(
            enc(&[("LANG", "en_US.UTF-8"), ("LC_CTYPE", "POSIX")]),
            "SQL_ASCII"
        );
        assert_eq!(
            enc(&[("LC_ALL", "de_DE.iso885915@euro"), ("LANG", "C")]),
            "LATIN9"
        );
        assert_eq!(enc(&[("LC_ALL", ""), ("LANG", "ru_RU.KOI8-R")]), "KOI8R");
        assert_eq!(enc(&[("LANG", "xx_YY.nonsense")]), "");
    }
}
