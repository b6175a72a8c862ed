//! The labelled secrets corpus (`tests/secrets/corpus.tsv`) through the
//! embedded default policy: per class, every secret's substring is gone
//! from the output (recall), every non-secret is sent unchanged (false
//! positives), and the text of the real trees of `tests/fixtures/answers`
//! is sent unchanged. Prints the per-class table BENCHMARKS.md shows
//! (`cargo test --test secrets_corpus -- --nocapture`). Also checks
//! SECURITY.md's table of the default's redaction patterns against the
//! policy.

mod common;

use std::collections::BTreeMap;

use ctxgate::{Answer, Content, Element, Request, Role};

struct Line {
    class: String,
    secret: bool,
    context: String,
    language: String,
    text: String,
    needle: String,
}

/// `\n` is a line break, `\t` a tab, `\\` a backslash.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn corpus() -> Vec<Line> {
    let source = include_str!("secrets/corpus.tsv");
    source
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.is_empty())
        .map(|(n, l)| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 6, "corpus.tsv:{}: six fields", n + 1);
            let secret = match f[1] {
                "secret" => true,
                "plain" => false,
                other => panic!("corpus.tsv:{}: kind `{other}`", n + 1),
            };
            let line = Line {
                class: f[0].into(),
                secret,
                context: f[2].into(),
                language: f[3].into(),
                text: unescape(f[4]),
                needle: unescape(f[5]),
            };
            assert!(
                !secret || (!line.needle.is_empty() && line.text.contains(&line.needle)),
                "corpus.tsv:{}: the secret is a substring of the text",
                n + 1
            );
            line
        })
        .collect()
}

/// Each text as the default sends it, in batches small enough for the
/// default budget: one Text element per text, all sent (`app`).
fn redact_all(texts: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(texts.len());
    let mut batch: Vec<&String> = Vec::new();
    let mut bytes = 0;
    let flush = |batch: &mut Vec<&String>, out: &mut Vec<String>| {
        if batch.is_empty() {
            return;
        }
        let mut root = Element::new("app", Role::Application);
        root.children = batch
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut e = Element::new(format!("t{i}"), Role::Text);
                e.content = vec![Content::text((*t).clone())];
                e
            })
            .collect::<Vec<_>>()
            .into();
        let answer = Answer {
            protocol: "0.2.0".into(),
            instance: "corpus".into(),
            root,
        };
        let sent = common::gate()
            .trim(&answer, &Request::new("app"))
            .expect("trimmed");
        let children = &sent.answer.root.children;
        assert_eq!(children.len(), batch.len(), "every element is sent");
        for child in children.iter() {
            let text = child
                .content
                .iter()
                .map(|c| match &c.block {
                    ctxgate::Block::Text { text } => text.to_string(),
                    other => panic!("not text: {other:?}"),
                })
                .collect::<String>();
            out.push(text);
        }
        batch.clear();
    };
    for text in texts {
        if bytes + text.len() > 4_000 {
            flush(&mut batch, &mut out);
            bytes = 0;
        }
        bytes += text.len();
        batch.push(text);
    }
    flush(&mut batch, &mut out);
    out
}

#[test]
fn every_secret_of_the_corpus_is_redacted_and_no_look_alike_is() {
    let lines = corpus();
    let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
    let sent = redact_all(&texts);
    // class -> (secrets, found, plain, false positives)
    let mut table: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut failures = Vec::new();
    for (line, out) in lines.iter().zip(&sent) {
        let row = table.entry(&line.class).or_default();
        if line.secret {
            row[0] += 1;
            if out.contains(&line.needle) {
                failures.push(format!(
                    "missed [{} {} {}] {:?} -> {out:?}",
                    line.class, line.context, line.language, line.text
                ));
            } else {
                row[1] += 1;
            }
        } else {
            row[2] += 1;
            if *out != line.text {
                row[3] += 1;
                failures.push(format!(
                    "false positive [{} {} {}] {:?} -> {out:?}",
                    line.class, line.context, line.language, line.text
                ));
            }
        }
    }
    println!("| class | secrets | recall | non-secrets | false positives |");
    println!("|---|---|---|---|---|");
    for (class, [secrets, found, plain, fp]) in &table {
        let recall = if *secrets == 0 {
            "—".to_string()
        } else {
            format!("{:.0}%", 100.0 * *found as f64 / *secrets as f64)
        };
        println!("| {class} | {secrets} | {recall} | {plain} | {fp} |");
    }
    let languages: std::collections::BTreeSet<&str> =
        lines.iter().map(|l| l.language.as_str()).collect();
    let contexts: std::collections::BTreeSet<&str> =
        lines.iter().map(|l| l.context.as_str()).collect();
    println!(
        "{} lines, {} languages, {} contexts",
        lines.len(),
        languages.len(),
        contexts.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every string a real tree of `tests/fixtures/answers` sends as text.
fn fixture_texts() -> Vec<String> {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    if !matches!(key.as_str(), "id" | "role" | "subrole" | "protocol") {
                        walk(v, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for path in common::files(&common::root().join("tests/fixtures/answers"), "json") {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        walk(&value, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_text_of_the_real_trees_is_sent_unchanged() {
    let texts = fixture_texts();
    assert!(texts.len() > 100, "found {} strings", texts.len());
    let sent = redact_all(&texts);
    let changed: Vec<String> = texts
        .iter()
        .zip(&sent)
        .filter(|(t, s)| t != s)
        .map(|(t, s)| format!("{t:?} -> {s:?}"))
        .collect();
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}

#[test]
fn security_md_names_every_pattern_of_the_default() {
    let policy = include_str!("../policies/default.rego");
    let in_policy: std::collections::BTreeSet<&str> = policy
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"id\": \""))
        .map(|l| l.trim_end_matches("\","))
        .collect();
    let security = include_str!("../SECURITY.md");
    let section = security
        .split("## Redaction patterns of the default policy")
        .nth(1)
        .expect("SECURITY.md has the section")
        .split("\n## ")
        .next()
        .unwrap();
    let in_doc: std::collections::BTreeSet<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert!(in_policy.len() > 20, "{in_policy:?}");
    let missing: Vec<_> = in_policy.difference(&in_doc).collect();
    let extra: Vec<_> = in_doc.difference(&in_policy).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "SECURITY.md's table does not name {missing:?}; it names {extra:?}, which the default does not have"
    );
}
