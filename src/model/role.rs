//! The role language of RFC-0001 section 4.2: thirteen words, and Apple's
//! accessibility roles mapped onto them.
//!
//! A role outside the language is read as [`Role::Group`]; the provider's
//! own word is kept in [`RoleName::Unknown`] for reports and checks.

use std::fmt;

/// One of the thirteen roles of the element model (RFC-0001 4.2).
///
/// `#[non_exhaustive]`: an amendment of the RFC may add a word (as RFC-0003
/// added a state); match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Role {
    /// The app; always and only the root.
    Application,
    /// A window, sheet, drawer, popover, tab group; a pane says so in its subrole.
    Window,
    /// A container with no more specific role; also what unknown roles read as.
    Group,
    /// A list or an outline; nesting shows the hierarchy.
    List,
    /// Rows of cells.
    Table,
    /// An entry of a list or a table.
    Row,
    /// An entry of a row.
    Cell,
    /// Text: static, editable, selected.
    Text,
    /// A heading.
    Heading,
    /// A link.
    Link,
    /// A picture.
    Image,
    /// A page.
    Page,
    /// A document (also a web area).
    Document,
}

impl Role {
    /// Every role, in the order of RFC-0001 4.2.
    pub const ALL: [Role; 13] = [
        Role::Application,
        Role::Window,
        Role::Group,
        Role::List,
        Role::Table,
        Role::Row,
        Role::Cell,
        Role::Text,
        Role::Heading,
        Role::Link,
        Role::Image,
        Role::Page,
        Role::Document,
    ];

    /// The role's word, spelled as in the RFC.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Application => "Application",
            Role::Window => "Window",
            Role::Group => "Group",
            Role::List => "List",
            Role::Table => "Table",
            Role::Row => "Row",
            Role::Cell => "Cell",
            Role::Text => "Text",
            Role::Heading => "Heading",
            Role::Link => "Link",
            Role::Image => "Image",
            Role::Page => "Page",
            Role::Document => "Document",
        }
    }

    /// The role spelled exactly `word`, if it is in the language.
    /// Spelling is exact: `text` and `TextField` are not roles.
    pub fn from_word(word: &str) -> Option<Role> {
        // A `match` (by length, then the bytes), not a search of `ALL`: the
        // reader asks it of every element. That it is `as_str`'s inverse
        // for every role is `thirteen_roles_round_trip_their_words`.
        Some(match word {
            "Application" => Role::Application,
            "Window" => Role::Window,
            "Group" => Role::Group,
            "List" => Role::List,
            "Table" => Role::Table,
            "Row" => Role::Row,
            "Cell" => Role::Cell,
            "Text" => Role::Text,
            "Heading" => Role::Heading,
            "Link" => Role::Link,
            "Image" => Role::Image,
            "Page" => Role::Page,
            "Document" => Role::Document,
            _ => return None,
        })
    }

    /// The role nearest to one of Apple's accessibility roles (with or
    /// without the `AX` prefix), per the table in RFC-0001 4.2. `None` for
    /// controls, menus, indicators and window furniture, which a provider
    /// does not report, and for roles the table does not name.
    pub fn from_apple(ax_role: &str) -> Option<Role> {
        let word = ax_role.strip_prefix("AX").unwrap_or(ax_role);
        APPLE_ROLES
            .iter()
            .find(|(apple, _)| *apple == word)
            .map(|(_, role)| *role)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Apple's accessibility roles (without `AX`) and the role each is reported
/// as: RFC-0001 4.2's table, plus the eleven roles Apple and the language
/// share. Importers of OS trees use this table; nothing else maps Apple words.
pub const APPLE_ROLES: &[(&str, Role)] = &[
    ("Application", Role::Application),
    ("Window", Role::Window),
    ("Sheet", Role::Window),
    ("Drawer", Role::Window),
    ("Popover", Role::Window),
    ("TabGroup", Role::Window),
    ("WebArea", Role::Document),
    ("Group", Role::Group),
    ("SplitGroup", Role::Group),
    ("ScrollArea", Role::Group),
    ("LayoutArea", Role::Group),
    ("LayoutItem", Role::Group),
    ("List", Role::List),
    ("Outline", Role::List),
    ("Browser", Role::List),
    ("Table", Role::Table),
    ("Grid", Role::Table),
    ("Row", Role::Row),
    ("Cell", Role::Cell),
    ("Text", Role::Text),
    ("StaticText", Role::Text),
    ("TextField", Role::Text),
    ("TextArea", Role::Text),
    ("Heading", Role::Heading),
    ("Link", Role::Link),
    ("Image", Role::Image),
    ("Page", Role::Page),
    ("Document", Role::Document),
];

/// A role as the provider wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RoleName {
    /// A word of the role language.
    Known(Role),
    /// A word outside the language, kept as written; read as [`Role::Group`].
    Unknown(Box<str>),
}

impl RoleName {
    /// Reads a provider's word.
    pub fn parse(word: &str) -> RoleName {
        match Role::from_word(word) {
            Some(role) => RoleName::Known(role),
            None => RoleName::Unknown(word.into()),
        }
    }

    /// The role as a receiver reads it: unknown words read as `Group` (R3).
    pub fn read(&self) -> Role {
        match self {
            RoleName::Known(role) => *role,
            RoleName::Unknown(_) => Role::Group,
        }
    }

    /// The word as the provider wrote it.
    pub fn as_str(&self) -> &str {
        match self {
            RoleName::Known(role) => role.as_str(),
            RoleName::Unknown(word) => word,
        }
    }

    /// The provider's word when it is outside the language.
    pub fn unknown_word(&self) -> Option<&str> {
        match self {
            RoleName::Known(_) => None,
            RoleName::Unknown(word) => Some(word),
        }
    }

    /// Whether the word is in the role language.
    pub fn is_known(&self) -> bool {
        matches!(self, RoleName::Known(_))
    }
}

impl From<Role> for RoleName {
    fn from(role: Role) -> RoleName {
        RoleName::Known(role)
    }
}

impl fmt::Display for RoleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirteen_roles_round_trip_their_words() {
        assert_eq!(Role::ALL.len(), 13);
        for role in Role::ALL {
            assert_eq!(Role::from_word(role.as_str()), Some(role));
        }
        assert_eq!(Role::from_word("text"), None);
        assert_eq!(Role::from_word("TextField"), None);
    }

    #[test]
    fn apple_table_maps_as_the_rfc_says() {
        assert_eq!(Role::from_apple("AXStaticText"), Some(Role::Text));
        assert_eq!(Role::from_apple("AXWebArea"), Some(Role::Document));
        assert_eq!(Role::from_apple("AXOutline"), Some(Role::List));
        assert_eq!(Role::from_apple("AXGrid"), Some(Role::Table));
        assert_eq!(Role::from_apple("AXPopover"), Some(Role::Window));
        assert_eq!(Role::from_apple("AXScrollArea"), Some(Role::Group));
        assert_eq!(Role::from_apple("AXButton"), None);
    }

    #[test]
    fn unknown_words_read_as_group_and_keep_the_word() {
        let name = RoleName::parse("Toolbar");
        assert_eq!(name.read(), Role::Group);
        assert_eq!(name.as_str(), "Toolbar");
        assert!(!name.is_known());
    }
}
