# ctxgate default policy.
#
# Contract (full text in policies/README.md). A policy is one or more .rego
# files in `package ctxgate`, Rego v1 syntax (regorus's default; `if` and
# `contains` are required, `import rego.v1` is accepted but not needed).
#
# Per request, input = {"action": {"name", "target"?}, "app": {"instance",
# "protocol", "title"?}}:
#   scope               "selection" | "focus" | "window" | "app"; undefined: "focus"
#   budget              {"tokens": N} or {"bytes": N}; undefined: no budget
#   redact              set of {"id", "pattern", "replace"?, "luhn"?}; applied
#                       natively to every string that leaves
#   title_patterns      object name -> regex; titles never reach Rego, the
#                       names of matching patterns do (input.element.title_matches)
#   element_attributes  set of attribute names whose values Rego may read
# Per element, input adds "element" = {role, subrole?, selected, focused,
# visible, hovered, has_title, has_content, attribute_names, attributes,
# title_matches} and "inside" = [{role, subrole?}, ...] (ancestors, nearest first):
#   deny, mask, keep, prune   partial sets of reason strings (rule ids)
#   priority                  a number, 0 when undefined; higher is kept first
# Precedence: deny > mask > keep > prune/scope > budget.
# Floor: Text whose subrole contains "secure" or "password" (any case) is
# always masked (reason floor:secure-text), whatever this file says.
#
# Every rule has a METADATA block: `ctxgate policy doc` turns them into the
# reviewer's table. Keep rules cheap: else-chains, no regex, no imports;
# refer to other rules as data.ctxgate.x.

package ctxgate

# METADATA
# title: Scope follows the action
# description: `selection` sends the selection and the focus path; `window` the
#   focused window; `app` everything; `focus` and any action ctxgate does not
#   know send the focused element's subtree and its path, the narrowest scope
#   that still shows the user's context.
scope := "selection" if {
	input.action.name == "selection"
} else := "window" if {
	input.action.name == "window"
} else := "app" if {
	input.action.name == "app"
} else := "focus"

# METADATA
# title: Default budget of 8000 tokens
# description: Fits a typical agent context with room for the task; a request
#   may ask for a smaller or larger one.
budget := {"tokens": 8000}

# METADATA
# title: Names of password-like titles
# description: Titles that mark a text as a secret. Matched natively; rules
#   below see only the names.
title_patterns := {
	"password": `(?i)\b(pass\s?words?|passwort|mot de passe|contraseña|passphrase)\b`,
	"passcode": `(?i)\bpass\s?codes?\b`,
	"pin": `\bPIN\b|(?i:\bpin\s?(code|number)\b)`,
	"one-time-code": `(?i)\b(one[- ]time (code|password|passcode)|OTP|2FA|two[- ]factor|verification code|security code|authentication code)\b`,
}

# METADATA
# title: Redact payment card numbers
# description: 13 to 19 digits, optionally grouped by spaces or dashes; only
#   numbers that pass the Luhn check are replaced (ctxgate checks natively).
redact contains {
	"id": "card-number",
	"pattern": `\b\d(?:[ -]?\d){12,18}\b`,
	"replace": "[card number]",
	"luhn": true,
}

# METADATA
# title: Redact AWS access key ids
# description: AKIA (long-term) and ASIA (temporary) key ids.
redact contains {
	"id": "aws-access-key",
	"pattern": `\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
	"replace": "[aws key]",
}

# METADATA
# title: Redact GitHub tokens
# description: Personal, OAuth, user-to-server, server-to-server and refresh
#   tokens (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained tokens (github_pat_).
redact contains {
	"id": "github-token",
	"pattern": `\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`,
	"replace": "[github token]",
}

# METADATA
# title: Redact Slack tokens
# description: Bot, user, app, refresh and config tokens (xoxb-, xoxp-, xoxa-,
#   xoxr-, xoxs-).
redact contains {
	"id": "slack-token",
	"pattern": `\bxox[abprs]-[A-Za-z0-9-]{10,}`,
	"replace": "[slack token]",
}

# METADATA
# title: Redact OpenAI and Anthropic API keys
# description: Keys starting sk- (including sk-proj- and sk-ant-).
redact contains {
	"id": "ai-api-key",
	"pattern": `\bsk-[A-Za-z0-9_-]{20,}`,
	"replace": "[api key]",
}

# METADATA
# title: Redact Google API keys
# description: Keys starting AIza.
redact contains {
	"id": "google-api-key",
	"pattern": `\bAIza[0-9A-Za-z_-]{35}`,
	"replace": "[google api key]",
}

# METADATA
# title: Redact JSON web tokens
# description: Three base64url parts separated by dots, the first starting eyJ.
redact contains {
	"id": "jwt",
	"pattern": `\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}`,
	"replace": "[jwt]",
}

# METADATA
# title: Redact bearer tokens
# description: The credential after `Bearer` in an authorization header or
#   anywhere in text.
redact contains {
	"id": "bearer-token",
	"pattern": `(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*`,
	"replace": "Bearer [token]",
}

# METADATA
# title: Redact PEM private keys
# description: Everything from a BEGIN ... PRIVATE KEY line to its END line
#   (RSA, EC, DSA, OPENSSH, ENCRYPTED and plain PKCS#8 keys).
redact contains {
	"id": "private-key",
	"pattern": `(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`,
	"replace": "[private key]",
}

# METADATA
# title: Mask secure text
# description: Text whose subrole says secure or password (AXSecureTextField).
#   The floor does the same; this rule names it in reports even if the floor
#   changes.
mask contains "secure-text" if {
	input.element.role == "Text"
	some word in {"secure", "password"}
	contains(lower(input.element.subrole), word)
}

# METADATA
# title: Mask text titled like a secret
# description: Text whose title matches the password, passcode, PIN or
#   one-time-code pattern: sent as a placeholder (id, role, subrole, states,
#   and whether it is empty), without its title or content.
mask contains "secret-title" if {
	input.element.role == "Text"
	input.element.title_matches[_] in {"password", "passcode", "pin", "one-time-code"}
}

# METADATA
# title: Prune what is not visible
# description: An element that is not visible, and so its subtree, is not sent
#   unless a keep, mask or deny rule speaks for it.
prune contains "invisible" if {
	not input.element.visible
}

# METADATA
# title: Keep the focus path
# description: The focused element and every ancestor on the focus path (they
#   are focused too, RFC-0001 4.1).
keep contains "focus-path" if {
	input.element.focused
}

# METADATA
# title: Keep the selection
# description: Selected elements, whatever the scope.
keep contains "selection" if {
	input.element.selected
}

# METADATA
# title: Keep the enclosing document
# description: For `selection` and `focus`, a Document that is on the focus
#   path, is selected, or has the selection inside it
#   (`input.element.contains_selection`): sent whole, not as a skeleton.
keep contains "enclosing-document" if {
	input.element.role == "Document"
	input.action.name in {"selection", "focus"}
	on_focus_or_selected
}

# METADATA
# title: On the focus path or at the selection (helper)
# description: True for an element that is focused, selected, or has the
#   selection inside it.
on_focus_or_selected if input.element.focused

on_focus_or_selected if input.element.selected

on_focus_or_selected if input.element.contains_selection

# METADATA
# title: Priority favours what is near the user
# description: Focused 100, selected 90, hovered 80; headings 60; windows,
#   documents and pages 50; links 40; text and images 30; rows and lists 20;
#   cells deep in a table (more than 6 ancestors) -10; the rest 0.
priority := 100 if {
	input.element.focused
} else := 90 if {
	input.element.selected
} else := 80 if {
	input.element.hovered
} else := 60 if {
	input.element.role == "Heading"
} else := 50 if {
	input.element.role in {"Window", "Document", "Page"}
} else := 40 if {
	input.element.role == "Link"
} else := 30 if {
	input.element.role in {"Text", "Image"}
} else := 20 if {
	input.element.role in {"Row", "List"}
} else := -10 if {
	input.element.role == "Cell"
	count(input.inside) > 6
} else := 0
