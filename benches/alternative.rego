# The alternative a user would write without ctxgate: the default policy's
# decisions AND the trimming, wholly in Rego, over the whole tree as input,
# evaluated by regorus's interpreter (`walk` rules out its RVM).
#
# It mirrors policies/default.rego as ctxgate applies it to one request:
# - scope by action: `selection` = the selected elements and the focus path;
#   `window` = the focused window; `app` = everything; anything else (`focus`)
#   = the focused element's subtree and its path;
# - mask (content and title withheld, `ctxgate:withheld` added): Text whose subrole says
#   secure or password (the floor), and Text titled like a secret (the
#   password, passcode, PIN and one-time-code title patterns);
# - prune what is not visible (R2: an absent `visible` is the parent's);
# - keep the focus path, the selection and the enclosing document, and the
#   ancestors of what is kept;
# - redact the nine text patterns (card numbers, AWS, GitHub, Slack, AI and
#   Google keys, JWTs, bearer tokens, private keys) in every title and text;
# - fit a budget by priority (the policy's priority else-chain): whole
#   priority levels are dropped from the lowest up until the rest fits.
# It is simpler than ctxgate in ways that only favour it: no omission
# notices, no Luhn check on card numbers, no text cuts, sizes estimated per
# element rather than measured on the output, and a byte budget (4 bytes a
# token) in place of 8,000 o200k tokens: Rego has no tokenizer.
#
# input:  {"action": "focus", "budget_bytes": 32000, "answer": {…0.2.0…}}
# result: data.alternative.output, the trimmed answer.
package alternative

import rego.v1

root := input.answer.root

# Every element by its path from the root: [], ["children", 0], …
elements[path] := el if {
	walk(input.answer.root, [path, el])
	element_path(path)
	is_object(el)
}

element_path(path) if count(path) == 0

element_path(path) if {
	n := count(path)
	n % 2 == 0
	path[n - 2] == "children"
	is_number(path[n - 1])
}

# The paths of an element's ancestors, root first.
ancestors(path) := [array.slice(path, 0, k) |
	some k in numbers.range(0, count(path) - 2)
	k % 2 == 0
] if count(path) > 0

ancestors(path) := [] if count(path) == 0

# R2: the nearest stated `visible` on the element or above; the root is visible.
visibility(path) := [v |
	some k in numbers.range(0, count(path))
	k % 2 == 0
	v := elements[array.slice(path, 0, k)].visible
]

visible(path) if count(visibility(path)) == 0

visible(path) if {
	v := visibility(path)
	v[count(v) - 1] == true
}

focused contains path if {
	some path, el in elements
	el.focused == true
}

selected contains path if {
	some path, el in elements
	el.selected == true
}

# The deepest focused element.
deepest := max({count(p) | some p in focused})

focus := p if {
	some p in focused
	count(p) == deepest
}

focus := [] if count(focused) == 0

under(path, top) if array.slice(path, 0, count(top)) == top

# --- the policy's decisions -------------------------------------------------

masked(el) if {
	el.role == "Text"
	some word in {"secure", "password"}
	contains(lower(el.subrole), word)
}

masked(el) if {
	el.role == "Text"
	some pattern in title_patterns
	regex.match(pattern, el.title)
}

title_patterns := [
	`(?i)\b(pass\s?words?|passwort|mot de passe|contraseña|passphrase)\b`,
	`(?i)\bpass\s?codes?\b`,
	`\bPIN\b|(?i:\bpin\s?(code|number)\b)`,
	`(?i)\b(one[- ]time (code|password|passcode)|OTP|2FA|two[- ]factor|verification code|security code|authentication code)\b`,
]

# Kept: the focus path, the selection, the enclosing document (for
# `selection` and `focus`), and every ancestor of what is kept.
keeps contains path if focused[path]

keeps contains path if selected[path]

keeps contains path if {
	input.action in {"selection", "focus"}
	some path in focused | selected
	elements[path].role == "Document"
}

# A Document with the selection inside it.
keeps contains path if {
	input.action in {"selection", "focus"}
	some s in selected
	some path in ancestors(s)
	elements[path].role == "Document"
}

kept(path) if {
	some p in keeps
	under(p, path)
}

pruned(path) if {
	not visible(path)
	not kept(path)
}

priority(path) := 100 if {
	elements[path].focused == true
} else := 90 if {
	elements[path].selected == true
} else := 80 if {
	elements[path].hovered == true
} else := 60 if {
	elements[path].role == "Heading"
} else := 50 if {
	elements[path].role in {"Window", "Document", "Page"}
} else := 40 if {
	elements[path].role == "Link"
} else := 30 if {
	elements[path].role in {"Text", "Image"}
} else := 20 if {
	elements[path].role in {"Row", "List"}
} else := -10 if {
	elements[path].role == "Cell"
	count(path) > 12
} else := 0

# --- scope ------------------------------------------------------------------

in_scope(_) if input.action == "app"

in_scope(path) if {
	input.action == "window"
	count(focus) >= 2
	under(path, array.slice(focus, 0, 2))
}

in_scope(path) if {
	not input.action in {"selection", "window", "app"}
	under(path, focus)
}

in_scope(path) if {
	input.action == "selection"
	some p in selected
	under(path, p)
}

# The ancestors of the focus are in every scope.
in_scope(path) if under(focus, path)

in_scope(path) if {
	input.action == "selection"
	some p in selected
	under(p, path)
}

sent(path) if {
	elements[path]
	in_scope(path)
	not pruned(path)
	every a in ancestors(path) {
		in_scope(a)
		not pruned(a)
	}
}

sent_paths contains path if {
	some path, _ in elements
	sent(path)
}

# --- the budget, by priority -------------------------------------------------

size(el) := count(json.marshal(object.remove(el, ["children"]))) + 1

mandatory_bytes := sum([size(elements[p]) | some p in sent_paths; kept(p)])

levels contains priority(p) if {
	some p in sent_paths
	not kept(p)
}

bytes_at_priority[level] := sum([size(elements[p]) |
	some p in sent_paths
	not kept(p)
	priority(p) == level
]) if {
	some level in levels
}

# The lowest priority level that fits with everything above it.
lowest := min({level |
	some level, _ in bytes_at_priority
	above := sum([b | some l, b in bytes_at_priority; l >= level])
	mandatory_bytes + above <= input.budget_bytes
})

within_budget(path) if kept(path)

within_budget(path) if {
	not kept(path)
	priority(path) >= lowest
	every a in ancestors(path) {
		within(a)
	}
}

within(path) if kept(path)

within(path) if priority(path) >= lowest

# --- the output -------------------------------------------------------------

# A JSON pointer into the root.
pointer(path) := concat("", [sprintf("/%v", [x]) | some x in path])

patterns := [
	[`\b\d(?:[ -]?\d){12,18}\b`, "[card number]"],
	[`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`, "[aws key]"],
	[`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`, "[github token]"],
	[`\bxox[abprs]-[A-Za-z0-9-]{10,}`, "[slack token]"],
	[`\bsk-[A-Za-z0-9_-]{20,}`, "[api key]"],
	[`\bAIza[0-9A-Za-z_-]{35}`, "[google api key]"],
	[`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}`, "[jwt]"],
	[`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*`, "Bearer [token]"],
	[`(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`, "[private key]"],
]

# No loops in Rego: one call per pattern, spelled out.
redact(t0) := t9 if {
	t1 := regex.replace(t0, patterns[0][0], patterns[0][1])
	t2 := regex.replace(t1, patterns[1][0], patterns[1][1])
	t3 := regex.replace(t2, patterns[2][0], patterns[2][1])
	t4 := regex.replace(t3, patterns[3][0], patterns[3][1])
	t5 := regex.replace(t4, patterns[4][0], patterns[4][1])
	t6 := regex.replace(t5, patterns[5][0], patterns[5][1])
	t7 := regex.replace(t6, patterns[6][0], patterns[6][1])
	t8 := regex.replace(t7, patterns[7][0], patterns[7][1])
	t9 := regex.replace(t8, patterns[8][0], patterns[8][1])
}

title_ops contains op if {
	some path in sent_paths
	within_budget(path)
	not masked(elements[path])
	title := elements[path].title
	redacted := redact(title)
	redacted != title
	op := {"op": "replace", "path": concat("", [pointer(path), "/title"]), "value": redacted}
}

withhold_ops contains op if {
	some path in sent_paths
	within_budget(path)
	el := elements[path]
	masked(el)
	some op in [
		{"op": "replace", "path": concat("", [pointer(path), "/content"]), "value": []},
		{"op": "add", "path": concat("", [pointer(path), "/title"]), "value": ""},
		{"op": "add", "path": concat("", [pointer(path), "/attributes"]), "value": object.union(
			object.get(el, "attributes", {}),
			{"ctxgate:withheld": {"rule": "floor:secure-text", "empty": count(el.content) == 0}},
		)},
	]
}

redact_ops contains op if {
	some path in sent_paths
	within_budget(path)
	el := elements[path]
	not masked(el)
	some i, block in el.content
	block.type == "text"
	redacted := redact(block.text)
	redacted != block.text
	op := {"op": "replace", "path": sprintf("%s/content/%d/text", [pointer(path), i]), "value": redacted}
}

# The topmost elements that are not sent; later ones first, so that removing
# one does not shift the indices of the others.
removed contains path if {
	some path, _ in elements
	count(path) > 0
	not stays(path)
	parent := array.slice(path, 0, count(path) - 2)
	sent(parent)
	within_budget(parent)
}

stays(path) if {
	sent(path)
	within_budget(path)
}

removals := [{"op": "remove", "path": pointer(p)} |
	some p in sort_desc
]

sort_desc := [sorted[i] |
	sorted := sort(removed)
	some i in numbers.range(count(sorted) - 1, 0)
] if count(removed) > 0

sort_desc := [] if count(removed) == 0

output := {
	"protocol": input.answer.protocol,
	"instance": input.answer.instance,
	"root": json.patch(root, array.concat(array.concat(
		[op | some op in withhold_ops],
		array.concat([op | some op in redact_ops], [op | some op in title_ops]),
	), removals)),
}
