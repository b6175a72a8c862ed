package ctxgate

test_a_password_value_is_masked if {
	"secure-text" in mask with input as {"app": {"title_matches": ["bank"]}, "element": {"attributes": {"AXValue": "hunter2"}}}
}

test_the_print_is_escaped if {
	print("two\nlines")
	keep == set() with input as {"element": {"focused": false}}
}
