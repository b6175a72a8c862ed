//! Arbitrary answers through the default policy's gate, every action, byte
//! and token budgets, both formats: the text of a field the floor masks
//! (a subrole or unknown role word saying secure or password, or an
//! attribute saying so) never reaches the output or the report, and the
//! output fits its budget to the byte or token.
#![no_main]

use std::sync::OnceLock;

use ctxgate::{Block, Budget, Element, Format, Gate, Request};
use libfuzzer_sys::fuzz_target;

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| Gate::embedded_default().expect("the default policy compiles"))
}

fn says_secure(s: &str) -> bool {
    let s: String = s
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    s.contains("secure") || s.contains("password") || s.contains("passwd")
}

fn secure(e: &Element) -> bool {
    e.subrole.as_deref().is_some_and(says_secure)
        || (!e.role.is_known() && says_secure(e.role.as_str()))
        || e.attributes.iter().any(|(k, v)| {
            let k = k.to_ascii_lowercase();
            (k.contains("type") || k.contains("autocomplete") || k.contains("autofill"))
                && v.as_str().is_some_and(says_secure)
        })
}

fn texts<'s>(e: &'s Element, out: &mut Vec<&'s str>) {
    for c in &e.content {
        if let Block::Text { text } = &c.block {
            out.push(text);
        }
    }
}

/// Secrets: the text of secure fields and everything inside them; others:
/// every other string of the answer.
fn walk<'s>(e: &'s Element, inside: bool, secrets: &mut Vec<&'s str>, others: &mut Vec<String>) {
    let inside = inside || secure(e);
    if inside {
        texts(e, secrets);
    } else {
        let mut t = Vec::new();
        texts(e, &mut t);
        others.extend(t.into_iter().map(str::to_owned));
        others.extend(e.attributes.iter().map(|(_, v)| v.to_string()));
    }
    others.push(e.id.to_string());
    others.extend(e.title.as_deref().map(str::to_owned));
    others.extend(e.subrole.as_deref().map(str::to_owned));
    others.extend(e.url.as_deref().map(str::to_owned));
    others.push(e.role.as_str().to_owned());
    others.extend(e.attributes.iter().map(|(k, _)| k.to_owned()));
    for c in e.children.iter() {
        walk(c, inside, secrets, others);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&knob, bytes)) = data.split_first() else {
        return;
    };
    let gate = gate();
    let Ok(answer) = ctxgate::read_conforming(bytes, gate.limits()) else {
        return;
    };
    let mut secrets = Vec::new();
    let mut others = Vec::new();
    walk(&answer.root, false, &mut secrets, &mut others);
    let others = others.join("\u{0}");
    let secrets: Vec<&str> = secrets
        .into_iter()
        .filter(|s| s.len() >= 6 && !others.contains(*s) && !s.trim().is_empty())
        .collect();
    let n = 16 + usize::from(knob & 0x3f) * 24;
    let budget = if knob & 0x40 != 0 {
        Budget::Tokens(n / 4)
    } else {
        Budget::Bytes(n)
    };
    let format = if knob & 0x80 != 0 {
        Format::Outline
    } else {
        Format::Json
    };
    for action in ["selection", "focus", "window", "app", "other"] {
        let request = Request::new(action).budget(budget).format(format);
        let Ok(out) = gate.trim_bytes(bytes, &request) else {
            continue;
        };
        match budget {
            Budget::Bytes(b) => assert!(out.rendered.len() <= b, "{action}: over {b} bytes"),
            Budget::Tokens(t) => {
                let used = bpe_openai::o200k_base().count(&out.rendered);
                assert!(used <= t, "{action}: {used} tokens over {t}");
            }
        }
        let report = serde_json::to_string(&out.report).expect("the report serializes");
        for s in &secrets {
            assert!(!out.rendered.contains(s), "{action}: a secure field's text {s:?} was sent");
            assert!(!report.contains(s), "{action}: a secure field's text {s:?} is in the report");
        }
    }
});
