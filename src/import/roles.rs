//! Which source role becomes which of the thirteen roles: one table per
//! source, and nothing else in the importers names a role.
//!
//! Apple's roles go through RFC-0001 4.2's table ([`Role::from_apple`]);
//! the tables here add what that table leaves out (controls, furniture) and
//! give the nearest equivalent for AT-SPI, UI Automation and ARIA. A word no
//! table names is reported as `Group` with the word as its subrole.

use super::build::Kind::{self, Control, Furniture, Report};
use crate::model::Role::{self, *};

/// What a table says of one source word: what to do with it, and whether
/// the word is worth keeping as the subrole.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub kind: Kind,
    pub keep_word: bool,
}

const fn report(role: Role) -> Entry {
    Entry {
        kind: Report(role),
        keep_word: false,
    }
}

const fn named(role: Role) -> Entry {
    Entry {
        kind: Report(role),
        keep_word: true,
    }
}

const CONTROL: Entry = Entry {
    kind: Control,
    keep_word: false,
};

const FURNITURE: Entry = Entry {
    kind: Furniture,
    keep_word: false,
};

/// A word no table names: a `Group` that says what it is.
const UNKNOWN: Entry = named(Group);

fn lookup(table: &[(&str, Entry)], word: &str) -> Entry {
    table
        .iter()
        .find(|(w, _)| *w == word)
        .map_or(UNKNOWN, |(_, e)| *e)
}

/// A role word with case and separators taken out: `push button`,
/// `PUSH_BUTTON`, `push-button` and `PushButton` are all `pushbutton`.
fn folded(word: &str) -> impl Iterator<Item = char> + '_ {
    word.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
}

/// Whether two role words are the same word in another case or spelling.
fn same_word(a: &str, b: &str) -> bool {
    folded(a).eq(folded(b))
}

/// Apple words (without `AX`) that RFC-0001 4.2's table does not map.
const APPLE_EXTRA: &[(&str, Entry)] = &[
    // Controls and menus: text hoisted, label kept.
    ("Button", CONTROL),
    ("RadioButton", CONTROL),
    ("CheckBox", CONTROL),
    ("PopUpButton", CONTROL),
    ("MenuButton", CONTROL),
    ("ComboBox", CONTROL),
    ("Slider", CONTROL),
    ("Incrementor", CONTROL),
    ("Stepper", CONTROL),
    ("ColorWell", CONTROL),
    ("DisclosureTriangle", CONTROL),
    ("DateField", CONTROL),
    ("TimeField", CONTROL),
    ("SegmentedControl", CONTROL),
    ("Switch", CONTROL),
    ("ToggleButton", CONTROL),
    ("RadioGroup", CONTROL),
    ("Menu", CONTROL),
    ("MenuBar", CONTROL),
    ("MenuBarItem", CONTROL),
    ("MenuItem", CONTROL),
    ("Toolbar", CONTROL),
    ("DockItem", CONTROL),
    // Indicators and window furniture.
    ("ScrollBar", FURNITURE),
    ("ValueIndicator", FURNITURE),
    ("Splitter", FURNITURE),
    ("GrowArea", FURNITURE),
    ("Handle", FURNITURE),
    ("Matte", FURNITURE),
    ("Ruler", FURNITURE),
    ("RulerMarker", FURNITURE),
    ("BusyIndicator", FURNITURE),
    ("ProgressIndicator", FURNITURE),
    ("LevelIndicator", FURNITURE),
    ("RelevanceIndicator", FURNITURE),
    // "Column is not used" (RFC-0001 4.2): its cells repeat the rows'.
    ("Column", FURNITURE),
    // Text a person reads that the table does not name.
    ("ListMarker", named(Text)),
];

/// Apple words RFC-0001 4.2 maps whose word says more than the role.
const APPLE_KEEP_WORD: &[&str] = &[
    "Outline",
    "Browser",
    "Grid",
    "Sheet",
    "Drawer",
    "Popover",
    "TabGroup",
    "TextField",
    "TextArea",
];

/// Apple subroles of window furniture: a window's own buttons.
const APPLE_FURNITURE_SUBROLES: &[&str] = &[
    "AXCloseButton",
    "AXMinimizeButton",
    "AXZoomButton",
    "AXFullScreenButton",
];

/// An Apple role (with or without `AX`) and subrole.
pub(crate) fn apple(role: &str, subrole: Option<&str>) -> Entry {
    if subrole == Some("AXSecureTextField") {
        return Entry {
            kind: Kind::Secure,
            keep_word: false,
        };
    }
    if subrole.is_some_and(|s| APPLE_FURNITURE_SUBROLES.contains(&s)) {
        return FURNITURE;
    }
    let word = role.strip_prefix("AX").unwrap_or(role);
    match Role::from_apple(word) {
        Some(role) => Entry {
            kind: Report(role),
            keep_word: APPLE_KEEP_WORD.contains(&word),
        },
        None => lookup(APPLE_EXTRA, word),
    }
}

/// AT-SPI role names as Odilia writes them (`DocumentWeb`, `PageTab`).
const ATSPI: &[(&str, Entry)] = &[
    ("Application", report(Application)),
    ("Frame", report(Window)),
    ("Window", report(Window)),
    ("Dialog", named(Window)),
    ("FileChooser", named(Window)),
    ("PageTabList", named(Window)),
    ("DocumentWeb", report(Document)),
    ("DocumentFrame", report(Document)),
    ("DocumentText", report(Document)),
    ("DocumentEmail", report(Document)),
    ("DocumentPresentation", report(Document)),
    ("DocumentSpreadsheet", report(Document)),
    ("Page", report(Page)),
    ("Section", report(Group)),
    ("Panel", report(Group)),
    ("Filler", report(Group)),
    ("Grouping", report(Group)),
    ("InternalFrame", report(Group)),
    ("ScrollPane", report(Group)),
    ("Viewport", report(Group)),
    ("SplitPane", report(Group)),
    ("Heading", report(Heading)),
    ("Link", report(Link)),
    ("Image", report(Image)),
    ("Static", report(Text)),
    ("Text", report(Text)),
    ("Label", named(Text)),
    ("Caption", named(Text)),
    ("Paragraph", named(Text)),
    ("Entry", named(Text)),
    ("Superscript", named(Text)),
    ("Subscript", named(Text)),
    ("List", report(List)),
    ("ListBox", named(List)),
    ("Tree", named(List)),
    ("DescriptionList", named(List)),
    ("ListItem", report(Row)),
    ("TreeItem", named(Row)),
    ("TableRow", report(Row)),
    ("Table", report(Table)),
    ("TreeTable", named(Table)),
    ("TableCell", report(Cell)),
    ("ColumnHeader", named(Cell)),
    ("RowHeader", named(Cell)),
    ("PushButton", CONTROL),
    ("Button", CONTROL),
    ("ToggleButton", CONTROL),
    ("CheckBox", CONTROL),
    ("RadioButton", CONTROL),
    ("ComboBox", CONTROL),
    ("SpinButton", CONTROL),
    ("Slider", CONTROL),
    ("Dial", CONTROL),
    ("PageTab", CONTROL),
    ("Menu", CONTROL),
    ("MenuBar", CONTROL),
    ("MenuItem", CONTROL),
    ("CheckMenuItem", CONTROL),
    ("RadioMenuItem", CONTROL),
    ("TearoffMenuItem", CONTROL),
    ("PopupMenu", CONTROL),
    ("ToolBar", CONTROL),
    ("ToolTip", CONTROL),
    ("StatusBar", CONTROL),
    ("Separator", FURNITURE),
    ("ScrollBar", FURNITURE),
    ("ProgressBar", FURNITURE),
    ("LevelBar", FURNITURE),
    ("Icon", FURNITURE),
];

/// An AT-SPI role name, in any case and spelling (`PageTab`, `page tab`,
/// `PAGE_TAB`), with the table's own word for it. A word the table does not
/// name is a `Group` that keeps the word. `PasswordText` is handled by the
/// importer ([`atspi_is_password`]).
pub(crate) fn atspi(role: &str) -> (Option<&'static str>, Entry) {
    ATSPI
        .iter()
        .find(|(w, _)| same_word(w, role))
        .map_or((None, UNKNOWN), |(w, e)| (Some(*w), *e))
}

/// AT-SPI's password role, however it is spelled (`PasswordText`,
/// `password text`, `ROLE_PASSWORD_TEXT`).
pub(crate) fn atspi_is_password(role: &str) -> bool {
    let role = role
        .strip_prefix("ROLE_")
        .or_else(|| role.strip_prefix("role_"))
        .unwrap_or(role);
    same_word(role, "PasswordText")
}

/// UI Automation control type ids (UIA_*ControlTypeId) and their names.
const UIA: &[(u32, &str, Entry)] = &[
    (50000, "Button", CONTROL),
    (50001, "Calendar", CONTROL),
    (50002, "CheckBox", CONTROL),
    (50003, "ComboBox", CONTROL),
    (50004, "Edit", named(Text)),
    (50005, "Hyperlink", report(Link)),
    (50006, "Image", report(Image)),
    (50007, "ListItem", report(Row)),
    (50008, "List", report(List)),
    (50009, "Menu", CONTROL),
    (50010, "MenuBar", CONTROL),
    (50011, "MenuItem", CONTROL),
    (50012, "ProgressBar", FURNITURE),
    (50013, "RadioButton", CONTROL),
    (50014, "ScrollBar", FURNITURE),
    (50015, "Slider", CONTROL),
    (50016, "Spinner", CONTROL),
    (50017, "StatusBar", CONTROL),
    (50018, "Tab", named(Window)),
    (50019, "TabItem", CONTROL),
    (50020, "Text", report(Text)),
    (50021, "ToolBar", CONTROL),
    (50022, "ToolTip", CONTROL),
    (50023, "Tree", named(List)),
    (50024, "TreeItem", named(Row)),
    (50025, "Custom", named(Group)),
    (50026, "Group", report(Group)),
    (50027, "Thumb", FURNITURE),
    (50028, "DataGrid", named(Table)),
    (50029, "DataItem", named(Row)),
    (50030, "Document", report(Document)),
    (50031, "SplitButton", CONTROL),
    (50032, "Window", report(Window)),
    (50033, "Pane", named(Group)),
    (50034, "Header", named(Row)),
    (50035, "HeaderItem", named(Cell)),
    (50036, "Table", report(Table)),
    (50037, "TitleBar", FURNITURE),
    (50038, "Separator", FURNITURE),
    (50039, "SemanticZoom", named(Group)),
    (50040, "AppBar", CONTROL),
];

/// The name of a UIA control type id, and what it becomes.
pub(crate) fn uia(control_type: u32) -> (&'static str, Entry) {
    UIA.iter()
        .find(|(id, _, _)| *id == control_type)
        .map_or(("Unknown", UNKNOWN), |(_, name, e)| (*name, *e))
}

/// The UIA control type id of a name in any case (`Edit`, `edit`,
/// `CheckBox`, `checkbox`), for text dumps that name it.
pub(crate) fn uia_by_name(name: &str) -> Option<u32> {
    UIA.iter()
        .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
        .map(|(id, _, _)| *id)
}

/// ARIA roles as Playwright writes them.
const ARIA: &[(&str, Entry)] = &[
    ("generic", report(Group)),
    ("group", report(Group)),
    ("none", report(Group)),
    ("presentation", report(Group)),
    ("rowgroup", report(Group)),
    ("document", report(Document)),
    ("iframe", report(Document)),
    ("dialog", named(Window)),
    ("alertdialog", named(Window)),
    ("tablist", named(Window)),
    ("link", report(Link)),
    ("img", report(Image)),
    ("image", report(Image)),
    ("figure", named(Group)),
    ("heading", report(Heading)),
    ("text", report(Text)),
    ("paragraph", named(Text)),
    ("textbox", named(Text)),
    ("searchbox", named(Text)),
    ("code", named(Text)),
    ("strong", named(Text)),
    ("emphasis", named(Text)),
    ("blockquote", named(Text)),
    ("caption", named(Text)),
    ("time", named(Text)),
    ("list", report(List)),
    ("listbox", named(List)),
    ("tree", named(List)),
    ("directory", named(List)),
    ("feed", named(List)),
    ("listitem", report(Row)),
    ("option", named(Row)),
    ("treeitem", named(Row)),
    ("row", report(Row)),
    ("table", report(Table)),
    ("grid", named(Table)),
    ("treegrid", named(Table)),
    ("cell", report(Cell)),
    ("gridcell", named(Cell)),
    ("columnheader", named(Cell)),
    ("rowheader", named(Cell)),
    ("button", CONTROL),
    ("checkbox", CONTROL),
    ("radio", CONTROL),
    ("radiogroup", CONTROL),
    ("combobox", CONTROL),
    ("slider", CONTROL),
    ("spinbutton", CONTROL),
    ("switch", CONTROL),
    ("tab", CONTROL),
    ("menu", CONTROL),
    ("menubar", CONTROL),
    ("menuitem", CONTROL),
    ("menuitemcheckbox", CONTROL),
    ("menuitemradio", CONTROL),
    ("toolbar", CONTROL),
    ("tooltip", CONTROL),
    ("separator", FURNITURE),
    ("scrollbar", FURNITURE),
    ("progressbar", FURNITURE),
    ("meter", FURNITURE),
];

/// ARIA 1.2 roles (and the DPUB/Chromium words its dumps use) that the
/// table above does not map: landmarks and other structure, reported as
/// `Group`s that keep the word.
const ARIA_GROUPS: &[&str] = &[
    "alert",
    "application",
    "article",
    "banner",
    "comment",
    "complementary",
    "contentinfo",
    "definition",
    "deletion",
    "form",
    "insertion",
    "log",
    "main",
    "mark",
    "marquee",
    "math",
    "navigation",
    "note",
    "region",
    "search",
    "section",
    "status",
    "subscript",
    "suggestion",
    "superscript",
    "tabpanel",
    "term",
    "timer",
];

/// An ARIA role. Landmarks and other words no table names (`banner`,
/// `navigation`, `main`, `alert`, …) are `Group`s that keep the word.
pub(crate) fn aria(role: &str) -> Entry {
    lookup(ARIA, role)
}

/// A role word of Chromium's older UIA dumps, which name each node by its
/// ARIA role (`document`, `group`, `textbox`, `img`) instead of its control
/// type, and static text `description`; in any case. `None` for a word
/// that is not one. Gives the word as ARIA spells it, what it becomes, and
/// whether the node's `Name` is the words it shows (static text) rather
/// than its title.
pub(crate) fn chromium_uia_aria(word: &str) -> Option<(&'static str, Entry, bool)> {
    for text in ["description", "text"] {
        if word.eq_ignore_ascii_case(text) {
            return Some((text, report(Text), true));
        }
    }
    if let Some((w, entry)) = ARIA.iter().find(|(w, _)| w.eq_ignore_ascii_case(word)) {
        return Some((w, *entry, false));
    }
    ARIA_GROUPS
        .iter()
        .find(|w| w.eq_ignore_ascii_case(word))
        .map(|w| (*w, UNKNOWN, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apple_follows_the_rfc_and_drops_furniture() {
        assert!(matches!(apple("AXWebArea", None).kind, Report(Document)));
        assert!(matches!(apple("AXButton", None).kind, Control));
        assert!(matches!(apple("AXColumn", None).kind, Furniture));
        assert!(matches!(
            apple("AXTextField", Some("AXSecureTextField")).kind,
            Kind::Secure
        ));
        assert!(matches!(
            apple("AXButton", Some("AXCloseButton")).kind,
            Furniture
        ));
        let landmark = apple("AXLandmarkThing", None);
        assert!(matches!(landmark.kind, Report(Group)) && landmark.keep_word);
    }

    #[test]
    fn atspi_and_uia_words_are_read_in_any_case() {
        for word in ["PushButton", "push button", "PUSH_BUTTON", "push-button"] {
            assert_eq!(atspi(word).0, Some("PushButton"), "{word}");
            assert!(matches!(atspi(word).1.kind, Control));
        }
        assert_eq!(atspi("DocumentWeb").0, Some("DocumentWeb"));
        for word in [
            "PasswordText",
            "password text",
            "ROLE_PASSWORD_TEXT",
            "password_text",
        ] {
            assert!(atspi_is_password(word), "{word}");
        }
        assert!(!atspi_is_password("text"));
        assert_eq!(uia_by_name("edit"), Some(50004));
        assert_eq!(uia_by_name("CHECKBOX"), Some(50002));
        assert_eq!(uia_by_name("textbox"), None);
        assert!(
            matches!(chromium_uia_aria("textbox"), Some(("textbox", e, false)) if matches!(e.kind, Report(Text)))
        );
        assert!(matches!(
            chromium_uia_aria("TextBox"),
            Some(("textbox", _, false))
        ));
        assert!(matches!(
            chromium_uia_aria("description"),
            Some((_, _, true))
        ));
        assert!(matches!(chromium_uia_aria("navigation"), Some((_, e, false)) if e.keep_word));
        assert!(chromium_uia_aria("rootWebArea").is_none());
    }

    #[test]
    fn every_uia_name_is_found_by_its_id() {
        for (id, name, _) in UIA {
            assert_eq!(uia_by_name(name), Some(*id));
            assert_eq!(uia(*id).0, *name);
        }
    }
}
