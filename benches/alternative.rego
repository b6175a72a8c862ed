# The alternative a user would write without ctxgate: the default policy's
# decisions AND the trimming, wholly in Rego, over the whole tree as input,
# evaluated by regorus's interpreter (`walk` rules out its RVM).
#
# It mirrors what ctxgate does with policies/default.rego for one request:
# - scope by action: `selection` = the selected elements and the focus path;
#   `focus` = the focused element's subtree and its ancestors; `window` =
#   the focused window; `app` = everything;
# - the secure-text floor: a Text whose subrole says `secure` keeps its place
#   but loses its value (`ctxgate:withheld`);
# - prune what is not drawn (R2: an absent `visible` is the parent's), unless
#   it is on the focus path or selected;
# - redact card numbers and API tokens in every text that leaves;
# - a byte budget, cut from the top: whole levels of the tree are dropped
#   from the deepest up until the rest fits (WebArena and OSWorld cut this way;
#   ctxgate fills by priority and nearness instead, and exactly).
# It is simpler than ctxgate in ways that only favour it: no omission notices
# for pruned children, no Luhn check, no token budget (Rego has no tokenizer),
# sizes estimated per element rather than measured on the output.
#
# input:  {"action": "focus", "budget_bytes": 100000, "answer": {…0.2.0…}}
# result: data.alternative.output, the trimmed answer.
package alternative

import rego.v1

root := input.answer.root

# Every element by its path from the root: [], ["children", 0], …
elements[path] := el if {
	walk(root, [path, el])
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
	contains(lower(el.subrole), "secure")
}

kept(path) if focused[path]

kept(path) if selected[path]

kept(path) if {
	some p in focused
	under(p, path)
}

kept(path) if {
	some p in selected
	under(p, path)
}

pruned(path) if {
	not visible(path)
	not kept(path)
}

# --- scope ------------------------------------------------------------------

in_scope(_) if input.action == "app"

in_scope(path) if {
	input.action == "window"
	count(focus) >= 2
	under(path, array.slice(focus, 0, 2))
}

in_scope(path) if {
	input.action == "focus"
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

# --- the budget, cut from the top ------------------------------------------

size(el) := count(json.marshal(object.remove(el, ["children"]))) + 1

bytes_at_depth[d] := sum([size(elements[p]) | some p in sent_paths; count(p) == d])

depths := sort({d | some d, _ in bytes_at_depth})

# The deepest level that still fits with everything above it.
fits := max({d |
	some d in depths
	sum([b | some e, b in bytes_at_depth; e <= d]) <= input.budget_bytes
})

within_budget(path) if count(path) <= fits

# --- the output -------------------------------------------------------------

# A JSON pointer into the root.
pointer(path) := concat("", [sprintf("/%v", [x]) | some x in path])

redact(text) := regex.replace(
	regex.replace(text, `\b(?:\d[ -]?){13,19}\b`, "[card]"),
	`\b(?:ghp_[A-Za-z0-9]{36}|AKIA[A-Z0-9]{16})\b`,
	"[token]",
)

withhold_ops contains op if {
	some path in sent_paths
	within_budget(path)
	el := elements[path]
	masked(el)
	some op in [
		{"op": "replace", "path": concat("", [pointer(path), "/content"]), "value": []},
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
	not removed_whole(path)
	parent := array.slice(path, 0, count(path) - 2)
	sent(parent)
	within_budget(parent)
}

removed_whole(path) if {
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
		[op | some op in redact_ops],
	), removals)),
}
