//! `ctxgate import --from FORMAT [FILE|-]`.
//!
//! Every real tree under `tests/fixtures/realworld/raw` (copies of the
//! project's collected trees, with their licenses and sources in
//! `tests/fixtures/SOURCES.md`) imports to an answer with no `check` errors
//! that reads back;
//! headings, links, rows and cells are as many as the source has, counted
//! by the source's own roles; secure values never reach the output; a few
//! outputs per format are golden files in `tests/import/` (`UPDATE_EXPECT=1`
//! rewrites them for review). Nothing here reads outside the repository.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ctxgate::import::{import, Format};
use ctxgate::{check, Answer, Block, Element, Limits, Role, Tree};
use proptest::prelude::*;
use serde_json::Value;

mod common;
use common::SECURE_MARKER;

/// Data files in `raw/` (tests/fixtures/SOURCES.md: 58, besides licenses
/// and manifests).
const REAL_FILES: usize = 58;

fn raw_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realworld/raw")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/import")
}

/// The format of a file under `raw/`, by its source folder.
fn format_of(relative: &Path) -> Format {
    let top = relative.components().next().unwrap().as_os_str();
    match top.to_str().unwrap() {
        // The Linux and Windows dumps share the Chromium text framing.
        "chromium-mac" | "chromium-other-platforms" | "chromium-uia-lowercase" => Format::AxDump,
        "screen2ax" => Format::AxJson,
        "odilia-atspi" => Format::AtspiJson,
        "axe-windows" => Format::UiaJson,
        "playwright-aria" => Format::Aria,
        other => panic!("no format for the source folder `{other}`"),
    }
}

/// Every data file under `raw/`, relative, sorted.
fn real_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap();
            if name.starts_with("LICENSE") || name == "MANIFEST.tsv" {
                continue;
            }
            out.push(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
    let root = raw_dir();
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    assert_eq!(
        files.len(),
        REAL_FILES,
        "expected {REAL_FILES} data files under raw/"
    );
    files
}

/// The bytes of a real tree; the largest is kept gzipped (`.json.gz`,
/// written with `gzip -9 -n`: a fixed 10-byte header, no name) and read
/// here as the file it compresses.
fn read_real(relative: &Path) -> Vec<u8> {
    let bytes = std::fs::read(raw_dir().join(relative))
        .unwrap_or_else(|e| panic!("{}: {e}", relative.display()));
    if relative.extension().is_some_and(|e| e == "gz") {
        assert_eq!(
            &bytes[..4],
            b"\x1f\x8b\x08\x00",
            "{}: plain gzip",
            relative.display()
        );
        return miniz_oxide::inflate::decompress_to_vec(&bytes[10..bytes.len() - 8]).unwrap();
    }
    bytes
}

fn import_real(relative: &Path) -> (Vec<u8>, Answer<'static>) {
    let bytes = read_real(relative);
    let answer = import(format_of(relative), &bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", relative.display()));
    (bytes, answer)
}

#[test]
fn every_real_tree_imports_to_a_conforming_answer_that_reads_back() {
    let mut per_format: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for relative in real_files() {
        let (_, answer) = import_real(&relative);
        let errors: Vec<String> = check(&answer)
            .iter()
            .filter(|f| f.is_error())
            .map(ToString::to_string)
            .collect();
        assert!(
            errors.is_empty(),
            "{}: {}",
            relative.display(),
            errors.join("; ")
        );
        let elements = Tree::new(&answer.root).len();
        let bytes = serde_json::to_vec(&answer).unwrap();
        let report = ctxgate::check_bytes(&bytes, &Limits::default()).unwrap();
        assert!(report.conforms, "{}: {:?}", relative.display(), report);
        assert_eq!(report.elements, elements);
        assert_eq!(answer.protocol, "0.2.0");
        let format = format_of(&relative);
        assert_eq!(answer.instance, format!("import:{format}"));
        let counts = per_format.entry(format.name()).or_default();
        counts.0 += 1;
        counts.1 += elements;
    }
    for (format, (files, elements)) in per_format {
        eprintln!("{format}: {files} files, {elements} elements");
    }
}

// ---------------------------------------------------------------------------
// Headings, links, rows and cells, counted in the source by its own roles.

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Counts {
    headings: usize,
    links: usize,
    rows: usize,
    cells: usize,
}

impl Counts {
    fn add(&mut self, kind: Option<Role>) {
        match kind {
            Some(Role::Heading) => self.headings += 1,
            Some(Role::Link) => self.links += 1,
            Some(Role::Row) => self.rows += 1,
            Some(Role::Cell) => self.cells += 1,
            _ => {}
        }
    }
}

fn answer_counts(answer: &Answer) -> Counts {
    let mut counts = Counts::default();
    for node in Tree::new(&answer.root).nodes() {
        counts.add(Some(node.role()));
    }
    counts
}

/// Which source words are headings, links, rows and cells. Apple's
/// `AXColumn` repeats the rows' cells and is not counted (nor reported).
fn source_kind(word: &str) -> Option<Role> {
    Some(match word {
        "AXHeading" | "heading" | "Heading" => Role::Heading,
        "AXLink" | "link" | "Link" | "Hyperlink" => Role::Link,
        "AXRow" | "table row" | "list item" | "tree item" | "ListItem" | "TableRow"
        | "TreeItem" | "DataItem" | "Header" | "listitem" | "row" | "treeitem" | "option" => {
            Role::Row
        }
        "AXCell" | "table cell" | "column header" | "row header" | "TableCell" | "ColumnHeader"
        | "RowHeader" | "HeaderItem" | "cell" | "gridcell" | "columnheader" | "rowheader" => {
            Role::Cell
        }
        _ => return None,
    })
}

fn dump_counts(text: &str) -> Counts {
    let mut counts = Counts::default();
    let mut column_depth: Option<usize> = None;
    for line in text.lines() {
        let plus = line.bytes().take_while(|&b| b == b'+').count();
        let rest = &line[plus..];
        if rest.trim().is_empty() {
            continue;
        }
        let depth = plus / 2;
        if column_depth.is_some_and(|d| depth > d) {
            continue;
        }
        column_depth = None;
        let word = match rest.strip_prefix('[') {
            Some(inner) => &inner[..inner.find(']').unwrap()],
            None => rest.split(' ').next().unwrap(),
        };
        if word == "AXColumn" {
            column_depth = Some(depth);
            continue;
        }
        counts.add(source_kind(word));
    }
    counts
}

fn ax_json_counts(node: &Value, counts: &mut Counts) {
    let role = node["role"]
        .as_str()
        .or_else(|| node["cls"].as_str())
        .unwrap_or("");
    if role == "AXColumn" {
        return;
    }
    counts.add(source_kind(role));
    for child in node["children"].as_array().into_iter().flatten() {
        ax_json_counts(child, counts);
    }
}

fn uia_type_word(id: u64) -> &'static str {
    match id {
        50005 => "Hyperlink",
        50007 => "ListItem",
        50024 => "TreeItem",
        50029 => "DataItem",
        50034 => "Header",
        50035 => "HeaderItem",
        _ => "",
    }
}

fn uia_counts(node: &Value, counts: &mut Counts) {
    let id = node
        .get("ControlTypeId")
        .or_else(|| node.pointer("/Properties/30003/Value"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    counts.add(source_kind(uia_type_word(id)));
    for child in node["Children"].as_array().into_iter().flatten() {
        uia_counts(child, counts);
    }
}

/// `el.snapshot`, the first entry of an `.a11ytest` zip, read from its
/// local header (the importer reads the central directory).
fn first_zip_entry(bytes: &[u8]) -> Vec<u8> {
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    let u32_at = |at: usize| {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
    };
    assert_eq!(&bytes[..4], b"PK\x03\x04");
    assert_eq!(u16_at(8), 8, "deflated");
    let start = 30 + u16_at(26) + u16_at(28);
    assert_eq!(&bytes[30..30 + u16_at(26)], b"el.snapshot");
    miniz_oxide::inflate::decompress_to_vec(&bytes[start..start + u32_at(18)]).unwrap()
}

fn json_of(bytes: &[u8]) -> Value {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice(bytes).unwrap()
}

fn source_counts(relative: &Path, bytes: &[u8]) -> Counts {
    let mut counts = Counts::default();
    match format_of(relative) {
        Format::AxDump => return dump_counts(std::str::from_utf8(bytes).unwrap()),
        Format::AxJson => ax_json_counts(&json_of(bytes), &mut counts),
        Format::AtspiJson => {
            for item in json_of(bytes).as_array().unwrap() {
                counts.add(source_kind(item["role"].as_str().unwrap()));
            }
        }
        Format::UiaJson => {
            let json = if bytes.starts_with(b"PK") {
                first_zip_entry(bytes)
            } else {
                bytes.to_vec()
            };
            uia_counts(&json_of(&json), &mut counts);
        }
        Format::Aria => {
            for line in std::str::from_utf8(bytes).unwrap().lines() {
                if let Some(item) = line.trim_start().strip_prefix("- ") {
                    let end = item.find([' ', ':', '[']).unwrap_or(item.len());
                    counts.add(source_kind(&item[..end]));
                }
            }
        }
    }
    counts
}

#[test]
fn headings_links_rows_and_cells_are_as_many_as_in_the_source() {
    let mut total = Counts::default();
    for relative in real_files() {
        let (bytes, answer) = import_real(&relative);
        let source = source_counts(&relative, &bytes);
        assert_eq!(answer_counts(&answer), source, "{}", relative.display());
        total.headings += source.headings;
        total.links += source.links;
        total.rows += source.rows;
        total.cells += source.cells;
    }
    // The comparison is not vacuous.
    eprintln!("{total:?}");
    assert!(total.headings > 300 && total.links > 1000 && total.rows > 500 && total.cells > 250);
}

// ---------------------------------------------------------------------------
// Secure fields.

fn secure_elements<'t>(answer: &'t Answer<'static>) -> Vec<&'t Element<'static>> {
    Tree::new(&answer.root)
        .nodes()
        .iter()
        .map(|n| n.element)
        .filter(|e| e.subrole.as_deref() == Some("secure"))
        .collect()
}

#[test]
fn secure_values_never_reach_the_output() {
    const BULLET: &str = "\u{2022}";
    let cases: &[(&str, &[&str])] = &[
        (
            "chromium-mac/html/input-password-expected-mac.txt",
            &[BULLET, "%E2%80%A2"],
        ),
        (
            "chromium-other-platforms/html/input-password-expected-uia-win.txt",
            &[BULLET, "%E2%80%A2"],
        ),
        (
            "chromium-other-platforms/html/input-password-expected-auralinux.txt",
            &[BULLET],
        ),
        ("chromium-mac/html/input-types-expected-mac.txt", &[BULLET]),
        (
            "chromium-uia-lowercase/html/input-password-expected-uia-win.txt",
            &[BULLET],
        ),
        (
            "chromium-uia-lowercase/html/input-types-expected-uia-win.txt",
            &[BULLET],
        ),
        (
            "playwright-aria/insurance_navigator/58c2dae3b826dc0a70316b4e267125278417f851.md",
            &["test_password_123"],
        ),
    ];
    for (relative, secrets) in cases {
        let (_, answer) = import_real(Path::new(relative));
        let secure = secure_elements(&answer);
        assert!(!secure.is_empty(), "{relative}: no secure field");
        for element in secure {
            // Nothing of the value: at most the fixed marker that says it is filled.
            assert!(element.children.is_empty());
            let texts: Vec<_> = element
                .content
                .iter()
                .map(|c| serde_json::to_string(c).unwrap())
                .collect();
            assert!(
                texts.iter().all(|t| t.contains(SECURE_MARKER)),
                "{relative}: {texts:?}"
            );
        }
        let output = serde_json::to_string_pretty(&answer).unwrap();
        for secret in *secrets {
            assert!(!output.contains(secret), "{relative}: `{secret}` leaked");
        }
    }
    // No file leaks a run of mask bullets.
    for relative in real_files() {
        let (_, answer) = import_real(&relative);
        let output = serde_json::to_string(&answer).unwrap();
        assert!(
            !output.contains("\u{2022}\u{2022}"),
            "{}",
            relative.display()
        );
    }
}

#[test]
fn every_format_drops_a_password_value_it_is_given() {
    let cases: &[(Format, &str)] = &[
        (
            Format::AxDump,
            "AXWebArea\n++AXTextField AXSubrole=AXSecureTextField AXTitle='PIN' AXValue='hunter2'\n++++AXStaticText AXValue='hunter2'",
        ),
        (
            Format::AxDump,
            "[document web]\n++[password text] name='PIN' text='hunter2'",
        ),
        (
            Format::AxDump,
            "Document\n++Edit IsPassword=true Name='PIN' Value.Value='hunter2'",
        ),
        (
            Format::AxJson,
            r#"{"role":"AXWindow","name":"w","children":[{"role":"AXTextField","subrole":"AXSecureTextField","name":"PIN","value":"hunter2","children":[{"role":"AXStaticText","value":"hunter2"}]}]}"#,
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"parent":{"sender":"","id":"/null"},"role":"Application","name":"A","text":"","states":[0,0],"children":[{"sender":"a","id":"/p"}]},
               {"object":{"sender":"a","id":"/p"},"parent":{"sender":"a","id":"/r"},"role":"PasswordText","name":"PIN","text":"hunter2","states":[4096,0],"children":[]}]"#,
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50004,"Name":"PIN","Properties":{"30019":{"Value":true},"30045":{"Value":"hunter2"}},"Children":[{"ControlTypeId":50020,"Name":"hunter2"}]}"#,
        ),
        (
            Format::Aria,
            "- textbox \"Your password\" [active] [ref=e3]: hunter2",
        ),
        (
            Format::Aria,
            "- textbox \"New password\" [ref=e4]:\n  - text: hunter2\n- text: after",
        ),
    ];
    for (format, input) in cases {
        let answer = import(*format, input.as_bytes()).unwrap();
        let output = serde_json::to_string(&answer).unwrap();
        assert!(!output.contains("hunter2"), "{format}: {output}");
        let secure = secure_elements(&answer);
        assert_eq!(secure.len(), 1, "{format}: {output}");
        assert!(check(&answer).iter().all(|f| !f.is_error()), "{format}");
    }
}

// ---------------------------------------------------------------------------
// Golden outputs.

/// One line per element: role/subrole, id, states, title, url, text.
fn outline(answer: &Answer) -> String {
    fn line(element: &Element, depth: usize, out: &mut String) {
        let _ = write!(out, "{}{}", "  ".repeat(depth), element.role);
        if let Some(subrole) = &element.subrole {
            let _ = write!(out, "/{subrole}");
        }
        let _ = write!(out, " #{}", element.id);
        for (name, state) in [("selected", element.selected), ("focused", element.focused)] {
            if state == Some(true) {
                let _ = write!(out, " [{name}]");
            }
        }
        match element.visible {
            Some(true) => out.push_str(" [shown]"),
            Some(false) => out.push_str(" [hidden]"),
            None => {}
        }
        if let Some(title) = &element.title {
            let _ = write!(out, " {title:?}");
        }
        if let Some(url) = &element.url {
            let _ = write!(out, " <{url}>");
        }
        if !element.attributes.is_empty() {
            let _ = write!(
                out,
                " {}",
                serde_json::to_string(&element.attributes).unwrap()
            );
        }
        for content in &element.content {
            if let Block::Text { text } = &content.block {
                let _ = write!(out, " : {text:?}");
            }
        }
        out.push('\n');
        for child in element.children.iter() {
            line(child, depth + 1, out);
        }
    }
    let mut out = format!("{} {}\n", answer.protocol, answer.instance);
    line(&answer.root, 0, &mut out);
    out
}

/// Compares `actual` with the golden file, or rewrites it under
/// `UPDATE_EXPECT=1`.
fn expect(golden: &str, actual: &str) {
    let path = fixtures().join(golden);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_EXPECT=1 to write it)",
            path.display()
        )
    });
    assert_eq!(
        actual, expected,
        "{golden} differs; run with UPDATE_EXPECT=1 and review the diff"
    );
}

/// (format, source, golden). A source under `raw/` is named from there; a
/// derived fixture lives in `tests/import/` and its README names its source.
const GOLDEN: &[(Format, &str, &str)] = &[
    (
        Format::AxDump,
        "raw:chromium-mac/aria/apg-patterns-thirdparty/tabs-manual-expected-mac.txt",
        "tabs-manual-mac.txt",
    ),
    (
        Format::AxDump,
        "raw:chromium-mac/html/table-simple-expected-mac.txt",
        "table-simple-mac.txt",
    ),
    (
        Format::AxDump,
        "raw:chromium-mac/html/input-types-expected-mac.txt",
        "input-types-mac.txt",
    ),
    (
        Format::AxDump,
        "raw:chromium-other-platforms/html/input-password-expected-auralinux.txt",
        "input-password-auralinux.txt",
    ),
    (
        Format::AxDump,
        "raw:chromium-other-platforms/html/table-simple-expected-auralinux.txt",
        "table-simple-auralinux.txt",
    ),
    (
        Format::AxDump,
        "raw:chromium-uia-lowercase/html/input-types-expected-uia-win.txt",
        "input-types-uia-lowercase.txt",
    ),
    (
        Format::AxDump,
        "raw:chromium-uia-lowercase/aria/aria-gridcell-focused-only-expected-uia-win.txt",
        "grid-uia-lowercase.txt",
    ),
    (
        Format::AxJson,
        "raw:screen2ax/system_acc.json",
        "screen2ax-system-acc.txt",
    ),
    (
        Format::AxJson,
        "fixture:screen2ax-custom-acc-excerpt.json",
        "screen2ax-output-excerpt.txt",
    ),
    (
        Format::AxJson,
        "fixture:screen2ax-secure-field-derived.json",
        "screen2ax-secure-field-derived.txt",
    ),
    (
        Format::AtspiJson,
        "fixture:atspi-zbus-excerpt.json",
        "atspi-zbus-excerpt.txt",
    ),
    (
        Format::UiaJson,
        "raw:axe-windows/WildlifeManager_AxeWindows_0_3_1.a11ytest",
        "uia-wildlife-manager.txt",
    ),
    (
        Format::UiaJson,
        "raw:axe-windows/MonsterDataGrid.snapshot",
        "uia-monster-datagrid.txt",
    ),
    (
        Format::Aria,
        "raw:playwright-aria/insurance_navigator/58c2dae3b826dc0a70316b4e267125278417f851.md",
        "aria-insurance-login.txt",
    ),
    (
        Format::Aria,
        "raw:playwright-aria/swag_labs/891b002f3b45dfcc079b455e6a36a95af7c480b0.md",
        "aria-swag-labs-checkout.txt",
    ),
];

fn source_path(source: &str) -> PathBuf {
    match source.split_once(':').unwrap() {
        ("raw", relative) => raw_dir().join(relative),
        ("fixture", name) => fixtures().join(name),
        _ => unreachable!(),
    }
}

#[test]
fn golden_outlines() {
    for (format, source, golden) in GOLDEN {
        let bytes = std::fs::read(source_path(source)).unwrap();
        let answer = import(*format, &bytes).unwrap();
        let text = format!("# {source} --from {format}\n{}", outline(&answer));
        expect(golden, &text);
    }
}

#[test]
fn golden_json_of_the_cli() {
    let source = raw_dir().join("chromium-mac/html/input-password-expected-mac.txt");
    let output = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["import", "--from", "ax-dump"])
        .arg(&source)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    expect(
        "input-password-mac.json",
        std::str::from_utf8(&output.stdout).unwrap(),
    );
}

// ---------------------------------------------------------------------------
// The command line and errors.

fn run(args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn cli_reads_stdin_and_writes_the_library_answer() {
    let relative = "playwright-aria/swag_labs/891b002f3b45dfcc079b455e6a36a95af7c480b0.md";
    let (bytes, answer) = import_real(Path::new(relative));
    let expected = format!("{}\n", serde_json::to_string_pretty(&answer).unwrap());
    for args in [
        &["import", "--from", "aria"][..],
        &["import", "--from", "aria", "-"][..],
    ] {
        let output = run(args, &bytes);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
    }
}

#[test]
fn cli_exit_codes_and_empty_stdout_on_failure() {
    let rejected = run(&["import", "--from", "ax-json"], b"not json");
    assert_eq!(rejected.status.code(), Some(1));
    assert!(rejected.stdout.is_empty());
    assert_eq!(
        String::from_utf8(rejected.stderr).unwrap(),
        "error: cannot import the `ax-json` input: invalid JSON: expected ident at line 1 column 2\n"
    );
    let unknown = run(&["import", "--from", "xml"], b"");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(unknown.stdout.is_empty());
    let missing = run(
        &["import", "--from", "aria", "/nonexistent/snapshot.md"],
        b"",
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(missing.stdout.is_empty());
}

#[test]
fn errors_say_what_and_where() {
    let deep: String = (0..300)
        .map(|d| format!("{}AXGroup\n", "++".repeat(d)))
        .collect();
    let cases: &[(Format, &[u8], &str)] = &[
        (
            Format::AxDump,
            b"\n++++\n",
            "cannot import the `ax-dump` input: the input has no node lines",
        ),
        (
            Format::AxDump,
            deep.as_bytes(),
            "cannot import the `ax-dump` input at line 258: the tree is deeper than 256 levels",
        ),
        (
            Format::AxDump,
            b"AXWebArea\n++{\"role\": 1}\n",
            "cannot import the `ax-dump` input at line 2: \"{\\\"role\\\":\" is not a role: expected `AXRole`, `[at-spi role]` or a UIA control type such as `Edit`",
        ),
        (
            Format::AxJson,
            b"[1,",
            "cannot import the `ax-json` input: invalid JSON: EOF while parsing a value at line 1 column 3",
        ),
        (
            Format::AxJson,
            b"42",
            "cannot import the `ax-json` input: expected a JSON object with `role` and `children` (or an array of them)",
        ),
        (
            Format::AtspiJson,
            b"{}",
            "cannot import the `atspi-json` input: expected a JSON array of AT-SPI cache items (`object`, `parent`, `children`, `role`)",
        ),
        (
            Format::AtspiJson,
            b"[{\"role\": \"Frame\"}]",
            "cannot import the `atspi-json` input: item 0 has no `object` reference (`{\"sender\", \"id\"}` or `{\"name\", \"path\"}`)",
        ),
        (
            Format::UiaJson,
            b"PK\x03\x04 truncated",
            "cannot import the `uia-json` input: not a zip archive: no end-of-directory record",
        ),
        (
            Format::UiaJson,
            b"\xEF\xBB\xBF[]",
            "cannot import the `uia-json` input: expected an Axe.Windows element: a JSON object with `Properties` and `Children`",
        ),
        (
            Format::Aria,
            b"# Page snapshot\n\n```yaml\n```\n",
            "cannot import the `aria` input: the input has no snapshot items (`- role \"name\"`)",
        ),
        (
            Format::Aria,
            b"- heading \"Open [ref=e1]\n",
            "cannot import the `aria` input at line 1: a name's quote is not closed",
        ),
        (
            Format::Aria,
            b"ok\n\xFF\n",
            "cannot import the `aria` input at line 2: the input is not UTF-8",
        ),
    ];
    for (format, input, message) in cases {
        let err = import(*format, input).unwrap_err();
        assert_eq!(err.to_string(), *message, "{format}");
    }
}

#[test]
fn focus_is_one_path_from_the_window_down() {
    // The AT-SPI dump marks only the password field focused.
    let (_, answer) = import_real(Path::new(
        "chromium-other-platforms/html/input-password-expected-auralinux.txt",
    ));
    let tree = Tree::new(&answer.root);
    let path: Vec<Role> = tree
        .nodes()
        .iter()
        .filter(|n| n.focused)
        .map(|n| n.role())
        .collect();
    assert_eq!(
        path,
        [Role::Window, Role::Document, Role::Group, Role::Text]
    );
    let focus = tree.focus().unwrap();
    assert_eq!(tree.node(focus).element.subrole.as_deref(), Some("secure"));
}

#[test]
fn format_names_round_trip() {
    for format in Format::ALL {
        assert_eq!(format.name().parse::<Format>().unwrap(), format);
    }
    assert_eq!(
        "xml".parse::<Format>().unwrap_err().to_string(),
        "unknown import format `xml`; expected one of ax-dump, ax-json, atspi-json, uia-json, aria"
    );
}

#[test]
fn truncated_real_trees_import_or_fail_cleanly() {
    for relative in real_files() {
        let bytes = read_real(&relative);
        let format = format_of(&relative);
        // Large files get fewer cuts: a debug build parses them slowly.
        let cuts = if bytes.len() > 300_000 { 3 } else { 12 };
        for i in 1..cuts {
            let cut = &bytes[..bytes.len() * i / cuts];
            if let Ok(answer) = import(format, cut) {
                let errors = check(&answer).into_iter().filter(|f| f.is_error()).count();
                assert_eq!(errors, 0, "{} cut at {}", relative.display(), cut.len());
            }
        }
    }
}

#[test]
fn selection_is_kept_on_the_element_the_source_selects() {
    let (_, answer) = import_real(Path::new(
        "chromium-mac/aria/aria-selected-expected-mac.txt",
    ));
    let tree = Tree::new(&answer.root);
    let selected: Vec<&Element> = tree
        .nodes()
        .iter()
        .filter(|n| n.selected)
        .map(|n| n.element)
        .collect();
    assert_eq!(selected.len(), 1);
    assert!(matches!(&selected[0].content[0].block, Block::Text { text } if text == "1"));
}

// ---------------------------------------------------------------------------
// Converted answers: real trees of 40 elements or more as 0.2.0 answers, for
// whoever needs real input without running the importer (the
// context-quality benchmark). Each is exactly what `ctxgate import` writes
// today (`UPDATE_EXPECT=1` rewrites them); tests/fixtures/SOURCES.md names
// their sources.

/// (format, source under `raw/` or `fixture:`, answer under `answers/`).
const CONVERTED: &[(Format, &str, &str)] = &[
    (
        Format::AxJson,
        "raw:screen2ax/system_acc.json",
        "screen2ax-chats-window.json",
    ),
    (
        Format::AxJson,
        "fixture:screen2ax-custom-acc-excerpt.json",
        "screen2ax-output-excerpt.json",
    ),
    (
        Format::Aria,
        "raw:playwright-aria/insurance_navigator/db24e1800bd10f307f6a248f7adafd5d3abf01fd.md",
        "aria-insurance-navigator-upload.json",
    ),
    (
        Format::AtspiJson,
        "raw:odilia-atspi/zbus_docs_cache_items.json",
        "atspi-firefox-zbus-docs.json",
    ),
    (
        Format::AxDump,
        "raw:chromium-mac/aria/apg-patterns-thirdparty/data-grids-expected-mac.txt",
        "mac-apg-data-grids.json",
    ),
    (
        Format::AxDump,
        "raw:chromium-mac/aria/apg-patterns-thirdparty/sortable-table-expected-mac.txt",
        "mac-apg-sortable-table.json",
    ),
    (
        Format::AxDump,
        "raw:chromium-mac/aria/apg-patterns-thirdparty/treegrid-1-expected-mac.txt",
        "mac-apg-treegrid.json",
    ),
    (
        Format::AxDump,
        "raw:chromium-other-platforms/html/input-types-expected-auralinux.txt",
        "atspi-input-types.json",
    ),
    (
        Format::AxDump,
        "raw:chromium-uia-lowercase/html/input-types-expected-uia-win.txt",
        "uia-input-types.json",
    ),
];

#[test]
fn converted_answers_are_what_the_importer_writes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/answers");
    for (format, source, name) in CONVERTED {
        let bytes = match source.split_once(':').unwrap() {
            ("raw", relative) => read_real(Path::new(relative)),
            ("fixture", file) => std::fs::read(fixtures().join(file)).unwrap(),
            _ => unreachable!(),
        };
        let answer = import(*format, &bytes).unwrap();
        let elements = Tree::new(&answer.root).len();
        assert!(elements >= 40, "{source}: {elements} elements");
        let text = format!("{}\n", serde_json::to_string_pretty(&answer).unwrap());
        let path = dir.join(name);
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_EXPECT=1 writes it)", path.display()));
        assert_eq!(
            text, expected,
            "{name} differs from `ctxgate import --from {format}` of {source}"
        );
        let report = ctxgate::check_bytes(expected.as_bytes(), &Limits::default()).unwrap();
        assert!(report.conforms, "{name}: {report:?}");
    }
}

// ---------------------------------------------------------------------------
// Every format's secure-field signal, role words in
// any case, schema variants imported or refused, nothing-kept refused.

/// The answer's elements below the synthesized root, as `outline` writes
/// them without the header line.
fn body(answer: &Answer) -> String {
    outline(answer).split_once('\n').unwrap().1.to_string()
}

#[test]
fn every_formats_secure_signal_makes_a_secure_field_with_only_the_marker() {
    const FILLED: &str = "[secure value not imported]";
    let cases: &[(Format, &str, bool)] = &[
        // macapptree / Screen2AX trees carry no subrole: the role description says it.
        (
            Format::AxJson,
            r#"{"role":"AXWindow","name":"Log in","children":[{"role":"AXTextField","role_description":"secure text field","name":"PIN","value":"hunter2"}]}"#,
            true,
        ),
        (
            Format::AxJson,
            r#"{"role":"AXWindow","name":"Log in","children":[{"role":"AXTextField","role_description":"Secure Text Field","name":"PIN","value":""}]}"#,
            false,
        ),
        (
            Format::AxDump,
            "AXWebArea\n++AXTextField AXRoleDescription='secure text field' AXTitle='PIN' AXValue='hunter2'",
            true,
        ),
        // Screen2AX's schema has no such signal, but a value is never copied
        // into a title where one appears.
        (
            Format::AxJson,
            r#"{"cls":"Group","value":null,"children":[{"cls":"AXTextArea","role_description":"secure text field","value":"hunter2","children":[]}]}"#,
            true,
        ),
        // Either signal is enough, whatever the other says.
        (
            Format::AxJson,
            r#"{"role":"AXWindow","name":"Log in","children":[{"role":"AXTextField","subrole":"AXSearchField","role_description":"secure text field","name":"PIN","value":"hunter2"}]}"#,
            true,
        ),
        (
            Format::AxDump,
            "AXWebArea\n++AXTextField AXSubrole=AXSearchField AXRoleDescription='secure text field' AXTitle='PIN' AXValue='hunter2'",
            true,
        ),
        // `IsPassword` in any case, name and value.
        (Format::AxDump, "Document\n++Edit Name='PIN' IsPassword=True Value.Value='hunter2'", true),
        (Format::AxDump, "Document\n++Edit Name='PIN' IsPassword='TRUE' Value.Value='hunter2'", true),
        (Format::AxDump, "Document\n++Edit Name='PIN' isPassword=1", false),
        (Format::AxDump, "document\n++textbox Name='PIN' IsPassword=True Value.Value='hunter2'", true),
        // AT-SPI: the role, in any spelling, or the input type.
        (Format::AxDump, "[document web]\n++[password text] name='PIN' caret_offset=7", true),
        (Format::AxDump, "[document web]\n++[entry] name='PIN' text-input-type:password text='hunter2'", true),
        (Format::AxDump, "[document web]\n++[entry] name='PIN' text-input-type:password", false),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"parent":{"sender":"","id":"/null"},"role":"Application","name":"A","states":[0,0],"children":[{"sender":"a","id":"/p"}]},
               {"object":{"sender":"a","id":"/p"},"parent":{"sender":"a","id":"/r"},"role":"password text","name":"PIN","text":"hunter2","states":[0,0],"children":[]}]"#,
            true,
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"parent":{"sender":"","id":"/null"},"role":"Application","name":"A","states":[0,0],"children":[{"sender":"a","id":"/p"}]},
               {"object":{"sender":"a","id":"/p"},"parent":{"sender":"a","id":"/r"},"role":"PASSWORD_TEXT","name":"PIN","text":"","states":[0,0],"children":[]}]"#,
            false,
        ),
        // UIA JSON: `IsPassword` as text in any case.
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50004,"Name":"PIN","Properties":{"30019":{"Value":"True"},"30045":{"Value":"hunter2"}}}"#,
            true,
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50004,"Name":"PIN","Properties":{"30019":{"Value":null,"TextValue":"True"}}}"#,
            false,
        ),
        (Format::Aria, "- textbox \"PIN or password\" [ref=e3]: hunter2", true),
        (Format::Aria, "- textbox \"Password\" [ref=e3]:\n  - /placeholder: Your password", false),
        // A name that reads `password` as the floor reads a subrole (red
        // team: the importer looked for the word as written, so these
        // values were imported as text).
        (Format::Aria, "- textbox \"Pass\u{ad}word\" [ref=e3]: hunter2", true),
        (Format::Aria, "- textbox \"New pass word\" [ref=e3]: hunter2", true),
        (Format::Aria, "- textbox \"ＰＡＳＳＷＯＲＤ\" [ref=e3]: hunter2", true),
    ];
    for (format, input, filled) in cases {
        let answer =
            import(*format, input.as_bytes()).unwrap_or_else(|e| panic!("{format}: {input}: {e}"));
        let secure = secure_elements(&answer);
        assert_eq!(secure.len(), 1, "{format}: {input}\n{}", body(&answer));
        let field = secure[0];
        let title = field.title.as_deref().unwrap_or_default();
        assert!(
            [
                "PIN",
                "Password",
                "PIN or password",
                "",
                "Pass\u{ad}word",
                "New pass word",
                "ＰＡＳＳＷＯＲＤ"
            ]
            .contains(&title),
            "{input}"
        );
        let texts: Vec<String> = field
            .content
            .iter()
            .map(|c| match &c.block {
                Block::Text { text } => text.to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        let expected: &[&str] = if *filled { &[FILLED] } else { &[] };
        assert_eq!(texts, expected, "{format}: {input}");
        assert!(field.children.is_empty() && field.attributes.is_empty());
        let json = serde_json::to_string(&answer).unwrap();
        assert!(!json.contains("hunter2"), "{format}: {json}");
        assert!(check(&answer).iter().all(|f| !f.is_error()), "{format}");
    }
}

#[test]
fn role_words_are_read_in_any_case_where_sources_vary() {
    let cases: &[(Format, &str, &str)] = &[
        // Chromium's UIA dumps: control types in any case, or ARIA role words.
        (
            Format::AxDump,
            "document\n++group\n++++edit Name='Note' Value.Value='hi'\n++++HYPERLINK Name='More'\n++++img Name='Logo'\n++++description Name='Plain words'",
            "Application #app\n  Window #window\n    Document #n3\n      Group #n4\n        Text/Edit #n5 \"Note\" : \"hi\"\n        Link #n6 \"More\"\n        Image #n7 \"Logo\"\n        Text #n8 : \"Plain words\"\n",
        ),
        // An ARIA word in another case; a control type wins where both match.
        (
            Format::AxDump,
            "Document\n++TextBox Name='Note' Value.Value='hi'\n++Text Name='Plain'",
            "Application #app\n  Window #window\n    Document #n3\n      Text/textbox #n4 \"Note\" : \"hi\"\n      Text #n5 : \"Plain\"\n",
        ),
        // `Tab` is a tab control; `tab` (ARIA) a tab in it.
        (
            Format::AxDump,
            "Document\n++Tab Name='Views'\n++++TabItem Name='One'\n++++tab Name='Two'",
            "Application #app\n  Window #window\n    Document #n3\n      Window/Tab #n4 \"Views\"\n        Text/TabItem #n5 : \"One\"\n        Text/tab #n6 : \"Two\"\n",
        ),
        // AT-SPI role words in any spelling.
        (
            Format::AxDump,
            "[document web]\n++[PUSH_BUTTON] name='Send'\n++[heading] name='Inbox'",
            "Application #app\n  Window #window\n    Document #n3\n      Text/PushButton #n4 : \"Send\"\n      Heading #n5 \"Inbox\"\n",
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"parent":{"sender":"","id":"/null"},"role":"application","name":"A","states":[0,0],"children":[{"sender":"a","id":"/f"}]},
               {"object":{"sender":"a","id":"/f"},"parent":{"sender":"a","id":"/r"},"role":"frame","name":"Mail","states":[0,0],"children":[{"sender":"a","id":"/b"}]},
               {"object":{"sender":"a","id":"/b"},"parent":{"sender":"a","id":"/f"},"role":"push button","name":"Send","states":[0,0],"children":[]}]"#,
            "Application #/r \"A\"\n  Window #/f [hidden] \"Mail\"\n    Text/PushButton #/b : \"Send\"\n",
        ),
    ];
    for (format, input, expected) in cases {
        let answer =
            import(*format, input.as_bytes()).unwrap_or_else(|e| panic!("{format}: {input}: {e}"));
        assert_eq!(body(&answer), *expected, "{format}: {input}");
        assert!(check(&answer).iter().all(|f| !f.is_error()), "{format}");
    }
}

#[test]
fn trees_the_importer_does_not_understand_are_refused_naming_what_and_where() {
    let cases: &[(Format, &str, &str)] = &[
        (
            Format::AxJson,
            r#"{"kind":"AXWindow","children":[]}"#,
            "cannot import the `ax-json` input: the top-level object has neither `role` (macapptree) nor `cls` (Screen2AX output); its keys are \"children\", \"kind\"",
        ),
        (
            Format::AxJson,
            r#"{"role":"AXWindow","children":[{"role":"AXGroup","children":[{"name":"x","AXRole":"AXButton"}]}]}"#,
            "cannot import the `ax-json` input: `/children/0/children/0` has neither `role` (macapptree) nor `cls` (Screen2AX output); its keys are \"AXRole\", \"name\"",
        ),
        (
            Format::AxJson,
            r#"[{"role":"AXWindow"},{"cls":"Group","children":[7]}]"#,
            "cannot import the `ax-json` input: `/1/children/0` is a number, not a node: expected an object with `role` (macapptree) or `cls` (Screen2AX)",
        ),
        (
            Format::AxJson,
            r#"{"role":"AXWindow","children":{"role":"AXGroup"}}"#,
            "cannot import the `ax-json` input: `/children` is not a list of nodes",
        ),
        (
            Format::AxJson,
            r#"{"cls":7}"#,
            "cannot import the `ax-json` input: `/cls` is not a role name: expected a string such as `AXWindow`",
        ),
        (
            Format::AxDump,
            "rootWebArea name='x'\n++genericContainer\n",
            "cannot import the `ax-dump` input at line 1: \"rootWebArea\" starts a Blink dump (`-expected-blink.txt`), which is not supported; import the platform dump (`-expected-mac.txt`, `-expected-auralinux.txt`, `-expected-uia-win.txt`) instead",
        ),
        (
            Format::AxDump,
            "ROLE_SYSTEM_DOCUMENT READONLY FOCUSABLE\n",
            "cannot import the `ax-dump` input at line 1: \"ROLE_SYSTEM_DOCUMENT\" starts a Windows IA2 dump (`-expected-win.txt`); import the UIA dump (`-expected-uia-win.txt`) instead",
        ),
        (
            Format::AxDump,
            "android.webkit.WebView focusable focused scrollable\n",
            "cannot import the `ax-dump` input at line 1: \"android.webkit.WebView\" starts an Android dump (`-expected-android.txt`), which is not supported",
        ),
        (
            Format::AxDump,
            "AXWebArea\n++AXGroup\n++++[section]\n",
            "cannot import the `ax-dump` input at line 3: \"section\" is an AT-SPI (`[role]`) role, but line 1 started a macOS (`AXRole`) dump; a dump has one dialect",
        ),
        (
            Format::AxDump,
            "document\n++group\n++++frobnicator Name='x'\n",
            "cannot import the `ax-dump` input at line 3: \"frobnicator\" is not a role: expected `AXRole`, `[at-spi role]` or a UIA control type such as `Edit`",
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"name":"A"}]"#,
            "cannot import the `atspi-json` input: `/0/role` is missing: every AT-SPI cache item names its role (`Frame`, `PushButton`)",
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"role":"Frame"},{"object":{"sender":"a","id":"/s"},"role":75}]"#,
            "cannot import the `atspi-json` input: `/1/role` is a number, not a role name: expected an AT-SPI role such as `Frame` or `PushButton`",
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"role":"Frame","states":["focused"]}]"#,
            "cannot import the `atspi-json` input: `/0/states` is not AT-SPI's state set: expected two 32-bit numbers such as `[4096, 0]`",
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50032,"Name":"w","Children":[{"Name":"x","Children":[]}]}"#,
            "cannot import the `uia-json` input: `/Children/0` has no control type: expected `ControlTypeId` or `Properties` › `30003` › `Value` (a number such as 50004)",
        ),
        (
            Format::UiaJson,
            r#"{"Name":"x"}"#,
            "cannot import the `uia-json` input: the top-level element has no control type: expected `ControlTypeId` or `Properties` › `30003` › `Value` (a number such as 50004)",
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50032,"Children":"none"}"#,
            "cannot import the `uia-json` input: `/Children` is not a list of elements",
        ),
        // Understood, but nothing in it is kept: an error, not an empty shell.
        (
            Format::AxJson,
            r#"{"cls":"Group","value":null,"box":[0,0,10,10],"children":[{"cls":"Group","value":null,"box":[0,0,5,5],"children":[]}]}"#,
            "cannot import the `ax-json` input: nothing in it could be kept: its 2 nodes are only controls without a label, window furniture or empty groups; check that `--from ax-json` is the input's format",
        ),
        (
            Format::AxDump,
            "AXGroup\n++AXScrollBar\n++++AXStaticText AXValue='50%'\n",
            "cannot import the `ax-dump` input: nothing in it could be kept: its 3 nodes are only controls without a label, window furniture or empty groups; check that `--from ax-dump` is the input's format",
        ),
        (
            Format::Aria,
            "- separator\n- button [ref=e2]\n",
            "cannot import the `aria` input: nothing in it could be kept: its 2 nodes are only controls without a label, window furniture or empty groups; check that `--from aria` is the input's format",
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50026}"#,
            "cannot import the `uia-json` input: nothing in it could be kept: its 1 node is only controls without a label, window furniture or empty groups; check that `--from uia-json` is the input's format",
        ),
    ];
    for (format, input, message) in cases {
        let err = import(*format, input.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), *message, "{format}: {input}");
    }
}

#[test]
fn a_screen2ax_output_tree_is_imported_not_an_empty_shell() {
    // The CLI's view of it: exit 0 with the tree's text, and exit 1
    // with the reason when nothing in the input is understood.
    let bytes = std::fs::read(fixtures().join("screen2ax-custom-acc-excerpt.json")).unwrap();
    let output = run(&["import", "--from", "ax-json"], &bytes);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = ctxgate::check_bytes(&output.stdout, &Limits::default()).unwrap();
    assert!(report.conforms && report.elements == 53, "{report:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    for words in [
        "Set up a budget\\nfor a student.",
        "go to news | news | news",
        "New Chat",
        "11:48",
    ] {
        assert!(text.contains(words), "{words}");
    }
    let refused = run(&["import", "--from", "ax-json"], br#"{"children":[]}"#);
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    assert_eq!(
        String::from_utf8(refused.stderr).unwrap(),
        "error: cannot import the `ax-json` input: the top-level object has neither `role` (macapptree) nor `cls` (Screen2AX output); its keys are \"children\"\n"
    );
}

/// One secure field in `format`, holding `secret` as its value, with the
/// format's secure signal spelled as `spelling` picks.
fn secure_input(format: Format, spelling: usize, secret: &str) -> String {
    let case = |word: &str| match spelling % 3 {
        0 => word.to_string(),
        1 => word.to_uppercase(),
        _ => word.to_lowercase(),
    };
    match (format, spelling % 4) {
        (Format::AxDump, 0) => format!(
            "AXWebArea\n++AXTextField AXSubrole=AXSecureTextField AXTitle='PIN' AXValue='{secret}'\n++++AXStaticText AXValue='{secret}'"
        ),
        (Format::AxDump, 1) => format!(
            "AXWebArea\n++AXTextField AXRoleDescription='{}' AXTitle='PIN' AXValue='{secret}'",
            case("secure text field")
        ),
        (Format::AxDump, 2) => format!(
            "document\n++textbox Name='PIN' {}={} Value.Value='{secret}'",
            case("IsPassword"),
            case("True")
        ),
        (Format::AxDump, _) => format!(
            "[document web]\n++[{}] name='PIN' text='{secret}'\n++++[static] name='{secret}'",
            case("password text")
        ),
        (Format::AxJson, 1) => format!(
            r#"{{"cls":"Group","value":null,"children":[{{"cls":"AXTextArea","role_description":"{}","value":"{secret}","children":[]}}]}}"#,
            case("secure text field")
        ),
        (Format::AxJson, _) => format!(
            r#"{{"role":"AXWindow","name":"w","children":[{{"role":"AXTextField","role_description":"{}","name":"PIN","value":"{secret}","children":[{{"role":"AXStaticText","value":"{secret}"}}]}}]}}"#,
            case("secure text field")
        ),
        (Format::AtspiJson, _) => format!(
            r#"[{{"object":{{"sender":"a","id":"/r"}},"parent":{{"sender":"","id":"/null"}},"role":"Application","name":"A","states":[0,0],"children":[{{"sender":"a","id":"/p"}}]}},
               {{"object":{{"sender":"a","id":"/p"}},"parent":{{"sender":"a","id":"/r"}},"role":"{}","name":"PIN","text":"{secret}","states":[0,0],"children":[]}}]"#,
            case("Password Text")
        ),
        (Format::UiaJson, _) => format!(
            r#"{{"ControlTypeId":50004,"Name":"PIN","Properties":{{"30019":{{"Value":"{}"}},"30045":{{"Value":"{secret}"}}}},"Children":[{{"ControlTypeId":50020,"Name":"{secret}"}}]}}"#,
            case("True")
        ),
        (Format::Aria, _) => format!("- textbox \"{}\" [ref=e3]: {secret}", case("Password")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the value and however the signal is spelled, a secure
    /// field's value never reaches the answer, and its content is the
    /// fixed marker exactly when the value is not empty.
    #[test]
    fn a_secure_value_never_reaches_the_answer(
        format in 0..Format::ALL.len(),
        spelling in 0..12usize,
        secret in "[A-Za-z0-9]{0,24}",
    ) {
        let format = Format::ALL[format];
        let input = secure_input(format, spelling, &format!("zq{secret}"));
        let answer = import(format, input.as_bytes()).unwrap();
        let json = serde_json::to_string(&answer).unwrap();
        prop_assert!(!json.contains(&format!("zq{secret}")), "{}", json);
        let secure = secure_elements(&answer);
        prop_assert_eq!(secure.len(), 1, "{}", json);
        let texts: Vec<String> = secure[0].content.iter().map(|c| serde_json::to_string(c).unwrap()).collect();
        prop_assert_eq!(texts.len(), 1);
        prop_assert!(texts[0].contains(SECURE_MARKER));
        let empty = import(format, secure_input(format, spelling, "").as_bytes()).unwrap();
        let secure = secure_elements(&empty);
        prop_assert_eq!(secure.len(), 1);
        prop_assert!(secure[0].content.is_empty(), "{}", serde_json::to_string(&empty).unwrap());
    }
}

/// Secure signals no collected real tree carries, each in a real tree
/// changed only there (tests/import/README.md): one secure field holding
/// the marker, no bullet of its value; the macapptree case is also a golden
/// outline, and the UIA one imports exactly as the original does.
#[test]
fn derived_secure_signals_in_real_trees() {
    let cases: &[(Format, &str, &str)] = &[
        // macapptree writes no subrole: Apple's role description says it.
        (
            Format::AxJson,
            "screen2ax/system_acc.json",
            "screen2ax-secure-field-derived.json",
        ),
        // `IsPassword=True`, as other UIA tools write it.
        (
            Format::AxDump,
            "chromium-other-platforms/html/input-password-expected-uia-win.txt",
            "uia-win-input-password-IsPassword-True.txt",
        ),
    ];
    for (format, original, derived) in cases {
        let (_, original) = import_real(Path::new(original));
        let bytes = std::fs::read(fixtures().join(derived)).unwrap();
        let answer = import(*format, &bytes).unwrap();
        let json = serde_json::to_string(&answer).unwrap();
        assert!(
            !json.contains('\u{2022}') && !json.contains("%E2%80%A2"),
            "{derived}"
        );
        let secure = secure_elements(&answer);
        assert_eq!(secure.len(), 1, "{derived}");
        assert!(
            matches!(&secure[0].content[..], [c] if matches!(&c.block, Block::Text { text } if text == SECURE_MARKER)),
            "{derived}"
        );
        assert!(secure_elements(&original).len() <= 1);
        if *format == Format::AxDump {
            assert_eq!(body(&answer), body(&original), "{derived}");
        }
    }
}

#[test]
fn chromium_dump_framing_continuations_comments_and_end_of_file() {
    let dump = "# a comment\nAXWebArea AXTitle='Before'\n++AXStaticText AXValue='old'\n=== Start Continuation ===\nAXWebArea AXTitle='After'\n++AXStaticText AXValue='new'\n<-- End-of-file -->\nTesting: next.txt\n";
    let answer = import(Format::AxDump, dump.as_bytes()).unwrap();
    assert_eq!(
        body(&answer),
        "Application #app \"After\"\n  Window #window \"After\"\n    Document #n3 \"After\"\n      Text #n4 : \"new\"\n"
    );
    let err = import(Format::AxDump, b"#<skip\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot import the `ax-dump` input: the input has no node lines"
    );
}

#[test]
fn atspi_references_in_either_serialization_import_the_same_tree() {
    // Newer `atspi` crates write `ObjectRef` as `{name, path}`: the real
    // excerpt with every reference rewritten so imports exactly as it is.
    fn rewrite(value: &mut Value) {
        match value {
            Value::Object(map)
                if map.len() == 2 && map.contains_key("sender") && map.contains_key("id") =>
            {
                let sender = map.remove("sender").unwrap();
                let id = map.remove("id").unwrap();
                map.insert("name".into(), sender);
                map.insert("path".into(), id);
            }
            Value::Object(map) => map.values_mut().for_each(rewrite),
            Value::Array(items) => items.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
    let bytes = std::fs::read(fixtures().join("atspi-zbus-excerpt.json")).unwrap();
    let original = import(Format::AtspiJson, &bytes).unwrap();
    let mut json: Value = serde_json::from_slice(&bytes).unwrap();
    rewrite(&mut json);
    let text = serde_json::to_string(&json).unwrap();
    assert!(!text.contains("\"sender\"") && text.contains("\"path\""));
    let rewritten = import(Format::AtspiJson, text.as_bytes()).unwrap();
    assert_eq!(outline(&rewritten), outline(&original));
    assert!(Tree::new(&original.root).len() > 10);
}

/// A fresh clone passes its own tests. No test, bench, example
/// or source file names the folder next to the repository the real trees
/// used to be read from.
#[test]
fn nothing_reads_the_real_trees_from_outside_the_repository() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap_or("");
            if path.is_dir() {
                // Build output and fuzz corpora are not the repository's.
                if !matches!(name, "target" | "corpus" | "artifacts") {
                    walk(&path, out);
                }
            } else if path
                .extension()
                .is_some_and(|e| e == "rs" || e == "sh" || e == "toml")
            {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let needle = ["..", "shared"].join("/");
    let mut files = Vec::new();
    for dir in ["tests", "benches", "src", "examples", "fuzz"] {
        if root.join(dir).is_dir() {
            walk(&root.join(dir), &mut files);
        }
    }
    assert!(files.len() > 20, "{}", files.len());
    let readers: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).is_ok_and(|text| text.contains(&needle)))
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert!(readers.is_empty(), "{readers:?} read `{needle}`");
}

// ---------------------------------------------------------------------------
// Keys written twice (a parser differential: serde_json keeps the last value,
// other readers the first), and words of the input echoed in messages.

/// The message for `key` written twice, the second time at `pointer`.
fn repeated(format: &str, line: usize, key: &str, pointer: &str) -> String {
    format!(
        "cannot import the `{format}` input at line {line}: key {key} appears twice in one object, the second time at {pointer}; write each key once (JSON readers differ on which of the two values counts, so neither is taken)"
    )
}

#[test]
fn a_key_written_twice_is_refused_at_any_depth_in_every_json_format() {
    let cases: &[(Format, &str, String)] = &[
        // At the top level.
        (
            Format::AxJson,
            r#"{"role":"AXWindow","role":"AXTextField","children":[]}"#,
            repeated("ax-json", 1, r#""role""#, r#""/role""#),
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50032,"Name":"w","ControlTypeId":50004}"#,
            repeated("uia-json", 1, r#""ControlTypeId""#, r#""/ControlTypeId""#),
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"role":"Frame","role":"Text"}]"#,
            repeated("atspi-json", 1, r#""role""#, r#""/0/role""#),
        ),
        // Nested in a node's properties.
        (
            Format::AxJson,
            "{\n  \"role\": \"AXWindow\",\n  \"box\": {\"x\": 0,\n    \"x\": 1}\n}",
            repeated("ax-json", 4, r#""x""#, r#""/box/x""#),
        ),
        (
            Format::UiaJson,
            r#"{"ControlTypeId":50004,"Properties":{"30019":{"Value":true,"Value":false}}}"#,
            repeated("uia-json", 1, r#""Value""#, r#""/Properties/30019/Value""#),
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r","id":"/s"},"role":"Frame"}]"#,
            repeated("atspi-json", 1, r#""id""#, r#""/0/object/id""#),
        ),
        // Inside `children`, one and two levels down.
        (
            Format::AxJson,
            r#"{"role":"AXWindow","children":[{"role":"AXGroup"},{"role":"AXGroup","children":[{"cls":"Text","value":"a","value":"b"}]}]}"#,
            repeated("ax-json", 1, r#""value""#, r#""/children/1/children/0/value""#),
        ),
        (
            Format::UiaJson,
            "{\"ControlTypeId\":50032,\"Children\":[\n{\"ControlTypeId\":50020,\"Name\":\"a\",\n\"Name\":\"b\"}]}",
            repeated("uia-json", 3, r#""Name""#, r#""/Children/0/Name""#),
        ),
        (
            Format::AtspiJson,
            r#"[{"object":{"sender":"a","id":"/r"},"role":"Frame","children":[{"sender":"a","id":"/s","sender":"b"}]}]"#,
            repeated("atspi-json", 1, r#""sender""#, r#""/0/children/0/sender""#),
        ),
        // The pointer's segments are escaped (RFC 6901) and the whole is a
        // JSON string literal, as the key is.
        (
            Format::AxJson,
            r#"{"role":"AXWindow","a/b~c":{"k\"":1,"k\"":2}}"#,
            repeated("ax-json", 1, r#""k\"""#, r#""/a~1b~0c/k\"""#),
        ),
        // A key repeated with the same value is refused all the same.
        (
            Format::AxJson,
            r#"{"role":"AXWindow","role":"AXWindow"}"#,
            repeated("ax-json", 1, r#""role""#, r#""/role""#),
        ),
    ];
    for (format, input, message) in cases {
        let err = import(*format, input.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), *message, "{format}: {input}");
    }
    // On the command line, after a byte-order mark, as Axe.Windows writes.
    let cli = run(
        &["import", "--from", "uia-json"],
        "\u{FEFF}{\"ControlTypeId\":50032,\"ControlTypeId\":50004}".as_bytes(),
    );
    assert_eq!(cli.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(cli.stderr).unwrap(),
        format!(
            "error: {}\n",
            repeated("uia-json", 1, r#""ControlTypeId""#, r#""/ControlTypeId""#)
        )
    );
}

#[test]
fn a_secure_signal_followed_by_a_plain_one_is_refused_not_imported() {
    // The review's cases: a reader that keeps the first key sees a secure
    // field; serde_json alone kept the last and sent the value.
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "ax-json",
            r#"{"role":"AXWindow","children":[{"role":"AXTextField","subrole":"AXSecureTextField","subrole":"AXSearchField","value":"hunter2"}]}"#,
            r#""subrole""#,
            r#""/children/0/subrole""#,
        ),
        (
            "ax-json",
            r#"{"role":"AXWindow","children":[{"role":"AXTextField","role_description":"secure text field","role_description":"text field","value":"hunter2"}]}"#,
            r#""role_description""#,
            r#""/children/0/role_description""#,
        ),
        (
            "ax-json",
            r#"{"role":"AXWindow","role":"AXTextField","value":"hunter2"}"#,
            r#""role""#,
            r#""/role""#,
        ),
        (
            "uia-json",
            r#"{"ControlTypeId":50032,"Children":[{"ControlTypeId":50004,"Properties":{"30019":{"Value":true},"30019":{"Value":false},"30045":{"Value":"hunter2"}}}]}"#,
            r#""30019""#,
            r#""/Children/0/Properties/30019""#,
        ),
        (
            "atspi-json",
            r#"[{"object":{"sender":"a","id":"/r"},"role":"Frame","children":[{"sender":"a","id":"/p"}]},{"object":{"sender":"a","id":"/p"},"parent":{"sender":"a","id":"/r"},"role":"PasswordText","role":"Text","text":"hunter2"}]"#,
            r#""role""#,
            r#""/1/role""#,
        ),
    ];
    for (format, input, key, pointer) in cases {
        let output = run(&["import", "--from", format], input.as_bytes());
        assert_eq!(output.status.code(), Some(1), "{input}: {output:?}");
        assert!(output.stdout.is_empty(), "{input}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(
            stderr,
            format!("error: {}\n", repeated(format, 1, key, pointer)),
            "{input}"
        );
        assert!(!stderr.contains("hunter2"));
    }
    // With the first signal alone, each is a secure field.
    let first_only: &[(Format, &str)] = &[
        (
            Format::AxJson,
            r#"{"role":"AXWindow","children":[{"role":"AXTextField","subrole":"AXSecureTextField","value":"hunter2"}]}"#,
        ),
        (
            Format::AxJson,
            r#"{"role":"AXWindow","children":[{"role":"AXTextField","role_description":"secure text field","value":"hunter2"}]}"#,
        ),
    ];
    for (format, input) in first_only {
        let answer = import(*format, input.as_bytes()).unwrap();
        assert_eq!(secure_elements(&answer).len(), 1, "{input}");
        assert!(!serde_json::to_string(&answer).unwrap().contains("hunter2"));
    }
}

#[test]
fn words_of_the_input_in_messages_are_json_string_literals() {
    // A newline or an ESC in a key or a role word cannot start a line or a
    // terminal sequence of its own in the message.
    let cases: &[(Format, &[u8], &str)] = &[
        (
            Format::AxJson,
            br#"{"a\nb":1,"\u001b[31m":2,"\u009b2J":3}"#,
            r#"cannot import the `ax-json` input: the top-level object has neither `role` (macapptree) nor `cls` (Screen2AX output); its keys are "\u001b[31m", "a\nb", "\u009b2J""#,
        ),
        (
            Format::AxJson,
            br#"{"role":"AXWindow","x\n\u001b[2J":1,"x\n\u001b[2J":2}"#,
            r#"cannot import the `ax-json` input at line 1: key "x\n\u001b[2J" appears twice in one object, the second time at "/x\n\u001b[2J"; write each key once (JSON readers differ on which of the two values counts, so neither is taken)"#,
        ),
        (
            Format::AtspiJson,
            br#"[{"object":{"sender":"a","id":"/r"},"role":"Frame","\u202e\u2028":1,"\u202e\u2028":2}]"#,
            r#"cannot import the `atspi-json` input at line 1: key "\u202e\u2028" appears twice in one object, the second time at "/0/\u202e\u2028"; write each key once (JSON readers differ on which of the two values counts, so neither is taken)"#,
        ),
        (
            Format::AxDump,
            b"AXWebArea\n++\x1b[2Jevil\x7f AXTitle='x'\n",
            r#"cannot import the `ax-dump` input at line 2: "\u001b[2Jevil\u007f" is not a role: expected `AXRole`, `[at-spi role]` or a UIA control type such as `Edit`"#,
        ),
        (
            Format::AxDump,
            "AXWebArea\n++\u{9b}31m\n".as_bytes(),
            r#"cannot import the `ax-dump` input at line 2: "\u009b31m" is not a role: expected `AXRole`, `[at-spi role]` or a UIA control type such as `Edit`"#,
        ),
    ];
    for (format, input, message) in cases {
        let err = import(*format, input).unwrap_err().to_string();
        assert_eq!(err, *message, "{format}");
        assert!(!err.chars().any(char::is_control), "{err:?}");
    }
    // And so on the command line's stderr.
    let output = run(
        &["import", "--from", "ax-json"],
        br#"{"\u001b]0;owned\u0007":1}"#,
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: cannot import the `ax-json` input: the top-level object has neither `role` (macapptree) nor `cls` (Screen2AX output); its keys are \"\\u001b]0;owned\\u0007\"\n"
    );
}
