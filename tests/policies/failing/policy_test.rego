package ctxgate

test_focused_is_kept if {
	"focus-path" in keep with input as {"element": {"focused": true}}
}

test_unfocused_is_kept if {
	"focus-path" in keep with input as {"element": {"focused": false}}
}

test_errors if {
	to_number("x") == 1
}
