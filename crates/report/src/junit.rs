//! Assertion verdicts as JUnit XML (`--junit FILE`), the format CI systems (GitHub Actions
//! test reporters, GitLab's `artifacts:reports:junit`, Jenkins) display natively: one
//! `testsuite` with one `testcase` per assertion, a `failure` element for each failed
//! one, and the report as the suite's `system-out`.

use crate::assertion::Verdict;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

/// The JUnit XML document for `verdicts`: `suite` names the test suite (`pgrush`),
/// `report` (the text report) becomes its `system-out`. Characters XML 1.0 cannot carry
/// (control characters) are replaced by U+FFFD.
pub fn render(suite: &str, verdicts: &[Verdict], report: &str) -> String {
    let tests = verdicts.len().to_string();
    let failures = verdicts.iter().filter(|v| !v.passed).count().to_string();
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail.
    let _ = w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
    let counts = [
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", "0"),
        ("skipped", "0"),
    ];
    let suite = xml_text(suite);
    let start = |tag: &'static str| {
        BytesStart::new(tag)
            .with_attributes([("name", suite.as_str())])
            .with_attributes(counts)
    };
    let _ = w.write_event(Event::Start(start("testsuites")));
    let _ = w.write_event(Event::Start(start("testsuite")));
    for verdict in verdicts {
        write_case(&mut w, &suite, verdict);
    }
    let _ = w.write_event(Event::Start(BytesStart::new("system-out")));
    let _ = w.write_event(Event::Text(BytesText::new(&xml_text(report))));
    let _ = w.write_event(Event::End(BytesEnd::new("system-out")));
    let _ = w.write_event(Event::End(BytesEnd::new("testsuite")));
    let _ = w.write_event(Event::End(BytesEnd::new("testsuites")));
    let mut xml = String::from_utf8_lossy(&w.into_inner()).into_owned();
    xml.push('\n');
    xml
}

/// One `testcase`, with its `failure` when the assertion failed.
fn write_case(w: &mut Writer<Vec<u8>>, suite: &str, verdict: &Verdict) {
    let name = xml_text(&verdict.assertion);
    let case = BytesStart::new("testcase").with_attributes([
        ("name", name.as_str()),
        ("classname", suite),
        ("time", "0"),
    ]);
    if verdict.passed {
        let _ = w.write_event(Event::Empty(case));
        return;
    }
    let line = xml_text(&verdict.line());
    let _ = w.write_event(Event::Start(case));
    let failure = BytesStart::new("failure")
        .with_attributes([("message", line.as_str()), ("type", "assertion")]);
    let _ = w.write_event(Event::Start(failure));
    let _ = w.write_event(Event::Text(BytesText::new(&line)));
    let _ = w.write_event(Event::End(BytesEnd::new("failure")));
    let _ = w.write_event(Event::End(BytesEnd::new("testcase")));
}

/// `text` with the characters XML 1.0 forbids replaced by U+FFFD.
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => '\u{fffd}',
            _ => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(assertion: &str, passed: bool) -> Verdict {
        Verdict {
            expression: assertion.to_string(),
            assertion: assertion.to_string(),
            passed,
            measured: Some(7.21),
            threshold: Some(5.0),
            baseline: None,
            unit: "ms".to_string(),
            note: None,
        }
    }

    #[test]
    fn escapes_markup_and_drops_control_characters() {
        let xml = render(
            "pgrush",
            &[
                verdict("p99 < 5 ms", false),
                verdict("tps >= 1 & \"x\"", true),
            ],
            "report <b>\u{1}&</b>",
        );
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(xml.contains("name=\"p99 &lt; 5 ms\""), "{xml}");
        assert!(xml.contains("tps &gt;= 1 &amp; &quot;x&quot;"), "{xml}");
        assert!(
            xml.contains("report &lt;b&gt;\u{fffd}&amp;&lt;/b&gt;"),
            "{xml}"
        );
        assert!(
            xml.contains("<failure message=\"assertion FAILED: p99 &lt; 5 ms"),
            "{xml}"
        );
    }
}
