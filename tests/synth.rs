//! `ctxgate::synth` and `ctxgate synth`: exact size, determinism, and
//! output that conforms and carries what benchmarks and policies need.

mod common;

use common::ctxgate;
use ctxgate::synth::synth;
use ctxgate::{Block, Role};
use ctxgate::{Limits, Tree};

const SEEDS: [u64; 4] = [0, 1, 42, u64::MAX];

#[test]
fn has_exactly_the_elements_asked_for_and_conforms() {
    for n in [1, 2, 3, 4, 5, 6, 7, 10, 31, 137, 1_000, 4_321, 25_000] {
        for seed in SEEDS {
            let answer = synth(n, seed);
            assert_eq!(Tree::new(&answer.root).len(), n, "n={n} seed={seed}");
            let findings = ctxgate::check(&answer);
            assert!(findings.is_empty(), "n={n} seed={seed}: {findings:?}");
            // What it writes reads back as the same answer, conforming.
            let bytes = ctxgate::Format::Json.render(&answer);
            let read = ctxgate::read_conforming(bytes.as_bytes(), &Limits::default())
                .unwrap_or_else(|e| panic!("n={n} seed={seed}: {e}"));
            assert_eq!(read, answer, "n={n} seed={seed}");
        }
    }
}

#[test]
fn zero_elements_is_read_as_one() {
    assert_eq!(Tree::new(&synth(0, 5).root).len(), 1);
}

#[test]
fn is_deterministic_for_a_seed_and_varies_across_seeds() {
    for n in [10, 1_000, 10_000] {
        let a = ctxgate::Format::Json.render(&synth(n, 9));
        let b = ctxgate::Format::Json.render(&synth(n, 9));
        assert_eq!(a, b, "n={n}");
        let c = ctxgate::Format::Json.render(&synth(n, 10));
        assert_ne!(a, c, "n={n}");
    }
}

#[test]
fn has_the_shape_of_a_real_app() {
    let answer = synth(20_000, 7);
    let json = ctxgate::Format::Json.render(&answer);
    let per_element = json.len() as f64 / 20_000.0;
    assert!(
        (120.0..=160.0).contains(&per_element),
        "{per_element:.1} bytes per element; real trees average ~140"
    );

    let tree = Tree::new(&answer.root);
    let nodes = tree.nodes();
    let depth = nodes.iter().map(|n| n.depth).max().unwrap();
    assert!((4..=10).contains(&depth), "depth {depth}");

    // The focus path ends at a paragraph that holds the selected text.
    let focus = tree.focus().expect("a focus path");
    let paragraph = tree.node(focus);
    assert_eq!(paragraph.role(), Role::Text);
    assert_eq!(paragraph.element.subrole.as_deref(), Some("paragraph"));
    let selected: Vec<_> = nodes.iter().filter(|n| n.selected).collect();
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0].parent, Some(focus));
    assert_eq!(selected[0].role(), Role::Text);

    let count = |f: &dyn Fn(&ctxgate::Node<'_, '_>) -> bool| nodes.iter().filter(|n| f(n)).count();
    let roles = [
        Role::Window,
        Role::Group,
        Role::Document,
        Role::Heading,
        Role::Text,
        Role::Link,
        Role::Image,
        Role::List,
        Role::Table,
        Role::Row,
        Role::Cell,
    ];
    for role in roles {
        assert!(count(&|n| n.role() == role) > 0, "no {role:?}");
    }
    assert!(count(&|n| n.role() == Role::Window) >= 3);
    assert!(count(&|n| n.element.visible == Some(false)) > 0);
    assert!(count(&|n| !n.visible) > 100, "hidden subtrees");
    for secure in ["secure", "AXSecureTextField"] {
        assert!(
            count(&|n| n.role() == Role::Text
                && n.element.subrole.as_deref() == Some(secure)
                && !n.element.content.is_empty())
                > 0,
            "no `{secure}` text with a value"
        );
    }
    assert!(count(&|n| n.element.attributes.author().is_some()) > 100);
    assert!(count(&|n| !n.element.attributes.related().is_empty()) > 20);
    assert!(count(&|n| n.element.url.is_some()) > 100);
    assert!(
        count(&|n| n
            .element
            .content
            .iter()
            .any(|c| matches!(c.block, Block::Image { .. })))
            > 20
    );

    // Secrets a policy must catch, inside ordinary text.
    assert!(json.matches("ghp_").count() > 5);
    assert!(json.matches("AKIA").count() > 5);
    let cards = regex::Regex::new(r"4111[ -]?1111[ -]?1111[ -]?\d{4}").unwrap();
    assert!(cards.find_iter(&json).count() > 10);
}

#[test]
fn the_cli_writes_the_same_answer_as_the_library() {
    let output = ctxgate(&["synth", "--elements", "500", "--seed", "3"], b"");
    assert_eq!(output.status.code(), Some(0));
    let mut expected = ctxgate::Format::Json.render(&synth(500, 3));
    expected.push('\n');
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);

    let output = ctxgate(&["synth", "--elements", "0"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: `--elements` must be at least 1: a tree has its root\n"
    );
}
