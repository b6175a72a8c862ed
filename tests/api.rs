//! The library's shape as a host sees it: the model's derives do
//! not recurse over the tree, serialization is what it was, and a host can
//! keep a result after the input is gone.

use std::path::{Path, PathBuf};

use ctxgate::{Answer, Budget, Element, Format, Gate, Report, Request, Role, Trimmed};
use serde_json::Value;

/// An answer `depth` elements deep: the application, then a chain of groups.
fn chain(depth: usize) -> Answer<'static> {
    let mut element = Element::new(format!("e{}", depth - 1), Role::Text);
    element.title = Some("the deepest".into());
    for at in (1..depth - 1).rev() {
        let mut parent = Element::new(format!("e{at}"), Role::Group);
        parent.children.push(element);
        element = parent;
    }
    let mut root = Element::new("e0", Role::Application);
    root.children.push(element);
    Answer::new("deep", root)
}

/// Runs `f` on a thread with a 2 MiB stack (a normal thread's, or less).
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_100000_deep_answer_is_cloned_compared_printed_and_serialized_on_a_2_mib_stack() {
    on_small_stack(|| {
        let answer = chain(100_000);
        let copy = answer.clone();
        assert!(copy == answer);

        let mut changed = answer.clone();
        let mut deepest = &mut changed.root;
        while !deepest.children.is_empty() {
            deepest = &mut deepest.children[0];
        }
        assert_eq!(deepest.id, "e99999");
        deepest.title = Some("changed".into());
        assert!(changed != answer, "a difference at the bottom is found");
        assert!(changed.root.children != answer.root.children);

        let printed = format!("{answer:?}");
        assert!(printed.starts_with(r#"Answer { protocol: "0.2.0", instance: "deep", root: Element { id: "e0", role: Known(Application)"#));
        assert!(printed.contains(r#"Element { id: "e99999", role: Known(Text), subrole: None, title: Some("the deepest")"#));
        assert_eq!(printed.matches("Element {").count(), 100_000);

        let tree = ctxgate::Tree::new(&answer.root);
        let indexed = format!("{tree:?}");
        assert!(indexed.len() < 200 * 100_000, "a node is named by its id");
        assert!(indexed.contains(r#"Node { id: "e99999", parent: Some(99998)"#));

        let serialized = serde_json::to_string(&answer).unwrap();
        assert_eq!(
            serialized,
            ctxgate::Format::Json.render(&answer),
            "the iterative writer agrees"
        );
        // Everything is dropped here too, on the same small stack.
    });
}

/// The serialization before the model's own: each element's own fields as the
/// model writes them, `children` as a plain sequence (serde's `Vec`), before
/// `attributes`. Recursive; the trees below are shallow.
fn before(element: &Element<'_>) -> Value {
    let mut own = Element::new(element.id.clone(), element.role.clone());
    own.subrole = element.subrole.clone();
    own.title = element.title.clone();
    own.content = element.content.clone();
    own.url = element.url.clone();
    own.selected = element.selected;
    own.focused = element.focused;
    own.visible = element.visible;
    own.hovered = element.hovered;
    let Value::Object(mut map) = serde_json::to_value(&own).unwrap() else {
        panic!("an element serializes as an object");
    };
    if !element.children.is_empty() {
        map.insert(
            "children".into(),
            Value::Array(element.children.iter().map(before).collect()),
        );
    }
    if !element.attributes.is_empty() {
        map.insert(
            "attributes".into(),
            serde_json::to_value(&element.attributes).unwrap(),
        );
    }
    Value::Object(map)
}

fn golden_trees() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut trees = vec![root.join("examples/notes.json")];
    for entry in std::fs::read_dir(root.join("tests/cases/trim")).unwrap() {
        let answer = entry.unwrap().path().join("answer.json");
        if answer.exists() {
            trees.push(answer);
        }
    }
    for entry in std::fs::read_dir(root.join("tests/fixtures/answers")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            trees.push(path);
        }
    }
    trees.sort();
    trees
}

#[test]
fn serialization_is_byte_identical_to_before_on_the_example_and_the_golden_trees() {
    let trees = golden_trees();
    assert!(trees.len() > 20, "found {} trees", trees.len());
    let mut read = 0;
    for path in &trees {
        let bytes = std::fs::read(path).unwrap();
        let Ok(reading) = ctxgate::read(&bytes, &ctxgate::Limits::default()) else {
            continue;
        };
        read += 1;
        let Some(answer) = reading.answer else {
            continue;
        };
        let reference = serde_json::json!({
            "protocol": answer.protocol,
            "instance": answer.instance,
            "root": before(&answer.root),
        });
        let name = path.display();
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            serde_json::to_string(&reference).unwrap(),
            "{name}"
        );
        assert_eq!(
            serde_json::to_string_pretty(&answer).unwrap(),
            serde_json::to_string_pretty(&reference).unwrap(),
            "{name}"
        );
        assert_eq!(serde_json::to_value(&answer).unwrap(), reference, "{name}");
        assert!(answer.clone() == answer, "{name}");
        let owned = answer.clone().into_owned();
        assert!(owned == answer, "{name}");
    }
    assert!(read > 20, "read {read} trees");
}

fn notes() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/notes.json")).unwrap()
}

#[test]
fn a_host_keeps_a_report_and_a_trimmed_answer_after_the_input_is_dropped() {
    let gate = Gate::embedded_default().unwrap();
    let request = Request::new("selection")
        .budget(Budget::Tokens(2000))
        .format(Format::Outline);
    let (kept, report, expected_report, expected_rendered): (
        Trimmed<'static>,
        Report<'static>,
        _,
        _,
    ) = {
        let bytes = notes();
        let trimmed = gate.trim_bytes(&bytes, &request).unwrap();
        let expected_report = serde_json::to_string(&trimmed.report).unwrap();
        let expected_rendered = trimmed.rendered.clone();
        let report = trimmed.report.clone().into_owned();
        assert!(report == trimmed.report);
        (
            trimmed.into_owned(),
            report,
            expected_report,
            expected_rendered,
        )
        // `bytes` is dropped here.
    };
    assert_eq!(kept.rendered, expected_rendered);
    assert!(kept.report == report);
    assert!(!report.decisions.is_empty());
    // An audit log on another thread needs `'static`.
    let logged = std::thread::spawn(move || serde_json::to_string(&report).unwrap())
        .join()
        .unwrap();
    assert_eq!(logged, expected_report);
    assert_eq!(Format::Json.render(&kept.answer).len(), {
        let bytes = notes();
        let again = gate.trim_bytes(&bytes, &request).unwrap();
        Format::Json.render(&again.answer).len()
    });
}

#[test]
fn a_host_matches_outcomes_and_roles_with_a_wildcard_arm() {
    // `Outcome`, `Role` and `Block` are `#[non_exhaustive]`: this is how a
    // host outside the crate matches them.
    let gate = Gate::embedded_default().unwrap();
    let bytes = notes();
    let trimmed = gate.trim_bytes(&bytes, &Request::new("selection")).unwrap();
    let mut withheld = 0;
    for line in &trimmed.report.decisions {
        match line.outcome {
            ctxgate::Outcome::Sent | ctxgate::Outcome::Cut | ctxgate::Outcome::Skeleton => {}
            _ => withheld += 1,
        }
    }
    assert!(withheld > 0);
    let word = match trimmed.answer.root.role {
        ctxgate::RoleName::Known(Role::Application) => "application",
        _ => "other",
    };
    assert_eq!(word, "application");
}
