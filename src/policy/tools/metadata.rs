//! What regorus drops: comments. `# METADATA` blocks are read here from
//! the source text and attached to the rule that follows (the tokenizer
//! the linter uses is the runtime's, `policy::token`).

use crate::policy::source::PolicyFile;

/// One rule definition's documentation, from the `# METADATA` block above it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuleDoc {
    /// The file.
    pub file: String,
    /// The line of the rule head (1-based).
    pub line: usize,
    /// The rule's name (`mask`, `scope`, a helper's name).
    pub name: String,
    /// What the rule is for a reader: deny, mask, keep, prune, priority,
    /// strip, scope, budget, redact, title_patterns, element_attributes, test or helper.
    pub kind: String,
    /// `title:`, if given.
    pub title: Option<String>,
    /// `description:`, if given (continuation lines joined by spaces).
    pub description: Option<String>,
}

/// Every `# METADATA` block of `file`, each attached to the rule head that
/// follows it (blank lines and other comments between are skipped).
pub fn rule_docs(file: &PolicyFile) -> Vec<RuleDoc> {
    let lines: Vec<&str> = file.source.lines().collect();
    let mut docs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "# METADATA" {
            i += 1;
            continue;
        }
        i += 1;
        let mut fields: Vec<(String, String)> = Vec::new();
        while i < lines.len() {
            let Some(body) = lines[i].trim_start().strip_prefix('#') else {
                break;
            };
            let body = body.strip_prefix(' ').unwrap_or(body);
            let is_field = !body.starts_with(' ')
                && body.split_once(':').is_some_and(|(k, _)| {
                    !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                });
            if is_field {
                let (k, v) = body.split_once(':').expect("checked");
                fields.push((k.to_string(), v.trim().to_string()));
            } else if let Some((_, v)) = fields.last_mut() {
                let more = body.trim();
                if !more.is_empty() {
                    if !v.is_empty() {
                        v.push(' ');
                    }
                    v.push_str(more);
                }
            }
            i += 1;
        }
        while i < lines.len()
            && (lines[i].trim().is_empty() || lines[i].trim_start().starts_with('#'))
        {
            if lines[i].trim() == "# METADATA" {
                break;
            }
            i += 1;
        }
        let Some(head) = lines.get(i) else { break };
        if head.trim() == "# METADATA" {
            continue;
        }
        let name = head_name(head).unwrap_or_default();
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.trim_matches(['"', '\'']).to_string())
                .filter(|v| !v.is_empty())
        };
        docs.push(RuleDoc {
            file: file.name.clone(),
            line: i + 1,
            kind: kind_of(&name),
            title: get("title"),
            description: get("description"),
            name,
        });
    }
    docs
}

/// The rule name a head line starts with (`default` skipped).
fn head_name(line: &str) -> Option<String> {
    let mut words = line.split(|c: char| !(c.is_alphanumeric() || c == '_'));
    let mut word = words.find(|w| !w.is_empty())?;
    if word == "default" {
        word = words.find(|w| !w.is_empty())?;
    }
    Some(word.to_string())
}

/// A rule's kind from its name.
pub(crate) fn kind_of(name: &str) -> String {
    match name {
        "deny" | "mask" | "keep" | "prune" | "priority" | "strip" | "scope" | "budget"
        | "redact" | "title_patterns" | "element_attributes" => name.to_string(),
        _ if name.starts_with("test_") => "test".to_string(),
        _ => "helper".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::token::tokenize;

    #[test]
    fn metadata_attaches_to_the_next_rule() {
        let file = PolicyFile {
            name: "p.rego".into(),
            source: "package ctxgate\n\n# METADATA\n# title: Mask secure text\n# description: Secure fields\n#   carry passwords.\n\nmask contains \"x\" if true\n# METADATA\n# title: Default scope\ndefault scope := \"focus\"\n".into(),
        };
        let docs = rule_docs(&file);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].name, "mask");
        assert_eq!(docs[0].line, 8);
        assert_eq!(docs[0].title.as_deref(), Some("Mask secure text"));
        assert_eq!(
            docs[0].description.as_deref(),
            Some("Secure fields carry passwords.")
        );
        assert_eq!(docs[1].name, "scope");
        assert_eq!(docs[1].kind, "scope");
    }

    #[test]
    fn tokens_have_positions() {
        let t = tokenize("a := \"x\" # c\n  input.element.role == `y`");
        let texts: Vec<(&str, usize, usize)> =
            t.iter().map(|t| (t.text.as_str(), t.line, t.col)).collect();
        assert_eq!(texts[0], ("a", 1, 1));
        assert_eq!(texts[1], (":=", 1, 3));
        assert_eq!(texts[2], ("x", 1, 6));
        assert_eq!(texts[3], ("input", 2, 3));
        assert_eq!(texts[8], ("==", 2, 22));
        assert_eq!(texts[9], ("y", 2, 25));
    }
}
